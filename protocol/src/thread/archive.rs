//! `thread/archive`, `thread/unarchive` and `thread/name/set`, with their notifications.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Params of `thread/archive`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadArchiveParams {
    /// The thread to move to the archive.
    pub thread_id: String,
}

/// Result of `thread/archive`: an empty object once the thread is archived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadArchiveResponse {}

/// Params of `thread/archived`: a thread was moved to the archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadArchivedNotification {
    /// The thread that is now archived.
    pub thread_id: String,
}

/// Params of `thread/name/updated`: a thread's title changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadNameUpdatedNotification {
    /// The renamed thread.
    pub thread_id: String,
    /// Its new title; `null` or absent when the title was removed.
    #[serde(default)]
    pub thread_name: Option<String>,
}

/// Params of `thread/name/set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSetNameParams {
    /// The thread to rename.
    pub thread_id: String,
    /// The title to show for the thread from now on.
    pub name: String,
}

/// Result of `thread/name/set`: an empty object; clients learn of the change through
/// `thread/name/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSetNameResponse {}

/// Params of `thread/unarchive`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadUnarchiveParams {
    /// The archived thread to bring back.
    pub thread_id: String,
}

/// Result of `thread/unarchive`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadUnarchiveResponse {
    /// The restored thread as it now stands.
    pub thread: Thread,
}

/// Params of `thread/unarchived`: a thread was taken out of the archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadUnarchivedNotification {
    /// The thread that is no longer archived.
    pub thread_id: String,
}
