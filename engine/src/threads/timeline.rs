//! Reading a thread's history in stored order: `thread/items/read` (chosen items of one turn)
//! and `thread/timeline/list` (turn starts, items and turn ends as one sequence, paged).
//!
//! Both read a persisted thread of the embedded store through the position tables of the index
//! (see [`agentwire_store::positions`]), a few lines at known offsets, without loading the thread; other
//! threads (ephemeral ones, and those of other stores) from their turns in memory.
//!
//! A timeline entry's `position` comes from the sequence that numbers a thread's turns and
//! items in rollout order (see [`agentwire_store::positions`]): a turn's start and an item sit at twice
//! their sequence number, a turn's end at twice the number of the turn's last entry plus one, so
//! positions only grow and a position given once stays with its entry. A cursor is the position
//! of the last entry of a page; the next page starts strictly after it. A turn left open by a
//! crash on a thread where nothing runs ends as `interrupted`, as in `thread/turns/list`.

use agentwire_protocol::{
    ThreadItemEntry, ThreadItemsReadParams, ThreadItemsReadResponse, ThreadTimelineEntry,
    ThreadTimelineListParams, ThreadTimelineListResponse, Turn, TurnItemsView, TurnStatus,
};
use agentwire_store::error::ThreadError;
use agentwire_store::positions::{self, PageStart};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::Threads;
use super::history::{Source, entry, memory_items, read_item, read_turn};

/// Entries per page when the client sends no `limit`.
const DEFAULT_ENTRIES: u32 = 100;
/// Largest page.
const MAX_ENTRIES: u32 = 1000;
/// Most ids one `thread/items/read` may name.
const MAX_READ: usize = 100;

/// The position of a turn start or an item with sequence number `seq`.
fn at(seq: i64) -> u64 {
    u64::try_from(seq).unwrap_or(0) * 2
}

/// The position of the end of a turn whose last entry (its start or its last item) has
/// sequence number `last`.
fn end_at(last: i64) -> u64 {
    at(last) + 1
}

/// The wire form of a timeline cursor: the position a page ended at.
fn encode_cursor(position: u64) -> String {
    URL_SAFE_NO_PAD.encode(format!("v1:l:{position}"))
}

/// Reads a cursor of `thread/timeline/list`.
fn decode_cursor(text: &str) -> Result<u64, ThreadError> {
    let invalid =
        || ThreadError::InvalidParams(format!("cursor: {text:?} is not a timeline cursor"));
    let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| invalid())?;
    let plain = String::from_utf8(bytes).map_err(|_| invalid())?;
    plain
        .strip_prefix("v1:l:")
        .and_then(|n| n.parse().ok())
        .ok_or_else(invalid)
}

/// The `turnCompleted` entry of `turn` (which has ended) at `position`.
fn turn_end(position: u64, turn: &Turn) -> ThreadTimelineEntry {
    ThreadTimelineEntry::turn_completed(position, turn.id.clone(), turn.status).with_times(
        turn.started_at,
        turn.completed_at,
        turn.duration_ms,
        turn.error.clone(),
    )
}

/// Every timeline entry of `turns` (numbered as the disk sequence numbers them), in order.
fn memory_timeline(turns: &[Turn]) -> Vec<ThreadTimelineEntry> {
    let (numbered, items) = memory_items(turns);
    let mut items = items.into_iter().peekable();
    let mut entries = Vec::new();
    for (seq, turn) in numbered {
        entries.push(ThreadTimelineEntry::turn_started(
            at(seq),
            turn.id.clone(),
            turn.started_at,
        ));
        let mut last = seq;
        while let Some((item_seq, item)) = items.next_if(|(_, e)| e.turn_id == turn.id) {
            last = item_seq;
            entries.push(ThreadTimelineEntry::item(
                at(item_seq),
                item.turn_id,
                item.item,
            ));
        }
        if turn.status != TurnStatus::InProgress {
            entries.push(turn_end(end_at(last), &turn));
        }
    }
    entries
}

