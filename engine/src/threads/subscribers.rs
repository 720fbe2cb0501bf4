//! Which connections follow a thread: those that started, resumed or forked it, or started a
//! turn on it. A turn's notifications go to every one of them, so a second client that resumes
//! a running thread sees its progress. Closed connections are dropped as they are found.
//!
//! When other servers share the store, a thread's followers may be connected to any of them:
//! what a turn here sends its followers is also published through the store's [`Relay`], and
//! what the others publish is handed to the followers here ([`Subscribers::deliver`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agentwire_protocol::method::{Notification, Request};
use agentwire_runtime::Peer;
use agentwire_runtime::outbound::notification_message;
use tokio::sync::Notify;

use super::asks::{Asks, RemoteAsk};
use super::elsewhere::Elsewhere;
use super::store::{Relay, Relayed};

/// The followers of every thread.
#[derive(Default)]
pub(crate) struct Subscribers {
    by_thread: Mutex<HashMap<String, Vec<Peer>>>,
    /// Bumped on every change, so that a running turn refreshes its copy only when needed.
    version: AtomicU64,
    /// Signalled once a connection that joined a thread (`thread/resume`) has its answer, so
    /// that a pending approval request is sent to it too.
    joined: Arc<Notify>,
    /// The followers on other servers, when the store is shared.
    pub(crate) elsewhere: Elsewhere,
    /// Server requests to the followers on other servers, and theirs to the followers here.
    asks: Asks,
}

/// The followers of one thread, as a turn sends them its notifications: the connections here
/// and, through the relay, those on the other servers of a shared store.
#[derive(Debug, Clone, Default)]
pub(crate) struct Audience {
    thread_id: Arc<str>,
    peers: Vec<Peer>,
    relay: Option<Arc<dyn Relay>>,
}

impl Audience {
    /// Sends the notification `M` to every follower, here and elsewhere.
    pub(crate) fn notify<M: Notification>(&self, params: &M::Params) {
        for peer in &self.peers {
            peer.notify::<M>(params);
        }
        if let Some(relay) = &self.relay {
            relay.publish(
                &self.thread_id,
                M::NAME,
                notification_message(M::NAME, params),
            );
        }
    }
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
        self.asks.note_runtime();
        let peers = by_thread.entry(thread_id.to_owned()).or_default();
        peers.retain(Peer::is_open);
        let first = peers.is_empty();
        if !peers
            .iter()
            .any(|p| p.connection_id() == peer.connection_id())
        {
            peers.push(peer.clone());
        }
        if first {
            self.elsewhere.announce(thread_id, true);
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

    /// The followers of `thread_id`, here and elsewhere.
    pub(crate) fn audience(&self, thread_id: &str) -> Audience {
        Audience {
            thread_id: thread_id.into(),
            peers: self.of(thread_id),
            relay: self.elsewhere.relay_for(thread_id),
        }
    }

    /// Publishes the notification `M` of `thread_id` to its followers on other servers only
    /// (one sent here to every connection already, such as `thread/status/changed`).
    pub(crate) fn publish<M: Notification>(&self, thread_id: &str, params: &M::Params) {
        if let Some(relay) = self.elsewhere.relay_for(thread_id) {
            relay.publish(thread_id, M::NAME, notification_message(M::NAME, params));
        }
    }

    /// Asks the followers of `thread_id` on other servers the server request `M`, if any
    /// follow it there (see [`super::asks`]).
    pub(crate) fn ask_elsewhere<M: Request>(
        &self,
        thread_id: &str,
        params: &M::Params,
    ) -> Option<RemoteAsk> {
        let relay = self.elsewhere.relay_for(thread_id)?;
        let params = serde_json::to_vec(params).ok()?;
        Some(self.asks.ask(relay, thread_id, M::NAME, params))
    }

    /// Passes `turn/steer` with `params` to the server running the turn of its thread and
    /// waits (at most `patience`) for its answer: the response, or why there is none. `None`
    /// when there is no other server to pass it to.
    pub(crate) async fn steer_elsewhere(
        &self,
        params: &agentwire_protocol::TurnSteerParams,
        patience: std::time::Duration,
    ) -> Option<Result<serde_json::Value, String>> {
        let relay = Arc::clone(self.elsewhere.relay()?);
        let encoded = serde_json::to_vec(params).ok()?;
        let mut ask = self.asks.steer(relay, &params.thread_id, encoded);
        Some(match tokio::time::timeout(patience, ask.next()).await {
            Ok(Some(answer)) => answer,
            Ok(None) | Err(_) => Err(format!(
                "the server running turn {} did not answer in time",
                params.expected_turn_id
            )),
        })
    }

    /// Asks the server running turn `turn_id` of `thread_id` to interrupt it; whether there is
    /// another server to ask (the store is shared).
    pub(crate) fn relay_interrupt(&self, thread_id: &str, turn_id: &str) -> bool {
        let Some(relay) = self.elsewhere.relay() else {
            return false;
        };
        relay.interrupt(thread_id, turn_id);
        true
    }

    /// Acts on what another server relayed about `thread_id`.
    pub(crate) fn deliver(&self, thread_id: &str, relayed: Relayed) {
        match relayed {
            Relayed::Notification { method, message } => {
                for peer in self.of(thread_id) {
                    peer.notify_encoded(method, message.clone());
                }
            }
            Relayed::Interrupt { turn_id } => self.elsewhere.interrupt(thread_id, &turn_id),
            Relayed::Following { origin, following } => {
                if self.elsewhere.heard(thread_id, origin, following) {
                    // Running turns pick the change up with their next notification.
                    self.version.fetch_add(1, Ordering::Release);
                }
            }
            Relayed::Ask {
                ask,
                method,
                params,
            } => {
                if let Some(relay) = self.elsewhere.relay() {
                    let peers = self.of(thread_id);
                    self.asks
                        .put(Arc::clone(relay), thread_id, (ask, method, params), peers);
                }
            }
            Relayed::Answer { ask, answer } => self.asks.answered(&ask, answer),
            Relayed::Withdraw { ask } => self.asks.withdraw(&ask),
            Relayed::Steer { ask, params } => {
                if let Some(relay) = self.elsewhere.relay() {
                    relay.answer(thread_id, &ask, self.elsewhere.steer(&params));
                }
            }
            Relayed::Joined => {
                // What is followed here now, said again (and what no open connection follows
                // any more, said gone).
                let followed: Vec<(String, bool)> = self
                    .by_thread
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter_mut()
                    .map(|(thread_id, peers)| {
                        peers.retain(Peer::is_open);
                        (thread_id.clone(), !peers.is_empty())
                    })
                    .collect();
                for (thread_id, following) in followed {
                    self.elsewhere.announce(&thread_id, following);
                }
            }
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
            self.elsewhere.announce(thread_id, false);
        }
        self.version.fetch_add(1, Ordering::Release);
        was.then_some(left)
    }

    /// Drops every follower of `thread_id` (the thread is gone).
    pub(crate) fn forget(&self, thread_id: &str) {
        let had = self
            .by_thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(thread_id);
        if had.is_some() {
            self.elsewhere.announce(thread_id, false);
        }
        self.version.fetch_add(1, Ordering::Release);
    }

    /// The current version: it changes whenever a connection subscribes.
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }
}
