//! `--record FILE`: a transcript of every message in and out of every connection.
//!
//! One JSON object a line, written as the message passes (inbound before it is handled,
//! outbound before it is queued for the transport, so a request always precedes its answer):
//! `{"session": "c<connection>", "dir": "client->server" | "server->client", "line": "<message>",
//! "ts": <milliseconds since the Unix epoch>}`. Messages are already bounded by the
//! transport's size limit; one that was refused for its size is not recorded.
//!
//! The file is written by a thread of its own (`agentwire-record`), never on the message path:
//! recording a message queues its line (in order; the queue does not block), and the thread
//! writes each line in one write as it comes, so a crash loses at most the lines not written
//! yet. [`Recorder::flush`] waits until every line queued before it is in the file (the
//! server's drain does, before it returns).

// On the async path: no blocking call here (see clippy.toml); code that runs on the blocking
// pool or a thread of its own says so where it allows one.
#![deny(clippy::disallowed_methods)]

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::handler::ConnectionId;

/// Which way a recorded message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Read from the client.
    Inbound,
    /// Sent to the client.
    Outbound,
}

#[derive(Serialize)]
struct Record<'a> {
    session: &'a str,
    dir: &'static str,
    line: &'a str,
    ts: u64,
}

/// What the writer thread is asked to do.
enum Job {
    /// Append one line (its newline included).
    Line(Vec<u8>),
    /// Say when every line queued before this is written (or dropped after a write error).
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// Appends transcript lines to a file, from a thread of its own.
pub struct Recorder {
    jobs: mpsc::Sender<Job>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    /// Creates (or truncates) `path`, readable and writable by the user alone: the transcript
    /// holds whatever the clients send, API keys given to `account/login/start` included.
    ///
    /// What is opened is checked on the open descriptor before a byte of it changes: it must be
    /// a regular file owned by the server's own user with a single link. A symbolic link at
    /// `path` is refused rather than followed, and so are a file another user created there
    /// first (it would stay theirs, and they could read the transcript: issue #32), a FIFO or
    /// a device (opened without blocking, then refused), and a hard link to a file of the
    /// user's kept elsewhere. A file of the user's own is emptied and made private (0600)
    /// before anything is written to it.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        use rustix::fs::{FileType, Mode, OFlags};
        let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::PermissionDenied, why);
        // No `TRUNC` yet: nothing of a file that is refused below may change.
        let fd = rustix::fs::open(
            path,
            OFlags::WRONLY
                | OFlags::CREATE
                | OFlags::NOFOLLOW
                | OFlags::NONBLOCK
                | OFlags::NOCTTY
                | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )
        .map_err(|e| match e {
            rustix::io::Errno::LOOP => refuse(
                "it is a symbolic link; the transcript is never written through a link".to_owned(),
            ),
            rustix::io::Errno::NXIO => {
                refuse("it is a FIFO or socket, not a regular file".to_owned())
            }
            other => std::io::Error::from(other),
        })?;
        let stat = rustix::fs::fstat(&fd)?;
        let kind = FileType::from_raw_mode(stat.st_mode);
        if kind != FileType::RegularFile {
            return Err(refuse(format!("it is not a regular file ({kind:?})")));
        }
        let me = rustix::process::geteuid().as_raw();
        if stat.st_uid != me {
            return Err(refuse(format!(
                "the file exists and belongs to uid {}, not to this server's uid {me}; it was \
                 created by someone else, who could read the transcript (remove it, or record \
                 elsewhere)",
                stat.st_uid
            )));
        }
        if stat.st_nlink != 1 {
            return Err(refuse(format!(
                "the file has {} hard links; the transcript is only written to a file with one \
                 name",
                stat.st_nlink
            )));
        }
        rustix::fs::fchmod(&fd, Mode::RUSR | Mode::WUSR)?;
        rustix::fs::ftruncate(&fd, 0)?;
        // Writes block as on any file: the flag only kept the `open` from waiting.
        rustix::fs::fcntl_setfl(&fd, OFlags::empty())?;
        let file = File::from(fd);
        let (jobs, queue) = mpsc::channel();
        std::thread::Builder::new()
            .name("agentwire-record".to_owned())
            .spawn(move || write_all(file, &queue))?;
        Ok(Self { jobs })
    }

    /// Waits until every message recorded before this call is written to the file (or was
    /// dropped because writing failed). Returns at once when the writer has stopped.
    pub async fn flush(&self) {
        let (done, written) = tokio::sync::oneshot::channel();
        if self.jobs.send(Job::Flush(done)).is_ok() {
            let _ = written.await;
        }
    }

    /// Records one message of `connection`. A write error stops the recording (logged once);
    /// the session goes on.
    pub fn record(&self, connection: ConnectionId, direction: Direction, message: &[u8]) {
        let line = String::from_utf8_lossy(message);
        let session = format!("c{}", connection.0);
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let record = Record {
            session: &session,
            dir: match direction {
                Direction::Inbound => "client->server",
                Direction::Outbound => "server->client",
            },
            line: line.trim_end_matches(['\r', '\n']),
            ts,
        };
        let Ok(mut bytes) = serde_json::to_vec(&record) else {
            return;
        };
        bytes.push(b'\n');
        // Fails only once the writer has stopped, which it logged.
        let _ = self.jobs.send(Job::Line(bytes));
    }
}

/// The writer thread: writes each queued line to `file` in one write, until every
/// [`Recorder`] is gone. A write error stops the recording (logged once); later lines are
/// dropped, and the session goes on.
#[allow(
    clippy::disallowed_methods,
    reason = "the writer runs on its own thread, where waiting on the queue is its job"
)]
fn write_all(mut file: File, queue: &mpsc::Receiver<Job>) {
    let mut failed = false;
    while let Ok(job) = queue.recv() {
        match job {
            Job::Line(bytes) if !failed => {
                if let Err(e) = file.write_all(&bytes) {
                    tracing::error!(
                        "--record: cannot write the transcript ({e}); recording stopped"
                    );
                    failed = true;
                }
            }
            Job::Line(_) => {}
            Job::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}
