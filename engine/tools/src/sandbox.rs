//! Sandbox policies: which paths a policy lets a tool write, and confining a process to a
//! policy with the operating system's own mechanism (Landlock on Linux; see
//! `docs/sandbox.md` for exactly what is enforced).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentwire_protocol::SandboxPolicy;

/// The directories `policy` lets a tool write under, for a tool working in `cwd`; `None` when
/// it allows writing anywhere. `read-only` allows none; `workspace-write` allows `cwd`, its
/// `writableRoots`, `$TMPDIR` (unless `excludeTmpdirEnvVar`) and `/tmp` (unless
/// `excludeSlashTmp`).
pub fn writable_roots(policy: &SandboxPolicy, cwd: &Path) -> Option<Vec<PathBuf>> {
    match policy {
        SandboxPolicy::DangerFullAccess | SandboxPolicy::ExternalSandbox { .. } => None,
        SandboxPolicy::ReadOnly { .. } => Some(Vec::new()),
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
            ..
        } => {
            let mut roots = vec![cwd.to_path_buf()];
            roots.extend(writable_roots.iter().map(|root| PathBuf::from(&root.0)));
            if !exclude_tmpdir_env_var
                && let Some(tmp) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty())
            {
                roots.push(PathBuf::from(tmp));
            }
            if !exclude_slash_tmp {
                roots.push(PathBuf::from("/tmp"));
            }
            Some(roots)
        }
        // A policy this server does not know confines the most: nothing is writable.
        _ => Some(Vec::new()),
    }
}

/// Whether `policy` lets tools reach the network.
pub fn network_allowed(policy: &SandboxPolicy) -> bool {
    match policy {
        SandboxPolicy::DangerFullAccess | SandboxPolicy::ExternalSandbox { .. } => true,
        SandboxPolicy::ReadOnly { network_access, .. }
        | SandboxPolicy::WorkspaceWrite { network_access, .. } => *network_access,
        _ => false,
    }
}

/// The program that confines commands (`<exe> sandbox-exec …`: the `agentwire` binary), and
/// the server's private paths it hides from every command it confines (`--hide`).
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxHelper {
    /// The `agentwire` binary.
    pub exe: PathBuf,
    /// Paths no confined command may see: the server's home, token files, sockets.
    pub hidden: Arc<[PathBuf]>,
    /// The resource limits of every confined command (`[sandbox_limits]`).
    pub limits: SandboxLimits,
}

impl SandboxHelper {
    /// `exe`, hiding nothing.
    #[cfg(test)]
    pub(crate) fn new(exe: impl Into<PathBuf>) -> Self {
        Self {
            exe: exe.into(),
            hidden: Arc::from(Vec::new()),
            limits: SandboxLimits::DEFAULT,
        }
    }
}

/// Why a process could not be confined.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot apply the sandbox policy: {0}")]
pub struct SandboxError(pub String);

/// What [`confine`] could not enforce on this kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct Confinement {
    /// The kernel's Landlock ABI version as the `landlock` crate names it (`"V7"`), or `None`
    /// when the policy confines nothing.
    pub abi: Option<String>,
    /// Restrictions the policy asks for that this kernel's Landlock cannot enforce (it is too
    /// old for them); empty when the policy is fully enforced.
    pub not_enforced: Vec<String>,
}

impl Confinement {
    /// A one-line warning naming what is not enforced, if anything.
    pub fn warning(&self) -> Option<String> {
        (!self.not_enforced.is_empty()).then(|| {
            format!(
                "the sandbox is only partly enforced (kernel Landlock ABI {}): not enforced: {}",
                self.abi.as_deref().unwrap_or("unknown"),
                self.not_enforced.join("; ")
            )
        })
    }
}

/// Confines the calling thread, and every process it starts afterwards, to `policy` for
/// work in `cwd`. Called by `agentwire sandbox-exec` just before it executes the command
/// (a single-threaded process at that point).
///
/// `danger-full-access` and `external-sandbox` confine nothing. Any other policy fails closed:
/// on a kernel without Landlock this returns an error, and on a kernel whose Landlock lacks
/// some of the restrictions the policy needs, what is available is enforced and the rest is
/// named in [`Confinement::not_enforced`].
pub fn confine(policy: &SandboxPolicy, cwd: &Path) -> Result<Confinement, SandboxError> {
    let Some(roots) = writable_roots(policy, cwd) else {
        return Ok(Confinement::default());
    };
    // Relative roots (the protocol asks for absolute ones) are taken relative to `cwd`.
    let roots: Vec<PathBuf> = roots.iter().map(|root| cwd.join(root)).collect();
    imp::confine(&roots, network_allowed(policy))
}

