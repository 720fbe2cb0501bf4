//! The model providers as a settings screen sees them: `modelProvider/list`,
//! `modelProvider/config/write`, `modelProvider/default/set` and
//! `modelProvider/capabilities/read`.
//!
//! - The providers are those of the effective configuration (without project layers): the
//!   built-in `fixture`, the built-in HTTP providers (`openai`, `ollama`, `oss`, `lmstudio`,
//!   see `provider::builtin`) and every `[model_providers.<id>]` table, listed by id.
//! - `openai` is of kind `openai`; every other one is a `customGateway` whose `auth` says where
//!   its key comes from: `env_key` (`environmentVariable`), the stored sign-in
//!   (`requires_openai_auth`: `externallyConfigured`) or nowhere (`none`).
//! - Only a provider of the user's own `config.toml` that is not a built-in id can be edited
//!   (`canEdit`). Writes go through the configuration's write path (`config_rpc::write`),
//!   so they are checked, locked and refused exactly as `config/batchWrite` would be: a refusal
//!   is -32600 with `data.config_write_error_code`.
//! - A new custom provider gets an id made from its name (`My Gateway` → `my-gateway`,
//!   `-2`, `-3` … when taken) and `wire_api = "responses"`, as a Codex client's gateway form
//!   expects; an edit keeps the wire the table has.
//! - Amazon Bedrock and Google Cloud providers are set up through those vendors' sign-ins,
//!   which this server does not manage: their patches are refused as `account/bedrock/setup`
//!   is (-32004, `data.reason` `cloudProviderSetup`).
//! - `modelProvider/capabilities/read` answers for the default provider as this server drives
//!   it: turns here never offer the model a hosted image generation or web search tool, so
//!   both are `false` whatever the provider could do elsewhere.

use agentwire_config::{FIXTURE, ProviderConfig, Store};
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    ModelProviderConfigWrite, ModelProviderDefaultSet, ModelProviderList,
};
use agentwire_protocol::{
    ConfigEdit, ConfigLayerSource, ConfigWriteResponse, GatewayAuth, MergeStrategy,
    ModelProviderCapabilitiesReadResponse, ModelProviderConfigWriteParams,
    ModelProviderConfigWriteResponse, ModelProviderDefaultSetParams, ModelProviderListResponse,
    ModelProviderSummary, ProviderSettings, ProviderSettingsPatch, Unavailable,
};
use agentwire_providers::builtin::OPENAI;
use agentwire_runtime::HandlerError;
use serde_json::{Value, json};

use crate::Engine;
use crate::pool::blocking;

/// The name shown for the built-in fixture provider.
const FIXTURE_NAME: &str = "Fixture (scripted, offline)";

/// The ids of the built-in HTTP providers (those that exist without a table).
fn builtin_ids() -> Vec<String> {
    let mut table = toml::Table::new();
    agentwire_providers::builtin::overlay(&mut table);
    table
        .get("model_providers")
        .and_then(toml::Value::as_table)
        .map(|providers| providers.keys().cloned().collect())
        .unwrap_or_default()
}

/// Whether `id` names a provider that comes with the server.
fn is_builtin(id: &str) -> bool {
    id == FIXTURE || builtin_ids().iter().any(|b| b == id)
}

/// The ids with a table in the user's own `config.toml`.
fn user_provider_ids(store: &Store) -> Vec<String> {
    agentwire_config::layers::read_file(store.user_path())
        .table
        .get("model_providers")
        .and_then(toml::Value::as_table)
        .map(|providers| providers.keys().cloned().collect())
        .unwrap_or_default()
}

/// `url` when it can be shown: not when it carries a user name, a password or a query (where
/// keys tend to hide), nor when it does not parse.
fn displayable(url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let hides = !parsed.username().is_empty()
        || parsed.password().is_some()
        || parsed.query().is_some()
        || parsed.fragment().is_some();
    (!hides).then(|| url.to_owned())
}

