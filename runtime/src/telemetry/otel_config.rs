//! The `[otel]` table of `config.toml`, as Codex users write it:
//!
//! ```toml
//! [otel]
//! environment = "staging"            # deployment.environment of everything exported
//! log_user_prompt = false            # prompts and command lines stay in the process
//! exporter = { otlp-http = { endpoint = "http://collector:4318/v1/logs", protocol = "binary" } }
//! trace_exporter = { otlp-http = { endpoint = "http://collector:4318/v1/traces", protocol = "json", headers = { "x-api-key" = "…" } } }
//! metrics_exporter = "none"
//! ```
//!
//! `exporter` sends the log events, `trace_exporter` the spans, `metrics_exporter` the
//! metrics; each is `"none"` (the default), `{ otlp-http = { endpoint, protocol, headers, tls } }`
//! or `{ otlp-grpc = { endpoint, headers, tls } }`, where `tls = { ca-certificate,
//! client-certificate, client-private-key }` names PEM files (relative paths are read from the
//! agentwire home, as Codex reads them from its home). Read once, when the server starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The `[otel]` table. Keys Codex has and agentwire does not use (`span_attributes`,
/// `tracestate`, `headers_helper`, …) are accepted and ignored.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct OtelConfig {
    /// Where the log events go (`exporter`).
    #[serde(default)]
    pub exporter: Option<Exporter>,
    /// Where the spans go (`trace_exporter`).
    #[serde(default)]
    pub trace_exporter: Option<Exporter>,
    /// Where the metrics go (`metrics_exporter`).
    #[serde(default)]
    pub metrics_exporter: Option<Exporter>,
    /// The `deployment.environment` resource attribute (Codex's default: `dev`).
    #[serde(default)]
    pub environment: Option<String>,
    /// Whether prompts and command lines may appear in logs and exported telemetry (default
    /// false).
    #[serde(default)]
    pub log_user_prompt: Option<bool>,
}

/// One exporter: `"none"`, `{ otlp-http = {…} }` or `{ otlp-grpc = {…} }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Exporter {
    /// Nothing is exported.
    None,
    /// Codex's own analytics sink; agentwire exports nothing for it.
    Statsig,
    /// OTLP over HTTP.
    OtlpHttp(OtlpHttp),
    /// OTLP over gRPC.
    OtlpGrpc(OtlpGrpc),
}

/// `{ otlp-http = { endpoint, protocol, headers } }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct OtlpHttp {
    /// The URL the payloads are POSTed to (`http://host:4318/v1/traces`); a URL without a
    /// path gets the signal's (`/v1/traces`, `/v1/metrics`, `/v1/logs`).
    pub endpoint: String,
    /// `binary` (protobuf, the default) or `json`.
    #[serde(default)]
    pub protocol: HttpProtocol,
    /// Headers sent with every request (an API key, say).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The certificates of an `https://` endpoint (else the platform's roots only).
    #[serde(default)]
    pub tls: Option<OtelTls>,
}

/// `{ otlp-grpc = { endpoint, headers } }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct OtlpGrpc {
    /// The collector's gRPC address (`http://host:4317`).
    pub endpoint: String,
    /// Metadata sent with every call.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The certificates of an `https://` endpoint (else the platform's roots only).
    #[serde(default)]
    pub tls: Option<OtelTls>,
}

/// `tls = { ca-certificate, client-certificate, client-private-key }` of an exporter: PEM
/// files. The CA is trusted beside the platform's roots (a collector with a private CA); the
/// client certificate and its key, both or neither, are presented to a collector that asks
/// for one (mutual TLS).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct OtelTls {
    /// A PEM file of CA certificates the collector's certificate may chain to.
    #[serde(default)]
    pub ca_certificate: Option<PathBuf>,
    /// A PEM file of the client's certificate chain.
    #[serde(default)]
    pub client_certificate: Option<PathBuf>,
    /// A PEM file of the client certificate's private key.
    #[serde(default)]
    pub client_private_key: Option<PathBuf>,
}

impl OtelTls {
    /// The same, relative paths taken from `home`.
    fn under(&mut self, home: &Path) {
        for path in [
            &mut self.ca_certificate,
            &mut self.client_certificate,
            &mut self.client_private_key,
        ]
        .into_iter()
        .flatten()
        {
            if path.is_relative() {
                *path = home.join(&*path);
            }
        }
    }
}

