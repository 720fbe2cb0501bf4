//! The method names of `command/exec` and its companions, for error messages, and how a
//! process that cannot be started is answered: a leaf module, so that the files that run
//! processes take them without importing `command_exec/mod.rs` back.

use agentwire_runtime::HandlerError;

use agentwire_tools::exec::ExecError;

/// The method names, for error messages.
pub(super) const EXEC: &str = "command/exec";
pub(super) const WRITE: &str = "command/exec/write";
pub(super) const TERMINATE: &str = "command/exec/terminate";
pub(super) const RESIZE: &str = "command/exec/resize";

/// A program that cannot be run as asked: -32602 naming `command[0]`; a sandbox that cannot be
/// set up: -32603. `method` is the request that asked for it.
pub(super) fn spawn_refusal(method: &str, error: ExecError) -> HandlerError {
    match error {
        ExecError::Spawn { program, reason } => HandlerError::invalid_params(
            method,
            format_args!("`command[0]` {program:?} cannot be run: {reason}"),
        ),
        ExecError::Sandbox(reason) => {
            agentwire_runtime::telemetry::sandbox_refused("command");
            HandlerError::internal(format!("{method}: the sandbox is unavailable: {reason}"))
        }
    }
}
