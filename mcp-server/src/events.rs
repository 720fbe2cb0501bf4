//! From the app-server notifications of one turn to the `codex/event` messages an MCP host
//! reads.
//!
//! Typed kinds (`task_started`, `item_started`, `agent_message_content_delta`, `token_count`,
//! `task_complete` …) take the shapes of `agentwire_protocol::mcp::CodexEventMsg`. Items of other
//! kinds (commands, file changes, reasoning) are passed on verbatim, in the app-server's own item
//! shape, inside `item_started` / `item_completed`.

use std::collections::HashMap;

use agentwire_protocol::mcp::{
    CodexAgentMessageContent, CodexEventMsg, CodexMessagePhase, CodexSessionApprovalPolicy,
    CodexTokenUsage, CodexTokenUsageInfo, CodexTurnItem, CodexUserInput,
};
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    AgentMessageDelta, ErrorEvent, ItemCompleted, ItemStarted, ReasoningSummaryTextDelta,
    ThreadTokenUsageUpdated, TurnCompleted, TurnStarted, Warning,
};
use agentwire_protocol::{
    AgentMessageDeltaNotification, ErrorNotification, FileUpdateChange, ItemCompletedNotification,
    ItemStartedNotification, MessagePhase, ReasoningSummaryTextDeltaNotification, ThreadItem,
    ThreadItemKind, ThreadStartResponse, ThreadTokenUsageUpdatedNotification, TokenUsageBreakdown,
    Turn, TurnCompletedNotification, TurnStartedNotification, TurnStatus, UserInput,
    WarningNotification,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The `session_configured` event of a new thread.
pub fn session_configured(started: &ThreadStartResponse) -> CodexEventMsg {
    let approval_policy = serde_json::to_value(&started.approval_policy)
        .and_then(serde_json::from_value)
        .unwrap_or(CodexSessionApprovalPolicy::Other(Value::Null));
    let reviewer = serde_json::to_value(started.approvals_reviewer)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    CodexEventMsg::session_configured()
        .session_id(started.thread.session_id.clone())
        .thread_id(started.thread.id.clone())
        .model(started.model.clone())
        .model_provider_id(started.model_provider.clone())
        .approval_policy(approval_policy)
        .approvals_reviewer(reviewer)
        .permission_profile(serde_json::to_value(&started.sandbox).unwrap_or(Value::Null))
        .cwd(started.cwd.0.clone())
        .maybe_rollout_path(started.thread.path.clone())
        .build()
}

/// How a turn ended, as the tool result reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    /// The turn completed; the agent's last message (empty when it wrote none).
    Completed(String),
    /// The turn failed, for this reason.
    Failed(String),
    /// The turn was interrupted (cancelled by the host, or an approval was cancelled).
    Interrupted,
}

/// The state of one turn's translation.
pub struct TurnTranslator {
    turn_id: String,
    last_agent_message: Option<String>,
    file_changes: HashMap<String, Vec<FileUpdateChange>>,
    commands: HashMap<String, String>,
}

fn parse<T: DeserializeOwned>(method: &str, params: Value) -> Option<T> {
    match serde_json::from_value(params) {
        Ok(parsed) => Some(parsed),
        Err(e) => {
            tracing::warn!(method, error = %e, "engine notification not understood; skipped");
            None
        }
    }
}

fn usage(breakdown: &TokenUsageBreakdown) -> CodexTokenUsage {
    CodexTokenUsage::builder()
        .input_tokens(breakdown.input_tokens)
        .cached_input_tokens(breakdown.cached_input_tokens)
        .cache_write_input_tokens(breakdown.cache_write_input_tokens)
        .output_tokens(breakdown.output_tokens)
        .reasoning_output_tokens(breakdown.reasoning_output_tokens)
        .total_tokens(breakdown.total_tokens)
        .build()
}

