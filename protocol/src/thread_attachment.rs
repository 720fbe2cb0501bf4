//! Thread attachments: things a client links to a thread (a pull request, an issue, a
//! document), each named by a type and a key that is unique among the thread's attachments of
//! that type, with a JSON payload the server keeps as given (`thread/attachment/add|list|remove`).
//! `thread/attachmentOwner/list` finds the threads that hold an attachment;
//! `thread/attachment/updated` says one was added or removed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// An attachment of a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadAttachment {
    /// What kind of thing it is, in the client's own words (`pullRequest`, `issue`, …).
    pub attachment_type: String,
    /// When it was added to the thread (Unix seconds).
    pub created_at: i64,
    /// The server's id for it (a UUIDv7).
    pub id: String,
    /// What names it among the thread's attachments of its type (a URL, a number, …).
    pub identity_key: String,
    /// Whatever JSON the client attached with it, kept as sent.
    pub payload: serde_json::Value,
}

/// What `thread/attachment/add` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadAttachmentAddOutcome {
    /// The attachment is new.
    Created,
    /// The thread already had an attachment of that type and key; it is answered unchanged.
    Existing,
}

/// How an attachment changed (`thread/attachment/updated`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadAttachmentOperation {
    /// It was added.
    Created,
    /// It was removed.
    Deleted,
}

/// A thread that holds an attachment of the type and key asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadAttachmentOwner {
    /// Whether the thread is in the archive (not whether a turn runs on it).
    pub archived: bool,
    /// The thread.
    pub thread_id: String,
}

/// Params of `thread/attachment/add`: adds an attachment unless the thread has one of that
/// type and key already.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadAttachmentAddParams {
    /// What kind of thing it is; must not be empty.
    pub attachment_type: String,
    /// What names it among the thread's attachments of that type; must not be empty.
    pub identity_key: String,
    /// JSON to keep with it (any value, `null` included).
    pub payload: serde_json::Value,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/attachment/add`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadAttachmentAddResponse {
    /// The attachment the thread now has: the new one, or the one it had.
    pub attachment: ThreadAttachment,
    /// Whether it was added now or was there already.
    pub outcome: ThreadAttachmentAddOutcome,
}

/// Params of `thread/attachment/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadAttachmentListParams {
    /// The `nextCursor` of an earlier page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most attachments in this page; absent lets the server choose.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/attachment/list`: the thread's attachments, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadAttachmentListResponse {
    /// The attachments of this page.
    pub data: Vec<ThreadAttachment>,
    /// Send as `cursor` for the next page; `null` when this was the last.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `thread/attachment/remove`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadAttachmentRemoveParams {
    /// The type of the attachment to remove.
    pub attachment_type: String,
    /// Its key.
    pub identity_key: String,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/attachment/remove`: an empty object, whether or not the thread had it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadAttachmentRemoveResponse {}

/// Params of `thread/attachmentOwner/list`: which of this server's threads hold an attachment
/// of this type and key.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadAttachmentOwnerListParams {
    /// `false` lists threads outside the archive only, `true` archived ones only; absent or
    /// `null` lists both.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub archived: Option<bool>,
    /// The attachment's type.
    pub attachment_type: String,
    /// The `nextCursor` of an earlier page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// The attachment's key.
    pub identity_key: String,
    /// Most threads in this page; absent lets the server choose.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
}

/// Result of `thread/attachmentOwner/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadAttachmentOwnerListResponse {
    /// The threads of this page, in the order they took the attachment.
    pub data: Vec<ThreadAttachmentOwner>,
    /// Send as `cursor` for the next page; `null` when this was the last.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `thread/attachment/updated`: an attachment was added to a thread or removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadAttachmentUpdatedNotification {
    /// The attachment's id.
    pub attachment_id: String,
    /// Its type.
    pub attachment_type: String,
    /// Its key.
    pub identity_key: String,
    /// Whether it was added or removed.
    pub operation: ThreadAttachmentOperation,
    /// The thread.
    pub thread_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_payload_is_kept_and_sent() {
        let params: ThreadAttachmentAddParams = serde_json::from_str(
            r#"{"attachmentType":"pr","identityKey":"k","payload":null,"threadId":"t"}"#,
        )
        .expect("reads");
        assert_eq!(params.payload, serde_json::Value::Null);
        let attachment = ThreadAttachment::builder()
            .attachment_type("pr")
            .created_at(5)
            .id("a")
            .identity_key("k")
            .payload(serde_json::Value::Null)
            .build();
        assert_eq!(
            serde_json::to_value(&attachment).expect("serialises"),
            serde_json::json!({"attachmentType":"pr","createdAt":5,"id":"a","identityKey":"k",
                "payload":null})
        );
    }
}
