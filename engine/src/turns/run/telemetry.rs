//! What a turn reports to operations (see `agentwire_runtime::telemetry`): its start, the
//! tokens its model calls used, its tool runs and its end; and its spans (exported as traces
//! with `[otel] trace_exporter`): the turn's, a `model_call` span per model call and a
//! `tool_call` span per tool call under it. Its log events are emitted inside its spans, so
//! that the exported log records carry the turn's trace id. The prompt and the command lines
//! are logged only when the configuration says `[otel] log_user_prompt = true`; spans never
//! carry them.

use std::time::Duration;

use agentwire_protocol::{ThreadItem, TokenUsageBreakdown, TurnStatus, UserInput};
use agentwire_runtime::telemetry::{self, spans};
use agentwire_store::meta::ThreadSettings;
use tracing::Span;

/// A turn's telemetry state.
pub(super) struct TurnTelemetry {
    /// The tokens of the turn's model calls so far.
    tokens: TokenUsageBreakdown,
    /// Whether the prompt and command lines may be logged (`[otel] log_user_prompt`).
    log_user_prompt: bool,
    /// The turn's span: its parent is the request that started the turn.
    span: Span,
    /// Model calls made so far.
    calls: u32,
    /// The span of the tool call running now (`Span::none()` between calls).
    tool: Span,
}

impl TurnTelemetry {
    /// The telemetry of turn `turn_id` of `thread_id`, created while the request that starts
    /// it is handled (whose span becomes the turn span's parent).
    pub(super) fn new(thread_id: &str, turn_id: &str) -> Self {
        Self {
            tokens: crate::threads::usage::zero(),
            log_user_prompt: false,
            span: spans::turn_span(thread_id, turn_id, "turn"),
            calls: 0,
            tool: Span::none(),
        }
    }

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
        // Logged inside the turn's span: an exported record carries its trace.
        self.span.in_scope(|| {
            telemetry::turn_started(
                thread_id,
                turn_id,
                &settings.model_provider,
                &settings.model,
                prompt.as_deref(),
            );
        });
    }

    /// A model call of the turn to `model` of `provider` starts now.
    pub(super) fn model_call(
        &mut self,
        ids: (&str, &str),
        provider: &str,
        model: &str,
    ) -> telemetry::ModelCall {
        self.calls += 1;
        telemetry::ModelCall::start(provider).traced(&self.span, ids, model, self.calls)
    }

    /// A tool call (`tool`: the name the model called) starts now: its span, current until
    /// [`Self::tool_ended`].
    pub(super) fn tool_started(&mut self, ids: (&str, &str), tool: &str) {
        self.tool = spans::tool_span(&self.span, ids, tool);
    }

    /// The tool call running now waited `wait` for an approval that ended as `decision`.
    pub(super) fn approval(&self, wait: Duration, decision: &str) {
        spans::tool_span_approval(&self.tool, wait, decision);
    }

    /// The tool call running now ended (its span with it).
    pub(super) fn tool_ended(&mut self) {
        self.tool = Span::none();
    }

    /// A model call of the turn reported `usage`.
    pub(super) fn usage(&mut self, usage: &TokenUsageBreakdown) {
        self.tokens = crate::threads::usage::add(&self.tokens, usage);
    }

    /// An item of the turn completed (tool items are counted and logged, inside the tool
    /// call's span, else the turn's).
    pub(super) fn item(&self, ids: (&str, &str), item: &ThreadItem) {
        let scope = if self.tool.is_none() {
            &self.span
        } else {
            &self.tool
        };
        scope.in_scope(|| telemetry::item_completed(ids, item, self.log_user_prompt, &self.tool));
    }

    /// The turn ended as `status` after `duration`.
    pub(super) fn ended(&self, ids: (&str, &str), status: &TurnStatus, duration: Duration) {
        let status = status_name(status);
        spans::turn_span_ended(&self.span, status, &self.tokens);
        self.span
            .in_scope(|| telemetry::turn_ended(ids, "turn", status, duration, &self.tokens));
    }
}

/// A turn-like job of `kind` (`shell_command`, `compaction`) ended as `status` after
/// `duration`: counted with the turns, and recorded in its span (the current one).
pub(crate) fn ended_job(
    ids: (&str, &str),
    kind: &'static str,
    status: &TurnStatus,
    duration: Duration,
) {
    let status = status_name(status);
    let tokens = crate::threads::usage::zero();
    spans::turn_span_ended(&Span::current(), status, &tokens);
    telemetry::turn_ended(ids, kind, status, duration, &tokens);
}

/// The name of a turn's final status in metrics and spans.
fn status_name(status: &TurnStatus) -> &'static str {
    match status {
        TurnStatus::Completed => "completed",
        TurnStatus::Interrupted => "interrupted",
        TurnStatus::Failed => "failed",
        _ => "in_progress",
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
