//! The rollout: one append-only JSON Lines file per persisted thread, holding everything needed
//! to rebuild the thread, its turns and their items.
//!
//! # Format (version 1)
//!
//! Every line is one [`RolloutRecord`], a JSON object tagged by `type`:
//!
//! ```text
//! {"type":"thread","version":1,"meta":{"id":…,"createdAt":…,"settings":{…},…}}   first line
//! {"type":"name","at":1795967790,"name":"Fix the build"}
//! {"type":"settings","at":…,"settings":{…}}
//! {"type":"turnStarted","at":…,"turnId":…,"rootTurnId":…,"startedAt":…}
//! {"type":"itemCompleted","at":…,"turnId":…,"item":{"type":"userMessage","id":…,…}}
//! {"type":"turnCompleted","at":…,"turnId":…,"status":"completed","error":null,…}
//! {"type":"tokenUsage","at":…,"turnId":…,"usage":{"total":{…},"last":{…},…}}
//! {"type":"gitInfo","at":…,"gitInfo":{"sha":…,"branch":…,"originUrl":…}}      since 0.3.0
//! {"type":"revert","at":…,"beforeTurnId":…}                                     since 0.3.0
//! {"type":"memoryMode","at":…,"mode":"disabled"}                                since 0.6.0
//! {"type":"injected","at":…,"afterTurnId":…,"items":[{"type":"message",…}]}      since 0.6.0
//! {"type":"environmentContext","at":…,"turnId":…,"text":"<environment_context>…"} since 0.6.0
//! ```
//!
//! `environmentContext` is the environment context block a turn told the model (see
//! `turns::environment`): the conversation rebuilt for a later model call, after a restart too,
//! holds it before that turn, as the model saw it.
//!
//! `injected` holds items a client added to what the model sees (`thread/inject_items`, see
//! [`super::inject`]): they follow turn `afterTurnId` in every later model call, and never show
//! among the thread's turns.
//!
//! A `tokenUsage` record holds the thread's running token total after a model call (the wire
//! `ThreadTokenUsage`); the last one read is the thread's total.
//!
//! `gitInfo` replaces the thread's Git metadata (`thread/metadata/update`); `revert` drops the
//! turn it names and every later one (`thread/revert`). These three were added in 0.3.0
//! without a version bump: files written before read as they always did, and an older build
//! skips them (so it shows the metadata and turns as they were before them).
//!
//! `at` is Unix seconds; items are the wire [`ThreadItem`]s in their final state. Records of
//! types this version does not know are skipped, so later versions can add some; a file whose
//! first record declares a newer `version` is not read at all.
//!
//! # Durability (fsync policy)
//!
//! - Creating a rollout writes its first line, then `fsync`s the file and its directory.
//! - The records of a loaded thread go through the store's committer (see
//!   [`super::committer`]): each group of waiting records is written with one `write` per
//!   rollout on an `O_APPEND` descriptor and followed by one `fdatasync` per rollout. A turn
//!   starting, an item completing and a turn completing are announced to clients only once
//!   durable; a name, settings or metadata change is answered only once durable. Token totals
//!   and a turn's settings are queued without waiting: they reach the file before the turn's
//!   next record, which is waited for.
//! - A record for a thread that is not loaded is written and synced in place (one `write`, one
//!   `fdatasync`) before the request is answered.
//! - Streaming deltas and items still in progress are never written.
//!
//! So a crash (process killed or power lost) loses at most the item in flight and the record
//! being written at that instant. A record cut short leaves a torn last line; readers skip it
//! with a warning, and loading the thread for writing cuts it off before appending. A turn left
//! `inProgress` by a crash reads back as `interrupted`.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentwire_protocol::{
    ThreadItem, ThreadItemKind, ThreadTokenUsage, Turn, TurnError, TurnItemsView, TurnStatus,
};
use serde::{Deserialize, Serialize};

