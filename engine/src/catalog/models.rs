//! The model catalog of one provider: the models `config.toml` lists for it, then those its
//! server lists (`GET {base_url}/models`, OpenAI-compatible providers only).
//!
//! Server lists are fetched with a [`FETCH_TIMEOUT`] and kept per provider for
//! [`FRESH_FOR`] (a failure for [`RETRY_AFTER`]), so a dead or hanging server costs one short
//! wait now and then, never a hung `model/list`. One fetch per provider runs at a time; other
//! callers wait for its result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use agentwire_config::ProviderConfig;
use agentwire_protocol::{Model, ReasoningEffort, ReasoningEffortOption};
use agentwire_providers::settings::ConfiguredModel;
use agentwire_support::lock;
use futures_util::StreamExt;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;

use crate::accounts::Accounts;

/// How long a provider's `GET /models` may take.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a fetched list is used before it is fetched again.
pub(crate) const FRESH_FOR: Duration = Duration::from_secs(300);
/// How long after a failed fetch the next one is tried.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(30);
/// The largest `/models` answer read.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// A catalog entry before it becomes a wire [`Model`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub id: String,
    pub display_name: String,
    pub description: String,
    pub hidden: bool,
    pub efforts: Vec<String>,
}

impl Entry {
    /// An entry described by `description`, shown under its id.
    pub(crate) fn plain(id: &str, description: String) -> Self {
        Self {
            id: id.to_owned(),
            display_name: id.to_owned(),
            description,
            hidden: false,
            efforts: Vec::new(),
        }
    }

    /// The entry from `config.toml` for provider `provider`.
    pub(crate) fn configured(provider: &str, model: &ConfiguredModel) -> Self {
        let description = format!("Listed for provider `{provider}` in config.toml.");
        match model {
            ConfiguredModel::Id(id) => Self::plain(id, description),
            ConfiguredModel::Table(table) => Self {
                id: table.id.clone(),
                display_name: table
                    .display_name
                    .clone()
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| table.id.clone()),
                description,
                hidden: table.hidden,
                efforts: table.reasoning_efforts.clone(),
            },
        }
    }

    /// The wire form; `is_default` marks the effective default model, `shown` the facts of
    /// its family (`None`: none shown, as for the fixture model).
    ///
    /// `supportedReasoningEfforts` are the configured efforts, else the family's (the engine
    /// sends the chosen one as `reasoning_effort`). `defaultReasoningEffort` is what applies
    /// when none is chosen: the engine then sends none, and servers commonly apply `medium`, so
    /// it is `medium` when the list is empty or has it, else the list's first entry. The
    /// description ends with the family's facts, and `inputModalities` has `image` when the
    /// family reads images.
    pub(crate) fn to_model(&self, is_default: bool, shown: Option<&Shown>) -> Model {
        let efforts: Vec<String> = match shown {
            Some(shown) if self.efforts.is_empty() => shown
                .family
                .efforts
                .iter()
                .map(|e| (*e).to_owned())
                .collect(),
            _ => self.efforts.clone(),
        };
        let default_effort = if efforts.is_empty() || efforts.iter().any(|e| e == "medium") {
            "medium".to_owned()
        } else {
            efforts[0].clone()
        };
        let description = match shown {
            Some(shown) => format!(
                "{} {}",
                self.description,
                super::families::describe(shown.family, shown.context_window, shown.reasoning)
            ),
            None => self.description.clone(),
        };
        let mut modalities = vec![agentwire_protocol::InputModality::Text];
        if shown.is_some_and(|s| s.family.images) {
            modalities.push(agentwire_protocol::InputModality::Image);
        }
        Model::builder()
            .id(self.id.clone())
            .model(self.id.clone())
            .display_name(self.display_name.clone())
            .description(description)
            .is_default(is_default)
            .hidden(self.hidden)
            .default_reasoning_effort(ReasoningEffort(default_effort))
            .supported_reasoning_efforts(
                efforts
                    .iter()
                    .map(|effort| {
                        ReasoningEffortOption::builder()
                            .reasoning_effort(ReasoningEffort(effort.clone()))
                            .description(effort_description(effort))
                            .build()
                    })
                    .collect(),
            )
            .input_modalities(modalities)
            .build()
    }
}

/// What `model/list` shows of a model's family: the family, and the context window and
/// reasoning after `config.toml`'s overrides.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shown {
    pub family: &'static super::families::Family,
    pub context_window: Option<i64>,
    pub reasoning: bool,
}

/// What choosing `effort` means, for a picker.
fn effort_description(effort: &str) -> String {
    match effort {
        "none" => "No reasoning before answering".to_owned(),
        "minimal" => "As little reasoning as the model allows".to_owned(),
        "low" => "Quick answers with light reasoning".to_owned(),
        "medium" => "A balance of speed and reasoning depth".to_owned(),
        "high" => "Deeper reasoning for harder problems".to_owned(),
        "xhigh" => "The deepest reasoning the model offers".to_owned(),
        other => format!("Sent to the server as reasoning_effort \"{other}\""),
    }
}

/// `error` and its sources, joined by `: `.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    text
}

/// A provider's fetched model list.
#[derive(Debug, Clone)]
struct Fetched {
    /// The `base_url` it came from (a changed configuration fetches again).
    base_url: String,
    /// When it was fetched.
    at: Instant,
    /// The model ids, or why there are none.
    result: Result<Vec<String>, String>,
}

impl Fetched {
    fn is_fresh(&self, base_url: &str) -> bool {
        let ttl = if self.result.is_ok() {
            FRESH_FOR
        } else {
            RETRY_AFTER
        };
        self.base_url == base_url && self.at.elapsed() < ttl
    }
}

