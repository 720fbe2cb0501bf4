//! The thread methods added in 0.3.0, as the handler calls them: `thread/delete`,
//! `thread/unsubscribe`, `thread/metadata/update`, `thread/turns/list`, `thread/items/list`,
//! `thread/revert` and `thread/shellCommand`. Each one that must first know (or change)
//! whether a turn runs asks the turns; the rest is in `threads` (`admin`, `history`) and
//! `turns::shell`.

use std::future::{Future, ready};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    ThreadCompactStart, ThreadDelete, ThreadItemsList, ThreadMetadataUpdate, ThreadRevert,
    ThreadShellCommand, ThreadTurnsList, ThreadUnsubscribe,
};
use agentwire_protocol::{
    ThreadCompactStartParams, ThreadCompactStartResponse, ThreadDeleteParams, ThreadDeleteResponse,
    ThreadItemsListParams, ThreadItemsListResponse, ThreadMetadataUpdateParams,
    ThreadMetadataUpdateResponse, ThreadRevertParams, ThreadRevertResponse,
    ThreadShellCommandParams, ThreadShellCommandResponse, ThreadTurnsListParams,
    ThreadTurnsListResponse, ThreadUnsubscribeParams, ThreadUnsubscribeResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};
use agentwire_store::error::ThreadError;

use crate::Engine;
use crate::pool::stored;

fn answer<M: Method, T: Send>(
    result: Result<T, ThreadError>,
) -> impl Future<Output = Result<T, HandlerError>> + Send {
    ready(result.map_err(|e| e.into_handler(M::NAME)))
}

/// `thread/delete`: stops (and waits for) the turn running on the thread, then deletes it.
pub(crate) fn delete(
    engine: &Engine,
    context: RequestContext,
    params: ThreadDeleteParams,
) -> impl Future<Output = Result<ThreadDeleteResponse, HandlerError>> + Send + use<> {
    let (threads, turns) = (engine.threads.clone(), engine.turns.clone());
    async move {
        turns.stop(&params.thread_id).await;
        stored::<ThreadDelete, _, _>(threads, move |t| t.delete(&context, params)).await
    }
}

/// `thread/unsubscribe`.
pub(crate) fn unsubscribe(
    engine: &Engine,
    context: RequestContext,
    params: ThreadUnsubscribeParams,
) -> impl Future<Output = Result<ThreadUnsubscribeResponse, HandlerError>> + Send + use<> {
    let busy = engine.turns.is_running(&params.thread_id);
    // An id that is not loaded is looked up in the store.
    stored::<ThreadUnsubscribe, _, _>(engine.threads.clone(), move |threads| {
        threads.unsubscribe(&context, params, busy)
    })
}

/// `thread/metadata/update`.
pub(crate) fn metadata_update(
    engine: &Engine,
    _context: RequestContext,
    params: ThreadMetadataUpdateParams,
) -> impl Future<Output = Result<ThreadMetadataUpdateResponse, HandlerError>> + Send + use<> {
    stored::<ThreadMetadataUpdate, _, _>(engine.threads.clone(), move |t| t.metadata_update(params))
}

/// `thread/turns/list`.
pub(crate) fn turns_list(
    engine: &Engine,
    _context: RequestContext,
    params: ThreadTurnsListParams,
) -> impl Future<Output = Result<ThreadTurnsListResponse, HandlerError>> + Send + use<> {
    stored::<ThreadTurnsList, _, _>(engine.threads.clone(), move |t| t.turns_list(params))
}

/// `thread/items/list`.
pub(crate) fn items_list(
    engine: &Engine,
    _context: RequestContext,
    params: ThreadItemsListParams,
) -> impl Future<Output = Result<ThreadItemsListResponse, HandlerError>> + Send + use<> {
    stored::<ThreadItemsList, _, _>(engine.threads.clone(), move |t| t.items_list(params))
}

/// `thread/revert`: refused while a turn runs on the thread.
pub(crate) fn revert(
    engine: &Engine,
    context: RequestContext,
    params: ThreadRevertParams,
) -> impl Future<Output = Result<ThreadRevertResponse, HandlerError>> + Send + use<> {
    let running = engine.turns.is_running(&params.thread_id);
    stored::<ThreadRevert, _, _>(engine.threads.clone(), move |threads| {
        if running {
            return Err(ThreadError::Conflict(format!(
                "thread {} is running a turn; interrupt it (or wait for it) before reverting",
                params.thread_id
            )));
        }
        threads.revert(&context, params)
    })
}

/// `thread/shellCommand`.
pub(crate) fn shell_command(
    engine: &Engine,
    context: RequestContext,
    params: ThreadShellCommandParams,
) -> impl Future<Output = Result<ThreadShellCommandResponse, HandlerError>> + Send + use<> {
    let (threads, turns) = (engine.threads.clone(), engine.turns.clone());
    async move {
        let id = params.thread_id.clone();
        let claim = stored::<ThreadShellCommand, _, _>(threads, move |t| t.claim_turn(&id)).await?;
        answer::<ThreadShellCommand, _>(turns.shell_command(&context, params, claim)).await
    }
}

/// `thread/compact/start`.
pub(crate) fn compact_start(
    engine: &Engine,
    context: RequestContext,
    params: ThreadCompactStartParams,
) -> impl Future<Output = Result<ThreadCompactStartResponse, HandlerError>> + Send + use<> {
    let (threads, turns) = (engine.threads.clone(), engine.turns.clone());
    async move {
        let id = params.thread_id.clone();
        let claim = stored::<ThreadCompactStart, _, _>(threads, move |t| t.claim_turn(&id)).await?;
        answer::<ThreadCompactStart, _>(turns.compact_start(&context, params, claim)).await
    }
}
