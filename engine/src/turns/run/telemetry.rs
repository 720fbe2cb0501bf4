//! What a turn reports to operations (see `agentwire_runtime::telemetry`): its start, the
//! tokens its model calls used, its tool runs and its end. The prompt and the command lines
//! are logged only when the configuration says `[otel] log_user_prompt = true`.

use std::time::Duration;

use agentwire_protocol::{ThreadItem, TokenUsageBreakdown, TurnStatus, UserInput};
use agentwire_runtime::telemetry;

use crate::threads::meta::ThreadSettings;

/// A turn's telemetry state.
pub(super) struct TurnTelemetry {
    /// The tokens of the turn's model calls so far.
    tokens: TokenUsageBreakdown,
    /// Whether the prompt and command lines may be logged (`[otel] log_user_prompt`).
    log_user_prompt: bool,
}

impl Default for TurnTelemetry {
    fn default() -> Self {
        Self {
            tokens: crate::threads::usage::zero(),
            log_user_prompt: false,
        }
    }
}

impl TurnTelemetry {
    /// The turn started with `input`, the configuration allowing prompts in logs or not.
    pub(super) fn started(
        &mut self,
        (thread_id, turn_id): (&str, &str),
        settings: &ThreadSettings,
        input: &[UserInput],
        log_user_prompt: bool,
    ) {
        self.log_user_prompt = log_user_prompt;
        let prompt = log_user_prompt.then(|| prompt_text(input));
        telemetry::turn_started(
            thread_id,
            turn_id,
            &settings.model_provider,
            &settings.model,
            prompt.as_deref(),
        );
    }

    /// A model call of the turn reported `usage`.
    pub(super) fn usage(&mut self, usage: &TokenUsageBreakdown) {
        self.tokens = crate::threads::usage::add(&self.tokens, usage);
    }

    /// An item of the turn completed (tool items are counted and logged).
    pub(super) fn item(&self, (thread_id, turn_id): (&str, &str), item: &ThreadItem) {
        telemetry::item_completed(thread_id, turn_id, item, self.log_user_prompt);
    }

    /// The turn ended as `status` after `duration`.
    pub(super) fn ended(
        &self,
        (thread_id, turn_id): (&str, &str),
        status: &TurnStatus,
        duration: Duration,
    ) {
        let status = match status {
            TurnStatus::Completed => "completed",
            TurnStatus::Interrupted => "interrupted",
            TurnStatus::Failed => "failed",
            _ => "in_progress",
        };
        telemetry::turn_ended(thread_id, turn_id, status, duration, &self.tokens);
    }
}

/// The text parts of `input`, joined by newlines.
fn prompt_text(input: &[UserInput]) -> String {
    input
        .iter()
        .filter_map(|part| match part {
            UserInput::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