/// The providers' server lists, fetched on demand and cached.
#[derive(Debug, Default)]
pub(crate) struct ServedModels {
    by_provider: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Fetched>>>>>,
    client: OnceLock<Result<reqwest::Client, String>>,
}

/// The `/models` answer: `{"data": [{"id": …}, …]}`.
#[derive(Debug, Deserialize)]
struct ModelsAnswer {
    data: Vec<ModelsEntry>,
}

#[derive(Debug, Deserialize)]
struct ModelsEntry {
    id: String,
}

impl ServedModels {
    /// The ids provider `id` serves, from the cache or fetched now; why there are none when
    /// the server failed.
    pub(crate) async fn list(
        &self,
        id: &str,
        config: &ProviderConfig,
        accounts: &Accounts,
    ) -> Result<Vec<String>, String> {
        let slot = lock(&self.by_provider)
            .entry(id.to_owned())
            .or_default()
            .clone();
        let mut slot = slot.lock().await;
        if let Some(fetched) = slot.as_ref().filter(|f| f.is_fresh(&config.base_url)) {
            return fetched.result.clone();
        }
        let result = self.fetch(id, config, accounts).await;
        if let Err(reason) = &result {
            tracing::warn!(
                provider = id,
                reason,
                "listing the provider's models failed"
            );
        }
        *slot = Some(Fetched {
            base_url: config.base_url.clone(),
            at: Instant::now(),
            result: result.clone(),
        });
        result
    }

    /// Forgets every fetched list (the credentials changed), so the next `model/list` asks
    /// the servers again.
    pub(crate) fn forget(&self) {
        lock(&self.by_provider).clear();
    }

    fn client(&self) -> Result<&reqwest::Client, String> {
        self.client
            .get_or_init(|| {
                agentwire_support::tls::install_crypto_provider();
                reqwest::Client::builder()
                    .connect_timeout(FETCH_TIMEOUT)
                    .timeout(FETCH_TIMEOUT)
                    .build()
                    .map_err(|e| format!("cannot set up the HTTP client: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// `GET {base_url}/models`, within [`FETCH_TIMEOUT`].
    async fn fetch(
        &self,
        id: &str,
        config: &ProviderConfig,
        accounts: &Accounts,
    ) -> Result<Vec<String>, String> {
        let base = config.base_url.trim().trim_end_matches('/');
        let url = reqwest::Url::parse(&format!("{base}/models"))
            .map_err(|e| format!("base_url {:?}: {e}", config.base_url))?;
        let mut headers = HeaderMap::new();
        for (name, value) in &config.http_headers {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                headers.insert(name, value);
            }
        }
        // The key the provider's model calls send; listing goes on without one.
        let key = match config.env_key.as_deref().filter(|k| !k.is_empty()) {
            Some(var) => std::env::var(var).ok().filter(|k| !k.is_empty()),
            None => accounts.stored_key().await.ok().flatten().or_else(|| {
                // The OpenAI sign-in falls back on the variable, as model calls do.
                config
                    .requires_openai_auth
                    .then(|| std::env::var("OPENAI_API_KEY").ok())
                    .flatten()
                    .filter(|k| !k.trim().is_empty())
            }),
        };
        if let Some(value) = key.and_then(|k| HeaderValue::from_str(&format!("Bearer {k}")).ok()) {
            headers.insert(AUTHORIZATION, value);
        }
        let client = self.client()?;
        let shown = url.to_string();
        let late = format!(
            "GET {shown} did not answer within {} ms",
            FETCH_TIMEOUT.as_millis()
        );
        let failed = |e: reqwest::Error| {
            if e.is_timeout() {
                late.clone()
            } else {
                format!("GET {shown} failed: {}", chain(&e))
            }
        };
        let request = async {
            let response = client
                .get(url)
                .headers(headers)
                .send()
                .await
                .map_err(failed)?;
            let status = response.status();
            if !status.is_success() {
                return Err(format!("GET {shown} answered HTTP {}", status.as_u16()));
            }
            let mut body = Vec::new();
            let mut chunks = response.bytes_stream();
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk.map_err(failed)?;
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(format!("GET {shown} answered more than {MAX_BODY} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
            let answer: ModelsAnswer = serde_json::from_slice(&body).map_err(|e| {
                format!("GET {shown} did not answer {{\"data\": [{{\"id\": …}}]}}: {e}")
            })?;
            Ok(answer.data.into_iter().map(|m| m.id).collect::<Vec<_>>())
        };
        match tokio::time::timeout(FETCH_TIMEOUT, request).await {
            Ok(result) => result,
            Err(_) => Err(late.clone()),
        }
        .map_err(|reason| format!("provider `{id}`: {reason}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_models_are_strings_or_small_tables() {
        #[derive(Deserialize)]
        struct Models {
            models: Vec<ConfiguredModel>,
        }
        let parsed: Models = toml::from_str(
            "models = [\"a\", { id = \"b\", display_name = \"B\", hidden = true, reasoning_efforts = [\"low\", \"high\"] }]",
        )
        .expect("parses");
        let a = Entry::configured("p", &parsed.models[0]);
        assert_eq!(
            (a.id.as_str(), a.display_name.as_str(), a.hidden),
            ("a", "a", false)
        );
        let b = Entry::configured("p", &parsed.models[1]);
        assert_eq!(b.display_name, "B");
        assert!(b.hidden);
        let model = b.to_model(false, None);
        assert_eq!(
            model.default_reasoning_effort,
            ReasoningEffort("low".into())
        );
        assert_eq!(model.supported_reasoning_efforts.len(), 2);
        assert_eq!(a.to_model(true, None).default_reasoning_effort.0, "medium");
        let typo = toml::from_str::<Models>("models = [{ id = \"c\", hiden = true }]");
        assert!(typo.is_err());
    }
}
