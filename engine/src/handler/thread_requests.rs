//! The thread lifecycle requests (`thread/start|resume|fork|read|list|archive|unarchive|delete`,
//! names, goals, read state, items and timeline): each checks what the workspace and MCP rules
//! ask, runs the store's work on the blocking pool ([`crate::pool`]) and decorates the thread
//! with its organisation (projects, sections) and the experimental members the client asked
//! for.

use std::future::{Future, ready};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    ThreadArchive, ThreadDelete, ThreadFork, ThreadGoalClear, ThreadGoalGet, ThreadGoalSet,
    ThreadInjectItems, ThreadItemsRead, ThreadList, ThreadPrepareApprovedPlan, ThreadRead,
    ThreadReadStateUpdate, ThreadResume, ThreadSetName, ThreadStart, ThreadTimelineList,
    ThreadUnarchive,
};
use agentwire_protocol::{
    ThreadArchiveParams, ThreadArchiveResponse, ThreadDeleteParams, ThreadDeleteResponse,
    ThreadForkParams, ThreadForkResponse, ThreadGoalClearParams, ThreadGoalClearResponse,
    ThreadGoalGetParams, ThreadGoalGetResponse, ThreadGoalSetParams, ThreadGoalSetResponse,
    ThreadInjectItemsParams, ThreadInjectItemsResponse, ThreadItemsReadParams,
    ThreadItemsReadResponse, ThreadListParams, ThreadListResponse, ThreadLoadedListParams,
    ThreadLoadedListResponse, ThreadPrepareApprovedPlanParams, ThreadPrepareApprovedPlanResponse,
    ThreadReadParams, ThreadReadResponse, ThreadReadStateUpdateParams,
    ThreadReadStateUpdateResponse, ThreadResumeParams, ThreadResumeResponse, ThreadSetNameParams,
    ThreadSetNameResponse, ThreadStartParams, ThreadStartResponse, ThreadTimelineListParams,
    ThreadTimelineListResponse, ThreadUnarchiveParams, ThreadUnarchiveResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;
use crate::pool::{blocking, stored};

pub(super) async fn start(
    engine: &Engine,
    context: RequestContext,
    params: ThreadStartParams,
) -> Result<ThreadStartResponse, HandlerError> {
    crate::workspace_rpc::enforce::<ThreadStart>(
        engine,
        params.settings.approval_policy.clone(),
        params.settings.sandbox,
        params.settings.model_provider.clone(),
    )
    .await?;
    crate::mcp_rpc::require::<ThreadStart>(engine, &context).await?;
    let peer = context.peer.clone();
    let mut started =
        stored::<ThreadStart, _, _>(engine.threads.clone(), move |t| t.start(&context, params))
            .await?;
    crate::thread_extras::decorate(&peer, std::slice::from_mut(&mut started.thread));
    Ok(started)
}

pub(super) async fn resume(
    engine: &Engine,
    context: RequestContext,
    params: ThreadResumeParams,
) -> Result<ThreadResumeResponse, HandlerError> {
    crate::workspace_rpc::enforce::<ThreadResume>(
        engine,
        params.settings.approval_policy.clone(),
        params.settings.sandbox,
        params.settings.model_provider.clone(),
    )
    .await?;
    let peer = context.peer.clone();
    let mut resumed =
        stored::<ThreadResume, _, _>(engine.threads.clone(), move |t| t.resume(&context, params))
            .await?;
    engine
        .organisation
        .decorate(std::slice::from_mut(&mut resumed.thread));
    crate::thread_extras::decorate(&peer, std::slice::from_mut(&mut resumed.thread));
    Ok(resumed)
}

pub(super) async fn fork(
    engine: &Engine,
    context: RequestContext,
    params: ThreadForkParams,
) -> Result<ThreadForkResponse, HandlerError> {
    crate::workspace_rpc::enforce::<ThreadFork>(
        engine,
        params.settings.approval_policy.clone(),
        params.settings.sandbox,
        params.settings.model_provider.clone(),
    )
    .await?;
    let peer = context.peer.clone();
    let mut forked =
        stored::<ThreadFork, _, _>(engine.threads.clone(), move |t| t.fork(&context, params))
            .await?;
    crate::thread_extras::decorate(&peer, std::slice::from_mut(&mut forked.thread));
    Ok(forked)
}

pub(super) fn read(
    engine: &Engine,
    context: RequestContext,
    params: ThreadReadParams,
) -> impl Future<Output = Result<ThreadReadResponse, HandlerError>> + Send {
    let organisation = engine.organisation.clone();
    let read = stored::<ThreadRead, _, _>(engine.threads.clone(), move |t| t.read(params));
    async move {
        let mut read = read.await?;
        organisation.decorate(std::slice::from_mut(&mut read.thread));
        crate::thread_extras::decorate(&context.peer, std::slice::from_mut(&mut read.thread));
        Ok(read)
    }
}

pub(super) fn list(
    engine: &Engine,
    context: RequestContext,
    params: ThreadListParams,
) -> impl Future<Output = Result<ThreadListResponse, HandlerError>> + Send {
    // A page kept in memory is answered in place; any other goes to the blocking pool. A
    // listing of a section is resolved to the section's threads first.
    let by_section = crate::organisation::sections::by_section(&params);
    let kept = (!by_section)
        .then(|| engine.threads.list_kept(&params))
        .flatten();
    let threads = engine.threads.clone();
    let extras_threads = engine.threads.clone();
    let organisation = engine.organisation.clone();
    let sectioned =
        by_section.then(|| crate::organisation::sections::list_threads(engine, params.clone()));
    async move {
        let mut listed = match (kept, sectioned) {
            (_, Some(sectioned)) => sectioned.await?,
            (Some(answer), None) => answer.map_err(|e| e.into_handler(ThreadList::NAME))?,
            (None, None) => stored::<ThreadList, _, _>(threads, move |t| t.list(params)).await?,
        };
        organisation.decorate(&mut listed.data);
        crate::thread_extras::decorate_list(&context.peer, &extras_threads, &mut listed).await;
        Ok(listed)
    }
}

pub(super) fn loaded_list(
    engine: &Engine,
    params: ThreadLoadedListParams,
) -> impl Future<Output = Result<ThreadLoadedListResponse, HandlerError>> + Send {
    ready(Ok(engine.threads.loaded_list(params)))
}

pub(super) fn archive(
    engine: &Engine,
    context: RequestContext,
    params: ThreadArchiveParams,
) -> impl Future<Output = Result<ThreadArchiveResponse, HandlerError>> + Send {
    stored::<ThreadArchive, _, _>(engine.threads.clone(), move |t| t.archive(&context, params))
}

pub(super) fn unarchive(
    engine: &Engine,
    context: RequestContext,
    params: ThreadUnarchiveParams,
) -> impl Future<Output = Result<ThreadUnarchiveResponse, HandlerError>> + Send {
    let organisation = engine.organisation.clone();
    let unarchived = stored::<ThreadUnarchive, _, _>(engine.threads.clone(), move |t| {
        t.unarchive(&context, params)
    });
    async move {
        let mut unarchived = unarchived.await?;
        organisation.decorate(std::slice::from_mut(&mut unarchived.thread));
        Ok(unarchived)
    }
}

pub(super) fn set_name(
    engine: &Engine,
    context: RequestContext,
    params: ThreadSetNameParams,
) -> impl Future<Output = Result<ThreadSetNameResponse, HandlerError>> + Send {
    stored::<ThreadSetName, _, _>(engine.threads.clone(), move |t| {
        t.set_name(&context, params)
    })
}

pub(super) fn delete(
    engine: &Engine,
    context: RequestContext,
    params: ThreadDeleteParams,
) -> impl Future<Output = Result<ThreadDeleteResponse, HandlerError>> + Send {
    let organisation = engine.organisation.clone();
    let id = params.thread_id.clone();
    let deleted = crate::thread_surface::delete(engine, context, params);
    async move {
        let deleted = deleted.await?;
        // The thread is gone: take it out of projects, sections and attachment owners.
        blocking::<ThreadDelete, _, _>(move || {
            organisation.forget(&id);
            Ok(())
        })
        .await?;
        Ok(deleted)
    }
}

pub(super) fn prepare_approved_plan(
    engine: &Engine,
    params: ThreadPrepareApprovedPlanParams,
) -> impl Future<Output = Result<ThreadPrepareApprovedPlanResponse, HandlerError>> + Send {
    stored::<ThreadPrepareApprovedPlan, _, _>(engine.threads.clone(), move |t| {
        t.prepare_approved_plan(params)
    })
}

pub(super) fn goal_get(
    engine: &Engine,
    params: ThreadGoalGetParams,
) -> impl Future<Output = Result<ThreadGoalGetResponse, HandlerError>> + Send {
    stored::<ThreadGoalGet, _, _>(engine.threads.clone(), move |t| t.goal_get(params))
}

pub(super) fn goal_set(
    engine: &Engine,
    context: RequestContext,
    params: ThreadGoalSetParams,
) -> impl Future<Output = Result<ThreadGoalSetResponse, HandlerError>> + Send {
    stored::<ThreadGoalSet, _, _>(engine.threads.clone(), move |t| {
        t.goal_set(&context, params)
    })
}

pub(super) fn goal_clear(
    engine: &Engine,
    context: RequestContext,
    params: ThreadGoalClearParams,
) -> impl Future<Output = Result<ThreadGoalClearResponse, HandlerError>> + Send {
    stored::<ThreadGoalClear, _, _>(engine.threads.clone(), move |t| {
        t.goal_clear(&context, params)
    })
}

pub(super) fn read_state_update(
    engine: &Engine,
    context: RequestContext,
    params: ThreadReadStateUpdateParams,
) -> impl Future<Output = Result<ThreadReadStateUpdateResponse, HandlerError>> + Send {
    stored::<ThreadReadStateUpdate, _, _>(engine.threads.clone(), move |t| {
        t.read_state_update(&context, params)
    })
}

pub(super) fn items_read(
    engine: &Engine,
    params: ThreadItemsReadParams,
) -> impl Future<Output = Result<ThreadItemsReadResponse, HandlerError>> + Send {
    stored::<ThreadItemsRead, _, _>(engine.threads.clone(), move |t| t.items_read(params))
}

pub(super) fn timeline_list(
    engine: &Engine,
    params: ThreadTimelineListParams,
) -> impl Future<Output = Result<ThreadTimelineListResponse, HandlerError>> + Send {
    stored::<ThreadTimelineList, _, _>(engine.threads.clone(), move |t| t.timeline_list(params))
}

pub(super) fn inject_items(
    engine: &Engine,
    params: ThreadInjectItemsParams,
) -> impl Future<Output = Result<ThreadInjectItemsResponse, HandlerError>> + Send {
    stored::<ThreadInjectItems, _, _>(engine.threads.clone(), move |t| t.inject_items(params))
}
