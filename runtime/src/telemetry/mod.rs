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

pub mod events;
mod metrics;

pub use events::*;
pub use metrics::{CONTENT_TYPE, Metrics, metrics};
