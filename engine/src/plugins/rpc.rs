//! The plugin and marketplace requests. Each runs on tokio's blocking pool (they read folders,
//! copy files and run `git`); those that change something hold [`super::Plugins::change`].

use std::path::PathBuf;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    MarketplaceAdd, MarketplaceRemove, MarketplaceUpgrade, PluginInstall, PluginInstalled,
    PluginList, PluginRead, PluginReconcile, PluginSearch, PluginSkillRead, PluginUninstall,
    SkillsChanged,
};
use agentwire_protocol::{
    MarketplaceAddParams, MarketplaceAddResponse, MarketplaceRemoveParams,
    MarketplaceRemoveResponse, MarketplaceUpgradeParams, MarketplaceUpgradeResponse,
    PluginInstallParams, PluginInstallResponse, PluginInstalledParams, PluginInstalledResponse,
    PluginListMarketplaceKind, PluginListParams, PluginListResponse, PluginReadParams,
    PluginReadResponse, PluginReconcileParams, PluginReconcileResponse, PluginSearchParams,
    PluginSearchResponse, PluginSearchScope, PluginSkillReadParams, PluginSkillReadResponse,
    PluginUninstallParams, PluginUninstallResponse, SkillsChangedNotification, Unavailable,
};
use agentwire_runtime::{HandlerError, RequestContext};

use super::registry::{self, Refusal};
use super::{catalog, store};
use crate::Engine;
use crate::pool::blocking;

/// A refusal as the error of `M`.
fn refused<M: Method>(refusal: Refusal) -> HandlerError {
    match refusal {
        Refusal::Request(message) => {
            HandlerError::invalid_request(format!("{}: {message}", M::NAME))
        }
        Refusal::Server(message) => HandlerError::internal(format!("{}: {message}", M::NAME)),
    }
}

/// A request's mistake as the error of `M`.
fn invalid<M: Method>(message: String) -> HandlerError {
    HandlerError::invalid_request(format!("{}: {message}", M::NAME))
}

/// Tells every client to list skills again (a plugin's skills came or went), once the
/// response is sent.
fn announce_skills_changed(context: &RequestContext) {
    let hub = context.peer.hub().clone();
    context.after_response(move || {
        hub.broadcast::<SkillsChanged>(&SkillsChangedNotification::builder().build());
    });
}

fn server_cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
}

/// `marketplace/add`.
pub(crate) async fn marketplace_add(
    engine: &Engine,
    params: MarketplaceAddParams,
) -> Result<MarketplaceAddResponse, HandlerError> {
    let home = engine.config.home.clone();
    let plugins = engine.plugins.clone();
    blocking::<MarketplaceAdd, _, _>(move || {
        let _change = plugins.change();
        registry::add(
            &home,
            &server_cwd(),
            &params.source,
            params.ref_name,
            params.sparse_paths.unwrap_or_default(),
        )
        .map_err(refused::<MarketplaceAdd>)
    })
    .await
}

/// `marketplace/remove`.
pub(crate) async fn marketplace_remove(
    engine: &Engine,
    params: MarketplaceRemoveParams,
) -> Result<MarketplaceRemoveResponse, HandlerError> {
    let home = engine.config.home.clone();
    let plugins = engine.plugins.clone();
    blocking::<MarketplaceRemove, _, _>(move || {
        let _change = plugins.change();
        registry::remove(&home, &params.marketplace_name).map_err(refused::<MarketplaceRemove>)
    })
    .await
}

/// `marketplace/upgrade`.
pub(crate) async fn marketplace_upgrade(
    engine: &Engine,
    params: MarketplaceUpgradeParams,
) -> Result<MarketplaceUpgradeResponse, HandlerError> {
    let home = engine.config.home.clone();
    let plugins = engine.plugins.clone();
    blocking::<MarketplaceUpgrade, _, _>(move || {
        let _change = plugins.change();
        registry::upgrade(&home, params.marketplace_name.as_deref())
            .map_err(refused::<MarketplaceUpgrade>)
    })
    .await
}