/// The body encoding of OTLP over HTTP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpProtocol {
    /// Protobuf (`application/x-protobuf`).
    #[default]
    Binary,
    /// JSON (`application/json`).
    Json,
}

impl OtelConfig {
    /// The same, the relative paths of its `tls` tables taken from `home` (the agentwire
    /// home, where `config.toml` is).
    pub fn with_home(mut self, home: &Path) -> Self {
        for exporter in [
            &mut self.exporter,
            &mut self.trace_exporter,
            &mut self.metrics_exporter,
        ]
        .into_iter()
        .flatten()
        {
            let tls = match exporter {
                Exporter::OtlpHttp(http) => http.tls.as_mut(),
                Exporter::OtlpGrpc(grpc) => grpc.tls.as_mut(),
                Exporter::None | Exporter::Statsig => None,
            };
            if let Some(tls) = tls {
                tls.under(home);
            }
        }
        self
    }

    /// Whether any signal is exported.
    pub fn exports(&self) -> bool {
        [&self.exporter, &self.trace_exporter, &self.metrics_exporter]
            .into_iter()
            .any(|exporter| {
                matches!(
                    exporter,
                    Some(Exporter::OtlpHttp(_) | Exporter::OtlpGrpc(_))
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> OtelConfig {
        #[derive(Deserialize)]
        struct File {
            otel: OtelConfig,
        }
        let value: serde_json::Value = serde_json::from_str(text).expect("json");
        serde_json::from_value::<File>(value).expect("config").otel
    }

    #[test]
    fn exporters_read_as_codex_writes_them() {
        let otel = parse(
            r#"{"otel": {
                "exporter": "none",
                "trace_exporter": {"otlp-http": {"endpoint": "http://c:4318/v1/traces",
                    "protocol": "json", "headers": {"x-k": "v"}}},
                "metrics_exporter": {"otlp-grpc": {"endpoint": "http://c:4317"}},
                "environment": "prod",
                "span_attributes": {"a": "b"}
            }}"#,
        );
        assert_eq!(otel.exporter, Some(Exporter::None));
        let Some(Exporter::OtlpHttp(http)) = &otel.trace_exporter else {
            panic!("{otel:?}");
        };
        assert_eq!(http.protocol, HttpProtocol::Json);
        assert_eq!(http.headers.get("x-k").map(String::as_str), Some("v"));
        assert!(matches!(otel.metrics_exporter, Some(Exporter::OtlpGrpc(_))));
        assert_eq!(otel.environment.as_deref(), Some("prod"));
        assert!(otel.exports());
        assert!(!OtelConfig::default().exports());
    }

    #[test]
    fn tls_paths_read_as_codex_writes_them_relative_to_the_home() {
        let otel = parse(
            r#"{"otel": {
                "exporter": {"otlp-grpc": {"endpoint": "https://c:4317", "tls": {
                    "ca-certificate": "certs/ca.pem",
                    "client-certificate": "/etc/c/client.pem",
                    "client-private-key": "/etc/c/client-key.pem"}}},
                "trace_exporter": {"otlp-http": {"endpoint": "https://c/v1/traces",
                    "tls": {"ca-certificate": "ca.pem"}}}
            }}"#,
        )
        .with_home(Path::new("/home/u/.agentwire"));
        let Some(Exporter::OtlpGrpc(grpc)) = &otel.exporter else {
            panic!("{otel:?}");
        };
        let tls = grpc.tls.as_ref().expect("tls");
        assert_eq!(
            tls.ca_certificate.as_deref(),
            Some(Path::new("/home/u/.agentwire/certs/ca.pem"))
        );
        assert_eq!(
            tls.client_certificate.as_deref(),
            Some(Path::new("/etc/c/client.pem"))
        );
        assert_eq!(
            tls.client_private_key.as_deref(),
            Some(Path::new("/etc/c/client-key.pem"))
        );
        let Some(Exporter::OtlpHttp(http)) = &otel.trace_exporter else {
            panic!("{otel:?}");
        };
        let tls = http.tls.as_ref().expect("tls");
        assert_eq!(
            tls.ca_certificate.as_deref(),
            Some(Path::new("/home/u/.agentwire/ca.pem"))
        );
        assert_eq!(tls.client_certificate, None);
    }
}
