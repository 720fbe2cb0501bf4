//! Paging through a thread's history and rewriting it: `thread/turns/list`,
//! `thread/items/list` (both cursor-paginated, so a client never has to fetch a long thread
//! whole) and `thread/revert` with its `thread/reverted` notification.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Params of `thread/turns/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadTurnsListParams {
    /// The thread whose turns to list; it need not be loaded.
    pub thread_id: String,
    /// The `nextCursor` (or `backwardsCursor`) of an earlier page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most turns to return in this page; absent lets the server pick.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// Page direction; absent means `desc`, newest turn first.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sort_direction: Option<SortDirection>,
    /// How many of each turn's items to include; absent means `summary`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub items_view: Option<TurnItemsView>,
}

/// Result of `thread/turns/list`: one page of turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadTurnsListResponse {
    /// The turns of this page in the requested order, their `items` as `itemsView` asked.
    #[builder(default)]
    pub data: Vec<Turn>,
    /// Send as `cursor` to fetch the following page; `null` when this was the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// Send as `cursor` with the opposite `sortDirection` to walk back from this page, its first
    /// turn included; `null` when the page is empty.
    #[serde(default)]
    pub backwards_cursor: Option<String>,
}

/// A position inside one turn, given by one of its items; the page starts next to it, the item
/// itself excluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadItemsListAnchor {
    /// Next to the item `itemId` of the turn named by `turnId`.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Item {
        /// The anchor item.
        item_id: String,
    },
}

#[bon::bon]
impl ThreadItemsListAnchor {
    /// Starts building [`ThreadItemsListAnchor::Item`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn item(item_id: String) -> Self {
        Self::Item { item_id }
    }
}

/// Where a page of `thread/items/list` starts: a cursor the server gave, or an item anchor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ThreadItemsListCursor {
    /// A `nextCursor` or `backwardsCursor` of an earlier page.
    Opaque(String),
    /// An item of the turn named by `turnId`.
    Anchor(ThreadItemsListAnchor),
}

/// Which saved outputs to leave out of a page and fetch separately (none are deferred by this
/// server; the member is accepted and the full items returned).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadItemOutputDeferral {}

/// Params of `thread/items/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadItemsListParams {
    /// The thread whose items to list; it need not be loaded.
    pub thread_id: String,
    /// Only the items of this turn; absent lists the items of every turn, in order.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub turn_id: Option<String>,
    /// Where to start: an earlier page's cursor, or an item anchor (which needs `turnId`).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<ThreadItemsListCursor>,
    /// Most items to return in this page; absent lets the server pick.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// Page direction; absent means `asc`, oldest item first.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sort_direction: Option<SortDirection>,
    /// Outputs to fetch separately; accepted, nothing is deferred.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub defer_output: Option<ThreadItemOutputDeferral>,
}

/// One item of a thread with the turn it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadItemEntry {
    /// The item in its final (or latest recorded) state.
    pub item: ThreadItem,
    /// The turn holding it.
    pub turn_id: String,
    /// When it started, in Unix milliseconds; `null` when not recorded.
    #[serde(default)]
    pub started_at_ms: Option<i64>,
    /// When it completed, in Unix milliseconds; `null` when not recorded.
    #[serde(default)]
    pub completed_at_ms: Option<i64>,
}

/// Result of `thread/items/list`: one page of items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadItemsListResponse {
    /// The items of this page in the requested order.
    #[builder(default)]
    pub data: Vec<ThreadItemEntry>,
    /// Send as `cursor` to fetch the following page; `null` when this was the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// Send as `cursor` with the opposite `sortDirection` to walk back from this page, its first
    /// item included; `null` when the page is empty.
    #[serde(default)]
    pub backwards_cursor: Option<String>,
}

/// Params of `thread/revert`: drop a turn and every later one from the thread's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadRevertParams {
    /// The thread to shorten; no turn may be running on it.
    pub thread_id: String,
    /// The first turn to drop; it and every turn after it are removed. Files the turns changed
    /// are not restored.
    pub before_turn_id: String,
}

/// Result of `thread/revert`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadRevertResponse {
    /// The thread as it now stands, with an empty `turns` array (page the kept history with
    /// `thread/turns/list`).
    pub thread: Thread,
    /// Pass as `cursor` to `thread/turns/list` with `sortDirection: "desc"` to page the kept
    /// turns from the newest, that one included; `null` when no turn is left.
    #[serde(default)]
    pub turns_backwards_cursor: Option<String>,
    /// Pass as `cursor` to `thread/items/list` with `sortDirection: "desc"` to page the kept
    /// items from the newest, that one included; `null` when no item is left.
    #[serde(default)]
    pub items_backwards_cursor: Option<String>,
}

/// Params of `thread/reverted`: a thread's history was shortened by `thread/revert`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadRevertedNotification {
    /// The thread whose history changed.
    pub thread_id: String,
}

/// Params of `thread/compact/start`: summarise the thread's history so that later model calls
/// see the summary instead of everything before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadCompactStartParams {
    /// The thread to compact; it must be loaded and idle.
    pub thread_id: String,
}

/// Result of `thread/compact/start`: an empty object, sent once the compaction has started;
/// it runs as a turn, and `thread/compacted` says when it is done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadCompactStartResponse {}

/// Params of `thread/compacted`: a thread's history was compacted by the turn `turnId`
/// (whose `contextCompaction` item marks the point; the turn's agent message is the summary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ContextCompactedNotification {
    /// The compacted thread.
    pub thread_id: String,
    /// The turn that compacted it.
    pub turn_id: String,
}
