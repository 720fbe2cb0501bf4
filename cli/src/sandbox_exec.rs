//! `agentwire sandbox-exec [--tty] --policy JSON --cwd DIR [--hide PATH]…
//! [--max-processes N] [--max-memory-bytes N] -- COMMAND [ARGS…]`
//! (hidden): isolates itself (user, mount, PID, UTS, IPC and time namespaces: the `--hide`
//! paths covered; a network namespace unless the policy allows the network), then starts
//! `agentwire sandbox-init` as the first process of its new PID namespace, which mounts the
//! namespace's own `/proc`, gives up every capability, confines itself (Landlock) to the
//! sandbox policy, installs the seccomp filter, sets the resource limits and runs the command. The engine runs every confined
//! `shell` command through it, and every `command/exec` command that is confined or runs on a
//! pseudo-terminal.
//!
//! With `--tty`, its stdin must be a terminal (the slave side of a pseudo-terminal): it first
//! starts a new session and makes that terminal the session's controlling terminal, so the
//! command gets job control, `SIGWINCH` on resize and `SIGHUP` when the terminal goes away.
//! (The workspace forbids `unsafe`, so the engine cannot do this in a `pre_exec` hook; this
//! program is the child, so it does it with safe calls before it executes the command.)
//!
//! Exit codes of its own (anything else is the command's):
//! - 2: bad arguments or a policy that is not valid JSON for `SandboxPolicy`;
//! - 125: the sandbox could not be applied (for example no Landlock in the kernel) or `--cwd`
//!   is not usable, so the command was not run;
//! - 126: the command was found but could not be executed (for example not executable);
//! - 127: the command was not found.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agentwire_engine::sandbox::SandboxLimits;
use agentwire_protocol::SandboxPolicy;
use clap::Args;

/// Exit code for bad arguments.
const EXIT_USAGE: u8 = 2;
/// Exit code when the sandbox (or the working directory) could not be set up.
const EXIT_SANDBOX: u8 = 125;
/// Exit code when the command cannot be executed.
const EXIT_CANNOT_EXECUTE: u8 = 126;
/// Exit code when the command is not found.
const EXIT_NOT_FOUND: u8 = 127;

/// The arguments of `sandbox-exec`.
#[derive(Debug, Args)]
pub struct SandboxExecArgs {
    /// Make stdin, which must be a terminal, the controlling terminal of a new session first.
    #[arg(long)]
    tty: bool,
    /// The sandbox policy, as `SandboxPolicy` JSON (e.g. `{"type":"readOnly"}`).
    #[arg(long, value_name = "JSON")]
    policy: String,
    /// The working directory the command runs in (and that `workspaceWrite` makes writable).
    #[arg(long, value_name = "DIR")]
    cwd: PathBuf,
    /// The process that runs this one (the server): if it is already gone, nothing is run.
    #[arg(long, value_name = "PID")]
    parent: Option<u32>,
    /// A path of the server's the command must not see (its home, a token file, a socket):
    /// covered in the command's own mount namespace. Repeatable.
    #[arg(long, value_name = "PATH")]
    hide: Vec<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// The resource limits of a confined command (`[sandbox_limits]` of `config.toml`).
#[derive(Debug, Clone, Copy, Args)]
pub struct LimitArgs {
    /// Most processes (threads included) in the sandbox at once, its own two included; 0: no
    /// limit.
    #[arg(long, value_name = "N", default_value_t = SandboxLimits::DEFAULT.max_processes.unwrap_or(0))]
    max_processes: u64,
    /// Most bytes of address space of each process of the sandbox; 0: no limit.
    #[arg(long, value_name = "N", default_value_t = SandboxLimits::DEFAULT.max_memory_bytes.unwrap_or(0))]
    max_memory_bytes: u64,
}

impl LimitArgs {
    /// The limits, 0 meaning none.
    fn limits(self) -> SandboxLimits {
        let some = |n: u64| (n > 0).then_some(n);
        SandboxLimits {
            max_processes: some(self.max_processes),
            max_memory_bytes: some(self.max_memory_bytes),
        }
    }
}

/// Prints `message` as this command's error and returns `code`.
fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("agentwire sandbox-exec: {message}");
    ExitCode::from(code)
}

