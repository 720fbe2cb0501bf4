//! `mcpServerStatus/list`: the MCP servers configured under `[mcp_servers.<name>]` in
//! `config.toml`, in their real state (see [`agentwire_mcp::status`]).
//!
//! Listing is a use: every enabled server listed is started first (concurrently) if it is not
//! running, so its tools, resources and `serverInfo` can be reported; one that fails to start
//! is reported `failed` with the reason in `toolsError`.
//!
//! Servers are listed by name, in byte order. Pages work as in the reference: `cursor` is the
//! position of the first server to list (the `nextCursor` of the previous page), `limit`
//! defaults to all remaining servers. `serverName` narrows the list to that server (an unknown
//! name lists nothing). A `threadId` must name an existing thread. `environmentId` needs
//! `serverName` and `threadId`; no server here is registered by an environment, so it matches
//! nothing.

use agentwire_config::McpServerConfig;
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::McpServerStatusList;
use agentwire_protocol::{
    ListMcpServerStatusParams, ListMcpServerStatusResponse, McpServerStatusDetail, ThreadReadParams,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;

/// Serves `mcpServerStatus/list`.
pub(crate) async fn list(
    engine: &Engine,
    context: RequestContext,
    params: ListMcpServerStatusParams,
) -> Result<ListMcpServerStatusResponse, HandlerError> {
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
            .read(
                ThreadReadParams::builder()
                    .thread_id(thread_id.clone())
                    .include_turns(false)
                    .build(),
            )
            .map_err(|e| e.into_handler(method))?;
    }
    engine.mcp.attach(context.peer.hub());
    let configured = engine.mcp.configured();
    let selected: Vec<(&String, &McpServerConfig)> = configured
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
    let page = &selected[start..end];
    let slots: Vec<Option<std::sync::Arc<agentwire_mcp::slot::Slot>>> = page
        .iter()
        .map(|(name, config)| {
            (config.enabled != Some(false))
                .then(|| engine.mcp.slot(name).ok())
                .flatten()
        })
        .collect();
    // Start what is not running, all at once; failures are reported per server below.
    futures_util::future::join_all(slots.iter().flatten().map(|slot| async move {
        if slot.connection().await.is_ok() {
            slot.refresh_tools().await;
        }
    }))
    .await;
    let resources = params.detail != Some(McpServerStatusDetail::ToolsAndAuthOnly);
    let data = page
        .iter()
        .zip(&slots)
        .map(|((name, config), slot)| {
            agentwire_mcp::status::of(name, config, slot.as_ref(), resources, engine.mcp.home())
        })
        .collect();
    Ok(ListMcpServerStatusResponse::builder()
        .data(data)
        .maybe_next_cursor((end < total).then(|| end.to_string()))
        .build())
}
