//! The embedded store, the default: one append-only JSONL rollout per thread under the home
//! (see [`crate::record`] for the format and the fsync policy) and a SQLite index
//! beside them (see [`crate::index`]), the rollouts being the truth. Records of loaded
//! threads are made durable in groups by the committer thread ([`crate::committer`]).
//! A cold rollout may be kept gzipped (`rollout/compress`, see [`crate::compress`]);
//! every file access here goes through [`crate::compressed`], which takes either form.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use agentwire_support::atomic_file::sync_dir;
use agentwire_support::lock;

use crate::boundary::{ThreadLog, ThreadStore};
use crate::committer::{Committer, Pending, SharedIndex};
use crate::compress::Compressor;
use crate::compressed::{open_for_append, remove_either};
use crate::error::ThreadError;
use crate::index::{self, Index, IndexRow, PageQuery};
use crate::meta::ThreadSummary;
use crate::paths::{self, Layout, move_rollout, rollout_name};
use crate::record::{RolloutError, RolloutRecord};
use crate::replay::{Replayed, replay};
use crate::stamp::FileStamp;
use crate::writer::RolloutWriter;

/// Rollouts and index under one home.
#[derive(Debug)]
pub struct EmbeddedStore {
    /// The `rollout/compress` passes; dropped first, so a running pass is told to stop before
    /// the committer drains.
    compressor: Compressor,
    shared: Arc<Shared>,
}

/// What the store and the logs of its loaded threads share. The committer goes last, once
/// every log is gone: dropping it commits what is queued and closes the index.
#[derive(Debug)]
struct Shared {
    layout: Layout,
    index: SharedIndex,
    /// A read-only connection for pages asked for while the committer holds the index; `None`
    /// if it could not be opened (pages then wait for the index).
    reader: Option<Mutex<rusqlite::Connection>>,
    committer: Committer,
}

impl EmbeddedStore {
    /// Opens the store under `home`: creates the folders, opens (or rebuilds) the index,
    /// reconciles it with the rollouts and starts the committer.
    pub(crate) fn open(home: &Path) -> Result<Self, String> {
        let layout = Layout::new(home);
        paths::create_private_dirs(layout.home())
            .map_err(|e| format!("cannot create {}: {e}", layout.home().display()))?;
        let index = Index::open(&layout.index_file(), &layout)
            .map_err(|e| format!("cannot open the thread index: {e}"))?;
        let reader = index::open_reader(&layout.index_file())
            .map_err(|error| tracing::warn!(%error, "no read-only index connection"))
            .ok()
            .map(Mutex::new);
        let index: SharedIndex = Arc::new(Mutex::new(index));
        let committer = Committer::start(Arc::clone(&index))
            .map_err(|e| format!("cannot start the rollout committer: {e}"))?;
        Ok(Self {
            compressor: Compressor::default(),
            shared: Arc::new(Shared {
                layout,
                index,
                reader,
                committer,
            }),
        })
    }

    /// Where the files are.
    pub fn layout(&self) -> &Layout {
        &self.shared.layout
    }

