//! The engine's part of `$AGENTWIRE_HOME/config.toml`.
//!
//! Keys read so far (other top-level keys are ignored, so the file may hold settings for other
//! parts; unknown keys inside a provider table are errors, so a typo cannot silently change
//! behaviour):
//!
//! ```toml
//! model_provider = "local"              # default provider of new threads ("fixture" if absent)
//! model = "qwen2.5-coder"               # default model of new threads
//! fixture_script = "scripts/demo.json"  # the fixture script; relative to $AGENTWIRE_HOME;
//!                                       # the built-in script when left out
//!
//! [model_providers.local]               # an OpenAI-compatible chat-completions server
//! name = "llama.cpp on this machine"    # display name (optional)
//! base_url = "http://127.0.0.1:8080/v1"
//! env_key = "LOCAL_API_KEY"             # variable holding the bearer token (optional)
//! wire_api = "chat"                     # optional; only "chat"
//! request_max_retries = 4               # optional
//! stream_idle_timeout_ms = 300000       # optional
//! request_timeout_ms = 600000           # optional: connect + response headers
//! model_context_window = 32768          # optional, reported with token usage
//! http_headers = { "X-Org" = "a" }      # optional extra request headers
//! ```
//!
//! `fixture` is the built-in provider id; it needs (and takes) no table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub(crate) mod rpc;

/// The id of the built-in fixture provider.
pub(crate) const FIXTURE: &str = "fixture";

/// The keys of `config.toml` the engine reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct ConfigFile {
    /// The provider new threads use (a key of `model_providers`, or `fixture`).
    #[serde(default)]
    pub model_provider: Option<String>,
    /// The model new threads use.
    #[serde(default)]
    pub model: Option<String>,
    /// The fixture provider's script.
    #[serde(default)]
    pub fixture_script: Option<PathBuf>,
    /// The configured model providers, by id.
    #[serde(default)]
    pub model_providers: BTreeMap<String, ProviderConfig>,
    /// The configured MCP servers, by name (`[mcp_servers.<name>]`).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
}

/// One `[mcp_servers.<name>]` table, with Codex's key names: a server started as a child
/// process (`command`, `args`, `env`, `cwd`) or reached over streamable HTTP (`url`, with the
/// bearer token read from `bearer_token_env_var`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpServerConfig {
    /// The program to start (stdio transport).
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Names of variables passed through from the server's environment.
    #[serde(default)]
    pub env_vars: Vec<String>,
    /// Its working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The endpoint (streamable HTTP transport).
    #[serde(default)]
    pub url: Option<String>,
    /// The variable holding the bearer token sent to `url`.
    #[serde(default)]
    pub bearer_token_env_var: Option<String>,
    /// Extra HTTP headers sent to `url`.
    #[serde(default)]
    pub http_headers: BTreeMap<String, String>,
    /// Whether the server is used at all (default true).
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Whether a failure to start it fails start-up loudly.
    #[serde(default)]
    pub required: Option<bool>,
    /// How long start-up (initialize + tools/list) may take, in seconds.
    #[serde(default)]
    pub startup_timeout_sec: Option<f64>,
    /// How long one tool call may take, in seconds.
    #[serde(default)]
    pub tool_timeout_sec: Option<f64>,
    /// Only these tools are offered (all when absent).
    #[serde(default)]
    pub enabled_tools: Option<Vec<String>>,
    /// These tools are never offered.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
}

/// One `[model_providers.<id>]` table: a server speaking the OpenAI chat-completions API.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProviderConfig {
    /// A name for people (logs, errors); the id when left out.
    #[serde(default)]
    pub name: Option<String>,
    /// The API root; requests go to `{base_url}/chat/completions`.
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
    /// Models `model/list` offers for this provider, before those its `GET {base_url}/models`
    /// reports: each a model id (`"qwen2.5-coder"`) or a table
    /// `{ id = "…", display_name = "…", hidden = false, reasoning_efforts = ["low", "high"] }`
    /// (see [`crate::catalog::ConfiguredModel`]).
    #[serde(default)]
    pub models: Vec<crate::catalog::ConfiguredModel>,
}

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WireApi {
    /// `POST /chat/completions` with `stream: true`.
    #[default]
    Chat,
}