/// The summary of provider `id` configured as `config` (`None`: the fixture).
fn summary(id: &str, config: Option<&ProviderConfig>, editable: bool) -> ModelProviderSummary {
    let Some(config) = config else {
        return ModelProviderSummary::builder()
            .id(id)
            .name(FIXTURE_NAME)
            .can_edit(false)
            .settings(ProviderSettings::custom_gateway(GatewayAuth::None))
            .build();
    };
    let settings = if id == OPENAI {
        ProviderSettings::Openai
    } else {
        let auth = match (&config.env_key, config.requires_openai_auth) {
            (Some(key), _) => GatewayAuth::environment_variable(key.clone()),
            (None, true) => GatewayAuth::externally_configured(None),
            (None, false) => GatewayAuth::None,
        };
        ProviderSettings::custom_gateway(auth)
    };
    ModelProviderSummary::builder()
        .id(id)
        .name(config.name.clone().unwrap_or_else(|| id.to_owned()))
        .can_edit(editable && !is_builtin(id))
        .maybe_base_url(displayable(&config.base_url))
        .settings(settings)
        .build()
}

/// Every provider of `store`'s configuration, by id, and the default one.
fn providers(store: &Store) -> (Vec<ModelProviderSummary>, String, bool) {
    let effective = store.effective(None);
    let user = user_provider_ids(store);
    let mut data: Vec<ModelProviderSummary> = effective
        .file
        .model_providers
        .iter()
        .map(|(id, config)| summary(id, Some(config), user.contains(id)))
        .collect();
    data.push(summary(FIXTURE, None, false));
    data.sort_by(|a, b| a.id.cmp(&b.id));
    let default = store.thread_defaults(&effective.file).model_provider;
    // The user's file decides the default unless a layer above it sets `model_provider`.
    let can_change = effective
        .origins
        .get("model_provider")
        .is_none_or(|origin| matches!(origin.name, ConfigLayerSource::User { .. }));
    (data, default, can_change)
}

/// `modelProvider/list`.
pub(crate) async fn list(engine: &Engine) -> Result<ModelProviderListResponse, HandlerError> {
    let store = engine.config_store.clone();
    blocking::<ModelProviderList, _, _>(move || {
        let (data, default, can_change) = providers(&store);
        Ok(ModelProviderListResponse::builder()
            .data(data)
            .default_provider_id(default)
            .can_change_default(can_change)
            .build())
    })
    .await
}

/// A refused write: -32600 with the reason code, as `config_rpc::write` refuses.
fn refused(code: &str, key_path: Option<&str>, message: String) -> HandlerError {
    HandlerError::invalid_request(format!("{}: {message}", ModelProviderConfigWrite::NAME))
        .with_data(json!({"config_write_error_code": code, "keyPath": key_path}))
}

/// The dotted key path of member `key` of provider `id`'s table (the id quoted, so any id
/// works).
fn key_path(id: &str, key: &str) -> String {
    let quoted = id.replace('\\', "\\\\").replace('"', "\\\"");
    format!("model_providers.\"{quoted}\".{key}")
}

/// An id for a provider named `name`: its letters and digits in lower case, other runs as
/// `-`; `-2`, `-3` … added while `taken` says the id is used.
fn new_id(name: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut slug = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    let base = if slug.is_empty() { "provider" } else { slug };
    let mut id = base.to_owned();
    let mut n = 2;
    while taken(&id) || is_builtin(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    id
}

/// An API root the providers can call: an `http` or `https` URL with a host.
fn check_base_url(id: &str, url: &str) -> Result<(), HandlerError> {
    let ok = reqwest::Url::parse(url.trim())
        .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
    if ok {
        Ok(())
    } else {
        Err(refused(
            "configValidationError",
            Some(&key_path(id, "base_url")),
            format!("baseUrl {url:?} is not an http:// or https:// URL"),
        ))
    }
}

/// A variable name: letters, digits and `_`, not starting with a digit.
fn check_env_key(id: &str, key: &str) -> Result<(), HandlerError> {
    let ok = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(refused(
            "configValidationError",
            Some(&key_path(id, "env_key")),
            format!("envKey {key:?} is not an environment variable name"),
        ))
    }
}