/// Puts the calling process (single-threaded: `agentwire sandbox-exec` before it executes the
/// command) into namespaces of its own for `policy`: the server's private paths `hidden` are
/// covered, and without network access it gets a network of its own with nothing in it (see
/// `namespaces`). `danger-full-access` and `external-sandbox` isolate nothing. Fails closed.
/// What the command must still reach inside a hidden path (its working directory `cwd` and
/// the writable roots of `policy`, say a workspace inside the home) stays visible.
///
/// Returns whether it isolated anything (then the process is in a new PID namespace, whose
/// first process is the next one it starts).
pub fn isolate(
    policy: &SandboxPolicy,
    cwd: &Path,
    hidden: &[PathBuf],
) -> Result<bool, SandboxError> {
    let Some(roots) = writable_roots(policy, cwd) else {
        return Ok(false);
    };
    let roots: Vec<PathBuf> = roots.iter().map(|root| cwd.join(root)).collect();
    let mut keep = roots.clone();
    keep.push(cwd.to_path_buf());
    imp::isolate(hidden, &keep, &roots, network_allowed(policy))?;
    Ok(true)
}

/// In the first process of a sandbox's PID namespace (`agentwire sandbox-init`), before it
/// confines itself: replaces `/proc` with one that shows only the sandbox's own processes, so
/// no command can read the server's (its environment, its command line, its open files).
///
/// Fails for a root server (uid 0, mapped to itself in the sandbox's user namespace): a
/// command must never see its processes. Elsewhere the mount may be refused (a container that
/// masks parts of `/proc` forbids a new one inside a user namespace); then `Ok(Some(warning))`:
/// the host's `/proc` stays (its processes' `environ` is still refused: other processes of the
/// user hold capabilities the command lacks, and Landlock refuses tracing outside the sandbox).
pub fn own_proc() -> Result<Option<String>, SandboxError> {
    #[cfg(unix)]
    let root = rustix::process::geteuid().is_root();
    #[cfg(not(unix))]
    let root = false;
    match imp::own_proc() {
        Ok(()) => Ok(None),
        Err(error) if !root => Ok(Some(format!(
            "{error}; the command sees the host's processes in /proc"
        ))),
        Err(error) => Err(error),
    }
}

/// In the first process of a sandbox's PID namespace, right after [`own_proc`]: gives up every
/// capability in every set (effective, permitted, inheritable, ambient and bounding), whether
/// the server is root or not, and locks the secure bits so that none comes back at `exec`.
/// Fails closed: the command must not run holding any capability.
pub fn drop_capabilities() -> Result<(), SandboxError> {
    imp::drop_capabilities()
}

/// In the first process of a sandbox's PID namespace, once it has confined itself with
/// Landlock (which set `no_new_privs`): installs the seccomp filter every confined command
/// runs under (see `seccomp`: handle-based opens, device nodes, socket families, clocks, host
/// name, keyrings, BPF, performance counters, io_uring, new user namespaces; `clone3` and
/// `openat2` answered `ENOSYS`). Fails closed, on an architecture the filter does not know too.
pub fn filter_system_calls() -> Result<(), SandboxError> {
    imp::filter_system_calls()
}

/// Limits on what a confined command and everything it starts may use (`[sandbox_limits]` in
/// `config.toml`); `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxLimits {
    /// Most processes (threads included) of the sandbox's user at once, the sandbox's own first
    /// process included (`RLIMIT_NPROC`, counted in the sandbox's own user namespace).
    pub max_processes: Option<u64>,
    /// Most bytes of address space of each process (`RLIMIT_AS`).
    pub max_memory_bytes: Option<u64>,
}

impl SandboxLimits {
    /// 1024 processes and 8 GiB of address space per process.
    pub const DEFAULT: Self = Self {
        max_processes: Some(1024),
        max_memory_bytes: Some(8 << 30),
    };
}

