//! The MCP session's way into the engine: one in-process app-server connection.
//!
//! The link opens a [`Connection`] on the shared app-server [`Server`], so threads,
//! persistence, sandboxing and approvals behave exactly as for an app-server client. Requests go
//! in as app-server JSON-RPC through [`Server::handle_message`]; what comes back is parsed by a
//! dispatcher task and routed: answers to the link's own requests by id, and a thread's
//! notifications and approval requests to the tool call that currently runs a turn on it.
//!
//! The messages are app-server JSON-RPC in the client core's grammar
//! ([`agentwire_client::wire`]): written by its builders, classified by
//! [`Incoming::from_value`], as every client of this workspace reads and writes them. What
//! carries them differs: no bytes on a pipe, the server's [`Connection`] in the same process.
//!
//! Both queues are bounded. The dispatcher never waits: the engine's messages wait for it in a
//! queue of at most [`ENGINE_QUEUE_BYTES`] (past that the connection is closed, as the stdio
//! transport closes a client that stops reading), and each tool call's messages wait for the
//! call in a queue of [`THREAD_QUEUE`] messages. A call whose MCP host reads its events too slowly to keep that queue from
//! filling stops following the turn: [`ThreadEvents::overflowed`] says so, and the call fails
//! with that reason instead of holding an ever-growing backlog.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agentwire_client::wire::{self, Incoming};
use agentwire_client::{JsonRpcErrorObject, RequestId};
use agentwire_engine::Engine;
use agentwire_protocol::method::{Notification, Request};
use agentwire_protocol::methods::{Initialize, Initialized};
use agentwire_protocol::{ClientInfo, InitializeCapabilities, InitializeParams};
use agentwire_runtime::{Closed, Connection, Outbound, Server};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// How many bytes of the engine's messages may wait for the dispatcher before the connection
/// closes: the stdio transport's default limit for a client that does not read. The dispatcher
/// only parses and routes, so reaching it means the task cannot run at all.
pub const ENGINE_QUEUE_BYTES: usize = 256 * 1024 * 1024;

/// How many messages about one thread may wait for the tool call that holds it.
pub const THREAD_QUEUE: usize = 4096;

/// What the engine sent about a thread.
#[derive(Debug, Clone)]
pub enum EngineMessage {
    /// A notification (`item/started`, `turn/completed` …).
    Notification {
        /// The method.
        method: String,
        /// Its params.
        params: Value,
    },
    /// A request to the client (an approval), to be answered with [`EngineLink::answer`].
    Request {
        /// The request's id, as the engine wrote it.
        id: Value,
        /// The method.
        method: String,
        /// Its params.
        params: Value,
    },
}

/// Why a request to the engine failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LinkError {
    /// The engine answered with an error.
    #[error("{method} failed: {message}")]
    Engine {
        /// The method that failed.
        method: &'static str,
        /// The engine's error message.
        message: String,
        /// The JSON-RPC error code.
        code: i64,
    },
    /// The engine's answer does not have the method's result type.
    #[error("{method} answered something unexpected: {reason}")]
    Malformed {
        /// The method.
        method: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// The connection to the engine is gone (the server is shutting down).
    #[error("the engine connection is closed")]
    Closed,
}

/// Sends the connection's outgoing messages to the dispatcher.
struct ChannelOutbound {
    sender: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    /// Bytes sent and not yet taken by the dispatcher.
    queued: Arc<AtomicUsize>,
}

impl Outbound for ChannelOutbound {
    fn send(&self, message: Vec<u8>) -> Result<(), Closed> {
        let mut sender = self.sender.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(queue) = sender.as_ref() else {
            return Err(Closed);
        };
        let len = message.len();
        if self.queued.fetch_add(len, Ordering::AcqRel) + len > ENGINE_QUEUE_BYTES {
            tracing::warn!(
                limit = ENGINE_QUEUE_BYTES,
                "the MCP session's engine queue is full; closing its engine connection"
            );
            sender.take();
            return Err(Closed);
        }
        queue.send(message).map_err(|_| Closed)
    }

