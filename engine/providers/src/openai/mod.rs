//! The HTTP model providers: any server speaking the OpenAI chat-completions API with
//! `stream: true` (llama.cpp server, vLLM, Ollama, LM Studio, hosted endpoints), or the OpenAI
//! Responses API (`wire_api = "responses"`: OpenAI itself, and servers that copy it).
//!
//! A chat call is one `POST {base_url}/chat/completions` ([`request`]) whose
//! Server-Sent-Events response ([`sse`]) is decoded into provider events ([`stream`]); a
//! Responses call is one `POST {base_url}/responses` built and decoded by
//! [`crate::responses`]. Both share the rest: rate limits, server failures and
//! unreachable servers are retried with backoff ([`retry`]) before anything was forwarded;
//! other failures end the call with an error the user can act on ([`error`]).

pub(crate) mod error;
mod model;
mod request;
pub(crate) use request::OUTPUT_SCHEMA_NAME;
pub(crate) mod retry;
pub(crate) mod sse;
pub(crate) mod stream;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agentwire_protocol::{CodexErrorInfo, RateLimitSnapshot, ReasoningSummary};
use agentwire_tools::specs;
use futures_util::StreamExt;
use reqwest::header::{
    AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER,
};
use tokio::sync::mpsc;

use crate::call::{EVENT_QUEUE, ModelProvider, ModelRequest, ProviderEvent, ProviderNotice};
use crate::credentials::Credentials;
use crate::settings::{ProviderConfig, WireApi};
use crate::{rate_limits, responses};
use error::failure;
use sse::SseParser;
use stream::{Decoder, StreamFault};

/// The variable holding the OpenAI API key of providers with `requires_openai_auth` (used
/// when there is no stored sign-in).
const OPENAI_API_KEY: &str = "OPENAI_API_KEY";

/// What a provider falls back on when a call does not say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defaults {
    /// The model (`model` in config.toml).
    pub model: Option<String>,
    /// The reasoning summary setting (`model_reasoning_summary`).
    pub summary: Option<ReasoningSummary>,
    /// Whether `[tools.web_search]` names a search endpoint (the `web_search` tool is offered).
    pub web_search: bool,
}

/// A response stream decoder of either wire.
#[derive(Debug)]
enum AnyDecoder {
    Chat(Decoder),
    Responses(responses::stream::Decoder),
}

impl AnyDecoder {
    fn new(wire: WireApi) -> Self {
        match wire {
            WireApi::Chat => Self::Chat(Decoder::default()),
            WireApi::Responses => Self::Responses(responses::stream::Decoder::default()),
        }
    }

    fn is_done(&self) -> bool {
        match self {
            Self::Chat(d) => d.is_done(),
            Self::Responses(d) => d.is_done(),
        }
    }

    fn event(&mut self, data: &str) -> Result<Vec<ProviderEvent>, StreamFault> {
        match self {
            Self::Chat(d) => d.event(data),
            Self::Responses(d) => d.event(data),
        }
    }

    fn end(&mut self) -> Result<Vec<ProviderEvent>, StreamFault> {
        match self {
            Self::Chat(d) => d.end(),
            Self::Responses(d) => d.end(),
        }
    }
}

/// How long the stream may be silent when the provider sets no `stream_idle_timeout_ms`.
const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// How long connecting and the response headers may take when the provider sets no
/// `request_timeout_ms`.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
/// Most bytes of an error response body read (for the error's details).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A configured model endpoint (either wire).
#[derive(Debug, Clone)]
pub(crate) struct OpenAiProvider {
    inner: Arc<Endpoint>,
}

