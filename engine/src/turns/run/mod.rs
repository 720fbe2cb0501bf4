//! One running turn: the task that drives the model calls, streams the notifications and
//! records the turn.
//!
//! Notification order (as the reference server sends it): `thread/status/changed` (active),
//! `turn/started`, `item/started` + `item/completed` of the user message, then per model
//! output item `item/started`, its deltas and `item/completed`, then per model call
//! `thread/tokenUsage/updated`; at the end `thread/tokenUsage/updated` again with the totals
//! (interrupted and failed turns, whose last call reported none), `error` (failed turns
//! only), `thread/status/changed` (idle) and `turn/completed`.
//!
//! Around tool calls (see [`tools`]): an approval request is preceded by
//! `thread/status/changed` with `activeFlags: ["waitingOnApproval"]` (before the item's
//! `item/started`), and once it is settled (answered, declined, timed out or cancelled) by
//! `serverRequest/resolved` and then `thread/status/changed` back to `activeFlags: []`; an
//! applied patch's `item/completed` is followed by `turn/diff/updated` with the turn's whole
//! diff so far; an `update_plan` call sends `turn/plan/updated`.
//!
//! A review turn (`review/start`) opens with `enteredReviewMode` instead of the user message
//! and closes with `exitedReviewMode` ([`review_mode`]); a thread whose context reached its
//! limit is compacted before the turn's input and after a round of tool calls
//! ([`auto_compact`]); a Responses summary section opens with
//! `item/reasoning/summaryPartAdded`.

mod ask;
mod auto_compact;
mod client_tools;
// unified exec: `exec_command` sessions and `write_stdin` (0.7.0).
mod exec_session;
mod hook_points;
mod mcp_call;
mod skill_context;
// Model metadata: context window, unknown-model warning (catalog::families).
mod model_facts;
// model tools: `view_image` and `web_search`.
mod media_tools;
// turn notifications area: rate limits and reroutes a model call reports.
mod notices;
mod review_mode;
// operations: what a turn logs and counts.
pub(super) mod telemetry;
mod tools;

pub(crate) use review_mode::ReviewMode;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use agentwire_config::overrides::with_overrides;
use agentwire_protocol::ThreadActiveFlag;
use agentwire_protocol::method::Notification;
use agentwire_protocol::methods::{
    AgentMessageDelta, ItemCompleted, ItemStarted, ReasoningSummaryPartAdded,
    ReasoningSummaryTextDelta, ReasoningTextDelta, ThreadTokenUsageUpdated,
};
use agentwire_protocol::{
    AgentMessageDeltaNotification, CodexErrorInfo, ItemCompletedNotification,
    ReasoningSummaryPartAddedNotification, ReasoningSummaryTextDeltaNotification,
    ReasoningTextDeltaNotification, ThreadItem, ThreadItemKind, ThreadStatus, ThreadTokenUsage,
    ThreadTokenUsageUpdatedNotification, TokenUsageBreakdown, Turn, TurnError, TurnItemsView,
    TurnStatus,
};
use agentwire_providers::{HistoryEntry, ModelRequest, OutputOptions, ProviderEvent, ToolCall};
use agentwire_runtime::{Answered, Peer};
use agentwire_store::meta::{ThreadSettings, new_id};
use agentwire_support::lock;
use agentwire_support::timestamps::now_ms;
use agentwire_tools::specs::BuiltinTools;
use tokio::sync::{mpsc, oneshot};

use super::diff::TurnDiff;
use super::environment;
use super::instructions::{DEFAULT_PROJECT_DOC_MAX_BYTES, base_instructions, context_entries};
use super::job::{JobKind, JobLedger};
use super::recorded::{durable, logged};
use super::{Steer, Turns};
use crate::threads::subscribers::Audience;

/// Most model calls one turn makes (each tool-call round is one more); a model that keeps
/// calling tools past it fails the turn rather than running forever.
const MAX_MODEL_CALLS: usize = 64;

/// How a model call (and so the turn) ended.
enum CallEnd {
    /// The model answered; it called these tools (none: its answer is final).
    Done(Vec<ToolCall>),
    Failed(TurnError),
    Interrupted,
}