/// Confines this process and executes the command; returns only when that fails.
pub fn run(args: SandboxExecArgs) -> ExitCode {
    // Die with the server from the start. A server killed before this line leaves this process
    // to another parent: `--parent` tells, and then nothing is run.
    if let Err(e) = die_with_parent() {
        return fail(EXIT_SANDBOX, format_args!("{e}; the command was not run"));
    }
    if let Some(parent) = args.parent
        && parent_pid() != Some(parent)
    {
        return fail(
            EXIT_SANDBOX,
            "the server that started this is gone; the command was not run",
        );
    }
    if args.tty
        && let Err(e) = take_terminal()
    {
        return fail(
            EXIT_SANDBOX,
            format_args!(
                "cannot make stdin the controlling terminal: {e}; the command was not run"
            ),
        );
    }
    let policy: SandboxPolicy = match serde_json::from_str(&args.policy) {
        Ok(policy) => policy,
        Err(e) => return fail(EXIT_USAGE, format_args!("invalid --policy: {e}")),
    };
    let cwd = match std::path::absolute(&args.cwd) {
        Ok(cwd) => cwd,
        Err(e) => {
            return fail(
                EXIT_SANDBOX,
                format_args!("invalid --cwd `{}`: {e}", args.cwd.display()),
            );
        }
    };
    // A root server's process limit is a cgroup, entered before anything is started.
    let cgroup = match agentwire_engine::sandbox::process_cgroup(&policy, &args.limits.limits()) {
        Ok((cgroup, warning)) => {
            if let Some(warning) = warning {
                eprintln!("agentwire sandbox-exec: warning: {warning}");
            }
            cgroup
        }
        Err(e) => return fail(EXIT_SANDBOX, format_args!("{e}; the command was not run")),
    };
    let isolated = match agentwire_engine::sandbox::isolate(&policy, &cwd, &args.hide) {
        Ok(isolated) => isolated,
        Err(e) => return fail(EXIT_SANDBOX, format_args!("{e}; the command was not run")),
    };
    if isolated {
        // A new user namespace (when not root) clears the parent-death signal: set it again,
        // and check again that the server is still there.
        if let Err(e) = die_with_parent() {
            return fail(EXIT_SANDBOX, format_args!("{e}; the command was not run"));
        }
        if let Some(parent) = args.parent
            && parent_pid() != Some(parent)
        {
            return fail(
                EXIT_SANDBOX,
                "the server that started this is gone; the command was not run",
            );
        }
        // The first process of the namespace confines itself, once it has its own `/proc`.
        let code = run_as_init(&args.policy, &cwd, args.limits, &args.command);
        if let Err(e) = cgroup.leave() {
            eprintln!("agentwire sandbox-exec: warning: {e}");
        }
        return code;
    }
    if let Err(code) = confine_and_enter(&policy, &cwd) {
        return code;
    }
    exec(&args.command)
}

/// Confines this process to `policy` (Landlock) and changes to `cwd`.
fn confine_and_enter(policy: &SandboxPolicy, cwd: &Path) -> Result<(), ExitCode> {
    match agentwire_engine::sandbox::confine(policy, cwd) {
        Ok(confinement) => {
            if let Some(warning) = confinement.warning() {
                eprintln!("agentwire sandbox-exec: warning: {warning}");
            }
        }
        Err(e) => {
            return Err(fail(
                EXIT_SANDBOX,
                format_args!("{e}; the command was not run"),
            ));
        }
    }
    std::env::set_current_dir(cwd).map_err(|e| {
        fail(
            EXIT_SANDBOX,
            format_args!("cannot change to `{}`: {e}", cwd.display()),
        )
    })
}

/// Executes `command`; returns only when that fails.
fn exec(command: &[OsString]) -> ExitCode {
    let (program, rest) = match command.split_first() {
        Some(split) => split,
        None => return fail(EXIT_USAGE, "no command given"),
    };
    // Only returns on failure.
    let error = std::process::Command::new(program).args(rest).exec();
    let code = if error.kind() == ErrorKind::NotFound {
        EXIT_NOT_FOUND
    } else {
        EXIT_CANNOT_EXECUTE
    };
    fail(
        code,
        format_args!("cannot execute `{}`: {error}", program.to_string_lossy()),
    )
}

/// In a new PID namespace: starts `agentwire sandbox-init --policy JSON --cwd DIR -- COMMAND…`
/// as the namespace's first process (its init) and waits for it, both tied to the life of
/// their parent with `PR_SET_PDEATHSIG`: when the server dies this process dies, then the
/// init, and with it every process of the namespace, whatever the command started. Exits as
/// the command did (128 + N when a signal N ended it).
fn run_as_init(policy: &str, cwd: &Path, limits: LimitArgs, command: &[OsString]) -> ExitCode {
    let status = std::process::Command::new("/proc/self/exe")
        .arg("sandbox-init")
        .arg("--parent")
        .arg(std::process::id().to_string())
        .arg("--policy")
        .arg(policy)
        .arg("--cwd")
        .arg(cwd)
        .arg("--max-processes")
        .arg(limits.max_processes.to_string())
        .arg("--max-memory-bytes")
        .arg(limits.max_memory_bytes.to_string())
        .arg("--")
        .args(command)
        .status();
    match status {
        Ok(status) => exit_code(status),
        Err(e) => fail(
            EXIT_SANDBOX,
            format_args!("cannot start the sandbox's first process: {e}; the command was not run"),
        ),
    }
}

