//! The PostgreSQL store, for several app-server workers sharing their threads
//! (`[store] url = "postgres://…"` in `config.toml`, or `--store`).
//!
//! A thread is a row of `agentwire_threads` (the list index: the columns `thread/list` filters
//! and orders by, and the summary) and its records in `agentwire_records`, one JSON line each
//! in order: the embedded store's rollout, line for line, so both stores read a thread back
//! with the same code ([`crate::replay::replay`]). The schema is migrated when a
//! worker starts (`schema`).
//!
//! Queries run on the store's own database threads (`db`); the records of loaded threads
//! are committed in groups, one transaction per group, by the store's committer
//! (`committer`), and acknowledged once committed. Appends lock the thread's row for their
//! transaction, so records written by different workers never interleave or collide. History
//! pages are cut from the thread's turns as read back (there are no file positions here).
//!
//! A turn runs on one worker at a time: the worker claims the thread first, with a session
//! advisory lock (`pg_try_advisory_lock` on a hash of the thread id) held on a connection of
//! its own until the turn ends. PostgreSQL drops the locks of a worker that dies with its
//! connection, so its threads can be resumed and continued elsewhere; a turn the dead worker
//! left open is settled as interrupted by the next worker that finds the thread unclaimed.

mod committer;
mod db;
mod relay;
mod relay_wire;
mod schema;
mod sql;

use std::path::Path;
use std::sync::Arc;

use db::{CONNECT_TIMEOUT, Db, Fault};

use crate::boundary::redacted;
use crate::boundary::{Claim, ClaimGuard, Deliver, Relay, ThreadLog, ThreadStore};
use crate::committer::Pending;
use crate::error::ThreadError;
use crate::index::{IndexRow, PageQuery};
use crate::meta::ThreadSummary;
use crate::record::{ROLLOUT_VERSION, RolloutRecord};
use crate::replay::{Replayed, replay};

/// Database threads per worker.
const POOL: usize = 4;

/// Threads in one PostgreSQL database.
#[derive(Debug)]
pub(crate) struct PostgresStore {
    shared: Arc<Shared>,
}

/// What the store and the logs of its loaded threads share.
#[derive(Debug)]
struct Shared {
    db: Db,
    /// The connection that holds this server's turn claims (session advisory locks, one per
    /// thread running a turn here; PostgreSQL releases them if this server dies).
    locks: Db,
    committer: committer::Committer,
    /// How to connect, for the relay's own connections.
    config: postgres::Config,
    /// The URL without its password.
    shown: String,
}

impl PostgresStore {
    /// Connects to the database `url` names, migrates its schema and starts the committer.
    pub(crate) fn open(url: &str) -> Result<Self, String> {
        let shown = redacted(url);
        let mut config: postgres::Config =
            url.parse().map_err(|e| format!("store url {shown}: {e}"))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("agentwire");
        }
        let db = Db::start(&config, shown.clone(), POOL)?;
        let locks = Db::start(&config, shown.clone(), 1)?;
        // Said once: the caller says it is the store that failed.
        db.run(|client| schema::migrate(client).map_err(Fault::Other))
            .map_err(|e| match e {
                ThreadError::Storage(why) => why,
                other => other.to_string(),
            })?;
        let committer = committer::Committer::start(config.clone(), shown.clone())?;
        tracing::info!(store = shown, "threads kept in PostgreSQL");
        Ok(Self {
            shared: Arc::new(Shared {
                db,
                locks,
                committer,
                config,
                shown,
            }),
        })
    }

    fn db(&self) -> &Db {
        &self.shared.db
    }
}

/// `records` as rollout lines (JSON texts without the newline).
fn lines(records: &[RolloutRecord]) -> Result<Vec<String>, ThreadError> {
    records
        .iter()
        .map(|record| {
            serde_json::to_string(record)
                .map_err(|e| ThreadError::Storage(format!("cannot encode a record: {e}")))
        })
        .collect()
}

impl ThreadStore for PostgresStore {
    fn get(&self, id: &str) -> Result<Option<IndexRow>, ThreadError> {
        let id = id.to_owned();
        self.db().run(move |client| sql::get(client, &id))
    }

    fn page(&self, query: &PageQuery) -> Result<Arc<[IndexRow]>, ThreadError> {
        let query = query.clone();
        Ok(self
            .db()
            .run(move |client| sql::page(client, &query))?
            .into())
    }

    fn kept_page(&self, _: &PageQuery) -> Option<Arc<[IndexRow]>> {
        // Other workers change the index too: every page is read.
        None
    }

    fn forget(&self, id: &str, why: &str) {
        // Records in a database are not removed behind the store's back: a thread that cannot
        // be read stays listed, and reading it keeps saying why.
        tracing::warn!(id, why, "thread cannot be read");
    }

    fn location(&self, _: &IndexRow) -> Option<String> {
        None
    }

    fn read(&self, row: &IndexRow) -> Result<Replayed, ThreadError> {
        let id = row.summary.meta.id.clone();
        let bytes = {
            let id = id.clone();
            self.db().run(move |client| sql::read_lines(client, &id))?
        };
        let Some(bytes) = bytes else {
            return Err(ThreadError::NotFound(id));
        };
        let name = format!("{}#{id}", self.shared.shown);
        let replayed = replay(bytes.as_slice(), Path::new(&name))?;
        Ok(replayed)
    }

