//! The spans exported as OpenTelemetry traces (`[otel] trace_exporter`): `tracing` spans of
//! the target [`TARGET`], bridged by `tracing-opentelemetry` when the exporter is on. When it
//! is off no subscriber takes them: creating one is a disabled span, recording into it a
//! no-op.
//!
//! | span (OTel name) | where | attributes |
//! |---|---|---|
//! | the method (`turn/start`) | each JSON-RPC request, arrival to answer | `rpc.system`, `rpc.method`, `rpc.jsonrpc.request_id`, `connection.id`, `transport`, `outcome`, `rpc.jsonrpc.error_code` |
//! | `turn` | a turn, `thread/shellCommand`, a compaction | `thread.id`, `turn.id`, `turn.kind`, `turn.status`, `tokens.*` |
//! | `model_call` | one model call of a turn | `thread.id`, `turn.id`, `model.provider`, `model.name`, `model.attempt`, `model.time_to_first_token_ms`, `tokens.*`, `error.reason` |
//! | `tool_call` | one tool call of a turn | `thread.id`, `turn.id`, `item.id`, `tool.name`, `tool.status`, `tool.exit_code`, `tool.duration_ms`, `approval.wait_ms`, `approval.decision` |
//!
//! A request's parent is the W3C `traceparent` of its `params._meta.traceparent`, else the one
//! of the websocket upgrade that opened its connection; a turn's is the request that started
//! it; a model or tool call's is its turn. None of them carries what the user or the model
//! wrote.

use std::collections::HashMap;

use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::Value;
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use agentwire_protocol::TokenUsageBreakdown;

/// The `tracing` target of every exported span (not a module path, so that no module's own
/// events share it); the log output leaves these spans out.
pub const TARGET: &str = "agentwire.spans";

/// Longest `traceparent` read (version 00 is 55 characters; later versions may add fields).
const MAX_TRACEPARENT: usize = 256;

/// The span of one JSON-RPC request: `method` is the method table's name (`unknown` for a
/// name it does not have), `request_id` the id as the client sent it, `transport` `stdio`,
/// `ws` or `unix`; `upgrade_traceparent` the `traceparent` header of the connection's
/// websocket upgrade.
pub fn request_span(
    method: &'static str,
    request_id: &dyn std::fmt::Display,
    (connection, transport): (u64, &'static str),
    params: Option<&Value>,
    upgrade_traceparent: Option<&str>,
) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "jsonrpc.request",
        otel.name = method,
        otel.kind = "server",
        otel.status_code = Empty,
        rpc.system = "jsonrpc",
        rpc.method = method,
        rpc.jsonrpc.request_id = %request_id,
        connection.id = i64::try_from(connection).unwrap_or(i64::MAX),
        transport,
        outcome = Empty,
        rpc.jsonrpc.error_code = Empty,
    );
    if !span.is_disabled() {
        let traceparent = params
            .and_then(|params| params.get("_meta"))
            .and_then(|meta| meta.get("traceparent"))
            .and_then(Value::as_str)
            .or(upgrade_traceparent);
        if let Some(parent) = traceparent.and_then(remote_parent) {
            // Only fails for a disabled span, which this is not.
            let _ = span.set_parent(parent);
        }
    }
    span
}

/// Records how the request of `span` ended: `code` is `None` for a result, the JSON-RPC error
/// code otherwise.
pub fn request_ended(span: &Span, code: Option<i64>) {
    match code {
        None => {
            span.record("outcome", "ok");
        }
        Some(code) => {
            span.record("outcome", "error");
            span.record("rpc.jsonrpc.error_code", code);
            span.record("otel.status_code", "ERROR");
        }
    }
}

/// The context of a W3C `traceparent` (`00-<trace id>-<parent id>-<flags>`), if it is one.
pub fn remote_parent(traceparent: &str) -> Option<Context> {
    if traceparent.len() > MAX_TRACEPARENT {
        return None;
    }
    let carrier = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    let context = TraceContextPropagator::new().extract(&carrier);
    context.span().span_context().is_valid().then_some(context)
}

