//! The way out of a connection, and the bytes of each kind of outgoing message.

use agentwire_protocol::RequestId;
use agentwire_protocol::jsonrpc::JsonRpcErrorObject;
use serde::Serialize;
use serde_json::Value;

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