use super::committer::{Committer, Pending};
use super::index::IndexRow;
use super::meta::{GoalRecord, ThreadMeta, ThreadSettings, ThreadSummary, TokenTotals};

/// The rollout format this build writes and the newest it reads.
pub(crate) const ROLLOUT_VERSION: u32 = 1;

/// One line of a rollout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub(crate) enum RolloutRecord {
    /// The first line: format version and creation metadata.
    Thread { version: u32, meta: ThreadMeta },
    /// The thread's settings were replaced.
    Settings { at: i64, settings: ThreadSettings },
    /// The thread's name was set (`null`: cleared).
    Name { at: i64, name: Option<String> },
    /// The thread's goal was set or changed (`null`: cleared).
    Goal { at: i64, goal: Option<GoalRecord> },
    /// The user's reading of the thread was marked: read through turn `through` (`null`:
    /// nothing read). Not a change of the thread: it leaves its update time alone.
    ReadMark { through: Option<String> },
    /// A turn began.
    #[serde(rename_all = "camelCase")]
    TurnStarted {
        at: i64,
        turn_id: String,
        #[serde(default)]
        root_turn_id: Option<String>,
        #[serde(default)]
        started_at: Option<i64>,
    },
    /// An item of a turn reached its final state.
    #[serde(rename_all = "camelCase")]
    ItemCompleted {
        at: i64,
        turn_id: String,
        item: ThreadItem,
    },
    /// A turn ended.
    #[serde(rename_all = "camelCase")]
    TurnCompleted {
        at: i64,
        turn_id: String,
        status: TurnStatus,
        #[serde(default)]
        error: Option<TurnError>,
        #[serde(default)]
        completed_at: Option<i64>,
        #[serde(default)]
        duration_ms: Option<i64>,
    },
    /// The thread's token totals after a model call of turn `turn_id`.
    #[serde(rename_all = "camelCase")]
    TokenUsage {
        at: i64,
        turn_id: String,
        usage: ThreadTokenUsage,
    },
    /// The thread's Git metadata was replaced (`thread/metadata/update`; `null`: cleared).
    /// Added in 0.3.0; older builds skip it.
    #[serde(rename_all = "camelCase")]
    GitInfo {
        at: i64,
        git_info: Option<agentwire_protocol::GitInfo>,
    },
    /// The turn `beforeTurnId` and every later one were dropped (`thread/revert`). Added in
    /// 0.3.0; older builds skip it.
    #[serde(rename_all = "camelCase")]
    Revert { at: i64, before_turn_id: String },
    /// The thread's memory mode was set (`thread/memoryMode/set`). Added in 0.6.0; older
    /// builds skip it.
    MemoryMode {
        at: i64,
        mode: agentwire_protocol::ThreadMemoryMode,
    },
    /// Items a client injected into what the model sees (`thread/inject_items`), after turn
    /// `afterTurnId` (`null`: before the first turn). Added in 0.6.0; older builds skip it.
    #[serde(rename_all = "camelCase")]
    Injected {
        at: i64,
        #[serde(default)]
        after_turn_id: Option<String>,
        items: Vec<serde_json::Value>,
    },
    /// An attachment was added to the thread (`thread/attachment/add`), replacing any of the
    /// same type and key. Added in 0.6.0 (see [`super::organised`]); older builds skip it.
    AttachmentAdded {
        attachment: agentwire_protocol::ThreadAttachment,
    },
    /// The attachment of this type and key was removed (`thread/attachment/remove`). Added in
    /// 0.6.0; older builds skip it.
    #[serde(rename_all = "camelCase")]
    AttachmentRemoved {
        attachment_type: String,
        identity_key: String,
    },
    /// The thread's queued input as it now is (`thread/queue/*`). Added in 0.6.0; older builds
    /// skip it.
    Queue {
        queue: Vec<agentwire_protocol::QueuedSubmission>,
    },
    /// The thread was filed in a section (`null`: taken out of any; `thread/section/move`).
    /// Added in 0.6.0; older builds skip it.
    Section {
        section: Option<super::organised::SectionMark>,
    },
    /// The environment context block turn `turnId` told the model (`text`, the whole block).
    /// Added in 0.6.0; older builds skip it (and tell the model the environment again).
    #[serde(rename_all = "camelCase")]
    EnvironmentContext {
        at: i64,
        turn_id: String,
        text: String,
    },
    /// A record type this version does not know; skipped.
    #[serde(other)]
    Unknown,
}

