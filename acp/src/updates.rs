//! The engine's turn notifications and thread items as ACP `session/update`s.
//!
//! | engine                                              | ACP update                        |
//! |-----------------------------------------------------|-----------------------------------|
//! | `item/agentMessage/delta`                           | `agent_message_chunk`             |
//! | `item/reasoning/textDelta`, `…/summaryTextDelta`    | `agent_thought_chunk`             |
//! | `item/started` of a command, file change, MCP call, dynamic tool call | `tool_call` (`in_progress`) |
//! | `item/commandExecution/outputDelta`                 | `tool_call_update` (output so far)|
//! | `item/completed` of a command, file change, MCP call, dynamic tool call | `tool_call_update` (final status) |
//! | `turn/plan/updated`                                 | `plan`                            |
//! | `turn/completed`                                    | the prompt's stop reason          |
//!
//! A command's output is sent as one text block with everything so far (ACP replaces a tool
//! call's content with each update). A file change is one `diff` block per file, with the old
//! text read from disk before the patch applies and the new text computed from the engine's
//! unified diff ([`crate::diff`]); where that cannot be done the diff is sent as text.
//! [`replay`] turns a stored thread's turns into the same updates for `session/load`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionUpdate, StopReason, TextContent, ToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    AgentMessageDelta, CommandExecutionOutputDelta, ErrorEvent, ItemCompleted, ItemStarted,
    ReasoningSummaryTextDelta, ReasoningTextDelta, TurnCompleted, TurnPlanUpdated,
};
use agentwire_protocol::{
    AgentMessageDeltaNotification, CodexErrorInfo, CommandExecutionOutputDeltaNotification,
    CommandExecutionStatus, DynamicToolCallOutputContentItem, DynamicToolCallStatus,
    ErrorNotification, FileUpdateChange, ItemCompletedNotification, ItemStartedNotification,
    McpToolCallStatus, PatchApplyStatus, PatchChangeKind, ReasoningSummaryTextDeltaNotification,
    ReasoningTextDeltaNotification, ThreadItem, ThreadItemKind, Turn, TurnCompletedNotification,
    TurnPlanStepStatus, TurnPlanUpdatedNotification, TurnStatus, UserInput,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// How a turn ended, for the `session/prompt` answer.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
    /// The turn ended with this stop reason.
    Stopped(StopReason),
    /// The turn failed for this reason: the prompt is answered with an error.
    Failed(String),
}

fn text_block(text: impl Into<String>) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

fn text_content(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::from(text_block(text))
}

fn chunk(text: impl Into<String>) -> ContentChunk {
    ContentChunk::new(text_block(text))
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

/// A path (of a file change, or one the model names) as an absolute path: relative ones are
/// under `cwd`.
pub(crate) fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_owned()
    } else {
        cwd.join(path)
    }
}

fn command_status(status: CommandExecutionStatus) -> ToolCallStatus {
    match status {
        CommandExecutionStatus::InProgress => ToolCallStatus::InProgress,
        CommandExecutionStatus::Completed => ToolCallStatus::Completed,
        _ => ToolCallStatus::Failed,
    }
}

fn patch_status(status: PatchApplyStatus) -> ToolCallStatus {
    match status {
        PatchApplyStatus::InProgress => ToolCallStatus::InProgress,
        PatchApplyStatus::Completed => ToolCallStatus::Completed,
        _ => ToolCallStatus::Failed,
    }
}

fn mcp_status(status: McpToolCallStatus) -> ToolCallStatus {
    match status {
        McpToolCallStatus::Completed => ToolCallStatus::Completed,
        McpToolCallStatus::Failed => ToolCallStatus::Failed,
        _ => ToolCallStatus::InProgress,
    }
}

/// The title of a file change: the files it touches.
fn patch_title(changes: &[FileUpdateChange]) -> String {
    let files: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    format!("Edit {}", files.join(", "))
}

/// Where a file change points an editor: each file, at its first changed line.
fn patch_locations(cwd: &Path, changes: &[FileUpdateChange]) -> Vec<ToolCallLocation> {
    changes
        .iter()
        .map(|change| {
            let path = match &change.kind {
                PatchChangeKind::Update {
                    move_path: Some(to),
                    ..
                } => absolute(cwd, to),
                _ => absolute(cwd, &change.path),
            };
            let line = match change.kind {
                PatchChangeKind::Update { .. } => crate::diff::first_line(&change.diff),
                _ => None,
            };
            ToolCallLocation::new(path).line(line)
        })
        .collect()
}

