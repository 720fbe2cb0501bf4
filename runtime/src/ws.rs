//! The websocket transports: `ws://IP:PORT` over TCP and `unix://[PATH]` over a Unix socket.
//!
//! One JSON message per websocket text message, each handed to [`Server::handle_message`]. A
//! message may arrive in fragments (RFC 6455 §5.4), and one over 16 KiB leaves as fragments
//! (`split_frames.rs`): neither of the websocket layer's buffers, which never shrink, is
//! let grow to a whole large message. The opening handshake is done in `upgrade.rs`. A
//! binary frame is answered with a -32600 error message (id `null`) and the connection stays
//! open. A frame or message longer than `max_message_bytes` is refused as its header arrives,
//! without being buffered: the server answers the usual "exceeds the limit" error and closes the
//! connection with code 1009.
//!
//! HTTP routes (HTTP/1.1 only):
//! - `GET /readyz` → 200 while the listener accepts connections;
//! - `GET /healthz` → 200 while the process serves;
//! - `GET /metrics` → the process's metrics as OpenMetrics text (what Prometheus scrapes; see
//!   [`crate::telemetry`]), under the same rules as the websocket itself (below);
//! - every other path: the websocket upgrade (`ws://127.0.0.1:4500` and `ws://…/any/path` are
//!   the same endpoint), so clients need not agree on a path.
//!
//! A plain HTTP answer (anything but the switch to a websocket) carries `Connection: close` and
//! ends its connection, so each connection holds one HTTP request at most and the header
//! deadline (`http_header_timeout`) covers every request, not only a keep-alive connection's
//! first.
//!
//! Any request with an `Origin` header gets 403, on every route: browsers always send one, and
//! no web page may reach a local agent. With a bearer token configured, every route except
//! `/healthz` (a liveness probe that reveals nothing) needs `Authorization: Bearer <token>`,
//! else 401. A TCP listener on a non-loopback address refuses to start without a token.
//! Without a token, every route but `/healthz` serves only processes of the server's own user
//! (see [`crate::peer_uid`]: the peer's uid from the kernel's socket table on loopback, from
//! `SO_PEERCRED` on a Unix socket); any other peer gets 401 with the reason, before the
//! upgrade.
//!
//! Each connection has its own handshake state, small read and write buffers (see `buffers`:
//! an idle connection costs a few KB) and a bounded outbound queue
//! (`outbound_queue_messages`) drained by a writer task; a peer that stops reading is dropped
//! once its queue is full, without slowing anyone else.
//!
//! Memory has one bound across connections (`ws_memory_budget_bytes`, see `budget`): frames
//! still arriving and messages queued for peers draw on it beyond a small allowance per
//! connection; the connection whose frame or message would go past it gets a -32001 error and
//! close code 1013 (try again later), and the others go on.
//!
//! Shutdown, once the `shutdown` future of [`WsListener::serve`] completes: stop accepting and
//! stop reading requests; interrupt running turns ([`Server::stop`]); let the requests in flight
//! answer and the turns record their end ([`Server::drain`]); flush each connection's queue and
//! close it with code 1001; remove the Unix socket file.

mod budget;
mod buffers;
mod connection;
mod forward_write;
mod header_deadline;
mod metrics_listen;
mod no_delay;
mod split_frames;
mod unix_socket;
mod upgrade;

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::IncomingStream;
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::watch;

use crate::auth::BearerAuth;
use crate::dispatch::Handler;
use crate::peer_uid::{self, PeerRefused};
use crate::server::Server;
use budget::{Budget, Meter, Metered};
use header_deadline::HeaderDeadline;
use upgrade::Handshake;

pub use metrics_listen::MetricsListener;

/// Where the listener stands in its life; only moves forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    /// Accepting connections and reading requests.
    Serving,
    /// No new connections or requests; answers to requests in flight still go out.
    Draining,
    /// Every connection flushes its queue and closes.
    Closing,
}