    fn close(&self) {
        self.sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

type Answer = Result<Value, (i64, String)>;

/// Where the dispatcher delivers what it reads.
#[derive(Default)]
struct Routes {
    /// The link's requests waiting for their answer, by id.
    pending: HashMap<String, oneshot::Sender<Answer>>,
    /// The tool call running a turn on each thread, by thread id.
    threads: HashMap<String, ThreadRoute>,
    /// Set once the connection has closed: nothing is routed any more.
    closed: bool,
}

/// Where the dispatcher puts a held thread's messages.
struct ThreadRoute {
    sender: mpsc::Sender<EngineMessage>,
    /// Set when the queue was full: the route is dropped and the call told why.
    overflowed: Arc<AtomicBool>,
}

/// A thread's messages while a tool call holds it; dropping it releases the thread.
pub struct ThreadEvents {
    thread_id: String,
    /// Held while the call runs; the next call on the thread waits for it.
    _turn: tokio::sync::OwnedMutexGuard<()>,
    receiver: mpsc::Receiver<EngineMessage>,
    overflowed: Arc<AtomicBool>,
    routes: Arc<Mutex<Routes>>,
}

impl ThreadEvents {
    /// The next message about the thread; `None` once the engine connection has closed or the
    /// call fell [`THREAD_QUEUE`] messages behind (see [`Self::overflowed`]).
    pub async fn next(&mut self) -> Option<EngineMessage> {
        self.receiver.recv().await
    }

    /// Whether the messages stopped because the call did not take them fast enough (its queue
    /// of [`THREAD_QUEUE`] filled up), rather than because the engine connection closed.
    pub fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Acquire)
    }
}

impl Drop for ThreadEvents {
    fn drop(&mut self) {
        lock(&self.routes).threads.remove(&self.thread_id);
    }
}

fn lock(routes: &Mutex<Routes>) -> std::sync::MutexGuard<'_, Routes> {
    routes.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One MCP session's connection to the engine.
pub struct EngineLink {
    server: Server<Engine>,
    connection: Arc<Connection>,
    routes: Arc<Mutex<Routes>>,
    next_id: AtomicU64,
    /// Threads this connection follows (started or resumed on it).
    followed: Mutex<HashSet<String>>,
    /// One lock per thread: tool calls on the same thread run one after the other.
    turns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl EngineLink {
    /// Opens a connection on `server` and completes the app-server handshake on it, naming the
    /// MCP host `client` (for the engine's logs and user agent). Must run inside the server's
    /// Tokio runtime.
    pub async fn open(server: &Server<Engine>, client: ClientInfo) -> Result<Arc<Self>, LinkError> {
        Self::open_with(server, client, false).await
    }

    /// As [`open`](Self::open), negotiating the `experimentalApi` capability (`agentwire acp`
    /// declares `thread/start`'s `dynamicTools`, an experimental member).
    pub async fn open_experimental(
        server: &Server<Engine>,
        client: ClientInfo,
    ) -> Result<Arc<Self>, LinkError> {
        Self::open_with(server, client, true).await
    }

    async fn open_with(
        server: &Server<Engine>,
        client: ClientInfo,
        experimental: bool,
    ) -> Result<Arc<Self>, LinkError> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let outbound = ChannelOutbound {
            sender: Mutex::new(Some(sender)),
            queued: queued.clone(),
        };
        let connection = server.hub().open(Box::new(outbound));
        let routes = Arc::new(Mutex::new(Routes::default()));
        let link = Arc::new(Self {
            server: server.clone(),
            connection,
            routes: routes.clone(),
            next_id: AtomicU64::new(1),
            followed: Mutex::new(HashSet::new()),
            turns: Mutex::new(HashMap::new()),
        });
        let refuse = Refuser {
            server: server.clone(),
            connection: link.connection.clone(),
        };
        tokio::spawn(dispatch(receiver, queued, routes, refuse));
        link.handshake(client, experimental).await?;
        Ok(link)
    }

    /// `initialize` (with `experimentalApi` when `experimental`) and `initialized`, as any
    /// app-server client starts.
    async fn handshake(&self, client: ClientInfo, experimental: bool) -> Result<(), LinkError> {
        let capabilities = experimental.then(|| {
            InitializeCapabilities::builder()
                .experimental_api(true)
                .build()
        });
        let params = InitializeParams::builder()
            .client_info(client)
            .maybe_capabilities(capabilities)
            .build();
        self.request::<Initialize>(&params).await?;
        self.notify::<Initialized>(&Default::default());
        Ok(())
    }

    /// Hands one message (a line without its newline) to the server.
    fn send(&self, line: &str) {
        self.server
            .handle_message(&self.connection, line.as_bytes());
    }

