//! `feedback/save`: a feedback report (what kind, why, tags, and optionally a thread and log
//! files) written as a ZIP file on the server's machine, for the user to send on themselves.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::LegacyAppPathString;

/// Params of `feedback/save`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FeedbackSaveParams {
    /// What kind of feedback (`bug`, `bad_result`, `good_result`, …).
    pub classification: String,
    /// Further files on the server's machine to put in the report (absolute paths); used
    /// with `includeLogs`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub extra_log_files: Option<Vec<String>>,
    /// `true` puts the logs in the report: the thread's rollout and `extraLogFiles`.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub include_logs: bool,
    /// What the user says happened.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub reason: Option<String>,
    /// Where to write the ZIP file: an absolute path on the server's machine where nothing
    /// is yet. The file is the caller's from then on.
    pub save_path: LegacyAppPathString,
    /// Labels to put in the report.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub tags: Option<BTreeMap<String, String>>,
    /// The thread the feedback is about; its settings and turns go in the report.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread_id: Option<String>,
}

/// Result of `feedback/save`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FeedbackSaveResponse {
    /// A digest identifying the prompt the thread ran with; `null` when there is none to
    /// identify.
    #[serde(default)]
    pub prompt_hash: Option<String>,
    /// The file written.
    pub saved_path: LegacyAppPathString,
    /// The thread the report is about, or the report's own id (`no-active-thread-…`) when it
    /// names none.
    pub thread_id: String,
}