impl RolloutRecord {
    /// The records that recreate `turn` in another rollout (used by `thread/fork`).
    pub(crate) fn for_turn(turn: &Turn, at: i64) -> Vec<RolloutRecord> {
        let mut records = vec![RolloutRecord::TurnStarted {
            at,
            turn_id: turn.id.clone(),
            root_turn_id: turn.root_turn_id.clone(),
            started_at: turn.started_at,
        }];
        records.extend(turn.items.iter().map(|item| RolloutRecord::ItemCompleted {
            at,
            turn_id: turn.id.clone(),
            item: item.clone(),
        }));
        if turn.status != TurnStatus::InProgress {
            records.push(RolloutRecord::turn_completed(turn, at));
        }
        records
    }

    /// The record of `turn` having ended.
    pub(crate) fn turn_completed(turn: &Turn, at: i64) -> RolloutRecord {
        RolloutRecord::TurnCompleted {
            at,
            turn_id: turn.id.clone(),
            status: turn.status,
            error: turn.error.clone(),
            completed_at: turn.completed_at,
            duration_ms: turn.duration_ms,
        }
    }
}

/// Why a rollout could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RolloutError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: the first line is not a thread record")]
    NoHeader { path: PathBuf },
    #[error("{path}: rollout version {version} is newer than this build reads ({ROLLOUT_VERSION})")]
    TooNew { path: PathBuf, version: u32 },
}

/// A rollout read back.
#[derive(Debug, Clone)]
pub(crate) struct Replayed {
    pub summary: ThreadSummary,
    /// Turns in order; a turn the file leaves `inProgress` stays so here.
    pub turns: Vec<Turn>,
    /// Length of the file up to the end of its last complete, newline-terminated line.
    pub sound_len: u64,
    /// Whether the file ends in a partial line (a torn write).
    pub torn: bool,
}

/// Reads a rollout from `reader`; `path` names it in errors and warnings. Lines that do not
/// parse are skipped with a warning (a torn last line is the expected case); only a missing or
/// unreadable first record is an error.
pub(crate) fn replay(reader: impl Read, path: &Path) -> Result<Replayed, RolloutError> {
    let io = |source| RolloutError::Io {
        path: path.to_owned(),
        source,
    };
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    let mut replay: Option<Builder> = None;
    let mut offset = 0u64;
    let mut sound_len = 0u64;
    let mut torn = false;
    let mut number = 0usize;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).map_err(io)?;
        if read == 0 {
            break;
        }
        number += 1;
        offset += read as u64;
        let complete = line.last() == Some(&b'\n');
        let text = line.trim_ascii();
        if complete {
            sound_len = offset;
        }
        if text.is_empty() {
            continue;
        }
        let record = match serde_json::from_slice::<RolloutRecord>(text) {
            Ok(record) => record,
            Err(error) if !complete => {
                tracing::warn!(path = %path.display(), line = number, %error, "torn last rollout line skipped");
                torn = true;
                continue;
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), line = number, %error, "unreadable rollout line skipped");
                continue;
            }
        };
        if !complete {
            // A whole record without its newline: keep it, and count it as sound so that an
            // append adds the missing newline first.
            sound_len = offset;
        }
        match (&mut replay, record) {
            (None, RolloutRecord::Thread { version, meta }) => {
                if version > ROLLOUT_VERSION {
                    return Err(RolloutError::TooNew {
                        path: path.to_owned(),
                        version,
                    });
                }
                replay = Some(Builder::new(meta));
            }
            (None, _) => {
                return Err(RolloutError::NoHeader {
                    path: path.to_owned(),
                });
            }
            (Some(builder), record) => builder.apply(record, path),
        }
    }
    let builder = replay.ok_or_else(|| RolloutError::NoHeader {
        path: path.to_owned(),
    })?;
    Ok(Replayed {
        summary: builder.summary,
        turns: builder.turns,
        sound_len,
        torn,
    })
}

