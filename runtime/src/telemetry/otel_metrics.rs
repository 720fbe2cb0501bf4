//! The metrics exported over OTLP (`[otel] metrics_exporter`): OpenTelemetry instruments fed
//! from the same call sites as the Prometheus registry ([`super::metrics`]), with the same
//! names (`agentwire.requests` for `agentwire_requests_total`, `agentwire.request.duration`
//! for `agentwire_request_duration_seconds`, …), labels and buckets.
//!
//! Two sets of instruments rather than one exporter reading the other: the registry is what
//! `GET /metrics` renders and costs what it costs with or without OTLP; the OTel instruments
//! exist only once [`install`] ran (the exporter is configured), so a server that exports
//! nothing pays one atomic load per event for them.

use std::sync::OnceLock;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};

/// Every OTel instrument.
pub(super) struct Instruments {
    pub requests: Counter<u64>,
    pub request_duration: Histogram<f64>,
    pub overloaded: Counter<u64>,
    pub requests_in_flight: UpDownCounter<i64>,
    pub connections_open: UpDownCounter<i64>,
    pub connections: Counter<u64>,
    pub turns: Counter<u64>,
    pub turn_duration: Histogram<f64>,
    pub model_calls: Counter<u64>,
    pub model_errors: Counter<u64>,
    pub first_token: Histogram<f64>,
    pub tokens: Counter<u64>,
    pub approvals: Counter<u64>,
    pub approval_wait: Histogram<f64>,
    pub tool_runs: Counter<u64>,
    pub sandbox_refusals: Counter<u64>,
    pub relay_lag: Histogram<f64>,
}

static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();

/// The instruments, once [`install`] ran.
pub(super) fn get() -> Option<&'static Instruments> {
    INSTRUMENTS.get()
}

/// Latency bucket bounds, in seconds: 1 ms to about 65 s (as the Prometheus histograms).
fn latency() -> Vec<f64> {
    (0..17).map(|i| 0.001 * f64::from(2u32.pow(i))).collect()
}

/// Duration bucket bounds for turns and approvals, in seconds: 50 ms to about an hour.
fn long() -> Vec<f64> {
    (0..17).map(|i| 0.05 * f64::from(2u32.pow(i))).collect()
}

/// Creates the instruments on `meter` (the OTLP meter provider's); later calls do nothing.
pub fn install(meter: &Meter) {
    let counter = |name: &'static str, description: &'static str| {
        meter
            .u64_counter(name)
            .with_description(description)
            .build()
    };
    let histogram = |name: &'static str, description: &'static str, bounds: Vec<f64>| {
        meter
            .f64_histogram(name)
            .with_description(description)
            .with_unit("s")
            .with_boundaries(bounds)
            .build()
    };
    let instruments = Instruments {
        requests: counter(
            "agentwire.requests",
            "JSON-RPC requests answered, by method and outcome",
        ),
        request_duration: histogram(
            "agentwire.request.duration",
            "Time from a request's arrival to its answer",
            latency(),
        ),
        overloaded: counter(
            "agentwire.overloaded_refusals",
            "Requests refused with -32001 because the ingress queue was full",
        ),
        requests_in_flight: meter
            .i64_up_down_counter("agentwire.requests_in_flight")
            .with_description(
                "Requests accepted and not answered yet (the ingress queue, bounded by \
                 max_in_flight_requests), by transport",
            )
            .build(),
        connections_open: meter
            .i64_up_down_counter("agentwire.connections_open")
            .with_description("Connections open now, by transport")
            .build(),
        connections: counter("agentwire.connections", "Connections opened, by transport"),
        turns: counter("agentwire.turns", "Turns ended, by kind and final status"),
        turn_duration: histogram(
            "agentwire.turn.duration",
            "How long turns ran, by kind and final status",
            long(),
        ),
        model_calls: counter("agentwire.model_calls", "Model calls started, by provider"),
        model_errors: counter(
            "agentwire.model_call_errors",
            "Model calls that failed, by provider and classified reason",
        ),
        first_token: histogram(
            "agentwire.model.time_to_first_token",
            "Time from a model call's start to its first streamed event",
            latency(),
        ),
        tokens: counter(
            "agentwire.tokens",
            "Tokens the model calls reported, by kind",
        ),
        approvals: counter(
            "agentwire.approvals",
            "Approval requests settled, by method and decision",
        ),
        approval_wait: histogram(
            "agentwire.approval.wait",
            "How long approval requests waited for their answer",
            long(),
        ),
        tool_runs: counter(
            "agentwire.tool_runs",
            "Tool calls ended, by tool and final status",
        ),
        sandbox_refusals: counter(
            "agentwire.sandbox_refusals",
            "Actions the sandbox policy refused",
        ),
        relay_lag: histogram(
            "agentwire.relay.lag",
            "PostgreSQL store: time from a worker publishing a notification to another worker \
             handing it to its followers",
            latency(),
        ),
    };
    let _ = INSTRUMENTS.set(instruments);
}

/// One attribute.
pub(super) fn kv(key: &'static str, value: impl Into<opentelemetry::Value>) -> KeyValue {
    KeyValue::new(key, value)
}
