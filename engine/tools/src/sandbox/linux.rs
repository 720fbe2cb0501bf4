//! Confinement with Landlock.
//!
//! Only write-like filesystem access is handled, so reading and executing stay allowed
//! everywhere; the handled rights are granted beneath the writable roots and, for writing
//! and ioctls only, on a few character devices. With the network denied, TCP `bind` and
//! `connect` are handled and granted nowhere, and so is connecting to abstract Unix sockets
//! created outside the sandbox. Signals to processes outside the sandbox (the app-server
//! itself, the user's other programs) are always denied.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, LandlockStatus, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

use super::{Confinement, SandboxError};

/// The Landlock ABI whose access rights are requested (tested here on a kernel with ABI 7).
/// Pinned so that a newer `landlock` crate never silently denies more: its write rights are
/// those of ABI 5 to 8 (ABI 9 adds connecting to pathname Unix sockets).
const TARGET_ABI: ABI = ABI::V7;

/// Character devices an ordinary shell writes to, writable under every confining policy.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];

fn error(what: &str) -> impl FnOnce(landlock::RulesetError) -> SandboxError + '_ {
    move |e| SandboxError(format!("{what}: {e}"))
}

pub(super) fn confine(roots: &[PathBuf], network: bool) -> Result<Confinement, SandboxError> {
    let write = AccessFs::from_write(TARGET_ABI);
    let file_write = write & AccessFs::from_file(TARGET_ABI);
    let mut ruleset = Ruleset::default()
        .handle_access(write)
        .map_err(error("cannot handle filesystem access"))?;
    if !network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET_ABI))
            .map_err(error("cannot handle network access"))?;
    }
    let mut scopes: BitFlags<Scope> = Scope::Signal.into();
    if !network {
        scopes |= Scope::AbstractUnixSocket;
    }
    let ruleset = ruleset
        .scope(scopes)
        .map_err(error("cannot scope signals and abstract Unix sockets"))?;
    let mut ruleset = ruleset
        .create()
        .map_err(error("cannot create the Landlock ruleset"))?;
    let devices = DEVICES.iter().map(Path::new);
    for path in roots.iter().map(PathBuf::as_path).chain(devices) {
        // A root that does not exist (or cannot be opened) stays unwritable.
        let Ok(metadata) = std::fs::metadata(path) else {
            continue;
        };
        let access: BitFlags<AccessFs> = if metadata.is_dir() { write } else { file_write };
        let Ok(fd) = PathFd::new(path) else {
            continue;
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| {
                SandboxError(format!("cannot allow writing to `{}`: {e}", path.display()))
            })?;
    }
    let status = ruleset
        .restrict_self()
        .map_err(error("cannot enforce the Landlock ruleset"))?;
    if !status.no_new_privs {
        return Err(SandboxError(
            "cannot set no_new_privs, which Landlock needs".to_owned(),
        ));
    }
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi,
        LandlockStatus::NotEnabled => {
            return Err(SandboxError(
                "Landlock is built into this kernel but not enabled (it is missing from the \
                 `lsm=` boot parameter), so the command cannot be sandboxed"
                    .to_owned(),
            ));
        }
        LandlockStatus::NotImplemented => {
            return Err(SandboxError(
                "this kernel has no Landlock support (Linux 5.13 or later built with \
                 CONFIG_SECURITY_LANDLOCK is needed), so the command cannot be sandboxed"
                    .to_owned(),
            ));
        }
    };
    match status.ruleset {
        RulesetStatus::NotEnforced => Err(SandboxError(format!(
            "Landlock (ABI {abi:?}) enforced none of the policy"
        ))),
        RulesetStatus::FullyEnforced => Ok(Confinement {
            abi: Some(format!("{abi:?}")),
            not_enforced: Vec::new(),
        }),
        RulesetStatus::PartiallyEnforced => Ok(Confinement {
            abi: Some(format!("{abi:?}")),
            not_enforced: not_enforced(abi, network),
        }),
    }
}

/// What a kernel with Landlock `abi` cannot enforce of the rules above.
fn not_enforced(abi: ABI, network: bool) -> Vec<String> {
    let mut missing = Vec::new();
    if abi < ABI::V2 {
        // Not a gap but a difference: ABI 1 denies these everywhere, even inside the roots.
        missing.push(
            "moving or hard-linking files between directories (ABI 1 denies it even inside \
             the writable roots)"
                .to_owned(),
        );
    }
    if abi < ABI::V3 {
        missing.push("truncating existing files outside the writable roots".to_owned());
    }
    if abi < ABI::V4 && !network {
        missing.push("the network restriction (TCP bind and connect are allowed)".to_owned());
    }
    if abi < ABI::V5 {
        missing.push("ioctl on device files outside the writable roots".to_owned());
    }
    if abi < ABI::V6 {
        missing.push("the ban on signalling processes outside the sandbox".to_owned());
        if !network {
            missing.push("the ban on abstract Unix sockets created outside".to_owned());
        }
    }
    if missing.is_empty() {
        missing.push(format!("some restrictions (Landlock ABI {abi:?})"));
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_kernels_name_what_they_do_not_enforce() {
        let v1 = not_enforced(ABI::V1, false);
        assert_eq!(v1.len(), 6, "{v1:?}");
        let v3 = not_enforced(ABI::V3, false);
        assert!(v3.iter().any(|m| m.contains("network")), "{v3:?}");
        assert!(!v3.iter().any(|m| m.contains("truncat")), "{v3:?}");
        assert!(
            !not_enforced(ABI::V3, true)
                .iter()
                .any(|m| m.contains("network"))
        );
        assert_eq!(
            not_enforced(ABI::V4, false),
            [
                "ioctl on device files outside the writable roots",
                "the ban on signalling processes outside the sandbox",
                "the ban on abstract Unix sockets created outside"
            ]
        );
        assert_eq!(
            not_enforced(ABI::V5, true),
            ["the ban on signalling processes outside the sandbox"]
        );
    }

    #[test]
    fn requested_rights_cover_writes_but_never_reads() {
        let write = AccessFs::from_write(TARGET_ABI);
        assert!(write.contains(AccessFs::WriteFile | AccessFs::Truncate | AccessFs::MakeReg));
        assert!(!write.intersects(AccessFs::from_read(TARGET_ABI)));
        assert_eq!(
            AccessNet::from_all(TARGET_ABI),
            AccessNet::BindTcp | AccessNet::ConnectTcp
        );
    }
}
