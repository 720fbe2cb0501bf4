//! The process's metrics registry and its text exposition (OpenMetrics 1.0, which Prometheus
//! scrapes; served as `GET /metrics`).
//!
//! One registry per process ([`metrics`]), filled by the runtime (requests, connections,
//! overload refusals, server requests) and the engine (turns, model calls, tokens, tool runs,
//! sandbox refusals, PostgreSQL relay lag) through the functions of [`super::events`]. Every label value comes from
//! a closed set (method names of the method table, transport names, statuses, decisions,
//! classified reasons, configured provider ids), so the number of series stays bounded
//! whatever peers send.

use std::sync::LazyLock;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// Labels of one request method and how it ended.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    /// The method name (`unknown` for a name the method table does not have).
    pub method: &'static str,
    /// `ok`, or `error` with `code` set.
    pub outcome: &'static str,
    /// The JSON-RPC error code; `0` for `ok`.
    pub code: i64,
}

/// A label set of one string.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct MethodLabel {
    /// The method name.
    pub method: &'static str,
}

/// A transport (`stdio`, `ws`, `unix`).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TransportLabel {
    /// The transport name.
    pub transport: &'static str,
}

/// A turn's final status and kind.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TurnLabels {
    /// `completed`, `interrupted`, `failed`.
    pub status: &'static str,
    /// `turn` (`turn/start`, `review/start`), `shell_command` (`thread/shellCommand`) or
    /// `compaction` (`thread/compact/start`).
    pub kind: &'static str,
}

/// A model provider (a configured provider id).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ProviderLabel {
    /// The provider id.
    pub provider: String,
}

/// A failed model call's provider and classified reason.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ModelErrorLabels {
    /// The provider id.
    pub provider: String,
    /// The classified reason (a `codexErrorInfo` name, or `stream_ended` / `unclassified`).
    pub reason: String,
}

/// A kind of token.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct KindLabel {
    /// `input`, `cached_input`, `output`, `reasoning_output`.
    pub kind: &'static str,
}

/// An approval's decision.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ApprovalLabels {
    /// The server request method.
    pub method: &'static str,
    /// The decision the client gave (`accept`, `decline`, …), or `timeout`, `cancelled`,
    /// `error`, `closed`.
    pub decision: String,
}

/// A tool run.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ToolLabels {
    /// `shell`, `apply_patch`, `mcp`, `dynamic`.
    pub tool: &'static str,
    /// The item's final status (`completed`, `failed`, `declined`, …).
    pub status: String,
}

/// What a sandbox refusal refused.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RefusalLabel {
    /// `patch` or `command`.
    pub what: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Latency buckets, in seconds: 1 ms to about 65 s.
fn latency() -> Histogram {
    Histogram::new((0..17).map(|i| 0.001 * f64::from(2u32.pow(i))))
}

/// Duration buckets for turns and approvals, in seconds: 50 ms to about an hour.
fn long() -> Histogram {
    Histogram::new((0..17).map(|i| 0.05 * f64::from(2u32.pow(i))))
}