    /// Sends the app-server request `M` and waits for its answer.
    pub async fn request<M: Request>(&self, params: &M::Params) -> Result<M::Response, LinkError> {
        let id = format!("mcp-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (sender, receiver) = oneshot::channel();
        {
            let mut routes = lock(&self.routes);
            if routes.closed {
                return Err(LinkError::Closed);
            }
            routes.pending.insert(id.clone(), sender);
        }
        let params = match serde_json::to_value(params) {
            Ok(params) => params,
            Err(e) => {
                lock(&self.routes).pending.remove(&id);
                return Err(LinkError::Malformed {
                    method: M::NAME,
                    reason: format!("the params do not encode: {e}"),
                });
            }
        };
        self.send(&wire::request(
            &RequestId::String(id),
            M::NAME,
            Some(&params),
        ));
        match receiver.await {
            Ok(Ok(result)) => serde_json::from_value(result).map_err(|e| LinkError::Malformed {
                method: M::NAME,
                reason: e.to_string(),
            }),
            Ok(Err((code, message))) => Err(LinkError::Engine {
                method: M::NAME,
                message,
                code,
            }),
            Err(_) => Err(LinkError::Closed),
        }
    }

    /// Sends the app-server notification `M`.
    pub fn notify<M: Notification>(&self, params: &M::Params) {
        let params = if agentwire_protocol::method::has_params::<M>() {
            match serde_json::to_value(params) {
                Ok(params) => Some(params),
                Err(error) => {
                    tracing::warn!(method = M::NAME, %error, "notification params do not encode; not sent");
                    return;
                }
            }
        } else {
            None
        };
        self.send(&wire::notification(M::NAME, params.as_ref()));
    }

    /// Answers the engine's request `id` with `result`.
    pub fn answer(&self, id: &Value, result: &Value) {
        if let Some(line) = answer_line(id, Ok(result.clone())) {
            self.send(&line);
        }
    }

    /// Answers the engine's request `id` with an error saying `message`.
    pub fn refuse(&self, id: &Value, message: &str) {
        if let Some(line) = answer_line(id, Err(refusal(message))) {
            self.send(&line);
        }
    }

    /// Whether this connection follows thread `thread_id` (receives its notifications).
    pub fn follows(&self, thread_id: &str) -> bool {
        self.followed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(thread_id)
    }

    /// Records that this connection follows thread `thread_id`.
    pub fn follow(&self, thread_id: &str) {
        self.followed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(thread_id.to_owned());
    }

    /// Takes the messages about `thread_id` until the returned handle is dropped, after any
    /// earlier call on the thread has released it; `None` once the connection has closed.
    pub async fn hold_thread(&self, thread_id: &str) -> Option<ThreadEvents> {
        let turn = self
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(thread_id.to_owned())
            .or_default()
            .clone();
        let guard = turn.lock_owned().await;
        let mut routes = lock(&self.routes);
        if routes.closed {
            return None;
        }
        let (sender, receiver) = mpsc::channel(THREAD_QUEUE);
        let overflowed = Arc::new(AtomicBool::new(false));
        let route = ThreadRoute {
            sender,
            overflowed: overflowed.clone(),
        };
        routes.threads.insert(thread_id.to_owned(), route);
        Some(ThreadEvents {
            thread_id: thread_id.to_owned(),
            _turn: guard,
            receiver,
            overflowed,
            routes: self.routes.clone(),
        })
    }
}

impl Drop for EngineLink {
    fn drop(&mut self) {
        self.server.hub().close(self.connection.id());
    }
}

/// Answers the engine's requests that no tool call can take (there is no MCP host to ask): an
/// error, which the engine reads as a refusal, instead of letting them wait for their timeout.
struct Refuser {
    server: Server<Engine>,
    connection: Arc<Connection>,
}

impl Refuser {
    fn refuse(&self, id: &Value, method: &str) {
        let reason = format!("{method} cannot be answered: no MCP tool call runs on its thread");
        if let Some(line) = answer_line(id, Err(refusal(&reason))) {
            self.server
                .handle_message(&self.connection, line.as_bytes());
        }
    }
}

/// The error that refuses an engine request (-32601, as a client without the method answers).
fn refusal(message: &str) -> JsonRpcErrorObject {
    JsonRpcErrorObject::builder()
        .code(-32601)
        .message(message.to_owned())
        .build()
}

/// The answer to the engine's request `id` (as [`EngineMessage::Request`] carries it); `None`,
/// logged, for an id that is neither a string nor an integer (the engine never sends one).
fn answer_line(id: &Value, outcome: agentwire_client::Answer) -> Option<String> {
    match serde_json::from_value::<RequestId>(id.clone()) {
        Ok(request_id) => Some(wire::answer(&request_id, &outcome)),
        Err(_) => {
            tracing::warn!(%id, "an engine request id that cannot be answered; not answered");
            None
        }
    }
}

/// Reads what the engine sends on the connection and routes it, until the connection closes.
async fn dispatch(
    mut receiver: mpsc::UnboundedReceiver<Vec<u8>>,
    queued: Arc<AtomicUsize>,
    routes: Arc<Mutex<Routes>>,
    refuser: Refuser,
) {
    while let Some(bytes) = receiver.recv().await {
        queued.fetch_sub(bytes.len(), Ordering::AcqRel);
        let message: Value = match serde_json::from_slice(&bytes) {
            Ok(message) => message,
            Err(e) => {
                tracing::warn!(error = %e, "unreadable message from the engine dropped");
                continue;
            }
        };
        if let Some((id, method)) = route(&routes, message) {
            refuser.refuse(&id, &method);
        }
    }
    let mut routes = lock(&routes);
    routes.closed = true;
    routes.pending.clear();
    routes.threads.clear();
}

/// Delivers one message; returns the id and method of an engine request nobody takes.
fn route(routes: &Mutex<Routes>, message: Value) -> Option<(Value, String)> {
    let (method, id, params) = match Incoming::from_value(message) {
        Ok(Incoming::Request(request)) => (request.method, Some(json!(request.id)), request.params),
        Ok(Incoming::Notification(notification)) => {
            (notification.method, None, notification.params)
        }
        Ok(Incoming::Answer { id, outcome }) => {
            deliver(routes, id, outcome);
            return None;
        }
        Ok(Incoming::Orphan(error)) => {
            tracing::debug!(code = error.code, message = %error.message, "engine error about no request ignored");
            return None;
        }
        Ok(other) => {
            tracing::debug!(?other, "engine message of an unknown kind ignored");
            return None;
        }
        Err(error) => {
            tracing::debug!(%error, "unreadable engine message ignored");
            return None;
        }
    };
    let Some(thread_id) = params.get("threadId").and_then(Value::as_str) else {
        tracing::trace!(method, "engine message about no thread");
        return id.map(|id| (id, method));
    };
    let thread_id = thread_id.to_owned();
    let mut routes = lock(routes);
    let Some(route) = routes.threads.get(&thread_id) else {
        tracing::trace!(method, "engine message for no running tool call");
        return id.map(|id| (id, method));
    };
    let message = match id {
        Some(id) => EngineMessage::Request { id, method, params },
        None => EngineMessage::Notification { method, params },
    };
    match route.sender.try_send(message) {
        Ok(()) => None,
        // The call is gone; its `ThreadEvents` drop removes the route.
        Err(mpsc::error::TrySendError::Closed(_)) => None,
        Err(mpsc::error::TrySendError::Full(message)) => {
            tracing::warn!(
                thread_id,
                queued = THREAD_QUEUE,
                "an MCP tool call fell behind its thread's events; it stops following the turn"
            );
            route.overflowed.store(true, Ordering::Release);
            routes.threads.remove(&thread_id);
            match message {
                EngineMessage::Request { id, method, .. } => Some((id, method)),
                EngineMessage::Notification { .. } => None,
            }
        }
    }
}

/// Hands an answer to the request of the link's that waits for it.
fn deliver(routes: &Mutex<Routes>, id: RequestId, outcome: agentwire_client::Answer) {
    let RequestId::String(key) = id else {
        tracing::debug!(%id, "answer to no pending request ignored");
        return;
    };
    let Some(sender) = lock(routes).pending.remove(&key) else {
        tracing::debug!(id = key, "answer to no pending request ignored");
        return;
    };
    let _ = sender.send(outcome.map_err(|error| (error.code, error.message)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine's messages that the dispatcher has not taken yet are bounded: the message
    /// that would take them past [`ENGINE_QUEUE_BYTES`] closes the connection for good.
    #[test]
    fn the_engine_queue_closes_the_connection_past_its_bound() {
        let (sender, mut receiver) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let outbound = ChannelOutbound {
            sender: Mutex::new(Some(sender)),
            queued: queued.clone(),
        };
        // Messages already waiting, up to 8 bytes short of the bound.
        queued.store(ENGINE_QUEUE_BYTES - 8, Ordering::Release);
        assert!(outbound.send(vec![b'a'; 8]).is_ok(), "up to the bound fits");
        assert!(outbound.send(vec![b'b']).is_err(), "one byte more closes");
        // What the dispatcher takes afterwards does not reopen it.
        queued.store(0, Ordering::Release);
        assert!(outbound.send(vec![b'c']).is_err(), "closed for good");
        assert_eq!(receiver.try_recv().ok(), Some(vec![b'a'; 8]));
        assert!(matches!(
            receiver.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
    }
}
