//! Approvals over MCP: the engine's approval requests become `elicitation/create` requests to
//! the host, and the host's answer becomes the engine's decision.
//!
//! The host may answer as an MCP elicitation (`{"action": "accept" | "decline" | "cancel"}`) or
//! as Codex hosts do (`{"decision": "approved" | "approved_for_session" | "denied" | "abort"}`).
//! Anything else (an error, a malformed answer, no answer because the host went away) is a
//! denial.

use std::collections::BTreeMap;

use agentwire_protocol::mcp::{
    CodexApprovalElicitationParams, CodexExecApprovalElicitation, CodexPatchApprovalElicitation,
    McpElicitationAction, McpElicitationParams, McpElicitationResult, McpElicitationSchema,
};
use agentwire_protocol::{
    CommandAction, CommandExecutionApprovalDecision, CommandExecutionRequestApprovalParams,
    ExecCommandApprovalResponse, FileChange, FileChangeApprovalDecision,
    FileChangeRequestApprovalParams, FileUpdateChange, ParsedCommand, PatchChangeKind, RequestId,
    ReviewDecision,
};
use serde_json::{Value, json};

/// What the host decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostDecision {
    /// Go ahead, this time.
    Accept,
    /// Go ahead, and do not ask again for the same thing on this thread.
    AcceptForSession,
    /// Do not; the turn goes on without it.
    Decline,
    /// Do not, and stop the turn.
    Cancel,
}

/// Reads the host's answer; `None` when it is neither form (a denial).
pub fn host_decision(answer: &Value) -> Option<HostDecision> {
    if let Ok(result) = serde_json::from_value::<McpElicitationResult>(answer.clone()) {
        return Some(match result.action {
            McpElicitationAction::Accept => HostDecision::Accept,
            McpElicitationAction::Decline => HostDecision::Decline,
            McpElicitationAction::Cancel => HostDecision::Cancel,
            _ => HostDecision::Decline,
        });
    }
    if let Ok(response) = serde_json::from_value::<ExecCommandApprovalResponse>(answer.clone()) {
        return Some(match response.decision {
            ReviewDecision::Approved | ReviewDecision::ApprovedExecpolicyAmendment { .. } => {
                HostDecision::Accept
            }
            ReviewDecision::ApprovedForSession => HostDecision::AcceptForSession,
            ReviewDecision::Abort => HostDecision::Cancel,
            _ => HostDecision::Decline,
        });
    }
    // Codex 0.153's plain `"denied"` (newer ones carry a rejection text).
    (answer.get("decision") == Some(&json!("denied"))).then_some(HostDecision::Decline)
}

/// The engine's answer to a command approval.
pub fn command_answer(decision: Option<HostDecision>) -> Value {
    let decision = match decision {
        Some(HostDecision::Accept) => CommandExecutionApprovalDecision::Accept,
        Some(HostDecision::AcceptForSession) => CommandExecutionApprovalDecision::AcceptForSession,
        Some(HostDecision::Cancel) => CommandExecutionApprovalDecision::Cancel,
        Some(HostDecision::Decline) | None => CommandExecutionApprovalDecision::Decline,
    };
    json!({ "decision": decision })
}

/// The engine's answer to a file change approval.
pub fn patch_answer(decision: Option<HostDecision>) -> Value {
    let decision = match decision {
        Some(HostDecision::Accept) => FileChangeApprovalDecision::Accept,
        Some(HostDecision::AcceptForSession) => FileChangeApprovalDecision::AcceptForSession,
        Some(HostDecision::Cancel) => FileChangeApprovalDecision::Cancel,
        Some(HostDecision::Decline) | None => FileChangeApprovalDecision::Decline,
    };
    json!({ "decision": decision })
}

/// A request id as the `codex_mcp_tool_call_id` member writes it: the string, or the integer's
/// digits.
fn id_text(id: &RequestId) -> String {
    match id {
        RequestId::String(text) => text.clone(),
        RequestId::Integer(number) => number.to_string(),
    }
}

fn parsed_command(action: &CommandAction) -> ParsedCommand {
    match action {
        CommandAction::Read {
            command,
            name,
            path,
            ..
        } => ParsedCommand::read()
            .cmd(command.clone())
            .name(name.clone())
            .path(path.0.clone())
            .build(),
        CommandAction::ListFiles { command, path, .. } => ParsedCommand::list_files()
            .cmd(command.clone())
            .maybe_path(path.clone())
            .build(),
        CommandAction::Search {
            command,
            query,
            path,
            ..
        } => ParsedCommand::search()
            .cmd(command.clone())
            .maybe_query(query.clone())
            .maybe_path(path.clone())
            .build(),
        CommandAction::Unknown { command, .. } => {
            ParsedCommand::unknown().cmd(command.clone()).build()
        }
        _ => ParsedCommand::unknown().cmd(String::new()).build(),
    }
}

