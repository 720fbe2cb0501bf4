//! The process limit of a root server's sandbox: the kernel never applies `RLIMIT_NPROC` to
//! the host's uid 0, so `sandbox-exec` run by root puts itself (before it starts anything, so
//! every process of the sandbox follows) in a cgroup of its own under the `pids` controller
//! (cgroup v1's `pids` hierarchy, or cgroup v2 where `pids` is enabled for the server's
//! cgroup's children) with `pids.max` set, and leaves and removes it once the sandbox is
//! over. A cgroup left behind by a `sandbox-exec` that was killed is removed by the next one.

use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, open, unlinkat};

use super::SandboxError;

/// The prefix of the cgroups made here.
const PREFIX: &str = "agentwire-sandbox-";

/// A cgroup `sandbox-exec` runs in, with what it needs to leave and remove it after its mounts
/// have gone read-only (descriptors opened before).
#[derive(Debug)]
pub(crate) struct PidsCgroup {
    /// The parent cgroup's directory.
    parent: OwnedFd,
    /// The parent's `cgroup.procs`, to move back to.
    parent_procs: File,
    /// The cgroup's name in the parent.
    name: String,
}

impl PidsCgroup {
    /// Moves this process back to the parent cgroup and removes this one (all its other
    /// processes are gone: the sandbox's PID namespace ended).
    pub(crate) fn leave(mut self) -> Result<(), SandboxError> {
        let pid = std::process::id().to_string();
        self.parent_procs
            .write_all(pid.as_bytes())
            .map_err(|e| SandboxError(format!("cannot leave the sandbox's cgroup: {e}")))?;
        unlinkat(&self.parent, self.name.as_str(), AtFlags::REMOVEDIR)
            .map_err(|e| SandboxError(format!("cannot remove the sandbox's cgroup: {e}")))
    }
}

/// The directory of this process's cgroup under the `pids` controller, if it has one this
/// process can see.
fn pids_directory() -> Option<PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount_of = |wanted: &dyn Fn(&str, &str) -> bool| {
        mountinfo.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let dash = fields.iter().position(|f| *f == "-")?;
            let (kind, options) = (fields.get(dash + 1)?, fields.get(dash + 3)?);
            let point = fields.get(4)?;
            (fields.get(3) == Some(&"/") && wanted(kind, options)).then(|| PathBuf::from(point))
        })
    };
    let v1 = cgroups.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers.split(',').any(|c| c == "pids").then_some(path)
    });
    if let Some(path) = v1 {
        let mount =
            mount_of(&|kind, options| kind == "cgroup" && options.split(',').any(|o| o == "pids"))?;
        return Some(mount.join(path.trim_start_matches('/')));
    }
    let path = cgroups.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mount = mount_of(&|kind, _| kind == "cgroup2")?;
    let dir = mount.join(path.trim_start_matches('/'));
    let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
    enabled
        .split_whitespace()
        .any(|c| c == "pids")
        .then_some(dir)
}

/// Removes the cgroups of earlier sandboxes in `parent` that were left behind: those whose
/// `sandbox-exec` (named by its pid) is gone (a removal fails while processes are in one:
/// those stay).
fn remove_left_behind(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(PREFIX) else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Puts this process in a new cgroup with `pids.max` = `max`; `Ok(None)` when no `pids`
/// controller is there to use.
pub(crate) fn enter(max: u64) -> Result<Option<PidsCgroup>, SandboxError> {
    let Some(parent) = pids_directory() else {
        return Ok(None);
    };
    let refused = |what: &str| {
        let what = format!("{what} `{}`", parent.display());
        move |e: std::io::Error| SandboxError(format!("cannot {what}: {e}"))
    };
    remove_left_behind(&parent);
    let pid = std::process::id();
    let name = format!("{PREFIX}{pid}");
    let dir = parent.join(&name);
    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        // Not ours to change (a read-only or delegated-elsewhere hierarchy).
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return Ok(None),
        Err(e) if e.raw_os_error() == Some(30) => return Ok(None),
        Err(e) => return Err(refused("create a cgroup in")(e)),
    }
    let parent_fd = open(&parent, OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| refused("open")(e.into()))?;
    let parent_procs = std::fs::OpenOptions::new()
        .write(true)
        .open(parent.join("cgroup.procs"))
        .map_err(refused("open cgroup.procs of"))?;
    let cgroup = PidsCgroup {
        parent: parent_fd,
        parent_procs,
        name,
    };
    let joined = std::fs::write(dir.join("pids.max"), max.to_string())
        .and_then(|()| std::fs::write(dir.join("cgroup.procs"), pid.to_string()));
    if let Err(e) = joined {
        let _ = std::fs::remove_dir(&dir);
        return Err(refused("limit the processes in a cgroup of")(e));
    }
    Ok(Some(cgroup))
}
