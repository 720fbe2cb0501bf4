//! `fs/watch`, `fs/unwatch` and `fs/changed`: inotify (through `notify`) on directories opened
//! inside the roots.
//!
//! - The watched directory is opened with the same confinement as every other `fs/*` path, and
//!   the kernel watch is placed through `/proc/self/fd/N` of that descriptor, so it is on
//!   exactly the directory that was checked (no path is looked up again). A file is watched
//!   through its directory, its own name filtered, so an atomic save (a new file renamed over
//!   it) is still seen. One kernel watch serves every watch of the same directory.
//! - Directory watches are not recursive: they report the directory's own entries (and the
//!   directory itself when it is removed or moved).
//! - Changes are gathered for [`COALESCE`] after the first one and then sent as one
//!   `fs/changed` per watch, at most [`pending::MAX_PATHS`] paths (past that, just the watched
//!   path): a burst of writes costs a handful of notifications. Reads are not changes.
//! - A connection has at most [`MAX_PER_CONNECTION`] watches, the server [`MAX_TOTAL`]; a
//!   watch ends with `fs/unwatch` (nothing for it is sent after the answer) or when its
//!   connection closes (checked every [`LIVENESS_EVERY`]).

mod pending;

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use agentwire_protocol::methods::FsChanged;
use agentwire_protocol::{AbsolutePathBuf, FsChangedNotification};
use agentwire_runtime::{ConnectionId, HandlerError, Peer};
use agentwire_support::atomic_file::TEMP_PREFIX;
use agentwire_support::lock;
use notify::event::ModifyKind;
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use pending::Pending;
use rustix::fs::{FileType, fstat};
use tokio::sync::Notify;

use super::error::{FsResult, Reason};
use super::resolve::kind;
use super::roots::{Scope, real_path};

/// Most watches one connection may hold.
pub(crate) const MAX_PER_CONNECTION: usize = 64;
/// Most watches the server holds over all connections.
pub(crate) const MAX_TOTAL: usize = 1024;
/// Longest `watchId` accepted, in bytes.
pub(crate) const MAX_WATCH_ID: usize = 256;
/// How long changes are gathered after the first before they are reported.
const COALESCE: Duration = Duration::from_millis(100);
/// How often the watches check that their connections are still open.
const LIVENESS_EVERY: Duration = Duration::from_secs(1);

/// A directory (device, inode).
type Inode = (u64, u64);
/// A watch: its connection and the client's id.
type Key = (ConnectionId, String);

/// What to watch, found under the roots.
#[derive(Debug)]
pub(crate) struct Target {
    /// The directory the kernel watch goes on.
    dir: OwnedFd,
    /// Where that directory is.
    dir_real: PathBuf,
    /// For a file: its name in `dir`.
    only: Option<OsString>,
    /// The path reported to the client: the directory, or the file.
    watched: PathBuf,
}

impl Target {
    /// The watched path, as `fs/watch` answers it.
    pub(crate) fn watched(&self) -> &Path {
        &self.watched
    }
}

/// Finds what `raw` (the `path` of `fs/watch`) names under `scope`: a directory, or a file
/// (followed to where it really is, inside the roots).
pub(crate) fn target(scope: &Scope, raw: &str) -> FsResult<Target> {
    let at = scope.locate("path", raw)?;
    let (fd, stat) = at.probe()?;
    if kind(&stat) == FileType::Directory {
        let real = real_path(&fd).map_err(|reason| at.fail(reason))?;
        return Ok(Target {
            dir: fd,
            dir_real: real.clone(),
            only: None,
            watched: real,
        });
    }
    // A file (or a symlink to one): its real place, located and opened again under the roots.
    let real = real_path(&fd).map_err(|reason| at.fail(reason))?;
    drop(fd);
    let real_at = scope
        .locate("path", &real.to_string_lossy())
        .map_err(|e| at.fail(e.reason))?;
    let entry = real_at.entry().map_err(|e| at.fail(e.reason))?;
    let dir_real = real_path(&entry.dir).map_err(|reason| at.fail(reason))?;
    let watched = dir_real.join(&entry.name);
    if watched != real {
        return Err(at.fail(Reason::Refused(
            "changed while it was being watched; try again".to_owned(),
        )));
    }
    Ok(Target {
        dir: entry.dir,
        dir_real,
        only: Some(entry.name),
        watched,
    })
}

