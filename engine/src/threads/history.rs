//! Paging a thread's history (`thread/turns/list`, `thread/items/list`) and shortening it
//! (`thread/revert`).
//!
//! A persisted thread is paged from its rollout through the position tables of the index (see
//! [`agentwire_store::positions`]): a page costs one indexed query and one read per line it returns,
//! however long the thread is, and the thread is not loaded. An ephemeral thread is paged from
//! memory. Cursors are positions in the thread's sequence of turns and items (see
//! [`HistoryCursor`]); a cursor that does not decode is refused, one whose entry has since been
//! reverted away simply starts the page at the next entry that exists.

use std::fs::File;
use std::path::PathBuf;
use std::sync::MutexGuard;

use agentwire_protocol::methods::ThreadReverted;
use agentwire_protocol::{
    SortDirection, ThreadItem, ThreadItemEntry, ThreadItemKind, ThreadItemsListAnchor,
    ThreadItemsListCursor, ThreadItemsListParams, ThreadItemsListResponse, ThreadRevertParams,
    ThreadRevertResponse, ThreadRevertedNotification, ThreadStatus, ThreadTurnsListParams,
    ThreadTurnsListResponse, Turn, TurnItemsView, TurnStatus,
};
use agentwire_runtime::RequestContext;
use agentwire_store::cursor::HistoryCursor;
use agentwire_store::error::ThreadError;
use agentwire_store::index::Index;
use agentwire_store::meta::now;
use agentwire_store::positions::{self, PageStart, Span, TurnPos};
use agentwire_store::record::{RolloutRecord, settle_dangling, started_turn};
use agentwire_support::lock;

use super::Threads;

/// Turns per page when the client sends no `limit`.
const DEFAULT_TURNS: u32 = 25;
/// Largest turn page.
const MAX_TURNS: u32 = 200;
/// Items per page when the client sends no `limit`.
const DEFAULT_ITEMS: u32 = 100;
/// Largest item page.
const MAX_ITEMS: u32 = 1000;

/// Where a thread's history is read from.
pub(super) enum Source {
    /// The rollout at this path, open; `running` when a turn may be in progress on it.
    Disk {
        file: File,
        path: PathBuf,
        running: bool,
    },
    /// An ephemeral thread's turns.
    Memory { turns: Vec<Turn> },
}

/// One entry of a page, with its sequence number.
pub(super) type Entry<T> = (i64, T);

/// The first `limit` entries of `all` (in ascending sequence) from `from` in the direction.
fn page_of<T: Clone>(
    all: &[Entry<T>],
    from: Option<PageStart>,
    descending: bool,
    limit: usize,
) -> Vec<Entry<T>> {
    let keep = |seq: i64| match (from, descending) {
        (None, _) => true,
        (Some(f), false) => seq > f.seq || (f.inclusive && seq == f.seq),
        (Some(f), true) => seq < f.seq || (f.inclusive && seq == f.seq),
    };
    let picked = all.iter().filter(|(seq, _)| keep(*seq)).cloned();
    if descending {
        let mut page: Vec<_> = picked.collect();
        page.reverse();
        page.truncate(limit);
        page
    } else {
        picked.take(limit).collect()
    }
}

/// The item entries of `turns`, numbered in order (as the disk sequence would number them,
/// turns counted too).
pub(super) fn memory_items(turns: &[Turn]) -> (Vec<Entry<Turn>>, Vec<Entry<ThreadItemEntry>>) {
    let mut seq = 0;
    let mut numbered_turns = Vec::new();
    let mut items = Vec::new();
    for turn in turns {
        numbered_turns.push((seq, turn.clone()));
        seq += 1;
        for item in &turn.items {
            items.push((seq, entry(item.clone(), &turn.id)));
            seq += 1;
        }
    }
    (numbered_turns, items)
}

pub(super) fn entry(item: ThreadItem, turn_id: &str) -> ThreadItemEntry {
    ThreadItemEntry::builder()
        .maybe_started_at_ms(item.started_at_ms)
        .maybe_completed_at_ms(item.completed_at_ms)
        .item(item)
        .turn_id(turn_id.to_owned())
        .build()
}

