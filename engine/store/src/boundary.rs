//! The boundary between the threads and where they are kept: [`ThreadStore`] (the threads
//! at rest), [`ThreadLog`] (one loaded thread's appends), [`Relay`] (notifications between the
//! workers of a shared store) and [`Claim`] (which worker runs a thread's turn). Every method
//! here may block on disk or network: callers run on the blocking pool or the store's own
//! threads, never on the async workers.

use std::path::Path;
use std::sync::Arc;

use agentwire_protocol::method::MethodInfo;

use crate::committer::Pending;
use crate::embedded::EmbeddedStore;
use crate::error::ThreadError;
use crate::index::{IndexRow, PageQuery};
use crate::meta::ThreadSummary;
use crate::record::RolloutRecord;
use crate::replay::Replayed;

/// Where persisted threads are kept.
pub trait ThreadStore: Send + Sync + std::fmt::Debug {
    /// The index row of thread `id`, if the store has it.
    fn get(&self, id: &str) -> Result<Option<IndexRow>, ThreadError>;

    /// One page of index rows (`query.limit` at most), in the query's order.
    fn page(&self, query: &PageQuery) -> Result<Arc<[IndexRow]>, ThreadError>;

    /// The page answering `query` if the store keeps it in memory and it is still current;
    /// never blocks (so a poll can be answered in place). `None` when it must be read.
    fn kept_page(&self, query: &PageQuery) -> Option<Arc<[IndexRow]>>;

    /// Drops the index row of thread `id` (its records cannot be read any more); logs `why`.
    fn forget(&self, id: &str, why: &str);

    /// What `Thread.path` reports for `row`: the rollout file, or `None` where there is none.
    fn location(&self, row: &IndexRow) -> Option<String>;

    /// Reads the records of `row` back. Records that are gone, or whose first record is no
    /// longer a thread record, take the row out of the index with them (`NotFound`):
    /// `thread/list` stops showing a thread that `thread/read` cannot read.
    fn read(&self, row: &IndexRow) -> Result<Replayed, ThreadError>;

    /// Persists a new thread: its thread record, then `records`, durably, and its index row.
    /// Returns the log a loaded thread appends through.
    fn create(
        &self,
        summary: &ThreadSummary,
        records: &[RolloutRecord],
    ) -> Result<Box<dyn ThreadLog>, ThreadError>;

    /// Opens persisted thread `row` (read back as `replayed`) for appending, as it is loaded.
    fn reopen(
        &self,
        row: &IndexRow,
        replayed: &Replayed,
    ) -> Result<Box<dyn ThreadLog>, ThreadError>;

    /// Appends `records` durably to a thread that is not loaded (`row`, read back as
    /// `replayed`), then writes `row` (whose summary the caller has brought up to date).
    fn append(
        &self,
        row: &mut IndexRow,
        replayed: Replayed,
        records: &[RolloutRecord],
    ) -> Result<(), ThreadError>;

    /// Moves `row`'s thread into the archive (`archived`) or back out of it, durably.
    fn set_archived(&self, row: &mut IndexRow, archived: bool) -> Result<(), ThreadError>;

    /// Removes `row`'s thread: its records and its index row.
    fn delete(&self, row: &IndexRow) -> Result<(), ThreadError>;

    /// The embedded store, for what only files can do: paging history by file position and
    /// reading a rollout by its path (`getConversationSummary`).
    fn files(&self) -> Option<&EmbeddedStore> {
        None
    }

    /// Claims thread `id` for running a turn on this server, until the claim is dropped; `None`
    /// while another server holds it (a turn runs there). A server that dies loses its claims.
    /// Stores that only one server opens grant every claim.
    fn claim(&self, id: &str) -> Result<Option<Claim>, ThreadError> {
        let _ = id;
        Ok(Some(Claim::granted()))
    }

    /// Whether other servers write to this store too: a loaded thread is then read back
    /// before a turn runs on it, as another server may have added turns since.
    fn shared(&self) -> bool {
        false
    }

    /// Connects this server's followers of a thread with the servers running its turns, for
    /// stores that other servers share: what is published through the returned [`Relay`]
    /// reaches every other server, and what they publish is handed to `deliver` here. `None`
    /// where no other server can run a turn.
    fn relay(&self, deliver: Deliver) -> Option<Arc<dyn Relay>> {
        let _ = deliver;
        None
    }
}

