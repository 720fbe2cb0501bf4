//! `thread/compact/start`: the thread's history summarised by the model, so later model calls
//! see the summary instead of everything before it.
//!
//! It runs as a turn of its own: `thread/status/changed` (active), `turn/started`,
//! `item/started` + `item/completed` of a `contextCompaction` item, `item/started`, the deltas
//! and `item/completed` of an `agentMessage` holding the summary, `thread/compacted`, then
//! `thread/status/changed` (idle) and `turn/completed`, to every follower; all recorded. The
//! model is asked, with the whole conversation so far, to write the summary
//! ([`COMPACTION_PROMPT`]); from then on `history::from_turns` starts the conversation at the
//! last compaction turn, with its summary as the first user message. A failed or interrupted
//! compaction leaves the history as it was (its turn has no summary).

use std::sync::Arc;
use std::time::Instant;

use agentwire_protocol::method::Notification;
use agentwire_protocol::methods::{AgentMessageDelta, ThreadCompacted, ThreadTokenUsageUpdated};
use agentwire_protocol::{
    AgentMessageDeltaNotification, ContextCompactedNotification, ThreadCompactStartParams,
    ThreadCompactStartResponse, ThreadItem, ThreadItemKind, ThreadTokenUsageUpdatedNotification,
    Turn, TurnError, TurnStatus,
};
use agentwire_providers::{HistoryEntry, ModelRequest, ProviderEvent};
use agentwire_runtime::{Peer, RequestContext};
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{SettingsOverrides, ThreadSettings, new_id};
use agentwire_support::timestamps::now_ms;
use tokio::sync::oneshot;

use super::job::{self, JobKind, JobLedger};
use super::{Turns, history};

/// What the model is asked to do with the conversation.
pub(crate) const COMPACTION_PROMPT: &str = "Summarise the conversation so far for your own later use: \
the user's goals and requests, what was done (commands run, files changed, results), decisions \
taken, and what remains to do. Be complete and specific (names, paths, values); write only the \
summary.";

/// A compaction on its way.
struct CompactRun {
    turns: Arc<Turns>,
    thread_id: String,
    turn: Turn,
    settings: ThreadSettings,
    history: Vec<HistoryEntry>,
    interrupt: oneshot::Receiver<()>,
    peer: Peer,
    /// What the supervisor knows of the job (see [`super::job`]).
    job: Arc<JobLedger>,
}

impl Turns {
    /// `thread/compact/start`: starts compacting a loaded thread with nothing running.
    pub(crate) fn compact_start(
        self: &Arc<Self>,
        context: &RequestContext,
        params: ThreadCompactStartParams,
        claim: agentwire_store::Claim,
    ) -> Result<ThreadCompactStartResponse, ThreadError> {
        let thread_id = params.thread_id;
        let settings = self
            .threads
            .update_settings(&thread_id, SettingsOverrides::default())?;
        let mut history = self.threads.with_turns(&thread_id, history::from_turns)?;
        if history.is_empty() {
            return Err(ThreadError::Conflict(format!(
                "thread {thread_id} has no history to compact"
            )));
        }
        history.push(HistoryEntry::user_text(COMPACTION_PROMPT.to_owned()));
        let (turn, interrupt, job) =
            self.claim_job(JobKind::Compaction, &thread_id, claim, &context.peer)?;
        let run = CompactRun {
            turns: self.clone(),
            thread_id,
            turn,
            settings,
            history,
            interrupt,
            peer: context.peer.clone(),
            job: job.clone(),
        };
        self.spawn_job(context, job, run.run());
        Ok(ThreadCompactStartResponse::builder().build())
    }
}

/// How the summary call ended.
enum Outcome {
    /// The summary, this many bytes long.
    Summary(usize),
    /// Boxed: a `TurnError` holds `serde_json::Value`s, whose size depends on how serde_json
    /// is built (`preserve_order`).
    Failed(Box<TurnError>),
    Interrupted,
}

impl CompactRun {
    fn notify<M: Notification>(&self, params: &M::Params) {
        self.turns
            .threads
            .subscribers
            .audience(&self.thread_id)
            .notify::<M>(params);
    }

    /// `item/started` (unless `started` is false) and `item/completed` of `kind`, recorded.
    async fn item(&self, kind: ThreadItemKind, started_ms: i64, started: bool) {
        if started {
            self.turns
                .start_item(&self.job, &self.turn.id, kind.clone(), started_ms);
        }
        let completed_ms = now_ms().max(started_ms);
        let item = ThreadItem::builder()
            .kind(kind)
            .started_at_ms(started_ms)
            .completed_at_ms(completed_ms)
            .build();
        self.turns
            .complete_item(&self.job, &self.turn.id, &item, completed_ms)
            .await;
    }

