//! The state one connection shares between its tasks: requests waiting for answers, the
//! notification queue, and the routing of every incoming message.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use agentwire_protocol::jsonrpc::{JsonRpcErrorObject, RequestId, error_codes};
use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::Notification;
use crate::server_requests::{ServerRequest, ServerRequestHandler};

/// Server requests handled at once; the reader waits for a slot beyond that.
const SERVER_REQUEST_SLOTS: usize = 64;

/// What the writer task sends.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// One JSON message, without a newline.
    Message(String),
    /// End the output (close stdin, or send a websocket close frame).
    Close,
}

/// What a request waits for.
pub(crate) type Reply = Result<Value, JsonRpcErrorObject>;

#[derive(Default)]
struct State {
    pending: HashMap<i64, oneshot::Sender<Reply>>,
    /// Why the connection ended, once it has.
    closed: Option<String>,
}

/// Shared by the client handle, the reader and the writer.
pub(crate) struct Core {
    pub(crate) out: mpsc::Sender<Outgoing>,
    state: Mutex<State>,
    next_id: AtomicI64,
    notifications: Option<mpsc::Sender<Notification>>,
    handler: ServerRequestHandler,
    slots: Arc<Semaphore>,
}

impl Core {
    pub(crate) fn new(
        out: mpsc::Sender<Outgoing>,
        notifications: Option<mpsc::Sender<Notification>>,
        handler: ServerRequestHandler,
    ) -> Arc<Self> {
        Arc::new(Self {
            out,
            state: Mutex::new(State::default()),
            next_id: AtomicI64::new(0),
            notifications,
            handler,
            slots: Arc::new(Semaphore::new(SERVER_REQUEST_SLOTS)),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain maps behind: still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a request: its id and the receiver of its answer; `Err(reason)` once closed.
    pub(crate) fn register(&self) -> Result<(i64, oneshot::Receiver<Reply>), String> {
        let mut state = self.state();
        if let Some(reason) = &state.closed {
            return Err(reason.clone());
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (sender, receiver) = oneshot::channel();
        state.pending.insert(id, sender);
        Ok((id, receiver))
    }

    /// Forgets a request that is no longer waited for.
    pub(crate) fn forget(&self, id: i64) {
        self.state().pending.remove(&id);
    }

    /// Why the connection ended, once it has.
    pub(crate) fn closed(&self) -> Option<String> {
        self.state().closed.clone()
    }

    /// Ends the connection: every waiting request fails with `reason`.
    pub(crate) fn close(&self, reason: String) {
        let mut state = self.state();
        if state.closed.is_none() {
            tracing::debug!(%reason, "connection closed");
            state.closed = Some(reason);
        }
        state.pending.clear();
    }

    /// Routes one message from the server.
    pub(crate) async fn incoming(self: &Arc<Self>, bytes: &[u8]) {
        let message: Map<String, Value> = match serde_json::from_slice(bytes) {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(%error, "the server sent a message that is not a JSON object; ignored");
                return;
            }
        };
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some(method), Some(id)) => self.server_request(method, id, &message).await,
            (Some(method), None) => {
                let notification = Notification {
                    method: method.to_owned(),
                    params: message.get("params").cloned().unwrap_or(Value::Null),
                };
                if let Some(queue) = &self.notifications {
                    // A full queue holds the reader back: the server sees backpressure.
                    let _ = queue.send(notification).await;
                }
            }
            (None, Some(Value::Number(id))) => match id.as_i64() {
                Some(id) => self.answer(id, &message),
                None => tracing::warn!(%id, "an answer to an id this client never uses; ignored"),
            },
            _ => match message.get("error") {
                Some(error) => {
                    tracing::warn!(%error, "the server reported an error about no request")
                }
                None => {
                    tracing::warn!("the server sent a message with neither method nor id; ignored")
                }
            },
        }
    }

    fn answer(&self, id: i64, message: &Map<String, Value>) {
        let reply = match (message.get("result"), message.get("error")) {
            (_, Some(error)) => Err(serde_json::from_value(error.clone()).unwrap_or_else(|e| {
                JsonRpcErrorObject::builder()
                    .code(error_codes::INTERNAL_ERROR)
                    .message(format!("the server sent a malformed error ({e}): {error}"))
                    .data(error.clone())
                    .build()
            })),
            (Some(result), None) => Ok(result.clone()),
            (None, None) => Ok(Value::Null),
        };
        match self.state().pending.remove(&id) {
            Some(waiting) => {
                let _ = waiting.send(reply);
            }
            None => tracing::warn!(id, "an answer to no request in flight; ignored"),
        }
    }

    async fn server_request(
        self: &Arc<Self>,
        method: &str,
        id: &Value,
        message: &Map<String, Value>,
    ) {
        let Ok(id) = serde_json::from_value::<RequestId>(id.clone()) else {
            tracing::warn!(%id, method, "a server request whose id is neither a string nor an integer; ignored");
            return;
        };
        let request = ServerRequest {
            id: id.clone(),
            method: method.to_owned(),
            params: message.get("params").cloned().unwrap_or(Value::Null),
        };
        let Ok(slot) = self.slots.clone().acquire_owned().await else {
            return;
        };
        let core = self.clone();
        tokio::spawn(async move {
            let answer = (core.handler)(request).await;
            drop(slot);
            let message = match answer {
                Ok(result) => json!({"id": id, "result": result}),
                Err(error) => json!({"id": id, "error": error}),
            };
            let _ = core.out.send(Outgoing::Message(message.to_string())).await;
        });
    }
}
