//! Administrator requirements (`configRequirements/read`): the limits an administrator puts on
//! what users and clients may choose, read from `requirements.toml`. A client uses them to grey
//! out choices the server would refuse; the server enforces them on `config/*`, `thread/start`
//! and `turn/start` either way.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{AskForApproval, SandboxMode, WebSearchMode};

/// Result of `configRequirements/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder, Default)]
pub struct ConfigRequirementsReadResponse {
    /// The requirements in force; `null` when no `requirements.toml` sets any.
    #[serde(default)]
    pub requirements: Option<ConfigRequirements>,
    /// Whether the two speed modes are gated apart. Always `null` here: this server has no
    /// speed modes.
    #[serde(default)]
    pub supports_independent_speed_modes: Option<bool>,
}

/// What an administrator allows. Each member is `null` when it does not restrict anything; a
/// list that is present holds every value that is allowed (an empty list allows none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder, Default)]
pub struct ConfigRequirements {
    /// Approval policies users may pick (`approval_policy`, `approvalPolicy` on `thread/start`
    /// and `turn/start`).
    #[serde(default)]
    pub allowed_approval_policies: Option<Vec<AskForApproval>>,
    /// Sandbox modes users may pick (`sandbox_mode`, `sandbox` on `thread/start`, the kind of
    /// `sandboxPolicy` on `turn/start`).
    #[serde(default)]
    pub allowed_sandbox_modes: Option<Vec<SandboxMode>>,
    /// Web search modes users may pick (`web_search`).
    #[serde(default)]
    pub allowed_web_search_modes: Option<Vec<WebSearchMode>>,
    /// The one model provider every thread must use, when the administrator fixes it.
    #[serde(default)]
    pub model_provider: Option<String>,
}
