//! Checking the params of `command/exec` and turning them into a [`Plan`]: everything decided
//! before anything runs. Pure: no process is started and nothing but the `cwd` check touches
//! the file system.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentwire_protocol::{CommandExecParams, CommandExecTerminalSize, SandboxPolicy};

use super::env;

/// How long a command may run when the request names no `timeoutMs` (the reference server's
/// default): 10 seconds.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How many bytes of each of stdout and stderr are kept when the request names no
/// `outputBytesCap` (the reference server's default): 1 MiB.
pub(crate) const DEFAULT_OUTPUT_CAP: usize = 1024 * 1024;

/// The terminal size when `tty` is set without `size`.
pub(crate) fn default_size() -> CommandExecTerminalSize {
    CommandExecTerminalSize::builder().rows(24).cols(80).build()
}

/// A checked `command/exec` request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    /// The client's id for the process, when it gave one.
    pub process_id: Option<String>,
    /// Program and arguments; never empty, `argv[0]` never empty.
    pub argv: Vec<String>,
    /// Absolute working directory (an existing directory).
    pub cwd: PathBuf,
    /// The whole environment the process gets.
    pub env: BTreeMap<OsString, OsString>,
    /// The policy it runs under.
    pub policy: SandboxPolicy,
    /// Its time limit; `None` with `disableTimeout`.
    pub timeout: Option<Duration>,
    /// Bytes kept (or streamed) per output stream; `None` with `disableOutputCap`.
    pub output_cap: Option<usize>,
    /// The terminal size when it runs on a pseudo-terminal (`tty: true`).
    pub tty: Option<CommandExecTerminalSize>,
    /// Whether `command/exec/write` may feed its stdin (`streamStdin` or `tty`).
    pub stream_stdin: bool,
    /// Whether its output goes out as `command/exec/outputDelta` (`streamStdoutStderr` or
    /// `tty`) rather than in the response.
    pub stream_output: bool,
}

/// Why a request was refused: the member at fault (a JSON path such as `size.rows` or
/// `env.PATH`) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// Where in the params.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` {}", self.field, self.reason)
    }
}

fn refuse(field: impl Into<String>, reason: impl Into<String>) -> Refusal {
    Refusal {
        field: field.into(),
        reason: reason.into(),
    }
}

impl Plan {
    /// Checks `params`. `default_policy` applies when the request names none; `base_env` is
    /// the environment before the request's `env` changes; a relative `cwd` is taken relative
    /// to `server_cwd`, which is also the default.
    pub(crate) fn new(
        params: CommandExecParams,
        default_policy: &SandboxPolicy,
        base_env: BTreeMap<OsString, OsString>,
        server_cwd: &Path,
    ) -> Result<Self, Refusal> {
        let CommandExecParams {
            process_id,
            command,
            cwd,
            env: overrides,
            sandbox_policy,
            timeout_ms,
            disable_timeout,
            output_bytes_cap,
            disable_output_cap,
            tty,
            size,
            stream_stdin,
            stream_stdout_stderr,
            ..
        } = params;
        check_argv(&command)?;

        let disable_timeout = disable_timeout.unwrap_or(false);
        let timeout = match (timeout_ms, disable_timeout) {
            (Some(_), true) => {
                return Err(refuse(
                    "timeoutMs",
                    "cannot be combined with `disableTimeout: true`",
                ));
            }
            (Some(ms), false) => {
                Some(Duration::from_millis(u64::try_from(ms).map_err(|_| {
                    refuse("timeoutMs", format!("must not be negative (got {ms})"))
                })?))
            }
            (None, true) => None,
            (None, false) => Some(DEFAULT_TIMEOUT),
        };

        let disable_output_cap = disable_output_cap.unwrap_or(false);
        let output_cap = match (output_bytes_cap, disable_output_cap) {
            (Some(_), true) => {
                return Err(refuse(
                    "outputBytesCap",
                    "cannot be combined with `disableOutputCap: true`",
                ));
            }
            (Some(cap), false) => Some(usize::try_from(cap).unwrap_or(usize::MAX)),
            (None, true) => None,
            (None, false) => Some(DEFAULT_OUTPUT_CAP),
        };

        let tty = tty.unwrap_or(false);
        let tty = match (tty, size) {
            (false, Some(_)) => return Err(refuse("size", "is only allowed with `tty: true`")),
            (false, None) => None,
            (true, size) => Some(check_size(size.unwrap_or_else(default_size), "size")?),
        };
        let stream_stdin = tty.is_some() || stream_stdin.unwrap_or(false);
        let stream_output = tty.is_some() || stream_stdout_stderr.unwrap_or(false);
        if process_id.is_none() && (stream_stdin || stream_output) {
            let wanted = if tty.is_some() {
                "`tty`"
            } else if stream_stdin {
                "`streamStdin`"
            } else {
                "`streamStdoutStderr`"
            };
            return Err(refuse(
                "processId",
                format!("is required with {wanted}: it names the process in later calls"),
            ));
        }

        let cwd = match cwd {
            None => server_cwd.to_path_buf(),
            Some(cwd) if cwd.is_empty() => return Err(refuse("cwd", "must not be empty")),
            Some(cwd) => server_cwd.join(cwd),
        };
        if !cwd.is_dir() {
            return Err(refuse(
                "cwd",
                format!("`{}` does not exist or is not a directory", cwd.display()),
            ));
        }
        let env = match overrides {
            Some(overrides) => env::apply(base_env, &overrides)?,
            None => base_env,
        };

        Ok(Self {
            process_id,
            argv: command,
            cwd,
            env,
            policy: sandbox_policy.unwrap_or_else(|| default_policy.clone()),
            timeout,
            output_cap,
            tty,
            stream_stdin,
            stream_output,
        })
    }
}

