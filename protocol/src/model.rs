//! Models and the knobs that shape how they work: the model catalog, reasoning effort and
//! summaries, verbosity, service tiers, collaboration modes.
//!
//! Used by `model/list` and `collaborationMode/list`; [`ReasoningEffort`], [`Personality`] and
//! [`CollaborationMode`] also appear in thread and turn params.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// A collaboration mode with its settings, as chosen for a thread or turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CollaborationMode {
    /// Which mode.
    pub mode: ModeKind,
    /// Model, reasoning effort and instructions the mode runs with.
    pub settings: Settings,
}

/// A kind of input a model accepts in user turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum InputModality {
    /// Text (always supported in practice).
    Text,
    /// Attached images.
    Image,
    /// Attached audio.
    Audio,
}

/// How the agent collaborates with the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ModeKind {
    /// The agent works out a plan with the user before changing anything.
    Plan,
    /// The agent carries out the request directly.
    Default,
}

/// One entry of the model catalog, as listed by `model/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct Model {
    /// Unique id of the catalog entry (e.g. `gpt-6.2-sol`).
    pub id: String,
    /// Model slug to pass as `model` when starting a thread or turn.
    pub model: String,
    /// Name to show in a model picker (e.g. `GPT-6.2-Sol`).
    pub display_name: String,
    /// One-sentence description for the picker.
    pub description: String,
    /// Whether this is the catalog's default model, to preselect in a picker.
    pub is_default: bool,
    /// Whether the entry is left out of the ordinary picker (only listed with `includeHidden`).
    pub hidden: bool,
    /// Reasoning effort used when the client does not choose one.
    pub default_reasoning_effort: ReasoningEffort,
    /// The reasoning efforts the model accepts, each with a description.
    #[builder(default)]
    pub supported_reasoning_efforts: Vec<ReasoningEffortOption>,
    /// Kinds of user input the model accepts; absent means text and images.
    #[serde(default = "default_input_modalities")]
    #[builder(default = default_input_modalities())]
    pub input_modalities: Vec<InputModality>,
    /// Service tiers the user can pick for this model; absent means none.
    #[serde(default)]
    #[builder(default)]
    pub service_tiers: Vec<ModelServiceTier>,
    /// `id` of the service tier used when the client picks none; `null` means the standard
    /// tier.
    #[serde(default)]
    pub default_service_tier: Option<String>,
    /// Deprecated list of extra speed tier names (e.g. `fast`); read `serviceTiers` instead.
    #[serde(default)]
    #[builder(default)]
    pub additional_speed_tiers: Vec<String>,
    /// Deprecated; always `false`, as no model offers a personality choice any more.
    #[serde(default)]
    #[builder(default)]
    pub supports_personality: bool,
    /// Which multi-agent (sub-agent) runtime the model uses; `null` when it does not say.
    #[serde(default)]
    pub multi_agent_version: Option<MultiAgentVersion>,
    /// What the model is specialised for; `null` for a general-purpose model.
    #[serde(default)]
    pub model_specialty: Option<String>,
    /// Security-research access programs the caller may select for this model; `null` when
    /// the catalog does not say.
    #[serde(default)]
    pub available_access_programs: Option<ModelAccessPrograms>,
    /// Notice to show the user about this model's availability; `null` when there is none.
    #[serde(default)]
    pub availability_nux: Option<ModelAvailabilityNux>,
    /// Slug of the model users should move to (older form of `upgradeInfo.model`); `null`
    /// when no upgrade is suggested.
    #[serde(default)]
    pub upgrade: Option<String>,
    /// The suggested upgrade in detail; `null` when no upgrade is suggested.
    #[serde(default)]
    pub upgrade_info: Option<ModelUpgradeInfo>,
}

/// Access programs a caller may explicitly select for a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ModelAccessPrograms {
    /// The security-research programs that will be accepted.
    #[builder(default)]
    pub cyber: Vec<CyberAccessProgram>,
}

/// A one-off notice about a model's availability (a "new user experience" message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ModelAvailabilityNux {
    /// Text of the notice.
    pub message: String,
}

/// Params of `model/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ModelListParams {
    /// List the models of this configured provider (a key of `model_providers`); absent uses
    /// the server's default provider.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub model_provider: Option<String>,
    /// `true` also lists entries with `hidden: true`; absent means `false`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub include_hidden: Option<bool>,
    /// The `nextCursor` of the previous page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Maximum number of models in the page; absent lets the server choose.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
}

/// Result of `model/list`: one page of the catalog, in display order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ModelListResponse {
    /// The models on this page.
    #[builder(default)]
    pub data: Vec<Model>,
    /// Pass as `cursor` to get the next page; `null` on the last page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// A service tier a model can be used with: a trade of speed against usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ModelServiceTier {
    /// Value to send as the service tier (e.g. `priority`).
    pub id: String,
    /// Name to show (e.g. `Fast`).
    pub name: String,
    /// Short explanation of the trade-off (e.g. `2x speed, increased usage`).
    pub description: String,
}

