//! The seccomp filter of every confined command, installed by the sandbox's first process after
//! Landlock (which set `no_new_privs`) and inherited by everything the command starts.
//!
//! Refused with `EPERM`, whatever the arguments unless said:
//!
//! - `open_by_handle_at` and `name_to_handle_at`: opening a file by its handle on the mount
//!   walks past every covering mount (the server's home) and every Landlock path rule;
//! - `mknod` and `mknodat` of a character or block device (FIFOs, sockets and regular files
//!   are still made);
//! - `socket` and `socketpair` of any family but `AF_UNIX`, `AF_INET`, `AF_INET6` and
//!   `AF_NETLINK` (so no `AF_VSOCK` to the hypervisor, no `AF_PACKET`, no Bluetooth…; without
//!   network access the sandbox's network namespace already leaves `AF_INET*` nothing to
//!   reach); `io_uring_setup`, `io_uring_enter` and `io_uring_register`, whose operations
//!   (sockets, opens) this filter could not see;
//! - `chmod`, `fchmod`, `fchmodat`, `fchmodat2`, and `open`, `openat`, `creat` and `mknodat`
//!   with a mode, that would set the set-user-ID or set-group-ID bit: a root server's command
//!   is uid 0, and a set-user-ID copy of a shell it left in a workspace would give root to
//!   every user of the machine outside the sandbox (inside, the writable roots are `nosuid`).
//!   `openat2` passes its mode in a structure the filter cannot read, so it is not allowed at
//!   all (below);
//! - `perf_event_open` (counters of the whole system);
//! - `clock_settime`, `clock_adjtime`, `settimeofday` and `adjtimex` (the host's clocks; read
//!   them with `clock_gettime`);
//! - `sethostname` and `setdomainname`;
//! - `keyctl`, `add_key` and `request_key` (the kernel's keyrings), and `bpf`;
//! - `unshare` and `clone` asking for a new user namespace, in which the command would hold
//!   capabilities again.
//!
//! Answered with `ENOSYS`, as a kernel without them would, because their arguments are out of
//! the filter's sight (in a structure in memory), so that callers fall back to a call whose
//! arguments it sees: `clone3` (the C library falls back to `clone`, whose flags are checked
//! above) and `openat2` (programs that use it fall back to `openat`, as they must on kernels
//! before Linux 5.6; its mode is checked above). Nothing `sandbox-init` does after installing the
//! filter, nor `agentwire apply-patch` (run confined), calls `openat2`; the server's own walk
//! of an approved patch does, but the server is not confined.
//!
//! Tracing processes outside the sandbox is refused by Landlock (a confined process can trace
//! only processes of its own domain), and the PID namespace hides them.
//!
//! Built for the architecture agentwire was compiled for, x86_64 or aarch64; a system call made
//! with another architecture's convention (i386 on x86_64) kills the process. On x86_64 the
//! same numbers with the x32 bit set are refused too. Any other architecture fails closed.

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::SandboxError;

/// Socket families a confined command may open.
const FAMILIES: [libc::c_int; 4] = [
    libc::AF_UNIX,
    libc::AF_INET,
    libc::AF_INET6,
    libc::AF_NETLINK,
];

fn failed<E: std::fmt::Display>(what: &'static str) -> impl FnOnce(E) -> SandboxError {
    move |e| SandboxError(format!("cannot {what} the seccomp filter: {e}"))
}

/// `arg` (a 32-bit argument) under `mask` equals `value`.
fn masked(arg: u8, mask: u64, value: u64) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(
        arg,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::MaskedEq(mask),
        value,
    )
    .map_err(failed("build"))
}

/// Rules matching a device node in the mode at argument `arg` (character or block).
fn device_node(arg: u8) -> Result<Vec<SeccompRule>, SandboxError> {
    let format = u64::from(libc::S_IFMT);
    [libc::S_IFCHR, libc::S_IFBLK]
        .into_iter()
        .map(|kind| {
            SeccompRule::new(vec![masked(arg, format, u64::from(kind))?]).map_err(failed("build"))
        })
        .collect()
}

/// `fchmodat2` (Linux 6.6), numbered alike on x86_64 and aarch64.
const SYS_FCHMODAT2: libc::c_long = 452;

/// Rules matching a mode at argument `arg` with the set-user-ID or set-group-ID bit.
fn set_id(arg: u8) -> Result<Vec<SeccompRule>, SandboxError> {
    [libc::S_ISUID, libc::S_ISGID]
        .into_iter()
        .map(|bit| {
            let bit = u64::from(bit);
            SeccompRule::new(vec![masked(arg, bit, bit)?]).map_err(failed("build"))
        })
        .collect()
}

