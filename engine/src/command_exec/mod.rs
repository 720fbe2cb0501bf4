//! `command/exec`: one command outside any thread, under the sandbox policy it is given, and its
//! companions `command/exec/write`, `command/exec/terminate` and `command/exec/resize`.
//!
//! On the wire:
//! - `command/exec` answers when the process has ended: its exit code (`124` when the timeout
//!   killed it, `128 + N` when signal `N` did) and what it wrote to stdout and stderr, each
//!   kept up to `outputBytesCap` (default 1 MiB; `disableOutputCap` keeps everything). The time
//!   limit is `timeoutMs` (default 10 s; `disableTimeout` lifts it).
//! - With `streamStdoutStderr` (or `tty`) the output goes out instead as
//!   `command/exec/outputDelta` notifications (base64, per stream, the cap applying per
//!   stream), all sent before the answer, whose `stdout` and `stderr` are then empty.
//! - `processId` (the client's, unique among the running processes of its connection) is
//!   required for streaming and `tty`, and names the process in `command/exec/write` (stdin,
//!   with `streamStdin` or `tty`), `command/exec/terminate` (kills its process group) and
//!   `command/exec/resize` (only with `tty`).
//! - `tty: true` runs the process on a real pseudo-terminal of `size` (default 24×80) as the
//!   controlling terminal of a session of its own; its output is all stdout.
//! - The process runs under `sandboxPolicy` (default: the policy new threads get), confined
//!   the way the `shell` tool's commands are: through `agentwire sandbox-exec`.
//! - When the connection closes, its processes are killed.
//!
//! Errors: a member that is wrong in itself (empty `command`, `timeoutMs` with
//! `disableTimeout`, `outputBytesCap` with `disableOutputCap`, `size` without `tty`, a zero
//! `size`, missing `processId`, an unusable `cwd` or `env` entry, a program that cannot be
//! found, bad base64 in `deltaBase64`) is -32602 naming it; a `processId` that is already
//! running, or names no running process of this connection, and a write or resize the process
//! was not started for, are -32600 naming `processId`; failing to start a process the request
//! allowed is -32603.

mod capture;
mod env;
pub(crate) mod process;
mod pty;
mod refusal;
mod registry;
mod request;
mod run;

