//! Turns: one unit of agent work on a thread, begun by user input and ended by completion,
//! interruption or failure.
//!
//! Covers the `turn/start`, `turn/steer` and `turn/interrupt` requests, the `turn/started`,
//! `turn/completed`, `turn/diff/updated`, `turn/plan/updated` and `thread/tokenUsage/updated`
//! notifications, and the error types a failed turn reports.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Public detail of a turn that was blocked as misaligned, and how the user may continue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct MisalignmentErrorDetails {
    /// Category of the block, as an open set of strings: accept values you do not know; `null`
    /// when not given.
    #[serde(default)]
    pub error_type: Option<String>,
    /// Localized explanation to show the user before any offer to continue; `null` when not
    /// given, in which case no continuation should be offered.
    #[serde(default)]
    pub detailed_explanation: Option<String>,
    /// Opaque server-issued handle of what was blocked; `null` when absent. Having one does not
    /// by itself mean continuing is allowed.
    #[serde(default)]
    pub review_target: Option<String>,
    /// What to send as the next turn's input if the user confirms continuing; `null` when
    /// continuing is not offered.
    #[serde(default)]
    pub steer: Option<MisalignmentSteer>,
}

/// Input to send if the user chooses to continue after a misalignment block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MisalignmentSteer {
    /// The text to submit as the user's next message.
    pub message: String,
}

/// A kind of turn that does not accept `turn/steer` input while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum NonSteerableTurnKind {
    /// A code review turn.
    Review,
    /// A turn that compacts the thread's history on request.
    Compact,
}

/// Token accounting of a thread: the running total and the most recent model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadTokenUsage {
    /// Sum over every model call in the thread so far.
    pub total: TokenUsageBreakdown,
    /// The latest model call alone; its input size shows how full the context window is.
    pub last: TokenUsageBreakdown,
    /// Size of the model's context window in tokens; `null` when unknown.
    #[serde(default)]
    pub model_context_window: Option<i64>,
}

/// Params of `thread/tokenUsage/updated`: a thread's token counts after a model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadTokenUsageUpdatedNotification {
    /// Thread whose usage changed.
    pub thread_id: String,
    /// Turn during which it changed.
    pub turn_id: String,
    /// The thread's usage now.
    pub token_usage: ThreadTokenUsage,
}

/// Token counts of one model call, or a sum of several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TokenUsageBreakdown {
    /// Prompt tokens sent, cached ones included.
    pub input_tokens: i64,
    /// Of `inputTokens`, those read from the provider's prompt cache.
    pub cached_input_tokens: i64,
    /// Of `inputTokens`, those written into the prompt cache; `0` when the member is absent.
    #[serde(default)]
    #[builder(default)]
    pub cache_write_input_tokens: i64,
    /// Tokens generated, reasoning included.
    pub output_tokens: i64,
    /// Of `outputTokens`, those spent on reasoning.
    pub reasoning_output_tokens: i64,
    /// Input plus output tokens.
    pub total_tokens: i64,
}

/// A turn: its identity, state and (depending on `itemsView`) its items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct Turn {
    /// The turn's id (a UUIDv7 string for turns the server creates).
    pub id: String,
    /// Id of the turn that began the chain of work this turn is part of (its own id for a turn
    /// the user started); pass it as `rootTurnId` when starting follow-up work. `null` in older
    /// history.
    #[serde(default)]
    pub root_turn_id: Option<String>,
    /// Where the turn stands.
    pub status: TurnStatus,
    /// The turn's items, oldest first, as far as `itemsView` says they were loaded.
    #[builder(default)]
    pub items: Vec<ThreadItem>,
    /// How complete `items` is; `full` when the member is absent.
    #[serde(default)]
    #[builder(default)]
    pub items_view: TurnItemsView,
    /// What went wrong, for a failed (or interrupted) turn; `null` otherwise.
    #[serde(default)]
    pub error: Option<TurnError>,
    /// When the turn began, in Unix seconds; `null` before it has begun (as in the `turn/start`
    /// response).
    #[serde(default)]
    pub started_at: Option<i64>,
    /// When the turn ended, in Unix seconds; `null` while it runs.
    #[serde(default)]
    pub completed_at: Option<i64>,
    /// Time from start to end in milliseconds; `null` while it runs or when unknown.
    #[serde(default)]
    pub duration_ms: Option<i64>,
}