impl ConfigFile {
    /// Reads `home/config.toml`: the defaults when it does not exist, the reason when it cannot
    /// be read or parsed.
    pub(crate) fn load(home: &Path) -> Result<Self, String> {
        let path = home.join("config.toml");
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    fn parse(text: &str) -> Result<Self, String> {
        let config: Self = toml::from_str(text).map_err(|e| e.to_string())?;
        if config.model_providers.contains_key(FIXTURE) {
            return Err(format!(
                "[model_providers.{FIXTURE}]: `{FIXTURE}` is the built-in provider and takes no \
                 table; pick another id"
            ));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_provider_keys_and_ignores_others() {
        let config = ConfigFile::parse(
            "model = \"x\"\nmodel_provider = \"fixture\"\nfixture_script = \"s.json\"\n[other]\nk = 1\n",
        )
        .expect("parses");
        assert_eq!(config.model_provider.as_deref(), Some("fixture"));
        assert_eq!(config.model.as_deref(), Some("x"));
        assert_eq!(config.fixture_script, Some(PathBuf::from("s.json")));
        assert_eq!(ConfigFile::parse("").expect("empty"), ConfigFile::default());
        assert!(ConfigFile::parse("model_provider = ").is_err());
    }

    #[test]
    fn reads_provider_tables() {
        let config = ConfigFile::parse(
            r#"
model_provider = "local"
model = "qwen2.5-coder"
[model_providers.local]
name = "llama.cpp on this machine"
base_url = "http://127.0.0.1:8080/v1"
env_key = "LOCAL_API_KEY"
wire_api = "chat"
request_max_retries = 4
stream_idle_timeout_ms = 300000
request_timeout_ms = 600000
model_context_window = 32768
http_headers = { "X-Org" = "a" }
[model_providers.bare]
base_url = "http://h/v1"
"#,
        )
        .expect("parses");
        let local = &config.model_providers["local"];
        assert_eq!(local.name.as_deref(), Some("llama.cpp on this machine"));
        assert_eq!(local.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(local.env_key.as_deref(), Some("LOCAL_API_KEY"));
        assert_eq!(local.request_max_retries, Some(4));
        assert_eq!(local.stream_idle_timeout_ms, Some(300_000));
        assert_eq!(local.request_timeout_ms, Some(600_000));
        assert_eq!(local.model_context_window, Some(32768));
        assert_eq!(local.http_headers["X-Org"], "a");
        let bare = &config.model_providers["bare"];
        assert_eq!(bare.wire_api, WireApi::Chat);
        assert_eq!(bare.env_key, None);
    }

    #[test]
    fn provider_tables_reject_typos_and_unknown_wire_apis() {
        let typo =
            ConfigFile::parse("[model_providers.a]\nbase_url = \"http://h\"\nenv_kye = \"K\"\n")
                .expect_err("typo");
        assert!(typo.contains("env_kye"), "{typo}");
        let wire = ConfigFile::parse(
            "[model_providers.a]\nbase_url = \"http://h\"\nwire_api = \"responses\"\n",
        )
        .expect_err("wire api");
        assert!(wire.contains("responses"), "{wire}");
        let missing = ConfigFile::parse("[model_providers.a]\nname = \"n\"\n").expect_err("url");
        assert!(missing.contains("base_url"), "{missing}");
        let fixture = ConfigFile::parse("[model_providers.fixture]\nbase_url = \"http://h\"\n")
            .expect_err("fixture");
        assert!(fixture.contains("built-in"), "{fixture}");
    }
}
