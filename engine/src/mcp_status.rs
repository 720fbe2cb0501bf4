//! `mcpServerStatus/list`: the configured MCP servers and their state.

use agentwire_protocol::{ListMcpServerStatusParams, ListMcpServerStatusResponse};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;

/// Serves `mcpServerStatus/list`.
pub(crate) async fn list(
    engine: &Engine,
    context: RequestContext,
    params: ListMcpServerStatusParams,
) -> Result<ListMcpServerStatusResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("mcpServerStatus/list"))
}
