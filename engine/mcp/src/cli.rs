//! `agentwire mcp list | get NAME | add NAME … | remove NAME`: the `[mcp_servers.<name>]`
//! tables of `$AGENTWIRE_HOME/config.toml`.
//!
//! Reading goes through the configuration store (so `list` shows what the server would use,
//! `-c` overrides and profiles aside); `add` and `remove` edit the user file in place with
//! `toml_edit` (comments and layout outside the edited table stay byte for byte) and write it
//! atomically. An edit that would make the file invalid is refused and nothing is written.
//! `--json` prints JSON for scripts; errors are sentences naming the server or the flag.

use std::path::{Path, PathBuf};

use agentwire_protocol::{ConfigEdit, MergeStrategy};
use serde_json::{Value, json};
use toml_edit::DocumentMut;

use agentwire_config::defaults::ThreadDefaults;
use agentwire_config::edit::{apply_edits, write_atomically};
use agentwire_config::keys::check_text;
use agentwire_config::{McpServerConfig, Store};

/// How a server added with `agentwire mcp add` is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A program speaking MCP on stdio.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// `KEY=VALUE` pairs for its environment.
        env: Vec<(String, String)>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The URL.
        url: String,
        /// The variable holding its bearer token.
        bearer_token_env_var: Option<String>,
    },
}

/// The servers of `home`'s configuration.
fn servers(home: &Path) -> std::collections::BTreeMap<String, McpServerConfig> {
    let store = Store::new(home, ThreadDefaults::default(), &[], None);
    store.effective(None).file.mcp_servers.clone()
}

/// A server's configuration as JSON (Codex's `mcp list --json` shape).
fn describe(name: &str, config: &McpServerConfig) -> Value {
    let transport = match (&config.command, &config.url) {
        (Some(command), _) => json!({
            "type": "stdio",
            "command": command,
            "args": config.args,
            "env": config.env,
            "env_vars": config.env_vars,
            "cwd": config.cwd,
        }),
        (None, Some(url)) => json!({
            "type": "streamable_http",
            "url": url,
            "bearer_token_env_var": config.bearer_token_env_var,
            "http_headers": config.http_headers,
        }),
        (None, None) => json!({ "type": "unknown" }),
    };
    json!({
        "name": name,
        "enabled": config.enabled != Some(false),
        "required": config.required == Some(true),
        "transport": transport,
        "startup_timeout_sec": config.startup_timeout_sec,
        "tool_timeout_sec": config.tool_timeout_sec,
        "enabled_tools": config.enabled_tools,
        "disabled_tools": config.disabled_tools,
        "default_tools_approval_mode": config.default_tools_approval_mode,
    })
}

/// One line about a server, for people (environment values are not shown).
fn line(name: &str, config: &McpServerConfig) -> String {
    let target = match (&config.command, &config.url) {
        (Some(command), _) => {
            let mut parts = vec![command.clone()];
            parts.extend(config.args.iter().cloned());
            parts.join(" ")
        }
        (None, Some(url)) => url.clone(),
        (None, None) => "(no command or url)".to_owned(),
    };
    let state = if config.enabled == Some(false) {
        "disabled"
    } else {
        "enabled"
    };
    format!("{name}\t{state}\t{target}")
}

/// `agentwire mcp list`.
pub fn list(home: &Path, as_json: bool) -> Result<String, String> {
    let servers = servers(home);
    if as_json {
        let all: Vec<Value> = servers.iter().map(|(n, c)| describe(n, c)).collect();
        return serde_json::to_string_pretty(&all).map_err(|e| e.to_string());
    }
    if servers.is_empty() {
        return Ok(
            "No MCP servers are configured. Add one with `agentwire mcp add NAME -- COMMAND`."
                .to_owned(),
        );
    }
    let mut out = vec!["NAME\tSTATE\tCOMMAND OR URL".to_owned()];
    out.extend(servers.iter().map(|(n, c)| line(n, c)));
    Ok(out.join("\n"))
}

/// `agentwire mcp get NAME`.
pub fn get(home: &Path, name: &str, as_json: bool) -> Result<String, String> {
    let servers = servers(home);
    let config = servers
        .get(name)
        .ok_or_else(|| format!("no MCP server named `{name}` is configured"))?;
    if as_json {
        return serde_json::to_string_pretty(&describe(name, config)).map_err(|e| e.to_string());
    }
    let mut out = vec![format!("{name}")];
    out.push(format!(
        "  enabled: {}",
        if config.enabled == Some(false) {
            "no"
        } else {
            "yes"
        }
    ));
    match (&config.command, &config.url) {
        (Some(command), _) => {
            out.push("  transport: stdio".to_owned());
            out.push(format!("  command: {command}"));
            if !config.args.is_empty() {
                out.push(format!("  args: {}", config.args.join(" ")));
            }
            if !config.env.is_empty() {
                let keys: Vec<String> = config.env.keys().map(|k| format!("{k}=*****")).collect();
                out.push(format!("  env: {}", keys.join(", ")));
            }
            if let Some(cwd) = &config.cwd {
                out.push(format!("  cwd: {}", cwd.display()));
            }
        }
        (None, Some(url)) => {
            out.push("  transport: streamable_http".to_owned());
            out.push(format!("  url: {url}"));
            if let Some(var) = &config.bearer_token_env_var {
                out.push(format!("  bearer_token_env_var: {var}"));
            }
        }
        (None, None) => out.push("  transport: none (set `command` or `url`)".to_owned()),
    }
    Ok(out.join("\n"))
}

