//! The namespaces a confined command runs in, set up by `agentwire sandbox-exec` before it
//! confines itself with Landlock:
//!
//! - a **user namespace**, always, the server's own user and group mapped to themselves (and
//!   nothing else). For a root server that is root mapped to root: files keep their owners and
//!   the workspace stays writable, but every capability the command could get is one of this
//!   namespace, which owns none of the host's resources, and the sandbox's first process
//!   empties every capability set (bounding set included) before the command runs
//!   ([`drop_capabilities`]). Without it, a root server's commands kept every capability of the
//!   host (issue 32).
//! - a **mount namespace** in which each private path of the server (its home, with
//!   `auth.json`, its configuration, its threads and its control socket; a websocket token
//!   file; a Unix socket outside the home) is covered: a directory by an empty read-only
//!   `tmpfs`, anything else by `/dev/null`. The command cannot read them, nor connect to the
//!   server's control socket (which Landlock does not cover).
//!   Every mount is then made read-only but for the writable roots, bound back writable and
//!   `nosuid,nodev` (a set-user-ID file or a device node made there means nothing), so what
//!   Landlock cannot refuse (`chmod`, `chown`, `utimes`, `chattr` outside the roots) fails with
//!   `EROFS`. Device files stay writable on a read-only mount, so `/dev/null` still works.
//! - a **PID namespace**, whose first process `sandbox-exec` starts and ties to its own life:
//!   when the server dies, so does everything the command started. That first process mounts
//!   a `/proc` of the namespace's own ([`own_proc`]), so the command sees no process outside
//!   its sandbox: not the server, whose `/proc/<pid>/environ` holds what the command's own
//!   environment was stripped of.
//! - **UTS, IPC and time namespaces**: the host's name, System V IPC and POSIX message queues,
//!   and clock offsets are out of reach (the seccomp filter refuses setting the host's clocks
//!   and name anyway: `seccomp`).
//! - without network access, a **network namespace** of its own, with only a loopback interface
//!   that is down: no TCP (loopback included, so not the server's websocket either), no UDP,
//!   nothing a raw socket could reach.
//!
//! A kernel that refuses any of them fails closed: the command is not run.

use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::unistd::{Gid, Uid};

use super::SandboxError;

fn failed(what: impl std::fmt::Display) -> impl FnOnce(nix::Error) -> SandboxError {
    move |e| SandboxError(format!("{what}: {e}"))
}

