//! The operational events: each function logs one structured `tracing` event (an `event`
//! field naming it, the rest as fields, never prose with values interpolated) and counts it in
//! the [`metrics`](super::metrics()).
//!
//! Nothing the user or the model wrote (prompts, commands, command output, file contents) is
//! logged unless the caller says `[otel] log_user_prompt = true` allows it (the `prompt` of
//! [`turn_started`], the `log_command` of [`item_completed`]).

use std::time::{Duration, Instant};

use agentwire_protocol::{ThreadItem, ThreadItemKind, TokenUsageBreakdown};
use tracing::Span;

use super::metrics::{
    ApprovalLabels, KindLabel, MethodLabel, ModelErrorLabels, ProviderLabel, RefusalLabel,
    RequestLabels, ToolLabels, TransportLabel, TurnLabels, metrics,
};
use super::otel_metrics::{self, kv};
use super::spans;

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A request was answered: `code` is `None` for a result, the error code otherwise.
pub fn request_answered(method: &'static str, code: Option<i64>, elapsed: Duration) {
    let metrics = metrics();
    let labels = RequestLabels {
        method,
        outcome: if code.is_some() { "error" } else { "ok" },
        code: code.unwrap_or(0),
    };
    metrics.requests.get_or_create(&labels).inc();
    metrics
        .request_seconds
        .get_or_create(&MethodLabel { method })
        .observe(elapsed.as_secs_f64());
    if let Some(otel) = otel_metrics::get() {
        otel.requests.add(
            1,
            &[
                kv("method", method),
                kv("outcome", labels.outcome),
                kv("code", labels.code),
            ],
        );
        otel.request_duration
            .record(elapsed.as_secs_f64(), &[kv("method", method)]);
    }
    tracing::debug!(
        event = "request.answered",
        method,
        outcome = labels.outcome,
        code = labels.code,
        duration_ms = millis(elapsed),
    );
}

/// A request was refused with -32001 because the ingress queue was full.
pub fn request_overloaded(method: &'static str) {
    metrics().overloaded.inc();
    if let Some(otel) = otel_metrics::get() {
        otel.overloaded.add(1, &[]);
    }
    request_answered(
        method,
        Some(agentwire_protocol::jsonrpc::error_codes::SERVER_OVERLOADED),
        Duration::ZERO,
    );
}

/// A request on `transport` took a slot of the ingress queue (`max_in_flight_requests`, past
/// which requests are refused with -32001); the guard counts it answered when dropped, which
/// the server does just before it sends the answer (or when the request's work is dropped
/// unanswered, at shutdown).
pub fn request_queued(transport: &'static str) -> QueuedRequest {
    metrics()
        .requests_in_flight
        .get_or_create(&TransportLabel { transport })
        .inc();
    if let Some(otel) = otel_metrics::get() {
        otel.requests_in_flight
            .add(1, &[kv("transport", transport)]);
    }
    QueuedRequest(transport)
}

