//! The files and directories under one search root: walked once, in parallel, and kept.
//!
//! A walk honours `.gitignore` (also outside a git repository), `.ignore`, the repository's
//! `.git/info/exclude` and the global git excludes file, as ripgrep does; hidden entries are
//! listed, `.git` itself is not, and symbolic links are listed but not followed. The walk runs
//! on threads of its own and publishes what it found in chunks as it goes, so a search session
//! can match a partial list while the rest is still being read.
//!
//! A finished list is reused until it may be out of date: for [`FRESH_FOR`] after it was
//! built or last checked it is used as is; after that, the next search first checks the
//! modification time of every directory and ignore file the walk saw (creating, removing or
//! renaming an entry anywhere changes its directory's time) and walks again only if one
//! changed. A list older than [`MAX_AGE`] is walked again regardless, which also picks up
//! changes to the excludes outside the root. A walk stops after [`MAX_ENTRIES`] entries.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use agentwire_support::lock;
use ignore::{DirEntry, WalkBuilder, WalkState};
use nucleo_matcher::Utf32String;
use tokio::sync::watch;

/// How long a finished list is used without looking at the disk.
pub(super) const FRESH_FOR: Duration = Duration::from_secs(1);
/// A list this old is walked again even if nothing it watches changed.
pub(super) const MAX_AGE: Duration = Duration::from_secs(300);
/// Roots whose lists are kept; the least recently searched is dropped beyond that.
const MAX_ROOTS: usize = 16;
/// Entries a walker thread collects before publishing them as a chunk.
const CHUNK: usize = 1024;
/// Most walker threads per root.
const MAX_WALKERS: usize = 8;
/// Most entries listed under one root; the walk stops there (a root such as `/` would
/// otherwise be read whole into memory).
pub(super) const MAX_ENTRIES: usize = 2_000_000;

/// One file or directory under a root.
#[derive(Debug)]
pub(super) struct Candidate {
    /// Its path relative to the root, `/`-separated: what the query is matched against.
    pub path: Utf32String,
    /// Where (in characters of `path`) its last component starts.
    pub name_start: u32,
    /// Whether it is a directory.
    pub is_dir: bool,
}

/// How far a walk has got.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Progress {
    /// Entries published so far.
    pub entries: usize,
    /// Whether the walk has finished (every entry is published).
    pub done: bool,
}

/// The list of one root, complete or still being walked.
#[derive(Debug)]
pub(super) struct Listing {
    /// The root, canonical.
    root: PathBuf,
    /// What the walk found so far, in the order the walkers published it.
    chunks: Mutex<Vec<Arc<[Candidate]>>>,
    progress: watch::Sender<Progress>,
    /// The directories and ignore files the walk saw, with their modification times.
    watched: Mutex<Vec<(PathBuf, Option<SystemTime>)>>,
    /// When the walk started.
    started: Instant,
    /// When the list was last known to match the disk (the end of the walk, or a check).
    checked: Mutex<Instant>,
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
}

impl Listing {
    /// Starts walking `root` (canonical) on threads of its own.
    fn start(root: PathBuf) -> Arc<Self> {
        let listing = Arc::new(Self {
            root,
            chunks: Mutex::new(Vec::new()),
            progress: watch::Sender::new(Progress::default()),
            watched: Mutex::new(Vec::new()),
            started: Instant::now(),
            checked: Mutex::new(Instant::now()),
        });
        let walker = listing.clone();
        let spawned = std::thread::Builder::new()
            .name("search-walk".into())
            .spawn(move || walker.walk());
        if let Err(error) = spawned {
            tracing::error!(root = %listing.root.display(), %error, "cannot start a file walk");
            listing.finish();
        }
        listing
    }

    /// The entries found so far.
    pub(super) fn chunks(&self) -> Vec<Arc<[Candidate]>> {
        lock(&self.chunks).clone()
    }

    /// How far the walk has got.
    pub(super) fn progress(&self) -> Progress {
        *self.progress.borrow()
    }

    /// Waits until the walk has finished.
    pub(super) async fn finished(&self) {
        let mut progress = self.progress.subscribe();
        // The sender lives as long as `self`, so this cannot fail while we borrow it.
        let _ = progress.wait_for(|p| p.done).await;
    }

