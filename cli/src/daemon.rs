//! `agentwire app-server daemon start|stop|status`: one background server on the Unix control
//! socket, found through a pid file and logging to a file, both under `$AGENTWIRE_HOME`.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use agentwire_runtime::default_unix_socket;
use clap::Subcommand;
use rustix::process::{Pid, Signal, kill_process, test_kill_process};

/// How long `start` waits for the socket, and `stop` for the server to exit.
const WAIT: Duration = Duration::from_secs(15);

/// How long `start`, `stop` and `status` wait for another one's lock on the control directory
/// (held at most about [`WAIT`] plus the time to spawn or signal the server).
const LOCK_WAIT: Duration = Duration::from_secs(40);

/// `agentwire app-server daemon …`.
#[derive(Debug, Subcommand)]
pub enum DaemonCommand {
    /// Start the background server (refused when one is running).
    Start,
    /// Stop it gracefully (SIGTERM: running turns are interrupted and recorded), waiting for
    /// it to exit.
    Stop,
    /// Say whether it is running; exits 1 when it is not.
    Status,
}

/// Where the daemon's files are.
pub struct DaemonPaths {
    /// `HOME/app-server-control/app-server.sock`.
    pub socket: PathBuf,
    /// `HOME/app-server-control/`: the directory of them all, locked while a command runs.
    pub control: PathBuf,
    /// `HOME/app-server-control/daemon.pid`.
    pub pid: PathBuf,
    /// `HOME/app-server-control/daemon.log`.
    pub log: PathBuf,
}

impl DaemonPaths {
    /// The files under the configured home.
    pub fn new() -> Self {
        let home = agentwire_engine::EngineConfig::from_env().home;
        let socket = default_unix_socket(&home);
        let dir = socket
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| home.clone());
        Self {
            socket,
            pid: dir.join("daemon.pid"),
            log: dir.join("daemon.log"),
            control: dir,
        }
    }
}

/// Runs a daemon subcommand.
pub fn run(command: DaemonCommand, overrides: &crate::ConfigOverrides) -> Result<ExitCode, String> {
    let paths = DaemonPaths::new();
    if !matches!(command, DaemonCommand::Start) && !paths.control.exists() {
        // Never started here: nothing to stop and nothing running.
        crate::stdout::line("agentwire app-server daemon is not running");
        return Ok(if matches!(command, DaemonCommand::Stop) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    // Held until this command is done, so that none sees another's work half done: a start
    // whose pid file is not written yet, or whose server does not listen yet, would look
    // stale (and its pid file be removed, and a second server started).
    let _lock = lock(&paths.control)?;
    match command {
        DaemonCommand::Start => start(&paths, overrides),
        DaemonCommand::Stop => stop(&paths),
        DaemonCommand::Status => Ok(status(&paths)),
    }
}

/// Takes the exclusive lock (`flock`) on the control directory `dir`, creating it (mode 0700)
/// when needed, waiting up to [`LOCK_WAIT`] for another `start`, `stop` or `status` to finish.
/// The lock goes with the returned file (closed on exec: the server does not inherit it).
fn lock(dir: &Path) -> Result<File, String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let file = File::open(dir).map_err(|e| format!("cannot open {}: {e}", dir.display()))?;
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(format!(
                    "another `agentwire app-server daemon` command has held the lock on {} for \
                     {LOCK_WAIT:?} (is a daemon start in progress?)",
                    dir.display()
                ));
            }
            Err(TryLockError::Error(e)) => {
                return Err(format!("cannot lock {}: {e}", dir.display()));
            }
        }
    }
}

/// The pid in the pid file when that process is alive and is an agentwire server; a pid file
/// left by a dead (or recycled) process is removed.
fn running(paths: &DaemonPaths) -> Option<Pid> {
    let text = std::fs::read_to_string(&paths.pid).ok()?;
    let pid = text
        .trim()
        .parse::<i32>()
        .ok()
        .and_then(Pid::from_raw)
        .filter(|pid| test_kill_process(*pid).is_ok() && is_ours(*pid, &paths.socket));
    if pid.is_none() {
        eprintln!(
            "removing the stale pid file {} ({})",
            paths.pid.display(),
            text.trim()
        );
        let _ = std::fs::remove_file(&paths.pid);
    }
    pid
}

/// Whether `pid` is this home's daemon: it runs `… app-server …` and holds the socket
/// listening at `socket` (Linux: from /proc; elsewhere assumed). A recycled pid now running
/// another program, or another server (another home's, or an older build's that was replaced
/// on disk, which still counts), is told apart by the socket it does not hold.
fn is_ours(pid: Pid, socket: &Path) -> bool {
    let proc = format!("/proc/{}", pid.as_raw_nonzero());
    if !runs_app_server(pid) {
        return false;
    }
    if !Path::new("/proc/self").exists() {
        return true;
    }
    let listening = listening_inodes(socket);
    let Ok(fds) = std::fs::read_dir(format!("{proc}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|target| {
            let target = target.to_string_lossy();
            target
                .strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
                .and_then(|inode| inode.parse::<u64>().ok())
                .is_some_and(|inode| listening.contains(&inode))
        })
    })
}

/// Whether `pid` runs `… app-server …` (Linux: from /proc; elsewhere assumed).
fn runs_app_server(pid: Pid) -> bool {
    match std::fs::read(format!("/proc/{}/cmdline", pid.as_raw_nonzero())) {
        Ok(cmdline) => cmdline.split(|b| *b == 0).any(|arg| arg == b"app-server"),
        Err(_) => !Path::new("/proc/self").exists(),
    }
}