/// Params of `turn/completed`: a turn ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnCompletedNotification {
    /// Thread the turn ran on.
    pub thread_id: String,
    /// The turn in its final state: `status` says how it ended, `error` why it failed.
    pub turn: Turn,
}

/// Params of `turn/diff/updated`: the turn's file changes, combined, changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnDiffUpdatedNotification {
    /// Thread the turn runs on.
    pub thread_id: String,
    /// The turn whose changes these are.
    pub turn_id: String,
    /// Unified diff of every file the turn has changed so far; replaces the previous one.
    pub diff: String,
}

/// Why a turn failed, or an error reported during a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnError {
    /// Text to show the user.
    pub message: String,
    /// Machine-readable class of the failure; `null` when it has none.
    #[serde(default)]
    pub codex_error_info: Option<CodexErrorInfo>,
    /// More detail (e.g. the provider's own error text); `null` when there is none.
    #[serde(default)]
    pub additional_details: Option<String>,
    /// Explanation and continuation offer when the turn was blocked as misaligned; `null`
    /// otherwise.
    #[serde(default)]
    pub misalignment: Option<MisalignmentErrorDetails>,
}

/// Params of `turn/interrupt`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnInterruptParams {
    /// Thread the turn runs on.
    pub thread_id: String,
    /// The running turn to stop.
    pub turn_id: String,
}

/// Result of `turn/interrupt`: always `{}`. The turn then ends with a `turn/completed` whose
/// status is `interrupted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnInterruptResponse {}

/// How much of a turn's `items` a payload carries.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TurnItemsView {
    /// None: `items` is empty because it was not loaded, not because the turn has none.
    NotLoaded,
    /// Only the items needed to show the turn briefly (e.g. the final agent message).
    Summary,
    /// Every item recorded for the turn.
    #[default]
    Full,
}

/// One step of the agent's plan for a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnPlanStep {
    /// What the step is, in a sentence.
    pub step: String,
    /// How far the step has got.
    pub status: TurnPlanStepStatus,
}

/// Progress of a plan step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TurnPlanStepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// Params of `turn/plan/updated`: the agent's plan for the turn, as it now stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnPlanUpdatedNotification {
    /// Thread the turn runs on.
    pub thread_id: String,
    /// The turn the plan is for.
    pub turn_id: String,
    /// Every step of the plan, in order; replaces the previous plan.
    #[builder(default)]
    pub plan: Vec<TurnPlanStep>,
    /// The agent's note on why the plan changed; `null` when it gave none.
    #[serde(default)]
    pub explanation: Option<String>,
}

/// Params of `turn/start`. Every member besides `threadId` and `input` is optional; the
/// overrides (`model`, `cwd`, `effort` …) stay in force for the thread's later turns too, and
/// leaving one out keeps the thread's current setting.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnStartParams {
    /// The loaded thread to run the turn on.
    pub thread_id: String,
    /// The user's message, in parts.
    #[builder(default)]
    pub input: Vec<UserInput>,
    /// Client-chosen id for the message, echoed as `clientId` on the `userMessage` item.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub client_user_message_id: Option<String>,
    /// New working directory for commands and file edits.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// New model, by id (as listed by `model/list`).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub model: Option<String>,
    /// New reasoning effort.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub effort: Option<ReasoningEffort>,
    /// New setting for reasoning summaries.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub summary: Option<ReasoningSummary>,
    /// New rule for when the agent must ask before acting.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub approval_policy: Option<AskForApproval>,
    /// New choice of who answers approval requests (the user or an automatic reviewer).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// New sandbox for the commands the agent runs.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sandbox_policy: Option<SandboxPolicy>,
    /// Collaboration mode for this turn and the thread's later ones (experimental). Its
    /// settings take precedence over `model` and `effort`: `settings.model` becomes the model;
    /// `reasoning_effort` and `developer_instructions` are set by a value, cleared by `null`
    /// (the model's default effort; the mode's built-in instructions) and kept when absent.
    #[serde(default)]
    #[schemars(extend("x-experimental" = true))]
    #[ts(optional = nullable)]
    pub collaboration_mode: Option<CollaborationMode>,
    /// Deprecated: no longer changes the agent's style, and leaves existing instructions as
    /// they are.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub personality: Option<Personality>,
    /// New service tier (speed/price class) for the thread.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub service_tier: Option<String>,
    /// Service tier for this one turn only (`"default"` for standard speed); the thread's own
    /// tier stays as it is. Has no effect when the input goes to a turn already running.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub service_tier_for_turn: Option<String>,
    /// Replacement list of plugin ids disabled on the thread: `[]` enables them all, leaving it
    /// out keeps the list.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub disabled_plugin_ids: Option<Vec<String>>,
    /// JSON Schema the turn's final agent message must follow (this turn only); left out for
    /// free-form text.
    #[serde(default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub output_schema: Option<serde_json::Value>,
    /// A tool's output to hand to the model along with the input.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub tool_output: Option<TurnToolOutput>,
    /// The turn on whose behalf this one is started (e.g. work delegated from another thread);
    /// left out when the user starts it.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub parent_turn_id: Option<String>,
    /// Root of the chain of work this turn continues, normally the parent's `rootTurnId`; left
    /// out to make the new turn its own root.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub root_turn_id: Option<String>,
    /// Free-form tag saying what kind of caller started the turn; left out when unspecified.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub turn_trigger: Option<String>,
}

