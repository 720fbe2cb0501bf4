//! MCP servers as tools of the engine: the servers configured under `[mcp_servers.<name>]`,
//! started when first needed and kept running, their tools offered to the model.
//!
//! # Module map
//!
//! - this file: `McpManager`, one `slot::Slot` per configured server;
//! - `slot`: one server's connection: started on first use, restarted on the next use after
//!   it exited or its configuration changed, with the state `mcpServerStatus/list` reports;
//! - `connect`: starting a connection over stdio (a child process with a whitelisted
//!   environment) or streamable HTTP, with the start-up timeout;
//! - `client`: the MCP client side ([`rmcp::ClientHandler`]): progress notifications routed
//!   to the running call, elicitations forwarded to the app-server client;
//! - `names`: the function names the model sees (`server__tool`);
//! - `content`: MCP results as protocol types and as text for the model;
//! - `status`: `mcpServerStatus/list` and `mcpServer/startupStatus/updated`;
//! - `rpc`: `mcpServer/tool/call`, `mcpServer/resource/read`, `config/mcpServer/reload`;
//! - `oauth`: `mcpServer/oauth/login` and the OAuth bearer token of HTTP servers;
//! - [`cli`]: `agentwire mcp list|get|add|remove`, editing `config.toml`.
//!
//! The servers are those of `[mcp_servers.<name>]` and those the enabled installed plugins
//! bring, named `<plugin>:<server>` (so a plugin never replaces a server the user configured;
//! a configured table of that same name wins).
//!
//! MCP framing, the handshake and the transports are the `rmcp` SDK's.

pub mod cli;
pub(crate) mod client;
pub(crate) mod connect;
pub(crate) mod content;
pub(crate) mod names;
pub(crate) mod oauth;
pub(crate) mod rpc;
pub(crate) mod slot;
pub(crate) mod status;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use agentwire_runtime::Hub;

// The model-facing shape of a tool lives with the providers.
use crate::config::{McpServerConfig, McpToolApproval, Store};
pub(crate) use agentwire_providers::ModelTool;
use slot::Slot;