/// Everything a call needs, shared by the calls in flight.
#[derive(Debug)]
struct Endpoint {
    /// How errors name the provider.
    name: String,
    /// The provider's id (its key under `[model_providers]`).
    id: String,
    /// Its `name`, else its id (for rate-limit snapshots).
    display_name: String,
    /// The stored API key (used when there is no `env_key`) and the rate-limit record.
    credentials: Arc<dyn Credentials>,
    /// `{base_url}/chat/completions` or `{base_url}/responses`.
    url: reqwest::Url,
    /// The wire protocol.
    wire: WireApi,
    /// The variable holding the API key; the stored key (`auth.json`) is used without one.
    env_key: Option<String>,
    /// Without `env_key`: fall back on `$OPENAI_API_KEY`, and fail without any key.
    openai_auth: bool,
    /// The reasoning summary setting of calls that name none.
    summary: Option<ReasoningSummary>,
    /// Extra headers from the configuration.
    headers: HeaderMap,
    /// How often a failed request is retried.
    max_retries: u32,
    /// How long the stream may stay silent.
    idle_timeout: Duration,
    /// How long connecting and the response headers may take.
    request_timeout: Duration,
    /// Reported with the token usage.
    model_context_window: Option<i64>,
    /// The model asked for when a call names none (`model` in config.toml).
    default_model: Option<String>,
    /// The model asked for when neither the call nor `model` names one: the first of the
    /// table's `models`, else the provider's documented default (see [`super::builtin`]).
    listed_model: Option<String>,
    /// `{base_url}/models`, asked for the server's first model when nothing else names one.
    models_url: reqwest::Url,
    /// The server's first model, once asked.
    served_model: tokio::sync::Mutex<Option<String>>,
    /// Whether calls offer the `web_search` tool.
    web_search: bool,
    /// The HTTP client, built at the first call, whose connection pool the calls then share.
    /// Building one reads the system's root certificates: done at start-up, that cost a few
    /// milliseconds per configured provider to every server, whether it called one or not.
    client: OnceLock<Result<reqwest::Client, String>>,
}

/// Whether a failure inside a response stream is worth another request: server errors,
/// overload, rate limits and streams cut off.
fn retryable_in_stream(error: &ProviderEvent) -> bool {
    matches!(
        error,
        ProviderEvent::Error {
            info: Some(
                CodexErrorInfo::InternalServerError
                    | CodexErrorInfo::ServerOverloaded
                    | CodexErrorInfo::RateLimitExceeded
                    | CodexErrorInfo::ResponseStreamDisconnected { .. }
            ),
            ..
        }
    )
}

impl OpenAiProvider {
    /// The provider `id` configured by `config`; calls fall back on `defaults`; without an
    /// `env_key` the key stored in `credentials` is sent. Fails with the reason when the table is
    /// unusable.
    pub(crate) fn new(
        id: &str,
        config: &ProviderConfig,
        defaults: Defaults,
        credentials: Arc<dyn Credentials>,
    ) -> Result<Self, String> {
        let here = format!("[model_providers.{id}]");
        let base = config.base_url.trim().trim_end_matches('/');
        let path = match config.wire_api {
            WireApi::Chat => "chat/completions",
            WireApi::Responses => "responses",
        };
        let url = reqwest::Url::parse(&format!("{base}/{path}"))
            .map_err(|e| format!("{here} base_url {:?}: {e}", config.base_url))?;
        let models_url = reqwest::Url::parse(&format!("{base}/models"))
            .map_err(|e| format!("{here} base_url {:?}: {e}", config.base_url))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "{here} base_url {:?}: must start with http:// or https://",
                config.base_url
            ));
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &config.http_headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| format!("{here} http_headers: {name:?} is not a header name: {e}"))?;
            let value = HeaderValue::from_str(value).map_err(|e| {
                format!("{here} http_headers.{name}: not a valid header value: {e}")
            })?;
            headers.insert(header, value);
        }
        for (name, var) in &config.env_http_headers {
            let Some(value) = std::env::var(var).ok().filter(|v| !v.trim().is_empty()) else {
                continue;
            };
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|e| {
                format!("{here} env_http_headers: {name:?} is not a header name: {e}")
            })?;
            let value = HeaderValue::from_str(value.trim()).map_err(|e| {
                format!("{here} env_http_headers.{name}: ${var} is not a valid header value: {e}")
            })?;
            headers.insert(header, value);
        }
        let request_timeout = config
            .request_timeout_ms
            .map_or(DEFAULT_REQUEST_TIMEOUT, Duration::from_millis);
        Ok(Self {
            inner: Arc::new(Endpoint {
                name: match &config.name {
                    Some(name) => format!("The model provider `{id}` ({name})"),
                    None => format!("The model provider `{id}`"),
                },
                id: id.to_owned(),
                display_name: config.name.clone().unwrap_or_else(|| id.to_owned()),
                credentials,
                url,
                wire: config.wire_api,
                env_key: config.env_key.clone().filter(|k| !k.is_empty()),
                openai_auth: config.requires_openai_auth,
                summary: defaults.summary,
                headers,
                max_retries: config
                    .request_max_retries
                    .unwrap_or(retry::DEFAULT_MAX_RETRIES),
                idle_timeout: config
                    .stream_idle_timeout_ms
                    .map_or(DEFAULT_IDLE_TIMEOUT, Duration::from_millis),
                request_timeout,
                model_context_window: config.model_context_window,
                default_model: defaults.model.filter(|m| super::builtin::is_named(m)),
                listed_model: super::builtin::default_model(id, Some(config)),
                models_url,
                served_model: tokio::sync::Mutex::new(None),
                web_search: defaults.web_search,
                client: OnceLock::new(),
            }),
        })
    }
}