impl Threads {
    /// `thread/items/read`: the named items of one turn, in stored order.
    pub(crate) fn items_read(
        &self,
        params: ThreadItemsReadParams,
    ) -> Result<ThreadItemsReadResponse, ThreadError> {
        let id = &params.thread_id;
        let turn_id = &params.turn_id;
        if turn_id.is_empty() {
            return Err(ThreadError::InvalidParams(
                "turnId: must not be empty".to_owned(),
            ));
        }
        if params.item_ids.is_empty() || params.item_ids.len() > MAX_READ {
            return Err(ThreadError::InvalidParams(format!(
                "itemIds: {} ids given; name 1 to {MAX_READ}",
                params.item_ids.len()
            )));
        }
        let mut wanted: Vec<&str> = params.item_ids.iter().map(String::as_str).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let unknown_turn = || {
            ThreadError::InvalidParams(format!("turnId: {turn_id} is not a turn of thread {id}"))
        };
        let missing = |item: &str| {
            ThreadError::InvalidParams(format!("itemIds: {item} is not an item of turn {turn_id}"))
        };
        let data: Vec<ThreadItemEntry> = match self.source(id)? {
            Source::Memory { turns } => {
                let turn = turns
                    .iter()
                    .rev()
                    .find(|t| &t.id == turn_id)
                    .ok_or_else(unknown_turn)?;
                if let Some(absent) = wanted
                    .iter()
                    .find(|w| !turn.items.iter().any(|i| i.kind.id() == **w))
                {
                    return Err(missing(absent));
                }
                turn.items
                    .iter()
                    .filter(|i| wanted.contains(&i.kind.id()))
                    .map(|i| entry(i.clone(), turn_id))
                    .collect()
            }
            Source::Disk { file, path, .. } => {
                let mut found = {
                    let mut index = self.positions()?;
                    index.catch_up(id, &file, &path)?;
                    let conn = index.conn();
                    let turn = positions::turn(conn, id, turn_id)?.ok_or_else(unknown_turn)?;
                    let mut found = Vec::with_capacity(wanted.len());
                    for item in &wanted {
                        found.push(
                            positions::item_at(conn, id, turn.seq, item)?
                                .ok_or_else(|| missing(item))?,
                        );
                    }
                    found
                };
                found.sort_by_key(|pos| pos.seq);
                found
                    .into_iter()
                    .map(|pos| Ok(entry(read_item(&file, &path, pos.line)?, &pos.turn_id)))
                    .collect::<Result<_, ThreadError>>()?
            }
        };
        Ok(ThreadItemsReadResponse::builder().data(data).build())
    }

