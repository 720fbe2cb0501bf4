//! Running a command for the `shell` tool: spawned with its output streamed, bounded in time
//! and size, confined by the sandbox policy.
//!
//! STUB: the contract is fixed here; the implementation is being written.

use std::path::PathBuf;
use std::time::Duration;

use agentwire_protocol::SandboxPolicy;

/// A command to run.
#[derive(Debug, Clone)]
pub(crate) struct ExecRequest {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// Time limit; the command (and its process group) is killed when it passes.
    pub timeout: Duration,
    /// The policy it runs under; `None` runs it unconfined (`danger-full-access`, or an
    /// escalation the user approved).
    pub sandbox: Option<SandboxPolicy>,
    /// The program that applies a policy before running the command
    /// (`<exe> sandbox-exec …`): the `agentwire` binary. Without it, a confined command is
    /// refused rather than run unconfined.
    pub sandbox_exe: Option<PathBuf>,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExecOutput {
    /// Exit code; `None` when it was killed by a signal or the timeout.
    pub exit_code: Option<i32>,
    /// Combined stdout and stderr (bounded; a note marks what was cut).
    pub aggregated_output: String,
    /// Wall-clock run time.
    pub duration: Duration,
    /// Whether the timeout killed it.
    pub timed_out: bool,
}

/// Why a command could not run at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ExecError {
    /// The program could not be started.
    #[error("cannot start `{program}`: {reason}")]
    Spawn {
        /// argv\[0\].
        program: String,
        /// The OS error.
        reason: String,
    },
    /// The sandbox could not be set up, so the command was not run.
    #[error("sandbox unavailable: {0}")]
    Sandbox(String),
}

/// Runs `request`, handing each piece of output to `on_output` as it arrives. Dropping the
/// future kills the command.
pub(crate) async fn run(
    request: ExecRequest,
    on_output: &mut (dyn FnMut(&str) + Send),
) -> Result<ExecOutput, ExecError> {
    let _ = on_output;
    Err(ExecError::Sandbox(format!(
        "command execution is not implemented yet ({:?})",
        request.argv
    )))
}
