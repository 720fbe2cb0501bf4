//! A thread's queued user input (`thread/queue/add|list|update|delete|reorder|start`,
//! broadcasting `thread/queue/changed` after every change).
//!
//! The queue is a rollout record of the thread, so it survives a restart. While the thread is
//! loaded, nothing runs on it and its last turn completed normally, the server takes the first
//! queued input and starts a turn with it, exactly as `turn/start` would (the input's
//! `clientUserMessageId` becomes the user message's `clientId`); when that turn completes, the
//! next one follows. A turn that was interrupted or failed stops the queue there: it moves on
//! again once `thread/queue/start` starts an input by hand (and so does the queue of a thread
//! loaded again after a restart). Each thread has at most one such drain at a time
//! ([`Drains`]); it waits on the running turn's end, never on a timer.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use agentwire_protocol::methods::{
    ThreadQueueAdd, ThreadQueueChanged, ThreadQueueDelete, ThreadQueueList, ThreadQueueReorder,
    ThreadQueueStart, ThreadQueueUpdate,
};
use agentwire_protocol::{
    QueuedSubmission, ThreadQueueAddParams, ThreadQueueAddResponse, ThreadQueueChangedNotification,
    ThreadQueueDeleteParams, ThreadQueueDeleteResponse, ThreadQueueListParams,
    ThreadQueueListResponse, ThreadQueueReorderParams, ThreadQueueReorderResponse,
    ThreadQueueStartParams, ThreadQueueStartResponse, ThreadQueueUpdateParams,
    ThreadQueueUpdateResponse, TurnStartParams, UserInput,
};
use agentwire_runtime::{Handler, HandlerError, Hub, RequestContext};
use agentwire_store::error::ThreadError;
use agentwire_store::meta::new_id;
use agentwire_store::organised::Organised;
use agentwire_store::record::RolloutRecord;
use agentwire_support::lock;

use super::{Organisation, page_size, run};
use crate::Engine;
use crate::threads::Threads;
use crate::turns::Turns;

/// Most inputs a thread's queue holds.
const MAX_QUEUE: usize = 1000;

/// The threads whose queue a drain is working through. A thread maps to whether more work
/// came in while its drain ran (so it looks again before it stops).
#[derive(Debug, Default)]
pub(crate) struct Drains(Mutex<HashMap<String, bool>>);

impl Drains {
    /// Whether the caller is to drain thread `id`: `false` when a drain runs already (it is
    /// told to look again).
    fn enter(&self, id: &str) -> bool {
        let mut drains = lock(&self.0);
        match drains.get_mut(id) {
            Some(again) => {
                *again = true;
                false
            }
            None => {
                drains.insert(id.to_owned(), false);
                true
            }
        }
    }

    /// Called by a drain that found nothing more to do: `true` when work came in meanwhile
    /// (it goes on), else it is done.
    fn again(&self, id: &str) -> bool {
        let mut drains = lock(&self.0);
        match drains.get_mut(id) {
            Some(again) if *again => {
                *again = false;
                true
            }
            _ => {
                drains.remove(id);
                false
            }
        }
    }
}

/// Sends `thread/queue/changed` for `thread_id`.
fn changed(hub: &Hub, thread_id: &str) {
    hub.broadcast::<ThreadQueueChanged>(
        &ThreadQueueChangedNotification::builder()
            .thread_id(thread_id.to_owned())
            .build(),
    );
}

/// Sends `thread/queue/changed` once the request is answered.
fn changed_after(context: &RequestContext, thread_id: String) {
    let hub = context.peer.hub().clone();
    context.after_response(move || changed(&hub, &thread_id));
}

/// Refuses empty input.
fn check_input(input: &[UserInput]) -> Result<(), ThreadError> {
    if input.is_empty() {
        return Err(ThreadError::InvalidParams(
            "input: must not be empty".to_owned(),
        ));
    }
    Ok(())
}

/// The record of `organised`'s queue as it now is.
fn record(organised: &Organised) -> Option<RolloutRecord> {
    Some(RolloutRecord::Queue {
        queue: organised.queue.clone(),
    })
}

/// The queued input `id` of `organised`, and where it is.
fn find<'a>(
    organised: &'a mut Organised,
    id: &str,
) -> Result<(usize, &'a mut QueuedSubmission), ThreadError> {
    organised
        .queue
        .iter_mut()
        .enumerate()
        .find(|(_, q)| q.id == id)
        .ok_or_else(|| ThreadError::Conflict(format!("queuedSubmissionId: no queued input {id}")))
}