/// Result of `turn/start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnStartResponse {
    /// The new turn, `inProgress` with no items loaded yet; its progress follows as
    /// notifications.
    pub turn: Turn,
}

/// Params of `turn/started`: a turn began running.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnStartedNotification {
    /// Thread the turn runs on.
    pub thread_id: String,
    /// The turn as it begins (`inProgress`, with `startedAt` set).
    pub turn: Turn,
}

/// Where a turn stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TurnStatus {
    /// Ended normally.
    Completed,
    /// Stopped before it finished, by `turn/interrupt`.
    Interrupted,
    /// Ended by an error; see the turn's `error`.
    Failed,
    /// Still running.
    InProgress,
}

/// Params of `turn/steer`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnSteerParams {
    /// Thread whose running turn gets the input.
    pub thread_id: String,
    /// Id of the turn the client believes is running; the request fails if it is not the one.
    pub expected_turn_id: String,
    /// The additional user message, in parts.
    #[builder(default)]
    pub input: Vec<UserInput>,
    /// Client-chosen id for the message, echoed as `clientId` on the `userMessage` item.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub client_user_message_id: Option<String>,
}

/// Result of `turn/steer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnSteerResponse {
    /// The turn that took the input.
    pub turn_id: String,
}

/// A tool's output supplied by the client with `turn/start`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnToolOutput {
    /// Name of the tool that produced the output.
    pub name: String,
    /// Namespace of that tool; left out for tools outside any namespace.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub namespace: Option<String>,
    /// The output itself.
    pub output: FunctionCallOutputBody,
    /// `true` to keep the output in the history the model sees in later turns; left out for
    /// the default.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub retain: Option<bool>,
}

/// Machine-readable class of a turn or request failure, for clients that react to specific
/// failures (re-authenticate, shorten the context, retry later …).
///
/// Unit classes travel as a bare string (`"contextWindowExceeded"`); classes with detail as an
/// object with one member (`{"httpConnectionFailed": {"httpStatusCode": 502}}`). Classes this
/// version does not know are kept as they came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CodexErrorInfo {
    /// The conversation no longer fits the model's context window.
    ContextWindowExceeded,
    /// The session's spending budget is used up.
    SessionBudgetExceeded,
    /// The account's usage limit is reached.
    UsageLimitExceeded,
    /// Too many requests in a short time.
    RateLimitExceeded,
    /// The flex service tier is unavailable.
    FlexUnavailable,
    /// The model service is overloaded.
    ServerOverloaded,
    /// The requested model does not exist.
    ModelNotFound,
    /// No capacity under the account's policy.
    PolicyCapacityUnavailable,
    /// Refused by the cyber-security policy.
    CyberPolicy,
    /// Refused by the biology-safety policy.
    BioPolicy,
    /// Refused as a policy violation.
    MisalignmentPolicyViolation,
    /// Too many approvals were denied in a row.
    TooManyDenials,
    /// The model service failed.
    InternalServerError,
    /// The credentials were refused.
    Unauthorized,
    /// The model service refused the request as malformed.
    BadRequest,
    /// Rolling the thread back failed.
    ThreadRollbackFailed,
    /// The sandbox failed.
    SandboxError,
    /// Any other failure.
    Other,
    /// A hook refused the model's output.
    InferenceHookDenied,
    /// The HTTP connection to the model service failed.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    HttpConnectionFailed {
        /// The HTTP status, when there was one.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// The response stream could not be opened.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ResponseStreamConnectionFailed {
        /// The HTTP status, when there was one.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// The response stream broke off.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ResponseStreamDisconnected {
        /// The HTTP status, when there was one.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// Retries were exhausted.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ResponseTooManyFailedAttempts {
        /// The HTTP status of the last attempt, when there was one.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// The running turn cannot take `turn/steer` input.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ActiveTurnNotSteerable {
        /// What kind of turn is running.
        turn_kind: NonSteerableTurnKind,
    },
    /// A class this version does not know, kept verbatim (a string or an object).
    #[serde(untagged)]
    Unknown(#[schemars(with = "StringOrObject")] serde_json::Value),
}

