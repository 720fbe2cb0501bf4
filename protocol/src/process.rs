//! Standalone processes: `process/spawn` starts a program outside any thread and answers as soon
//! as it runs; `process/writeStdin`, `process/kill` and `process/resizePty` reach it by the
//! handle the client chose; its output arrives as `process/outputDelta` and its end as
//! `process/exited`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{AbsolutePathBuf, serde_util};

/// Params of `process/spawn`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProcessSpawnParams {
    /// The program and its arguments, run directly (no shell); must not be empty.
    pub command: Vec<String>,
    /// The absolute directory the process starts in.
    pub cwd: AbsolutePathBuf,
    /// Changes to the environment the server gives the process: a string sets the variable,
    /// `null` removes it.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub env: Option<BTreeMap<String, Option<String>>>,
    /// Most bytes taken from each of stdout and stderr: absent means the server's default,
    /// `null` means no limit.
    #[serde(default, deserialize_with = "serde_util::present_or_null")]
    #[schemars(with = "Option<u64>")]
    #[ts(as = "Option<u64>", optional)]
    pub output_bytes_cap: Option<Option<u64>>,
    /// The client's name for the process, unique among the running processes of its
    /// connection; free again once the process has exited.
    pub process_handle: String,
    /// The pseudo-terminal's first size; only with `tty: true`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub size: Option<ProcessTerminalSize>,
    /// `true` keeps stdin open for `process/writeStdin`.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub stream_stdin: bool,
    /// `true` sends the output as `process/outputDelta` notifications instead of in
    /// `process/exited`.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub stream_stdout_stderr: bool,
    /// Milliseconds the process may run before it is killed: absent means the server's
    /// default, `null` means no limit.
    #[serde(default, deserialize_with = "serde_util::present_or_null")]
    #[schemars(with = "Option<i64>")]
    #[ts(as = "Option<i64>", optional)]
    pub timeout_ms: Option<Option<i64>>,
    /// `true` runs the process on a pseudo-terminal (which implies both streaming flags).
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub tty: bool,
}

/// A pseudo-terminal's size, in character cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProcessTerminalSize {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

/// Result of `process/spawn`: an empty object once the process runs under its handle.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProcessSpawnResponse {}

/// Params of `process/writeStdin`: bytes for the process's stdin, the end of its input, or
/// both (in that order).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProcessWriteStdinParams {
    /// `true` ends the input once the bytes are written.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub close_stdin: bool,
    /// The bytes, base64-encoded.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub delta_base64: Option<String>,
    /// The process, by the handle given to `process/spawn`.
    pub process_handle: String,
}

/// Result of `process/writeStdin`: an empty object once the bytes are queued.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProcessWriteStdinResponse {}

/// Params of `process/kill`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProcessKillParams {
    /// The process, by the handle given to `process/spawn`.
    pub process_handle: String,
}

/// Result of `process/kill`: an empty object once the kill signal is sent (`process/exited`
/// follows).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProcessKillResponse {}

/// Params of `process/resizePty`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProcessResizePtyParams {
    /// The process, by the handle given to `process/spawn`; it must run on a terminal.
    pub process_handle: String,
    /// The terminal's new size.
    pub size: ProcessTerminalSize,
}

/// Result of `process/resizePty`: an empty object once the terminal has its new size.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProcessResizePtyResponse {}

/// Which output stream a `process/outputDelta` chunk comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ProcessOutputStream {
    /// Standard output; everything a terminal shows arrives here.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Params of `process/outputDelta`: a chunk of a streaming process's output, sent only to the
/// connection that spawned it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProcessOutputDeltaNotification {
    /// `true` on the last chunk of a stream cut off at `outputBytesCap`.
    pub cap_reached: bool,
    /// The bytes, base64-encoded; a chunk may end inside a UTF-8 character.
    pub delta_base64: String,
    /// The process, by its handle.
    pub process_handle: String,
    /// The stream the bytes come from.
    pub stream: ProcessOutputStream,
}

/// Params of `process/exited`: the process has ended and its handle is free again. The last
/// message about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProcessExitedNotification {
    /// Its exit code: its own, `128 + N` when signal `N` ended it, `124` when its time ran
    /// out.
    pub exit_code: i32,
    /// `true` when output was still open after the grace that follows the exit (something it
    /// left running held it) and was no longer read.
    #[serde(default)]
    pub output_drain_timed_out: Option<bool>,
    /// The process, by its handle.
    pub process_handle: String,
    /// What it wrote to stderr, up to the cap; empty when stderr was streamed.
    pub stderr: String,
    /// Whether stderr was cut off at the cap.
    pub stderr_cap_reached: bool,
    /// What it wrote to stdout, up to the cap; empty when stdout was streamed.
    pub stdout: String,
    /// Whether stdout was cut off at the cap.
    pub stdout_cap_reached: bool,
}
