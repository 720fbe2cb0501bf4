//! `command/exec`: running one command in the server's sandbox outside any thread or turn. The
//! output comes back in the response, or streams as `command/exec/outputDelta` notifications
//! when the client asks for streaming or a terminal.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Params of `command/exec/outputDelta`: a chunk of output from a streaming `command/exec`.
/// Sent only to the connection that started the process; if that connection closes, the server
/// kills the process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecOutputDeltaNotification {
    /// The `processId` the client gave in its `command/exec` request.
    pub process_id: String,
    /// Which output stream the bytes come from.
    pub stream: CommandExecOutputStream,
    /// The raw bytes, base64-encoded; a chunk may end in the middle of a UTF-8 character.
    pub delta_base64: String,
    /// `true` on the last chunk of a stream whose output is being cut off at `outputBytesCap`;
    /// nothing more arrives for that stream.
    pub cap_reached: bool,
}

/// Which output stream of a `command/exec` process a chunk comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandExecOutputStream {
    /// Standard output; in `tty` mode all terminal output arrives here.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Params of `command/exec`. The response comes when the process exits, after every output
/// notification for it has been sent.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct CommandExecParams {
    /// Id the client picks for the process, unique on this connection. Required for `tty`,
    /// `streamStdin` and `streamStdoutStderr`, and names the process in output notifications
    /// and follow-up calls; absent for a plain buffered run.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub process_id: Option<String>,
    /// The program and its arguments (argv), run directly rather than through a shell; must
    /// not be empty.
    #[builder(default)]
    pub command: Vec<String>,
    /// Working directory; absent means the server's own.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// Changes to the environment the server would give the process: a string value sets the
    /// variable, `null` removes it.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub env: Option<BTreeMap<String, Option<String>>>,
    /// Sandbox to run under; absent uses the user's configured policy.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sandbox_policy: Option<SandboxPolicy>,
    /// Kill the process after this many milliseconds; absent uses the server's default. Not
    /// allowed together with `disableTimeout`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub timeout_ms: Option<i64>,
    /// `true` to let the process run with no time limit; not allowed together with
    /// `timeoutMs`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub disable_timeout: Option<bool>,
    /// Most bytes kept from each of stdout and stderr; absent uses the server's default. Not
    /// allowed together with `disableOutputCap`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub output_bytes_cap: Option<u64>,
    /// `true` to keep all output however long; not allowed together with `outputBytesCap`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub disable_output_cap: Option<bool>,
    /// `true` to run the process in a pseudo-terminal; implies `streamStdin` and
    /// `streamStdoutStderr`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub tty: Option<bool>,
    /// Initial size of the pseudo-terminal; only allowed with `tty: true`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub size: Option<CommandExecTerminalSize>,
    /// `true` to keep stdin open so that the client can write to it later; needs `processId`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub stream_stdin: Option<bool>,
    /// `true` to send output as `command/exec/outputDelta` notifications instead of in the
    /// response; needs `processId`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub stream_stdout_stderr: Option<bool>,
}

/// Result of `command/exec`, sent once the process has exited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecResponse {
    /// The process's exit code.
    pub exit_code: i32,
    /// Everything the process wrote to stdout (up to the cap); `""` when stdout was streamed.
    pub stdout: String,
    /// Everything the process wrote to stderr (up to the cap); `""` when stderr was streamed.
    pub stderr: String,
}

/// Size of a `command/exec` pseudo-terminal, in character cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecTerminalSize {
    /// Height, in lines.
    pub rows: u16,
    /// Width, in columns.
    pub cols: u16,
}

/// Params of `command/exec/write`: bytes for the stdin of a running `command/exec` process,
/// an end-of-input, or both. The process must have been started with `streamStdin` or `tty`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecWriteParams {
    /// The `processId` this connection gave the process in `command/exec`.
    pub process_id: String,
    /// Bytes to write to the process's stdin, base64-encoded; absent writes nothing.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub delta_base64: Option<String>,
    /// `true` to end the process's input once `deltaBase64` (if any) is written.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub close_stdin: Option<bool>,
}

/// Result of `command/exec/write`: empty; the bytes were handed to the process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecWriteResponse {}

