//! The `externalAgentConfig/*` requests.
//!
//! `externalAgentConfig/import` works as the reference does: every item but `SESSIONS` is
//! imported before the answer; after the answer, one `externalAgentConfig/import/progress`
//! per item done, then the sessions are imported in the background (one more `progress`), and
//! `externalAgentConfig/import/completed` closes the import once it is in the history. An
//! import of no items answers and sends nothing.

use agentwire_protocol::methods::{
    ExternalAgentConfigDetect, ExternalAgentConfigImport, ExternalAgentConfigImportCompleted,
    ExternalAgentConfigImportProgress, ExternalAgentConfigImportReadHistories,
    ExternalAgentConfigImportRecordHistory,
};
use agentwire_protocol::{
    ExternalAgentConfigDetectParams, ExternalAgentConfigDetectResponse,
    ExternalAgentConfigImportCompletedNotification, ExternalAgentConfigImportHistoriesReadResponse,
    ExternalAgentConfigImportHistoryRecordParams, ExternalAgentConfigImportHistoryRecordResponse,
    ExternalAgentConfigImportItemTypeSuccess, ExternalAgentConfigImportParams,
    ExternalAgentConfigImportProgressNotification, ExternalAgentConfigImportResponse,
    ExternalAgentConfigImportTypeResult, ExternalAgentConfigMigrationItemType as ItemType,
};
use agentwire_runtime::{HandlerError, Hub, RequestContext};
use std::sync::Arc;

use super::{Importer, SessionLimits, codex_home, history, history_entry};
use crate::Engine;
use crate::pool::blocking;

/// `externalAgentConfig/detect`: what is left to import from the Codex home. Repositories
/// (`cwds`) list nothing: this server reads their `.codex/` folder in place.
pub(crate) async fn detect(
    engine: &Engine,
    params: ExternalAgentConfigDetectParams,
) -> Result<ExternalAgentConfigDetectResponse, HandlerError> {
    // Codex homes are the only source: `migrationSource` (and the old `source`) change nothing.
    let _ = (params.migration_source, params.source, params.cwds);
    let empty = || {
        ExternalAgentConfigDetectResponse::builder()
            .items(Vec::new())
            .build()
    };
    let Some(codex) = codex_home().filter(|_| params.include_home) else {
        return Ok(empty());
    };
    let importer = Importer::new(engine, codex);
    let limits = SessionLimits {
        max_sessions: params.max_sessions,
        max_age_days: params.max_session_age_days,
    };
    blocking::<ExternalAgentConfigDetect, _, _>(move || {
        Ok(ExternalAgentConfigDetectResponse::builder()
            .items(importer.detect(limits))
            .build())
    })
    .await
}

/// `externalAgentConfig/import`.
pub(crate) async fn import(
    engine: &Engine,
    context: RequestContext,
    params: ExternalAgentConfigImportParams,
) -> Result<ExternalAgentConfigImportResponse, HandlerError> {
    let codex = codex_home().ok_or_else(|| {
        HandlerError::invalid_request(
            "externalAgentConfig/import: neither CODEX_HOME nor HOME is set, so there is no \
             Codex home to import from",
        )
    })?;
    let import_id = uuid::Uuid::now_v7().to_string();
    let response = ExternalAgentConfigImportResponse::builder()
        .import_id(import_id.clone())
        .build();
    if params.migration_items.is_empty() {
        return Ok(response);
    }
    let importer = Arc::new(Importer::new(engine, codex));
    let (later, now): (Vec<_>, Vec<_>) = params
        .migration_items
        .into_iter()
        .partition(|item| item.item_type == ItemType::Sessions);
    let signs_in = now.iter().any(|item| item.item_type == ItemType::Config);
    let done = {
        let importer = importer.clone();
        blocking::<ExternalAgentConfigImport, _, _>(move || {
            Ok(now
                .iter()
                .map(|item| importer.import(item))
                .collect::<Vec<_>>())
        })
        .await?
    };
    if signs_in {
        // The imported API key may open model lists that were closed without one.
        engine.catalog.credentials_changed();
    }
    let hub = context.peer.hub().clone();
    let provider_id = params.provider_id;
    context.after_response(move || {
        for result in &done {
            progress(&hub, &import_id, result);
        }
        if later.is_empty() {
            let entry = history_entry(import_id.clone(), provider_id, &done);
            finish(&hub, &importer.home, entry, done);
            return;
        }
        let background = hub.clone();
        // Cleaned up after a panic: nothing to undo (the import's blocking part is awaited
        // here and its panic logged below).
        let work = async move {
            let work = tokio::task::spawn_blocking(move || {
                let mut results = done;
                for item in &later {
                    let result = importer.import(item);
                    progress(&background, &import_id, &result);
                    results.push(result);
                }
                let entry = history_entry(import_id, provider_id, &results);
                finish(&background, &importer.home, entry, results);
            });
            if let Err(error) = work.await {
                tracing::error!(%error, "importing Codex sessions failed");
            }
        };
        agentwire_support::supervised::background(&hub, "Codex import", work, || {});
    });
    Ok(response)
}

