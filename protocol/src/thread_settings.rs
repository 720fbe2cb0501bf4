//! Changing a loaded thread's settings between turns (`thread/settings/update`, announced by
//! `thread/settings/updated`) and a running turn's for its remaining model calls
//! (`turn/settings/update`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{
    AbsolutePathBuf, ApprovalsReviewer, AskForApproval, CollaborationMode, LegacyAppPathString,
    Personality, ReasoningEffort, ReasoningSummary, SandboxPolicy, serde_util,
};

/// Params of `thread/settings/update`: members left out keep their value; the rest hold for
/// the thread's later turns.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSettingsUpdateParams {
    /// When later turns ask before acting.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub approval_policy: Option<AskForApproval>,
    /// Who answers later turns' approval requests.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// A collaboration mode for later turns, with the model, effort and instructions it sets
    /// (`developer_instructions: null` selects the mode's own).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub collaboration_mode: Option<CollaborationMode>,
    /// The working directory of later turns.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// The plugins switched off for the thread, replacing the list (`[]` empties it).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub disabled_plugin_ids: Option<Vec<String>>,
    /// The reasoning effort of later turns.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub effort: Option<ReasoningEffort>,
    /// The execution environments of later turns, the first one primary (`[]` selects none).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub environments: Option<Vec<TurnEnvironmentParams>>,
    /// The model of later turns.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub model: Option<String>,
    /// Deprecated; accepted and ignored (raise `effort` instead).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub multi_agent_mode: Option<MultiAgentMode>,
    /// A permission profile id (see `permissionProfile/list`) whose sandbox later turns run
    /// in; not together with `sandboxPolicy`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub permissions: Option<String>,
    /// Deprecated: kept as the thread's setting, but it selects no style.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub personality: Option<Personality>,
    /// The sandbox of later turns, as a full policy.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sandbox_policy: Option<SandboxPolicy>,
    /// The service tier of later turns: a tier sets it, `null` clears it, absent keeps it.
    #[serde(default, deserialize_with = "serde_util::present_or_null")]
    #[schemars(with = "Option<String>")]
    #[ts(as = "Option<String>", optional)]
    pub service_tier: Option<Option<String>>,
    /// How detailed later turns' reasoning summaries are.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub summary: Option<ReasoningSummary>,
    /// The thread; it must be loaded.
    pub thread_id: String,
}

/// Result of `thread/settings/update`: an empty object once the settings are recorded
/// (`thread/settings/updated` follows when they changed).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSettingsUpdateResponse {}

/// Params of `thread/settings/updated`: a thread's settings changed; sent to every connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSettingsUpdatedNotification {
    /// The thread.
    pub thread_id: String,
    /// Its settings as they now are.
    pub thread_settings: ThreadSettings,
}

/// The settings a thread's next turn runs with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSettings {
    /// The permission profile the sandbox amounts to; `null` when it matches none.
    #[serde(default)]
    pub active_permission_profile: Option<ActivePermissionProfile>,
    /// When turns ask before acting.
    pub approval_policy: AskForApproval,
    /// Who answers approval requests.
    pub approvals_reviewer: ApprovalsReviewer,
    /// The collaboration mode, with the model, effort and developer instructions in force.
    pub collaboration_mode: CollaborationMode,
    /// The working directory.
    pub cwd: AbsolutePathBuf,
    /// The plugins switched off for the thread.
    #[serde(default)]
    #[builder(default)]
    pub disabled_plugin_ids: Vec<String>,
    /// The reasoning effort; `null` leaves it to the model.
    #[serde(default)]
    pub effort: Option<ReasoningEffort>,
    /// The execution environments selected; absent when the server offers no choice of
    /// them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-experimental" = true))]
    pub environments: Option<Vec<ThreadEnvironment>>,
    /// The model.
    pub model: String,
    /// The model provider.
    pub model_provider: String,
    /// Deprecated; always `explicitRequestOnly` (and then left out).
    #[serde(default, skip_serializing_if = "MultiAgentMode::is_default")]
    #[schemars(extend("x-experimental" = true))]
    #[builder(default)]
    pub multi_agent_mode: MultiAgentMode,
    /// Deprecated: the personality last set; `null` when none was.
    #[serde(default)]
    pub personality: Option<Personality>,
    /// The sandbox, as a full policy.
    pub sandbox_policy: SandboxPolicy,
    /// The service tier; `null` for the provider's default.
    #[serde(default)]
    pub service_tier: Option<String>,
    /// How detailed reasoning summaries are; `null` for the configured default.
    #[serde(default)]
    pub summary: Option<ReasoningSummary>,
}

/// A thread's permission profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ActivePermissionProfile {
    /// The profile it builds on; `null` when it builds on none.
    #[serde(default)]
    pub extends: Option<String>,
    /// Its id (`:read-only`, `:workspace`, `:danger-full-access`).
    pub id: String,
}

/// An execution environment a thread has selected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadEnvironment {
    /// Its working directory.
    pub cwd: LegacyAppPathString,
    /// Its id.
    pub environment_id: String,
    /// The roots its workspace may write.
    pub runtime_workspace_roots: Vec<LegacyAppPathString>,
}

/// An execution environment asked for.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnEnvironmentParams {
    /// Its working directory.
    pub cwd: LegacyAppPathString,
    /// Its id.
    pub environment_id: String,
    /// The roots its workspace may write; absent means `cwd` alone.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub runtime_workspace_roots: Option<Vec<LegacyAppPathString>>,
}

/// Deprecated: how readily the agent hands work to other agents.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum MultiAgentMode {
    /// Only when the user asks.
    #[default]
    ExplicitRequestOnly,
    /// Whenever it sees fit.
    Proactive,
    /// As the configured hint says.
    Custom(String),
}

impl MultiAgentMode {
    /// Whether this is the default, `explicitRequestOnly`.
    pub fn is_default(&self) -> bool {
        *self == Self::ExplicitRequestOnly
    }
}

/// Params of `turn/settings/update`: changes for the remaining model calls of one running
/// turn (later turns keep the thread's settings). Members left out keep their value.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct TurnSettingsUpdateParams {
    /// Who answers the turn's later approval requests.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// The reasoning effort of the turn's later model calls.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub effort: Option<ReasoningEffort>,
    /// The execution environments of the turn's later steps.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub environments: Option<Vec<TurnEnvironmentParams>>,
    /// The model of the turn's later model calls.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub model: Option<String>,
    /// The service tier of the turn's later model calls: a tier sets it, `null` clears it.
    #[serde(default, deserialize_with = "serde_util::present_or_null")]
    #[schemars(with = "Option<String>")]
    #[ts(as = "Option<String>", optional)]
    pub service_tier: Option<Option<String>>,
    /// How detailed the turn's later reasoning summaries are.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub summary: Option<ReasoningSummary>,
    /// The thread.
    pub thread_id: String,
    /// The running turn.
    pub turn_id: String,
}

/// Result of `turn/settings/update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct TurnSettingsUpdateResponse {
    /// Whether the turn took the change.
    pub status: TurnSettingsUpdateStatus,
}

/// Whether a running turn took a settings change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TurnSettingsUpdateStatus {
    /// Its next model call uses the new settings (a call already under way does not).
    Applied,
    /// The turn is not running (it ended, or never ran on this server).
    TargetUnavailable,
}
