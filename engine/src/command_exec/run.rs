//! Running one `command/exec` process: spawning it (through `agentwire sandbox-exec` when the
//! policy confines it or it needs a terminal), feeding its stdin, passing its output on,
//! obeying write / resize / terminate, and ending it when its time is up or its connection
//! closes.
//!
//! - Without `tty` the process runs in a process group of its own with piped stdout and
//!   stderr, and stdin piped (`streamStdin`) or from `/dev/null`. With `tty` it gets a new
//!   session whose controlling terminal is a fresh pseudo-terminal (stdin, stdout and stderr),
//!   and all of its output is stdout.
//! - Killing (terminate, timeout, closed connection, or the request being dropped) sends
//!   `SIGKILL` to the process group, and for a terminal session to every process of the
//!   session (an interactive shell puts each job in a group of its own).
//! - Once the process has exited, output still buffered is read; anything it left running
//!   that holds the output open is killed after [`DRAIN_GRACE`].
//! - The exit code is the process's own; `128 + N` when signal `N` killed it;
//!   [`TIMEOUT_EXIT_CODE`] when the timeout did.

use std::ffi::OsStr;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use agentwire_protocol::methods::{CommandExecOutputDelta, ProcessOutputDelta};
use agentwire_protocol::{
    CommandExecOutputDeltaNotification, CommandExecOutputStream, CommandExecResponse,
    CommandExecTerminalSize, ProcessOutputDeltaNotification, ProcessOutputStream, SandboxPolicy,
};
use agentwire_runtime::{HandlerError, Peer};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rustix::process::{Pid, Signal};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use agentwire_tools::exec::{
    DRAIN_GRACE, ExecError, GroupKiller, check_program, sandbox_exec_command,
};
use agentwire_tools::sandbox::SandboxHelper;

use super::capture::Capture;
use super::pty::{self, Master};
use super::refusal::{EXEC, spawn_refusal};
use super::request::Plan;

/// The exit code reported when the timeout killed the process (as `timeout(1)` and the
/// reference server report it).
pub(crate) const TIMEOUT_EXIT_CODE: i32 = 124;

/// How often a running process checks that its connection is still open.
const CONNECTION_CHECK: Duration = Duration::from_millis(200);

/// Bytes read from an output stream at a time (one `outputDelta` at most).
const READ_BUFFER: usize = 64 * 1024;

/// Streamed output is read from the process only while the connection holds at most this many
/// bytes not yet written to the client: a client that reads slowly slows the process down (its
/// pipe fills and its writes wait) instead of the server queueing its output (issue #32).
const OUTPUT_BACKLOG: usize = 2 * 1024 * 1024;

/// The end-of-file character a terminal's line discipline turns into end of input
/// (`VEOF`, Ctrl-D): what `closeStdin` sends on a terminal.
const TERMINAL_EOF: u8 = 0x04;

/// A request for a running process, from `command/exec/write`, `resize` or `terminate`; the
/// answer goes back through `reply`.
#[derive(Debug)]
pub(crate) enum Control {
    /// Queue `bytes` for stdin, then end the input if `close`.
    Write {
        bytes: Vec<u8>,
        close: bool,
        reply: oneshot::Sender<Result<(), HandlerError>>,
    },
    /// Set the terminal's size.
    Resize {
        size: CommandExecTerminalSize,
        reply: oneshot::Sender<Result<(), HandlerError>>,
    },
    /// Kill the process.
    Terminate {
        reply: oneshot::Sender<Result<(), HandlerError>>,
    },
}

/// Where the process's stdin goes.
enum Input {
    /// Nowhere (not streamed, or closed).
    Closed,
    /// A pipe.
    Pipe(ChildStdin),
    /// The terminal.
    Terminal,
}

/// Kills what the process started: its group and, for a terminal, its session. Also on drop.
struct Killer {
    group: GroupKiller,
    session: Option<Pid>,
}

impl Killer {
    fn kill(&self) {
        self.group.kill();
        if let Some(session) = self.session {
            kill_session(session);
        }
    }
}

impl Drop for Killer {
    fn drop(&mut self) {
        // The group is killed by `GroupKiller`'s own drop.
        if let Some(session) = self.session {
            kill_session(session);
        }
    }
}

