//! The `update_plan` tool: the model keeps a step-by-step plan of its task, and each call
//! replaces it. It runs nothing; the turn engine shows the plan to clients as a `plan` item
//! (Markdown, [`PlanArgs::markdown`]) and as `turn/plan/updated`.
//!
//! Its arguments are shaped as Codex defines them: an optional `explanation` and a `plan`,
//! a list of `{step, status}` where `status` is `pending`, `in_progress` or `completed`.

use agentwire_protocol::{TurnPlanStep, TurnPlanStepStatus};
use serde::Deserialize;

pub(crate) use crate::specs::UPDATE_PLAN;

/// What the model is told once its plan is taken.
pub const PLAN_TAKEN: &str = "Plan updated";

/// The arguments of an `update_plan` call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// Why the plan changed.
    #[serde(default)]
    pub explanation: Option<String>,
    /// Every step, in order.
    pub plan: Vec<PlanItem>,
}

/// One step of the plan.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanItem {
    /// What the step is.
    pub step: String,
    /// How far it has got.
    pub status: PlanStatus,
}

/// The progress of a step, as the model writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started (`pending`).
    Pending,
    /// Being worked on (`in_progress`).
    InProgress,
    /// Done (`completed`).
    Completed,
}

impl PlanArgs {
    /// The plan as the Markdown text of a `plan` item: the explanation, if any, then one
    /// checklist line per step (`- [x]` done, `- [ ]` otherwise, the step in progress
    /// marked so).
    pub fn markdown(&self) -> String {
        let mut text = String::new();
        if let Some(explanation) = self.explanation.as_deref().map(str::trim)
            && !explanation.is_empty()
        {
            text.push_str(explanation);
            text.push_str("\n\n");
        }
        for item in &self.plan {
            let line = match item.status {
                PlanStatus::Completed => format!("- [x] {}\n", item.step),
                PlanStatus::InProgress => format!("- [ ] {} (in progress)\n", item.step),
                PlanStatus::Pending => format!("- [ ] {}\n", item.step),
            };
            text.push_str(&line);
        }
        text
    }

    /// The plan as the wire's steps.
    pub fn steps(&self) -> Vec<TurnPlanStep> {
        self.plan
            .iter()
            .map(|item| {
                TurnPlanStep::builder()
                    .step(item.step.clone())
                    .status(match item.status {
                        PlanStatus::Pending => TurnPlanStepStatus::Pending,
                        PlanStatus::InProgress => TurnPlanStepStatus::InProgress,
                        PlanStatus::Completed => TurnPlanStepStatus::Completed,
                    })
                    .build()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_become_wire_steps() {
        let args: PlanArgs = serde_json::from_str(
            r#"{"explanation":"why","plan":[{"step":"a","status":"completed"},
                {"step":"b","status":"in_progress"},{"step":"c","status":"pending"}]}"#,
        )
        .expect("parses");
        let steps = serde_json::to_value(args.steps()).expect("serializes");
        assert_eq!(
            steps,
            json!([
                {"step": "a", "status": "completed"},
                {"step": "b", "status": "inProgress"},
                {"step": "c", "status": "pending"}
            ])
        );
        assert_eq!(args.explanation.as_deref(), Some("why"));
        assert_eq!(
            args.markdown(),
            "why\n\n- [x] a\n- [ ] b (in progress)\n- [ ] c\n"
        );
    }
}
