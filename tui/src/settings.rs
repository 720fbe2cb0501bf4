//! The settings the current thread actually runs with, as the server reports them: in the
//! `thread/start` and `thread/resume` answers (`model`, `reasoningEffort`, `cwd`,
//! `approvalPolicy`, `sandbox`), then in each `thread/settings/updated` for the thread
//! (`threadSettings.model`, `.effort`, …). The status line and `/status` show these, never what
//! the client merely asked for.
//!
//! Values are read from JSON loosely: a member that is missing or of another shape leaves that
//! setting unknown (`None`) rather than failing, so any app-server can be shown.

use serde_json::Value;

/// What the current thread runs with; `None` where the server did not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InUse {
    /// The model slug.
    pub model: Option<String>,
    /// The model provider id.
    pub provider: Option<String>,
    /// The reasoning effort (`low`, `medium`, …); `None` when the model's default applies.
    pub effort: Option<String>,
    /// The working directory, on the server's machine.
    pub cwd: Option<String>,
    /// The approval policy as a name (`untrusted`, `on-request`, `never`, `granular`).
    pub approval: Option<String>,
    /// The sandbox as a mode name (`read-only`, `workspace-write`, `danger-full-access`,
    /// `external-sandbox`), with `+ network` when commands may use the network.
    pub sandbox: Option<String>,
}

impl InUse {
    /// The settings in a `thread/start` or `thread/resume` answer.
    pub fn from_thread_answer(answer: &Value) -> Self {
        Self {
            model: text(answer, "model"),
            provider: text(answer, "modelProvider"),
            effort: text(answer, "reasoningEffort"),
            cwd: text(answer, "cwd"),
            approval: answer.get("approvalPolicy").and_then(approval_name),
            sandbox: answer.get("sandbox").and_then(sandbox_name),
        }
    }

    /// The settings in a `thread/settings/updated` notification's `threadSettings`.
    pub fn from_thread_settings(settings: &Value) -> Self {
        Self {
            model: text(settings, "model"),
            provider: text(settings, "modelProvider"),
            effort: text(settings, "effort"),
            cwd: text(settings, "cwd"),
            approval: settings.get("approvalPolicy").and_then(approval_name),
            sandbox: settings.get("sandboxPolicy").and_then(sandbox_name),
        }
    }
}

fn text(object: &Value, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The name of an `approvalPolicy` value: the string itself, or `granular` for
/// `{"granular": {…}}`.
fn approval_name(policy: &Value) -> Option<String> {
    match policy {
        Value::String(name) => Some(name.clone()),
        Value::Object(object) => object.keys().next().cloned(),
        _ => None,
    }
}

/// The mode name of a full sandbox policy (`{"type": "workspaceWrite", "networkAccess": true}`
/// is `workspace-write + network`). A plain mode string is taken as it is.
fn sandbox_name(policy: &Value) -> Option<String> {
    if let Some(mode) = policy.as_str() {
        return Some(mode.to_owned());
    }
    let kind = policy.get("type")?.as_str()?;
    let mut name = String::with_capacity(kind.len() + 2);
    for c in kind.chars() {
        if c.is_ascii_uppercase() {
            name.push('-');
            name.push(c.to_ascii_lowercase());
        } else {
            name.push(c);
        }
    }
    // `networkAccess` is a boolean, except for an external sandbox (`enabled`/`restricted`).
    let network = policy.get("networkAccess");
    if network == Some(&Value::Bool(true)) || network.and_then(Value::as_str) == Some("enabled") {
        name.push_str(" + network");
    }
    Some(name)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_thread_answer_and_a_settings_notification_name_what_is_in_use() {
        let answer = json!({
            "thread": {"id": "t"}, "model": "qwen3-coder", "modelProvider": "ollama",
            "reasoningEffort": null, "cwd": "/w", "approvalPolicy": "on-request",
            "approvalsReviewer": "user",
            "sandbox": {"type": "workspaceWrite", "writableRoots": [], "networkAccess": true},
        });
        assert_eq!(
            InUse::from_thread_answer(&answer),
            InUse {
                model: Some("qwen3-coder".into()),
                provider: Some("ollama".into()),
                effort: None,
                cwd: Some("/w".into()),
                approval: Some("on-request".into()),
                sandbox: Some("workspace-write + network".into()),
            }
        );
        let settings = json!({
            "model": "gpt-oss", "modelProvider": "ollama", "effort": "high", "cwd": "/w",
            "approvalPolicy": {"granular": {"sandbox_approval": true, "rules": true,
                "mcp_elicitations": false}},
            "sandboxPolicy": {"type": "dangerFullAccess"},
        });
        let in_use = InUse::from_thread_settings(&settings);
        assert_eq!(in_use.model.as_deref(), Some("gpt-oss"));
        assert_eq!(in_use.effort.as_deref(), Some("high"));
        assert_eq!(in_use.approval.as_deref(), Some("granular"));
        assert_eq!(in_use.sandbox.as_deref(), Some("danger-full-access"));
        // Members of an unexpected shape leave the setting unknown.
        let odd = InUse::from_thread_answer(&json!({"model": 5, "sandbox": {"type": 1}}));
        assert_eq!(odd, InUse::default());
    }
}