/// Hands what another server relays about a thread (its id, then what) to this server.
pub type Deliver = Box<dyn Fn(&str, Relayed) + Send + Sync>;

/// What another server of a shared store relays about one of its threads.
#[expect(missing_docs, reason = "each variant's doc names its fields")]
#[derive(Debug)]
pub enum Relayed {
    /// A notification for the thread's followers here: the message as that server encoded it.
    Notification {
        method: &'static MethodInfo,
        message: Vec<u8>,
    },
    /// A follower there asks to interrupt turn `turn_id` (`turn/interrupt`), if it runs here.
    Interrupt { turn_id: String },
    /// Server `origin` has followers of the thread now (`true`), or no more (`false`): the
    /// notifications of a turn on it here are published only while some server has.
    Following { origin: String, following: bool },
    /// Server `origin` has followers of the thread now, one of whom is catching up with a turn
    /// that runs here: once this server publishes that turn's notifications, it answers ask
    /// `ask`, so that server knows that what it reads of the thread after the answer and what
    /// it is sent from then on leave nothing out.
    Join { origin: String, ask: String },
    /// A server (re)joined the relay and may have missed who follows what: every server says
    /// again which threads it has followers of.
    Joined,
    /// Server `origin` is gone (its database session ended without a word): it follows no
    /// thread any more. Not about one thread.
    Gone { origin: String },
    /// Server `origin` will now say again every thread it follows, because some of what it
    /// said may have been lost: what it follows as far as this server knows stands until it
    /// is said again or [`Relayed::Resynced`] comes, so nothing stops being published in the
    /// meantime. Not about one thread.
    Resyncing { origin: String },
    /// Server `origin` has said again every thread it follows since [`Relayed::Resyncing`]:
    /// it follows no other. Not about one thread.
    Resynced { origin: String },
    /// The server running a turn asks the followers here the server request `method` (an
    /// approval, user input, a client tool call) as ask `ask`, with `params` as it encoded them.
    Ask {
        ask: String,
        method: &'static MethodInfo,
        params: Box<serde_json::value::RawValue>,
    },
    /// A server's followers answered ask `ask`: the first well-formed result, or why there is
    /// none (the server running the turn checks the result against its type).
    Answer {
        ask: String,
        answer: Result<serde_json::Value, String>,
    },
    /// Ask `ask` has its answer (or is given up): its requests to followers are withdrawn.
    Withdraw { ask: String },
    /// A client there steers the turn running here (`turn/steer`, its params as sent); the
    /// answer goes back as [`Relayed::Answer`] to ask `ask`.
    Steer {
        ask: String,
        params: Box<serde_json::value::RawValue>,
    },
}

