//! Where each turn and item of a rollout lies in its file: the tables of the index that let
//! `thread/turns/list` and `thread/items/list` read one page of a long thread (a few lines at
//! known offsets) instead of replaying the whole rollout.
//!
//! Like the rest of the index this is a cache of the rollouts. For every thread it records how
//! far into which file (inode) it has read; bringing it up to date reads only the lines
//! appended since (rollouts are append-only), and a file that was replaced or cut short is
//! read again from the start. The engine brings a thread's positions up to date after each
//! record it appends, so a page never waits for more than the lines written behind its back.
//!
//! Turns and items share one sequence per thread, in rollout order: an item recorded again
//! (same id, same turn) keeps its place and points at its newest line, as replay does; a
//! `revert` record drops the turn it names and everything after it.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Deserialize;

use crate::record::RolloutRecord;

/// The tables (created with the rest of the index schema).
pub(crate) const SCHEMA: &str = "
CREATE TABLE pos_state (
    thread_id TEXT PRIMARY KEY NOT NULL,
    ino INTEGER NOT NULL,
    len INTEGER NOT NULL,
    next_seq INTEGER NOT NULL
) STRICT;
CREATE TABLE turn_pos (
    thread_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    turn_id TEXT NOT NULL,
    start_off INTEGER NOT NULL,
    start_len INTEGER NOT NULL,
    end_off INTEGER,
    end_len INTEGER,
    PRIMARY KEY (thread_id, seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX turn_pos_by_id ON turn_pos (thread_id, turn_id);
CREATE TABLE item_pos (
    thread_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    turn_seq INTEGER NOT NULL,
    item_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    off INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (thread_id, seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX item_pos_by_turn ON item_pos (thread_id, turn_seq, seq);
CREATE INDEX item_pos_by_id ON item_pos (thread_id, turn_seq, item_id);
";

/// The statements that drop the tables (before the schema is created again).
pub(crate) const DROP: &str =
    "DROP TABLE IF EXISTS pos_state; DROP TABLE IF EXISTS turn_pos; DROP TABLE IF EXISTS item_pos;";

/// A line of a rollout: where it starts and how long it is (without its newline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Byte offset of the line in the rollout.
    pub off: u64,
    /// Length of the line in bytes.
    pub len: u64,
}

/// Where a turn lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnPos {
    /// The `turnStarted` record's sequence number among the rollout's records.
    pub seq: i64,
    /// The turn's id.
    pub turn_id: String,
    /// Its `turnStarted` line.
    pub start: Span,
    /// Its `turnCompleted` line, once it ended.
    pub end: Option<Span>,
}

/// Where an item lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemPos {
    /// The record's sequence number among the rollout's records.
    pub seq: i64,
    /// The turn the item belongs to.
    pub turn_id: String,
    /// Its `itemCompleted` line.
    pub line: Span,
}

/// Where a page starts: strictly after (or, `inclusive`, at) the entry `seq`, in the page's
/// direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageStart {
    /// The sequence number the page starts at.
    pub seq: i64,
    /// Whether the record at `seq` is part of the page.
    pub inclusive: bool,
}

/// Just enough of a rollout line to place it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Light {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    turn_id: Option<String>,
    #[serde(default)]
    item: Option<LightItem>,
    #[serde(default)]
    before_turn_id: Option<String>,
}

#[derive(Deserialize)]
struct LightItem {
    #[serde(rename = "type")]
    kind: String,
    id: String,
}

fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn to_u64(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

fn storage(error: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(error.to_string().into())
}

/// Brings the positions of thread `id`, whose rollout is `file` at `path`, up to date.
pub(crate) fn catch_up(
    conn: &mut Connection,
    id: &str,
    file: &File,
    path: &Path,
) -> rusqlite::Result<()> {
    let metadata = file.metadata().map_err(storage)?;
    let (ino, file_len) = (to_i64(metadata.ino()), metadata.len());
    let state: Option<(i64, i64, i64)> = conn
        .prepare_cached("SELECT ino, len, next_seq FROM pos_state WHERE thread_id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let (mut start, mut next_seq, fresh) = match state {
        Some((known_ino, len, next)) if known_ino == ino && to_u64(len) <= file_len => {
            (to_u64(len), next, false)
        }
        _ => (0, 0, true),
    };
    if !fresh && start == file_len {
        return Ok(());
    }
    let transaction = conn.transaction()?;
    if fresh {
        for table in ["turn_pos", "item_pos"] {
            transaction.execute(&format!("DELETE FROM {table} WHERE thread_id = ?1"), [id])?;
        }
    }
    let mut reader = BufReader::new(file);
    reader.seek(SeekFrom::Start(start)).map_err(storage)?;
    let mut known = Known {
        complete: fresh,
        ..Known::default()
    };
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).map_err(storage)?;
        if read == 0 || line.last() != Some(&b'\n') {
            // End of file, or a line still being written: it is read next time.
            break;
        }
        let span = Span {
            off: start,
            len: read as u64 - 1,
        };
        start += read as u64;
        let Ok(light) = serde_json::from_slice::<Light>(&line) else {
            continue;
        };
        place(&transaction, id, &light, span, &mut known, &mut next_seq)?;
    }
    transaction
        .prepare_cached(
            "INSERT OR REPLACE INTO pos_state (thread_id, ino, len, next_seq) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![id, ino, to_i64(start), next_seq])?;
    transaction.commit()?;
    tracing::trace!(id, path = %path.display(), upto = start, "thread positions updated");
    Ok(())
}

/// What one catch-up has placed so far. When it reads the file from the start, this is
/// everything there is (the tables need not be asked).
#[derive(Default)]
struct Known {
    complete: bool,
    turns: HashMap<String, i64>,
    /// (turn sequence, item id) → item sequence.
    items: HashMap<(i64, String), i64>,
}

/// The sequence number of the newest turn `turn_id` of thread `id`.
fn turn_seq(
    conn: &Connection,
    id: &str,
    turn_id: &str,
    known: &mut Known,
) -> rusqlite::Result<Option<i64>> {
    if let Some(seq) = known.turns.get(turn_id) {
        return Ok(Some(*seq));
    }
    if known.complete {
        return Ok(None);
    }
    let seq = conn
        .prepare_cached(
            "SELECT seq FROM turn_pos WHERE thread_id = ?1 AND turn_id = ?2 ORDER BY seq DESC LIMIT 1",
        )?
        .query_row([id, turn_id], |r| r.get(0))
        .optional()?;
    if let Some(seq) = seq {
        known.turns.insert(turn_id.to_owned(), seq);
    }
    Ok(seq)
}