/// Params of `command/exec/terminate`: stop a running `command/exec` process. Its
/// `command/exec` request then answers with the exit status the kill produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecTerminateParams {
    /// The `processId` this connection gave the process in `command/exec`.
    pub process_id: String,
}

/// Result of `command/exec/terminate`: empty; the process is being killed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecTerminateResponse {}

/// Params of `command/exec/resize`: a new window size for the pseudo-terminal of a
/// `command/exec` process started with `tty: true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecResizeParams {
    /// The `processId` this connection gave the process in `command/exec`.
    pub process_id: String,
    /// The terminal's new size.
    pub size: CommandExecTerminalSize,
}

/// Result of `command/exec/resize`: empty; the terminal has its new size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecResizeResponse {}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::*;

    /// Deserializes `value` into `T`, serializes it back and checks nothing changed.
    fn round_trip<T: Serialize + DeserializeOwned>(value: Value) -> T {
        let parsed: T = serde_json::from_value(value.clone()).expect("value deserializes");
        let back = serde_json::to_value(&parsed).expect("value serializes");
        assert_eq!(back, value);
        parsed
    }

    #[test]
    fn buffered_params_leave_unset_members_out() {
        let params: CommandExecParams =
            round_trip(json!({"command": ["git", "status", "--short"]}));
        let back = serde_json::to_value(&params).expect("params serialize");
        let object = back.as_object().expect("params are an object");
        assert_eq!(object.len(), 1, "only `command` is sent: {back}");
        for key in [
            "processId",
            "cwd",
            "env",
            "timeoutMs",
            "tty",
            "size",
            "sandboxPolicy",
        ] {
            assert!(!object.contains_key(key), "{key} should be absent");
        }
    }

    #[test]
    fn terminal_params_round_trip() {
        let params: CommandExecParams = round_trip(json!({
            "processId": "term-1",
            "command": ["bash", "-i"],
            "cwd": "/home/user/work",
            "env": {"TERM": "xterm-256color", "PAGER": null},
            "sandboxPolicy": {
                "type": "workspaceWrite",
                "writableRoots": ["/home/user/cache"],
                "networkAccess": false,
                "excludeTmpdirEnvVar": false,
                "excludeSlashTmp": true
            },
            "disableTimeout": true,
            "outputBytesCap": 1048576,
            "tty": true,
            "size": {"rows": 24, "cols": 80}
        }));
        let env = params.env.as_ref().expect("env is set");
        assert_eq!(env.get("PAGER"), Some(&None));
        assert_eq!(
            params.size,
            Some(CommandExecTerminalSize { rows: 24, cols: 80 })
        );
    }

    #[test]
    fn response_and_output_delta_round_trip() {
        round_trip::<CommandExecResponse>(json!({
            "exitCode": 0,
            "stdout": " M protocol/src/thread.rs\n",
            "stderr": ""
        }));
        let delta: CommandExecOutputDeltaNotification = round_trip(json!({
            "processId": "term-1",
            "stream": "stdout",
            "deltaBase64": "aGVsbG8K",
            "capReached": false
        }));
        assert_eq!(delta.stream, CommandExecOutputStream::Stdout);
    }

    #[test]
    fn follow_up_params_round_trip() {
        let write: CommandExecWriteParams = round_trip(json!({
            "processId": "term-1",
            "deltaBase64": "bHMK",
            "closeStdin": true
        }));
        assert_eq!(write.close_stdin, Some(true));
        let bare: CommandExecWriteParams = round_trip(json!({"processId": "term-1"}));
        assert_eq!(bare.delta_base64, None);
        assert_eq!(bare.close_stdin, None);
        round_trip::<CommandExecTerminateParams>(json!({"processId": "term-1"}));
        let resize: CommandExecResizeParams = round_trip(json!({
            "processId": "term-1",
            "size": {"rows": 50, "cols": 132}
        }));
        assert_eq!(
            resize.size,
            CommandExecTerminalSize {
                rows: 50,
                cols: 132
            }
        );
        round_trip::<CommandExecWriteResponse>(json!({}));
        round_trip::<CommandExecTerminateResponse>(json!({}));
        round_trip::<CommandExecResizeResponse>(json!({}));
    }
}
