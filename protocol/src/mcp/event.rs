//! The `codex/event` notification: a running tool call's event stream.
//!
//! Each notification carries one engine event (`msg`, tagged by `type`, snake_case members) and
//! says which `tools/call` request it belongs to (`_meta.requestId`). The event kinds a turn
//! emits today are typed; any other kind parses as [`CodexEventMsg::Other`] and is kept verbatim,
//! so a newer server never breaks an older host. (The TypeScript unions list the typed kinds only:
//! a catch-all member would widen them to `unknown`. Hosts handle other kinds in a `default`
//! branch.)
//!
//! Optional members are present and `null` when unset, as the server writes them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::RequestId;

/// The params of a `codex/event` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct CodexEventNotificationParams {
    /// Which tool call (and thread) the event belongs to.
    #[serde(rename = "_meta")]
    pub meta: CodexEventMeta,
    /// The id of the engine submission (the turn) that produced the event; empty for events of
    /// the session itself, such as `session_configured`.
    pub id: String,
    /// The event.
    pub msg: CodexEventMsg,
}

/// The `_meta` of a `codex/event` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CodexEventMeta {
    /// The JSON-RPC id of the `tools/call` request the event belongs to.
    pub request_id: RequestId,
    /// The thread the call runs on; absent before the thread exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub thread_id: Option<String>,
}

