//! Permission profiles: the sandbox presets a thread may select by id — `permissionProfile/list`,
//! and `permissions` in `thread/settings/update`.
//!
//! The presets are Codex's built-in ones, each a sandbox mode: `:read-only`, `:workspace`
//! (`workspace-write`, with the configuration's `[sandbox_workspace_write]` details for the
//! directory in question) and `:danger-full-access`. A profile is `allowed` when the
//! administrator's requirements (`requirements.toml`) allow its sandbox mode; a requirements
//! file that does not read allows none (as thread requests are refused then).

use std::path::Path;

use agentwire_config::Store;
use agentwire_config::defaults::sandbox_policy_with;
use agentwire_config::requirements::{self, Asked};
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::PermissionProfileList;
use agentwire_protocol::{
    PermissionProfileListParams, PermissionProfileListResponse, PermissionProfileSummary,
    SandboxMode, SandboxPolicy,
};
use agentwire_runtime::HandlerError;

use crate::Engine;
use crate::pool::blocking;

/// One built-in profile.
struct Profile {
    id: &'static str,
    mode: SandboxMode,
    description: &'static str,
}

/// The built-in profiles, from the most confined to the least.
const PROFILES: &[Profile] = &[
    Profile {
        id: ":read-only",
        mode: SandboxMode::ReadOnly,
        description: "Commands may read files anywhere but write nowhere and reach no network.",
    },
    Profile {
        id: ":workspace",
        mode: SandboxMode::WorkspaceWrite,
        description: "Commands may read anywhere and write in the working directory, the \
                      temporary directories and the configured writable roots; network as \
                      configured.",
    },
    Profile {
        id: ":danger-full-access",
        mode: SandboxMode::DangerFullAccess,
        description: "Commands run without a sandbox: they may change anything the server's \
                      user may and reach any network.",
    },
];

/// The sandbox policy of profile `id` for a thread in `cwd` (the configuration's details of
/// `workspace-write` applied); `None` when no profile has that id.
pub(crate) fn policy_of(store: &Store, id: &str, cwd: &Path) -> Option<SandboxPolicy> {
    let profile = PROFILES.iter().find(|p| p.id == id)?;
    let config = store.effective(Some(cwd)).file.clone();
    let defaults = store.thread_defaults(&config);
    Some(sandbox_policy_with(
        profile.mode,
        &defaults.sandbox_workspace_write,
    ))
}

/// The id of the profile a sandbox policy amounts to; `None` for an external sandbox.
pub(crate) fn id_of(policy: &SandboxPolicy) -> Option<&'static str> {
    let mode = crate::workspace_rpc::mode_of(policy)?;
    PROFILES.iter().find(|p| p.mode == mode).map(|p| p.id)
}

/// The ids of every profile, for error messages.
pub(crate) fn known_ids() -> String {
    PROFILES.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
}

/// `permissionProfile/list`.
pub(crate) async fn list(
    engine: &Engine,
    params: PermissionProfileListParams,
) -> Result<PermissionProfileListResponse, HandlerError> {
    let method = PermissionProfileList::NAME;
    if let Some(cwd) = params.cwd.as_deref()
        && !Path::new(cwd).is_absolute()
    {
        return Err(HandlerError::invalid_params(
            method,
            format!("cwd {cwd:?} is not an absolute path"),
        ));
    }
    let home = engine.config.home.clone();
    blocking::<PermissionProfileList, _, _>(move || {
        let loaded = requirements::load(&home);
        let all = PROFILES
            .iter()
            .map(|profile| {
                let allowed = loaded.as_ref().is_ok_and(|r| {
                    r.check(&Asked {
                        approval_policy: None,
                        sandbox_mode: Some(profile.mode),
                        web_search_mode: None,
                        model_provider: None,
                    })
                    .is_ok()
                });
                PermissionProfileSummary::builder()
                    .id(profile.id)
                    .description(profile.description)
                    .allowed(allowed)
                    .build()
            })
            .collect();
        let (data, next_cursor) =
            crate::features::page(method, all, params.cursor.as_deref(), params.limit)?;
        Ok(PermissionProfileListResponse::builder()
            .data(data)
            .maybe_next_cursor(next_cursor)
            .build())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_profile_is_its_sandbox_mode() {
        let home = tempfile::tempdir().expect("home");
        let store = Store::new(home.path(), crate::ThreadDefaults::default(), &[], None);
        for profile in PROFILES {
            let policy = policy_of(&store, profile.id, home.path()).expect("known");
            assert_eq!(id_of(&policy), Some(profile.id));
        }
        assert_eq!(policy_of(&store, ":nope", home.path()), None);
        assert!(known_ids().contains(":workspace"));
    }
}
