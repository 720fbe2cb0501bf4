//! `thread/settings/update` (a loaded thread's settings for its later turns, announced to every
//! connection by `thread/settings/updated`) and `turn/settings/update` (a running turn's
//! settings for its remaining model calls).
//!
//! - `thread/settings/update` applies its members the way `turn/start`'s overrides apply —
//!   through `Threads::update_settings`, which records a `settings` rollout record when
//!   anything changed, so the change survives a restart and `thread/resume` — and checks them
//!   against the administrator's requirements first, as `thread/start` does. `permissions`
//!   selects a permission profile (see `permission_profiles`) and is not to be combined with
//!   `sandboxPolicy`. `personality` is kept among the thread's configuration overrides (the
//!   `personality` key of Codex's `config.toml`); it selects no style, here as in the
//!   reference. `multiAgentMode` is accepted and ignored (deprecated, always
//!   `explicitRequestOnly`).
//! - This server runs every turn in the thread's own working directory and has no execution
//!   environments to choose from, and it does not switch plugins per thread: a non-empty
//!   `environments` or `disabledPluginIds` is refused (-32602) rather than dropped; `[]` is
//!   the state every thread is in.
//! - `turn/settings/update` hands a patch (model, effort, summary, service tier, approvals
//!   reviewer) to the running turn ([`LiveTurn`]); the turn applies it before its next model
//!   call, and the thread's settings for later turns stay as they were. A turn that is not
//!   running — it ended, or it is a shell command or compaction, which make no such calls —
//!   answers `targetUnavailable`. An unknown thread is -32600 naming it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    ThreadSettingsUpdate, ThreadSettingsUpdated, TurnSettingsUpdate,
};
use agentwire_protocol::{
    AbsolutePathBuf, ActivePermissionProfile, ApprovalsReviewer, CollaborationMode, ModeKind,
    Personality, ReasoningEffort, ReasoningSummary, Settings, ThreadSettingsUpdateParams,
    ThreadSettingsUpdateResponse, ThreadSettingsUpdatedNotification, TurnEnvironmentParams,
    TurnSettingsUpdateParams, TurnSettingsUpdateResponse, TurnSettingsUpdateStatus,
};
use agentwire_providers::OutputOptions;
use agentwire_runtime::{HandlerError, RequestContext};
use agentwire_store::meta::{SettingsOverrides, ThreadSettings, check_cwd};
use agentwire_support::lock;

use crate::Engine;
use crate::pool::{blocking, stored};

/// The configuration key under which a thread keeps its personality.
const PERSONALITY: &str = "personality";

/// The wire form of a thread's settings.
pub(crate) fn wire(settings: &ThreadSettings) -> agentwire_protocol::ThreadSettings {
    let mode = CollaborationMode::builder()
        .mode(settings.collaboration_mode.unwrap_or(ModeKind::Default))
        .settings(
            Settings::builder()
                .model(settings.model.clone())
                .maybe_reasoning_effort(Some(settings.reasoning_effort.clone()))
                .maybe_developer_instructions(Some(settings.developer_instructions.clone()))
                .build(),
        )
        .build();
    let personality = settings
        .config
        .get(PERSONALITY)
        .and_then(|value| serde_json::from_value::<Personality>(value.clone()).ok());
    agentwire_protocol::ThreadSettings::builder()
        .maybe_active_permission_profile(
            crate::permission_profiles::id_of(&settings.sandbox)
                .map(|id| ActivePermissionProfile::builder().id(id).build()),
        )
        .approval_policy(settings.approval_policy.clone())
        .approvals_reviewer(settings.approvals_reviewer)
        .collaboration_mode(mode)
        .cwd(AbsolutePathBuf(settings.cwd.clone()))
        .maybe_effort(settings.reasoning_effort.clone())
        .model(settings.model.clone())
        .model_provider(settings.model_provider.clone())
        .maybe_personality(personality)
        .sandbox_policy(settings.sandbox.clone())
        .maybe_service_tier(settings.service_tier.clone())
        .maybe_summary(settings.reasoning_summary.clone())
        .build()
}

/// Refuses environments to select: this server has none.
fn check_environments(
    method: &str,
    environments: Option<&[TurnEnvironmentParams]>,
) -> Result<(), HandlerError> {
    match environments {
        Some([first, ..]) => Err(HandlerError::invalid_params(
            method,
            format!(
                "environments: this server runs turns in the thread's own working directory \
                 and has no execution environments to select (asked for {:?}); set `cwd` \
                 instead",
                first.environment_id
            ),
        )),
        _ => Ok(()),
    }
}

