//! The namespaces a confined command runs in, set up by `agentwire sandbox-exec` before it
//! confines itself with Landlock:
//!
//! - a **mount namespace** in which each private path of the server (its home, with
//!   `auth.json`, its configuration, its threads and its control socket; a websocket token
//!   file; a Unix socket outside the home) is covered: a directory by an empty read-only
//!   `tmpfs`, anything else by `/dev/null`. The command cannot read them, nor connect to the
//!   server's control socket (which Landlock does not cover).
//! - without network access, a **network namespace** of its own, with only a loopback interface
//!   that is down: no TCP (loopback included, so not the server's websocket either), no UDP,
//!   no raw sockets.
//!
//! As root both are created directly; otherwise inside a new user namespace that maps the
//! caller's user and group to themselves. A kernel that refuses fails closed: the command is
//! not run.

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
    network: bool,
) -> Result<(), SandboxError> {
    // Resolve now: the mounts below would make some of these paths unreachable.
    let keep: Vec<PathBuf> = keep.iter().filter_map(|p| p.canonicalize().ok()).collect();
    let hidden: Vec<PathBuf> = hidden
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let (uid, gid) = (Uid::current(), Gid::current());
    let mut flags = CloneFlags::CLONE_NEWNS;
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    let root = Uid::effective().is_root();
    if !root {
        flags |= CloneFlags::CLONE_NEWUSER;
    }
    unshare(flags).map_err(failed(
        "cannot create the sandbox's namespaces (unprivileged user namespaces may be disabled \
         on this system)",
    ))?;
    if !root {
        map_self(uid, gid)?;
    }
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
    Ok(())
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
