//! The rollout committer: one thread per store that appends the records of every loaded thread
//! and makes them durable in groups.
//!
//! A loaded thread's records are not written by whoever records them. They are encoded under
//! the thread's lock (so each rollout gets its records in order) and handed to the committer,
//! which answers through a [`Pending`] once they are on disk and the thread's index row says so.
//! The turn engine awaits that answer before it tells clients about the item, so "acknowledged
//! means durable" holds as before, but no async task ever waits on the disk.
//!
//! The committer takes everything that is waiting when it wakes (up to `MAX_GROUP` jobs) and
//! commits it as one group:
//!
//! 1. each rollout's share of the group is written with one `write` (`O_APPEND`),
//! 2. each rollout is `fdatasync`ed once, however many records it got,
//! 3. the index row of each thread in the group is written once (its latest summary) and the
//!    thread's turn and item positions are brought up to date,
//! 4. every job of the group is answered.
//!
//! So fifty turns that each complete an item at the same moment cost one round of index work
//! instead of fifty, and a turn whose model streams several records while the disk is busy gets
//! them all synced together. A write or sync that fails is reported to every job of that
//! rollout (the turn logs it, as it did before); the index is left alone for that thread, and the
//! next start's reconciliation repairs it.
//!
//! The queue has no bound of its own: every job has a waiter, turns wait for their answer before
//! going on, and request handlers wait too, so at most one job per running turn or request is
//! queued at a time.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, mpsc};

use agentwire_support::lock;
use tokio::sync::oneshot;

use crate::error::ThreadError;
use crate::index::{Index, IndexRow};
use crate::stamp::FileStamp;

/// Most jobs committed as one group; the rest wait for the next one.
const MAX_GROUP: usize = 1024;

/// The index a store's threads share with its committer.
pub(crate) type SharedIndex = Arc<Mutex<Index>>;

/// The handle through which records reach the committer thread. Dropping it lets the thread
/// commit what is queued, and waits for it to exit: the index it shares is closed (and its
/// write-ahead log checkpointed) before the store is gone.
#[derive(Debug)]
pub(crate) struct Committer {
    jobs: mpsc::Sender<Job>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Records to append to one rollout, and what to do once they are durable.
struct Job {
    file: Arc<File>,
    bytes: Vec<u8>,
    /// The rollout's path (positions are read back from it).
    path: PathBuf,
    /// The thread's index row as of these records; its stamp is filled in once they are synced.
    row: IndexRow,
    done: Answer,
}

/// The answer to one job: resolves once its records are durable (or could not be written).
#[derive(Debug)]
#[must_use = "records are durable only once their Pending resolves"]
pub struct Pending(PendingState);

#[derive(Debug)]
enum PendingState {
    /// Nothing to write (an ephemeral thread).
    Nothing,
    Queued(oneshot::Receiver<Result<(), ThreadError>>),
}

/// How a store's committer answers one [`Pending`]: once the records are durable, or with
/// why they could not be written. Dropping it unanswered answers "stopped".
pub(crate) type Answer = oneshot::Sender<Result<(), ThreadError>>;

impl Pending {
    /// A pending answer and the sender that resolves it.
    pub(crate) fn channel() -> (Answer, Self) {
        let (answer, pending) = oneshot::channel();
        (answer, Self(PendingState::Queued(pending)))
    }

    /// An answer that needs no disk: nothing was written.
    pub fn nothing() -> Self {
        Self(PendingState::Nothing)
    }

    /// Waits, without blocking the thread, until the records are durable.
    pub async fn durable(self) -> Result<(), ThreadError> {
        match self.0 {
            PendingState::Nothing => Ok(()),
            PendingState::Queued(answer) => answer.await.unwrap_or_else(|_| Err(stopped())),
        }
    }

    /// Lets the records be written without waiting for them. They still reach the rollout in
    /// order with the thread's other records, so once a later record of the same thread is
    /// durable, so are these; a failure is logged by the committer.
    pub fn detach(self) {}

    /// Blocks the calling thread until the records are durable. For request handlers, which run
    /// on the blocking pool (see `pool::stored`), never on the async workers.
    pub fn wait(self) -> Result<(), ThreadError> {
        futures_executor::block_on(self.durable())
    }
}

impl Committer {
    /// Starts the committer thread of the store whose index is `index`.
    pub(crate) fn start(index: SharedIndex) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("agentwire-committer".to_owned())
            .spawn(move || run(&queue, &index))?;
        Ok(Self {
            jobs,
            thread: Some(thread),
        })
    }