    /// The index, locked (for the position tables behind history pages).
    pub fn index(&self) -> MutexGuard<'_, Index> {
        lock(&self.shared.index)
    }

    /// The index, locked, unless the committer holds it now (`None`: never waits).
    fn try_index(&self) -> Option<MutexGuard<'_, Index>> {
        match self.shared.index.try_lock() {
            Ok(index) => Some(index),
            Err(std::sync::TryLockError::Poisoned(index)) => Some(index.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    fn rollout(&self, row: &IndexRow) -> PathBuf {
        self.layout().rollout(row.archived, &row.relative)
    }

    /// Starts a pass that compresses the rollouts not modified for `after` and not open for
    /// appending (see [`crate::compress`]); `Ok(false)` when one runs already.
    pub fn compress_cold(&self, after: std::time::Duration) -> std::io::Result<bool> {
        self.compressor
            .start(self.layout().clone(), Arc::clone(&self.shared.index), after)
    }

    /// Opens rollout `path` for appending through a [`RolloutWriter`], thawing it first if it
    /// is compressed.
    fn open_writer(&self, path: &Path, replayed: &Replayed) -> Result<RolloutWriter, ThreadError> {
        let open = || RolloutWriter::open(path, replayed.sound_len, replayed.torn);
        open_for_append(self.layout(), path, open).map_err(|error| {
            ThreadError::Storage(format!(
                "cannot open {} for appending: {error}",
                path.display()
            ))
        })
    }
}

impl ThreadStore for EmbeddedStore {
    fn get(&self, id: &str) -> Result<Option<IndexRow>, ThreadError> {
        Ok(self.index().get(id)?)
    }

    fn page(&self, query: &PageQuery) -> Result<Arc<[IndexRow]>, ThreadError> {
        // While the committer writes, read the last commit on the reader instead of waiting:
        // a list never queues behind a group's index work.
        if let Some(index) = self.try_index() {
            return Ok(index.page(query)?);
        }
        match &self.shared.reader {
            Some(reader) => Ok(index::read_page(&lock(reader), query)?.into()),
            None => Ok(self.index().page(query)?),
        }
    }

    fn kept_page(&self, query: &PageQuery) -> Option<Arc<[IndexRow]>> {
        self.try_index()?.kept_page(query)
    }

    fn forget(&self, id: &str, why: &str) {
        tracing::warn!(id, why, "thread dropped from the index");
        if let Err(error) = self.index().remove(id) {
            tracing::warn!(id, %error, "thread index not updated");
        }
    }

    fn location(&self, row: &IndexRow) -> Option<String> {
        Some(self.rollout(row).to_string_lossy().into_owned())
    }

    fn read(&self, row: &IndexRow) -> Result<Replayed, ThreadError> {
        let id = &row.summary.meta.id;
        let path = self.rollout(row);
        let replayed = match self.layout().open_reader(&path) {
            Ok((reader, _)) => replay(reader, &path),
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

    fn create(
        &self,
        summary: &ThreadSummary,
        records: &[RolloutRecord],
    ) -> Result<Box<dyn ThreadLog>, ThreadError> {
        let meta = &summary.meta;
        let relative = rollout_name(meta.created_at, &meta.id);
        let path = self.layout().rollout(false, &relative);
        let mut writer = RolloutWriter::create(&path, meta)?;
        if !records.is_empty() {
            writer.append(records)?;
        }
        let log = FileLog {
            shared: Arc::clone(&self.shared),
            relative,
            writer,
        };
        log.sync(summary);
        Ok(Box::new(log))
    }

    fn reopen(
        &self,
        row: &IndexRow,
        replayed: &Replayed,
    ) -> Result<Box<dyn ThreadLog>, ThreadError> {
        let path = self.layout().rollout(false, &row.relative);
        let writer = self.open_writer(&path, replayed)?;
        Ok(Box::new(FileLog {
            shared: Arc::clone(&self.shared),
            relative: row.relative.clone(),
            writer,
        }))
    }

    fn append(
        &self,
        row: &mut IndexRow,
        replayed: Replayed,
        records: &[RolloutRecord],
    ) -> Result<(), ThreadError> {
        let path = self.rollout(row);
        let mut writer = self.open_writer(&path, &replayed)?;
        row.stamp = writer.append(records)?;
        self.index().upsert(row)?;
        self.index().refresh_positions(&row.summary.meta.id, &path);
        Ok(())
    }

    fn set_archived(&self, row: &mut IndexRow, archived: bool) -> Result<(), ThreadError> {
        move_rollout(self.layout(), &row.relative, archived)?;
        row.archived = archived;
        Ok(self.index().upsert(row)?)
    }

    fn delete(&self, row: &IndexRow) -> Result<(), ThreadError> {
        let path = self.rollout(row);
        // Either form; removed behind our back, the index entry still goes.
        remove_either(&path).map_err(|e| ThreadError::Storage(e.to_string()))?;
        if let Some(parent) = path.parent() {
            sync_dir(parent)?;
        }
        Ok(self.index().remove(&row.summary.meta.id)?)
    }

    fn files(&self) -> Option<&EmbeddedStore> {
        Some(self)
    }
}

/// The rollout of a loaded thread, open for appending.
#[derive(Debug)]
struct FileLog {
    shared: Arc<Shared>,
    /// Relative to the live root (loaded threads are never archived).
    relative: PathBuf,
    writer: RolloutWriter,
}

impl FileLog {
    fn row(&self, summary: &ThreadSummary, stamp: FileStamp) -> IndexRow {
        IndexRow {
            summary: summary.clone(),
            relative: self.relative.clone(),
            archived: false,
            stamp,
        }
    }
}

impl ThreadLog for FileLog {
    fn queue(
        &mut self,
        records: &[RolloutRecord],
        summary: &ThreadSummary,
    ) -> Result<Pending, ThreadError> {
        let row = self.row(summary, FileStamp::default());
        Ok(self.writer.queue(&self.shared.committer, records, row)?)
    }

    fn sync(&self, summary: &ThreadSummary) {
        let stamp = self.writer.stamp().unwrap_or_else(|error| {
            tracing::warn!(id = summary.meta.id, %error, "cannot stat rollout");
            FileStamp::default()
        });
        lock(&self.shared.index).record(&self.row(summary, stamp), self.writer.path());
    }

    fn location(&self) -> Option<String> {
        Some(self.writer.path().to_string_lossy().into_owned())
    }

    fn file(&self) -> Option<&Path> {
        Some(self.writer.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::tests::row;

    fn summary(id: &str, created_at: i64) -> ThreadSummary {
        row(id, created_at, None).summary
    }

    #[test]
    fn a_page_asked_for_while_the_index_is_held_is_read_without_waiting() {
        let home = tempfile::tempdir().expect("scratch home");
        let store = EmbeddedStore::open(home.path()).expect("store opens");
        store.create(&summary("a", 10), &[]).expect("thread a");
        store.create(&summary("b", 20), &[]).expect("thread b");
        let query = PageQuery {
            descending: true,
            limit: 10,
            ..PageQuery::default()
        };
        let ids = |rows: &[IndexRow]| -> Vec<String> {
            rows.iter().map(|r| r.summary.meta.id.clone()).collect()
        };
        let free = store.page(&query).expect("page");
        // The committer's side of the index is held: the page comes from the reader.
        let held = store.index();
        let while_held = store.page(&query).expect("page while the index is held");
        drop(held);
        assert_eq!(ids(&while_held), ["b", "a"]);
        assert_eq!(ids(&while_held), ids(&free));
    }
}