/// The watches of every connection.
#[derive(Debug, Clone, Default)]
pub(crate) struct Watches {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    /// Held while notifications are sent and while a watch is removed, so that nothing for a
    /// watch is sent after `fs/unwatch` answers.
    sending: Mutex<()>,
    /// The kernel watcher, made on first use. Held while kernel watches are added or removed
    /// (the event thread never takes it).
    watcher: Mutex<Option<RecommendedWatcher>>,
    state: Mutex<State>,
    /// Wakes the flusher when changes are pending.
    wake: Notify,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("Watches")
            .field("directories", &state.dirs.len())
            .field("watches", &state.subs.len())
            .finish()
    }
}

#[derive(Default)]
struct State {
    dirs: HashMap<Inode, WatchedDir>,
    /// The `/proc/self/fd/N` path each kernel watch was placed through.
    by_proc: HashMap<PathBuf, Inode>,
    subs: HashMap<Key, Sub>,
    /// Whether the flusher task runs.
    flusher: bool,
}

struct WatchedDir {
    /// Kept open while watched: the kernel watch's path refers to it.
    fd: OwnedFd,
    proc_path: PathBuf,
    real: PathBuf,
    users: usize,
}

struct Sub {
    dir: Inode,
    only: Option<OsString>,
    watched: PathBuf,
    peer: Peer,
    pending: Pending,
}

impl Watches {
    /// Adds the watch `watch_id` of `peer`'s connection on `target`. Blocking (it waits for
    /// the kernel watch). Returns whether the flusher task must be started.
    pub(crate) fn add(
        &self,
        peer: Peer,
        watch_id: String,
        target: Target,
    ) -> Result<bool, HandlerError> {
        let shared = &self.shared;
        let key = (peer.connection_id(), watch_id);
        let mut watcher = lock(&shared.watcher);
        let inode = fstat(&target.dir)
            .map(|stat| (stat.st_dev, stat.st_ino))
            .map_err(|e| HandlerError::internal(format!("fs/watch: {e}")))?;
        let is_new = {
            let state = lock(&shared.state);
            if state.subs.contains_key(&key) {
                return Err(HandlerError::invalid_request(format!(
                    "Invalid request for fs/watch: `watchId` {:?} is already used by a watch of \
                     this connection",
                    key.1
                )));
            }
            let mine = state.subs.keys().filter(|(c, _)| *c == key.0).count();
            if mine >= MAX_PER_CONNECTION {
                return Err(HandlerError::invalid_request(format!(
                    "Invalid request for fs/watch: this connection already has \
                     {MAX_PER_CONNECTION} watches, the limit; end one with fs/unwatch first"
                )));
            }
            if state.subs.len() >= MAX_TOTAL {
                return Err(HandlerError::invalid_request(format!(
                    "Invalid request for fs/watch: the server already holds {MAX_TOTAL} \
                     watches, the limit"
                )));
            }
            !state.dirs.contains_key(&inode)
        };
        let proc_path = PathBuf::from(format!("/proc/self/fd/{}", target.dir.as_raw_fd()));
        if is_new {
            if watcher.is_none() {
                *watcher = Some(new_watcher(Arc::downgrade(shared))?);
            }
            if let Some(watcher) = watcher.as_mut() {
                watcher
                    .watch(&proc_path, RecursiveMode::NonRecursive)
                    .map_err(|e| {
                        HandlerError::internal(format!(
                            "fs/watch: cannot watch {}: {e}",
                            target.dir_real.display()
                        ))
                    })?;
            }
        }
        let mut state = lock(&shared.state);
        let state = &mut *state;
        let dir = state.dirs.entry(inode).or_insert_with(|| WatchedDir {
            fd: target.dir,
            proc_path: proc_path.clone(),
            real: target.dir_real,
            users: 0,
        });
        dir.users += 1;
        if is_new {
            state.by_proc.insert(proc_path, inode);
        }
        state.subs.insert(
            key,
            Sub {
                dir: inode,
                only: target.only,
                watched: target.watched,
                peer,
                pending: Pending::default(),
            },
        );
        Ok(!std::mem::replace(&mut state.flusher, true))
    }