/// A suggestion to move from one model to a newer one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ModelUpgradeInfo {
    /// Slug of the model to move to.
    pub model: String,
    /// Short promotional text for the upgrade; `null` when there is none.
    #[serde(default)]
    pub upgrade_copy: Option<String>,
    /// Link to read more about the new model; `null` when there is none.
    #[serde(default)]
    pub model_link: Option<String>,
    /// Markdown to show in a migration prompt; `null` when there is none.
    #[serde(default)]
    pub migration_markdown: Option<String>,
    /// When the old model is planned to be retired, in Unix seconds (for information only);
    /// `null` when no date is known.
    #[serde(default)]
    pub retirement_at: Option<i64>,
}

/// Which multi-agent runtime a model uses to delegate work to sub-agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum MultiAgentVersion {
    /// The model does not delegate to sub-agents.
    Disabled,
    /// The first multi-agent runtime.
    V1,
    /// The second multi-agent runtime.
    V2,
}

/// Deprecated conversational style; no value changes the agent's style any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Personality {
    /// No particular style.
    None,
    /// Formerly a warmer, chattier style.
    Friendly,
    /// Formerly a terse, matter-of-fact style.
    Pragmatic,
}

/// How hard the model reasons before answering: a non-empty string such as `low`, `medium`,
/// `high` or `xhigh`; each model lists the values it accepts.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(transparent)]
pub struct ReasoningEffort(#[schemars(length(min = 1))] pub String);

/// A reasoning effort a model accepts, with a description for the picker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ReasoningEffortOption {
    /// The effort value.
    pub reasoning_effort: ReasoningEffort,
    /// What choosing it means (e.g. `Greater reasoning depth for complex problems`).
    pub description: String,
}

/// How much of its reasoning the model summarises for the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ReasoningSummary {
    /// The model decides how detailed the summary is.
    Auto,
    /// Short summaries.
    Concise,
    /// Thorough summaries.
    Detailed,
    /// No summaries at all.
    None,
}

/// How long and detailed the model's answers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Verbosity {
    /// Brief answers.
    Low,
    /// Answers of ordinary length.
    Medium,
    /// Long, detailed answers.
    High,
}

/// Params of `collaborationMode/list` (experimental): none yet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CollaborationModeListParams {}

/// Result of `collaborationMode/list`: the presets a client can offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct CollaborationModeListResponse {
    /// The presets, in display order.
    #[builder(default)]
    pub data: Vec<CollaborationModeMask>,
}

