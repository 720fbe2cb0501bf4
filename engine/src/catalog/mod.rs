//! `model/list`, `collaborationMode/list` and `app/list`: what the user can pick from.
//!
//! - `models`: one provider's catalog, from `config.toml` and the provider's own
//!   `GET /models` (cached).
//! - `modes`: the built-in collaboration modes and their instructions.
//! - `page`: the cursor pagination both lists use.
//!
//! `model/list` lists the provider `modelProvider` names, else the effective default provider
//! (`model_provider` in `config.toml`, else `fixture`): for `fixture`, its one model; for an
//! OpenAI-compatible provider, its `models` from `config.toml`, then the ids its server lists
//! that are not among them. The effective default `model` is marked `isDefault` (and added
//! when no list has it). A server that fails or does not answer within 2 s is logged, and a
//! `warning` notification tells the client its models are left out; the answer still comes.
//!
//! `app/list` lists configured apps. agentwire has no app (connector) support and reads no
//! app configuration, so the list is empty.

// Model families: context window and capabilities by slug prefix (issue 33).
pub(crate) mod families;
mod models;
pub(crate) mod modes;
mod page;

use agentwire_config::FIXTURE;
use agentwire_config::defaults::ThreadDefaults;
use agentwire_protocol::methods::Warning;
use agentwire_protocol::{
    AppsListParams, AppsListResponse, CollaborationModeListParams, CollaborationModeListResponse,
    ModelListParams, ModelListResponse, WarningNotification,
};
use agentwire_providers::builtin::{default_model, is_named};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;
use models::{Entry, ServedModels, Shown};

/// The catalog's state: the providers' cached server lists.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    served: ServedModels,
}

impl Catalog {
    /// Forgets the servers' cached model lists: called when the stored API key changes, as a
    /// server may list other models (or answer at all) with other credentials.
    pub(crate) fn credentials_changed(&self) {
        self.served.forget();
    }
}

/// Serves `model/list`.
pub(crate) async fn model_list(
    engine: &Engine,
    context: RequestContext,
    params: ModelListParams,
) -> Result<ModelListResponse, HandlerError> {
    const METHOD: &str = "model/list";
    let config = engine.config_file();
    let default_provider = config
        .model_provider
        .clone()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| FIXTURE.to_owned());
    let provider = params
        .model_provider
        .clone()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| default_provider.clone());
    // The model new threads of the default provider ask for: `model`, else the provider's
    // listed or documented default; `None`: the first its server lists (see
    // `provider::builtin`).
    let mut default_model = match config.model.clone().filter(|m| !m.is_empty()) {
        Some(model) if default_provider == FIXTURE || is_named(&model) => Some(model),
        _ if default_provider == FIXTURE => Some(ThreadDefaults::default().model),
        _ => default_model(
            &default_provider,
            config.model_providers.get(&default_provider),
        ),
    };

    let mut entries = Vec::new();
    if provider == FIXTURE {
        entries.push(Entry::plain(
            &ThreadDefaults::default().model,
            "Replays the fixture script: scripted answers with no network and no account."
                .to_owned(),
        ));
    } else {
        let Some(table) = config.model_providers.get(&provider) else {
            let known: Vec<String> = std::iter::once(FIXTURE.to_owned())
                .chain(config.model_providers.keys().cloned())
                .map(|k| format!("`{k}`"))
                .collect();
            return Err(HandlerError::invalid_params(
                METHOD,
                format!(
                    "modelProvider: there is no model provider `{provider}`; the configured \
                     ones are {}",
                    known.join(", ")
                ),
            ));
        };
        entries.extend(table.models.iter().map(|m| Entry::configured(&provider, m)));
        match engine
            .catalog
            .served
            .list(&provider, table, &engine.accounts)
            .await
        {
            Ok(ids) => {
                if default_model.is_none() {
                    default_model = ids.iter().find(|id| is_named(id)).cloned();
                }
                let mut ids = ids;
                ids.sort();
                ids.dedup();
                for id in ids {
                    if !entries.iter().any(|e| e.id == id) {
                        let description =
                            format!("Served by provider `{provider}` (listed by its server).");
                        entries.push(Entry::plain(&id, description));
                    }
                }
            }
            Err(reason) => {
                context.peer.notify::<Warning>(
                    &WarningNotification::builder()
                        .message(format!(
                            "model/list left out the models the provider's server lists: {reason}. \
                         Only the models config.toml lists for it are shown."
                        ))
                        .build(),
                );
            }
        }
    }
    let default_model = default_model.filter(|_| provider == default_provider);
    if let Some(model) = &default_model
        && !entries.iter().any(|e| e.id == *model)
    {
        entries.insert(
            0,
            Entry::plain(
                model,
                "The default model of new threads (`model` in config.toml, else the \
                 provider's default)."
                    .to_owned(),
            ),
        );
    }
    let include_hidden = params.include_hidden == Some(true);
    // The facts of each model's family; `model_context_window` and
    // `model_supports_reasoning_summaries` describe the default model, the provider table's
    // `model_context_window` every model of the provider.
    let provider_window = config
        .model_providers
        .get(&provider)
        .and_then(|table| table.model_context_window);
    let shown = |entry: &Entry, is_default: bool| -> Option<Shown> {
        if provider == FIXTURE {
            return None;
        }
        let family = families::facts(&entry.id);
        let configured = config.model_context_window.filter(|_| is_default);
        Some(Shown {
            family,
            context_window: families::context_window(&entry.id, configured, provider_window),
            reasoning: config
                .model_supports_reasoning_summaries
                .filter(|_| is_default)
                .unwrap_or(family.reasoning),
        })
    };
    let models: Vec<_> = entries
        .iter()
        .filter(|e| include_hidden || !e.hidden)
        .map(|e| {
            let is_default = default_model.as_deref() == Some(e.id.as_str());
            e.to_model(is_default, shown(e, is_default).as_ref())
        })
        .collect();
    let (data, next_cursor) = page::page(METHOD, models, params.cursor.as_deref(), params.limit)?;
    Ok(ModelListResponse::builder()
        .data(data)
        .maybe_next_cursor(next_cursor)
        .build())
}

/// Serves `collaborationMode/list` (experimental): the built-in presets.
pub(crate) async fn collaboration_mode_list(
    engine: &Engine,
    context: RequestContext,
    params: CollaborationModeListParams,
) -> Result<CollaborationModeListResponse, HandlerError> {
    let _ = (engine, context, params);
    Ok(CollaborationModeListResponse::builder()
        .data(modes::presets())
        .build())
}

/// Serves `app/list`: agentwire has no apps (see the module docs), so every page is empty.
pub(crate) async fn app_list(
    engine: &Engine,
    context: RequestContext,
    params: AppsListParams,
) -> Result<AppsListResponse, HandlerError> {
    let _ = (engine, context, params.thread_id, params.force_refetch);
    let (data, next_cursor) = page::page(
        "app/list",
        Vec::new(),
        params.cursor.as_deref(),
        params.limit,
    )?;
    Ok(AppsListResponse::builder()
        .data(data)
        .maybe_next_cursor(next_cursor)
        .build())
}