    /// Ends watch `key`; `false` when there is no such watch. Blocking.
    pub(crate) fn remove(&self, connection: ConnectionId, watch_id: &str) -> bool {
        let shared = &self.shared;
        let _sending = lock(&shared.sending);
        let mut watcher = lock(&shared.watcher);
        let gone = {
            let mut state = lock(&shared.state);
            let Some(sub) = state.subs.remove(&(connection, watch_id.to_owned())) else {
                return false;
            };
            let last = state.dirs.get_mut(&sub.dir).is_some_and(|dir| {
                dir.users -= 1;
                dir.users == 0
            });
            if last {
                let dir = state.dirs.remove(&sub.dir);
                if let Some(dir) = &dir {
                    state.by_proc.remove(&dir.proc_path);
                }
                dir
            } else {
                None
            }
        };
        if let Some(dir) = gone {
            if let Some(watcher) = watcher.as_mut() {
                // Already gone when the directory was removed: nothing to do then.
                let _ = watcher.unwatch(&dir.proc_path);
            }
            // Closed only now, so the descriptor number is not reused while watched.
            drop(dir.fd);
        }
        true
    }

    /// Starts the task that sends `fs/changed` and drops the watches of closed connections.
    pub(crate) fn start_flusher(&self) {
        spawn_flusher(self.shared.clone());
    }
}

/// Spawns the flusher of `shared`, supervised. Cleaned up after a panic: a new flusher takes
/// over after a pause (the changes pending stay pending, so none is lost), because without
/// one no watch would ever send `fs/changed` again.
fn spawn_flusher(shared: Arc<Shared>) {
    let again = shared.clone();
    agentwire_support::supervised::spawn("fs/watch flusher", flush(shared), move || {
        agentwire_support::supervised::spawn(
            "fs/watch flusher restart",
            async move {
                tokio::time::sleep(LIVENESS_EVERY).await;
                spawn_flusher(again);
            },
            || {},
        );
    });
}

/// The kernel watcher, whose events land in `shared`.
fn new_watcher(shared: Weak<Shared>) -> Result<RecommendedWatcher, HandlerError> {
    notify::recommended_watcher(move |event: notify::Result<Event>| {
        if let Some(shared) = shared.upgrade() {
            shared.on_event(event);
        }
    })
    .map_err(|e| HandlerError::internal(format!("fs/watch: cannot start watching: {e}")))
}

impl Shared {
    /// Notes what `event` changed in the pending set of every watch it concerns.
    fn on_event(&self, event: notify::Result<Event>) {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                tracing::debug!(%error, "fs/watch: watcher error");
                return;
            }
        };
        if matches!(event.kind, EventKind::Access(_)) {
            return;
        }
        // The directory itself removed or moved (its own entries are reported by name).
        let about_itself = matches!(
            event.kind,
            EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_))
        );
        let mut guard = lock(&self.state);
        let state = &mut *guard;
        if event.need_rescan() {
            state
                .subs
                .values_mut()
                .for_each(|sub| sub.pending.overflow());
        }
        for path in &event.paths {
            let (inode, name) = match state.by_proc.get(path.as_path()) {
                Some(inode) => (*inode, None),
                None => match (
                    path.parent().and_then(|p| state.by_proc.get(p)),
                    path.file_name(),
                ) {
                    (Some(inode), Some(name)) => (*inode, Some(name)),
                    _ => continue,
                },
            };
            if name.is_some_and(|n| n.to_string_lossy().starts_with(TEMP_PREFIX)) {
                continue;
            }
            let Some(real) = state.dirs.get(&inode).map(|dir| dir.real.clone()) else {
                continue;
            };
            for sub in state.subs.values_mut().filter(|sub| sub.dir == inode) {
                match (&sub.only, name) {
                    (None, Some(name)) => sub.pending.add(real.join(name)),
                    (Some(only), Some(name)) if only.as_os_str() == name => {
                        sub.pending.add(sub.watched.clone());
                    }
                    (_, None) if about_itself => sub.pending.add(sub.watched.clone()),
                    _ => {}
                }
            }
        }
        drop(guard);
        self.wake.notify_one();
    }
}

