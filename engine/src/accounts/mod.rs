//! `account/*` and the legacy `getAuthStatus`: the stored API key and what the provider said of
//! it.
//!
//! agentwire signs in with an OpenAI API key only: `account/login/start` with
//! `{"type": "apiKey", "apiKey": …}` stores it in `$AGENTWIRE_HOME/auth.json` ([`store`]) and
//! model providers that name no `env_key` send it as their bearer token. Other sign-in types
//! (ChatGPT in a browser, device code, handed-over tokens, Bedrock) are refused with the
//! supported type named. `account/rateLimits/read` reports what the provider's rate-limit
//! headers said on the last model call ([`rate_limits`]).
//!
//! `requiresOpenaiAuth` is `true` only when the effective model provider (`model_provider` in
//! `config.toml`) would send the stored key and talks to OpenAI's own API: it names no
//! `env_key`, and it sets `requires_openai_auth` (the built-in `openai` provider does) or its
//! `base_url` host is `openai.com` or a subdomain. The fixture provider and
//! other servers (local models, providers with their own `env_key`) need no sign-in.

mod rate_limits;
pub(crate) mod store;
// Sign-in from the terminal (`agentwire login`).
pub(crate) mod terminal;

use std::path::{Path, PathBuf};

use agentwire_config::{ConfigFile, FIXTURE};
use agentwire_protocol::NoParams;
use agentwire_protocol::methods::{AccountLoginCompleted, AccountUpdated};
use agentwire_protocol::{
    Account, AccountLoginCompletedNotification, AccountUpdatedNotification, AuthMode,
    CancelLoginAccountParams, CancelLoginAccountResponse, CancelLoginAccountStatus,
    GetAccountParams, GetAccountRateLimitsParams, GetAccountRateLimitsResponse, GetAccountResponse,
    GetAuthStatusParams, GetAuthStatusResponse, LoginAccountParams, LoginAccountResponse,
    LogoutAccountResponse,
};
use agentwire_providers::{Credentials, StoredKey};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;
pub(crate) use store::AuthFileError;

/// The sign-in state shared by the account methods and the model providers.
#[derive(Debug)]
pub(crate) struct Accounts {
    /// `$AGENTWIRE_HOME`, where `auth.json` lives.
    home: PathBuf,
    /// What the providers' rate-limit headers said.
    rate_limits: rate_limits::RateLimits,
}

impl Accounts {
    /// The accounts of the home directory `home`.
    pub(crate) fn new(home: &Path) -> Self {
        Self {
            home: home.to_owned(),
            rate_limits: rate_limits::RateLimits::default(),
        }
    }

    /// The stored API key, if any (read from `auth.json` now, so a sign-in by another server
    /// sharing the home directory counts too).
    pub(crate) async fn stored_key(&self) -> Result<Option<String>, AuthFileError> {
        let home = self.home.clone();
        tokio::task::spawn_blocking(move || store::read_key(&home))
            .await
            .unwrap_or_else(|e| Err(AuthFileError(format!("reading auth.json failed: {e}"))))
    }
}

impl Credentials for Accounts {
    fn stored_key(&self) -> StoredKey<'_> {
        Box::pin(async move { Accounts::stored_key(self).await.map_err(|e| e.0) })
    }

    fn record_rate_limits(&self, id: &str, snapshot: agentwire_protocol::RateLimitSnapshot) {
        self.rate_limits.record(id, snapshot);
    }
}

/// Whether the effective provider of `config` needs the stored OpenAI key (see the module
/// docs).
fn requires_openai_auth(config: &ConfigFile) -> bool {
    let id = config
        .model_provider
        .as_deref()
        .filter(|p| !p.is_empty())
        .unwrap_or(FIXTURE);
    let Some(provider) = config.model_providers.get(id) else {
        return false;
    };
    if provider.env_key.as_deref().is_some_and(|k| !k.is_empty()) {
        return false;
    }
    if provider.requires_openai_auth {
        return true;
    }
    reqwest::Url::parse(provider.base_url.trim())
        .ok()
        .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|host| host == "openai.com" || host.ends_with(".openai.com"))
}

