//! Stdout that a client which stops reading cannot stall.
//!
//! A message is written inline, by whoever sends it, when the pipe or socket takes it at once
//! (the lockstep path: one `write`, as before). When it would block, what is left goes to a
//! bounded queue that a thread of its own writes out with blocking writes; later messages
//! queue behind it (so the order holds) until the queue is empty again. So the runtime never
//! waits for the client to read. A client that stops reading for good fills the queue to its
//! limit: the output then fails, and the connection is closed, instead of memory growing.
//!
//! Writing inline without blocking takes a descriptor of our own in non-blocking mode:
//!
//! - a pipe is opened again through `/proc/self/fd/1`, which makes a new open file description
//!   (switching stdout itself to non-blocking mode would switch it for whoever shares it);
//! - a socket is written with `send(MSG_DONTWAIT)`, which blocks no descriptor.
//!
//! Anything else (a regular file, a terminal, no `/proc`) is written with blocking writes, as
//! before.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::FileTypeExt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::outbound::Backlog;

/// How the inline attempt is made.
enum Inline {
    /// A non-blocking description of the same pipe.
    Pipe(File),
    /// `send(MSG_DONTWAIT)` on the socket.
    Socket,
}

/// The queue between the senders and the writer thread.
struct State {
    /// Bytes waiting, in order.
    queue: VecDeque<Vec<u8>>,
    /// Their total.
    queued: usize,
    /// Whether the writer thread is writing a chunk it took off the queue.
    writing: bool,
    /// Set once a write failed (the client closed its end) or the queue overflowed: every
    /// later write fails.
    failed: Option<String>,
    /// No more writes are coming: the thread ends once the queue is written.
    closing: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer thread (something queued, or closing) and [`Drained::wait`] (the
    /// queue emptied).
    changed: Condvar,
    /// Most bytes the queue holds.
    limit: usize,
    /// `queued`, for senders that wait for room (a command's output pump).
    backlog: Arc<Backlog>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Stdout: inline writes while the client keeps up, a writer thread while it does not.
pub(super) struct Stdout {
    /// The blocking descriptor (the writer thread's; also the inline one for sockets).
    file: Arc<File>,
    inline: Inline,
    shared: Arc<Shared>,
}

/// Waits for what is queued to be written (see [`Stdout::open`]).
pub(super) struct Drained {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drained {
    /// Tells the writer thread that nothing more comes, and waits until it has written what
    /// is queued. Once the output has failed nothing more is written: the thread is left to
    /// end with the process, since it may be stuck for good in a write that a client which
    /// stopped reading never takes.
    pub(super) fn wait(mut self) {
        let failed = {
            let mut state = self.shared.lock();
            state.closing = true;
            state.failed.is_some()
        };
        self.shared.changed.notify_all();
        if failed {
            return;
        }
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::warn!("the stdout writer thread panicked");
        }
    }
}

impl Stdout {
    /// Stdout over `file` (a duplicate of descriptor 1) when it is a pipe or a socket that can
    /// be written without blocking, with a queue of at most `limit` bytes; `None` otherwise
    /// (the caller then writes `file` with blocking writes).
    pub(super) fn open(file: &File, limit: usize) -> Option<(Self, Drained)> {
        let file = file.try_clone().ok()?;
        let kind = file.metadata().ok()?.file_type();
        let inline = if kind.is_fifo() {
            let own = rustix::fs::open(
                "/proc/self/fd/1",
                rustix::fs::OFlags::WRONLY
                    | rustix::fs::OFlags::NONBLOCK
                    | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .inspect_err(|error| tracing::debug!(%error, "stdout written with blocking writes"))
            .ok()?;
            // It must be the same pipe (descriptor 1 is what `file` duplicates).
            let same = rustix::fs::fstat(&own)
                .ok()
                .zip(rustix::fs::fstat(&file).ok());
            if same.is_none_or(|(a, b)| (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino)) {
                return None;
            }
            Inline::Pipe(File::from(own))
        } else if kind.is_socket() {
            Inline::Socket
        } else {
            return None;
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                queued: 0,
                writing: false,
                failed: None,
                closing: false,
            }),
            changed: Condvar::new(),
            limit,
            backlog: Arc::default(),
        });
        let file = Arc::new(file);
        let thread = {
            let (file, shared) = (file.clone(), shared.clone());
            std::thread::Builder::new()
                .name("stdout".into())
                .spawn(move || write_queued(&file, &shared))
                .inspect_err(|error| tracing::debug!(%error, "no stdout writer thread"))
                .ok()?
        };
        Some((
            Self {
                file,
                inline,
                shared: shared.clone(),
            },
            Drained {
                shared,
                thread: Some(thread),
            },
        ))
    }

    /// The bytes queued and not yet written, for senders that wait for room.
    pub(super) fn backlog(&self) -> Arc<Backlog> {
        self.shared.backlog.clone()
    }

