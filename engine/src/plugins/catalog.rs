//! What the read requests answer: a plugin's summary (its marketplace entry, its manifest and
//! whether it is installed and enabled), `plugin/list`, `plugin/search`, `plugin/read`,
//! `plugin/skill/read` and `plugin/installed`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agentwire_protocol::{
    LegacyAppPathString, MarketplaceLoadErrorInfo, PluginAuthPolicy, PluginDetail,
    PluginInstallPolicy, PluginInstalledResponse, PluginInterface, PluginListResponse,
    PluginMarketplaceEntry, PluginSearchResponse, PluginSearchResult, PluginSource, PluginSummary,
    SkillSummary,
};

use super::folders::absolute;
use super::manifest::{self, Entry, EntrySource, Marketplace, PluginManifest};
use super::registry::Known;
use super::store::{self, Record};
use super::{enabled_settings, installed_copies};

/// Default and largest page of `plugin/search`.
const DEFAULT_SEARCH_LIMIT: usize = 50;
const MAX_SEARCH_LIMIT: usize = 500;
/// Largest `SKILL.md` `plugin/skill/read` returns.
const MAX_SKILL_BYTES: u64 = 256 * 1024;

/// What is installed and enabled under a home, read once per request.
pub(crate) struct Installed {
    home: PathBuf,
    enabled: BTreeMap<String, bool>,
    records: BTreeMap<String, Record>,
}

impl Installed {
    /// Reads the settings and records of `home`.
    pub(crate) fn read(home: &Path) -> Self {
        Self {
            home: home.to_path_buf(),
            enabled: enabled_settings(home),
            records: store::records(home),
        }
    }

    /// The copy of `plugin@market`, when it is installed (a folder with a manifest).
    fn copy(&self, market: &str, plugin: &str) -> Option<PathBuf> {
        let dir = store::copy_dir(&self.home, market, plugin);
        manifest::find_plugin_manifest(&dir).map(|_| dir)
    }
}

/// The summary of `entry` of `market`.
pub(crate) fn summary(installed: &Installed, market: &Marketplace, entry: &Entry) -> PluginSummary {
    let id = format!("{}@{}", entry.name, market.name);
    let copy = installed.copy(&market.name, &entry.name);
    // The manifest of the installed copy, else of the marketplace's folder (a git source is
    // not fetched until it is installed).
    let manifest = copy
        .as_deref()
        .or(match &entry.source {
            EntrySource::Local(dir) => Some(dir.as_path()),
            EntrySource::Git { .. } => None,
        })
        .and_then(|dir| manifest::load_plugin(dir).ok().flatten())
        .unwrap_or_default();
    let source = match &entry.source {
        EntrySource::Local(dir) => PluginSource::local(absolute(dir)),
        EntrySource::Git {
            url,
            path,
            ref_name,
            sha,
        } => PluginSource::git(url.clone(), path.clone(), ref_name.clone(), sha.clone()),
    };
    build(
        installed,
        &id,
        &entry.name,
        copy.is_some(),
        &manifest,
        source,
        entry.installation,
        entry.authentication,
        entry.category.clone(),
    )
}

#[allow(clippy::too_many_arguments)] // one summary from its parts, each named
fn build(
    installed: &Installed,
    id: &str,
    name: &str,
    is_installed: bool,
    manifest: &PluginManifest,
    source: PluginSource,
    installation: PluginInstallPolicy,
    authentication: PluginAuthPolicy,
    category: Option<String>,
) -> PluginSummary {
    let mut interface = manifest.interface.clone();
    if let Some(category) = category {
        interface
            .get_or_insert_with(PluginInterface::default)
            .category = Some(category);
    }
    PluginSummary::builder()
        .auth_policy(authentication)
        .enabled(is_installed && installed.enabled.get(id).copied().unwrap_or(true))
        .id(id)
        .install_policy(installation)
        .installed(is_installed)
        .maybe_installed_at(
            is_installed
                .then(|| installed.records.get(id).map(|r| r.installed_at))
                .flatten(),
        )
        .maybe_interface(interface)
        .keywords(manifest.keywords.clone())
        .maybe_local_version(manifest.version.clone())
        .name(name)
        .source(source)
        .build()
}

