//! `agentwire mcp-server`: the agentwire engine offered to MCP hosts (Claude Desktop, IDEs, agent
//! SDKs …) as two tools, `codex` and `codex-reply`, over stdio or streamable HTTP.
//!
//! MCP itself (framing, lifecycle, transports) is the official Rust SDK, rmcp. Each MCP session
//! drives the engine in process through an app-server connection of its own
//! ([`engine_link`]), so threads, persistence, sandboxing and approvals are exactly those of
//! `agentwire app-server`. What the session sends back is translated: turn notifications into
//! `codex/event` notifications ([`events`]), approval requests into `elicitation/create`
//! requests ([`approvals`]).

pub mod approvals;
mod calls;
pub mod engine_link;
pub mod events;
mod handler;
mod host;
pub mod http;
pub mod listen;
mod stdin_end;
pub mod tools;

use std::time::Duration;

use agentwire_engine::{Engine, EngineConfig};
use agentwire_runtime::{BearerAuth, termination_signal};
use agentwire_runtime::{RuntimeConfig, Server};
use rmcp::ServiceExt;

pub use handler::{CodexMcpServer, SERVER_NAME, SERVER_TITLE};
pub use listen::McpListen;

/// How to run the server.
pub struct Options {
    /// Where to listen.
    pub listen: McpListen,
    /// The bearer token HTTP clients must present; `None` for none (loopback only).
    pub auth: Option<BearerAuth>,
    /// The engine's configuration.
    pub engine: EngineConfig,
    /// The app-server runtime's configuration.
    pub runtime: RuntimeConfig,
}

/// Serves until the transport ends (stdin closes) or SIGINT/SIGTERM, then lets running turns
/// wind down (interrupted and recorded).
pub fn run(options: Options) -> Result<(), String> {
    if options.auth.is_some() && options.listen == McpListen::Stdio {
        return Err("--token-file applies to http:// only".to_owned());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let server = Server::new(
        Engine::new(options.engine),
        options.runtime,
        runtime.handle().clone(),
    );
    let result = runtime.block_on(async {
        let served = match options.listen {
            McpListen::Stdio => serve_stdio(&server).await,
            McpListen::Http { addr, path } => {
                http::serve(
                    server.clone(),
                    addr,
                    &path,
                    options.auth,
                    termination_signal(),
                )
                .await
            }
        };
        server.stop();
        server.drain().await;
        served
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

async fn serve_stdio(server: &Server<Engine>) -> Result<(), String> {
    let handler = CodexMcpServer::new(server.clone());
    // At the end of the host's input, running turns are interrupted and recorded at once, and
    // their calls stop writing to the host, so rmcp's wait for the calls' answers is short.
    let (stdin, stdout) = rmcp::transport::stdio();
    let (stopping, gone) = (server.clone(), handler.input_ended());
    let stdin = stdin_end::StopAtEnd::new(stdin, move || {
        gone.cancel();
        stopping.stop();
    });
    let running = handler
        .serve((stdin, stdout))
        .await
        .map_err(|e| format!("MCP session failed to start: {e}"))?;
    let cancel = running.cancellation_token();
    tokio::select! {
        quit = running.waiting() => {
            quit.map(|_| ()).map_err(|e| format!("MCP session failed: {e}"))
        }
        () = termination_signal() => {
            cancel.cancel();
            Ok(())
        }
    }
}
