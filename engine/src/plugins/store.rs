//! Installed copies: `plugin/install` copies a plugin's folder to
//! `$AGENTWIRE_HOME/plugins/<marketplace>/<plugin>/` (through a scratch folder, so a failed copy
//! leaves the old one) and enables it in `config.toml`; `plugin/uninstall` deletes the copy and
//! the setting; `plugin/reconcile` makes the copies match the settings and their marketplaces.
//!
//! A copy takes regular files and folders only: symbolic links and `.git` folders are left
//! out, so a plugin cannot make the server read files outside it. A plugin of more than
//! [`MAX_FILES`] entries or [`MAX_BYTES`] bytes is refused.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use agentwire_protocol::{
    ConfigEdit, MergeStrategy, PluginInstallPolicy, PluginReconcileChangedPlugin,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use agentwire_config::Store;

use super::folders::{check_segment, folders, now, unique};
use super::manifest::{self, Entry, EntrySource, Marketplace};
use super::registry::Refusal;
use super::{Copy, git, installed_copies, plugins_dir};

/// Most files and folders in one plugin.
const MAX_FILES: usize = 20_000;
/// Most bytes in one plugin.
const MAX_BYTES: u64 = 512 * 1024 * 1024;
/// The install records, inside the plugins folder.
const RECORDS: &str = "installed.json";
/// Scratch folders, inside the plugins folder.
const STAGING: &str = ".staging";

/// What is remembered of an installed copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Record {
    /// When it was installed (Unix seconds).
    pub installed_at: i64,
    /// The manifest of the marketplace it came from.
    pub marketplace_path: String,
}

/// The install records, by plugin id.
pub(crate) fn records(home: &Path) -> BTreeMap<String, Record> {
    std::fs::read(plugins_dir(home).join(RECORDS))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn write_records(home: &Path, records: &BTreeMap<String, Record>) -> Result<(), Refusal> {
    let path = plugins_dir(home).join(RECORDS);
    let bytes = serde_json::to_vec_pretty(records)
        .map_err(|e| Refusal::Server(format!("{}: {e}", path.display())))?;
    agentwire_support::atomic_file::replace(&path, &bytes, None)
        .map_err(|e| Refusal::Server(format!("{}: {e}", path.display())))
}

/// The folder of `plugin@marketplace`'s copy.
pub(crate) fn copy_dir(home: &Path, marketplace: &str, plugin: &str) -> PathBuf {
    plugins_dir(home).join(marketplace).join(plugin)
}

/// A plugin's files, ready to copy: a folder of a local marketplace, or of a scratch checkout
/// (deleted when this is dropped).
pub(crate) struct Fetched {
    /// The plugin's folder.
    pub dir: PathBuf,
    scratch: Option<PathBuf>,
}

impl Drop for Fetched {
    fn drop(&mut self) {
        if let Some(scratch) = &self.scratch {
            let _ = std::fs::remove_dir_all(scratch);
        }
    }
}

/// Gets the files of `entry`: its folder, or a checkout of its repository.
pub(crate) fn fetch(home: &Path, entry: &Entry) -> Result<Fetched, Refusal> {
    match &entry.source {
        EntrySource::Local(dir) => {
            if !dir.is_dir() {
                return Err(Refusal::Request(format!(
                    "plugin `{}`: its folder {} does not exist",
                    entry.name,
                    dir.display()
                )));
            }
            Ok(Fetched {
                dir: dir.clone(),
                scratch: None,
            })
        }
        EntrySource::Git {
            url,
            path,
            ref_name,
            sha,
        } => {
            let scratch = plugins_dir(home).join(STAGING).join(unique("fetch"));
            let fetched = Fetched {
                dir: path
                    .as_ref()
                    .map(|p| scratch.join(p))
                    .unwrap_or_else(|| scratch.clone()),
                scratch: Some(scratch.clone()),
            };
            let wanted = sha.as_deref().or(ref_name.as_deref());
            git::checkout(url, wanted, &[], &scratch).map_err(|e| {
                Refusal::Request(format!("plugin `{}`: fetching {url}: {e}", entry.name))
            })?;
            if !fetched.dir.is_dir() {
                return Err(Refusal::Request(format!(
                    "plugin `{}`: {url} has no folder {}",
                    entry.name,
                    path.as_deref().unwrap_or(".")
                )));
            }
            Ok(fetched)
        }
    }
}

/// `plugin/install`: copies `entry` of `market` and enables it.
pub(crate) fn install(
    home: &Path,
    config: &Store,
    method: &str,
    market: &Marketplace,
    entry: &Entry,
) -> Result<(), Refusal> {
    if entry.installation == PluginInstallPolicy::NotAvailable {
        return Err(Refusal::Request(format!(
            "plugin `{}` of marketplace `{}` is not available for install",
            entry.name, market.name
        )));
    }
    let fetched = fetch(home, entry)?;
    copy_in(home, &market.name, &entry.name, &fetched.dir)?;
    let id = format!("{}@{}", entry.name, market.name);
    let mut all = records(home);
    all.insert(
        id.clone(),
        Record {
            installed_at: now(),
            marketplace_path: market.path.display().to_string(),
        },
    );
    write_records(home, &all)?;
    set_enabled(config, method, &id, Some(true))
}

/// Replaces the copy of `plugin@marketplace` with the plugin in `source`.
fn copy_in(home: &Path, marketplace: &str, plugin: &str, source: &Path) -> Result<(), Refusal> {
    match manifest::load_plugin(source) {
        Ok(Some(_)) => {}
        Ok(None) => {
            return Err(Refusal::Request(format!(
                "plugin `{plugin}`: {} has no plugin manifest ({})",
                source.display(),
                manifest::PLUGIN_MANIFESTS.join(" or ")
            )));
        }
        Err(error) => return Err(Refusal::Request(format!("plugin `{plugin}`: {error}"))),
    }
    let staging = plugins_dir(home).join(STAGING).join(unique("copy"));
    let result = (|| {
        let mut budget = Budget::default();
        copy_tree(source, &staging, &mut budget)?;
        let dest = copy_dir(home, marketplace, plugin);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Refusal::Server(format!("{}: {e}", parent.display())))?;
        }
        if dest.exists() {
            std::fs::remove_dir_all(&dest)
                .map_err(|e| Refusal::Server(format!("deleting {}: {e}", dest.display())))?;
        }
        std::fs::rename(&staging, &dest)
            .map_err(|e| Refusal::Server(format!("moving the copy to {}: {e}", dest.display())))
    })();
    let _ = std::fs::remove_dir_all(&staging);
    result
}