/// The span of a turn-like job of a thread (`kind`: `turn`, `shell_command`, `compaction`);
/// its parent is the current span (the request that started it).
pub fn turn_span(thread_id: &str, turn_id: &str, kind: &'static str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "turn",
        thread.id = thread_id,
        turn.id = turn_id,
        turn.kind = kind,
        turn.status = Empty,
        otel.status_code = Empty,
        tokens.input = Empty,
        tokens.cached_input = Empty,
        tokens.output = Empty,
        tokens.reasoning_output = Empty,
    )
}

/// Records the end of the turn of `span`.
pub fn turn_span_ended(span: &Span, status: &str, tokens: &TokenUsageBreakdown) {
    span.record("turn.status", status);
    if status == "failed" {
        span.record("otel.status_code", "ERROR");
    }
    record_tokens(span, tokens);
}

/// `duration` in whole milliseconds, as a signed integer (OTLP attributes are `int64`;
/// `tracing-opentelemetry` exports a `u64` as a string).
pub(super) fn millis(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

fn record_tokens(span: &Span, tokens: &TokenUsageBreakdown) {
    span.record("tokens.input", tokens.input_tokens);
    span.record("tokens.cached_input", tokens.cached_input_tokens);
    span.record("tokens.output", tokens.output_tokens);
    span.record("tokens.reasoning_output", tokens.reasoning_output_tokens);
}

/// The span of one model call of the turn of `parent`.
pub(super) fn model_span(
    parent: &Span,
    (thread_id, turn_id): (&str, &str),
    (provider, model): (&str, &str),
    attempt: u32,
) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent,
        "model_call",
        otel.kind = "client",
        otel.status_code = Empty,
        thread.id = thread_id,
        turn.id = turn_id,
        model.provider = provider,
        model.name = model,
        model.attempt = i64::from(attempt),
        model.time_to_first_token_ms = Empty,
        tokens.input = Empty,
        tokens.cached_input = Empty,
        tokens.output = Empty,
        tokens.reasoning_output = Empty,
        error.reason = Empty,
    )
}

/// Records what a model call reported.
pub(super) fn model_span_usage(span: &Span, usage: &TokenUsageBreakdown) {
    record_tokens(span, usage);
}

/// Records a model call's failure.
pub(super) fn model_span_failed(span: &Span, reason: &str) {
    span.record("error.reason", reason);
    span.record("otel.status_code", "ERROR");
}

/// The span of one tool call (`tool`: the name the model called) of the turn of `parent`.
pub fn tool_span(parent: &Span, (thread_id, turn_id): (&str, &str), tool: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent,
        "tool_call",
        otel.status_code = Empty,
        thread.id = thread_id,
        turn.id = turn_id,
        item.id = Empty,
        tool.name = tool,
        tool.status = Empty,
        tool.exit_code = Empty,
        tool.duration_ms = Empty,
        approval.wait_ms = Empty,
        approval.decision = Empty,
    )
}

/// Records an approval the tool call of `span` waited for.
pub fn tool_span_approval(span: &Span, wait: std::time::Duration, decision: &str) {
    span.record("approval.wait_ms", millis(wait));
    span.record("approval.decision", decision);
}

/// Records the item a tool call ended with.
pub(super) fn tool_span_item(
    span: &Span,
    item_id: &str,
    status: &str,
    exit_code: Option<i32>,
    duration_ms: Option<i64>,
) {
    span.record("item.id", item_id);
    span.record("tool.status", status);
    if let Some(code) = exit_code {
        span.record("tool.exit_code", code);
    }
    if let Some(ms) = duration_ms {
        span.record("tool.duration_ms", ms);
    }
    if status == "failed" {
        span.record("otel.status_code", "ERROR");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_is_read_and_garbage_is_not() {
        let parent = remote_parent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .expect("a valid traceparent");
        assert_eq!(
            parent.span().span_context().trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert!(remote_parent("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_none());
        assert!(remote_parent("not a traceparent").is_none());
        assert!(remote_parent(&"0".repeat(300)).is_none());
    }
}