/// Sends `externalAgentConfig/import/progress` for one item done.
fn progress(hub: &Arc<Hub>, import_id: &str, result: &ExternalAgentConfigImportTypeResult) {
    hub.broadcast::<ExternalAgentConfigImportProgress>(
        &ExternalAgentConfigImportProgressNotification::builder()
            .import_id(import_id)
            .item_type_results(vec![result.clone()])
            .build(),
    );
}

/// Adds the finished import to the history, then sends `externalAgentConfig/import/completed`.
fn finish(
    hub: &Arc<Hub>,
    home: &std::path::Path,
    entry: agentwire_protocol::ExternalAgentConfigImportHistory,
    results: Vec<ExternalAgentConfigImportTypeResult>,
) {
    let import_id = entry.import_id.clone();
    if let Err(error) = history::append(home, entry) {
        tracing::warn!(%error, import_id, "the import could not be added to the history");
    }
    hub.broadcast::<ExternalAgentConfigImportCompleted>(
        &ExternalAgentConfigImportCompletedNotification::builder()
            .import_id(import_id)
            .item_type_results(results)
            .build(),
    );
}

/// `externalAgentConfig/import/recordHistory`.
pub(crate) async fn record_history(
    engine: &Engine,
    params: ExternalAgentConfigImportHistoryRecordParams,
) -> Result<ExternalAgentConfigImportHistoryRecordResponse, HandlerError> {
    const METHOD: &str = "externalAgentConfig/import/recordHistory";
    if params.provider_id.trim().is_empty() {
        return Err(HandlerError::invalid_params(
            METHOD,
            "providerId: must not be empty",
        ));
    }
    let import_id = uuid::Uuid::now_v7().to_string();
    let successes = params
        .item_type_results
        .iter()
        .flat_map(|r| &r.successes)
        .map(|s| {
            ExternalAgentConfigImportItemTypeSuccess::builder()
                .item_type(s.item_type)
                .maybe_cwd(s.cwd.clone())
                .maybe_source(s.source.clone())
                .maybe_target(s.target.clone())
                .maybe_title(s.title.clone())
                .build()
        })
        .collect();
    let failures = params
        .item_type_results
        .iter()
        .flat_map(|r| r.failures.clone())
        .collect();
    let entry = agentwire_protocol::ExternalAgentConfigImportHistory::builder()
        .import_id(import_id.clone())
        .completed_at_ms(super::now_ms())
        .provider_id(params.provider_id)
        .successes(successes)
        .failures(failures)
        .build();
    let home = engine.config.home.clone();
    blocking::<ExternalAgentConfigImportRecordHistory, _, _>(move || {
        history::append(&home, entry).map_err(|error| {
            HandlerError::internal(format!(
                "{METHOD}: cannot write {}: {error}",
                home.join(history::FILE).display()
            ))
        })?;
        Ok(ExternalAgentConfigImportHistoryRecordResponse::builder()
            .import_id(import_id)
            .build())
    })
    .await
}

/// `externalAgentConfig/import/readHistories`: newest first. No hosted connectors are ever
/// brought over here, so `connectors` is empty.
pub(crate) async fn read_histories(
    engine: &Engine,
) -> Result<ExternalAgentConfigImportHistoriesReadResponse, HandlerError> {
    let home = engine.config.home.clone();
    blocking::<ExternalAgentConfigImportReadHistories, _, _>(move || {
        let mut data = history::read(&home).map_err(|reason| {
            HandlerError::internal(format!(
                "externalAgentConfig/import/readHistories: {reason}"
            ))
        })?;
        data.reverse();
        Ok(ExternalAgentConfigImportHistoriesReadResponse::builder()
            .data(data)
            .connectors(Vec::new())
            .build())
    })
    .await
}
