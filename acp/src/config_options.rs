//! The session's config options (`configOptions` of `session/new`, `session/load` and
//! `session/resume`; `session/set_config_option`).
//!
//! | option id          | category        | values                                                         | engine |
//! |--------------------|-----------------|----------------------------------------------------------------|--------|
//! | `mode`             | `mode`          | the [modes](crate::modes)                                      | as `session/set_mode` |
//! | `model`            | `model`         | `model/list`'s visible models (and the thread's own model)     | `turn/start` `model` |
//! | `reasoning_effort` | `thought_level` | the current model's supported efforts (`model/list`); absent when it lists none | `turn/start` `effort` |
//!
//! A change applies from the session's next prompt on (the engine keeps a turn's model and
//! effort for later turns). An unknown option id or a value not offered is -32602.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CurrentModeUpdate, SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption,
    SessionNotification, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
};
use agent_client_protocol::{Client, Error, ErrorCode};
use agentwire_mcp_server::engine_link::EngineLink;
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::ModelList;
use agentwire_protocol::{Model, ModelListParams};
use serde_json::json;

use crate::agent::{AcpAgent, engine_params, error};
use crate::modes::Mode;

/// The id of the mode option.
pub const MODE: &str = "mode";
/// The id of the model option.
pub const MODEL: &str = "model";
/// The id of the reasoning effort option.
pub const REASONING_EFFORT: &str = "reasoning_effort";

/// The model and reasoning effort a session's turns run with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The model slug.
    pub model: String,
    /// The reasoning effort; `None` leaves the model's default.
    pub effort: Option<String>,
}

/// The engine's visible models (`model/list`, every page; none when it fails).
async fn models(link: &EngineLink) -> Vec<Model> {
    let mut models = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let Ok(params) = engine_params::<ModelListParams>(
            ModelList::NAME,
            json!({"cursor": cursor, "limit": 100}),
        ) else {
            break;
        };
        match link.request::<ModelList>(&params).await {
            Ok(page) => {
                models.extend(page.data.into_iter().filter(|m| !m.hidden));
                cursor = page.next_cursor;
                if cursor.is_none() {
                    break;
                }
            }
            Err(e) => {
                tracing::info!(error = %e, "model/list failed; the model option lists the thread's model only");
                break;
            }
        }
    }
    models
}

/// The options of a session in `mode` running `settings`, given the engine's `models`.
fn build(mode: Mode, settings: &Settings, models: &[Model]) -> Vec<SessionConfigOption> {
    let modes: Vec<SessionConfigSelectOption> = Mode::ALL
        .into_iter()
        .map(|m| SessionConfigSelectOption::new(m.id(), m.name()))
        .collect();
    let mut options = vec![
        SessionConfigOption::select(MODE, "Mode", mode.id(), modes)
            .category(SessionConfigOptionCategory::Mode)
            .description("The approval policy and sandbox the agent works with.".to_owned()),
    ];
    let mut choices: Vec<SessionConfigSelectOption> = models
        .iter()
        .map(|m| {
            SessionConfigSelectOption::new(m.model.clone(), m.display_name.clone())
                .description(Some(m.description.clone()).filter(|d| !d.is_empty()))
        })
        .collect();
    if !models.iter().any(|m| m.model == settings.model) {
        choices.insert(
            0,
            SessionConfigSelectOption::new(settings.model.clone(), settings.model.clone()),
        );
    }
    options.push(
        SessionConfigOption::select(MODEL, "Model", settings.model.clone(), choices)
            .category(SessionConfigOptionCategory::Model),
    );
    if let Some(model) = models.iter().find(|m| m.model == settings.model)
        && !model.supported_reasoning_efforts.is_empty()
    {
        let current = settings
            .effort
            .clone()
            .unwrap_or_else(|| model.default_reasoning_effort.0.clone());
        let efforts: Vec<SessionConfigSelectOption> = model
            .supported_reasoning_efforts
            .iter()
            .map(|e| {
                SessionConfigSelectOption::new(
                    e.reasoning_effort.0.clone(),
                    e.reasoning_effort.0.clone(),
                )
                .description(Some(e.description.clone()).filter(|d| !d.is_empty()))
            })
            .collect();
        options.push(
            SessionConfigOption::select(REASONING_EFFORT, "Reasoning effort", current, efforts)
                .category(SessionConfigOptionCategory::ThoughtLevel),
        );
    }
    options
}

/// The options of a session in `mode` running `settings`.
pub async fn options(
    link: &EngineLink,
    mode: Mode,
    settings: &Settings,
) -> Vec<SessionConfigOption> {
    build(mode, settings, &models(link).await)
}

