//! Turns: `turn/start`, `turn/steer` and `turn/interrupt`.
//!
//! [`Turns`] keeps the one running turn per thread. `turn/start` registers the turn, answers at
//! once, and runs it in a spawned task ([`run`]) that streams the model's output as
//! notifications to the connection that started it and records the turn and each completed
//! item in the thread's rollout. `turn/steer` queues input for the running turn; `turn/interrupt`
//! signals it to stop.
//!
//! Every model call opens with the context of [`instructions`] (base and developer
//! instructions, `AGENTS.md` project docs), and the conversation holds an [`environment`]
//! context block before the first turn's input and before each turn whose environment changed;
//! the files a turn's patches change are tracked by [`diff`] for
//! `turn/diff/updated`; token totals live with the thread (`threads::usage`). See
//! `docs/turn-fidelity.md`. A code review (`review/start`, [`review`]) is a turn too; so is a
//! compaction (`thread/compact/start`), which also happens within a turn once the context
//! reaches its limit (`run::auto_compact`).

// On the async path: no blocking call here (see clippy.toml); code that runs on the blocking
// pool or a thread of its own says so where it allows one.
#![deny(clippy::disallowed_methods)]

mod approval;
mod compact;
mod diff;
mod dynamic_calls;
pub(crate) mod environment;
mod history;
pub(crate) mod instructions;
// One job model: spawn, stop and settle of turns, shell commands and compactions.
mod job;
mod recorded;
pub(crate) mod review;
mod run;
mod shell;
// Skills offered to the model (hooks and skills area).
pub(crate) mod skills;
// thread/sample (0.6.0)
pub(crate) mod sample;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agentwire_protocol::{
    ThreadItem, ThreadStatus, Turn, TurnCompletedNotification, TurnError, TurnInterruptParams,
    TurnInterruptResponse, TurnItemsView, TurnStartParams, TurnStartResponse, TurnStatus,
    TurnSteerParams, TurnSteerResponse, UserInput,
};
use agentwire_providers::ModelProvider;
use agentwire_runtime::{Hub, RequestContext};
use agentwire_store::Claim;
use agentwire_store::committer::Pending;
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{SettingsOverrides, new_id, now};
use agentwire_support::lock;
use agentwire_tools::sandbox::SandboxHelper;
use approval::SessionApprovals;
use recorded::durable;
use run::{Controls, TurnRun, TurnStart};
use tokio::sync::{mpsc, oneshot};

use crate::threads::Threads;

/// Most steered inputs waiting for the running turn to take them.
const STEER_QUEUE: usize = 16;

/// The running turns of the threads.
#[derive(Debug)]
pub(crate) struct Turns {
    threads: Arc<Threads>,
    provider: Arc<dyn ModelProvider>,
    running: Mutex<HashMap<String, Running>>,
    /// Approvals given "for the session", per thread.
    sessions: Mutex<HashMap<String, Arc<Mutex<SessionApprovals>>>>,
    /// The program that confines commands to the sandbox (see `EngineConfig::sandbox_exe`).
    sandbox_exe: Option<SandboxHelper>,
    /// The configuration (for the environment of commands).
    config: Arc<agentwire_config::Store>,
    /// The MCP servers whose tools turns offer (see `run::mcp_call`).
    mcp: std::sync::OnceLock<Arc<agentwire_mcp::McpManager>>,
    /// The server's skills and `$AGENTWIRE_HOME`, for the skills turns offer (see [`skills`]).
    skills: std::sync::OnceLock<(Arc<crate::skills::Skills>, std::path::PathBuf)>,
    /// The commands that run on as exec sessions of their threads (see `run::exec_session`).
    exec_sessions: agentwire_tools::exec_sessions::ExecSessions,
}

/// How long a `turn/steer` passed to the server running the turn waits for its answer.
const STEER_ELSEWHERE: std::time::Duration = std::time::Duration::from_secs(10);

/// The turn running on a thread.
#[derive(Debug)]
struct Running {
    turn_id: String,
    /// Fires the interrupt; taken when sent.
    interrupt: Option<oneshot::Sender<()>>,
    steer: mpsc::Sender<Steer>,
    /// Whether steered input is still taken (not once the turn is finishing).
    accepts_steer: bool,
    /// Dropped when the turn is forgotten: its receivers learn that it ended.
    ended: tokio::sync::watch::Sender<()>,
    /// The store's claim that the turn runs here (no other server starts one meanwhile);
    /// released when the turn ends, before its `turn/completed` is sent.
    claim: Claim,
    /// Where `turn/settings/update` leaves changes for the turn's next model call; `None` for
    /// a turn that makes none (a shell command, a compaction).
    live: Option<Arc<crate::thread_settings::LiveTurn>>,
}

