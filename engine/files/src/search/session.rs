//! Search sessions: one task per session that answers each new query with
//! `fuzzyFileSearch/sessionUpdated` notifications and then `fuzzyFileSearch/sessionCompleted`.
//!
//! While a root is still being walked, the task matches what has been found so far every
//! [`UPDATE_EVERY`] and sends the list again whenever it changed; once every root is walked it
//! matches the whole lists, sends them if they changed (always at least once per query) and
//! completes. A query that arrives meanwhile replaces the one being served.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agentwire_protocol::methods::{FuzzyFileSearchSessionCompleted, FuzzyFileSearchSessionUpdated};
use agentwire_protocol::{
    FuzzyFileSearchResult, FuzzyFileSearchSessionCompletedNotification,
    FuzzyFileSearchSessionUpdatedNotification,
};
use agentwire_runtime::{ConnectionId, Peer};
use tokio::sync::watch;

use super::{Cancel, Root, Shared, lock, match_now};

/// How often partial results are matched again while roots are being walked.
const UPDATE_EVERY: Duration = Duration::from_millis(100);
/// How often an idle session checks that its connection is still open.
const LIVENESS_EVERY: Duration = Duration::from_secs(1);

/// Tells sessions apart when one replaces another under the same id.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// An open session, as kept in the session table. Dropping it ends the session.
#[derive(Debug)]
pub(super) struct Handle {
    queries: watch::Sender<Option<String>>,
    generation: u64,
    task: tokio::task::AbortHandle,
}

impl Handle {
    /// Where the session's new queries go.
    pub(super) fn queries(&self) -> watch::Sender<Option<String>> {
        self.queries.clone()
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Opens session `id` of `peer`'s connection over `roots` (replacing one with the same id).
pub(super) fn start(shared: &Arc<Shared>, peer: Peer, id: String, roots: Vec<Root>) {
    let generation = GENERATION.fetch_add(1, Ordering::Relaxed);
    let (queries, receiver) = watch::channel(None);
    let key = (peer.connection_id(), id.clone());
    let session = Session {
        shared: shared.clone(),
        key: key.clone(),
        generation,
        peer,
        roots,
        queries: receiver,
    };
    // Cleaned up after a panic: the session is forgotten (as when its connection closes), so
    // its id can be opened again; the client's pending query gets no more results.
    let cleanup = {
        let (shared, key) = (shared.clone(), key.clone());
        move || forget(&shared, &key, generation)
    };
    let Some(task) =
        agentwire_support::supervised::spawn("fuzzy search session", session.run(), cleanup)
    else {
        return;
    };
    let task = task.abort_handle();
    let replaced = lock(&shared.sessions).insert(
        key,
        Handle {
            queries,
            generation,
            task,
        },
    );
    drop(replaced);
}

struct Session {
    shared: Arc<Shared>,
    key: (ConnectionId, String),
    generation: u64,
    peer: Peer,
    roots: Vec<Root>,
    queries: watch::Receiver<Option<String>>,
}

impl Session {
    async fn run(mut self) {
        let mut liveness = tokio::time::interval(LIVENESS_EVERY);
        let mut newer = false;
        loop {
            if !newer {
                tokio::select! {
                    changed = self.queries.changed() => if changed.is_err() { return },
                    _ = liveness.tick() => {
                        if !self.peer.is_open() {
                            self.close();
                            return;
                        }
                        continue;
                    }
                }
            }
            let Some(query) = self.queries.borrow_and_update().clone() else {
                newer = false;
                continue;
            };
            newer = self.serve(query).await;
        }
    }

    /// Forgets this session (if it is still the one under its id).
    fn close(&self) {
        forget(&self.shared, &self.key, self.generation);
    }

    /// Answers `query`; returns `true` when a newer query arrived before it was complete.
    async fn serve(&mut self, query: String) -> bool {
        let session_id = self.key.1.clone();
        if query.trim().is_empty() {
            self.send(&query, Vec::new());
            self.complete();
            return false;
        }
        let Ok(listings) = self.shared.listings(&self.roots).await else {
            self.complete();
            return false;
        };
        let mut last: Option<Vec<FuzzyFileSearchResult>> = None;
        loop {
            // Read before the lists: a walk marked done has published everything.
            let done = listings.iter().all(|l| l.progress().done);
            let cancel = Arc::new(Cancel::default());
            let files = match match_now(&self.roots, &listings, query.clone(), cancel).await {
                Ok(Some(files)) => files,
                Ok(None) | Err(_) => Vec::new(),
            };
            if self.queries.has_changed().unwrap_or(false) {
                return true;
            }
            if last.as_ref() != Some(&files) {
                self.send(&query, files.clone());
                last = Some(files);
            }
            if done {
                self.complete();
                tracing::debug!(session = session_id, "search session query complete");
                return false;
            }
            tokio::select! {
                () = tokio::time::sleep(UPDATE_EVERY) => {}
                changed = self.queries.changed() => {
                    return changed.is_ok();
                }
            }
        }
    }

    fn send(&self, query: &str, files: Vec<FuzzyFileSearchResult>) {
        self.peer.notify::<FuzzyFileSearchSessionUpdated>(
            &FuzzyFileSearchSessionUpdatedNotification::builder()
                .session_id(self.key.1.clone())
                .query(query.to_owned())
                .files(files)
                .build(),
        );
    }

    fn complete(&self) {
        self.peer.notify::<FuzzyFileSearchSessionCompleted>(
            &FuzzyFileSearchSessionCompletedNotification::builder()
                .session_id(self.key.1.clone())
                .build(),
        );
    }
}

/// Forgets session `key` of `shared` if it is still the one of `generation`. Dropping its
/// handle aborts its task (which is returning anyway when it forgets itself).
fn forget(shared: &Shared, key: &(ConnectionId, String), generation: u64) {
    let mut sessions = lock(&shared.sessions);
    if sessions
        .get(key)
        .is_some_and(|h| h.generation == generation)
    {
        sessions.remove(key);
    }
}
