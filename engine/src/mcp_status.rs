//! `mcpServerStatus/list`: the MCP servers configured under `[mcp_servers.<name>]` in
//! `config.toml`, and what can honestly be said about them.
//!
//! The engine does not connect to MCP servers yet (the MCP client comes with issue #12), so
//! every server is reported from its configuration alone:
//! - `tools`, `resources` and `resourceTemplates` are empty and `serverInfo` is `null`;
//!   `toolsError` says why there is no tool list (not connected, or disabled);
//! - `authStatus` is `unsupported` for a server started as a child process (stdio has no
//!   sign-in), `bearerToken` for an HTTP server configured with `bearer_token_env_var`, and
//!   `unknown` for any other HTTP server (finding out needs a connection);
//! - `runtimeStatus` is `disabled` for a server with `enabled = false`; for an enabled one it is
//!   `notStarted` when the client names a thread (no thread starts it) and `null` otherwise;
//! - `httpOrigin` is the scheme, host and port of `url`.
//!
//! Servers are listed by name, in byte order. Pages work as in the reference: `cursor` is the
//! position of the first server to list (the `nextCursor` of the previous page), `limit`
//! defaults to all remaining servers. `serverName` narrows the list to that server (an unknown
//! name lists nothing). A `threadId` must name an existing thread. `environmentId` needs
//! `serverName` and `threadId`; no server here is registered by an environment, so it matches
//! nothing.

use std::collections::BTreeMap;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::McpServerStatusList;
use agentwire_protocol::{
    ListMcpServerStatusParams, ListMcpServerStatusResponse, McpAuthStatus,
    McpServerConnectionStatus, McpServerStatus, ThreadReadParams,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;
use crate::config::McpServerConfig;

/// Serves `mcpServerStatus/list`.
pub(crate) async fn list(
    engine: &Engine,
    context: RequestContext,
    params: ListMcpServerStatusParams,
) -> Result<ListMcpServerStatusResponse, HandlerError> {
    let _ = context;
    let method = McpServerStatusList::NAME;
    let start = match &params.cursor {
        None => 0,
        Some(cursor) => cursor.parse::<usize>().map_err(|_| {
            HandlerError::invalid_params(
                method,
                format!("cursor: {cursor:?} is not a cursor this server gave out"),
            )
        })?,
    };
    if params.environment_id.is_some()
        && (params.server_name.is_none() || params.thread_id.is_none())
    {
        return Err(HandlerError::invalid_params(
            method,
            "environmentId: needs serverName and threadId as well",
        ));
    }
    if let Some(thread_id) = &params.thread_id {
        engine
            .threads
            .read(ThreadReadParams {
                thread_id: thread_id.clone(),
                include_turns: Some(false),
            })
            .map_err(|e| e.into_handler(method))?;
    }
    let config = engine.config_file();
    let selected: Vec<(&String, &McpServerConfig)> = config
        .mcp_servers
        .iter()
        .filter(|(name, _)| params.server_name.as_ref().is_none_or(|n| n == *name))
        .filter(|_| params.environment_id.is_none())
        .collect();
    let total = selected.len();
    if start > total {
        return Err(HandlerError::invalid_params(
            method,
            format!("cursor: {start} is past the end of the list ({total} servers)"),
        ));
    }
    let limit = params.limit.map_or(total, |l| l.max(1) as usize);
    let end = start.saturating_add(limit).min(total);
    let in_thread = params.thread_id.is_some();
    let data = selected[start..end]
        .iter()
        .map(|(name, server)| status(name, server, in_thread))
        .collect();
    Ok(ListMcpServerStatusResponse {
        data,
        next_cursor: (end < total).then(|| end.to_string()),
    })
}

/// What the configuration of server `name` says about it.
fn status(name: &str, server: &McpServerConfig, in_thread: bool) -> McpServerStatus {
    let enabled = server.enabled != Some(false);
    let http_origin = server.url.as_deref().and_then(origin);
    let auth_status = match (&server.url, &server.bearer_token_env_var) {
        (None, _) => McpAuthStatus::Unsupported,
        (Some(_), Some(_)) => McpAuthStatus::BearerToken,
        (Some(_), None) => McpAuthStatus::Unknown,
    };
    let (runtime_status, tools_error) = if enabled {
        (
            in_thread.then_some(McpServerConnectionStatus::NotStarted),
            "not connected: this server does not start MCP servers yet",
        )
    } else {
        (
            Some(McpServerConnectionStatus::Disabled),
            "disabled in config.toml (enabled = false)",
        )
    };
    McpServerStatus {
        name: name.to_owned(),
        plugin_id: None,
        environment_id: None,
        http_origin,
        auth_status,
        runtime_status,
        server_info: None,
        server_capabilities: None,
        tools: BTreeMap::new(),
        tools_error: Some(tools_error.to_owned()),
        tool_list_meta: None,
        resources: Vec::new(),
        resource_templates: Vec::new(),
    }
}

/// `scheme://host[:port]` of `url`, without credentials or path; `None` when it has none.
fn origin(url: &str) -> Option<String> {
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
}