/// Sends `SIGKILL` to every process of `session` (Linux: found through `/proc`; elsewhere the
/// group kill has to do).
fn kill_session(session: Pid) {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<i32>().ok())
            .and_then(Pid::from_raw)
        else {
            continue;
        };
        if session_of(pid) == Some(session.as_raw_nonzero().get()) {
            // ESRCH (it is gone already) is the only expected error.
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
}

/// The session id of process `pid`, from `/proc/<pid>/stat` (`0` for kernel threads).
fn session_of(pid: Pid) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())).ok()?;
    session_field(&stat)
}

/// The session field of a `/proc/<pid>/stat` line: `pid (comm) state ppid pgrp session …`,
/// where `comm` may hold spaces and parentheses.
fn session_field(stat: &str) -> Option<i32> {
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_whitespace().nth(3)?.parse().ok()
}

/// Which API a process was started through: it decides the notification its streamed output
/// goes out as, and the names its refusals use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    /// `command/exec` (`command/exec/outputDelta`, named by `processId`).
    CommandExec,
    /// `process/spawn` (`process/outputDelta`, named by `processHandle`).
    Process,
}

impl Api {
    /// The method that writes stdin.
    fn write_method(self) -> &'static str {
        match self {
            Self::CommandExec => "command/exec/write",
            Self::Process => "process/writeStdin",
        }
    }

    /// The method that resizes the terminal.
    fn resize_method(self) -> &'static str {
        match self {
            Self::CommandExec => "command/exec/resize",
            Self::Process => "process/resizePty",
        }
    }

    /// The member that names the process.
    fn id_member(self) -> &'static str {
        match self {
            Self::CommandExec => "processId",
            Self::Process => "processHandle",
        }
    }

    /// Sends one chunk of streamed output of process `id` to `peer`.
    fn deliver(self, peer: &Peer, id: &str, stdout: bool, bytes: &[u8], cap_reached: bool) {
        let delta = STANDARD.encode(bytes);
        match self {
            Self::CommandExec => {
                peer.notify::<CommandExecOutputDelta>(
                    &CommandExecOutputDeltaNotification::builder()
                        .process_id(id)
                        .stream(if stdout {
                            CommandExecOutputStream::Stdout
                        } else {
                            CommandExecOutputStream::Stderr
                        })
                        .delta_base64(delta)
                        .cap_reached(cap_reached)
                        .build(),
                );
            }
            Self::Process => {
                peer.notify::<ProcessOutputDelta>(
                    &ProcessOutputDeltaNotification::builder()
                        .process_handle(id)
                        .stream(if stdout {
                            ProcessOutputStream::Stdout
                        } else {
                            ProcessOutputStream::Stderr
                        })
                        .delta_base64(delta)
                        .cap_reached(cap_reached)
                        .build(),
                );
            }
        }
    }
}

/// How a process ended, and what it wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// Its exit code: its own, `128 + N` for signal `N`, [`TIMEOUT_EXIT_CODE`] on timeout.
    pub exit_code: i32,
    /// What it wrote to stdout, up to the cap; empty when streamed.
    pub stdout: String,
    /// What it wrote to stderr, up to the cap; empty when streamed.
    pub stderr: String,
    /// Whether stdout was cut at the cap.
    pub stdout_cap_reached: bool,
    /// Whether stderr was cut at the cap.
    pub stderr_cap_reached: bool,
    /// Whether its output was still open when the grace after its exit ran out.
    pub drain_timed_out: bool,
}

/// A started process.
pub(crate) struct Process {
    child: Child,
    input: Input,
    stdout: Option<tokio::process::ChildStdout>,
    stderr: Option<tokio::process::ChildStderr>,
    terminal: Option<Master>,
    killer: Killer,
}

