//! The built-in collaboration modes: what `collaborationMode/list` offers and what a turn's
//! `collaborationMode` selects.

use agentwire_protocol::{CollaborationModeMask, ModeKind};

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
    }
}

/// The presets, in display order. They select a mode only; model and reasoning effort stay
/// as they are (`null`).
pub(crate) fn presets() -> Vec<CollaborationModeMask> {
    vec![
        CollaborationModeMask {
            name: "Default".to_owned(),
            mode: Some(ModeKind::Default),
            model: None,
            reasoning_effort: None,
        },
        CollaborationModeMask {
            name: "Plan".to_owned(),
            mode: Some(ModeKind::Plan),
            model: None,
            reasoning_effort: None,
        },
    ]
}
