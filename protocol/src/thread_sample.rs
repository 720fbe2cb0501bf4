//! Asking a thread's model one question on the side (`thread/sample`, `thread/sample/cancel`)
//! and counting the approvals a helper outside the server is waiting on
//! (`thread/increment_elicitation`, `thread/decrement_elicitation`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{ReasoningEffort, RequestId, ThreadSource};

/// Params of `thread/sample`: one model call that sees the thread's conversation followed by
/// `prompt`, answered with the model's text. Nothing is added to the thread.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSampleParams {
    /// Whether the thread's newest turn may still be running; when false (the default) it
    /// must have ended.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub allow_in_progress_turn: bool,
    /// Whether to leave the MCP servers' tools out of the call. No tools are offered to a
    /// sample here, so this changes nothing.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub disable_mcp: bool,
    /// Reasoning effort for this call instead of the thread's; `null` keeps the thread's.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub effort: Option<ReasoningEffort>,
    /// The id of the thread's newest turn, as the client knows it; the call is refused when
    /// the thread has moved on since.
    pub expected_turn_id: String,
    /// Whether cancelling the sample stops the model call in flight; `null` for the default
    /// (it does).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub interrupt_on_cancel: Option<bool>,
    /// The question put to the model after the thread's conversation.
    pub prompt: String,
    /// Labels the client attaches to the model request, for its own accounting.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub responsesapi_client_metadata: Option<BTreeMap<String, String>>,
    /// The thread whose conversation the model sees.
    pub thread_id: String,
    /// Analytics label of the feature asking.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread_source: Option<ThreadSource>,
    /// Free-form label of what prompted the sample.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub turn_trigger: Option<String>,
}

/// Result of `thread/sample`: what the model answered, and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSampleResponse {
    /// Input tokens the provider served from its cache; `null` when it did not say.
    #[serde(default)]
    pub cached_input_tokens: Option<i64>,
    /// Input tokens of the call; `null` when the provider did not say.
    #[serde(default)]
    pub input_tokens: Option<i64>,
    /// Output tokens of the call; `null` when the provider did not say.
    #[serde(default)]
    pub output_tokens: Option<i64>,
    /// This server's id for the model response.
    pub response_id: String,
    /// The thread's newest turn when the call was made (the one the conversation ends with).
    pub source_turn_id: String,
    /// The model's answer; `null` when it wrote no text (it tried to call a tool instead).
    #[serde(default)]
    pub text: Option<String>,
}

/// Params of `thread/sample/cancel`: stop a `thread/sample` this connection asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSampleCancelParams {
    /// The id of the `thread/sample` request to stop.
    pub request_id: RequestId,
}

/// Result of `thread/sample/cancel`: an empty object, whether or not a sample was still
/// running (one that was is answered with an error).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSampleCancelResponse {}

/// Params of `thread/increment_elicitation`: a helper outside the server started waiting on
/// the user for this thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadIncrementElicitationParams {
    /// The thread the helper waits for.
    pub thread_id: String,
}

/// Result of `thread/increment_elicitation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadIncrementElicitationResponse {
    /// How many such waits the thread has now.
    pub count: i64,
    /// Whether the thread's time limits are stopped (while `count` is above zero).
    pub paused: bool,
}

/// Params of `thread/decrement_elicitation`: a wait announced by
/// `thread/increment_elicitation` is over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadDecrementElicitationParams {
    /// The thread the helper waited for.
    pub thread_id: String,
}

/// Result of `thread/decrement_elicitation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadDecrementElicitationResponse {
    /// How many waits the thread still has.
    pub count: i64,
    /// Whether the thread's time limits stay stopped (`count` still above zero).
    pub paused: bool,
}