impl Turns {
    /// Marks `thread_id` as running a new turn that takes no steered input (a shell command,
    /// a compaction): its id and the receiver of its interrupt. Refused while another runs.
    fn claim_without_steering(
        &self,
        thread_id: &str,
        claim: Claim,
    ) -> Result<(String, oneshot::Receiver<()>), ThreadError> {
        let turn_id = new_id();
        let (interrupt_sender, interrupt) = oneshot::channel();
        let mut running = lock(&self.running);
        if let Some(other) = running.get(thread_id) {
            return Err(ThreadError::Conflict(format!(
                "thread {thread_id} is running turn {}; wait for it or interrupt it first",
                other.turn_id
            )));
        }
        let (steer, _) = mpsc::channel(1);
        running.insert(
            thread_id.to_owned(),
            Running {
                turn_id: turn_id.clone(),
                interrupt: Some(interrupt_sender),
                steer,
                accepts_steer: false,
                ended: tokio::sync::watch::channel(()).0,
                claim,
                live: None,
            },
        );
        Ok((turn_id, interrupt))
    }
}

/// Input steered into a running turn.
#[derive(Debug)]
pub(crate) struct Steer {
    input: Vec<UserInput>,
    client_id: Option<String>,
}

impl Turns {
    /// Turns on `threads`, answered by `provider`, confining commands with `sandbox_exe`.
    pub(crate) fn new(
        threads: Arc<Threads>,
        provider: Arc<dyn ModelProvider>,
        sandbox_exe: Option<SandboxHelper>,
        config: Arc<agentwire_config::Store>,
    ) -> Self {
        Self {
            threads,
            provider,
            running: Mutex::new(HashMap::new()),
            sessions: Mutex::new(HashMap::new()),
            sandbox_exe,
            config,
            mcp: std::sync::OnceLock::new(),
            skills: std::sync::OnceLock::new(),
            exec_sessions: agentwire_tools::exec_sessions::ExecSessions::default(),
        }
    }

    /// The exec sessions of the threads (`thread/backgroundTerminals/*`).
    pub(crate) fn exec_sessions(&self) -> &agentwire_tools::exec_sessions::ExecSessions {
        &self.exec_sessions
    }

    /// Lets turns offer and call the tools of `mcp`'s servers.
    pub(crate) fn set_mcp(&self, mcp: Arc<agentwire_mcp::McpManager>) {
        let _ = self.mcp.set(mcp);
    }

    /// The environment of a command the model runs in `cwd`: the server's, filtered by the
    /// `[shell_environment_policy]` in effect there.
    pub(crate) fn command_environment(
        &self,
        cwd: &str,
    ) -> std::collections::BTreeMap<String, String> {
        let effective = self.config.effective(Some(std::path::Path::new(cwd)));
        agentwire_config::shell_env::command_environment(&effective.file.shell_environment_policy)
    }

    /// The session approvals of `thread_id`.
    fn session(&self, thread_id: &str) -> Arc<Mutex<SessionApprovals>> {
        lock(&self.sessions)
            .entry(thread_id.to_owned())
            .or_default()
            .clone()
    }

    /// `turn/start`: registers a turn on a loaded, idle thread and runs it in the background;
    /// `claim` is the store's (see [`Threads::claim_turn`]).
    pub(crate) async fn start(
        self: &Arc<Self>,
        context: &RequestContext,
        params: TurnStartParams,
        claim: Claim,
    ) -> Result<TurnStartResponse, ThreadError> {
        self.start_off_thread(context, params, None, claim).await
    }

