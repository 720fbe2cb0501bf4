//! The JSON-RPC envelope: requests, responses, errors and notifications as they travel.
//!
//! The protocol is JSON-RPC 2.0 without the `"jsonrpc": "2.0"` member: peers may send it and it
//! is ignored; agentwire never sends it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Identifies a request so that its response can be matched: a string or an integer, echoed
/// back exactly as sent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum RequestId {
    /// A string id.
    String(String),
    /// An integer id.
    Integer(i64),
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::String(s) => write!(f, "{s:?}"),
            RequestId::Integer(i) => write!(f, "{i}"),
        }
    }
}

/// A request: expects exactly one response with the same `id`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[schemars(rename = "JSONRPCRequest")]
#[ts(rename = "JSONRPCRequest")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct JsonRpcRequest {
    /// Chosen by the sender, unique among its requests in flight.
    pub id: RequestId,
    /// The method name, e.g. `thread/start`.
    pub method: String,
    /// The method's params; absent for methods without params.
    #[serde(default)]
    #[ts(optional, type = "unknown")]
    pub params: Option<serde_json::Value>,
}

/// A notification: no `id`, never answered.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[schemars(rename = "JSONRPCNotification")]
#[ts(rename = "JSONRPCNotification")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct JsonRpcNotification {
    /// The method name, e.g. `turn/started`.
    pub method: String,
    /// The method's params; absent for methods without params.
    #[serde(default)]
    #[ts(optional, type = "unknown")]
    pub params: Option<serde_json::Value>,
}

/// A successful response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[schemars(rename = "JSONRPCResponse")]
#[ts(rename = "JSONRPCResponse")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct JsonRpcResponse {
    /// The `id` of the request this answers.
    pub id: RequestId,
    /// The method's result.
    #[ts(type = "unknown")]
    pub result: serde_json::Value,
}

/// A failed response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[schemars(rename = "JSONRPCError")]
#[ts(rename = "JSONRPCError")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct JsonRpcError {
    /// The `id` of the request this answers; `null` when the request could not be read far
    /// enough to know it (a parse error).
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: JsonRpcErrorObject,
}

/// The `error` member of a failed response.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[schemars(rename = "JSONRPCErrorError")]
#[ts(rename = "JSONRPCErrorError")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct JsonRpcErrorObject {
    /// The error code; see [`error_codes`].
    pub code: i64,
    /// A sentence a user can act on.
    pub message: String,
    /// Structured detail, e.g. the JSON pointers of invalid params.
    #[serde(default)]
    #[ts(optional, type = "unknown")]
    pub data: Option<serde_json::Value>,
}

/// Any message that can appear on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[schemars(rename = "JSONRPCMessage")]
#[ts(rename = "JSONRPCMessage")]
pub enum JsonRpcMessage {
    /// A request.
    Request(JsonRpcRequest),
    /// A notification.
    Notification(JsonRpcNotification),
    /// A successful response.
    Response(JsonRpcResponse),
    /// A failed response.
    Error(JsonRpcError),
}

/// The error codes the protocol uses.
pub mod error_codes {
    /// The line or frame is not valid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The message is not a valid request, or is not allowed in the connection's state
    /// (`Not initialized`, `Already initialized`, missing `experimentalApi` capability).
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The params do not match the method's schema.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed while handling the request.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The server's queue is full; retry later with backoff.
    pub const SERVER_OVERLOADED: i64 = -32001;
    /// The method is declared but refused here: it only means something against a service or
    /// platform this server does not reach. `data.reason` names which
    /// ([`crate::method::Unavailable::wire_name`]) and `data.method` the method.
    pub const UNAVAILABLE: i64 = -32004;
}
