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
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
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
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CodexEventMeta {
    /// The JSON-RPC id of the `tools/call` request the event belongs to.
    pub request_id: RequestId,
    /// The thread the call runs on; absent before the thread exists.
    #[serde(default)]
    #[schemars(with = "String")]
    #[ts(optional)]
    pub thread_id: Option<String>,
}

/// One engine event, tagged by `type`. Kinds not listed here may arrive; they are kept
/// verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(
    clippy::large_enum_variant,
    reason = "a wire type built once per event; its size follows serde_json::Value's, which grows when any crate of the build (the ACP SDK does) turns on `preserve_order`"
)]
#[non_exhaustive]
pub enum CodexEventMsg {
    /// The thread is set up; the first event of a `codex` call.
    #[non_exhaustive]
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
    #[non_exhaustive]
    McpStartupComplete {
        /// Servers that started.
        ready: Vec<String>,
        /// Servers that failed to start, and why.
        failed: Vec<CodexMcpStartupFailure>,
        /// Servers whose start was cancelled.
        cancelled: Vec<String>,
    },
    /// Something the user should know that does not stop the turn.
    #[non_exhaustive]
    Warning {
        /// The warning, for display.
        message: String,
    },
    /// A turn has started.
    #[non_exhaustive]
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
    #[non_exhaustive]
    RawResponseItem {
        /// The item, kept verbatim.
        #[ts(type = "unknown")]
        item: serde_json::Value,
    },
    /// A thread item has started.
    #[non_exhaustive]
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
    #[non_exhaustive]
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
    #[non_exhaustive]
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
    #[non_exhaustive]
    AgentMessageDelta {
        /// The text to append.
        delta: String,
    },
    /// More text of an agent message item.
    #[non_exhaustive]
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
    #[non_exhaustive]
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
    #[non_exhaustive]
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
    #[non_exhaustive]
    TokenCount {
        /// Token usage; `null` before the first response.
        #[serde(default)]
        info: Option<CodexTokenUsageInfo>,
        /// Rate limits; `null` when the provider reports none.
        #[serde(default)]
        rate_limits: Option<CodexRateLimitSnapshot>,
    },
    /// A turn has completed.
    #[non_exhaustive]
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

#[bon::bon]
impl CodexEventMsg {
    /// Starts building [`CodexEventMsg::SessionConfigured`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn session_configured(
        session_id: String,
        thread_id: String,
        model: String,
        model_provider_id: String,
        approval_policy: CodexSessionApprovalPolicy,
        approvals_reviewer: String,
        permission_profile: serde_json::Value,
        cwd: String,
        rollout_path: Option<String>,
    ) -> Self {
        Self::SessionConfigured {
            session_id,
            thread_id,
            model,
            model_provider_id,
            approval_policy,
            approvals_reviewer,
            permission_profile,
            cwd,
            rollout_path,
        }
    }