    /// Streams the summary from the model into an agent message item.
    async fn summarise(&mut self) -> Outcome {
        let request = ModelRequest {
            provider: self.settings.model_provider.clone(),
            model: self.settings.model.clone(),
            effort: self.settings.reasoning_effort.clone(),
            instructions: None,
            history: std::mem::take(&mut self.history),
            steered: false,
            output: agentwire_providers::OutputOptions::default(),
            mcp_tools: Vec::new(),
            client_tools: Vec::new(),
            builtins: agentwire_tools::specs::BuiltinTools::default(),
        };
        let mut events = self.turns.provider.stream(request);
        let message_id = new_id();
        let mut started_ms = None;
        let mut text = String::new();
        loop {
            let event = tokio::select! {
                biased;
                _ = &mut self.interrupt => return Outcome::Interrupted,
                event = events.recv() => event,
            };
            match event {
                Some(ProviderEvent::TextDelta(delta)) => {
                    if started_ms.is_none() {
                        let at = now_ms();
                        started_ms = Some(at);
                        self.turns.start_item(
                            &self.job,
                            &self.turn.id,
                            agent_message(&message_id, ""),
                            at,
                        );
                    }
                    self.notify::<AgentMessageDelta>(
                        &AgentMessageDeltaNotification::builder()
                            .thread_id(self.thread_id.clone())
                            .turn_id(self.turn.id.clone())
                            .item_id(message_id.clone())
                            .delta(delta.clone())
                            .build(),
                    );
                    text.push_str(&delta);
                }
                Some(ProviderEvent::Done { .. }) => break,
                Some(ProviderEvent::Error {
                    message, details, ..
                }) => {
                    return Outcome::Failed(Box::new(
                        TurnError::builder()
                            .message(message)
                            .maybe_additional_details(details)
                            .build(),
                    ));
                }
                // Reasoning and tool calls are not part of a summary.
                Some(_) => {}
                None => {
                    return Outcome::Failed(Box::new(
                        TurnError::builder()
                            .message(
                                "The model stream ended before the summary was complete."
                                    .to_owned(),
                            )
                            .build(),
                    ));
                }
            }
        }
        if text.trim().is_empty() {
            return Outcome::Failed(Box::new(
                TurnError::builder()
                    .message(
                        "The model wrote no summary; the history was left as it was.".to_owned(),
                    )
                    .build(),
            ));
        }
        if let Some(at) = started_ms {
            self.item(agent_message(&message_id, &text), at, false)
                .await;
        }
        Outcome::Summary(text.len())
    }

    async fn run(mut self) {
        let clock = Instant::now();
        let threads = self.turns.threads.clone();
        let turns = self.turns.clone();
        turns
            .begin_job(self.peer.hub(), &self.job, &mut self.turn)
            .await;
        job::fault_point(JobKind::Compaction);
        let outcome = self.summarise().await;
        let (status, error) = match outcome {
            Outcome::Summary(bytes) => {
                // The marker goes after the summary: a turn with both is a compaction.
                self.item(
                    ThreadItemKind::context_compaction().id(new_id()).build(),
                    now_ms(),
                    true,
                )
                .await;
                self.notify::<ThreadCompacted>(
                    &ContextCompactedNotification::builder()
                        .thread_id(self.thread_id.clone())
                        .turn_id(self.turn.id.clone())
                        .build(),
                );
                // The next model call starts from the summary: that is the context size now
                // (so automatic compaction does not fire on the size before).
                let bytes = history::SUMMARY_PREFIX.len() + bytes;
                let estimate = i64::try_from(bytes / 4).unwrap_or(i64::MAX);
                match threads.record_compacted_context(&self.thread_id, &self.turn.id, estimate) {
                    Ok(Some(token_usage)) => self.notify::<ThreadTokenUsageUpdated>(
                        &ThreadTokenUsageUpdatedNotification::builder()
                            .thread_id(self.thread_id.clone())
                            .turn_id(self.turn.id.clone())
                            .token_usage(token_usage)
                            .build(),
                    ),
                    Ok(None) => {}
                    Err(error) => tracing::warn!(%error, "compacted context size not recorded"),
                }
                (TurnStatus::Completed, None)
            }
            Outcome::Failed(error) => (TurnStatus::Failed, Some(*error)),
            Outcome::Interrupted => (TurnStatus::Interrupted, None),
        };
        turns
            .settle_job(
                self.peer.hub(),
                &self.job,
                &mut self.turn,
                (status, error),
                clock,
                (Vec::new(), true),
            )
            .await;
    }
}

fn agent_message(id: &str, text: &str) -> ThreadItemKind {
    ThreadItemKind::agent_message()
        .id(id.to_owned())
        .text(text.to_owned())
        .build()
}
