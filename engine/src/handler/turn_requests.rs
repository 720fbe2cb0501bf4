//! The turn requests (`turn/start|steer|interrupt`): the workspace and MCP rules, the thread
//! claimed for the turn on the blocking pool, then the turn engine.

use std::future::Future;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{TurnInterrupt, TurnStart, TurnSteer};
use agentwire_protocol::{
    TurnInterruptParams, TurnInterruptResponse, TurnStartParams, TurnStartResponse,
    TurnSteerParams, TurnSteerResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;
use crate::pool::{answer, stored};

pub(super) async fn start(
    engine: &Engine,
    context: RequestContext,
    params: TurnStartParams,
) -> Result<TurnStartResponse, HandlerError> {
    crate::workspace_rpc::enforce::<TurnStart>(
        engine,
        params.approval_policy.clone(),
        params
            .sandbox_policy
            .as_ref()
            .and_then(crate::workspace_rpc::mode_of),
        None,
    )
    .await?;
    crate::mcp_rpc::require::<TurnStart>(engine, &context).await?;
    let id = params.thread_id.clone();
    let claim = stored::<TurnStart, _, _>(engine.threads.clone(), move |threads| {
        threads.claim_turn(&id)
    })
    .await?;
    answer::<TurnStart, _>(engine.turns.start(&context, params, claim).await).await
}

pub(super) fn steer(
    engine: &Engine,
    params: TurnSteerParams,
) -> impl Future<Output = Result<TurnSteerResponse, HandlerError>> + Send {
    let turns = engine.turns.clone();
    async move {
        turns
            .steer_anywhere(params)
            .await
            .map_err(|e| e.into_handler(TurnSteer::NAME))
    }
}

pub(super) fn interrupt(
    engine: &Engine,
    params: TurnInterruptParams,
) -> impl Future<Output = Result<TurnInterruptResponse, HandlerError>> + Send {
    answer::<TurnInterrupt, _>(engine.turns.interrupt(params))
}
