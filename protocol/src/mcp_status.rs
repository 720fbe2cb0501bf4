//! MCP servers as the client sees them: configuration, connection and sign-in state, and what
//! each server offers (tools, resources, resource templates).
//!
//! Used by `mcpServerStatus/list` and the `mcpServer/startupStatus/updated` notification;
//! [`McpAppUi`] also appears on MCP tool-call items.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Params of `mcpServerStatus/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ListMcpServerStatusParams {
    /// Thread whose MCP configuration and live connections to report; absent uses the
    /// server-wide configuration.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread_id: Option<String>,
    /// Report only the server with this configured name; with `threadId`, that thread's
    /// connection to it is reused.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub server_name: Option<String>,
    /// Pick the registration of `serverName` made by this environment; needs `serverName` and
    /// `threadId`. Absent picks the same registration older clients get.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub environment_id: Option<String>,
    /// How much to report per server; absent means `full`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub detail: Option<McpServerStatusDetail>,
    /// The `nextCursor` of the previous page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Maximum number of servers in the page; absent lets the server choose.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
}

/// Result of `mcpServerStatus/list`: one page of servers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ListMcpServerStatusResponse {
    /// The servers on this page.
    #[builder(default)]
    pub data: Vec<McpServerStatus>,
    /// Pass as `cursor` to get the next page; `null` on the last page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Where an MCP app's UI is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum McpAppDisplayMode {
    /// Embedded in the conversation, next to the tool call.
    Inline,
    /// Taking over the whole view.
    Fullscreen,
}

/// The UI an MCP tool asks the client to render when the model calls it, taken from the
/// tool's declaration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpAppUi {
    /// URI of the MCP resource that holds the UI (typically `ui://…`); read it from the same
    /// server.
    pub resource_uri: String,
    /// How the tool would like the UI shown.
    pub preferred_model_display_mode: McpAppDisplayMode,
}

/// Whether and how the server is signed in to an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum McpAuthStatus {
    /// Not determined yet.
    Unknown,
    /// The MCP server does not use authentication (e.g. a local stdio server).
    Unsupported,
    /// The MCP server supports OAuth but no sign-in has been done.
    NotLoggedIn,
    /// Authenticated with a bearer token from the configuration.
    BearerToken,
    /// Authenticated with stored OAuth credentials.
    OAuth,
}

/// Connection state of an MCP server within a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum McpServerConnectionStatus {
    /// Configured, but no connection has been attempted (e.g. started lazily on first use).
    NotStarted,
    /// Connecting or running the MCP handshake.
    Starting,
    /// Connected and usable.
    Connected,
    /// The MCP server refused the connection until the user signs in.
    AuthenticationRequired,
    /// The connection attempt failed.
    Failed,
    /// The connection attempt was abandoned (e.g. the thread was shut down).
    Cancelled,
    /// Disabled in the configuration; never started.
    Disabled,
}

/// What an MCP server says about itself in its `initialize` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerInfo {
    /// The server's program name (e.g. `github-mcp-server`).
    pub name: String,
    /// The server's version string.
    pub version: String,
    /// Human-friendly display name; `null` when the server gives none.
    #[serde(default)]
    pub title: Option<String>,
    /// What the server does; `null` when the server gives none.
    #[serde(default)]
    pub description: Option<String>,
    /// Icons of the server, as MCP icon objects; `null` when none are given.
    #[serde(default)]
    pub icons: Option<Vec<serde_json::Value>>,
    /// Home page of the server; `null` when the server gives none.
    #[serde(default)]
    pub website_url: Option<String>,
}

/// Why an MCP server failed to start, when the client can do something about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum McpServerStartupFailureReason {
    /// The stored sign-in is no longer accepted; the user must sign in to the server again.
    ReauthenticationRequired,
}

/// Start-up progress of an MCP server, as reported by `mcpServer/startupStatus/updated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum McpServerStartupState {
    /// The server is being started.
    Starting,
    /// The server started and its tools are available.
    Ready,
    /// The server could not be started; see `error`.
    Failed,
    /// Start-up was abandoned before it finished.
    Cancelled,
}

