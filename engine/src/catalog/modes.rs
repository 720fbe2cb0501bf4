//! The built-in collaboration modes: what `collaborationMode/list` offers and what a turn's
//! `collaborationMode` selects.

use agentwire_protocol::{CollaborationMode, CollaborationModeMask, ModeKind};
use agentwire_store::meta::SettingsOverrides;

/// Developer instructions of plan mode, used when a turn selects it with
/// `developer_instructions: null`.
pub(crate) const PLAN_INSTRUCTIONS: &str = "You are in plan mode. Do not change any file and do \
not run commands that change anything. Study the request and the code, ask the user about \
anything unclear, and answer with a step-by-step plan for the user to review before any work \
starts.";

/// The built-in developer instructions of `mode` (`None`: the mode adds none).
pub(crate) fn instructions(mode: ModeKind) -> Option<&'static str> {
    match mode {
        ModeKind::Plan => Some(PLAN_INSTRUCTIONS),
        ModeKind::Default => None,
        _ => None,
    }
}

/// The presets, in display order. They select a mode only; model and reasoning effort stay
/// as they are (`null`).
pub(crate) fn presets() -> Vec<CollaborationModeMask> {
    vec![
        CollaborationModeMask::builder()
            .name("Default".to_owned())
            .mode(ModeKind::Default)
            .build(),
        CollaborationModeMask::builder()
            .name("Plan".to_owned())
            .mode(ModeKind::Plan)
            .build(),
    ]
}

/// Puts a turn's `collaborationMode` into its settings overrides, over `model` and `effort`:
/// `settings.model` replaces the model (an empty one keeps it); `reasoning_effort` and
/// `developer_instructions` are set by a value, cleared by `null` (for the instructions: the
/// mode's built-in ones, if it has any) and kept when absent.
pub(crate) fn apply(mode: CollaborationMode, overrides: &mut SettingsOverrides) {
    overrides.collaboration_mode = Some(mode.mode);
    let settings = mode.settings;
    if !settings.model.is_empty() {
        overrides.model = Some(settings.model);
    }
    match settings.reasoning_effort {
        None => {}
        Some(Some(effort)) => overrides.reasoning_effort = Some(effort),
        Some(None) => {
            overrides.reasoning_effort = None;
            overrides.clear_reasoning_effort = true;
        }
    }
    match settings.developer_instructions {
        None => {}
        Some(Some(text)) => overrides.developer_instructions = Some(text),
        Some(None) => match instructions(mode.mode) {
            Some(text) => overrides.developer_instructions = Some(text.to_owned()),
            None => {
                overrides.developer_instructions = None;
                overrides.clear_developer_instructions = true;
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_protocol::{ReasoningEffort, Settings};

    fn mode(
        kind: ModeKind,
        effort: Option<Option<&str>>,
        text: Option<Option<&str>>,
    ) -> CollaborationMode {
        CollaborationMode::builder()
            .mode(kind)
            .settings(
                Settings::builder()
                    .model("m".to_owned())
                    .maybe_reasoning_effort(
                        effort.map(|e| e.map(|e| ReasoningEffort(e.to_owned()))),
                    )
                    .maybe_developer_instructions(text.map(|t| t.map(str::to_owned)))
                    .build(),
            )
            .build()
    }

    #[test]
    fn absent_keeps_null_clears_and_a_value_sets() {
        let mut kept = SettingsOverrides {
            reasoning_effort: Some(ReasoningEffort("high".to_owned())),
            ..SettingsOverrides::default()
        };
        apply(mode(ModeKind::Default, None, None), &mut kept);
        assert_eq!(kept.model.as_deref(), Some("m"));
        assert_eq!(
            kept.reasoning_effort,
            Some(ReasoningEffort("high".to_owned()))
        );
        assert!(!kept.clear_reasoning_effort && !kept.clear_developer_instructions);

        let mut cleared = SettingsOverrides::default();
        apply(
            mode(ModeKind::Default, Some(None), Some(None)),
            &mut cleared,
        );
        assert!(cleared.clear_reasoning_effort && cleared.clear_developer_instructions);

        let mut plan = SettingsOverrides::default();
        apply(
            mode(ModeKind::Plan, Some(Some("low")), Some(None)),
            &mut plan,
        );
        assert_eq!(
            plan.reasoning_effort,
            Some(ReasoningEffort("low".to_owned()))
        );
        assert_eq!(
            plan.developer_instructions.as_deref(),
            Some(PLAN_INSTRUCTIONS)
        );

        let mut set = SettingsOverrides::default();
        apply(mode(ModeKind::Plan, None, Some(Some("mine"))), &mut set);
        assert_eq!(set.developer_instructions.as_deref(), Some("mine"));
    }
}