/// The edits a custom-gateway patch makes, and the provider's id.
fn gateway_edits(
    store: &Store,
    provider_id: Option<String>,
    name: Option<String>,
    base_url: Option<Option<String>>,
    env_key: Option<Option<String>>,
) -> Result<(String, Vec<ConfigEdit>), HandlerError> {
    let user = user_provider_ids(store);
    let known = store.effective(None).file.model_providers.clone();
    let name = name.map(|n| n.trim().to_owned());
    if name.as_deref() == Some("") {
        return Err(refused(
            "configValidationError",
            None,
            "name must not be empty".to_owned(),
        ));
    }
    let (id, new) = match provider_id {
        Some(id) if is_builtin(&id) => {
            return Err(refused(
                "configValidationError",
                None,
                format!(
                    "providerId {id:?} is a built-in provider, which is not edited here; a \
                     custom provider needs an id of its own (leave providerId out to add one)"
                ),
            ));
        }
        Some(id) if user.contains(&id) => (id, false),
        Some(id) => {
            return Err(refused(
                "configPathNotFound",
                Some(&format!("model_providers.{id}")),
                format!(
                    "providerId {id:?} names no provider of {}",
                    store.user_path().display()
                ),
            ));
        }
        None => {
            let Some(name) = &name else {
                return Err(refused(
                    "configValidationError",
                    None,
                    "a new provider needs a name".to_owned(),
                ));
            };
            let id = new_id(name, |id| {
                user.iter().any(|u| u == id) || known.contains_key(id)
            });
            (id, true)
        }
    };
    let set = |key: &str, value: Value| {
        ConfigEdit::builder()
            .key_path(key_path(&id, key))
            .value(value)
            .merge_strategy(MergeStrategy::Replace)
            .build()
    };
    let mut edits = Vec::new();
    if let Some(name) = name {
        edits.push(set("name", Value::String(name)));
    }
    match base_url {
        Some(Some(url)) => {
            check_base_url(&id, &url)?;
            edits.push(set("base_url", Value::String(url.trim().to_owned())));
        }
        Some(None) => {
            return Err(refused(
                "configValidationError",
                Some(&key_path(&id, "base_url")),
                "baseUrl cannot be cleared: a provider needs an API root".to_owned(),
            ));
        }
        None if new => {
            return Err(refused(
                "configValidationError",
                Some(&key_path(&id, "base_url")),
                "a new provider needs a baseUrl".to_owned(),
            ));
        }
        None => {}
    }
    match env_key {
        Some(Some(key)) => {
            check_env_key(&id, &key)?;
            edits.push(set("env_key", Value::String(key)));
        }
        Some(None) => edits.push(set("env_key", Value::Null)),
        None => {}
    }
    if new {
        edits.push(set("wire_api", Value::String("responses".to_owned())));
    }
    Ok((id, edits))
}

/// `modelProvider/config/write`.
pub(crate) async fn config_write(
    engine: &Engine,
    params: ModelProviderConfigWriteParams,
) -> Result<ModelProviderConfigWriteResponse, HandlerError> {
    let method = ModelProviderConfigWrite::NAME;
    let ProviderSettingsPatch::CustomGateway {
        base_url,
        env_key,
        name,
        provider_id,
        ..
    } = params.settings
    else {
        return Err(HandlerError::unavailable(
            method,
            Unavailable::CloudProviderSetup,
        ));
    };
    let store = engine.config_store.clone();
    blocking::<ModelProviderConfigWrite, _, _>(move || {
        let (id, edits) = gateway_edits(&store, provider_id, name, base_url, env_key)?;
        if !edits.is_empty() {
            crate::config_rpc::write(&store, method, &edits, None, None)?;
        }
        let (data, _, _) = providers(&store);
        let provider = data.into_iter().find(|p| p.id == id).ok_or_else(|| {
            HandlerError::internal(format!(
                "{method}: provider {id:?} was written but does not read back: see the \
                 configuration warnings of {}",
                store.user_path().display()
            ))
        })?;
        Ok(ModelProviderConfigWriteResponse::builder()
            .provider(provider)
            .build())
    })
    .await
}