/// The arguments of `sandbox-init`.
#[derive(Debug, Args)]
pub struct SandboxInitArgs {
    /// The `sandbox-exec` that started it (its pid in the host's `/proc`).
    #[arg(long, value_name = "PID")]
    parent: Option<u32>,
    /// The sandbox policy to confine itself to, as `SandboxPolicy` JSON.
    #[arg(long, value_name = "JSON")]
    policy: String,
    /// The working directory the command runs in.
    #[arg(long, value_name = "DIR")]
    cwd: PathBuf,
    #[command(flatten)]
    limits: LimitArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// `agentwire sandbox-init --policy JSON --cwd DIR -- COMMAND…` (hidden): the first process of
/// a sandbox's PID namespace. Dies with the `sandbox-exec` that started it; mounts the
/// namespace's own `/proc` (the host's processes, the server first, out of sight) and confines
/// itself to the policy; runs the command as its child (so the command is an ordinary process,
/// not an init the kernel shields from signals) and exits as it did, which ends every process
/// the command left behind in the namespace.
pub fn run_init(args: SandboxInitArgs) -> ExitCode {
    if let Err(e) = die_with_parent() {
        return fail(EXIT_SANDBOX, format_args!("{e}; the command was not run"));
    }
    // The parent is outside this PID namespace, where `getppid` says 0: look it up by its pid
    // in the host's `/proc` instead (before our own replaces it). Gone already (before the
    // line above), nothing is run.
    if let Some(parent) = args.parent
        && !alive(parent)
    {
        return fail(
            EXIT_SANDBOX,
            "the sandbox that started this is gone; the command was not run",
        );
    }
    let policy: SandboxPolicy = match serde_json::from_str(&args.policy) {
        Ok(policy) => policy,
        Err(e) => return fail(EXIT_USAGE, format_args!("invalid --policy: {e}")),
    };
    let mounted = agentwire_engine::sandbox::own_proc();
    // Given up whatever the mount did: the command never holds a capability.
    if let Err(e) = agentwire_engine::sandbox::drop_capabilities() {
        return fail(EXIT_SANDBOX, format_args!("{e}; the command was not run"));
    }
    match mounted {
        Ok(None) => {}
        Ok(Some(warning)) => eprintln!("agentwire sandbox-exec: warning: {warning}"),
        Err(e) => return fail(EXIT_SANDBOX, format_args!("{e}; the command was not run")),
    }
    if let Err(code) = confine_and_enter(&policy, &args.cwd) {
        return code;
    }
    // After Landlock, which set `no_new_privs` (the filter needs it).
    let filtered = agentwire_engine::sandbox::filter_system_calls()
        .and_then(|()| agentwire_engine::sandbox::apply_limits(&args.limits.limits()));
    if let Err(e) = filtered {
        return fail(EXIT_SANDBOX, format_args!("{e}; the command was not run"));
    }
    let (program, rest) = match args.command.split_first() {
        Some(split) => split,
        None => return fail(EXIT_USAGE, "no command given"),
    };
    match std::process::Command::new(program).args(rest).status() {
        Ok(status) => exit_code(status),
        Err(error) => {
            let code = if error.kind() == ErrorKind::NotFound {
                EXIT_NOT_FOUND
            } else {
                EXIT_CANNOT_EXECUTE
            };
            fail(
                code,
                format_args!("cannot execute `{}`: {error}", program.to_string_lossy()),
            )
        }
    }
}

/// Whether process `pid` (in the host's `/proc`) still runs: not gone, not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// The exit code that reports `status`: its own, or 128 + the signal that ended it.
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(EXIT_SANDBOX.into());
    ExitCode::from(u8::try_from(code).unwrap_or(EXIT_SANDBOX))
}

/// Asks the kernel to kill this process when its parent dies.
#[cfg(target_os = "linux")]
fn die_with_parent() -> std::io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent() -> std::io::Result<()> {
    Ok(())
}

/// The pid of this process's parent.
#[cfg(unix)]
fn parent_pid() -> Option<u32> {
    rustix::process::getppid().and_then(|pid| u32::try_from(pid.as_raw_nonzero().get()).ok())
}

#[cfg(not(unix))]
fn parent_pid() -> Option<u32> {
    None
}

/// Starts a new session (this process is not a process group leader: the engine does not put a
/// `--tty` child in a group of its own) and makes stdin its controlling terminal.
#[cfg(unix)]
fn take_terminal() -> std::io::Result<()> {
    rustix::process::setsid()?;
    rustix::process::ioctl_tiocsctty(std::io::stdin())?;
    Ok(())
}

#[cfg(not(unix))]
fn take_terminal() -> std::io::Result<()> {
    Err(std::io::Error::other("terminals need a Unix system"))
}
