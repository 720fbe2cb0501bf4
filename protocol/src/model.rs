use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CollaborationMode {
    pub mode: ModeKind,
    pub settings: Settings,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum InputModality {
    Text,
    Image,
    Audio,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum ModeKind {
    Plan,
    Default,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    #[serde(default)]
    pub additional_speed_tiers: Vec<String>,
    #[serde(default)]
    pub availability_nux: Option<ModelAvailabilityNux>,
    #[serde(default)]
    pub available_access_programs: Option<ModelAccessPrograms>,
    pub default_reasoning_effort: ReasoningEffort,
    #[serde(default)]
    pub default_service_tier: Option<String>,
    pub description: String,
    pub display_name: String,
    pub hidden: bool,
    pub id: String,
    #[serde(default = "default_input_modalities")]
    pub input_modalities: Vec<InputModality>,
    pub is_default: bool,
    pub model: String,
    #[serde(default)]
    pub model_specialty: Option<String>,
    #[serde(default)]
    pub multi_agent_version: Option<MultiAgentVersion>,
    #[serde(default)]
    pub service_tiers: Vec<ModelServiceTier>,
    pub supported_reasoning_efforts: Vec<ReasoningEffortOption>,
    #[serde(default)]
    pub supports_personality: bool,
    #[serde(default)]
    pub upgrade: Option<String>,
    #[serde(default)]
    pub upgrade_info: Option<ModelUpgradeInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelAccessPrograms {
    pub cyber: Vec<CyberAccessProgram>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelAvailabilityNux {
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelListParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub include_hidden: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub model_provider: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelListResponse {
    pub data: Vec<Model>,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelServiceTier {
    pub description: String,
    pub id: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelUpgradeInfo {
    #[serde(default)]
    pub migration_markdown: Option<String>,
    pub model: String,
    #[serde(default)]
    pub model_link: Option<String>,
    #[serde(default)]
    pub retirement_at: Option<i64>,
    #[serde(default)]
    pub upgrade_copy: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum MultiAgentVersion {
    Disabled,
    V1,
    V2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum Personality {
    None,
    Friendly,
    Pragmatic,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS)]
#[serde(transparent)]
pub struct ReasoningEffort(#[schemars(length(min = 1))] pub String);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningEffortOption {
    pub description: String,
    pub reasoning_effort: ReasoningEffort,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum ReasoningSummary {
    Auto,
    Concise,
    Detailed,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum Verbosity {
    Low,
    Medium,
    High,
}

/// Params of `collaborationMode/list` (experimental): none yet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct CollaborationModeListParams {}

/// Result of `collaborationMode/list`: the presets a client can offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct CollaborationModeListResponse {
    /// The presets, in display order.
    pub data: Vec<CollaborationModeMask>,
}

/// A collaboration-mode preset: the settings it applies when a client selects it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct CollaborationModeMask {
    /// Display name of the preset.
    pub name: String,
    /// The mode the preset selects; `null` leaves the mode unchanged.
    pub mode: Option<ModeKind>,
    /// The model the preset selects; `null` leaves the model unchanged.
    pub model: Option<String>,
    /// The reasoning effort the preset selects; `null` leaves it unchanged.
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// Models that do not say otherwise take text and images.
fn default_input_modalities() -> Vec<InputModality> {
    vec![InputModality::Text, InputModality::Image]
}
