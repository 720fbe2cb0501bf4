//! One websocket connection: a reader that hands each text frame to the server, and a writer
//! task that drains the connection's bounded outbound queue.
//!
//! The reader never waits for the writer: [`WsOutbound::send`] only `try_send`s, and a full
//! queue means the peer stopped reading, so the connection is dropped at once (no close frame:
//! the peer would not read it) without slowing any other connection.
//!
//! Both directions are metered against the listener's memory budget ([`super::budget`]): a
//! frame's bytes from the moment they are read until the frame is whole, a queued message's
//! from `send` until the socket has taken it (flushed), not merely until the writer took it
//! from the queue: a message handed to the websocket layer sits in its write buffer for as
//! long as the peer does not read. A connection closed for the budget gets a -32001 error
//! (`data.memoryBudgetBytes`) after what was queued before, then close 1013.

use std::sync::Arc;
use std::time::Duration;

use agentwire_protocol::jsonrpc::error_codes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tokio_tungstenite::tungstenite::{self, Bytes, Message, Utf8Bytes};

use super::budget::{Exhausted, Meter};
use super::split_frames::PIECE;
use super::upgrade::Socket;
use super::{LiveGuard, Phase};
use crate::connection::Connection;
use crate::dispatch::Handler;
use crate::outbound::{Backlog, Closed, Outbound, error_message, error_object};
use crate::server::Server;

/// How long a closing connection may take to flush its queue and its close frame.
pub(super) const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// Messages written between two flushes.
const MAX_BATCH: usize = 64;

/// Why and how a connection ends; the first ending set wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ending {
    reason: &'static str,
    /// Flush the queue and send this close frame; `None` drops the socket at once.
    close_frame: Option<(CloseCode, &'static str)>,
}

const PEER_CLOSED: Ending = Ending {
    reason: "peer closed",
    close_frame: None,
};
const PEER_RESET: Ending = Ending {
    reason: "peer reset the connection without closing",
    close_frame: None,
};
const SLOW_READER: Ending = Ending {
    reason: "slow reader: outbound queue full",
    close_frame: None,
};
const CLOSED_BY_SERVER: Ending = Ending {
    reason: "closed by the server",
    close_frame: Some((CloseCode::Normal, "closed")),
};
const SHUTDOWN: Ending = Ending {
    reason: "server shutdown",
    close_frame: Some((CloseCode::Away, "server shutting down")),
};
const TOO_LARGE: Ending = Ending {
    reason: "message too large",
    close_frame: Some((CloseCode::Size, "message too large")),
};
const PROTOCOL_ERROR: Ending = Ending {
    reason: "websocket protocol error",
    close_frame: Some((CloseCode::Protocol, "protocol error")),
};
const INVALID_TEXT: Ending = Ending {
    reason: "text frame is not UTF-8",
    close_frame: Some((CloseCode::Invalid, "text frame is not valid UTF-8")),
};
const IDLE: Ending = Ending {
    reason: "no frame within the idle timeout (gone, or a frame that stopped arriving)",
    close_frame: Some((CloseCode::Policy, "no frame within the idle timeout")),
};
const OVER_BUDGET: Ending = Ending {
    reason: "the websocket memory budget is used up",
    close_frame: Some((
        CloseCode::Again,
        "server memory budget used up; try again later",
    )),
};
const READ_ERROR: Ending = Ending {
    reason: "read error",
    close_frame: None,
};
const WRITE_ERROR: Ending = Ending {
    reason: "write error",
    close_frame: None,
};

/// The end of a connection, shared by its outbound, reader and writer.
struct End {
    ending: watch::Sender<Option<Ending>>,
}

impl End {
    /// Sets the ending unless one is set already.
    fn set(&self, ending: Ending) {
        self.ending.send_if_modified(|current| {
            if current.is_some() {
                return false;
            }
            *current = Some(ending);
            true
        });
    }

    fn is_set(&self) -> bool {
        self.ending.borrow().is_some()
    }

    fn get(&self) -> Option<Ending> {
        *self.ending.borrow()
    }
}

async fn ended(ending: &mut watch::Receiver<Option<Ending>>) {
    // The sender lives as long as the connection's `Arc<End>`; an error means it is gone too.
    let _ = ending.wait_for(Option::is_some).await;
}

async fn phase_reached(phase: &mut watch::Receiver<Phase>, wanted: Phase) {
    // A dropped sender means the listener is gone: treat it as every phase reached.
    let _ = phase.wait_for(|p| *p >= wanted).await;
}

