//! `thread/start`, `thread/resume` and `thread/fork`: the settings a thread is opened with, and
//! `thread/started`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Settings a thread is opened with, as overrides: flattened into the params of `thread/start`,
/// `thread/resume` and `thread/fork`. Each one left out keeps the value the configuration (or,
/// on resume and fork, the source thread) gives.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSettingsOverrides {
    /// Model slug for the thread.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub model: Option<String>,
    /// Model provider id for the thread.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub model_provider: Option<String>,
    /// Provider service tier the thread's model requests ask for.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub service_tier: Option<String>,
    /// Working directory for the thread.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// When the agent must ask before acting.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub approval_policy: Option<AskForApproval>,
    /// Who answers the thread's approval requests.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Sandbox mode for the commands the agent runs.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sandbox: Option<SandboxMode>,
    /// Further configuration overrides: config key paths (dotted, as on the `-c` command line)
    /// mapped to JSON values.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub config: Option<BTreeMap<String, serde_json::Value>>,
    /// Text that replaces the built-in system instructions.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub base_instructions: Option<String>,
    /// Extra developer-role instructions added to the context.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub developer_instructions: Option<String>,
}

/// Params of `thread/fork`: the thread to copy and overrides for the copy. Each override left
/// out keeps the value the source thread (or the configuration) gives.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadForkParams {
    /// The thread whose history is copied.
    pub thread_id: String,
    /// Copy history up to and including this turn and drop the later ones; absent copies it
    /// all. The turn must have finished.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub last_turn_id: Option<String>,
    /// `true` to return the fork with an empty `turns` array (the client fetches history some
    /// other way); absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub exclude_turns: Option<bool>,
    /// `true` to keep the fork in memory only, never on disk; absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub ephemeral: Option<bool>,
    /// Analytics label to record on the fork as its `threadSource`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread_source: Option<ThreadSource>,
    /// Settings for the thread (model, working directory, approvals, sandbox, instructions).
    #[serde(flatten)]
    #[ts(flatten)]
    #[builder(default)]
    pub settings: ThreadSettingsOverrides,
}

/// Result of `thread/fork`: the new thread and the settings it actually runs with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadForkResponse {
    /// The fork, a new thread with its own id; `turns` is filled unless `excludeTurns` was set.
    pub thread: Thread,
    /// Model slug in effect.
    pub model: String,
    /// Model provider id in effect.
    pub model_provider: String,
    /// Service tier in effect; `null` when the provider's default applies.
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Reasoning effort in effect; `null` when the model's default applies.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Absolute working directory in effect.
    pub cwd: AbsolutePathBuf,
    /// Approval policy in effect.
    pub approval_policy: AskForApproval,
    /// Who answers approval requests on this thread.
    pub approvals_reviewer: ApprovalsReviewer,
    /// Sandbox in effect, as a full policy rather than a mode.
    pub sandbox: SandboxPolicy,
    /// Instruction files (such as `AGENTS.md`) loaded into the thread, as paths on the server's
    /// machine; absent or empty when none were loaded.
    #[serde(default)]
    #[builder(default)]
    pub instruction_sources: Vec<LegacyAppPathString>,
    /// Ids of plugins the user has switched off; informational only for now. Absent means none.
    #[serde(default)]
    #[builder(default)]
    pub disabled_plugin_ids: Vec<String>,
}

/// How a thread's history is stored; chosen when the thread is created and never changed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadHistoryMode {
    /// The original layout, read back as a whole; assumed when the field is absent.
    #[default]
    Legacy,
    /// A layout that lets clients page through turns and items instead of loading everything.
    Paginated,
}

/// Params of `thread/resume`: the thread to load and overrides for its settings. Each override
/// left out keeps the stored (or configured) value.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadResumeParams {
    /// The thread to load; if it is already loaded the client joins it as it is.
    pub thread_id: String,
    /// `true` to return the thread with an empty `turns` array (the client fetches history some
    /// other way); absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub exclude_turns: Option<bool>,
    /// Deprecated: its values no longer change the agent's style, and setting it leaves the
    /// thread's existing instructions as they are.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub personality: Option<Personality>,
    /// Tools the client runs itself, replacing those the thread was started with (`[]`
    /// removes them; absent keeps them). Like the other overrides, they apply when this
    /// request loads the thread, not when it joins a thread already loaded (experimental).
    #[serde(default)]
    #[schemars(extend("x-experimental" = true))]
    #[ts(optional = nullable)]
    pub dynamic_tools: Option<Vec<DynamicToolSpec>>,
    /// Settings for the thread (model, working directory, approvals, sandbox, instructions).
    #[serde(flatten)]
    #[ts(flatten)]
    #[builder(default)]
    pub settings: ThreadSettingsOverrides,
}

