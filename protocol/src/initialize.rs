//! The connection handshake: the client's `initialize` request (who it is, what it opts into)
//! and the server's answer, followed by the client's `initialized` notification. The server
//! refuses every other request on a connection until `initialize` has been answered.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Who the client is. The server records `name` as the `originator` of the threads the client
/// creates and puts name and version into its user agent.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ClientInfo {
    /// Short machine-readable name of the client, e.g. `my_ide`.
    pub name: String,
    /// Name to show people, e.g. `My IDE`; absent when the client has none.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub title: Option<String>,
    /// The client's own version string.
    pub version: String,
}

/// Behaviours the client opts into for this connection. Everything is off unless set.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct InitializeCapabilities {
    /// `true` to use experimental methods and fields; without it the server refuses them and
    /// leaves them out of what it sends. Absent means `false`.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub experimental_api: bool,
    /// Exact notification method names (e.g. `thread/started`) the server must not send on this
    /// connection; absent means all are sent.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub opt_out_notification_methods: Option<Vec<String>>,
    /// MCP extensions the client supports, keyed by extension name (e.g. `openai/form`), each
    /// with its settings; absent means none.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub extensions: Option<BTreeMap<String, serde_json::Value>>,
    /// Older way to opt into the `openai/form` MCP extension; new clients list it under
    /// `extensions` instead. Absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub mcp_server_openai_form_elicitation: Option<bool>,
    /// `true` to sign in to the gateway through an explicit OAuth flow instead of an automatic
    /// browser authorisation. Affects the whole server process; later connections cannot turn
    /// it off.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub explicit_gateway_oauth: Option<bool>,
    /// `true` to receive `attestation/generate` requests, whose answers the server attaches to
    /// its upstream calls; absent means `false`.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub request_attestation: bool,
    /// `true` to receive `humanCommand` command approvals, which a person must answer with a
    /// one-off decision; needs `experimentalApi`. Absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub required_human_approval: Option<bool>,
}

/// Params of `initialize`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct InitializeParams {
    /// Who is connecting.
    pub client_info: ClientInfo,
    /// What the client opts into; absent leaves every capability off.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub capabilities: Option<InitializeCapabilities>,
}

/// Result of `initialize`: facts about the server the client is talking to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct InitializeResponse {
    /// User-agent string the server sends upstream; it names the client and its version too.
    pub user_agent: String,
    /// The server's home directory for configuration and stored threads (`$CODEX_HOME`).
    pub codex_home: AbsolutePathBuf,
    /// Platform family the server runs on: `unix` or `windows`.
    pub platform_family: String,
    /// Operating system the server runs on, e.g. `linux`, `macos` or `windows`.
    pub platform_os: String,
}
