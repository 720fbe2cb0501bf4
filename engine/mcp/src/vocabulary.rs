//! What the parts of the MCP client share: time limits, [`McpError`], the [`Caller`] an
//! elicitation goes to, and the tool filter of a server's table.

use agentwire_config::McpServerConfig;

/// Default start-up time limit (initialize and the tool list), in seconds.
pub(crate) const DEFAULT_STARTUP_TIMEOUT_SEC: f64 = 10.0;
/// How long turns wait before trying again to start a server whose start failed (explicit
/// uses, `mcpServerStatus/list` and required-server checks try at once).
pub(crate) const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(30);
/// Default time limit of one tool call, in seconds.
pub(crate) const DEFAULT_TOOL_TIMEOUT_SEC: f64 = 60.0;

/// Why an MCP server could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    /// No `[mcp_servers.<name>]` table.
    #[error("no MCP server named `{0}` is configured")]
    Unknown(String),
    /// `enabled = false`.
    #[error("the MCP server `{0}` is disabled (enabled = false)")]
    Disabled(String),
    /// The tool is filtered out by `enabled_tools` / `disabled_tools`.
    #[error("the tool `{tool}` of the MCP server `{server}` is disabled in config.toml")]
    ToolDisabled {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// Start-up failed.
    #[error("the MCP server `{server}` failed to start: {reason}")]
    Startup {
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
    /// A request to a running server failed.
    #[error("the MCP server `{server}` failed: {reason}")]
    Call {
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
}

/// Who an MCP server's elicitation goes to while a request of it runs.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The connection that receives `mcpServer/elicitation/request`.
    pub peer: agentwire_runtime::Peer,
    /// The thread.
    pub thread_id: String,
    /// The running turn, if any.
    pub turn_id: Option<String>,
}

/// Whether `tool` passes the server's `enabled_tools` / `disabled_tools` filter.
pub(crate) fn tool_enabled(config: &McpServerConfig, tool: &str) -> bool {
    config
        .enabled_tools
        .as_ref()
        .is_none_or(|only| only.iter().any(|t| t == tool))
        && !config.disabled_tools.iter().any(|t| t == tool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_filter_applies_both_lists() {
        let mut config = McpServerConfig::default();
        assert!(tool_enabled(&config, "echo"));
        config.disabled_tools = vec!["echo".to_owned()];
        assert!(!tool_enabled(&config, "echo"));
        assert!(tool_enabled(&config, "add"));
        config.enabled_tools = Some(vec!["add".to_owned(), "echo".to_owned()]);
        assert!(!tool_enabled(&config, "echo"));
        assert!(tool_enabled(&config, "add"));
        assert!(!tool_enabled(&config, "other"));
    }
}
