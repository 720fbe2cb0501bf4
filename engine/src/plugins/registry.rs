//! The registered marketplaces (`$AGENTWIRE_HOME/marketplaces.toml`) and the requests that
//! change them; and the marketplaces a request knows: the registered ones, then those of the
//! repositories of the working directories it names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agentwire_protocol::{
    AbsolutePathBuf, MarketplaceAddResponse, MarketplaceLoadErrorInfo, MarketplaceRemoveResponse,
    MarketplaceUpgradeErrorInfo, MarketplaceUpgradeResponse,
};
use serde::Deserialize;

use super::folders::{absolute, check_segment, unique};
use super::git;
use super::manifest::{self, Marketplace};
use super::source::{self, Source};

/// The registry file, under `$AGENTWIRE_HOME`.
const REGISTRY_FILE: &str = "marketplaces.toml";
/// Where git marketplaces are checked out, under `$AGENTWIRE_HOME`.
const CLONES: &str = "marketplaces";
/// Scratch checkouts, inside [`CLONES`].
const STAGING: &str = ".staging";

/// Why a change was refused: the request's fault, or the server's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Refusal {
    /// The request asks for something that cannot be done (named in the message).
    Request(String),
    /// The server failed (disk, git).
    Server(String),
}

#[derive(Debug, Default, Deserialize)]
struct RegistryFile {
    #[serde(default)]
    marketplaces: BTreeMap<String, Registered>,
}

/// One `[marketplaces.<name>]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Registered {
    /// `local` or `git`.
    pub source_type: String,
    /// The folder, or the repository's address.
    pub source: String,
    /// The branch, tag or commit a git marketplace follows.
    #[serde(default, rename = "ref")]
    pub ref_name: Option<String>,
    /// The folders of a sparse git checkout.
    #[serde(default)]
    pub sparse_paths: Vec<String>,
    /// When it was added or last upgraded (RFC 3339, UTC).
    #[serde(default)]
    pub last_updated: Option<String>,
    /// The commit checked out (git marketplaces).
    #[serde(default)]
    pub last_revision: Option<String>,
}

impl Registered {
    fn is_git(&self) -> bool {
        self.source_type == "git"
    }

    /// The marketplace's folder.
    pub(crate) fn root(&self, home: &Path, name: &str) -> PathBuf {
        if self.is_git() {
            home.join(CLONES).join(name)
        } else {
            PathBuf::from(&self.source)
        }
    }
}

/// The registered marketplaces, by name.
pub(crate) fn read(home: &Path) -> Result<BTreeMap<String, Registered>, String> {
    let path = home.join(REGISTRY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str::<RegistryFile>(&text)
            .map(|file| file.marketplaces)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn write(home: &Path, marketplaces: BTreeMap<String, Registered>) -> Result<(), Refusal> {
    let path = home.join(REGISTRY_FILE);
    let text = render(&marketplaces);
    agentwire_support::atomic_file::replace(&path, text.as_bytes(), None)
        .map_err(|e| Refusal::Server(format!("{}: {e}", path.display())))
}

/// The registry as TOML: one `[marketplaces.<name>]` table each.
fn render(marketplaces: &BTreeMap<String, Registered>) -> String {
    use toml_edit::{Array, Item, Table, value};
    let mut all = Table::new();
    all.set_implicit(true);
    for (name, entry) in marketplaces {
        let mut table = Table::new();
        table.insert("source_type", value(entry.source_type.as_str()));
        table.insert("source", value(entry.source.as_str()));
        if let Some(ref_name) = &entry.ref_name {
            table.insert("ref", value(ref_name.as_str()));
        }
        if !entry.sparse_paths.is_empty() {
            let paths: Array = entry.sparse_paths.iter().map(String::as_str).collect();
            table.insert("sparse_paths", value(paths));
        }
        if let Some(at) = &entry.last_updated {
            table.insert("last_updated", value(at.as_str()));
        }
        if let Some(revision) = &entry.last_revision {
            table.insert("last_revision", value(revision.as_str()));
        }
        all.insert(name, Item::Table(table));
    }
    let mut document = toml_edit::DocumentMut::new();
    document.insert("marketplaces", Item::Table(all));
    document.to_string()
}

/// The current time as RFC 3339 (UTC, seconds).
fn timestamp() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second()
    )
}