/// The stored key, or the error answer when `auth.json` cannot be read.
async fn stored_key(engine: &Engine) -> Result<Option<String>, HandlerError> {
    engine
        .accounts
        .stored_key()
        .await
        .map_err(|e| HandlerError::internal(e.0))
}

/// Serves `account/read`. `refreshToken` is accepted and has nothing to do: an API key is not
/// refreshed.
pub(crate) async fn read(
    engine: &Engine,
    context: RequestContext,
    params: GetAccountParams,
) -> Result<GetAccountResponse, HandlerError> {
    let _ = (context, params.refresh_token);
    let key = stored_key(engine).await?;
    Ok(GetAccountResponse::builder()
        .maybe_account(key.map(|_| Account::ApiKey))
        .requires_openai_auth(requires_openai_auth(&engine.config_file()))
        .build())
}

/// Why a key cannot be stored, without quoting it.
fn check_key(key: &str) -> Result<(), &'static str> {
    if key.is_empty() {
        return Err("must not be empty");
    }
    if key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("must not contain spaces or control characters (it is sent as an HTTP header)");
    }
    Ok(())
}

/// Serves `account/login/start`: stores an API key; refuses every other sign-in type.
pub(crate) async fn login_start(
    engine: &Engine,
    context: RequestContext,
    params: LoginAccountParams,
) -> Result<LoginAccountResponse, HandlerError> {
    const METHOD: &str = "account/login/start";
    let unsupported = match params {
        LoginAccountParams::ApiKey { api_key, .. } => {
            check_key(&api_key).map_err(|reason| {
                HandlerError::invalid_params(METHOD, format!("apiKey: {reason}"))
            })?;
            let home = engine.config().home.clone();
            tokio::task::spawn_blocking(move || store::write_key(&home, &api_key))
                .await
                .map_err(|e| HandlerError::internal(format!("storing the API key failed: {e}")))?
                .map_err(|e| {
                    HandlerError::internal(format!(
                        "cannot store the API key in {}: {e}",
                        store::path(&engine.config().home).display()
                    ))
                })?;
            tracing::info!("signed in with an API key");
            engine.catalog.credentials_changed();
            let peer = context.peer.clone();
            context.after_response(move || {
                peer.notify::<AccountLoginCompleted>(
                    &AccountLoginCompletedNotification::builder()
                        .success(true)
                        .build(),
                );
                peer.hub().broadcast::<AccountUpdated>(
                    &AccountUpdatedNotification::builder()
                        .auth_mode(AuthMode::Apikey)
                        .build(),
                );
            });
            return Ok(LoginAccountResponse::ApiKey);
        }
        LoginAccountParams::Chatgpt { .. } => "chatgpt",
        LoginAccountParams::ChatgptDeviceCode => "chatgptDeviceCode",
        LoginAccountParams::ChatgptAuthTokens { .. } => "chatgptAuthTokens",
        LoginAccountParams::AmazonBedrock { .. } => "amazonBedrock",
        LoginAccountParams::AmazonBedrockAccessKeys { .. } => "amazonBedrockAccessKeys",
        _ => "unknown",
    };
    Err(HandlerError::invalid_params(
        METHOD,
        format!(
            "type: `{unsupported}` sign-in is not supported by agentwire; the only supported \
             type is `apiKey` (send {{\"type\": \"apiKey\", \"apiKey\": \"sk-…\"}})"
        ),
    )
    .with_data(serde_json::json!({
        "field": "type",
        "unsupported": unsupported,
        "supportedTypes": ["apiKey"],
    })))
}

