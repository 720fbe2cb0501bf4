//! OpenTelemetry export (`[otel]` in `config.toml`): the OTLP exporters of traces, metrics and
//! logs, and the `tracing` layers that feed them.
//!
//! - Traces (`trace_exporter`): the spans of `agentwire_runtime::telemetry::spans` (requests,
//!   turns, model calls, tool calls), bridged by `tracing-opentelemetry`.
//! - Metrics (`metrics_exporter`): the OTel instruments of
//!   `agentwire_runtime::telemetry::otel_metrics`, read every 60 s (`OTEL_METRIC_EXPORT_INTERVAL`
//!   in milliseconds overrides it) and at shutdown.
//! - Logs (`exporter`): the `tracing` events at INFO and above of agentwire's own crates (WARN
//!   and above of the others), bridged by `opentelemetry-appender-tracing`; a record emitted
//!   inside an exported span carries that span's trace and span ids.
//!
//! Each exporter is `otlp-http` (protobuf or JSON, on a blocking reqwest client) or
//! `otlp-grpc` (tonic, on a one-thread tokio runtime of its own, [`Otel`]'s, so that it works
//! whatever runtime the server runs and never on it); either with the exporter table's `tls`
//! (a CA that replaces the platform's roots, a client certificate). [`exporter`] builds all
//! six kinds the same way.
//!
//! Everything is batched and sent from the SDK's own threads (spans every 5 s or 512 at a
//! time, logs every second), never from a request's: a full queue drops, a slow or unreachable
//! collector costs one warning on the log and nothing else. [`Otel`], dropped when the server
//! stops, flushes what is queued.

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use agentwire_runtime::telemetry::otel_config::{Exporter, HttpProtocol, OtelTls};
use agentwire_runtime::telemetry::{OtelConfig, spans};
use opentelemetry::KeyValue;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::tonic_types::transport::{Certificate, ClientTlsConfig, Identity};
use opentelemetry_otlp::{
    ExporterBuildError, LogExporter as OtlpLogs, MetricExporter as OtlpMetrics, Protocol,
    SpanExporter as OtlpSpans, WithExportConfig, WithHttpConfig, WithTonicConfig,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{LogBatch, LogExporter, SdkLoggerProvider};
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider, Temporality};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tokio::runtime::Handle;
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tracing::{Level, Metadata};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, filter_fn};
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
    /// The runtime of the gRPC exporters' connections (made for the first one).
    grpc: Option<tokio::runtime::Runtime>,
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

/// One signal: its `[otel]` key, its name in warnings, its OTLP/HTTP path.
struct Signal {
    key: &'static str,
    what: &'static str,
    path: &'static str,
}

const TRACES: Signal = Signal {
    key: "trace_exporter",
    what: "traces",
    path: "/v1/traces",
};
const METRICS: Signal = Signal {
    key: "metrics_exporter",
    what: "metrics",
    path: "/v1/metrics",
};
const LOGS: Signal = Signal {
    key: "exporter",
    what: "logs",
    path: "/v1/logs",
};

/// Starts the exporters `config` asks for (its `tls` paths already absolute: see
/// [`OtelConfig::with_home`]).
pub fn start(config: &OtelConfig) -> Started {
    let mut started = Started {
        otel: Otel::default(),
        layers: Vec::new(),
        problems: Vec::new(),
    };
    if !config.exports() {
        return started;
    }
    // https endpoints: reqwest and tonic are built without a default TLS provider.
    agentwire_engine::install_crypto_provider();
    let resource = resource(config.environment.as_deref().unwrap_or("dev"));
    // One warning for the whole process, whichever signal fails first.
    let warned = Arc::new(AtomicBool::new(false));
    let traces = exporter(
        &mut started,
        config.trace_exporter.as_ref(),
        &TRACES,
        &warned,
        |transport| match transport {
            Transport::Http(http) => http.configure(OtlpSpans::builder().with_http()).build(),
            Transport::Grpc(grpc) => grpc.configure(OtlpSpans::builder().with_tonic()).build(),
        },
    );
    if let Some(exporter) = traces {
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
            // Entering a span makes its context current: the log records emitted inside it
            // carry its trace and span ids.
            .with_context_activation(true)
            .with_filter(
                filter_fn(|meta| meta.target() == spans::TARGET)
                    .with_max_level_hint(LevelFilter::INFO),
            );
        started.layers.push(Box::new(layer));
        started.otel.tracer = Some(provider);
    }
    let metrics = exporter(
        &mut started,
        config.metrics_exporter.as_ref(),
        &METRICS,
        &warned,
        |transport| match transport {
            Transport::Http(http) => http.configure(OtlpMetrics::builder().with_http()).build(),
            Transport::Grpc(grpc) => grpc.configure(OtlpMetrics::builder().with_tonic()).build(),
        },
    );
    if let Some(exporter) = metrics {
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter).build())
            .with_resource(resource.clone())
            .build();
        agentwire_runtime::telemetry::otel_metrics::install(&provider.meter("agentwire"));
        started.otel.meter = Some(provider);
    }
    let logs = exporter(
        &mut started,
        config.exporter.as_ref(),
        &LOGS,
        &warned,
        |transport| match transport {
            Transport::Http(http) => http.configure(OtlpLogs::builder().with_http()).build(),
            Transport::Grpc(grpc) => grpc.configure(OtlpLogs::builder().with_tonic()).build(),
        },
    );
    if let Some(exporter) = logs {
        let provider = SdkLoggerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let layer =
            opentelemetry_appender_tracing::layer::OpenTelemetryTracingBridge::new(&provider)
                .with_filter(filter_fn(exported_event).with_max_level_hint(LevelFilter::INFO));
        started.layers.push(Box::new(layer));
        started.otel.logger = Some(provider);
    }
    started
}

