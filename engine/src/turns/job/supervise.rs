//! The supervisor's side of the job model (see the parent module): claiming a thread for a
//! job, spawning it under supervision, beginning and settling it, and settling from the
//! ledger a job whose task ended without doing so.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use agentwire_protocol::method::Notification;
use agentwire_protocol::methods::{
    ErrorEvent, ItemCompleted, ItemStarted, ThreadTokenUsageUpdated, TurnCompleted, TurnStarted,
};
use agentwire_protocol::{
    CodexErrorInfo, CommandExecutionStatus, DynamicToolCallStatus, ErrorNotification,
    ItemCompletedNotification, McpToolCallStatus, PatchApplyStatus, ThreadItem, ThreadItemKind,
    ThreadStatus, ThreadTokenUsage, ThreadTokenUsageUpdatedNotification, Turn, TurnError,
    TurnItemsView, TurnStartedNotification, TurnStatus,
};
use agentwire_runtime::{Hub, Peer, RequestContext};
use agentwire_store::Claim;
use agentwire_store::error::ThreadError;
use agentwire_store::meta::now;
use agentwire_support::timestamps::now_ms;
use futures_util::FutureExt;
use tokio::sync::oneshot;
use tracing::Instrument;

use super::{JobKind, JobLedger, item_started};
use crate::turns::Turns;
use crate::turns::recorded::{durable, logged};
use crate::turns::run::telemetry::ended_job;

/// Why a job's task ended without settling its job.
enum Unsettled {
    Panicked(String),
    Cancelled,
    Returned,
}

impl Turns {
    /// Claims `thread_id` for a job of `kind` that takes no steering (a shell command, a
    /// compaction) and has `peer` follow the thread: the job's turn (in progress, its items in
    /// full), its interrupt and its ledger. Fails when there is no async runtime to run the job
    /// on, or when the thread is running a turn already.
    pub(in crate::turns) fn claim_job(
        &self,
        kind: JobKind,
        thread_id: &str,
        claim: Claim,
        peer: &Peer,
    ) -> Result<(Turn, oneshot::Receiver<()>, Arc<JobLedger>), ThreadError> {
        if tokio::runtime::Handle::try_current().is_err() {
            let what = match kind {
                JobKind::Turn => "turn",
                JobKind::ShellCommand => "command",
                JobKind::Compaction => "compaction",
            };
            return Err(ThreadError::Storage(format!(
                "no async runtime to run the {what} on"
            )));
        }
        let (turn_id, interrupt) = self.claim_without_steering(thread_id, claim)?;
        self.threads.subscribers.subscribe(thread_id, peer);
        let turn = Turn::builder()
            .root_turn_id(turn_id.clone())
            .id(turn_id)
            .status(TurnStatus::InProgress)
            .items_view(TurnItemsView::Full)
            .build();
        let ledger = JobLedger::new(kind, thread_id, &turn);
        Ok((turn, interrupt, ledger))
    }

    /// Runs `work`, the job of `ledger` started by the request of `context`, in a task of its
    /// own under a supervisor (the server's background work), once the request's answer is on
    /// its way and in the job's span. When the server is told to stop, the job is interrupted
    /// like `turn/interrupt` would; when its task ends without settling the job, the
    /// supervisor settles it as `failed`.
    pub(in crate::turns) fn spawn_job<F>(
        self: &Arc<Self>,
        context: &RequestContext,
        ledger: Arc<JobLedger>,
        work: F,
    ) where
        F: Future<Output = ()> + Send + 'static,
    {
        let hub = context.peer.hub();
        let answered = context.answered.clone();
        // Made here, while the request's span is current: the job's span is its child.
        let span = ledger.span();
        let turns = self.clone();
        let stopping = hub.stopping();
        let supervisor_hub = hub.clone();
        hub.spawn_background(async move {
            answered.wait().await;
            ledger.restart_clock();
            let mut task = std::pin::pin!(tokio::spawn(work.instrument(span.clone())));
            let joined = tokio::select! {
                joined = &mut task => joined,
                () = stopping => {
                    tracing::info!(
                        thread = %ledger.thread_id,
                        job = ledger.kind.name(),
                        "server stopping: interrupting the running job"
                    );
                    turns.interrupt_running(&ledger.thread_id);
                    task.await
                }
            };
            let why = match joined {
                Ok(()) if ledger.is_settled() => return,
                Ok(()) => Unsettled::Returned,
                Err(error) if error.is_panic() => Unsettled::Panicked(
                    agentwire_support::supervised::panic_text(error.into_panic().as_ref()),
                ),
                Err(_) => Unsettled::Cancelled,
            };
            let settled = AssertUnwindSafe(
                turns
                    .settle_unsettled(&supervisor_hub, &ledger, why)
                    .instrument(span),
            )
            .catch_unwind()
            .await;
            if settled.is_err() {
                // The settling itself panicked: the thread is freed without a record, so that
                // it takes the next turn.
                tracing::error!(
                    thread = %ledger.thread_id,
                    "settling a job that ended without settling panicked: freeing its thread"
                );
                turns.forget_job(&supervisor_hub, &ledger);
            }
        });
    }

