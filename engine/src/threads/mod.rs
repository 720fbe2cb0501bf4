//! Threads: creating, loading, copying, reading, listing, naming and archiving them, and
//! keeping them on disk.
//!
//! A persisted thread is one append-only rollout file (see [`rollout`] for the format and the
//! fsync policy) plus a row in the SQLite index (see [`index`]); `ephemeral` threads live only
//! in memory. A *loaded* thread is held in memory with its turns, its runtime status and an open
//! rollout writer; the turn engine records its progress through the methods in [`recording`].
//!
//! Module map: [`meta`] (metadata, settings, summary), [`rollout`] (records, replay, writer),
//! [`committer`] (the thread that makes loaded threads' records durable in groups),
//! [`paths`] (layout and read checks), [`index`] (SQLite), [`page_cache`] (pages served
//! lately), [`cursor`] (list and history cursors), [`positions`] (where each turn and item
//! lies in its rollout, for paging), [`history`] (turns/items pages, revert), [`admin`]
//! (delete, unsubscribe, metadata),
//! [`lifecycle`] (start, resume, fork, archive, unarchive, name), [`list`] (read, list,
//! loaded list), [`error`].

pub(crate) mod admin;
pub(crate) mod committer;
pub(crate) mod cursor;
pub(crate) mod error;
pub(crate) mod history;
pub(crate) mod index;
pub(crate) mod lifecycle;
pub(crate) mod list;
pub(crate) mod meta;
pub(crate) mod page_cache;
pub(crate) mod paths;
pub(crate) mod positions;
pub(crate) mod recording;
pub(crate) mod rollout;
pub(crate) mod subscribers;
pub(crate) mod usage;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agentwire_protocol::{Thread, ThreadStatus, Turn};

use committer::{Committer, Pending, SharedIndex};
use error::ThreadError;
use index::{Index, IndexRow};
use meta::{DefaultsSource, ThreadSummary};
use paths::Layout;
use rollout::{FileStamp, Replayed, RolloutError, RolloutRecord, RolloutWriter, replay};

/// Every thread the engine knows: the loaded ones in memory, the persisted ones on disk.
#[derive(Debug)]
pub(crate) struct Threads {
    layout: Layout,
    /// The settings new threads get when the client leaves them out.
    defaults: Arc<dyn DefaultsSource>,
    /// The index, or why it could not be opened (then every persisted operation fails);
    /// shared with the committer.
    index: SharedIndex,
    /// Writes the records of loaded threads; `None` when the index could not be opened.
    committer: Option<Committer>,
    loaded: Mutex<HashMap<String, Arc<Mutex<LoadedThread>>>>,
    /// The connections following each thread.
    pub(crate) subscribers: subscribers::Subscribers,
}

/// A thread held in memory.
#[derive(Debug)]
pub(crate) struct LoadedThread {
    summary: ThreadSummary,
    /// Where it is persisted; `None` for an ephemeral thread.
    place: Option<Place>,
    turns: Vec<Turn>,
    status: ThreadStatus,
}

/// The rollout of a loaded, persisted thread.
#[derive(Debug)]
struct Place {
    /// Relative to the live root (loaded threads are never archived).
    relative: PathBuf,
    writer: RolloutWriter,
}

