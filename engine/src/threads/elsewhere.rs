//! The followers of threads on the other servers of a shared store, as far as this server
//! knows them: which threads another server has followers of (so a turn here publishes its
//! notifications only then), the relay they are published through, and what a relayed
//! `turn/interrupt` does here.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::value::RawValue;
use tokio::sync::Notify;

use super::lock;
use super::store::Relay;

/// The most threads followed elsewhere that are remembered; announcements beyond are ignored
/// (logged), as they come from outside.
const MAX_THREADS: usize = 100_000;

/// The most servers remembered as following one thread.
const MAX_SERVERS: usize = 64;

/// Interrupts turn `turn_id` of a thread (both ids, in that order) if it runs here.
pub(crate) type Interrupts = Box<dyn Fn(&str, &str) + Send + Sync>;

/// Steers the turn running here (`turn/steer` as another server received it): the answer, or
/// why there is none.
pub(crate) type Steers = Box<dyn Fn(&RawValue) -> Result<serde_json::Value, String> + Send + Sync>;

/// Whether a turn of the thread runs here.
pub(crate) type Runs = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// See the module documentation.
#[derive(Default)]
pub(crate) struct Elsewhere {
    relay: OnceLock<Arc<dyn Relay>>,
    /// Per thread, the servers (relay origins) that said they have followers of it.
    followed: Mutex<HashMap<String, HashSet<String>>>,
    interrupts: OnceLock<Interrupts>,
    steers: OnceLock<Steers>,
    runs: OnceLock<Runs>,
    /// Signalled when another server starts following a thread: a request waiting for an
    /// answer is put to it too.
    joined: Arc<Notify>,
}

impl std::fmt::Debug for Elsewhere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elsewhere")
            .field("relay", &self.relay.get().is_some())
            .field("followed", &lock(&self.followed).len())
            .finish()
    }
}

impl Elsewhere {
    /// Connects this server to the others through `relay`.
    pub(crate) fn relay_through(&self, relay: Arc<dyn Relay>) {
        let _ = self.relay.set(relay);
    }

    /// What a relayed `turn/interrupt` does here.
    pub(crate) fn interrupt_with(&self, interrupts: Interrupts) {
        let _ = self.interrupts.set(interrupts);
    }

    /// What a relayed `turn/steer` does here.
    pub(crate) fn steer_with(&self, steers: Steers) {
        let _ = self.steers.set(steers);
    }

    /// How this server tells whether a turn of a thread runs here.
    pub(crate) fn runs_with(&self, runs: Runs) {
        let _ = self.runs.set(runs);
    }

    /// Whether a turn of `thread_id` runs here.
    pub(crate) fn runs_here(&self, thread_id: &str) -> bool {
        self.runs.get().is_some_and(|runs| runs(thread_id))
    }

    /// Steers the turn running here as a relayed `turn/steer` with `params` asks.
    pub(crate) fn steer(&self, params: &RawValue) -> Result<serde_json::Value, String> {
        match self.steers.get() {
            Some(steer) => steer(params),
            None => Err("this server takes no steered input".to_owned()),
        }
    }

    /// The relay, if the store is shared.
    pub(crate) fn relay(&self) -> Option<&Arc<dyn Relay>> {
        self.relay.get()
    }

    /// The relay to publish the notifications of `thread_id` through: while another server has
    /// followers of it.
    pub(crate) fn relay_for(&self, thread_id: &str) -> Option<Arc<dyn Relay>> {
        let relay = self.relay.get()?;
        lock(&self.followed)
            .contains_key(thread_id)
            .then(|| Arc::clone(relay))
    }

    /// Tells the other servers that this one has followers of `thread_id` now, or no more.
    pub(crate) fn announce(&self, thread_id: &str, following: bool) {
        if let Some(relay) = self.relay.get() {
            relay.follow(thread_id, following);
        }
    }

