//! The JSON-RPC grammar a client of the app-server speaks, without any I/O: what a message from
//! the server is ([`Incoming::parse`]: an answer to one of the client's requests, a
//! notification, a request of the server's own, or an error about no request), and the exact
//! bytes of what the client sends ([`request`], [`notification`], [`answer`]).
//!
//! Every client of this workspace reads and writes messages through this module, whatever
//! carries them and however it waits: [`Client`](crate::Client) over a child's stdio, a
//! websocket or any byte stream (tokio); the MCP server's in-process link into the engine; and
//! the blocking drivers of the conformance suite, the benchmark and the end-to-end tests (which
//! read with [`LineReader`](crate::blocking::LineReader)). A driver that needs to send bytes no
//! well-behaved client would (a test of malformed input) writes them itself: nothing here is in
//! the way of a raw line.

use agentwire_protocol::jsonrpc::{JsonRpcErrorObject, RequestId, error_codes};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value, json};

use crate::Notification;
use crate::server_requests::{Answer, ServerRequest};

/// A message from the server, classified.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Incoming {
    /// The answer to the client's request `id`: its `result`, or its `error`.
    Answer {
        /// The id of the request answered.
        id: RequestId,
        /// `Ok(result)` (`null` when the answer has neither member) or `Err(error)`.
        outcome: Answer,
    },
    /// A notification (no `id`).
    Notification(Notification),
    /// A request of the server's own (an approval) that the client must answer.
    Request(ServerRequest),
    /// An error answer whose `id` is `null`: the server could not tell which request it was
    /// about (a line that was not JSON, say).
    Orphan(JsonRpcErrorObject),
}

/// Why a message from the server could not be classified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unreadable {
    /// The bytes are not a JSON object.
    #[error("not a JSON object: {0}")]
    NotAnObject(String),
    /// A request or answer whose `id` is neither a string nor an integer.
    #[error("an id that is neither a string nor an integer: {0}")]
    BadId(String),
    /// Neither `method` nor `id`.
    #[error("a message with neither method nor id")]
    Neither,
}

impl Incoming {
    /// Classifies one message's bytes (a line without its newline, or a websocket frame).
    pub fn parse(bytes: &[u8]) -> Result<Self, Unreadable> {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(value) => Self::from_value(value),
            Err(error) => Err(Unreadable::NotAnObject(error.to_string())),
        }
    }

    /// Classifies one message already parsed as JSON.
    pub fn from_value(value: Value) -> Result<Self, Unreadable> {
        let Value::Object(mut message) = value else {
            return Err(Unreadable::NotAnObject(clip_to(
                &value.to_string(),
                QUOTED_MAX,
            )));
        };
        let params = |message: &mut Map<String, Value>| {
            message
                .get_mut("params")
                .map(Value::take)
                .unwrap_or(Value::Null)
        };
        let method = match message.get("method") {
            Some(Value::String(method)) => Some(method.clone()),
            _ => None,
        };
        let id = message.get("id").cloned();
        match (method, id) {
            (Some(method), Some(id)) => {
                let id = request_id(id)?;
                Ok(Incoming::Request(ServerRequest {
                    id,
                    method,
                    params: params(&mut message),
                }))
            }
            (Some(method), None) => Ok(Incoming::Notification(Notification {
                method,
                params: params(&mut message),
            })),
            (None, Some(Value::Null)) | (None, None) => match message.get("error") {
                Some(error) => Ok(Incoming::Orphan(error_object(error))),
                None => Err(Unreadable::Neither),
            },
            (None, Some(id)) => {
                let id = request_id(id)?;
                let outcome = match message.get("error") {
                    Some(error) => Err(error_object(error)),
                    None => Ok(message.get_mut("result").map_or(Value::Null, Value::take)),
                };
                Ok(Incoming::Answer { id, outcome })
            }
        }
    }
}

fn request_id(id: Value) -> Result<RequestId, Unreadable> {
    let shown = clip_to(&id.to_string(), QUOTED_MAX);
    serde_json::from_value(id).map_err(|_| Unreadable::BadId(shown))
}