/// One request in `agentwire_requests_in_flight`.
#[derive(Debug)]
pub struct QueuedRequest(&'static str);

impl Drop for QueuedRequest {
    fn drop(&mut self) {
        metrics()
            .requests_in_flight
            .get_or_create(&TransportLabel { transport: self.0 })
            .dec();
        if let Some(otel) = otel_metrics::get() {
            otel.requests_in_flight.add(-1, &[kv("transport", self.0)]);
        }
    }
}

/// PostgreSQL store: a notification another worker published reached this worker's followers
/// `lag` after it was published (`agentwire_relay_lag_seconds`). The lag is measured between
/// two hosts' clocks: where skew makes it negative, the caller passes zero.
pub fn relay_delivered(lag: Duration) {
    let seconds = lag.as_secs_f64();
    metrics().relay_lag_seconds.observe(seconds);
    if let Some(otel) = otel_metrics::get() {
        otel.relay_lag.record(seconds, &[]);
    }
}

/// A connection opened on `transport`; the guard counts it closed when dropped.
pub fn connection_opened(transport: &'static str) -> ConnectionGauge {
    let metrics = metrics();
    let labels = TransportLabel { transport };
    metrics.connections.get_or_create(&labels).inc();
    metrics.connections_open.get_or_create(&labels).inc();
    if let Some(otel) = otel_metrics::get() {
        otel.connections.add(1, &[kv("transport", transport)]);
        otel.connections_open.add(1, &[kv("transport", transport)]);
    }
    ConnectionGauge(transport)
}

/// One open connection in `agentwire_connections_open`.
#[derive(Debug)]
pub struct ConnectionGauge(&'static str);

impl Drop for ConnectionGauge {
    fn drop(&mut self) {
        metrics()
            .connections_open
            .get_or_create(&TransportLabel { transport: self.0 })
            .dec();
        if let Some(otel) = otel_metrics::get() {
            otel.connections_open.add(-1, &[kv("transport", self.0)]);
        }
    }
}

/// `thread/start`, `thread/resume`, `thread/fork`, `thread/archive` or `thread/unarchive`
/// (`action`: `started`, `resumed`, …) did its work on `thread_id`.
pub fn thread_event(action: &'static str, thread_id: &str) {
    tracing::info!(event = "thread", action, thread.id = thread_id);
}

/// A turn began; `prompt` is its text when the configuration lets it be logged.
pub fn turn_started(
    thread_id: &str,
    turn_id: &str,
    provider: &str,
    model: &str,
    prompt: Option<&str>,
) {
    if let Some(prompt) = prompt {
        tracing::info!(
            event = "turn.started",
            thread.id = thread_id,
            turn.id = turn_id,
            provider,
            model,
            prompt
        );
    } else {
        tracing::info!(
            event = "turn.started",
            thread.id = thread_id,
            turn.id = turn_id,
            provider,
            model
        );
    }
}

/// A turn-like job of a thread ended as `status` after `duration`, its model calls having
/// used `tokens`: `kind` is `turn` (`turn/start`, `review/start`), `shell_command`
/// (`thread/shellCommand`) or `compaction` (`thread/compact/start`).
pub fn turn_ended(
    (thread_id, turn_id): (&str, &str),
    kind: &'static str,
    status: &'static str,
    duration: Duration,
    tokens: &TokenUsageBreakdown,
) {
    let metrics = metrics();
    let labels = TurnLabels { status, kind };
    metrics.turns.get_or_create(&labels).inc();
    metrics
        .turn_seconds
        .get_or_create(&labels)
        .observe(duration.as_secs_f64());
    if let Some(otel) = otel_metrics::get() {
        let attributes = [kv("status", status), kv("kind", kind)];
        otel.turns.add(1, &attributes);
        otel.turn_duration
            .record(duration.as_secs_f64(), &attributes);
    }
    tracing::info!(
        event = "turn.completed",
        thread.id = thread_id,
        turn.id = turn_id,
        kind,
        status,
        duration_ms = millis(duration),
        input_tokens = tokens.input_tokens,
        cached_input_tokens = tokens.cached_input_tokens,
        output_tokens = tokens.output_tokens,
        reasoning_output_tokens = tokens.reasoning_output_tokens,
        total_tokens = tokens.total_tokens,
    );
}

/// One model call of a turn, from its start; its span (if traced) ends when it is dropped.
#[derive(Debug)]
pub struct ModelCall {
    provider: String,
    started: Instant,
    first: bool,
    span: Span,
}

impl ModelCall {
    /// A model call to `provider` starts now.
    pub fn start(provider: &str) -> Self {
        metrics()
            .model_calls
            .get_or_create(&ProviderLabel {
                provider: provider.to_owned(),
            })
            .inc();
        if let Some(otel) = otel_metrics::get() {
            otel.model_calls
                .add(1, &[kv("provider", provider.to_owned())]);
        }
        Self {
            provider: provider.to_owned(),
            started: Instant::now(),
            first: true,
            span: Span::none(),
        }
    }

    /// The same call, traced as a `model_call` span under the turn's `parent` span: the call
    /// of `model`, the `attempt`-th model call of the turn (1 for the first; each round of
    /// tool results makes the next).
    pub fn traced(mut self, parent: &Span, ids: (&str, &str), model: &str, attempt: u32) -> Self {
        self.span = spans::model_span(parent, ids, (&self.provider, model), attempt);
        self
    }

    /// The call streamed an event; the first one sets its time to first token.
    pub fn streamed(&mut self) {
        if std::mem::take(&mut self.first) {
            let elapsed = self.started.elapsed();
            metrics()
                .first_token_seconds
                .get_or_create(&ProviderLabel {
                    provider: self.provider.clone(),
                })
                .observe(elapsed.as_secs_f64());
            if let Some(otel) = otel_metrics::get() {
                otel.first_token.record(
                    elapsed.as_secs_f64(),
                    &[kv("provider", self.provider.clone())],
                );
            }
            self.span
                .record("model.time_to_first_token_ms", spans::millis(elapsed));
        }
    }

    /// The call reported `usage`.
    pub fn usage(&self, usage: &TokenUsageBreakdown) {
        let tokens = &metrics().tokens;
        let otel = otel_metrics::get();
        for (kind, count) in [
            ("input", usage.input_tokens),
            ("cached_input", usage.cached_input_tokens),
            ("output", usage.output_tokens),
            ("reasoning_output", usage.reasoning_output_tokens),
        ] {
            let count = u64::try_from(count).unwrap_or(0);
            tokens.get_or_create(&KindLabel { kind }).inc_by(count);
            if let Some(otel) = otel {
                otel.tokens.add(count, &[kv("kind", kind)]);
            }
        }
        spans::model_span_usage(&self.span, usage);
    }

    /// The call failed; `reason` is its classification (see [`error_reason`]).
    pub fn failed(&self, thread_id: &str, turn_id: &str, reason: &str) {
        metrics()
            .model_errors
            .get_or_create(&ModelErrorLabels {
                provider: self.provider.clone(),
                reason: reason.to_owned(),
            })
            .inc();
        if let Some(otel) = otel_metrics::get() {
            otel.model_errors.add(
                1,
                &[
                    kv("provider", self.provider.clone()),
                    kv("reason", reason.to_owned()),
                ],
            );
        }
        spans::model_span_failed(&self.span, reason);
        // Inside the call's span: an exported record carries its trace.
        self.span.in_scope(|| {
            tracing::warn!(
                event = "model.failed",
                thread.id = thread_id,
                turn.id = turn_id,
                provider = %self.provider,
                reason,
                elapsed_ms = millis(self.started.elapsed()),
            );
        });
    }
}

/// The classification of a model error: the name of its `codexErrorInfo` (`unauthorized`,
/// `httpConnectionFailed`, …), else `unclassified`.
pub fn error_reason(info: Option<&agentwire_protocol::CodexErrorInfo>) -> String {
    match info.and_then(|info| serde_json::to_value(info).ok()) {
        Some(serde_json::Value::String(name)) => name,
        Some(serde_json::Value::Object(map)) => map
            .keys()
            .next()
            .cloned()
            .unwrap_or_else(|| "unclassified".to_owned()),
        _ => "unclassified".to_owned(),
    }
}

/// A server→client request was sent; the guard logs how it settled (dropped unsettled: the
/// waiting side gave up, `cancelled`).
pub fn server_request_sent(method: &'static str, connection: u64) -> ServerRequestWatch {
    tracing::info!(event = "server_request.sent", method, connection);
    ServerRequestWatch {
        method,
        connection,
        started: Instant::now(),
        settled: false,
    }
}

/// A server→client request waiting for its answer.
#[derive(Debug)]
pub struct ServerRequestWatch {
    method: &'static str,
    connection: u64,
    started: Instant,
    settled: bool,
}

impl ServerRequestWatch {
    /// The request settled: `decision` is what the client decided (the answer's `decision`),
    /// or `timeout`, `closed`, `error`, `answered` (an answer without a decision).
    pub fn settled(mut self, decision: &str) {
        self.settled = true;
        self.record(decision);
    }

    fn record(&self, decision: &str) {
        let waited = self.started.elapsed();
        let method = self.method;
        if is_approval(method) {
            let metrics = metrics();
            metrics
                .approvals
                .get_or_create(&ApprovalLabels {
                    method,
                    decision: decision.to_owned(),
                })
                .inc();
            metrics
                .approval_wait_seconds
                .get_or_create(&MethodLabel { method })
                .observe(waited.as_secs_f64());
            if let Some(otel) = otel_metrics::get() {
                otel.approvals.add(
                    1,
                    &[kv("method", method), kv("decision", decision.to_owned())],
                );
                otel.approval_wait
                    .record(waited.as_secs_f64(), &[kv("method", method)]);
            }
        }
        tracing::info!(
            event = "server_request.settled",
            method,
            connection = self.connection,
            decision,
            wait_ms = millis(waited),
        );
    }
}

impl Drop for ServerRequestWatch {
    fn drop(&mut self) {
        if !self.settled {
            self.record("cancelled");
        }
    }
}

/// Whether `method` asks for an approval.
fn is_approval(method: &str) -> bool {
    method.ends_with("requestApproval") || method.ends_with("RequestApproval")
}

/// What a server request's answer decided: its `decision` member (a string, or the name of
/// an object's single key), else its `action` (elicitations), else `answered`. The value is
/// the client's; only short identifier-like names are kept (anything else is `other`), so
/// that a peer cannot grow the metrics without bound.
pub fn answer_decision(answer: &serde_json::Value) -> String {
    let named = |value: Option<&serde_json::Value>| match value {
        Some(serde_json::Value::String(name)) => Some(name.clone()),
        Some(serde_json::Value::Object(map)) if map.len() == 1 => map.keys().next().cloned(),
        _ => None,
    };
    let name = named(answer.get("decision"))
        .or_else(|| named(answer.get("action")))
        .unwrap_or_else(|| "answered".to_owned());
    if name.len() <= 40 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        name
    } else {
        "other".to_owned()
    }
}

/// A tool item of a turn completed: counts and logs its run (tool, status, exit code,
/// duration; the command line only with `log_command`), and records it in the `tool_call`
/// span of the call that made it. Other items are ignored.
pub fn item_completed(
    (thread_id, turn_id): (&str, &str),
    item: &ThreadItem,
    log_command: bool,
    tool_span: &Span,
) {
    let (tool, status, exit_code, duration_ms, command) = match &item.kind {
        ThreadItemKind::CommandExecution {
            command,
            status,
            exit_code,
            duration_ms,
            ..
        } => (
            "shell",
            wire_name(status),
            *exit_code,
            *duration_ms,
            Some(command),
        ),
        ThreadItemKind::FileChange { status, .. } => {
            ("apply_patch", wire_name(status), None, None, None)
        }
        ThreadItemKind::McpToolCall {
            status,
            duration_ms,
            ..
        } => ("mcp", wire_name(status), None, *duration_ms, None),
        ThreadItemKind::DynamicToolCall {
            status,
            duration_ms,
            ..
        } => ("dynamic", wire_name(status), None, *duration_ms, None),
        _ => return,
    };
    metrics()
        .tool_runs
        .get_or_create(&ToolLabels {
            tool,
            status: status.clone(),
        })
        .inc();
    if let Some(otel) = otel_metrics::get() {
        otel.tool_runs
            .add(1, &[kv("tool", tool), kv("status", status.clone())]);
    }
    let item_id = item.kind.id();
    spans::tool_span_item(tool_span, item_id, &status, exit_code, duration_ms);
    match command.filter(|_| log_command) {
        Some(command) => tracing::info!(
            event = "tool.completed",
            thread.id = thread_id,
            turn.id = turn_id,
            item.id = item_id,
            tool,
            status,
            exit_code,
            duration_ms,
            command = command.as_str(),
        ),
        None => tracing::info!(
            event = "tool.completed",
            thread.id = thread_id,
            turn.id = turn_id,
            item.id = item_id,
            tool,
            status,
            exit_code,
            duration_ms,
        ),
    }
}

/// The wire name of a unit enum value (`completed`, `declined`, …).
fn wire_name(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "unknown".to_owned(),
    }
}