#[derive(Default)]
struct Budget {
    files: usize,
    bytes: u64,
}

/// Copies the regular files and folders of `from` into `to` (created), leaving out symbolic
/// links, `.git` folders and anything else.
fn copy_tree(from: &Path, to: &Path, budget: &mut Budget) -> Result<(), Refusal> {
    std::fs::create_dir_all(to).map_err(|e| Refusal::Server(format!("{}: {e}", to.display())))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| Refusal::Server(format!("{}: {e}", from.display())))?;
    for entry in entries {
        let entry = entry.map_err(|e| Refusal::Server(format!("{}: {e}", from.display())))?;
        let kind = entry
            .file_type()
            .map_err(|e| Refusal::Server(format!("{}: {e}", entry.path().display())))?;
        let name = entry.file_name();
        budget.files += 1;
        if budget.files > MAX_FILES {
            return Err(Refusal::Request(format!(
                "{}: a plugin may hold at most {MAX_FILES} files and folders",
                from.display()
            )));
        }
        if kind.is_dir() {
            if name != ".git" {
                copy_tree(&entry.path(), &to.join(&name), budget)?;
            }
        } else if kind.is_file() {
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            budget.bytes += size;
            if budget.bytes > MAX_BYTES {
                return Err(Refusal::Request(format!(
                    "{}: a plugin may hold at most {MAX_BYTES} bytes",
                    from.display()
                )));
            }
            std::fs::copy(entry.path(), to.join(&name))
                .map_err(|e| Refusal::Server(format!("copying {}: {e}", entry.path().display())))?;
        }
    }
    Ok(())
}

