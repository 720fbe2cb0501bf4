//! Threads: creating, loading, copying, reading, listing, naming and archiving them. Where
//! they are kept is `agentwire_store`'s business: the rollout format, the embedded and
//! PostgreSQL stores and the index behind `thread/list` live there; this module holds the
//! rules (what each request does to a thread, which notifications follow).
//!
//! A persisted thread is a sequence of rollout records plus a row in its store's list index.
//! `ephemeral` threads live only in memory. A *loaded* thread is held in memory with its turns,
//! its runtime status and an open log; the turn engine records its progress through the
//! methods in [`recording`].
//!
//! Module map: [`lifecycle`] (start, resume, fork, archive, unarchive, name), [`list`] (read,
//! list, loaded list), [`history`] (turns/items pages, revert), [`timeline`] (items by id, the
//! timeline), [`search`] (thread search, occurrences), [`inject`] (items injected for the
//! model), [`environment_blocks`] (the environment context blocks a turn told the model),
//! [`organised`] (attachments, queue, section), [`admin`] (delete, unsubscribe, metadata),
//! [`compress`] (`rollout/compress`), [`goals`], [`memory`], [`plan`], [`usage`],
//! [`imported`]; and for several workers sharing a store: [`subscribers`] (who follows each
//! thread), [`elsewhere`] (turns running on another worker), [`asks`] (requests relayed to
//! it), [`claims`] and [`catch_up`].

pub(crate) mod admin;
pub(crate) mod asks;
pub(crate) mod catch_up;
pub(crate) mod claims;
pub(crate) mod compress;
pub(crate) mod elsewhere;
pub(crate) mod environment_blocks;
pub(crate) mod goals;
pub(crate) mod history;
pub(crate) mod imported;
pub(crate) mod inject;
pub(crate) mod lifecycle;
pub(crate) mod list;
pub(crate) mod memory;
pub(crate) mod organised;
pub(crate) mod plan;
pub(crate) mod recording;
pub(crate) mod search;
pub(crate) mod subscribers;
pub(crate) mod timeline;
pub(crate) mod usage;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agentwire_config::defaults::DefaultsSource;
use agentwire_protocol::{Thread, ThreadStatus, Turn};
use agentwire_store::committer::Pending;
use agentwire_store::error::ThreadError;
use agentwire_store::index::IndexRow;
use agentwire_store::meta::ThreadSummary;
use agentwire_store::record::RolloutRecord;
use agentwire_store::replay::Replayed;
use agentwire_store::{ThreadLog, ThreadStore};
use agentwire_support::lock;

/// Every thread the engine knows: the loaded ones in memory, the persisted ones in the store.
#[derive(Debug)]
pub(crate) struct Threads {
    /// The settings new threads get when the client leaves them out.
    defaults: Arc<dyn DefaultsSource>,
    /// Where persisted threads are kept.
    store: Arc<dyn ThreadStore>,
    loaded: Mutex<HashMap<String, Arc<Mutex<LoadedThread>>>>,
    /// The connections following each thread.
    pub(crate) subscribers: Arc<subscribers::Subscribers>,
}

/// A thread held in memory.
#[derive(Debug)]
pub(crate) struct LoadedThread {
    summary: ThreadSummary,
    /// Where its records go; `None` for an ephemeral thread.
    log: Option<Box<dyn ThreadLog>>,
    turns: Vec<Turn>,
    status: ThreadStatus,
}

impl Threads {
    /// The threads kept in `store` (see [`agentwire_store::open`]).
    /// A shared store relays notifications between this server's followers of a thread and the
    /// servers running its turns (see [`ThreadStore::relay`]).
    pub(crate) fn open(store: Arc<dyn ThreadStore>, defaults: Arc<dyn DefaultsSource>) -> Self {
        let subscribers = Arc::new(subscribers::Subscribers::default());
        let followers = Arc::downgrade(&subscribers);
        let relay = store.relay(Box::new(move |thread_id, relayed| {
            if let Some(followers) = followers.upgrade() {
                followers.deliver(thread_id, relayed);
            }
        }));
        if let Some(relay) = relay {
            subscribers.elsewhere.relay_through(relay);
        }
        Self {
            defaults,
            store,
            loaded: Mutex::new(HashMap::new()),
            subscribers,
        }
    }