    fn walk(&self) {
        // Marks the walk finished however it ends, a panicking walker included, so that no
        // search waits for it forever.
        struct Finish<'a>(&'a Listing);
        impl Drop for Finish<'_> {
            fn drop(&mut self) {
                *lock(&self.0.checked) = Instant::now();
                self.0.finish();
            }
        }
        let _finish = Finish(self);
        let walkers = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(MAX_WALKERS);
        let mut builder = WalkBuilder::new(&self.root);
        builder
            .hidden(false)
            .follow_links(false)
            .require_git(false)
            .threads(walkers)
            .filter_entry(|entry| entry.file_name() != ".git");
        builder.build_parallel().run(|| {
            let mut sink = Sink {
                listing: self,
                batch: Vec::with_capacity(CHUNK),
                watched: Vec::new(),
            };
            Box::new(move |entry| {
                let more = match entry {
                    Ok(entry) => sink.take(&entry),
                    Err(error) => {
                        tracing::debug!(%error, "entry skipped by the file walk");
                        true
                    }
                };
                if more {
                    WalkState::Continue
                } else {
                    WalkState::Quit
                }
            })
        });
    }

    fn finish(&self) {
        self.progress.send_modify(|p| p.done = true);
    }

    /// Adds `batch` to the list; returns whether the list may grow further.
    fn publish(&self, batch: Vec<Candidate>) -> bool {
        if batch.is_empty() {
            return true;
        }
        let count = batch.len();
        lock(&self.chunks).push(Arc::from(batch));
        let mut total = 0;
        self.progress.send_modify(|p| {
            p.entries += count;
            total = p.entries;
        });
        if total >= MAX_ENTRIES {
            tracing::warn!(root = %self.root.display(), total, "file walk stopped: too many entries");
            return false;
        }
        true
    }

    /// Whether the finished list can be used without walking again; checks the disk if it
    /// has not been checked for [`FRESH_FOR`].
    fn still_good(&self) -> bool {
        if self.started.elapsed() > MAX_AGE {
            return false;
        }
        if lock(&self.checked).elapsed() < FRESH_FOR {
            return true;
        }
        let unchanged = {
            let watched = lock(&self.watched);
            unchanged(&watched)
        };
        if unchanged {
            *lock(&self.checked) = Instant::now();
        }
        unchanged
    }
}

/// Whether every path still has its recorded modification time; checked on a few threads.
fn unchanged(watched: &[(PathBuf, Option<SystemTime>)]) -> bool {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 4);
    if watched.len() < 512 || threads == 1 {
        return watched.iter().all(|(path, time)| modified(path) == *time);
    }
    let part = watched.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let checks: Vec<_> = watched
            .chunks(part)
            .map(|slice| {
                scope.spawn(move || slice.iter().all(|(path, time)| modified(path) == *time))
            })
            .collect();
        checks
            .into_iter()
            .all(|check| check.join().unwrap_or(false))
    })
}

/// What one walker thread has collected and not yet published.
struct Sink<'a> {
    listing: &'a Listing,
    batch: Vec<Candidate>,
    watched: Vec<(PathBuf, Option<SystemTime>)>,
}

impl Sink<'_> {
    /// Lists `entry`; returns whether the walk should go on.
    fn take(&mut self, entry: &DirEntry) -> bool {
        let path = entry.path();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if is_dir {
            self.watched.push((path.to_owned(), modified(path)));
        }
        if entry.depth() == 0 {
            return true;
        }
        let name = entry.file_name();
        if !is_dir && (name == ".gitignore" || name == ".ignore") {
            self.watched.push((path.to_owned(), modified(path)));
        }
        let Ok(relative) = path.strip_prefix(&self.listing.root) else {
            return true;
        };
        let relative = relative.to_string_lossy();
        let name_start = relative
            .rfind('/')
            .map_or(0, |slash| relative[..=slash].chars().count());
        self.batch.push(Candidate {
            path: Utf32String::from(relative.as_ref()),
            name_start: u32::try_from(name_start).unwrap_or(0),
            is_dir,
        });
        if self.batch.len() >= CHUNK {
            let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(CHUNK));
            return self.listing.publish(batch);
        }
        true
    }
}

impl Drop for Sink<'_> {
    fn drop(&mut self) {
        let _ = self.listing.publish(std::mem::take(&mut self.batch));
        lock(&self.listing.watched).append(&mut self.watched);
    }
}

/// The lists of the roots searched lately.
#[derive(Debug, Default)]
pub(super) struct Listings {
    cache: Mutex<HashMap<PathBuf, (Arc<Listing>, Instant)>>,
}

impl Listings {
    /// The list of `root` (canonical): the kept one while it is being walked or still good,
    /// otherwise a new walk, started here and perhaps not finished. May read the disk (see
    /// the module documentation), so call it off the async threads.
    pub(super) fn get(&self, root: &Path) -> Arc<Listing> {
        let kept = lock(&self.cache).get(root).map(|(l, _)| l.clone());
        let listing = match kept {
            Some(listing) if !listing.progress().done || listing.still_good() => listing,
            _ => Listing::start(root.to_owned()),
        };
        let mut cache = lock(&self.cache);
        cache.insert(root.to_owned(), (listing.clone(), Instant::now()));
        if cache.len() > MAX_ROOTS
            && let Some(oldest) = cache
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(root, _)| root.clone())
        {
            cache.remove(&oldest);
        }
        listing
    }
}