/// What a connection holds against the listener's memory budget.
pub(super) struct Meters {
    /// Bytes read for frames not yet whole (metered by the listener's socket wrapper).
    pub(super) inbound: Arc<Meter>,
    /// Messages queued and not yet written.
    pub(super) outbound: Meter,
}

/// The connection's way out: a bounded queue in front of the writer task.
struct WsOutbound {
    queue: mpsc::Sender<Vec<u8>>,
    queued: Arc<Meter>,
    /// The same bytes as `queued`, for senders that wait for the peer to read.
    backlog: Arc<Backlog>,
    end: Arc<End>,
}

impl Outbound for WsOutbound {
    fn send(&self, message: Vec<u8>) -> Result<(), Closed> {
        if self.end.is_set() {
            return Err(Closed);
        }
        let bytes = message.len();
        if let Err(exhausted) = self.queued.hold(bytes) {
            tracing::warn!(bytes, %exhausted, "message not queued");
            self.end.set(OVER_BUDGET);
            return Err(Closed);
        }
        // Counted before the writer can take it, so that its release never comes first.
        self.backlog.add(bytes);
        match self.queue.try_send(message) {
            Ok(()) => Ok(()),
            Err(error) => {
                self.backlog.remove(bytes);
                self.queued.release(bytes);
                self.end.set(match error {
                    mpsc::error::TrySendError::Full(_) => SLOW_READER,
                    mpsc::error::TrySendError::Closed(_) => WRITE_ERROR,
                });
                Err(Closed)
            }
        }
    }

    fn close(&self) {
        self.end.set(CLOSED_BY_SERVER);
    }

    fn backlog(&self) -> Option<&Backlog> {
        Some(&self.backlog)
    }
}

/// Serves one upgraded websocket until it ends; logs its opening and closing.
pub(super) async fn run<H: Handler>(
    server: Server<H>,
    socket: Socket,
    meters: Meters,
    (transport, traceparent): (&'static str, Option<String>),
    peer: Arc<str>,
    phase: watch::Receiver<Phase>,
    live: LiveGuard,
) {
    let (sink, stream) = socket.split();
    let (queue, queued) = mpsc::channel(server.config().outbound_queue_messages.max(1));
    let (ending, watch_ending) = watch::channel(None);
    let end = Arc::new(End { ending });
    let queued_bytes = Arc::new(meters.outbound);
    let backlog = Arc::new(Backlog::default());
    let connection = server.hub().open(Box::new(WsOutbound {
        queue,
        queued: queued_bytes.clone(),
        backlog: backlog.clone(),
        end: end.clone(),
    }));
    let id = connection.id().0;
    tracing::info!(connection = id, transport, %peer, "connection opened");
    let _open = crate::telemetry::connection_opened(transport);
    connection.set_origin(transport, traceparent);
    let ping = server.config().ws_ping_interval;
    let writer = Writer {
        queue: queued,
        queued_bytes: queued_bytes.clone(),
        backlog: backlog.clone(),
        budget_limit: server.config().ws_memory_budget_bytes,
        end: end.clone(),
        ending: watch_ending.clone(),
        ping_every: ping,
    };
    let mut writer = tokio::spawn(writer.run(sink));
    let reader = Reader {
        server: &server,
        connection: &connection,
        end: &end,
        read_bytes: &meters.inbound,
    };
    reader.run(stream, watch_ending, phase).await;
    server.hub().close(connection.id());
    if tokio::time::timeout(CLOSE_GRACE + Duration::from_secs(1), &mut writer)
        .await
        .is_err()
    {
        writer.abort();
        let _ = writer.await;
    }
    // The writer is gone, and with it the queue and the socket: nothing is held for this
    // connection any more, though requests still running may keep its outbound a while.
    queued_bytes.release(usize::MAX);
    backlog.set(0);
    let reason = end.get().map_or("unknown", |e| e.reason);
    tracing::info!(connection = id, transport, %peer, reason, "connection closed");
    drop(live);
}

/// The reading half of a connection.
struct Reader<'a, H: Handler> {
    server: &'a Server<H>,
    connection: &'a Arc<Connection>,
    end: &'a End,
    read_bytes: &'a Meter,
}

