//! The `arguments` of the two tools' `tools/call` requests.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Arguments of the `codex` tool: start a thread and run its first turn.
///
/// Members are kebab-case; unknown members are rejected. Every member except `prompt` may be
/// left out, and is then absent (never `null`) when the params are written.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CodexToolCallParam {
    /// The first user message of the new thread.
    pub prompt: String,
    /// The model to use instead of the configured default.
    #[serde(default)]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub model: Option<String>,
    /// The thread's working directory; a relative path is taken from the server's own working
    /// directory.
    #[serde(default)]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub cwd: Option<String>,
    /// When the agent has to ask before running a command it generated.
    #[serde(default)]
    #[schemars(with = "CodexApprovalPolicy")]
    #[ts(optional)]
    pub approval_policy: Option<CodexApprovalPolicy>,
    /// How much the agent's commands may touch.
    #[serde(default)]
    #[schemars(with = "CodexSandboxMode")]
    #[ts(optional)]
    pub sandbox: Option<CodexSandboxMode>,
    /// Configuration overrides, by config key (dotted paths allowed), applied over the user's
    /// `config.toml` for this thread only.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    #[ts(optional)]
    pub config: Option<BTreeMap<String, serde_json::Value>>,
    /// System instructions that replace the built-in ones.
    #[serde(default)]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub base_instructions: Option<String>,
    /// Extra instructions, sent to the model as a developer-role message.
    #[serde(default)]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub developer_instructions: Option<String>,
    /// The prompt used to summarise the thread when its history is compacted.
    #[serde(default)]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub compact_prompt: Option<String>,
}

/// The approval policies a `codex` tool call may ask for.
///
/// Only the two policies that make sense for an MCP host are offered: the host either answers
/// approval elicitations or wants none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
#[schemars(transform = super::plain_string_enum)]
#[non_exhaustive]
pub enum CodexApprovalPolicy {
    /// The model decides when to ask; asking sends an approval elicitation to the host.
    OnRequest,
    /// Never ask; commands that the sandbox refuses fail.
    Never,
}

impl From<CodexApprovalPolicy> for crate::AskForApproval {
    fn from(policy: CodexApprovalPolicy) -> Self {
        match policy {
            CodexApprovalPolicy::OnRequest => crate::AskForApproval::OnRequest,
            CodexApprovalPolicy::Never => crate::AskForApproval::Never,
        }
    }
}

/// The sandbox a `codex` tool call runs its commands in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
#[schemars(transform = super::plain_string_enum)]
#[non_exhaustive]
pub enum CodexSandboxMode {
    /// Commands may read files but not write them.
    ReadOnly,
    /// Commands may write inside the working directory (and the configured writable roots).
    WorkspaceWrite,
    /// No sandbox at all.
    DangerFullAccess,
}

impl From<CodexSandboxMode> for crate::SandboxMode {
    fn from(mode: CodexSandboxMode) -> Self {
        match mode {
            CodexSandboxMode::ReadOnly => crate::SandboxMode::ReadOnly,
            CodexSandboxMode::WorkspaceWrite => crate::SandboxMode::WorkspaceWrite,
            CodexSandboxMode::DangerFullAccess => crate::SandboxMode::DangerFullAccess,
        }
    }
}

/// Arguments of the `codex-reply` tool: run another turn on an existing thread.
///
/// The thread is named by `threadId`; older hosts name it by `conversationId` instead, which is
/// accepted in its place. Unknown members are ignored.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CodexReplyToolCallParam {
    /// The next user message.
    pub prompt: String,
    /// The thread to continue, as returned in the `threadId` of an earlier call's output. Needed
    /// unless `conversationId` is given.
    #[serde(default)]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub thread_id: Option<String>,
    /// Deprecated spelling of `threadId`, used only when `threadId` is absent.
    #[serde(default)]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub conversation_id: Option<String>,
}

impl CodexReplyToolCallParam {
    /// The thread to continue: `threadId`, or else the deprecated `conversationId`; `None` when
    /// the host sent neither (an invalid call).
    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id
            .as_deref()
            .or(self.conversation_id.as_deref())
    }
}