#[bon::bon]
impl CodexErrorInfo {
    /// Starts building [`CodexErrorInfo::HttpConnectionFailed`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn http_connection_failed(http_status_code: Option<u16>) -> Self {
        Self::HttpConnectionFailed { http_status_code }
    }

    /// Starts building [`CodexErrorInfo::ResponseStreamConnectionFailed`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn response_stream_connection_failed(http_status_code: Option<u16>) -> Self {
        Self::ResponseStreamConnectionFailed { http_status_code }
    }

    /// Starts building [`CodexErrorInfo::ResponseStreamDisconnected`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn response_stream_disconnected(http_status_code: Option<u16>) -> Self {
        Self::ResponseStreamDisconnected { http_status_code }
    }

    /// Starts building [`CodexErrorInfo::ResponseTooManyFailedAttempts`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn response_too_many_failed_attempts(http_status_code: Option<u16>) -> Self {
        Self::ResponseTooManyFailedAttempts { http_status_code }
    }

    /// Starts building [`CodexErrorInfo::ActiveTurnNotSteerable`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn active_turn_not_steerable(turn_kind: NonSteerableTurnKind) -> Self {
        Self::ActiveTurnNotSteerable { turn_kind }
    }
}

/// Schema stand-in for [`CodexErrorInfo::Unknown`]: any string or object.
#[cfg(feature = "schema")]
#[derive(JsonSchema)]
#[schemars(transparent)]
struct StringOrObject(#[schemars(schema_with = "string_or_object")] ());

#[cfg(feature = "schema")]
fn string_or_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["string", "object"] })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Deserializes `value` into `T`, serializes it back and asserts nothing changed.
    fn round_trip<T: Serialize + serde::de::DeserializeOwned>(value: &Value) -> T {
        let parsed: T = serde_json::from_value(value.clone()).expect("deserialize");
        let back = serde_json::to_value(&parsed).expect("serialize");
        assert_eq!(&back, value);
        parsed
    }

    const THREAD: &str = "01a22805-92a4-7883-962f-a9117c3e60a2";
    const TURN: &str = "01a22805-92bf-7720-83d6-e7310d217d47";

    #[test]
    fn minimal_turn_start_params_leave_every_option_out() {
        let value = json!({
            "threadId": THREAD,
            "input": [{"type": "text", "text": "Say hello.", "text_elements": []}]
        });
        let params: TurnStartParams = round_trip(&value);
        assert_eq!(params.thread_id, THREAD);
        let back = serde_json::to_value(&params).expect("serialize");
        let object = back.as_object().expect("object");
        for key in [
            "clientUserMessageId",
            "cwd",
            "model",
            "effort",
            "summary",
            "approvalPolicy",
            "approvalsReviewer",
            "sandboxPolicy",
            "personality",
            "serviceTier",
            "serviceTierForTurn",
            "disabledPluginIds",
            "outputSchema",
            "toolOutput",
            "parentTurnId",
            "rootTurnId",
            "turnTrigger",
        ] {
            assert!(
                !object.contains_key(key),
                "`{key}` should be left out when unset"
            );
        }

        // A client may leave out `text_elements` and send `null` for options.
        let sent = json!({
            "threadId": THREAD,
            "input": [{"type": "text", "text": "Say hello."}],
            "model": null
        });
        let parsed: TurnStartParams = serde_json::from_value(sent).expect("deserialize");
        assert_eq!(parsed, params);
    }

    #[test]
    fn turn_start_params_with_overrides_round_trip() {
        let value = json!({
            "threadId": THREAD,
            "input": [{"type": "text", "text": "Fix the build.", "text_elements": []}],
            "clientUserMessageId": "local-1",
            "cwd": "/home/user/work",
            "model": "mock-model",
            "effort": "high",
            "approvalPolicy": "never",
            "sandboxPolicy": {"type": "readOnly", "networkAccess": false},
            "disabledPluginIds": [],
            "outputSchema": {"type": "object"},
            "toolOutput": {"name": "lookup", "output": "42", "retain": true}
        });
        let params: TurnStartParams = round_trip(&value);
        let tool_output = params.tool_output.as_ref().expect("toolOutput");
        assert_eq!(tool_output.namespace, None);
        assert_eq!(tool_output.retain, Some(true));
        let back = serde_json::to_value(&params).expect("serialize");
        assert!(back["toolOutput"].get("namespace").is_none());
    }

    #[test]
    fn turn_start_response_round_trips() {
        let value = json!({
            "turn": {
                "id": TURN,
                "rootTurnId": TURN,
                "items": [],
                "itemsView": "notLoaded",
                "status": "inProgress",
                "error": null,
                "startedAt": null,
                "completedAt": null,
                "durationMs": null
            }
        });
        let response: TurnStartResponse = round_trip(&value);
        assert_eq!(response.turn.status, TurnStatus::InProgress);
        assert_eq!(response.turn.items_view, TurnItemsView::NotLoaded);
    }

    #[test]
    fn turn_completed_round_trips() {
        let value = json!({
            "threadId": THREAD,
            "turn": {
                "id": TURN,
                "rootTurnId": TURN,
                "items": [{
                    "type": "agentMessage",
                    "moderation": null,
                    "id": "msg_1",
                    "text": "Hello from mock (1).",
                    "phase": null,
                    "memoryCitation": null,
                    "delivery": null,
                    "questions": null,
                    "startedAtMs": 1795967783706_i64,
                    "completedAtMs": 1795967783707_i64
                }],
                "itemsView": "summary",
                "status": "completed",
                "error": null,
                "startedAt": 1795967783,
                "completedAt": 1795967783,
                "durationMs": 99
            }
        });
        let n: TurnCompletedNotification = round_trip(&value);
        assert_eq!(n.turn.items.len(), 1);
        assert_eq!(n.turn.duration_ms, Some(99));
    }

    #[test]
    fn failed_turn_error_round_trips() {
        let value = json!({
            "message": "stream disconnected before completion",
            "codexErrorInfo": {"responseStreamDisconnected": {"httpStatusCode": 502}},
            "additionalDetails": null,
            "misalignment": null
        });
        let error: TurnError = round_trip(&value);
        assert_eq!(
            error.codex_error_info,
            Some(CodexErrorInfo::ResponseStreamDisconnected {
                http_status_code: Some(502)
            })
        );

        let unit: TurnError = round_trip(&json!({
            "message": "context window exceeded",
            "codexErrorInfo": "contextWindowExceeded",
            "additionalDetails": null,
            "misalignment": null
        }));
        assert_eq!(
            unit.codex_error_info,
            Some(CodexErrorInfo::ContextWindowExceeded)
        );

        let unknown: TurnError = round_trip(&json!({
            "message": "new failure",
            "codexErrorInfo": {"somethingNew": {"x": 1}},
            "additionalDetails": null,
            "misalignment": null
        }));
        assert!(matches!(
            unknown.codex_error_info,
            Some(CodexErrorInfo::Unknown(_))
        ));
    }

    #[test]
    fn turn_steer_params_leave_unset_client_id_out() {
        let value = json!({
            "threadId": THREAD,
            "expectedTurnId": TURN,
            "input": [{"type": "text", "text": "Also update the docs.", "text_elements": []}]
        });
        let params: TurnSteerParams = round_trip(&value);
        assert_eq!(params.client_user_message_id, None);
        let back = serde_json::to_value(&params).expect("serialize");
        assert!(back.get("clientUserMessageId").is_none());
    }

    #[test]
    fn token_usage_updated_round_trips() {
        let usage = json!({
            "inputTokens": 10,
            "cachedInputTokens": 0,
            "cacheWriteInputTokens": 0,
            "outputTokens": 5,
            "reasoningOutputTokens": 0,
            "totalTokens": 15
        });
        let value = json!({
            "threadId": THREAD,
            "turnId": TURN,
            "tokenUsage": {"total": usage, "last": usage, "modelContextWindow": 258400}
        });
        let n: ThreadTokenUsageUpdatedNotification = round_trip(&value);
        assert_eq!(n.token_usage.total.total_tokens, 15);
    }
}
