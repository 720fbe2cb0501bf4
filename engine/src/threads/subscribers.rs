//! Which connections follow a thread: those that started, resumed or forked it, or started a
//! turn on it. A turn's notifications go to every one of them, so a second client that resumes
//! a running thread sees its progress. A connection that closes is dropped from every thread at
//! once ([`Subscribers::closed`]).
//!
//! When other servers share the store, a thread's followers may be connected to any of them:
//! what a turn here sends its followers is also published through the store's [`Relay`], and
//! what the others publish is handed to the followers here ([`Subscribers::deliver`]). A
//! connection that resumes a thread whose turn runs elsewhere catches up with it first (see
//! [`super::catch_up`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agentwire_protocol::method::{Notification, Request};
use agentwire_runtime::notification_message;
use agentwire_runtime::{ConnectionId, Peer};
use agentwire_store::{Relay, Relayed};
use agentwire_support::lock;
use tokio::sync::Notify;

use super::asks::{Asks, RemoteAsk};
use super::catch_up::{CatchUps, Deferred, Known, PATIENCE};
use super::elsewhere::Elsewhere;

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
    /// The connections catching up with turns that run elsewhere. Taken before `by_thread`
    /// when both are.
    catch_ups: Mutex<CatchUps>,
}

/// A connection catching up with the turn of a thread that runs on another server (see
/// [`super::catch_up`]); forgotten if dropped before [`CatchingUp::finish`].
#[derive(Debug)]
pub(crate) struct CatchingUp {
    subscribers: Arc<Subscribers>,
    thread_id: String,
    peer: Peer,
    /// Hears the answer of the server running the turn, when it was asked.
    answered: Option<std::sync::mpsc::Receiver<()>>,
    finished: bool,
}

impl CatchingUp {
    /// Blocks until the server running the turn publishes it to this one (at most
    /// [`PATIENCE`]); the thread is to be read after this.
    pub(crate) fn wait(&mut self) {
        if let Some(answered) = self.answered.take()
            && answered.recv_timeout(PATIENCE).is_err()
        {
            tracing::debug!(
                thread_id = self.thread_id.as_str(),
                "no server said it runs the thread's turn; reading it as it is"
            );
        }
    }

    /// The connection has its answer, built from a read holding `known`: it follows the thread
    /// from here, getting first what was relayed since it was registered, less what it read.
    pub(crate) fn finish(mut self, known: Known) {
        self.finished = true;
        self.subscribers
            .caught_up(&self.thread_id, &self.peer, known);
    }
}

impl Drop for CatchingUp {
    fn drop(&mut self) {
        if !self.finished {
            self.subscribers.abandon(&self.thread_id, &self.peer);
        }
    }
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
        let threads = lock(&self.by_thread).len();
        f.debug_struct("Subscribers")
            .field("threads", &threads)
            .finish()
    }
}

