//! Lifecycle hooks declared in the configuration (`hooks/list`): per event, groups of
//! handlers with an optional tool matcher, in the shape Codex's `config.toml` uses:
//!
//! ```toml
//! [[hooks.PreToolUse]]
//! matcher = "shell"                                   # a regular expression over tool names
//! hooks = [{ type = "command", command = "./check.sh", timeout = 30 }]
//! ```
//!
//! Event names are the PascalCase ones (`PreToolUse`, `PostToolUse`, `UserPromptSubmit`,
//! `Stop`, …) or their camelCase wire names. Each layer in effect for the working directory
//! (the user file, trusted project files, `-c` flags) contributes its own hooks, in layer order;
//! a declaration that cannot be used is reported in `errors` with its file and the reason.
//!
//! Turns run the command hooks of their working directory ([`run`], called from
//! `turns::run::hook_points`): the event as JSON on stdin, under the thread's sandbox, with
//! `hook/started` and `hook/completed` for each run.

pub(crate) mod run;

use agentwire_protocol::{
    AbsolutePathBuf, ConfigLayerSource, HookErrorInfo, HookEventName, HookHandlerMetadata,
    HookMetadata, HookSource, HookTrustStatus, HooksListEntry,
};
use sha2::{Digest, Sha256};

use agentwire_config::store::Layer;

/// Seconds a hook may run when its declaration does not say.
const DEFAULT_TIMEOUT_SEC: u64 = 60;

/// The hooks the layers `layers` (lowest precedence first) declare, for working directory
/// `cwd`.
pub(crate) fn list(cwd: &str, layers: &[Layer]) -> HooksListEntry {
    let mut hooks = Vec::new();
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for layer in layers {
        let Some(declared) = layer.table.get("hooks") else {
            continue;
        };
        let (source, path) = source_of(&layer.source);
        if let Some(reason) = &layer.disabled_reason {
            warnings.push(format!("hooks of {path} are not used: {reason}"));
            continue;
        }
        let Some(events) = declared.as_table() else {
            errors.push(error(&path, "`hooks` must be a table of events".to_owned()));
            continue;
        };
        for (event, groups) in events {
            let Some(event_name) = event_name(event) else {
                errors.push(error(&path, format!("hooks.{event}: unknown hook event")));
                continue;
            };
            let Some(groups) = groups.as_array() else {
                errors.push(error(
                    &path,
                    format!("hooks.{event}: must be an array of groups"),
                ));
                continue;
            };
            for (g, group) in groups.iter().enumerate() {
                let matcher = group.get("matcher").and_then(toml::Value::as_str);
                let Some(handlers) = group.get("hooks").and_then(toml::Value::as_array) else {
                    errors.push(error(
                        &path,
                        format!("hooks.{event}[{g}]: no `hooks` array"),
                    ));
                    continue;
                };
                for (h, handler) in handlers.iter().enumerate() {
                    let at = format!("hooks.{event}[{g}].hooks[{h}]");
                    match metadata(handler, &at) {
                        Ok((kind, timeout, status)) => {
                            let order = i64::try_from(hooks.len()).unwrap_or(i64::MAX);
                            hooks.push(
                                HookMetadata::builder()
                                    .handler(kind)
                                    .current_hash(hash(event, matcher, handler))
                                    .display_order(order)
                                    .enabled(true)
                                    .event_name(event_name)
                                    .is_managed(false)
                                    .key(format!("{path}#{at}"))
                                    .maybe_matcher(matcher.map(str::to_owned))
                                    .source(source)
                                    .source_path(AbsolutePathBuf(path.clone()))
                                    .maybe_status_message(status)
                                    .timeout_sec(timeout)
                                    .trust_status(HookTrustStatus::Trusted)
                                    .build(),
                            );
                        }
                        Err(reason) => errors.push(error(&path, format!("{at}: {reason}"))),
                    }
                }
            }
        }
    }
    HooksListEntry::builder()
        .cwd(cwd)
        .errors(errors)
        .hooks(hooks)
        .warnings(warnings)
        .build()
}

