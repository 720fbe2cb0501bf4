//! Running a command for the `shell` tool: spawned with its output streamed, bounded in time
//! and size, confined by the sandbox policy.
//!
//! - The command runs in a process group of its own, with stdin from `/dev/null` (a pipe fed
//!   through `Controls` when it runs as an exec session) and stdout and stderr piped. Both pipes are read concurrently; each piece of output goes to the
//!   callback as soon as it arrives, decoded as UTF-8 per stream (a character split across
//!   reads is carried over; invalid bytes become U+FFFD).
//! - The aggregated output keeps the first `output::HEAD_BYTES` and the last
//!   `output::TAIL_BYTES` (64 KiB each) with a `[… N bytes omitted …]` note between; the
//!   stream stops after `output::STREAM_BYTES` (4 MiB) with a note, while the output keeps
//!   being read so the command never blocks on a full pipe.
//! - When the timeout passes, or the future is dropped, the whole process group gets
//!   `SIGKILL`. When the command itself exits, what is left of its group (background jobs)
//!   is killed too once its pipes close or after `DRAIN_GRACE`: nothing it started outlives
//!   the call (except processes that left the group, such as `setsid` daemons).
//! - A policy other than `danger-full-access` / `external-sandbox` runs the command as
//!   `<sandbox_exe> sandbox-exec --policy JSON --cwd DIR -- ARGV…`; without `sandbox_exe` the
//!   command is refused.

use std::path::PathBuf;
use std::time::Duration;

use crate::sandbox::SandboxHelper;
use agentwire_protocol::SandboxPolicy;