    /// Begins `turn` of the job of `ledger`: the thread active, the turn's start recorded, and
    /// `turn/started` (as not loaded: its items follow).
    pub(in crate::turns) async fn begin_job(&self, hub: &Hub, ledger: &JobLedger, turn: &mut Turn) {
        let thread_id = &ledger.thread_id;
        logged(
            "status",
            self.threads
                .set_status(hub, thread_id, ThreadStatus::active().build()),
        );
        turn.started_at = Some(now());
        durable(
            "turn started",
            self.threads.record_turn_started(thread_id, turn),
        )
        .await;
        let mut announced = turn.clone();
        announced.items_view = TurnItemsView::NotLoaded;
        {
            let mut state = ledger.state();
            state.turn = turn.clone();
            state.begun = true;
        }
        self.notify_job::<TurnStarted>(
            thread_id,
            &TurnStartedNotification::builder()
                .thread_id(thread_id.clone())
                .turn(announced)
                .build(),
        );
    }

    /// Settles the job of `ledger` (once; a second call does nothing): sends `error` for a
    /// failed job, records `turn`'s end as `outcome` (`clock` having run since it began),
    /// idles and frees the thread, and sends `turn/completed` with `shown` as the turn's
    /// items. `report` counts the job's end in the metrics and its span (a model turn reports
    /// its own, with its tokens). Items the job left open stay open (a unified exec session
    /// outlives its turn); a job that could not settle has them closed first
    /// ([`Turns::complete_open`]).
    pub(in crate::turns) async fn settle_job(
        &self,
        hub: &Hub,
        ledger: &JobLedger,
        turn: &mut Turn,
        outcome: (TurnStatus, Option<TurnError>),
        clock: Instant,
        (shown, report): (Vec<ThreadItem>, bool),
    ) {
        if !ledger.claim_settling() {
            return;
        }
        let thread_id = ledger.thread_id.clone();
        if let Some(error) = &outcome.1 {
            self.notify_job::<ErrorEvent>(
                &thread_id,
                &ErrorNotification::builder()
                    .thread_id(thread_id.clone())
                    .turn_id(turn.id.clone())
                    .error(error.clone())
                    .will_retry(false)
                    .build(),
            );
        }
        let (completed, ended) = self.end(hub, &thread_id, turn, outcome, clock, shown).await;
        if report {
            ended_job(
                (&thread_id, &turn.id),
                ledger.kind.name(),
                &turn.status,
                clock.elapsed(),
            );
        }
        self.notify_job::<TurnCompleted>(&thread_id, &completed);
        drop(ended);
    }

    /// Announces `kind`, an item of the job of `ledger` in turn `turn_id` that began at
    /// `started_ms`: the ledger keeps it as open (completed as failed if the job cannot settle)
    /// and the thread's followers get `item/started`.
    pub(in crate::turns) fn start_item(
        &self,
        ledger: &JobLedger,
        turn_id: &str,
        kind: ThreadItemKind,
        started_ms: i64,
    ) {
        ledger.item_started(&kind, started_ms);
        self.notify_job::<ItemStarted>(
            &ledger.thread_id,
            &item_started(&ledger.thread_id, turn_id, kind, started_ms),
        );
    }

    /// Completes `item`, an item of the job of `ledger` in turn `turn_id` that completed at
    /// `completed_ms`: recorded (waiting until it is durable), no longer open in the ledger,
    /// and `item/completed` to the thread's followers.
    pub(in crate::turns) async fn complete_item(
        &self,
        ledger: &JobLedger,
        turn_id: &str,
        item: &ThreadItem,
        completed_ms: i64,
    ) {
        let thread_id = &ledger.thread_id;
        durable(
            "item completed",
            self.threads.record_item_completed(thread_id, turn_id, item),
        )
        .await;
        ledger.item_completed(item);
        self.notify_job::<ItemCompleted>(
            thread_id,
            &ItemCompletedNotification::builder()
                .thread_id(thread_id.clone())
                .turn_id(turn_id.to_owned())
                .completed_at_ms(completed_ms)
                .item(item.clone())
                .build(),
        );
    }

    /// Completes, as failed, the items the job of `ledger` (whose task ended without settling
    /// it) announced and did not complete; a shell command's join `shown`, the items its
    /// `turn/completed` carries.
    async fn complete_open(&self, ledger: &JobLedger, turn: &Turn, shown: &mut Vec<ThreadItem>) {
        let open = std::mem::take(&mut ledger.state().open);
        for (kind, started_ms) in open {
            let completed_ms = now_ms().max(started_ms);
            let item = ThreadItem::builder()
                .kind(stopped(kind))
                .started_at_ms(started_ms)
                .completed_at_ms(completed_ms)
                .build();
            self.complete_item(ledger, &turn.id, &item, completed_ms)
                .await;
            if ledger.kind == JobKind::ShellCommand {
                shown.push(item);
            }
        }
    }

