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
//! metrics; each is `"none"` (the default), `{ otlp-http = { endpoint, protocol, headers } }`
//! or `{ otlp-grpc = { endpoint, headers } }`. Read once, when the server starts.

use std::collections::BTreeMap;

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
    /// TLS settings (Codex's key); only the platform's roots are used.
    #[serde(default)]
    pub tls: Option<toml_free::Ignored>,
}

/// `{ otlp-grpc = { endpoint, headers } }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct OtlpGrpc {
    /// The collector's gRPC address (`http://host:4317`).
    pub endpoint: String,
    /// Metadata sent with every call.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// TLS settings (Codex's key); only the platform's roots are used.
    #[serde(default)]
    pub tls: Option<toml_free::Ignored>,
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

/// A value whose content is not read.
mod toml_free {
    use serde::Deserialize;

    /// Any value, ignored.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Ignored;

    impl<'de> Deserialize<'de> for Ignored {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            serde::de::IgnoredAny::deserialize(deserializer).map(|_| Self)
        }
    }
}

impl OtelConfig {
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
}