/// Result of `thread/resume`: the loaded thread and the settings it now runs with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadResumeResponse {
    /// The thread, with its turns unless `excludeTurns` was set.
    pub thread: Thread,
    /// Model slug in effect.
    pub model: String,
    /// Model provider id in effect.
    pub model_provider: String,
    /// Service tier in effect; `null` when the provider's default applies.
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Reasoning effort in effect; `null` when the model's default applies.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Collaboration mode in effect; `null` or absent when the server does not report one.
    #[serde(default)]
    pub collaboration_mode: Option<CollaborationMode>,
    /// Absolute working directory in effect.
    pub cwd: AbsolutePathBuf,
    /// Approval policy in effect.
    pub approval_policy: AskForApproval,
    /// Who answers approval requests on this thread.
    pub approvals_reviewer: ApprovalsReviewer,
    /// Sandbox in effect, as a full policy rather than a mode.
    pub sandbox: SandboxPolicy,
    /// Instruction files (such as `AGENTS.md`) loaded into the thread, as paths on the server's
    /// machine; absent or empty when none were loaded.
    #[serde(default)]
    #[builder(default)]
    pub instruction_sources: Vec<LegacyAppPathString>,
    /// Ids of plugins the user has switched off; informational only for now. Absent means none.
    #[serde(default)]
    #[builder(default)]
    pub disabled_plugin_ids: Vec<String>,
    /// For paginated threads: cursor from which to page backwards (newest first) through the
    /// thread's turns, starting with the turn it names; `null` when not offered.
    #[serde(default)]
    pub turns_backwards_cursor: Option<String>,
    /// For paginated threads: cursor from which to page backwards (newest first) through the
    /// thread's items, starting with the item it names; `null` when not offered.
    #[serde(default)]
    pub items_backwards_cursor: Option<String>,
}

/// Params of `thread/start`. Every member is optional; each one left out takes the server's
/// configured value.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadStartParams {
    /// Deprecated: its values no longer change the agent's style.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub personality: Option<Personality>,
    /// `true` to keep the thread in memory only, never on disk; `null` or absent means `false`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub ephemeral: Option<bool>,
    /// Name of the calling service, recorded with the thread for attribution.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub service_name: Option<String>,
    /// What made the client open a new session (its own start-up, or the user clearing the
    /// previous conversation); passed on to session-start hooks.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub session_start_source: Option<ThreadStartSource>,
    /// Analytics label to record on the thread as its `threadSource`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread_source: Option<ThreadSource>,
    /// Tools the client runs itself, offered to the model on every turn of the thread (kept
    /// with the thread, so a resumed thread still has them); a call of one reaches the client
    /// as `item/tool/call` (experimental).
    #[serde(default)]
    #[schemars(extend("x-experimental" = true))]
    #[ts(optional = nullable)]
    pub dynamic_tools: Option<Vec<DynamicToolSpec>>,
    /// Settings for the thread (model, working directory, approvals, sandbox, instructions).
    #[serde(flatten)]
    #[ts(flatten)]
    #[builder(default)]
    pub settings: ThreadSettingsOverrides,
}

/// Result of `thread/start`: the new thread and the settings it runs with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadStartResponse {
    /// The new thread, loaded and idle, with an empty `turns` array.
    pub thread: Thread,
    /// Model slug in effect.
    pub model: String,
    /// Model provider id in effect.
    pub model_provider: String,
    /// Service tier in effect; `null` when the provider's default applies.
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Reasoning effort in effect; `null` when the model's default applies.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Absolute working directory in effect.
    pub cwd: AbsolutePathBuf,
    /// Approval policy in effect.
    pub approval_policy: AskForApproval,
    /// Who answers approval requests on this thread.
    pub approvals_reviewer: ApprovalsReviewer,
    /// Sandbox in effect, as a full policy rather than a mode.
    pub sandbox: SandboxPolicy,
    /// Instruction files (such as `AGENTS.md`) loaded into the thread, as paths on the server's
    /// machine; absent or empty when none were loaded.
    #[serde(default)]
    #[builder(default)]
    pub instruction_sources: Vec<LegacyAppPathString>,
    /// Ids of plugins the user has switched off; informational only for now. Absent means none.
    #[serde(default)]
    #[builder(default)]
    pub disabled_plugin_ids: Vec<String>,
}

/// What made a client open a new session with `thread/start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadStartSource {
    /// The client has just started up.
    Startup,
    /// The user cleared the previous conversation to begin afresh.
    Clear,
}

/// Params of `thread/started`: a thread was created by `thread/start` or `thread/fork` and is
/// loaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadStartedNotification {
    /// The new thread, with an empty `turns` array.
    pub thread: Thread,
}