use agentwire_protocol::{
    CommandExecParams, CommandExecResizeParams, CommandExecResizeResponse, CommandExecResponse,
    CommandExecTerminateParams, CommandExecTerminateResponse, CommandExecWriteParams,
    CommandExecWriteResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use tokio::sync::{mpsc, oneshot};

use agentwire_config::defaults::sandbox_policy_with;
use agentwire_tools::sandbox::SandboxHelper;

pub(crate) use env::base_env;

use crate::Engine;
use request::Plan;
use run::Control;

use refusal::{EXEC, RESIZE, TERMINATE, WRITE};

/// What `command/exec` needs for the life of the server: the sandbox program, and the running
/// processes that have a `processId`. (A request that names no policy gets the one new threads
/// get, from the configuration as it is when the request comes.)
#[derive(Debug)]
pub(crate) struct CommandExecs {
    /// The `agentwire` binary, whose `sandbox-exec` confines a command or gives it a terminal.
    sandbox_exe: Option<SandboxHelper>,
    /// Running processes, by connection and `processId`.
    registry: registry::Registry,
    /// Running `process/spawn` processes, by connection and `processHandle`.
    processes: registry::Registry,
}

impl CommandExecs {
    /// The state for a server whose sandbox program is `sandbox_exe`.
    pub(crate) fn new(sandbox_exe: Option<SandboxHelper>) -> Self {
        Self {
            sandbox_exe,
            registry: registry::Registry::default(),
            processes: registry::Registry::default(),
        }
    }

    /// How many `command/exec` processes with a `processId` and how many `process/spawn`
    /// processes run now.
    pub(crate) fn running(&self) -> (usize, usize) {
        (self.registry.len(), self.processes.len())
    }
}

/// Serves `command/exec`.
pub(crate) async fn exec(
    engine: &Engine,
    context: RequestContext,
    params: CommandExecParams,
) -> Result<CommandExecResponse, HandlerError> {
    let execs = &engine.command_exec;
    let server_cwd = std::env::current_dir().map_err(|e| {
        HandlerError::internal(format!(
            "{EXEC}: the server has no usable working directory: {e}"
        ))
    })?;
    // The policy a new thread in the command's directory gets, and the environment model
    // commands get there: the configuration as it is now, with the layers of a trusted
    // project that directory is in.
    let cwd = match params.cwd.as_deref() {
        Some(cwd) if !cwd.is_empty() => server_cwd.join(cwd),
        _ => server_cwd.clone(),
    };
    let config = engine.config_store.effective(Some(&cwd)).file.clone();
    let defaults = engine.config_store.thread_defaults(&config);
    let default_policy = sandbox_policy_with(defaults.sandbox, &defaults.sandbox_workspace_write);
    let base = base_env(&config.shell_environment_policy);
    let plan = Plan::new(params, &default_policy, base, &server_cwd)
        .map_err(|refusal| HandlerError::invalid_params(EXEC, refusal))?;
    let (control, requests) = mpsc::channel(16);
    let _entry = match &plan.process_id {
        Some(id) => Some(
            execs
                .registry
                .register(context.peer.connection_id(), id, control)
                .ok_or_else(|| {
                    HandlerError::invalid_request(format!(
                        "Invalid request for {EXEC}: `processId` {id:?} is already used by a \
                         running command on this connection"
                    ))
                })?,
        ),
        None => None,
    };
    run::run(plan, execs.sandbox_exe.as_ref(), &context.peer, requests).await
}

/// Hands a request to the running process `process_id` of the caller's connection and waits
/// for its answer.
async fn send(
    engine: &Engine,
    context: &RequestContext,
    method: &str,
    process_id: &str,
    request: impl FnOnce(oneshot::Sender<Result<(), HandlerError>>) -> Control,
) -> Result<(), HandlerError> {
    let gone = || {
        HandlerError::invalid_request(format!(
            "Invalid request for {method}: `processId` {process_id:?} names no running \
             command/exec on this connection"
        ))
    };
    let control = engine
        .command_exec
        .registry
        .find(context.peer.connection_id(), process_id)
        .ok_or_else(gone)?;
    let (reply, answer) = oneshot::channel();
    control.send(request(reply)).await.map_err(|_| gone())?;
    answer.await.map_err(|_| gone())?
}

/// Serves `command/exec/write`.
pub(crate) async fn write(
    engine: &Engine,
    context: RequestContext,
    params: CommandExecWriteParams,
) -> Result<CommandExecWriteResponse, HandlerError> {
    let close = params.close_stdin.unwrap_or(false);
    let bytes = match &params.delta_base64 {
        Some(delta) => STANDARD.decode(delta).map_err(|e| {
            HandlerError::invalid_params(WRITE, format_args!("`deltaBase64` is not base64: {e}"))
        })?,
        None if close => Vec::new(),
        None => {
            return Err(HandlerError::invalid_params(
                WRITE,
                "nothing to do: give `deltaBase64`, `closeStdin: true`, or both",
            ));
        }
    };
    send(engine, &context, WRITE, &params.process_id, |reply| {
        Control::Write {
            bytes,
            close,
            reply,
        }
    })
    .await?;
    Ok(CommandExecWriteResponse::builder().build())
}

/// Serves `command/exec/terminate`.
pub(crate) async fn terminate(
    engine: &Engine,
    context: RequestContext,
    params: CommandExecTerminateParams,
) -> Result<CommandExecTerminateResponse, HandlerError> {
    send(engine, &context, TERMINATE, &params.process_id, |reply| {
        Control::Terminate { reply }
    })
    .await?;
    Ok(CommandExecTerminateResponse::builder().build())
}

/// Serves `command/exec/resize`.
pub(crate) async fn resize(
    engine: &Engine,
    context: RequestContext,
    params: CommandExecResizeParams,
) -> Result<CommandExecResizeResponse, HandlerError> {
    let size = request::check_size(params.size, "size")
        .map_err(|refusal| HandlerError::invalid_params(RESIZE, refusal))?;
    send(engine, &context, RESIZE, &params.process_id, |reply| {
        Control::Resize { size, reply }
    })
    .await?;
    Ok(CommandExecResizeResponse::builder().build())
}