/// Rebuilds a thread record by record.
struct Builder {
    summary: ThreadSummary,
    turns: Vec<Turn>,
    /// Per turn (same order as `turns`), where each item id sits in its `items`: a replayed
    /// item replaces an earlier record of itself in constant time, so reading a turn of n items
    /// costs O(n), not O(n²).
    positions: Vec<HashMap<String, usize>>,
}

impl Builder {
    fn new(meta: ThreadMeta) -> Self {
        Self {
            summary: ThreadSummary::new(meta, false),
            turns: Vec::new(),
            positions: Vec::new(),
        }
    }

    fn apply(&mut self, record: RolloutRecord, path: &Path) {
        if let Some(at) = record.at() {
            self.summary.updated_at = self.summary.updated_at.max(at);
        }
        match record {
            RolloutRecord::Thread { .. } => {
                tracing::warn!(path = %path.display(), "second thread record skipped");
            }
            RolloutRecord::Settings { settings, .. } => self.summary.meta.settings = settings,
            RolloutRecord::Name { name, .. } => self.summary.name = name,
            RolloutRecord::Goal { goal, .. } => self.summary.goal = goal,
            RolloutRecord::ReadMark { through } => self.summary.read_mark = Some(through),
            record @ (RolloutRecord::AttachmentAdded { .. }
            | RolloutRecord::AttachmentRemoved { .. }
            | RolloutRecord::Queue { .. }
            | RolloutRecord::Section { .. }) => {
                super::organised::apply(&mut self.summary.organised, &record);
            }
            record @ RolloutRecord::Injected { .. } => {
                super::inject::apply(&mut self.summary, &record);
            }
            record @ RolloutRecord::EnvironmentContext { .. } => {
                super::environment_blocks::apply(&mut self.summary, &record);
            }
            RolloutRecord::MemoryMode { mode, .. } => self.summary.memory_mode = Some(mode),
            RolloutRecord::TurnStarted {
                turn_id,
                root_turn_id,
                started_at,
                ..
            } => {
                self.turns
                    .push(started_turn(turn_id, root_turn_id, started_at));
                self.positions.push(HashMap::new());
            }
            RolloutRecord::ItemCompleted { turn_id, item, .. } => {
                self.summary.note_item(&item.kind);
                let at = self.turns.iter().rposition(|t| t.id == turn_id);
                match at {
                    Some(at) => {
                        let (turn, positions) = (&mut self.turns[at], &mut self.positions[at]);
                        let id = item_id(&item.kind).to_owned();
                        match positions.get(&id) {
                            Some(&position) => turn.items[position] = item,
                            None => {
                                positions.insert(id, turn.items.len());
                                turn.items.push(item);
                            }
                        }
                    }
                    None => {
                        tracing::warn!(path = %path.display(), turn_id, "item of an unknown turn skipped");
                    }
                }
            }
            RolloutRecord::TurnCompleted {
                turn_id,
                status,
                error,
                completed_at,
                duration_ms,
                ..
            } => match self.turn(&turn_id) {
                Some(turn) => {
                    turn.status = status;
                    turn.error = error;
                    turn.completed_at = completed_at;
                    turn.duration_ms = duration_ms;
                }
                None => {
                    tracing::warn!(path = %path.display(), turn_id, "end of an unknown turn skipped");
                }
            },
            RolloutRecord::TokenUsage { turn_id, usage, .. } => {
                self.summary.token_usage = Some(TokenTotals { turn_id, usage });
            }
            RolloutRecord::GitInfo { git_info, .. } => self.summary.meta.git_info = git_info,
            RolloutRecord::Revert { before_turn_id, .. } => {
                match self.turns.iter().rposition(|t| t.id == before_turn_id) {
                    Some(at) => {
                        self.turns.truncate(at);
                        self.positions.truncate(at);
                    }
                    None => {
                        tracing::warn!(path = %path.display(), before_turn_id, "revert to an unknown turn skipped");
                    }
                }
            }
            RolloutRecord::Unknown => {}
        }
    }

