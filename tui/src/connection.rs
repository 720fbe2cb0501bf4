//! The client side of one JSON-RPC connection to an app-server: requests with their answers,
//! and everything the server sends on its own (notifications, server requests) as [`Incoming`].
//!
//! Messages travel as text, one JSON value per message: lines over a child's pipes or the Unix
//! control socket, text frames over a websocket. Both directions are bounded: lines longer than
//! [`MAX_MESSAGE_BYTES`] are dropped and reported, and the outgoing queue holds
//! [`OUTGOING_QUEUE`] messages.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agentwire_runtime::framing::{FrameEvent, LineFramer};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// The largest message accepted from the server.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Messages waiting to be written before a send waits.
pub const OUTGOING_QUEUE: usize = 256;

/// What the server sent that is not an answer to one of our requests.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// A request the client must answer (an approval), by `id`.
    Request {
        /// The request id, echoed in the answer.
        id: Value,
        /// Its method.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// The connection ended; the text says why.
    Closed(String),
}

/// A JSON-RPC error answer, or a failure to get any answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The error code (`-32000` when the connection failed before an answer came).
    pub code: i64,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>>>;

/// The sending half of a connection; cheap to clone.
#[derive(Debug, Clone)]
pub struct Connection {
    outgoing: mpsc::Sender<String>,
    pending: Pending,
    next_id: Arc<AtomicI64>,
}

impl Connection {
    /// Sends a request and waits for its answer.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.outgoing.send(message.to_string()).await.is_err() {
            lock(&self.pending).remove(&id);
            return Err(closed());
        }
        rx.await.unwrap_or_else(|_| Err(closed()))
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), RpcError> {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(message).await
    }

    /// Answers the server request `id` with `result`.
    pub async fn answer(&self, id: Value, result: Value) -> Result<(), RpcError> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await
    }

    /// Answers the server request `id` with a JSON-RPC error.
    pub async fn answer_error(&self, id: Value, code: i64, message: &str) -> Result<(), RpcError> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
            .await
    }

    /// Sends `initialize` (opting in to the experimental surface) and `initialized`.
    pub async fn handshake(&self, client_name: &str) -> Result<Value, RpcError> {
        let result = self
            .request(
                "initialize",
                json!({
                    "clientInfo": {"name": client_name, "title": "agentwire", "version": env!("CARGO_PKG_VERSION")},
                    "capabilities": {"experimentalApi": true},
                }),
            )
            .await?;
        self.notify("initialized", None).await?;
        Ok(result)
    }

    async fn send(&self, message: Value) -> Result<(), RpcError> {
        self.outgoing
            .send(message.to_string())
            .await
            .map_err(|_| closed())
    }
}

