//! `fuzzyFileSearch` and its experimental sessions: paths under a set of roots, ranked against
//! a query.
//!
//! Module map: `listing` (walking a root once and keeping its list), `matching` (scoring
//! and ranking with nucleo), `session` (the streaming sessions).
//!
//! On the wire:
//! - Results are files and directories under the roots, `path` relative to its `root` (which
//!   is echoed as the client sent it), at most `matching::LIMIT` over all roots, best first;
//!   `indices` are the positions (in characters) of `path` that matched. An empty query or an
//!   empty `roots` answers no results.
//! - Every root must be an existing directory (a relative one is taken from the server's
//!   working directory); otherwise the request is refused with -32602 naming `roots[i]`.
//! - `cancellationToken`: a newer `fuzzyFileSearch` on the same connection with the same token
//!   cancels the older one, which then answers at once with no results (not an error). A walk
//!   already started goes on and is kept for the next search.
//! - Sessions belong to the connection that started them and end with it (checked every
//!   second) or with `fuzzyFileSearch/sessionStop`. `sessionStart` starts walking its roots in
//!   the background; each `sessionUpdate` is answered at once and followed by
//!   `fuzzyFileSearch/sessionUpdated` notifications (the whole current result list, again each
//!   time it changes while the roots are still being walked) and then one
//!   `fuzzyFileSearch/sessionCompleted`. A newer query replaces an unfinished older one, which
//!   completes no further. `sessionUpdate` and `sessionStop` with an id this connection has no
//!   session for are refused with -32602 naming `sessionId`; a `sessionStart` with an id in use
//!   replaces that session.
//!
//! Lists are cached per root; see `listing` for when a root is walked again.

mod listing;
mod matching;
mod session;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    FuzzyFileSearch, FuzzyFileSearchSessionStart, FuzzyFileSearchSessionStop,
    FuzzyFileSearchSessionUpdate,
};
use agentwire_protocol::{
    FuzzyFileSearchParams, FuzzyFileSearchResponse, FuzzyFileSearchResult,
    FuzzyFileSearchSessionStartParams, FuzzyFileSearchSessionStartResponse,
    FuzzyFileSearchSessionStopParams, FuzzyFileSearchSessionStopResponse,
    FuzzyFileSearchSessionUpdateParams, FuzzyFileSearchSessionUpdateResponse,
};
use agentwire_runtime::{ConnectionId, HandlerError, RequestContext};
use agentwire_support::lock;
use listing::{Listing, Listings};
use matching::Corpus;
use tokio::sync::Notify;

/// The search state of the engine: the kept root lists, the pending cancellable searches and
/// the open sessions.
#[derive(Debug, Default)]
pub struct Search {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    listings: Listings,
    /// The latest search of each (connection, cancellation token).
    pending: Mutex<HashMap<(ConnectionId, String), Arc<Cancel>>>,
    sessions: Mutex<HashMap<(ConnectionId, String), session::Handle>>,
}

impl Search {
    /// No roots listed, nothing pending.
    pub fn new() -> Self {
        Self::default()
    }
}

/// A root of a request: as the client named it, and where it is.
#[derive(Debug, Clone)]
struct Root {
    given: String,
    canonical: PathBuf,
}

/// Checks and resolves `roots` for `method`: each must be an existing directory. Duplicates
/// (the same directory named twice) are searched once.
fn resolve_roots(method: &str, roots: &[String]) -> Result<Vec<Root>, HandlerError> {
    let mut resolved: Vec<Root> = Vec::with_capacity(roots.len());
    for (i, given) in roots.iter().enumerate() {
        let refuse =
            |why: String| HandlerError::invalid_params(method, format!("roots[{i}]: {why}"));
        if given.is_empty() {
            return Err(refuse("an empty path is not a directory".into()));
        }
        let canonical = Path::new(given)
            .canonicalize()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => refuse(format!("{given} does not exist")),
                _ => refuse(format!("cannot open {given}: {e}")),
            })?;
        if !canonical.is_dir() {
            return Err(refuse(format!("{given} is not a directory")));
        }
        if !resolved.iter().any(|r| r.canonical == canonical) {
            resolved.push(Root {
                given: given.clone(),
                canonical,
            });
        }
    }
    Ok(resolved)
}

/// A flag that cancels a search, and wakes whoever waits on it.
#[derive(Debug, Default)]
struct Cancel {
    flag: AtomicBool,
    notify: Notify,
}

impl Cancel {
    fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
        self.notify.notify_waiters();
    }

    fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    async fn cancelled(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// Forgets a pending search's token when the search ends, however it ends.
struct PendingGuard {
    shared: Arc<Shared>,
    key: Option<(ConnectionId, String)>,
    cancel: Arc<Cancel>,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let mut pending = lock(&self.shared.pending);
            if pending
                .get(&key)
                .is_some_and(|c| Arc::ptr_eq(c, &self.cancel))
            {
                pending.remove(&key);
            }
        }
    }
}