/// Sends what is pending, [`COALESCE`] after being woken, and drops the watches of closed
/// connections; ends when no watch is left.
async fn flush(shared: Arc<Shared>) {
    loop {
        let woken = tokio::select! {
            () = shared.wake.notified() => true,
            () = tokio::time::sleep(LIVENESS_EVERY) => false,
        };
        if woken {
            tokio::time::sleep(COALESCE).await;
        }
        let mut closed = Vec::new();
        {
            let _sending = lock(&shared.sending);
            let mut batches = Vec::new();
            {
                let mut state = lock(&shared.state);
                for (key, sub) in &mut state.subs {
                    if !sub.peer.is_open() {
                        closed.push(key.clone());
                    } else if let Some(paths) = sub.pending.take(&sub.watched) {
                        batches.push((sub.peer.clone(), key.1.clone(), paths));
                    }
                }
            }
            for (peer, watch_id, paths) in batches {
                peer.notify::<FsChanged>(
                    &FsChangedNotification::builder()
                        .watch_id(watch_id)
                        .changed_paths(
                            paths
                                .iter()
                                .map(|p| AbsolutePathBuf(p.to_string_lossy().into_owned()))
                                .collect(),
                        )
                        .build(),
                );
            }
        }
        let watches = Watches {
            shared: shared.clone(),
        };
        for (connection, watch_id) in closed {
            watches.remove(connection, &watch_id);
        }
        let mut state = lock(&shared.state);
        if state.subs.is_empty() {
            state.flusher = false;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use agentwire_runtime::Hub;

    use super::*;
    use crate::fs::roots::{Private, Root};

    impl Watches {
        /// (kernel-watched directories, watches).
        fn counts(&self) -> (usize, usize) {
            let state = lock(&self.shared.state);
            (state.dirs.len(), state.subs.len())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_watches_of_a_closed_connection_are_dropped_with_their_kernel_watch() {
        let dir = std::env::temp_dir().join(format!("agentwire-fs-watch-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).expect("dir");
        std::fs::write(dir.join("file.txt"), "x").expect("file");
        let scope = Scope::new(
            vec![Root::new(&dir, Path::new("/")).expect("root")],
            Private::default(),
        );
        let hub = Arc::new(Hub::new(Duration::from_secs(1)));
        let peer = agentwire_support::test_peer::discarding(&hub);
        let watches = Watches::default();
        let raw = |p: &Path| p.to_str().expect("utf-8").to_owned();
        // A directory and a file in it share one kernel watch; another directory has its own.
        for (id, path) in [
            ("d", dir.clone()),
            ("f", dir.join("file.txt")),
            ("s", dir.join("sub")),
        ] {
            let target = target(&scope, &raw(&path)).expect("target");
            if watches
                .add(peer.clone(), id.to_owned(), target)
                .expect("added")
            {
                watches.start_flusher();
            }
        }
        assert_eq!(watches.counts(), (2, 3));
        assert!(watches.remove(peer.connection_id(), "s"));
        assert!(!watches.remove(peer.connection_id(), "s"));
        assert_eq!(watches.counts(), (1, 2));
        hub.close(peer.connection_id());
        // The flusher notices within a second or so; wait for it (generously) rather than time it.
        for _ in 0..600 {
            if watches.counts() == (0, 0) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(watches.counts(), (0, 0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
