//! The typed keys of the effective configuration ([`ConfigFile`]) and the tables they hold.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agentwire_protocol::{AskForApproval, ReasoningEffort, ReasoningSummary, SandboxMode};
use agentwire_providers::settings::ProviderConfig;
use serde::Deserialize;

use super::shell_env::ShellEnvironmentPolicy;

/// The typed keys of the effective configuration (see the [`config`](super) module docs).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ConfigFile {
    /// The provider new threads use (a key of `model_providers`, or `fixture`).
    #[serde(default)]
    pub model_provider: Option<String>,
    /// The model new threads use.
    #[serde(default)]
    pub model: Option<String>,
    /// The reasoning effort new threads use.
    #[serde(default)]
    pub model_reasoning_effort: Option<ReasoningEffort>,
    /// How detailed reasoning summaries are.
    #[serde(default)]
    pub model_reasoning_summary: Option<ReasoningSummary>,
    /// When new threads ask before acting.
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    /// The sandbox of new threads.
    #[serde(default)]
    pub sandbox_mode: Option<SandboxMode>,
    /// Details of the `workspace-write` sandbox.
    #[serde(default)]
    pub sandbox_workspace_write: Option<SandboxWorkspaceWriteToml>,
    /// Base instructions replacing the built-in ones.
    #[serde(default)]
    pub instructions: Option<String>,
    /// A file whose text replaces the built-in base instructions (and `instructions`);
    /// relative to `$AGENTWIRE_HOME`.
    #[serde(default)]
    pub model_instructions_file: Option<PathBuf>,
    /// Whether turns tell the model their environment (`<environment_context>`; default
    /// true).
    #[serde(default)]
    pub include_environment_context: Option<bool>,
    /// Developer instructions added to every thread.
    #[serde(default)]
    pub developer_instructions: Option<String>,
    /// Most bytes of `AGENTS.md` project docs read into a thread.
    #[serde(default)]
    pub project_doc_max_bytes: Option<u64>,
    /// The context size (tokens of the last model call) at which a thread is compacted
    /// automatically before its next model call; `0` or less turns that off.
    #[serde(default)]
    pub model_auto_compact_token_limit: Option<i64>,
    /// Tokens of context the thread's model takes, over what its provider's table and the
    /// built-in model families say (see `catalog::families`).
    #[serde(default)]
    pub model_context_window: Option<i64>,
    /// About how many tokens of a tool's output the model is shown (the middle of longer
    /// output is left out), over the truncation policy of the model's family; a call's own
    /// `max_output_tokens` still decides for that call.
    #[serde(default)]
    pub tool_output_token_limit: Option<u64>,
    /// Whether the default model reasons (and so writes reasoning summaries), over what the
    /// built-in model families say; shown by `model/list`.
    #[serde(default)]
    pub model_supports_reasoning_summaries: Option<bool>,
    /// The environment of the commands the model runs.
    #[serde(default)]
    pub shell_environment_policy: ShellEnvironmentPolicy,
    /// The selected profile (a key of `profiles`).
    #[serde(default)]
    pub profile: Option<String>,
    /// Named sets of overrides (`[profiles.<name>]`), checked key by key like the top level.
    #[serde(default)]
    pub profiles: BTreeMap<String, toml::Table>,
    /// Per-project settings, by absolute path (`[projects."/path"]`).
    #[serde(default)]
    pub projects: BTreeMap<String, ProjectToml>,
    /// The fixture provider's script.
    #[serde(default)]
    pub fixture_script: Option<PathBuf>,
    /// The configured model providers, by id.
    #[serde(default)]
    pub model_providers: BTreeMap<String, ProviderConfig>,
    /// The configured MCP servers, by name (`[mcp_servers.<name>]`).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// Where threads are kept (`[store]`); read once, when the server starts.
    #[serde(default)]
    pub store: Option<StoreToml>,
    /// Resource limits of sandboxed commands (`[sandbox_limits]`, agentwire's own table; issue
    /// 32 sandbox); read once, when the server starts.
    #[serde(default)]
    pub sandbox_limits: Option<SandboxLimitsToml>,
    /// Most bytes of data one `fs/copy` call writes (agentwire's own key; issue 32 fs/copy
    /// budget; default 1 GiB, `0` for no limit); read once, when the server starts.
    #[serde(default)]
    pub fs_copy_max_bytes: Option<u64>,
    /// The `[tools]` table (model tools area): the web search endpoint; never invalid.
    #[serde(default)]
    pub tools: agentwire_tools::web_search::ToolsToml,
    /// The `[otel]` table (operations): the exporters, read once when the server starts, and
    /// `log_user_prompt`, read by every turn.
    #[serde(default)]
    pub otel: OtelToml,
}

