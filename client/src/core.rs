//! The state one connection shares between its tasks: requests waiting for answers, the
//! notification queue, and the routing of every incoming message.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use agentwire_protocol::jsonrpc::{JsonRpcErrorObject, RequestId};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::Notification;
use crate::server_requests::{ServerRequest, ServerRequestHandler};
use crate::wire::{self, Incoming};

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

    /// Routes one message from the server (classified by [`Incoming::parse`]).
    pub(crate) async fn incoming(self: &Arc<Self>, bytes: &[u8]) {
        match Incoming::parse(bytes) {
            Ok(Incoming::Request(request)) => self.server_request(request).await,
            Ok(Incoming::Notification(notification)) => {
                if let Some(queue) = &self.notifications {
                    // A full queue holds the reader back: the server sees backpressure.
                    let _ = queue.send(notification).await;
                }
            }
            Ok(Incoming::Answer {
                id: RequestId::Integer(id),
                outcome,
            }) => self.answer(id, outcome),
            Ok(Incoming::Answer { id, .. }) => {
                tracing::warn!(%id, "an answer to an id this client never uses; ignored")
            }
            Ok(Incoming::Orphan(error)) => {
                tracing::warn!(code = error.code, message = %error.message, "the server reported an error about no request")
            }
            Err(error) => tracing::warn!(%error, "the server sent an unreadable message; ignored"),
        }
    }

    fn answer(&self, id: i64, reply: Reply) {
        match self.state().pending.remove(&id) {
            Some(waiting) => {
                let _ = waiting.send(reply);
            }
            None => tracing::warn!(id, "an answer to no request in flight; ignored"),
        }
    }

    async fn server_request(self: &Arc<Self>, request: ServerRequest) {
        let id = request.id.clone();
        let Ok(slot) = self.slots.clone().acquire_owned().await else {
            return;
        };
        let core = self.clone();
        tokio::spawn(async move {
            let answer = (core.handler)(request).await;
            drop(slot);
            let message = wire::answer(&id, &answer);
            let _ = core.out.send(Outgoing::Message(message)).await;
        });
    }
}
