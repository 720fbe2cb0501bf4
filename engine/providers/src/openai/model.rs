//! Which model a call asks for: the call's (the thread's or turn's model), else `model` in
//! `config.toml`, else the first of the provider's `models` list, else its documented default
//! (see [`crate::builtin`]), else the first model the server lists
//! (`GET {base_url}/models`, asked once per provider configuration and kept). The fixture's
//! model counts as none: it is never sent to an HTTP provider.

use std::time::Duration;

use agentwire_protocol::CodexErrorInfo;
use futures_util::StreamExt;
use reqwest::header::HeaderMap;
use serde::Deserialize;

use super::Endpoint;
use super::error::{chain, failure};
use crate::builtin::is_named;
use crate::call::{ModelRequest, ProviderEvent};

/// The largest `/models` answer read.
const MAX_MODELS_BODY: usize = 4 * 1024 * 1024;

/// Most time the `/models` question may take, whatever `request_timeout_ms` allows.
const MODELS_TIMEOUT: Duration = Duration::from_secs(30);

/// The `/models` answer: `{"data": [{"id": …}, …]}`.
#[derive(Debug, Deserialize)]
struct ModelsAnswer {
    data: Vec<ModelsEntry>,
}

#[derive(Debug, Deserialize)]
struct ModelsEntry {
    id: String,
}

impl Endpoint {
    /// The model `request` is sent to (see the module docs); `headers` go with the `/models`
    /// question when it is asked.
    pub(super) async fn model_for(
        &self,
        request: &ModelRequest,
        headers: &HeaderMap,
    ) -> Result<String, ProviderEvent> {
        let chosen = Some(request.model.as_str())
            .filter(|m| is_named(m))
            .or(self.default_model.as_deref())
            .or(self.listed_model.as_deref());
        if let Some(model) = chosen {
            return Ok(model.to_owned());
        }
        let mut served = self.served_model.lock().await;
        if let Some(model) = served.as_ref() {
            return Ok(model.clone());
        }
        let model = self.first_served(headers).await?;
        tracing::info!(provider = %self.id, model, "no model chosen: asking for the server's first");
        *served = Some(model.clone());
        Ok(model)
    }

    /// The first model `GET {base_url}/models` lists.
    async fn first_served(&self, headers: &HeaderMap) -> Result<String, ProviderEvent> {
        let url = self.models_url.as_str();
        let unset = "set `model` in config.toml (or the thread's model)";
        let failed = |what: String, details: Option<String>, info: CodexErrorInfo| {
            failure(
                format!(
                    "{} has no model chosen, and asking its server for one failed: {what}; {unset}.",
                    self.name
                ),
                details,
                info,
            )
        };
        let client = self.client()?;
        let asked = async {
            let response = client
                .get(self.models_url.clone())
                .headers(headers.clone())
                .send()
                .await
                .map_err(|e| {
                    let info = if e.is_connect() {
                        CodexErrorInfo::http_connection_failed().build()
                    } else {
                        CodexErrorInfo::Other
                    };
                    failed(
                        format!("GET {url} got no answer (is the server running?)"),
                        Some(chain(&e)),
                        info,
                    )
                })?;
            let status = response.status();
            let mut body = Vec::new();
            let mut chunks = response.bytes_stream();
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk.map_err(|e| {
                    failed(
                        format!("GET {url} was cut off"),
                        Some(chain(&e)),
                        CodexErrorInfo::Other,
                    )
                })?;
                if body.len() + chunk.len() > MAX_MODELS_BODY {
                    return Err(failed(
                        format!("GET {url} answered more than {MAX_MODELS_BODY} bytes"),
                        None,
                        CodexErrorInfo::Other,
                    ));
                }
                body.extend_from_slice(&chunk);
            }
            if !status.is_success() {
                return Err(failed(
                    format!("GET {url} answered HTTP {}", status.as_u16()),
                    Some(String::from_utf8_lossy(&body).chars().take(500).collect()),
                    CodexErrorInfo::BadRequest,
                ));
            }
            let answer: ModelsAnswer = serde_json::from_slice(&body).map_err(|e| {
                failed(
                    format!("GET {url} did not answer {{\"data\": [{{\"id\": …}}]}}"),
                    Some(e.to_string()),
                    CodexErrorInfo::BadRequest,
                )
            })?;
            answer
                .data
                .into_iter()
                .map(|entry| entry.id)
                .find(|id| is_named(id))
                .ok_or_else(|| {
                    failed(
                        format!(
                            "GET {url} lists no model (load or pull one into the server first)"
                        ),
                        None,
                        CodexErrorInfo::BadRequest,
                    )
                })
        };
        let limit = self.request_timeout.min(MODELS_TIMEOUT);
        tokio::time::timeout(limit, asked).await.map_err(|_| {
            failed(
                format!("GET {url} did not answer within {} ms", limit.as_millis()),
                None,
                CodexErrorInfo::http_connection_failed().build(),
            )
        })?
    }
}