/// The inodes of the Unix sockets listening at `path` (`/proc/net/unix`: the flag
/// `__SO_ACCEPTCON`, 0x10000, marks a listening socket).
fn listening_inodes(path: &Path) -> Vec<u64> {
    let Ok(table) = std::fs::read_to_string("/proc/net/unix") else {
        return Vec::new();
    };
    let path = path.to_string_lossy();
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            // Num RefCount Protocol Flags Type St Inode Path
            let fields: Vec<&str> = line.split_whitespace().collect();
            let flags = u32::from_str_radix(fields.get(3)?, 16).ok()?;
            let inode = fields.get(6)?.parse().ok()?;
            let at_path = line.strip_suffix(path.as_ref())?.ends_with(' ');
            (flags & 0x10000 != 0 && at_path).then_some(inode)
        })
        .collect()
}

fn start(paths: &DaemonPaths, overrides: &crate::ConfigOverrides) -> Result<ExitCode, String> {
    if let Some(pid) = running(paths) {
        return Err(format!(
            "a daemon is already running (pid {pid}, socket {}); stop it first",
            paths.socket.display(),
            pid = pid.as_raw_nonzero()
        ));
    }
    // The pid file is created exclusively (and under the directory's lock): of two concurrent
    // starts, one wins; the other then finds its daemon running.
    let mut pid_file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&paths.pid)
        .map_err(|e| {
            format!(
                "cannot create the pid file {}: {e} (is a daemon starting?)",
                paths.pid.display()
            )
        })?;
    let started = spawn(paths, overrides).and_then(|child| {
        writeln!(pid_file, "{}", child.id())
            .map_err(|e| format!("cannot write the pid file {}: {e}", paths.pid.display()))?;
        Ok(child)
    });
    let mut child = match started {
        Ok(child) => child,
        Err(error) => {
            let _ = std::fs::remove_file(&paths.pid);
            return Err(error);
        }
    };
    let deadline = Instant::now() + WAIT;
    loop {
        if std::os::unix::net::UnixStream::connect(&paths.socket).is_ok() {
            crate::stdout::line(&format!(
                "agentwire app-server daemon started (pid {}), socket {}, log {}",
                child.id(),
                paths.socket.display(),
                paths.log.display()
            ));
            return Ok(ExitCode::SUCCESS);
        }
        let failed = match child.try_wait() {
            Ok(Some(status)) => Some(format!("the server exited ({status})")),
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                Some(format!("the socket did not open within {WAIT:?}"))
            }
            Ok(None) => None,
            Err(error) => Some(format!("cannot watch the server: {error}")),
        };
        if let Some(reason) = failed {
            let _ = std::fs::remove_file(&paths.pid);
            return Err(format!(
                "the daemon did not start: {reason}; see {}",
                paths.log.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `agentwire app-server --listen unix://` in the background, logging to the log file.
fn spawn(
    paths: &DaemonPaths,
    overrides: &crate::ConfigOverrides,
) -> Result<std::process::Child, String> {
    use std::os::unix::process::CommandExt;
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&paths.log)
        .map_err(|e| format!("cannot open the log file {}: {e}", paths.log.display()))?;
    let log_err = log
        .try_clone()
        .map_err(|e| format!("cannot open the log file {}: {e}", paths.log.display()))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let mut command = Command::new(exe);
    command
        .arg("app-server")
        .arg("--listen")
        .arg("unix://")
        // Rotated by size (its stderr, pointed at the same file, follows it).
        .arg("--log-file")
        .arg(&paths.log)
        .args(overrides.child_args());
    command
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        // Out of the terminal's process group: Ctrl-C in the shell does not reach it.
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the server: {e}"))
}

fn stop(paths: &DaemonPaths) -> Result<ExitCode, String> {
    let Some(pid) = running(paths) else {
        crate::stdout::line("agentwire app-server daemon is not running");
        return Ok(ExitCode::SUCCESS);
    };
    kill_process(pid, Signal::TERM)
        .map_err(|e| format!("cannot signal pid {}: {e}", pid.as_raw_nonzero()))?;
    let deadline = Instant::now() + WAIT;
    // It stops listening before it exits: from here on, the process is followed by its pid.
    while test_kill_process(pid).is_ok() && runs_app_server(pid) {
        if Instant::now() > deadline {
            let _ = kill_process(pid, Signal::KILL);
            eprintln!("the daemon did not stop within {WAIT:?}; killed it");
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_file(&paths.pid);
    crate::stdout::line(&format!(
        "agentwire app-server daemon stopped (pid {})",
        pid.as_raw_nonzero()
    ));
    Ok(ExitCode::SUCCESS)
}

fn status(paths: &DaemonPaths) -> ExitCode {
    match running(paths) {
        Some(pid) => {
            let answering = std::os::unix::net::UnixStream::connect(&paths.socket).is_ok();
            crate::stdout::line(&format!(
                "agentwire app-server daemon is running (pid {}), socket {}{}, log {}",
                pid.as_raw_nonzero(),
                paths.socket.display(),
                if answering {
                    ""
                } else {
                    " (not accepting connections)"
                },
                paths.log.display()
            ));
            if answering {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        None => {
            crate::stdout::line("agentwire app-server daemon is not running");
            ExitCode::FAILURE
        }
    }
}