/// Enters the namespaces: `hidden` paths covered (but for the way to each of `keep`: the
/// command's working directory and writable roots), the network cut unless `network`.
pub(super) fn isolate(
    hidden: &[PathBuf],
    keep: &[PathBuf],
    writable: &[PathBuf],
    network: bool,
) -> Result<(), SandboxError> {
    // Resolve now: the mounts below would make some of these paths unreachable.
    let keep: Vec<PathBuf> = keep.iter().filter_map(|p| p.canonicalize().ok()).collect();
    let hidden: Vec<PathBuf> = hidden
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let (uid, gid) = (Uid::current(), Gid::current());
    // A user namespace always (root included), which owns the others; a PID namespace of its
    // own: its first process (see `sandbox-exec`) is its init, and when that dies every process
    // in it dies too, so nothing the command started outlives it. The time namespace is the
    // children's: the first process and the command enter it.
    let mut flags = CloneFlags::CLONE_NEWUSER
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWUTS
        | CloneFlags::CLONE_NEWIPC
        | CloneFlags::from_bits_retain(nix::libc::CLONE_NEWTIME);
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(failed(
        "cannot create the sandbox's namespaces (user namespaces may be disabled on this \
         system, or the kernel is older than 5.6 and has no time namespaces)",
    ))?;
    map_self(uid, gid)?;
    // Nothing mounted here may reach the server's namespace.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(failed("cannot make the sandbox's mounts private"))?;
    for path in &hidden {
        cover_except(path, &keep)?;
    }
    let writable: Vec<PathBuf> = writable
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    // Bind each writable root onto itself first: a bind made after the remount below would
    // copy its read-only flag.
    for root in &writable {
        mount(
            Some(root.as_path()),
            root.as_path(),
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .map_err(failed(format!("cannot keep `{}` writable", root.display())))?;
    }
    let table = mounts()?;
    for root in &writable {
        // The bind just made is the last mount at that point.
        let flags = table
            .iter()
            .rev()
            .find(|(point, _)| point == root)
            .map_or(MsFlags::empty(), |(_, flags)| *flags);
        no_suid_no_dev(root, flags)?;
    }
    for (point, flags) in table {
        if writable.iter().any(|root| root == &point) || flags.contains(MsFlags::MS_RDONLY) {
            continue;
        }
        read_only(&point, flags)?;
    }
    if !uid.is_root() {
        keep_admin_across_exec()?;
    }
    Ok(())
}

/// Remounts the writable root bound at `point` (with mount flags `flags`) `nosuid,nodev`: a
/// set-user-ID or set-group-ID file made there runs with the runner's own ids, and no device
/// node there can be opened.
fn no_suid_no_dev(point: &Path, flags: MsFlags) -> Result<(), SandboxError> {
    mount(
        None::<&str>,
        point,
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | flags,
        None::<&str>,
    )
    .map_err(failed(format!(
        "cannot make `{}` nosuid,nodev",
        point.display()
    )))
}

/// Keeps `CAP_SYS_ADMIN` and `CAP_SETPCAP` of the sandbox's user namespace across the `exec`
/// of the namespace's first process (`sandbox-init`), which needs the first to mount its own
/// `/proc` ([`own_proc`]) and the second to empty its bounding set ([`drop_capabilities`]).
/// Without it, executing a program as the caller's own (non-zero) uid clears every capability,
/// and the command would see the host's processes. (Root in the namespace gets them back at
/// `exec` as root does.)
fn keep_admin_across_exec() -> Result<(), SandboxError> {
    use rustix::thread::{CapabilitySet, capabilities, set_capabilities};
    let refused = |e: rustix::io::Errno| {
        SandboxError(format!(
            "cannot keep the capability to mount the sandbox's own /proc: {e}"
        ))
    };
    let kept = CapabilitySet::SYS_ADMIN | CapabilitySet::SETPCAP;
    let mut sets = capabilities(None).map_err(refused)?;
    sets.inheritable |= kept;
    set_capabilities(None, sets).map_err(refused)?;
    for capability in [CapabilitySet::SYS_ADMIN, CapabilitySet::SETPCAP] {
        rustix::thread::configure_capability_in_ambient_set(capability, true).map_err(refused)?;
    }
    Ok(())
}

/// In the sandbox's first process, once its `/proc` is mounted: gives up every capability, in
/// every set, for good: the bounding set is emptied (so no `exec`, of a set-user-ID-root
/// program or as uid 0, can give any back), the ambient set cleared, the secure bits locked so
/// that uid 0 means no capability, then the effective, permitted and inheritable sets emptied.
/// Checked: fails closed unless every set is empty afterwards. Nothing to do (and checked all
/// the same) where nothing was held.
pub(super) fn drop_capabilities() -> Result<(), SandboxError> {
    use rustix::thread::{
        CapabilitiesSecureBits, CapabilitySet, CapabilitySets, capabilities,
        capability_is_in_ambient_set, capability_is_in_bounding_set, clear_ambient_capability_set,
        remove_capability_from_bounding_set, set_capabilities, set_capabilities_secure_bits,
    };
    let refused = |what: &'static str| {
        move |e: rustix::io::Errno| {
            SandboxError(format!(
                "cannot give up the sandbox's capabilities ({what}): {e}"
            ))
        }
    };
    let held = capabilities(None).map_err(refused("reading them"))?;
    if held.effective.contains(CapabilitySet::SETPCAP) {
        for capability in every_capability() {
            if capability_is_in_bounding_set(capability).map_err(refused("the bounding set"))? {
                remove_capability_from_bounding_set(capability)
                    .map_err(refused("the bounding set"))?;
            }
        }
        set_capabilities_secure_bits(
            CapabilitiesSecureBits::NO_ROOT
                | CapabilitiesSecureBits::NO_ROOT_LOCKED
                | CapabilitiesSecureBits::NO_SETUID_FIXUP
                | CapabilitiesSecureBits::NO_SETUID_FIXUP_LOCKED
                | CapabilitiesSecureBits::KEEP_CAPS_LOCKED
                | CapabilitiesSecureBits::NO_CAP_AMBIENT_RAISE
                | CapabilitiesSecureBits::NO_CAP_AMBIENT_RAISE_LOCKED,
        )
        .map_err(refused("the secure bits"))?;
    }
    clear_ambient_capability_set().map_err(refused("the ambient set"))?;
    let none = CapabilitySet::empty();
    set_capabilities(
        None,
        CapabilitySets {
            effective: none,
            permitted: none,
            inheritable: none,
        },
    )
    .map_err(refused("the effective, permitted and inheritable sets"))?;
    let left = capabilities(None).map_err(refused("reading them"))?;
    let mut kept: Vec<String> = Vec::new();
    if !(left.effective | left.permitted | left.inheritable).is_empty() {
        kept.push("effective, permitted or inheritable".to_owned());
    }
    for capability in every_capability() {
        if capability_is_in_ambient_set(capability).map_err(refused("the ambient set"))? {
            kept.push(format!("ambient {capability:?}"));
        }
        if capability_is_in_bounding_set(capability).map_err(refused("the bounding set"))? {
            kept.push(format!("bounding {capability:?}"));
        }
    }
    if !kept.is_empty() {
        return Err(SandboxError(format!(
            "the sandbox's first process still holds capabilities after giving them up: {}",
            kept.join(", ")
        )));
    }
    Ok(())
}

/// Every capability this kernel knows (its bounding set can be asked about each one; the first
/// it does not know ends the list).
fn every_capability() -> impl Iterator<Item = rustix::thread::CapabilitySet> {
    (0..64u32)
        .map(|bit| rustix::thread::CapabilitySet::from_bits_retain(1u64 << bit))
        .take_while(|&capability| rustix::thread::capability_is_in_bounding_set(capability).is_ok())
}