/// What woke the turn up.
enum Next {
    Interrupt,
    Steer(Steer),
    Event(Option<ProviderEvent>),
}

/// An output item being streamed.
enum OpenItem {
    Message {
        id: String,
        text: String,
        started_ms: i64,
    },
    Reasoning {
        id: String,
        summary: Vec<String>,
        content: Vec<String>,
        started_ms: i64,
    },
}

/// A turn in progress.
pub(super) struct TurnRun {
    turns: Arc<Turns>,
    peer: Peer,
    thread_id: String,
    /// The turn as it stands, with every item so far.
    turn: Turn,
    interrupt: oneshot::Receiver<()>,
    steer: mpsc::Receiver<Steer>,
    /// Steered input taken while a model call ran, for the next call.
    pending: VecDeque<Steer>,
    /// The conversation the model sees.
    history: Vec<HistoryEntry>,
    /// What every model call of the turn sees before the conversation (developer
    /// instructions, project docs).
    context: Vec<HistoryEntry>,
    /// Whether the turn tells the model its environment (`include_environment_context`).
    environment: bool,
    /// Which of the engine's own tools the turn offers and runs (the thread's `[features]`).
    builtins: BuiltinTools,
    /// The files the turn's patches changed, for `turn/diff/updated` (`None` while it is
    /// being read on a blocking thread, or if that failed).
    diff: Option<TurnDiff>,
    /// The thread's settings as the turn started (after the turn's overrides).
    settings: ThreadSettings,
    /// Settles once the `turn/start` answer is on its way.
    answered: Answered,
    /// The turn's reasoning summary setting and output schema.
    output: OutputOptions,
    /// The followers that get the turn's notifications, as of a version of the thread's
    /// subscribers (refreshed when it changes).
    audience: Mutex<(u64, Audience)>,
    /// Set for a review turn: see [`review_mode`].
    review: Option<ReviewMode>,
    /// Settings changes `turn/settings/update` left for the next model call.
    live: Arc<crate::thread_settings::LiveTurn>,
    /// When the turn began (reset once its `turn/start` answer is out).
    clock: Instant,
    /// What the supervisor knows of the turn (see [`super::job`]): a turn whose task ends
    /// without settling it is settled from there as failed.
    job: Arc<JobLedger>,
    /// The turn's lifecycle hooks (see [`hook_points`]).
    hooks: hook_points::TurnHooks,
    /// Whether `model/rerouted` was sent for the turn (once per turn; see [`notices`]).
    rerouted: bool,
    /// What the turn reports to operations (see [`telemetry`]).
    telemetry: telemetry::TurnTelemetry,
}

/// What a turn reads from its thread's configuration before its first model call.
struct Setup {
    /// The entries before the conversation: the developer instructions and the project docs
    /// of the thread's `cwd` (see [`super::instructions`]).
    context: Vec<HistoryEntry>,
    /// Whether the turn tells the model its environment (`include_environment_context`,
    /// default true).
    environment: bool,
    /// Whether the prompt may be logged (`[otel] log_user_prompt`, default false).
    log_user_prompt: bool,
    /// Which of the engine's own tools the thread offers (`[features]`, with the thread's
    /// own `config` overrides).
    builtins: BuiltinTools,
}

/// What a turn starts from: its thread, how it runs, and what came before it.
pub(super) struct TurnStart {
    pub thread_id: String,
    pub turn: Turn,
    /// The thread's settings, after the turn's overrides.
    pub settings: ThreadSettings,
    /// The conversation of the earlier turns.
    pub history: Vec<HistoryEntry>,
    /// Settles once the `turn/start` answer is on its way: the turn's notifications follow it.
    pub answered: Answered,
    /// The turn's reasoning summary setting and output schema (`summary`, `outputSchema`).
    pub output: OutputOptions,
    /// Set for a review turn (`review/start`).
    pub review: Option<ReviewMode>,
}