/// The exporter of `signal` that `exporter` (its `[otel]` value) asks for, built by `build`
/// from its transport and watched; `None` for `none` and `statsig`, and for one that could not
/// be set up (then reported in `started.problems`).
fn exporter<E>(
    started: &mut Started,
    exporter: Option<&Exporter>,
    signal: &Signal,
    warned: &Arc<AtomicBool>,
    build: impl FnOnce(&Transport) -> Result<E, ExporterBuildError>,
) -> Option<Watched<E>> {
    let problem = |error: &dyn std::fmt::Display| format!("[otel] {}: {error}", signal.key);
    let transport = match Transport::of(exporter?, signal) {
        Ok(Some(transport)) => transport,
        Ok(None) => return None,
        Err(error) => {
            started.problems.push(problem(&error));
            return None;
        }
    };
    let runtime = match &transport {
        Transport::Http(_) => None,
        Transport::Grpc(_) => match started.otel.grpc_runtime() {
            Ok(handle) => Some(handle),
            Err(error) => {
                started.problems.push(problem(&error));
                return None;
            }
        },
    };
    // The gRPC channel starts its connection task on the runtime it is built in.
    let built = {
        let _entered = runtime.as_ref().map(Handle::enter);
        build(&transport)
    };
    match built {
        Ok(inner) => Some(Watched {
            inner,
            what: signal.what,
            endpoint: transport.endpoint().to_owned(),
            warned: warned.clone(),
            runtime,
        }),
        Err(error) => {
            started.problems.push(problem(&error));
            None
        }
    }
}

impl Otel {
    /// The runtime of the gRPC exporters, made on first use.
    fn grpc_runtime(&mut self) -> Result<Handle, String> {
        if let Some(runtime) = &self.grpc {
            return Ok(runtime.handle().clone());
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("otel-grpc")
            .enable_all()
            .build()
            .map_err(|error| format!("cannot start the gRPC exporters' runtime: {error}"))?;
        let handle = runtime.handle().clone();
        self.grpc = Some(runtime);
        Ok(handle)
    }
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
        // Everything is flushed: nothing waits for the gRPC connections' tasks.
        if let Some(runtime) = self.grpc.take() {
            runtime.shutdown_background();
        }
    }
}

/// How one exporter reaches its collector, read from its table.
enum Transport {
    Http(HttpTransport),
    Grpc(GrpcTransport),
}

/// `otlp-http`: the signal's URL, the encoding, the headers, and the client (with the
/// table's `tls`).
struct HttpTransport {
    endpoint: String,
    protocol: Protocol,
    headers: HashMap<String, String>,
    client: reqwest::blocking::Client,
}

/// `otlp-grpc`: the collector's address, the headers as gRPC metadata, and the TLS settings
/// of an `https://` address.
struct GrpcTransport {
    endpoint: String,
    metadata: MetadataMap,
    tls: Option<ClientTlsConfig>,
}

impl Transport {
    /// The transport of `exporter` for `signal`; `None` for `none` and `statsig` (Codex's own
    /// sink, which agentwire does not feed).
    fn of(exporter: &Exporter, signal: &Signal) -> Result<Option<Self>, String> {
        Ok(Some(match exporter {
            Exporter::None | Exporter::Statsig => return Ok(None),
            Exporter::OtlpHttp(http) => Self::Http(HttpTransport {
                endpoint: endpoint(&http.endpoint, signal.path),
                protocol: match http.protocol {
                    HttpProtocol::Binary => Protocol::HttpBinary,
                    HttpProtocol::Json => Protocol::HttpJson,
                },
                headers: http
                    .headers
                    .iter()
                    .map(|(name, value)| (name.clone(), value.clone()))
                    .collect(),
                client: http_client(http.tls.clone())?,
            }),
            Exporter::OtlpGrpc(grpc) => Self::Grpc(GrpcTransport {
                endpoint: grpc.endpoint.clone(),
                metadata: metadata(&grpc.headers)?,
                tls: grpc_tls(&grpc.endpoint, grpc.tls.as_ref())?,
            }),
        }))
    }

