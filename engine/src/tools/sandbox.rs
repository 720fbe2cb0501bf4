//! Sandbox policies: which paths a policy lets a tool write, and confining a process to a
//! policy with the operating system's own mechanism (Landlock on Linux).
//!
//! STUB for `confine`: the contract is fixed here; the implementation is being written.

use std::path::{Path, PathBuf};

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
    }
}

/// Whether `policy` lets tools reach the network.
pub fn network_allowed(policy: &SandboxPolicy) -> bool {
    match policy {
        SandboxPolicy::DangerFullAccess | SandboxPolicy::ExternalSandbox { .. } => true,
        SandboxPolicy::ReadOnly { network_access }
        | SandboxPolicy::WorkspaceWrite { network_access, .. } => *network_access,
    }
}

/// Why a process could not be confined.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot apply the sandbox policy: {0}")]
pub struct SandboxError(pub String);

/// Confines the calling process, and every process it starts afterwards, to `policy` for
/// work in `cwd`. Called by `agentwire sandbox-exec` just before it executes the command.
pub fn confine(policy: &SandboxPolicy, cwd: &Path) -> Result<(), SandboxError> {
    let _ = (policy, cwd);
    Err(SandboxError("not implemented yet".to_owned()))
}