/// How `turn/interrupt`, `turn/steer` and `turn/settings/update` reach a running turn.
pub(super) struct Controls {
    pub interrupt: oneshot::Receiver<()>,
    pub steer: mpsc::Receiver<Steer>,
    pub live: Arc<crate::thread_settings::LiveTurn>,
}

impl TurnRun {
    pub(super) fn new(turns: Arc<Turns>, peer: Peer, start: TurnStart, controls: Controls) -> Self {
        let telemetry = telemetry::TurnTelemetry::new(&start.thread_id, &start.turn.id);
        let (start_thread, start_turn) = (start.thread_id.clone(), start.turn.clone());
        Self {
            turns,
            peer,
            thread_id: start.thread_id,
            turn: start.turn,
            interrupt: controls.interrupt,
            steer: controls.steer,
            pending: VecDeque::new(),
            history: start.history,
            context: Vec::new(),
            environment: true,
            builtins: BuiltinTools::default(),
            diff: Some(TurnDiff::new(std::path::Path::new(&start.settings.cwd))),
            settings: start.settings,
            answered: start.answered,
            output: start.output,
            audience: Mutex::new((u64::MAX, Audience::default())),
            review: start.review,
            live: controls.live,
            clock: Instant::now(),
            job: JobLedger::new(JobKind::Turn, &start_thread, &start_turn),
            hooks: hook_points::TurnHooks::default(),
            rerouted: false,
            telemetry,
        }
    }

    /// What the supervisor knows of the turn (see [`super::job`]).
    pub(super) fn ledger(&self) -> Arc<JobLedger> {
        self.job.clone()
    }