/// Reads the marketplace in folder `root`.
fn validate_root(root: &Path) -> Result<Marketplace, String> {
    let path = manifest::find_marketplace_manifest(root).ok_or_else(|| {
        format!(
            "{} holds no marketplace manifest ({})",
            root.display(),
            manifest::MARKETPLACE_MANIFESTS.join(" or ")
        )
    })?;
    manifest::load_marketplace(&path)
}

/// `marketplace/add`.
pub(crate) fn add(
    home: &Path,
    cwd: &Path,
    source: &str,
    ref_name: Option<String>,
    sparse_paths: Vec<String>,
) -> Result<MarketplaceAddResponse, Refusal> {
    let parsed = source::parse(source, ref_name, cwd).map_err(Refusal::Request)?;
    let (source_type, source_text, ref_name) = match &parsed {
        Source::Local(path) => ("local", path.display().to_string(), None),
        Source::Git { url, ref_name } => ("git", url.clone(), ref_name.clone()),
    };
    if source_type == "local" && !sparse_paths.is_empty() {
        return Err(Refusal::Request(
            "sparsePaths: only a git marketplace can be checked out in part".to_owned(),
        ));
    }
    for path in &sparse_paths {
        manifest::inside(
            &format!("./{}", path.trim_start_matches("./")),
            "sparsePaths",
        )
        .map_err(Refusal::Request)?;
    }
    let mut registered = read(home).map_err(Refusal::Server)?;
    let wanted = Registered {
        source_type: source_type.to_owned(),
        source: source_text.clone(),
        ref_name: ref_name.clone(),
        sparse_paths: sparse_paths.clone(),
        last_updated: None,
        last_revision: None,
    };
    for (name, entry) in &registered {
        let same = entry.source_type == wanted.source_type
            && entry.source == wanted.source
            && entry.ref_name == wanted.ref_name
            && entry.sparse_paths == wanted.sparse_paths;
        let root = entry.root(home, name);
        if same && validate_root(&root).is_ok() {
            return Ok(MarketplaceAddResponse::builder()
                .already_added(true)
                .installed_root(absolute(&root))
                .marketplace_name(name.clone())
                .build());
        }
    }
    let taken = |name: &str, registered: &BTreeMap<String, Registered>| {
        Refusal::Request(format!(
            "marketplace `{name}` is already added from {}; remove it before adding {source_text}",
            registered
                .get(name)
                .map(|r| r.source.as_str())
                .unwrap_or("another source")
        ))
    };
    match parsed {
        Source::Local(root) => {
            let market = validate_root(&root).map_err(Refusal::Request)?;
            if registered.contains_key(&market.name) {
                return Err(taken(&market.name, &registered));
            }
            registered.insert(
                market.name.clone(),
                Registered {
                    last_updated: Some(timestamp()),
                    ..wanted
                },
            );
            write(home, registered)?;
            Ok(MarketplaceAddResponse::builder()
                .already_added(false)
                .installed_root(absolute(&root))
                .marketplace_name(market.name)
                .build())
        }
        Source::Git { url, ref_name } => {
            let staging = home.join(CLONES).join(STAGING).join(unique("add"));
            let result = (|| {
                let revision = git::checkout(&url, ref_name.as_deref(), &sparse_paths, &staging)
                    .map_err(Refusal::Request)?;
                let market = validate_root(&staging).map_err(Refusal::Request)?;
                let dest = home.join(CLONES).join(&market.name);
                if registered.contains_key(&market.name) || dest.exists() {
                    return Err(taken(&market.name, &registered));
                }
                std::fs::rename(&staging, &dest).map_err(|e| {
                    Refusal::Server(format!("moving the checkout to {}: {e}", dest.display()))
                })?;
                registered.insert(
                    market.name.clone(),
                    Registered {
                        last_updated: Some(timestamp()),
                        last_revision: Some(revision),
                        ..wanted
                    },
                );
                if let Err(error) = write(home, registered) {
                    let _ = std::fs::remove_dir_all(&dest);
                    return Err(error);
                }
                Ok(MarketplaceAddResponse::builder()
                    .already_added(false)
                    .installed_root(absolute(&dest))
                    .marketplace_name(market.name)
                    .build())
            })();
            let _ = std::fs::remove_dir_all(&staging);
            result
        }
    }
}