/// The cursors of a page: next (past its last entry, when there is more) and backwards (at
/// its first entry).
fn cursors<T>(page: &[Entry<T>], more: bool, items: bool) -> (Option<String>, Option<String>) {
    let at = |seq: i64, inclusive: bool| {
        HistoryCursor {
            items,
            seq,
            inclusive,
        }
        .encode()
    };
    let next = if more {
        page.last().map(|(seq, _)| at(*seq, false))
    } else {
        None
    };
    (next, page.first().map(|(seq, _)| at(*seq, true)))
}

pub(super) fn read_failed(path: &std::path::Path, error: std::io::Error) -> ThreadError {
    ThreadError::Storage(format!("cannot read {}: {error}", path.display()))
}

/// The item on the line at `span`.
pub(super) fn read_item(
    file: &File,
    path: &std::path::Path,
    span: Span,
) -> Result<ThreadItem, ThreadError> {
    match positions::read_record(file, span).map_err(|e| read_failed(path, e))? {
        RolloutRecord::ItemCompleted { item, .. } => Ok(item),
        _ => Err(ThreadError::Storage(format!(
            "{}: the line at byte {} is not an item (the positions are stale)",
            path.display(),
            span.off
        ))),
    }
}

/// The turn at `pos` with `items` as `view`.
pub(super) fn read_turn(
    file: &File,
    path: &std::path::Path,
    pos: &TurnPos,
    running: bool,
    items: Vec<ThreadItem>,
    view: TurnItemsView,
) -> Result<Turn, ThreadError> {
    let stale = || {
        ThreadError::Storage(format!(
            "{}: turn {} is not where the positions say (they are stale)",
            path.display(),
            pos.turn_id
        ))
    };
    let mut turn =
        match positions::read_record(file, pos.start).map_err(|e| read_failed(path, e))? {
            RolloutRecord::TurnStarted {
                turn_id,
                root_turn_id,
                started_at,
                ..
            } => started_turn(turn_id, root_turn_id, started_at),
            _ => return Err(stale()),
        };
    match pos.end {
        Some(end) => match positions::read_record(file, end).map_err(|e| read_failed(path, e))? {
            RolloutRecord::TurnCompleted {
                status,
                error,
                completed_at,
                duration_ms,
                ..
            } => {
                turn.status = status;
                turn.error = error;
                turn.completed_at = completed_at;
                turn.duration_ms = duration_ms;
            }
            _ => return Err(stale()),
        },
        // A turn left open by a crash, on a thread where nothing runs.
        None if !running => turn.status = TurnStatus::Interrupted,
        None => {}
    }
    turn.items = items;
    turn.items_view = view;
    Ok(turn)
}

/// The summary view of a turn's items: its first user message and its final agent message.
fn summary_items(items: &[ThreadItem]) -> Vec<ThreadItem> {
    let user = items
        .iter()
        .find(|i| matches!(i.kind, ThreadItemKind::UserMessage { .. }));
    let agent = items
        .iter()
        .rev()
        .find(|i| matches!(i.kind, ThreadItemKind::AgentMessage { .. }));
    user.into_iter().chain(agent).cloned().collect()
}

