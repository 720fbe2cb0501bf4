//! `mcpServer/tool/call`, `mcpServer/resource/read` and `config/mcpServer/reload`.
//!
//! Errors: an unknown or disabled server, or a tool filtered out by `enabled_tools` /
//! `disabled_tools`, is invalid params (-32602) naming the field; a thread that does not exist
//! likewise; a server that fails to start or to answer is an internal error (-32603) with the
//! server's name and the reason. A tool that runs and reports a failure is not an error: its
//! result carries `isError: true`.

use agentwire_mcp::{Caller, McpError, content};
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{McpServerResourceRead, McpServerToolCall};
use agentwire_protocol::{
    McpResourceReadParams, McpResourceReadResponse, McpServerRefreshResponse,
    McpServerToolCallParams, McpServerToolCallResponse, ThreadReadParams,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;

/// `error` as the JSON-RPC error of `method`.
fn handler_error(method: &str, field: &str, error: McpError) -> HandlerError {
    match error {
        McpError::Unknown(_) | McpError::Disabled(_) => {
            HandlerError::invalid_params(method, format!("server: {error}"))
        }
        McpError::ToolDisabled { .. } => {
            HandlerError::invalid_params(method, format!("{field}: {error}"))
        }
        McpError::Startup { .. } | McpError::Call { .. } => {
            HandlerError::internal(format!("{method}: {error}"))
        }
    }
}

fn check_thread(engine: &Engine, method: &str, thread_id: &str) -> Result<(), HandlerError> {
    engine
        .threads
        .read(
            ThreadReadParams::builder()
                .thread_id(thread_id.to_owned())
                .include_turns(false)
                .build(),
        )
        .map(|_| ())
        .map_err(|e| e.into_handler(method))
}

/// Serves `mcpServer/tool/call`.
pub(crate) async fn tool_call(
    engine: &Engine,
    context: RequestContext,
    params: McpServerToolCallParams,
) -> Result<McpServerToolCallResponse, HandlerError> {
    let method = McpServerToolCall::NAME;
    engine.mcp.attach(context.peer.hub());
    check_thread(engine, method, &params.thread_id)?;
    if params.environment_id.is_some() {
        return Err(HandlerError::invalid_params(
            method,
            "environmentId: no MCP server here is registered by an environment",
        ));
    }
    let arguments = match params.arguments {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Object(map)) => Some(map),
        Some(other) => {
            return Err(HandlerError::invalid_params(
                method,
                format!("arguments: must be a JSON object, not {other}"),
            ));
        }
    };
    let slot = engine
        .mcp
        .slot(&params.server)
        .map_err(|e| handler_error(method, "tool", e))?;
    let caller = Caller {
        peer: context.peer.clone(),
        thread_id: params.thread_id.clone(),
        turn_id: None,
    };
    let result = slot
        .call_tool(&params.tool, arguments, params._meta, caller, &mut |_| {})
        .await
        .map_err(|e| handler_error(method, "tool", e))?;
    Ok(content::call_response(&result))
}

/// Serves `mcpServer/resource/read`.
pub(crate) async fn resource_read(
    engine: &Engine,
    context: RequestContext,
    params: McpResourceReadParams,
) -> Result<McpResourceReadResponse, HandlerError> {
    let method = McpServerResourceRead::NAME;
    engine.mcp.attach(context.peer.hub());
    if let Some(thread_id) = &params.thread_id {
        check_thread(engine, method, thread_id)?;
    }
    if params.environment_id.is_some() || params.target.is_some() || params.connector_id.is_some() {
        return Err(HandlerError::invalid_params(
            method,
            "target: hosted apps, connectors and environments are not served here; name a \
             configured MCP server",
        ));
    }
    let slot = engine
        .mcp
        .slot(&params.server)
        .map_err(|e| handler_error(method, "uri", e))?;
    let caller = Caller {
        peer: context.peer.clone(),
        thread_id: params.thread_id.clone().unwrap_or_default(),
        turn_id: None,
    };
    let result = slot
        .read_resource(&params.uri, caller)
        .await
        .map_err(|e| handler_error(method, "uri", e))?;
    Ok(McpResourceReadResponse::builder()
        .contents(content::contents(&result))
        .build())
}

/// Serves `config/mcpServer/reload`: servers whose configuration changed or that were removed
/// are stopped (the next use starts them as configured now).
pub(crate) async fn reload(
    engine: &Engine,
    context: RequestContext,
) -> Result<McpServerRefreshResponse, HandlerError> {
    engine.mcp.attach(context.peer.hub());
    engine.config_store.invalidate();
    engine.mcp.reload();
    Ok(McpServerRefreshResponse::builder().build())
}

/// Fails request `M` when a required MCP server (`required = true`) cannot start: the error
/// names the server and the reason (starting the enabled servers on the way).
pub(crate) async fn require<M: Method>(
    engine: &Engine,
    context: &RequestContext,
) -> Result<(), HandlerError> {
    engine.mcp.attach(context.peer.hub());
    engine
        .mcp
        .check_required()
        .await
        .map_err(|error| HandlerError::internal(format!("{}: required {error}", M::NAME)))
}