impl ModelProvider for OpenAiProvider {
    fn stream(&self, request: ModelRequest) -> mpsc::Receiver<ProviderEvent> {
        let (sender, receiver) = mpsc::channel(EVENT_QUEUE);
        let endpoint = self.inner.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                drop(runtime.spawn(async move {
                    // The receiver going away cancels the call: the request or response is
                    // dropped, which closes the connection.
                    tokio::select! {
                        () = sender.closed() => {}
                        () = endpoint.call(request, &sender) => {}
                    }
                }));
            }
            Err(_) => {
                let _ = sender.try_send(failure(
                    "The model provider cannot run outside the async runtime.".to_owned(),
                    None,
                    CodexErrorInfo::Other,
                ));
            }
        }
        receiver
    }
}

impl Endpoint {
    /// The HTTP client, built now if this is the first call.
    fn client(&self) -> Result<&reqwest::Client, ProviderEvent> {
        self.client
            .get_or_init(|| {
                agentwire_support::tls::install_crypto_provider();
                reqwest::Client::builder()
                    .connect_timeout(self.request_timeout)
                    .build()
                    .map_err(|e| error::chain(&e))
            })
            .as_ref()
            .map_err(|reason| {
                failure(
                    format!("{} cannot set up its HTTP client: {reason}", self.name),
                    None,
                    CodexErrorInfo::Other,
                )
            })
    }

    /// Runs one call, sending its events to `events`.
    ///
    /// On the Responses wire, a response that fails in the stream (`response.failed` with a
    /// server error or rate limit, or a stream cut off) before anything was forwarded is
    /// retried like a failed request, up to `request_max_retries` times.
    async fn call(&self, request: ModelRequest, events: &mpsc::Sender<ProviderEvent>) {
        let mut stream_retries = 0;
        loop {
            let response = match self.open(&request).await {
                Ok((response, limits)) => {
                    // The limits it reports reach the clients before its output.
                    if let Some(limits) = limits {
                        let notice = ProviderNotice::RateLimits(Box::new(limits));
                        let _ = events.send(ProviderEvent::Notice(notice)).await;
                    }
                    response
                }
                Err(error) => {
                    let _ = events.send(error).await;
                    return;
                }
            };
            let mut forwarded = false;
            let Err(error) = self.relay(response, events, &mut forwarded).await else {
                return;
            };
            if !forwarded
                && self.wire == WireApi::Responses
                && stream_retries < self.max_retries
                && retryable_in_stream(&error)
            {
                tracing::warn!(
                    url = %self.url,
                    attempt = stream_retries,
                    "model response failed before any output; retrying"
                );
                tokio::time::sleep(retry::delay(stream_retries, None)).await;
                stream_retries += 1;
                continue;
            }
            let _ = events.send(error).await;
            return;
        }
    }