impl Threads {
    /// Where the history of thread `id` is read from: the rollout file through the position
    /// tables in the embedded store, the turns in memory otherwise (an ephemeral thread; in
    /// other stores a loaded thread's turns, or a stored thread's as read back).
    pub(super) fn source(&self, id: &str) -> Result<Source, ThreadError> {
        if let Some(thread) = self.loaded(id) {
            self.refresh_loaded(id, &thread)?;
            let thread = lock(&thread);
            let running = matches!(thread.status, ThreadStatus::Active { .. });
            return match thread.log.as_ref().and_then(|log| log.file()) {
                None => Ok(Source::Memory {
                    turns: thread.turns.clone(),
                }),
                Some(path) => {
                    let file = File::open(path).map_err(|e| read_failed(path, e))?;
                    Ok(Source::Disk {
                        file,
                        path: path.to_owned(),
                        running,
                    })
                }
            };
        }
        let row = self.lookup(id)?;
        let Some(files) = self.store.files() else {
            let mut replayed = self.read_rollout(&row)?;
            if self.left_open_turns_settle(id, &replayed.turns)? {
                settle_dangling(&mut replayed.turns);
            }
            return Ok(Source::Memory {
                turns: replayed.turns,
            });
        };
        let path = files.layout().rollout(row.archived, &row.relative);
        match files.layout().open_checked(&path) {
            Ok((file, _)) => Ok(Source::Disk {
                file,
                path,
                running: false,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.store.forget(id, "its rollout is gone");
                Err(ThreadError::NotFound(id.to_owned()))
            }
            Err(e) => Err(read_failed(&path, e)),
        }
    }

    /// The embedded store's index, for a history read from its files.
    pub(super) fn positions(&self) -> Result<MutexGuard<'_, Index>, ThreadError> {
        self.store
            .files()
            .map(|files| files.index())
            .ok_or_else(|| ThreadError::Storage("this store keeps no file positions".to_owned()))
    }

    /// `thread/turns/list`: one page of a thread's turns.
    pub(crate) fn turns_list(
        &self,
        params: ThreadTurnsListParams,
    ) -> Result<ThreadTurnsListResponse, ThreadError> {
        let id = &params.thread_id;
        let descending = params.sort_direction != Some(SortDirection::Asc);
        let limit = params.limit.unwrap_or(DEFAULT_TURNS).clamp(1, MAX_TURNS) as usize;
        let view = params.items_view.unwrap_or(TurnItemsView::Summary);
        let from = match &params.cursor {
            None => None,
            Some(text) => {
                let cursor = HistoryCursor::decode(text, false)
                    .map_err(|e| ThreadError::InvalidParams(format!("cursor: {e}")))?;
                Some(PageStart {
                    seq: cursor.seq,
                    inclusive: cursor.inclusive,
                })
            }
        };
        let (page, more) = match self.source(id)? {
            Source::Memory { turns } => {
                let (numbered, _) = memory_items(&turns);
                let mut page = page_of(&numbered, from, descending, limit + 1);
                let more = page.len() > limit;
                page.truncate(limit);
                for (_, turn) in &mut page {
                    turn.items = match view {
                        TurnItemsView::NotLoaded => Vec::new(),
                        TurnItemsView::Summary => summary_items(&turn.items),
                        // `full`, and any view this server does not know: every item.
                        _ => std::mem::take(&mut turn.items),
                    };
                    turn.items_view = view;
                }
                (page, more)
            }
            Source::Disk {
                file,
                path,
                running,
            } => {
                let mut index = self.positions()?;
                index.catch_up(id, &file, &path)?;
                let conn = index.conn();
                let mut found = positions::turns(conn, id, from, descending, limit + 1)?;
                let more = found.len() > limit;
                found.truncate(limit);
                let newest = positions::last_turn(conn, id)?.map(|t| t.seq);
                let mut page = Vec::with_capacity(found.len());
                for pos in &found {
                    let spans: Vec<Span> = match view {
                        TurnItemsView::NotLoaded => Vec::new(),
                        TurnItemsView::Summary => [
                            positions::item_of_kind(conn, id, pos.seq, "userMessage", false)?,
                            positions::item_of_kind(conn, id, pos.seq, "agentMessage", true)?,
                        ]
                        .into_iter()
                        .flatten()
                        .collect(),
                        // `full`, and any view this server does not know: every item.
                        _ => {
                            positions::items(conn, id, Some(pos.seq), None, false, usize::MAX >> 1)?
                                .into_iter()
                                .map(|i| i.line)
                                .collect()
                        }
                    };
                    let items = spans
                        .into_iter()
                        .map(|span| read_item(&file, &path, span))
                        .collect::<Result<Vec<_>, _>>()?;
                    // Only the newest turn can still be running.
                    let live = running && Some(pos.seq) == newest;
                    let turn = read_turn(&file, &path, pos, live, items, view)?;
                    page.push((pos.seq, turn));
                }
                (page, more)
            }
        };
        let (next_cursor, backwards_cursor) = cursors(&page, more, false);
        Ok(ThreadTurnsListResponse::builder()
            .data(page.into_iter().map(|(_, turn)| turn).collect())
            .maybe_next_cursor(next_cursor)
            .maybe_backwards_cursor(backwards_cursor)
            .build())
    }