/// One configured MCP server: its state and what it offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerStatus {
    /// The server's name in the configuration (the key under `mcp_servers`).
    pub name: String,
    /// The plugin that provides the server; `null` for servers configured directly.
    #[serde(default)]
    pub plugin_id: Option<String>,
    /// The environment that registered the server; `null` when it applies to the whole thread
    /// (servers predating environments leave it out).
    #[serde(default)]
    pub environment_id: Option<String>,
    /// Scheme, host and port of the server's HTTP endpoint, without credentials or path;
    /// `null` for servers not reached over HTTP (stdio).
    #[serde(default)]
    pub http_origin: Option<String>,
    /// Whether and how the server is signed in to the MCP server.
    pub auth_status: McpAuthStatus,
    /// Connection state in the thread's runtime; `null` when there is none to report (no
    /// thread, or its configuration changed since).
    #[serde(default)]
    pub runtime_status: Option<McpServerConnectionStatus>,
    /// What the MCP server said about itself; `null` before it has been initialised.
    #[serde(default)]
    pub server_info: Option<McpServerInfo>,
    /// The `capabilities` object from the MCP server's `initialize` answer, unchanged; absent
    /// when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub server_capabilities: Option<serde_json::Value>,
    /// The server's tools, keyed by tool name; may come from a cache.
    #[builder(default)]
    pub tools: BTreeMap<String, Tool>,
    /// Why listing the tools failed, when no tool list could be obtained; `null` whenever
    /// `tools` is a real list (even an empty or cached one).
    #[serde(default)]
    pub tools_error: Option<String>,
    /// The `_meta` object of the first page of the server's tool list, unchanged; absent when
    /// not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub tool_list_meta: Option<serde_json::Value>,
    /// Resources the server offers; empty when `detail` was `toolsAndAuthOnly`.
    #[builder(default)]
    pub resources: Vec<Resource>,
    /// Resource templates the server offers; empty when `detail` was `toolsAndAuthOnly`.
    #[builder(default)]
    pub resource_templates: Vec<ResourceTemplate>,
}

/// How much `mcpServerStatus/list` reports about each server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum McpServerStatusDetail {
    /// Everything, including resources and resource templates.
    Full,
    /// Only tools and sign-in state; cheaper, resource lists are left empty.
    ToolsAndAuthOnly,
}

/// Params of `mcpServer/startupStatus/updated`: an MCP server of a loaded thread changed
/// start-up state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerStatusUpdatedNotification {
    /// The thread the server is starting for; `null` when not tied to one thread.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The server's name in the configuration.
    pub name: String,
    /// The environment the server's registration belongs to (which is not necessarily where it
    /// runs); `null` for a thread-wide server.
    #[serde(default)]
    pub environment_id: Option<String>,
    /// The new state.
    pub status: McpServerStartupState,
    /// What went wrong, for display; `null` unless `status` is `failed`.
    #[serde(default)]
    pub error: Option<String>,
    /// Machine-readable cause of a failure the client can help fix; `null` otherwise.
    #[serde(default)]
    pub failure_reason: Option<McpServerStartupFailureReason>,
}

/// A resource an MCP server can read, as in the MCP `resources/list` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct Resource {
    /// URI that identifies the resource on its server (e.g. `file:///repo/README.md`).
    pub uri: String,
    /// Programmatic name of the resource.
    pub name: String,
    /// Human-friendly display name; `null` when the server gives none.
    #[serde(default)]
    pub title: Option<String>,
    /// What the resource contains; `null` when the server gives none.
    #[serde(default)]
    pub description: Option<String>,
    /// MIME type of the contents (e.g. `text/markdown`); `null` when not known.
    #[serde(default)]
    pub mime_type: Option<String>,
    /// Size of the contents in bytes; `null` when not known.
    #[serde(default)]
    pub size: Option<i64>,
    /// Icons of the resource, as MCP icon objects; `null` when none are given.
    #[serde(default)]
    pub icons: Option<Vec<serde_json::Value>>,
    /// MCP annotations (intended audience, priority, last modification); absent when none are
    /// given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub annotations: Option<serde_json::Value>,
    /// The resource's MCP `_meta` object, unchanged; absent when the server sends none.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub _meta: Option<serde_json::Value>,
}

/// A parameterised family of resources an MCP server can read, as in the MCP
/// `resources/templates/list` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ResourceTemplate {
    /// RFC 6570 URI template; filling in its variables gives a resource URI.
    pub uri_template: String,
    /// Programmatic name of the template.
    pub name: String,
    /// Human-friendly display name; `null` when the server gives none.
    #[serde(default)]
    pub title: Option<String>,
    /// What the resources of this template contain; `null` when the server gives none.
    #[serde(default)]
    pub description: Option<String>,
    /// MIME type shared by all matching resources; `null` when not fixed.
    #[serde(default)]
    pub mime_type: Option<String>,
    /// MCP annotations (intended audience, priority, last modification); absent when none are
    /// given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub annotations: Option<serde_json::Value>,
}