/// One file change as ACP content. `on_disk` says whether the file still holds its text from
/// before the change (so an edit's old text can be read and the new text computed).
fn change_content(cwd: &Path, change: &FileUpdateChange, on_disk: bool) -> ToolCallContent {
    let path = absolute(cwd, &change.path);
    match &change.kind {
        PatchChangeKind::Add => ToolCallContent::Diff(Diff::new(path, change.diff.clone())),
        PatchChangeKind::Delete => {
            ToolCallContent::Diff(Diff::new(path, String::new()).old_text(change.diff.clone()))
        }
        PatchChangeKind::Update { move_path, .. } => {
            let target = move_path
                .as_deref()
                .map_or_else(|| path.clone(), |to| absolute(cwd, to));
            // The file as it is now: before the patch (the diff applies), or, when the patch
            // was applied before this was read, after it (the reversed diff applies).
            let texts = on_disk
                .then(|| std::fs::read_to_string(&path).ok())
                .flatten()
                .and_then(|text| {
                    crate::diff::apply(&text, &change.diff)
                        .map(|new| (text.clone(), new))
                        .or_else(|| {
                            crate::diff::apply(&text, &crate::diff::reverse(&change.diff))
                                .map(|old| (old, text))
                        })
                });
            match texts {
                Some((old, new)) => ToolCallContent::Diff(Diff::new(target, new).old_text(old)),
                None => text_content(format!("```diff\n{}\n```", change.diff.trim_end())),
            }
        }
        _ => text_content(format!("```diff\n{}\n```", change.diff.trim_end())),
    }
}

/// A command's output as a tool call's content.
fn output_content(output: &str) -> Vec<ToolCallContent> {
    if output.is_empty() {
        Vec::new()
    } else {
        vec![text_content(format!("```\n{}\n```", output.trim_end()))]
    }
}

/// The `tool_call` announcing `item`, in the state it is in; `None` for items that are not
/// tool calls. `on_disk`: see [`change_content`].
fn tool_call(cwd: &Path, item: &ThreadItem, on_disk: bool) -> Option<ToolCall> {
    match &item.kind {
        ThreadItemKind::CommandExecution {
            id,
            command,
            cwd: command_cwd,
            status,
            aggregated_output,
            exit_code,
            ..
        } => {
            let mut call = ToolCall::new(id.clone(), command.clone())
                .kind(ToolKind::Execute)
                .status(command_status(*status))
                .raw_input(json!({"command": command, "cwd": command_cwd.0}));
            if *status != CommandExecutionStatus::InProgress {
                let output = aggregated_output.clone().unwrap_or_default();
                call = call
                    .content(output_content(&output))
                    .raw_output(json!({"exitCode": exit_code, "output": output}));
            }
            Some(call)
        }
        ThreadItemKind::FileChange {
            id,
            status,
            changes,
            ..
        } => Some(
            ToolCall::new(id.clone(), patch_title(changes))
                .kind(ToolKind::Edit)
                .status(patch_status(*status))
                .content(
                    changes
                        .iter()
                        .map(|change| change_content(cwd, change, on_disk))
                        .collect(),
                )
                .locations(patch_locations(cwd, changes)),
        ),
        ThreadItemKind::McpToolCall {
            id,
            server,
            tool,
            arguments,
            status,
            result,
            error,
            ..
        } => {
            let mut call = ToolCall::new(id.clone(), format!("{server}: {tool}"))
                .kind(ToolKind::Other)
                .status(mcp_status(*status))
                .raw_input(arguments.clone());
            if let Some(result) = result {
                call = call.raw_output(serde_json::to_value(result).unwrap_or(Value::Null));
            } else if let Some(error) = error {
                call = call.content(vec![text_content(error.message.clone())]);
            }
            Some(call)
        }
        ThreadItemKind::DynamicToolCall {
            id,
            tool,
            namespace,
            arguments,
            status,
            content_items,
            ..
        } => {
            let (kind, title, locations) = match namespace {
                None => crate::client_tools::presentation(cwd, tool, arguments)
                    .unwrap_or_else(|| (ToolKind::Other, tool.clone(), Vec::new())),
                Some(ns) => (ToolKind::Other, format!("{ns}: {tool}"), Vec::new()),
            };
            let mut call = ToolCall::new(id.clone(), title)
                .kind(kind)
                .status(dynamic_status(*status))
                .raw_input(arguments.clone())
                .locations(locations);
            // A finished call shows the text it gave back (replayed by `session/load`).
            if *status != DynamicToolCallStatus::InProgress {
                let texts: Vec<ToolCallContent> = content_items
                    .iter()
                    .flatten()
                    .filter_map(|item| match item {
                        DynamicToolCallOutputContentItem::InputText { text, .. }
                            if kind != ToolKind::Read =>
                        {
                            Some(text_content(text.clone()))
                        }
                        _ => None,
                    })
                    .collect();
                call = call.content(texts);
            }
            Some(call)
        }
        _ => None,
    }
}