/// One engine event, tagged by `type`. Kinds not listed here may arrive; they are kept
/// verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CodexEventMsg {
    /// The thread is set up; the first event of a `codex` call.
    SessionConfigured {
        /// The session id (the same as `thread_id`).
        session_id: String,
        /// The thread id; what `codex-reply` takes as `threadId`.
        thread_id: String,
        /// The model the thread uses.
        model: String,
        /// The id of the model provider.
        model_provider_id: String,
        /// The approval policy in effect.
        approval_policy: CodexSessionApprovalPolicy,
        /// Who reviews approval requests (e.g. `user`).
        approvals_reviewer: String,
        /// The file-system and network permissions of the thread's commands, in the engine's own
        /// (unversioned) representation; kept verbatim.
        #[ts(type = "unknown")]
        permission_profile: serde_json::Value,
        /// The thread's working directory.
        cwd: String,
        /// The file the thread is recorded in; `null` for threads that are not recorded.
        #[serde(default)]
        rollout_path: Option<String>,
    },
    /// The MCP servers the engine itself uses have finished starting.
    McpStartupComplete {
        /// Servers that started.
        ready: Vec<String>,
        /// Servers that failed to start, and why.
        failed: Vec<CodexMcpStartupFailure>,
        /// Servers whose start was cancelled.
        cancelled: Vec<String>,
    },
    /// Something the user should know that does not stop the turn.
    Warning {
        /// The warning, for display.
        message: String,
    },
    /// A turn has started.
    TaskStarted {
        /// The turn id.
        turn_id: String,
        /// When the turn started, in seconds since the Unix epoch.
        started_at: i64,
        /// The model's context window in tokens; `null` when unknown.
        #[serde(default)]
        model_context_window: Option<i64>,
        /// The collaboration mode the turn runs in (e.g. `default`).
        collaboration_mode_kind: String,
    },
    /// An item the engine sent to or received from the model, in the model API's own
    /// representation.
    RawResponseItem {
        /// The item, kept verbatim.
        #[ts(type = "unknown")]
        item: serde_json::Value,
    },
    /// A thread item has started.
    ItemStarted {
        /// The thread id.
        thread_id: String,
        /// The turn id.
        turn_id: String,
        /// The item as it starts.
        item: CodexTurnItem,
        /// When it started, in milliseconds since the Unix epoch.
        started_at_ms: i64,
    },
    /// A thread item has completed.
    ItemCompleted {
        /// The thread id.
        thread_id: String,
        /// The turn id.
        turn_id: String,
        /// The item in its final state.
        item: CodexTurnItem,
        /// When it started, in milliseconds since the Unix epoch.
        started_at_ms: i64,
        /// When it completed, in milliseconds since the Unix epoch.
        completed_at_ms: i64,
    },
    /// The user's message of the turn.
    UserMessage {
        /// The message text.
        message: String,
        /// Attached images, as URLs (usually `data:` URLs).
        images: Vec<String>,
        /// Attached images, as paths on the server.
        local_images: Vec<String>,
        /// Attached audio; kept verbatim.
        #[ts(type = "Array<unknown>")]
        audio: Vec<serde_json::Value>,
        /// Attached audio files, by path; kept verbatim.
        #[ts(type = "Array<unknown>")]
        local_audio: Vec<serde_json::Value>,
        /// Ranges of `message` that stand for mentions and other special elements; kept
        /// verbatim.
        #[ts(type = "Array<unknown>")]
        text_elements: Vec<serde_json::Value>,
    },
    /// More text of the agent message being written (legacy stream, without item ids).
    AgentMessageDelta {
        /// The text to append.
        delta: String,
    },
    /// More text of an agent message item.
    AgentMessageContentDelta {
        /// The thread id.
        thread_id: String,
        /// The turn id.
        turn_id: String,
        /// The agent message item the text belongs to.
        item_id: String,
        /// The text to append.
        delta: String,
    },
    /// A complete agent message.
    AgentMessage {
        /// The message text.
        message: String,
        /// What part of the answer the message is; `null` when not said.
        #[serde(default)]
        phase: Option<CodexMessagePhase>,
        /// The memories the message cites; `null` when none. Kept verbatim.
        #[serde(default)]
        #[ts(type = "unknown")]
        memory_citation: Option<serde_json::Value>,
    },
    /// The model has finished one response.
    RawResponseCompleted {
        /// The model API's id of the response.
        response_id: String,
        /// The tokens the response used; `null` when the provider did not say.
        #[serde(default)]
        token_usage: Option<CodexTokenUsage>,
        /// The provider's own usage report; kept verbatim.
        #[serde(default)]
        #[ts(type = "unknown")]
        usage_metadata: Option<serde_json::Value>,
    },
    /// Token usage of the thread, and the account's rate limits.
    TokenCount {
        /// Token usage; `null` before the first response.
        #[serde(default)]
        info: Option<CodexTokenUsageInfo>,
        /// Rate limits; `null` when the provider reports none.
        #[serde(default)]
        rate_limits: Option<CodexRateLimitSnapshot>,
    },
    /// A turn has completed.
    TaskComplete {
        /// The turn id.
        turn_id: String,
        /// The turn's last agent message; `null` when it wrote none.
        #[serde(default)]
        last_agent_message: Option<String>,
        /// When the turn started, in seconds since the Unix epoch.
        started_at: i64,
        /// When the turn completed, in seconds since the Unix epoch.
        completed_at: i64,
        /// How long the turn took, in milliseconds.
        duration_ms: i64,
        /// Milliseconds from the start of the turn to the model's first token; `null` when no
        /// token arrived.
        #[serde(default)]
        time_to_first_token_ms: Option<i64>,
    },
    /// An event of a kind not typed here (or not in this shape), kept verbatim.
    #[serde(untagged)]
    #[ts(skip)]
    Other(serde_json::Value),
}

/// The approval policy a session reports in `session_configured`.
///
/// A session may run under any policy of the engine, not only the two a `codex` call can ask
/// for; policies this version does not know are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
pub enum CodexSessionApprovalPolicy {
    /// Ask before any command that is not known to be safe.
    Untrusted,
    /// Ask only when a command fails in the sandbox.
    OnFailure,
    /// The model decides when to ask.
    OnRequest,
    /// Never ask.
    Never,
    /// Another policy (e.g. a granular one, an object), kept verbatim.
    #[serde(untagged)]
    #[ts(skip)]
    Other(serde_json::Value),
}

/// An MCP server the engine failed to start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct CodexMcpStartupFailure {
    /// The server's name in the configuration.
    pub server: String,
    /// Why it failed.
    pub error: String,
}