    /// The loaded thread `id`, if it is loaded.
    fn loaded(&self, id: &str) -> Option<Arc<Mutex<LoadedThread>>> {
        lock(&self.loaded).get(id).cloned()
    }

    /// Whether thread `id` is loaded (exec sessions end when it no longer is).
    pub(crate) fn is_loaded(&self, id: &str) -> bool {
        lock(&self.loaded).contains_key(id)
    }

    /// The runtime status of thread `id`: `notLoaded` unless it is loaded.
    fn status_of(&self, id: &str) -> ThreadStatus {
        self.loaded(id)
            .map_or(ThreadStatus::NotLoaded, |t| lock(&t).status.clone())
    }

    /// The index row of persisted thread `id`.
    fn lookup(&self, id: &str) -> Result<IndexRow, ThreadError> {
        self.store
            .get(id)?
            .ok_or_else(|| ThreadError::NotFound(id.to_owned()))
    }

    /// Reads the records of `row` back (see [`ThreadStore::read`]).
    fn read_rollout(&self, row: &IndexRow) -> Result<Replayed, ThreadError> {
        self.store.read(row)
    }

    /// What `Thread.path` reports for `row`.
    fn path_of(&self, row: &IndexRow) -> Option<String> {
        self.store.location(row)
    }

    /// Appends `record` (stamped `at`) to a thread that is not loaded: `row` is its index row
    /// and `replayed` its records as read. `change` makes the replayed summary say what the
    /// record says; the index row (summary, update time) follows.
    fn append_stored(
        &self,
        row: &mut IndexRow,
        replayed: Replayed,
        record: RolloutRecord,
        at: i64,
        change: impl FnOnce(&mut ThreadSummary),
    ) -> Result<(), ThreadError> {
        row.summary = replayed.summary.clone();
        change(&mut row.summary);
        row.summary.updated_at = row.summary.updated_at.max(at);
        self.store.append(row, replayed, &[record])
    }
}

impl LoadedThread {
    /// Appends `records` to the rollout (nothing to write for an ephemeral thread) and stamps
    /// `at` as the last change. The records are queued under the thread's lock, so they reach
    /// the file in order; the returned [`Pending`] resolves once they are durable and the index
    /// row says so.
    fn append(&mut self, records: &[RolloutRecord], at: i64) -> Result<Pending, ThreadError> {
        self.summary.updated_at = self.summary.updated_at.max(at);
        match &mut self.log {
            None => Ok(Pending::nothing()),
            Some(log) => log.queue(records, &self.summary),
        }
    }

    /// Writes the index row of a persisted thread as it is now (see [`ThreadLog::sync`]).
    fn sync_index(&self) {
        if let Some(log) = &self.log {
            log.sync(&self.summary);
        }
    }

    /// Whether the thread's last turn runs on another server of a shared store: open in its
    /// records while nothing runs here.
    fn runs_elsewhere(&self) -> bool {
        matches!(self.status, ThreadStatus::Idle)
            && self
                .turns
                .last()
                .is_some_and(|turn| turn.status == agentwire_protocol::TurnStatus::InProgress)
    }

    /// The status clients are told: a thread whose turn runs on another server is active here
    /// too.
    fn reported_status(&self) -> ThreadStatus {
        if self.runs_elsewhere() {
            ThreadStatus::active().build()
        } else {
            self.status.clone()
        }
    }

    /// The wire form; `turns` only when `include_turns`.
    fn to_thread(&self, include_turns: bool) -> Thread {
        let path = self.log.as_ref().and_then(|log| log.location());
        let turns = if include_turns {
            self.turns.clone()
        } else {
            Vec::new()
        };
        self.summary.to_thread(self.reported_status(), path, turns)
    }
}
