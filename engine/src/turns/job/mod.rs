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
//!
//! The ledger and the job kinds are here; the supervisor's side is in `supervise`.
//!
//! [`Turns::claim_job`]: crate::turns::Turns::claim_job
//! [`Turns::spawn_job`]: crate::turns::Turns::spawn_job
//! [`Turns::stop`]: crate::turns::Turns::stop
//! [`Turns::begin_job`]: crate::turns::Turns::begin_job
//! [`Turns::settle_job`]: crate::turns::Turns::settle_job

mod supervise;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use agentwire_protocol::{ItemStartedNotification, ThreadItem, ThreadItemKind, Turn};
use agentwire_support::lock;
use tracing::Span;

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
        lock(&self.state)
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