/// A thread item in an `item_started` / `item_completed` event, tagged by `type`. Kinds not
/// listed here may arrive; they are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type")]
pub enum CodexTurnItem {
    /// The user's input.
    UserMessage {
        /// The item id.
        id: String,
        /// The input, in order.
        content: Vec<CodexUserInput>,
    },
    /// A message of the agent.
    AgentMessage {
        /// The item id.
        id: String,
        /// The message, in parts.
        content: Vec<CodexAgentMessageContent>,
    },
    /// Another kind of item (reasoning, command, web search …), kept verbatim.
    #[serde(untagged)]
    #[ts(skip)]
    Other(serde_json::Value),
}

/// One piece of user input in a `UserMessage` item, tagged by `type`. Kinds not listed here may
/// arrive; they are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CodexUserInput {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Ranges of `text` that stand for mentions and other special elements; kept verbatim.
        #[ts(type = "Array<unknown>")]
        text_elements: Vec<serde_json::Value>,
    },
    /// Another kind of input (image, skill, mention …), kept verbatim.
    #[serde(untagged)]
    #[ts(skip)]
    Other(serde_json::Value),
}

/// One part of an `AgentMessage` item, tagged by `type`. Kinds not listed here may arrive; they
/// are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type")]
pub enum CodexAgentMessageContent {
    /// Text.
    Text {
        /// The text (empty in `item_started`; the deltas fill it in).
        text: String,
    },
    /// Another kind of part, kept verbatim.
    #[serde(untagged)]
    #[ts(skip)]
    Other(serde_json::Value),
}

/// What part of the answer an agent message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = super::plain_string_enum)]
pub enum CodexMessagePhase {
    /// Commentary while the agent works.
    Commentary,
    /// Part of the final answer, more to come.
    PartialAnswer,
    /// The final answer.
    FinalAnswer,
}

/// Token counts of one response, or summed over a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
pub struct CodexTokenUsage {
    /// Input tokens, cached ones included.
    pub input_tokens: i64,
    /// Input tokens served from the provider's cache.
    pub cached_input_tokens: i64,
    /// Input tokens written to the provider's cache.
    pub cache_write_input_tokens: i64,
    /// Output tokens, reasoning ones included.
    pub output_tokens: i64,
    /// Output tokens spent on reasoning.
    pub reasoning_output_tokens: i64,
    /// All tokens.
    pub total_tokens: i64,
}

/// The token usage a `token_count` event reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct CodexTokenUsageInfo {
    /// Summed over the whole thread.
    pub total_token_usage: CodexTokenUsage,
    /// Of the last response.
    pub last_token_usage: CodexTokenUsage,
    /// The model's context window in tokens; `null` when unknown.
    #[serde(default)]
    pub model_context_window: Option<i64>,
}

/// The account's rate limits as a `token_count` event reports them.
///
/// Only the limit's identity is typed; the windows, credits and flags are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct CodexRateLimitSnapshot {
    /// Which limit this is (e.g. `codex`); `null` when not said.
    #[serde(default)]
    pub limit_id: Option<String>,
    /// The limit's display name; `null` when not said.
    #[serde(default)]
    pub limit_name: Option<String>,
    /// The short window; `null` when there is none.
    #[serde(default)]
    #[ts(type = "unknown")]
    pub primary: Option<serde_json::Value>,
    /// The long window; `null` when there is none.
    #[serde(default)]
    #[ts(type = "unknown")]
    pub secondary: Option<serde_json::Value>,
    /// The account's credits; `null` when not reported.
    #[serde(default)]
    #[ts(type = "unknown")]
    pub credits: Option<serde_json::Value>,
    /// The user's own limit within a shared plan; `null` when not reported.
    #[serde(default)]
    #[ts(type = "unknown")]
    pub individual_limit: Option<serde_json::Value>,
    /// Whether a spend control has been reached; `null` when not reported.
    #[serde(default)]
    #[ts(type = "unknown")]
    pub spend_control_reached: Option<serde_json::Value>,
    /// The account's plan; `null` when not reported.
    #[serde(default)]
    #[ts(type = "unknown")]
    pub plan_type: Option<serde_json::Value>,
    /// Which limit was reached; `null` when none was.
    #[serde(default)]
    #[ts(type = "unknown")]
    pub rate_limit_reached_type: Option<serde_json::Value>,
}