fn dynamic_status(status: DynamicToolCallStatus) -> ToolCallStatus {
    match status {
        DynamicToolCallStatus::InProgress => ToolCallStatus::InProgress,
        DynamicToolCallStatus::Completed => ToolCallStatus::Completed,
        _ => ToolCallStatus::Failed,
    }
}

/// A stored thread's turns as the updates that show them again (`session/load`): the user's
/// messages, the agent's messages and reasoning, and every tool call in its final state.
pub fn replay(cwd: &Path, turns: &[Turn]) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    for turn in turns {
        for item in &turn.items {
            match &item.kind {
                ThreadItemKind::UserMessage { content, .. } => {
                    for input in content {
                        match input {
                            UserInput::Text { text, .. } => {
                                updates.push(SessionUpdate::UserMessageChunk(chunk(text.clone())));
                            }
                            UserInput::Image { .. } | UserInput::LocalImage { .. } => {
                                updates.push(SessionUpdate::UserMessageChunk(chunk("[image]")))
                            }
                            _ => {}
                        }
                    }
                }
                ThreadItemKind::AgentMessage { text, .. } if !text.is_empty() => {
                    updates.push(SessionUpdate::AgentMessageChunk(chunk(text.clone())));
                }
                ThreadItemKind::Reasoning {
                    summary, content, ..
                } => {
                    let parts = if summary.is_empty() { content } else { summary };
                    let text = parts.join("\n\n");
                    if !text.is_empty() {
                        updates.push(SessionUpdate::AgentThoughtChunk(chunk(text)));
                    }
                }
                _ => {
                    if let Some(call) = tool_call(cwd, item, false) {
                        updates.push(SessionUpdate::ToolCall(call));
                    }
                }
            }
        }
    }
    updates
}

/// The translation state of one turn.
pub struct TurnTranslator {
    turn_id: String,
    cwd: PathBuf,
    /// Agent message and reasoning items whose text came as deltas.
    streamed: HashSet<String>,
    /// Output of each running command so far.
    outputs: HashMap<String, String>,
    /// The last error the engine reported for the turn without retrying.
    last_error: Option<String>,
}

impl TurnTranslator {
    /// A translator for turn `turn_id` of a session working in `cwd`.
    pub fn new(turn_id: String, cwd: PathBuf) -> Self {
        Self {
            turn_id,
            cwd,
            streamed: HashSet::new(),
            outputs: HashMap::new(),
            last_error: None,
        }
    }