    /// Starts building [`CodexEventMsg::McpStartupComplete`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn mcp_startup_complete(
        #[builder(default)] ready: Vec<String>,
        #[builder(default)] failed: Vec<CodexMcpStartupFailure>,
        #[builder(default)] cancelled: Vec<String>,
    ) -> Self {
        Self::McpStartupComplete {
            ready,
            failed,
            cancelled,
        }
    }

    /// Starts building [`CodexEventMsg::Warning`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn warning(message: String) -> Self {
        Self::Warning { message }
    }

    /// Starts building [`CodexEventMsg::TaskStarted`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn task_started(
        turn_id: String,
        started_at: i64,
        model_context_window: Option<i64>,
        collaboration_mode_kind: String,
    ) -> Self {
        Self::TaskStarted {
            turn_id,
            started_at,
            model_context_window,
            collaboration_mode_kind,
        }
    }

    /// Starts building [`CodexEventMsg::RawResponseItem`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn raw_response_item(item: serde_json::Value) -> Self {
        Self::RawResponseItem { item }
    }

    /// Starts building [`CodexEventMsg::ItemStarted`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn item_started(
        thread_id: String,
        turn_id: String,
        item: CodexTurnItem,
        started_at_ms: i64,
    ) -> Self {
        Self::ItemStarted {
            thread_id,
            turn_id,
            item,
            started_at_ms,
        }
    }

    /// Starts building [`CodexEventMsg::ItemCompleted`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn item_completed(
        thread_id: String,
        turn_id: String,
        item: CodexTurnItem,
        started_at_ms: i64,
        completed_at_ms: i64,
    ) -> Self {
        Self::ItemCompleted {
            thread_id,
            turn_id,
            item,
            started_at_ms,
            completed_at_ms,
        }
    }

    /// Starts building [`CodexEventMsg::UserMessage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn user_message(
        message: String,
        #[builder(default)] images: Vec<String>,
        #[builder(default)] local_images: Vec<String>,
        #[builder(default)] audio: Vec<serde_json::Value>,
        #[builder(default)] local_audio: Vec<serde_json::Value>,
        #[builder(default)] text_elements: Vec<serde_json::Value>,
    ) -> Self {
        Self::UserMessage {
            message,
            images,
            local_images,
            audio,
            local_audio,
            text_elements,
        }
    }

    /// Starts building [`CodexEventMsg::AgentMessageDelta`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn agent_message_delta(delta: String) -> Self {
        Self::AgentMessageDelta { delta }
    }

    /// Starts building [`CodexEventMsg::AgentMessageContentDelta`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn agent_message_content_delta(
        thread_id: String,
        turn_id: String,
        item_id: String,
        delta: String,
    ) -> Self {
        Self::AgentMessageContentDelta {
            thread_id,
            turn_id,
            item_id,
            delta,
        }
    }

    /// Starts building [`CodexEventMsg::AgentMessage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn agent_message(
        message: String,
        phase: Option<CodexMessagePhase>,
        memory_citation: Option<serde_json::Value>,
    ) -> Self {
        Self::AgentMessage {
            message,
            phase,
            memory_citation,
        }
    }

    /// Starts building [`CodexEventMsg::RawResponseCompleted`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn raw_response_completed(
        response_id: String,
        token_usage: Option<CodexTokenUsage>,
        usage_metadata: Option<serde_json::Value>,
    ) -> Self {
        Self::RawResponseCompleted {
            response_id,
            token_usage,
            usage_metadata,
        }
    }

    /// Starts building [`CodexEventMsg::TokenCount`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn token_count(
        info: Option<CodexTokenUsageInfo>,
        rate_limits: Option<CodexRateLimitSnapshot>,
    ) -> Self {
        Self::TokenCount { info, rate_limits }
    }

    /// Starts building [`CodexEventMsg::TaskComplete`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn task_complete(
        turn_id: String,
        last_agent_message: Option<String>,
        started_at: i64,
        completed_at: i64,
        duration_ms: i64,
        time_to_first_token_ms: Option<i64>,
    ) -> Self {
        Self::TaskComplete {
            turn_id,
            last_agent_message,
            started_at,
            completed_at,
            duration_ms,
            time_to_first_token_ms,
        }
    }
}

/// The approval policy a session reports in `session_configured`.
///
/// A session may run under any policy of the engine, not only the two a `codex` call can ask
/// for; policies this version does not know are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
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
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
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
#[non_exhaustive]
pub enum CodexTurnItem {
    /// The user's input.
    #[non_exhaustive]
    UserMessage {
        /// The item id.
        id: String,
        /// The input, in order.
        content: Vec<CodexUserInput>,
    },
    /// A message of the agent.
    #[non_exhaustive]
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

#[bon::bon]
impl CodexTurnItem {
    /// Starts building [`CodexTurnItem::UserMessage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn user_message(id: String, #[builder(default)] content: Vec<CodexUserInput>) -> Self {
        Self::UserMessage { id, content }
    }

    /// Starts building [`CodexTurnItem::AgentMessage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn agent_message(
        id: String,
        #[builder(default)] content: Vec<CodexAgentMessageContent>,
    ) -> Self {
        Self::AgentMessage { id, content }
    }
}

/// One piece of user input in a `UserMessage` item, tagged by `type`. Kinds not listed here may
/// arrive; they are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CodexUserInput {
    /// Text.
    #[non_exhaustive]
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

#[bon::bon]
impl CodexUserInput {
    /// Starts building [`CodexUserInput::Text`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn text(text: String, #[builder(default)] text_elements: Vec<serde_json::Value>) -> Self {
        Self::Text {
            text,
            text_elements,
        }
    }
}

/// One part of an `AgentMessage` item, tagged by `type`. Kinds not listed here may arrive; they
/// are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum CodexAgentMessageContent {
    /// Text.
    #[non_exhaustive]
    Text {
        /// The text (empty in `item_started`; the deltas fill it in).
        text: String,
    },
    /// Another kind of part, kept verbatim.
    #[serde(untagged)]
    #[ts(skip)]
    Other(serde_json::Value),
}

#[bon::bon]
impl CodexAgentMessageContent {
    /// Starts building [`CodexAgentMessageContent::Text`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn text(text: String) -> Self {
        Self::Text { text }
    }
}

/// What part of the answer an agent message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = super::plain_string_enum)]
#[non_exhaustive]
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
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
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
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
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
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
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