/// Takes input `which` (the first when `None`) out of thread `id`'s queue, with the place it
/// had.
fn take(
    threads: &Threads,
    id: &str,
    which: Option<&str>,
) -> Result<Option<(QueuedSubmission, usize)>, ThreadError> {
    threads.organise(id, |organised| {
        let at = match which {
            None if organised.queue.is_empty() => return Ok((None, None)),
            None => 0,
            Some(which) => find(organised, which)?.0,
        };
        let taken = organised.queue.remove(at);
        Ok((Some((taken, at)), record(organised)))
    })
}

/// Puts `item` back in thread `id`'s queue at `at` (a turn could not be started with it).
fn restore(threads: &Threads, id: &str, item: QueuedSubmission, at: usize) {
    let restored = threads.organise(id, |organised| {
        let at = at.min(organised.queue.len());
        organised.queue.insert(at, item);
        Ok(((), record(organised)))
    });
    if let Err(error) = restored {
        tracing::warn!(thread = id, %error, "queued input lost: it could not be put back");
    }
}

/// `turn/start` params for `item` on thread `id`.
fn turn_params(id: &str, item: &QueuedSubmission) -> TurnStartParams {
    TurnStartParams::builder()
        .thread_id(id.to_owned())
        .input(item.input.clone())
        .client_user_message_id(item.client_user_message_id.clone())
        .build()
}

/// `thread/queue/add`: broadcasts `thread/queue/changed`; starts the input at once when the
/// thread is ready for it.
pub(crate) async fn add(
    engine: &Engine,
    context: RequestContext,
    params: ThreadQueueAddParams,
) -> Result<ThreadQueueAddResponse, HandlerError> {
    let threads = engine.threads.clone();
    let id = params.thread_id.clone();
    let queued = run::<ThreadQueueAdd, _, _>(move || {
        check_input(&params.input)?;
        let item = QueuedSubmission::builder()
            .client_user_message_id(params.client_user_message_id)
            .id(new_id())
            .input(params.input)
            .maybe_responsesapi_client_metadata(params.responsesapi_client_metadata)
            .build();
        threads.organise(&params.thread_id, |organised| {
            if organised.queue.len() >= MAX_QUEUE {
                return Err(ThreadError::Conflict(format!(
                    "thread {} already has {MAX_QUEUE} queued inputs",
                    params.thread_id
                )));
            }
            organised.queue.push(item.clone());
            Ok((item, record(organised)))
        })
    })
    .await?;
    changed_after(&context, id.clone());
    kick(engine, &context, id);
    Ok(ThreadQueueAddResponse::builder()
        .queued_submission(queued)
        .build())
}

/// `thread/queue/list`: the queue, next first, paged by position.
pub(crate) async fn list(
    engine: &Engine,
    params: ThreadQueueListParams,
) -> Result<ThreadQueueListResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ThreadQueueList, _, _>(move || {
        let organised = threads.organised(&params.thread_id)?;
        organisation.reconcile(&params.thread_id, &organised);
        let start = match params.cursor.as_deref() {
            None => 0,
            Some(cursor) => cursor.parse::<usize>().map_err(|_| {
                ThreadError::InvalidParams(format!(
                    "cursor: {cursor:?} is not a position in the queue"
                ))
            })?,
        };
        let size = page_size(params.limit);
        let total = organised.queue.len();
        let data: Vec<_> = organised.queue.into_iter().skip(start).take(size).collect();
        let next = (start.saturating_add(size) < total).then(|| (start + size).to_string());
        Ok(ThreadQueueListResponse::builder()
            .data(data)
            .maybe_next_cursor(next)
            .build())
    })
    .await
}

