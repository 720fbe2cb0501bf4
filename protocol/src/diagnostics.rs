//! `server/diagnostics`: facts about the server process and its load, for support screens.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Params of `server/diagnostics` (none are defined yet).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ServerDiagnosticsParams {}

/// Result of `server/diagnostics`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ServerDiagnosticsResponse {
    /// Counts and sizes measured now, each by a dotted name.
    pub gauges: Vec<ServerDiagnosticsGauge>,
    /// The server process.
    pub process: ServerDiagnosticsProcess,
}

/// One measured value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ServerDiagnosticsGauge {
    /// What is measured (`app.threads.loaded`, `process.open_fds`, …).
    pub name: String,
    /// Its value now.
    pub value: u64,
}

/// The server process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ServerDiagnosticsProcess {
    /// Its process id.
    pub id: u32,
    /// Memory it holds that the system counts against it (macOS's measure); `null` where the
    /// system has no such measure.
    #[serde(default)]
    pub physical_footprint_bytes: Option<u64>,
    /// Memory it holds in RAM now; `null` when it cannot be read.
    #[serde(default)]
    pub resident_memory_bytes: Option<u64>,
}