/// A digest of what a copy takes of folder `dir` (the relative paths and contents of its
/// regular files, `.git` and links left out), to tell whether a plugin changed.
pub(crate) fn digest(dir: &Path) -> Option<String> {
    fn walk(dir: &Path, prefix: &str, hasher: &mut Sha256, count: &mut usize) -> Option<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            *count += 1;
            if *count > MAX_FILES {
                return None;
            }
            let kind = entry.file_type().ok()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = format!("{prefix}{name}");
            if kind.is_dir() && name != ".git" {
                hasher.update(format!("d {relative}\0").as_bytes());
                walk(&entry.path(), &format!("{relative}/"), hasher, count)?;
            } else if kind.is_file() {
                hasher.update(format!("f {relative}\0").as_bytes());
                let mut file = std::fs::File::open(entry.path()).ok()?;
                let mut buffer = [0u8; 64 * 1024];
                loop {
                    let read = file.read(&mut buffer).ok()?;
                    if read == 0 {
                        break;
                    }
                    hasher.update(&buffer[..read]);
                }
                hasher.update(b"\0");
            }
        }
        Some(())
    }
    let mut hasher = Sha256::new();
    walk(dir, "", &mut hasher, &mut 0)?;
    Some(
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// Sets (`Some`) or removes (`None`) `[plugins."<id>"] enabled` in the user's `config.toml`.
fn set_enabled(
    config: &Store,
    method: &str,
    id: &str,
    enabled: Option<bool>,
) -> Result<(), Refusal> {
    let key = format!("plugins.{}", agentwire_config::keys::quote_segment(id));
    let value = match enabled {
        Some(enabled) => serde_json::json!({ "enabled": enabled }),
        None => serde_json::Value::Null,
    };
    let edit = ConfigEdit::builder()
        .key_path(key)
        .value(value)
        .merge_strategy(MergeStrategy::Replace)
        .build();
    crate::config_rpc::write(config, method, &[edit], None, None)
        .map(drop)
        .map_err(|e| Refusal::Server(e.message))
}

/// Splits `name@marketplace`, checking both names.
pub(crate) fn parse_id(id: &str) -> Result<(String, String), String> {
    let (plugin, market) = id
        .split_once('@')
        .ok_or_else(|| format!("pluginId: {id:?} is not of the form `plugin@marketplace`"))?;
    check_segment(plugin, "pluginId: plugin name")?;
    check_segment(market, "pluginId: marketplace name")?;
    Ok((plugin.to_owned(), market.to_owned()))
}

/// `plugin/uninstall`: deletes the copy, its record and its setting. Uninstalling a plugin
/// that is not installed does nothing.
pub(crate) fn uninstall(
    home: &Path,
    config: &Store,
    method: &str,
    id: &str,
) -> Result<(), Refusal> {
    let (plugin, market) = parse_id(id).map_err(Refusal::Request)?;
    let dir = copy_dir(home, &market, &plugin);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| Refusal::Server(format!("deleting {}: {e}", dir.display())))?;
    }
    let market_dir = plugins_dir(home).join(&market);
    if folders(&market_dir).is_empty() {
        let _ = std::fs::remove_dir(&market_dir);
    }
    let mut all = records(home);
    if all.remove(id).is_some() {
        write_records(home, &all)?;
    }
    if has_setting(home, id) {
        set_enabled(config, method, id, None)?;
    }
    Ok(())
}

/// Whether the user's `config.toml` has a `[plugins."<id>"]` table at all.
fn has_setting(home: &Path, id: &str) -> bool {
    agentwire_config::layers::read_file(&home.join("config.toml"))
        .table
        .get("plugins")
        .and_then(|p| p.get(id))
        .is_some()
}

/// What a plugin brings, for `plugin/reconcile`.
fn brings(id: &str, dirs: &[&Path]) -> PluginReconcileChangedPlugin {
    let manifests: Vec<_> = dirs
        .iter()
        .filter_map(|d| manifest::load_plugin(d).ok().flatten())
        .collect();
    PluginReconcileChangedPlugin::builder()
        .has_apps(manifests.iter().any(|m| m.has_apps))
        .has_hooks(manifests.iter().any(|m| m.has_hooks))
        .has_mcps(manifests.iter().any(|m| !m.mcp_files.is_empty()))
        .has_skills(manifests.iter().any(|m| !m.skill_roots.is_empty()))
        .id(id)
        .build()
}