    /// Settles, as `failed`, the job of `ledger` whose task ended without settling it (`why`).
    async fn settle_unsettled(&self, hub: &Hub, ledger: &JobLedger, why: Unsettled) {
        let (message, cause) = match why {
            Unsettled::Panicked(panic) => (
                "The turn stopped on an internal error of the server; it was ended as failed.",
                format!("the {}'s task panicked: {panic}", ledger.kind.name()),
            ),
            Unsettled::Cancelled => (
                "The turn stopped before it could finish; it was ended as failed.",
                format!(
                    "the {}'s task was cancelled before its end",
                    ledger.kind.name()
                ),
            ),
            Unsettled::Returned => (
                "The turn stopped before it could finish; it was ended as failed.",
                format!(
                    "the {}'s task returned without ending it",
                    ledger.kind.name()
                ),
            ),
        };
        tracing::error!(
            thread = %ledger.thread_id,
            job = ledger.kind.name(),
            cause,
            "turn ended without settling: settling it as failed"
        );
        if ledger.is_settled() {
            // It stopped while settling: its thread may still be held.
            self.forget_job(hub, ledger);
            return;
        }
        let (mut turn, begun, clock, last_message) = {
            let state = ledger.state();
            (
                state.turn.clone(),
                state.begun,
                state.clock,
                state.last_message.clone(),
            )
        };
        // Stopped before it began: it begins now, so that it has a start to end.
        if !begun {
            self.begin_job(hub, ledger, &mut turn).await;
        }
        if ledger.kind == JobKind::Turn {
            self.resend_usage(&ledger.thread_id, &turn.id);
        }
        let error = TurnError::builder()
            .message(message.to_owned())
            .additional_details(cause)
            .codex_error_info(CodexErrorInfo::Other)
            .build();
        let mut shown = match ledger.kind {
            JobKind::Turn => last_message.into_iter().collect(),
            JobKind::ShellCommand | JobKind::Compaction => Vec::new(),
        };
        self.complete_open(ledger, &turn, &mut shown).await;
        self.settle_job(
            hub,
            ledger,
            &mut turn,
            (TurnStatus::Failed, Some(error)),
            clock,
            (shown, true),
        )
        .await;
    }

    /// Frees the thread of the job of `ledger` without recording its end: idle, no longer
    /// running, its claim given back. The last resort when settling is impossible.
    fn forget_job(&self, hub: &Hub, ledger: &JobLedger) {
        let turn_id = ledger.state().turn.id.clone();
        let thread_id = &ledger.thread_id;
        let mine = agentwire_support::lock(&self.running)
            .get(thread_id)
            .is_some_and(|running| running.turn_id == turn_id);
        if !mine {
            return;
        }
        if let Err(error) = self.threads.set_status(hub, thread_id, ThreadStatus::Idle) {
            tracing::warn!(thread_id, %error, "thread status not recorded");
        }
        if let Some((ended, claim)) = self.finish(thread_id) {
            tokio::task::spawn_blocking(move || claim.release());
            drop(ended);
        }
    }

    /// The token totals of thread `thread_id` as they stand (zero before any model call
    /// counted).
    pub(in crate::turns) fn token_totals(&self, thread_id: &str) -> ThreadTokenUsage {
        self.threads.token_usage(thread_id).map_or_else(
            || {
                ThreadTokenUsage::builder()
                    .total(crate::threads::usage::zero())
                    .last(crate::threads::usage::zero())
                    .build()
            },
            |totals| totals.usage,
        )
    }

    /// Sends the thread's token totals as they stand (a failed turn's last call reported
    /// none).
    fn resend_usage(&self, thread_id: &str, turn_id: &str) {
        let usage = self.token_totals(thread_id);
        self.notify_job::<ThreadTokenUsageUpdated>(
            thread_id,
            &ThreadTokenUsageUpdatedNotification::builder()
                .thread_id(thread_id.to_owned())
                .turn_id(turn_id.to_owned())
                .token_usage(usage)
                .build(),
        );
    }

    /// Sends `M` to every connection following `thread_id`.
    fn notify_job<M: Notification>(&self, thread_id: &str, params: &M::Params) {
        self.threads
            .subscribers
            .audience(thread_id)
            .notify::<M>(params);
    }
}

/// `kind` as an item that was cut short: a command, patch or tool call still in progress is
/// failed; other kinds complete with what they hold.
fn stopped(mut kind: ThreadItemKind) -> ThreadItemKind {
    match &mut kind {
        ThreadItemKind::CommandExecution { status, .. } => {
            *status = CommandExecutionStatus::Failed;
        }
        ThreadItemKind::FileChange { status, .. } => *status = PatchApplyStatus::Failed,
        ThreadItemKind::McpToolCall { status, .. } => *status = McpToolCallStatus::Failed,
        ThreadItemKind::DynamicToolCall { status, .. } => *status = DynamicToolCallStatus::Failed,
        _ => {}
    }
    kind
}
