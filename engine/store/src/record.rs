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
//! the engine's `threads::inject`): they follow turn `afterTurnId` in every later model call,
//! and never show among the thread's turns.
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
//!   [`crate::committer`]): each group of waiting records is written with one `write` per
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

use std::path::PathBuf;

use agentwire_protocol::{
    ThreadItem, ThreadItemKind, ThreadTokenUsage, Turn, TurnError, TurnItemsView, TurnStatus,
};
use serde::{Deserialize, Serialize};

use crate::meta::{GoalRecord, ThreadMeta, ThreadSettings};

/// The rollout format this build writes and the newest it reads.
pub(crate) const ROLLOUT_VERSION: u32 = 1;

/// One line of a rollout.
#[expect(
    missing_docs,
    reason = "each variant's doc and the module's format say what its fields hold"
)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum RolloutRecord {
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
    /// same type and key. Added in 0.6.0 (see [`crate::organised`]); older builds skip it.
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
        section: Option<crate::organised::SectionMark>,
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
    pub fn for_turn(turn: &Turn, at: i64) -> Vec<RolloutRecord> {
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
    pub fn turn_completed(turn: &Turn, at: i64) -> RolloutRecord {
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
#[expect(missing_docs, reason = "each variant's message says what it holds")]
#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
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

impl RolloutRecord {
    /// When the record was written (Unix seconds), for the records that say.
    pub fn at(&self) -> Option<i64> {
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
pub fn started_turn(id: String, root_turn_id: Option<String>, started_at: Option<i64>) -> Turn {
    Turn::builder()
        .id(id)
        .maybe_root_turn_id(root_turn_id)
        .status(TurnStatus::InProgress)
        .items_view(TurnItemsView::Full)
        .maybe_started_at(started_at)
        .build()
}

/// Adds `item` to `turn`, replacing an item with the same id.
pub fn put_item(turn: &mut Turn, item: ThreadItem) {
    let id = item_id(&item.kind);
    match turn.items.iter_mut().find(|i| item_id(&i.kind) == id) {
        Some(existing) => *existing = item,
        None => turn.items.push(item),
    }
}

/// The `id` every kind of item carries.
pub fn item_id(kind: &ThreadItemKind) -> &str {
    kind.id()
}

/// Marks the turns a crash left running as interrupted (for threads no turn runs on).
pub fn settle_dangling(turns: &mut [Turn]) -> Vec<&Turn> {
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
pub fn settle_records(turns: &mut [Turn], at: i64) -> Vec<RolloutRecord> {
    settle_dangling(turns)
        .into_iter()
        .map(|turn| RolloutRecord::turn_completed(turn, at))
        .collect()
}
