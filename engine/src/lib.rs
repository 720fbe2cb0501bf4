//! agentwire-engine: the reference engine behind the app-server runtime.
//!
//! It implements the generated [`Handler`] trait; it never parses JSON-RPC itself. Methods it
//! does not implement yet answer "method not found" through the trait's defaults.
//!
//! Threads and their persistence live in the `threads` module: one append-only JSONL rollout
//! per thread under `$AGENTWIRE_HOME/sessions/` (moved to `archived_sessions/` on archive) and
//! a SQLite index, `$AGENTWIRE_HOME/state.sqlite`, rebuilt from the rollouts whenever it is
//! missing or corrupt.
//!
//! Turns live in the `turns` module and get their model output from a model provider
//! (`provider`): the fixture provider, which replays a scripted conversation (the built-in
//! script, or the one `fixture_script` in `$AGENTWIRE_HOME/config.toml` names), or a server
//! speaking the OpenAI chat-completions API configured under `[model_providers]` there.

mod accounts;
mod catalog;
mod command_exec;
mod config;
mod handler;
mod legacy;
mod mcp_status;
mod provider;
mod search;
mod threads;
mod tools;
mod turns;

pub use tools::sandbox;

use std::path::PathBuf;
use std::sync::Arc;

pub use threads::meta::ThreadDefaults;

/// The engine's settings.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Where threads, the index and `config.toml` live (`$AGENTWIRE_HOME`, default `~/.agentwire`).
    pub home: PathBuf,
    /// The program that confines tool commands to the sandbox policy
    /// (`<program> sandbox-exec --policy JSON --cwd DIR -- COMMAND…`): the `agentwire` binary
    /// itself. Without it, commands that a policy would confine are refused.
    pub sandbox_exe: Option<PathBuf>,
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
        }
    }
}

/// The reference engine.
#[derive(Debug)]
pub struct Engine {
    config: EngineConfig,
    threads: Arc<threads::Threads>,
    turns: Arc<turns::Turns>,
    search: search::Search,
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
    /// `model` and `model_provider`, which `config.toml` under `config.home` overrides when it
    /// sets them. Reads the model provider settings from there too; a problem there is logged,
    /// and turns then fail with the reason.
    pub fn with_defaults(config: EngineConfig, mut defaults: ThreadDefaults) -> Self {
        let file = config::ConfigFile::load(&config.home);
        if let Ok(file) = &file {
            if let Some(model) = file.model.clone().filter(|m| !m.is_empty()) {
                defaults.model = model;
            }
            if let Some(provider) = file.model_provider.clone().filter(|p| !p.is_empty()) {
                defaults.model_provider = provider;
            }
        }
        let threads = Arc::new(threads::Threads::open(&config.home, defaults));
        let provider = provider::from_config(&config.home, file);
        let turns = Arc::new(turns::Turns::new(
            threads.clone(),
            provider,
            config.sandbox_exe.clone(),
        ));
        Self {
            config,
            threads,
            turns,
            search: search::Search::new(),
        }
    }

    /// Its settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The effective configuration that new work sees now (`config.toml` as of this call;
    /// the defaults when it is missing or broken).
    pub(crate) fn config_file(&self) -> Arc<config::ConfigFile> {
        Arc::new(config::ConfigFile::load(&self.config.home).unwrap_or_default())
    }
}
