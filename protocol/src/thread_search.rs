//! Finding text in stored threads: `thread/search` (and its streaming form
//! `thread/search/stream`, which sends `thread/search/partial` while it looks), their
//! cancellation (`thread/search/cancel`, `thread/search/stream/cancel`) and
//! `thread/searchOccurrences`, which finds every place a term appears in one thread's messages.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{RequestId, SortDirection, Thread, ThreadSourceKind};

/// Params of `thread/search` and `thread/search/stream`: the threads whose name, preview or
/// message text contains a term, one page at a time.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSearchParams {
    /// `true` searches the archived threads only; `false` or absent, the threads not archived.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub archived: Option<bool>,
    /// Keep only the threads of the signed-in ChatGPT account. Threads on this server belong
    /// to no account, so it narrows nothing here.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub current_account_only: bool,
    /// Where to continue: a `nextCursor` (or `backwardsCursor`) of an earlier answer to the
    /// same search.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Also search threads that hang off a parent thread (agents a turn spawned); left out by
    /// default.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub include_attached_threads: bool,
    /// Most threads in the answer; absent means the server's default page size.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// The text to find, compared without regard to case. Must not be empty or blank.
    pub search_term: String,
    /// Order of the answer; newest first when absent.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sort_direction: Option<SortDirection>,
    /// Which time the answer is ordered by; creation time when absent.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sort_key: Option<ThreadSearchSortKey>,
    /// Keep only threads started from these sources; absent or empty keeps the interactive
    /// ones (`cli`, `vscode`).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub source_kinds: Option<Vec<ThreadSourceKind>>,
}

/// The time a search answer is ordered by (snake_case on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
pub enum ThreadSearchSortKey {
    /// When the thread was created.
    #[serde(rename = "created_at")]
    CreatedAt,
    /// When the thread last changed.
    #[serde(rename = "updated_at")]
    UpdatedAt,
    /// When the thread was last active; here the same as `updated_at`.
    #[serde(rename = "recency_at")]
    RecencyAt,
}

/// Result of `thread/search` and `thread/search/stream`: one page of matching threads.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSearchResponse {
    /// Send as `cursor` with the opposite `sortDirection` to walk back from this page, its
    /// first thread included; `null` when the page holds no thread.
    #[serde(default)]
    pub backwards_cursor: Option<String>,
    /// The matching threads of this page, in the requested order.
    #[builder(default)]
    pub data: Vec<ThreadSearchResult>,
    /// Send as `cursor` to go on searching; `null` when every thread has been looked at. A
    /// page may hold fewer threads than `limit` and still have a next one: each request looks
    /// at a bounded number of threads.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One thread that matches, with the text around the first match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSearchResult {
    /// Text around the first place the term was found (the name, the preview or a message),
    /// cut to a few words either side.
    pub snippet: String,
    /// The thread, without its turns.
    pub thread: Thread,
}

/// Params of `thread/search/cancel` and `thread/search/stream/cancel`: stop a search this
/// connection asked for and that has not been answered yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSearchCancelParams {
    /// The id of the `thread/search` (or `thread/search/stream`) request to stop.
    pub request_id: RequestId,
}

/// Result of `thread/search/cancel` and `thread/search/stream/cancel`: an empty object. It
/// acknowledges the request whether or not a search was still running; a search that was is
/// answered with an error.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSearchCancelResponse {}

/// Params of `thread/search/partial`: matches a `thread/search/stream` has found so far,
/// before its answer. The answer is what counts; these only let a client show something early.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSearchPartialNotification {
    /// Matches found since the previous notification, each thread once.
    pub data: Vec<ThreadSearchResult>,
    /// The id of the `thread/search/stream` request they belong to.
    pub request_id: RequestId,
}

/// Params of `thread/searchOccurrences`: every place a term appears in the messages of one
/// thread, oldest first.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSearchOccurrencesParams {
    /// Where to continue: the `nextCursor` of an earlier answer for the same thread and term.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most occurrences in the answer; absent means the server's default page size.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// The text to find, literally and without regard to case, in the user's messages and
    /// the agent's answers. Must not be empty.
    pub search_term: String,
    /// The thread to look in.
    pub thread_id: String,
}

/// Result of `thread/searchOccurrences`: one page of occurrences.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSearchOccurrencesResponse {
    /// The occurrences of this page, in the order the messages were written (and within a
    /// message, in text order).
    #[builder(default)]
    pub data: Vec<ThreadSearchOccurrence>,
    /// Send as `cursor` to fetch the following page; `null` when this was the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One place the term appears.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSearchOccurrence {
    /// The message (a `userMessage` or `agentMessage` item) it appears in.
    pub item_id: String,
    /// The text around it, cut to a few words either side.
    pub snippet: String,
    /// Where in `snippet` the term is.
    pub snippet_match_range: ThreadSearchTextRange,
    /// A `cursor` for `thread/turns/list` whose page starts at (and includes) the turn of the
    /// message.
    pub turn_cursor: String,
    /// The turn of the message.
    pub turn_id: String,
}

/// A span of a text, counted in UTF-16 code units (as JavaScript strings index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadSearchTextRange {
    /// Offset just past the span's last unit.
    pub end: u32,
    /// Offset of the span's first unit.
    pub start: u32,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn search_params_leave_out_what_is_not_set() {
        let params = ThreadSearchParams::builder().search_term("x").build();
        let value = serde_json::to_value(&params).expect("serializes");
        assert_eq!(
            value,
            json!({"searchTerm": "x", "currentAccountOnly": false, "includeAttachedThreads": false})
        );
        let back: ThreadSearchParams =
            serde_json::from_value(json!({"searchTerm": "x", "sortKey": "recency_at"}))
                .expect("parses");
        assert_eq!(back.sort_key, Some(ThreadSearchSortKey::RecencyAt));
        assert!(!back.include_attached_threads);
    }

    #[test]
    fn cancel_takes_either_kind_of_request_id() {
        for id in [json!(7), json!("seven")] {
            let params: ThreadSearchCancelParams =
                serde_json::from_value(json!({"requestId": id})).expect("parses");
            assert_eq!(
                serde_json::to_value(&params).expect("serializes")["requestId"],
                id
            );
        }
    }

    #[test]
    fn responses_send_their_empty_members_as_null() {
        let value =
            serde_json::to_value(ThreadSearchResponse::builder().build()).expect("serializes");
        assert_eq!(
            value,
            json!({"data": [], "nextCursor": null, "backwardsCursor": null})
        );
        let range = ThreadSearchTextRange::builder().start(1).end(4).build();
        assert_eq!(
            serde_json::to_value(range).expect("serializes"),
            json!({"start": 1, "end": 4})
        );
    }
}