/// What one handler declaration runs, its timeout and its status line.
fn metadata(
    handler: &toml::Value,
    at: &str,
) -> Result<(HookHandlerMetadata, u64, Option<String>), String> {
    let kind = handler
        .get("type")
        .and_then(toml::Value::as_str)
        .unwrap_or("command");
    let timeout = ["timeout", "timeout_sec", "timeoutSec"]
        .iter()
        .find_map(|k| handler.get(*k))
        .map(|v| {
            v.as_integer()
                .and_then(|t| u64::try_from(t).ok())
                .filter(|t| *t > 0)
                .ok_or_else(|| "timeout: must be a positive number of seconds".to_owned())
        })
        .transpose()?
        .unwrap_or(DEFAULT_TIMEOUT_SEC);
    let status = ["status_message", "statusMessage"]
        .iter()
        .find_map(|k| handler.get(*k))
        .and_then(toml::Value::as_str)
        .map(str::to_owned);
    let handler = match kind {
        "command" => {
            let command = handler
                .get("command")
                .and_then(toml::Value::as_str)
                .filter(|c| !c.trim().is_empty())
                .ok_or_else(|| "command: missing".to_owned())?;
            let is_async = handler
                .get("async")
                .and_then(toml::Value::as_bool)
                .unwrap_or(false);
            let mut metadata = HookHandlerMetadata::command(command);
            if let HookHandlerMetadata::Command { is_async: a, .. } = &mut metadata {
                *a = is_async;
            }
            metadata
        }
        other => {
            return Err(format!(
                "type `{other}` is not supported (only `command`) at {at}"
            ));
        }
    };
    Ok((handler, timeout, status))
}

/// The wire name of a configured event key.
fn event_name(key: &str) -> Option<HookEventName> {
    let camel = {
        let mut chars = key.chars();
        chars
            .next()
            .map(|c| c.to_ascii_lowercase().to_string() + chars.as_str())
            .unwrap_or_default()
    };
    serde_json::from_value(serde_json::Value::String(camel)).ok()
}

/// The hook source and file path of a configuration layer.
fn source_of(layer: &ConfigLayerSource) -> (HookSource, String) {
    match layer {
        ConfigLayerSource::User { file, .. } => (HookSource::User, file.0.clone()),
        ConfigLayerSource::Project {
            dot_codex_folder, ..
        } => (
            HookSource::Project,
            format!("{}/config.toml", dot_codex_folder.0),
        ),
        ConfigLayerSource::System { file, .. } => (HookSource::System, file.0.clone()),
        ConfigLayerSource::SessionFlags => (HookSource::SessionFlags, "-c".to_owned()),
        _ => (HookSource::Unknown, String::new()),
    }
}

/// A digest of one handler's declaration (with its event and matcher).
fn hash(event: &str, matcher: Option<&str>, handler: &toml::Value) -> String {
    let mut digest = Sha256::new();
    digest.update(event.as_bytes());
    digest.update([0]);
    digest.update(matcher.unwrap_or("").as_bytes());
    digest.update([0]);
    digest.update(format!("{handler:?}").as_bytes());
    digest
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn error(path: &str, message: String) -> HookErrorInfo {
    HookErrorInfo::builder().message(message).path(path).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user_layer(text: &str) -> Layer {
        Layer {
            source: ConfigLayerSource::user()
                .file(AbsolutePathBuf("/home/u/.agentwire/config.toml".into()))
                .build(),
            version: String::new(),
            table: toml::from_str(text).expect("toml"),
            disabled_reason: None,
        }
    }

    #[test]
    fn command_hooks_are_listed_per_event_and_bad_ones_named_with_their_place() {
        let entry = list(
            "/w",
            &[user_layer(
                "[[hooks.PreToolUse]]\nmatcher = \"shell\"\nhooks = [{ type = \"command\", command = \"./check.sh\", timeout = 5 }, { type = \"command\" }]\n[[hooks.Nope]]\nhooks = []\n",
            )],
        );
        assert_eq!(entry.hooks.len(), 1, "{entry:?}");
        let hook = &entry.hooks[0];
        assert_eq!(hook.event_name, HookEventName::PreToolUse);
        assert_eq!(hook.matcher.as_deref(), Some("shell"));
        assert_eq!(hook.timeout_sec, 5);
        assert_eq!(hook.handler, HookHandlerMetadata::command("./check.sh"));
        let messages: Vec<&str> = entry.errors.iter().map(|e| e.message.as_str()).collect();
        assert!(
            messages.contains(&"hooks.PreToolUse[0].hooks[1]: command: missing"),
            "{messages:?}"
        );
        assert!(
            messages.contains(&"hooks.Nope: unknown hook event"),
            "{messages:?}"
        );
    }
}