    /// Sends the request (retrying what is worth retrying) until a server accepts it; the
    /// accepted response comes with what its rate-limit headers said. Every response's
    /// limits, accepted or not, are recorded.
    async fn open(
        &self,
        request: &ModelRequest,
    ) -> Result<(reqwest::Response, Option<RateLimitSnapshot>), ProviderEvent> {
        let key = match &self.env_key {
            None => {
                let stored = self.credentials.stored_key().await.map_err(|e| {
                    failure(
                        format!("{} cannot use the stored API key: {e}", self.name),
                        None,
                        CodexErrorInfo::Unauthorized,
                    )
                })?;
                match stored {
                    Some(key) => Some(key),
                    None if self.openai_auth => match std::env::var(OPENAI_API_KEY) {
                        Ok(key) if !key.trim().is_empty() => Some(key.trim().to_owned()),
                        _ => {
                            return Err(failure(
                                format!(
                                    "{} needs an OpenAI API key: run `agentwire login \
                                     --with-api-key` with the key on stdin (clients: \
                                     account/login/start, type apiKey), or set \
                                     ${OPENAI_API_KEY}.",
                                    self.name
                                ),
                                None,
                                CodexErrorInfo::Unauthorized,
                            ));
                        }
                    },
                    None => None,
                }
            }
            Some(var) => match std::env::var(var) {
                Ok(key) if !key.is_empty() => Some(key),
                _ => {
                    return Err(failure(
                        format!(
                            "{} needs an API key in the environment variable ${var}, which is \
                             not set; set it, or remove `env_key` from the provider's table.",
                            self.name
                        ),
                        None,
                        CodexErrorInfo::Unauthorized,
                    ));
                }
            },
        };
        let mut headers = self.headers.clone();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = key {
            let value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                failure(
                    match &self.env_key {
                        Some(var) => format!("The API key in ${var} is not a valid header value."),
                        None => "The stored API key (auth.json) is not a valid header value; \
                                 sign in again with `agentwire login` (clients: account/login/start)."
                            .to_owned(),
                    },
                    None,
                    CodexErrorInfo::Unauthorized,
                )
            })?;
            headers.insert(AUTHORIZATION, value);
        }
        let model = self.model_for(request, &headers).await?;
        let body = self.body(request, &model).await?;
        let url = self.url.as_str();
        let mut attempt: u32 = 0;
        loop {
            let sent = self
                .client()?
                .post(self.url.clone())
                .headers(headers.clone())
                .body(body.clone())
                .send();
            let outcome = tokio::time::timeout(self.request_timeout, sent).await;
            let mut said = None;
            if let Ok(Ok(response)) = &outcome {
                said = rate_limits::from_headers(&self.id, &self.display_name, response.headers());
                if let Some(snapshot) = &said {
                    self.credentials
                        .record_rate_limits(&self.id, snapshot.clone());
                }
            }
            let retry_after = match outcome {
                Ok(Ok(response)) if response.status().is_success() => {
                    return Ok((response, said));
                }
                Ok(Ok(response)) => {
                    let status = response.status().as_u16();
                    if !retry::retryable_status(status) || attempt >= self.max_retries {
                        let text = self.error_body(response).await;
                        return Err(error::http_status(
                            &self.name,
                            url,
                            status,
                            &text,
                            self.env_key.as_deref(),
                        ));
                    }
                    tracing::warn!(url, status, attempt, "model request failed; retrying");
                    response
                        .headers()
                        .get(RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                }
                Ok(Err(error)) => {
                    if attempt >= self.max_retries || !(error.is_connect() || error.is_timeout()) {
                        let what = if error.is_connect() {
                            "could not be reached"
                        } else {
                            "could not be sent the request"
                        };
                        return Err(self.no_response(what, error::chain(&error), attempt + 1));
                    }
                    tracing::warn!(url, error = %error::chain(&error), attempt, "model request failed; retrying");
                    None
                }
                Err(_) => {
                    if attempt >= self.max_retries {
                        return Err(self.no_response(
                            "did not answer in time",
                            format!(
                                "no response headers within {} ms (request_timeout_ms)",
                                self.request_timeout.as_millis()
                            ),
                            attempt + 1,
                        ));
                    }
                    None
                }
            };
            tokio::time::sleep(retry::delay(attempt, retry_after.as_deref())).await;
            attempt += 1;
        }
    }

    /// The request body for `request` to `model`, in the provider's wire format. Image files
    /// are read here, off the async threads.
    async fn body(&self, request: &ModelRequest, model: &str) -> Result<String, ProviderEvent> {
        let request = request.clone();
        let model = model.to_owned();
        let wire = self.wire;
        let tools = specs::offered(specs::Offer {
            responses: wire == WireApi::Responses,
            model: &model,
            web_search: self.web_search,
            builtins: request.builtins,
        });
        let summary = self.summary.clone();
        tokio::task::spawn_blocking(move || match wire {
            WireApi::Chat => request::body(&request, &model, &tools).to_string(),
            WireApi::Responses => {
                responses::request::body(&request, &model, &tools, summary.as_ref()).to_string()
            }
        })
        .await
        .map_err(|e| {
            failure(
                format!("{} could not build the request: {e}", self.name),
                None,
                CodexErrorInfo::Other,
            )
        })
    }

    /// Puts the configured context window into a `Done` event.
    fn fill_context_window(&self, event: &mut ProviderEvent) {
        if let ProviderEvent::Done {
            model_context_window,
            ..
        } = event
        {
            *model_context_window = self.model_context_window;
        }
    }

    /// The error for a request that got no response.
    fn no_response(&self, what: &str, details: String, attempts: u32) -> ProviderEvent {
        failure(
            format!(
                "{} {what} at {} ({attempts} attempt{}); is the server running?",
                self.name,
                self.url,
                if attempts == 1 { "" } else { "s" }
            ),
            Some(details),
            CodexErrorInfo::http_connection_failed().build(),
        )
    }

    /// The start of an error response's body (what fits in [`MAX_ERROR_BODY`] and arrives in
    /// time).
    async fn error_body(&self, response: reqwest::Response) -> String {
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while body.len() < MAX_ERROR_BODY {
            match tokio::time::timeout(self.idle_timeout, chunks.next()).await {
                Ok(Some(Ok(bytes))) => {
                    let room = MAX_ERROR_BODY - body.len();
                    body.extend_from_slice(&bytes[..bytes.len().min(room)]);
                }
                _ => break,
            }
        }
        String::from_utf8_lossy(&body).into_owned()
    }

    /// Decodes the response stream into events for `events`; the error that ends it, if any.
    /// `forwarded` is set once an event went out.
    async fn relay(
        &self,
        response: reqwest::Response,
        events: &mpsc::Sender<ProviderEvent>,
        forwarded: &mut bool,
    ) -> Result<(), ProviderEvent> {
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let broken = |message: String, details: Option<String>| {
            failure(
                message,
                details,
                CodexErrorInfo::response_stream_disconnected()
                    .http_status_code(status)
                    .build(),
            )
        };
        let mut parser = SseParser::default();
        let mut decoder = AnyDecoder::new(self.wire);
        let mut chunks = response.bytes_stream();
        while !decoder.is_done() {
            let chunk = match tokio::time::timeout(self.idle_timeout, chunks.next()).await {
                Err(_) => {
                    return Err(broken(
                        format!(
                            "{} sent nothing for {} ms (stream_idle_timeout_ms); the response \
                             was abandoned.",
                            self.name,
                            self.idle_timeout.as_millis()
                        ),
                        None,
                    ));
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    return Err(broken(
                        format!("{} broke off the response stream.", self.name),
                        Some(error::chain(&e)),
                    ));
                }
                Ok(Some(Ok(chunk))) => chunk,
            };
            let datas = parser.feed(&chunk).map_err(|message| {
                failure(
                    format!("{} sent a malformed stream: {message}", self.name),
                    None,
                    CodexErrorInfo::Other,
                )
            })?;
            for data in datas {
                let decoded = decoder.event(&data).map_err(|fault| {
                    failure(
                        format!("{}: {}", self.name, fault.message),
                        None,
                        fault.info,
                    )
                })?;
                for mut event in decoded {
                    self.fill_context_window(&mut event);
                    // A notice (the served model's name) is no output: the call may still be
                    // retried after it.
                    if !matches!(event, ProviderEvent::Notice(_)) {
                        *forwarded = true;
                    }
                    if events.send(event).await.is_err() {
                        return Ok(());
                    }
                }
                if decoder.is_done() {
                    break;
                }
            }
        }
        let last = decoder.end().map_err(|fault| {
            let mut message = format!("{}: {}", self.name, fault.message);
            if !content_type.contains("event-stream") {
                message.push_str(&format!(
                    " The response was `{content_type}`, not `text/event-stream`: does the \
                     server support `stream: true`?"
                ));
            } else if parser.has_partial_event() {
                message.push_str(" It stopped in the middle of an event.");
            }
            let info = match fault.info {
                CodexErrorInfo::ResponseStreamDisconnected { .. } => {
                    CodexErrorInfo::response_stream_disconnected()
                        .http_status_code(status)
                        .build()
                }
                other => other,
            };
            failure(message, None, info)
        })?;
        for mut event in last {
            self.fill_context_window(&mut event);
            if events.send(event).await.is_err() {
                break;
            }
        }
        Ok(())
    }
}
