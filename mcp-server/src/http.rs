//! The streamable HTTP transport: rmcp's `StreamableHttpService` mounted on an axum router,
//! behind a bearer-token gate when a token is configured.
//!
//! Without a token only loopback addresses are accepted, and rmcp's `Host` check (loopback
//! names only) guards against DNS rebinding; every request must then come from a process of
//! the server's own user (the peer's uid from the kernel's socket table, see
//! [`agentwire_runtime::check_loopback_peer`]), or it gets 401 with the reason before any MCP handling.
//! With a token any address may be bound, and the token decides.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use agentwire_engine::Engine;
use agentwire_runtime::Server;
use agentwire_runtime::{BearerAuth, PeerRefused, check_loopback_peer};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::handler::CodexMcpServer;

/// Serves MCP over streamable HTTP at `http://addr{path}` until `shutdown` completes. Prints
/// the bound URL (with the port picked, for port 0) on stderr once listening.
pub async fn serve(
    server: Server<Engine>,
    addr: SocketAddr,
    path: &str,
    auth: Option<BearerAuth>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let loopback = addr.ip().to_canonical().is_loopback();
    if auth.is_none() && !loopback {
        return Err(format!(
            "refusing to listen on {addr} without authentication: it is not a loopback \
             address; configure a bearer token (--token-file PATH)"
        ));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let stop = CancellationToken::new();
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    if !loopback {
        // Behind a token, the Host header names whatever the operator exposes.
        config = config.disable_allowed_hosts();
    }
    let sessions = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(CodexMcpServer::new(sessions.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let gate_state = Arc::new(Gate { auth, local });
    let app = axum::Router::new()
        .route_service(path, service)
        .layer(from_fn_with_state(gate_state, gate))
        .into_make_service_with_connect_info::<SocketAddr>();
    tracing::info!(%local, path, "listening");
    eprintln!("agentwire mcp-server listening on http://{local}{path}");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            stop.cancel();
        })
        .await
        .map_err(|e| format!("serving failed: {e}"))
}

/// Who may be served.
struct Gate {
    /// The configured token, if any.
    auth: Option<BearerAuth>,
    /// The listener's address (the local end of every connection).
    local: SocketAddr,
}

/// Refuses requests without the configured bearer token, and without a token, requests from
/// another user's process.
async fn gate(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    if gate.auth.is_none() {
        let local = gate.local;
        let checked = match request.extensions().get::<ConnectInfo<SocketAddr>>() {
            Some(&ConnectInfo(peer)) => {
                tokio::task::spawn_blocking(move || check_loopback_peer(local, peer))
                    .await
                    .unwrap_or_else(|_| Err(PeerRefused::Unknown(peer.to_string())))
            }
            None => Err(PeerRefused::Unknown("an unknown peer".to_owned())),
        };
        if let Err(refused) = checked {
            tracing::warn!(%refused, "request from another user's process refused");
            return (StatusCode::UNAUTHORIZED, format!("{refused}\n")).into_response();
        }
    }
    if let Some(auth) = gate.auth.as_ref() {
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .map(|value| value.as_bytes());
        if !auth.accepts(presented) {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "missing or wrong bearer token\n",
            )
                .into_response();
        }
    }
    next.run(request).await
}