/// Why a listener could not start.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// A non-loopback TCP address without a bearer token.
    #[error(
        "refusing to listen on {0} without authentication: it is not a loopback address; \
         configure a bearer token (--ws-auth-token-file PATH or --ws-auth-token-sha256 HEX)"
    )]
    NeedsAuth(SocketAddr),
    /// Another server answers on the socket path.
    #[error("{} is in use by a running server", .0.display())]
    InUse(PathBuf),
    /// The socket path holds something other than a socket.
    #[error("{} exists and is not a socket; refusing to replace it", .0.display())]
    NotASocket(PathBuf),
    /// The operating system refused.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

enum Socket {
    Tcp(TcpListener),
    Unix(UnixListener, unix_socket::SocketFile),
}

/// A bound websocket listener, ready to [`serve`](Self::serve).
pub struct WsListener {
    socket: Socket,
    auth: Option<BearerAuth>,
}

impl WsListener {
    /// Binds `addr` (port 0 picks a free port). A non-loopback address needs `auth`.
    pub async fn bind_tcp(addr: SocketAddr, auth: Option<BearerAuth>) -> Result<Self, BindError> {
        if auth.is_none() && !addr.ip().to_canonical().is_loopback() {
            return Err(BindError::NeedsAuth(addr));
        }
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| BindError::Io {
                what: format!("cannot listen on {addr}"),
                source,
            })?;
        Ok(Self {
            socket: Socket::Tcp(listener),
            auth,
        })
    }

    /// Binds a Unix socket at `path` with mode 0600, creating its directory and replacing a
    /// stale socket left by a server that is gone.
    pub async fn bind_unix(path: &Path, auth: Option<BearerAuth>) -> Result<Self, BindError> {
        let (listener, file) = unix_socket::bind(path).await?;
        Ok(Self {
            socket: Socket::Unix(listener, file),
            auth,
        })
    }

    /// The bound TCP address (the real port when bound to port 0); `None` for a Unix socket.
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        match &self.socket {
            Socket::Tcp(listener) => listener.local_addr().ok(),
            Socket::Unix(..) => None,
        }
    }

    /// Serves until `shutdown` completes, then shuts down in order (see the module docs).
    pub async fn serve<H: Handler>(
        self,
        server: Server<H>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let (phase, watch_phase) = watch::channel(Phase::Serving);
        let phase = Arc::new(phase);
        let transport = match self.socket {
            Socket::Tcp(_) => "ws",
            Socket::Unix(..) => "unix",
        };
        let live = Live::default();
        let budget = Budget::new(server.config().ws_memory_budget_bytes);
        let state = Arc::new(WsState {
            server: server.clone(),
            phase: watch_phase.clone(),
            transport,
            live: live.clone(),
            budget: budget.clone(),
        });
        let app = router(state, self.auth).into_make_service_with_connect_info::<PeerLabel>();
        let stop = {
            let phase = phase.clone();
            let server = server.clone();
            async move {
                shutdown.await;
                tracing::info!("shutting down: no new connections or requests");
                server.stop();
                phase.send_replace(Phase::Draining);
            }
        };
        let header_timeout = server.config().http_header_timeout;
        let (serving, socket_file): (Serving, _) = match self.socket {
            Socket::Tcp(listener) => {
                tracing::info!(addr = %listener.local_addr()?, "listening");
                let listener = HeaderDeadline::new(
                    Metered::new(no_delay::NoDelay(listener), budget),
                    header_timeout,
                );
                let serving = axum::serve(listener, app).with_graceful_shutdown(stop);
                (Box::pin(serving.into_future()), None)
            }
            Socket::Unix(listener, file) => {
                tracing::info!(path = %file.path().display(), "listening");
                let listener = HeaderDeadline::new(Metered::new(listener, budget), header_timeout);
                let serving = axum::serve(listener, app).with_graceful_shutdown(stop);
                (Box::pin(serving.into_future()), Some(file))
            }
        };
        // Once shutdown starts, plain HTTP requests get the grace period to finish (a client
        // that never completes its request must not hold the process).
        let grace = server.config().shutdown_grace;
        let mut draining = watch_phase;
        let http_deadline = async move {
            let _ = draining.wait_for(|p| *p >= Phase::Draining).await;
            tokio::time::sleep(grace).await;
        };
        tokio::select! {
            served = serving => served?,
            () = http_deadline => {
                tracing::warn!("shutdown: HTTP requests still unfinished after the grace period");
            }
        }
        server.drain().await;
        phase.send_replace(Phase::Closing);
        let closing = connection::CLOSE_GRACE + Duration::from_secs(2);
        if tokio::time::timeout(closing, live.none_left())
            .await
            .is_err()
        {
            tracing::warn!("shutdown: connections still open after the grace period");
        }
        drop(socket_file);
        tracing::info!("shut down");
        Ok(())
    }
}