/// The wire entry of `market` with `plugins`.
fn entry_of(market: &Marketplace, plugins: Vec<PluginSummary>) -> PluginMarketplaceEntry {
    PluginMarketplaceEntry::builder()
        .maybe_interface(market.interface.clone())
        .name(market.name.clone())
        .path(absolute(&market.path))
        .plugins(plugins)
        .build()
}

/// Splits what a request knows into the marketplaces and the load errors.
pub(crate) fn split(known: Vec<Known>) -> (Vec<Marketplace>, Vec<MarketplaceLoadErrorInfo>) {
    let mut markets = Vec::new();
    let mut errors = Vec::new();
    for item in known {
        match item {
            Ok(market) => markets.push(market),
            Err(error) => errors.push(error),
        }
    }
    (markets, errors)
}

/// `plugin/list`.
pub(crate) fn list(home: &Path, known: Vec<Known>) -> PluginListResponse {
    let installed = Installed::read(home);
    let (markets, errors) = split(known);
    let marketplaces = markets
        .iter()
        .map(|market| {
            let plugins = market
                .plugins
                .iter()
                .map(|entry| summary(&installed, market, entry))
                .collect();
            entry_of(market, plugins)
        })
        .collect();
    PluginListResponse::builder()
        .marketplace_load_errors(errors)
        .marketplaces(marketplaces)
        .build()
}

/// `plugin/search`: the plugins whose name, id, description, keywords or category contain
/// `term` (any case); those whose name does come first. `cursor` is the offset of the page.
pub(crate) fn search(
    home: &Path,
    known: Vec<Known>,
    term: &str,
    cursor: Option<&str>,
    limit: Option<u32>,
) -> Result<PluginSearchResponse, String> {
    let offset = match cursor {
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|_| format!("cursor: {cursor:?} is not a cursor this server gave"))?,
        None => 0,
    };
    let limit = limit.map_or(DEFAULT_SEARCH_LIMIT, |l| {
        usize::try_from(l)
            .unwrap_or(MAX_SEARCH_LIMIT)
            .clamp(1, MAX_SEARCH_LIMIT)
    });
    let term = term.trim().to_lowercase();
    let installed = Installed::read(home);
    let (markets, _) = split(known);
    let mut found: Vec<(u8, PluginSearchResult)> = Vec::new();
    for market in &markets {
        for entry in &market.plugins {
            let plugin = summary(&installed, market, entry);
            let description = match &entry.source {
                EntrySource::Local(dir) => manifest::load_plugin(dir)
                    .ok()
                    .flatten()
                    .and_then(|m| m.description),
                EntrySource::Git { .. } => None,
            };
            let Some(rank) = rank(&term, &plugin, description.as_deref()) else {
                continue;
            };
            found.push((
                rank,
                PluginSearchResult::builder()
                    .marketplace_name(market.name.clone())
                    .marketplace_path(absolute(&market.path))
                    .plugin(plugin)
                    .build(),
            ));
        }
    }
    found.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.1.plugin.id.cmp(&b.1.plugin.id))
    });
    let total = found.len();
    let data: Vec<PluginSearchResult> = found
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(_, result)| result)
        .collect();
    let next = offset + data.len();
    Ok(PluginSearchResponse::builder()
        .data(data)
        .maybe_next_cursor((next < total).then(|| next.to_string()))
        .build())
}

