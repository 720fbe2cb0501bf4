//! The `thread/list` pages served lately, kept until the index changes.
//!
//! Clients poll the first page of the listing; answering it again from memory saves the
//! SQLite read transaction and the decoding of every row. A kept page is dropped as soon as
//! anything may have changed the index: every write through this process's [`crate::index::Index`]
//! clears the cache, and a commit by any other connection shows as a change in the length or
//! modification time of the write-ahead log (`state.sqlite-wal`), which is checked (`fstat` on
//! a descriptor kept open: the log is not removed while this process's connection is open)
//! before a kept page is used. File timestamps are coarse (a few milliseconds) and a log
//! restarted after a checkpoint is rewritten in place, so two commits elsewhere could leave
//! the same length and time; a kept page is therefore also read again once it is
//! `MAX_AGE` old, which bounds how stale another process's change can look. One look at the
//! log stands for `RECHECK`, so that a client polling many times a millisecond does not pay
//! a system call each time.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::index::{IndexRow, PageQuery};
use crate::stamp::FileStamp;

/// Pages kept at most.
const ENTRIES: usize = 8;
/// How long a kept page is used at most.
const MAX_AGE: Duration = Duration::from_secs(1);
/// How long one look at the write-ahead log stands for: requests that come faster than this
/// share one `fstat` (a busy client polls many times a millisecond; another process's commit
/// shows at most this late).
pub(crate) const RECHECK: Duration = Duration::from_millis(20);
/// Pages of more rows than this are not kept (bounds the memory held to a few hundred rows).
const MAX_ROWS: usize = 101;

/// The kept pages.
#[derive(Debug, Default)]
pub(crate) struct PageCache {
    /// The write-ahead log that commits of other connections go to; `None` for an index
    /// without one (in memory), which only this process can change.
    wal: Option<PathBuf>,
    /// The log, opened with the index (or on first use, if it was not there yet).
    log: Option<File>,
    /// The log's stamp when the kept pages were read.
    seen: Option<FileStamp>,
    /// When `seen` was last compared with the log.
    checked_at: Option<Instant>,
    /// Each page with the query it answers, most recently used last.
    pages: Vec<Kept>,
}

impl PageCache {
    /// An empty cache for the index whose write-ahead log is `wal`. The log is opened now,
    /// with the index (off the async path), so that answering a page costs one `fstat` at
    /// most; only a log that is not there yet is opened on first use.
    pub(crate) fn new(wal: Option<PathBuf>) -> Self {
        let log = wal.as_ref().and_then(|wal| File::open(wal).ok());
        Self {
            wal,
            log,
            ..Self::default()
        }
    }

    /// Forgets every kept page (the index changed).
    pub(crate) fn clear(&mut self) {
        self.pages.clear();
        self.seen = None;
    }

    /// The stamp of the write-ahead log now; `None` when it cannot be read (then nothing is
    /// kept: the check would be blind).
    fn stamp(&mut self) -> Option<FileStamp> {
        if self.log.is_none() {
            self.log = File::open(self.wal.as_ref()?).ok();
        }
        let metadata = self.log.as_ref()?.metadata().ok()?;
        FileStamp::of(&metadata).ok()
    }

    /// Whether pages may be kept at all, and the current log stamp: pages read with another
    /// stamp are dropped first.
    fn check(&mut self) -> Option<Option<FileStamp>> {
        if self.wal.is_none() {
            return Some(None);
        }
        if let (Some(seen), Some(at)) = (self.seen, self.checked_at)
            && at.elapsed() < RECHECK
        {
            return Some(Some(seen));
        }
        let now = self.stamp()?;
        self.checked_at = Some(Instant::now());
        if self.seen != Some(now) {
            self.clear();
        }
        Some(Some(now))
    }

    /// The kept answer to `query`, if it is still current.
    pub(crate) fn get(&mut self, query: &PageQuery) -> Option<Arc<[IndexRow]>> {
        self.check()?;
        let at = self.pages.iter().position(|kept| kept.query == *query)?;
        let kept = self.pages.remove(at);
        if kept.read_at.elapsed() > MAX_AGE {
            return None;
        }
        let rows = kept.rows.clone();
        self.pages.push(kept);
        Some(rows)
    }

    /// Keeps `rows` as the answer to `query`; `before` is the log stamp taken before they
    /// were read (a commit in between makes the next check drop them).
    pub(crate) fn put(&mut self, query: &PageQuery, rows: &Arc<[IndexRow]>, before: Stamp) {
        if rows.len() > MAX_ROWS || query.limit > MAX_ROWS {
            return;
        }
        let Some(log) = before.log else {
            return;
        };
        if self.seen != log {
            self.clear();
            self.seen = log;
        }
        if self.pages.len() >= ENTRIES {
            self.pages.remove(0);
        }
        self.pages.push(Kept {
            query: query.clone(),
            rows: rows.clone(),
            read_at: before.at,
        });
    }

    /// The log stamp to pass to [`PageCache::put`] for rows about to be read.
    pub(crate) fn before_read(&mut self) -> Stamp {
        Stamp {
            log: self.check(),
            at: Instant::now(),
        }
    }
}

/// A kept page.
#[derive(Debug)]
struct Kept {
    /// The query it answers.
    query: PageQuery,
    /// The rows read.
    rows: Arc<[IndexRow]>,
    /// When they were read (before the read began).
    read_at: Instant,
}

/// The state of things before a read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stamp {
    /// The write-ahead log's stamp (`None` inside for an index without one); `None` when
    /// pages cannot be kept.
    log: Option<Option<FileStamp>>,
    /// When the read began.
    at: Instant,
}
