//! One job model for the turn-like jobs of a thread: a model turn (a review is one too), a
//! shell command (`thread/shellCommand`) and a compaction (`thread/compact/start`).
//!
//! Each job is a turn on the wire (`turn/started` … `turn/completed`) and holds its thread's
//! `Running` entry while it runs, so one path serves them all:
//!
//! - **Claim**: a shell command or a compaction claims its thread with [`Turns::claim_job`]
//!   (its turn, its interrupt and its ledger); a model turn claims it with steering of its own.
//! - **Spawn**: [`Turns::spawn_job`] runs the job's future as a task of its own under a
//!   supervisor, which is the server's background work (shutdown waits for it), in the job's
//!   span (a child of the request's; a model turn opens its own). The job starts once the
//!   answer to the request that started it is on its way.
//! - **Stop**: the `Running` entry's interrupt, fired by `turn/interrupt`, by [`Turns::stop`]
//!   (`thread/delete`, `thread/unload`…) and by the supervisor when the server is told to stop;
//!   the job ends as `interrupted` on its own.
//! - **Begin and settle**: [`Turns::begin_job`] (thread active, the turn recorded,
//!   `turn/started`) and [`Turns::settle_job`] (`error` for a failed job, the end recorded,
//!   the thread idle and free for the next turn, `turn/completed`), both async. The job calls
//!   them itself; the [`JobLedger`] it shares with the supervisor says how far it got. When
//!   the job's task ends without settling, whatever the reason (a panic, a cancelled task, a
//!   bug that returns early), the supervisor completes the items it left open (as failed)
//!   and settles it from the ledger as `failed`, with an error that says why, and the thread
//!   takes the next turn. Nothing is settled in a `Drop`.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use agentwire_protocol::method::Notification;
use agentwire_protocol::methods::{
    ErrorEvent, ItemCompleted, ItemStarted, ThreadTokenUsageUpdated, TurnCompleted, TurnStarted,
};
use agentwire_protocol::{
    CodexErrorInfo, CommandExecutionStatus, DynamicToolCallStatus, ErrorNotification,
    ItemCompletedNotification, ItemStartedNotification, McpToolCallStatus, PatchApplyStatus,
    ThreadItem, ThreadItemKind, ThreadStatus, ThreadTokenUsage,
    ThreadTokenUsageUpdatedNotification, Turn, TurnError, TurnItemsView, TurnStartedNotification,
    TurnStatus,
};
use agentwire_runtime::{Hub, Peer, RequestContext};
use agentwire_support::timestamps::now_ms;
use futures_util::FutureExt;
use tokio::sync::oneshot;
use tracing::{Instrument, Span};

use super::Turns;
use crate::threads::error::ThreadError;
use crate::threads::meta::now;
use crate::threads::store::Claim;

/// Which job runs: names it in logs and metrics, and says what its settling sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JobKind {
    /// A model turn (`turn/start`, `review/start`, a queued input).
    Turn,
    /// A user's command line (`thread/shellCommand`).
    ShellCommand,
    /// A compaction of the thread's history (`thread/compact/start`).
    Compaction,
}

impl JobKind {
    /// The job's name in logs, metrics and spans.
    pub(super) fn name(self) -> &'static str {
        match self {
            JobKind::Turn => "turn",
            JobKind::ShellCommand => "shell_command",
            JobKind::Compaction => "compaction",
        }
    }
}

/// What the supervisor knows of a running job: enough to settle it when the job cannot.
#[derive(Debug)]
pub(super) struct JobLedger {
    kind: JobKind,
    thread_id: String,
    state: Mutex<LedgerState>,
}

#[derive(Debug)]
struct LedgerState {
    /// The turn as last begun (its start time set once `turn/started` is out).
    turn: Turn,
    begun: bool,
    /// Items announced with `item/started` and not completed yet, with their start.
    open: Vec<(ThreadItemKind, i64)>,
    /// The turn's last completed agent message (its `turn/completed` summary view).
    last_message: Option<ThreadItem>,
    /// Set once the job's settling has begun: it is never settled twice.
    settled: bool,
    clock: Instant,
}

impl JobLedger {
    /// The ledger of job `kind` running `turn` on `thread_id`.
    pub(super) fn new(kind: JobKind, thread_id: &str, turn: &Turn) -> Arc<Self> {
        Arc::new(Self {
            kind,
            thread_id: thread_id.to_owned(),
            state: Mutex::new(LedgerState {
                turn: turn.clone(),
                begun: false,
                open: Vec::new(),
                last_message: None,
                settled: false,
                clock: Instant::now(),
            }),
        })
    }