    /// The turn's id.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// The updates one engine notification stands for, and how the turn ended when the
    /// notification ends it. Notifications of other turns are skipped.
    pub fn notification(
        &mut self,
        method: &str,
        params: Value,
    ) -> (Vec<SessionUpdate>, Option<TurnEnd>) {
        let mut updates = Vec::new();
        let mine = |turn_id: &str| turn_id == self.turn_id;
        match method {
            AgentMessageDelta::NAME => {
                if let Some(n) = parse::<AgentMessageDeltaNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    self.streamed.insert(n.item_id);
                    updates.push(SessionUpdate::AgentMessageChunk(chunk(n.delta)));
                }
            }
            ReasoningTextDelta::NAME => {
                if let Some(n) = parse::<ReasoningTextDeltaNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    self.streamed.insert(n.item_id);
                    updates.push(SessionUpdate::AgentThoughtChunk(chunk(n.delta)));
                }
            }
            ReasoningSummaryTextDelta::NAME => {
                if let Some(n) = parse::<ReasoningSummaryTextDeltaNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    self.streamed.insert(n.item_id);
                    updates.push(SessionUpdate::AgentThoughtChunk(chunk(n.delta)));
                }
            }
            CommandExecutionOutputDelta::NAME => {
                if let Some(n) = parse::<CommandExecutionOutputDeltaNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    let output = self.outputs.entry(n.item_id.clone()).or_default();
                    output.push_str(&n.delta);
                    let fields = ToolCallUpdateFields::new().content(output_content(output));
                    updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        n.item_id, fields,
                    )));
                }
            }
            ItemStarted::NAME => {
                if let Some(n) = parse::<ItemStartedNotification>(method, params)
                    && mine(&n.turn_id)
                    && let Some(call) = tool_call(&self.cwd, &n.item, true)
                {
                    updates.push(SessionUpdate::ToolCall(call));
                }
            }
            ItemCompleted::NAME => {
                if let Some(n) = parse::<ItemCompletedNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    self.completed(&n.item, &mut updates);
                }
            }
            TurnPlanUpdated::NAME => {
                if let Some(n) = parse::<TurnPlanUpdatedNotification>(method, params)
                    && mine(&n.turn_id)
                {
                    let entries = n
                        .plan
                        .into_iter()
                        .map(|step| {
                            let status = match step.status {
                                TurnPlanStepStatus::Completed => PlanEntryStatus::Completed,
                                TurnPlanStepStatus::InProgress => PlanEntryStatus::InProgress,
                                _ => PlanEntryStatus::Pending,
                            };
                            PlanEntry::new(step.step, PlanEntryPriority::Medium, status)
                        })
                        .collect();
                    updates.push(SessionUpdate::Plan(Plan::new(entries)));
                }
            }
            ErrorEvent::NAME => {
                if let Some(n) = parse::<ErrorNotification>(method, params)
                    && mine(&n.turn_id)
                    && !n.will_retry
                {
                    self.last_error = Some(n.error.message);
                }
            }
            TurnCompleted::NAME => {
                if let Some(n) = parse::<TurnCompletedNotification>(method, params)
                    && mine(&n.turn.id)
                {
                    return (updates, Some(self.end(&n.turn)));
                }
            }
            _ => {}
        }
        (updates, None)
    }

    fn completed(&mut self, item: &ThreadItem, updates: &mut Vec<SessionUpdate>) {
        match &item.kind {
            ThreadItemKind::AgentMessage { id, text, .. }
                if !self.streamed.contains(id) && !text.is_empty() =>
            {
                updates.push(SessionUpdate::AgentMessageChunk(chunk(text.clone())));
            }
            ThreadItemKind::Reasoning {
                id,
                summary,
                content,
                ..
            } => {
                let parts = if summary.is_empty() { content } else { summary };
                if !self.streamed.contains(id) && !parts.is_empty() {
                    updates.push(SessionUpdate::AgentThoughtChunk(chunk(parts.join("\n\n"))));
                }
            }
            ThreadItemKind::CommandExecution {
                id,
                status,
                aggregated_output,
                exit_code,
                ..
            } => {
                let output = aggregated_output
                    .clone()
                    .or_else(|| self.outputs.remove(id))
                    .unwrap_or_default();
                let fields = ToolCallUpdateFields::new()
                    .status(command_status(*status))
                    .content(output_content(&output))
                    .raw_output(json!({"exitCode": exit_code, "output": output}));
                updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id.clone(),
                    fields,
                )));
            }
            ThreadItemKind::FileChange { id, status, .. } => {
                let fields = ToolCallUpdateFields::new().status(patch_status(*status));
                updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id.clone(),
                    fields,
                )));
            }
            ThreadItemKind::DynamicToolCall { id, status, .. } => {
                // The content was sent while the call ran (crate::turn); only the status is new.
                let fields = ToolCallUpdateFields::new().status(dynamic_status(*status));
                updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id.clone(),
                    fields,
                )));
            }
            ThreadItemKind::McpToolCall { .. } => {
                if let Some(call) = tool_call(&self.cwd, item, false) {
                    let mut fields = ToolCallUpdateFields::new().status(call.status);
                    if !call.content.is_empty() {
                        fields = fields.content(call.content);
                    }
                    if let Some(output) = call.raw_output {
                        fields = fields.raw_output(output);
                    }
                    updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        call.tool_call_id,
                        fields,
                    )));
                }
            }
            _ => {}
        }
    }

    /// How `turn` (completed) ended: completed is `end_turn`, interrupted `cancelled`; a
    /// failure for lack of room (context window, budget) is `max_tokens`, a policy refusal
    /// `refusal`, and any other failure an error.
    fn end(&self, turn: &Turn) -> TurnEnd {
        match turn.status {
            TurnStatus::Completed => TurnEnd::Stopped(StopReason::EndTurn),
            TurnStatus::Interrupted => TurnEnd::Stopped(StopReason::Cancelled),
            _ => {
                let error = turn.error.as_ref();
                match error.and_then(|e| e.codex_error_info.as_ref()) {
                    Some(
                        CodexErrorInfo::ContextWindowExceeded
                        | CodexErrorInfo::SessionBudgetExceeded,
                    ) => TurnEnd::Stopped(StopReason::MaxTokens),
                    Some(
                        CodexErrorInfo::CyberPolicy
                        | CodexErrorInfo::BioPolicy
                        | CodexErrorInfo::MisalignmentPolicyViolation
                        | CodexErrorInfo::InferenceHookDenied,
                    ) => TurnEnd::Stopped(StopReason::Refusal),
                    _ => TurnEnd::Failed(
                        error
                            .map(|e| e.message.clone())
                            .or_else(|| self.last_error.clone())
                            .unwrap_or_else(|| "the turn failed".to_owned()),
                    ),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update_json(update: &SessionUpdate) -> Value {
        serde_json::to_value(update).expect("serialises")
    }

    #[test]
    fn deltas_of_the_turn_become_chunks_and_others_are_skipped() {
        let mut t = TurnTranslator::new("t1".to_owned(), PathBuf::from("/w"));
        let (updates, end) = t.notification(
            AgentMessageDelta::NAME,
            json!({"threadId": "th", "turnId": "t1", "itemId": "m1", "delta": "Hel"}),
        );
        assert_eq!(end, None);
        assert_eq!(
            update_json(&updates[0]),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}})
        );
        let (updates, _) = t.notification(
            AgentMessageDelta::NAME,
            json!({"threadId": "th", "turnId": "other", "itemId": "m1", "delta": "x"}),
        );
        assert!(updates.is_empty());
        let (updates, _) = t.notification(
            ReasoningSummaryTextDelta::NAME,
            json!({"threadId": "th", "turnId": "t1", "itemId": "r1", "summaryIndex": 0, "delta": "hmm"}),
        );
        assert_eq!(
            update_json(&updates[0])["sessionUpdate"],
            "agent_thought_chunk"
        );
    }

    #[test]
    fn turn_ends_map_to_stop_reasons() {
        let t = TurnTranslator::new("t1".to_owned(), PathBuf::from("/w"));
        let turn = |status: &str, error: Value| -> Turn {
            serde_json::from_value(
                json!({"id": "t1", "status": status, "items": [], "error": error}),
            )
            .expect("a turn")
        };
        assert_eq!(
            t.end(&turn("completed", Value::Null)),
            TurnEnd::Stopped(StopReason::EndTurn)
        );
        assert_eq!(
            t.end(&turn("interrupted", Value::Null)),
            TurnEnd::Stopped(StopReason::Cancelled)
        );
        assert_eq!(
            t.end(&turn(
                "failed",
                json!({"message": "full", "codexErrorInfo": "contextWindowExceeded"})
            )),
            TurnEnd::Stopped(StopReason::MaxTokens)
        );
        assert_eq!(
            t.end(&turn(
                "failed",
                json!({"message": "no", "codexErrorInfo": "cyberPolicy"})
            )),
            TurnEnd::Stopped(StopReason::Refusal)
        );
        assert_eq!(
            t.end(&turn("failed", json!({"message": "boom"}))),
            TurnEnd::Failed("boom".to_owned())
        );
    }

    #[test]
    fn an_edit_is_a_diff_with_old_and_new_text() {
        let dir = std::env::temp_dir().join(format!("agentwire-acp-diff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        std::fs::write(dir.join("a.txt"), "one\ntwo\n").expect("write");
        let change: FileUpdateChange = serde_json::from_value(json!({
            "path": "a.txt", "kind": {"type": "update", "move_path": null},
            "diff": "@@ -2 +2 @@\n-two\n+TWO\n"
        }))
        .expect("a change");
        let content = serde_json::to_value(change_content(&dir, &change, true)).expect("json");
        assert_eq!(content["type"], "diff");
        assert_eq!(content["oldText"], "one\ntwo\n");
        assert_eq!(content["newText"], "one\nTWO\n");
        assert_eq!(
            patch_locations(&dir, std::slice::from_ref(&change))[0].line,
            Some(2)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