impl Shared {
    /// The current lists of `roots`, started walking if needed (reads the disk: off the async
    /// threads).
    async fn listings(self: &Arc<Self>, roots: &[Root]) -> Result<Vec<Arc<Listing>>, HandlerError> {
        let shared = self.clone();
        let roots: Vec<PathBuf> = roots.iter().map(|r| r.canonical.clone()).collect();
        tokio::task::spawn_blocking(move || {
            roots.iter().map(|root| shared.listings.get(root)).collect()
        })
        .await
        .map_err(|e| HandlerError::internal(format!("file search failed: {e}")))
    }
}

/// Matches `query` against what `listings` hold now (off the async threads); `None` when
/// cancelled.
async fn match_now(
    roots: &[Root],
    listings: &[Arc<Listing>],
    query: String,
    cancel: Arc<Cancel>,
) -> Result<Option<Vec<FuzzyFileSearchResult>>, HandlerError> {
    let corpus = Corpus {
        roots: roots
            .iter()
            .zip(listings)
            .map(|(root, listing)| (root.given.clone(), listing.chunks()))
            .collect(),
    };
    tokio::task::spawn_blocking(move || {
        corpus.search(&query, matching::LIMIT, &|| cancel.is_cancelled())
    })
    .await
    .map_err(|e| HandlerError::internal(format!("file search failed: {e}")))
}

/// Serves `fuzzyFileSearch`.
pub async fn fuzzy_file_search(
    search: &Search,
    context: RequestContext,
    params: FuzzyFileSearchParams,
) -> Result<FuzzyFileSearchResponse, HandlerError> {
    let shared = &search.shared;
    let cancel = Arc::new(Cancel::default());
    let key = params
        .cancellation_token
        .map(|token| (context.peer.connection_id(), token));
    if let Some(key) = &key
        && let Some(older) = lock(&shared.pending).insert(key.clone(), cancel.clone())
    {
        older.cancel();
    }
    let _guard = PendingGuard {
        shared: shared.clone(),
        key,
        cancel: cancel.clone(),
    };
    let roots = resolve_roots(FuzzyFileSearch::NAME, &params.roots)?;
    let none = FuzzyFileSearchResponse::builder().build();
    if params.query.trim().is_empty() || roots.is_empty() {
        return Ok(none);
    }
    let listings = shared.listings(&roots).await?;
    for listing in &listings {
        tokio::select! {
            () = listing.finished() => {}
            () = cancel.cancelled() => return Ok(none),
        }
    }
    let files = match_now(&roots, &listings, params.query, cancel).await?;
    Ok(files.map_or(none, |files| {
        FuzzyFileSearchResponse::builder().files(files).build()
    }))
}

/// Serves `fuzzyFileSearch/sessionStart`.
pub async fn session_start(
    search: &Search,
    context: RequestContext,
    params: FuzzyFileSearchSessionStartParams,
) -> Result<FuzzyFileSearchSessionStartResponse, HandlerError> {
    let roots = resolve_roots(FuzzyFileSearchSessionStart::NAME, &params.roots)?;
    let shared = &search.shared;
    // Start walking now, so that the first query finds the lists (nearly) ready.
    shared.listings(&roots).await?;
    session::start(shared, context.peer, params.session_id, roots);
    Ok(FuzzyFileSearchSessionStartResponse::builder().build())
}

/// The refusal for a session id this connection has no session for.
fn unknown_session(method: &str, id: &str) -> HandlerError {
    HandlerError::invalid_params(
        method,
        format!("sessionId: no search session {id:?} is open on this connection"),
    )
}

/// Serves `fuzzyFileSearch/sessionUpdate`.
pub async fn session_update(
    search: &Search,
    context: RequestContext,
    params: FuzzyFileSearchSessionUpdateParams,
) -> Result<FuzzyFileSearchSessionUpdateResponse, HandlerError> {
    let key = (context.peer.connection_id(), params.session_id);
    let Some(queries) = lock(&search.shared.sessions)
        .get(&key)
        .map(session::Handle::queries)
    else {
        return Err(unknown_session(FuzzyFileSearchSessionUpdate::NAME, &key.1));
    };
    let query = params.query;
    // The results follow the answer.
    context.after_response(move || {
        queries.send_replace(Some(query));
    });
    Ok(FuzzyFileSearchSessionUpdateResponse::builder().build())
}

/// Serves `fuzzyFileSearch/sessionStop`.
pub async fn session_stop(
    search: &Search,
    context: RequestContext,
    params: FuzzyFileSearchSessionStopParams,
) -> Result<FuzzyFileSearchSessionStopResponse, HandlerError> {
    let key = (context.peer.connection_id(), params.session_id);
    let removed = lock(&search.shared.sessions).remove(&key);
    match removed {
        Some(handle) => {
            drop(handle);
            Ok(FuzzyFileSearchSessionStopResponse::builder().build())
        }
        None => Err(unknown_session(FuzzyFileSearchSessionStop::NAME, &key.1)),
    }
}
