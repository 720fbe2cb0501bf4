//! Sandboxing: how much of the machine the agent's commands may touch. [`SandboxMode`] is the
//! coarse setting clients send to `thread/start`, `thread/resume` and `thread/fork`;
//! [`SandboxPolicy`] is the full policy those results report and that `turn/start` and
//! `command/exec` accept.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// An absolute, normalised path on the server's machine; it need not exist and is not resolved
/// through symlinks.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(transparent)]
pub struct AbsolutePathBuf(pub String);

/// Whether commands inside an external sandbox may use the network.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum NetworkAccess {
    /// No outgoing connections; the default.
    #[default]
    Restricted,
    /// Outgoing connections allowed.
    Enabled,
}

/// The coarse sandbox setting a client picks (kebab-case on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SandboxMode {
    /// Commands may read anywhere and write nowhere.
    ReadOnly,
    /// Commands may also write inside the working directory and the configured writable roots.
    WorkspaceWrite,
    /// No sandbox: commands run with all of the user's rights.
    DangerFullAccess,
}

/// The full sandbox policy commands run under, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum SandboxPolicy {
    /// No restrictions at all.
    DangerFullAccess,
    /// Read anywhere, write nowhere.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ReadOnly {
        /// Whether commands may use the network; absent means `false`.
        #[serde(default)]
        #[ts(as = "Option<bool>", optional)]
        network_access: bool,
    },
    /// The server already runs inside a sandbox someone else set up, so it adds none of its own.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ExternalSandbox {
        /// Whether that outer sandbox lets commands use the network; absent means `restricted`.
        #[serde(default)]
        #[ts(as = "Option<NetworkAccess>", optional)]
        network_access: NetworkAccess,
    },
    /// Read anywhere; write only inside the working directory, `writableRoots` and the
    /// temporary directories not excluded below.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    WorkspaceWrite {
        /// Absolute directories writable besides the working directory; absent means none.
        #[serde(default)]
        #[ts(as = "Option<Vec<AbsolutePathBuf>>", optional)]
        writable_roots: Vec<AbsolutePathBuf>,
        /// Whether commands may use the network; absent means `false`.
        #[serde(default)]
        #[ts(as = "Option<bool>", optional)]
        network_access: bool,
        /// `true` to keep the directory named by `$TMPDIR` read-only; absent means `false`
        /// (writable).
        #[serde(default)]
        #[ts(as = "Option<bool>", optional)]
        exclude_tmpdir_env_var: bool,
        /// `true` to keep `/tmp` read-only; absent means `false` (writable).
        #[serde(default)]
        #[ts(as = "Option<bool>", optional)]
        exclude_slash_tmp: bool,
    },
}

#[bon::bon]
impl SandboxPolicy {
    /// Starts building [`SandboxPolicy::ReadOnly`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn read_only(#[builder(default)] network_access: bool) -> Self {
        Self::ReadOnly { network_access }
    }

    /// Starts building [`SandboxPolicy::ExternalSandbox`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn external_sandbox(#[builder(default)] network_access: NetworkAccess) -> Self {
        Self::ExternalSandbox { network_access }
    }

    /// Starts building [`SandboxPolicy::WorkspaceWrite`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn workspace_write(
        #[builder(default)] writable_roots: Vec<AbsolutePathBuf>,
        #[builder(default)] network_access: bool,
        #[builder(default)] exclude_tmpdir_env_var: bool,
        #[builder(default)] exclude_slash_tmp: bool,
    ) -> Self {
        Self::WorkspaceWrite {
            writable_roots,
            network_access,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
        }
    }
}