    fn endpoint(&self) -> &str {
        match self {
            Self::Http(http) => &http.endpoint,
            Self::Grpc(grpc) => &grpc.endpoint,
        }
    }
}

impl HttpTransport {
    /// `builder` (any signal's OTLP/HTTP exporter builder) set up for this transport.
    fn configure<B: WithExportConfig + WithHttpConfig>(&self, builder: B) -> B {
        builder
            .with_endpoint(self.endpoint.clone())
            .with_protocol(self.protocol)
            .with_headers(self.headers.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .with_http_client(self.client.clone())
    }
}

impl GrpcTransport {
    /// `builder` (any signal's OTLP/gRPC exporter builder) set up for this transport.
    fn configure<B: WithExportConfig + WithTonicConfig>(&self, builder: B) -> B {
        let builder = builder
            .with_endpoint(self.endpoint.clone())
            .with_protocol(Protocol::Grpc)
            .with_timeout(EXPORT_TIMEOUT)
            .with_metadata(self.metadata.clone());
        match &self.tls {
            Some(tls) => builder.with_tls_config(tls.clone()),
            None => builder,
        }
    }
}

/// The blocking HTTP client of an `otlp-http` exporter: the platform's roots, or only the
/// CA of `tls`, and its client certificate. Made on a thread of its own (a blocking reqwest
/// client must not be made inside an async runtime).
fn http_client(tls: Option<OtelTls>) -> Result<reqwest::blocking::Client, String> {
    let make = move || -> Result<reqwest::blocking::Client, String> {
        let mut builder = reqwest::blocking::Client::builder().timeout(EXPORT_TIMEOUT);
        if let Some(tls) = &tls {
            if let Some(ca) = &tls.ca_certificate {
                let certificates = reqwest::Certificate::from_pem_bundle(&read_pem(ca)?)
                    .map_err(|error| format!("tls.ca-certificate {}: {error}", ca.display()))?;
                builder = builder.tls_certs_only(certificates);
            }
            if let Some((certificate, key)) = client_identity(tls)? {
                let mut pem = certificate;
                pem.push(b'\n');
                pem.extend_from_slice(&key);
                let identity = reqwest::Identity::from_pem(&pem)
                    .map_err(|error| format!("tls.client-certificate: {error}"))?;
                builder = builder.identity(identity);
            }
        }
        builder
            .build()
            .map_err(|error| format!("cannot make the HTTP client: {error}"))
    };
    std::thread::Builder::new()
        .name("otel-http-client".to_owned())
        .spawn(make)
        .map_err(|error| format!("cannot make the HTTP client: {error}"))?
        .join()
        .map_err(|_| "cannot make the HTTP client: its thread panicked".to_owned())?
}

/// The TLS settings of an `otlp-grpc` exporter: `None` for an `http://` address; else the
/// platform's roots, or only the CA of `tls`, and its client certificate.
fn grpc_tls(endpoint: &str, tls: Option<&OtelTls>) -> Result<Option<ClientTlsConfig>, String> {
    if !endpoint.starts_with("https://") {
        return Ok(None);
    }
    let mut config = ClientTlsConfig::new();
    let ca = tls.and_then(|tls| tls.ca_certificate.as_ref());
    config = match ca {
        Some(ca) => config.ca_certificate(Certificate::from_pem(read_pem(ca)?)),
        None => config.with_native_roots(),
    };
    if let Some((certificate, key)) = tls.map(client_identity).transpose()?.flatten() {
        config = config.identity(Identity::from_pem(certificate, key));
    }
    Ok(Some(config))
}

/// A client certificate chain and its private key, PEM.
type PemIdentity = (Vec<u8>, Vec<u8>);

/// The client certificate and key of `tls` (PEM), both or neither.
fn client_identity(tls: &OtelTls) -> Result<Option<PemIdentity>, String> {
    match (&tls.client_certificate, &tls.client_private_key) {
        (None, None) => Ok(None),
        (Some(certificate), Some(key)) => Ok(Some((read_pem(certificate)?, read_pem(key)?))),
        _ => Err(
            "tls: client-certificate and client-private-key go together; neither is used"
                .to_owned(),
        ),
    }
}

/// The contents of the PEM file at `path`.
fn read_pem(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|error| format!("tls: cannot read {}: {error}", path.display()))
}

