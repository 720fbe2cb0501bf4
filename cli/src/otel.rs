//! OpenTelemetry export (`[otel]` in `config.toml`): the OTLP exporters of traces, metrics and
//! logs, and the `tracing` layers that feed them.
//!
//! - Traces (`trace_exporter`): the spans of `agentwire_runtime::telemetry::spans` (requests,
//!   turns, model calls, tool calls), bridged by `tracing-opentelemetry`.
//! - Metrics (`metrics_exporter`): the OTel instruments of
//!   `agentwire_runtime::telemetry::otel_metrics`, read every 60 s (`OTEL_METRIC_EXPORT_INTERVAL`
//!   in milliseconds overrides it) and at shutdown.
//! - Logs (`exporter`): the `tracing` events at INFO and above of agentwire's own crates (WARN
//!   and above of the others), bridged by `opentelemetry-appender-tracing`.
//!
//! Everything is batched and sent from the SDK's own threads (spans every 5 s or 512 at a
//! time, logs every second), never from a request's: a full queue drops, a slow or unreachable
//! collector costs one warning on the log and nothing else. [`Otel`], dropped when the server
//! stops, flushes what is queued. OTLP over HTTP (protobuf or JSON) is built in; `otlp-grpc` is
//! not (it would bring tonic, h2 and prost's gRPC stack into every build): such an exporter is
//! reported and left off.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agentwire_runtime::telemetry::otel_config::{Exporter, HttpProtocol, OtlpHttp};
use agentwire_runtime::telemetry::{OtelConfig, spans};
use opentelemetry::KeyValue;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{LogBatch, LogExporter, SdkLoggerProvider};
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider, Temporality};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing::{Level, Metadata};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::registry::Registry;

/// A layer of the process's subscriber.
pub type BoxedLayer = Box<dyn Layer<Registry> + Send + Sync>;

/// How long one export may take before it counts as failed.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// The running exporters; dropping it flushes and stops them.
#[derive(Default)]
pub struct Otel {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
    logger: Option<SdkLoggerProvider>,
}

/// What [`start`] set up: the exporters, the layers to add to the subscriber, and the
/// problems to log once the subscriber is in place.
pub struct Started {
    /// The exporters.
    pub otel: Otel,
    /// The `tracing` layers feeding them.
    pub layers: Vec<BoxedLayer>,
    /// Exporters that could not be set up, one line each.
    pub problems: Vec<String>,
}

/// Starts the exporters `config` asks for.
pub fn start(config: &OtelConfig) -> Started {
    let mut started = Started {
        otel: Otel::default(),
        layers: Vec::new(),
        problems: Vec::new(),
    };
    if !config.exports() {
        return started;
    }
    // https endpoints: reqwest is built without a default TLS provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let resource = resource(config.environment.as_deref().unwrap_or("dev"));
    // One warning for the whole process, whichever signal fails first.
    let warned = Arc::new(AtomicBool::new(false));
    if let Some(http) = http_of(
        config.trace_exporter.as_ref(),
        "trace_exporter",
        &mut started,
    ) {
        let built = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(endpoint(&http.endpoint, "/v1/traces"))
            .with_protocol(protocol(http.protocol))
            .with_headers(headers(http))
            .with_timeout(EXPORT_TIMEOUT)
            .build();
        match built {
            Ok(exporter) => {
                let exporter = Watched::new(exporter, "traces", &http.endpoint, &warned);
                let provider = SdkTracerProvider::builder()
                    .with_batch_exporter(exporter)
                    .with_resource(resource.clone())
                    .build();
                let layer = tracing_opentelemetry::layer()
                    .with_tracer(provider.tracer("agentwire"))
                    .with_threads(false)
                    .with_location(false)
                    .with_target(false)
                    .with_tracked_inactivity(false)
                    .with_filter(filter_fn(|meta| meta.target() == spans::TARGET));
                started.layers.push(Box::new(layer));
                started.otel.tracer = Some(provider);
            }
            Err(error) => started
                .problems
                .push(format!("[otel] trace_exporter: {error}")),
        }
    }
    if let Some(http) = http_of(
        config.metrics_exporter.as_ref(),
        "metrics_exporter",
        &mut started,
    ) {
        let built = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_endpoint(endpoint(&http.endpoint, "/v1/metrics"))
            .with_protocol(protocol(http.protocol))
            .with_headers(headers(http))
            .with_timeout(EXPORT_TIMEOUT)
            .build();
        match built {
            Ok(exporter) => {
                let exporter = Watched::new(exporter, "metrics", &http.endpoint, &warned);
                let provider = SdkMeterProvider::builder()
                    .with_reader(PeriodicReader::builder(exporter).build())
                    .with_resource(resource.clone())
                    .build();
                agentwire_runtime::telemetry::otel_metrics::install(&provider.meter("agentwire"));
                started.otel.meter = Some(provider);
            }
            Err(error) => started
                .problems
                .push(format!("[otel] metrics_exporter: {error}")),
        }
    }
    if let Some(http) = http_of(config.exporter.as_ref(), "exporter", &mut started) {
        let built = opentelemetry_otlp::LogExporter::builder()
            .with_http()
            .with_endpoint(endpoint(&http.endpoint, "/v1/logs"))
            .with_protocol(protocol(http.protocol))
            .with_headers(headers(http))
            .with_timeout(EXPORT_TIMEOUT)
            .build();
        match built {
            Ok(exporter) => {
                let exporter = Watched::new(exporter, "logs", &http.endpoint, &warned);
                let provider = SdkLoggerProvider::builder()
                    .with_batch_exporter(exporter)
                    .with_resource(resource)
                    .build();
                let layer = opentelemetry_appender_tracing::layer::OpenTelemetryTracingBridge::new(
                    &provider,
                )
                .with_filter(filter_fn(exported_event));
                started.layers.push(Box::new(layer));
                started.otel.logger = Some(provider);
            }
            Err(error) => started.problems.push(format!("[otel] exporter: {error}")),
        }
    }
    started
}

