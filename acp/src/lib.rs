//! `agentwire acp`: the agentwire engine offered to editors (Zed and any other ACP client) over
//! the Agent Client Protocol, one JSON-RPC message per line on stdio.
//!
//! ACP itself (framing, routing, the message types) is the official Rust SDK,
//! `agent-client-protocol`; nothing here restates its schema. Like `agentwire mcp-server`, the
//! process runs the app-server runtime in process and drives it through one app-server
//! connection ([`agentwire_mcp_server::engine_link`]), so an ACP session *is* an agentwire
//! thread: the session id is the thread id, stored in the same store, listed by `thread/list`
//! and resumable by any other client.
//!
//! Where each part lives:
//! - [`agent`]: the ACP methods served (`initialize`, `authenticate`, `session/new`,
//!   `session/load`, `session/set_mode`, `session/prompt`, `session/cancel`) and the state of
//!   the sessions of the connection.
//! - [`lifecycle`]: `session/list`, `session/resume` and `session/close`.
//! - [`config_options`]: the session's config options (mode, model, reasoning effort) and
//!   `session/set_config_option`.
//! - [`client_tools`]: the client's file system and terminals as tools of the model.
//! - [`mcp`]: the client's MCP servers as tools of the session's thread.
//! - [`modes`]: the session modes, each an approval policy and sandbox preset.
//! - [`prompt`]: ACP prompt content blocks as the engine's user input.
//! - [`turn`]: one `session/prompt`: a turn on the engine, its notifications streamed as
//!   `session/update`s, its approvals asked as `session/request_permission`.
//! - [`updates`]: engine notifications and items as ACP session updates.
//! - [`diff`]: a file change's unified diff as the old and new text ACP diffs carry.

pub mod agent;
pub mod client_tools;
pub mod config_options;
pub mod diff;
pub mod lifecycle;
pub mod mcp;
pub mod modes;
pub mod prompt;
pub mod turn;
pub mod updates;

use std::time::Duration;

use agentwire_engine::{Engine, EngineConfig};
use agentwire_runtime::{RuntimeConfig, Server};

/// The name the agent gives itself in `initialize`'s `agentInfo`.
pub const AGENT_NAME: &str = "agentwire";

/// How to run the ACP agent.
pub struct Options {
    /// The engine's configuration.
    pub engine: EngineConfig,
    /// The app-server runtime's configuration.
    pub runtime: RuntimeConfig,
}

/// Serves ACP on stdin/stdout until the client closes stdin, then lets running turns wind down
/// (interrupted and recorded).
pub fn run(options: Options) -> Result<(), String> {
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
        let served = agent::serve_stdio(&server).await;
        server.stop();
        server.drain().await;
        served
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}