/// A command to run.
#[derive(Debug, Clone)]
pub struct ExecRequest {
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
    pub sandbox_exe: Option<SandboxHelper>,
    /// The command's whole environment (see `config::shell_env`); `None` passes the server's
    /// on unchanged.
    pub env: Option<std::collections::BTreeMap<String, String>>,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecOutput {
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
pub enum ExecError {
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

mod output;
mod utf8;

/// What the caller of [`run_with`] can do to the command while it runs, besides waiting: an
/// exec session (see `tools::exec_sessions`).
pub(crate) struct Controls {
    /// Text for the command's stdin, which is then a pipe: each message is written whole, in
    /// order, by a task of its own (a command that does not read never stalls its output).
    /// Once every sender is gone the pipe is closed.
    pub stdin: tokio::sync::mpsc::Receiver<Vec<u8>>,
    /// Set to `true` (or dropped) to kill the command's whole process group.
    pub kill: tokio::sync::watch::Receiver<bool>,
    /// Every piece of decoded output, unbounded by the stream limit.
    pub tap: Tap,
    /// Told the process id once the command has started.
    pub started: Box<dyn FnOnce(Option<u32>) + Send>,
}

/// Where every piece of a command's decoded output goes (see [`Controls::tap`]).
pub(crate) type Tap = Box<dyn FnMut(&str) + Send>;

/// A task that ends when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Writes what arrives on `input` to `stdin` until either closes.
async fn feed_stdin(
    mut stdin: tokio::process::ChildStdin,
    mut input: tokio::sync::mpsc::Receiver<Vec<u8>>,
) {
    use tokio::io::AsyncWriteExt;
    while let Some(bytes) = input.recv().await {
        if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::time::Instant;

use output::{Aggregate, StreamLimit};
use utf8::Utf8Decoder;

/// How long the pipes may stay open once the command has exited (held by something it left
/// running in the background) before the rest of its process group is killed; and, after
/// that, how long to wait for them to close before giving up on them.
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// Bytes read from a pipe at a time.
const READ_BUFFER: usize = 8 * 1024;

/// Runs `request`, handing each piece of output to `on_output` as it arrives. Dropping the
/// future kills the command.
pub async fn run(
    request: ExecRequest,
    on_output: &mut (dyn FnMut(&str) + Send),
) -> Result<ExecOutput, ExecError> {
    run_with(request, on_output, None).await
}

/// Runs `request` as [`run`] does; with `controls`, its stdin is a pipe fed from them and
/// they can kill it (an exit by [`Controls::kill`] reports no exit code, like a signal).
pub(crate) async fn run_with(
    request: ExecRequest,
    on_output: &mut (dyn FnMut(&str) + Send),
    controls: Option<Controls>,
) -> Result<ExecOutput, ExecError> {
    let program = request.argv.first().cloned().unwrap_or_default();
    if program.is_empty() {
        return Err(ExecError::Spawn {
            program,
            reason: "the command is empty".to_owned(),
        });
    }
    if !request.cwd.is_dir() {
        return Err(ExecError::Spawn {
            program,
            reason: format!(
                "the working directory `{}` does not exist or is not a directory",
                request.cwd.display()
            ),
        });
    }
    let (mut command, confined) = command_for(&request, &program)?;
    if let Some(env) = &request.env {
        command.env_clear().envs(env);
    }
    command
        .current_dir(&request.cwd)
        .stdin(if controls.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);

    let started = std::time::Instant::now();
    let mut child = command.spawn().map_err(|error| match confined {
        Some(exe) => ExecError::Sandbox(format!(
            "cannot start the sandbox program `{}`: {error}",
            exe.display()
        )),
        None => ExecError::Spawn {
            program: program.clone(),
            reason: error.to_string(),
        },
    })?;
    // From here on, leaving this function in any way (return or drop) kills the group.
    let mut group = GroupKiller::new(child.id());
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let (mut kill, mut tap, _feeder) = match controls {
        Some(controls) => {
            (controls.started)(child.id());
            let feeder = child
                .stdin
                .take()
                .map(|stdin| AbortOnDrop(tokio::spawn(feed_stdin(stdin, controls.stdin))));
            (Some(controls.kill), Some(controls.tap), feeder)
        }
        None => (None, None, None),
    };
    let wait = child.wait();
    tokio::pin!(wait);

    let mut sink = Sink {
        aggregate: Aggregate::default(),
        stream: StreamLimit::default(),
        on_output,
        tap: tap.as_mut(),
    };
    let (mut out_text, mut err_text) = (Utf8Decoder::default(), Utf8Decoder::default());
    let (mut out_buf, mut err_buf) = (vec![0; READ_BUFFER], vec![0; READ_BUFFER]);
    let deadline = Instant::now()
        .checked_add(request.timeout)
        .unwrap_or_else(|| Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600));
    let mut exit: Option<Option<i32>> = None;
    let mut timed_out = false;
    // Set once the command has exited while its pipes are still open.
    let mut drain_deadline: Option<Instant> = None;
    let mut group_killed_after_exit = false;

    while stdout.is_some() || stderr.is_some() || exit.is_none() {
        tokio::select! {
            read = read_some(&mut stdout, &mut out_buf), if stdout.is_some() => {
                match read {
                    Ok(n) if n > 0 => sink.emit(&out_text.push(&out_buf[..n])),
                    _ => {
                        sink.emit(&out_text.finish());
                        stdout = None;
                    }
                }
            }
            read = read_some(&mut stderr, &mut err_buf), if stderr.is_some() => {
                match read {
                    Ok(n) if n > 0 => sink.emit(&err_text.push(&err_buf[..n])),
                    _ => {
                        sink.emit(&err_text.finish());
                        stderr = None;
                    }
                }
            }
            status = &mut wait, if exit.is_none() => {
                exit = Some(status.ok().and_then(|s| s.code()));
                drain_deadline = Some(Instant::now() + DRAIN_GRACE);
            }
            () = tokio::time::sleep_until(deadline), if !timed_out && exit.is_none() => {
                timed_out = true;
                group.kill();
            }
            () = killed(&mut kill), if kill.is_some() && exit.is_none() => {
                kill = None;
                group.kill();
            }
            () = sleep_until_some(drain_deadline), if drain_deadline.is_some() => {
                if group_killed_after_exit {
                    // Something outside the group holds the pipes; stop reading them.
                    break;
                }
                group.kill();
                group_killed_after_exit = true;
                drain_deadline = Some(Instant::now() + DRAIN_GRACE);
            }
        }
    }
    // Background jobs that closed their output do not outlive the command either.
    group.kill();
    group.disarm();

    let Sink { aggregate, .. } = sink;
    Ok(ExecOutput {
        exit_code: if timed_out { None } else { exit.flatten() },
        aggregated_output: aggregate.finish(),
        duration: started.elapsed(),
        timed_out,
    })
}

/// The command to spawn for `request`, and the sandbox program when it goes through one.
fn command_for<'a>(
    request: &'a ExecRequest,
    program: &str,
) -> Result<(Command, Option<&'a Path>), ExecError> {
    let policy = match &request.sandbox {
        None | Some(SandboxPolicy::DangerFullAccess | SandboxPolicy::ExternalSandbox { .. }) => {
            let mut command = Command::new(program);
            command.args(&request.argv[1..]);
            return Ok((command, None));
        }
        Some(policy) => policy,
    };
    let helper = request.sandbox_exe.as_ref().ok_or_else(|| {
        ExecError::Sandbox(
            "the sandbox policy confines this command, but no sandbox program \
             (`agentwire sandbox-exec`) is configured, so it was not run"
                .to_owned(),
        )
    })?;
    // `sandbox-exec` would only report a missing program through its exit code; check first
    // so that both ways of running say the same.
    check_program(program, &request.cwd, None)?;
    let command = sandbox_exec_command(helper, policy, &request.cwd, &request.argv, false)?;
    Ok((command, Some(helper.exe.as_path())))
}

/// `<exe> sandbox-exec [--tty] --policy JSON --cwd DIR [--hide PATH]… -- ARGV…`: runs `argv`
/// in `cwd` isolated and confined to `policy` (a policy that confines nothing is applied as
/// such), with the helper's private paths hidden. With `tty`, the helper first makes its stdin,
/// which must be a terminal, the controlling terminal of a new session.
pub fn sandbox_exec_command(
    helper: &SandboxHelper,
    policy: &SandboxPolicy,
    cwd: &Path,
    argv: &[String],
    tty: bool,
) -> Result<Command, ExecError> {
    let policy = serde_json::to_string(policy)
        .map_err(|e| ExecError::Sandbox(format!("cannot encode the sandbox policy: {e}")))?;
    let mut command = Command::new(&helper.exe);
    command.arg("sandbox-exec");
    if tty {
        command.arg("--tty");
    }
    command
        .arg("--policy")
        .arg(policy)
        .arg("--cwd")
        .arg(cwd)
        .arg("--parent")
        .arg(std::process::id().to_string());
    for path in helper.hidden.iter() {
        command.arg("--hide").arg(path);
    }
    // 0: no limit.
    let limits = helper.limits;
    command
        .arg("--max-processes")
        .arg(limits.max_processes.unwrap_or(0).to_string())
        .arg("--max-memory-bytes")
        .arg(limits.max_memory_bytes.unwrap_or(0).to_string());
    command.arg("--").args(argv);
    Ok(command)
}

/// Checks that `program` names an executable file, found as `execvp` would: a name with a
/// `/` relative to `cwd`, any other through `search_path` (the server's `$PATH` when `None`).
pub fn check_program(
    program: &str,
    cwd: &Path,
    search_path: Option<&std::ffi::OsStr>,
) -> Result<(), ExecError> {
    let executable = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let error = |reason: &str| ExecError::Spawn {
        program: program.to_owned(),
        reason: reason.to_owned(),
    };
    if program.contains('/') {
        let path = cwd.join(program);
        return if executable(&path) {
            Ok(())
        } else if path.exists() {
            Err(error("not an executable file"))
        } else {
            Err(error("no such file or directory"))
        };
    }
    let path = search_path
        .map(std::ffi::OsStr::to_os_string)
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut found_unexecutable = false;
    for dir in std::env::split_paths(&path) {
        let candidate = cwd.join(dir).join(program);
        if executable(&candidate) {
            return Ok(());
        }
        found_unexecutable |= candidate.exists();
    }
    Err(error(if found_unexecutable {
        "not an executable file"
    } else {
        "command not found in PATH"
    }))
}

/// Reads from `pipe` (which must be open).
async fn read_some<R: AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => Ok(0),
    }
}

/// Sleeps until `deadline` (which must be set).
async fn sleep_until_some(deadline: Option<Instant>) {
    if let Some(deadline) = deadline {
        tokio::time::sleep_until(deadline).await;
    }
}

/// Resolves once `kill` (which must be set) asks for the kill or its sender is gone.
async fn killed(kill: &mut Option<tokio::sync::watch::Receiver<bool>>) {
    if let Some(kill) = kill {
        let _ = kill.wait_for(|&kill| kill).await;
    }
}

/// Where decoded output goes: the aggregate, the tap (all of it), and the callback while the
/// stream limit lasts.
struct Sink<'a> {
    aggregate: Aggregate,
    stream: StreamLimit,
    on_output: &'a mut (dyn FnMut(&str) + Send),
    tap: Option<&'a mut Tap>,
}

