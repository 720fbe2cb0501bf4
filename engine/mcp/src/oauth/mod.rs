//! OAuth sign-in to streamable-HTTP MCP servers (`mcpServer/oauth/login`,
//! `mcpServer/oauthLogin/completed`) and the bearer token their connections carry.
//!
//! # Module map
//!
//! - this file: the sign-in (the request, then the wait for the browser, the code exchange,
//!   the notification) and [`bearer`], the token a connection sends (refreshed when it has
//!   expired and a refresh token exists);
//! - `discover`: the authorization server of an MCP server (RFC 9728, RFC 8414);
//! - `callback`: the loopback listener the browser is redirected to;
//! - `tokens`: the credentials file (`$AGENTWIRE_HOME/mcp-oauth.json`, 0600, atomic);
//! - `web`: bounded HTTP requests, form bodies, the https-unless-loopback rule.
//!
//! The flow is the authorization-code grant with PKCE (S256) and a `state`; the client is
//! `[mcp_servers.<name>.oauth] client_id` when configured, else registered dynamically
//! (RFC 7591) as a public client whose only redirect URI is this sign-in's loopback address.

pub(crate) mod callback;
pub(crate) mod discover;
pub(crate) mod tokens;
pub(crate) mod web;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentwire_protocol::methods::McpServerOauthLoginCompleted;
use agentwire_protocol::{
    McpServerOauthClientRegistration, McpServerOauthLoginCompletedNotification,
    McpServerOauthLoginParams, McpServerOauthLoginResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};
use base64::Engine as _;
use sha2::{Digest, Sha256};

use agentwire_config::McpServerConfig;

use tokens::Credentials;

const METHOD: &str = "mcpServer/oauth/login";
/// How long a sign-in waits for the browser when `timeoutSecs` is absent.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest wait a client may ask for.
const MAX_TIMEOUT_SECS: i64 = 3600;
/// An access token this close to its expiry (seconds) is refreshed before use.
const EXPIRY_MARGIN: i64 = 60;

/// `bytes` random bytes from the system, base64url without padding.
fn random(bytes: usize) -> Result<String, String> {
    let mut buffer = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buffer))
        .map_err(|e| format!("cannot read random bytes: {e}"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buffer))
}

/// The PKCE S256 challenge of `verifier`.
pub(crate) fn challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The client a sign-in uses.
struct Client {
    id: String,
    secret: Option<String>,
}

/// Registers a public client for `redirect_uri` at `endpoint` (RFC 7591).
async fn register(
    http: &reqwest::Client,
    endpoint: &str,
    redirect_uri: &str,
    scopes: &[String],
) -> Result<Client, String> {
    let mut metadata = serde_json::json!({
        "client_name": "agentwire",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    if !scopes.is_empty() {
        metadata["scope"] = serde_json::Value::String(scopes.join(" "));
    }
    let response = http
        .post(endpoint)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::ACCEPT, "application/json")
        .body(metadata.to_string())
        .send()
        .await
        .map_err(|e| format!("client registration at {endpoint} failed: {e}"))?;
    let answer = web::json(response, "the client registration endpoint").await?;
    let id = web::string(&answer, "client_id")
        .ok_or("the client registration answer has no client_id")?;
    Ok(Client {
        id,
        secret: web::string(&answer, "client_secret"),
    })
}

/// The token answer as credentials (`previous` supplies a refresh token the answer leaves out).
fn credentials(
    answer: &serde_json::Map<String, serde_json::Value>,
    url: &str,
    client: &Client,
    token_endpoint: &str,
    resource: &str,
    scopes: &[String],
    previous_refresh: Option<String>,
) -> Result<Credentials, String> {
    let access_token =
        web::string(answer, "access_token").ok_or("the token answer has no access_token")?;
    if let Some(kind) = web::string(answer, "token_type")
        && !kind.eq_ignore_ascii_case("bearer")
    {
        return Err(format!(
            "the token answer's token_type is {kind:?}, not Bearer"
        ));
    }
    let expires_at = answer
        .get("expires_in")
        .and_then(serde_json::Value::as_i64)
        .map(|seconds| tokens::now().saturating_add(seconds.max(0)));
    let scopes = web::string(answer, "scope")
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_else(|| scopes.to_vec());
    Ok(Credentials {
        url: url.to_owned(),
        client_id: client.id.clone(),
        client_secret: client.secret.clone(),
        token_endpoint: token_endpoint.to_owned(),
        resource: Some(resource.to_owned()),
        access_token,
        refresh_token: web::string(answer, "refresh_token").or(previous_refresh),
        expires_at,
        scopes,
    })
}

/// A sign-in under way, once the user has the authorization URL.
struct Pending {
    home: PathBuf,
    name: String,
    url: String,
    client: Client,
    token_endpoint: String,
    resource: String,
    scopes: Vec<String>,
    verifier: String,
    redirect_uri: String,
}

impl Pending {
    /// Exchanges `code` for tokens and stores them.
    async fn exchange(&self, http: &reqwest::Client, code: &str) -> Result<(), String> {
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", self.redirect_uri.as_str()),
            ("client_id", self.client.id.as_str()),
            ("code_verifier", self.verifier.as_str()),
            ("resource", self.resource.as_str()),
        ];
        if let Some(secret) = &self.client.secret {
            form.push(("client_secret", secret));
        }
        let answer =
            web::post_form(http, &self.token_endpoint, &form, "the token endpoint").await?;
        let credentials = credentials(
            &answer,
            &self.url,
            &self.client,
            &self.token_endpoint,
            &self.resource,
            &self.scopes,
            None,
        )?;
        let (home, name) = (self.home.clone(), self.name.clone());
        tokio::task::spawn_blocking(move || tokens::store(&home, &name, credentials))
            .await
            .map_err(|e| format!("storing the tokens failed: {e}"))?
    }
}