/// Checks a server name: letters, digits, `_` and `-`.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "invalid server name `{name}`: use letters, digits, `_` and `-`"
        ));
    }
    Ok(())
}

/// `agentwire mcp add NAME …`: adds the server, or replaces the one of that name.
pub fn add(home: &Path, name: &str, transport: Transport) -> Result<String, String> {
    check_name(name)?;
    let value = match &transport {
        Transport::Stdio { command, args, env } => {
            if command.trim().is_empty() {
                return Err("the command after `--` is empty".to_owned());
            }
            let mut table = json!({ "command": command });
            if !args.is_empty() {
                table["args"] = json!(args);
            }
            if !env.is_empty() {
                let env: serde_json::Map<String, Value> = env
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect();
                table["env"] = Value::Object(env);
            }
            table
        }
        Transport::Http {
            url,
            bearer_token_env_var,
        } => {
            let parsed = reqwest::Url::parse(url).map_err(|e| format!("--url {url:?}: {e}"))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(format!(
                    "--url {url:?}: must start with http:// or https://"
                ));
            }
            let mut table = json!({ "url": url });
            if let Some(var) = bearer_token_env_var {
                table["bearer_token_env_var"] = json!(var);
            }
            table
        }
    };
    let existed = servers(home).contains_key(name);
    edit(home, name, value)?;
    Ok(if existed {
        format!("Replaced MCP server `{name}`.")
    } else {
        format!("Added MCP server `{name}`.")
    })
}

/// `agentwire mcp remove NAME`.
pub fn remove(home: &Path, name: &str) -> Result<String, String> {
    let path = home.join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let document: DocumentMut = text
        .parse()
        .map_err(|e| format!("{} does not parse: {e}", path.display()))?;
    let present = document
        .get("mcp_servers")
        .and_then(|s| s.as_table_like())
        .is_some_and(|s| s.contains_key(name));
    if !present {
        return Err(format!(
            "no MCP server named `{name}` in {}",
            path.display()
        ));
    }
    edit(home, name, Value::Null)?;
    Ok(format!("Removed MCP server `{name}`."))
}

/// Sets (or with `null` removes) `mcp_servers.<name>` in the user file.
fn edit(home: &Path, name: &str, value: Value) -> Result<PathBuf, String> {
    let path = home.join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
    };
    let before = check_text(&text);
    if before.table.is_none() {
        let problem = before
            .problems
            .first()
            .map(|p| p.text())
            .unwrap_or_default();
        return Err(format!(
            "{} does not parse ({problem}); fix it by hand first",
            path.display()
        ));
    }
    let mut document: DocumentMut = text
        .parse()
        .map_err(|e| format!("{} does not parse: {e}", path.display()))?;
    apply_edits(
        &mut document,
        &[ConfigEdit::builder()
            .key_path(format!("mcp_servers.{name}"))
            .value(value)
            .merge_strategy(MergeStrategy::Replace)
            .build()],
    )?;
    let new_text = document.to_string();
    let after = check_text(&new_text);
    if let Some(problem) = after.problems.iter().find(|p| {
        !before
            .problems
            .iter()
            .any(|old| old.key_path == p.key_path && old.summary == p.summary)
    }) {
        return Err(format!("refused, nothing written: {}", problem.text()));
    }
    std::fs::create_dir_all(home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
    write_atomically(&path, &new_text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_and_remove_keep_comments() {
        let home = std::env::temp_dir().join(format!("aw-mcp-cli-{}", std::process::id()));
        std::fs::create_dir_all(&home).expect("home");
        let original = "# my settings\nmodel = \"m\" # the model\n\n# servers below\n";
        std::fs::write(home.join("config.toml"), original).expect("write");
        add(
            &home,
            "docs",
            Transport::Stdio {
                command: "docs-server".to_owned(),
                args: vec!["--port".to_owned(), "1".to_owned()],
                env: vec![("K".to_owned(), "V".to_owned())],
            },
        )
        .expect("add");
        let text = std::fs::read_to_string(home.join("config.toml")).expect("read");
        assert!(
            text.contains("# my settings\nmodel = \"m\" # the model\n"),
            "{text}"
        );
        assert!(text.contains("# servers below"), "{text}");
        assert!(text.contains("[mcp_servers.docs]"), "{text}");
        let listed = list(&home, true).expect("list");
        assert!(listed.contains("docs-server"), "{listed}");
        assert!(get(&home, "nope", false).is_err_and(|e| e.contains("`nope`")));
        remove(&home, "docs").expect("remove");
        let text = std::fs::read_to_string(home.join("config.toml")).expect("read");
        assert!(
            text.contains("# my settings") && text.contains("# the model"),
            "{text}"
        );
        assert!(!text.contains("docs-server"), "{text}");
        assert!(remove(&home, "docs").is_err_and(|e| e.contains("`docs`")));
        assert!(check_name("a.b").is_err());
        let _ = std::fs::remove_dir_all(&home);
    }
}
