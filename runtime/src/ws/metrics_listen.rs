//! `--metrics-listen IP:PORT`: a plain HTTP listener serving only `GET /metrics` (and
//! `GET /healthz`), for deployments whose protocol transport has no listener of its own
//! (stdio, `mcp-server`).
//!
//! The same rules as the websocket listener: a non-loopback address refuses to start without
//! a bearer token; any `Origin` header gets 403; with a token, `/metrics` needs it; without
//! one, only processes of the server's own user are served. Each connection holds one
//! request, under the same header deadline.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use tokio::net::TcpListener;

use super::budget::{Budget, Metered};
use super::header_deadline::HeaderDeadline;
use super::{BindError, PeerLabel, gate, metrics_text, no_delay};
use crate::auth::BearerAuth;

/// Bytes the metrics listener's connections may hold in requests being read, all together.
const MEMORY_BUDGET: usize = 4 * 1024 * 1024;

/// How long a connection may take to send its request headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// A bound metrics listener, ready to [`serve`](Self::serve).
pub struct MetricsListener {
    listener: TcpListener,
    auth: Option<BearerAuth>,
}

impl MetricsListener {
    /// Binds `addr` (port 0 picks a free port). A non-loopback address needs `auth`.
    pub async fn bind(addr: SocketAddr, auth: Option<BearerAuth>) -> Result<Self, BindError> {
        if auth.is_none() && !addr.ip().to_canonical().is_loopback() {
            return Err(BindError::NeedsAuth(addr));
        }
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| BindError::Io {
                what: format!("cannot listen for metrics on {addr}"),
                source,
            })?;
        Ok(Self { listener, auth })
    }

    /// The bound address (the real port when bound to port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` completes.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let addr = self.listener.local_addr()?;
        tracing::info!(event = "metrics.listening", %addr, "metrics listening");
        let app = Router::new()
            .route("/metrics", get(metrics_text))
            .route("/healthz", get(|| async { "ok\n" }))
            .layer(from_fn_with_state(Arc::new(self.auth), gate))
            .into_make_service_with_connect_info::<PeerLabel>();
        let listener = HeaderDeadline::new(
            Metered::new(no_delay::NoDelay(self.listener), Budget::new(MEMORY_BUDGET)),
            HEADER_TIMEOUT,
        );
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
    }
}
