//! What the engine uses to talk back: notifications to one connection or to all, and
//! server→client requests (approvals) with ids, a timeout and cancellation.

// On the async path: no blocking call here (see clippy.toml); code that runs on the blocking
// pool or a thread of its own says so where it allows one.
#![deny(clippy::disallowed_methods)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use agentwire_protocol::method::{Decline, Direction, Method, MethodInfo, Notification, Request};
use agentwire_protocol::methods::ServerRequestResolved;
use agentwire_protocol::{RequestId, ServerRequestResolvedNotification};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::connection::{ClientAnswer, Connection};
use crate::handler::ConnectionId;
use crate::outbound::{Outbound, notification_message, request_message};
use crate::record::Recorder;

/// Every open connection; shared by the transports, the server and every [`Peer`].
///
/// It also keeps track of the work that outlives the request that started it (notifications
/// sent after an answer, running turns): shutdown waits for that work, and asks it to stop
/// ([`Hub::stopping`]) when it takes too long or the server is told to stop.
pub struct Hub {
    connections: Mutex<HashMap<ConnectionId, Arc<Connection>>>,
    next_connection: AtomicU64,
    request_timeout: Duration,
    background: TaskTracker,
    stop: CancellationToken,
    recorder: OnceLock<Arc<Recorder>>,
    closed: OnceLock<(tokio::runtime::Handle, CloseHook)>,
}

/// What is told of every connection the hub closes (see [`Hub::on_close`]).
type CloseHook = Arc<dyn Fn(ConnectionId) + Send + Sync>;

impl Hub {
    /// An empty hub whose server→client requests time out after `request_timeout`.
    pub fn new(request_timeout: Duration) -> Self {
        Self {
            connections: Mutex::new(HashMap::new()),
            next_connection: AtomicU64::new(1),
            request_timeout,
            background: TaskTracker::new(),
            stop: CancellationToken::new(),
            recorder: OnceLock::new(),
            closed: OnceLock::new(),
        }
    }

    /// Records every connection opened from now on with `recorder` (`--record`).
    pub fn record_with(&self, recorder: Arc<Recorder>) {
        let _ = self.recorder.set(recorder);
    }

    /// Runs `work` on the current Tokio runtime as background work of the server: shutdown
    /// waits for it (see [`Hub::settle_background`]) before it closes the connections, so what
    /// it sends reaches the clients. Without a runtime, `work` is dropped and a warning logged.
    pub fn spawn_background<F>(&self, work: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(self.background.spawn_on(work, &runtime)),
            Err(_) => tracing::warn!("background work dropped: no async runtime"),
        }
    }

    /// Resolves once the server has been told to stop (a termination signal, or background
    /// work that outlived the end of input's grace period). Long-running background work
    /// (a turn) selects on it and winds down: interrupted, recorded, its last notifications sent.
    pub fn stopping(&self) -> impl Future<Output = ()> + Send + 'static {
        self.stop.clone().cancelled_owned()
    }

    /// Whether the server has been told to stop.
    pub fn is_stopping(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// Tells background work to stop (see [`Hub::stopping`]).
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Waits for background work: up to `grace` for it to finish on its own, then tells it to
    /// stop and waits up to `wind_down` more. Returns whether it all finished.
    pub async fn settle_background(&self, grace: Duration, wind_down: Duration) -> bool {
        self.background.close();
        if tokio::time::timeout(grace, self.background.wait())
            .await
            .is_ok()
        {
            return true;
        }
        if !self.is_stopping() {
            tracing::info!(
                tasks = self.background.len(),
                "shutdown: background work still running after {grace:?}; stopping it"
            );
            self.stop();
        }
        let settled = tokio::time::timeout(wind_down, self.background.wait())
            .await
            .is_ok();
        if !settled {
            tracing::warn!(
                tasks = self.background.len(),
                "shutdown: background work did not stop within {wind_down:?}"
            );
        }
        settled
    }

    fn connections(&self) -> std::sync::MutexGuard<'_, HashMap<ConnectionId, Arc<Connection>>> {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a connection over `outbound`.
    pub fn open(&self, outbound: Box<dyn Outbound>) -> Arc<Connection> {
        let id = ConnectionId(self.next_connection.fetch_add(1, Ordering::Relaxed));
        let connection =
            Arc::new(Connection::new(id, outbound).recorded(self.recorder.get().cloned()));
        self.connections().insert(id, connection.clone());
        connection
    }

    /// Tells `hook` of every connection closed from now on, once each, as a task on `runtime`:
    /// never inside the call that closed the connection (a send that found its queue full, say),
    /// so the hook may take locks that the sender held. Only the first hook set counts.
    pub fn on_close(
        &self,
        runtime: tokio::runtime::Handle,
        hook: impl Fn(ConnectionId) + Send + Sync + 'static,
    ) {
        if self.closed.set((runtime, Arc::new(hook))).is_err() {
            tracing::warn!("a second connection-closed hook was ignored");
        }
    }

    /// Closes a connection and forgets it; the hook set by [`Hub::on_close`] hears of it.
    pub fn close(&self, id: ConnectionId) {
        let Some(connection) = self.connections().remove(&id) else {
            return;
        };
        connection.close();
        if let Some((runtime, hook)) = self.closed.get() {
            let hook = Arc::clone(hook);
            drop(runtime.spawn(async move { hook(id) }));
        }
    }

    /// How many connections are open.
    pub fn len(&self) -> usize {
        self.connections().len()
    }

    /// How long a server→client request waits for its answer.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Whether no connection is open.
    pub fn is_empty(&self) -> bool {
        self.connections().is_empty()
    }

    /// Sends a notification to every initialized connection that wants it.
    pub fn broadcast<M: Notification>(&self, params: &M::Params) {
        let connections: Vec<Arc<Connection>> = self.connections().values().cloned().collect();
        let mut message = None;
        for connection in connections {
            if connection.wants_notification(M::NAME, M::EXPERIMENTAL) {
                let bytes = message
                    .get_or_insert_with(|| notification_message(M::NAME, params))
                    .clone();
                if connection.send(bytes).is_err() {
                    self.close(connection.id());
                }
            }
        }
    }
}

