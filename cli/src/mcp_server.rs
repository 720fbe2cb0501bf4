//! `agentwire mcp-server`: the engine offered to MCP hosts (see the `agentwire-mcp-server` crate).

use std::path::PathBuf;
use std::process::ExitCode;

use agentwire_engine::{Engine, EngineConfig};
use agentwire_mcp_server::{McpListen, Options};
use agentwire_runtime::BearerAuth;
use agentwire_runtime::RuntimeConfig;
use clap::Args;

/// How to serve MCP.
#[derive(Debug, Args)]
pub struct McpServerArgs {
    /// Where to listen: `stdio://` (one JSON-RPC message per line on stdin/stdout) or
    /// `http://IP:PORT/PATH` (the streamable HTTP transport; port 0 picks a free port, printed on
    /// stderr). Non-loopback addresses need `--token-file`.
    #[arg(long, value_name = "URL", default_value = "stdio://")]
    listen: McpListen,
    /// http://: require `Authorization: Bearer <token>`, the token being this file's contents
    /// without surrounding whitespace.
    #[arg(long, value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// Also serve `GET /metrics` (OpenMetrics text) on this address. A non-loopback address
    /// needs `--token-file` (which then applies to it too); without one only processes of
    /// the server's own user are served.
    #[arg(long, value_name = "IP:PORT")]
    metrics_listen: Option<std::net::SocketAddr>,
}

/// Runs the MCP server until its transport ends.
pub fn run(args: McpServerArgs, overrides: crate::ConfigOverrides) -> Result<ExitCode, String> {
    // The configuration first: logging and OpenTelemetry export (`[otel]`, read once, now, as
    // app-server reads it) are set up before anything logs; the exporters flush when `_otel`
    // is dropped, as this function returns.
    let engine = EngineConfig {
        sandbox_exe: std::env::current_exe().ok(),
        config_overrides: overrides.flags(),
        profile: overrides.profile,
        ..EngineConfig::from_env()
    };
    let otel_config = Engine::otel_config(&engine).with_home(&engine.home);
    // rmcp logs every message it receives at `info`; only its warnings are of interest here.
    let _otel = crate::logging::init_with_otel("info,rmcp=warn", None, &otel_config);
    let auth = args
        .token_file
        .as_deref()
        .map(BearerAuth::from_token_file)
        .transpose()
        .map_err(|e| e.to_string())?;
    if let Some(addr) = args.metrics_listen {
        crate::metrics_listen::start(addr, auth.clone())?;
    }
    // Over stdio the token is the metrics listener's only.
    let auth = match args.listen {
        McpListen::Stdio if args.metrics_listen.is_some() => None,
        _ => auth,
    };
    // A confined command must not read the token file (the home is always hidden).
    let private_paths = args
        .token_file
        .iter()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let engine = EngineConfig {
        private_paths,
        ..engine
    };
    let runtime = RuntimeConfig::new(engine.home.clone());
    agentwire_mcp_server::run(Options {
        listen: args.listen,
        auth,
        engine,
        runtime,
    })
    .map(|()| ExitCode::SUCCESS)
}
