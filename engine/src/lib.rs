//! agentwire-engine: the reference engine behind the app-server runtime.
//!
//! It implements the generated [`Handler`](agentwire_runtime::Handler) trait; it never parses JSON-RPC itself. Methods it
//! does not implement yet answer "method not found" through the trait's defaults.
//!
//! Threads and their persistence live in the `threads` module: one append-only JSONL rollout
//! per thread under `$AGENTWIRE_HOME/sessions/` (moved to `archived_sessions/` on archive) and
//! a SQLite index, `$AGENTWIRE_HOME/state.sqlite`, rebuilt from the rollouts whenever it is
//! missing or corrupt.
//!
//! Turns live in the `turns` module and get their model output from a model provider
//! (`agentwire-providers`): the fixture provider, which replays a scripted conversation (the
//! built-in script, or the one `fixture_script` in `$AGENTWIRE_HOME/config.toml` names), or a
//! server speaking the OpenAI Responses or chat-completions API configured under
//! `[model_providers]` there. The tools they run, the configuration, the MCP client and the
//! `fs/*` and search requests are crates of their own too; `engine/README.md` is the map.

mod accounts;
// unified exec: `thread/backgroundTerminals/*` (0.7.0)
mod background_terminals;
mod catalog;
mod codex_import;
mod command_exec;
mod config_rpc;
mod diagnostics;
mod features;
mod feedback;
mod handler;
mod history_search;
mod hooks;
mod initialize;
mod legacy;
mod mcp_rpc;
mod mcp_status;
mod memory;
mod organisation;
mod permission_profiles;
mod plugins;
// Request work on tokio's blocking pool (`stored`, `blocking`).
mod pool;
mod providers_rpc;
mod rollout_compress;
mod skills;
mod thread_settings;
mod thread_surface;
mod threads;
mod turns;
mod workspace_rpc;
// thread/sample, elicitation counters, environments (0.6.0)
mod elicitation_count;
mod environment_rpc;
mod thread_sample;
// turn notifications area: experimental Thread members, deprecation notices (0.6.0)
mod deprecations;
mod thread_extras;

pub use agentwire_tools::patch::confined::apply_text as apply_patch_text;
pub use agentwire_tools::sandbox;

use std::path::PathBuf;
use std::sync::Arc;

pub use codex_import::ImportReport;
// Sign-in from the terminal (`agentwire login`).
pub use accounts::terminal::{SignIn, mask_key, remove_api_key, sign_in, store_api_key};
pub use agentwire_config::defaults::ThreadDefaults;
pub use agentwire_config::overrides::parse_override as parse_config_override;
pub use agentwire_store::StoreUrl;
// Timestamps as the wire's strings (also the ACP face's `updatedAt`).
pub use agentwire_support::timestamps::rfc3339;
pub use agentwire_support::tls::install_crypto_provider;

/// The engine's settings.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Where threads, the index and `config.toml` live (`$AGENTWIRE_HOME`, default `~/.agentwire`).
    pub home: PathBuf,
    /// The program that confines tool commands to the sandbox policy
    /// (`<program> sandbox-exec --policy JSON --cwd DIR -- COMMAND…`): the `agentwire` binary
    /// itself. Without it, commands that a policy would confine are refused.
    pub sandbox_exe: Option<PathBuf>,
    /// Paths of the server that no confined command may see, besides `home` (always hidden):
    /// a websocket token file, a Unix socket outside the home.
    pub private_paths: Vec<PathBuf>,
    /// `-c key=value` overrides of the command line (dotted key path, TOML value), in order;
    /// they rank above every configuration file.
    pub config_overrides: Vec<String>,
    /// The profile selected on the command line (`--profile`), over the `profile` key.
    pub profile: Option<String>,
    /// Where threads are kept (`--store`), over `[store] url` in `config.toml`; the embedded
    /// store under `home` when neither says.
    pub store: Option<StoreUrl>,
}

impl EngineConfig {
    /// The home directory from `$AGENTWIRE_HOME`, else `~/.agentwire`, else `./.agentwire`.
    pub fn from_env() -> Self {
        let home = std::env::var_os("AGENTWIRE_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".agentwire")))
            .unwrap_or_else(|| PathBuf::from(".agentwire"));
        Self {
            home,
            sandbox_exe: None,
            private_paths: Vec::new(),
            config_overrides: Vec::new(),
            profile: None,
            store: None,
        }
    }
}

/// The reference engine.
#[derive(Debug)]
pub struct Engine {
    config: EngineConfig,
    threads: Arc<threads::Threads>,
    turns: Arc<turns::Turns>,
    command_exec: command_exec::CommandExecs,
    config_store: Arc<agentwire_config::Store>,
    accounts: Arc<accounts::Accounts>,
    catalog: catalog::Catalog,
    search: agentwire_files::search::Search,
    /// The thread searches in flight (`thread/search*`), for their cancellation.
    history_search: history_search::Searches,
    mcp: Arc<agentwire_mcp::McpManager>,
    fs: agentwire_files::fs::Fs,
    skills: Arc<skills::Skills>,
    /// Projects, thread sections, attachment owners and the drains of thread queues.
    organisation: Arc<organisation::Organisation>,
    /// Serialises the requests that change marketplaces and installed plugins.
    plugins: Arc<plugins::Plugins>,
    /// When the engine started (for `server/diagnostics`).
    started: std::time::Instant,
    /// The `thread/sample` calls in flight, for their cancellation.
    samples: thread_sample::Samples,
    /// The pending out-of-band elicitations of loaded threads.
    elicitations: elicitation_count::Elicitations,
}

impl Engine {
    /// An engine with `config` and the built-in thread defaults. Opens the thread storage
    /// under `config.home`: creates it if needed, and rebuilds the index from the rollouts if
    /// it is missing or corrupt. A storage failure is logged; thread requests then answer with
    /// the reason.
    pub fn new(config: EngineConfig) -> Self {
        Self::with_defaults(config, ThreadDefaults::default())
    }