    /// `thread/items/list`: one page of a thread's items, of one turn or of all.
    pub(crate) fn items_list(
        &self,
        params: ThreadItemsListParams,
    ) -> Result<ThreadItemsListResponse, ThreadError> {
        let id = &params.thread_id;
        let descending = params.sort_direction == Some(SortDirection::Desc);
        let limit = params.limit.unwrap_or(DEFAULT_ITEMS).clamp(1, MAX_ITEMS) as usize;
        if params.turn_id.as_deref() == Some("") {
            return Err(ThreadError::InvalidParams(
                "turnId: must not be empty".to_owned(),
            ));
        }
        let opaque = match &params.cursor {
            Some(ThreadItemsListCursor::Opaque(text)) => {
                let cursor = HistoryCursor::decode(text, true)
                    .map_err(|e| ThreadError::InvalidParams(format!("cursor: {e}")))?;
                Some(PageStart {
                    seq: cursor.seq,
                    inclusive: cursor.inclusive,
                })
            }
            Some(ThreadItemsListCursor::Anchor(_)) if params.turn_id.is_none() => {
                return Err(ThreadError::InvalidParams(
                    "cursor: an item anchor needs `turnId` (the turn the item belongs to)"
                        .to_owned(),
                ));
            }
            _ => None,
        };
        let anchor = match &params.cursor {
            Some(ThreadItemsListCursor::Anchor(ThreadItemsListAnchor::Item {
                item_id, ..
            })) => Some(item_id.as_str()),
            _ => None,
        };
        let unknown_turn = |turn: &str| {
            ThreadError::InvalidParams(format!("turnId: {turn} is not a turn of thread {id}"))
        };
        let unknown_item = |item: &str, turn: &str| {
            ThreadError::InvalidParams(format!("cursor: item {item} is not in turn {turn}"))
        };
        let (page, more) = match self.source(id)? {
            Source::Memory { turns } => {
                let (_, all) = memory_items(&turns);
                let mut all: Vec<Entry<ThreadItemEntry>> = all;
                if let Some(turn) = &params.turn_id {
                    if !turns.iter().any(|t| &t.id == turn) {
                        return Err(unknown_turn(turn));
                    }
                    all.retain(|(_, e)| &e.turn_id == turn);
                }
                let from = match (anchor, &params.turn_id) {
                    (Some(item), Some(turn)) => {
                        let seq = all
                            .iter()
                            .find(|(_, e)| agentwire_store::record::item_id(&e.item.kind) == item)
                            .map(|(seq, _)| *seq)
                            .ok_or_else(|| unknown_item(item, turn))?;
                        Some(PageStart {
                            seq,
                            inclusive: false,
                        })
                    }
                    _ => opaque,
                };
                let mut page = page_of(&all, from, descending, limit + 1);
                let more = page.len() > limit;
                page.truncate(limit);
                (page, more)
            }
            Source::Disk { file, path, .. } => {
                let mut index = self.positions()?;
                index.catch_up(id, &file, &path)?;
                let conn = index.conn();
                let turn_seq = match &params.turn_id {
                    None => None,
                    Some(turn) => Some(
                        positions::turn(conn, id, turn)?
                            .ok_or_else(|| unknown_turn(turn))?
                            .seq,
                    ),
                };
                let from = match (anchor, turn_seq, &params.turn_id) {
                    (Some(item), Some(turn_seq), Some(turn)) => Some(PageStart {
                        seq: positions::item_seq(conn, id, turn_seq, item)?
                            .ok_or_else(|| unknown_item(item, turn))?,
                        inclusive: false,
                    }),
                    _ => opaque,
                };
                let found = positions::items(conn, id, turn_seq, from, descending, limit + 1)?;
                drop(index);
                let more = found.len() > limit;
                let mut page = Vec::with_capacity(limit);
                for pos in found.into_iter().take(limit) {
                    let item = read_item(&file, &path, pos.line)?;
                    page.push((pos.seq, entry(item, &pos.turn_id)));
                }
                (page, more)
            }
        };
        let (next_cursor, backwards_cursor) = cursors(&page, more, true);
        Ok(ThreadItemsListResponse::builder()
            .data(page.into_iter().map(|(_, entry)| entry).collect())
            .maybe_next_cursor(next_cursor)
            .maybe_backwards_cursor(backwards_cursor)
            .build())
    }