/// `thread/settings/update`.
pub(crate) async fn thread_update(
    engine: &Engine,
    context: RequestContext,
    params: ThreadSettingsUpdateParams,
) -> Result<ThreadSettingsUpdateResponse, HandlerError> {
    let method = ThreadSettingsUpdate::NAME;
    crate::features::require::<ThreadSettingsUpdate>(&engine.config_store)?;
    check_environments(method, params.environments.as_deref())?;
    if let Some([first, ..]) = params.disabled_plugin_ids.as_deref() {
        return Err(HandlerError::invalid_params(
            method,
            format!(
                "disabledPluginIds: plugins are not switched off per thread on this server \
                 (asked for {first:?}); `[]` is the only list accepted"
            ),
        ));
    }
    if params.permissions.is_some() && params.sandbox_policy.is_some() {
        return Err(HandlerError::invalid_params(
            method,
            "permissions and sandboxPolicy cannot be combined: give a profile id or a policy",
        ));
    }
    if let Some(cwd) = params.cwd.as_deref() {
        check_cwd("cwd", cwd, false)
            .map_err(|reason| HandlerError::invalid_params(method, reason))?;
    }
    // The settings now in force (this also fails unless the thread is loaded).
    let thread_id = params.thread_id.clone();
    let before = {
        let id = thread_id.clone();
        stored::<ThreadSettingsUpdate, _, _>(engine.threads.clone(), move |t| {
            t.update_settings(&id, SettingsOverrides::default())
        })
        .await?
    };
    let sandbox_policy = match params.permissions.clone() {
        None => params.sandbox_policy.clone(),
        Some(profile) => {
            let store = engine.config_store.clone();
            let cwd = std::path::PathBuf::from(params.cwd.as_deref().unwrap_or(&before.cwd));
            Some(
                blocking::<ThreadSettingsUpdate, _, _>(move || {
                    crate::permission_profiles::policy_of(&store, &profile, &cwd).ok_or_else(|| {
                        HandlerError::invalid_params(
                            method,
                            format!(
                                "permissions: no permission profile {profile:?} (known: {})",
                                crate::permission_profiles::known_ids()
                            ),
                        )
                    })
                })
                .await?,
            )
        }
    };
    crate::workspace_rpc::enforce::<ThreadSettingsUpdate>(
        engine,
        params.approval_policy.clone(),
        sandbox_policy
            .as_ref()
            .and_then(crate::workspace_rpc::mode_of),
        None,
    )
    .await?;
    let config = params.personality.map(|personality| {
        let mut config: BTreeMap<String, serde_json::Value> = before.config.clone();
        config.insert(
            PERSONALITY.to_owned(),
            serde_json::to_value(personality).unwrap_or(serde_json::Value::Null),
        );
        config
    });
    let _ = params.multi_agent_mode;
    let mut overrides = SettingsOverrides {
        model: params.model,
        reasoning_effort: params.effort,
        cwd: params.cwd,
        approval_policy: params.approval_policy,
        approvals_reviewer: params.approvals_reviewer,
        sandbox_policy,
        service_tier: params.service_tier.clone().flatten(),
        clear_service_tier: params.service_tier == Some(None),
        reasoning_summary: params.summary,
        config,
        ..SettingsOverrides::default()
    };
    if let Some(mode) = params.collaboration_mode {
        crate::catalog::modes::apply(mode, &mut overrides);
    }
    let after = {
        let id = thread_id.clone();
        stored::<ThreadSettingsUpdate, _, _>(engine.threads.clone(), move |t| {
            t.update_settings(&id, overrides)
        })
        .await?
    };
    if after != before {
        let notification = ThreadSettingsUpdatedNotification::builder()
            .thread_id(thread_id)
            .thread_settings(wire(&after))
            .build();
        let hub = context.peer.hub().clone();
        context.after_response(move || hub.broadcast::<ThreadSettingsUpdated>(&notification));
    }
    Ok(ThreadSettingsUpdateResponse::builder().build())
}

/// Changes a running turn takes before its next model call.
#[derive(Debug, Clone, Default, PartialEq)]
struct TurnPatch {
    model: Option<String>,
    effort: Option<ReasoningEffort>,
    summary: Option<ReasoningSummary>,
    /// `Some(None)` clears the tier.
    service_tier: Option<Option<String>>,
    approvals_reviewer: Option<ApprovalsReviewer>,
}

impl TurnPatch {
    /// Lays `later` over `self`: what `later` sets wins.
    fn merge(&mut self, later: Self) {
        self.model = later.model.or(self.model.take());
        self.effort = later.effort.or(self.effort.take());
        self.summary = later.summary.or(self.summary.take());
        self.service_tier = later.service_tier.or(self.service_tier.take());
        self.approvals_reviewer = later.approvals_reviewer.or(self.approvals_reviewer.take());
    }
}