    /// Queues `bytes` (whole records, each ending in a newline) for the rollout `file` at
    /// `path`; `row` is the thread's index row once they are in.
    pub(crate) fn submit(
        &self,
        file: &Arc<File>,
        path: PathBuf,
        bytes: Vec<u8>,
        row: IndexRow,
    ) -> Pending {
        let (done, pending) = Pending::channel();
        let job = Job {
            file: Arc::clone(file),
            bytes,
            path,
            row,
            done,
        };
        // A send fails only once the thread is gone; the dropped sender then answers
        // "stopped".
        let _ = self.jobs.send(job);
        pending
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has committed what is queued.
        self.jobs = mpsc::channel().0;
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the rollout committer panicked");
        }
    }
}

pub(crate) fn stopped() -> ThreadError {
    ThreadError::Storage("the rollout committer has stopped".to_owned())
}

/// Holds every group this many milliseconds before it is written: a test hook that widens the
/// moment between a record being queued and being on disk, so that a test through the binary
/// can see whether anything is announced before its record is written
/// (`tests/e2e/engine_crash.rs`). Unset (the default) means no delay.
const DELAY_VAR: &str = "AGENTWIRE_TEST_COMMIT_DELAY_MS";

/// The committer thread: commits groups until every handle is dropped.
fn run(queue: &mpsc::Receiver<Job>, index: &SharedIndex) {
    let delay = std::env::var(DELAY_VAR)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(std::time::Duration::from_millis);
    while let Ok(first) = queue.recv() {
        if let Some(delay) = delay {
            std::thread::sleep(delay);
        }
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match queue.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        commit(group, index);
    }
}

/// One rollout's share of a group.
struct Share {
    file: Arc<File>,
    path: PathBuf,
    bytes: Vec<u8>,
    /// Positions in the group of the jobs it holds, in order.
    jobs: Vec<usize>,
}

fn commit(group: Vec<Job>, index: &SharedIndex) {
    let mut shares: Vec<Share> = Vec::new();
    // The same open file is the same rollout (a loaded thread has one writer).
    let mut by_file: HashMap<*const File, usize> = HashMap::new();
    let mut rows = Vec::with_capacity(group.len());
    let mut answers = Vec::with_capacity(group.len());
    for (at, job) in group.into_iter().enumerate() {
        let share = *by_file.entry(Arc::as_ptr(&job.file)).or_insert_with(|| {
            shares.push(Share {
                file: Arc::clone(&job.file),
                path: job.path.clone(),
                bytes: Vec::new(),
                jobs: Vec::new(),
            });
            shares.len() - 1
        });
        shares[share].bytes.extend_from_slice(&job.bytes);
        shares[share].jobs.push(at);
        rows.push(Some(job.row));
        answers.push(Some(job.done));
    }

    let outcomes: Vec<Result<FileStamp, String>> = shares.iter().map(write_share).collect();

    // One row per durable rollout: its thread's last one (later jobs carry later summaries),
    // stamped as the file is after the whole group.
    let durable = shares.iter().zip(&outcomes).filter_map(|(share, outcome)| {
        let stamp = *outcome.as_ref().ok()?;
        let mut row = rows[*share.jobs.last()?].take()?;
        row.stamp = stamp;
        Some((row, &share.path))
    });
    update_index(index, durable);

    for (share, outcome) in shares.iter().zip(outcomes) {
        for &at in &share.jobs {
            if let Some(done) = answers[at].take() {
                let _ = done.send(outcome.clone().map(drop).map_err(ThreadError::Storage));
            }
        }
    }
}

/// Writes and syncs one rollout's share; its new stamp, or what went wrong.
fn write_share(share: &Share) -> Result<FileStamp, String> {
    let written = (&*share.file)
        .write_all(&share.bytes)
        .and_then(|()| share.file.sync_data())
        .and_then(|()| FileStamp::of(&share.file.metadata()?));
    written.map_err(|error| {
        tracing::warn!(path = %share.path.display(), %error, "rollout records not written");
        format!("cannot write {}: {error}", share.path.display())
    })
}