/// The `[otel]` table (see `agentwire_runtime::telemetry::otel_config`).
pub type OtelToml = agentwire_runtime::telemetry::OtelConfig;

/// The `[sandbox_limits]` table (agentwire's own; Codex has no such table): limits of every
/// command run under `read-only` or `workspace-write`. A key left out keeps its default; `0`
/// means no limit.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxLimitsToml {
    /// Most processes (threads included) in one command's sandbox at once (default 1024).
    #[serde(default)]
    pub max_processes: Option<u64>,
    /// Most bytes of address space of each process of a sandbox (default 8 GiB).
    #[serde(default)]
    pub max_memory_bytes: Option<u64>,
}

impl SandboxLimitsToml {
    /// The limits this table sets, the defaults for the keys it leaves out.
    pub fn limits(&self) -> agentwire_tools::sandbox::SandboxLimits {
        let default = agentwire_tools::sandbox::SandboxLimits::DEFAULT;
        let pick = |set: Option<u64>, default: Option<u64>| match set {
            Some(0) => None,
            Some(n) => Some(n),
            None => default,
        };
        agentwire_tools::sandbox::SandboxLimits {
            max_processes: pick(self.max_processes, default.max_processes),
            max_memory_bytes: pick(self.max_memory_bytes, default.max_memory_bytes),
        }
    }
}

/// The `[store]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreToml {
    /// `"embedded"` (the default: files and SQLite under the home) or a `postgres://` URL.
    #[serde(default)]
    pub url: Option<String>,
    /// How many days a rollout of the embedded store must have been left unmodified before
    /// `rollout/compress` gzips it (default 7; `0`: every rollout not loaded). Read by each
    /// request.
    #[serde(default)]
    pub compress_after_days: Option<u64>,
}

/// The `[sandbox_workspace_write]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxWorkspaceWriteToml {
    /// Extra absolute directories commands may write to.
    #[serde(default)]
    pub writable_roots: Vec<String>,
    /// Whether sandboxed commands may use the network.
    #[serde(default)]
    pub network_access: bool,
    /// Keep `$TMPDIR` read-only.
    #[serde(default)]
    pub exclude_tmpdir_env_var: bool,
    /// Keep `/tmp` read-only.
    #[serde(default)]
    pub exclude_slash_tmp: bool,
}

/// One `[projects."<path>"]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ProjectToml {
    /// `trusted` lets the project's own config layers take effect; `untrusted` keeps them off.
    #[serde(default)]
    pub trust_level: Option<String>,
}

/// One `[mcp_servers.<name>]` table, with Codex's key names: a server started as a child
/// process (`command`, `args`, `env`, `cwd`) or reached over streamable HTTP (`url`, with the
/// bearer token read from `bearer_token_env_var`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
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
    /// The same in milliseconds (Codex's older key); `startup_timeout_sec` wins.
    #[serde(default)]
    pub startup_timeout_ms: Option<u64>,
    /// How long one tool call may take, in seconds.
    #[serde(default)]
    pub tool_timeout_sec: Option<f64>,
    /// Only these tools are offered (all when absent).
    #[serde(default)]
    pub enabled_tools: Option<Vec<String>>,
    /// These tools are never offered.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// HTTP headers sent to `url` whose values come from environment variables (header name →
    /// variable name).
    #[serde(default)]
    pub env_http_headers: BTreeMap<String, String>,
    /// Whether the model may call the server's tools in parallel (accepted; calls run one at a
    /// time here).
    #[serde(default)]
    pub supports_parallel_tool_calls: Option<bool>,
    /// How calls of this server's tools are approved, unless a tool says otherwise.
    #[serde(default)]
    pub default_tools_approval_mode: Option<McpToolApproval>,
    /// Per-tool settings (`[mcp_servers.<name>.tools.<tool>]`).
    #[serde(default)]
    pub tools: BTreeMap<String, McpToolConfig>,
    // MCP OAuth sign-in (mcpServer/oauth/login):
    /// The OAuth scopes asked for when signing in to `url` (default: those the server
    /// advertises).
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
    /// The resource indicator (RFC 8707) sent when signing in; default: what the server's
    /// protected-resource metadata names, else `url`.
    #[serde(default)]
    pub oauth_resource: Option<String>,
    /// A pre-registered OAuth client (`[mcp_servers.<name>.oauth]`); without one the client
    /// registers itself dynamically.
    #[serde(default)]
    pub oauth: Option<McpOauthClientConfig>,
}