/// Serves `account/login/cancel`: there are never sign-ins in progress (an API-key sign-in
/// completes at once), so every id is `notFound`.
pub(crate) async fn login_cancel(
    engine: &Engine,
    context: RequestContext,
    params: CancelLoginAccountParams,
) -> Result<CancelLoginAccountResponse, HandlerError> {
    let _ = (engine, context, params.login_id);
    Ok(CancelLoginAccountResponse::builder()
        .status(CancelLoginAccountStatus::NotFound)
        .build())
}

/// Serves `account/logout`: removes `auth.json` and tells every connection.
pub(crate) async fn logout(
    engine: &Engine,
    context: RequestContext,
    params: NoParams,
) -> Result<LogoutAccountResponse, HandlerError> {
    let _ = params;
    let home = engine.config().home.clone();
    let removed = tokio::task::spawn_blocking(move || store::remove(&home))
        .await
        .map_err(|e| HandlerError::internal(format!("signing out failed: {e}")))?
        .map_err(|e| {
            HandlerError::internal(format!(
                "cannot remove the stored credentials {}: {e}",
                store::path(&engine.config().home).display()
            ))
        })?;
    if removed {
        tracing::info!("signed out: the stored API key was removed");
        engine.catalog.credentials_changed();
    }
    let hub = context.peer.hub().clone();
    context.after_response(move || {
        hub.broadcast::<AccountUpdated>(&AccountUpdatedNotification::builder().build());
    });
    Ok(LogoutAccountResponse::builder().build())
}

/// Serves `account/rateLimits/read` (see [`rate_limits`] for how headers map onto the
/// snapshot).
pub(crate) async fn rate_limits_read(
    engine: &Engine,
    context: RequestContext,
    params: Option<GetAccountRateLimitsParams>,
) -> Result<GetAccountRateLimitsResponse, HandlerError> {
    let _ = (context, params);
    let (last, by_provider) = engine.accounts.rate_limits.read();
    Ok(GetAccountRateLimitsResponse::builder()
        .rate_limits(last)
        .maybe_rate_limits_by_limit_id(by_provider)
        .build())
}

/// Serves `getAuthStatus`: the token only when `includeToken` is `true`.
pub(crate) async fn get_auth_status(
    engine: &Engine,
    context: RequestContext,
    params: GetAuthStatusParams,
) -> Result<GetAuthStatusResponse, HandlerError> {
    let _ = context;
    let key = stored_key(engine).await?;
    let include = params.include_token == Some(true);
    Ok(GetAuthStatusResponse::builder()
        .maybe_auth_method(key.as_ref().map(|_| AuthMode::Apikey))
        .maybe_auth_token(key.filter(|_| include))
        .requires_openai_auth(requires_openai_auth(&engine.config_file()))
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_config::ProviderConfig;

    #[test]
    fn only_openai_hosts_without_env_key_require_the_stored_key() {
        let mut config = ConfigFile::default();
        assert!(!requires_openai_auth(&config));
        config.model_provider = Some("openai".to_owned());
        config.model_providers.insert(
            "openai".to_owned(),
            ProviderConfig {
                base_url: "https://api.openai.com/v1".to_owned(),
                ..ProviderConfig::default()
            },
        );
        assert!(requires_openai_auth(&config));
        if let Some(p) = config.model_providers.get_mut("openai") {
            p.env_key = Some("OPENAI_API_KEY".to_owned());
        }
        assert!(!requires_openai_auth(&config));
        config.model_providers.insert(
            "local".to_owned(),
            ProviderConfig {
                base_url: "http://127.0.0.1:8080/v1".to_owned(),
                ..ProviderConfig::default()
            },
        );
        config.model_provider = Some("local".to_owned());
        assert!(!requires_openai_auth(&config));
    }

    #[test]
    fn keys_are_checked_without_being_quoted() {
        assert!(check_key("sk-abc").is_ok());
        assert!(check_key("").is_err());
        assert!(check_key("sk abc").is_err());
        assert!(check_key("sk\nabc").is_err());
    }
}
