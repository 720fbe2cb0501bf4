//! Approvals over MCP: the `elicitation/create` requests the server sends while a tool call runs,
//! and the host's answer.
//!
//! An approval request is an ordinary MCP elicitation (`message` plus `requestedSchema`), so any
//! host can show it; the `codex_`-prefixed members identify what is being approved, for hosts
//! that want to render it themselves. The requested schema asks for no fields: the host's
//! `action` alone is the decision.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{
    CommandExecutionApprovalDecision, FileChange, FileChangeApprovalDecision, ParsedCommand,
};

/// The members every MCP `elicitation/create` request has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpElicitationParams {
    /// What the host shows the user: what the agent wants to do, and why if it said.
    pub message: String,
    /// The form the host should show; its answer's `content` must match it.
    pub requested_schema: McpElicitationSchema,
}

/// The form an elicitation asks the host to fill in: a flat object schema.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpElicitationSchema {
    /// Always `object`.
    #[serde(rename = "type")]
    pub kind: McpElicitationSchemaType,
    /// The form's fields, by name: each a JSON Schema of a string, number, boolean or string
    /// enum. Empty for approvals.
    #[builder(default)]
    pub properties: BTreeMap<String, serde_json::Value>,
    /// The fields the user must fill in; absent when none are.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    #[ts(optional)]
    pub required: Option<Vec<String>>,
}

impl McpElicitationSchema {
    /// The schema of a form without fields, as approvals send it.
    pub fn empty() -> Self {
        McpElicitationSchema {
            kind: McpElicitationSchemaType::Object,
            properties: BTreeMap::new(),
            required: None,
        }
    }
}

/// The `type` of an elicitation's requested schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
#[schemars(transform = super::plain_string_enum)]
#[non_exhaustive]
pub enum McpElicitationSchemaType {
    /// A JSON object.
    Object,
}

/// The params of an approval `elicitation/create` request, told apart by `codex_elicitation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "codex_elicitation", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CodexApprovalElicitationParams {
    /// `exec-approval`: the agent wants to run a command.
    ExecApproval(CodexExecApprovalElicitation),
    /// `patch-approval`: the agent wants to change files.
    PatchApproval(CodexPatchApprovalElicitation),
}

/// An approval elicitation for a command. On the wire it is always wrapped in
/// `CodexApprovalElicitationParams`, which adds `codex_elicitation: "exec-approval"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CodexExecApprovalElicitation {
    /// The elicitation proper (`message`, `requestedSchema`).
    #[serde(flatten)]
    pub elicitation: McpElicitationParams,
    /// The JSON-RPC id of the `tools/call` request whose turn asks, written as a string (`"2"`
    /// for the integer id `2`).
    pub codex_mcp_tool_call_id: String,
    /// The id of the event that raised the approval (the `id` of the matching `codex/event`).
    pub codex_event_id: String,
    /// The id of the command call within the turn.
    pub codex_call_id: String,
    /// The command, as program and arguments.
    #[builder(default)]
    pub codex_command: Vec<String>,
    /// The directory the command would run in.
    pub codex_cwd: String,
    /// The command as the server understood it (reads, listings, searches …), for display.
    #[builder(default)]
    pub codex_parsed_cmd: Vec<ParsedCommand>,
}

/// An approval elicitation for a patch. On the wire it is always wrapped in
/// `CodexApprovalElicitationParams`, which adds `codex_elicitation: "patch-approval"`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CodexPatchApprovalElicitation {
    /// The elicitation proper (`message`, `requestedSchema`).
    #[serde(flatten)]
    pub elicitation: McpElicitationParams,
    /// The JSON-RPC id of the `tools/call` request whose turn asks, written as a string (`"2"`
    /// for the integer id `2`).
    pub codex_mcp_tool_call_id: String,
    /// The id of the event that raised the approval (the `id` of the matching `codex/event`).
    pub codex_event_id: String,
    /// The id of the patch call within the turn.
    pub codex_call_id: String,
    /// Why the agent wants the change, when it said; absent otherwise.
    #[serde(default)]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub codex_reason: Option<String>,
    /// A directory the agent asks to be allowed to write in for the rest of the session; absent
    /// when it asks for no more than this patch.
    #[serde(default)]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub codex_grant_root: Option<String>,
    /// The changes, by file path.
    #[builder(default)]
    pub codex_changes: BTreeMap<String, FileChange>,
}

/// The host's answer to an `elicitation/create` request (an MCP elicitation result).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpElicitationResult {
    /// What the user did.
    pub action: McpElicitationAction,
    /// The filled-in form, by field name; only with `accept`, and absent for approvals (their form
    /// has no fields).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    #[ts(optional)]
    pub content: Option<BTreeMap<String, serde_json::Value>>,
}

impl McpElicitationResult {
    /// The decision an answer to an `exec-approval` elicitation stands for.
    pub fn exec_decision(&self) -> CommandExecutionApprovalDecision {
        match self.action {
            McpElicitationAction::Accept => CommandExecutionApprovalDecision::Accept,
            McpElicitationAction::Decline => CommandExecutionApprovalDecision::Decline,
            McpElicitationAction::Cancel => CommandExecutionApprovalDecision::Cancel,
        }
    }

    /// The decision an answer to a `patch-approval` elicitation stands for.
    pub fn patch_decision(&self) -> FileChangeApprovalDecision {
        match self.action {
            McpElicitationAction::Accept => FileChangeApprovalDecision::Accept,
            McpElicitationAction::Decline => FileChangeApprovalDecision::Decline,
            McpElicitationAction::Cancel => FileChangeApprovalDecision::Cancel,
        }
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
#[schemars(transform = super::plain_string_enum)]
#[non_exhaustive]
pub enum McpElicitationAction {
    /// Approved: the command runs, or the patch is applied.
    Accept,
    /// Refused: the agent is told and the turn goes on without it.
    Decline,
    /// Dismissed without deciding: the turn is stopped.
    Cancel,
}