/// `thread/queue/update`: broadcasts `thread/queue/changed`.
pub(crate) async fn update(
    engine: &Engine,
    context: RequestContext,
    params: ThreadQueueUpdateParams,
) -> Result<ThreadQueueUpdateResponse, HandlerError> {
    let threads = engine.threads.clone();
    let id = params.thread_id.clone();
    let updated = run::<ThreadQueueUpdate, _, _>(move || {
        check_input(&params.input)?;
        threads.organise(&params.thread_id, |organised| {
            let (_, item) = find(organised, &params.queued_submission_id)?;
            item.input = params.input;
            // Metadata is replaced only by a non-empty map.
            if let Some(metadata) = params
                .responsesapi_client_metadata
                .filter(|m: &BTreeMap<String, String>| !m.is_empty())
            {
                item.responsesapi_client_metadata = Some(metadata);
            }
            let item = item.clone();
            Ok((item, record(organised)))
        })
    })
    .await?;
    changed_after(&context, id);
    Ok(ThreadQueueUpdateResponse::builder()
        .queued_submission(updated)
        .build())
}

/// `thread/queue/delete`: broadcasts `thread/queue/changed` when the input was queued.
pub(crate) async fn delete(
    engine: &Engine,
    context: RequestContext,
    params: ThreadQueueDeleteParams,
) -> Result<ThreadQueueDeleteResponse, HandlerError> {
    let threads = engine.threads.clone();
    let id = params.thread_id.clone();
    let deleted = run::<ThreadQueueDelete, _, _>(move || {
        threads.organise(&params.thread_id, |organised| {
            let before = organised.queue.len();
            organised
                .queue
                .retain(|q| q.id != params.queued_submission_id);
            if organised.queue.len() == before {
                return Ok((false, None));
            }
            Ok((true, record(organised)))
        })
    })
    .await?;
    if deleted {
        changed_after(&context, id);
    }
    Ok(ThreadQueueDeleteResponse::builder()
        .deleted(deleted)
        .build())
}

/// `thread/queue/reorder`: broadcasts `thread/queue/changed`.
pub(crate) async fn reorder(
    engine: &Engine,
    context: RequestContext,
    params: ThreadQueueReorderParams,
) -> Result<ThreadQueueReorderResponse, HandlerError> {
    let threads = engine.threads.clone();
    let id = params.thread_id.clone();
    run::<ThreadQueueReorder, _, _>(move || {
        threads.organise(&params.thread_id, |organised| {
            let mut by_id: HashMap<String, QueuedSubmission> = organised
                .queue
                .drain(..)
                .map(|q| (q.id.clone(), q))
                .collect();
            let mut order = Vec::with_capacity(by_id.len());
            for id in &params.queued_submission_ids {
                match by_id.remove(id) {
                    Some(item) => order.push(item),
                    None => {
                        return Err(ThreadError::InvalidParams(format!(
                            "queuedSubmissionIds: {id} is not queued, or is listed twice; \
                             name every queued input exactly once"
                        )));
                    }
                }
            }
            if let Some(left) = by_id.keys().next() {
                return Err(ThreadError::InvalidParams(format!(
                    "queuedSubmissionIds: {left} is left out; name every queued input exactly \
                     once"
                )));
            }
            organised.queue = order;
            Ok(((), record(organised)))
        })
    })
    .await?;
    changed_after(&context, id);
    Ok(ThreadQueueReorderResponse::builder().build())
}

/// `thread/queue/start`: takes the input out of the queue and starts a turn with it through
/// `turn/start` (so with that request's checks); broadcasts `thread/queue/changed`. The input
/// goes back to its place when the turn cannot start. Once it runs, the rest of the queue
/// follows it.
pub(crate) async fn start(
    engine: &Engine,
    context: RequestContext,
    params: ThreadQueueStartParams,
) -> Result<ThreadQueueStartResponse, HandlerError> {
    let id = params.thread_id.clone();
    if engine.turns.is_running(&id) {
        return Err(ThreadError::Conflict(format!(
            "thread {id} is running a turn; its queue moves on when the turn completes"
        ))
        .into_handler(<ThreadQueueStart as agentwire_protocol::Method>::NAME));
    }
    let threads = engine.threads.clone();
    let taken = run::<ThreadQueueStart, _, _>(move || {
        take(
            &threads,
            &params.thread_id,
            params.queued_submission_id.as_deref(),
        )?
        .ok_or_else(|| {
            ThreadError::Conflict(format!("thread {} has no queued input", params.thread_id))
        })
    })
    .await?;
    let (item, at) = taken;
    let hub = context.peer.hub().clone();
    changed(&hub, &id);
    match engine
        .turn_start(context.clone(), turn_params(&id, &item))
        .await
    {
        Ok(started) => {
            kick(engine, &context, id);
            Ok(ThreadQueueStartResponse::builder()
                .turn(started.turn)
                .build())
        }
        Err(error) => {
            let threads = engine.threads.clone();
            let thread_id = id.clone();
            let _ = crate::pool::blocking::<ThreadQueueStart, _, _>(move || {
                restore(&threads, &thread_id, item, at);
                Ok(())
            })
            .await;
            changed(&hub, &id);
            Err(error)
        }
    }
}

