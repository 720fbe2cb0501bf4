//! MCP tools in a turn: the tools offered with each model call, and a call of one as an
//! `mcpToolCall` item (`item/started`, `item/mcpToolCall/progress` while the server reports
//! progress, `item/completed` with the server's result or the error).
//!
//! Approval (see [`agentwire_config::McpToolApproval`]): `approve` runs at once; `prompt` asks
//! the client first with `mcpServer/elicitation/request` (a form without fields, `_meta`
//! `codex_approval_kind: "mcp_tool_call"`) unless the approval policy forbids asking (`never`,
//! or `granular` without `mcp_elicitations`), in which case the call is refused; `auto` asks
//! only under the `untrusted` policy, and never for a tool that declares itself read-only.
//! An answer other than `accept` declines; `cancel` also ends the turn.

use std::time::Instant;

use agentwire_config::McpToolApproval;
use agentwire_mcp::{Caller, ModelTool, content};
use agentwire_protocol::methods::{McpServerElicitationRequest, McpToolCallProgress};
use agentwire_protocol::{
    AskForApproval, McpElicitationFormSchema, McpElicitationObjectType, McpServerElicitationAction,
    McpServerElicitationForm, McpServerElicitationRequestParams, McpToolCallError,
    McpToolCallProgressNotification, McpToolCallResult, McpToolCallStatus, ThreadItemKind,
};

use super::{CallEnd, TurnRun, now_ms};

/// How an MCP call ended: the text for the model, and whether the turn must end.
pub(super) type McpOutcome = (String, Option<CallEnd>);

/// What the item records while and after the call runs.
struct Item {
    id: String,
    server: String,
    tool: String,
    arguments: serde_json::Value,
    read_only: Option<bool>,
    started_ms: i64,
}

impl Item {
    fn kind(
        &self,
        status: McpToolCallStatus,
        result: Option<McpToolCallResult>,
        error: Option<String>,
        duration_ms: Option<i64>,
    ) -> ThreadItemKind {
        ThreadItemKind::mcp_tool_call()
            .id(self.id.clone())
            .server(self.server.clone())
            .tool(self.tool.clone())
            .arguments(self.arguments.clone())
            .status(status)
            .maybe_result(result)
            .maybe_error(error.map(|message| McpToolCallError::builder().message(message).build()))
            .maybe_duration_ms(duration_ms)
            .maybe_read_only_hint(self.read_only)
            .build()
    }
}

impl TurnRun {
    /// The MCP tools to offer with the next model call.
    pub(super) async fn mcp_tools(&self) -> Vec<ModelTool> {
        match self.turns.mcp.get() {
            Some(mcp) => {
                mcp.attach(self.peer.hub());
                mcp.model_tools().await
            }
            None => Vec::new(),
        }
    }

    /// The (server, tool) that the function `name` calls, when it is an MCP tool.
    pub(super) fn mcp_target(&self, name: &str) -> Option<(String, String)> {
        self.turns.mcp.get()?.resolve(name)
    }

    /// Whether the approval policy lets the turn ask the user about MCP calls.
    fn may_ask(&self) -> bool {
        match &self.settings.approval_policy {
            AskForApproval::Never => false,
            AskForApproval::Granular {
                mcp_elicitations, ..
            } => *mcp_elicitations,
            _ => true,
        }
    }

