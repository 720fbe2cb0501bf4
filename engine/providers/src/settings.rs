//! The providers' settings as `config.toml` writes them: a `[model_providers.<id>]` table
//! ([`ProviderConfig`]), its wire protocol and its configured models. They are the providers'
//! vocabulary, kept here so that the providers do not reach into the configuration; the
//! configuration re-exports them.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The id of the built-in fixture provider.
pub const FIXTURE: &str = "fixture";

/// One `[model_providers.<id>]` table: a server speaking the OpenAI chat-completions API or
/// the OpenAI Responses API. The built-in ids (`openai`, `ollama`, `oss`, `lmstudio`; see
/// [`crate::builtin`]) have an entry without a table; a table with one of those ids
/// is merged over it key by key.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// A name for people (logs, errors); the id when left out.
    #[serde(default)]
    pub name: Option<String>,
    /// The API root; requests go to `{base_url}/chat/completions` (`wire_api = "chat"`) or
    /// `{base_url}/responses` (`wire_api = "responses"`).
    pub base_url: String,
    /// The environment variable holding the API key sent as a bearer token.
    #[serde(default)]
    pub env_key: Option<String>,
    /// The wire protocol.
    #[serde(default)]
    pub wire_api: WireApi,
    /// How often a failed request (429, 5xx, no connection) is retried.
    #[serde(default)]
    pub request_max_retries: Option<u32>,
    /// How long the response stream may stay silent before the call fails.
    #[serde(default)]
    pub stream_idle_timeout_ms: Option<u64>,
    /// How long connecting and receiving the response headers may take.
    #[serde(default)]
    pub request_timeout_ms: Option<u64>,
    /// The model's context window, reported with token usage.
    #[serde(default)]
    pub model_context_window: Option<i64>,
    /// Extra headers sent with every request.
    #[serde(default)]
    pub http_headers: BTreeMap<String, String>,
    /// Headers sent with every request whose values come from environment variables
    /// (header name → variable name); a header whose variable is unset or empty is left out.
    #[serde(default)]
    pub env_http_headers: BTreeMap<String, String>,
    /// Without an `env_key`: the key is the stored sign-in (`auth.json`), else
    /// `$OPENAI_API_KEY`, and a call without either fails saying how to sign in (the built-in
    /// `openai` provider sets it). Without it, the stored key is sent when there is one.
    #[serde(default)]
    pub requires_openai_auth: bool,
    /// Models `model/list` offers for this provider, before those its `GET {base_url}/models`
    /// reports: each a model id (`"qwen2.5-coder"`) or a table
    /// `{ id = "…", display_name = "…", hidden = false, reasoning_efforts = ["low", "high"] }`
    /// (see [`ConfiguredModel`]).
    #[serde(default)]
    pub models: Vec<ConfiguredModel>,
}

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireApi {
    /// `POST /chat/completions` with `stream: true`.
    #[default]
    Chat,
    /// The OpenAI Responses API: `POST /responses` with `stream: true`, `store: false`.
    Responses,
}

/// One entry of a provider's `models` list in `config.toml`: a model id, or a table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ConfiguredModel {
    /// Just the id (`"qwen2.5-coder"`).
    Id(String),
    /// `{ id, display_name, hidden, reasoning_efforts }`.
    Table(ModelTable),
}

impl ConfiguredModel {
    /// The model slug sent to the server.
    pub(crate) fn id(&self) -> &str {
        match self {
            Self::Id(id) => id,
            Self::Table(table) => &table.id,
        }
    }
}

/// A model described in `config.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelTable {
    /// The model slug sent to the server.
    pub id: String,
    /// The name a picker shows (the id when left out).
    #[serde(default)]
    pub display_name: Option<String>,
    /// Listed only with `includeHidden` (default `false`).
    #[serde(default)]
    pub hidden: bool,
    /// The values the engine may send as `reasoning_effort` for this model (none when left
    /// out: the engine then sends none and the server decides).
    #[serde(default)]
    pub reasoning_efforts: Vec<String>,
}