/// Whether `options` offers `value` for option `id`.
fn offered(options: &[SessionConfigOption], id: &str, value: &str) -> Option<bool> {
    let option = options.iter().find(|o| o.id.0.as_ref() == id)?;
    let json = serde_json::to_value(option).ok()?;
    let values = json["options"].as_array()?;
    Some(values.iter().any(|v| v["value"] == value))
}

impl AcpAgent {
    /// `session/set_config_option`: the mode, model or reasoning effort of the session's next
    /// prompts; the options as they now are.
    pub async fn set_config_option(
        &self,
        cx: &ConnectionTo<Client>,
        request: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let id = request.config_id.0.to_string();
        let Some(value) = request.value.as_value_id().map(|v| v.0.to_string()) else {
            return Err(error(
                ErrorCode::INVALID_PARAMS,
                format!("config option {id:?} takes a value id, not a boolean"),
            ));
        };
        let (mode, settings) =
            self.with_session(&request.session_id, |s| (s.mode, s.settings.clone()))?;
        let models = models(self.link()?).await;
        let before = build(mode, &settings, &models);
        match offered(&before, &id, &value) {
            None => {
                return Err(error(
                    ErrorCode::INVALID_PARAMS,
                    format!(
                        "unknown config option {id:?}: the options are {}",
                        before
                            .iter()
                            .map(|o| o.id.0.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            Some(false) => {
                return Err(error(
                    ErrorCode::INVALID_PARAMS,
                    format!("{value:?} is not a value of config option {id:?}"),
                ));
            }
            Some(true) => {}
        }
        let (mode, settings) = self.with_session(&request.session_id, |s| {
            match id.as_str() {
                MODE => {
                    if let Some(mode) = Mode::from_id(&value)
                        && mode != s.mode
                    {
                        s.mode = mode;
                        s.mode_changed = true;
                    }
                }
                MODEL if value != s.settings.model => {
                    s.settings.model = value.clone();
                    // The new model's default effort, unless it supports the one chosen.
                    let keeps = models.iter().any(|m| {
                        m.model == value
                            && s.settings.effort.as_ref().is_some_and(|e| {
                                m.supported_reasoning_efforts
                                    .iter()
                                    .any(|o| &o.reasoning_effort.0 == e)
                            })
                    });
                    if !keeps {
                        s.settings.effort = None;
                    }
                    s.settings_changed = true;
                }
                REASONING_EFFORT if s.settings.effort.as_ref() != Some(&value) => {
                    s.settings.effort = Some(value.clone());
                    s.settings_changed = true;
                }
                _ => {}
            }
            (s.mode, s.settings.clone())
        })?;
        if id == MODE {
            cx.send_notification(SessionNotification::new(
                request.session_id.clone(),
                SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.id())),
            ))?;
        }
        Ok(SetSessionConfigOptionResponse::new(build(
            mode, &settings, &models,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(slug: &str, efforts: &[&str]) -> Model {
        serde_json::from_value(json!({
            "id": slug, "model": slug, "displayName": slug.to_uppercase(), "description": "",
            "isDefault": false, "hidden": false, "defaultReasoningEffort": "medium",
            "supportedReasoningEfforts": efforts.iter().map(|e| json!({"reasoningEffort": e, "description": ""})).collect::<Vec<_>>(),
            "inputModalities": ["text"], "serviceTiers": [], "additionalSpeedTiers": [],
            "supportsPersonality": false
        }))
        .expect("a model")
    }

    #[test]
    fn options_offer_modes_models_and_the_models_efforts() {
        let models = [model("m1", &["low", "high"]), model("m2", &[])];
        let settings = Settings {
            model: "m1".to_owned(),
            effort: None,
        };
        let options = build(Mode::Auto, &settings, &models);
        let json = serde_json::to_value(&options).expect("json");
        assert_eq!(json[0]["id"], "mode");
        assert_eq!(json[0]["currentValue"], "auto");
        assert_eq!(json[1]["id"], "model");
        assert_eq!(json[1]["options"].as_array().map(Vec::len), Some(2));
        assert_eq!(json[2]["id"], "reasoning_effort");
        assert_eq!(json[2]["currentValue"], "medium");
        assert_eq!(offered(&options, MODEL, "m2"), Some(true));
        assert_eq!(offered(&options, MODEL, "m3"), Some(false));
        assert_eq!(offered(&options, "temperature", "1"), None);

        // A model the catalog does not list is still offered (first); no effort option.
        let settings = Settings {
            model: "local".to_owned(),
            effort: None,
        };
        let json = serde_json::to_value(build(Mode::Ask, &settings, &models)).expect("json");
        assert_eq!(json[1]["options"][0]["value"], "local");
        assert_eq!(json.as_array().map(Vec::len), Some(2));
    }
}