    /// `thread/revert`: drops turn `beforeTurnId` and every later one, durably (a `revert`
    /// record); broadcasts `thread/reverted`. The caller has checked that no turn runs.
    pub(crate) fn revert(
        &self,
        context: &RequestContext,
        params: ThreadRevertParams,
    ) -> Result<ThreadRevertResponse, ThreadError> {
        let id = params.thread_id.clone();
        let before = params.before_turn_id;
        if before.is_empty() {
            return Err(ThreadError::InvalidParams(
                "beforeTurnId: must not be empty".to_owned(),
            ));
        }
        let unknown = || {
            ThreadError::InvalidParams(format!(
                "beforeTurnId: {before} is not a turn of thread {id}"
            ))
        };
        let at = now();
        let record = RolloutRecord::Revert {
            at,
            before_turn_id: before.clone(),
        };
        let (thread, memory) = match self.loaded(&id) {
            Some(loaded) => {
                let mut loaded = lock(&loaded);
                if matches!(loaded.status, ThreadStatus::Active { .. }) {
                    return Err(ThreadError::Conflict(format!(
                        "thread {id} is running a turn; interrupt it before reverting"
                    )));
                }
                let position = loaded
                    .turns
                    .iter()
                    .rposition(|t| t.id == before)
                    .ok_or_else(unknown)?;
                let pending = loaded.append(&[record], at)?;
                loaded.turns.truncate(position);
                let on_disk = loaded.log.as_ref().and_then(|log| log.file()).is_some();
                let memory = (!on_disk).then(|| loaded.turns.clone());
                let thread = loaded.to_thread(false);
                drop(loaded);
                pending.wait()?;
                (thread, memory)
            }
            None => {
                let mut row = self.lookup(&id)?;
                let replayed = self.read_rollout(&row)?;
                let position = replayed
                    .turns
                    .iter()
                    .rposition(|t| t.id == before)
                    .ok_or_else(unknown)?;
                // Without file positions, the cursors are counted from the turns left.
                let memory = self.store.files().is_none().then(|| {
                    let mut turns = replayed.turns[..position].to_vec();
                    settle_dangling(&mut turns);
                    turns
                });
                self.append_stored(&mut row, replayed, record, at, |_| {})?;
                let thread =
                    row.summary
                        .to_thread(ThreadStatus::NotLoaded, self.path_of(&row), Vec::new());
                (thread, memory)
            }
        };
        let (turns_backwards_cursor, items_backwards_cursor) = match memory {
            Some(turns) => {
                let (numbered, items) = memory_items(&turns);
                (
                    cursors(&numbered[numbered.len().saturating_sub(1)..], false, false).1,
                    cursors(&items[items.len().saturating_sub(1)..], false, true).1,
                )
            }
            None => {
                let index = self.positions()?;
                let conn = index.conn();
                let turn = positions::last_turn(conn, &id)?.map(|t| (t.seq, ()));
                let item = positions::items(conn, &id, None, None, true, 1)?
                    .pop()
                    .map(|i| (i.seq, ()));
                (
                    cursors(&Vec::from_iter(turn), false, false).1,
                    cursors(&Vec::from_iter(item), false, true).1,
                )
            }
        };
        let hub = context.peer.hub().clone();
        context.after_response(move || {
            hub.broadcast::<ThreadReverted>(
                &ThreadRevertedNotification::builder().thread_id(id).build(),
            );
        });
        Ok(ThreadRevertResponse::builder()
            .thread(thread)
            .maybe_turns_backwards_cursor(turns_backwards_cursor)
            .maybe_items_backwards_cursor(items_backwards_cursor)
            .build())
    }
}