    /// Calls `tool` on `server` with the model's `arguments` (JSON text).
    pub(super) async fn mcp_call(
        &mut self,
        server: String,
        tool: String,
        arguments: &str,
    ) -> McpOutcome {
        let Some(mcp) = self.turns.mcp.get().cloned() else {
            return (format!("unknown tool `{server}__{tool}`"), None);
        };
        let parsed = match agentwire_tools::call_arguments(arguments) {
            Ok(value) => value,
            Err(error) => {
                return (
                    format!("invalid arguments for `{tool}` of `{server}`: not JSON: {error}"),
                    None,
                );
            }
        };
        let object = match &parsed {
            serde_json::Value::Object(map) => Some(map.clone()),
            serde_json::Value::Null => None,
            other => {
                return (
                    format!(
                        "invalid arguments for `{tool}` of `{server}`: {other} is not an object"
                    ),
                    None,
                );
            }
        };
        let slot = match mcp.slot(&server) {
            Ok(slot) => slot,
            Err(error) => return (error.to_string(), None),
        };
        let read_only = slot
            .tools()
            .iter()
            .find(|t| t.name == tool.as_str())
            .and_then(|t| t.annotations.as_ref())
            .and_then(|a| a.read_only_hint);
        let item = Item {
            id: agentwire_store::meta::new_id(),
            server: server.clone(),
            tool: tool.clone(),
            arguments: parsed,
            read_only,
            started_ms: now_ms(),
        };
        self.started(
            item.kind(McpToolCallStatus::InProgress, None, None, None),
            item.started_ms,
        );
        let clock = Instant::now();
        let ask = match mcp.approval(&server, &tool) {
            McpToolApproval::Approve => false,
            McpToolApproval::Prompt => true,
            McpToolApproval::Auto => {
                matches!(self.settings.approval_policy, AskForApproval::Untrusted)
                    && read_only != Some(true)
            }
        };
        if ask {
            let refusal = if self.may_ask() {
                self.approve(&item).await
            } else {
                Some((
                    "The approval policy does not allow asking, and this tool needs approval; \
                     it was not run."
                        .to_owned(),
                    None,
                ))
            };
            if let Some((reason, end)) = refusal {
                self.complete(
                    item.kind(
                        McpToolCallStatus::Failed,
                        None,
                        Some(reason.clone()),
                        Some(0),
                    ),
                    item.started_ms,
                )
                .await;
                return (reason, end);
            }
        }
        let caller = Caller {
            peer: self.peer.clone(),
            thread_id: self.thread_id.clone(),
            turn_id: Some(self.turn.id.clone()),
        };
        let audience = self.audience();
        let ids = (
            self.thread_id.clone(),
            self.turn.id.clone(),
            item.id.clone(),
        );
        let mut on_progress = move |message: String| {
            let params = McpToolCallProgressNotification::builder()
                .thread_id(ids.0.clone())
                .turn_id(ids.1.clone())
                .item_id(ids.2.clone())
                .message(message)
                .build();
            audience.notify::<McpToolCallProgress>(&params);
        };
        let call = slot.call_tool(&tool, object, None, caller, &mut on_progress);
        let result = tokio::select! {
            biased;
            _ = &mut self.interrupt => None,
            result = call => Some(result),
        };
        let duration = Some(i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX));
        match result {
            None => {
                self.complete(
                    item.kind(
                        McpToolCallStatus::Failed,
                        None,
                        Some("interrupted".to_owned()),
                        duration,
                    ),
                    item.started_ms,
                )
                .await;
                (
                    "The tool call was interrupted.".to_owned(),
                    Some(CallEnd::Interrupted),
                )
            }
            Some(Err(error)) => {
                let message = error.to_string();
                self.complete(
                    item.kind(
                        McpToolCallStatus::Failed,
                        None,
                        Some(message.clone()),
                        duration,
                    ),
                    item.started_ms,
                )
                .await;
                (format!("The tool call failed: {message}"), None)
            }
            Some(Ok(result)) => {
                let text = content::model_text(&result);
                let status = if result.is_error == Some(true) {
                    McpToolCallStatus::Failed
                } else {
                    McpToolCallStatus::Completed
                };
                let error = (status == McpToolCallStatus::Failed).then(|| text.clone());
                self.complete(
                    item.kind(status, Some(content::item_result(&result)), error, duration),
                    item.started_ms,
                )
                .await;
                // The item keeps the whole result; the model is shown its budget's worth.
                let shown = agentwire_tools::truncate::middle_cut(&text, self.tool_output_bytes());
                (shown, None)
            }
        }
    }

    /// Asks the client whether `item` may run; `None` when it may, else the refusal.
    async fn approve(&mut self, item: &Item) -> Option<McpOutcome> {
        let params = McpServerElicitationRequestParams::builder()
            .thread_id(self.thread_id.clone())
            .turn_id(self.turn.id.clone())
            .server_name(item.server.clone())
            .request(
                McpServerElicitationForm::form()
                    .message(format!(
                        "Allow the `{}` MCP server to run the tool `{}`?",
                        item.server, item.tool
                    ))
                    .requested_schema(
                        McpElicitationFormSchema::builder()
                            .kind(McpElicitationObjectType::Object)
                            .properties(std::collections::BTreeMap::new())
                            .build(),
                    )
                    .meta(serde_json::json!({
                        "codex_approval_kind": "mcp_tool_call",
                        "tool": item.tool,
                        "tool_params": item.arguments,
                    }))
                    .build(),
            )
            .build();
        let peer = self.peer.clone();
        let answer = tokio::select! {
            biased;
            _ = &mut self.interrupt => return Some((
                "The turn was interrupted while waiting for approval.".to_owned(),
                Some(CallEnd::Interrupted),
            )),
            answer = peer.request::<McpServerElicitationRequest>(&params) => answer,
        };
        match answer.map(|a| a.action) {
            Ok(McpServerElicitationAction::Accept) => None,
            Ok(McpServerElicitationAction::Cancel) => Some((
                "The user cancelled this tool call.".to_owned(),
                Some(CallEnd::Interrupted),
            )),
            // Declined, not answered, or an action this server does not know.
            _ => Some(("The user declined this tool call.".to_owned(), None)),
        }
    }
}