/// Locks `mutex`, recovering the data if a holder panicked (no holder leaves it half-changed).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Threads {
    /// Opens the threads under `home`: creates the folders, opens (or rebuilds) the index and
    /// reconciles it with the rollouts. A failure is logged and kept: the engine still serves,
    /// and persisted-thread requests answer with the reason.
    pub(crate) fn open(home: &Path, defaults: Arc<dyn DefaultsSource>) -> Self {
        let layout = Layout::new(home);
        let index = paths::create_private_dirs(layout.home())
            .map_err(|e| format!("cannot create {}: {e}", layout.home().display()))
            .and_then(|()| {
                Index::open(&layout.index_file(), &layout)
                    .map_err(|e| format!("cannot open the thread index: {e}"))
            })
            .map(Mutex::new);
        let index: SharedIndex = Arc::new(index);
        let committer = match &*index {
            Ok(_) => Committer::start(Arc::clone(&index))
                .map_err(|e| format!("cannot start the rollout committer: {e}")),
            Err(error) => Err(error.clone()),
        };
        let (index, committer) = match committer {
            Ok(committer) => (index, Some(committer)),
            Err(error) => (Arc::new(Err(error)), None),
        };
        if let Err(error) = &*index {
            tracing::error!(home = %layout.home().display(), error, "thread storage unavailable");
        }
        Self {
            layout,
            defaults,
            index,
            committer,
            loaded: Mutex::new(HashMap::new()),
            subscribers: subscribers::Subscribers::default(),
        }
    }

    fn index(&self) -> Result<MutexGuard<'_, Index>, ThreadError> {
        match &*self.index {
            Ok(index) => Ok(lock(index)),
            Err(error) => Err(ThreadError::Storage(error.clone())),
        }
    }

    /// The committer of loaded threads' records; there is one whenever the index opened.
    fn committer(&self) -> Result<&Committer, ThreadError> {
        match (&self.committer, &*self.index) {
            (Some(committer), _) => Ok(committer),
            (None, Err(error)) => Err(ThreadError::Storage(error.clone())),
            (None, Ok(_)) => Err(ThreadError::Storage(
                "the rollout committer is not running".to_owned(),
            )),
        }
    }

    /// The loaded thread `id`, if it is loaded.
    fn loaded(&self, id: &str) -> Option<Arc<Mutex<LoadedThread>>> {
        lock(&self.loaded).get(id).cloned()
    }

    /// The runtime status of thread `id`: `notLoaded` unless it is loaded.
    fn status_of(&self, id: &str) -> ThreadStatus {
        self.loaded(id)
            .map_or(ThreadStatus::NotLoaded, |t| lock(&t).status.clone())
    }

    /// The index row of persisted thread `id`.
    fn lookup(&self, id: &str) -> Result<IndexRow, ThreadError> {
        self.index()?
            .get(id)?
            .ok_or_else(|| ThreadError::NotFound(id.to_owned()))
    }

    /// Reads the rollout of `row` back. A rollout that is gone, or whose first line is no
    /// longer a thread record, takes its row out of the index with it: `thread/list` stops
    /// showing a thread that `thread/read` cannot read.
    fn read_rollout(&self, row: &IndexRow) -> Result<Replayed, ThreadError> {
        let id = &row.summary.meta.id;
        let path = self.layout.rollout(row.archived, &row.relative);
        let replayed = match self.layout.open_checked(&path) {
            Ok((file, _)) => replay(file, &path),
            // The index is stale: the file was removed behind its back.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.forget(id, "its rollout is gone");
                return Err(ThreadError::NotFound(id.clone()));
            }
            Err(e) => {
                return Err(ThreadError::Storage(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        replayed.map_err(|error| {
            if matches!(error, RolloutError::NoHeader { .. }) {
                self.forget(id, "its rollout's first line is not a thread record");
            }
            ThreadError::from(error)
        })
    }

    /// Drops thread `id` from the index, logging `why`.
    fn forget(&self, id: &str, why: &str) {
        tracing::warn!(id, why, "thread dropped from the index");
        if let Err(error) = self.index().and_then(|i| Ok(i.remove(id)?)) {
            tracing::warn!(id, %error, "thread index not updated");
        }
    }

    /// The absolute rollout path of `row`, as reported in `Thread.path`.
    fn path_of(&self, row: &IndexRow) -> String {
        self.layout
            .rollout(row.archived, &row.relative)
            .to_string_lossy()
            .into_owned()
    }

    /// Writes the index row of a loaded thread. A failure is logged, not returned: the rollout
    /// is already durable, and the next start's reconciliation repairs the row.
    fn sync_index(&self, thread: &LoadedThread) {
        let Some(place) = &thread.place else {
            return;
        };
        let stamp = match place.writer.stamp() {
            Ok(stamp) => stamp,
            Err(error) => {
                tracing::warn!(id = thread.summary.meta.id, %error, "cannot stat rollout");
                Default::default()
            }
        };
        let row = IndexRow {
            summary: thread.summary.clone(),
            relative: place.relative.clone(),
            archived: false,
            stamp,
        };
        if let Err(error) = self.index().and_then(|i| Ok(i.upsert(&row)?)) {
            tracing::warn!(id = thread.summary.meta.id, %error, "thread index not updated");
        }
        self.refresh_positions(&thread.summary.meta.id, place.writer.path());
    }

    /// Appends `record` (stamped `at`) to the rollout of a thread that is not loaded: `row` is
    /// its index row and `replayed` its rollout as read. `change` makes the replayed summary
    /// say what the record says; the index row (stamp, summary, update time) and the thread's
    /// positions follow.
    fn append_stored(
        &self,
        row: &mut IndexRow,
        replayed: Replayed,
        record: RolloutRecord,
        at: i64,
        change: impl FnOnce(&mut ThreadSummary),
    ) -> Result<(), ThreadError> {
        let path = self.layout.rollout(row.archived, &row.relative);
        let mut writer = RolloutWriter::open(&path, replayed.sound_len, replayed.torn)?;
        row.stamp = writer.append(&[record])?;
        row.summary = replayed.summary;
        change(&mut row.summary);
        row.summary.updated_at = row.summary.updated_at.max(at);
        self.index()?.upsert(row)?;
        self.refresh_positions(&row.summary.meta.id, &path);
        Ok(())
    }

    /// Brings the turn and item positions of thread `id` (rollout at `path`) up to date. A
    /// failure is logged: the next page request tries again.
    fn refresh_positions(&self, id: &str, path: &Path) {
        let refreshed = std::fs::File::open(path)
            .map_err(ThreadError::from)
            .and_then(|file| Ok(self.index()?.catch_up(id, &file, path)?));
        if let Err(error) = refreshed {
            tracing::warn!(id, %error, "thread positions not updated");
        }
    }
}

impl LoadedThread {
    /// Appends `records` to the rollout (nothing to write for an ephemeral thread) and stamps
    /// `at` as the last change. The records are queued under the thread's lock, so they reach
    /// the file in order; the returned [`Pending`] resolves once they are durable and the index
    /// row says so.
    fn append(
        &mut self,
        threads: &Threads,
        records: &[RolloutRecord],
        at: i64,
    ) -> Result<Pending, ThreadError> {
        self.summary.updated_at = self.summary.updated_at.max(at);
        let Some(place) = &mut self.place else {
            return Ok(Pending::nothing());
        };
        let committer = threads.committer()?;
        let row = IndexRow {
            summary: self.summary.clone(),
            relative: place.relative.clone(),
            archived: false,
            stamp: FileStamp::default(),
        };
        Ok(place.writer.queue(committer, records, row)?)
    }

    /// The wire form; `turns` only when `include_turns`.
    fn to_thread(&self, include_turns: bool) -> Thread {
        let path = self
            .place
            .as_ref()
            .map(|p| p.writer.path().to_string_lossy().into_owned());
        let turns = if include_turns {
            self.turns.clone()
        } else {
            Vec::new()
        };
        self.summary.to_thread(self.status.clone(), path, turns)
    }
}