    /// Server `origin` has followers of `thread_id` now (`following`), or no more. Whether that
    /// changed what is published.
    pub(crate) fn heard(&self, thread_id: &str, origin: String, following: bool) -> bool {
        let mut followed = lock(&self.followed);
        if !following {
            let Some(servers) = followed.get_mut(thread_id) else {
                return false;
            };
            servers.remove(&origin);
            if servers.is_empty() {
                followed.remove(thread_id);
                return true;
            }
            return false;
        }
        if let Some(servers) = followed.get_mut(thread_id) {
            if servers.len() < MAX_SERVERS && servers.insert(origin) {
                self.joined.notify_waiters();
            }
            return false;
        }
        if followed.len() >= MAX_THREADS {
            tracing::warn!(
                thread_id,
                "too many threads followed elsewhere; not relaying it"
            );
            return false;
        }
        followed.insert(thread_id.to_owned(), HashSet::from([origin]));
        self.joined.notify_waiters();
        true
    }

    /// Server `origin` is gone: it follows nothing any more. Whether that changed what is
    /// published.
    pub(crate) fn gone(&self, origin: &str) -> bool {
        let mut followed = lock(&self.followed);
        let before = followed.len();
        followed.retain(|_, servers| {
            servers.remove(origin);
            !servers.is_empty()
        });
        followed.len() != before
    }

    /// How many other servers said they have followers of `thread_id`.
    pub(crate) fn servers_following(&self, thread_id: &str) -> usize {
        lock(&self.followed).get(thread_id).map_or(0, HashSet::len)
    }

    /// The signal that another server started following a thread.
    pub(crate) fn join_signal(&self) -> Arc<Notify> {
        Arc::clone(&self.joined)
    }

    /// Interrupts turn `turn_id` of `thread_id` if it runs here.
    pub(crate) fn interrupt(&self, thread_id: &str, turn_id: &str) {
        if let Some(interrupt) = self.interrupts.get() {
            interrupt(thread_id, turn_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Said(Mutex<Vec<(String, bool)>>);

    impl Relay for Said {
        fn publish(&self, _: &str, _: &'static str, _: Vec<u8>) {}
        fn interrupt(&self, _: &str, _: &str) {}
        fn follow(&self, thread_id: &str, following: bool) {
            lock(&self.0).push((thread_id.to_owned(), following));
        }
        fn join(&self, thread_id: &str, _: &str) {
            self.follow(thread_id, true);
        }
        fn ask(&self, _: &str, _: &str, _: &'static str, _: Vec<u8>) {}
        fn answer(&self, _: &str, _: &str, _: Result<serde_json::Value, String>) {}
        fn withdraw(&self, _: &str, _: &str) {}
        fn steer(&self, _: &str, _: &str, _: Vec<u8>) {}
    }

    #[test]
    fn a_thread_is_relayed_while_some_other_server_follows_it() {
        let elsewhere = Elsewhere::default();
        assert!(elsewhere.heard("t", "a".into(), true), "newly followed");
        assert!(elsewhere.relay_for("t").is_none(), "no relay yet");
        let said = Arc::new(Said::default());
        elsewhere.relay_through(said.clone());
        assert!(elsewhere.relay_for("t").is_some());
        assert!(elsewhere.relay_for("u").is_none(), "no one follows u");
        assert!(!elsewhere.heard("t", "b".into(), true), "already relayed");
        assert!(!elsewhere.heard("t", "a".into(), false), "b still follows");
        assert!(elsewhere.relay_for("t").is_some());
        assert!(elsewhere.heard("t", "b".into(), false));
        assert!(elsewhere.relay_for("t").is_none());
        assert!(!elsewhere.heard("t", "b".into(), false), "already gone");
        elsewhere.announce("v", true);
        assert_eq!(*lock(&said.0), [("v".to_owned(), true)]);
    }

    #[test]
    fn a_server_that_is_gone_follows_nothing() {
        let elsewhere = Elsewhere::default();
        elsewhere.relay_through(Arc::new(Said::default()));
        elsewhere.heard("t", "dead".into(), true);
        elsewhere.heard("u", "dead".into(), true);
        elsewhere.heard("u", "alive".into(), true);
        assert!(!elsewhere.gone("nobody"), "no one followed anything");
        assert!(elsewhere.gone("dead"), "t is followed by no one now");
        assert!(elsewhere.relay_for("t").is_none());
        assert!(elsewhere.relay_for("u").is_some(), "u is still followed");
        assert_eq!(elsewhere.servers_following("u"), 1);
        assert!(!elsewhere.gone("dead"), "already gone");
    }
}