/// The sandbox refused `what`: a `patch` writing outside the writable roots under a policy
/// that never asks, or a `command` it could not confine (so did not run).
pub fn sandbox_refused(what: &'static str) {
    metrics()
        .sandbox_refusals
        .get_or_create(&RefusalLabel { what })
        .inc();
    if let Some(otel) = otel_metrics::get() {
        otel.sandbox_refusals.add(1, &[kv("what", what)]);
    }
    tracing::warn!(event = "sandbox.refused", what);
}

/// The configuration was read again because a file changed: `files` files, `problems`
/// problems found.
pub fn config_reloaded(files: usize, problems: usize) {
    tracing::info!(event = "config.reloaded", files, problems);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_decision_is_a_short_name_or_other() {
        assert_eq!(answer_decision(&json!({"decision": "accept"})), "accept");
        assert_eq!(
            answer_decision(&json!({"decision": {"acceptWithExecpolicyAmendment": {}}})),
            "acceptWithExecpolicyAmendment"
        );
        assert_eq!(answer_decision(&json!({"action": "decline"})), "decline");
        assert_eq!(answer_decision(&json!({"answers": {}})), "answered");
        assert_eq!(
            answer_decision(&json!({"decision": "x".repeat(41)})),
            "other"
        );
        assert_eq!(answer_decision(&json!({"decision": "a b"})), "other");
    }

    #[test]
    fn an_error_reason_is_its_info_name() {
        use agentwire_protocol::CodexErrorInfo;
        assert_eq!(
            error_reason(Some(&CodexErrorInfo::Unauthorized)),
            "unauthorized"
        );
        assert_eq!(error_reason(None), "unclassified");
    }
}