impl<H: Handler> Reader<'_, H> {
    /// Reads frames until the connection ends or the server shuts down.
    async fn run(
        self,
        mut stream: SplitStream<Socket>,
        mut ending: watch::Receiver<Option<Ending>>,
        mut phase: watch::Receiver<Phase>,
    ) {
        let Self {
            server,
            connection,
            end,
            read_bytes,
        } = self;
        let idle = server.config().ws_idle_timeout;
        // Any frame counts (a pong answering our ping included); none for `idle` ends it. One
        // timer for the connection, pushed back at each frame.
        let deadline = tokio::time::sleep(idle);
        tokio::pin!(deadline);
        loop {
            let frame = tokio::select! {
                biased;
                () = ended(&mut ending) => return,
                () = &mut deadline => {
                    tracing::info!(connection = connection.id().0, ?idle, "no frame within the idle timeout");
                    end.set(IDLE);
                    return;
                }
                () = phase_reached(&mut phase, Phase::Draining) => {
                    // Stop taking requests; answers still flow until the connections close.
                    tokio::select! {
                        () = ended(&mut ending) => {}
                        () = phase_reached(&mut phase, Phase::Closing) => end.set(SHUTDOWN),
                    }
                    return;
                }
                frame = stream.next() => frame,
            };
            deadline.as_mut().reset(tokio::time::Instant::now() + idle);
            if matches!(frame, Some(Ok(_))) {
                // The frame is whole, and handled in place below: its bytes are held no longer.
                read_bytes.frame_done();
            }
            match frame {
                Some(Ok(Message::Text(text))) => server.handle_message(connection, text.as_bytes()),
                Some(Ok(Message::Binary(bytes))) => refuse_binary(server, connection, bytes.len()),
                // Pings are answered by the websocket layer; a close frame is answered there too,
                // and the stream ends right after. Raw frames are never read, only written.
                Some(Ok(
                    Message::Ping(_) | Message::Pong(_) | Message::Close(_) | Message::Frame(_),
                )) => {}
                None => {
                    end.set(PEER_CLOSED);
                    return;
                }
                Some(Err(error)) => {
                    end.set(read_failure(server, connection, error));
                    return;
                }
            }
        }
    }
}

/// Binary frames are answered with a -32600 error; the connection stays open.
fn refuse_binary<H: Handler>(server: &Server<H>, connection: &Connection, bytes: usize) {
    tracing::warn!(
        connection = connection.id().0,
        bytes,
        "binary frame refused"
    );
    let error = error_object(
        error_codes::INVALID_REQUEST,
        "Binary frames are not supported: send each JSON message as one text frame",
        None,
    );
    if connection.send(error_message(None, &error)).is_err() {
        server.hub().close(connection.id());
    }
}

/// What a failed read means for the connection.
fn read_failure<H: Handler>(
    server: &Server<H>,
    connection: &Connection,
    error: tungstenite::Error,
) -> Ending {
    let id = connection.id().0;
    match error {
        tungstenite::Error::Capacity(tungstenite::error::CapacityError::MessageTooLong {
            size,
            ..
        }) => {
            // The frame header announced too much, or the fragments added up to too much:
            // nothing past the limit was buffered.
            server.refuse_oversized(connection, size);
            TOO_LARGE
        }
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => PEER_CLOSED,
        tungstenite::Error::Io(error) => {
            if let Some(exhausted) = error.get_ref().and_then(|e| e.downcast_ref::<Exhausted>()) {
                // The writer sends the -32001 error before the close frame.
                tracing::warn!(connection = id, %exhausted, "frame refused");
                return OVER_BUDGET;
            }
            tracing::debug!(connection = id, %error, "websocket read failed");
            READ_ERROR
        }
        tungstenite::Error::Utf8(error) => {
            tracing::warn!(connection = id, %error, "websocket text frame is not UTF-8");
            INVALID_TEXT
        }
        tungstenite::Error::Protocol(
            tungstenite::error::ProtocolError::ResetWithoutClosingHandshake,
        ) => {
            // A client that exits without closing (a TUI quitting) is a normal end.
            tracing::info!(connection = id, "peer left without the closing handshake");
            PEER_RESET
        }
        error @ tungstenite::Error::Protocol(_) => {
            tracing::warn!(connection = id, %error, "websocket protocol error");
            PROTOCOL_ERROR
        }
        error => {
            tracing::warn!(connection = id, %error, "websocket read failed");
            READ_ERROR
        }
    }
}

/// The -32001 error a connection closed for the budget gets before its close frame (id `null`:
/// the message refused may be any answer or notification, or a frame still arriving).
fn over_budget_error(limit: usize) -> Vec<u8> {
    let error = error_object(
        error_codes::SERVER_OVERLOADED,
        "Server overloaded; retry later.",
        Some(serde_json::json!({
            "reason": Exhausted { limit }.to_string(),
            "memoryBudgetBytes": limit,
        })),
    );
    error_message(None, &error)
}