    fn state(&self) -> MutexGuard<'_, LedgerState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The job's clock restarts now (its request's answer is out).
    pub(super) fn restart_clock(&self) {
        self.state().clock = Instant::now();
    }

    /// An item of the job was announced (`item/started`).
    pub(super) fn item_started(&self, kind: &ThreadItemKind, started_ms: i64) {
        self.state().open.push((kind.clone(), started_ms));
    }

    /// An item of the job completed (`item/completed`).
    pub(super) fn item_completed(&self, item: &ThreadItem) {
        let mut state = self.state();
        state.open.retain(|(kind, _)| kind.id() != item.kind.id());
        if matches!(item.kind, ThreadItemKind::AgentMessage { .. }) {
            state.last_message = Some(item.clone());
        }
    }

    /// Claims the job's settling; `false` when it was claimed before.
    fn claim_settling(&self) -> bool {
        !std::mem::replace(&mut self.state().settled, true)
    }

    pub(super) fn is_settled(&self) -> bool {
        self.state().settled
    }

    /// The span the job runs in, a child of the current one (the request's): a shell command
    /// or a compaction gets one here; a model turn opens its own (see `run::telemetry`).
    fn span(&self) -> Span {
        match self.kind {
            JobKind::Turn => Span::none(),
            JobKind::ShellCommand | JobKind::Compaction => {
                agentwire_runtime::telemetry::spans::turn_span(
                    &self.thread_id,
                    &self.state().turn.id,
                    self.kind.name(),
                )
            }
        }
    }
}

/// Test hook: a job of the kind this variable names (`shell_command`, `compaction`, `turn`)
/// panics at its fault point (a shell command: once its item is announced), so that a test
/// through the binary sees the job model settle a panicked job (`tests/e2e/jobs.rs`). Unset
/// (the default) means no panic.
const PANIC_VAR: &str = "AGENTWIRE_TEST_PANIC_JOB";

/// Panics when [`PANIC_VAR`] names `kind`.
pub(super) fn fault_point(kind: JobKind) {
    if std::env::var(PANIC_VAR).is_ok_and(|named| named == kind.name()) {
        // Deliberate: the test hook exists to exercise the supervisor's settling.
        panic!("{PANIC_VAR}={}: injected panic", kind.name());
    }
}

/// Why a job's task ended without settling its job.
enum Unsettled {
    Panicked(String),
    Cancelled,
    Returned,
}

/// `item/started` for an item of `kind` in turn `turn_id` of thread `thread_id` that began at
/// `started_ms` (the item carries the same time).
pub(super) fn item_started(
    thread_id: &str,
    turn_id: &str,
    kind: ThreadItemKind,
    started_ms: i64,
) -> ItemStartedNotification {
    ItemStartedNotification::builder()
        .thread_id(thread_id.to_owned())
        .turn_id(turn_id.to_owned())
        .item(
            ThreadItem::builder()
                .kind(kind)
                .started_at_ms(started_ms)
                .build(),
        )
        .started_at_ms(started_ms)
        .build()
}

impl Turns {
    /// Claims `thread_id` for a job of `kind` that takes no steering (a shell command, a
    /// compaction) and has `peer` follow the thread: the job's turn (in progress, its items in
    /// full), its interrupt and its ledger. Fails when there is no async runtime to run the job
    /// on, or when the thread is running a turn already.
    pub(super) fn claim_job(
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
    pub(super) fn spawn_job<F>(
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
    pub(super) async fn begin_job(&self, hub: &Hub, ledger: &JobLedger, turn: &mut Turn) {
        let thread_id = &ledger.thread_id;
        super::logged(
            "status",
            self.threads
                .set_status(hub, thread_id, ThreadStatus::active().build()),
        );
        turn.started_at = Some(now());
        super::durable(
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
    pub(super) async fn settle_job(
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
            super::run::ended_job(
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
    pub(super) fn start_item(
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
    pub(super) async fn complete_item(
        &self,
        ledger: &JobLedger,
        turn_id: &str,
        item: &ThreadItem,
        completed_ms: i64,
    ) {
        let thread_id = &ledger.thread_id;
        super::durable(
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
        let mine = super::lock(&self.running)
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
    pub(super) fn token_totals(&self, thread_id: &str) -> ThreadTokenUsage {
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