/// A collaboration-mode preset: the settings it applies when a client selects it. Built-in
/// developer instructions are not included; send `developer_instructions: null` to use them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
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

    #[test]
    fn model_list_response_from_the_transcript_round_trips() {
        // Two entries of the `model/list` answer of codex 0.171.0 (reasoning options shortened).
        let value = json!({
            "data": [
                {
                    "id": "gpt-6.2-sol",
                    "model": "gpt-6.2-sol",
                    "upgrade": null,
                    "upgradeInfo": null,
                    "availabilityNux": null,
                    "displayName": "GPT-6.2-Sol",
                    "description": "Fast, go-to model for coding and everyday work.",
                    "modelSpecialty": null,
                    "hidden": false,
                    "supportedReasoningEfforts": [
                        {"reasoningEffort": "low", "description": "Fast responses with lighter reasoning"},
                        {"reasoningEffort": "xhigh", "description": "Extra high reasoning depth for complex problems"}
                    ],
                    "defaultReasoningEffort": "low",
                    "inputModalities": ["text", "image"],
                    "supportsPersonality": false,
                    "multiAgentVersion": "v2",
                    "additionalSpeedTiers": ["fast"],
                    "serviceTiers": [{"id": "priority", "name": "Fast", "description": "2x speed, increased usage"}],
                    "defaultServiceTier": null,
                    "availableAccessPrograms": null,
                    "isDefault": true
                },
                {
                    "id": "gpt-5.6-sol",
                    "model": "gpt-5.6-sol",
                    "upgrade": "gpt-6-sol",
                    "upgradeInfo": {
                        "model": "gpt-6-sol",
                        "upgradeCopy": null,
                        "modelLink": null,
                        "migrationMarkdown": "Meet GPT-6 Sol\n",
                        "retirementAt": null
                    },
                    "availabilityNux": {"message": "Try it on complex work."},
                    "displayName": "GPT-5.6-Sol",
                    "description": "Legacy model for coding and everyday work.",
                    "modelSpecialty": null,
                    "hidden": false,
                    "supportedReasoningEfforts": [
                        {"reasoningEffort": "medium", "description": "Balances speed and reasoning depth for everyday tasks"}
                    ],
                    "defaultReasoningEffort": "medium",
                    "inputModalities": ["text", "image"],
                    "supportsPersonality": false,
                    "multiAgentVersion": null,
                    "additionalSpeedTiers": [],
                    "serviceTiers": [],
                    "defaultServiceTier": "priority",
                    "availableAccessPrograms": {"cyber": ["standard", "daybreakBlue"]},
                    "isDefault": false
                }
            ],
            "nextCursor": null
        });
        let response: ModelListResponse = round_trip(&value);
        assert_eq!(response.next_cursor, None);
        let [current, legacy] = &response.data[..] else {
            panic!("expected two models");
        };
        assert!(current.is_default);
        assert_eq!(
            current.default_reasoning_effort,
            ReasoningEffort("low".into())
        );
        assert_eq!(current.multi_agent_version, Some(MultiAgentVersion::V2));
        assert_eq!(current.service_tiers[0].id, "priority");
        let upgrade = legacy.upgrade_info.as_ref().expect("upgradeInfo");
        assert_eq!(upgrade.model, "gpt-6-sol");
        assert_eq!(
            legacy.available_access_programs,
            Some(ModelAccessPrograms {
                cyber: vec![
                    CyberAccessProgram::Standard,
                    CyberAccessProgram::DaybreakBlue
                ]
            })
        );
    }

    #[test]
    fn model_fills_in_defaults_for_absent_members() {
        let sparse = json!({
            "id": "mock-model",
            "model": "mock-model",
            "displayName": "Mock",
            "description": "",
            "hidden": true,
            "isDefault": false,
            "defaultReasoningEffort": "medium",
            "supportedReasoningEfforts": []
        });
        let model: Model = serde_json::from_value(sparse).expect("deserialize");
        assert_eq!(
            model.input_modalities,
            vec![InputModality::Text, InputModality::Image]
        );
        assert!(model.service_tiers.is_empty());
        assert!(model.additional_speed_tiers.is_empty());
        assert!(!model.supports_personality);
        assert_eq!(model.upgrade_info, None);
    }

    #[test]
    fn model_list_params_leave_out_unset_members() {
        // The transcript's client sends `{}`.
        let params: ModelListParams = round_trip(&json!({}));
        assert_eq!(params.include_hidden, None);
        assert_eq!(params.limit, None);

        let paged = json!({"includeHidden": true, "cursor": "opaque", "limit": 20});
        let params: ModelListParams = round_trip(&paged);
        assert_eq!(params.limit, Some(20));
        let back = serde_json::to_value(&params).expect("serialize");
        assert!(
            !back
                .as_object()
                .expect("an object")
                .contains_key("modelProvider")
        );
    }

    #[test]
    fn reasoning_effort_is_a_plain_string_on_the_wire() {
        // The type is a plain string on the wire; any name round-trips.
        let effort: ReasoningEffort = round_trip(&json!("ultra"));
        assert_eq!(effort.0, "ultra");
    }

    #[test]
    fn collaboration_mode_settings_tell_absent_from_null() {
        let absent: CollaborationMode =
            serde_json::from_value(json!({"mode": "plan", "settings": {"model": "m"}}))
                .expect("absent");
        assert_eq!(absent.settings.reasoning_effort, None);
        assert_eq!(absent.settings.developer_instructions, None);
        let null: CollaborationMode = serde_json::from_value(json!({
            "mode": "plan",
            "settings": {"model": "m", "reasoning_effort": null, "developer_instructions": null}
        }))
        .expect("null");
        assert_eq!(null.settings.reasoning_effort, Some(None));
        assert_eq!(null.settings.developer_instructions, Some(None));
        let set: CollaborationMode = serde_json::from_value(json!({
            "mode": "default",
            "settings": {"model": "m", "reasoning_effort": "low", "developer_instructions": "x"}
        }))
        .expect("set");
        assert_eq!(
            set.settings.reasoning_effort,
            Some(Some(ReasoningEffort("low".into())))
        );
        assert_eq!(set.settings.developer_instructions, Some(Some("x".into())));
    }

    #[test]
    fn collaboration_mode_types_use_snake_case_settings() {
        let mode = json!({
            "mode": "plan",
            "settings": {"model": "gpt-6.2-sol", "reasoning_effort": "high", "developer_instructions": null}
        });
        let parsed: CollaborationMode = round_trip(&mode);
        assert_eq!(parsed.mode, ModeKind::Plan);

        let mask =
            json!({"name": "Plan", "mode": "plan", "model": null, "reasoning_effort": "medium"});
        let parsed: CollaborationModeMask = round_trip(&mask);
        assert_eq!(parsed.model, None);
    }
}
