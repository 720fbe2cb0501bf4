//! `agentwire acp`: the engine offered to editors over the Agent Client Protocol on stdio (see
//! the `agentwire-acp` crate and docs/acp.md).

use std::process::ExitCode;

use agentwire_acp::Options;
use agentwire_engine::EngineConfig;
use agentwire_runtime::RuntimeConfig;

/// Serves ACP on stdin/stdout until the client closes stdin.
pub fn run(overrides: crate::ConfigOverrides) -> Result<ExitCode, String> {
    // The ACP SDK logs every message it routes at `debug`; stdout carries ACP only.
    crate::logging::init_with_default("info,agent_client_protocol=warn");
    let engine = EngineConfig {
        sandbox_exe: std::env::current_exe().ok(),
        config_overrides: overrides.flags(),
        profile: overrides.profile,
        ..EngineConfig::from_env()
    };
    let runtime = RuntimeConfig::new(engine.home.clone());
    agentwire_acp::run(Options { engine, runtime }).map(|()| ExitCode::SUCCESS)
}
