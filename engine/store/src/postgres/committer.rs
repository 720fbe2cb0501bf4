//! The PostgreSQL store's committer: one thread with a connection of its own that appends the
//! records of every loaded thread of this worker and commits them in groups.
//!
//! It takes everything waiting when it wakes (up to [`MAX_GROUP`] jobs) and commits it as one
//! transaction: each thread's records in order, then its index row once (the latest summary).
//! One commit (one WAL flush, with the server's `synchronous_commit` at its default) makes the
//! whole group durable; only then is every job answered. A group that fails is committed again
//! thread by thread, so one thread's failure is reported to its own jobs alone.

use std::collections::HashMap;
use std::sync::mpsc;

use postgres::Client;

use super::db::{Fault, connect, storage_error};
use super::sql;
use crate::committer::{Answer, Pending};
use crate::error::ThreadError;
use crate::index::IndexRow;

/// Most jobs committed as one group; the rest wait for the next one.
const MAX_GROUP: usize = 1024;

/// The handle through which records reach the committer thread. Dropping it lets the thread
/// commit what is queued and waits for it to exit.
#[derive(Debug)]
pub(super) struct Committer {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Records to append to one thread, and what to do once they are durable.
struct Job {
    lines: Vec<String>,
    /// The thread's index row as of these records.
    row: IndexRow,
    done: Answer,
}

impl Committer {
    /// Connects with `config` (on the committer's own thread) and starts committing.
    pub(super) fn start(config: postgres::Config, shown: String) -> Result<Self, String> {
        let (jobs, queue) = mpsc::channel();
        let (connected, ready) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("agentwire-pg-committer".to_owned())
            .spawn(move || match connect(&config) {
                Ok(mut client) => {
                    let _ = connected.send(Ok(()));
                    run(&mut client, &config, &queue, &shown);
                }
                Err(error) => {
                    let _ = connected.send(Err(format!("cannot connect to {shown}: {error}")));
                }
            })
            .map_err(|e| format!("cannot start the store committer: {e}"))?;
        match ready.recv() {
            Ok(Ok(())) => Ok(Self {
                jobs: Some(jobs),
                thread: Some(thread),
            }),
            Ok(Err(error)) => Err(error),
            Err(_) => Err("the store committer stopped while connecting".to_owned()),
        }
    }

    /// Queues `lines` (records, one JSON text each) for the thread of `row`.
    pub(super) fn submit(&self, lines: Vec<String>, row: IndexRow) -> Pending {
        let (done, pending) = Pending::channel();
        if let Some(jobs) = &self.jobs {
            // A send fails only once the thread is gone; the dropped answer says "stopped".
            let _ = jobs.send(Job { lines, row, done });
        }
        pending
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the store committer panicked");
        }
    }
}

fn run(client: &mut Client, config: &postgres::Config, queue: &mpsc::Receiver<Job>, shown: &str) {
    while let Ok(first) = queue.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match queue.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        if client.is_closed() {
            match connect(config) {
                Ok(fresh) => *client = fresh,
                Err(error) => tracing::warn!(%error, "cannot reconnect to the thread store"),
            }
        }
        commit(client, group, shown);
    }
}

/// One thread's share of a group: its records in order, its last row, its jobs' answers.
struct Share {
    lines: Vec<String>,
    row: IndexRow,
    answers: Vec<Answer>,
}

fn commit(client: &mut Client, group: Vec<Job>, shown: &str) {
    // In the order threads first appear in the group; `at` finds a thread's share.
    let mut shares: Vec<Share> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for job in group {
        match at.get(&job.row.summary.meta.id) {
            Some(&n) => {
                let share = &mut shares[n];
                share.lines.extend(job.lines);
                share.row = job.row;
                share.answers.push(job.done);
            }
            None => {
                at.insert(job.row.summary.meta.id.clone(), shares.len());
                shares.push(Share {
                    lines: job.lines,
                    row: job.row,
                    answers: vec![job.done],
                });
            }
        }
    }
    if let Err(fault) = write(client, &shares) {
        if shares.len() == 1 {
            return answer(shares, &Err(fault), shown);
        }
        // Find out whose it was: each thread alone.
        for share in shares {
            let outcome = write(client, std::slice::from_ref(&share));
            answer(vec![share], &outcome, shown);
        }
        return;
    }
    answer(shares, &Ok(()), shown);
}

/// Writes `shares` in one transaction.
fn write(client: &mut Client, shares: &[Share]) -> Result<(), Fault> {
    let mut transaction = client.transaction()?;
    for share in shares {
        let id = &share.row.summary.meta.id;
        if !sql::append_lines(&mut transaction, id, &share.lines)? {
            return Err(Fault::Other(format!("thread {id} is gone from the store")));
        }
        sql::write_row(&mut transaction, &share.row)?;
    }
    transaction.commit()?;
    Ok(())
}

fn answer(shares: Vec<Share>, outcome: &Result<(), Fault>, shown: &str) {
    let failure = outcome
        .as_ref()
        .err()
        .map(|fault| storage_error(shown, fault));
    for share in shares {
        if let Some(error) = &failure {
            tracing::warn!(id = share.row.summary.meta.id, %error, "records not written");
        }
        for done in share.answers {
            let _ = done.send(match &failure {
                None => Ok(()),
                Some(ThreadError::Storage(text)) => Err(ThreadError::Storage(text.clone())),
                Some(other) => Err(ThreadError::Storage(other.to_string())),
            });
        }
    }
}
