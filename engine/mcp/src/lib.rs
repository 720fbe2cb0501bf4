//! agentwire-mcp: MCP servers as tools of the engine: the servers configured under
//! `[mcp_servers.<name>]`, started when first needed and kept running, their tools offered to
//! the model. It is an internal crate of agentwire, whose API follows the engine's needs, not
//! semver.
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
//! - the engine's `mcp_rpc`: `mcpServer/tool/call`, `mcpServer/resource/read`,
//!   `config/mcpServer/reload` (they check the thread first);
//! - `oauth`: `mcpServer/oauth/login` and the OAuth bearer token of HTTP servers;
//! - [`cli`]: `agentwire mcp list|get|add|remove`, editing `config.toml`.
//!
//! The servers are those of `[mcp_servers.<name>]` and those the enabled installed plugins
//! bring ([`PluginServers`], which the engine's plugins answer), named `<plugin>:<server>`
//! (so a plugin never replaces a server the user configured; a configured table of that same
//! name wins).
//!
//! MCP framing, the handshake and the transports are the `rmcp` SDK's.

pub mod cli;
mod client;
mod connect;
pub mod content;
pub mod names;
mod oauth;
pub mod slot;
pub mod status;
mod vocabulary;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use agentwire_config::{McpServerConfig, McpToolApproval, Store};
use agentwire_protocol::{McpServerOauthLoginParams, McpServerOauthLoginResponse};
use agentwire_runtime::{HandlerError, Hub, RequestContext};
use agentwire_support::lock;

// The model-facing shape of a tool lives with the providers.
pub use agentwire_providers::ModelTool;
use slot::Slot;
pub use vocabulary::{Caller, McpError};
use vocabulary::{RETRY_AFTER, tool_enabled};

/// The MCP servers the enabled installed plugins under a home bring, as `[mcp_servers.<name>]`
/// tables would give them, named `<plugin>:<server>` (the engine's plugins answer).
pub type PluginServers = fn(&Path) -> BTreeMap<String, McpServerConfig>;

/// The MCP servers of the engine.
pub struct McpManager {
    config: Arc<Store>,
    /// `$AGENTWIRE_HOME`: installed plugins and stored OAuth credentials.
    home: PathBuf,
    /// The servers the installed plugins bring.
    plugin_servers: PluginServers,
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
    /// The servers configured in `config` and brought by the plugins installed in `home`
    /// (`plugin_servers` finds those).
    pub fn new(config: Arc<Store>, home: PathBuf, plugin_servers: PluginServers) -> Self {
        Self {
            config,
            home,
            plugin_servers,
            slots: Mutex::new(BTreeMap::new()),
            hub: OnceLock::new(),
            names: Mutex::new(HashMap::new()),
        }
    }

    /// Remembers where to broadcast start-up changes.
    pub fn attach(&self, hub: &Arc<Hub>) {
        let _ = self.hub.set(hub.clone());
    }

    /// The servers, by name: the effective user configuration's, then those of the enabled
    /// installed plugins as `<plugin>:<server>` (a configured name wins). Reads the plugin
    /// folders (a few small files).
    pub fn configured(&self) -> BTreeMap<String, McpServerConfig> {
        let mut servers = self.config.effective(None).file.mcp_servers.clone();
        for (name, config) in (self.plugin_servers)(&self.home) {
            servers.entry(name).or_insert(config);
        }
        servers
    }

    /// `$AGENTWIRE_HOME`.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Serves `mcpServer/oauth/login` for one of these servers (the authorization-code grant
    /// with PKCE, see `docs/mcp-client.md`); a sign-in that completes drops the server's
    /// connection, so the next use connects with the token.
    pub async fn oauth_login(
        self: &Arc<Self>,
        context: RequestContext,
        params: McpServerOauthLoginParams,
    ) -> Result<McpServerOauthLoginResponse, HandlerError> {
        let manager = self.clone();
        let signed_in = move |name: &str| manager.forget(name);
        oauth::login(&self.configured(), &self.home, signed_in, context, params).await
    }

    /// Stops server `name`'s connection (if any); the next use starts it again (after an
    /// OAuth sign-in, with the new token).
    pub(crate) fn forget(&self, name: &str) {
        lock(&self.slots).remove(name);
    }

    /// The slot of server `name` as configured now: created on first use, replaced (the old
    /// connection stopped) when its configuration changed.
    pub fn slot(&self, name: &str) -> Result<Arc<Slot>, McpError> {
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
    pub fn reload(&self) {
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
    pub async fn check_required(&self) -> Result<(), McpError> {
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
    pub async fn model_tools(&self) -> Vec<ModelTool> {
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
    pub fn resolve(&self, function: &str) -> Option<(String, String)> {
        lock(&self.names).get(function).cloned()
    }

    /// How a call of `tool` on `server` is approved: the tool's mode, else the server's, else
    /// `auto`.
    pub fn approval(&self, server: &str, tool: &str) -> McpToolApproval {
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
