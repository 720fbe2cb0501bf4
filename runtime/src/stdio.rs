//! The stdio transport: one JSON message per line on stdin and stdout.
//!
//! Stdout carries protocol messages only (logs go to stderr). End of input shuts down in order:
//! stop reading, let requests in flight answer (bounded by the shutdown grace), let the work
//! they started finish and send what it has to send (notifications due after an answer, running
//! turns: see [`Server::drain`]), close the connection, return. [`Server::stop`] (a termination
//! signal) ends the input at once and interrupts running turns instead of waiting for them.
//!
//! # How it is fast
//!
//! A lockstep round trip over pipes costs tens of microseconds, almost all of it in waking
//! threads; parsing, validating and answering a cheap request costs about one microsecond. So
//! the path of a request avoids crossing threads and system calls:
//!
//! - The connection is served by one task on the server's current-thread runtime. Each chunk
//!   of input is split into lines and every message is handed to
//!   [`Server::handle_message_inline`], which polls the request's work right there: a cheap
//!   request is answered without spawning a task or waking another thread.
//! - Answers produced while a chunk is handled are collected and written with one `write`
//!   once the chunk is done, or earlier once the first of them has waited [`BATCH_DELAY`]
//!   (see `LineOutbound`); messages sent at any other time (work that finished later,
//!   notifications) are written at once, one `write` each.
//! - When stdin is a pipe or a socket (what a parent process gives its child), it is read
//!   through the runtime's reactor: no reader thread at all, and with `Runtime::block_on` as
//!   the caller's `block_on`, no thread but the calling one. Anything else (a regular file, a
//!   terminal) and [`serve_lines`] (any `Read`, e.g. an in-process pipe) is read by a thread of
//!   its own, which hands whole chunks (not messages) to the task through a small bounded
//!   channel.
//! - While the client sends its next message soon after an answer (a lockstep exchange),
//!   the task keeps looking for it for a moment instead of sleeping (see `busy_poll`): waking
//!   a sleeping CPU costs more than the whole request.
//!
//! Stdout (a pipe or a socket) is written inline, with one `write` that never blocks, while the
//! client keeps up; what it does not take at once goes to a bounded queue written by a thread of
//! its own (see `writer`), so a client that stops reading never blocks the runtime (its other
//! work: running turns, the rollouts, the input). A client that stops reading for good fills the
//! queue (`RuntimeConfig::stdout_queue_bytes`) and is disconnected: the output fails (as when
//! the client closes its end), the connection's task stops reading and drains as at end of
//! input, sending nothing more, and [`serve`] returns the failure without waiting for the
//! writer thread, which may be stuck for good in a write the client never takes (stdout ends
//! with the process, maybe in the middle of a line). Other outputs (a regular file, a
//! terminal) are written with plain blocking writes.
//!
//! The caller's `block_on` runs the connection to its end: either `Runtime::block_on` of the
//! server's runtime on the calling thread (which then drives it), or `Handle::block_on` while
//! another thread drives the runtime.

use std::fs::File;
use std::future::Future;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;
use tokio::net::unix::pipe;
use tokio::sync::{Notify, mpsc};

pub mod busy_poll;
mod writer;

use busy_poll::BusyPoll;

use crate::connection::Connection;
use crate::dispatch::Handler;
use crate::framing::{FrameEvent, LineFramer};
use crate::outbound::{Backlog, Closed, Outbound};
use crate::server::Server;

/// A future for the caller's `block_on`: the connection's whole life, final drain included.
pub type Drain<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Bytes read at once.
const CHUNK: usize = 64 * 1024;
/// Chunks read ahead by a reader thread before it waits for the connection's task.
const CHUNKS_AHEAD: usize = 4;
/// A batch of answers is written out early once it holds this many bytes, so that the batch
/// buffer stays small whatever the answers weigh.
const BATCH_BYTES: usize = 64 * 1024;
/// A batch of answers is written out early once its first answer has waited this long: the
/// client reads the first answers to a long chunk while the rest are being worked out, instead
/// of the two sides taking turns (at 32 requests in flight that doubles the round trips per
/// second), and batching delays no answer by more. About what a write costs, so writes take
/// at most a fraction of the time however many answers there are.
pub const BATCH_DELAY: Duration = Duration::from_micros(10);

