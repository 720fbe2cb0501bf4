//! Installed plugins (`plugin/installed`). A plugin installed from marketplace `m` lives in
//! `$AGENTWIRE_HOME/plugins/<m>/<plugin>/`, with its manifest at `.codex-plugin/plugin.json`
//! (the layout Codex plugins ship with: `name`, `version`, `description`, `keywords`); each
//! marketplace folder under `plugins/` is listed with the plugins installed from it. A folder
//! whose manifest does not read is reported in `marketplaceLoadErrors`.

use std::path::Path;

use agentwire_protocol::{
    AbsolutePathBuf, MarketplaceLoadErrorInfo, PluginAuthPolicy, PluginInstallPolicy,
    PluginInstalledResponse, PluginMarketplaceEntry, PluginSource, PluginSummary,
};
use serde::Deserialize;

/// Largest manifest read.
const MAX_MANIFEST_BYTES: u64 = 64 * 1024;
/// Most entries looked at in one folder.
const MAX_ENTRIES: usize = 256;

#[derive(Debug, Deserialize)]
struct Manifest {
    name: String,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    keywords: Vec<String>,
}

/// The marketplaces under `home`'s `plugins/` folder with their installed plugins. Reads the
/// disk: call it off the async workers.
pub(crate) fn installed(home: &Path) -> PluginInstalledResponse {
    let mut marketplaces = Vec::new();
    let mut errors = Vec::new();
    for market in folders(&home.join("plugins")) {
        let name = file_name(&market);
        let mut plugins = Vec::new();
        for plugin in folders(&market) {
            let manifest = plugin.join(".codex-plugin/plugin.json");
            match read_manifest(&manifest) {
                Ok(manifest) => plugins.push(
                    PluginSummary::builder()
                        .auth_policy(PluginAuthPolicy::OnUse)
                        .enabled(true)
                        .id(format!("{}@{name}", manifest.name))
                        .install_policy(PluginInstallPolicy::Available)
                        .installed(true)
                        .keywords(manifest.keywords)
                        .maybe_local_version(manifest.version.clone())
                        .name(manifest.name)
                        .source(PluginSource::local(absolute(&plugin)))
                        .maybe_version(manifest.version)
                        .build(),
                ),
                Err(message) => errors.push(
                    MarketplaceLoadErrorInfo::builder()
                        .marketplace_path(absolute(&market))
                        .message(format!("{}: {message}", manifest.display()))
                        .build(),
                ),
            }
        }
        marketplaces.push(
            PluginMarketplaceEntry::builder()
                .name(name)
                .path(absolute(&market))
                .plugins(plugins)
                .build(),
        );
    }
    PluginInstalledResponse::builder()
        .marketplace_load_errors(errors)
        .marketplaces(marketplaces)
        .build()
}

fn read_manifest(path: &Path) -> Result<Manifest, String> {
    let (bytes, longer) = crate::regular_file::read_regular(path, MAX_MANIFEST_BYTES)
        .map_err(|reason| format!("cannot read it: {reason}"))?;
    if longer {
        return Err(format!("larger than {MAX_MANIFEST_BYTES} bytes"));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("not a plugin manifest: {e}"))
}

/// The sub-folders of `dir`, sorted; none when it does not exist.
fn folders(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .take(MAX_ENTRIES)
        .collect();
    found.sort();
    found
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn absolute(path: &Path) -> AbsolutePathBuf {
    AbsolutePathBuf(path.display().to_string())
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
        let answer = installed(home.path());
        assert_eq!(answer.marketplaces.len(), 1);
        let plugins = &answer.marketplaces[0].plugins;
        assert_eq!(plugins.len(), 1);
        assert_eq!(plugins[0].id, "lint@local");
        assert_eq!(plugins[0].version.as_deref(), Some("1.2.0"));
        assert_eq!(answer.marketplace_load_errors.len(), 1);
        assert!(installed(&home.path().join("none")).marketplaces.is_empty());
    }
}
