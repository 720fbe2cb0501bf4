//! One server's `McpServerStatus`, from its configuration and its slot.
//!
//! - `runtimeStatus`: `disabled` for `enabled = false`; else `starting`, `connected`,
//!   `failed` (start-up failed, or the server exited since) or `notStarted`;
//! - `tools`: the enabled tools of the running (or last) connection, by name; `toolsError`
//!   says why there is no list (not started, failed, disabled);
//! - `resources`, `resourceTemplates`: what the server listed at start-up (left empty for
//!   `detail: toolsAndAuthOnly`);
//! - `serverInfo` and `serverCapabilities`: from its `initialize` answer;
//! - `authStatus`: `unsupported` for stdio (no sign-in), `bearerToken` for an HTTP server
//!   with `bearer_token_env_var`, `oAuth` for one signed in with `mcpServer/oauth/login`,
//!   `unknown` otherwise;
//! - `httpOrigin`: the scheme, host and port of `url`.

use std::sync::Arc;

use agentwire_config::McpServerConfig;
use agentwire_protocol::{McpAuthStatus, McpServerConnectionStatus, McpServerStatus};

use super::content;
use super::slot::{Phase, Slot};

/// The status of server `name`; `slot` is `None` for a disabled server. `resources` asks for
/// resources and templates too; `home` is where OAuth credentials are stored.
pub fn of(
    name: &str,
    config: &McpServerConfig,
    slot: Option<&Arc<Slot>>,
    resources: bool,
    home: &std::path::Path,
) -> McpServerStatus {
    let http_origin = config.url.as_deref().and_then(origin);
    let auth_status = match (&config.url, &config.bearer_token_env_var) {
        (None, _) => McpAuthStatus::Unsupported,
        (Some(_), Some(_)) => McpAuthStatus::BearerToken,
        (Some(url), None) if super::oauth::signed_in(home, name, url) => McpAuthStatus::OAuth,
        (Some(_), None) => McpAuthStatus::Unknown,
    };
    let mut status = McpServerStatus::builder()
        .name(name.to_owned())
        .maybe_http_origin(http_origin)
        .auth_status(auth_status)
        .runtime_status(McpServerConnectionStatus::Disabled)
        .tools_error("disabled in config.toml (enabled = false)".to_owned())
        .build();
    let Some(slot) = slot.filter(|_| config.enabled != Some(false)) else {
        return status;
    };
    let phase = slot.phase();
    let (runtime, error) = match &phase {
        Phase::NotStarted => (
            McpServerConnectionStatus::NotStarted,
            Some("not started yet".to_owned()),
        ),
        Phase::Starting => (
            McpServerConnectionStatus::Starting,
            Some("starting".to_owned()),
        ),
        Phase::Ready => (McpServerConnectionStatus::Connected, None),
        Phase::Failed(reason) => (McpServerConnectionStatus::Failed, Some(reason.clone())),
    };
    status.runtime_status = Some(runtime);
    status.tools_error = error;
    if let Some(connection) = slot.last_connection() {
        let info = connection.service.peer().peer_info();
        if let Some(info) = info.as_deref() {
            status.server_info = content::json(&info.server_info);
            status.server_capabilities = content::json(&info.capabilities);
        }
        status.tools = slot
            .tools()
            .iter()
            .filter(|t| crate::vocabulary::tool_enabled(config, &t.name))
            .map(|t| (t.name.to_string(), content::tool(t)))
            .collect();
        // A list from the last connection is a real (cached) list.
        status.tools_error = match phase {
            Phase::Failed(reason) => Some(reason),
            _ => None,
        };
        if resources {
            status.resources = connection
                .resources
                .iter()
                .filter_map(content::resource)
                .collect();
            status.resource_templates = connection
                .templates
                .iter()
                .filter_map(content::template)
                .collect();
        }
    }
    status
}

/// `scheme://host[:port]` of `url`, without credentials or path; `None` when it has none.
pub(crate) fn origin(url: &str) -> Option<String> {
    let origin = reqwest::Url::parse(url).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_drops_credentials_and_path() {
        assert_eq!(
            origin("https://user:pw@mcp.example.com:8443/v1/mcp?x=1").as_deref(),
            Some("https://mcp.example.com:8443")
        );
        assert_eq!(
            origin("http://127.0.0.1/mcp").as_deref(),
            Some("http://127.0.0.1")
        );
        assert_eq!(origin("not a url"), None);
    }

    #[test]
    fn a_disabled_server_reports_disabled_and_why() {
        let config = McpServerConfig {
            command: Some("x".to_owned()),
            enabled: Some(false),
            ..McpServerConfig::default()
        };
        let status = of(
            "off",
            &config,
            None,
            true,
            std::path::Path::new("/nonexistent"),
        );
        assert_eq!(
            status.runtime_status,
            Some(McpServerConnectionStatus::Disabled)
        );
        assert_eq!(status.auth_status, McpAuthStatus::Unsupported);
        assert!(
            status
                .tools_error
                .is_some_and(|e| e.contains("enabled = false"))
        );
    }
}