    /// [`Turns::start_turn`] on tokio's blocking pool: its checks read files (the input's
    /// image files, the thread's history and settings), so that no async worker (on the stdio
    /// server, not the one thread that reads requests) waits on a disk or a stuck file. A
    /// panic is resumed here, where the runtime answers it with -32603.
    async fn start_off_thread(
        self: &Arc<Self>,
        context: &RequestContext,
        params: TurnStartParams,
        review: Option<run::ReviewMode>,
        claim: Claim,
    ) -> Result<TurnStartResponse, ThreadError> {
        let (turns, context) = (self.clone(), context.clone());
        // In the request's span: the turn's span (made there) is its child (telemetry).
        let span = tracing::Span::current();
        let started = tokio::task::spawn_blocking(move || {
            span.in_scope(|| turns.start_turn(&context, params, review, claim))
        });
        match started.await {
            Ok(started) => started,
            Err(error) => match error.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(error) => Err(ThreadError::Storage(format!(
                    "the turn was not started: {error}"
                ))),
            },
        }
    }

    /// Starts a turn as `turn/start` does; with `review`, as a review turn (`review/start`).
    fn start_turn(
        self: &Arc<Self>,
        context: &RequestContext,
        mut params: TurnStartParams,
        review: Option<run::ReviewMode>,
        claim: Claim,
    ) -> Result<TurnStartResponse, ThreadError> {
        if params.input.is_empty() {
            return Err(ThreadError::InvalidParams(
                "input: must not be empty".to_owned(),
            ));
        }
        // The form only (this runs on the async worker): the directory itself is used by the
        // turn's commands, which fail with the reason if it is gone.
        if let Some(cwd) = params.cwd.as_deref() {
            agentwire_store::meta::check_cwd("cwd", cwd, false)
                .map_err(ThreadError::InvalidParams)?;
        }
        // Relative image paths are the thread's (as this turn's `cwd` override leaves it).
        let mut preview = self
            .threads
            .update_settings(&params.thread_id, SettingsOverrides::default())?;
        preview.apply(SettingsOverrides {
            cwd: params.cwd.clone(),
            ..SettingsOverrides::default()
        });
        agentwire_providers::content::resolve_local_images(
            &mut params.input,
            std::path::Path::new(&preview.cwd),
        );
        agentwire_providers::content::check_input(&params.input)
            .map_err(ThreadError::InvalidParams)?;
        if let Some(schema) = &params.output_schema {
            agentwire_providers::schema::check(schema).map_err(ThreadError::InvalidParams)?;
        }
        let thread_id = params.thread_id;
        // Fails unless the thread is loaded. The turn's overrides stay for later turns.
        let mut overrides = SettingsOverrides {
            model: params.model,
            reasoning_effort: params.effort,
            cwd: params.cwd,
            approval_policy: params.approval_policy,
            approvals_reviewer: params.approvals_reviewer,
            sandbox_policy: params.sandbox_policy,
            service_tier: params.service_tier,
            reasoning_summary: params.summary,
            ..SettingsOverrides::default()
        };
        if let Some(mode) = params.collaboration_mode {
            crate::catalog::modes::apply(mode, &mut overrides);
        }
        let settings = self.threads.update_settings(&thread_id, overrides)?;
        // The summary setting stays with the thread; the output schema is this turn's alone.
        let output = agentwire_providers::OutputOptions {
            summary: settings.reasoning_summary.clone(),
            schema: params.output_schema,
        };
        let mut history = self
            .threads
            .with_model_history(&thread_id, |turns, injected, blocks| {
                history::with_injected(turns, blocks, injected)
            })?;
        let output_budget = crate::catalog::families::tool_output_bytes(
            &settings.model,
            self.threads.defaults_for(&settings).tool_output_token_limit,
        );
        history::cut_tool_results(&mut history, output_budget);
        self.threads
            .subscribers
            .subscribe(&thread_id, &context.peer);
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(ThreadError::Storage(
                "no async runtime to run the turn on".to_owned(),
            ));
        }
        let turn_id = new_id();
        let (interrupt_sender, interrupt) = oneshot::channel();
        let (steer_sender, steer) = mpsc::channel(STEER_QUEUE);
        let live = Arc::new(crate::thread_settings::LiveTurn::default());
        {
            let mut running = lock(&self.running);
            if let Some(other) = running.get(&thread_id) {
                return Err(ThreadError::Conflict(format!(
                    "thread {thread_id} already has a running turn: {}; steer or interrupt it, \
                     or wait for it to complete",
                    other.turn_id
                )));
            }
            running.insert(
                thread_id.clone(),
                Running {
                    turn_id: turn_id.clone(),
                    interrupt: Some(interrupt_sender),
                    steer: steer_sender,
                    accepts_steer: true,
                    ended: tokio::sync::watch::channel(()).0,
                    claim,
                    live: Some(live.clone()),
                },
            );
        }
        let turn = Turn::builder()
            .root_turn_id(params.root_turn_id.unwrap_or_else(|| turn_id.clone()))
            .id(turn_id)
            .status(TurnStatus::InProgress)
            .items_view(TurnItemsView::NotLoaded)
            .build();
        let run = TurnRun::new(
            self.clone(),
            context.peer.clone(),
            TurnStart {
                thread_id,
                turn: turn.clone(),
                settings,
                history,
                answered: context.answered.clone(),
                output,
                review,
            },
            Controls {
                interrupt,
                steer,
                live,
            },
        );
        let input = Steer {
            input: params.input,
            client_id: params.client_user_message_id,
        };
        // One job of the job model (see [`job`]): supervised, interrupted when the server is
        // told to stop, settled as failed if its task panics. (The turn's spans are its own:
        // see `run::telemetry`.)
        let ledger = run.ledger();
        self.spawn_job(context, ledger, run.run(input));
        Ok(TurnStartResponse::builder().turn(turn).build())
    }

    /// `turn/steer`: hands input to the running turn `expectedTurnId`.
    pub(crate) fn steer(
        &self,
        mut params: TurnSteerParams,
    ) -> Result<TurnSteerResponse, ThreadError> {
        if params.input.is_empty() {
            return Err(ThreadError::InvalidParams(
                "input: must not be empty".to_owned(),
            ));
        }
        if let Ok(settings) = self
            .threads
            .update_settings(&params.thread_id, SettingsOverrides::default())
        {
            agentwire_providers::content::resolve_local_images(
                &mut params.input,
                std::path::Path::new(&settings.cwd),
            );
        }
        agentwire_providers::content::check_input(&params.input)
            .map_err(ThreadError::InvalidParams)?;
        let running = lock(&self.running);
        let turn = Self::expect_running(&running, &params.thread_id, &params.expected_turn_id)?;
        if !turn.accepts_steer {
            return Err(ThreadError::Conflict(format!(
                "turn {} is finishing and takes no more input; start a new turn",
                turn.turn_id
            )));
        }
        let steer = Steer {
            input: params.input,
            client_id: params.client_user_message_id,
        };
        turn.steer.try_send(steer).map_err(|_| {
            ThreadError::Conflict(format!(
                "turn {} has too much steered input waiting; try again later",
                turn.turn_id
            ))
        })?;
        Ok(TurnSteerResponse::builder()
            .turn_id(turn.turn_id.clone())
            .build())
    }

    /// `turn/interrupt`: tells the running turn `turnId` to stop; it then completes as
    /// `interrupted`.
    ///
    /// A turn that another server of a shared store runs is asked to stop there; its followers
    /// here then see it complete as `interrupted` like any other.
    pub(crate) fn interrupt(
        &self,
        params: TurnInterruptParams,
    ) -> Result<TurnInterruptResponse, ThreadError> {
        // The thread's lock is never taken while `running` is held.
        if !self.is_running(&params.thread_id)
            && self
                .threads
                .runs_elsewhere(&params.thread_id, &params.turn_id)
            && self
                .threads
                .subscribers
                .relay_interrupt(&params.thread_id, &params.turn_id)
        {
            return Ok(TurnInterruptResponse::builder().build());
        }
        let mut running = lock(&self.running);
        Self::expect_running(&running, &params.thread_id, &params.turn_id)?;
        if let Some(turn) = running.get_mut(&params.thread_id)
            && let Some(interrupt) = turn.interrupt.take()
        {
            let _ = interrupt.send(());
        }
        Ok(TurnInterruptResponse::builder().build())
    }

    /// Whether a turn (or a shell command) runs on `thread_id`.
    pub(crate) fn is_running(&self, thread_id: &str) -> bool {
        lock(&self.running).contains_key(thread_id)
    }

    /// What learns that the turn (or shell command) now running on `thread_id` has ended:
    /// its `changed()` fails once the turn's last notification is out. `None` when nothing
    /// runs. (`thread/queue/*` waits on it to start the next queued input.)
    pub(crate) fn watch_end(&self, thread_id: &str) -> Option<tokio::sync::watch::Receiver<()>> {
        lock(&self.running)
            .get(thread_id)
            .map(|turn| turn.ended.subscribe())
    }

    /// Interrupts whatever runs on `thread_id` and waits until it has ended (recorded its end
    /// and idled the thread). Returns at once when nothing runs.
    pub(crate) async fn stop(&self, thread_id: &str) {
        let ended = {
            let mut running = lock(&self.running);
            let Some(turn) = running.get_mut(thread_id) else {
                return;
            };
            if let Some(interrupt) = turn.interrupt.take() {
                let _ = interrupt.send(());
            }
            turn.ended.subscribe()
        };
        let mut ended = ended;
        // Resolves with an error once the sender is dropped, i.e. the turn was forgotten.
        while ended.changed().await.is_ok() {}
    }

    /// Takes `turn/interrupt` and `turn/steer` relayed from followers on the other servers of
    /// a shared store.
    pub(crate) fn accept_relayed(self: &Arc<Self>) {
        let elsewhere = &self.threads.subscribers.elsewhere;
        let turns = Arc::downgrade(self);
        elsewhere.interrupt_with(Box::new(move |thread_id, turn_id| {
            if let Some(turns) = turns.upgrade() {
                turns.interrupt_relayed(thread_id, turn_id);
            }
        }));
        let turns = Arc::downgrade(self);
        elsewhere.runs_with(Box::new(move |thread_id| {
            turns
                .upgrade()
                .is_some_and(|turns| turns.is_running(thread_id))
        }));
        let turns = Arc::downgrade(self);
        elsewhere.steer_with(Box::new(move |params| {
            let turns = turns.upgrade().ok_or("the server is stopping")?;
            let params: TurnSteerParams =
                serde_json::from_str(params.get()).map_err(|e| format!("turn/steer: {e}"))?;
            let response = turns.steer(params).map_err(|e| e.to_string())?;
            serde_json::to_value(response).map_err(|e| e.to_string())
        }));
    }

    /// `turn/steer` from wherever the turn runs: here, or on another server of a shared store,
    /// which is asked and answers (its refusals come back as conflicts, with its reason).
    pub(crate) async fn steer_anywhere(
        &self,
        params: TurnSteerParams,
    ) -> Result<TurnSteerResponse, ThreadError> {
        if self.is_running(&params.thread_id)
            || !self
                .threads
                .runs_elsewhere(&params.thread_id, &params.expected_turn_id)
        {
            return self.steer(params);
        }
        if params.input.is_empty() {
            return Err(ThreadError::InvalidParams(
                "input: must not be empty".to_owned(),
            ));
        }
        agentwire_providers::content::check_input(&params.input)
            .map_err(ThreadError::InvalidParams)?;
        match self
            .threads
            .subscribers
            .steer_elsewhere(&params, STEER_ELSEWHERE)
            .await
        {
            None => self.steer(params),
            Some(Err(why)) => Err(ThreadError::Conflict(why)),
            Some(Ok(answer)) => serde_json::from_value(answer).map_err(|e| {
                ThreadError::Conflict(format!(
                    "the server running the turn answered turn/steer malformed: {e}"
                ))
            }),
        }
    }

    /// Interrupts turn `turn_id` of `thread_id` if it runs here (a relayed `turn/interrupt`).
    fn interrupt_relayed(&self, thread_id: &str, turn_id: &str) {
        let mut running = lock(&self.running);
        match running.get_mut(thread_id) {
            Some(turn) if turn.turn_id == turn_id => {
                if let Some(interrupt) = turn.interrupt.take() {
                    tracing::info!(thread_id, turn_id, "turn interrupted from another server");
                    let _ = interrupt.send(());
                }
            }
            _ => {}
        }
    }

    /// Interrupts whatever turn runs on `thread_id`.
    fn interrupt_running(&self, thread_id: &str) {
        if let Some(interrupt) = lock(&self.running)
            .get_mut(thread_id)
            .and_then(|turn| turn.interrupt.take())
        {
            let _ = interrupt.send(());
        }
    }

    /// The turn running on `thread_id`, if it is `turn_id`.
    fn expect_running<'a>(
        running: &'a HashMap<String, Running>,
        thread_id: &str,
        turn_id: &str,
    ) -> Result<&'a Running, ThreadError> {
        match running.get(thread_id) {
            Some(turn) if turn.turn_id == turn_id => Ok(turn),
            Some(turn) => Err(ThreadError::Conflict(format!(
                "turn {turn_id} is not running on thread {thread_id}; the running turn is {}",
                turn.turn_id
            ))),
            None => Err(ThreadError::Conflict(format!(
                "no turn is running on thread {thread_id}"
            ))),
        }
    }

    /// How many turns run on this server now.
    pub(crate) fn running_count(&self) -> usize {
        lock(&self.running).len()
    }

    /// Where `turn/settings/update` leaves changes for turn `turn_id` of `thread_id`, while
    /// that turn runs here and makes model calls.
    pub(crate) fn live_settings(
        &self,
        thread_id: &str,
        turn_id: &str,
    ) -> Option<Arc<crate::thread_settings::LiveTurn>> {
        lock(&self.running)
            .get(thread_id)
            .filter(|turn| turn.turn_id == turn_id)
            .and_then(|turn| turn.live.clone())
    }

    /// Called by a turn whose model call ended: the next steered input, or `None` after which
    /// the turn takes no more (so none is accepted and then lost).
    fn next_steer(&self, thread_id: &str, steer: &mut mpsc::Receiver<Steer>) -> Option<Steer> {
        let mut running = lock(&self.running);
        if let Ok(next) = steer.try_recv() {
            return Some(next);
        }
        if let Some(turn) = running.get_mut(thread_id) {
            turn.accepts_steer = false;
        }
        None
    }

    /// Forgets the running turn of `thread_id`. Returns what tells [`Turns::stop`] that it
    /// ended (the turn drops it once its last notification is out), and its claim.
    fn finish(&self, thread_id: &str) -> Option<(tokio::sync::watch::Sender<()>, Claim)> {
        lock(&self.running)
            .remove(thread_id)
            .map(|turn| (turn.ended, turn.claim))
    }

    /// Ends `turn` of `thread_id` as `status` (with `error`), `clock` having run since it
    /// began: records it and, once the record is durable, idles the thread and forgets it as
    /// running (see [`Turns::conclude`]).
    async fn end(
        &self,
        hub: &Hub,
        thread_id: &str,
        turn: &mut Turn,
        outcome: (TurnStatus, Option<TurnError>),
        clock: std::time::Instant,
        shown: Vec<ThreadItem>,
    ) -> (
        TurnCompletedNotification,
        Option<tokio::sync::watch::Sender<()>>,
    ) {
        durable(
            "turn completion",
            self.record_end(thread_id, turn, outcome, clock),
        )
        .await;
        let (completed, ended, claim) = self.conclude(hub, thread_id, turn, shown);
        // A client told the turn completed may start the next one on another server at once,
        // so the claim is given back first.
        if let Some(claim) = claim
            && let Err(error) = tokio::task::spawn_blocking(move || claim.release()).await
        {
            tracing::warn!(thread_id, %error, "turn claim not released in place");
        }
        (completed, ended)
    }

    /// Sets the end of `turn` (`status`, `error`, end time and duration, `clock` having run
    /// since it began) and records it.
    fn record_end(
        &self,
        thread_id: &str,
        turn: &mut Turn,
        (status, error): (TurnStatus, Option<TurnError>),
        clock: std::time::Instant,
    ) -> Result<Pending, ThreadError> {
        turn.status = status;
        turn.error = error;
        turn.completed_at = Some(now());
        turn.duration_ms = Some(i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX));
        self.threads.record_turn_completed(thread_id, turn)
    }

    /// After `turn` of `thread_id` was recorded as ended: idles the thread and forgets it as
    /// running. Returns the `turn/completed` to send, with `shown` as the turn's items (its
    /// summary view), the guard to drop once it is sent (whoever waits for the turn to end,
    /// `thread/delete`, learns it only then), and the turn's claim.
    fn conclude(
        &self,
        hub: &Hub,
        thread_id: &str,
        turn: &Turn,
        shown: Vec<ThreadItem>,
    ) -> (
        TurnCompletedNotification,
        Option<tokio::sync::watch::Sender<()>>,
        Option<Claim>,
    ) {
        if let Err(error) = self.threads.set_status(hub, thread_id, ThreadStatus::Idle) {
            tracing::warn!(thread_id, %error, "thread status not recorded");
        }
        let (ended, claim) = self.finish(thread_id).unzip();
        let completed = TurnCompletedNotification::builder()
            .thread_id(thread_id.to_owned())
            .turn({
                let mut turn = turn.clone();
                turn.items = shown;
                turn.items_view = TurnItemsView::Summary;
                turn
            })
            .build();
        (completed, ended, claim)
    }
}