/// The `error` member as sent, or an internal error that quotes it when it is malformed.
fn error_object(error: &Value) -> JsonRpcErrorObject {
    serde_json::from_value(error.clone()).unwrap_or_else(|e| {
        JsonRpcErrorObject::builder()
            .code(error_codes::INTERNAL_ERROR)
            .message(format!("the server sent a malformed error ({e}): {error}"))
            .data(error.clone())
            .build()
    })
}

/// A request or notification as it goes out, borrowing its params (nothing is copied).
#[derive(serde::Serialize)]
struct Outgoing<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
}

impl Outgoing<'_> {
    fn line(&self) -> String {
        // A struct of strings, an id and a JSON value always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The request `method` with id `id` (params left out when `None`), without a newline.
pub fn request(id: &RequestId, method: &str, params: Option<&Value>) -> String {
    Outgoing {
        id: Some(id),
        method,
        params,
    }
    .line()
}

/// The notification `method` (params left out when `None`), without a newline.
pub fn notification(method: &str, params: Option<&Value>) -> String {
    Outgoing {
        id: None,
        method,
        params,
    }
    .line()
}

/// The answer to the server's request `id`: its `result` or its `error`, without a newline.
pub fn answer(id: &RequestId, outcome: &Answer) -> String {
    match outcome {
        Ok(result) => json!({"id": id, "result": result}),
        Err(error) => json!({"id": id, "error": error}),
    }
    .to_string()
}

/// What [`peek`] sees of an answer: its id and, for an error, its code and message. Nothing
/// else of the message is decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Peeked {
    /// The integer id answered; `None` for a string or `null` id.
    pub id: Option<i64>,
    /// The error's code and message, for an error answer.
    pub error: Option<(i64, String)>,
}

#[derive(Deserialize)]
struct PeekShape {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<PeekError>,
}

#[derive(Deserialize)]
struct PeekError {
    code: i64,
    message: String,
}

/// The id and error of an answer, decoding nothing else (`result` and `params` are skipped
/// unread: the cheapest look a driver that times round trips can take). `Ok(None)` for a
/// notification, a server request or a blank line.
pub fn peek(bytes: &[u8]) -> Result<Option<Peeked>, Unreadable> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let shape: PeekShape = serde_json::from_slice(bytes).map_err(|e| {
        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
        Unreadable::NotAnObject(format!("{e}: {shown}"))
    })?;
    if shape.method.is_some() {
        return Ok(None);
    }
    Ok(Some(Peeked {
        id: shape.id.as_ref().and_then(Value::as_i64),
        error: shape.error.map(|e| (e.code, e.message)),
    }))
}

/// How much of a malformed message an [`Unreadable`] error quotes, in bytes.
const QUOTED_MAX: usize = 200;

