//! Notifications that report problems to the user and the settling of server requests.
//!
//! Covers `error` (a turn hit an error, which may or may not be retried), `warning` (something
//! the user should know, tied to a thread or not) and `serverRequest/resolved` (a pending
//! server→client request, such as an approval, no longer needs an answer).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Params of `error`: a turn ran into an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ErrorNotification {
    /// Thread the turn runs on.
    pub thread_id: String,
    /// The turn that hit the error.
    pub turn_id: String,
    /// What went wrong.
    pub error: TurnError,
    /// `true` when the server retries on its own and the turn goes on (show it as transient);
    /// `false` when the turn ends because of it.
    pub will_retry: bool,
}

/// Params of `serverRequest/resolved`: a request the server sent the client is settled, so
/// any UI still waiting on it (an approval prompt) should be dismissed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ServerRequestResolvedNotification {
    /// Thread the request belonged to.
    pub thread_id: String,
    /// The JSON-RPC `id` of the settled server→client request.
    pub request_id: RequestId,
}

/// Params of `warning`: a short message the user should see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct WarningNotification {
    /// Thread the warning concerns; `null` or absent when it concerns the whole server.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The warning text, ready to display.
    pub message: String,
}