fn phase(phase: Option<&MessagePhase>) -> Option<CodexMessagePhase> {
    phase.and_then(|phase| match phase {
        MessagePhase::Commentary => Some(CodexMessagePhase::Commentary),
        MessagePhase::PartialAnswer => Some(CodexMessagePhase::PartialAnswer),
        MessagePhase::FinalAnswer => Some(CodexMessagePhase::FinalAnswer),
        _ => None,
    })
}

fn user_inputs(content: &[UserInput]) -> Vec<CodexUserInput> {
    content
        .iter()
        .map(|input| match input {
            UserInput::Text {
                text,
                text_elements,
                ..
            } => CodexUserInput::text()
                .text(text.clone())
                .text_elements(
                    text_elements
                        .iter()
                        .filter_map(|e| serde_json::to_value(e).ok())
                        .collect(),
                )
                .build(),
            other => CodexUserInput::Other(serde_json::to_value(other).unwrap_or(Value::Null)),
        })
        .collect()
}

fn user_text(content: &[UserInput]) -> String {
    content
        .iter()
        .filter_map(|input| match input {
            UserInput::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The item as an MCP host sees it: user and agent messages typed, anything else verbatim.
fn turn_item(item: &ThreadItem, text_so_far: Option<&str>) -> CodexTurnItem {
    match &item.kind {
        ThreadItemKind::UserMessage { id, content, .. } => CodexTurnItem::user_message()
            .id(id.clone())
            .content(user_inputs(content))
            .build(),
        ThreadItemKind::AgentMessage { id, text, .. } => CodexTurnItem::agent_message()
            .id(id.clone())
            .content(vec![
                CodexAgentMessageContent::text()
                    .text(text_so_far.unwrap_or(text).to_owned())
                    .build(),
            ])
            .build(),
        _ => CodexTurnItem::Other(serde_json::to_value(item).unwrap_or(Value::Null)),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl TurnTranslator {
    /// A translator for turn `turn_id`.
    pub fn new(turn_id: String) -> Self {
        Self {
            turn_id,
            last_agent_message: None,
            file_changes: HashMap::new(),
            commands: HashMap::new(),
        }
    }

    /// The turn's id: the `id` of every event it emits.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// The changes of file change item `item_id`, as its `item/started` announced them.
    pub fn file_changes(&self, item_id: &str) -> &[FileUpdateChange] {
        self.file_changes
            .get(item_id)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The command line of command item `item_id`, as its `item/started` announced it.
    pub fn command(&self, item_id: &str) -> Option<&str> {
        self.commands.get(item_id).map(String::as_str)
    }

    /// The events one engine notification stands for, and the turn's outcome when the
    /// notification ends it. Notifications of other turns are skipped.
    pub fn notification(
        &mut self,
        method: &str,
        params: Value,
    ) -> (Vec<CodexEventMsg>, Option<TurnOutcome>) {
        let mine = |turn_id: &str| turn_id == self.turn_id;
        let mut events = Vec::new();
        match method {
            TurnStarted::NAME => {
                if let Some(n) = parse::<TurnStartedNotification>(method, params)
                    && mine(&n.turn.id)
                {
                    events.push(
                        CodexEventMsg::task_started()
                            .turn_id(n.turn.id)
                            .started_at(n.turn.started_at.unwrap_or(now_ms() / 1000))
                            .collaboration_mode_kind("default".to_owned())
                            .build(),
                    );
                }
            }
            ItemStarted::NAME => {
                if let Some(n) = parse::<ItemStartedNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    match &n.item.kind {
                        ThreadItemKind::FileChange { id, changes, .. } => {
                            self.file_changes.insert(id.clone(), changes.clone());
                        }
                        ThreadItemKind::CommandExecution { id, command, .. } => {
                            self.commands.insert(id.clone(), command.clone());
                        }
                        _ => {}
                    }
                    events.push(
                        CodexEventMsg::item_started()
                            .item(turn_item(&n.item, Some("")))
                            .thread_id(n.thread_id)
                            .turn_id(n.turn_id)
                            .started_at_ms(n.started_at_ms)
                            .build(),
                    );
                }
            }
            ItemCompleted::NAME => {
                if let Some(n) = parse::<ItemCompletedNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    self.item_completed(n, &mut events);
                }
            }
            AgentMessageDelta::NAME => {
                if let Some(n) = parse::<AgentMessageDeltaNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    events.push(
                        CodexEventMsg::agent_message_content_delta()
                            .thread_id(n.thread_id)
                            .turn_id(n.turn_id)
                            .item_id(n.item_id)
                            .delta(n.delta)
                            .build(),
                    );
                }
            }
            ReasoningSummaryTextDelta::NAME => {
                if let Some(n) = parse::<ReasoningSummaryTextDeltaNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    events.push(CodexEventMsg::Other(json!({
                        "type": "agent_reasoning_delta",
                        "item_id": n.item_id,
                        "delta": n.delta,
                    })));
                }
            }
            ThreadTokenUsageUpdated::NAME => {
                if let Some(n) = parse::<ThreadTokenUsageUpdatedNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    events.push(
                        CodexEventMsg::token_count()
                            .info(
                                CodexTokenUsageInfo::builder()
                                    .total_token_usage(usage(&n.token_usage.total))
                                    .last_token_usage(usage(&n.token_usage.last))
                                    .maybe_model_context_window(n.token_usage.model_context_window)
                                    .build(),
                            )
                            .build(),
                    );
                }
            }
            Warning::NAME => {
                if let Some(n) = parse::<WarningNotification>(method, params) {
                    events.push(CodexEventMsg::warning().message(n.message).build());
                }
            }
            ErrorEvent::NAME => {
                if let Some(n) = parse::<ErrorNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    let kind = if n.will_retry {
                        "stream_error"
                    } else {
                        "error"
                    };
                    events.push(CodexEventMsg::Other(json!({
                        "type": kind,
                        "message": n.error.message,
                        "additional_details": n.error.additional_details,
                    })));
                }
            }
            TurnCompleted::NAME => {
                if let Some(n) = parse::<TurnCompletedNotification>(method, params)
                    && mine(&n.turn.id)
                {
                    let outcome = self.turn_completed(&n.turn, &mut events);
                    return (events, Some(outcome));
                }
            }
            _ => {}
        }
        (events, None)
    }

    fn item_completed(&mut self, n: ItemCompletedNotification, events: &mut Vec<CodexEventMsg>) {
        let started_at_ms = n.item.started_at_ms.unwrap_or(n.completed_at_ms);
        let follow_up = match &n.item.kind {
            ThreadItemKind::UserMessage { content, .. } => Some(
                CodexEventMsg::user_message()
                    .message(user_text(content))
                    .build(),
            ),
            ThreadItemKind::AgentMessage {
                text,
                phase: message_phase,
                ..
            } => {
                self.last_agent_message = Some(text.clone());
                Some(
                    CodexEventMsg::agent_message()
                        .message(text.clone())
                        .maybe_phase(phase(message_phase.as_ref()))
                        .build(),
                )
            }
            _ => None,
        };
        events.push(
            CodexEventMsg::item_completed()
                .item(turn_item(&n.item, None))
                .thread_id(n.thread_id)
                .turn_id(n.turn_id)
                .started_at_ms(started_at_ms)
                .completed_at_ms(n.completed_at_ms)
                .build(),
        );
        events.extend(follow_up);
    }

    fn turn_completed(&mut self, turn: &Turn, events: &mut Vec<CodexEventMsg>) -> TurnOutcome {
        let last = self.last_agent_message.clone().or_else(|| {
            turn.items.iter().rev().find_map(|item| match &item.kind {
                ThreadItemKind::AgentMessage { text, .. } => Some(text.clone()),
                _ => None,
            })
        });
        match turn.status {
            TurnStatus::Interrupted => {
                events.push(CodexEventMsg::Other(json!({
                    "type": "turn_aborted",
                    "turn_id": turn.id,
                    "reason": "interrupted",
                })));
                TurnOutcome::Interrupted
            }
            // Completed, failed, in progress, or a status this server does not know.
            _ => {
                let completed_at = turn.completed_at.unwrap_or(now_ms() / 1000);
                events.push(
                    CodexEventMsg::task_complete()
                        .turn_id(turn.id.clone())
                        .maybe_last_agent_message(last.clone())
                        .started_at(turn.started_at.unwrap_or(completed_at))
                        .completed_at(completed_at)
                        .duration_ms(turn.duration_ms.unwrap_or(0))
                        .build(),
                );
                if turn.status == TurnStatus::Failed {
                    let reason = turn
                        .error
                        .as_ref()
                        .map(|e| e.message.clone())
                        .unwrap_or_else(|| "the turn failed".to_owned());
                    TurnOutcome::Failed(reason)
                } else {
                    TurnOutcome::Completed(last.unwrap_or_default())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(kind: Value, started: i64) -> Value {
        let mut item = kind;
        item["startedAtMs"] = json!(started);
        item
    }

    #[test]
    fn a_turn_becomes_codex_events_and_an_outcome() {
        let mut translator = TurnTranslator::new("turn-1".to_owned());
        let thread = "thread-1";
        let turn = |status: &str| {
            json!({"id": "turn-1", "status": status, "items": [], "itemsView": "summary",
                   "error": null, "startedAt": 10, "completedAt": 12, "durationMs": 2000})
        };
        let steps = [
            (
                "turn/started",
                json!({"threadId": thread, "turn": turn("inProgress")}),
            ),
            (
                "item/started",
                json!({"threadId": thread, "turnId": "turn-1", "startedAtMs": 5,
                       "item": item(json!({"type": "agentMessage", "id": "m1", "text": ""}), 5)}),
            ),
            (
                "item/agentMessage/delta",
                json!({"threadId": thread, "turnId": "turn-1", "itemId": "m1", "delta": "Hi"}),
            ),
            (
                "item/agentMessage/delta",
                json!({"threadId": thread, "turnId": "other", "itemId": "m9", "delta": "no"}),
            ),
            (
                "item/completed",
                json!({"threadId": thread, "turnId": "turn-1", "completedAtMs": 6,
                       "item": item(json!({"type": "agentMessage", "id": "m1", "text": "Hi",
                                           "phase": "final_answer"}), 5)}),
            ),
        ];
        let mut kinds = Vec::new();
        for (method, params) in steps {
            let (events, outcome) = translator.notification(method, params);
            assert_eq!(outcome, None);
            kinds.extend(
                events
                    .iter()
                    .map(|e| serde_json::to_value(e).expect("serializes")["type"].clone()),
            );
        }
        assert_eq!(
            kinds,
            [
                "task_started",
                "item_started",
                "agent_message_content_delta",
                "item_completed",
                "agent_message"
            ]
        );
        let (events, outcome) = translator.notification(
            "turn/completed",
            json!({"threadId": thread, "turn": turn("completed")}),
        );
        assert_eq!(outcome, Some(TurnOutcome::Completed("Hi".to_owned())));
        let complete = serde_json::to_value(&events[0]).expect("serializes");
        assert_eq!(complete["type"], json!("task_complete"));
        assert_eq!(complete["last_agent_message"], json!("Hi"));
        assert_eq!(complete["duration_ms"], json!(2000));

        let (events, outcome) = translator.notification(
            "turn/completed",
            json!({"threadId": thread, "turn": turn("interrupted")}),
        );
        assert_eq!(outcome, Some(TurnOutcome::Interrupted));
        assert_eq!(
            serde_json::to_value(&events[0]).expect("serializes")["type"],
            json!("turn_aborted")
        );
    }
}
