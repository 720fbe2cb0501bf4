//! agentwire-runtime: moves validated, typed messages between a connection and a [`Handler`].
//!
//! The runtime knows nothing about agents. It owns framing, the per-connection handshake, schema
//! validation of incoming params and routing through the generated dispatch table; the engine
//! implements [`Handler`].

pub mod dispatch;
pub mod handler;
pub mod validate;

pub use dispatch::{Handler, dispatch_notification, dispatch_request};
pub use handler::{ConnectionId, HandlerError, NotificationContext, RequestContext};
