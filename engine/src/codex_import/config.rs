//! The `CONFIG` and `MCP_SERVER_CONFIG` items: Codex's `config.toml` merged into the user
//! configuration through its write path ([`crate::config_rpc::write`], which refuses a value
//! of the wrong type and takes the configuration's locks), and the API key of Codex's
//! `auth.json` stored as `account/login/start` stores one.
//!
//! A key this home's file lacks is added; a table both have gains the entries this home's
//! lacks (recursively); any other value of this home is kept. One write per top-level key, so
//! a key the write path refuses is reported alone and the others still go in.

use std::collections::BTreeSet;
use std::path::Path;

use agentwire_config::keys;
use agentwire_config::layers::read_file;
use agentwire_protocol::{ConfigEdit, MergeStrategy};
use serde_json::Value as Json;
use toml::Value as Toml;

use super::{Importer, Tally};
use crate::accounts::store as auth;

/// The method named in errors of the configuration write path.
const METHOD: &str = "externalAgentConfig/import";
/// Largest Codex `auth.json` read, in bytes.
const MAX_AUTH_BYTES: u64 = 1024 * 1024;

/// What of Codex's configuration is not here yet.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// Top-level keys whose merge would change this home's file.
    pub keys: Vec<String>,
    /// MCP servers this home does not configure.
    pub mcp_servers: Vec<String>,
    /// Whether Codex has an API key and this home none.
    pub api_key: bool,
}

/// `theirs` merged under `ours`: where both are tables, key by key; otherwise `ours` when
/// there is one.
fn merged(ours: Option<&Toml>, theirs: &Toml) -> Toml {
    match (ours, theirs) {
        (None, theirs) => theirs.clone(),
        (Some(Toml::Table(ours)), Toml::Table(theirs)) => {
            let mut out = ours.clone();
            for (key, value) in theirs {
                out.insert(key.clone(), merged(ours.get(key), value));
            }
            Toml::Table(out)
        }
        (Some(ours), _) => ours.clone(),
    }
}