/// How well `plugin` matches `term` (lower is better), or `None`.
fn rank(term: &str, plugin: &PluginSummary, description: Option<&str>) -> Option<u8> {
    let has = |text: &str| text.to_lowercase().contains(term);
    let name = plugin.name.to_lowercase();
    if term.is_empty() || name == term {
        return Some(0);
    }
    if name.starts_with(term) {
        return Some(1);
    }
    let interface = plugin.interface.as_ref();
    if has(&plugin.id)
        || interface
            .and_then(|i| i.display_name.as_deref())
            .is_some_and(has)
    {
        return Some(2);
    }
    let texts = [
        description,
        interface.and_then(|i| i.short_description.as_deref()),
        interface.and_then(|i| i.long_description.as_deref()),
        interface.and_then(|i| i.category.as_deref()),
        interface.and_then(|i| i.developer_name.as_deref()),
    ];
    if plugin.keywords.iter().any(|k| has(k)) || texts.into_iter().flatten().any(has) {
        return Some(3);
    }
    None
}

/// The marketplace a request names: by its manifest file or folder, else the one known
/// marketplace that lists `plugin`.
pub(crate) fn find_market(
    known: Vec<Known>,
    marketplace_path: Option<&str>,
    plugin: &str,
) -> Result<Marketplace, String> {
    if let Some(given) = marketplace_path {
        let path = agentwire_config::layers::absolute(given);
        let manifest_path = if path.is_dir() {
            manifest::find_marketplace_manifest(&path).ok_or_else(|| {
                format!(
                    "marketplacePath: {} holds no marketplace manifest",
                    path.display()
                )
            })?
        } else {
            path
        };
        return manifest::load_marketplace(&manifest_path)
            .map_err(|e| format!("marketplacePath: {e}"));
    }
    let (markets, _) = split(known);
    let mut having: Vec<Marketplace> = markets
        .into_iter()
        .filter(|m| m.plugins.iter().any(|p| p.name == plugin))
        .collect();
    match having.len() {
        1 => Ok(having.remove(0)),
        0 => Err(format!(
            "pluginName: no known marketplace has a plugin `{plugin}`; give marketplacePath"
        )),
        _ => Err(format!(
            "pluginName: several marketplaces have a plugin `{plugin}` ({}); give \
             marketplacePath",
            having
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The entry `plugin` of `market`.
pub(crate) fn find_entry<'m>(market: &'m Marketplace, plugin: &str) -> Result<&'m Entry, String> {
    market
        .plugins
        .iter()
        .find(|p| p.name == plugin)
        .ok_or_else(|| {
            format!(
                "pluginName: marketplace `{}` has no plugin `{plugin}`",
                market.name
            )
        })
}

/// The folder `plugin/read` and `plugin/skill/read` read a plugin from: its marketplace folder
/// for a local source, its installed copy for a git one.
fn read_dir(installed: &Installed, market: &Marketplace, entry: &Entry) -> Option<PathBuf> {
    match &entry.source {
        EntrySource::Local(dir) => Some(dir.clone()),
        EntrySource::Git { .. } => installed.copy(&market.name, &entry.name),
    }
}

/// `plugin/read`.
pub(crate) fn read(home: &Path, market: &Marketplace, entry: &Entry) -> PluginDetail {
    let installed = Installed::read(home);
    let summary = summary(&installed, market, entry);
    let dir = read_dir(&installed, market, entry);
    let manifest = dir
        .as_deref()
        .and_then(|d| manifest::load_plugin(d).ok().flatten())
        .unwrap_or_default();
    let settings = crate::skills::settings_of(
        &agentwire_config::layers::read_file(&home.join("config.toml")).table,
    );
    let mut skills = Vec::new();
    for root in &manifest.skill_roots {
        for file in crate::skills::skill_files(root) {
            let Ok(skill) = crate::skills::read_skill(&file) else {
                continue;
            };
            let path = file.display().to_string();
            skills.push(
                SkillSummary::builder()
                    .description(skill.description)
                    .enabled(crate::skills::is_enabled(&settings, &path))
                    .name(format!("{}:{}", manifest.name, skill.name))
                    .path(LegacyAppPathString(path))
                    .maybe_short_description(skill.short_description)
                    .build(),
            );
        }
    }
    PluginDetail::builder()
        .maybe_description(manifest.description.clone())
        .marketplace_name(market.name.clone())
        .marketplace_path(absolute(&market.path))
        .mcp_servers(super::mcp::declared_names(&manifest.mcp_files))
        .skills(skills)
        .summary(summary)
        .build()
}

/// `plugin/skill/read`: the `SKILL.md` of `skill` (its folder's name, its `name`, or
/// `plugin:name`) of the plugin; `None` when it has no such skill.
pub(crate) fn skill_text(
    home: &Path,
    market: &Marketplace,
    entry: &Entry,
    skill: &str,
) -> Result<Option<String>, String> {
    let installed = Installed::read(home);
    let Some(dir) = read_dir(&installed, market, entry) else {
        return Ok(None);
    };
    let Ok(Some(manifest)) = manifest::load_plugin(&dir) else {
        return Ok(None);
    };
    let wanted = skill
        .strip_prefix(&format!("{}:", manifest.name))
        .unwrap_or(skill);
    for root in &manifest.skill_roots {
        for file in crate::skills::skill_files(root) {
            let folder = file
                .parent()
                .map(super::folders::file_name)
                .unwrap_or_default();
            let named = folder == wanted
                || crate::skills::read_skill(&file).is_ok_and(|s| s.name == wanted);
            if !named {
                continue;
            }
            let (bytes, longer) =
                agentwire_support::regular_file::read_regular(&file, MAX_SKILL_BYTES)
                    .map_err(|e| format!("{}: cannot read it: {e}", file.display()))?;
            if longer {
                return Err(format!(
                    "{}: larger than {MAX_SKILL_BYTES} bytes",
                    file.display()
                ));
            }
            return String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| format!("{}: not UTF-8 text", file.display()));
        }
    }
    Ok(None)
}

/// `plugin/installed`: each marketplace that has installed plugins (or a plugin named in
/// `suggested`), with those plugins. A copy whose marketplace is not known is listed from its
/// own manifest; a copy whose manifest does not read is a load error.
pub(crate) fn installed(
    home: &Path,
    known: Vec<Known>,
    suggested: &[String],
) -> PluginInstalledResponse {
    let state = Installed::read(home);
    let (markets, mut errors) = split(known);
    let mut by_market: BTreeMap<String, Vec<PluginSummary>> = BTreeMap::new();
    let mut paths: BTreeMap<String, Option<&Marketplace>> = BTreeMap::new();
    let copies = installed_copies(home);
    for copy in &copies {
        let market = markets.iter().find(|m| m.name == copy.marketplace);
        paths.entry(copy.marketplace.clone()).or_insert(market);
        let listed = market.and_then(|m| {
            m.plugins
                .iter()
                .find(|p| p.name == copy.plugin)
                .map(|e| (m, e))
        });
        let summary = match (listed, manifest::load_plugin(&copy.dir)) {
            (_, Err(message)) => {
                errors.push(
                    MarketplaceLoadErrorInfo::builder()
                        .marketplace_path(absolute(copy.dir.parent().unwrap_or(copy.dir.as_path())))
                        .message(message)
                        .build(),
                );
                continue;
            }
            (_, Ok(None)) => {
                errors.push(
                    MarketplaceLoadErrorInfo::builder()
                        .marketplace_path(absolute(copy.dir.parent().unwrap_or(copy.dir.as_path())))
                        .message(format!(
                            "{}: no plugin manifest ({})",
                            copy.dir.display(),
                            manifest::PLUGIN_MANIFESTS.join(" or ")
                        ))
                        .build(),
                );
                continue;
            }
            (Some((market, entry)), Ok(Some(_))) => summary(&state, market, entry),
            (None, Ok(Some(manifest))) => build(
                &state,
                &copy.id,
                &copy.plugin,
                true,
                &manifest,
                PluginSource::local(absolute(&copy.dir)),
                PluginInstallPolicy::Available,
                PluginAuthPolicy::OnInstall,
                None,
            ),
        };
        by_market
            .entry(copy.marketplace.clone())
            .or_default()
            .push(summary);
    }
    for market in &markets {
        for entry in market
            .plugins
            .iter()
            .filter(|e| suggested.contains(&e.name))
        {
            let plugins = by_market.entry(market.name.clone()).or_default();
            if plugins.iter().any(|p| p.name == entry.name) {
                continue;
            }
            plugins.push(summary(&state, market, entry));
            paths.entry(market.name.clone()).or_insert(Some(market));
        }
    }
    let marketplaces = by_market
        .into_iter()
        .map(
            |(name, plugins)| match paths.get(&name).copied().flatten() {
                Some(market) => entry_of(market, plugins),
                None => PluginMarketplaceEntry::builder()
                    .name(name)
                    .plugins(plugins)
                    .build(),
            },
        )
        .collect();
    PluginInstalledResponse::builder()
        .marketplace_load_errors(errors)
        .marketplaces(marketplaces)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_plugins_are_listed_by_marketplace_and_bad_manifests_reported() {
        let home = tempfile::tempdir().expect("home");
        let good = home.path().join("plugins/local/lint/.codex-plugin");
        std::fs::create_dir_all(&good).expect("dirs");
        std::fs::write(
            good.join("plugin.json"),
            r#"{"name":"lint","version":"1.2.0","keywords":["style"]}"#,
        )
        .expect("manifest");
        std::fs::create_dir_all(home.path().join("plugins/local/broken")).expect("dirs");
        let answer = installed(home.path(), Vec::new(), &[]);
        assert_eq!(answer.marketplaces.len(), 1);
        let plugins = &answer.marketplaces[0].plugins;
        assert_eq!(plugins.len(), 1);
        assert_eq!(plugins[0].id, "lint@local");
        assert!(plugins[0].installed && plugins[0].enabled);
        assert_eq!(plugins[0].local_version.as_deref(), Some("1.2.0"));
        assert_eq!(plugins[0].keywords, ["style"]);
        assert_eq!(answer.marketplace_load_errors.len(), 1);
        assert!(
            installed(&home.path().join("none"), Vec::new(), &[])
                .marketplaces
                .is_empty()
        );
    }

    #[test]
    fn search_ranks_names_first_and_pages() {
        let dir = tempfile::tempdir().expect("dir");
        let manifest_path = dir.path().join(".agents/plugins/marketplace.json");
        std::fs::create_dir_all(manifest_path.parent().expect("parent")).expect("dirs");
        std::fs::write(
            &manifest_path,
            r#"{"name":"team","plugins":[
                {"name":"format","source":"./p/format"},
                {"name":"lint","source":"./p/lint"},
                {"name":"lint-extra","source":"./p/lint-extra"}]}"#,
        )
        .expect("manifest");
        for (name, keywords) in [
            ("format", "[\"lint\"]"),
            ("lint", "[]"),
            ("lint-extra", "[]"),
        ] {
            let root = dir.path().join("p").join(name).join(".codex-plugin");
            std::fs::create_dir_all(&root).expect("dirs");
            std::fs::write(
                root.join("plugin.json"),
                format!(r#"{{"name":"{name}","keywords":{keywords}}}"#),
            )
            .expect("plugin");
        }
        let market = manifest::load_marketplace(&manifest_path).expect("market");
        let home = tempfile::tempdir().expect("home");
        let page =
            search(home.path(), vec![Ok(market.clone())], "LINT", None, Some(2)).expect("searches");
        let ids: Vec<&str> = page.data.iter().map(|r| r.plugin.id.as_str()).collect();
        assert_eq!(ids, ["lint@team", "lint-extra@team"]);
        assert_eq!(page.next_cursor.as_deref(), Some("2"));
        let rest =
            search(home.path(), vec![Ok(market)], "lint", Some("2"), Some(2)).expect("searches");
        assert_eq!(rest.data[0].plugin.id, "format@team");
        assert_eq!(rest.next_cursor, None);
        assert!(search(home.path(), Vec::new(), "x", Some("zz"), None).is_err());
    }
}