/// Every metric of the process.
pub struct Metrics {
    registry: Registry,
    pub(crate) requests: Family<RequestLabels, Counter>,
    pub(crate) request_seconds: Histograms<MethodLabel>,
    pub(crate) overloaded: Counter,
    pub(crate) requests_in_flight: Family<TransportLabel, Gauge>,
    pub(crate) connections_open: Family<TransportLabel, Gauge>,
    pub(crate) connections: Family<TransportLabel, Counter>,
    pub(crate) turns: Family<TurnLabels, Counter>,
    pub(crate) turn_seconds: Histograms<TurnLabels>,
    pub(crate) model_calls: Family<ProviderLabel, Counter>,
    pub(crate) model_errors: Family<ModelErrorLabels, Counter>,
    pub(crate) first_token_seconds: Histograms<ProviderLabel>,
    pub(crate) tokens: Family<KindLabel, Counter>,
    pub(crate) approvals: Family<ApprovalLabels, Counter>,
    pub(crate) approval_wait_seconds: Histograms<MethodLabel>,
    pub(crate) tool_runs: Family<ToolLabels, Counter>,
    pub(crate) sandbox_refusals: Family<RefusalLabel, Counter>,
    pub(crate) relay_lag_seconds: Histogram,
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::with_prefix("agentwire");
        let requests = Family::default();
        registry.register(
            "requests",
            "JSON-RPC requests answered, by method and outcome",
            requests.clone(),
        );
        let request_seconds: Histograms<MethodLabel> = Family::new_with_constructor(latency);
        registry.register_with_unit(
            "request_duration",
            "Time from a request's arrival to its answer",
            Unit::Seconds,
            request_seconds.clone(),
        );
        let overloaded = Counter::default();
        registry.register(
            "overloaded_refusals",
            "Requests refused with -32001 because the ingress queue was full",
            overloaded.clone(),
        );
        let requests_in_flight = Family::default();
        registry.register(
            "requests_in_flight",
            "Requests accepted and not answered yet (the ingress queue, bounded by \
             max_in_flight_requests), by transport",
            requests_in_flight.clone(),
        );
        let connections_open = Family::default();
        registry.register(
            "connections_open",
            "Connections open now, by transport",
            connections_open.clone(),
        );
        let connections = Family::default();
        registry.register(
            "connections",
            "Connections opened, by transport",
            connections.clone(),
        );
        let turns = Family::default();
        registry.register(
            "turns",
            "Turns ended, by final status and kind",
            turns.clone(),
        );
        let turn_seconds: Histograms<TurnLabels> = Family::new_with_constructor(long);
        registry.register_with_unit(
            "turn_duration",
            "How long turns ran, by final status and kind",
            Unit::Seconds,
            turn_seconds.clone(),
        );
        let model_calls = Family::default();
        registry.register(
            "model_calls",
            "Model calls started, by provider",
            model_calls.clone(),
        );
        let model_errors = Family::default();
        registry.register(
            "model_call_errors",
            "Model calls that failed, by provider and classified reason",
            model_errors.clone(),
        );
        let first_token_seconds: Histograms<ProviderLabel> = Family::new_with_constructor(latency);
        registry.register_with_unit(
            "model_time_to_first_token",
            "Time from a model call's start to its first streamed event",
            Unit::Seconds,
            first_token_seconds.clone(),
        );
        let tokens = Family::default();
        registry.register(
            "tokens",
            "Tokens the model calls reported, by kind",
            tokens.clone(),
        );
        let approvals = Family::default();
        registry.register(
            "approvals",
            "Approval requests settled, by method and decision",
            approvals.clone(),
        );
        let approval_wait_seconds: Histograms<MethodLabel> = Family::new_with_constructor(long);
        registry.register_with_unit(
            "approval_wait",
            "How long approval requests waited for their answer",
            Unit::Seconds,
            approval_wait_seconds.clone(),
        );
        let tool_runs = Family::default();
        registry.register(
            "tool_runs",
            "Tool calls ended, by tool and final status",
            tool_runs.clone(),
        );
        let sandbox_refusals = Family::default();
        registry.register(
            "sandbox_refusals",
            "Actions the sandbox policy refused",
            sandbox_refusals.clone(),
        );
        let relay_lag_seconds = latency();
        registry.register_with_unit(
            "relay_lag",
            "PostgreSQL store: time from a worker publishing a notification to another worker \
             handing it to its followers",
            Unit::Seconds,
            relay_lag_seconds.clone(),
        );
        Self {
            registry,
            requests,
            request_seconds,
            overloaded,
            requests_in_flight,
            connections_open,
            connections,
            turns,
            turn_seconds,
            model_calls,
            model_errors,
            first_token_seconds,
            tokens,
            approvals,
            approval_wait_seconds,
            tool_runs,
            sandbox_refusals,
            relay_lag_seconds,
        }
    }

    /// The exposition of every metric (OpenMetrics text, ending with `# EOF`).
    pub fn render(&self) -> String {
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::warn!(%error, "metrics not rendered");
        }
        text
    }
}

/// The `Content-Type` of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);
    &METRICS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_names_every_family_and_ends_with_eof() {
        use super::super::events;
        events::request_answered("thread/start", None, std::time::Duration::from_millis(3));
        let mut call = events::ModelCall::start("fixture");
        call.streamed();
        events::sandbox_refused("patch");
        events::relay_delivered(std::time::Duration::from_millis(2));
        drop(events::request_queued("stdio"));
        events::turn_ended(
            ("t", "u"),
            "turn",
            "completed",
            std::time::Duration::from_secs(1),
            &agentwire_protocol::TokenUsageBreakdown::builder()
                .input_tokens(1)
                .cached_input_tokens(0)
                .output_tokens(2)
                .reasoning_output_tokens(0)
                .total_tokens(3)
                .build(),
        );
        let text = metrics().render();
        for name in [
            "agentwire_requests",
            "agentwire_request_duration_seconds",
            "agentwire_turns",
            "agentwire_turn_duration_seconds",
            "agentwire_model_calls",
            "agentwire_model_time_to_first_token_seconds",
            "agentwire_sandbox_refusals",
            "agentwire_overloaded_refusals",
            "agentwire_requests_in_flight",
            "agentwire_relay_lag_seconds",
        ] {
            assert!(
                text.contains(&format!("# TYPE {name} ")),
                "{name} in {text}"
            );
        }
        assert!(text.contains("agentwire_turns_total{status=\"completed\",kind=\"turn\"}"));
        assert!(text.contains(
            "agentwire_requests_total{method=\"thread/start\",outcome=\"ok\",code=\"0\"}"
        ));
        assert!(text.contains("agentwire_requests_in_flight{transport=\"stdio\"} 0"));
        assert!(text.ends_with("# EOF\n"));
    }
}