/// `[mcp_servers.<name>.oauth]`: the OAuth client used to sign in to an HTTP MCP server.
/// Codex's other keys of this table are accepted and not used.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct McpOauthClientConfig {
    /// The client id registered with the server's authorization server.
    #[serde(default)]
    pub client_id: Option<String>,
    /// Its secret, for a confidential client (sent in the token requests' form).
    #[serde(default)]
    pub client_secret: Option<String>,
}

/// One `[mcp_servers.<name>.tools.<tool>]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpToolConfig {
    /// How calls of this tool are approved.
    #[serde(default)]
    pub approval_mode: Option<McpToolApproval>,
}

/// How a call of an MCP tool is approved (Codex's `approval_mode` values).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum McpToolApproval {
    /// Follow the thread's approval policy: ask unless the policy is `never` or the tool
    /// declares itself read-only.
    #[default]
    Auto,
    /// Always ask the user first.
    Prompt,
    /// Never ask.
    Approve,
}

impl ConfigFile {
    /// Parses one file's text strictly: a syntax error, an unknown key or a bad value is an
    /// error naming it.
    #[cfg(test)]
    pub fn parse(text: &str) -> Result<Self, String> {
        let checked = super::keys::check_text(text);
        if let Some(problem) = checked.problems.first() {
            return Err(problem.text());
        }
        Ok(super::keys::typed(&checked.table.unwrap_or_default()).0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_providers::settings::WireApi;

    #[test]
    fn reads_the_provider_keys_and_accepts_codex_only_keys() {
        let config = ConfigFile::parse(
            "model = \"x\"\nmodel_provider = \"fixture\"\nfixture_script = \"s.json\"\n[features]\nk = 1\n",
        )
        .expect("parses");
        assert_eq!(config.model_provider.as_deref(), Some("fixture"));
        assert_eq!(config.model.as_deref(), Some("x"));
        assert_eq!(config.fixture_script, Some(PathBuf::from("s.json")));
        let empty = ConfigFile::parse("").expect("empty");
        assert_eq!(
            empty
                .model_providers
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            vec!["lmstudio", "ollama", "openai", "oss"],
            "only the built-in providers"
        );
        assert_eq!(
            ConfigFile {
                model_providers: BTreeMap::new(),
                ..empty
            },
            ConfigFile::default()
        );
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
            "[model_providers.a]\nbase_url = \"http://h\"\nwire_api = \"carrier-pigeon\"\n",
        )
        .expect_err("wire api");
        assert!(wire.contains("carrier-pigeon"), "{wire}");
        let responses = ConfigFile::parse(
            "[model_providers.a]\nbase_url = \"http://h\"\nwire_api = \"responses\"\n",
        )
        .expect("responses");
        assert_eq!(responses.model_providers["a"].wire_api, WireApi::Responses);
        let missing = ConfigFile::parse("[model_providers.a]\nname = \"n\"\n").expect_err("url");
        assert!(missing.contains("base_url"), "{missing}");
        let openai = ConfigFile::parse("[model_providers.openai]\nenv_key = \"K\"\n")
            .expect("a built-in id needs no base_url");
        let openai = &openai.model_providers["openai"];
        assert_eq!(openai.base_url, "https://api.openai.com/v1");
        assert_eq!(openai.wire_api, WireApi::Responses);
        assert_eq!(openai.env_key.as_deref(), Some("K"));
        let fixture = ConfigFile::parse("[model_providers.fixture]\nbase_url = \"http://h\"\n")
            .expect_err("fixture");
        assert!(fixture.contains("built-in"), "{fixture}");
    }
}