/// `plugin/list`.
pub(crate) async fn list(
    engine: &Engine,
    params: PluginListParams,
) -> Result<PluginListResponse, HandlerError> {
    let home = engine.config.home.clone();
    blocking::<PluginList, _, _>(move || {
        let local_wanted = params
            .marketplace_kinds
            .as_ref()
            .is_none_or(|kinds| kinds.contains(&PluginListMarketplaceKind::Local));
        if !local_wanted {
            return Ok(PluginListResponse::builder()
                .marketplaces(Vec::new())
                .build());
        }
        let known = registry::known(&home, params.cwds.as_deref().unwrap_or_default());
        Ok(catalog::list(&home, known))
    })
    .await
}

/// `plugin/search`.
pub(crate) async fn search(
    engine: &Engine,
    params: PluginSearchParams,
) -> Result<PluginSearchResponse, HandlerError> {
    let home = engine.config.home.clone();
    blocking::<PluginSearch, _, _>(move || {
        if params.scope == Some(PluginSearchScope::Workspace) {
            // A ChatGPT workspace's catalog: none is reached from here.
            return Ok(PluginSearchResponse::builder().data(Vec::new()).build());
        }
        let known = registry::known(&home, params.cwds.as_deref().unwrap_or_default());
        catalog::search(
            &home,
            known,
            &params.search_term,
            params.cursor.as_deref(),
            params.limit,
        )
        .map_err(invalid::<PluginSearch>)
    })
    .await
}

/// `plugin/read`.
pub(crate) async fn read(
    engine: &Engine,
    params: PluginReadParams,
) -> Result<PluginReadResponse, HandlerError> {
    if params.marketplace_path.is_none() && params.remote_marketplace_name.is_some() {
        return Err(HandlerError::unavailable(
            PluginRead::NAME,
            Unavailable::OpenaiCloud,
        ));
    }
    let home = engine.config.home.clone();
    blocking::<PluginRead, _, _>(move || {
        let known = if params.marketplace_path.is_some() {
            Vec::new()
        } else {
            registry::known(&home, &[])
        };
        let market = catalog::find_market(
            known,
            params.marketplace_path.as_ref().map(|p| p.0.as_str()),
            &params.plugin_name,
        )
        .map_err(invalid::<PluginRead>)?;
        let entry =
            catalog::find_entry(&market, &params.plugin_name).map_err(invalid::<PluginRead>)?;
        Ok(PluginReadResponse::builder()
            .plugin(catalog::read(&home, &market, entry))
            .build())
    })
    .await
}

/// `plugin/skill/read`: `remoteMarketplaceName` names a known marketplace and
/// `remotePluginId` a plugin of it (its name or `name@marketplace`).
pub(crate) async fn skill_read(
    engine: &Engine,
    params: PluginSkillReadParams,
) -> Result<PluginSkillReadResponse, HandlerError> {
    let home = engine.config.home.clone();
    blocking::<PluginSkillRead, _, _>(move || {
        let market_name = params.remote_marketplace_name.as_str();
        let plugin = match params.remote_plugin_id.split_once('@') {
            Some((plugin, market)) if market == market_name => plugin,
            Some((_, market)) => {
                return Err(invalid::<PluginSkillRead>(format!(
                    "remotePluginId: {:?} is of marketplace `{market}`, not `{market_name}`",
                    params.remote_plugin_id
                )));
            }
            None => params.remote_plugin_id.as_str(),
        };
        let (markets, _) = catalog::split(registry::known(&home, &[]));
        let market = markets
            .into_iter()
            .find(|m| m.name == market_name)
            .ok_or_else(|| {
                invalid::<PluginSkillRead>(format!(
                    "remoteMarketplaceName: no added marketplace is named `{market_name}`"
                ))
            })?;
        let entry = catalog::find_entry(&market, plugin).map_err(|_| {
            invalid::<PluginSkillRead>(format!(
                "remotePluginId: marketplace `{market_name}` has no plugin `{plugin}`"
            ))
        })?;
        let contents = catalog::skill_text(&home, &market, entry, &params.skill_name)
            .map_err(|e| HandlerError::internal(format!("{}: {e}", PluginSkillRead::NAME)))?;
        Ok(PluginSkillReadResponse::builder()
            .maybe_contents(contents)
            .build())
    })
    .await
}