/// `modelProvider/default/set`: writes `model_provider` in the user's `config.toml`.
pub(crate) async fn default_set(
    engine: &Engine,
    params: ModelProviderDefaultSetParams,
) -> Result<ConfigWriteResponse, HandlerError> {
    let method = ModelProviderDefaultSet::NAME;
    let store = engine.config_store.clone();
    blocking::<ModelProviderDefaultSet, _, _>(move || {
        let id = params.provider_id;
        let known = id == FIXTURE
            || store
                .effective(None)
                .file
                .model_providers
                .contains_key(&id);
        if !known {
            return Err(HandlerError::invalid_request(format!(
                "{method}: providerId {id:?} is not a configured model provider (see \
                 modelProvider/list)"
            ))
            .with_data(
                json!({"config_write_error_code": "configValidationError", "keyPath": "model_provider"}),
            ));
        }
        let edit = ConfigEdit::builder()
            .key_path("model_provider")
            .value(Value::String(id))
            .merge_strategy(MergeStrategy::Replace)
            .build();
        crate::config_rpc::write(&store, method, &[edit], None, None)
    })
    .await
}

/// `modelProvider/capabilities/read`.
pub(crate) fn capabilities_read() -> Result<ModelProviderCapabilitiesReadResponse, HandlerError> {
    Ok(ModelProviderCapabilitiesReadResponse::builder()
        .image_generation(false)
        .web_search(false)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_made_from_names_and_kept_unique() {
        assert_eq!(new_id("My GW", |_| false), "my-gw");
        assert_eq!(new_id("  Local  llama.cpp! ", |_| false), "local-llama-cpp");
        assert_eq!(new_id("***", |_| false), "provider");
        assert_eq!(new_id("x", |id| id == "x" || id == "x-2"), "x-3");
        assert_eq!(
            new_id("OpenAI", |_| false),
            "openai-2",
            "built-in ids are taken"
        );
        assert_eq!(new_id("fixture", |_| false), "fixture-2");
    }

    #[test]
    fn urls_with_secrets_are_not_shown() {
        assert_eq!(
            displayable("http://127.0.0.1:8080/v1").as_deref(),
            Some("http://127.0.0.1:8080/v1")
        );
        assert_eq!(displayable("https://user:pw@h/v1"), None);
        assert_eq!(displayable("https://h/v1?key=abc"), None);
        assert_eq!(displayable("not a url"), None);
    }

    #[test]
    fn key_paths_quote_the_id() {
        assert_eq!(key_path("a.b", "name"), "model_providers.\"a.b\".name");
        assert_eq!(
            agentwire_config::keys::split_key_path(&key_path("a\"b", "env_key")).expect("splits"),
            ["model_providers", "a\"b", "env_key"]
        );
    }

    #[test]
    fn env_keys_and_base_urls_are_checked() {
        assert!(check_env_key("p", "MY_KEY1").is_ok());
        assert!(check_env_key("p", "1KEY").is_err());
        assert!(check_env_key("p", "A-B").is_err());
        assert!(check_base_url("p", "https://h/v1").is_ok());
        assert!(check_base_url("p", "ftp://h").is_err());
        assert!(check_base_url("p", "h/v1").is_err());
    }

    #[test]
    fn a_provider_reads_as_its_kind() {
        let openai = ProviderConfig {
            base_url: "https://api.openai.com/v1".to_owned(),
            requires_openai_auth: true,
            ..ProviderConfig::default()
        };
        assert_eq!(
            summary(OPENAI, Some(&openai), true).settings,
            ProviderSettings::Openai
        );
        assert!(!summary(OPENAI, Some(&openai), true).can_edit);
        let keyed = ProviderConfig {
            base_url: "http://h/v1".to_owned(),
            env_key: Some("K".to_owned()),
            name: Some("Mine".to_owned()),
            ..ProviderConfig::default()
        };
        let mine = summary("mine", Some(&keyed), true);
        assert_eq!(
            mine.settings,
            ProviderSettings::custom_gateway(GatewayAuth::environment_variable("K"))
        );
        assert!(mine.can_edit);
        assert_eq!(mine.name, "Mine");
        let fixture = summary(FIXTURE, None, false);
        assert_eq!(fixture.base_url, None);
        assert!(!fixture.can_edit);
    }
}
