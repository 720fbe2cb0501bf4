//! Execution environments: where a thread's commands run (`environment/add`,
//! `environment/info`, `environment/status`). This server has one, `local`: the machine it runs
//! on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A path written as a `file://` URI.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(transparent)]
pub struct PathUri(pub String);

/// Params of `environment/add`: register a remote execution server under an id.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct EnvironmentAddParams {
    /// Bearer token presented to the remote server.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub auth_bearer_token: Option<String>,
    /// How long to wait for the connection, in milliseconds; `null` for the default.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub connect_timeout_ms: Option<u64>,
    /// The id threads would select the environment by.
    pub environment_id: String,
    /// The remote server's WebSocket URL.
    pub exec_server_url: String,
    /// Skills the environment must provide.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub skills: Option<EnvironmentSkillsParams>,
    /// Request id header sent when connecting.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub websocket_request_id: Option<String>,
}

/// The skills an added environment must provide.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct EnvironmentSkillsParams {
    /// Names of the skills that must be there.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub required: Option<Vec<String>>,
}

/// Result of `environment/add`: an empty object.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct EnvironmentAddResponse {}

/// Params of `environment/info`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct EnvironmentInfoParams {
    /// The environment to describe (`local` here).
    pub environment_id: String,
}

/// Result of `environment/info`: the shell and working directory commands get there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct EnvironmentInfoResponse {
    /// The environment's default working directory as a `file://` URI; `null` when unknown.
    #[serde(default)]
    pub cwd: Option<PathUri>,
    /// The shell commands run in.
    pub shell: EnvironmentShellInfo,
}

/// A shell of an environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct EnvironmentShellInfo {
    /// The shell's kind by name (`bash`, `zsh`, `sh`, …).
    pub name: String,
    /// The shell program: a path, or a name looked up on `PATH`.
    pub path: String,
}

/// Params of `environment/status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct EnvironmentStatusParams {
    /// The environment to look at.
    pub environment_id: String,
}

/// Result of `environment/status`: whether the environment can run commands now. Reading it
/// never starts or reconnects anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct EnvironmentStatusResponse {
    /// Why, for `disconnected` and `unknown`; `null` otherwise.
    #[serde(default)]
    pub error: Option<String>,
    /// The environment's state.
    pub status: EnvironmentStatusKind,
}

/// The state of an environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum EnvironmentStatusKind {
    /// It can run commands (the local environment always can).
    Ready,
    /// Not connected yet, and no failure seen.
    Pending,
    /// Its connection failed; `error` says how.
    Disconnected,
    /// No environment has this id.
    Unknown,
}