/// `text` as it may be quoted in an error or a report line: unchanged when it is at most `max`
/// bytes long, else its first `max` bytes (fewer, to end on a character boundary) and `…`.
pub fn clip_to(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_notifications_are_written_as_the_wire_has_them() {
        assert_eq!(
            request(
                &RequestId::Integer(7),
                "thread/start",
                Some(&json!({"cwd": "/w"}))
            ),
            r#"{"id":7,"method":"thread/start","params":{"cwd":"/w"}}"#
        );
        assert_eq!(
            request(&RequestId::String("a".to_owned()), "account/read", None),
            r#"{"id":"a","method":"account/read"}"#
        );
        assert_eq!(
            notification("initialized", None),
            r#"{"method":"initialized"}"#
        );
        assert_eq!(
            notification("x/y", Some(&json!([1]))),
            r#"{"method":"x/y","params":[1]}"#
        );
    }

    #[test]
    fn clipped_text_ends_on_a_character_boundary() {
        assert_eq!(clip_to("short", 5), "short");
        assert_eq!(clip_to("abcdef", 3), "abc…");
        // "é" is two bytes: a cut at byte 2 would split it, so the cut moves back to 1.
        assert_eq!(clip_to("aéz", 2), "a…");
        assert_eq!(
            clip_to(&"x".repeat(500), QUOTED_MAX).len(),
            QUOTED_MAX + '…'.len_utf8()
        );
    }

    #[test]
    fn messages_are_classified_by_method_and_id() {
        let answer = Incoming::parse(br#"{"id":3,"result":{"a":1}}"#).expect("answer");
        assert_eq!(
            answer,
            Incoming::Answer {
                id: RequestId::Integer(3),
                outcome: Ok(json!({"a": 1}))
            }
        );
        let Incoming::Answer { outcome, .. } =
            Incoming::parse(br#"{"id":"x","error":{"code":-32602,"message":"bad"}}"#)
                .expect("error answer")
        else {
            panic!("not an answer");
        };
        assert_eq!(outcome.map_err(|e| e.code), Err(-32602));
        let Incoming::Request(request) =
            Incoming::parse(br#"{"id":0,"method":"item/x","params":{"p":1}}"#).expect("request")
        else {
            panic!("not a request");
        };
        assert_eq!(
            (request.id, request.method.as_str(), request.params),
            (RequestId::Integer(0), "item/x", json!({"p": 1}))
        );
        assert!(matches!(
            Incoming::parse(br#"{"method":"turn/started"}"#),
            Ok(Incoming::Notification(n)) if n.method == "turn/started" && n.params.is_null()
        ));
        assert!(matches!(
            Incoming::parse(br#"{"id":null,"error":{"code":-32700,"message":"parse"}}"#),
            Ok(Incoming::Orphan(e)) if e.code == -32700
        ));
    }

    #[test]
    fn what_cannot_be_classified_says_why() {
        assert!(matches!(
            Incoming::parse(b"[1]"),
            Err(Unreadable::NotAnObject(_))
        ));
        assert!(matches!(
            Incoming::parse(b"{nope"),
            Err(Unreadable::NotAnObject(_))
        ));
        assert_eq!(Incoming::parse(b"{}"), Err(Unreadable::Neither));
        assert!(matches!(
            Incoming::parse(br#"{"id":1.5,"method":"m"}"#),
            Err(Unreadable::BadId(_))
        ));
        // A malformed error object is kept, quoted, as an internal error.
        let Ok(Incoming::Answer {
            outcome: Err(error),
            ..
        }) = Incoming::parse(br#"{"id":1,"error":"boom"}"#)
        else {
            panic!("not an error answer");
        };
        assert_eq!(error.code, error_codes::INTERNAL_ERROR);
        assert!(error.message.contains("boom"), "{}", error.message);
    }

    #[test]
    fn what_the_client_sends_reads_back_as_sent() {
        let id = RequestId::Integer(7);
        let line = request(&id, "thread/list", Some(&json!({"limit": 2})));
        let back: Value = serde_json::from_str(&line).expect("json");
        assert_eq!(
            back,
            json!({"id": 7, "method": "thread/list", "params": {"limit": 2}})
        );
        let bare: Value = serde_json::from_str(&request(&id, "m", None)).expect("json");
        assert!(bare.get("params").is_none(), "{bare}");
        let note: Value = serde_json::from_str(&notification("initialized", None)).expect("json");
        assert_eq!(note, json!({"method": "initialized"}));
        let id = RequestId::String("s".into());
        let ok: Value = serde_json::from_str(&answer(&id, &Ok(json!(1)))).expect("json");
        assert_eq!(ok, json!({"id": "s", "result": 1}));
    }

    #[test]
    fn peek_sees_ids_and_errors_only() {
        assert_eq!(
            peek(br#"{"id":4,"result":{"data":[1,2,3]}}"#),
            Ok(Some(Peeked {
                id: Some(4),
                error: None
            }))
        );
        assert_eq!(
            peek(br#"{"id":5,"error":{"code":-32001,"message":"busy"}}"#),
            Ok(Some(Peeked {
                id: Some(5),
                error: Some((-32001, "busy".into()))
            }))
        );
        assert_eq!(peek(br#"{"method":"n","params":{}}"#), Ok(None));
        assert_eq!(peek(b"  "), Ok(None));
        assert!(peek(b"not json").is_err());
    }
}
