//! agentwire-engine: the reference engine behind the app-server runtime.
//!
//! It implements the generated [`Handler`] trait; it never parses JSON-RPC itself. Methods it
//! does not implement yet answer "method not found" through the trait's defaults.

use std::path::PathBuf;

use agentwire_runtime::Handler;

/// The engine's settings.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Where threads, the index and `config.toml` live (`$AGENTWIRE_HOME`, default `~/.agentwire`).
    pub home: PathBuf,
}

impl EngineConfig {
    /// The home directory from `$AGENTWIRE_HOME`, else `~/.agentwire`, else `./.agentwire`.
    pub fn from_env() -> Self {
        let home = std::env::var_os("AGENTWIRE_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".agentwire")))
            .unwrap_or_else(|| PathBuf::from(".agentwire"));
        Self { home }
    }
}

/// The reference engine.
#[derive(Debug)]
pub struct Engine {
    config: EngineConfig,
}

impl Engine {
    /// An engine with `config`.
    pub fn new(config: EngineConfig) -> Self {
        Self { config }
    }

    /// Its settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }
}

impl Handler for Engine {}