/// `marketplace/remove`: forgets the marketplace and deletes its checkout (a local folder is
/// left alone). Installed plugins stay installed.
pub(crate) fn remove(home: &Path, name: &str) -> Result<MarketplaceRemoveResponse, Refusal> {
    check_segment(name, "marketplaceName").map_err(Refusal::Request)?;
    let mut registered = read(home).map_err(Refusal::Server)?;
    let entry = registered.remove(name);
    let clone = home.join(CLONES).join(name);
    let deleted = if clone.exists() && entry.as_ref().is_none_or(Registered::is_git) {
        std::fs::remove_dir_all(&clone)
            .map_err(|e| Refusal::Server(format!("deleting {}: {e}", clone.display())))?;
        Some(absolute(&clone))
    } else {
        None
    };
    if entry.is_none() && deleted.is_none() {
        return Err(Refusal::Request(format!(
            "marketplace `{name}` is not added"
        )));
    }
    if entry.is_some() {
        write(home, registered)?;
    }
    Ok(MarketplaceRemoveResponse::builder()
        .maybe_installed_root(deleted)
        .marketplace_name(name)
        .build())
}

/// `marketplace/upgrade`: fetches the branch, tag or commit each selected git marketplace
/// follows and checks it out; a marketplace whose manifest no longer reads, or changed its
/// name, is put back as it was.
pub(crate) fn upgrade(
    home: &Path,
    only: Option<&str>,
) -> Result<MarketplaceUpgradeResponse, Refusal> {
    let mut registered = read(home).map_err(Refusal::Server)?;
    if let Some(name) = only {
        match registered.get(name) {
            None => {
                return Err(Refusal::Request(format!(
                    "marketplace `{name}` is not added"
                )));
            }
            Some(entry) if !entry.is_git() => {
                return Err(Refusal::Request(format!(
                    "marketplace `{name}` is a local folder, not a git marketplace: it is read \
                     where it is and has nothing to upgrade"
                )));
            }
            Some(_) => {}
        }
    }
    let selected: Vec<String> = registered
        .iter()
        .filter(|(name, entry)| entry.is_git() && only.is_none_or(|o| o == name.as_str()))
        .map(|(name, _)| name.clone())
        .collect();
    let mut upgraded = Vec::new();
    let mut errors = Vec::new();
    for name in &selected {
        let Some(entry) = registered.get(name).cloned() else {
            continue;
        };
        match upgrade_one(home, name, &entry) {
            Ok((revision, changed)) => {
                let root = entry.root(home, name);
                if changed {
                    upgraded.push(absolute(&root));
                }
                registered.insert(
                    name.clone(),
                    Registered {
                        last_updated: Some(timestamp()),
                        last_revision: Some(revision),
                        ..entry
                    },
                );
            }
            Err(message) => errors.push(
                MarketplaceUpgradeErrorInfo::builder()
                    .marketplace_name(name.clone())
                    .message(message)
                    .build(),
            ),
        }
    }
    if !selected.is_empty() {
        write(home, registered)?;
    }
    Ok(MarketplaceUpgradeResponse::builder()
        .errors(errors)
        .selected_marketplaces(selected)
        .upgraded_roots(upgraded)
        .build())
}

/// Upgrades one git marketplace; the commit now checked out and whether it changed.
fn upgrade_one(home: &Path, name: &str, entry: &Registered) -> Result<(String, bool), String> {
    let root = entry.root(home, name);
    if !root.join(".git").is_dir() {
        // The checkout is gone: make it again.
        let staging = home.join(CLONES).join(STAGING).join(unique("upgrade"));
        let result = git::checkout(
            &entry.source,
            entry.ref_name.as_deref(),
            &entry.sparse_paths,
            &staging,
        )
        .and_then(|revision| {
            let market = validate_root(&staging)?;
            if market.name != name {
                return Err(format!(
                    "the repository now names its marketplace `{}`, not `{name}`",
                    market.name
                ));
            }
            let _ = std::fs::remove_dir_all(&root);
            std::fs::rename(&staging, &root)
                .map_err(|e| format!("moving the checkout to {}: {e}", root.display()))?;
            Ok((revision, true))
        });
        let _ = std::fs::remove_dir_all(&staging);
        return result;
    }
    let before = git::head(&root)?;
    let after = git::update(&root, entry.ref_name.as_deref())?;
    match validate_root(&root) {
        Ok(market) if market.name == name => Ok((after.clone(), after != before)),
        outcome => {
            let reason = match outcome {
                Ok(market) => format!(
                    "the repository now names its marketplace `{}`, not `{name}`",
                    market.name
                ),
                Err(error) => error,
            };
            let _ = git::update_to(&root, &before);
            Err(format!("{reason}; kept commit {before}"))
        }
    }
}