/// Mounts, read-only, a `/proc` that shows the calling process's PID namespace: called by the
/// first process of a sandbox's namespace, before it confines itself (Landlock forbids
/// mounting afterwards).
pub(super) fn own_proc() -> Result<(), SandboxError> {
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC | MsFlags::MS_RDONLY,
        None::<&str>,
    )
    .map_err(failed("cannot mount the sandbox's own /proc"))
}

/// Remounts the mount at `point` read-only, keeping the flags it has (which a user namespace
/// may not drop).
fn read_only(point: &Path, flags: MsFlags) -> Result<(), SandboxError> {
    let result = mount(
        None::<&str>,
        point,
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | flags,
        None::<&str>,
    );
    match result {
        Ok(()) => Ok(()),
        // Gone or covered since `mountinfo` was read (under a hidden path, say).
        Err(nix::Error::ENOENT) => Ok(()),
        Err(e) => Err(SandboxError(format!(
            "cannot make `{}` read-only: {e}",
            point.display()
        ))),
    }
}

/// Every mount point of this namespace, deepest last, with the per-mount flags a read-only
/// remount must keep.
fn mounts() -> Result<Vec<(PathBuf, MsFlags)>, SandboxError> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| SandboxError(format!("cannot read /proc/self/mountinfo: {e}")))?;
    Ok(text.lines().filter_map(mount_line).collect())
}

/// The mount point and flags of one `mountinfo` line (fields 5 and 6).
fn mount_line(line: &str) -> Option<(PathBuf, MsFlags)> {
    let mut fields = line.split(' ');
    let point = unescape(fields.nth(4)?);
    let mut flags = MsFlags::empty();
    for option in fields.next()?.split(',') {
        flags |= match option {
            "ro" => MsFlags::MS_RDONLY,
            "nosuid" => MsFlags::MS_NOSUID,
            "nodev" => MsFlags::MS_NODEV,
            "noexec" => MsFlags::MS_NOEXEC,
            "noatime" => MsFlags::MS_NOATIME,
            "nodiratime" => MsFlags::MS_NODIRATIME,
            "relatime" => MsFlags::MS_RELATIME,
            _ => MsFlags::empty(),
        };
    }
    Some((PathBuf::from(point), flags))
}

/// A `mountinfo` path: spaces, tabs, newlines and backslashes come as `\ooo` octal escapes.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let octal = bytes
            .get(at + 1..at + 4)
            .filter(|d| bytes[at] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(digits) => {
                let value = digits.iter().fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                at += 4;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Covers `path`, unless one of `keep` lies beneath it: then covers each of its entries
/// instead, the same way, so only the way to what must stay reachable remains (entries that
/// are symbolic links are left alone: mounting over one would cover its target).
fn cover_except(path: &Path, keep: &[PathBuf]) -> Result<(), SandboxError> {
    if !keep.iter().any(|k| k.starts_with(path)) {
        return cover(path);
    }
    if keep.iter().any(|k| k == path) {
        return Ok(());
    }
    let entries = std::fs::read_dir(path)
        .map_err(|e| SandboxError(format!("cannot list `{}`: {e}", path.display())))?;
    for entry in entries.flatten() {
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if !is_link {
            cover_except(&entry.path(), keep)?;
        }
    }
    Ok(())
}

/// Maps the caller's user and group to themselves in the new user namespace.
fn map_self(uid: Uid, gid: Gid) -> Result<(), SandboxError> {
    let write = |file: &str, text: String| {
        std::fs::write(format!("/proc/self/{file}"), text)
            .map_err(|e| SandboxError(format!("cannot write /proc/self/{file}: {e}")))
    };
    write("setgroups", "deny".to_owned())?;
    write("uid_map", format!("{uid} {uid} 1"))?;
    write("gid_map", format!("{gid} {gid} 1"))
}

/// Covers `path`: a directory with an empty read-only `tmpfs`, anything else with `/dev/null`.
/// A path that does not exist has nothing to hide.
fn cover(path: &Path) -> Result<(), SandboxError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let what = || format!("cannot hide `{}` from the command", path.display());
    if meta.is_dir() {
        mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("size=4k,mode=0555"),
        )
        .map_err(failed(what()))
    } else {
        mount(
            Some("/dev/null"),
            path,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
        .map_err(failed(what()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_give_their_point_and_flags() {
        let line = "36 35 98:0 /mnt1 /mnt\\040with\\040space rw,nosuid,relatime shared:1 - ext3 /dev/root rw";
        let (point, flags) = mount_line(line).expect("parsed");
        assert_eq!(point, PathBuf::from("/mnt with space"));
        assert_eq!(flags, MsFlags::MS_NOSUID | MsFlags::MS_RELATIME);
        let (_, flags) = mount_line("1 0 0:1 / / ro,noexec - tmpfs t ro").expect("parsed");
        assert_eq!(flags, MsFlags::MS_RDONLY | MsFlags::MS_NOEXEC);
        assert_eq!(unescape("a\\134b"), "a\\b");
        assert!(mount_line("short").is_none());
    }
}