/// The rule matching a socket family outside [`FAMILIES`] (argument 0).
fn other_family() -> Result<Vec<SeccompRule>, SandboxError> {
    let conditions = FAMILIES
        .iter()
        .map(|&family| {
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                u64::from(family.unsigned_abs()),
            )
            .map_err(failed("build"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(vec![SeccompRule::new(conditions).map_err(failed("build"))?])
}

/// The rule matching flags (argument 0) that ask for a new user namespace.
fn new_user_namespace() -> Result<Vec<SeccompRule>, SandboxError> {
    let flag = u64::from(libc::CLONE_NEWUSER.unsigned_abs());
    Ok(vec![
        SeccompRule::new(vec![masked(0, flag, flag)?]).map_err(failed("build"))?,
    ])
}

/// The system calls refused with `EPERM`, each with the rules under which it is (none: always).
fn refused() -> Result<Vec<(libc::c_long, Vec<SeccompRule>)>, SandboxError> {
    let mut calls = vec![
        (libc::SYS_open_by_handle_at, Vec::new()),
        (libc::SYS_name_to_handle_at, Vec::new()),
        (libc::SYS_mknodat, [device_node(2)?, set_id(2)?].concat()),
        (libc::SYS_fchmod, set_id(1)?),
        (libc::SYS_fchmodat, set_id(2)?),
        (SYS_FCHMODAT2, set_id(2)?),
        (libc::SYS_openat, set_id(3)?),
        (libc::SYS_socket, other_family()?),
        (libc::SYS_socketpair, other_family()?),
        (libc::SYS_io_uring_setup, Vec::new()),
        (libc::SYS_io_uring_enter, Vec::new()),
        (libc::SYS_io_uring_register, Vec::new()),
        (libc::SYS_perf_event_open, Vec::new()),
        (libc::SYS_clock_settime, Vec::new()),
        (libc::SYS_clock_adjtime, Vec::new()),
        (libc::SYS_settimeofday, Vec::new()),
        (libc::SYS_adjtimex, Vec::new()),
        (libc::SYS_sethostname, Vec::new()),
        (libc::SYS_setdomainname, Vec::new()),
        (libc::SYS_keyctl, Vec::new()),
        (libc::SYS_add_key, Vec::new()),
        (libc::SYS_request_key, Vec::new()),
        (libc::SYS_bpf, Vec::new()),
        (libc::SYS_unshare, new_user_namespace()?),
        (libc::SYS_clone, new_user_namespace()?),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_mknod, [device_node(1)?, set_id(1)?].concat()),
        (libc::SYS_chmod, set_id(1)?),
        (libc::SYS_open, set_id(2)?),
        (libc::SYS_creat, set_id(1)?),
    ]);
    Ok(calls)
}

/// The architecture of this build, as the filter names it; `None` for one it does not know.
fn target() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        SandboxError(format!(
            "the seccomp filter does not know this architecture ({}), so the command cannot be \
             sandboxed",
            std::env::consts::ARCH
        ))
    })
}

/// Compiles a filter answering `action` to each of `calls` (under its rules), allowing the rest.
fn compile(
    calls: Vec<(libc::c_long, Vec<SeccompRule>)>,
    action: SeccompAction,
) -> Result<BpfProgram, SandboxError> {
    let arch = target()?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (call, call_rules) in calls {
        if arch == TargetArch::x86_64 {
            // The x32 ABI numbers the same calls with bit 30 set.
            rules.insert(call | 0x4000_0000, call_rules.clone());
        }
        rules.insert(call, call_rules);
    }
    SeccompFilter::new(rules, SeccompAction::Allow, action, arch)
        .map_err(failed("build"))?
        .try_into()
        .map_err(failed("compile"))
}

/// The system calls answered with `ENOSYS` (always), so that the C library falls back to one
/// the `EPERM` list checks.
const UNSUPPORTED: [libc::c_long; 2] = [libc::SYS_clone3, libc::SYS_openat2];

/// The two programs: the `EPERM` list, and [`UNSUPPORTED`] answered with `ENOSYS`.
fn programs() -> Result<[BpfProgram; 2], SandboxError> {
    let eperm = libc::EPERM.unsigned_abs();
    let enosys = libc::ENOSYS.unsigned_abs();
    let unsupported = UNSUPPORTED.iter().map(|&call| (call, Vec::new())).collect();
    Ok([
        compile(refused()?, SeccompAction::Errno(eperm))?,
        compile(unsupported, SeccompAction::Errno(enosys))?,
    ])
}

pub(super) fn filter_system_calls() -> Result<(), SandboxError> {
    for program in programs()? {
        seccompiler::apply_filter(&program).map_err(failed("install"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_compile_for_this_architecture_and_list_each_call_once() {
        let programs = programs().expect("compiled");
        assert!(programs.iter().all(|program| !program.is_empty()));
        let calls = refused().expect("rules");
        let mut numbers: Vec<_> = calls.iter().map(|(call, _)| *call).collect();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), calls.len());
        assert!(numbers.contains(&libc::SYS_open_by_handle_at));
        // A call answered `ENOSYS` is never also on the `EPERM` list.
        assert!(UNSUPPORTED.iter().all(|call| !numbers.contains(call)));
        assert!(!FAMILIES.contains(&libc::AF_VSOCK));
    }
}