    fn turn(&mut self, id: &str) -> Option<&mut Turn> {
        self.turns.iter_mut().rev().find(|t| t.id == id)
    }
}

impl RolloutRecord {
    pub(crate) fn at(&self) -> Option<i64> {
        match self {
            RolloutRecord::Thread { .. }
            | RolloutRecord::ReadMark { .. }
            | RolloutRecord::AttachmentAdded { .. }
            | RolloutRecord::AttachmentRemoved { .. }
            | RolloutRecord::Queue { .. }
            | RolloutRecord::Section { .. }
            | RolloutRecord::Unknown => None,
            RolloutRecord::Settings { at, .. }
            | RolloutRecord::Name { at, .. }
            | RolloutRecord::Goal { at, .. }
            | RolloutRecord::TurnStarted { at, .. }
            | RolloutRecord::ItemCompleted { at, .. }
            | RolloutRecord::TurnCompleted { at, .. }
            | RolloutRecord::TokenUsage { at, .. }
            | RolloutRecord::GitInfo { at, .. }
            | RolloutRecord::Revert { at, .. }
            | RolloutRecord::Injected { at, .. }
            | RolloutRecord::EnvironmentContext { at, .. }
            | RolloutRecord::MemoryMode { at, .. } => Some(*at),
        }
    }
}

/// A turn that has just begun: `inProgress`, no items.
pub(crate) fn started_turn(
    id: String,
    root_turn_id: Option<String>,
    started_at: Option<i64>,
) -> Turn {
    Turn::builder()
        .id(id)
        .maybe_root_turn_id(root_turn_id)
        .status(TurnStatus::InProgress)
        .items_view(TurnItemsView::Full)
        .maybe_started_at(started_at)
        .build()
}

/// Adds `item` to `turn`, replacing an item with the same id.
pub(crate) fn put_item(turn: &mut Turn, item: ThreadItem) {
    let id = item_id(&item.kind);
    match turn.items.iter_mut().find(|i| item_id(&i.kind) == id) {
        Some(existing) => *existing = item,
        None => turn.items.push(item),
    }
}

/// The `id` every kind of item carries.
pub(crate) fn item_id(kind: &ThreadItemKind) -> &str {
    kind.id()
}

/// Marks the turns a crash left running as interrupted (for threads no turn runs on).
pub(crate) fn settle_dangling(turns: &mut [Turn]) -> Vec<&Turn> {
    let mut settled = Vec::new();
    for turn in turns.iter_mut() {
        if turn.status == TurnStatus::InProgress {
            turn.status = TurnStatus::Interrupted;
            settled.push(&*turn);
        }
    }
    settled
}

/// Settles the turns a crash left running (see [`settle_dangling`]) and returns the records that
/// say so, stamped `at`.
pub(crate) fn settle_records(turns: &mut [Turn], at: i64) -> Vec<RolloutRecord> {
    settle_dangling(turns)
        .into_iter()
        .map(|turn| RolloutRecord::turn_completed(turn, at))
        .collect()
}

/// An open rollout that records are appended to.
#[derive(Debug)]
pub(crate) struct RolloutWriter {
    /// Shared with the committer, which writes the records of a loaded thread.
    file: Arc<File>,
    path: PathBuf,
    /// The file's length: where the next record starts.
    len: u64,
}

