//! The requests that search stored threads, and their cancellation: `thread/search`,
//! `thread/search/stream` (with `thread/search/partial` notifications to the connection that
//! asked), `thread/search/cancel`, `thread/search/stream/cancel` and
//! `thread/searchOccurrences`. The searching itself is [`crate::threads::search`]; this module
//! keeps the searches in flight, by connection and request id, so that a cancel can stop them.
//!
//! A cancel names a request of its own connection and of its own kind (`thread/search/cancel`
//! only stops a `thread/search`, `…/stream/cancel` only a `thread/search/stream`). It is always
//! acknowledged with `{}`; a search it stops answers with error [`CANCELLED`] (no
//! `thread/search/partial` follows). A search that ends before the cancel arrives answers as
//! usual, and a cancel of an unknown or finished request changes nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    ThreadSearch, ThreadSearchOccurrences, ThreadSearchPartial, ThreadSearchStream,
};
use agentwire_protocol::{
    RequestId, ThreadSearchCancelParams, ThreadSearchCancelResponse, ThreadSearchOccurrencesParams,
    ThreadSearchOccurrencesResponse, ThreadSearchParams, ThreadSearchPartialNotification,
    ThreadSearchResponse,
};
use agentwire_runtime::{ConnectionId, HandlerError, RequestContext};
use agentwire_support::lock;

use crate::pool::stored;
use crate::threads::Threads;

/// The error code of a search stopped by a cancel (the code LSP gives a cancelled request).
pub(crate) const CANCELLED: i64 = -32800;

/// Which search request a cancel may stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// `thread/search`.
    Plain,
    /// `thread/search/stream`.
    Stream,
}

/// The searches in flight.
#[derive(Debug, Default)]
pub(crate) struct Searches {
    running: Mutex<HashMap<(ConnectionId, Kind, RequestId), Arc<AtomicBool>>>,
}

impl Searches {
    fn lock(&self) -> MutexGuard<'_, HashMap<(ConnectionId, Kind, RequestId), Arc<AtomicBool>>> {
        lock(&self.running)
    }
}

/// Takes a search out of [`Searches`] however its request ends.
struct Registered<'a> {
    searches: &'a Searches,
    key: (ConnectionId, Kind, RequestId),
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.searches.lock().remove(&self.key);
    }
}

/// `thread/search` (`Kind::Plain`) or `thread/search/stream` (`Kind::Stream`).
pub(crate) async fn search(
    threads: &Arc<Threads>,
    searches: &Searches,
    context: RequestContext,
    params: ThreadSearchParams,
    kind: Kind,
) -> Result<ThreadSearchResponse, HandlerError> {
    let key = (
        context.peer.connection_id(),
        kind,
        context.request_id.clone(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    searches.lock().insert(key.clone(), Arc::clone(&stop));
    let _registered = Registered { searches, key };
    let peer = context.peer.clone();
    let request_id = context.request_id.clone();
    let work = move |threads: &Threads| {
        let cancelled = || stop.load(Ordering::Acquire);
        let mut partial = |data| {
            if kind == Kind::Stream {
                peer.notify::<ThreadSearchPartial>(
                    &ThreadSearchPartialNotification::builder()
                        .data(data)
                        .request_id(request_id.clone())
                        .build(),
                );
            }
        };
        threads.search(params, &cancelled, &mut partial)
    };
    let (found, method) = match kind {
        Kind::Plain => (
            stored::<ThreadSearch, _, _>(threads.clone(), work).await?,
            ThreadSearch::NAME,
        ),
        Kind::Stream => (
            stored::<ThreadSearchStream, _, _>(threads.clone(), work).await?,
            ThreadSearchStream::NAME,
        ),
    };
    found.ok_or_else(|| {
        HandlerError::new(
            CANCELLED,
            format!("{method}: request {} was cancelled", context.request_id),
        )
    })
}

/// `thread/search/cancel` (`Kind::Plain`) or `thread/search/stream/cancel` (`Kind::Stream`).
pub(crate) fn cancel(
    searches: &Searches,
    context: &RequestContext,
    params: ThreadSearchCancelParams,
    kind: Kind,
) -> ThreadSearchCancelResponse {
    let key = (context.peer.connection_id(), kind, params.request_id);
    if let Some(stop) = searches.lock().get(&key) {
        stop.store(true, Ordering::Release);
    }
    ThreadSearchCancelResponse::builder().build()
}

/// `thread/searchOccurrences`.
pub(crate) async fn occurrences(
    threads: &Arc<Threads>,
    params: ThreadSearchOccurrencesParams,
) -> Result<ThreadSearchOccurrencesResponse, HandlerError> {
    stored::<ThreadSearchOccurrences, _, _>(threads.clone(), move |t| t.search_occurrences(params))
        .await
}