    fn create(
        &self,
        summary: &ThreadSummary,
        records: &[RolloutRecord],
    ) -> Result<Box<dyn ThreadLog>, ThreadError> {
        let header = RolloutRecord::Thread {
            version: ROLLOUT_VERSION,
            meta: summary.meta.clone(),
        };
        let mut all = lines(std::slice::from_ref(&header))?;
        all.extend(lines(records)?);
        let row = row_of(summary);
        self.db().run(move |client| {
            let mut transaction = client.transaction()?;
            sql::write_row(&mut transaction, &row)?;
            sql::append_lines(&mut transaction, &row.summary.meta.id, &all)?;
            transaction.commit()?;
            Ok(())
        })?;
        Ok(Box::new(DbLog {
            shared: Arc::clone(&self.shared),
        }))
    }

    fn reopen(&self, _: &IndexRow, _: &Replayed) -> Result<Box<dyn ThreadLog>, ThreadError> {
        Ok(Box::new(DbLog {
            shared: Arc::clone(&self.shared),
        }))
    }

    fn append(
        &self,
        row: &mut IndexRow,
        _: Replayed,
        records: &[RolloutRecord],
    ) -> Result<(), ThreadError> {
        let lines = lines(records)?;
        let row = row.clone();
        self.db().run(move |client| {
            let mut transaction = client.transaction()?;
            let id = &row.summary.meta.id;
            if !sql::append_lines(&mut transaction, id, &lines)? {
                return Err(Fault::Other(format!("thread {id} is gone from the store")));
            }
            sql::write_row(&mut transaction, &row)?;
            transaction.commit()?;
            Ok(())
        })
    }

    fn set_archived(&self, row: &mut IndexRow, archived: bool) -> Result<(), ThreadError> {
        let id = row.summary.meta.id.clone();
        let found = {
            let id = id.clone();
            self.db()
                .run(move |client| sql::set_archived(client, &id, archived))?
        };
        if !found {
            return Err(ThreadError::NotFound(id));
        }
        row.archived = archived;
        Ok(())
    }

    fn delete(&self, row: &IndexRow) -> Result<(), ThreadError> {
        let id = row.summary.meta.id.clone();
        self.db().run(move |client| sql::delete(client, &id))
    }

    fn claim(&self, id: &str) -> Result<Option<Claim>, ThreadError> {
        let key = id.to_owned();
        let granted = self.shared.locks.run(move |client| {
            let row = client.query_one(
                "SELECT pg_try_advisory_lock(hashtextextended($1, 0))",
                &[&key],
            )?;
            Ok(row.try_get::<_, bool>(0)?)
        })?;
        Ok(granted.then(|| {
            Claim::held(TurnLock {
                shared: Arc::clone(&self.shared),
                id: id.to_owned(),
            })
        }))
    }

    fn shared(&self) -> bool {
        true
    }

    fn relay(&self, deliver: Deliver) -> Option<Arc<dyn Relay>> {
        match relay::PgRelay::start(&self.shared.config, deliver) {
            Ok(relay) => Some(Arc::new(relay)),
            Err(error) => {
                tracing::error!(
                    store = self.shared.shown,
                    error,
                    "no live notifications between workers"
                );
                None
            }
        }
    }
}

/// A thread's advisory lock, held by this server while a turn runs on it here.
#[derive(Debug)]
struct TurnLock {
    shared: Arc<Shared>,
    /// The thread; empty once released.
    id: String,
}

impl TurnLock {
    /// Unlocks the thread on the claim connection.
    fn unlock(client: &mut postgres::Client, id: &str) -> Result<(), Fault> {
        client.execute("SELECT pg_advisory_unlock(hashtextextended($1, 0))", &[&id])?;
        Ok(())
    }
}

impl ClaimGuard for TurnLock {
    fn release(mut self: Box<Self>) {
        let id = std::mem::take(&mut self.id);
        let released = self
            .shared
            .locks
            .run(move |client| Self::unlock(client, &id));
        if let Err(error) = released {
            tracing::warn!(%error, "turn claim not released; it goes with the connection");
        }
    }
}

impl Drop for TurnLock {
    fn drop(&mut self) {
        if self.id.is_empty() {
            return;
        }
        let id = std::mem::take(&mut self.id);
        self.shared
            .locks
            .spawn("releasing a turn claim", move |client| {
                Self::unlock(client, &id)
            });
    }
}

/// The index row of a loaded thread whose summary is `summary`.
fn row_of(summary: &ThreadSummary) -> IndexRow {
    IndexRow {
        summary: summary.clone(),
        relative: std::path::PathBuf::new(),
        archived: false,
        stamp: Default::default(),
    }
}

/// The append side of a loaded thread kept in PostgreSQL.
#[derive(Debug)]
struct DbLog {
    shared: Arc<Shared>,
}

impl ThreadLog for DbLog {
    fn queue(
        &mut self,
        records: &[RolloutRecord],
        summary: &ThreadSummary,
    ) -> Result<Pending, ThreadError> {
        Ok(self
            .shared
            .committer
            .submit(lines(records)?, row_of(summary)))
    }

    fn sync(&self, summary: &ThreadSummary) {
        let row = row_of(summary);
        let id = row.summary.meta.id.clone();
        let written = self
            .shared
            .db
            .run(move |client| sql::write_row(client, &row));
        if let Err(error) = written {
            tracing::warn!(id, %error, "thread index not updated");
        }
    }

    fn location(&self) -> Option<String> {
        None
    }
}