/// Writes `rows` and brings their threads' positions up to date (see [`Index::record`]).
fn update_index<'a>(index: &SharedIndex, rows: impl Iterator<Item = (IndexRow, &'a PathBuf)>) {
    for (row, path) in rows {
        // Locked one thread at a time: a `thread/list` waits for one row's work, not a group's.
        lock(index).record(&row, path);
    }
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;
    use std::path::Path;

    use super::*;
    use crate::index::tests::row;

    fn shared_index() -> SharedIndex {
        Arc::new(Mutex::new(Index::in_memory().expect("index opens")))
    }

    fn appending(path: &Path) -> Arc<File> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("rollout opens");
        Arc::new(file)
    }

    fn job(file: &Arc<File>, path: &Path, line: &str, row: IndexRow) -> (Job, Pending) {
        let (done, pending) = Pending::channel();
        let job = Job {
            file: Arc::clone(file),
            bytes: format!("{line}\n").into_bytes(),
            path: path.to_owned(),
            row,
            done,
        };
        (job, pending)
    }

    #[test]
    fn a_group_writes_each_rollout_in_order_and_indexes_each_thread_once_with_its_last_row() {
        let dir = tempfile::tempdir().expect("scratch dir");
        let (a_path, b_path) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
        let (a, b) = (appending(&a_path), appending(&b_path));
        let index = shared_index();
        let mut jobs = Vec::new();
        let mut answers = Vec::new();
        for (file, path, line, row) in [
            (&a, &a_path, "a1", row("a", 1, Some("first"))),
            (&b, &b_path, "b1", row("b", 2, None)),
            (&a, &a_path, "a2", row("a", 1, Some("second"))),
            (&a, &a_path, "a3", row("a", 1, Some("third"))),
        ] {
            let (job, answer) = job(file, path, line, row);
            jobs.push(job);
            answers.push(answer);
        }
        commit(jobs, &index);
        for answer in answers {
            answer.wait().expect("durable");
        }
        assert_eq!(
            std::fs::read_to_string(&a_path).expect("rollout a"),
            "a1\na2\na3\n"
        );
        assert_eq!(std::fs::read_to_string(&b_path).expect("rollout b"), "b1\n");
        let index = lock(&index);
        let a_row = index.get("a").expect("index read").expect("a indexed");
        assert_eq!(a_row.summary.name.as_deref(), Some("third"));
        assert_eq!(
            a_row.stamp.len, 9,
            "the stamp is the file's after the whole group"
        );
        assert_eq!(
            index
                .get("b")
                .expect("index read")
                .expect("b indexed")
                .stamp
                .len,
            3
        );
    }

    #[test]
    fn a_rollout_that_cannot_be_written_fails_its_jobs_alone() {
        let dir = tempfile::tempdir().expect("scratch dir");
        let good_path = dir.path().join("good.jsonl");
        let bad_path = dir.path().join("bad.jsonl");
        std::fs::write(&bad_path, "").expect("scratch file");
        // Opened for reading only: every write to it fails.
        let bad = Arc::new(File::open(&bad_path).expect("scratch file"));
        let good = appending(&good_path);
        let index = shared_index();
        let (bad_job, bad_answer) = job(&bad, &bad_path, "x", row("bad", 1, None));
        let (good_job, good_answer) = job(&good, &good_path, "y", row("good", 1, None));
        commit(vec![bad_job, good_job], &index);
        let error = bad_answer.wait().expect_err("the write fails");
        assert!(
            error.to_string().contains("bad.jsonl"),
            "the error names the rollout: {error}"
        );
        good_answer.wait().expect("the other rollout is durable");
        let index = lock(&index);
        assert!(
            index.get("bad").expect("index read").is_none(),
            "no row for a failed write"
        );
        assert!(index.get("good").expect("index read").is_some());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn records_from_many_tasks_are_all_durable_in_order_through_the_thread() {
        let dir = tempfile::tempdir().expect("scratch dir");
        let committer = Committer::start(shared_index()).expect("committer starts");
        let committer = Arc::new(committer);
        let mut tasks = Vec::new();
        for thread in 0..8 {
            let committer = Arc::clone(&committer);
            let path = dir.path().join(format!("t{thread}.jsonl"));
            tasks.push(tokio::spawn(async move {
                let file = appending(&path);
                for n in 0..50 {
                    let row = row(&format!("t{thread}"), 1, None);
                    let bytes = format!("{n}\n").into_bytes();
                    committer
                        .submit(&file, path.clone(), bytes, row)
                        .durable()
                        .await
                        .expect("durable");
                }
                path
            }));
        }
        for task in tasks {
            let path = task.await.expect("task ends");
            let lines: Vec<String> = std::fs::read_to_string(&path)
                .expect("rollout")
                .lines()
                .map(str::to_owned)
                .collect();
            let expected: Vec<String> = (0..50).map(|n| n.to_string()).collect();
            assert_eq!(lines, expected, "{}", path.display());
        }
    }

    #[test]
    fn a_stopped_committer_answers_with_an_error() {
        let (jobs, queue) = mpsc::channel::<Job>();
        drop(queue);
        let committer = Committer { jobs, thread: None };
        let dir = tempfile::tempdir().expect("scratch dir");
        let path = dir.path().join("r.jsonl");
        let pending = committer.submit(
            &appending(&path),
            path.clone(),
            b"x\n".to_vec(),
            row("r", 1, None),
        );
        let error = pending.wait().expect_err("nobody commits");
        assert!(
            error.to_string().contains("committer has stopped"),
            "{error}"
        );
    }
}