    /// Writes what the descriptor takes at once; how many bytes that was.
    fn try_write(&self, bytes: &[u8]) -> std::io::Result<usize> {
        let written = match &self.inline {
            Inline::Pipe(pipe) => (&*pipe).write(bytes),
            Inline::Socket => rustix::net::send(
                self.file.as_fd(),
                bytes,
                rustix::net::SendFlags::DONTWAIT | rustix::net::SendFlags::NOSIGNAL,
            )
            .map_err(std::io::Error::from),
        };
        match written {
            Ok(n) => Ok(n),
            Err(error) if error.kind() == ErrorKind::WouldBlock => Ok(0),
            Err(error) if error.kind() == ErrorKind::Interrupted => Ok(0),
            Err(error) => Err(error),
        }
    }
}

impl Write for Stdout {
    /// Takes all of `bytes`: written now, or queued behind what is waiting.
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut state = self.shared.lock();
        if let Some(reason) = &state.failed {
            return Err(std::io::Error::other(reason.clone()));
        }
        let mut rest = bytes;
        if state.queue.is_empty() && !state.writing {
            // Nothing waits: the lockstep path. The lock is held so that the writer thread
            // cannot start on something newer meanwhile (it only takes what is queued).
            while !rest.is_empty() {
                let n = self.try_write(rest).inspect_err(|error| {
                    state.failed = Some(format!("writing stdout failed: {error}"));
                })?;
                if n == 0 {
                    break;
                }
                rest = &rest[n..];
            }
            if rest.is_empty() {
                return Ok(bytes.len());
            }
        }
        if state.queued + rest.len() > self.shared.limit {
            let reason = format!(
                "the client is not reading stdout: {} bytes are waiting (at most {})",
                state.queued + rest.len(),
                self.shared.limit
            );
            state.failed = Some(reason.clone());
            state.queue.clear();
            state.queued = 0;
            self.shared.backlog.set(0);
            self.shared.changed.notify_all();
            return Err(std::io::Error::other(reason));
        }
        state.queue.push_back(rest.to_vec());
        state.queued += rest.len();
        self.shared.backlog.set(state.queued);
        self.shared.changed.notify_all();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The writer thread: writes what is queued, in order, with blocking writes, until told that
/// nothing more comes and the queue is empty, or its output fails.
fn write_queued(file: &File, shared: &Shared) {
    let mut state = shared.lock();
    loop {
        if state.failed.is_some() {
            return;
        }
        let Some(chunk) = state.queue.pop_front() else {
            if state.closing {
                return;
            }
            state = shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        state.writing = true;
        drop(state);
        let written = (&*file).write_all(&chunk);
        state = shared.lock();
        state.writing = false;
        state.queued = state.queued.saturating_sub(chunk.len());
        if let Err(error) = written {
            tracing::warn!(%error, "stdout closed");
            state.failed = Some(format!("writing stdout failed: {error}"));
            state.queue.clear();
            state.queued = 0;
            shared.backlog.set(0);
            return;
        }
        shared.backlog.set(state.queued);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::fd::OwnedFd;

    use super::*;

    /// A pipe whose write end is descriptor 1 cannot be set up in a unit test without
    /// disturbing the test runner's stdout, so these tests use a socket pair (the `send`
    /// path); the end-to-end tests cover pipes.
    fn socket_stdout(limit: usize) -> (Stdout, Drained, std::os::unix::net::UnixStream) {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("socket pair");
        let file = File::from(OwnedFd::from(ours));
        let (stdout, drained) = Stdout::open(&file, limit).expect("a socket is written inline");
        (stdout, drained, theirs)
    }

    #[test]
    fn a_reader_that_stops_never_blocks_the_writer_and_gets_everything_in_order() {
        let (mut stdout, drained, mut reader) = socket_stdout(64 * 1024 * 1024);
        let line = |i: usize| format!("{i:08} {}\n", "x".repeat(1000));
        // Far more than a socket buffer holds, with nobody reading: every write returns.
        let count = 4000;
        for i in 0..count {
            stdout.write_all(line(i).as_bytes()).expect("queued");
        }
        let queued = stdout.shared.lock().queued;
        assert!(queued > 0, "nothing was queued");
        let reading = std::thread::spawn(move || {
            let mut all = String::new();
            reader.read_to_string(&mut all).expect("read");
            all
        });
        drop(stdout);
        drained.wait();
        let all = reading.join().expect("reader");
        let expected: String = (0..count).map(line).collect();
        assert_eq!(all.len(), expected.len());
        assert!(all == expected, "out of order or lost");
    }

    #[test]
    fn a_full_queue_fails_the_output_with_the_reason() {
        let (mut stdout, drained, reader) = socket_stdout(16 * 1024);
        let line = vec![b'y'; 4096];
        let failed = (0..10_000)
            .find_map(|_| stdout.write_all(&line).err())
            .expect("the queue overflows");
        assert!(
            failed.to_string().contains("not reading stdout"),
            "{failed}"
        );
        // Every later write fails too.
        assert!(stdout.write_all(b"late\n").is_err());
        drop(reader);
        drained.wait();
    }
}