/// `plugin/reconcile`: makes the installed copies match the user's `[plugins."<id>"]` settings
/// and the marketplaces they come from:
/// - a copy without a setting was uninstalled through the configuration: it is deleted;
/// - a setting without a copy is installed from its marketplace;
/// - a copy whose marketplace now holds different files is copied again.
///
/// A plugin whose marketplace is not known (or no longer lists it) is left as it is, with a
/// log line.
pub(crate) fn reconcile(
    home: &Path,
    markets: &[Marketplace],
) -> Result<Vec<PluginReconcileChangedPlugin>, Refusal> {
    let settings = super::enabled_settings(home);
    let copies: BTreeMap<String, Copy> = installed_copies(home)
        .into_iter()
        .map(|c| (c.id.clone(), c))
        .collect();
    let mut changed = Vec::new();
    let mut all = records(home);
    let mut records_changed = false;
    for (id, copy) in &copies {
        if has_setting(home, id) {
            continue;
        }
        let flags = brings(id, &[&copy.dir]);
        std::fs::remove_dir_all(&copy.dir)
            .map_err(|e| Refusal::Server(format!("deleting {}: {e}", copy.dir.display())))?;
        records_changed |= all.remove(id).is_some();
        changed.push(flags);
    }
    for id in settings.keys() {
        let Ok((plugin, market_name)) = parse_id(id) else {
            tracing::warn!(
                id,
                "plugin/reconcile: skipping a setting that names no plugin"
            );
            continue;
        };
        let Some((market, entry)) = markets.iter().find_map(|m| {
            (m.name == market_name)
                .then(|| m.plugins.iter().find(|e| e.name == plugin).map(|e| (m, e)))
                .flatten()
        }) else {
            tracing::warn!(
                id,
                "plugin/reconcile: no known marketplace lists this plugin"
            );
            continue;
        };
        let dir = copy_dir(home, &market_name, &plugin);
        let fetched = match fetch(home, entry) {
            Ok(fetched) => fetched,
            Err(Refusal::Request(message) | Refusal::Server(message)) => {
                tracing::warn!(id, message, "plugin/reconcile: cannot fetch the plugin");
                continue;
            }
        };
        let installed = copies.contains_key(id);
        if installed && digest(&fetched.dir) == digest(&dir) {
            continue;
        }
        let before = installed.then(|| {
            let scratch = plugins_dir(home).join(STAGING).join(unique("old"));
            let mut budget = Budget::default();
            copy_tree(&dir, &scratch, &mut budget).ok().map(|_| scratch)
        });
        copy_in(home, &market_name, &plugin, &fetched.dir)?;
        let old = before.flatten();
        let mut dirs: Vec<&Path> = vec![&dir];
        if let Some(old) = &old {
            dirs.push(old);
        }
        changed.push(brings(id, &dirs));
        if let Some(old) = &old {
            let _ = std::fs::remove_dir_all(old);
        }
        let record = all.entry(id.clone()).or_insert_with(|| Record {
            installed_at: now(),
            marketplace_path: market.path.display().to_string(),
        });
        record.marketplace_path = market.path.display().to_string();
        records_changed = true;
    }
    if records_changed {
        write_records(home, &all)?;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_leaves_out_links_and_git_folders_and_the_digest_follows_contents() {
        let dir = tempfile::tempdir().expect("dir");
        let from = dir.path().join("from");
        std::fs::create_dir_all(from.join(".git")).expect("git");
        std::fs::create_dir_all(from.join("skills/a")).expect("skills");
        std::fs::write(from.join("skills/a/SKILL.md"), "x").expect("file");
        std::fs::write(from.join(".git/config"), "x").expect("file");
        std::os::unix::fs::symlink("/etc/passwd", from.join("link")).expect("link");
        let to = dir.path().join("to");
        copy_tree(&from, &to, &mut Budget::default()).expect("copies");
        assert!(to.join("skills/a/SKILL.md").is_file());
        assert!(!to.join(".git").exists());
        assert!(!to.join("link").exists());
        assert_eq!(digest(&from), digest(&to));
        std::fs::write(to.join("skills/a/SKILL.md"), "y").expect("file");
        assert_ne!(digest(&from), digest(&to));
    }

    #[test]
    fn plugin_ids_are_checked() {
        assert_eq!(parse_id("lint@team"), Ok(("lint".into(), "team".into())));
        assert!(parse_id("lint").is_err());
        assert!(parse_id("../x@team").is_err());
        assert!(parse_id("lint@").is_err());
    }
}