    /// Runs the turn on `input` to its end.
    pub(super) async fn run(mut self, mut input: Steer) {
        // The `turn/start` answer goes out first.
        self.answered.wait().await;
        self.clock = Instant::now();
        self.begin().await;
        self.warn_if_unknown_model();
        self.turn.items_view = TurnItemsView::Full;
        let setup = self.setup().await;
        (self.context, self.environment, self.builtins) =
            (setup.context, setup.environment, setup.builtins);
        self.telemetry.started(
            (&self.thread_id, &self.turn.id),
            &self.settings,
            &input.input,
            setup.log_user_prompt,
        );
        self.offer_skills().await;
        let mut steered = false;
        let mut calls = 0;
        // Set when a `Stop` hook sent the turn back to the model (see [`hook_points`]).
        let mut resumed_by_hook = false;
        let end = 'turn: loop {
            if let Some(end) = self.compact_if_due().await {
                break 'turn end;
            }
            if !std::mem::take(&mut resumed_by_hook) {
                // Before the turn's input; again before steered input only when a compaction
                // took the block out of the conversation.
                self.tell_environment();
                if let Some(end) = self.prompt_hooks(&input.input).await {
                    break 'turn end;
                }
                self.open_input(&input).await;
                self.history.push(HistoryEntry::User {
                    content: input.input.clone(),
                });
                self.skill_mentions(&input.input).await;
            }
            // Model calls until the model stops calling tools.
            loop {
                calls += 1;
                if calls > MAX_MODEL_CALLS {
                    break 'turn CallEnd::Failed(turn_error(
                        &format!(
                            "The model kept calling tools: the turn stopped after {MAX_MODEL_CALLS} model calls."
                        ),
                        None,
                        None,
                    ));
                }
                self.live.apply(&mut self.settings, &mut self.output);
                let request = ModelRequest {
                    provider: self.settings.model_provider.clone(),
                    model: self.settings.model.clone(),
                    effort: self.settings.reasoning_effort.clone(),
                    instructions: base_instructions(self.settings.base_instructions.as_deref()),
                    history: self.context.iter().chain(&self.history).cloned().collect(),
                    steered,
                    output: self.output.clone(),
                    mcp_tools: self.mcp_tools().await,
                    client_tools: self.client_tools(),
                    builtins: self.builtins,
                };
                match self.call(request).await {
                    CallEnd::Done(tool_calls) if tool_calls.is_empty() => break,
                    CallEnd::Done(tool_calls) => {
                        if let Some(end) = self.run_tools(tool_calls).await {
                            break 'turn end;
                        }
                        steered = false;
                        if let Some(end) = self.compact_if_due().await {
                            break 'turn end;
                        }
                    }
                    other => break 'turn other,
                }
            }
            let next = match self.pending.pop_front() {
                Some(next) => Some(next),
                None => self.turns.next_steer(&self.thread_id, &mut self.steer),
            };
            match next {
                Some(next) => {
                    input = next;
                    steered = true;
                }
                None if self.stop_hooks_continue().await => resumed_by_hook = true,
                None => break CallEnd::Done(Vec::new()),
            }
        };
        self.settle(end).await;
    }

    /// One model call, streamed into items.
    async fn call(&mut self, request: ModelRequest) -> CallEnd {
        let asked = request.model.clone();
        let mut model_call = self.telemetry.model_call(
            (&self.thread_id, &self.turn.id),
            &request.provider,
            &request.model,
        );
        let mut events = self.turns.provider.stream(request);
        let mut open: Option<OpenItem> = None;
        let mut text = String::new();
        let mut tool_calls: Vec<ToolCall> = Vec::new();
        let end = loop {
            let next = tokio::select! {
                biased;
                _ = &mut self.interrupt => Next::Interrupt,
                Some(steer) = self.steer.recv() => Next::Steer(steer),
                event = events.recv() => Next::Event(event),
            };
            let event = match next {
                Next::Interrupt => break CallEnd::Interrupted,
                Next::Steer(steer) => {
                    self.pending.push_back(steer);
                    continue;
                }
                Next::Event(None) => {
                    model_call.failed(&self.thread_id, &self.turn.id, "stream_ended");
                    break CallEnd::Failed(turn_error(
                        "The model stream ended before the response was complete.",
                        None,
                        None,
                    ));
                }
                Next::Event(Some(event)) => {
                    model_call.streamed();
                    event
                }
            };
            match event {
                ProviderEvent::TextDelta(delta) => {
                    text.push_str(&delta);
                    self.text_delta(&mut open, delta).await;
                }
                ProviderEvent::ToolCall(call) => tool_calls.push(call),
                ProviderEvent::ReasoningDelta { raw, index, delta } => {
                    self.reasoning_delta(&mut open, raw, index, delta).await;
                }
                ProviderEvent::ReasoningSectionAdded { index } => {
                    self.summary_part_added(&mut open, index).await;
                }
                ProviderEvent::ItemDone => self.close(open.take()).await,
                ProviderEvent::Notice(notice) => self.provider_notice(notice, &asked),
                ProviderEvent::Done {
                    usage,
                    model_context_window,
                } => {
                    self.close(open.take()).await;
                    model_call.usage(&usage);
                    self.telemetry.usage(&usage);
                    self.report_usage(usage, model_context_window);
                    break CallEnd::Done(std::mem::take(&mut tool_calls));
                }
                ProviderEvent::Error {
                    message,
                    details,
                    info,
                } => {
                    let reason = agentwire_runtime::telemetry::error_reason(info.as_ref());
                    model_call.failed(&self.thread_id, &self.turn.id, &reason);
                    break CallEnd::Failed(turn_error(&message, details, info));
                }
            }
        };
        // Items cut short by an interrupt or an error complete with what they have.
        self.close(open.take()).await;
        // The results of the tool calls follow, once the tools ran.
        let tool_calls = match &end {
            CallEnd::Done(calls) => calls.clone(),
            _ => Vec::new(),
        };
        self.history
            .push(HistoryEntry::Assistant { text, tool_calls });
        end
    }

    async fn text_delta(&mut self, open: &mut Option<OpenItem>, delta: String) {
        if !matches!(open, Some(OpenItem::Message { .. })) {
            self.close(open.take()).await;
            let item = OpenItem::Message {
                id: new_id(),
                text: String::new(),
                started_ms: now_ms(),
            };
            self.announce(&item);
            *open = Some(item);
        }
        if let Some(OpenItem::Message { id, text, .. }) = open {
            self.notify::<AgentMessageDelta>(
                &AgentMessageDeltaNotification::builder()
                    .thread_id(self.thread_id.clone())
                    .turn_id(self.turn.id.clone())
                    .item_id(id.clone())
                    .delta(delta.clone())
                    .build(),
            );
            text.push_str(&delta);
        }
    }

    /// Makes the open item a reasoning item (closing another kind, announcing a new one).
    async fn open_reasoning(&mut self, open: &mut Option<OpenItem>) {
        if !matches!(open, Some(OpenItem::Reasoning { .. })) {
            self.close(open.take()).await;
            let item = OpenItem::Reasoning {
                id: new_id(),
                summary: Vec::new(),
                content: Vec::new(),
                started_ms: now_ms(),
            };
            self.announce(&item);
            *open = Some(item);
        }
    }

    /// A new summary section: `item/reasoning/summaryPartAdded`, before the section's text.
    async fn summary_part_added(&mut self, open: &mut Option<OpenItem>, index: i64) {
        self.open_reasoning(open).await;
        let Some(OpenItem::Reasoning { id, summary, .. }) = open else {
            return;
        };
        // A new section may only follow the last one.
        let at = usize::try_from(index).unwrap_or(0).min(summary.len());
        if at == summary.len() {
            summary.push(String::new());
        }
        self.notify::<ReasoningSummaryPartAdded>(
            &ReasoningSummaryPartAddedNotification::builder()
                .thread_id(self.thread_id.clone())
                .turn_id(self.turn.id.clone())
                .item_id(id.clone())
                .summary_index(i64::try_from(at).unwrap_or(0))
                .build(),
        );
    }

    async fn reasoning_delta(
        &mut self,
        open: &mut Option<OpenItem>,
        raw: bool,
        index: i64,
        delta: String,
    ) {
        self.open_reasoning(open).await;
        let Some(OpenItem::Reasoning {
            id,
            summary,
            content,
            ..
        }) = open
        else {
            return;
        };
        let parts = if raw { content } else { summary };
        // A new section or part may only follow the last one.
        let at = usize::try_from(index).unwrap_or(0).min(parts.len());
        if at == parts.len() {
            parts.push(String::new());
        }
        parts[at].push_str(&delta);
        let index = i64::try_from(at).unwrap_or(0);
        if raw {
            self.notify::<ReasoningTextDelta>(
                &ReasoningTextDeltaNotification::builder()
                    .thread_id(self.thread_id.clone())
                    .turn_id(self.turn.id.clone())
                    .item_id(id.clone())
                    .content_index(index)
                    .delta(delta)
                    .build(),
            );
        } else {
            self.notify::<ReasoningSummaryTextDelta>(
                &ReasoningSummaryTextDeltaNotification::builder()
                    .thread_id(self.thread_id.clone())
                    .turn_id(self.turn.id.clone())
                    .item_id(id.clone())
                    .summary_index(index)
                    .delta(delta)
                    .build(),
            );
        }
    }

    /// The followers of the thread now, refreshed if they changed since last asked.
    fn followers(&self) -> std::sync::MutexGuard<'_, (u64, Audience)> {
        let subscribers = &self.turns.threads.subscribers;
        let version = subscribers.version();
        let mut audience = lock(&self.audience);
        if audience.0 != version {
            *audience = (version, subscribers.audience(&self.thread_id));
        }
        audience
    }

    /// The followers of the thread now.
    fn audience(&self) -> Audience {
        self.followers().1.clone()
    }

    /// Sends the notification `M` to every follower of the thread.
    fn notify<M: Notification>(&self, params: &M::Params) {
        self.followers().1.notify::<M>(params);
    }

    /// Sends `item/started` for a new output item.
    fn announce(&self, item: &OpenItem) {
        let (kind, started_ms) = item.snapshot();
        self.started(kind, started_ms);
    }

    /// Sends `item/started` for an item of `kind` that started at `started_ms`.
    fn started(&self, kind: ThreadItemKind, started_ms: i64) {
        self.job.item_started(&kind, started_ms);
        self.notify::<ItemStarted>(&super::job::item_started(
            &self.thread_id,
            &self.turn.id,
            kind,
            started_ms,
        ));
    }

    /// Completes `item` (if any): `item/completed`, the rollout, the turn's items.
    async fn close(&mut self, item: Option<OpenItem>) {
        if let Some(item) = item {
            let (kind, started_ms) = item.snapshot();
            self.complete(kind, started_ms).await;
        }
    }

    async fn complete(&mut self, kind: ThreadItemKind, started_ms: i64) {
        let completed_ms = now_ms().max(started_ms);
        let item = ThreadItem::builder()
            .kind(kind)
            .started_at_ms(started_ms)
            .completed_at_ms(completed_ms)
            .build();
        durable(
            "item completed",
            self.turns
                .threads
                .record_item_completed(&self.thread_id, &self.turn.id, &item),
        )
        .await;
        self.notify::<ItemCompleted>(
            &ItemCompletedNotification::builder()
                .thread_id(self.thread_id.clone())
                .turn_id(self.turn.id.clone())
                .item(item.clone())
                .completed_at_ms(completed_ms)
                .build(),
        );
        self.telemetry.item((&self.thread_id, &self.turn.id), &item);
        self.job.item_completed(&item);
        self.turn.items.push(item);
    }

    /// The user message item of `input`: started and completed at once.
    async fn user_message(&mut self, input: &Steer) {
        let kind = ThreadItemKind::user_message()
            .id(new_id())
            .content(input.input.clone())
            .maybe_client_id(input.client_id.clone())
            .build();
        let started_ms = now_ms();
        self.started(kind.clone(), started_ms);
        self.complete(kind, started_ms).await;
    }

    /// What the turn reads before its first model call (see [`Setup`]). The docs and the
    /// configuration are read on the blocking pool, not on the turn's worker.
    async fn setup(&self) -> Setup {
        let config = self.turns.config.clone();
        let cwd = self.settings.cwd.clone();
        let overrides = self.settings.config.clone();
        let developer = self.settings.developer_instructions.clone();
        let read = tokio::task::spawn_blocking(move || {
            let effective = config.effective(Some(std::path::Path::new(&cwd)));
            let max_bytes = effective
                .file
                .project_doc_max_bytes
                .unwrap_or(DEFAULT_PROJECT_DOC_MAX_BYTES);
            Setup {
                context: context_entries(&cwd, developer.as_deref(), max_bytes),
                environment: effective.file.include_environment_context.unwrap_or(true),
                log_user_prompt: effective.file.otel.log_user_prompt.unwrap_or(false),
                builtins: crate::features::builtin_tools(&with_overrides(
                    &effective.merged,
                    Some(&overrides),
                )),
            }
        });
        match read.await {
            Ok(read) => read,
            // A panic there is the turn's own (its supervisor settles it as failed).
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            // Cancelled: the runtime is shutting down, and the turn with it.
            Err(_) => Setup {
                context: Vec::new(),
                environment: true,
                log_user_prompt: false,
                builtins: BuiltinTools::default(),
            },
        }
    }

    /// Adds the environment context block (see [`environment`]) to the conversation, before
    /// the turn's input, unless the newest block the conversation holds says the same.
    fn tell_environment(&mut self) {
        if !self.environment {
            return;
        }
        let block = environment::block(&self.settings, &environment::today());
        if environment::latest(&self.history) == Some(block.as_str()) {
            return;
        }
        if let Err(error) = self.turns.threads.record_environment_block(
            &self.thread_id,
            &self.turn.id,
            block.clone(),
        ) {
            tracing::warn!(%error, "environment context block not recorded");
        }
        self.history.push(HistoryEntry::Context { text: block });
    }

    /// Adds a model call's tokens to the thread's totals (recorded in its rollout) and sends
    /// them.
    fn report_usage(&self, last: TokenUsageBreakdown, model_context_window: Option<i64>) {
        let model_context_window = self.context_window(model_context_window);
        let usage = match self.turns.threads.record_token_usage(
            &self.thread_id,
            &self.turn.id,
            last.clone(),
            model_context_window,
        ) {
            Ok(usage) => usage,
            Err(error) => {
                tracing::warn!(%error, "token usage not recorded");
                let total = self
                    .turns
                    .threads
                    .token_usage(&self.thread_id)
                    .map_or_else(|| last.clone(), |t| t.usage.total);
                ThreadTokenUsage::builder()
                    .total(total)
                    .last(last)
                    .maybe_model_context_window(model_context_window)
                    .build()
            }
        };
        self.send_usage(usage);
    }

    /// Sends the thread's token totals as they stand (zero before any model call counted).
    fn resend_usage(&self) {
        self.send_usage(self.turns.token_totals(&self.thread_id));
    }

    fn send_usage(&self, token_usage: ThreadTokenUsage) {
        self.notify::<ThreadTokenUsageUpdated>(
            &ThreadTokenUsageUpdatedNotification::builder()
                .thread_id(self.thread_id.clone())
                .turn_id(self.turn.id.clone())
                .token_usage(token_usage)
                .build(),
        );
    }

    /// Marks the thread as waiting for an approval (`waiting`) or not, with
    /// `thread/status/changed` to every connection.
    fn waiting_on_approval(&self, waiting: bool) {
        let active_flags = if waiting {
            vec![ThreadActiveFlag::WaitingOnApproval]
        } else {
            Vec::new()
        };
        self.set_status(ThreadStatus::active().active_flags(active_flags).build());
    }

    fn set_status(&self, status: ThreadStatus) {
        logged(
            "thread status",
            self.turns
                .threads
                .set_status(self.peer.hub(), &self.thread_id, status),
        );
    }

    /// Starts the turn: the thread active, its start time, the rollout record and
    /// `turn/started` (see [`Turns::begin_job`]).
    async fn begin(&mut self) {
        let turns = self.turns.clone();
        turns
            .begin_job(self.peer.hub(), &self.job, &mut self.turn)
            .await;
    }

    /// Ends the turn (once): records it, idles the thread and sends `turn/completed` (see
    /// [`Turns::settle_job`]).
    async fn settle(&mut self, end: CallEnd) {
        if self.job.is_settled() {
            return;
        }
        self.exit_review().await;
        let (status, error) = match end {
            CallEnd::Done(_) => (TurnStatus::Completed, None),
            CallEnd::Interrupted => (TurnStatus::Interrupted, None),
            CallEnd::Failed(error) => (TurnStatus::Failed, Some(error)),
        };
        self.telemetry.ended(
            (&self.thread_id, &self.turn.id),
            &status,
            self.clock.elapsed(),
        );
        // A completed turn's last model call sent the totals; the others end without one.
        if status != TurnStatus::Completed {
            self.resend_usage();
        }
        // Like the reference server, `turn/completed` carries the summary view: the final agent
        // message. `thread/read` has every item.
        let last_message = self
            .turn
            .items
            .iter()
            .rev()
            .find(|i| matches!(i.kind, ThreadItemKind::AgentMessage { .. }))
            .cloned();
        let turns = self.turns.clone();
        turns
            .settle_job(
                self.peer.hub(),
                &self.job,
                &mut self.turn,
                (status, error),
                self.clock,
                (last_message.into_iter().collect(), false),
            )
            .await;
    }
}

impl OpenItem {
    /// The item's kind as it stands, and when it started.
    fn snapshot(&self) -> (ThreadItemKind, i64) {
        match self {
            OpenItem::Message {
                id,
                text,
                started_ms,
            } => (
                ThreadItemKind::agent_message()
                    .id(id.clone())
                    .text(text.clone())
                    .build(),
                *started_ms,
            ),
            OpenItem::Reasoning {
                id,
                summary,
                content,
                started_ms,
            } => (
                ThreadItemKind::reasoning()
                    .id(id.clone())
                    .summary(summary.clone())
                    .content(content.clone())
                    .build(),
                *started_ms,
            ),
        }
    }
}

fn turn_error(message: &str, details: Option<String>, info: Option<CodexErrorInfo>) -> TurnError {
    TurnError::builder()
        .message(message.to_owned())
        .maybe_codex_error_info(info)
        .maybe_additional_details(details)
        .build()
}
