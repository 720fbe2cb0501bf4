//! `agentwire import codex [--dry-run]`: brings a Codex home (`$CODEX_HOME`, else `~/.codex`)
//! over into `$AGENTWIRE_HOME`: its settings, API key, MCP servers, skills, memories and saved
//! sessions (the logic is the engine's, shared with `externalAgentConfig/import`).

use std::process::ExitCode;

use agentwire_engine::{Engine, EngineConfig};
use clap::Subcommand;

use crate::ConfigOverrides;

/// `agentwire import …`.
#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Import what the Codex home has that this home lacks (exits 1 when something could not
    /// be imported; importing again skips what is already here).
    Codex {
        /// Only list what would be imported; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// Runs `command` on `$AGENTWIRE_HOME`.
pub fn run(command: ImportCommand, overrides: ConfigOverrides) -> Result<ExitCode, String> {
    let ImportCommand::Codex { dry_run } = command;
    let config = EngineConfig {
        config_overrides: overrides.flags(),
        profile: overrides.profile,
        ..EngineConfig::from_env()
    };
    let report = Engine::new(config).import_codex(dry_run)?;
    crate::stdout::print(&report.text);
    Ok(if report.failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