/// `error` as this method's invalid-params error.
fn invalid(error: impl std::fmt::Display) -> HandlerError {
    HandlerError::invalid_params(METHOD, error.to_string())
}

/// Serves `mcpServer/oauth/login`: discovers the authorization server, obtains a client,
/// listens for the redirect and answers the authorization URL; the rest happens when the
/// browser comes back (or the wait times out) and ends with `mcpServer/oauthLogin/completed`.
pub(crate) async fn login(
    servers: &BTreeMap<String, McpServerConfig>,
    home: &Path,
    signed_in: impl FnOnce(&str) + Send + 'static,
    context: RequestContext,
    params: McpServerOauthLoginParams,
) -> Result<McpServerOauthLoginResponse, HandlerError> {
    if params.environment_id.is_some() {
        return Err(invalid(
            "environmentId: no MCP server here is registered by an environment",
        ));
    }
    let config: &McpServerConfig = servers.get(&params.name).ok_or_else(|| {
        invalid(format!(
            "name: no MCP server named `{}` is configured",
            params.name
        ))
    })?;
    let url = config.url.clone().ok_or_else(|| {
        invalid(format!(
            "name: `{}` is a stdio server; OAuth sign-in is for servers reached by `url`",
            params.name
        ))
    })?;
    if config.bearer_token_env_var.is_some() {
        return Err(invalid(format!(
            "name: `{}` is configured with bearer_token_env_var; remove it to sign in with OAuth",
            params.name
        )));
    }
    let registration = params
        .client_registration
        .unwrap_or(McpServerOauthClientRegistration::Auto);
    if registration == McpServerOauthClientRegistration::Cimd {
        return Err(invalid(
            "clientRegistration: client id metadata documents (cimd) are not supported; use auto or dcr",
        ));
    }
    let timeout = match params.timeout_secs {
        None => DEFAULT_TIMEOUT,
        Some(secs) if (1..=MAX_TIMEOUT_SECS).contains(&secs) => {
            Duration::from_secs(secs.unsigned_abs())
        }
        Some(secs) => {
            return Err(invalid(format!(
                "timeoutSecs: {secs} is not between 1 and {MAX_TIMEOUT_SECS}"
            )));
        }
    };
    let failed = |error: String| {
        HandlerError::internal(format!(
            "{METHOD}: signing in to the MCP server `{}` failed: {error}",
            params.name
        ))
    };

    let http = web::client().map_err(failed)?;
    let found = discover::discover(&http, &url, config.oauth_resource.as_deref())
        .await
        .map_err(failed)?;
    let scopes = params
        .scopes
        .clone()
        .or_else(|| config.scopes.clone())
        .unwrap_or_else(|| found.scopes.clone());
    let listener = callback::Listener::bind().await.map_err(failed)?;
    let configured_client = config
        .oauth
        .as_ref()
        .and_then(|o| o.client_id.clone())
        .filter(|_| registration == McpServerOauthClientRegistration::Auto);
    let client = match configured_client {
        Some(id) => Client {
            id,
            secret: config.oauth.as_ref().and_then(|o| o.client_secret.clone()),
        },
        None => {
            let endpoint = found.registration_endpoint.as_deref().ok_or_else(|| {
                failed(format!(
                    "its authorization server offers no dynamic client registration; set \
                     [mcp_servers.{}.oauth] client_id in config.toml",
                    params.name
                ))
            })?;
            register(&http, endpoint, &listener.redirect_uri, &scopes)
                .await
                .map_err(failed)?
        }
    };
    let verifier = random(48).map_err(failed)?;
    let state = random(24).map_err(failed)?;
    let mut authorization_url = reqwest::Url::parse(&found.authorization_endpoint)
        .map_err(|e| failed(format!("authorization_endpoint: {e}")))?;
    {
        let mut query = authorization_url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &client.id)
            .append_pair("redirect_uri", &listener.redirect_uri)
            .append_pair("code_challenge", &challenge(&verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("resource", &found.resource);
        if !scopes.is_empty() {
            query.append_pair("scope", &scopes.join(" "));
        }
    }
    let login_id = uuid::Uuid::now_v7().to_string();
    let pending = Pending {
        home: home.to_path_buf(),
        name: params.name.clone(),
        url,
        client,
        token_endpoint: found.token_endpoint,
        resource: found.resource,
        scopes,
        verifier,
        redirect_uri: listener.redirect_uri.clone(),
    };
    let hub = context.peer.hub().clone();
    let (name, thread_id, id) = (
        params.name.clone(),
        params.thread_id.clone(),
        login_id.clone(),
    );
    // Cleaned up after a panic: the sign-in is reported as failed, so that a client waiting
    // for `mcpServer/oauthLogin/completed` is not left waiting.
    let cleanup = {
        let (hub, name, thread_id, id) = (hub.clone(), name.clone(), thread_id.clone(), id.clone());
        move || {
            hub.broadcast::<McpServerOauthLoginCompleted>(
                &McpServerOauthLoginCompletedNotification::builder()
                    .name(name)
                    .success(false)
                    .error("the sign-in stopped on an internal error of the server".to_owned())
                    .login_id(id)
                    .maybe_thread_id(thread_id)
                    .build(),
            );
        }
    };
    let work = async move {
        let waited = tokio::time::timeout(
            timeout,
            listener.wait(&state, move |outcome| async move {
                match outcome {
                    callback::Outcome::Code(code) => pending.exchange(&http, &code).await,
                    callback::Outcome::Refused(reason) => Err(reason),
                }
            }),
        )
        .await;
        let error = match waited {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(error),
            Err(_) => Some(format!(
                "the browser did not come back within {} s",
                timeout.as_secs()
            )),
        };
        if error.is_none() {
            // The next use connects again, now with the token.
            signed_in(&name);
            tracing::info!(server = %name, "signed in to the MCP server with OAuth");
        } else {
            tracing::warn!(server = %name, error = ?error, "MCP OAuth sign-in failed");
        }
        hub.broadcast::<McpServerOauthLoginCompleted>(
            &McpServerOauthLoginCompletedNotification::builder()
                .name(name)
                .success(error.is_none())
                .maybe_error(error)
                .login_id(id)
                .maybe_thread_id(thread_id)
                .build(),
        );
    };
    agentwire_support::supervised::spawn("MCP OAuth sign-in", work, cleanup);
    Ok(McpServerOauthLoginResponse::builder()
        .authorization_url(authorization_url.to_string())
        .login_id(login_id)
        .build())
}

/// The OAuth access token server `name` at `url` is to be sent, if a sign-in stored one;
/// refreshed first when it has expired and a refresh token exists. An error says why a stored
/// token cannot be used.
pub(crate) async fn bearer(home: &Path, name: &str, url: &str) -> Result<Option<String>, String> {
    let (at, server, address) = (home.to_owned(), name.to_owned(), url.to_owned());
    let stored = tokio::task::spawn_blocking(move || tokens::load(&at, &server, &address))
        .await
        .map_err(|e| format!("reading the OAuth credentials failed: {e}"))??;
    let Some(stored) = stored else {
        return Ok(None);
    };
    if !stored.expires_within(EXPIRY_MARGIN) {
        return Ok(Some(stored.access_token));
    }
    let Some(refresh_token) = stored.refresh_token.clone() else {
        return Err(format!(
            "its OAuth token expired and there is no refresh token; sign in again \
             ({METHOD})"
        ));
    };
    let http = web::client()?;
    let resource = stored.resource.clone().unwrap_or_else(|| url.to_owned());
    let mut form = vec![
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token.as_str()),
        ("client_id", stored.client_id.as_str()),
        ("resource", resource.as_str()),
    ];
    if let Some(secret) = &stored.client_secret {
        form.push(("client_secret", secret));
    }
    let answer = web::post_form(&http, &stored.token_endpoint, &form, "the token endpoint")
        .await
        .map_err(|e| {
            format!("refreshing its OAuth token failed ({e}); sign in again ({METHOD})")
        })?;
    let client = Client {
        id: stored.client_id.clone(),
        secret: stored.client_secret.clone(),
    };
    let renewed = credentials(
        &answer,
        url,
        &client,
        &stored.token_endpoint,
        &resource,
        &stored.scopes,
        Some(refresh_token),
    )?;
    let token = renewed.access_token.clone();
    let (at, server) = (home.to_owned(), name.to_owned());
    tokio::task::spawn_blocking(move || tokens::store(&at, &server, renewed))
        .await
        .map_err(|e| format!("storing the refreshed token failed: {e}"))??;
    Ok(Some(token))
}

/// Whether a sign-in stored credentials for server `name` at `url` (for its status).
pub(crate) fn signed_in(home: &Path, name: &str, url: &str) -> bool {
    tokens::load(home, name, url).is_ok_and(|c| c.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_challenge_is_the_unpadded_base64url_sha256_of_the_verifier() {
        // Computed independently: `printf %s VERIFIER | sha256sum | xxd -r -p | base64`.
        assert_eq!(
            challenge("dBjftJeZ4CVP-mJ92K9ZFYmvTnNXZm1D0hKE3i0hJfo"),
            "ljjj0cKetORgVaw2BML5XD1YufnyfohPP5HhNMd4ZCs"
        );
        let verifier = random(48).expect("random");
        assert_eq!(verifier.len(), 64);
        assert_ne!(verifier, random(48).expect("random"));
    }
}
