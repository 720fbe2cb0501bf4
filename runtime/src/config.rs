//! Limits and settings of the runtime.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Limits and settings shared by every connection.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Largest message (line or frame) accepted; longer ones are refused without being buffered.
    pub max_message_bytes: usize,
    /// Requests accepted but not yet answered, across all connections. Past it, requests are
    /// answered at once with -32001 `Server overloaded; retry later.`
    pub max_in_flight_requests: usize,
    /// Messages queued for one websocket connection before it is considered a slow reader and
    /// disconnected.
    pub outbound_queue_messages: usize,
    /// How long a server→client request (an approval) waits for its answer.
    pub server_request_timeout: Duration,
    /// How long shutdown waits for requests in flight to finish, and for background work to
    /// wind down once told to stop.
    pub shutdown_grace: Duration,
    /// At end of input, how long background work (a running turn) may go on by itself before
    /// it is told to stop (interrupted, recorded, its `turn/completed` sent).
    pub background_grace: Duration,
    /// How long a websocket (or Unix socket) client may take to send the complete headers of
    /// its first HTTP request; a connection that has not is closed, so silent or trickling
    /// connections cannot pile up.
    pub http_header_timeout: Duration,
    /// ws and unix: how often the server pings a connection. A live client answers with a pong
    /// (websocket libraries do so by themselves), so a quiet client still sends a frame now and
    /// then.
    pub ws_ping_interval: Duration,
    /// ws and unix: a connection that sends no frame at all for this long is closed. That is a
    /// peer gone without closing, or a frame that stopped arriving: a pong cannot come in the
    /// middle of a frame, so a huge frame trickled (or abandoned) half-way holds its buffer for
    /// no longer than this.
    pub ws_idle_timeout: Duration,
    /// ws and unix: the bytes that every connection together may hold in frames still
    /// arriving and in messages queued for their peers, beyond 64 KiB per connection and
    /// direction. A connection whose frame or message would go past it is closed (1013).
    pub ws_memory_budget_bytes: usize,
    /// stdio over a pipe or socket: after answering, how long to keep looking for the client's
    /// next message before sleeping, while the client sends within that time (a lockstep
    /// exchange answered sooner; see `stdio::busy_poll`). Zero always sleeps.
    pub stdin_busy_poll: Duration,
    /// stdio: most bytes of output waiting for a client that does not read (see
    /// `stdio::writer`); past it the connection is closed.
    pub stdout_queue_bytes: usize,
    /// The server's home directory (the default Unix socket is under it). The `initialize`
    /// answer is the handler's (`Handler::initialize_response`).
    pub home: PathBuf,
    /// `--record`: where every message in and out of every connection is written.
    pub recorder: Option<Arc<crate::record::Recorder>>,
}

impl RuntimeConfig {
    /// The defaults, with `home` as the server's home directory.
    pub fn new(home: PathBuf) -> Self {
        Self {
            max_message_bytes: 64 * 1024 * 1024,
            max_in_flight_requests: 512,
            outbound_queue_messages: 4096,
            server_request_timeout: Duration::from_secs(600),
            shutdown_grace: Duration::from_secs(5),
            background_grace: Duration::from_secs(10),
            http_header_timeout: Duration::from_secs(10),
            ws_ping_interval: Duration::from_secs(30),
            ws_idle_timeout: Duration::from_secs(90),
            ws_memory_budget_bytes: 256 * 1024 * 1024,
            stdin_busy_poll: Duration::from_micros(100),
            stdout_queue_bytes: 256 * 1024 * 1024,
            home,
            recorder: None,
        }
    }
}