/// Default start-up time limit (initialize and the tool list), in seconds.
pub(crate) const DEFAULT_STARTUP_TIMEOUT_SEC: f64 = 10.0;
/// How long turns wait before trying again to start a server whose start failed (explicit
/// uses, `mcpServerStatus/list` and required-server checks try at once).
pub(crate) const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(30);
/// Default time limit of one tool call, in seconds.
pub(crate) const DEFAULT_TOOL_TIMEOUT_SEC: f64 = 60.0;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why an MCP server could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum McpError {
    /// No `[mcp_servers.<name>]` table.
    #[error("no MCP server named `{0}` is configured")]
    Unknown(String),
    /// `enabled = false`.
    #[error("the MCP server `{0}` is disabled (enabled = false)")]
    Disabled(String),
    /// The tool is filtered out by `enabled_tools` / `disabled_tools`.
    #[error("the tool `{tool}` of the MCP server `{server}` is disabled in config.toml")]
    ToolDisabled {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// Start-up failed.
    #[error("the MCP server `{server}` failed to start: {reason}")]
    Startup {
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
    /// A request to a running server failed.
    #[error("the MCP server `{server}` failed: {reason}")]
    Call {
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
}

/// Who an MCP server's elicitation goes to while a request of it runs.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// The connection that receives `mcpServer/elicitation/request`.
    pub peer: agentwire_runtime::Peer,
    /// The thread.
    pub thread_id: String,
    /// The running turn, if any.
    pub turn_id: Option<String>,
}

/// The MCP servers of the engine.
pub(crate) struct McpManager {
    config: Arc<Store>,
    /// `$AGENTWIRE_HOME`: installed plugins and stored OAuth credentials.
    home: PathBuf,
    slots: Mutex<BTreeMap<String, Arc<Slot>>>,
    /// Where start-up state changes are broadcast (set by the first request that uses MCP).
    hub: OnceLock<Arc<Hub>>,
    /// Qualified model function names → (server, tool), as last offered.
    names: Mutex<HashMap<String, (String, String)>>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field("running", &lock(&self.slots).keys().collect::<Vec<_>>())
            .finish()
    }
}

impl McpManager {
    /// The servers configured in `config` and brought by the plugins installed in `home`.
    pub(crate) fn new(config: Arc<Store>, home: PathBuf) -> Self {
        Self {
            config,
            home,
            slots: Mutex::new(BTreeMap::new()),
            hub: OnceLock::new(),
            names: Mutex::new(HashMap::new()),
        }
    }

    /// Remembers where to broadcast start-up changes.
    pub(crate) fn attach(&self, hub: &Arc<Hub>) {
        let _ = self.hub.set(hub.clone());
    }

    /// The servers, by name: the effective user configuration's, then those of the enabled
    /// installed plugins as `<plugin>:<server>` (a configured name wins). Reads the plugin
    /// folders (a few small files).
    pub(crate) fn configured(&self) -> BTreeMap<String, McpServerConfig> {
        let mut servers = self.config.effective(None).file.mcp_servers.clone();
        for (name, config) in crate::plugins::mcp_servers(&self.home) {
            servers.entry(name).or_insert(config);
        }
        servers
    }

    /// `$AGENTWIRE_HOME`.
    pub(crate) fn home(&self) -> &std::path::Path {
        &self.home
    }

    /// Stops server `name`'s connection (if any); the next use starts it again (after an
    /// OAuth sign-in, with the new token).
    pub(crate) fn forget(&self, name: &str) {
        lock(&self.slots).remove(name);
    }

    /// The slot of server `name` as configured now: created on first use, replaced (the old
    /// connection stopped) when its configuration changed.
    pub(crate) fn slot(&self, name: &str) -> Result<Arc<Slot>, McpError> {
        self.slot_in(name, &self.configured())
    }

    /// [`Self::slot`] with the servers `configured` already read.
    fn slot_in(
        &self,
        name: &str,
        configured: &BTreeMap<String, McpServerConfig>,
    ) -> Result<Arc<Slot>, McpError> {
        let Some(config) = configured.get(name) else {
            lock(&self.slots).remove(name);
            return Err(McpError::Unknown(name.to_owned()));
        };
        let mut slots = lock(&self.slots);
        if let Some(slot) = slots.get(name)
            && slot.config == *config
        {
            return Ok(slot.clone());
        }
        let slot = Arc::new(Slot::new(
            name,
            config.clone(),
            self.hub.get().cloned(),
            self.home.clone(),
        ));
        slots.insert(name.to_owned(), slot.clone());
        Ok(slot)
    }

    /// Forgets every server whose configuration changed or that is no longer configured (their
    /// connections stop); the others keep running.
    pub(crate) fn reload(&self) {
        let configured = self.configured();
        lock(&self.slots).retain(|name, slot| configured.get(name) == Some(&slot.config));
        lock(&self.names).clear();
    }

    /// Starts every enabled server (concurrently) that is not running, except, with
    /// `patient`, those whose start failed less than [`RETRY_AFTER`] ago; returns the start-up
    /// failures of the required ones.
    pub(crate) async fn start_all(&self, patient: bool) -> Vec<McpError> {
        let configured = self.configured();
        let starts = configured
            .iter()
            .filter(|(_, config)| config.enabled != Some(false))
            .filter_map(|(name, config)| {
                let slot = self.slot_in(name, &configured).ok()?;
                if patient && slot.failed_recently(RETRY_AFTER) {
                    return None;
                }
                let required = config.required == Some(true);
                Some(async move { (required, slot.connection().await) })
            });
        futures_util::future::join_all(starts)
            .await
            .into_iter()
            .filter_map(|(required, result)| match result {
                Err(error) if required => Some(error),
                _ => None,
            })
            .collect()
    }

    /// Fails with the first required server that cannot start (starting every enabled server
    /// on the way); `Ok` when none is required or all started.
    pub(crate) async fn check_required(&self) -> Result<(), McpError> {
        if !self
            .configured()
            .values()
            .any(|c| c.required == Some(true) && c.enabled != Some(false))
        {
            return Ok(());
        }
        match self.start_all(false).await.into_iter().next() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The tools offered to the model: every enabled tool of every enabled server that starts
    /// (a server that fails is left out, its failure reported by its status).
    pub(crate) async fn model_tools(&self) -> Vec<ModelTool> {
        let configured = self.configured();
        if configured.values().all(|c| c.enabled == Some(false)) {
            return Vec::new();
        }
        self.start_all(true).await;
        let mut tools = Vec::new();
        let mut map = HashMap::new();
        let mut taken = std::collections::HashSet::new();
        for (name, config) in configured.iter().filter(|(_, c)| c.enabled != Some(false)) {
            let Ok(slot) = self.slot_in(name, &configured) else {
                continue;
            };
            slot.refresh_tools().await;
            for tool in slot.tools() {
                if !tool_enabled(config, &tool.name) {
                    continue;
                }
                let qualified = names::qualify(name, &tool.name, &taken);
                taken.insert(qualified.clone());
                map.insert(qualified.clone(), (name.clone(), tool.name.to_string()));
                tools.push(ModelTool {
                    name: qualified,
                    description: tool
                        .description
                        .as_deref()
                        .map(str::to_owned)
                        .unwrap_or_else(|| {
                            format!("The `{}` tool of the `{name}` MCP server.", tool.name)
                        }),
                    parameters: serde_json::Value::Object((*tool.input_schema).clone()),
                });
            }
        }
        *lock(&self.names) = map;
        tools
    }

    /// The (server, tool) a model function name stands for, if it is an MCP tool.
    pub(crate) fn resolve(&self, function: &str) -> Option<(String, String)> {
        lock(&self.names).get(function).cloned()
    }

    /// How a call of `tool` on `server` is approved: the tool's mode, else the server's, else
    /// `auto`.
    pub(crate) fn approval(&self, server: &str, tool: &str) -> McpToolApproval {
        let configured = self.configured();
        let Some(config) = configured.get(server) else {
            return McpToolApproval::Auto;
        };
        config
            .tools
            .get(tool)
            .and_then(|t| t.approval_mode)
            .or(config.default_tools_approval_mode)
            .unwrap_or_default()
    }
}

/// Whether `tool` passes the server's `enabled_tools` / `disabled_tools` filter.
pub(crate) fn tool_enabled(config: &McpServerConfig, tool: &str) -> bool {
    config
        .enabled_tools
        .as_ref()
        .is_none_or(|only| only.iter().any(|t| t == tool))
        && !config.disabled_tools.iter().any(|t| t == tool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_filter_applies_both_lists() {
        let mut config = McpServerConfig::default();
        assert!(tool_enabled(&config, "echo"));
        config.disabled_tools = vec!["echo".to_owned()];
        assert!(!tool_enabled(&config, "echo"));
        assert!(tool_enabled(&config, "add"));
        config.enabled_tools = Some(vec!["add".to_owned(), "echo".to_owned()]);
        assert!(!tool_enabled(&config, "echo"));
        assert!(tool_enabled(&config, "add"));
        assert!(!tool_enabled(&config, "other"));
    }
}