    /// An engine whose new threads get `defaults` for the settings clients leave out, except
    /// those the configuration (`config.toml` under `config.home`, project layers, `-c`
    /// overrides) sets. Reads the model provider settings from there too; a problem there is
    /// logged and reported to clients as `configWarning`.
    pub fn with_defaults(config: EngineConfig, defaults: ThreadDefaults) -> Self {
        let config_store = Arc::new(agentwire_config::Store::new(
            &config.home,
            defaults,
            &config.config_overrides,
            config.profile.as_deref(),
        ));
        let effective = config_store.effective(None);
        for problem in &effective.problems {
            tracing::warn!(problem = problem.text(), path = ?problem.path, "configuration problem");
        }
        let sandbox = config.sandbox_exe.clone().map(|exe| {
            let mut hidden = vec![config.home.clone()];
            hidden.extend(config.private_paths.iter().cloned());
            // `sandbox-exec` mounts over them before it changes directory: make them absolute.
            let hidden: Vec<PathBuf> = hidden
                .into_iter()
                .map(|p| std::path::absolute(&p).unwrap_or(p))
                .collect();
            sandbox::SandboxHelper {
                exe,
                hidden: hidden.into(),
                limits: effective
                    .file
                    .sandbox_limits
                    .as_ref()
                    .map_or(sandbox::SandboxLimits::DEFAULT, |table| table.limits()),
            }
        });
        let command_exec = command_exec::CommandExecs::new(sandbox.clone());
        let store = match config.store.clone().map(Ok).or_else(|| {
            let url = effective.file.store.as_ref()?.url.as_deref()?;
            Some(StoreUrl::parse(url).map_err(|e| format!("[store] url in config.toml: {e}")))
        }) {
            None => agentwire_store::open(&StoreUrl::Embedded, &config.home),
            Some(Ok(url)) => agentwire_store::open(&url, &config.home),
            Some(Err(error)) => {
                tracing::error!(error, "thread storage unavailable");
                Arc::new(agentwire_store::Unavailable(error))
            }
        };
        let threads = Arc::new(threads::Threads::open(store, config_store.clone()));
        let fs = agentwire_files::fs::Fs::new(&config.home, &config.private_paths, threads.clone())
            .with_copy_budget(effective.file.fs_copy_max_bytes); // issue 32: fs/copy budget
        let accounts = Arc::new(accounts::Accounts::new(&config.home));
        let provider = Arc::new(agentwire_config::providers::LiveProviders::new(
            config.home.clone(),
            config_store.clone(),
            accounts.clone(),
        ));
        let mcp = Arc::new(agentwire_mcp::McpManager::new(
            config_store.clone(),
            config.home.clone(),
            plugins::mcp_servers,
        ));
        let turns = Arc::new(turns::Turns::new(
            threads.clone(),
            provider,
            sandbox,
            config_store.clone(),
        ));
        turns.set_mcp(mcp.clone());
        // Skills offered to the model: the same skills (and extra roots) as `skills/list`.
        let skills: Arc<skills::Skills> = Arc::default();
        turns.set_skills(skills.clone(), config.home.clone());
        turns.accept_relayed();
        let organisation = Arc::new(organisation::Organisation::open(&config.home));
        Self {
            config,
            threads,
            turns,
            command_exec,
            config_store,
            accounts,
            catalog: catalog::Catalog::default(),
            search: agentwire_files::search::Search::new(),
            history_search: history_search::Searches::default(),
            mcp,
            fs,
            skills,
            organisation,
            plugins: Arc::default(),
            started: std::time::Instant::now(),
            samples: thread_sample::Samples::default(),
            elicitations: elicitation_count::Elicitations::default(),
        }
    }

    /// The `[otel]` table (OpenTelemetry export) of the configuration `config` names (the
    /// user's `config.toml`, the profile, the `-c` overrides), read as the server starts,
    /// before the engine exists (logging is set up first). A bad value reads as left out; the
    /// engine reports it as a configuration problem once it starts.
    pub fn otel_config(config: &EngineConfig) -> agentwire_runtime::telemetry::OtelConfig {
        agentwire_config::Store::new(
            &config.home,
            ThreadDefaults::default(),
            &config.config_overrides,
            config.profile.as_deref(),
        )
        .effective(None)
        .file
        .otel
        .clone()
    }

    /// Its settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The effective configuration that new work sees now (every layer except project ones,
    /// as of this call; cached until a file changes or is written).
    #[allow(dead_code)] // the accessor the other areas of the engine read settings through
    pub(crate) fn config_file(&self) -> Arc<agentwire_config::ConfigFile> {
        self.config_store.effective(None).file.clone()
    }
}
