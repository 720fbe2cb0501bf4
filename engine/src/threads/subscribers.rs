//! Which connections follow a thread: those that started, resumed or forked it, or started a
//! turn on it. A turn's notifications go to every one of them, so a second client that resumes
//! a running thread sees its progress. Closed connections are dropped as they are found.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agentwire_runtime::Peer;
use tokio::sync::Notify;

/// The followers of every thread.
#[derive(Default)]
pub(crate) struct Subscribers {
    by_thread: Mutex<HashMap<String, Vec<Peer>>>,
    /// Bumped on every change, so that a running turn refreshes its copy only when needed.
    version: AtomicU64,
    /// Signalled once a connection that joined a thread (`thread/resume`) has its answer, so
    /// that a pending approval request is sent to it too.
    joined: Arc<Notify>,
}

impl std::fmt::Debug for Subscribers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let threads = self
            .by_thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("Subscribers")
            .field("threads", &threads)
            .finish()
    }
}

impl Subscribers {
    /// Makes `peer`'s connection follow `thread_id` (once).
    pub(crate) fn subscribe(&self, thread_id: &str, peer: &Peer) {
        let mut by_thread = self
            .by_thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let peers = by_thread.entry(thread_id.to_owned()).or_default();
        peers.retain(Peer::is_open);
        if !peers
            .iter()
            .any(|p| p.connection_id() == peer.connection_id())
        {
            peers.push(peer.clone());
        }
        self.version.fetch_add(1, Ordering::Release);
    }

    /// The open connections following `thread_id`.
    pub(crate) fn of(&self, thread_id: &str) -> Vec<Peer> {
        let mut by_thread = self
            .by_thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match by_thread.get_mut(thread_id) {
            Some(peers) => {
                peers.retain(Peer::is_open);
                peers.clone()
            }
            None => Vec::new(),
        }
    }

    /// The signal that a connection joined a thread and got its answer (see
    /// [`Subscribers::joined`]).
    pub(crate) fn join_signal(&self) -> Arc<Notify> {
        self.joined.clone()
    }

    /// Stops `peer`'s connection following `thread_id`: how many open connections still
    /// follow it, or `None` when `peer`'s did not.
    pub(crate) fn unsubscribe(&self, thread_id: &str, peer: &Peer) -> Option<usize> {
        let mut by_thread = self
            .by_thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let peers = by_thread.get_mut(thread_id)?;
        peers.retain(Peer::is_open);
        let before = peers.len();
        peers.retain(|p| p.connection_id() != peer.connection_id());
        let (was, left) = (peers.len() < before, peers.len());
        if left == 0 {
            by_thread.remove(thread_id);
        }
        self.version.fetch_add(1, Ordering::Release);
        was.then_some(left)
    }

    /// Drops every follower of `thread_id` (the thread is gone).
    pub(crate) fn forget(&self, thread_id: &str) {
        self.by_thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(thread_id);
        self.version.fetch_add(1, Ordering::Release);
    }

    /// The current version: it changes whenever a connection subscribes.
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }
}