/// Feeds one outbound message to the sink as a text frame or, past [`PIECE`] bytes, as a text
/// frame and continuation frames of at most a piece each (RFC 6455 §5.4): the websocket layer
/// copies each frame whole into its write buffer and keeps that buffer at the largest size it
/// ever held, so a large message sent whole would cost its connection that much for good.
async fn feed_text(
    sink: &mut SplitSink<Socket, Message>,
    message: Vec<u8>,
) -> Result<(), tungstenite::Error> {
    // Outgoing messages are serde_json output, hence UTF-8; never panic if one is not.
    let text = String::from_utf8(message)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    if text.len() <= PIECE {
        return sink.feed(Message::Text(Utf8Bytes::from(text))).await;
    }
    let bytes = Bytes::from(text);
    let mut start = 0;
    while start < bytes.len() {
        let end = bytes.len().min(start + PIECE);
        let opcode = OpCode::Data(if start == 0 {
            Data::Text
        } else {
            Data::Continue
        });
        let piece = Frame::message(bytes.slice(start..end), opcode, end == bytes.len());
        sink.feed(Message::Frame(piece)).await?;
        start = end;
    }
    Ok(())
}

/// The writing half of a connection.
struct Writer {
    queue: mpsc::Receiver<Vec<u8>>,
    /// What the queue and the websocket layer's write buffer hold against the memory budget;
    /// given back once the socket has taken the messages (at each flush).
    queued_bytes: Arc<Meter>,
    /// The same bytes, for senders that wait for the peer to read.
    backlog: Arc<Backlog>,
    /// The budget, named in the -32001 error of a connection closed for it.
    budget_limit: usize,
    end: Arc<End>,
    ending: watch::Receiver<Option<Ending>>,
    ping_every: Duration,
}

impl Writer {
    /// Drains the queue into the socket until the connection ends; then, for a graceful ending,
    /// flushes what is left and sends the close frame.
    async fn run(self, mut sink: SplitSink<Socket, Message>) {
        let Self {
            mut queue,
            queued_bytes,
            backlog,
            budget_limit,
            end,
            mut ending,
            ping_every,
        } = self;
        let mut pings =
            tokio::time::interval_at(tokio::time::Instant::now() + ping_every, ping_every);
        pings.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let first = tokio::select! {
                biased;
                () = ended(&mut ending) => break,
                _ = pings.tick() => {
                    if sink.send(Message::Ping(Default::default())).await.is_err() {
                        end.set(WRITE_ERROR);
                        return;
                    }
                    continue;
                }
                message = queue.recv() => match message {
                    Some(message) => message,
                    None => return,
                },
            };
            // A message fed to the sink stays in the websocket layer's write buffer until the
            // socket takes it, which a peer that does not read never lets happen: its bytes
            // stay held until the flush is done, so a jammed connection holds what it holds
            // against the budget, not outside it.
            let batch = async {
                let mut fed = first.len();
                feed_text(&mut sink, first).await?;
                for _ in 1..MAX_BATCH {
                    match queue.try_recv() {
                        Ok(message) => {
                            fed += message.len();
                            feed_text(&mut sink, message).await?;
                        }
                        Err(_) => break,
                    }
                }
                sink.flush().await.map(|()| fed)
            };
            // An ending that drops the socket interrupts the write at once; a graceful one lets it
            // finish (messages moved into it would be lost) unless the socket stays jammed.
            let interrupted = async {
                ended(&mut ending).await;
                if end.get().is_some_and(|e| e.close_frame.is_some()) {
                    tokio::time::sleep(CLOSE_GRACE).await;
                }
            };
            let written = tokio::select! {
                biased;
                () = interrupted => return,
                written = batch => written,
            };
            match written {
                Ok(fed) => {
                    queued_bytes.release(fed);
                    backlog.remove(fed);
                }
                Err(_) => {
                    end.set(WRITE_ERROR);
                    return;
                }
            }
        }
        let Some(
            closing @ Ending {
                close_frame: Some((code, reason)),
                ..
            },
        ) = end.get()
        else {
            return;
        };
        // What is still queued is given back once the writer is done (see `run`).
        let goodbye = async {
            while let Ok(message) = queue.try_recv() {
                feed_text(&mut sink, message).await?;
            }
            if closing == OVER_BUDGET {
                feed_text(&mut sink, over_budget_error(budget_limit)).await?;
            }
            let frame = CloseFrame {
                code,
                reason: Utf8Bytes::from_static(reason),
            };
            sink.send(Message::Close(Some(frame))).await
        };
        let _ = tokio::time::timeout(CLOSE_GRACE, goodbye).await;
    }
}