/// `plugin/install`.
pub(crate) async fn install(
    engine: &Engine,
    context: RequestContext,
    params: PluginInstallParams,
) -> Result<PluginInstallResponse, HandlerError> {
    if params.marketplace_path.is_none() && params.remote_marketplace_name.is_some() {
        return Err(HandlerError::unavailable(
            PluginInstall::NAME,
            Unavailable::OpenaiCloud,
        ));
    }
    let home = engine.config.home.clone();
    let config = engine.config_store.clone();
    let plugins = engine.plugins.clone();
    let response = blocking::<PluginInstall, _, _>(move || {
        let _change = plugins.change();
        let known = if params.marketplace_path.is_some() {
            Vec::new()
        } else {
            registry::known(&home, &[])
        };
        let market = catalog::find_market(
            known,
            params.marketplace_path.as_ref().map(|p| p.0.as_str()),
            &params.plugin_name,
        )
        .map_err(invalid::<PluginInstall>)?;
        let entry =
            catalog::find_entry(&market, &params.plugin_name).map_err(invalid::<PluginInstall>)?;
        tracing::info!(
            plugin = %format!("{}@{}", entry.name, market.name),
            attempt = params.install_attempt_id.as_deref().unwrap_or(""),
            "installing a plugin"
        );
        store::install(&home, &config, PluginInstall::NAME, &market, entry)
            .map_err(refused::<PluginInstall>)?;
        Ok(PluginInstallResponse::builder()
            .auth_policy(entry.authentication)
            .build())
    })
    .await?;
    announce_skills_changed(&context);
    Ok(response)
}

/// `plugin/uninstall`.
pub(crate) async fn uninstall(
    engine: &Engine,
    context: RequestContext,
    params: PluginUninstallParams,
) -> Result<PluginUninstallResponse, HandlerError> {
    let home = engine.config.home.clone();
    let config = engine.config_store.clone();
    let plugins = engine.plugins.clone();
    blocking::<PluginUninstall, _, _>(move || {
        let _change = plugins.change();
        store::uninstall(&home, &config, PluginUninstall::NAME, &params.plugin_id)
            .map_err(refused::<PluginUninstall>)
    })
    .await?;
    announce_skills_changed(&context);
    Ok(PluginUninstallResponse::builder().build())
}

/// `plugin/reconcile`.
pub(crate) async fn reconcile(
    engine: &Engine,
    context: RequestContext,
    params: PluginReconcileParams,
) -> Result<PluginReconcileResponse, HandlerError> {
    let home = engine.config.home.clone();
    let plugins = engine.plugins.clone();
    let changed = blocking::<PluginReconcile, _, _>(move || {
        let _change = plugins.change();
        tracing::info!(
            reason = params.reason.as_deref().unwrap_or(""),
            "reconciling plugins"
        );
        let (markets, _) = catalog::split(registry::known(&home, &[]));
        store::reconcile(&home, &markets).map_err(refused::<PluginReconcile>)
    })
    .await?;
    if !changed.is_empty() {
        announce_skills_changed(&context);
    }
    Ok(PluginReconcileResponse::builder()
        .changed_plugins(changed)
        .failed_materialization_remote_plugin_ids(Vec::new())
        .failed_remote_plugin_ids(Vec::new())
        .build())
}

/// `plugin/installed`.
pub(crate) async fn installed(
    engine: &Engine,
    params: PluginInstalledParams,
) -> Result<PluginInstalledResponse, HandlerError> {
    let home = engine.config.home.clone();
    blocking::<PluginInstalled, _, _>(move || {
        let known = registry::known(&home, params.cwds.as_deref().unwrap_or_default());
        Ok(catalog::installed(
            &home,
            known,
            params
                .install_suggestion_plugin_names
                .as_deref()
                .unwrap_or_default(),
        ))
    })
    .await
}
