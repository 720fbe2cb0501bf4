//! Plugins and marketplaces, as Codex lays them out (see `docs/plugins.md`).
//!
//! A **marketplace** is a folder holding a manifest at `.agents/plugins/marketplace.json` (or
//! `.claude-plugin/marketplace.json`) that names it and lists its plugins, each with a source
//! (a folder inside the marketplace, or a git repository), an install policy and a category.
//! `marketplace/add` registers one: a local folder is used where it is; a git repository is
//! checked out under `$AGENTWIRE_HOME/marketplaces/<name>/` and follows its branch, tag or
//! commit (`marketplace/upgrade` fetches it again). The registrations are kept in
//! `$AGENTWIRE_HOME/marketplaces.toml`, one `[marketplaces.<name>]` table each with the keys
//! Codex keeps in its `config.toml` (`source_type`, `source`, `ref`, `sparse_paths`,
//! `last_updated`, `last_revision`). A working directory's repository may hold a marketplace of
//! its own, listed when a request names that directory in `cwds`.
//!
//! A **plugin** is a folder holding `.codex-plugin/plugin.json` (or
//! `.claude-plugin/plugin.json`): its name, version, description, keywords, `interface`, and
//! where its skills (`./skills` by default) and MCP servers (`./.mcp.json` by default) are.
//! `plugin/install` copies it to `$AGENTWIRE_HOME/plugins/<marketplace>/<plugin>/` and writes
//! `[plugins."<plugin>@<marketplace>"] enabled = true` to the user's `config.toml` (as Codex
//! does; `enabled = false` there disables it). The install time and origin of each copy are in
//! `$AGENTWIRE_HOME/plugins/installed.json`. An enabled plugin's skills are listed by
//! `skills/list` as `<plugin>:<skill>` with `pluginId` set, and its MCP servers are given by
//! [`mcp_servers`] as `<plugin>:<server>` to the MCP manager, which starts and offers them like
//! configured ones.
//!
//! # Module map
//!
//! - `folders`: names and folders, as every other module reads and checks them;
//! - `manifest`: reading marketplace and plugin manifests;
//! - `source`: what a `marketplace/add` source names (a folder or a git repository);
//! - `git`: checkouts and upgrades with the `git` program;
//! - `registry`: the registered marketplaces: add, remove, upgrade, and the marketplaces known
//!   to a request;
//! - `store`: installed copies: install, uninstall, reconcile;
//! - `catalog`: what `plugin/list|search|read|installed` and `plugin/skill/read` answer;
//! - `mcp`: the MCP servers of the enabled plugins, as `[mcp_servers]` tables;
//! - `rpc`: the request handlers.

mod catalog;
mod folders;
mod git;
mod manifest;
mod mcp;
mod registry;
pub(crate) mod rpc;
mod source;
mod store;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use agentwire_support::lock;

pub(crate) use mcp::servers as mcp_servers;

use folders::{file_name, folders};

/// The plugin state of a server: one lock that serialises the requests that change
/// marketplaces or installed plugins.
#[derive(Debug, Default)]
pub(crate) struct Plugins {
    changes: Mutex<()>,
}

impl Plugins {
    /// Held while a request changes marketplaces or installed plugins.
    pub(crate) fn change(&self) -> MutexGuard<'_, ()> {
        lock(&self.changes)
    }
}

/// A skill folder of an enabled installed plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PluginSkillRoot {
    /// The folder holding skill folders.
    pub root: PathBuf,
    /// The plugin's name (its skills are `<name>:<skill>`).
    pub plugin_name: String,
    /// `name@marketplace`.
    pub plugin_id: String,
}

/// The skill folders of the enabled installed plugins under `home`, by plugin id. Reads the
/// disk: call it off the async workers.
pub(crate) fn skill_roots(home: &Path) -> Vec<PluginSkillRoot> {
    let enabled = enabled_settings(home);
    let mut roots = Vec::new();
    for copy in installed_copies(home) {
        if !enabled.get(&copy.id).copied().unwrap_or(true) {
            continue;
        }
        let Ok(Some(manifest)) = manifest::load_plugin(&copy.dir) else {
            continue;
        };
        roots.extend(
            manifest
                .skill_roots
                .into_iter()
                .map(|root| PluginSkillRoot {
                    root,
                    plugin_name: manifest.name.clone(),
                    plugin_id: copy.id.clone(),
                }),
        );
    }
    roots
}

/// An installed copy: `$AGENTWIRE_HOME/plugins/<marketplace>/<plugin>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Copy {
    /// The marketplace's name.
    pub marketplace: String,
    /// The plugin's name.
    pub plugin: String,
    /// `plugin@marketplace`.
    pub id: String,
    /// The folder.
    pub dir: PathBuf,
}

/// Where installed copies are.
pub(crate) fn plugins_dir(home: &Path) -> PathBuf {
    home.join("plugins")
}

/// The installed copies under `home`, sorted by marketplace then plugin.
pub(crate) fn installed_copies(home: &Path) -> Vec<Copy> {
    let mut copies = Vec::new();
    for market in folders(&plugins_dir(home)) {
        let marketplace = file_name(&market);
        for dir in folders(&market) {
            let plugin = file_name(&dir);
            copies.push(Copy {
                id: format!("{plugin}@{marketplace}"),
                marketplace: marketplace.clone(),
                plugin,
                dir,
            });
        }
    }
    copies
}

/// `[plugins."<id>"] enabled` of the user's `config.toml`, by plugin id.
pub(crate) fn enabled_settings(home: &Path) -> BTreeMap<String, bool> {
    let user = agentwire_config::layers::read_file(&home.join("config.toml"));
    user.table
        .get("plugins")
        .and_then(toml::Value::as_table)
        .map(|plugins| {
            plugins
                .iter()
                .filter_map(|(id, entry)| Some((id.clone(), entry.get("enabled")?.as_bool()?)))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enabled_plugins_give_their_skill_roots() {
        let home = tempfile::tempdir().expect("home");
        for (market, plugin) in [("team", "lint"), ("team", "off")] {
            let dir = home.path().join("plugins").join(market).join(plugin);
            std::fs::create_dir_all(dir.join(".codex-plugin")).expect("dirs");
            std::fs::create_dir_all(dir.join("skills")).expect("dirs");
            std::fs::write(
                dir.join(".codex-plugin/plugin.json"),
                format!(r#"{{"name":"{plugin}"}}"#),
            )
            .expect("manifest");
        }
        std::fs::create_dir_all(home.path().join("plugins/.staging/x")).expect("staging");
        std::fs::write(
            home.path().join("config.toml"),
            "[plugins.\"off@team\"]\nenabled = false\n",
        )
        .expect("config");
        let roots = skill_roots(home.path());
        assert_eq!(
            roots,
            vec![PluginSkillRoot {
                root: home.path().join("plugins/team/lint/skills"),
                plugin_name: "lint".into(),
                plugin_id: "lint@team".into(),
            }]
        );
        assert_eq!(installed_copies(home.path()).len(), 2);
    }
}