impl RolloutWriter {
    /// Creates the rollout at `path` (which must not exist) with its first record, and makes
    /// file and directory entry durable.
    pub(crate) fn create(path: &Path, meta: &ThreadMeta) -> std::io::Result<Self> {
        let parent = path.parent().unwrap_or(Path::new("."));
        super::paths::create_private_dirs(parent)?;
        let mut options = OpenOptions::new();
        options.append(true).create_new(true);
        super::paths::private_file_mode(&mut options);
        let file = options.open(path)?;
        let mut writer = Self {
            file: Arc::new(file),
            path: path.to_owned(),
            len: 0,
        };
        super::compressed::register_writer(path, &writer.file);
        writer.write_line(&RolloutRecord::Thread {
            version: ROLLOUT_VERSION,
            meta: meta.clone(),
        })?;
        writer.file.sync_all()?;
        agentwire_support::atomic_file::sync_dir(parent)?;
        Ok(writer)
    }

    /// Opens an existing rollout for appending. `sound_len` and `torn` come from reading it
    /// back: a torn tail is cut off, and a missing final newline added, so the next record
    /// starts on a line of its own. The file is plain: a store thaws a compressed rollout first
    /// (see [`super::compressed::open_for_append`]); while the descriptor lives the rollout is
    /// not compressed.
    pub(crate) fn open(path: &Path, sound_len: u64, torn: bool) -> std::io::Result<Self> {
        let file = Arc::new(OpenOptions::new().append(true).open(path)?);
        super::compressed::register_writer(path, &file);
        let len = file.metadata()?.len();
        if torn && len > sound_len {
            tracing::warn!(path = %path.display(), bytes = len - sound_len, "cutting off a torn rollout tail");
            file.set_len(sound_len)?;
            file.sync_data()?;
        }
        let mut writer = Self {
            file,
            path: path.to_owned(),
            len: if torn { sound_len.min(len) } else { len },
        };
        if !torn && len > 0 && !ends_with_newline(path, len)? {
            (&*writer.file).write_all(b"\n")?;
            writer.len += 1;
        }
        Ok(writer)
    }

    /// Appends `records` with one write and one `fdatasync`, on the calling thread; returns the
    /// file's new length and modification time (for the index). For rollouts that are not
    /// loaded; a loaded thread's records go through [`RolloutWriter::queue`].
    pub(crate) fn append(&mut self, records: &[RolloutRecord]) -> std::io::Result<FileStamp> {
        let bytes = encode(records)?;
        (&*self.file).write_all(&bytes)?;
        self.len += bytes.len() as u64;
        self.file.sync_data()?;
        FileStamp::of(&self.file.metadata()?)
    }

    /// Hands `records` to `committer`, which appends and syncs them with whatever else is
    /// waiting and then writes `row` (the thread's index row as of these records).
    pub(crate) fn queue(
        &mut self,
        committer: &Committer,
        records: &[RolloutRecord],
        row: IndexRow,
    ) -> std::io::Result<Pending> {
        let bytes = encode(records)?;
        self.len += bytes.len() as u64;
        Ok(committer.submit(&self.file, self.path.clone(), bytes, row))
    }

    fn write_line(&mut self, record: &RolloutRecord) -> std::io::Result<()> {
        let bytes = encode(std::slice::from_ref(record))?;
        (&*self.file).write_all(&bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Where the file is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's current length and modification time.
    pub(crate) fn stamp(&self) -> std::io::Result<FileStamp> {
        FileStamp::of(&self.file.metadata()?)
    }
}

/// `records` as rollout lines, each ending in a newline.
fn encode(records: &[RolloutRecord]) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    for record in records {
        serde_json::to_writer(&mut bytes, record)?;
        bytes.push(b'\n');
    }
    Ok(bytes)
}

fn ends_with_newline(path: &Path, len: u64) -> std::io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// A file's length and modification time: how the index tells whether a rollout changed
/// behind its back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct FileStamp {
    pub len: u64,
    /// Nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
}