/// `command` must name a program; no argument may hold a NUL byte (it cannot be passed).
fn check_argv(command: &[String]) -> Result<(), Refusal> {
    let Some(program) = command.first() else {
        return Err(refuse(
            "command",
            "must not be empty: give the program and its arguments",
        ));
    };
    if program.is_empty() {
        return Err(refuse("command[0]", "must name a program, not be empty"));
    }
    if let Some(index) = command.iter().position(|arg| arg.contains('\0')) {
        return Err(refuse(
            format!("command[{index}]"),
            "contains a NUL character, which a process argument cannot hold",
        ));
    }
    Ok(())
}

/// A terminal size must have at least one row and one column.
pub(crate) fn check_size(
    size: CommandExecTerminalSize,
    field: &str,
) -> Result<CommandExecTerminalSize, Refusal> {
    if size.rows == 0 {
        return Err(refuse(format!("{field}.rows"), "must be at least 1"));
    }
    if size.cols == 0 {
        return Err(refuse(format!("{field}.cols"), "must be at least 1"));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn params(value: Value) -> CommandExecParams {
        serde_json::from_value(value).expect("params deserialize")
    }

    fn plan(value: Value) -> Result<Plan, Refusal> {
        let base = [("HOME", "/home/u"), ("PATH", "/bin")]
            .into_iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect();
        Plan::new(
            params(value),
            &SandboxPolicy::read_only().build(),
            base,
            &std::env::temp_dir(),
        )
    }

    fn refused(value: Value) -> Refusal {
        plan(value).expect_err("refused")
    }

    #[test]
    fn a_bare_command_gets_every_default() {
        let plan = plan(json!({"command": ["true"]})).expect("valid");
        assert_eq!(plan.argv, ["true"]);
        assert_eq!(plan.cwd, std::env::temp_dir());
        assert_eq!(plan.timeout, Some(DEFAULT_TIMEOUT));
        assert_eq!(plan.output_cap, Some(DEFAULT_OUTPUT_CAP));
        assert_eq!(plan.policy, SandboxPolicy::read_only().build());
        assert_eq!(plan.tty, None);
        assert!(!plan.stream_stdin && !plan.stream_output);
        assert_eq!(plan.env.len(), 2);
    }

    #[test]
    fn limits_can_be_set_or_lifted() {
        let set = plan(json!({"command": ["true"], "timeoutMs": 1500, "outputBytesCap": 7}))
            .expect("valid");
        assert_eq!(set.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(set.output_cap, Some(7));
        let lifted = plan(json!({
            "command": ["true"], "disableTimeout": true, "disableOutputCap": true
        }))
        .expect("valid");
        assert_eq!(lifted.timeout, None);
        assert_eq!(lifted.output_cap, None);
        // `false` flags combine with explicit limits.
        let explicit = plan(json!({
            "command": ["true"], "timeoutMs": 5, "disableTimeout": false,
            "outputBytesCap": 0, "disableOutputCap": false
        }))
        .expect("valid");
        assert_eq!(explicit.timeout, Some(Duration::from_millis(5)));
        assert_eq!(explicit.output_cap, Some(0));
    }

    #[test]
    fn tty_implies_both_streams_and_a_size() {
        let default_size =
            plan(json!({"command": ["sh"], "processId": "t", "tty": true})).expect("valid");
        assert_eq!(default_size.tty, Some(super::default_size()));
        assert!(default_size.stream_stdin && default_size.stream_output);
        let sized = plan(json!({
            "command": ["sh"], "processId": "t", "tty": true, "size": {"rows": 5, "cols": 9}
        }))
        .expect("valid");
        assert_eq!(
            sized.tty,
            Some(CommandExecTerminalSize::builder().rows(5).cols(9).build())
        );
    }

    #[test]
    fn the_request_policy_wins_over_the_default() {
        let plan =
            plan(json!({"command": ["true"], "sandboxPolicy": {"type": "dangerFullAccess"}}))
                .expect("valid");
        assert_eq!(plan.policy, SandboxPolicy::DangerFullAccess);
    }

    #[test]
    fn each_bad_member_is_named() {
        let cases = [
            (json!({"command": []}), "command"),
            (json!({"command": [""]}), "command[0]"),
            (json!({"command": ["echo", "a\u{0}b"]}), "command[1]"),
            (
                json!({"command": ["true"], "timeoutMs": 5, "disableTimeout": true}),
                "timeoutMs",
            ),
            (json!({"command": ["true"], "timeoutMs": -1}), "timeoutMs"),
            (
                json!({"command": ["true"], "outputBytesCap": 5, "disableOutputCap": true}),
                "outputBytesCap",
            ),
            (
                json!({"command": ["true"], "size": {"rows": 5, "cols": 5}}),
                "size",
            ),
            (
                json!({"command": ["true"], "processId": "p", "tty": true, "size": {"rows": 0, "cols": 5}}),
                "size.rows",
            ),
            (
                json!({"command": ["true"], "processId": "p", "tty": true, "size": {"rows": 5, "cols": 0}}),
                "size.cols",
            ),
            (json!({"command": ["true"], "tty": true}), "processId"),
            (
                json!({"command": ["true"], "streamStdin": true}),
                "processId",
            ),
            (
                json!({"command": ["true"], "streamStdoutStderr": true}),
                "processId",
            ),
            (json!({"command": ["true"], "cwd": ""}), "cwd"),
            (
                json!({"command": ["true"], "cwd": "/agentwire/no/such/dir"}),
                "cwd",
            ),
            (json!({"command": ["true"], "env": {"": "x"}}), "env"),
            (json!({"command": ["true"], "env": {"A=B": "x"}}), "env.A=B"),
            (
                json!({"command": ["true"], "env": {"A": "x\u{0}"}}),
                "env.A",
            ),
        ];
        for (value, field) in cases {
            let refusal = refused(value.clone());
            assert_eq!(refusal.field, field, "{value}: {refusal}");
            assert!(!refusal.reason.is_empty());
        }
    }

    #[test]
    fn a_refusal_reads_as_a_sentence_naming_the_member() {
        let refusal = refused(json!({"command": ["true"], "timeoutMs": 1, "disableTimeout": true}));
        assert_eq!(
            refusal.to_string(),
            "`timeoutMs` cannot be combined with `disableTimeout: true`"
        );
    }
}