/// Carries what concerns a thread between the servers of a shared store: the notifications of
/// the turns running here to the followers elsewhere, and interrupts from followers here to
/// the server running the turn.
pub trait Relay: Send + Sync + std::fmt::Debug {
    /// Publishes `message`, the encoded notification `method` of thread `thread_id`. Never
    /// blocks: what cannot be published (the database is gone, or too far behind) is dropped and
    /// logged; followers elsewhere then read the turn in full once it ends.
    fn publish(&self, thread_id: &str, method: &'static str, message: Vec<u8>);

    /// Asks the server running turn `turn_id` of thread `thread_id` to interrupt it. Never
    /// blocks; like a notification, it may be dropped (logged).
    fn interrupt(&self, thread_id: &str, turn_id: &str);

    /// Tells the other servers that this one has followers of thread `thread_id` now
    /// (`following`), or no more. Never blocks.
    fn follow(&self, thread_id: &str, following: bool);

    /// Like [`Relay::follow`] (`true`), and asks the server running the thread's turn to answer
    /// ask `ask` once it publishes the turn's notifications. Never blocks.
    fn join(&self, thread_id: &str, ask: &str);

    /// Asks the followers of thread `thread_id` on the other servers the server request
    /// `method` with the encoded `params`, as ask `ask`. Never blocks.
    fn ask(&self, thread_id: &str, ask: &str, method: &'static str, params: Vec<u8>);

    /// Gives the server that asked `ask` this server's answer. Never blocks.
    fn answer(&self, thread_id: &str, ask: &str, answer: Result<serde_json::Value, String>);

    /// Withdraws ask `ask` from the other servers' followers. Never blocks.
    fn withdraw(&self, thread_id: &str, ask: &str);

    /// Passes `turn/steer` (`params`, encoded) to the server running the thread's turn, as ask
    /// `ask`. Never blocks.
    fn steer(&self, thread_id: &str, ask: &str, params: Vec<u8>);
}

/// A store's word that this server alone runs turns on a thread; released when dropped (in
/// the background) or by [`Claim::release`] (in place).
#[derive(Debug)]
#[must_use = "the claim is released when dropped"]
pub struct Claim {
    /// Releases the claim; `None` when there is nothing to release.
    guard: Option<Box<dyn ClaimGuard>>,
}

/// What releases a held claim: when dropped, without waiting; by
/// [`ClaimGuard::release`], before returning (blocking).
pub trait ClaimGuard: Send + Sync + std::fmt::Debug {
    /// Releases the claim now; blocks until the store has.
    fn release(self: Box<Self>);
}

impl Claim {
    /// A claim that holds nothing (the store has no other servers to keep out).
    pub fn granted() -> Self {
        Self { guard: None }
    }

    /// A claim held by `guard`.
    pub(crate) fn held(guard: impl ClaimGuard + 'static) -> Self {
        Self {
            guard: Some(Box::new(guard)),
        }
    }

    /// Releases the claim before returning, so that another server may take it at once.
    /// Blocks on the store: call it on the blocking pool.
    pub fn release(mut self) {
        if let Some(guard) = self.guard.take() {
            guard.release();
        }
    }
}

/// The append side of one loaded, persisted thread.
pub trait ThreadLog: Send + Sync + std::fmt::Debug {
    /// Queues `records` behind the thread's earlier ones; `summary` is the thread's summary as
    /// of them (its index row follows). The answer resolves once they are durable.
    fn queue(
        &mut self,
        records: &[RolloutRecord],
        summary: &ThreadSummary,
    ) -> Result<Pending, ThreadError>;

    /// Writes the thread's index row as `summary` says, now. A failure is logged, not
    /// returned: the records are durable already, and the row is repaired from them.
    fn sync(&self, summary: &ThreadSummary);

    /// What `Thread.path` reports: the rollout file, or `None` where there is none.
    fn location(&self) -> Option<String>;

    /// The rollout file, for the embedded store's history pages.
    fn file(&self) -> Option<&Path> {
        None
    }
}

/// Which store a server keeps its threads in: `[store] url` in `config.toml`, or `--store`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// The embedded store under the home (the default).
    Embedded,
    /// A PostgreSQL database (`postgres://` or `postgresql://`).
    Postgres(String),
}

impl StoreUrl {
    /// Parses a store URL. `embedded` (or nothing) is the embedded store; a URL names the
    /// database; anything else is refused, naming what is accepted.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() || text == "embedded" {
            Ok(Self::Embedded)
        } else if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Ok(Self::Postgres(text.to_owned()))
        } else {
            Err(format!(
                "store url {:?}: expected \"embedded\" or a postgres:// URL",
                redacted(text)
            ))
        }
    }
}

/// `url` with any password left out, for logs and errors.
pub(crate) fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.split_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{scheme}://{name}:***@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_urls_parse_and_name_what_is_accepted() {
        assert_eq!(StoreUrl::parse(""), Ok(StoreUrl::Embedded));
        assert_eq!(StoreUrl::parse("embedded"), Ok(StoreUrl::Embedded));
        assert_eq!(
            StoreUrl::parse("postgres://u@h/db"),
            Ok(StoreUrl::Postgres("postgres://u@h/db".to_owned()))
        );
        let refused = StoreUrl::parse("mysql://u:secret@h/db").expect_err("refused");
        assert!(refused.contains("postgres://"), "{refused}");
        assert!(!refused.contains("secret"), "the password leaks: {refused}");
    }

    #[test]
    fn passwords_are_left_out_of_logged_urls() {
        assert_eq!(
            redacted("postgres://me:pw@h:5/db"),
            "postgres://me:***@h:5/db"
        );
        assert_eq!(redacted("postgres://h/db"), "postgres://h/db");
        assert_eq!(redacted("postgres://me@h/db"), "postgres://me@h/db");
    }
}