impl Sink<'_> {
    fn emit(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.aggregate.push(text);
        if let Some(tap) = self.tap.as_mut() {
            tap(text);
        }
        if let Some(text) = self.stream.admit(text) {
            (self.on_output)(&text);
        }
    }
}

/// Kills a process group with `SIGKILL` when asked, and when dropped unless disarmed.
pub struct GroupKiller {
    pgid: Option<Pid>,
}

impl GroupKiller {
    /// The group led by `pid` (the child spawned with `process_group(0)`).
    pub fn new(pid: Option<u32>) -> Self {
        Self {
            pgid: pid
                .and_then(|pid| i32::try_from(pid).ok())
                .and_then(Pid::from_raw),
        }
    }

    /// Kills the group now (the drop kills it again unless disarmed: harmless).
    pub fn kill(&self) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is gone already) is the only expected error.
            let _ = kill_process_group(pgid, Signal::KILL);
        }
    }

    /// Leaves the group alone when dropped (it ended, or someone else owns it now).
    pub fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentwire-exec-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        dir
    }

    fn request(argv: &[&str]) -> ExecRequest {
        ExecRequest {
            argv: argv.iter().map(|a| (*a).to_owned()).collect(),
            cwd: std::env::temp_dir(),
            timeout: Duration::from_secs(20),
            sandbox: None,
            sandbox_exe: None,
            env: None,
        }
    }

    /// Runs `request`, returning the result and the streamed pieces.
    async fn run_collecting(request: ExecRequest) -> (Result<ExecOutput, ExecError>, Vec<String>) {
        let mut pieces = Vec::new();
        let result = run(request, &mut |text: &str| pieces.push(text.to_owned())).await;
        (result, pieces)
    }

    async fn sh(script: &str) -> (ExecOutput, Vec<String>) {
        let (result, pieces) = run_collecting(request(&["sh", "-c", script])).await;
        (result.expect("runs"), pieces)
    }

    /// Whether process `pid` still runs (a zombie does not count).
    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let state = stat.rsplit_once(") ")?.1.chars().next()?;
                Some(state != 'Z' && state != 'X')
            })
            .unwrap_or(false)
    }

    /// Waits a few seconds for every process in `pids` to be gone.
    async fn assert_all_die(pids: &[u32]) {
        for _ in 0..100 {
            if !pids.iter().any(|&pid| alive(pid)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let living: Vec<_> = pids.iter().filter(|&&pid| alive(pid)).collect();
        panic!("still running: {living:?}");
    }

    /// The pids a script wrote to `file`.
    async fn pids_in(file: &Path) -> Vec<u32> {
        for _ in 0..100 {
            if let Ok(text) = std::fs::read_to_string(file)
                && text.ends_with('\n')
            {
                return text
                    .split_whitespace()
                    .map(|p| p.parse().expect("pid"))
                    .collect();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("no pids in {}", file.display());
    }

    #[tokio::test]
    async fn output_streams_in_order_as_it_arrives() {
        let (output, pieces) =
            sh("printf one; sleep 0.2; printf two >&2; sleep 0.2; printf three").await;
        assert_eq!(pieces, ["one", "two", "three"]);
        assert_eq!(output.aggregated_output, "onetwothree");
        assert_eq!(output.exit_code, Some(0));
        assert!(!output.timed_out);
        assert!(output.duration >= Duration::from_millis(400));
    }

    #[tokio::test]
    async fn exit_codes_and_signals() {
        let (output, _) = sh("echo failing >&2; exit 3").await;
        assert_eq!(output.exit_code, Some(3));
        assert_eq!(output.aggregated_output, "failing\n");
        let (output, _) = sh("kill -9 $$").await;
        assert_eq!(output.exit_code, None);
        assert!(!output.timed_out);
    }

    #[tokio::test]
    async fn a_character_split_across_writes_is_never_split_in_the_stream() {
        let (output, pieces) =
            sh(r"printf '\303'; sleep 0.2; printf '\251\n'; printf '\377'").await;
        // The lead byte alone streams nothing; the character comes whole with its second byte.
        assert!(pieces[0].starts_with("é\n"), "{pieces:?}");
        assert_eq!(pieces.concat(), "é\n\u{fffd}");
        assert_eq!(output.aggregated_output, "é\n\u{fffd}");
    }

    #[tokio::test]
    async fn aggregated_output_keeps_head_and_tail() {
        let (output, _) = sh("head -c 1000000 /dev/zero | tr '\\0' a; echo; echo END").await;
        let omitted = 1_000_000 + 5 - output::HEAD_BYTES - output::TAIL_BYTES;
        let note = output::omitted_note(omitted);
        assert!(
            output.aggregated_output.contains(&note),
            "no `{note}` in {} bytes",
            output.aggregated_output.len()
        );
        assert_eq!(
            output.aggregated_output.len(),
            output::HEAD_BYTES + note.len() + output::TAIL_BYTES
        );
        assert!(output.aggregated_output.ends_with("aaa\nEND\n"));
        assert_eq!(output.exit_code, Some(0));
    }

    #[tokio::test]
    async fn streaming_stops_after_its_limit_but_the_command_runs_on() {
        let (output, pieces) = sh("head -c 6000000 /dev/zero | tr '\\0' b; echo DONE").await;
        let streamed = pieces.concat();
        assert_eq!(streamed.matches("output streaming stopped").count(), 1);
        assert!(streamed.len() <= output::STREAM_BYTES + output::stream_stopped_note().len());
        assert!(!streamed.contains("DONE"));
        assert!(output.aggregated_output.ends_with("bbbDONE\n"));
        assert_eq!(output.exit_code, Some(0));
    }

    #[tokio::test]
    async fn the_timeout_kills_the_whole_process_group() {
        let dir = scratch("timeout");
        let pidfile = dir.join("pids");
        let script = format!(
            "sleep 30 & sleep 30 & echo $$ $! > {}; echo started; wait",
            pidfile.display()
        );
        let mut request = request(&["sh", "-c", &script]);
        request.timeout = Duration::from_millis(500);
        let started = std::time::Instant::now();
        let (result, _) = run_collecting(request).await;
        let output = result.expect("runs");
        assert!(output.timed_out);
        assert_eq!(output.exit_code, None);
        assert_eq!(output.aggregated_output, "started\n");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_all_die(&pids_in(&pidfile).await).await;
    }

    #[tokio::test]
    async fn dropping_the_future_kills_the_whole_process_group() {
        let dir = scratch("drop");
        let pidfile = dir.join("pids");
        let script = format!("sleep 30 & echo $$ $! > {}; sleep 30", pidfile.display());
        let mut sink = |_: &str| {};
        let future = run(request(&["sh", "-c", &script]), &mut sink);
        fn assert_send<T: Send>(_: &T) {}
        assert_send(&future);
        let dropped = tokio::time::timeout(Duration::from_millis(500), future).await;
        assert!(dropped.is_err(), "the command should still run");
        let pids = pids_in(&pidfile).await;
        assert_eq!(pids.len(), 2);
        assert_all_die(&pids).await;
    }

    #[tokio::test]
    async fn background_jobs_do_not_outlive_the_command() {
        let started = std::time::Instant::now();
        let (output, _) = sh("sleep 30 & echo $!").await;
        assert_eq!(output.exit_code, Some(0));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let pid: u32 = output.aggregated_output.trim().parse().expect("pid");
        assert_all_die(&[pid]).await;
    }

    #[tokio::test]
    async fn programs_that_cannot_start_are_spawn_errors() {
        let (result, _) = run_collecting(request(&["agentwire-no-such-program"])).await;
        assert!(
            matches!(&result, Err(ExecError::Spawn { program, .. }) if program == "agentwire-no-such-program"),
            "{result:?}"
        );
        let dir = scratch("spawn");
        let script = dir.join("not-executable.sh");
        std::fs::write(&script, "#!/bin/sh\necho hi\n").expect("write");
        let path = script.display().to_string();
        let (result, _) = run_collecting(request(&[&path])).await;
        assert!(
            matches!(&result, Err(ExecError::Spawn { program, .. }) if *program == path),
            "{result:?}"
        );
        let mut missing_cwd = request(&["true"]);
        missing_cwd.cwd = dir.join("missing");
        let (result, _) = run_collecting(missing_cwd).await;
        assert!(
            matches!(&result, Err(ExecError::Spawn { reason, .. }) if reason.contains("working directory")),
            "{result:?}"
        );
        // Confined, the same checks happen before the sandbox program would run.
        let mut confined = request(&["agentwire-no-such-program"]);
        confined.sandbox = Some(SandboxPolicy::read_only().build());
        confined.sandbox_exe = Some(SandboxHelper::new("/bin/echo"));
        let (result, _) = run_collecting(confined).await;
        assert!(matches!(result, Err(ExecError::Spawn { .. })), "{result:?}");
    }

    #[tokio::test]
    async fn a_confining_policy_without_the_sandbox_program_is_refused() {
        let dir = scratch("refused");
        let marker = dir.join("ran");
        let script = format!("touch {}", marker.display());
        for policy in [
            SandboxPolicy::read_only().build(),
            SandboxPolicy::workspace_write()
                .network_access(true)
                .build(),
        ] {
            let mut request = request(&["sh", "-c", &script]);
            request.sandbox = Some(policy);
            let (result, pieces) = run_collecting(request).await;
            assert!(matches!(result, Err(ExecError::Sandbox(_))), "{result:?}");
            assert!(pieces.is_empty());
            assert!(!marker.exists(), "the command ran");
        }
        // Full access and an external sandbox run the command directly.
        for policy in [
            SandboxPolicy::DangerFullAccess,
            SandboxPolicy::external_sandbox().build(),
        ] {
            let mut request = request(&["sh", "-c", &script]);
            request.sandbox = Some(policy);
            let (result, _) = run_collecting(request).await;
            assert_eq!(result.expect("runs").exit_code, Some(0));
            assert!(marker.exists());
            std::fs::remove_file(&marker).expect("remove marker");
        }
    }

    #[tokio::test]
    async fn a_confined_command_goes_through_sandbox_exec() {
        let policy = SandboxPolicy::read_only().build();
        let mut request = request(&["ls", "-l", "a b"]);
        request.sandbox = Some(policy.clone());
        // `echo` stands in for the sandbox program and shows the arguments it gets.
        request.sandbox_exe = Some(SandboxHelper::new("/bin/echo"));
        let cwd = request.cwd.display().to_string();
        let (result, _) = run_collecting(request).await;
        let output = result.expect("runs").aggregated_output;
        let rest = output
            .strip_prefix("sandbox-exec --policy ")
            .expect(&output);
        let (json, rest) = rest.split_once(" --cwd ").expect(&output);
        assert_eq!(
            serde_json::from_str::<SandboxPolicy>(json).expect("policy JSON"),
            policy
        );
        let parent = std::process::id();
        assert_eq!(
            rest,
            format!(
                "{cwd} --parent {parent} --max-processes 1024 --max-memory-bytes 8589934592 \
                 -- ls -l a b\n"
            )
        );
    }
}
