//! agentwire-runtime: moves validated, typed messages between a connection and a [`Handler`].
//!
//! The runtime knows nothing about agents. It owns framing, the per-connection handshake,
//! schema validation of incoming params, routing through the generated dispatch table,
//! backpressure, and server→client requests; the engine implements [`Handler`] and talks back
//! through the [`Peer`] in each request's context.

pub mod auth;
pub mod config;
pub mod connection;
pub mod dispatch;
pub mod envelope;
pub mod framing;
pub mod handler;
pub mod listen;
pub mod outbound;
pub mod peer;
pub mod peer_uid;
pub mod record;
pub mod server;
pub mod stdio;
pub mod telemetry;
pub mod validate;
pub mod ws;

pub use agentwire_protocol::method::Decline;
pub use config::RuntimeConfig;
pub use dispatch::{Handler, dispatch_notification, dispatch_request};
pub use handler::{Answered, ConnectionId, HandlerError, NotificationContext, RequestContext};
pub use peer::{Hub, Peer, ServerRequestError};
pub use server::Server;
