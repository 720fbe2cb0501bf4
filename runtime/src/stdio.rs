//! The stdio transport: one JSON message per line on stdin and stdout.
//!
//! Stdout carries protocol messages only (logs go to stderr). The calling thread reads stdin
//! with plain blocking reads and hands each line to the server; responses and notifications are
//! written whole, one line each, under a lock. End of input shuts down in order: stop reading,
//! let requests in flight answer (bounded by the shutdown grace), close the connection, return.

use std::future::Future;
use std::io::{Read, Write};
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::dispatch::Handler;
use crate::framing::{FrameEvent, LineFramer};
use crate::outbound::{Closed, Outbound};
use crate::server::Server;

/// The final drain of requests in flight, for the caller to run on its runtime.
pub type Drain<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Writes messages to a byte stream, one per line, each with a single write.
struct LineOutbound<W> {
    closed: AtomicBool,
    writer: Mutex<W>,
}

impl<W: Write + Send + 'static> Outbound for LineOutbound<W> {
    fn send(&self, mut message: Vec<u8>) -> Result<(), Closed> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Closed);
        }
        message.push(b'\n');
        let mut writer = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match writer.write_all(&message).and_then(|()| writer.flush()) {
            Ok(()) => Ok(()),
            Err(error) => {
                tracing::warn!(%error, "output closed");
                self.closed.store(true, Ordering::Release);
                Err(Closed)
            }
        }
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }
}

/// Serves one connection over stdin/stdout until stdin ends. Blocks the calling thread, which
/// must not be a thread of the server's tokio runtime; `block_on` runs the final drain.
pub fn serve<H: Handler>(
    server: &Server<H>,
    block_on: impl FnOnce(Drain<'_>),
) -> std::io::Result<()> {
    serve_lines(server, std::io::stdin().lock(), std::io::stdout(), block_on)
}

/// Serves one connection over any pair of byte streams (pipes, in tests) with the stdio
/// framing, until `input` ends.
pub fn serve_lines<H: Handler>(
    server: &Server<H>,
    mut input: impl Read,
    output: impl Write + Send + 'static,
    block_on: impl FnOnce(Drain<'_>),
) -> std::io::Result<()> {
    let outbound = LineOutbound {
        closed: AtomicBool::new(false),
        writer: Mutex::new(output),
    };
    let connection = server.hub().open(Box::new(outbound));
    tracing::info!(
        connection = connection.id().0,
        transport = "stdio",
        "connection opened"
    );
    let mut framer = LineFramer::new(server.config().max_message_bytes);
    let mut buffer = vec![0u8; 64 * 1024];
    let mut handle = |event: FrameEvent<'_>| match event {
        FrameEvent::Message(bytes) => server.handle_message(&connection, bytes),
        FrameEvent::TooLarge { bytes } => server.refuse_oversized(&connection, bytes),
    };
    let reason = loop {
        match input.read(&mut buffer) {
            Ok(0) => break "end of input",
            Ok(n) => framer.push(&buffer[..n], &mut handle),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => {
                tracing::error!(%error, "reading input failed");
                break "read error";
            }
        }
    };
    framer.finish(&mut handle);
    block_on(Box::pin(server.drain()));
    server.hub().close(connection.id());
    tracing::info!(
        connection = connection.id().0,
        transport = "stdio",
        reason,
        "connection closed"
    );
    Ok(())
}