/// Starts the process `plan` describes; `sandbox_exe` is the `agentwire` binary.
pub(crate) fn spawn(
    plan: &Plan,
    sandbox_exe: Option<&SandboxHelper>,
    method: &str,
) -> Result<Process, HandlerError> {
    let refusal = |error| spawn_refusal(method, error);
    let program = &plan.argv[0];
    let search_path = plan.env.get(OsStr::new("PATH")).map(|p| p.as_os_str());
    check_program(program, &plan.cwd, search_path).map_err(refusal)?;
    let confined = !matches!(
        plan.policy,
        SandboxPolicy::DangerFullAccess | SandboxPolicy::ExternalSandbox { .. }
    );
    let mut command = if confined || plan.tty.is_some() {
        let exe = sandbox_exe.ok_or_else(|| {
            refusal(ExecError::Sandbox(
                "this command needs the sandbox program (`agentwire sandbox-exec`) to be \
                 confined or to get a terminal, and none is configured, so it was not run"
                    .to_owned(),
            ))
        })?;
        sandbox_exec_command(exe, &plan.policy, &plan.cwd, &plan.argv, plan.tty.is_some())
            .map_err(refusal)?
    } else {
        let mut command = Command::new(program);
        command.args(&plan.argv[1..]);
        command
    };
    command
        .current_dir(&plan.cwd)
        .env_clear()
        .envs(&plan.env)
        .kill_on_drop(true);
    let terminal = match &plan.tty {
        Some(size) => {
            let (master, slave) = pty::open(size.clone()).map_err(|e| {
                HandlerError::internal(format!("cannot open a pseudo-terminal: {e}"))
            })?;
            let clone = |fd: &std::os::fd::OwnedFd| {
                fd.try_clone().map_err(|e| {
                    HandlerError::internal(format!("cannot share the pseudo-terminal: {e}"))
                })
            };
            // No process group here: `sandbox-exec --tty` starts a session, which needs it not
            // to lead a group.
            command
                .stdin(Stdio::from(clone(&slave)?))
                .stdout(Stdio::from(clone(&slave)?))
                .stderr(Stdio::from(slave));
            Some(master)
        }
        None => {
            command
                .process_group(0)
                .stdin(if plan.stream_stdin {
                    Stdio::piped()
                } else {
                    Stdio::null()
                })
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            None
        }
    };
    let mut child = command.spawn().map_err(|error| {
        HandlerError::internal(format!(
            "cannot start `{}`: {error}",
            command.as_std().get_program().to_string_lossy()
        ))
    })?;
    // The command holds our copies of the terminal's slave side; it must close them, or the
    // terminal would never report the end of the output.
    drop(command);
    let pid = child.id();
    let killer = Killer {
        group: GroupKiller::new(pid),
        session: terminal
            .as_ref()
            .and(pid)
            .and_then(|pid| i32::try_from(pid).ok())
            .and_then(Pid::from_raw),
    };
    let input = match (child.stdin.take(), &terminal) {
        (Some(stdin), _) => Input::Pipe(stdin),
        (None, Some(_)) => Input::Terminal,
        (None, None) => Input::Closed,
    };
    Ok(Process {
        input,
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        child,
        terminal,
        killer,
    })
}

/// Reads from `pipe` (which must be open).
async fn read_pipe<R: AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => Ok(0),
    }
}

/// Reads stdout: the pipe, or the terminal.
/// Waits until the connection has room for more streamed output (see [`OUTPUT_BACKLOG`]);
/// at once when the output is not streamed.
async fn wait_for_room(peer: &Peer, streaming: bool) {
    if streaming {
        peer.output_room(OUTPUT_BACKLOG).await;
    }
}

async fn read_stdout(
    pipe: &mut Option<tokio::process::ChildStdout>,
    terminal: Option<&Master>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match terminal {
        Some(terminal) => terminal.read(buf).await,
        None => read_pipe(pipe, buf).await,
    }
}

/// Writes some of `bytes` to `input`; returns how many were taken.
async fn write_input(
    input: &mut Input,
    terminal: Option<&Master>,
    bytes: &[u8],
) -> io::Result<usize> {
    match (input, terminal) {
        (Input::Pipe(pipe), _) => pipe.write(bytes).await,
        (Input::Terminal, Some(terminal)) => terminal.write(bytes).await,
        _ => Err(io::ErrorKind::BrokenPipe.into()),
    }
}

/// Sleeps until `deadline`, forever when there is none.
async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The exit code for `status`: its own, or `128 + N` for signal `N`.
pub(crate) fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(-1)
}

/// Runs `plan` to its end, sending streamed output to `peer` and obeying `control`; answers
/// with the exit code and the kept output.
pub(super) async fn run(
    plan: Plan,
    sandbox_exe: Option<&SandboxHelper>,
    peer: &Peer,
    control: mpsc::Receiver<Control>,
) -> Result<CommandExecResponse, HandlerError> {
    let process = spawn(&plan, sandbox_exe, EXEC)?;
    let outcome = drive(process, &plan, peer, control, Api::CommandExec).await;
    Ok(CommandExecResponse::builder()
        .exit_code(outcome.exit_code)
        .stdout(outcome.stdout)
        .stderr(outcome.stderr)
        .build())
}