/// What a drain needs of the engine.
#[derive(Debug, Clone)]
struct Driver {
    threads: Arc<Threads>,
    turns: Arc<Turns>,
    organisation: Arc<Organisation>,
}

/// Makes sure thread `id`'s queue moves on: starts a drain (after `context`'s answer is out)
/// unless one runs already. The turns it starts report to `context`'s connection as well as
/// to the thread's followers.
pub(crate) fn kick(engine: &Engine, context: &RequestContext, id: String) {
    let driver = Driver {
        threads: engine.threads.clone(),
        turns: engine.turns.clone(),
        organisation: engine.organisation.clone(),
    };
    if !driver.organisation.drains.enter(&id) {
        return;
    }
    let context = context.clone();
    let hub = context.peer.hub().clone();
    // Cleaned up after a panic: the thread's drain is left (as when it ends), so that the
    // next queued input starts a new one.
    let cleanup = {
        let (organisation, id) = (driver.organisation.clone(), id.clone());
        move || while organisation.drains.again(&id) {}
    };
    let work = async move {
        context.answered.wait().await;
        loop {
            driver.drain(&context, &id).await;
            if !driver.organisation.drains.again(&id) {
                return;
            }
        }
    };
    agentwire_support::supervised::background(&hub, "queue drain", work, cleanup);
}

impl Driver {
    /// Starts thread `id`'s queued inputs one turn after the other while it is ready for them.
    async fn drain(&self, context: &RequestContext, id: &str) {
        loop {
            if let Some(mut end) = self.turns.watch_end(id) {
                // Fails once the turn has ended and its last notification is out.
                while end.changed().await.is_ok() {}
                continue;
            }
            if !self.threads.ready_for_queue(id) {
                return;
            }
            match self.start_next(context, id).await {
                Ok(true) => continue,
                Ok(false) => return,
                Err(error) => {
                    tracing::warn!(thread = id, %error, "queued input not started");
                    return;
                }
            }
        }
    }

    /// Starts a turn with the first queued input of thread `id`; `false` when none is queued.
    async fn start_next(&self, context: &RequestContext, id: &str) -> Result<bool, ThreadError> {
        let threads = self.threads.clone();
        let thread_id = id.to_owned();
        let taken = blocking(move || {
            let Some((item, at)) = take(&threads, &thread_id, None)? else {
                return Ok(None);
            };
            match threads.claim_turn(&thread_id) {
                Ok(claim) => Ok(Some((item, at, Ok(claim)))),
                Err(error) => Ok(Some((item, at, Err(error)))),
            }
        })
        .await?;
        let Some((item, at, claim)) = taken else {
            return Ok(false);
        };
        let hub = context.peer.hub().clone();
        changed(&hub, id);
        let started = match claim {
            Ok(claim) => {
                let params = turn_params(id, &item);
                self.turns.start(context, params, claim).await
            }
            Err(error) => Err(error),
        };
        match started {
            Ok(_) => Ok(true),
            Err(error) => {
                let threads = self.threads.clone();
                let thread_id = id.to_owned();
                blocking(move || {
                    restore(&threads, &thread_id, item, at);
                    Ok(())
                })
                .await?;
                changed(&hub, id);
                Err(error)
            }
        }
    }
}

/// Runs store work off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ThreadError> + Send + 'static,
) -> Result<T, ThreadError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|error| Err(ThreadError::Storage(format!("queue work failed: {error}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_drain_runs_per_thread_and_looks_again_when_work_came_in() {
        let drains = Drains::default();
        assert!(drains.enter("t"));
        assert!(!drains.enter("t"), "a second drain is not started");
        assert!(drains.enter("u"), "other threads drain on their own");
        assert!(drains.again("t"), "work came in while it ran");
        assert!(!drains.again("t"));
        assert!(drains.enter("t"), "done: the next kick starts a drain");
    }
}
