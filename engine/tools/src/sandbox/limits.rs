//! Resource limits of a confined command: `RLIMIT_NPROC` (processes and threads of the
//! sandbox's user, counted in the sandbox's own user namespace, so other sandboxes and the
//! user's other programs do not count) and `RLIMIT_AS` (address space of each process).
//!
//! The kernel does not apply `RLIMIT_NPROC` to the host's uid 0: a root server's commands get
//! the address-space limit but no process limit (see `docs/security.md`, A root server).

use rustix::process::{Resource, Rlimit, setrlimit};

use super::{SandboxError, SandboxLimits};

pub(super) fn apply_limits(limits: &SandboxLimits) -> Result<(), SandboxError> {
    let set = |resource: Resource, limit: Option<u64>, what: &str| match limit {
        None => Ok(()),
        Some(limit) => setrlimit(
            resource,
            Rlimit {
                current: Some(limit),
                maximum: Some(limit),
            },
        )
        .map_err(|e| SandboxError(format!("cannot limit {what} to {limit}: {e}"))),
    };
    set(Resource::Nproc, limits.max_processes, "the processes")?;
    set(Resource::As, limits.max_memory_bytes, "the address space")
}