impl Drop for Otel {
    fn drop(&mut self) {
        // Spans and metrics first: a warning they log can still leave with the logs.
        if let Some(tracer) = self.tracer.take() {
            let _ = tracer.shutdown();
        }
        if let Some(meter) = self.meter.take() {
            let _ = meter.shutdown();
        }
        if let Some(logger) = self.logger.take() {
            let _ = logger.shutdown();
        }
    }
}

/// The `otlp-http` settings of `exporter`; `None` for `none`, `statsig` (Codex's own sink)
/// and `otlp-grpc`, the last reported as a problem.
fn http_of<'a>(
    exporter: Option<&'a Exporter>,
    key: &str,
    started: &mut Started,
) -> Option<&'a OtlpHttp> {
    match exporter? {
        Exporter::OtlpHttp(http) => Some(http),
        Exporter::OtlpGrpc(grpc) => {
            started.problems.push(format!(
                "[otel] {key}: otlp-grpc ({}) is not built into agentwire; use otlp-http \
                 (a collector's port 4318); nothing is exported for it",
                grpc.endpoint
            ));
            None
        }
        Exporter::None | Exporter::Statsig => None,
    }
}

/// Whether a `tracing` event leaves as an OTLP log record: INFO and above from agentwire's
/// crates, WARN and above from the others, never the HTTP and OTel crates' own (an export
/// must not log into the export).
fn exported_event(meta: &Metadata<'_>) -> bool {
    let target = meta.target();
    if !meta.is_event()
        || target == spans::TARGET
        || ["opentelemetry", "reqwest", "hyper", "h2", "tower", "rustls"]
            .iter()
            .any(|quiet| target.starts_with(quiet))
    {
        return false;
    }
    if target.starts_with("agentwire") {
        *meta.level() <= Level::INFO
    } else {
        *meta.level() <= Level::WARN
    }
}

/// The resource of everything exported.
fn resource(environment: &str) -> Resource {
    Resource::builder()
        .with_service_name("agentwire")
        .with_attributes([
            KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
            KeyValue::new("deployment.environment", environment.to_owned()),
            KeyValue::new("deployment.environment.name", environment.to_owned()),
        ])
        .build()
}

/// `endpoint`, with the signal's path (`/v1/traces`) when it has none.
fn endpoint(endpoint: &str, signal_path: &str) -> String {
    let after_scheme = endpoint.find("://").map_or(0, |at| at + 3);
    match endpoint[after_scheme..].find('/') {
        Some(at) if after_scheme + at + 1 < endpoint.len() => endpoint.to_owned(),
        _ => format!("{}{signal_path}", endpoint.trim_end_matches('/')),
    }
}

fn protocol(protocol: HttpProtocol) -> Protocol {
    match protocol {
        HttpProtocol::Binary => Protocol::HttpBinary,
        HttpProtocol::Json => Protocol::HttpJson,
    }
}

fn headers(http: &OtlpHttp) -> HashMap<String, String> {
    http.headers
        .iter()
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// An exporter whose first failure is logged once (with `what` and the endpoint), and whose
/// recovery after one is logged at INFO.
#[derive(Debug)]
struct Watched<E> {
    inner: E,
    what: &'static str,
    endpoint: String,
    /// Shared by every exporter of the process.
    warned: Arc<AtomicBool>,
}

impl<E> Watched<E> {
    fn new(inner: E, what: &'static str, endpoint: &str, warned: &Arc<AtomicBool>) -> Self {
        Self {
            inner,
            what,
            endpoint: endpoint.to_owned(),
            warned: warned.clone(),
        }
    }

    fn note(&self, result: &OTelSdkResult) {
        match result {
            Err(error) => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        event = "otel.export_failed",
                        signal = self.what,
                        endpoint = %self.endpoint,
                        %error,
                        "OpenTelemetry export failed; telemetry is dropped while the collector \
                         does not answer (this warning is not repeated)"
                    );
                }
            }
            Ok(()) => {
                if self.warned.swap(false, Ordering::Relaxed) {
                    tracing::info!(
                        event = "otel.export_resumed",
                        signal = self.what,
                        endpoint = %self.endpoint,
                        "OpenTelemetry export works again"
                    );
                }
            }
        }
    }
}

impl<E: SpanExporter> SpanExporter for Watched<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let result = self.inner.export(batch).await;
        self.note(&result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: LogExporter> LogExporter for Watched<E> {
    async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
        let result = self.inner.export(batch).await;
        self.note(&result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: PushMetricExporter> PushMetricExporter for Watched<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let result = self.inner.export(metrics).await;
        self.note(&result);
        result
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_without_a_path_gets_the_signals() {
        assert_eq!(
            endpoint("http://127.0.0.1:4318", "/v1/traces"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            endpoint("http://127.0.0.1:4318/", "/v1/logs"),
            "http://127.0.0.1:4318/v1/logs"
        );
        assert_eq!(
            endpoint("https://c.example/otlp/v1/traces", "/v1/traces"),
            "https://c.example/otlp/v1/traces"
        );
    }
}