    /// `thread/timeline/list`: one page of a thread's timeline, oldest first.
    pub(crate) fn timeline_list(
        &self,
        params: ThreadTimelineListParams,
    ) -> Result<ThreadTimelineListResponse, ThreadError> {
        let id = &params.thread_id;
        let limit = params
            .limit
            .unwrap_or(DEFAULT_ENTRIES)
            .clamp(1, MAX_ENTRIES) as usize;
        let after = params.cursor.as_deref().map(decode_cursor).transpose()?;
        let keep = |entry: &ThreadTimelineEntry| after.is_none_or(|p| entry.position() > p);
        let mut page: Vec<ThreadTimelineEntry> = match self.source(id)? {
            Source::Memory { turns } => memory_timeline(&turns)
                .into_iter()
                .filter(keep)
                .take(limit + 1)
                .collect(),
            Source::Disk {
                file,
                path,
                running,
            } => {
                let mut index = self.positions()?;
                index.catch_up(id, &file, &path)?;
                let conn = index.conn();
                // The sequence number of the entry the cursor names (a turn's end is numbered
                // after the turn's last entry), and the turn that holds it.
                let from = after.map(|p| i64::try_from(p / 2).unwrap_or(i64::MAX));
                let first = match from {
                    None => None,
                    Some(seq) => positions::turns(
                        conn,
                        id,
                        Some(PageStart {
                            seq,
                            inclusive: true,
                        }),
                        true,
                        1,
                    )?
                    .pop(),
                };
                // Every turn after the first gives at least one entry (its start): this many
                // turns fill the page.
                let turns = positions::turns(
                    conn,
                    id,
                    first.as_ref().map(|t| PageStart {
                        seq: t.seq,
                        inclusive: true,
                    }),
                    false,
                    limit + 2,
                )?;
                let items = positions::items(
                    conn,
                    id,
                    None,
                    from.map(|seq| PageStart {
                        seq,
                        inclusive: false,
                    }),
                    false,
                    limit + 1,
                )?;
                let newest = positions::last_turn(conn, id)?.map(|t| t.seq);
                drop(index);
                let mut items = items.into_iter().peekable();
                let mut page = Vec::with_capacity(limit + 1);
                'turns: for (at_turn, pos) in turns.iter().enumerate() {
                    let next_turn = turns.get(at_turn + 1).map(|t| t.seq);
                    // Only the newest turn can still be running.
                    let live = running && Some(pos.seq) == newest;
                    let turn = read_turn(
                        &file,
                        &path,
                        pos,
                        live,
                        Vec::new(),
                        TurnItemsView::NotLoaded,
                    )?;
                    let start = ThreadTimelineEntry::turn_started(
                        at(pos.seq),
                        turn.id.clone(),
                        turn.started_at,
                    );
                    if keep(&start) {
                        page.push(start);
                    }
                    let mut last = from.map_or(pos.seq, |seq| seq.max(pos.seq));
                    loop {
                        if page.len() > limit {
                            break 'turns;
                        }
                        let Some(item) =
                            items.next_if(|i| next_turn.is_none_or(|next| i.seq < next))
                        else {
                            break;
                        };
                        last = last.max(item.seq);
                        let read = read_item(&file, &path, item.line)?;
                        page.push(ThreadTimelineEntry::item(at(item.seq), item.turn_id, read));
                    }
                    if turn.status != TurnStatus::InProgress {
                        let end = turn_end(end_at(last), &turn);
                        if keep(&end) {
                            page.push(end);
                        }
                    }
                    if page.len() > limit {
                        break;
                    }
                }
                page
            }
        };
        let more = page.len() > limit;
        page.truncate(limit);
        let next_cursor = if more {
            page.last().map(|e| encode_cursor(e.position()))
        } else {
            None
        };
        Ok(ThreadTimelineListResponse::builder()
            .data(page)
            .maybe_next_cursor(next_cursor)
            .build())
    }
}

#[cfg(test)]
mod tests {
    use agentwire_protocol::ThreadItem;
    use serde_json::json;

    use super::*;

    fn turn(id: &str, status: TurnStatus, items: &[&str]) -> Turn {
        let items = items
            .iter()
            .map(|i| {
                serde_json::from_value::<ThreadItem>(
                    json!({"type": "agentMessage", "id": i, "text": i}),
                )
                .expect("item")
            })
            .collect();
        Turn::builder()
            .id(id)
            .status(status)
            .items(items)
            .items_view(TurnItemsView::Full)
            .build()
    }

    #[test]
    fn entries_are_numbered_turn_start_items_turn_end() {
        let entries = memory_timeline(&[
            turn("a", TurnStatus::Completed, &["m1", "m2"]),
            turn("b", TurnStatus::InProgress, &["m3"]),
        ]);
        let seen: Vec<(String, u64)> = entries
            .iter()
            .map(|e| {
                let kind = serde_json::to_value(e).expect("serializes")["type"]
                    .as_str()
                    .expect("type")
                    .to_owned();
                (kind, e.position())
            })
            .collect();
        let expected = [
            ("turnStarted", 0),
            ("item", 2),
            ("item", 4),
            ("turnCompleted", 5),
            ("turnStarted", 6),
            ("item", 8),
        ];
        assert_eq!(
            seen,
            expected
                .iter()
                .map(|(k, p)| ((*k).to_owned(), *p))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn cursors_round_trip_and_strangers_are_refused() {
        assert_eq!(decode_cursor(&encode_cursor(17)).expect("decodes"), 17);
        let refused = decode_cursor("bm9wZQ").expect_err("refused");
        assert!(refused.to_string().contains("cursor"), "{refused}");
    }
}
