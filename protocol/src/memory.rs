//! Memory: a summary of what the agent learnt across threads, kept by the server, and whether
//! each thread takes part in it. `thread/memoryMode/set` turns a thread's part on or off,
//! `thread/memory/read` reads the summary as that thread sees it, `memory/status` says how far
//! the summary has been built and `memory/reset` forgets it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Whether a thread takes part in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadMemoryMode {
    /// The thread may read the memory summary and may be summarised into it.
    Enabled,
    /// The thread neither reads the memory summary nor is summarised into it.
    Disabled,
}

/// Params of `thread/memoryMode/set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadMemoryModeSetParams {
    /// The thread's new memory mode.
    pub mode: ThreadMemoryMode,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/memoryMode/set`: an empty object once the mode is recorded.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadMemoryModeSetResponse {}

/// Params of `thread/memory/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadMemoryReadParams {
    /// The thread whose view of memory to read.
    pub thread_id: String,
}

/// Result of `thread/memory/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadMemoryReadResponse {
    /// The memory summary (Markdown); `null` when the thread's memory mode is `disabled` or
    /// there is no summary (none built yet, unreadable, or blank).
    #[serde(default)]
    pub summary: Option<String>,
}

/// Params of `memory/status`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct MemoryStatusParams {
    /// How many threads the summary must have been built from to count as ready (1 to 4096);
    /// absent for 20.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub min_consolidated_threads: Option<u32>,
}

/// Result of `memory/status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct MemoryStatusResponse {
    /// How many distinct threads the memory summary was built from.
    pub v2_consolidated_threads: u32,
    /// Whether there is a summary built from at least `minConsolidatedThreads` threads.
    pub v2_ready: bool,
}

/// Result of `memory/reset`: an empty object once the memory is forgotten.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct MemoryResetResponse {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn modes_and_status_have_the_wire_names() {
        let params: ThreadMemoryModeSetParams =
            serde_json::from_value(json!({"threadId": "t", "mode": "disabled"})).expect("parse");
        assert_eq!(params.mode, ThreadMemoryMode::Disabled);
        let status = MemoryStatusResponse::builder()
            .v2_consolidated_threads(3)
            .v2_ready(false)
            .build();
        assert_eq!(
            serde_json::to_value(status).expect("serialize"),
            json!({"v2ConsolidatedThreads": 3, "v2Ready": false})
        );
        assert_eq!(
            serde_json::to_value(ThreadMemoryReadResponse::default()).expect("serialize"),
            json!({"summary": null})
        );
        assert!(
            serde_json::to_value(MemoryStatusParams::default())
                .expect("serialize")
                .get("minConsolidatedThreads")
                .is_none()
        );
    }
}