/// Writes messages to a byte stream, one per line. Between [`LineOutbound::begin_batch`] and
/// [`LineOutbound::end_batch`] messages are collected and written together.
struct LineOutbound<W> {
    closed: AtomicBool,
    /// Why a write failed, once one did.
    failure: OnceLock<String>,
    /// Wakes the connection's task once the output is closed: it stops reading.
    on_close: Notify,
    /// How long the first line of a batch may wait for the others ([`BATCH_DELAY`]).
    delay: Duration,
    output: Mutex<Output<W>>,
    /// What the output has queued and not written yet, when it queues (`writer::Stdout`).
    backlog: Option<Arc<Backlog>>,
}

struct Output<W> {
    writer: W,
    /// Lines collected while batching.
    batch: Vec<u8>,
    /// When the first line in `batch` was collected.
    oldest: Option<Instant>,
    batching: bool,
}

impl<W: Write> LineOutbound<W> {
    fn new(writer: W, delay: Duration, backlog: Option<Arc<Backlog>>) -> Self {
        Self {
            backlog,
            closed: AtomicBool::new(false),
            failure: OnceLock::new(),
            on_close: Notify::new(),
            delay,
            output: Mutex::new(Output {
                writer,
                batch: Vec::with_capacity(BATCH_BYTES),
                oldest: None,
                batching: false,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Output<W>> {
        // Nothing panics while holding the lock; recover the data if something ever did.
        self.output.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes `bytes`; a failure closes the output for good.
    fn write(&self, writer: &mut W, bytes: &[u8]) -> Result<(), Closed> {
        match writer.write_all(bytes).and_then(|()| writer.flush()) {
            Ok(()) => Ok(()),
            Err(error) => {
                tracing::warn!(%error, "output closed");
                let _ = self.failure.set(error.to_string());
                self.shut();
                Err(Closed)
            }
        }
    }

    /// Closes the output for good and tells the connection's task.
    fn shut(&self) {
        self.closed.store(true, Ordering::Release);
        self.on_close.notify_one();
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Collects messages from now on instead of writing each.
    fn begin_batch(&self) {
        self.lock().batching = true;
    }

    /// Writes what was collected since [`LineOutbound::begin_batch`], with one write.
    fn end_batch(&self) -> Result<(), Closed> {
        let mut output = self.lock();
        output.batching = false;
        self.write_batch(&mut output)
    }

    /// Writes the lines collected so far, if any.
    fn write_batch(&self, output: &mut Output<W>) -> Result<(), Closed> {
        output.oldest = None;
        if output.batch.is_empty() {
            return Ok(());
        }
        let result = self.write(&mut output.writer, &output.batch);
        output.batch.clear();
        result
    }
}

impl<W: Write + Send + 'static> Outbound for Arc<LineOutbound<W>> {
    fn send(&self, mut message: Vec<u8>) -> Result<(), Closed> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Closed);
        }
        message.push(b'\n');
        let mut output = self.lock();
        let output = &mut *output;
        if !output.batching {
            return self.write(&mut output.writer, &message);
        }
        if output.batch.len() + message.len() <= BATCH_BYTES {
            output.batch.extend_from_slice(&message);
            let now = Instant::now();
            let oldest = *output.oldest.get_or_insert(now);
            if now.duration_since(oldest) < self.delay {
                return Ok(());
            }
            return self.write_batch(output);
        }
        // Too much for one batch: write what was collected, then this message, in order.
        self.write_batch(output)?;
        self.write(&mut output.writer, &message)
    }

    fn close(&self) {
        self.shut();
    }

    fn backlog(&self) -> Option<&Backlog> {
        self.backlog.as_deref()
    }
}

/// Where the connection's task gets its input from.
enum Input {
    /// A pipe, registered with the runtime's reactor.
    Pipe(pipe::Receiver),
    /// A stream socket (Node.js gives its children socket pairs), registered with the reactor.
    Socket(UnixStream),
    /// Chunks read by a thread; `last` holds the one being handled.
    Thread {
        chunks: mpsc::Receiver<std::io::Result<Vec<u8>>>,
        last: Vec<u8>,
    },
}

impl Input {
    /// The next chunk of input; empty at end of input. Until `poll_until` it is looked for
    /// without sleeping (see [`BusyPoll`]).
    async fn read<'a>(
        &'a mut self,
        buffer: &'a mut [u8],
        poll_until: Option<Instant>,
    ) -> std::io::Result<&'a [u8]> {
        if let Some(deadline) = poll_until {
            while Instant::now() < deadline {
                match self.try_read(buffer) {
                    Ok(n) => return Ok(&buffer[..n]),
                    Err(error) if error.kind() == ErrorKind::WouldBlock => {
                        tokio::task::yield_now().await;
                    }
                    Err(error) => return Err(error),
                }
            }
        }
        match self {
            Input::Pipe(pipe) => {
                let n = pipe.read(buffer).await?;
                Ok(&buffer[..n])
            }
            Input::Socket(socket) => {
                let n = socket.read(buffer).await?;
                Ok(&buffer[..n])
            }
            Input::Thread { chunks, last } => match chunks.recv().await {
                Some(Ok(chunk)) => {
                    *last = chunk;
                    Ok(last)
                }
                Some(Err(error)) => Err(error),
                None => Ok(&[]),
            },
        }
    }