/// Records where the line `light` at `span` puts its turn or item.
fn place(
    conn: &Connection,
    id: &str,
    light: &Light,
    span: Span,
    known: &mut Known,
    next_seq: &mut i64,
) -> rusqlite::Result<()> {
    let (off, len) = (to_i64(span.off), to_i64(span.len));
    match (light.kind.as_str(), light.turn_id.as_deref()) {
        ("turnStarted", Some(turn_id)) => {
            let seq = *next_seq;
            *next_seq += 1;
            conn.prepare_cached(
                "INSERT OR REPLACE INTO turn_pos (thread_id, seq, turn_id, start_off, start_len) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![id, seq, turn_id, off, len])?;
            known.turns.insert(turn_id.to_owned(), seq);
        }
        ("itemCompleted", Some(turn_id)) => {
            let (Some(item), Some(turn)) = (&light.item, turn_seq(conn, id, turn_id, known)?)
            else {
                return Ok(());
            };
            let key = (turn, item.id.clone());
            let existing = match known.items.get(&key) {
                Some(seq) => Some(*seq),
                None if known.complete => None,
                None => item_seq(conn, id, turn, &item.id)?,
            };
            match existing {
                Some(seq) => {
                    conn.prepare_cached(
                        "UPDATE item_pos SET kind = ?3, off = ?4, len = ?5 WHERE thread_id = ?1 AND seq = ?2",
                    )?
                    .execute(params![id, seq, item.kind, off, len])?;
                }
                None => {
                    let seq = *next_seq;
                    *next_seq += 1;
                    conn.prepare_cached(
                        "INSERT INTO item_pos (thread_id, seq, turn_seq, item_id, kind, off, len) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    )?
                    .execute(params![id, seq, turn, item.id, item.kind, off, len])?;
                    known.items.insert(key, seq);
                }
            }
        }
        ("turnCompleted", Some(turn_id)) => {
            if let Some(turn) = turn_seq(conn, id, turn_id, known)? {
                conn.prepare_cached(
                    "UPDATE turn_pos SET end_off = ?3, end_len = ?4 WHERE thread_id = ?1 AND seq = ?2",
                )?
                .execute(params![id, turn, off, len])?;
            }
        }
        ("revert", _) => {
            let Some(before) = light.before_turn_id.as_deref() else {
                return Ok(());
            };
            if let Some(turn) = turn_seq(conn, id, before, known)? {
                conn.prepare_cached("DELETE FROM turn_pos WHERE thread_id = ?1 AND seq >= ?2")?
                    .execute(params![id, turn])?;
                conn.prepare_cached(
                    "DELETE FROM item_pos WHERE thread_id = ?1 AND turn_seq >= ?2",
                )?
                .execute(params![id, turn])?;
                known.turns.retain(|_, seq| *seq < turn);
                known.items.retain(|(seq, _), _| *seq < turn);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Forgets the positions of thread `id`.
pub(crate) fn forget(conn: &Connection, id: &str) -> rusqlite::Result<()> {
    for table in ["pos_state", "turn_pos", "item_pos"] {
        conn.execute(&format!("DELETE FROM {table} WHERE thread_id = ?1"), [id])?;
    }
    Ok(())
}

/// Forgets the positions of every thread the index no longer lists.
pub(crate) fn forget_unlisted(conn: &Connection) -> rusqlite::Result<()> {
    let gone: Vec<String> = conn
        .prepare("SELECT thread_id FROM pos_state WHERE thread_id NOT IN (SELECT id FROM threads)")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for id in gone {
        forget(conn, &id)?;
    }
    Ok(())
}

/// `WHERE`/`ORDER BY` pieces for a page over `seq` starting at `from`.
fn page_clause(from: Option<PageStart>, descending: bool) -> (String, &'static str) {
    let order = if descending { "DESC" } else { "ASC" };
    let bound = match (from, descending) {
        (None, _) => String::new(),
        (Some(f), false) => format!(
            " AND seq {} {}",
            if f.inclusive { ">=" } else { ">" },
            f.seq
        ),
        (Some(f), true) => format!(
            " AND seq {} {}",
            if f.inclusive { "<=" } else { "<" },
            f.seq
        ),
    };
    (bound, order)
}

fn read_turn(row: &rusqlite::Row<'_>) -> rusqlite::Result<TurnPos> {
    let end_off: Option<i64> = row.get(4)?;
    let end_len: Option<i64> = row.get(5)?;
    Ok(TurnPos {
        seq: row.get(0)?,
        turn_id: row.get(1)?,
        start: Span {
            off: to_u64(row.get(2)?),
            len: to_u64(row.get(3)?),
        },
        end: end_off.zip(end_len).map(|(off, len)| Span {
            off: to_u64(off),
            len: to_u64(len),
        }),
    })
}

const TURN_COLUMNS: &str = "seq, turn_id, start_off, start_len, end_off, end_len";

/// Up to `limit` turns of thread `id` from `from` in the given direction.
pub fn turns(
    conn: &Connection,
    id: &str,
    from: Option<PageStart>,
    descending: bool,
    limit: usize,
) -> rusqlite::Result<Vec<TurnPos>> {
    let (bound, order) = page_clause(from, descending);
    let sql = format!(
        "SELECT {TURN_COLUMNS} FROM turn_pos WHERE thread_id = ?1{bound} ORDER BY seq {order} LIMIT ?2"
    );
    conn.prepare_cached(&sql)?
        .query_map(params![id, to_i64(limit as u64)], read_turn)?
        .collect()
}

/// The newest turn `turn_id` of thread `id`.
pub fn turn(conn: &Connection, id: &str, turn_id: &str) -> rusqlite::Result<Option<TurnPos>> {
    conn.prepare_cached(&format!(
        "SELECT {TURN_COLUMNS} FROM turn_pos WHERE thread_id = ?1 AND turn_id = ?2 ORDER BY seq DESC LIMIT 1"
    ))?
    .query_row([id, turn_id], read_turn)
    .optional()
}

/// The newest turn of thread `id`.
pub fn last_turn(conn: &Connection, id: &str) -> rusqlite::Result<Option<TurnPos>> {
    Ok(turns(conn, id, None, true, 1)?.pop())
}

/// Up to `limit` items of thread `id` (of the turn `turn_seq` only, when given) from `from`.
pub fn items(
    conn: &Connection,
    id: &str,
    turn_seq: Option<i64>,
    from: Option<PageStart>,
    descending: bool,
    limit: usize,
) -> rusqlite::Result<Vec<ItemPos>> {
    let (bound, order) = page_clause(from, descending);
    // Within one turn, order by (turn, item) so that the turn index serves the page (ordering
    // by the item alone would walk the whole thread in item order).
    // (Without table statistics SQLite would rather walk the primary key, i.e. the whole
    // thread, so the turn index is named.)
    let (index, turn, by) = match turn_seq {
        Some(seq) => (
            " INDEXED BY item_pos_by_turn",
            format!(" AND i.turn_seq = {seq}"),
            format!("i.turn_seq {order}, i.seq {order}"),
        ),
        None => ("", String::new(), format!("i.seq {order}")),
    };
    let bound = bound.replace("seq", "i.seq");
    let sql = format!(
        "SELECT i.seq, t.turn_id, i.off, i.len FROM item_pos i{index} \
         JOIN turn_pos t ON t.thread_id = i.thread_id AND t.seq = i.turn_seq \
         WHERE i.thread_id = ?1{turn}{bound} ORDER BY {by} LIMIT ?2"
    );
    conn.prepare_cached(&sql)?
        .query_map(params![id, to_i64(limit as u64)], |row| {
            Ok(ItemPos {
                seq: row.get(0)?,
                turn_id: row.get(1)?,
                line: Span {
                    off: to_u64(row.get(2)?),
                    len: to_u64(row.get(3)?),
                },
            })
        })?
        .collect()
}

/// The sequence number of item `item_id` of the turn `turn_seq`.
pub fn item_seq(
    conn: &Connection,
    id: &str,
    turn_seq: i64,
    item_id: &str,
) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT seq FROM item_pos WHERE thread_id = ?1 AND turn_seq = ?2 AND item_id = ?3",
    )?
    .query_row(params![id, turn_seq, item_id], |r| r.get(0))
    .optional()
}

/// Where item `item_id` of the turn `turn_seq` lies.
pub fn item_at(
    conn: &Connection,
    id: &str,
    turn_seq: i64,
    item_id: &str,
) -> rusqlite::Result<Option<ItemPos>> {
    conn.prepare_cached(
        "SELECT i.seq, t.turn_id, i.off, i.len FROM item_pos i \
         JOIN turn_pos t ON t.thread_id = i.thread_id AND t.seq = i.turn_seq \
         WHERE i.thread_id = ?1 AND i.turn_seq = ?2 AND i.item_id = ?3",
    )?
    .query_row(params![id, turn_seq, item_id], |row| {
        Ok(ItemPos {
            seq: row.get(0)?,
            turn_id: row.get(1)?,
            line: Span {
                off: to_u64(row.get(2)?),
                len: to_u64(row.get(3)?),
            },
        })
    })
    .optional()
}

/// Up to `limit` items of thread `id` whose kind is one of `kinds`, in thread order, strictly
/// after the entry `after` (from the start when `None`); each with its turn's sequence number.
pub fn items_of_kinds(
    conn: &Connection,
    id: &str,
    kinds: &[&str],
    after: Option<i64>,
    limit: usize,
) -> rusqlite::Result<Vec<(ItemPos, i64)>> {
    let marks = vec!["?"; kinds.len()].join(", ");
    let sql = format!(
        "SELECT i.seq, t.turn_id, i.off, i.len, i.turn_seq FROM item_pos i \
         JOIN turn_pos t ON t.thread_id = i.thread_id AND t.seq = i.turn_seq \
         WHERE i.thread_id = ? AND i.seq > ? AND i.kind IN ({marks}) ORDER BY i.seq LIMIT ?"
    );
    let mut values: Vec<rusqlite::types::Value> =
        vec![id.to_owned().into(), after.unwrap_or(-1).into()];
    values.extend(kinds.iter().map(|k| (*k).to_owned().into()));
    values.push(to_i64(limit as u64).into());
    conn.prepare_cached(&sql)?
        .query_map(rusqlite::params_from_iter(values), |row| {
            Ok((
                ItemPos {
                    seq: row.get(0)?,
                    turn_id: row.get(1)?,
                    line: Span {
                        off: to_u64(row.get(2)?),
                        len: to_u64(row.get(3)?),
                    },
                },
                row.get(4)?,
            ))
        })?
        .collect()
}

/// The first item of kind `kind` of turn `turn_seq` (the last, when `last`).
pub fn item_of_kind(
    conn: &Connection,
    id: &str,
    turn_seq: i64,
    kind: &str,
    last: bool,
) -> rusqlite::Result<Option<Span>> {
    let order = if last { "DESC" } else { "ASC" };
    conn.prepare_cached(&format!(
        "SELECT off, len FROM item_pos INDEXED BY item_pos_by_turn \
         WHERE thread_id = ?1 AND turn_seq = ?2 AND kind = ?3 \
         ORDER BY turn_seq {order}, seq {order} LIMIT 1"
    ))?
    .query_row(params![id, turn_seq, kind], |r| {
        Ok(Span {
            off: to_u64(r.get(0)?),
            len: to_u64(r.get(1)?),
        })
    })
    .optional()
}

/// Reads the record on the line at `span` of `file`.
pub fn read_record(file: &File, span: Span) -> std::io::Result<RolloutRecord> {
    const MAX_LINE: u64 = 256 * 1024 * 1024;
    if span.len > MAX_LINE {
        return Err(std::io::Error::other(format!(
            "a rollout line of {} bytes is longer than {MAX_LINE}",
            span.len
        )));
    }
    let mut bytes = vec![0; usize::try_from(span.len).unwrap_or(0)];
    file.read_exact_at(&mut bytes, span.off)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the rollout line at byte {} does not parse: {e}", span.off),
        )
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde_json::json;

    use super::*;

    fn line(value: serde_json::Value) -> String {
        format!("{value}\n")
    }

    fn turn(id: &str) -> String {
        line(json!({"type": "turnStarted", "at": 1, "turnId": id}))
    }

    fn item(turn: &str, id: &str, kind: &str) -> String {
        let item = match kind {
            "userMessage" => json!({"type": kind, "id": id, "content": []}),
            _ => json!({"type": kind, "id": id, "text": id}),
        };
        line(json!({"type": "itemCompleted", "at": 1, "turnId": turn, "item": item}))
    }

    fn ended(turn: &str) -> String {
        line(json!({"type": "turnCompleted", "at": 1, "turnId": turn, "status": "completed"}))
    }

    fn conn() -> Connection {
        let conn = Connection::open_in_memory().expect("database");
        conn.execute_batch(SCHEMA).expect("schema");
        conn
    }

    fn item_ids(
        conn: &Connection,
        file: &File,
        turn: Option<i64>,
        descending: bool,
    ) -> Vec<String> {
        items(conn, "t", turn, None, descending, 100)
            .expect("items")
            .into_iter()
            .map(|i| match read_record(file, i.line).expect("record") {
                RolloutRecord::ItemCompleted { item, .. } => {
                    crate::record::item_id(&item.kind).to_owned()
                }
                other => panic!("not an item: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn positions_follow_appends_replacements_reverts_and_replaced_files() {
        let dir = std::env::temp_dir().join(format!("agentwire-positions-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("rollout.jsonl");
        let header = line(json!({"type": "thread", "version": 1}));
        std::fs::write(
            &path,
            [
                header.clone(),
                turn("a"),
                item("a", "u1", "userMessage"),
                item("a", "m1", "agentMessage"),
                ended("a"),
            ]
            .concat(),
        )
        .expect("write");
        let mut conn = conn();
        let open = || File::open(&path).expect("open");
        catch_up(&mut conn, "t", &open(), &path).expect("catch up");
        assert_eq!(item_ids(&conn, &open(), None, false), ["u1", "m1"]);
        let first = turns(&conn, "t", None, false, 10).expect("turns");
        assert_eq!(first.len(), 1);
        assert!(first[0].end.is_some());

        // Appended lines are read from where the last catch-up stopped; a line still being
        // written waits; an item recorded again keeps its place.
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("append");
        let more = [
            turn("b"),
            item("b", "u2", "userMessage"),
            item("a", "m1", "agentMessage"),
        ]
        .concat();
        file.write_all(more.as_bytes()).expect("append");
        file.write_all(b"{\"type\":\"itemComp").expect("torn");
        catch_up(&mut conn, "t", &open(), &path).expect("catch up");
        assert_eq!(item_ids(&conn, &open(), None, false), ["u1", "m1", "u2"]);
        assert_eq!(item_ids(&conn, &open(), None, true), ["u2", "m1", "u1"]);
        let b = turn_seq(&conn, "t", "b", &mut Known::default())
            .expect("seq")
            .expect("turn b");
        assert_eq!(item_ids(&conn, &open(), Some(b), false), ["u2"]);
        assert!(
            last_turn(&conn, "t")
                .expect("last")
                .expect("b")
                .end
                .is_none()
        );
        file.write_all(b"leted\",\"at\":1,\"turnId\":\"b\",\"item\":{\"type\":\"agentMessage\",\"id\":\"m2\",\"text\":\"m2\"}}\n")
            .expect("rest of the line");
        let revert = line(json!({"type": "revert", "at": 2, "beforeTurnId": "b"}));
        catch_up(&mut conn, "t", &open(), &path).expect("catch up");
        assert_eq!(
            item_ids(&conn, &open(), None, false),
            ["u1", "m1", "u2", "m2"]
        );
        file.write_all(revert.as_bytes()).expect("revert");
        catch_up(&mut conn, "t", &open(), &path).expect("catch up");
        assert_eq!(item_ids(&conn, &open(), None, false), ["u1", "m1"]);
        assert_eq!(turns(&conn, "t", None, false, 10).expect("turns").len(), 1);

        // A file put in place of the old one (another inode) is read again from the start.
        let replacement = dir.join("new.jsonl");
        std::fs::write(
            &replacement,
            [header, turn("c"), item("c", "x", "agentMessage")].concat(),
        )
        .expect("write");
        std::fs::rename(&replacement, &path).expect("rename");
        catch_up(&mut conn, "t", &open(), &path).expect("catch up");
        assert_eq!(item_ids(&conn, &open(), None, false), ["x"]);
        forget(&conn, "t").expect("forget");
        assert!(
            items(&conn, "t", None, None, false, 10)
                .expect("items")
                .is_empty()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
