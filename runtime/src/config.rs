//! Limits and settings of the runtime: [`RuntimeConfig`], built with
//! `RuntimeConfig::builder().home(dir).….build()` or taken as [`RuntimeConfig::new`] and adjusted
//! field by field. It is `#[non_exhaustive]`, so a new setting is never a breaking change.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Limits and settings shared by every connection.
#[derive(Debug, Clone, bon::Builder)]
#[non_exhaustive]
pub struct RuntimeConfig {
    /// Largest message (line or frame) accepted; longer ones are refused without being buffered.
    #[builder(default = 64 * 1024 * 1024)]
    pub max_message_bytes: usize,
    /// Requests accepted but not yet answered, across all connections. Past it, requests are
    /// answered at once with -32001 `Server overloaded; retry later.`
    #[builder(default = 512)]
    pub max_in_flight_requests: usize,
    /// Messages queued for one websocket connection before it is considered a slow reader and
    /// disconnected.
    #[builder(default = 4096)]
    pub outbound_queue_messages: usize,
    /// How long a server→client request (an approval) waits for its answer.
    #[builder(default = Duration::from_secs(600))]
    pub server_request_timeout: Duration,
    /// How long shutdown waits for requests in flight to finish, and for background work to
    /// wind down once told to stop.
    #[builder(default = Duration::from_secs(5))]
    pub shutdown_grace: Duration,
    /// At end of input, how long background work (a running turn) may go on by itself before
    /// it is told to stop (interrupted, recorded, its `turn/completed` sent).
    #[builder(default = Duration::from_secs(10))]
    pub background_grace: Duration,
    /// How long a websocket (or Unix socket) client may take to send the complete headers of
    /// its first HTTP request; a connection that has not is closed, so silent or trickling
    /// connections cannot pile up.
    #[builder(default = Duration::from_secs(10))]
    pub http_header_timeout: Duration,
    /// ws and unix: how often the server pings a connection. A live client answers with a pong
    /// (websocket libraries do so by themselves), so a quiet client still sends a frame now and
    /// then.
    #[builder(default = Duration::from_secs(30))]
    pub ws_ping_interval: Duration,
    /// ws and unix: a connection that sends no frame at all for this long is closed. That is a
    /// peer gone without closing, or a frame that stopped arriving: a pong cannot come in the
    /// middle of a frame, so a huge frame trickled (or abandoned) half-way holds its buffer for
    /// no longer than this.
    #[builder(default = Duration::from_secs(90))]
    pub ws_idle_timeout: Duration,
    /// ws and unix: the bytes that every connection together may hold in frames still
    /// arriving and in messages queued for their peers, beyond 64 KiB per connection and
    /// direction. A connection whose frame or message would go past it is closed (1013).
    #[builder(default = 256 * 1024 * 1024)]
    pub ws_memory_budget_bytes: usize,
    /// stdio over a pipe or socket: after answering, how long to keep looking for the client's
    /// next message before sleeping, while the client sends within that time (a lockstep
    /// exchange answered sooner; see `stdio::busy_poll`). Zero always sleeps.
    #[builder(default = Duration::from_micros(100))]
    pub stdin_busy_poll: Duration,
    /// stdio: most bytes of output waiting for a client that does not read (see
    /// `stdio::writer`); past it the connection is closed.
    #[builder(default = 256 * 1024 * 1024)]
    pub stdout_queue_bytes: usize,
    /// The server's home directory (the default Unix socket is under it). The `initialize`
    /// answer is the handler's (`Handler::initialize_response`).
    pub home: PathBuf,
    /// `--record`: where every message in and out of every connection is written.
    pub recorder: Option<Arc<crate::record::Recorder>>,
}

impl RuntimeConfig {
    /// The defaults, with `home` as the server's home directory (the same as
    /// `RuntimeConfig::builder().home(home).build()`).
    pub fn new(home: PathBuf) -> Self {
        Self::builder().home(home).build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_is_the_builder_with_its_defaults() {
        let config = RuntimeConfig::new(PathBuf::from("/h"));
        assert_eq!(config.max_message_bytes, 64 * 1024 * 1024);
        assert_eq!(config.max_in_flight_requests, 512);
        assert_eq!(config.server_request_timeout, Duration::from_secs(600));
        assert_eq!(config.stdin_busy_poll, Duration::from_micros(100));
        assert!(config.recorder.is_none());
        let tuned = RuntimeConfig::builder()
            .home(PathBuf::from("/h"))
            .max_in_flight_requests(2)
            .build();
        assert_eq!(tuned.max_in_flight_requests, 2);
        assert_eq!(tuned.stdout_queue_bytes, config.stdout_queue_bytes);
    }
}