type Serving = std::pin::Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>;

/// Counts the websocket connections alive, from the upgrade on.
#[derive(Clone, Default)]
struct Live(Arc<watch::Sender<usize>>);

/// One live connection; dropping it counts it gone.
struct LiveGuard(Arc<watch::Sender<usize>>);

impl Live {
    fn enter(&self) -> LiveGuard {
        self.0.send_modify(|n| *n += 1);
        LiveGuard(self.0.clone())
    }

    async fn none_left(&self) {
        let mut count = self.0.subscribe();
        let _ = count.wait_for(|n| *n == 0).await;
    }
}

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// A future that completes on SIGINT or SIGTERM. The handlers are installed by this call, so
/// that a signal arriving before the future is first polled is not lost (nor fatal). Must be
/// called inside a tokio runtime.
pub fn termination_signal() -> impl Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{Signal, SignalKind, signal};
    let watch = |kind: SignalKind, name: &'static str| match signal(kind) {
        Ok(signal) => Some(signal),
        Err(error) => {
            tracing::warn!(%error, signal = name, "cannot watch the signal");
            None
        }
    };
    async fn received(signal: Option<Signal>) {
        match signal {
            Some(mut signal) => {
                signal.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    let interrupt = received(watch(SignalKind::interrupt(), "SIGINT"));
    let terminate = received(watch(SignalKind::terminate(), "SIGTERM"));
    async move {
        tokio::select! {
            () = interrupt => tracing::info!("SIGINT received"),
            () = terminate => tracing::info!("SIGTERM received"),
        }
    }
}

struct WsState<H: Handler> {
    server: Server<H>,
    phase: watch::Receiver<Phase>,
    transport: &'static str,
    live: Live,
    /// Shared by every connection's queue; their reads are metered by the listener.
    budget: Arc<Budget>,
}

/// Who is on the other end (for the logs), the meter of what its connection has read, and
/// how to tell whose process it is.
#[derive(Debug, Clone)]
struct PeerLabel {
    label: Arc<str>,
    inbound: Arc<Meter>,
    owner: PeerOwner,
}

/// How a connection's peer is known to be a process of the server's own user.
#[derive(Debug, Clone)]
enum PeerOwner {
    /// A TCP connection from `peer` to `local`: looked up in the kernel's socket table.
    Tcp { local: SocketAddr, peer: SocketAddr },
    /// A Unix socket, whose peer's credentials were checked as it was accepted.
    Unix(Result<(), PeerRefused>),
}

impl PeerOwner {
    /// Whether the peer is a process of the server's own user.
    async fn check(&self) -> Result<(), PeerRefused> {
        match self {
            Self::Unix(checked) => checked.clone(),
            &Self::Tcp { local, peer } => {
                // One lookup at a time: a burst of connections then costs one blocking thread
                // (its stack and allocator arena), not one each.
                static LOOKUPS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);
                let unknown = || PeerRefused::Unknown(peer.to_string());
                let Ok(_turn) = LOOKUPS.acquire().await else {
                    return Err(unknown());
                };
                tokio::task::spawn_blocking(move || peer_uid::check_loopback_peer(local, peer))
                    .await
                    .unwrap_or_else(|_| Err(unknown()))
            }
        }
    }
}

type TcpIncoming<'a> = IncomingStream<'a, HeaderDeadline<Metered<no_delay::NoDelay>>>;
type UnixIncoming<'a> = IncomingStream<'a, HeaderDeadline<Metered<UnixListener>>>;

impl Connected<TcpIncoming<'_>> for PeerLabel {
    fn connect_info(stream: TcpIncoming<'_>) -> Self {
        let peer = *stream.remote_addr();
        let owner = match stream.io().inner().inner().local_addr() {
            Ok(local) => PeerOwner::Tcp { local, peer },
            Err(error) => PeerOwner::Unix(Err(PeerRefused::Unknown(format!("{peer} ({error})")))),
        };
        Self {
            label: peer.to_string().into(),
            inbound: stream.io().inner().meter().clone(),
            owner,
        }
    }
}