    /// Reads what is there without waiting: `WouldBlock` when nothing is (or the reactor has
    /// not seen it yet; yielding to the runtime lets it look).
    fn try_read(&self, buffer: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Input::Pipe(pipe) => pipe.try_read(buffer),
            Input::Socket(socket) => socket.try_read(buffer),
            Input::Thread { .. } => Err(ErrorKind::WouldBlock.into()),
        }
    }

    /// How long to poll for input after answering: a reader thread sleeps in `read` whatever
    /// the connection's task does, so polling its channel would gain nothing.
    fn busy_poll(&self, window: Duration) -> BusyPoll {
        match self {
            Input::Pipe(_) | Input::Socket(_) => BusyPoll::new(window),
            Input::Thread { .. } => BusyPoll::new(Duration::ZERO),
        }
    }

    /// Puts a reactor-registered descriptor back in blocking mode: the open file description
    /// is shared with whoever else holds it (the parent, after we exit).
    fn restore(self) {
        let restored = match self {
            Input::Pipe(pipe) => pipe.into_blocking_fd().map(drop),
            Input::Socket(socket) => socket
                .into_std()
                .and_then(|socket| socket.set_nonblocking(false)),
            Input::Thread { .. } => Ok(()),
        };
        if let Err(error) = restored {
            tracing::debug!(%error, "stdin left non-blocking");
        }
    }
}

