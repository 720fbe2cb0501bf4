//! What a handler receives and returns, and the decoding the dispatch table relies on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agentwire_protocol::RequestId;
use tokio::sync::Notify;

use crate::peer::Peer;
use agentwire_protocol::jsonrpc::{JsonRpcErrorObject, error_codes};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Identifies one client connection for the lifetime of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(pub u64);

/// Who sent a request, and which request it is.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// The connection the request came in on: notifications and server→client requests go
    /// through it.
    pub peer: Peer,
    /// The request's id, as the client sent it.
    pub request_id: RequestId,
    /// Settles once the request's answer is queued for the client.
    pub answered: Answered,
}

impl RequestContext {
    /// Runs `task` once this request's answer is queued for the client, so that what `task`
    /// sends (say, `thread/started` after `thread/start`) reaches the client after the answer,
    /// whatever thread the runtime runs it on. It is background work of the server: shutdown
    /// (end of input included) waits for it. Without a Tokio runtime, runs it at once.
    pub fn after_response(&self, task: impl FnOnce() + Send + 'static) {
        if tokio::runtime::Handle::try_current().is_err() {
            return task();
        }
        let answered = self.answered.clone();
        self.peer.hub().spawn_background(async move {
            answered.wait().await;
            task();
        });
    }
}

/// Whether a request has been answered: a handle the engine can wait on (see
/// [`RequestContext::after_response`]). It also settles when the request is abandoned
/// (connection closed, handler dropped), so nobody waits forever.
#[derive(Debug, Clone, Default)]
pub struct Answered(Arc<AnsweredState>);

#[derive(Debug, Default)]
struct AnsweredState {
    done: AtomicBool,
    notify: Notify,
}

impl Answered {
    /// A handle that has not settled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Settles the handle: wakes every waiter, now and later.
    pub fn settle(&self) {
        self.0.done.store(true, Ordering::Release);
        self.0.notify.notify_waiters();
    }

    /// Whether it has settled.
    pub fn is_settled(&self) -> bool {
        self.0.done.load(Ordering::Acquire)
    }

    /// Waits until it settles.
    pub async fn wait(&self) {
        loop {
            let notified = self.0.notify.notified();
            if self.is_settled() {
                return;
            }
            notified.await;
        }
    }
}

/// Settles an [`Answered`] when dropped: however the request's job ends.
#[derive(Debug)]
pub(crate) struct SettleOnDrop(pub(crate) Answered);

impl Drop for SettleOnDrop {
    fn drop(&mut self) {
        self.0.settle();
    }
}

/// Who sent a notification.
#[derive(Debug, Clone)]
pub struct NotificationContext {
    /// The connection the notification came in on.
    pub peer: Peer,
}

/// A failed request: becomes the `error` member of the response.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct HandlerError {
    /// The JSON-RPC error code; see [`error_codes`].
    pub code: i64,
    /// A sentence the user can act on.
    pub message: String,
    /// Structured detail.
    pub data: Option<serde_json::Value>,
}

impl HandlerError {
    /// An error with a code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// -32601: no handler for `method`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            error_codes::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// -32004: `method` is declared but only means something against a service or platform
    /// this server does not reach; `data` is `{"reason": <why>, "method": <method>}`.
    pub fn unavailable(method: &str, why: agentwire_protocol::Unavailable) -> Self {
        Self::new(
            error_codes::UNAVAILABLE,
            format!(
                "{method} is not available on this server: {}",
                why.explanation()
            ),
        )
        .with_data(serde_json::json!({"reason": why.wire_name(), "method": method}))
    }

    /// -32602: the params of `method` are not acceptable.
    pub fn invalid_params(method: &str, reason: impl std::fmt::Display) -> Self {
        Self::new(
            error_codes::INVALID_PARAMS,
            format!("Invalid params for {method}: {reason}"),
        )
    }

    /// -32600: the request is not allowed now.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(error_codes::INVALID_REQUEST, message)
    }

    /// -32603: the server failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(error_codes::INTERNAL_ERROR, message)
    }

    /// Attaches structured detail.
    pub fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The `error` member of the response.
    pub fn to_error_object(&self) -> JsonRpcErrorObject {
        JsonRpcErrorObject::builder()
            .code(self.code)
            .message(self.message.clone())
            .maybe_data(self.data.clone())
            .build()
    }
}

/// Decodes a method's params. An absent `params` member decodes like `null`.
///
/// The schema has accepted them already; what can still fail here is what a schema does not
/// say (an integer past the range of its Rust type, say). The error then has the same shape as
/// a schema rejection: `data.errors[]` with the JSON pointer of the offending value.
pub(crate) fn decode_params<T: DeserializeOwned>(
    method: &str,
    params: Option<serde_json::Value>,
) -> Result<T, HandlerError> {
    serde_path_to_error::deserialize(params.unwrap_or(serde_json::Value::Null)).map_err(|error| {
        let pointer = json_pointer(error.path());
        let message = error.inner().to_string();
        let reason = if pointer.is_empty() {
            message.clone()
        } else {
            format!("{pointer}: {message}")
        };
        HandlerError::invalid_params(method, reason).with_data(serde_json::json!({
            "method": method,
            "errors": [{ "pointer": pointer, "message": message }],
        }))
    })
}

/// The JSON pointer (RFC 6901) of a deserializer path.
fn json_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        pointer.push('/');
        match segment {
            Segment::Seq { index } => pointer.push_str(&index.to_string()),
            Segment::Map { key } => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
            Segment::Enum { variant } => pointer.push_str(variant),
            Segment::Unknown => pointer.push('?'),
        }
    }
    pointer
}

/// Encodes a handler's result as the response's `result` member: straight to JSON text, which
/// the response then embeds as it is (no intermediate `serde_json::Value`).
pub(crate) fn encode_result<T: Serialize>(
    method: &str,
    result: T,
) -> Result<Box<serde_json::value::RawValue>, HandlerError> {
    serde_json::value::to_raw_value(&result).map_err(|error| {
        HandlerError::internal(format!("encoding the result of {method} failed: {error}"))
    })
}