/// Runs the started `process` of `plan` to its end, sending streamed output to `peer` as
/// `api`'s notifications and obeying `control`.
pub(crate) async fn drive(
    process: Process,
    plan: &Plan,
    peer: &Peer,
    mut control: mpsc::Receiver<Control>,
    api: Api,
) -> Outcome {
    let Process {
        mut child,
        mut input,
        mut stdout,
        mut stderr,
        terminal,
        mut killer,
    } = process;
    let process_id = plan.process_id.clone().unwrap_or_default();
    let named = format!("`{}` {process_id:?}", api.id_member());
    let (write_method, resize_method) = (api.write_method(), api.resize_method());
    tracing::debug!(process_id, argv = ?plan.argv, tty = plan.tty.is_some(), ?api, "process started");

    let mut out = Capture::new(plan.output_cap, plan.stream_output);
    let mut err = Capture::new(plan.output_cap, plan.stream_output);
    let deliver = |capture: &mut Capture, bytes: &[u8], stdout: bool| {
        if let Some(chunk) = capture.push(bytes) {
            api.deliver(peer, &process_id, stdout, &chunk.bytes, chunk.cap_reached);
        }
    };

    let (mut out_buf, mut err_buf) = (vec![0; READ_BUFFER], vec![0; READ_BUFFER]);
    let mut stdout_open = stdout.is_some() || terminal.is_some();
    let mut stderr_open = stderr.is_some();
    // Bytes waiting for stdin, and whether to close it once they are written.
    let mut pending: Vec<u8> = Vec::new();
    let mut close_after_pending = false;
    let mut stdin_closed = matches!(input, Input::Closed);
    let mut control_open = true;
    let deadline = plan
        .timeout
        .and_then(|timeout| Instant::now().checked_add(timeout));
    let mut timed_out = false;
    let mut exit: Option<ExitStatus> = None;
    let mut wait_failed = false;
    let mut drain_deadline: Option<Instant> = None;
    let mut killed_after_exit = false;
    let mut drain_timed_out = false;
    let mut connection_check = tokio::time::interval(CONNECTION_CHECK);

    while stdout_open || stderr_open || (exit.is_none() && !wait_failed) {
        tokio::select! {
            read = async {
                wait_for_room(peer, plan.stream_output).await;
                read_stdout(&mut stdout, terminal.as_ref(), &mut out_buf).await
            }, if stdout_open => {
                match read {
                    Ok(n) if n > 0 => deliver(&mut out, &out_buf[..n], true),
                    _ => stdout_open = false,
                }
            }
            read = async {
                wait_for_room(peer, plan.stream_output).await;
                read_pipe(&mut stderr, &mut err_buf).await
            }, if stderr_open => {
                match read {
                    Ok(n) if n > 0 => deliver(&mut err, &err_buf[..n], false),
                    _ => stderr_open = false,
                }
            }
            written = write_input(&mut input, terminal.as_ref(), &pending), if !pending.is_empty() => {
                match written {
                    Ok(n) if n > 0 => { pending.drain(..n); }
                    // The process stopped reading its input: drop what is left.
                    _ => {
                        pending.clear();
                        input = Input::Closed;
                        stdin_closed = true;
                    }
                }
                if pending.is_empty() && close_after_pending {
                    input = Input::Closed;
                }
            }
            request = control.recv(), if control_open => {
                let Some(request) = request else {
                    control_open = false;
                    continue;
                };
                match request {
                    Control::Write { bytes, close, reply } => {
                        let result = if !plan.stream_stdin {
                            Err(HandlerError::invalid_request(format!(
                                "Invalid request for {write_method}: {named} was not started with \
                                 `streamStdin: true` or `tty: true`, so its stdin cannot be written"
                            )))
                        } else if stdin_closed {
                            Err(HandlerError::invalid_request(format!(
                                "Invalid request for {write_method}: the stdin of {named} is closed"
                            )))
                        } else if exit.is_some() {
                            Err(HandlerError::invalid_request(format!(
                                "Invalid request for {write_method}: {named} has exited"
                            )))
                        } else {
                            pending.extend_from_slice(&bytes);
                            if close {
                                stdin_closed = true;
                                match input {
                                    Input::Terminal => pending.push(TERMINAL_EOF),
                                    _ if pending.is_empty() => input = Input::Closed,
                                    _ => close_after_pending = true,
                                }
                            }
                            Ok(())
                        };
                        let _ = reply.send(result);
                    }
                    Control::Resize { size, reply } => {
                        let result = match &terminal {
                            None => Err(HandlerError::invalid_request(format!(
                                "Invalid request for {resize_method}: {named} does not run on a \
                                 terminal (it was not started with `tty: true`)"
                            ))),
                            Some(terminal) => terminal.resize(size).map_err(|e| {
                                HandlerError::internal(format!("cannot resize the terminal of {named}: {e}"))
                            }),
                        };
                        let _ = reply.send(result);
                    }
                    Control::Terminate { reply } => {
                        killer.kill();
                        let _ = child.start_kill();
                        let _ = reply.send(Ok(()));
                    }
                }
            }
            status = child.wait(), if exit.is_none() && !wait_failed => {
                match status {
                    Ok(status) => exit = Some(status),
                    Err(error) => {
                        tracing::warn!(process_id, %error, "cannot wait for a command/exec process");
                        wait_failed = true;
                    }
                }
                drain_deadline = Some(Instant::now() + DRAIN_GRACE);
                // Input nobody will read.
                pending.clear();
                input = Input::Closed;
            }
            () = sleep_until_some(deadline), if !timed_out && exit.is_none() => {
                timed_out = true;
                killer.kill();
                let _ = child.start_kill();
            }
            _ = connection_check.tick() => {
                // A closed connection, or a server told to stop (a signal), ends the process.
                if !peer.is_open() || peer.hub().is_stopping() {
                    tracing::debug!(process_id, "connection closed or server stopping: killing its process");
                    killer.kill();
                    let _ = child.start_kill();
                    // Nobody is left to stream to or to answer.
                    stdout_open = false;
                    stderr_open = false;
                }
            }
            () = sleep_until_some(drain_deadline), if drain_deadline.is_some() => {
                if killed_after_exit {
                    // Something outside the group holds the output open; stop reading it.
                    break;
                }
                drain_timed_out = true;
                killer.kill();
                killed_after_exit = true;
                drain_deadline = Some(Instant::now() + DRAIN_GRACE);
            }
        }
    }
    // What it left running (background jobs that closed their output) ends with it.
    killer.kill();
    killer.group.disarm();
    killer.session = None;

    let exit_code = if timed_out {
        TIMEOUT_EXIT_CODE
    } else {
        exit.map_or(-1, exit_code)
    };
    tracing::debug!(process_id, exit_code, timed_out, "process ended");
    Outcome {
        exit_code,
        stdout_cap_reached: out.cut(),
        stderr_cap_reached: err.cut(),
        stdout: out.into_text(),
        stderr: err.into_text(),
        drain_timed_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_field_survives_any_command_name() {
        assert_eq!(session_field("42 (bash) S 1 42 40 0 -1"), Some(40));
        assert_eq!(session_field("42 (a) b (c) ) R 1 7 9 0"), Some(9));
        assert_eq!(session_field("42 (x) S 1 7 0 0"), Some(0));
        assert_eq!(session_field("42 (truncated"), None);
        assert_eq!(session_field("42 (x) S 1"), None);
    }

    /// A process that made a session of its own reads as its leader. (The test's own session
    /// may be `0`: under a container its leader can live outside our PID namespace.)
    #[test]
    fn the_session_of_a_process_is_read_from_proc() {
        let mut child = std::process::Command::new("setsid")
            .args(["sleep", "30"])
            .spawn()
            .expect("spawn setsid");
        let pid = Pid::from_child(&child);
        let leader = pid.as_raw_nonzero().get();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        // `setsid` calls setsid(2) just after it starts; until then it is in our session.
        while session_of(pid) != Some(leader) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let seen = session_of(pid);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(seen, Some(leader));
    }

    #[test]
    fn exit_codes_follow_the_shell_convention() {
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(9)), 137);
        assert_eq!(exit_code(ExitStatus::from_raw(15)), 143);
    }
}
