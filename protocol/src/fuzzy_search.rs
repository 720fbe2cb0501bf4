use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum FuzzyFileSearchMatchType {
    File,
    Directory,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cancellation_token: Option<String>,
    pub query: String,
    pub roots: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchResponse {
    pub files: Vec<FuzzyFileSearchResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchResult {
    #[serde(rename = "file_name")]
    pub file_name: String,
    #[serde(default)]
    pub indices: Option<Vec<u32>>,
    #[serde(rename = "match_type")]
    pub match_type: FuzzyFileSearchMatchType,
    pub path: String,
    pub root: String,
    pub score: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionCompletedNotification {
    pub session_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionUpdatedNotification {
    pub files: Vec<FuzzyFileSearchResult>,
    pub query: String,
    pub session_id: String,
}

/// Params of `fuzzyFileSearch/sessionStart` (experimental).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionStartParams {
    /// Chosen by the client; names the session in later calls and notifications.
    pub session_id: String,
    /// Directories to search under.
    pub roots: Vec<String>,
}

/// Result of `fuzzyFileSearch/sessionStart`: empty; results arrive as notifications.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct FuzzyFileSearchSessionStartResponse {}

/// Params of `fuzzyFileSearch/sessionUpdate` (experimental).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionUpdateParams {
    /// The session to update.
    pub session_id: String,
    /// The new query; results for it arrive as `fuzzyFileSearch/sessionUpdated`.
    pub query: String,
}

/// Result of `fuzzyFileSearch/sessionUpdate`: empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct FuzzyFileSearchSessionUpdateResponse {}

/// Params of `fuzzyFileSearch/sessionStop` (experimental).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionStopParams {
    /// The session to close.
    pub session_id: String,
}

/// Result of `fuzzyFileSearch/sessionStop`: empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct FuzzyFileSearchSessionStopResponse {}
