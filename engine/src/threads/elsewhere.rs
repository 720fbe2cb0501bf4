//! The followers of threads on the other servers of a shared store, as far as this server
//! knows them: which threads another server has followers of (so a turn here publishes its
//! notifications only then), the relay they are published through, and what a relayed
//! `turn/interrupt` does here.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use agentwire_store::Relay;
use agentwire_support::lock;
use serde_json::value::RawValue;
use tokio::sync::Notify;

/// The most threads followed elsewhere that are remembered; announcements beyond are ignored
/// (logged), as they come from outside.
const MAX_THREADS: usize = 100_000;

/// The most servers remembered as following one thread.
const MAX_SERVERS: usize = 64;

/// The most servers saying again what they follow at once; more are ignored (logged), and
/// what they followed stands.
const MAX_RESYNCING: usize = 1024;

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
    followed: Mutex<Followed>,
    interrupts: OnceLock<Interrupts>,
    steers: OnceLock<Steers>,
    runs: OnceLock<Runs>,
    /// Signalled when another server starts following a thread: a request waiting for an
    /// answer is put to it too.
    joined: Arc<Notify>,
    /// Signalled when another server may have stopped following a thread (it said so, or is
    /// gone): a request waiting for its answer stops waiting.
    left: Arc<Notify>,
}

/// Who follows what elsewhere.
#[derive(Debug, Default)]
struct Followed {
    /// Per thread, the servers (relay origins) that said they have followers of it.
    by_thread: HashMap<String, HashSet<String>>,
    /// Per server saying again what it follows ([`Elsewhere::resyncing`]), the threads it
    /// followed before and has not said again yet.
    unconfirmed: HashMap<String, HashSet<String>>,
}

impl Followed {
    /// `origin` no longer follows `thread_id`; whether no server does now.
    fn drop_follower(&mut self, thread_id: &str, origin: &str) -> bool {
        let Some(servers) = self.by_thread.get_mut(thread_id) else {
            return false;
        };
        servers.remove(origin);
        if servers.is_empty() {
            self.by_thread.remove(thread_id);
            return true;
        }
        false
    }
}

impl std::fmt::Debug for Elsewhere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elsewhere")
            .field("relay", &self.relay.get().is_some())
            .field("followed", &lock(&self.followed).by_thread.len())
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
            .by_thread
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
        if let Some(unconfirmed) = followed.unconfirmed.get_mut(&origin) {
            unconfirmed.remove(thread_id);
        }
        if !following {
            let unfollowed = followed.drop_follower(thread_id, &origin);
            self.left.notify_waiters();
            return unfollowed;
        }
        let by_thread = &mut followed.by_thread;
        if let Some(servers) = by_thread.get_mut(thread_id) {
            if servers.len() < MAX_SERVERS && servers.insert(origin) {
                self.joined.notify_waiters();
            }
            return false;
        }
        if by_thread.len() >= MAX_THREADS {
            tracing::warn!(
                thread_id,
                "too many threads followed elsewhere; not relaying it"
            );
            return false;
        }
        by_thread.insert(thread_id.to_owned(), HashSet::from([origin]));
        self.joined.notify_waiters();
        true
    }

    /// Server `origin` is gone: it follows nothing any more. Whether that changed what is
    /// published.
    pub(crate) fn gone(&self, origin: &str) -> bool {
        let mut followed = lock(&self.followed);
        followed.unconfirmed.remove(origin);
        let before = followed.by_thread.len();
        followed.by_thread.retain(|_, servers| {
            servers.remove(origin);
            !servers.is_empty()
        });
        self.left.notify_waiters();
        followed.by_thread.len() != before
    }

    /// Server `origin` starts saying again everything it follows: the threads it followed
    /// stay followed until [`Elsewhere::resynced`], unless it says them again (or says it
    /// follows them no more) before that.
    pub(crate) fn resyncing(&self, origin: &str) {
        let mut followed = lock(&self.followed);
        if followed.unconfirmed.len() >= MAX_RESYNCING && !followed.unconfirmed.contains_key(origin)
        {
            tracing::warn!(
                origin,
                "too many servers saying again what they follow; keeping what it followed"
            );
            return;
        }
        let threads: HashSet<String> = followed
            .by_thread
            .iter()
            .filter(|(_, servers)| servers.contains(origin))
            .map(|(thread_id, _)| thread_id.clone())
            .collect();
        followed.unconfirmed.insert(origin.to_owned(), threads);
    }

    /// Server `origin` has said again everything it follows: it follows none of the threads it
    /// did not say again. Whether that changed what is published.
    pub(crate) fn resynced(&self, origin: &str) -> bool {
        let mut followed = lock(&self.followed);
        let Some(unconfirmed) = followed.unconfirmed.remove(origin) else {
            return false;
        };
        let mut changed = false;
        for thread_id in unconfirmed {
            changed |= followed.drop_follower(&thread_id, origin);
        }
        self.left.notify_waiters();
        changed
    }

    /// How many other servers said they have followers of `thread_id`.
    pub(crate) fn servers_following(&self, thread_id: &str) -> usize {
        lock(&self.followed)
            .by_thread
            .get(thread_id)
            .map_or(0, HashSet::len)
    }

    /// The signal that another server started following a thread.
    pub(crate) fn join_signal(&self) -> Arc<Notify> {
        Arc::clone(&self.joined)
    }

    /// The signal that another server may have stopped following a thread.
    pub(crate) fn leave_signal(&self) -> Arc<Notify> {
        Arc::clone(&self.left)
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

    #[test]
    fn a_server_saying_again_what_it_follows_keeps_only_that() {
        let elsewhere = Elsewhere::default();
        elsewhere.relay_through(Arc::new(Said::default()));
        for thread in ["kept", "dropped", "unfollowed", "shared"] {
            elsewhere.heard(thread, "b".into(), true);
        }
        elsewhere.heard("shared", "c".into(), true);
        elsewhere.heard("c-only", "c".into(), true);

        elsewhere.resyncing("b");
        // Until it is done, everything b followed is still published.
        for thread in ["kept", "dropped", "unfollowed", "shared"] {
            assert!(
                elsewhere.relay_for(thread).is_some(),
                "{thread} while resyncing"
            );
        }
        assert!(!elsewhere.heard("kept", "b".into(), true), "said again");
        assert!(
            elsewhere.heard("unfollowed", "b".into(), false),
            "said gone"
        );
        assert!(elsewhere.heard("new", "b".into(), true), "newly followed");
        assert!(
            elsewhere.resynced("b"),
            "\"dropped\" is followed by no one now"
        );

        assert!(elsewhere.relay_for("kept").is_some());
        assert!(elsewhere.relay_for("new").is_some());
        assert!(elsewhere.relay_for("dropped").is_none(), "not said again");
        assert!(elsewhere.relay_for("unfollowed").is_none());
        assert_eq!(
            elsewhere.servers_following("shared"),
            1,
            "c still follows it"
        );
        assert!(
            elsewhere.relay_for("c-only").is_some(),
            "c is not resyncing"
        );
        assert!(!elsewhere.resynced("b"), "b is done already");
        assert!(!elsewhere.resynced("c"), "c never started");
    }

    #[test]
    fn a_server_gone_while_resyncing_is_forgotten_at_once() {
        let elsewhere = Elsewhere::default();
        elsewhere.relay_through(Arc::new(Said::default()));
        elsewhere.heard("t", "b".into(), true);
        elsewhere.resyncing("b");
        assert!(elsewhere.gone("b"));
        assert!(elsewhere.relay_for("t").is_none());
        assert!(!elsewhere.resynced("b"), "nothing left to settle");
    }
}
