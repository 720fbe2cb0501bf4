//! `thread/list`, `thread/loaded/list` and `thread/read`: finding threads and reading one.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Order of a listing by its sort key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum SortDirection {
    /// Smallest (oldest) key first.
    Asc,
    /// Largest (newest) key first; what `thread/list` uses when no direction is given.
    Desc,
}

/// The `cwd` filter of `thread/list`: a single directory or a list of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ThreadListCwdFilter {
    /// Only threads whose working directory is exactly this path.
    Text(String),
    /// Only threads whose working directory is exactly one of these paths.
    List(Vec<String>),
}

/// Params of `thread/list`. Every member is optional; a filter that is absent does not narrow
/// the listing.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadListParams {
    /// The `nextCursor` (or `backwardsCursor`) of an earlier page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most threads to return in this page; absent lets the server pick.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// Which timestamp to order by; absent means `created_at`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sort_key: Option<ThreadSortKey>,
    /// Ordering direction; absent means `desc`, newest first.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sort_direction: Option<SortDirection>,
    /// `true` lists archived threads only; `false`, `null` or absent lists unarchived ones only.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub archived: Option<bool>,
    /// Only threads whose working directory matches exactly.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<ThreadListCwdFilter>,
    /// Only threads whose title contains this text.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub search_term: Option<String>,
    /// Only threads filed in this section; `null` lists only the threads in no section; absent
    /// does not filter by section.
    #[serde(default, deserialize_with = "crate::serde_util::present_or_null")]
    #[schemars(with = "Option<String>")]
    #[ts(as = "Option<String>", optional = nullable)]
    pub section_id: Option<Option<String>>,
    /// Only threads started by these kinds of source; absent or empty means the interactive
    /// kinds.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub source_kinds: Option<Vec<ThreadSourceKind>>,
    /// Only threads recorded under these model provider ids; absent or empty means any.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub model_providers: Option<Vec<String>>,
    /// Only threads whose `originator` equals one of these; absent or empty means any. A local
    /// server refuses a non-empty list (hosted backends only).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub originators: Option<Vec<String>>,
    /// Limit the listing to these thread ids (100 at most), before paging; `[]` matches nothing,
    /// absent means no limit. Repeat the same list on every page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub included_thread_ids: Option<Vec<String>>,
    /// Thread ids to leave out (100 at most; a longer list or a bad id is an error, not cut
    /// short). Repeat the same list on every page; absent or empty leaves nothing out.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub excluded_thread_ids: Option<Vec<String>>,
    /// `true` to show only local history visible to the signed-in ChatGPT account; absent means
    /// `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub current_account_only: Option<bool>,
    /// `true` to answer from the server's thread index alone, skipping the scan of rollout files
    /// that keeps it repaired: faster, possibly stale. Absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub use_state_db_only: Option<bool>,
}

/// Result of `thread/list`: one page of threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadListResponse {
    /// The threads of this page in the requested order, each with an empty `turns` array.
    #[builder(default)]
    pub data: Vec<Thread>,
    /// Send as `cursor` to fetch the following page; `null` when this was the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// Send as `cursor` together with the opposite `sortDirection` to walk back from the start
    /// of this page; `null` when the page is empty.
    #[serde(default)]
    pub backwards_cursor: Option<String>,
    /// Read receipts of this page's stored threads, keyed by thread id (an ephemeral thread has
    /// no key); absent when the connection did not negotiate `experimentalApi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-experimental" = true))]
    #[ts(optional = nullable)]
    pub read_states: Option<BTreeMap<String, ThreadReadState>>,
}

/// Params of `thread/loaded/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadLoadedListParams {
    /// The `nextCursor` of an earlier page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most ids to return in this page; absent returns them all.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
}

/// Result of `thread/loaded/list`: one page of loaded thread ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadLoadedListResponse {
    /// Ids of the threads this server currently holds in memory.
    #[builder(default)]
    pub data: Vec<String>,
    /// Send as `cursor` to fetch the following page; `null` when this was the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `thread/read`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadReadParams {
    /// The thread to read; it does not need to be loaded and is not loaded by this call.
    pub thread_id: String,
    /// `true` to also return the stored turns with their items; absent means metadata only.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub include_turns: Option<bool>,
}

/// Result of `thread/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadReadResponse {
    /// The thread; its `turns` are filled only when `includeTurns` was `true`.
    pub thread: Thread,
}

/// Which value `thread/list` orders threads by (snake_case on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ThreadSortKey {
    /// The thread's `createdAt`; the default.
    CreatedAt,
    /// The thread's `updatedAt`.
    UpdatedAt,
    /// The thread's `recencyAt`.
    RecencyAt,
    /// The order the user arranged threads in within their section.
    SectionPosition,
}