/// `headers` as gRPC metadata (names lower-cased, as HTTP/2 sends them).
fn metadata(headers: &std::collections::BTreeMap<String, String>) -> Result<MetadataMap, String> {
    let mut metadata = MetadataMap::new();
    for (name, value) in headers {
        let key = MetadataKey::from_bytes(name.to_ascii_lowercase().as_bytes())
            .map_err(|_| format!("headers: `{name}` is not a gRPC metadata name"))?;
        let value = MetadataValue::try_from(value.as_str())
            .map_err(|_| format!("headers: the value of `{name}` is not valid gRPC metadata"))?;
        metadata.insert(key, value);
    }
    Ok(metadata)
}

/// Whether a `tracing` event leaves as an OTLP log record: INFO and above from agentwire's
/// crates, WARN and above from the others, never the HTTP and OTel crates' own (an export
/// must not log into the export).
fn exported_event(meta: &Metadata<'_>) -> bool {
    let target = meta.target();
    if !meta.is_event()
        || target == spans::TARGET
        || [
            "opentelemetry",
            "reqwest",
            "hyper",
            "h2",
            "tower",
            "tonic",
            "rustls",
        ]
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

/// An exporter whose first failure is logged once (with `what` and the endpoint), and whose
/// recovery after one is logged at INFO; a gRPC one's exports run inside its `runtime`.
#[derive(Debug)]
struct Watched<E> {
    inner: E,
    what: &'static str,
    endpoint: String,
    /// Shared by every exporter of the process.
    warned: Arc<AtomicBool>,
    /// The runtime of a gRPC exporter's connections.
    runtime: Option<Handle>,
}

impl<E> Watched<E> {
    /// `future` (one of the inner exporter's calls), polled inside the exporter's runtime
    /// (the SDK polls it on its own thread); its result noted.
    async fn run<F: Future<Output = OTelSdkResult>>(&self, future: F) -> OTelSdkResult {
        let result = InRuntime {
            runtime: self.runtime.as_ref(),
            future: Box::pin(future),
        }
        .await;
        self.note(&result);
        result
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

/// A future polled with `runtime` (if any) entered, so that the timers and connections it
/// makes belong to that runtime.
struct InRuntime<'a, F> {
    runtime: Option<&'a Handle>,
    future: Pin<Box<F>>,
}

impl<F: Future> Future for InRuntime<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let _entered = this.runtime.map(Handle::enter);
        this.future.as_mut().poll(cx)
    }
}

impl<E: SpanExporter> SpanExporter for Watched<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.run(self.inner.export(batch)).await
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let _entered = self.runtime.as_ref().map(Handle::enter);
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
        self.run(self.inner.export(batch)).await
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let _entered = self.runtime.as_ref().map(Handle::enter);
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: PushMetricExporter> PushMetricExporter for Watched<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        self.run(self.inner.export(metrics)).await
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let _entered = self.runtime.as_ref().map(Handle::enter);
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

    #[test]
    fn grpc_headers_become_metadata_and_bad_ones_are_named() {
        let headers = [("X-Api-Key".to_owned(), "k1".to_owned())].into();
        let metadata = metadata(&headers).expect("valid metadata");
        assert_eq!(
            metadata.get("x-api-key").and_then(|v| v.to_str().ok()),
            Some("k1")
        );
        let bad = [("bad name".to_owned(), "v".to_owned())].into();
        let error = metadata_error(&bad);
        assert!(error.contains("`bad name`"), "{error}");
    }

    fn metadata_error(headers: &std::collections::BTreeMap<String, String>) -> String {
        match metadata(headers) {
            Ok(map) => panic!("accepted: {map:?}"),
            Err(error) => error,
        }
    }

    #[test]
    fn a_client_certificate_without_its_key_is_refused() {
        let tls = OtelTls {
            client_certificate: Some("/nonexistent/client.pem".into()),
            ..OtelTls::default()
        };
        let error = client_identity(&tls).expect_err("half an identity");
        assert!(error.contains("go together"), "{error}");
        let missing = OtelTls {
            ca_certificate: Some("/nonexistent/ca.pem".into()),
            ..OtelTls::default()
        };
        let error = grpc_tls("https://c:4317", Some(&missing)).expect_err("a missing CA file");
        assert!(error.contains("/nonexistent/ca.pem"), "{error}");
        assert!(
            grpc_tls("http://c:4317", Some(&missing))
                .expect("plain gRPC")
                .is_none()
        );
    }
}
