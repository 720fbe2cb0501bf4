//! Operations: structured log events and metrics.
//!
//! - [`events`]: one function per operational event (a request answered, a connection
//!   opened, a thread started, a turn ended, a model call failed, a server request settled, a
//!   tool run, a sandbox refusal, a configuration reload). Each logs a structured `tracing`
//!   event, whose `event` field names it, and counts it in the metrics. The engine calls them
//!   from its seams; they never log what the user or the model wrote unless
//!   `[otel] log_user_prompt = true`.
//! - [`metrics()`]: the process's registry and its OpenMetrics text
//!   ([`Metrics::render`]), served as `GET /metrics` by the websocket listener and by
//!   `--metrics-listen`.
//! - OpenTelemetry (`[otel]`, see [`otel_config`]): [`spans`] are the request, turn, model
//!   call and tool call spans exported as traces; [`otel_metrics`] mirrors the registry's
//!   instruments for OTLP; the log events above are exported as OTLP logs. The exporters
//!   themselves are set up by the `agentwire` binary (`cli/src/otel.rs`).

pub mod events;
mod metrics;
pub mod otel_config;
pub mod otel_metrics;
pub mod spans;

pub use events::*;
pub use metrics::{CONTENT_TYPE, Metrics, metrics};
pub use otel_config::OtelConfig;