impl Default for SandboxLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The `pids` cgroup a root server's sandbox runs in (see [`process_cgroup`]); leave it with
/// [`ProcessCgroup::leave`] once the sandbox is over.
#[derive(Debug, Default)]
pub struct ProcessCgroup(Option<imp::PidsCgroup>);

impl ProcessCgroup {
    /// Moves the calling process back to its parent cgroup and removes the sandbox's (a
    /// failure leaves it for the next sandbox to remove).
    pub fn leave(self) -> Result<(), SandboxError> {
        match self.0 {
            Some(cgroup) => cgroup.leave(),
            None => Ok(()),
        }
    }
}

/// In `agentwire sandbox-exec` before it isolates itself: for a root server, whose uid the
/// kernel exempts from `RLIMIT_NPROC`, puts the calling process (and so every process of the
/// sandbox) in a cgroup of its own whose `pids.max` is the process limit of `limits`, when a
/// `pids` controller is there to use; with none, the second value is a warning that the limit
/// is not enforced. Nothing for a server that is not root, a policy that confines nothing, or
/// no process limit.
pub fn process_cgroup(
    policy: &SandboxPolicy,
    limits: &SandboxLimits,
) -> Result<(ProcessCgroup, Option<String>), SandboxError> {
    #[cfg(unix)]
    let root = rustix::process::geteuid().is_root();
    #[cfg(not(unix))]
    let root = false;
    let (true, Some(_), Some(max)) = (
        root,
        writable_roots(policy, Path::new("/")),
        limits.max_processes,
    ) else {
        return Ok((ProcessCgroup::default(), None));
    };
    match imp::enter_pids_cgroup(max)? {
        Some(cgroup) => Ok((ProcessCgroup(Some(cgroup)), None)),
        None => Ok((
            ProcessCgroup::default(),
            Some(
                "no pids cgroup can be made here, so the process limit of a root server's \
                 sandbox is not enforced (the kernel exempts root from RLIMIT_NPROC)"
                    .to_owned(),
            ),
        )),
    }
}

/// Applies `limits` to the calling process (soft and hard limit alike, so the command cannot
/// raise them) and so to everything it starts afterwards.
pub fn apply_limits(limits: &SandboxLimits) -> Result<(), SandboxError> {
    imp::apply_limits(limits)
}

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod limits;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod namespaces;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod imp {
    pub(super) use super::cgroup::{PidsCgroup, enter as enter_pids_cgroup};
    pub(super) use super::limits::apply_limits;
    pub(super) use super::linux::confine;
    pub(super) use super::namespaces::{drop_capabilities, isolate, own_proc};
    pub(super) use super::seccomp::filter_system_calls;
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::PathBuf;

    use super::{Confinement, SandboxError};

    pub(super) fn isolate(
        _: &[PathBuf],
        _: &[PathBuf],
        _: &[PathBuf],
        _: bool,
    ) -> Result<(), SandboxError> {
        Err(SandboxError(
            "this operating system has no sandbox support in agentwire (Linux only)".to_owned(),
        ))
    }

    pub(super) fn own_proc() -> Result<(), SandboxError> {
        Err(SandboxError(
            "this operating system has no sandbox support in agentwire (Linux only)".to_owned(),
        ))
    }

    pub(super) fn drop_capabilities() -> Result<(), SandboxError> {
        Ok(())
    }

    /// No cgroups here.
    #[derive(Debug)]
    pub(crate) enum PidsCgroup {}

    impl PidsCgroup {
        pub(crate) fn leave(self) -> Result<(), SandboxError> {
            match self {}
        }
    }

    pub(super) fn enter_pids_cgroup(_: u64) -> Result<Option<PidsCgroup>, SandboxError> {
        Ok(None)
    }

    pub(super) fn filter_system_calls() -> Result<(), SandboxError> {
        Err(SandboxError(
            "this operating system has no sandbox support in agentwire (Linux only)".to_owned(),
        ))
    }

    pub(super) fn apply_limits(_: &super::SandboxLimits) -> Result<(), SandboxError> {
        Err(SandboxError(
            "this operating system has no sandbox support in agentwire (Linux only)".to_owned(),
        ))
    }

    pub(super) fn confine(_: &[PathBuf], _: bool) -> Result<Confinement, SandboxError> {
        Err(SandboxError(
            "this operating system has no sandbox support in agentwire (Linux Landlock only)"
                .to_owned(),
        ))
    }
}
