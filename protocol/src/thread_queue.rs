//! A thread's queue: user input waiting for its turn (`thread/queue/add|list|update|delete|
//! reorder`). While the thread is loaded and idle, and its last turn was not stopped short,
//! the server starts the first queued input as a turn by itself; `thread/queue/start` starts
//! one at once. `thread/queue/changed` says the queue changed.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{Turn, UserInput};

/// Input waiting in a thread's queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct QueuedSubmission {
    /// The client's id for the user message; the turn's `userMessage` item carries it as
    /// `clientId`.
    pub client_user_message_id: String,
    /// The server's id for the queued input (a UUIDv7).
    pub id: String,
    /// The input the turn will start with.
    pub input: Vec<UserInput>,
    /// String pairs the client sent with the input, kept with it; `null` when none.
    #[serde(default)]
    pub responsesapi_client_metadata: Option<BTreeMap<String, String>>,
}

/// Params of `thread/queue/add`: puts input at the end of the thread's queue.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadQueueAddParams {
    /// The client's id for the user message.
    pub client_user_message_id: String,
    /// The input; must not be empty.
    pub input: Vec<UserInput>,
    /// String pairs to keep with the input; absent for none.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub responsesapi_client_metadata: Option<BTreeMap<String, String>>,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/queue/add`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadQueueAddResponse {
    /// The input as queued, with its id.
    pub queued_submission: QueuedSubmission,
}

/// Params of `thread/queue/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadQueueListParams {
    /// The `nextCursor` of an earlier page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most entries in this page; absent lets the server choose.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/queue/list`: the queue, next to start first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadQueueListResponse {
    /// The queued inputs of this page.
    pub data: Vec<QueuedSubmission>,
    /// Send as `cursor` for the next page; `null` when this was the last.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `thread/queue/update`: replaces a queued input's content.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadQueueUpdateParams {
    /// The new input; must not be empty.
    pub input: Vec<UserInput>,
    /// The queued input to change.
    pub queued_submission_id: String,
    /// New string pairs, replacing the ones kept; absent or `{}` keeps them.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub responsesapi_client_metadata: Option<BTreeMap<String, String>>,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/queue/update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadQueueUpdateResponse {
    /// The queued input as it now is.
    pub queued_submission: QueuedSubmission,
}

/// Params of `thread/queue/delete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadQueueDeleteParams {
    /// The queued input to drop.
    pub queued_submission_id: String,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/queue/delete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadQueueDeleteResponse {
    /// Whether it was in the queue (and is gone now).
    pub deleted: bool,
}

/// Params of `thread/queue/reorder`: puts the queue in a new order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadQueueReorderParams {
    /// Every queued input's id, each once, in the new order.
    pub queued_submission_ids: Vec<String>,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/queue/reorder`: an empty object once the order is saved.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadQueueReorderResponse {}

/// Params of `thread/queue/start`: takes one queued input out of the queue and starts a turn
/// with it now (the thread must be loaded and idle).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadQueueStartParams {
    /// The queued input to start; absent or `null` starts the first.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub queued_submission_id: Option<String>,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/queue/start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadQueueStartResponse {
    /// The turn started, as `turn/start` answers it.
    pub turn: Turn,
}

/// Params of `thread/queue/changed`: a thread's queue changed; list it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadQueueChangedNotification {
    /// The thread.
    pub thread_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queued_submission_without_metadata_sends_null() {
        let queued = QueuedSubmission::builder()
            .client_user_message_id("c")
            .id("q")
            .input(vec![UserInput::text().text("hi").build()])
            .build();
        let json = serde_json::to_value(&queued).expect("serialises");
        assert_eq!(json["responsesapiClientMetadata"], serde_json::Value::Null);
        assert_eq!(json["input"][0]["text"], "hi");
        let back: QueuedSubmission = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, queued);
    }
}
