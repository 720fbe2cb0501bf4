//! `command/exec`: one command outside any thread, under the sandbox policy it is given.

use agentwire_protocol::{CommandExecParams, CommandExecResponse};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;

/// Serves `command/exec`.
pub(crate) async fn exec(
    engine: &Engine,
    context: RequestContext,
    params: CommandExecParams,
) -> Result<CommandExecResponse, HandlerError> {
    let _ = (engine, context, params);
    Err(HandlerError::method_not_found("command/exec"))
}
