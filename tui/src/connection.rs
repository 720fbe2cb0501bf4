//! The terminal client's view of its connection, on top of [`agentwire_client::Client`]: raw
//! requests, and one ordered stream of [`Incoming`] (notifications, the server's requests
//! waiting for the user, the end of the connection) for the front ends' event loops.

use std::sync::{Arc, Mutex, PoisonError};

use agentwire_client::{Answer, Client, ClientOptions, JsonRpcErrorObject, ServerRequest};
use agentwire_protocol::{ClientInfo, InitializeCapabilities};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::target::Target;

/// Server messages queued for the front end before the client stops reading.
const INCOMING_QUEUE: usize = 1024;

/// What the server sent that is not an answer to one of our requests.
#[derive(Debug)]
pub enum Incoming {
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// A request the user must answer (an approval).
    Request {
        /// The request id, as `serverRequest/resolved` names it.
        id: Value,
        /// Its method.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
        /// Where the answer goes.
        reply: Reply,
    },
    /// The connection ended; the text says why.
    Closed(String),
}

/// The one answer of a server request; clones share it, and only the first answer is sent.
#[derive(Debug, Clone)]
pub struct Reply(Arc<Mutex<Option<oneshot::Sender<Answer>>>>);

impl Reply {
    /// Sends `answer`, unless an answer was sent already.
    pub fn send(&self, answer: Answer) {
        let sender = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(sender) = sender {
            let _ = sender.send(answer);
        }
    }
}

/// A request the client could not get answered.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC error code (`-32000` when no answer came at all).
    pub code: i64,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl From<agentwire_client::Error> for RpcError {
    fn from(error: agentwire_client::Error) -> Self {
        match error.rpc() {
            Some(rpc) => Self {
                code: rpc.code,
                message: rpc.message.clone(),
            },
            None => Self {
                code: -32000,
                message: error.to_string(),
            },
        }
    }
}

/// The sending half of the connection; cheap to clone.
#[derive(Debug, Clone)]
pub struct Connection {
    client: Arc<Client>,
}

impl Connection {
    /// Sends a request and waits for its answer.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        Ok(self.client.request_value(method, Some(params)).await?)
    }
}

/// Connects to `target` and completes the handshake (opting in to the experimental surface).
/// A spawned server's stderr is dropped when `quiet` (a full screen would be torn by it);
/// otherwise its warnings and errors reach ours.
pub async fn open(
    target: &Target,
    quiet: bool,
) -> Result<(Connection, mpsc::Receiver<Incoming>), String> {
    let (incoming_tx, incoming) = mpsc::channel(INCOMING_QUEUE);
    let requests = incoming_tx.clone();
    let mut options = ClientOptions::builder()
        .client_info(
            ClientInfo::builder()
                .name("agentwire-tui".to_owned())
                .title("agentwire".to_owned())
                .version(env!("CARGO_PKG_VERSION").to_owned())
                .build(),
        )
        // Every other capability is absent, i.e. off.
        .maybe_capabilities(
            serde_json::from_value::<InitializeCapabilities>(serde_json::json!({
                "experimentalApi": true
            }))
            .ok(),
        )
        // Every server request waits for the user (or is refused) in the front end's loop.
        .server_requests(Arc::new(move |request: ServerRequest| {
            let requests = requests.clone();
            Box::pin(async move { ask(&requests, request).await })
        }))
        .build();
    let client = match target {
        Target::Spawn { program, args } => {
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            if quiet {
                command.stderr(std::process::Stdio::null());
            } else if std::env::var_os("RUST_LOG").is_none() {
                command.env("RUST_LOG", "warn");
            }
            Client::spawn(command, options).await
        }
        Target::WebSocket { url, token } => {
            options.bearer_token = token.clone();
            Client::connect(url, options).await
        }
        Target::Unix(path) => Client::connect(&format!("unix://{}", path.display()), options).await,
    }
    .map_err(|e| e.to_string())?;
    let client = Arc::new(client);
    let reader = client.clone();
    tokio::spawn(async move {
        while let Some(notification) = reader.next_notification().await {
            let message = Incoming::Notification {
                method: notification.method,
                params: notification.params,
            };
            if incoming_tx.send(message).await.is_err() {
                return;
            }
        }
        let why = reader
            .closed()
            .unwrap_or_else(|| "the server closed the connection".to_owned());
        let _ = incoming_tx.send(Incoming::Closed(why)).await;
    });
    Ok((Connection { client }, incoming))
}

/// Hands a server request to the front end and waits for the user's answer.
async fn ask(requests: &mpsc::Sender<Incoming>, request: ServerRequest) -> Answer {
    let (reply, answer) = oneshot::channel();
    let message = Incoming::Request {
        id: serde_json::to_value(&request.id).unwrap_or(Value::Null),
        method: request.method.clone(),
        params: request.params,
        reply: Reply(Arc::new(Mutex::new(Some(reply)))),
    };
    let gone = || {
        JsonRpcErrorObject::builder()
            .code(-32603)
            .message(format!(
                "the terminal client closed before answering {}",
                request.method
            ))
            .build()
    };
    if requests.send(message).await.is_err() {
        return Err(gone());
    }
    answer.await.unwrap_or_else(|_| Err(gone()))
}