/// Serves one connection over stdin/stdout until stdin ends, or until stdout fails (an error
/// then, with the reason). Blocks the calling thread in `block_on`, which must run the future
/// it gets to completion (see the module docs).
pub fn serve<H: Handler>(
    server: &Server<H>,
    block_on: impl FnOnce(Drain<'_>),
) -> std::io::Result<()> {
    let Ok(stdout) = std::io::stdout().as_fd().try_clone_to_owned() else {
        return serve_lines(server, std::io::stdin(), std::io::stdout(), block_on);
    };
    let stdout = File::from(stdout);
    let Some(input) = reactor_stdin(server, &stdout) else {
        return serve_lines(server, std::io::stdin(), stdout, block_on);
    };
    match writer::Stdout::open(&stdout, server.config().stdout_queue_bytes) {
        Some((output, drained)) => {
            let backlog = Some(output.backlog());
            run(
                server,
                input,
                None::<fn()>,
                (output, backlog),
                block_on,
                move || {
                    drained.wait();
                },
            )
        }
        None => run(server, input, None::<fn()>, (stdout, None), block_on, || {}),
    }
}

/// Stdin registered with the server's reactor, when it is a pipe or a socket of its own.
fn reactor_stdin<H: Handler>(server: &Server<H>, stdout: &File) -> Option<Input> {
    let stdin = File::from(std::io::stdin().as_fd().try_clone_to_owned().ok()?);
    let meta = stdin.metadata().ok()?;
    // Switching a descriptor to non-blocking mode switches every duplicate of it: stdout must
    // not be the same file (a socket passed as both), or its blocking writes would fail.
    let out = stdout.metadata().ok()?;
    if (meta.dev(), meta.ino()) == (out.dev(), out.ino()) {
        return None;
    }
    let kind = meta.file_type();
    let fd = OwnedFd::from(stdin);
    let _runtime = server.runtime().enter();
    let input = if kind.is_fifo() {
        pipe::Receiver::from_owned_fd(fd).map(Input::Pipe)
    } else if kind.is_socket() {
        let socket = std::os::unix::net::UnixStream::from(fd);
        socket
            .set_nonblocking(true)
            .and_then(|()| UnixStream::from_std(socket))
            .map(Input::Socket)
    } else {
        return None;
    };
    input
        .inspect_err(|error| tracing::debug!(%error, "stdin read by a thread instead"))
        .ok()
}

/// Serves one connection over any pair of byte streams (pipes, in tests) with the stdio
/// framing, until `input` ends or `output` fails (an error then). A thread of its own reads
/// `input`; after a failed output it stops at the next chunk (or the end of `input`), and the
/// call returns then. The calling thread blocks in `block_on`, which must run the future it
/// gets to completion (see the module docs).
pub fn serve_lines<H: Handler>(
    server: &Server<H>,
    mut input: impl Read + Send,
    output: impl Write + Send + 'static,
    block_on: impl FnOnce(Drain<'_>),
) -> std::io::Result<()> {
    let (chunks, received) = mpsc::channel(CHUNKS_AHEAD);
    let feed = move || {
        let mut buffer = vec![0u8; CHUNK];
        loop {
            let chunk = match input.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => Ok(buffer[..n].to_vec()),
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                Err(error) => Err(error),
            };
            let failed = chunk.is_err();
            // The connection's task is gone only if it could not go on; stop reading then.
            if chunks.blocking_send(chunk).is_err() || failed {
                break;
            }
        }
    };
    let input = Input::Thread {
        chunks: received,
        last: Vec::new(),
    };
    run(server, input, Some(feed), (output, None), block_on, || {})
}

/// Opens the connection, runs its task on the server's runtime (and `feed` on a thread of its
/// own, if the input comes from a thread), waits for the end and closes it; then `flushed`
/// waits for the output to be written out.
fn run<H: Handler, W: Write + Send + 'static>(
    server: &Server<H>,
    input: Input,
    feed: Option<impl FnOnce() + Send>,
    (output, backlog): (W, Option<Arc<Backlog>>),
    block_on: impl FnOnce(Drain<'_>),
    flushed: impl FnOnce(),
) -> std::io::Result<()> {
    let outbound = Arc::new(LineOutbound::new(output, BATCH_DELAY, backlog));
    let connection = server.hub().open(Box::new(outbound.clone()));
    tracing::info!(
        connection = connection.id().0,
        transport = "stdio",
        "connection opened"
    );
    let _open = crate::telemetry::connection_opened("stdio");
    connection.set_origin("stdio", None);
    let task = server.runtime().spawn(serve_connection(
        server.clone(),
        input,
        outbound.clone(),
        connection.clone(),
    ));
    let mut ended = None;
    let reader = std::thread::scope(|scope| {
        let reader = feed
            .map(|feed| {
                std::thread::Builder::new()
                    .name("stdin".into())
                    .spawn_scoped(scope, feed)
            })
            .transpose();
        // A reader that failed to start has dropped its end of the channel: the task sees the
        // end of input and finishes.
        block_on(Box::pin(async {
            ended = Some(task.await);
        }));
        reader.map(drop)
    });
    server.hub().close(connection.id());
    flushed();
    let reason = match ended {
        Some(Ok(reason)) => reason,
        _ => "runtime stopped",
    };
    tracing::info!(
        connection = connection.id().0,
        transport = "stdio",
        reason,
        "connection closed"
    );
    reader?;
    match ended {
        Some(Ok(OUTPUT_CLOSED)) => Err(std::io::Error::other(
            outbound
                .failure
                .get()
                .map_or(OUTPUT_CLOSED, String::as_str)
                .to_owned(),
        )),
        Some(Ok(_)) => Ok(()),
        Some(Err(error)) => Err(std::io::Error::other(error)),
        None => Err(std::io::Error::other("the connection task did not finish")),
    }
}

/// Why the connection ended when its output failed (a client that stopped reading for good
/// filled the queue, or closed its end).
const OUTPUT_CLOSED: &str = "output closed";

/// The connection's task: reads chunks, handles their messages and writes their answers in
/// one go, until end of input or until the output fails (the connection is closed: nothing
/// more is read); then drains. Returns why it ended.
async fn serve_connection<H: Handler, W: Write + Send + 'static>(
    server: Server<H>,
    mut input: Input,
    outbound: Arc<LineOutbound<W>>,
    connection: Arc<Connection>,
) -> &'static str {
    let mut framer = LineFramer::new(server.config().max_message_bytes);
    let mut buffer = vec![0u8; CHUNK];
    let mut poll = input.busy_poll(server.config().stdin_busy_poll);
    let mut handle = |event: FrameEvent<'_>| match event {
        FrameEvent::Message(bytes) => server.handle_message_inline(&connection, bytes),
        FrameEvent::TooLarge { bytes } => server.refuse_oversized(&connection, bytes),
    };
    let mut stopping = std::pin::pin!(server.hub().stopping());
    // A write failed, here or in a request's work (a client that stopped reading, or closed
    // its end): the connection is closed, nothing more is read.
    let mut output_closed = std::pin::pin!(outbound.on_close.notified());
    let reason = loop {
        if outbound.is_closed() {
            break OUTPUT_CLOSED;
        }
        let read = tokio::select! {
            biased;
            read = input.read(&mut buffer, poll.deadline()) => read,
            () = &mut stopping => break "stopped",
            () = &mut output_closed => break OUTPUT_CLOSED,
        };
        poll.arrived(Instant::now());
        let chunk = match read {
            Ok([]) => break "end of input",
            Ok(chunk) => chunk,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => {
                tracing::error!(%error, "reading input failed");
                break "read error";
            }
        };
        outbound.begin_batch();
        framer.push(chunk, &mut handle);
        if outbound.end_batch().is_err() {
            server.hub().close(connection.id());
        }
        poll.answered(Instant::now());
    };
    input.restore();
    if reason == OUTPUT_CLOSED {
        server.hub().close(connection.id());
    } else {
        outbound.begin_batch();
        framer.finish(&mut handle);
        if outbound.end_batch().is_err() {
            server.hub().close(connection.id());
        }
    }
    server.drain().await;
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps every write apart.
    #[derive(Clone, Default)]
    struct Writes(Arc<Mutex<Vec<String>>>);

    impl Writes {
        fn taken(&self) -> Vec<String> {
            std::mem::take(&mut *self.0.lock().expect("writes"))
        }
    }

    impl Write for Writes {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let text = String::from_utf8_lossy(bytes).into_owned();
            self.0.lock().expect("writes").push(text);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_batch_is_written_at_its_end_or_once_its_first_line_has_waited() {
        // Long enough that the sends below cannot be that far apart by accident.
        let delay = Duration::from_millis(200);
        let writes = Writes::default();
        let outbound = Arc::new(LineOutbound::new(writes.clone(), delay, None));
        let send = |text: &str| outbound.send(text.as_bytes().to_vec()).expect("open");

        outbound.begin_batch();
        send("1");
        send("2");
        assert_eq!(writes.taken(), Vec::<String>::new());
        std::thread::sleep(delay);
        send("3");
        assert_eq!(writes.taken(), ["1\n2\n3\n"]);
        send("4");
        outbound.end_batch().expect("open");
        assert_eq!(writes.taken(), ["4\n"]);

        // Outside a batch every line is written at once.
        send("5");
        assert_eq!(writes.taken(), ["5\n"]);
    }

    #[test]
    fn a_batch_never_holds_more_than_its_byte_limit() {
        let writes = Writes::default();
        let outbound = Arc::new(LineOutbound::new(
            writes.clone(),
            Duration::from_secs(60),
            None,
        ));
        let line = "x".repeat(BATCH_BYTES / 2);
        outbound.begin_batch();
        for _ in 0..3 {
            outbound.send(line.clone().into_bytes()).expect("open");
        }
        outbound.end_batch().expect("open");
        let sizes: Vec<usize> = writes.taken().iter().map(String::len).collect();
        let each = line.len() + 1;
        // Two lines would not fit: the first goes out alone, in order, before the second.
        assert_eq!(sizes, [each, each, each]);
    }
}