/// The settings changes waiting for a running turn (`turn/settings/update`).
#[derive(Debug, Default)]
pub(crate) struct LiveTurn {
    pending: Mutex<Option<TurnPatch>>,
}

impl LiveTurn {
    /// Queues `patch` for the turn's next model call.
    fn publish(&self, patch: TurnPatch) {
        let mut pending = lock(&self.pending);
        match pending.as_mut() {
            Some(queued) => queued.merge(patch),
            None => *pending = Some(patch),
        }
    }

    /// Applies what was queued to the turn's `settings` and `output` (called by the turn
    /// before each model call).
    pub(crate) fn apply(&self, settings: &mut ThreadSettings, output: &mut OutputOptions) {
        let Some(patch) = lock(&self.pending).take() else {
            return;
        };
        if let Some(model) = patch.model {
            settings.model = model;
        }
        if let Some(effort) = patch.effort {
            settings.reasoning_effort = Some(effort);
        }
        if let Some(summary) = patch.summary {
            settings.reasoning_summary = Some(summary.clone());
            output.summary = Some(summary);
        }
        if let Some(tier) = patch.service_tier {
            settings.service_tier = tier;
        }
        if let Some(reviewer) = patch.approvals_reviewer {
            settings.approvals_reviewer = reviewer;
        }
    }
}

/// `turn/settings/update`.
pub(crate) async fn turn_update(
    engine: &Engine,
    params: TurnSettingsUpdateParams,
) -> Result<TurnSettingsUpdateResponse, HandlerError> {
    let method = TurnSettingsUpdate::NAME;
    crate::features::require::<TurnSettingsUpdate>(&engine.config_store)?;
    check_environments(method, params.environments.as_deref())?;
    if params.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(HandlerError::invalid_params(
            method,
            "model: must name a model, not be empty",
        ));
    }
    let live = engine
        .turns
        .live_settings(&params.thread_id, &params.turn_id);
    let status = match live {
        Some(live) => {
            live.publish(TurnPatch {
                model: params.model,
                effort: params.effort,
                summary: params.summary,
                service_tier: params.service_tier,
                approvals_reviewer: params.approvals_reviewer,
            });
            TurnSettingsUpdateStatus::Applied
        }
        None => {
            // Not running here: an unknown thread is the caller's mistake.
            let id = params.thread_id.clone();
            stored::<TurnSettingsUpdate, _, _>(engine.threads.clone(), move |t| {
                t.snapshot(&id).map(|_| ())
            })
            .await?;
            TurnSettingsUpdateStatus::TargetUnavailable
        }
    };
    Ok(TurnSettingsUpdateResponse::builder().status(status).build())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_config::defaults::ThreadDefaults;

    #[test]
    fn a_patch_waits_for_the_next_call_and_later_members_win() {
        let live = LiveTurn::default();
        let mut settings = ThreadSettings::new(&ThreadDefaults::default(), Default::default());
        settings.service_tier = Some("flex".to_owned());
        let mut output = OutputOptions::default();
        live.publish(TurnPatch {
            model: Some("a".to_owned()),
            effort: Some(ReasoningEffort("low".to_owned())),
            ..TurnPatch::default()
        });
        live.publish(TurnPatch {
            model: Some("b".to_owned()),
            service_tier: Some(None),
            summary: Some(ReasoningSummary::Detailed),
            ..TurnPatch::default()
        });
        live.apply(&mut settings, &mut output);
        assert_eq!(settings.model, "b");
        assert_eq!(
            settings.reasoning_effort,
            Some(ReasoningEffort("low".to_owned()))
        );
        assert_eq!(settings.service_tier, None);
        assert_eq!(output.summary, Some(ReasoningSummary::Detailed));
        // Taken: a second call changes nothing.
        settings.model = "c".to_owned();
        live.apply(&mut settings, &mut output);
        assert_eq!(settings.model, "c");
    }

    #[test]
    fn the_wire_settings_name_the_profile_and_mode() {
        let mut settings = ThreadSettings::new(&ThreadDefaults::default(), Default::default());
        settings
            .config
            .insert(PERSONALITY.to_owned(), serde_json::json!("friendly"));
        let wire = wire(&settings);
        assert_eq!(
            wire.active_permission_profile
                .as_ref()
                .map(|p| p.id.as_str()),
            Some(":read-only")
        );
        assert_eq!(wire.collaboration_mode.mode, ModeKind::Default);
        assert_eq!(wire.collaboration_mode.settings.model, settings.model);
        assert_eq!(wire.personality, Some(Personality::Friendly));
        let json = serde_json::to_value(&wire).expect("serializes");
        assert_eq!(json.get("multiAgentMode"), None, "the default is left out");
        assert_eq!(json["environments"], serde_json::Value::Null);
        assert_eq!(json["disabledPluginIds"], serde_json::json!([]));
    }
}
