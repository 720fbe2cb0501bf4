//! The standalone process API: `process/spawn`, `process/writeStdin`, `process/kill` and
//! `process/resizePty`, with `process/outputDelta` and `process/exited`.
//!
//! It is `command/exec` started differently: the params become a `command/exec` plan (same
//! checks, same defaults — 10 s unless `timeoutMs` says otherwise or is `null`, 1 MiB of each
//! stream unless `outputBytesCap` says otherwise or is `null` — and the same sandbox: the
//! policy a new thread in `cwd` gets, through `agentwire sandbox-exec`), the process is started
//! before the answer (so a program that cannot be run is refused), and it then runs in the
//! background under the same runner, its output streamed as `process/outputDelta` (after the
//! `process/spawn` answer) or kept for `process/exited`, which is the last message about it
//! and comes once its handle is free again.
//!
//! Handles are the client's, per connection: a handle in use by a running process is refused
//! (-32600), and the processes of a connection that closes are killed. A handle that names no
//! running process is -32600 naming it.

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    ProcessExited, ProcessKill, ProcessResizePty, ProcessSpawn, ProcessWriteStdin,
};
use agentwire_protocol::{
    CommandExecParams, CommandExecTerminalSize, ProcessExitedNotification, ProcessKillParams,
    ProcessKillResponse, ProcessResizePtyParams, ProcessResizePtyResponse, ProcessSpawnParams,
    ProcessSpawnResponse, ProcessWriteStdinParams, ProcessWriteStdinResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use tokio::sync::{mpsc, oneshot};

use super::request::{Plan, check_size};
use super::run::{self, Api, Control};
use super::{base_env, sandbox_policy_with};
use crate::Engine;

/// The `command/exec` params that run what `params` asks for.
fn exec_params(params: ProcessSpawnParams) -> CommandExecParams {
    let (timeout_ms, disable_timeout) = match params.timeout_ms {
        None => (None, None),
        Some(None) => (None, Some(true)),
        Some(Some(ms)) => (Some(ms), None),
    };
    let (output_bytes_cap, disable_output_cap) = match params.output_bytes_cap {
        None => (None, None),
        Some(None) => (None, Some(true)),
        Some(Some(cap)) => (Some(cap), None),
    };
    CommandExecParams::builder()
        .process_id(params.process_handle)
        .command(params.command)
        .cwd(params.cwd.0)
        .maybe_env(params.env)
        .maybe_timeout_ms(timeout_ms)
        .maybe_disable_timeout(disable_timeout)
        .maybe_output_bytes_cap(output_bytes_cap)
        .maybe_disable_output_cap(disable_output_cap)
        .tty(params.tty)
        .maybe_size(params.size.map(|size| {
            CommandExecTerminalSize::builder()
                .rows(size.rows)
                .cols(size.cols)
                .build()
        }))
        .stream_stdin(params.stream_stdin)
        .stream_stdout_stderr(params.stream_stdout_stderr)
        .build()
}

/// Serves `process/spawn`.
pub(crate) async fn spawn(
    engine: &Engine,
    context: RequestContext,
    params: ProcessSpawnParams,
) -> Result<ProcessSpawnResponse, HandlerError> {
    let method = ProcessSpawn::NAME;
    crate::features::require::<ProcessSpawn>(&engine.config_store)?;
    let cwd = std::path::PathBuf::from(&params.cwd.0);
    if !cwd.is_absolute() {
        return Err(HandlerError::invalid_params(
            method,
            format!("`cwd` {:?} is not an absolute path", params.cwd.0),
        ));
    }
    let handle = params.process_handle.clone();
    if handle.is_empty() {
        return Err(HandlerError::invalid_params(
            method,
            "`processHandle` must not be empty",
        ));
    }
    let execs = &engine.command_exec;
    // The policy and environment a new thread in `cwd` gets, from the configuration as it is
    // now (with the layers of a trusted project `cwd` is in), as for `command/exec`.
    let config = engine.config_store.effective(Some(&cwd)).file.clone();
    let defaults = engine.config_store.thread_defaults(&config);
    let policy = sandbox_policy_with(defaults.sandbox, &defaults.sandbox_workspace_write);
    let plan = Plan::new(
        exec_params(params),
        &policy,
        base_env(&config.shell_environment_policy),
        &cwd,
    )
    .map_err(|mut refusal| {
        if refusal.field == "processId" {
            refusal.field = "processHandle".to_owned();
        }
        HandlerError::invalid_params(method, refusal)
    })?;
    let (control, requests) = mpsc::channel(16);
    let entry = execs
        .processes
        .register(context.peer.connection_id(), &handle, control)
        .ok_or_else(|| {
            HandlerError::invalid_request(format!(
                "Invalid request for {method}: `processHandle` {handle:?} is already used by a \
                 running process on this connection"
            ))
        })?;
    let process = run::spawn(&plan, execs.sandbox_exe.as_ref(), method)?;
    let peer = context.peer.clone();
    let answered = context.answered.clone();
    // Cleaned up after a panic: the process's handle is freed and its child killed as the
    // task unwinds (their guards drop); the client is told it exited (code -1), so that it
    // does not wait for an exit that never comes.
    let cleanup = {
        let (peer, handle) = (peer.clone(), handle.clone());
        move || {
            peer.notify::<ProcessExited>(
                &ProcessExitedNotification::builder()
                    .process_handle(handle)
                    .exit_code(-1)
                    .stdout(String::new())
                    .stderr("the process's task stopped on an internal error".to_owned())
                    .stdout_cap_reached(false)
                    .stderr_cap_reached(false)
                    .output_drain_timed_out(false)
                    .build(),
            );
        }
    };
    let hub = peer.hub().clone();
    agentwire_support::supervised::background(
        &hub,
        "process/spawn",
        async move {
            // The answer goes out before anything about the process.
            answered.wait().await;
            let outcome = run::drive(process, &plan, &peer, requests, Api::Process).await;
            // The handle is free again before the client hears of the end.
            drop(entry);
            peer.notify::<ProcessExited>(
                &ProcessExitedNotification::builder()
                    .process_handle(handle)
                    .exit_code(outcome.exit_code)
                    .stdout(outcome.stdout)
                    .stderr(outcome.stderr)
                    .stdout_cap_reached(outcome.stdout_cap_reached)
                    .stderr_cap_reached(outcome.stderr_cap_reached)
                    .output_drain_timed_out(outcome.drain_timed_out)
                    .build(),
            );
        },
        cleanup,
    );
    Ok(ProcessSpawnResponse::builder().build())
}

/// Hands a request to the running process `handle` of the caller's connection and waits for
/// its answer.
async fn send(
    engine: &Engine,
    context: &RequestContext,
    method: &str,
    handle: &str,
    request: impl FnOnce(oneshot::Sender<Result<(), HandlerError>>) -> Control,
) -> Result<(), HandlerError> {
    let gone = || {
        HandlerError::invalid_request(format!(
            "Invalid request for {method}: `processHandle` {handle:?} names no running process \
             of this connection"
        ))
    };
    let control = engine
        .command_exec
        .processes
        .find(context.peer.connection_id(), handle)
        .ok_or_else(gone)?;
    let (reply, answer) = oneshot::channel();
    control.send(request(reply)).await.map_err(|_| gone())?;
    answer.await.map_err(|_| gone())?
}

/// Serves `process/writeStdin`.
pub(crate) async fn write_stdin(
    engine: &Engine,
    context: RequestContext,
    params: ProcessWriteStdinParams,
) -> Result<ProcessWriteStdinResponse, HandlerError> {
    let method = ProcessWriteStdin::NAME;
    crate::features::require::<ProcessWriteStdin>(&engine.config_store)?;
    let close = params.close_stdin;
    let bytes = match &params.delta_base64 {
        Some(delta) => STANDARD.decode(delta).map_err(|e| {
            HandlerError::invalid_params(method, format_args!("`deltaBase64` is not base64: {e}"))
        })?,
        None if close => Vec::new(),
        None => {
            return Err(HandlerError::invalid_params(
                method,
                "nothing to do: give `deltaBase64`, `closeStdin: true`, or both",
            ));
        }
    };
    send(engine, &context, method, &params.process_handle, |reply| {
        Control::Write {
            bytes,
            close,
            reply,
        }
    })
    .await?;
    Ok(ProcessWriteStdinResponse::builder().build())
}

/// Serves `process/kill`.
pub(crate) async fn kill(
    engine: &Engine,
    context: RequestContext,
    params: ProcessKillParams,
) -> Result<ProcessKillResponse, HandlerError> {
    let method = ProcessKill::NAME;
    crate::features::require::<ProcessKill>(&engine.config_store)?;
    send(engine, &context, method, &params.process_handle, |reply| {
        Control::Terminate { reply }
    })
    .await?;
    Ok(ProcessKillResponse::builder().build())
}

/// Serves `process/resizePty`.
pub(crate) async fn resize_pty(
    engine: &Engine,
    context: RequestContext,
    params: ProcessResizePtyParams,
) -> Result<ProcessResizePtyResponse, HandlerError> {
    let method = ProcessResizePty::NAME;
    crate::features::require::<ProcessResizePty>(&engine.config_store)?;
    let size = CommandExecTerminalSize::builder()
        .rows(params.size.rows)
        .cols(params.size.cols)
        .build();
    let size = check_size(size, "size").map_err(|r| HandlerError::invalid_params(method, r))?;
    send(engine, &context, method, &params.process_handle, |reply| {
        Control::Resize { size, reply }
    })
    .await?;
    Ok(ProcessResizePtyResponse::builder().build())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(value: serde_json::Value) -> ProcessSpawnParams {
        serde_json::from_value(value).expect("params deserialize")
    }

    #[test]
    fn absent_keeps_the_default_and_null_lifts_the_limit() {
        let base = json!({"command": ["true"], "cwd": "/tmp", "processHandle": "h"});
        let absent = exec_params(params(base.clone()));
        assert_eq!((absent.timeout_ms, absent.disable_timeout), (None, None));
        assert_eq!(
            (absent.output_bytes_cap, absent.disable_output_cap),
            (None, None)
        );
        let mut lifted = base.clone();
        lifted["timeoutMs"] = json!(null);
        lifted["outputBytesCap"] = json!(null);
        let lifted = exec_params(params(lifted));
        assert_eq!(lifted.disable_timeout, Some(true));
        assert_eq!(lifted.disable_output_cap, Some(true));
        let mut set = base;
        set["timeoutMs"] = json!(250);
        set["outputBytesCap"] = json!(3);
        set["tty"] = json!(true);
        set["size"] = json!({"rows": 5, "cols": 7});
        let set = exec_params(params(set));
        assert_eq!(set.timeout_ms, Some(250));
        assert_eq!(set.output_bytes_cap, Some(3));
        assert_eq!(set.process_id.as_deref(), Some("h"));
        assert_eq!(set.cwd.as_deref(), Some("/tmp"));
        assert_eq!(set.tty, Some(true));
        assert_eq!(
            set.size,
            Some(CommandExecTerminalSize::builder().rows(5).cols(7).build())
        );
    }
}