/// Why a server→client request has no usable answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ServerRequestError {
    /// The connection closed before the client answered.
    #[error("the connection closed before the client answered")]
    Closed,
    /// The client did not answer in time.
    #[error("the client did not answer within {0:?}")]
    TimedOut(Duration),
    /// The client answered with an error.
    #[error("the client answered with an error: {0}")]
    Client(Value),
    /// The client's answer does not match the method's result type.
    #[error("the client's answer is malformed: {0}")]
    Malformed(String),
}

/// How often [`Peer::output_room`] checks that the connection is still open while it waits.
const OUTPUT_ROOM_RECHECK: Duration = Duration::from_millis(200);

/// One connection, as seen by the engine.
#[derive(Clone)]
pub struct Peer {
    hub: Arc<Hub>,
    connection: Arc<Connection>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("connection", &self.connection.id())
            .finish()
    }
}

/// Forgets a pending server→client request when its future is dropped (cancellation).
/// A server request awaiting its answer. However it ends (answered, failed, timed out, or
/// cancelled by dropping the future), dropping the guard forgets the request and tells the
/// client with `serverRequest/resolved`.
struct PendingGuard<'a> {
    peer: &'a Peer,
    id: RequestId,
    thread_id: String,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.peer.connection.forget_request(&self.id);
        self.peer.notify::<ServerRequestResolved>(
            &ServerRequestResolvedNotification::builder()
                .thread_id(std::mem::take(&mut self.thread_id))
                .request_id(self.id.clone())
                .build(),
        );
    }
}

impl Peer {
    /// The peer of `connection`.
    pub fn new(hub: Arc<Hub>, connection: Arc<Connection>) -> Self {
        Self { hub, connection }
    }

    /// The connection's id.
    pub fn connection_id(&self) -> ConnectionId {
        self.connection.id()
    }

    /// Every connection.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// Whether the connection is still open.
    pub fn is_open(&self) -> bool {
        self.hub.connections().contains_key(&self.connection.id())
    }

    // turn notifications area (0.6.0): experimental response fields are filled per connection.
    /// Whether the client negotiated `capabilities.experimentalApi` in `initialize` (`false`
    /// before it did).
    pub fn experimental_api(&self) -> bool {
        self.connection
            .negotiated()
            .is_some_and(|negotiated| negotiated.experimental)
    }

    /// Waits until the connection's transport holds at most `limit` bytes that the client has
    /// not read yet, or the connection is closed. A producer of bulk output (a command's
    /// output) awaits it before each piece, so that a client reading slowly slows the producer
    /// down instead of the server queueing without bound.
    pub async fn output_room(&self, limit: usize) {
        let Some(backlog) = self.connection.backlog() else {
            return;
        };
        while self.is_open() {
            if tokio::time::timeout(OUTPUT_ROOM_RECHECK, backlog.below(limit))
                .await
                .is_ok()
            {
                return;
            }
        }
    }

    /// Sends a notification to this connection, unless it is not initialized, lacks the
    /// experimental capability for an experimental method, or opted out of `M`. Returns whether
    /// it was sent.
    pub fn notify<M: Notification>(&self, params: &M::Params) -> bool {
        if !self.connection.wants_notification(M::NAME, M::EXPERIMENTAL) {
            return false;
        }
        if self
            .connection
            .send(notification_message(M::NAME, params))
            .is_err()
        {
            self.hub.close(self.connection.id());
            return false;
        }
        true
    }