fn closed() -> RpcError {
    RpcError {
        code: -32000,
        message: "the connection to the app-server is closed".to_owned(),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A connection over a byte stream carrying one JSON message per line (a child's stdio, a Unix
/// socket). Runs its reader and writer as tasks of the current runtime.
pub fn over_lines(
    reader: impl AsyncRead + Unpin + Send + 'static,
    writer: impl AsyncWrite + Unpin + Send + 'static,
) -> (Connection, mpsc::Receiver<Incoming>) {
    let (connection, outgoing, incoming_tx, incoming) = parts();
    tokio::spawn(write_lines(writer, outgoing));
    let pending = connection.pending.clone();
    tokio::spawn(async move {
        let why = read_lines(reader, &pending, &incoming_tx).await;
        fail_pending(&pending);
        let _ = incoming_tx.send(Incoming::Closed(why)).await;
    });
    (connection, incoming)
}

/// A connection over a websocket (`ws://` or `wss://`), with `Authorization: Bearer` when a
/// token is given.
pub async fn over_websocket(
    url: &str,
    token: Option<&str>,
) -> Result<(Connection, mpsc::Receiver<Incoming>), String> {
    let mut request = url
        .into_client_request()
        .map_err(|e| format!("--remote {url}: {e}"))?;
    if let Some(token) = token {
        let value = format!("Bearer {token}")
            .parse()
            .map_err(|_| "the auth token is not a valid header value".to_owned())?;
        request.headers_mut().insert("authorization", value);
    }
    let (socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    Ok(over_socket(socket))
}

/// A connection to the websocket served on the app-server's Unix control socket at `path`.
pub async fn over_unix(path: &Path) -> Result<(Connection, mpsc::Receiver<Incoming>), String> {
    let stream = UnixStream::connect(path)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", path.display()))?;
    let (socket, _) = tokio_tungstenite::client_async("ws://localhost/", stream)
        .await
        .map_err(|e| format!("websocket handshake on {} failed: {e}", path.display()))?;
    Ok(over_socket(socket))
}

/// Runs the reader and writer of an open websocket.
fn over_socket<S>(socket: WebSocketStream<S>) -> (Connection, mpsc::Receiver<Incoming>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut stream) = socket.split();
    let (connection, mut outgoing, incoming_tx, incoming) = parts();
    tokio::spawn(async move {
        while let Some(text) = outgoing.recv().await {
            if sink.send(Message::text(text)).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let pending = connection.pending.clone();
    tokio::spawn(async move {
        let why = loop {
            match stream.next().await {
                Some(Ok(Message::Text(text))) => {
                    route(text.as_bytes(), &pending, &incoming_tx).await;
                }
                Some(Ok(Message::Close(frame))) => {
                    break frame.map_or("the server closed the connection".to_owned(), |f| {
                        format!("the server closed the connection: {} {}", f.code, f.reason)
                    });
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => break format!("the connection failed: {e}"),
                None => break "the server closed the connection".to_owned(),
            }
        };
        fail_pending(&pending);
        let _ = incoming_tx.send(Incoming::Closed(why)).await;
    });
    (connection, incoming)
}

type Parts = (
    Connection,
    mpsc::Receiver<String>,
    mpsc::Sender<Incoming>,
    mpsc::Receiver<Incoming>,
);

fn parts() -> Parts {
    let (outgoing_tx, outgoing) = mpsc::channel(OUTGOING_QUEUE);
    let (incoming_tx, incoming) = mpsc::channel(OUTGOING_QUEUE);
    let connection = Connection {
        outgoing: outgoing_tx,
        pending: Arc::default(),
        next_id: Arc::new(AtomicI64::new(1)),
    };
    (connection, outgoing, incoming_tx, incoming)
}

async fn write_lines(mut writer: impl AsyncWrite + Unpin, mut outgoing: mpsc::Receiver<String>) {
    while let Some(mut line) = outgoing.recv().await {
        line.push('\n');
        if writer.write_all(line.as_bytes()).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
}

async fn read_lines(
    mut reader: impl AsyncRead + Unpin,
    pending: &Pending,
    incoming: &mpsc::Sender<Incoming>,
) -> String {
    let mut framer = LineFramer::new(MAX_MESSAGE_BYTES);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let read = match reader.read(&mut chunk).await {
            Ok(0) => return "the app-server closed its output".to_owned(),
            Ok(n) => n,
            Err(e) => return format!("reading from the app-server failed: {e}"),
        };
        let mut messages = Vec::new();
        framer.push(&chunk[..read], |event| match event {
            FrameEvent::Message(bytes) => messages.push(bytes.to_vec()),
            FrameEvent::TooLarge { bytes } => messages.push(
                json!({"jsonrpc": "2.0", "method": "agentwire/tooLarge", "params": {"bytes": bytes}})
                    .to_string()
                    .into_bytes(),
            ),
        });
        for message in messages {
            route(&message, pending, incoming).await;
        }
    }
}

/// Hands one message to whoever waits for it: the request it answers, or the client.
async fn route(bytes: &[u8], pending: &Pending, incoming: &mpsc::Sender<Incoming>) {
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(bytes) else {
        let _ = incoming
            .send(Incoming::Notification {
                method: "agentwire/unreadable".to_owned(),
                params: json!({"bytes": bytes.len()}),
            })
            .await;
        return;
    };
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let params = message.remove("params").unwrap_or(Value::Null);
    match (method, message.remove("id")) {
        (Some(method), Some(id)) => {
            let _ = incoming
                .send(Incoming::Request { id, method, params })
                .await;
        }
        (Some(method), None) => {
            let _ = incoming
                .send(Incoming::Notification { method, params })
                .await;
        }
        (None, Some(id)) => {
            let Some(waiter) = id.as_i64().and_then(|id| lock(pending).remove(&id)) else {
                return;
            };
            let answer = match message.remove("error") {
                Some(error) => Err(RpcError {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("the server sent an error without a message")
                        .to_owned(),
                }),
                None => Ok(message.remove("result").unwrap_or(Value::Null)),
            };
            let _ = waiter.send(answer);
        }
        (None, None) => {}
    }
}

fn fail_pending(pending: &Pending) {
    for (_, waiter) in lock(pending).drain() {
        let _ = waiter.send(Err(closed()));
    }
}
