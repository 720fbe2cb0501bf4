//! The params and result of the methods that are declared but refused here (`unavailable:` in
//! the method table): they only mean something against a service or platform this server does
//! not reach, so every such request is answered with the error
//! [`crate::jsonrpc::error_codes::UNAVAILABLE`] and never with a result. Their params are
//! accepted as any object (or none), so a client built for a server that does serve them gets
//! the documented refusal rather than a complaint about its params.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Params of a method refused here: any object, whose members are not read.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(transparent)]
pub struct UnavailableParams(
    /// The members as the client sent them.
    #[ts(type = "{ [key in string]?: unknown }")]
    pub serde_json::Map<String, serde_json::Value>,
);

/// Result of a method refused here: never sent (the request is always answered with the
/// refusal), declared so the method has a result type like every request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct UnavailableResponse {}