impl Connected<UnixIncoming<'_>> for PeerLabel {
    fn connect_info(stream: UnixIncoming<'_>) -> Self {
        let label = match stream.remote_addr().as_pathname() {
            Some(path) => path.display().to_string(),
            None => "unix".to_owned(),
        };
        Self {
            label: label.into(),
            inbound: stream.io().inner().meter().clone(),
            owner: PeerOwner::Unix(peer_uid::check_unix_peer(stream.io().inner().inner())),
        }
    }
}

fn router<H: Handler>(state: Arc<WsState<H>>, auth: Option<BearerAuth>) -> Router {
    Router::new()
        .route("/readyz", get(|| async { "ready\n" }))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/metrics", get(metrics_text))
        .fallback(upgrade::<H>)
        .layer(from_fn_with_state(Arc::new(auth), gate))
        .with_state(state)
}

/// Refuses browsers (any `Origin` header) and, on every route but `/healthz`, unauthenticated
/// requests with a token configured, requests from another user's process without one; ends
/// the connection after any plain HTTP answer.
async fn gate(
    State(auth): State<Arc<Option<BearerAuth>>>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = admit(&auth, request, next).await;
    if response.status() != StatusCode::SWITCHING_PROTOCOLS {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

async fn admit(auth: &Option<BearerAuth>, request: Request, next: Next) -> Response {
    if request.headers().contains_key(header::ORIGIN) {
        tracing::warn!(
            path = request.uri().path(),
            "request with an Origin header refused"
        );
        return (
            StatusCode::FORBIDDEN,
            "requests with an Origin header are refused\n",
        )
            .into_response();
    }
    if auth.is_none() && request.uri().path() != "/healthz" {
        let checked = match request.extensions().get::<ConnectInfo<PeerLabel>>() {
            Some(ConnectInfo(peer)) => peer.owner.check().await,
            None => Err(PeerRefused::Unknown("an unknown peer".to_owned())),
        };
        if let Err(refused) = checked {
            tracing::warn!(
                path = request.uri().path(),
                %refused,
                "request from another user's process refused"
            );
            return (StatusCode::UNAUTHORIZED, format!("{refused}\n")).into_response();
        }
    }
    if let Some(auth) = auth.as_ref()
        && request.uri().path() != "/healthz"
    {
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes);
        if !auth.accepts(presented) {
            tracing::warn!(
                path = request.uri().path(),
                "request without a valid bearer token refused"
            );
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

/// `GET /metrics`: the process's metrics.
async fn metrics_text() -> Response {
    (
        [(header::CONTENT_TYPE, crate::telemetry::CONTENT_TYPE)],
        crate::telemetry::metrics().render(),
    )
        .into_response()
}

async fn upgrade<H: Handler>(
    State(state): State<Arc<WsState<H>>>,
    ConnectInfo(peer): ConnectInfo<PeerLabel>,
    handshake: Handshake,
) -> Response {
    if *state.phase.borrow() != Phase::Serving {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    let limit = state.server.config().max_message_bytes;
    // Counted from here: a failed upgrade drops the callback, and the guard with it.
    let live = state.live.enter();
    let traceparent = handshake.traceparent();
    handshake.accept(buffers::config(limit), limit, move |socket| {
        connection::run(
            state.server.clone(),
            socket,
            connection::Meters {
                inbound: peer.inbound,
                outbound: Meter::new(state.budget.clone()),
            },
            (state.transport, traceparent),
            peer.label,
            state.phase.clone(),
            live,
        )
    })
}