    /// Sends a notification that is already encoded (`message`, the JSON-RPC message of the
    /// server notification `method`, as [`notification_message`] makes it) under the same rules
    /// as [`Peer::notify`]: what another process produced and this one only passes on. A
    /// `method` that is not a server notification is never sent. Returns whether it was sent.
    pub fn notify_encoded(&self, method: &MethodInfo, message: Vec<u8>) -> bool {
        if method.direction != Direction::ServerNotification
            || !self
                .connection
                .wants_notification(method.name, method.experimental)
        {
            return false;
        }
        if self.connection.send(message).is_err() {
            self.hub.close(self.connection.id());
            return false;
        }
        true
    }

    /// Sends the request `M` to the client and waits for its answer, at most the configured
    /// timeout. Dropping the returned future cancels the request. Once settled, either way
    /// (cancelled included), `serverRequest/resolved` is sent.
    pub async fn request<M: Request>(
        &self,
        params: &M::Params,
    ) -> Result<M::Response, ServerRequestError> {
        // The thread it is about, for `serverRequest/resolved` (the method table's ordering
        // member; empty for requests that name none).
        let thread_id = M::ordering_key(params).unwrap_or_default().to_owned();
        let (id, answer) = self.connection.register_request();
        let _guard = PendingGuard {
            peer: self,
            id: id.clone(),
            thread_id,
        };
        self.exchange::<M>(&id, params, answer).await
    }

    /// Sends the server request `method` with `params` as another process encoded them, under
    /// the same rules as [`Peer::request`] (timeout, cancellation, `serverRequest/resolved` for
    /// `thread_id`), and returns the client's result as it is: the process that asked checks
    /// it against its result type. A `method` that is not a server request is never sent.
    pub async fn request_encoded(
        &self,
        method: &MethodInfo,
        thread_id: &str,
        params: &serde_json::value::RawValue,
    ) -> Result<Value, ServerRequestError> {
        if method.direction != Direction::ServerRequest {
            return Err(ServerRequestError::Malformed(format!(
                "{} is not a server request",
                method.name
            )));
        }
        let (id, answer) = self.connection.register_request();
        let _guard = PendingGuard {
            peer: self,
            id: id.clone(),
            thread_id: thread_id.to_owned(),
        };
        self.exchange_raw(
            method.name,
            request_message(&id, method.name, &params),
            answer,
        )
        .await
    }

    async fn exchange<M: Request>(
        &self,
        id: &RequestId,
        params: &M::Params,
        answer: tokio::sync::oneshot::Receiver<ClientAnswer>,
    ) -> Result<M::Response, ServerRequestError> {
        let result = self
            .exchange_raw(M::NAME, request_message(id, M::NAME, params), answer)
            .await?;
        serde_json::from_value(result).map_err(|e| ServerRequestError::Malformed(e.to_string()))
    }

    /// Sends the request `message` (of `method`) and waits for its answer, at most the
    /// configured timeout.
    async fn exchange_raw(
        &self,
        method: &'static str,
        message: Vec<u8>,
        answer: tokio::sync::oneshot::Receiver<ClientAnswer>,
    ) -> Result<Value, ServerRequestError> {
        if self.connection.send(message).is_err() {
            self.hub.close(self.connection.id());
            return Err(ServerRequestError::Closed);
        }
        let watch = crate::telemetry::server_request_sent(method, self.connection.id().0);
        let timeout = self.hub.request_timeout;
        let (decision, answer) = match tokio::time::timeout(timeout, answer).await {
            Err(_) => (
                "timeout".to_owned(),
                Err(ServerRequestError::TimedOut(timeout)),
            ),
            Ok(Err(_)) => ("closed".to_owned(), Err(ServerRequestError::Closed)),
            Ok(Ok(ClientAnswer::Error(error))) => {
                ("error".to_owned(), Err(ServerRequestError::Client(error)))
            }
            Ok(Ok(ClientAnswer::Result(result))) => {
                (crate::telemetry::answer_decision(&result), Ok(result))
            }
        };
        watch.settled(&decision);
        answer
    }

    /// [`Peer::request`] for approvals: anything but a well-formed answer declines, and is
    /// logged.
    pub async fn request_or_decline<M: Request>(&self, params: &M::Params) -> M::Response
    where
        M::Response: Decline,
    {
        match self.request::<M>(params).await {
            Ok(response) => response,
            Err(error) => {
                tracing::warn!(method = <M as Method>::NAME, connection = self.connection.id().0, %error, "server request declined");
                M::Response::decline(&error.to_string())
            }
        }
    }
}