/// A TOML value as the JSON the write path takes (a date-time as its text).
fn to_json(value: &Toml) -> Json {
    match value {
        Toml::String(s) => Json::String(s.clone()),
        Toml::Integer(i) => Json::from(*i),
        Toml::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Toml::Boolean(b) => Json::Bool(*b),
        Toml::Datetime(d) => Json::String(d.to_string()),
        Toml::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Toml::Table(table) => {
            Json::Object(table.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
    }
}

/// Whether this server's configuration knows `key` (uses it, or passes it through for Codex).
fn known(key: &str) -> bool {
    keys::USED.contains(&key) || keys::CODEX_ONLY.contains(&key)
}

/// Codex's `value` of top-level `key` as this server's configuration takes it: without the
/// keys inside it that this server does not know (returned, as dotted key paths), or why it is
/// not taken at all (a value of the wrong type).
fn importable(key: &str, value: &Toml) -> Result<(Toml, Vec<String>), String> {
    let mut value = value.clone();
    let mut dropped = Vec::new();
    // Each round drops the unknown keys found; nesting bounds the rounds.
    for _ in 0..16 {
        let mut document = toml_edit::DocumentMut::new();
        let edit = ConfigEdit::builder()
            .key_path(key)
            .value(to_json(&value))
            .merge_strategy(MergeStrategy::Replace)
            .build();
        agentwire_config::edit::apply_edits(&mut document, &[edit])?;
        let checked = keys::check_text(&document.to_string());
        if let Some(problem) = checked.problems.iter().find(|p| !p.unknown_key) {
            return Err(problem.text());
        }
        let unknown: Vec<String> = checked
            .problems
            .into_iter()
            .filter_map(|p| p.key_path)
            .collect();
        if unknown.is_empty() {
            return Ok((value, dropped));
        }
        for path in unknown {
            let segments = keys::split_key_path(&path)?;
            if segments.len() < 2 || !remove(&mut value, &segments[1..]) {
                return Err(format!("`{path}`: a key this server does not know"));
            }
            dropped.push(path);
        }
    }
    Err(format!("`{key}`: too many keys this server does not know"))
}

/// Removes the key at `path` (below `value`); whether there was one.
fn remove(value: &mut Toml, path: &[String]) -> bool {
    match (value, path) {
        (Toml::Table(table), [last]) => table.remove(last).is_some(),
        (Toml::Table(table), [first, rest @ ..]) => table
            .get_mut(first)
            .is_some_and(|inner| remove(inner, rest)),
        _ => false,
    }
}

/// Codex's API key, if its `auth.json` holds one (`Err` when it cannot be read, or holds only
/// a ChatGPT sign-in).
fn codex_api_key(codex: &Path) -> Result<Option<String>, String> {
    let path = codex.join("auth.json");
    let bytes = match agentwire_support::regular_file::read_regular(&path, MAX_AUTH_BYTES) {
        Ok((bytes, false)) => bytes,
        Ok((_, true)) => {
            return Err(format!(
                "{}: larger than {MAX_AUTH_BYTES} bytes",
                path.display()
            ));
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("{}: {error}", path.display())),
    };
    // serde_json's message names a position, never the text: the file holds secrets.
    let file: Json = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "{}: not valid JSON (line {} column {})",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    match file["OPENAI_API_KEY"].as_str().map(str::trim) {
        Some(key) if !key.is_empty() => Ok(Some(key.to_owned())),
        _ if !file["tokens"].is_null() => Err(format!(
            "{}: Codex signs in with ChatGPT there, which this server does not; sign in here \
             with an API key (account/login/start)",
            path.display()
        )),
        _ => Ok(None),
    }
}

/// This home's user configuration and Codex's, as tables (Codex's `None` when it has none).
fn tables(importer: &Importer) -> (toml::Table, Option<Result<toml::Table, String>>) {
    let ours = read_file(importer.config.user_path()).table;
    let path = importer.codex.join("config.toml");
    if !path.exists() {
        return (ours, None);
    }
    let theirs = read_file(&path);
    let theirs = match theirs.problems.first() {
        Some(problem) if theirs.table.is_empty() => {
            Err(format!("{}: {}", path.display(), problem.text()))
        }
        _ => Ok(theirs.table),
    };
    (ours, Some(theirs))
}

/// What of Codex's configuration and sign-in is not here yet.
pub(crate) fn pending(importer: &Importer) -> Pending {
    let mut pending = Pending::default();
    let (ours, theirs) = tables(importer);
    if let Some(Ok(theirs)) = theirs {
        for (key, value) in &theirs {
            if key == "mcp_servers" {
                let servers = value.as_table().into_iter().flatten();
                let present = ours.get("mcp_servers").and_then(Toml::as_table);
                for (name, _) in servers {
                    if present.is_none_or(|p| !p.contains_key(name)) {
                        pending.mcp_servers.push(name.clone());
                    }
                }
                continue;
            }
            if !known(key) {
                continue;
            }
            let Ok((value, _)) = importable(key, value) else {
                continue;
            };
            if ours.get(key) != Some(&merged(ours.get(key), &value)) {
                pending.keys.push(key.clone());
            }
        }
    }
    pending.api_key = matches!(codex_api_key(&importer.codex), Ok(Some(_)))
        && matches!(auth::read_key(&importer.home), Ok(None));
    pending
}

/// Imports the `CONFIG` item: every key of Codex's `config.toml` but `mcp_servers`, then the
/// API key.
pub(crate) fn import_config(importer: &Importer, tally: &mut Tally) {
    let (ours, theirs) = tables(importer);
    match theirs {
        None => {}
        Some(Err(reason)) => tally.fail(
            "read",
            "config_unreadable",
            Some("config.toml".into()),
            reason,
        ),
        Some(Ok(theirs)) => {
            for (key, value) in &theirs {
                if key == "mcp_servers" {
                    continue;
                }
                let source = format!("config.toml {key}");
                if !known(key) {
                    tally.fail(
                        "validate",
                        "unknown_key",
                        Some(source),
                        format!("`{key}`: a key neither this server nor Codex's documented configuration knows; left out"),
                    );
                    continue;
                }
                let value = match importable(key, value) {
                    Ok((value, dropped)) => {
                        for path in dropped {
                            tally.fail(
                                "validate",
                                "unknown_key",
                                Some(format!("config.toml {path}")),
                                format!("`{path}`: a key this server does not know; left out"),
                            );
                        }
                        value
                    }
                    Err(reason) => {
                        tally.fail("validate", "config_value", Some(source), reason);
                        continue;
                    }
                };
                let value = merged(ours.get(key), &value);
                if ours.get(key) == Some(&value) {
                    tally.ok(source.clone(), source, None);
                    continue;
                }
                write_key(importer, key, &value, source, tally);
            }
        }
    }
    import_api_key(importer, tally);
}

/// Writes top-level `key_path` = `value` into the user configuration.
fn write_key(importer: &Importer, key_path: &str, value: &Toml, source: String, tally: &mut Tally) {
    let edit = ConfigEdit::builder()
        .key_path(key_path)
        .value(to_json(value))
        .merge_strategy(MergeStrategy::Replace)
        .build();
    match crate::config_rpc::write(&importer.config, METHOD, &[edit], None, None) {
        Ok(written) => tally.ok(source, format!("{} {key_path}", written.file_path.0), None),
        Err(error) => tally.fail("write", "config_write", Some(source), error.message),
    }
}

/// Stores Codex's API key when this home has none.
fn import_api_key(importer: &Importer, tally: &mut Tally) {
    let source = importer.codex.join("auth.json").display().to_string();
    let key = match codex_api_key(&importer.codex) {
        Ok(Some(key)) => key,
        Ok(None) => return,
        Err(reason) => {
            tally.fail("read", "auth_unusable", Some(source), reason);
            return;
        }
    };
    let target = auth::path(&importer.home).display().to_string();
    match auth::read_key(&importer.home) {
        Ok(Some(ours)) if ours == key => tally.ok(source, target, None),
        Ok(Some(_)) => tally.fail(
            "write",
            "auth_conflict",
            Some(source),
            format!(
                "this server already signs in with another API key ({target}); it was kept (sign \
                 out with account/logout first to use Codex's)"
            ),
        ),
        Ok(None) => match auth::write_key(&importer.home, &key) {
            Ok(()) => {
                tracing::info!("signed in with the API key imported from Codex");
                tally.ok(source, target, None);
            }
            Err(error) => tally.fail(
                "write",
                "auth_write",
                Some(source),
                format!("{target}: {error}"),
            ),
        },
        Err(error) => tally.fail("read", "auth_unreadable", Some(source), error.to_string()),
    }
}

/// Imports the `MCP_SERVER_CONFIG` item: Codex's MCP servers (those of `names`, or all) that
/// this home does not configure.
pub(crate) fn import_mcp_servers(
    importer: &Importer,
    names: Option<&BTreeSet<String>>,
    tally: &mut Tally,
) {
    let (ours, theirs) = tables(importer);
    let theirs = match theirs {
        None => {
            tally.fail(
                "read",
                "config_missing",
                Some("config.toml".into()),
                format!("{}/config.toml: no such file", importer.codex.display()),
            );
            return;
        }
        Some(Err(reason)) => {
            tally.fail(
                "read",
                "config_unreadable",
                Some("config.toml".into()),
                reason,
            );
            return;
        }
        Some(Ok(theirs)) => theirs,
    };
    let servers = theirs
        .get("mcp_servers")
        .and_then(Toml::as_table)
        .cloned()
        .unwrap_or_default();
    let present = ours
        .get("mcp_servers")
        .and_then(Toml::as_table)
        .cloned()
        .unwrap_or_default();
    if let Some(names) = names {
        for name in names.iter().filter(|n| !servers.contains_key(*n)) {
            tally.fail(
                "validate",
                "mcp_server_missing",
                Some(name.clone()),
                format!("`{name}`: Codex configures no MCP server of that name"),
            );
        }
    }
    for (name, server) in &servers {
        if names.is_some_and(|names| !names.contains(name)) {
            continue;
        }
        let source = format!("config.toml mcp_servers.{name}");
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            || name.is_empty()
        {
            tally.fail(
                "validate",
                "mcp_server_name",
                Some(source),
                format!("`{name}`: an MCP server name is letters, digits, `_` and `-`"),
            );
            continue;
        }
        match present.get(name) {
            Some(ours) if ours == server => tally.ok(source.clone(), source, None),
            Some(_) => tally.fail(
                "write",
                "mcp_server_conflict",
                Some(source),
                format!("`{name}`: this server already configures a different MCP server of that name; it was kept"),
            ),
            None => write_key(importer, &format!("mcp_servers.{name}"), server, source, tally),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Toml {
        Toml::Table(text.parse::<toml::Table>().expect("toml"))
    }

    #[test]
    fn a_merge_adds_what_is_missing_and_keeps_what_is_here() {
        let ours = table("model = \"mine\"\n[profiles.a]\nmodel = \"x\"\n");
        let theirs = table(
            "model = \"theirs\"\n[profiles.a]\nmodel = \"y\"\neffort = \"high\"\n[profiles.b]\nmodel = \"z\"\n",
        );
        let (Toml::Table(ours), Toml::Table(theirs)) = (ours, theirs) else {
            unreachable!("tables")
        };
        assert_eq!(
            merged(ours.get("model"), &theirs["model"]),
            Toml::String("mine".into())
        );
        let profiles = merged(ours.get("profiles"), &theirs["profiles"]);
        assert_eq!(
            profiles,
            table("[a]\nmodel = \"x\"\neffort = \"high\"\n[b]\nmodel = \"z\"\n")
        );
        assert_eq!(
            merged(None, &theirs["model"]),
            Toml::String("theirs".into())
        );
    }

    #[test]
    fn keys_this_server_does_not_know_are_dropped_from_a_value() {
        let providers = table(
            "[mock]\nname = \"mock\"\nbase_url = \"http://x/v1\"\nwire_api = \"responses\"\nstream_max_retries = 0\n",
        );
        let (value, dropped) = importable("model_providers", &providers).expect("importable");
        assert_eq!(dropped, ["model_providers.mock.stream_max_retries"]);
        assert_eq!(
            value,
            table(
                "[mock]\nname = \"mock\"\nbase_url = \"http://x/v1\"\nwire_api = \"responses\"\n"
            )
        );
        let refused = importable("approval_policy", &Toml::Integer(3)).expect_err("a number");
        assert!(refused.contains("approval_policy"), "{refused}");
    }

    #[test]
    fn toml_values_become_the_json_the_write_path_takes() {
        let value =
            table("a = 1\nb = 1.5\nc = [true, \"x\"]\nd = 1979-05-27T07:32:00Z\n[e]\nf = \"g\"\n");
        assert_eq!(
            to_json(&value),
            serde_json::json!({"a": 1, "b": 1.5, "c": [true, "x"], "d": "1979-05-27T07:32:00Z", "e": {"f": "g"}})
        );
    }

    #[test]
    fn codex_auth_yields_its_api_key_but_not_a_chatgpt_sign_in() {
        let codex = tempfile::tempdir().expect("codex");
        assert_eq!(codex_api_key(codex.path()), Ok(None));
        std::fs::write(
            codex.path().join("auth.json"),
            r#"{"OPENAI_API_KEY": "sk-codex"}"#,
        )
        .expect("write");
        assert_eq!(codex_api_key(codex.path()), Ok(Some("sk-codex".into())));
        std::fs::write(
            codex.path().join("auth.json"),
            r#"{"OPENAI_API_KEY": null, "tokens": {"id_token": "secret"}}"#,
        )
        .expect("write");
        let refused = codex_api_key(codex.path()).expect_err("ChatGPT");
        assert!(refused.contains("ChatGPT") && !refused.contains("secret"));
        std::fs::write(
            codex.path().join("auth.json"),
            "{\"OPENAI_API_KEY\": \"sk-sec",
        )
        .expect("write");
        assert!(
            !codex_api_key(codex.path())
                .expect_err("torn")
                .contains("sk-sec")
        );
    }
}
