//! Fuzzy file-name search under a set of root directories: the one-shot `fuzzyFileSearch`
//! request, and the experimental sessions (`fuzzyFileSearch/sessionStart`, `sessionUpdate`,
//! `sessionStop`) whose results stream as `fuzzyFileSearch/sessionUpdated` and
//! `fuzzyFileSearch/sessionCompleted` notifications.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Whether a search result is a file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum FuzzyFileSearchMatchType {
    /// A regular file.
    File,
    /// A directory.
    Directory,
}

/// Params of `fuzzyFileSearch`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FuzzyFileSearchParams {
    /// What to look for; its characters must occur in a path in order, not necessarily side by
    /// side.
    pub query: String,
    /// Directories to search under.
    #[builder(default)]
    pub roots: Vec<String>,
    /// Token the client picks; a later search carrying the same token cancels this one.
    /// Absent means this search cannot be cancelled that way.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cancellation_token: Option<String>,
}

/// Result of `fuzzyFileSearch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct FuzzyFileSearchResponse {
    /// The matches, best first.
    #[builder(default)]
    pub files: Vec<FuzzyFileSearchResult>,
}

/// One file or directory that matches the query. `file_name` and `match_type` are snake_case on
/// the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FuzzyFileSearchResult {
    /// The search root the match was found under, as given in the request.
    pub root: String,
    /// Path of the match, relative to `root`.
    pub path: String,
    /// Last component of `path`, for display.
    #[serde(rename = "file_name")]
    pub file_name: String,
    /// Whether the match is a file or a directory.
    #[serde(rename = "match_type")]
    pub match_type: FuzzyFileSearchMatchType,
    /// How well it matches; higher is better. Only comparable within one result list.
    pub score: u32,
    /// Positions of the characters of `path` that matched the query, for highlighting; `null`
    /// when not computed.
    #[serde(default)]
    pub indices: Option<Vec<u32>>,
}

/// Params of `fuzzyFileSearch/sessionCompleted`: a session has finished searching for its
/// current query; no more results arrive until the query changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FuzzyFileSearchSessionCompletedNotification {
    /// The session, as named by the client in `fuzzyFileSearch/sessionStart`.
    pub session_id: String,
}

/// Params of `fuzzyFileSearch/sessionUpdated`: new results of a search session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FuzzyFileSearchSessionUpdatedNotification {
    /// The session, as named by the client in `fuzzyFileSearch/sessionStart`.
    pub session_id: String,
    /// The query these results answer; may trail the latest `sessionUpdate`, so compare before
    /// showing them.
    pub query: String,
    /// The current matches for `query`, best first: the whole list, not an addition to earlier
    /// notifications.
    #[builder(default)]
    pub files: Vec<FuzzyFileSearchResult>,
}

/// Params of `fuzzyFileSearch/sessionStart` (experimental).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FuzzyFileSearchSessionStartParams {
    /// Id the client picks for the session; later calls and the session's notifications carry
    /// it.
    pub session_id: String,
    /// Directories the session searches under.
    #[builder(default)]
    pub roots: Vec<String>,
}

/// Result of `fuzzyFileSearch/sessionStart`: empty; results arrive as notifications once a
/// query is set with `fuzzyFileSearch/sessionUpdate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FuzzyFileSearchSessionStartResponse {}

/// Params of `fuzzyFileSearch/sessionUpdate` (experimental).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FuzzyFileSearchSessionUpdateParams {
    /// The session whose query changes.
    pub session_id: String,
    /// The new query; its results arrive as `fuzzyFileSearch/sessionUpdated`.
    pub query: String,
}

/// Result of `fuzzyFileSearch/sessionUpdate`: empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FuzzyFileSearchSessionUpdateResponse {}

/// Params of `fuzzyFileSearch/sessionStop` (experimental).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FuzzyFileSearchSessionStopParams {
    /// The session to close; no more notifications arrive for it.
    pub session_id: String,
}

/// Result of `fuzzyFileSearch/sessionStop`: empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FuzzyFileSearchSessionStopResponse {}