impl Subscribers {
    /// Makes `peer`'s connection follow `thread_id` (once).
    pub(crate) fn subscribe(&self, thread_id: &str, peer: &Peer) {
        let mut by_thread = lock(&self.by_thread);
        self.asks.note_runtime();
        // Checked under the lock that `closed` takes after the connection is gone: a closed
        // connection is either refused here or found there.
        if !peer.is_open() {
            return;
        }
        let peers = by_thread.entry(thread_id.to_owned()).or_default();
        // Followed here means followed by an open connection, as for `of`, `abandon` and
        // `@joined`: a closed one still listed does not count.
        let first = !peers.iter().any(Peer::is_open);
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
        let by_thread = lock(&self.by_thread);
        // A closed connection stays listed until `closed` takes it out (and says whether the
        // thread is still followed here); it is left out here.
        match by_thread.get(thread_id) {
            Some(peers) => peers.iter().filter(|p| p.is_open()).cloned().collect(),
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

    /// Starts `peer`'s connection catching up with `thread_id`, whose turn runs on another
    /// server: what is relayed for the thread is kept for it from now on and, unless the thread
    /// is followed here already, the server running the turn is asked to say when it publishes
    /// it here (see [`super::catch_up`]).
    pub(crate) fn catch_up(self: &Arc<Self>, thread_id: &str, peer: &Peer) -> CatchingUp {
        self.asks.note_runtime();
        let relay = self.elsewhere.relay().cloned();
        let mut catch_ups = lock(&self.catch_ups);
        let followed = !self.of(thread_id).is_empty();
        let ask = (relay.is_some() && !followed).then(agentwire_store::meta::new_id);
        let answered = catch_ups.register(thread_id, peer, ask.clone());
        drop(catch_ups);
        if let (Some(relay), Some(ask)) = (relay, ask) {
            relay.join(thread_id, &ask);
        }
        CatchingUp {
            subscribers: Arc::clone(self),
            thread_id: thread_id.to_owned(),
            peer: peer.clone(),
            answered,
            finished: false,
        }
    }

    /// `peer`'s connection read `known` of `thread_id` and has its answer: it follows the
    /// thread, and gets what was kept for it (see [`CatchingUp::finish`]).
    fn caught_up(&self, thread_id: &str, peer: &Peer, known: Known) {
        let mut catch_ups = lock(&self.catch_ups);
        // Not caught up when the connection stopped following the thread meanwhile.
        let Some(kept) = catch_ups.caught_up(thread_id, peer, known) else {
            return;
        };
        self.subscribe(thread_id, peer);
        for (method, message) in kept {
            peer.notify_encoded(method, message);
        }
        let deferred = catch_ups.settle(thread_id, true);
        drop(catch_ups);
        // A request the turn is waiting on is put to this connection too.
        self.joined.notify_waiters();
        self.put_deferred(thread_id, deferred);
    }

    /// Puts the requests of other servers that waited for connections catching up with
    /// `thread_id` to its followers here, or refuses them when there are none.
    fn put_deferred(&self, thread_id: &str, deferred: Vec<Deferred>) {
        let Some(relay) = self.elsewhere.relay() else {
            return;
        };
        for request in deferred {
            self.asks
                .put(Arc::clone(relay), thread_id, request, self.of(thread_id));
        }
    }

    /// `peer`'s connection stopped catching up with `thread_id` before it followed it.
    fn abandon(&self, thread_id: &str, peer: &Peer) {
        let mut catch_ups = lock(&self.catch_ups);
        let others = catch_ups.forget(thread_id, peer.connection_id());
        let deferred = catch_ups.settle(thread_id, false);
        if !others && self.of(thread_id).is_empty() {
            self.elsewhere.announce(thread_id, false);
        }
        drop(catch_ups);
        self.put_deferred(thread_id, deferred);
    }

    /// Acts on what another server relayed about `thread_id`.
    pub(crate) fn deliver(&self, thread_id: &str, relayed: Relayed) {
        match relayed {
            Relayed::Notification { method, message } => {
                let mut catch_ups = lock(&self.catch_ups);
                let skip = catch_ups.take(thread_id, method, &message);
                // Connections that closed while catching up are forgotten by `take`.
                let deferred = catch_ups.settle(thread_id, false);
                for peer in self.of(thread_id) {
                    if !skip.contains(&peer.connection_id()) {
                        peer.notify_encoded(method, message.clone());
                    }
                }
                drop(catch_ups);
                self.put_deferred(thread_id, deferred);
            }
            Relayed::Interrupt { turn_id } => self.elsewhere.interrupt(thread_id, &turn_id),
            Relayed::Gone { origin } => {
                if self.elsewhere.gone(&origin) {
                    self.version.fetch_add(1, Ordering::Release);
                }
            }
            Relayed::Resyncing { origin } => self.elsewhere.resyncing(&origin),
            Relayed::Resynced { origin } => {
                if self.elsewhere.resynced(&origin) {
                    self.version.fetch_add(1, Ordering::Release);
                }
            }
            Relayed::Following { origin, following } => {
                if self.elsewhere.heard(thread_id, origin, following) {
                    // Running turns pick the change up with their next notification.
                    self.version.fetch_add(1, Ordering::Release);
                }
            }
            Relayed::Join { origin, ask } => {
                if self.elsewhere.heard(thread_id, origin, true) {
                    self.version.fetch_add(1, Ordering::Release);
                }
                // Published after the change above, so after every notification that missed
                // it: what those said is durable by now.
                if self.elsewhere.runs_here(thread_id)
                    && let Some(relay) = self.elsewhere.relay()
                {
                    relay.answer(thread_id, &ask, Ok(serde_json::Value::Null));
                }
            }
            Relayed::Ask {
                ask,
                method,
                params,
            } => {
                if let Some(relay) = self.elsewhere.relay() {
                    let mut catch_ups = lock(&self.catch_ups);
                    let peers = self.of(thread_id);
                    let request = (ask, method, params);
                    // Asked again as soon as the server running the turn hears of a connection
                    // here, which is still catching up: put to it once it follows.
                    let request = if peers.is_empty() {
                        catch_ups.defer(thread_id, request)
                    } else {
                        Err(request)
                    };
                    drop(catch_ups);
                    if let Err(request) = request {
                        self.asks.put(Arc::clone(relay), thread_id, request, peers);
                    }
                }
            }
            Relayed::Answer { ask, answer } => {
                if !lock(&self.catch_ups).answered(thread_id, &ask) {
                    self.asks.answered(&ask, answer);
                }
            }
            Relayed::Withdraw { ask } => {
                lock(&self.catch_ups).withdraw(thread_id, &ask);
                self.asks.withdraw(&ask);
            }
            Relayed::Steer { ask, params } => {
                if let Some(relay) = self.elsewhere.relay() {
                    relay.answer(thread_id, &ask, self.elsewhere.steer(&params));
                }
            }
            Relayed::Joined => {
                // What is followed here now, said again (and what no open connection follows
                // any more, said gone); a thread being caught up with is followed.
                let catch_ups = lock(&self.catch_ups);
                let mut followed: HashMap<String, bool> = lock(&self.by_thread)
                    .iter()
                    .map(|(thread_id, peers)| (thread_id.clone(), peers.iter().any(Peer::is_open)))
                    .collect();
                for thread_id in catch_ups.threads() {
                    followed.insert(thread_id.to_owned(), true);
                }
                drop(catch_ups);
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

    /// `peer`'s connection joined `thread_id` (`thread/resume`) and has its answer: the
    /// requests the thread's turn waits on are put to it too, the turn's own (if it runs here)
    /// and those another server is putting to the followers here.
    pub(crate) fn joined(&self, thread_id: &str, peer: &Peer) {
        self.joined.notify_waiters();
        self.asks.joined(thread_id, peer);
    }

    /// Stops `peer`'s connection following `thread_id`: how many open connections still
    /// follow it, or `None` when `peer`'s did not.
    pub(crate) fn unsubscribe(&self, thread_id: &str, peer: &Peer) -> Option<usize> {
        self.unsubscribe_connection(thread_id, peer.connection_id())
    }

    /// Connection `connection` closed: it follows no thread and catches up with none from now
    /// on. A thread it was the last follower of here stops being followed at once, so another
    /// server running its turns stops publishing them. Connections are taken out only here
    /// (or by `thread/unsubscribe`), never on the way, so that none is missed.
    pub(crate) fn closed(&self, connection: ConnectionId) {
        let threads: BTreeSet<String> = {
            let catch_ups = lock(&self.catch_ups);
            let by_thread = lock(&self.by_thread);
            let following = by_thread
                .iter()
                .filter(|(_, peers)| peers.iter().any(|p| p.connection_id() == connection))
                .map(|(thread_id, _)| thread_id.clone());
            let catching_up = catch_ups
                .threads()
                .filter(|thread_id| catch_ups.holds(thread_id, connection))
                .map(str::to_owned);
            following.chain(catching_up).collect()
        };
        for thread_id in threads {
            self.unsubscribe_connection(&thread_id, connection);
        }
    }

    /// See [`Subscribers::unsubscribe`].
    fn unsubscribe_connection(&self, thread_id: &str, connection: ConnectionId) -> Option<usize> {
        let mut catch_ups = lock(&self.catch_ups);
        // A connection still catching up follows the thread as far as its client knows.
        let catching_up = catch_ups.holds(thread_id, connection);
        let others_catching_up = catch_ups.forget(thread_id, connection);
        let deferred = catch_ups.settle(thread_id, false);
        let mut by_thread = lock(&self.by_thread);
        // Closed connections stay listed until their own turn here, but do not follow: the
        // thread stops being followed once no open connection does.
        let (was, listed, left) = match by_thread.get_mut(thread_id) {
            Some(peers) => {
                let before = peers.len();
                peers.retain(|p| p.connection_id() != connection);
                let open = peers.iter().filter(|p| p.is_open()).count();
                (peers.len() < before, peers.len(), open)
            }
            None => (false, 0, 0),
        };
        let was = was || catching_up;
        if was && listed == 0 {
            by_thread.remove(thread_id);
        }
        if was && left == 0 && !others_catching_up {
            self.elsewhere.announce(thread_id, false);
        }
        drop(by_thread);
        drop(catch_ups);
        self.put_deferred(thread_id, deferred);
        self.version.fetch_add(1, Ordering::Release);
        was.then_some(left)
    }

    /// Drops every follower of `thread_id` (the thread is gone).
    pub(crate) fn forget(&self, thread_id: &str) {
        let mut catch_ups = lock(&self.catch_ups);
        let deferred = catch_ups.forget_thread(thread_id);
        let had = lock(&self.by_thread).remove(thread_id);
        drop(catch_ups);
        self.put_deferred(thread_id, deferred);
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
