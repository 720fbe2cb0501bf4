use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct MisalignmentErrorDetails {
    #[serde(default)]
    pub detailed_explanation: Option<String>,
    #[serde(default)]
    pub error_type: Option<String>,
    #[serde(default)]
    pub review_target: Option<String>,
    #[serde(default)]
    pub steer: Option<MisalignmentSteer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct MisalignmentSteer {
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum NonSteerableTurnKind {
    Review,
    Compact,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTokenUsage {
    pub last: TokenUsageBreakdown,
    #[serde(default)]
    pub model_context_window: Option<i64>,
    pub total: TokenUsageBreakdown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTokenUsageUpdatedNotification {
    pub thread_id: String,
    pub token_usage: ThreadTokenUsage,
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageBreakdown {
    #[serde(default)]
    pub cache_write_input_tokens: i64,
    pub cached_input_tokens: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub reasoning_output_tokens: i64,
    pub total_tokens: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    #[serde(default)]
    pub completed_at: Option<i64>,
    #[serde(default)]
    pub duration_ms: Option<i64>,
    #[serde(default)]
    pub error: Option<TurnError>,
    pub id: String,
    pub items: Vec<ThreadItem>,
    #[serde(default)]
    pub items_view: TurnItemsView,
    #[serde(default)]
    pub root_turn_id: Option<String>,
    #[serde(default)]
    pub started_at: Option<i64>,
    pub status: TurnStatus,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnCompletedNotification {
    pub thread_id: String,
    pub turn: Turn,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnDiffUpdatedNotification {
    pub diff: String,
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    #[serde(default)]
    pub additional_details: Option<String>,
    #[serde(default)]
    pub codex_error_info: Option<CodexErrorInfo>,
    pub message: String,
    #[serde(default)]
    pub misalignment: Option<MisalignmentErrorDetails>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnInterruptParams {
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnInterruptResponse {}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum TurnItemsView {
    NotLoaded,
    Summary,
    #[default]
    Full,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnPlanStep {
    pub status: TurnPlanStepStatus,
    pub step: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum TurnPlanStepStatus {
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnPlanUpdatedNotification {
    #[serde(default)]
    pub explanation: Option<String>,
    pub plan: Vec<TurnPlanStep>,
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub client_user_message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub disabled_plugin_ids: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub effort: Option<ReasoningEffort>,
    pub input: Vec<UserInput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub output_schema: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub parent_turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub personality: Option<Personality>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub root_turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub sandbox_policy: Option<SandboxPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub service_tier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub service_tier_for_turn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub summary: Option<ReasoningSummary>,
    pub thread_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub tool_output: Option<TurnToolOutput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub turn_trigger: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartResponse {
    pub turn: Turn,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartedNotification {
    pub thread_id: String,
    pub turn: Turn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    Completed,
    Interrupted,
    Failed,
    InProgress,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub client_user_message_id: Option<String>,
    pub expected_turn_id: String,
    pub input: Vec<UserInput>,
    pub thread_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerResponse {
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnToolOutput {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub namespace: Option<String>,
    pub output: FunctionCallOutputBody,
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    HttpConnectionFailed {
        /// The HTTP status, when there was one.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// The response stream could not be opened.
    #[serde(rename_all = "camelCase")]
    ResponseStreamConnectionFailed {
        /// The HTTP status, when there was one.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// The response stream broke off.
    #[serde(rename_all = "camelCase")]
    ResponseStreamDisconnected {
        /// The HTTP status, when there was one.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// Retries were exhausted.
    #[serde(rename_all = "camelCase")]
    ResponseTooManyFailedAttempts {
        /// The HTTP status of the last attempt, when there was one.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// The running turn cannot take `turn/steer` input.
    #[serde(rename_all = "camelCase")]
    ActiveTurnNotSteerable {
        /// What kind of turn is running.
        turn_kind: NonSteerableTurnKind,
    },
    /// A class this version does not know, kept verbatim (a string or an object).
    #[serde(untagged)]
    Unknown(#[schemars(with = "StringOrObject")] serde_json::Value),
}

/// Schema stand-in for [`CodexErrorInfo::Unknown`]: any string or object.
#[derive(JsonSchema)]
#[schemars(transparent)]
struct StringOrObject(#[schemars(schema_with = "string_or_object")] ());

fn string_or_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["string", "object"] })
}