impl FileStamp {
    pub(crate) fn of(metadata: &std::fs::Metadata) -> std::io::Result<Self> {
        let mtime = metadata.modified()?;
        let mtime_ns = mtime
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Ok(Self {
            len: metadata.len(),
            mtime_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn header() -> serde_json::Value {
        json!({"type": "thread", "version": 1, "meta": {
            "id": "t1", "sessionId": "t1", "createdAt": 100, "cliVersion": "0.1.0",
            "source": "vscode",
            "settings": {
                "model": "m", "modelProvider": "p", "cwd": "/w",
                "approvalPolicy": "never", "approvalsReviewer": "user",
                "sandbox": {"type": "readOnly"}
            }
        }})
    }

    fn user_item(id: &str, text: &str) -> serde_json::Value {
        json!({"type": "userMessage", "id": id, "content": [{"type": "text", "text": text}]})
    }

    fn lines(values: &[serde_json::Value]) -> String {
        values.iter().map(|v| format!("{v}\n")).collect()
    }

    fn read(text: &str) -> Replayed {
        replay(text.as_bytes(), Path::new("test.jsonl")).expect("rollout reads")
    }

    #[test]
    fn rebuilds_turns_items_name_and_preview() {
        let text = lines(&[
            header(),
            json!({"type": "name", "at": 101, "name": "first"}),
            json!({"type": "turnStarted", "at": 102, "turnId": "a", "startedAt": 102}),
            json!({"type": "itemCompleted", "at": 103, "turnId": "a", "item": user_item("i1", "hello")}),
            json!({"type": "itemCompleted", "at": 104, "turnId": "a",
                   "item": {"type": "agentMessage", "id": "i2", "text": "hi"}}),
            json!({"type": "turnCompleted", "at": 105, "turnId": "a", "status": "completed",
                   "completedAt": 105, "durationMs": 3000}),
            json!({"type": "turnStarted", "at": 106, "turnId": "b"}),
        ]);
        let replayed = read(&text);
        assert_eq!(replayed.summary.name.as_deref(), Some("first"));
        assert_eq!(replayed.summary.preview, "hello");
        assert_eq!(replayed.summary.updated_at, 106);
        assert_eq!(replayed.turns.len(), 2);
        assert_eq!(replayed.turns[0].items.len(), 2);
        assert_eq!(replayed.turns[0].status, TurnStatus::Completed);
        assert_eq!(replayed.turns[0].duration_ms, Some(3000));
        assert_eq!(replayed.turns[1].status, TurnStatus::InProgress);
        assert!(!replayed.torn);
        assert_eq!(replayed.sound_len, text.len() as u64);
    }

    #[test]
    fn torn_last_line_is_skipped() {
        let sound = lines(&[
            header(),
            json!({"type": "turnStarted", "at": 102, "turnId": "a"}),
        ]);
        let text = format!("{sound}{{\"type\":\"itemCompleted\",\"at\":10");
        let replayed = read(&text);
        assert!(replayed.torn);
        assert_eq!(replayed.sound_len, sound.len() as u64);
        assert_eq!(replayed.turns.len(), 1);
        assert!(replayed.turns[0].items.is_empty());
    }

    #[test]
    fn whole_last_record_without_newline_is_kept() {
        let text = format!(
            "{}{}",
            lines(&[header()]),
            json!({"type": "name", "at": 1, "name": "n"})
        );
        let replayed = read(&text);
        assert!(!replayed.torn);
        assert_eq!(replayed.summary.name.as_deref(), Some("n"));
        assert_eq!(replayed.sound_len, text.len() as u64);
    }

    #[test]
    fn unknown_and_broken_middle_lines_are_skipped() {
        let text = lines(&[
            header(),
            json!({"type": "somethingNew", "at": 5, "x": 1}),
            json!("not a record"),
            json!({"type": "name", "at": 7, "name": "kept"}),
        ]);
        assert_eq!(read(&text).summary.name.as_deref(), Some("kept"));
    }

    #[test]
    fn missing_header_newer_version_and_empty_files_are_errors() {
        let no_header = lines(&[json!({"type": "name", "at": 1, "name": "n"})]);
        assert!(matches!(
            replay(no_header.as_bytes(), Path::new("x")),
            Err(RolloutError::NoHeader { .. })
        ));
        let mut newer = header();
        newer["version"] = json!(ROLLOUT_VERSION + 1);
        assert!(matches!(
            replay(lines(&[newer]).as_bytes(), Path::new("x")),
            Err(RolloutError::TooNew { .. })
        ));
        assert!(matches!(
            replay(&b""[..], Path::new("x")),
            Err(RolloutError::NoHeader { .. })
        ));
        assert!(matches!(
            replay(&b"{\"type\":\"thr"[..], Path::new("x")),
            Err(RolloutError::NoHeader { .. })
        ));
    }

    #[test]
    fn a_repeated_item_replaces_the_earlier_one() {
        let text = lines(&[
            header(),
            json!({"type": "turnStarted", "at": 1, "turnId": "a"}),
            json!({"type": "itemCompleted", "at": 2, "turnId": "a",
                   "item": {"type": "agentMessage", "id": "m", "text": "draft"}}),
            json!({"type": "itemCompleted", "at": 3, "turnId": "a",
                   "item": {"type": "agentMessage", "id": "m", "text": "final"}}),
        ]);
        let turns = read(&text).turns;
        assert_eq!(turns[0].items.len(), 1);
        let value = serde_json::to_value(&turns[0].items[0]).expect("item serializes");
        assert_eq!(value["text"], "final");
    }

    #[test]
    fn revert_and_git_info_records_replay() {
        let text = lines(&[
            header(),
            json!({"type": "turnStarted", "at": 1, "turnId": "a"}),
            json!({"type": "turnStarted", "at": 2, "turnId": "b"}),
            json!({"type": "itemCompleted", "at": 3, "turnId": "b", "item": user_item("u", "q")}),
            json!({"type": "turnStarted", "at": 4, "turnId": "c"}),
            json!({"type": "revert", "at": 5, "beforeTurnId": "b"}),
            json!({"type": "revert", "at": 6, "beforeTurnId": "nowhere"}),
            json!({"type": "turnStarted", "at": 7, "turnId": "d"}),
            json!({"type": "gitInfo", "at": 8, "gitInfo": {"sha": "abc", "branch": null, "originUrl": null}}),
        ]);
        let replayed = read(&text);
        let ids: Vec<&str> = replayed.turns.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["a", "d"]);
        let git = replayed.summary.meta.git_info.expect("git info");
        assert_eq!(git.sha.as_deref(), Some("abc"));
    }

    #[test]
    fn records_round_trip_through_turns() {
        let text = lines(&[
            header(),
            json!({"type": "turnStarted", "at": 1, "turnId": "a", "rootTurnId": "a", "startedAt": 1}),
            json!({"type": "itemCompleted", "at": 2, "turnId": "a", "item": user_item("u", "q")}),
            json!({"type": "turnCompleted", "at": 3, "turnId": "a", "status": "failed",
                   "error": {"message": "boom"}, "completedAt": 3, "durationMs": 5}),
        ]);
        let original = read(&text);
        let mut again = lines(&[header()]);
        for turn in &original.turns {
            for record in RolloutRecord::for_turn(turn, 9) {
                again.push_str(&serde_json::to_string(&record).expect("record serializes"));
                again.push('\n');
            }
        }
        assert_eq!(read(&again).turns, original.turns);
    }
}
