//! The way out of a connection, and the bytes of each kind of outgoing message.

use std::sync::atomic::{AtomicUsize, Ordering};

use agentwire_protocol::RequestId;
use agentwire_protocol::jsonrpc::JsonRpcErrorObject;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::Notify;

/// The connection is gone (closed, or disconnected for reading too slowly).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("connection closed")]
pub struct Closed;

/// Where a connection's outgoing messages go. Each call carries one complete JSON message; the
/// transport adds its framing (a newline, a websocket text frame).
pub trait Outbound: Send + Sync + 'static {
    /// Queues or writes one message. A transport whose peer stops reading closes the connection
    /// once its bounded queue is full and answers [`Closed`] from then on.
    fn send(&self, message: Vec<u8>) -> Result<(), Closed>;

    /// Closes the connection.
    fn close(&self);

    /// What this transport holds for its peer and has not written yet, for senders of bulk
    /// output that wait for the peer to read ([`Backlog::below`]); `None` when the transport
    /// holds nothing (it writes each message before `send` returns).
    fn backlog(&self) -> Option<&Backlog> {
        None
    }
}

/// The bytes a connection's transport has queued for its peer and not written yet, and a
/// signal each time that shrinks. Kept by the transport; waited on by whoever produces output
/// faster than a peer may read it (a `command/exec` output pump), so that it stops producing
/// while the queue is full instead of letting the queue grow.
#[derive(Debug, Default)]
pub struct Backlog {
    bytes: AtomicUsize,
    shrunk: Notify,
}

impl Backlog {
    /// Bytes queued now.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// `bytes` more were queued.
    pub fn add(&self, bytes: usize) {
        self.bytes.fetch_add(bytes, Ordering::AcqRel);
    }

    /// `bytes` were written (or dropped); wakes the waiters.
    pub fn remove(&self, bytes: usize) {
        let _ = self
            .bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                Some(held.saturating_sub(bytes))
            });
        self.shrunk.notify_waiters();
    }

    /// Sets the bytes queued (a transport that counts them itself); wakes the waiters.
    pub fn set(&self, bytes: usize) {
        self.bytes.store(bytes, Ordering::Release);
        self.shrunk.notify_waiters();
    }

    /// Resolves once at most `limit` bytes are queued.
    pub async fn below(&self, limit: usize) {
        loop {
            let shrunk = self.shrunk.notified();
            tokio::pin!(shrunk);
            shrunk.as_mut().enable();
            if self.bytes() <= limit {
                return;
            }
            shrunk.await;
        }
    }
}

#[derive(Serialize)]
struct ResultOut<'a, T: Serialize> {
    id: &'a RequestId,
    result: &'a T,
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    error: &'a JsonRpcErrorObject,
    id: Option<&'a RequestId>,
}

#[derive(Serialize)]
struct NotificationOut<'a, T: Serialize> {
    method: &'a str,
    params: &'a T,
}

#[derive(Serialize)]
struct RequestOut<'a, T: Serialize> {
    id: &'a RequestId,
    method: &'a str,
    params: &'a T,
}

fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    // Serialising our own types into a Vec cannot fail; fall back to an internal error message
    // rather than panic if a handler's type ever refuses to serialise.
    serde_json::to_vec(message).unwrap_or_else(|e| {
        let text = format!(
            "{{\"error\":{{\"code\":-32603,\"message\":\"encoding failed: {e}\"}},\"id\":null}}"
        );
        text.into_bytes()
    })
}

/// `{"id": …, "result": …}`.
pub fn result_message<T: Serialize>(id: &RequestId, result: &T) -> Vec<u8> {
    encode(&ResultOut { id, result })
}

/// `{"error": {…}, "id": …}`; `id` is `null` when the request could not be read.
pub fn error_message(id: Option<&RequestId>, error: &JsonRpcErrorObject) -> Vec<u8> {
    encode(&ErrorOut { error, id })
}

/// `{"method": …, "params": …}`.
pub fn notification_message<T: Serialize>(method: &str, params: &T) -> Vec<u8> {
    encode(&NotificationOut { method, params })
}

/// `{"id": …, "method": …, "params": …}`.
pub fn request_message<T: Serialize>(id: &RequestId, method: &str, params: &T) -> Vec<u8> {
    encode(&RequestOut { id, method, params })
}

/// Error object helper.
pub fn error_object(
    code: i64,
    message: impl Into<String>,
    data: Option<Value>,
) -> JsonRpcErrorObject {
    JsonRpcErrorObject::builder()
        .code(code)
        .message(message)
        .maybe_data(data)
        .build()
}