/// A command approval as an MCP elicitation, and the `exec_approval_request` event announcing
/// it. `request_id` is the `tools/call`'s, `event_id` the turn's.
pub fn exec_elicitation(
    params: &CommandExecutionRequestApprovalParams,
    command_line: Option<&str>,
    request_id: &RequestId,
    event_id: &str,
) -> (Value, CodexApprovalElicitationParams) {
    let line = params
        .command
        .clone()
        .or_else(|| command_line.map(str::to_owned))
        .unwrap_or_default();
    let command = vec!["bash".to_owned(), "-c".to_owned(), line.clone()];
    let cwd = params.cwd.as_ref().map(|c| c.0.clone()).unwrap_or_default();
    let parsed: Vec<ParsedCommand> = params
        .command_actions
        .iter()
        .flatten()
        .map(parsed_command)
        .collect();
    let mut message = format!("Allow the agent to run `{line}` in {cwd}?");
    if let Some(reason) = &params.reason {
        message.push_str(&format!(" Reason: {reason}"));
    }
    let event = json!({
        "type": "exec_approval_request",
        "call_id": params.item_id,
        "turn_id": params.turn_id,
        "command": command,
        "cwd": cwd,
        "reason": params.reason,
        "parsed_cmd": parsed,
    });
    let elicitation = CodexApprovalElicitationParams::ExecApproval(
        CodexExecApprovalElicitation::builder()
            .elicitation(consent_form(message))
            .codex_mcp_tool_call_id(id_text(request_id))
            .codex_event_id(event_id.to_owned())
            .codex_call_id(params.item_id.clone())
            .codex_command(command)
            .codex_cwd(cwd)
            .codex_parsed_cmd(parsed)
            .build(),
    );
    (event, elicitation)
}

/// The elicitation an approval asks with: `message` and an empty form (the answer is the action).
fn consent_form(message: String) -> McpElicitationParams {
    McpElicitationParams::builder()
        .message(message)
        .requested_schema(McpElicitationSchema::empty())
        .build()
}

fn file_change(change: &FileUpdateChange) -> FileChange {
    match &change.kind {
        PatchChangeKind::Add => FileChange::add().content(change.diff.clone()).build(),
        PatchChangeKind::Delete => FileChange::delete().content(change.diff.clone()).build(),
        PatchChangeKind::Update { move_path, .. } => FileChange::update()
            .unified_diff(change.diff.clone())
            .maybe_move_path(move_path.clone())
            .build(),
        _ => FileChange::update()
            .unified_diff(change.diff.clone())
            .build(),
    }
}

/// A file change approval as an MCP elicitation, and the `apply_patch_approval_request` event
/// announcing it. `changes` are those of the file change item the request is about.
pub fn patch_elicitation(
    params: &FileChangeRequestApprovalParams,
    changes: &[FileUpdateChange],
    request_id: &RequestId,
    event_id: &str,
) -> (Value, CodexApprovalElicitationParams) {
    let changes: BTreeMap<String, FileChange> = changes
        .iter()
        .map(|change| (change.path.clone(), file_change(change)))
        .collect();
    let files: Vec<&str> = changes.keys().map(String::as_str).collect();
    let mut message = format!("Allow the agent to change {}?", files.join(", "));
    if let Some(reason) = &params.reason {
        message.push_str(&format!(" Reason: {reason}"));
    }
    let event = json!({
        "type": "apply_patch_approval_request",
        "call_id": params.item_id,
        "turn_id": params.turn_id,
        "changes": changes,
        "reason": params.reason,
        "grant_root": params.grant_root,
    });
    let elicitation = CodexApprovalElicitationParams::PatchApproval(
        CodexPatchApprovalElicitation::builder()
            .elicitation(consent_form(message))
            .codex_mcp_tool_call_id(id_text(request_id))
            .codex_event_id(event_id.to_owned())
            .codex_call_id(params.item_id.clone())
            .maybe_codex_reason(params.reason.clone())
            .maybe_codex_grant_root(params.grant_root.clone())
            .codex_changes(changes)
            .build(),
    );
    (event, elicitation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_in_either_form_become_decisions() {
        let cases = [
            (json!({"action": "accept"}), Some(HostDecision::Accept)),
            (
                json!({"action": "decline", "content": {}}),
                Some(HostDecision::Decline),
            ),
            (json!({"action": "cancel"}), Some(HostDecision::Cancel)),
            (json!({"decision": "approved"}), Some(HostDecision::Accept)),
            (
                json!({"decision": "approved_for_session"}),
                Some(HostDecision::AcceptForSession),
            ),
            (json!({"decision": "denied"}), Some(HostDecision::Decline)),
            (json!({"decision": "abort"}), Some(HostDecision::Cancel)),
            (json!({"decision": "maybe"}), None),
            (json!({"action": "perhaps"}), None),
            (json!("accept"), None),
            (Value::Null, None),
        ];
        for (answer, expected) in cases {
            assert_eq!(host_decision(&answer), expected, "{answer}");
        }
        assert_eq!(command_answer(None), json!({"decision": "decline"}));
        assert_eq!(
            patch_answer(Some(HostDecision::AcceptForSession)),
            json!({"decision": "acceptForSession"})
        );
    }
}
