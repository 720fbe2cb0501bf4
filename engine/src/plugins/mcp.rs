//! The MCP servers plugins declare: a JSON file (`.mcp.json` unless the manifest's
//! `mcpServers` names another) holding `{"mcpServers": {"<name>": {…}}}`, each server in the
//! keys of a `[mcp_servers.<name>]` table (`command`, `args`, `env`, `cwd`, `url`,
//! `bearer_token_env_var`, …). As Codex does, a `type` key (`stdio`, `http`) and an `oauth`
//! table are dropped; `headers` is read as `http_headers`; a relative `cwd` is taken from the
//! plugin's folder, and a server with no `cwd` runs in the plugin's folder.
//!
//! The MCP manager offers them as `<plugin>:<server>`, so that a plugin cannot take the place
//! of a server the user configured.

use std::collections::BTreeMap;
use std::path::Path;

use agentwire_config::McpServerConfig;

use super::{enabled_settings, installed_copies, manifest};

/// Largest MCP file read.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// The servers of the MCP files of the plugin in folder `root`, by name (the first file
/// declaring a name wins); servers that do not read are left out with a log line.
pub(crate) fn plugin_servers(
    root: &Path,
    files: &[std::path::PathBuf],
) -> BTreeMap<String, McpServerConfig> {
    let mut servers = BTreeMap::new();
    for file in files {
        let declared = match read(file) {
            Ok(declared) => declared,
            Err(message) => {
                tracing::warn!(file = %file.display(), message, "skipping a plugin MCP file");
                continue;
            }
        };
        for (name, value) in declared {
            match server(root, value) {
                Ok(config) => {
                    servers.entry(name).or_insert(config);
                }
                Err(message) => tracing::warn!(
                    file = %file.display(),
                    server = name,
                    message,
                    "skipping a plugin MCP server"
                ),
            }
        }
    }
    servers
}

/// The names an MCP file declares (whether or not each reads).
pub(crate) fn declared_names(files: &[std::path::PathBuf]) -> Vec<String> {
    let mut names: Vec<String> = files
        .iter()
        .filter_map(|f| read(f).ok())
        .flat_map(|declared| declared.into_iter().map(|(name, _)| name))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn read(file: &Path) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let (bytes, longer) = agentwire_support::regular_file::read_regular(file, MAX_FILE_BYTES)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if longer {
        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
    }
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("not JSON: {e}"))?;
    match value.get("mcpServers") {
        Some(serde_json::Value::Object(servers)) => Ok(servers.clone()),
        Some(_) => Err("`mcpServers` is not an object".to_owned()),
        None => Ok(serde_json::Map::new()),
    }
}

fn server(root: &Path, value: serde_json::Value) -> Result<McpServerConfig, String> {
    let serde_json::Value::Object(mut object) = value else {
        return Err("not an object".to_owned());
    };
    object.remove("type");
    object.remove("oauth");
    if let Some(headers) = object.remove("headers") {
        object.entry("http_headers").or_insert(headers);
    }
    let cwd = match object.get("cwd").and_then(serde_json::Value::as_str) {
        Some(cwd) => root.join(cwd),
        None => root.to_path_buf(),
    };
    if object.get("url").is_none() {
        object.insert(
            "cwd".to_owned(),
            serde_json::Value::String(cwd.display().to_string()),
        );
    }
    serde_json::from_value(serde_json::Value::Object(object)).map_err(|e| e.to_string())
}

/// The MCP servers of the enabled installed plugins under `home`, as `[mcp_servers.<name>]`
/// tables would give them, named `<plugin>:<server>`. When two plugins of the same name
/// (from different marketplaces) declare the same server, the first plugin by id keeps it.
/// Reads the disk (a few small files).
pub(crate) fn servers(home: &Path) -> BTreeMap<String, McpServerConfig> {
    let enabled = enabled_settings(home);
    let mut all = BTreeMap::new();
    for copy in installed_copies(home) {
        if !enabled.get(&copy.id).copied().unwrap_or(true) {
            continue;
        }
        let Ok(Some(manifest)) = manifest::load_plugin(&copy.dir) else {
            continue;
        };
        for (name, config) in plugin_servers(&copy.dir, &manifest.mcp_files) {
            all.entry(format!("{}:{name}", copy.plugin))
                .or_insert(config);
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_servers_read_as_config_tables_in_the_plugin_folder() {
        let home = tempfile::tempdir().expect("home");
        let root = home.path().join("plugins/team/lint");
        std::fs::create_dir_all(root.join(".codex-plugin")).expect("dirs");
        std::fs::write(root.join(".codex-plugin/plugin.json"), r#"{"name":"lint"}"#)
            .expect("manifest");
        std::fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers":{
                "linter":{"type":"stdio","command":"node","args":["./server.js"],"env":{"A":"1"}},
                "remote":{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"X":"y"}},
                "sub":{"command":"x","cwd":"bin"},
                "broken":{"command":"x","unknown_key":1}
            }}"#,
        )
        .expect("mcp");
        let servers = servers(home.path());
        assert_eq!(
            servers.keys().collect::<Vec<_>>(),
            ["lint:linter", "lint:remote", "lint:sub"]
        );
        assert_eq!(servers["lint:linter"].command.as_deref(), Some("node"));
        assert_eq!(servers["lint:linter"].cwd.as_deref(), Some(root.as_path()));
        assert_eq!(servers["lint:sub"].cwd, Some(root.join("bin")));
        assert_eq!(
            servers["lint:remote"]
                .http_headers
                .get("X")
                .map(String::as_str),
            Some("y")
        );
        assert_eq!(servers["lint:remote"].cwd, None);
        assert_eq!(
            declared_names(&[root.join(".mcp.json")]),
            ["broken", "linter", "remote", "sub"]
        );
        std::fs::write(
            home.path().join("config.toml"),
            "[plugins.\"lint@team\"]\nenabled = false\n",
        )
        .expect("config");
        assert!(super::servers(home.path()).is_empty());
    }
}
