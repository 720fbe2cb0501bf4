//! The requests about what surrounds the agent in a working directory: the administrator's
//! requirements (`configRequirements/read`, and their enforcement on thread and turn
//! requests), skills (`skills/list`, `skills/extraRoots/set`, `skills/config/write`), hooks
//! (`hooks/list`) and installed plugins (`plugin/installed`). Each reads the disk on tokio's
//! blocking pool.

use std::path::PathBuf;

use agentwire_config::layers::absolute;
use agentwire_config::requirements::{self, Asked};
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    ConfigRequirementsRead, HooksList, SkillsChanged, SkillsConfigWrite, SkillsList,
};
use agentwire_protocol::{
    ConfigEdit, ConfigRequirementsReadResponse, HooksListParams, HooksListResponse, MergeStrategy,
    PluginInstalledParams, PluginInstalledResponse, SandboxMode, SandboxPolicy,
    SkillsChangedNotification, SkillsConfigWriteParams, SkillsConfigWriteResponse,
    SkillsExtraRootsSetParams, SkillsExtraRootsSetResponse, SkillsListParams, SkillsListResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;
use crate::pool::blocking;
use crate::skills;

/// `configRequirements/read`.
pub(crate) async fn config_requirements_read(
    engine: &Engine,
) -> Result<ConfigRequirementsReadResponse, HandlerError> {
    let home = engine.config.home.clone();
    blocking::<ConfigRequirementsRead, _, _>(move || {
        let loaded = requirements::load(&home).map_err(|reason| {
            HandlerError::internal(format!("{}: {reason}", ConfigRequirementsRead::NAME))
        })?;
        Ok(ConfigRequirementsReadResponse::builder()
            .maybe_requirements(loaded.allowed)
            .build())
    })
    .await
}

/// Refuses (-32600) a request for `M` that asks for what the administrator's requirements do
/// not allow; a requirements file that does not read refuses it too.
pub(crate) async fn enforce<M: Method>(
    engine: &Engine,
    approval_policy: Option<agentwire_protocol::AskForApproval>,
    sandbox_mode: Option<SandboxMode>,
    model_provider: Option<String>,
) -> Result<(), HandlerError> {
    let home = engine.config.home.clone();
    blocking::<M, _, _>(move || {
        let refuse =
            |reason: String| HandlerError::invalid_request(format!("{}: {reason}", M::NAME));
        let loaded = requirements::load(&home).map_err(refuse)?;
        loaded
            .check(&Asked {
                approval_policy: approval_policy.as_ref(),
                sandbox_mode,
                web_search_mode: None,
                model_provider: model_provider.as_deref(),
            })
            .map_err(refuse)
    })
    .await
}

/// The sandbox mode a full sandbox policy amounts to.
pub(crate) fn mode_of(policy: &SandboxPolicy) -> Option<SandboxMode> {
    match policy {
        SandboxPolicy::DangerFullAccess => Some(SandboxMode::DangerFullAccess),
        SandboxPolicy::ReadOnly { .. } => Some(SandboxMode::ReadOnly),
        SandboxPolicy::WorkspaceWrite { .. } => Some(SandboxMode::WorkspaceWrite),
        // An external sandbox is the client's own: the requirement governs the server's.
        _ => None,
    }
}

/// The server's working directory, for requests that name none.
fn server_cwd() -> String {
    std::env::current_dir()
        .unwrap_or_else(|_| PathBuf::from("/"))
        .display()
        .to_string()
}

/// `cwds` as asked, or the server's working directory when none is.
fn cwds_or_default(cwds: Vec<String>) -> Vec<String> {
    if cwds.is_empty() {
        vec![server_cwd()]
    } else {
        cwds
    }
}

/// `skills/list`.
pub(crate) async fn skills_list(
    engine: &Engine,
    params: SkillsListParams,
) -> Result<SkillsListResponse, HandlerError> {
    let home = engine.config.home.clone();
    let store = engine.config_store.clone();
    let skills = engine.skills.clone();
    blocking::<SkillsList, _, _>(move || {
        let settings =
            skills::settings_of(&agentwire_config::layers::read_file(store.user_path()).table);
        let data = cwds_or_default(params.cwds)
            .into_iter()
            .map(|cwd| {
                let cwd = absolute(&cwd).display().to_string();
                // Always read anew (a plugin upgrade changes files under the same roots); this
                // also refreshes what turns offer the model.
                skills.cached(&home, &cwd, &settings, true)
            })
            .collect();
        Ok(SkillsListResponse::builder().data(data).build())
    })
    .await
}

/// `skills/extraRoots/set`: the roots are used from now on; sends `skills/changed`.
pub(crate) fn skills_extra_roots_set(
    engine: &Engine,
    context: &RequestContext,
    params: SkillsExtraRootsSetParams,
) -> Result<SkillsExtraRootsSetResponse, HandlerError> {
    let roots = params
        .extra_roots
        .iter()
        .map(|root| {
            let path = PathBuf::from(&root.0);
            if path.is_absolute() && !root.0.contains('\0') {
                Ok(path)
            } else {
                Err(HandlerError::invalid_params(
                    "skills/extraRoots/set",
                    format!("extraRoots: {:?} is not an absolute path", root.0),
                ))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    engine.skills.set_extra_roots(roots);
    announce_skills_changed(context);
    Ok(SkillsExtraRootsSetResponse::builder().build())
}

/// `skills/config/write`: records the skill's setting in the user's `config.toml`
/// (`[[skills.config]]`, one entry per skill file); sends `skills/changed`.
pub(crate) async fn skills_config_write(
    engine: &Engine,
    context: RequestContext,
    params: SkillsConfigWriteParams,
) -> Result<SkillsConfigWriteResponse, HandlerError> {
    let home = engine.config.home.clone();
    let store = engine.config_store.clone();
    let skills = engine.skills.clone();
    let response = blocking::<SkillsConfigWrite, _, _>(move || {
        let method = SkillsConfigWrite::NAME;
        let user = agentwire_config::layers::read_file(store.user_path());
        let settings = skills::settings_of(&user.table);
        let path = match (&params.path, &params.name) {
            (Some(path), _) => skills::skill_path(path),
            (None, Some(name)) => {
                let found = skills.list(&home, &server_cwd(), &settings);
                found
                    .skills
                    .iter()
                    .find(|s| s.name == *name)
                    .map(|s| s.path.0.clone())
                    .ok_or_else(|| {
                        HandlerError::invalid_params(
                            method,
                            format!("name: no skill named {name:?}"),
                        )
                    })?
            }
            (None, None) => {
                return Err(HandlerError::invalid_params(
                    method,
                    "give the skill's `path` or its `name`",
                ));
            }
        };
        let mut entries: Vec<serde_json::Value> = settings
            .into_iter()
            .filter(|s| s.path != path)
            .map(|s| serde_json::json!({"path": s.path, "enabled": s.enabled}))
            .collect();
        if !params.enabled {
            entries.push(serde_json::json!({"path": path, "enabled": false}));
        }
        let edit = ConfigEdit::builder()
            .key_path("skills.config")
            .value(serde_json::Value::Array(entries))
            .merge_strategy(MergeStrategy::Replace)
            .build();
        crate::config_rpc::write(&store, method, &[edit], None, None)?;
        Ok(SkillsConfigWriteResponse::builder()
            .effective_enabled(params.enabled)
            .build())
    })
    .await?;
    announce_skills_changed(&context);
    Ok(response)
}

fn announce_skills_changed(context: &RequestContext) {
    let hub = context.peer.hub().clone();
    context.after_response(move || {
        hub.broadcast::<SkillsChanged>(&SkillsChangedNotification::builder().build());
    });
}

/// `hooks/list`.
pub(crate) async fn hooks_list(
    engine: &Engine,
    params: HooksListParams,
) -> Result<HooksListResponse, HandlerError> {
    let cwds = match &params.thread_id {
        Some(id) => {
            let id = id.clone();
            let cwd = crate::pool::stored::<HooksList, _, _>(engine.threads.clone(), move |t| {
                t.snapshot(&id)
                    .map(|(summary, _)| summary.meta.settings.cwd.clone())
            })
            .await?;
            vec![cwd]
        }
        None => cwds_or_default(params.cwds),
    };
    let store = engine.config_store.clone();
    blocking::<HooksList, _, _>(move || {
        let data = cwds
            .into_iter()
            .map(|cwd| {
                let dir = absolute(&cwd);
                let effective = store.effective(Some(&dir));
                crate::hooks::list(&dir.display().to_string(), &effective.layers)
            })
            .collect();
        Ok(HooksListResponse::builder().data(data).build())
    })
    .await
}

/// `plugin/installed`.
pub(crate) async fn plugin_installed(
    engine: &Engine,
    params: PluginInstalledParams,
) -> Result<PluginInstalledResponse, HandlerError> {
    crate::plugins::rpc::installed(engine, params).await
}
