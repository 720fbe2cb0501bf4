//! Managing a thread beyond the basics: deleting it (`thread/delete`, `thread/deleted`), no
//! longer following it (`thread/unsubscribe`, `thread/closed`), patching its stored metadata
//! (`thread/metadata/update`) and running a user's shell command in it (`thread/shellCommand`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::serde_util;
use crate::*;

/// Params of `thread/delete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadDeleteParams {
    /// The thread to delete for good: a turn running on it is stopped first, then its history
    /// is removed from disk.
    pub thread_id: String,
}

/// Result of `thread/delete`: an empty object once the thread is gone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadDeleteResponse {}

/// Params of `thread/deleted`: a thread was deleted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadDeletedNotification {
    /// The thread that no longer exists.
    pub thread_id: String,
}

/// Params of `thread/unsubscribe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadUnsubscribeParams {
    /// The thread this connection stops following.
    pub thread_id: String,
}

/// What `thread/unsubscribe` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadUnsubscribeStatus {
    /// The thread is not loaded, so nobody follows it.
    NotLoaded,
    /// The thread is loaded, but this connection did not follow it.
    NotSubscribed,
    /// This connection followed the thread and no longer does.
    Unsubscribed,
}

/// Result of `thread/unsubscribe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadUnsubscribeResponse {
    /// What the call found and did.
    pub status: ThreadUnsubscribeStatus,
}

/// Params of `thread/closed`: a loaded thread was unloaded (its last follower left).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadClosedNotification {
    /// The thread that is no longer loaded.
    pub thread_id: String,
}

/// A patch of a thread's stored Git metadata: each member left out keeps the stored value,
/// `null` clears it, a non-empty string replaces it.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadMetadataGitInfoUpdateParams {
    /// The commit `HEAD` pointed at.
    #[serde(default, deserialize_with = "serde_util::present_or_null")]
    #[schemars(with = "Option<String>")]
    #[ts(as = "Option<String>", optional)]
    pub sha: Option<Option<String>>,
    /// The checked-out branch.
    #[serde(default, deserialize_with = "serde_util::present_or_null")]
    #[schemars(with = "Option<String>")]
    #[ts(as = "Option<String>", optional)]
    pub branch: Option<Option<String>>,
    /// The URL of the `origin` remote.
    #[serde(default, deserialize_with = "serde_util::present_or_null")]
    #[schemars(with = "Option<String>")]
    #[ts(as = "Option<String>", optional)]
    pub origin_url: Option<Option<String>>,
}

/// Params of `thread/metadata/update`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadMetadataUpdateParams {
    /// The thread whose metadata changes; it need not be loaded.
    pub thread_id: String,
    /// Changes to the stored Git metadata; absent leaves it as it is.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub git_info: Option<ThreadMetadataGitInfoUpdateParams>,
}

/// Result of `thread/metadata/update`: the thread with its metadata as now stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadMetadataUpdateResponse {
    /// The thread, with an empty `turns` array.
    pub thread: Thread,
}

/// Params of `thread/shellCommand`: a command the user runs in the thread, recorded there as a
/// `commandExecution` item.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadShellCommandParams {
    /// The thread to run it in; it must be loaded and idle.
    pub thread_id: String,
    /// A shell command line, run by the user's shell (`sh -c`), so pipes, redirections and
    /// quoting work as typed.
    pub command: String,
    /// Time limit in milliseconds; absent or `null` means one hour, `0` times out at once.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub timeout_ms: Option<i64>,
}

/// Result of `thread/shellCommand`: an empty object, sent as soon as the command has started;
/// its progress arrives as item notifications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadShellCommandResponse {}
