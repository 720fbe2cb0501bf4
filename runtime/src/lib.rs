//! agentwire-runtime: moves validated, typed messages between a connection and a [`Handler`].
//!
//! The runtime knows nothing about agents. It owns framing, the per-connection handshake,
//! schema validation of incoming params, routing through the generated dispatch table,
//! backpressure, and server→client requests; the engine implements [`Handler`] and talks back
//! through the [`Peer`] in each request's context.
//!
//! The public surface is this page: every type and function a server, an embedder or a tool
//! needs is re-exported here, and the modules behind them are private, so that how the runtime
//! is arranged inside can change without breaking a user. The one public module is
//! [`telemetry`] (the names and fields of what the server reports to operations, which the
//! engine and the CLI emit and export too).
//!
//! - Serving: [`Server`] over a [`RuntimeConfig`]; [`serve_stdio`] / [`serve_lines`] for JSON
//!   lines, [`WsListener`] for `ws://` and `unix://`, chosen by [`Listen`]; [`BearerAuth`] and
//!   the peer checks ([`check_loopback_peer`], [`check_unix_peer`]) guard them;
//!   [`MetricsListener`] serves `/metrics` alone; [`Recorder`] is `--record`.
//! - Implementing the server: [`Handler`] (generated dispatch: [`dispatch_request`],
//!   [`dispatch_notification`]), the contexts it receives, and [`Peer`] / [`Hub`] to reach the
//!   connections back.
//! - A connection inside the process (the MCP server's link into the engine, tests, fuzzing):
//!   a [`Connection`] over an [`Outbound`] of one's own, fed with [`Server::handle_message`].
//! - Message plumbing, for tools that frame or check messages as the server does (the proxy,
//!   the benchmark, the fuzz targets): [`LineFramer`], [`Envelope`], [`Validators`].

mod auth;
mod config;
mod connection;
mod dispatch;
mod envelope;
mod framing;
mod handler;
mod listen;
mod outbound;
mod peer;
mod peer_uid;
mod record;
mod server;
mod stdio;
pub mod telemetry;
mod validate;
mod ws;

pub use agentwire_protocol::method::Decline;

// Serving.
pub use auth::{AuthError, BearerAuth};
pub use config::RuntimeConfig;
pub use listen::{Listen, ListenError, default_unix_socket};
pub use peer_uid::{PeerRefused, check_loopback_peer, check_unix_peer, server_uid};
pub use record::{Direction, Recorder};
pub use server::Server;
pub use stdio::busy_poll::BusyPoll;
pub use stdio::{BATCH_DELAY, Drain, serve as serve_stdio, serve_lines};
pub use ws::{BindError, MetricsListener, WsListener, termination_signal};

// Implementing the server.
pub use dispatch::{Handler, decline_answer, dispatch_notification, dispatch_request};
pub use handler::{Answered, ConnectionId, HandlerError, NotificationContext, RequestContext};
pub use peer::{Hub, Peer, ServerRequestError};

// A connection inside the process.
pub use connection::{ClientAnswer, Connection, Handshake, Negotiated};
pub use outbound::{
    Backlog, Closed, Outbound, error_message, notification_message, request_message, result_message,
};

// Message plumbing.
pub use envelope::{Envelope, Unreadable as UnreadableEnvelope};
pub use framing::{FrameEvent, LineFramer};
pub use validate::{EXPERIMENTAL_PARAMS, PARAMS_SCHEMAS, ParamsIssue, ParamsRejected, Validators};
