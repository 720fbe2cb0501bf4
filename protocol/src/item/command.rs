//! Command execution items: what a command is understood to do, its output deltas, where it
//! came from and how it ended.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// One action a shell command was recognised to perform, inferred from the command line on a
/// best-effort basis so that clients can show e.g. "Read foo.rs"; discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandAction {
    /// Reads a file (`cat`, `sed -n`, `head` …).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Read {
        /// The part of the command line that performs this action.
        command: String,
        /// File name of the file read, for display.
        name: String,
        /// Path of the file read.
        path: LegacyAppPathString,
    },
    /// Lists directory contents (`ls`, `find` …).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ListFiles {
        /// The part of the command line that performs this action.
        command: String,
        /// Directory listed; `null` when it could not be determined.
        #[serde(default)]
        path: Option<String>,
    },
    /// Searches file contents or names (`rg`, `grep` …).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Search {
        /// The part of the command line that performs this action.
        command: String,
        /// The pattern searched for; `null` when it could not be determined.
        #[serde(default)]
        query: Option<String>,
        /// Where the search runs; `null` when it could not be determined.
        #[serde(default)]
        path: Option<String>,
    },
    /// Anything the parser did not recognise.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Unknown {
        /// The part of the command line that was not recognised.
        command: String,
    },
}

#[bon::bon]
impl CommandAction {
    /// Starts building [`CommandAction::Read`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn read(command: String, name: String, path: LegacyAppPathString) -> Self {
        Self::Read {
            command,
            name,
            path,
        }
    }

    /// Starts building [`CommandAction::ListFiles`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn list_files(command: String, path: Option<String>) -> Self {
        Self::ListFiles { command, path }
    }

    /// Starts building [`CommandAction::Search`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn search(command: String, query: Option<String>, path: Option<String>) -> Self {
        Self::Search {
            command,
            query,
            path,
        }
    }

    /// Starts building [`CommandAction::Unknown`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn unknown(command: String) -> Self {
        Self::Unknown { command }
    }
}

/// Params of `item/commandExecution/outputDelta`: a chunk of output of a command the agent runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecutionOutputDeltaNotification {
    /// Thread the command runs in.
    pub thread_id: String,
    /// Turn the command runs in.
    pub turn_id: String,
    /// Id of the `commandExecution` item that produced the output.
    pub item_id: String,
    /// Output text (stdout and stderr interleaved), to append in order of arrival.
    pub delta: String,
}

/// Who started a command execution item.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandExecutionSource {
    /// The agent ran it as a tool call; assumed when the member is absent.
    #[default]
    Agent,
    /// The user ran it directly in the thread's shell.
    UserShell,
    /// The command that opened a long-lived interactive exec session.
    UnifiedExecStartup,
    /// Input written to an exec session that is already running.
    UnifiedExecInteraction,
}

/// Progress of a command execution item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandExecutionStatus {
    /// The command is running.
    InProgress,
    /// The command exited with status 0.
    Completed,
    /// The command exited non-zero, or could not be run.
    Failed,
    /// The approval was refused, so the command never ran.
    Declined,
}