/// A marketplace a request knows, or the reason it could not be read.
pub(crate) type Known = Result<Marketplace, MarketplaceLoadErrorInfo>;

/// The marketplaces known to a request: the registered ones, then those of the repositories of
/// `cwds` (the nearest ancestor holding `.git`, or the directory itself, with a manifest), each
/// once.
pub(crate) fn known(home: &Path, cwds: &[AbsolutePathBuf]) -> Vec<Known> {
    let mut found: Vec<Known> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    match read(home) {
        Ok(registered) => {
            for (name, entry) in registered {
                let root = entry.root(home, &name);
                let Some(path) = manifest::find_marketplace_manifest(&root) else {
                    found.push(Err(load_error(
                        &root,
                        if entry.is_git() {
                            format!(
                                "marketplace `{name}`: its checkout {} is missing or has no \
                                 manifest; marketplace/upgrade checks it out again",
                                root.display()
                            )
                        } else {
                            format!(
                                "marketplace `{name}`: {} is missing or has no manifest",
                                root.display()
                            )
                        },
                    )));
                    continue;
                };
                seen.push(path.clone());
                found.push(manifest::load_marketplace(&path).map_err(|e| load_error(&path, e)));
            }
        }
        Err(error) => found.push(Err(load_error(&home.join(REGISTRY_FILE), error))),
    }
    for cwd in cwds {
        let dir = agentwire_config::layers::absolute(&cwd.0);
        let root = agentwire_config::layers::project_dirs(&dir)
            .into_iter()
            .next()
            .unwrap_or(dir);
        let Some(path) = manifest::find_marketplace_manifest(&root) else {
            continue;
        };
        if seen.contains(&path) {
            continue;
        }
        seen.push(path.clone());
        found.push(manifest::load_marketplace(&path).map_err(|e| load_error(&path, e)));
    }
    found
}

fn load_error(path: &Path, message: String) -> MarketplaceLoadErrorInfo {
    MarketplaceLoadErrorInfo::builder()
        .marketplace_path(absolute(path))
        .message(message)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marketplace(root: &Path, name: &str) {
        let path = root.join(".agents/plugins/marketplace.json");
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(&path, format!(r#"{{"name":"{name}","plugins":[]}}"#)).expect("manifest");
    }

    #[test]
    fn a_local_marketplace_is_registered_once_and_removed_without_touching_it() {
        let home = tempfile::tempdir().expect("home");
        let market = tempfile::tempdir().expect("market");
        marketplace(market.path(), "team");
        let root = market.path().canonicalize().expect("canonical");
        let source = root.display().to_string();
        let first = add(home.path(), home.path(), &source, None, Vec::new()).expect("adds");
        assert!(!first.already_added);
        assert_eq!(first.marketplace_name, "team");
        assert_eq!(first.installed_root, absolute(&root));
        let again = add(home.path(), home.path(), &source, None, Vec::new()).expect("adds");
        assert!(again.already_added);
        assert!(matches!(
            add(home.path(), home.path(), &source, None, vec!["x".into()]),
            Err(Refusal::Request(m)) if m.contains("sparsePaths")
        ));
        let other = tempfile::tempdir().expect("other");
        marketplace(other.path(), "team");
        assert!(matches!(
            add(home.path(), home.path(), &other.path().display().to_string(), None, Vec::new()),
            Err(Refusal::Request(m)) if m.contains("already added")
        ));
        let known = known(home.path(), &[]);
        assert_eq!(known.len(), 1);
        assert_eq!(known[0].as_ref().map(|m| m.name.as_str()), Ok("team"));
        assert!(matches!(
            upgrade(home.path(), Some("team")),
            Err(Refusal::Request(m)) if m.contains("local folder")
        ));
        let removed = remove(home.path(), "team").expect("removes");
        assert_eq!(removed.installed_root, None);
        assert!(root.join(".agents/plugins/marketplace.json").is_file());
        assert!(matches!(
            remove(home.path(), "team"),
            Err(Refusal::Request(_))
        ));
        assert!(matches!(
            remove(home.path(), "../x"),
            Err(Refusal::Request(_))
        ));
    }

    #[test]
    fn a_folder_without_a_manifest_is_refused() {
        let home = tempfile::tempdir().expect("home");
        let empty = tempfile::tempdir().expect("empty");
        assert!(matches!(
            add(home.path(), home.path(), &empty.path().display().to_string(), None, Vec::new()),
            Err(Refusal::Request(m)) if m.contains("no marketplace manifest")
        ));
    }
}
