//! One configured MCP server: its connection (started on first use, restarted on the next use
//! after the server exited), and the state `mcpServerStatus/list` reports.
//!
//! Start-up is serialised per server (one `tokio` mutex held while connecting), so concurrent
//! users wait for one start rather than starting several processes. Each state change is
//! broadcast as `mcpServer/startupStatus/updated`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_config::McpServerConfig;
use agentwire_protocol::methods::McpServerStartupStatusUpdated;
use agentwire_protocol::{McpServerStartupState, McpServerStatusUpdatedNotification};
use agentwire_runtime::Hub;
use agentwire_support::lock;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest,
    ReadResourceRequestParams, ReadResourceResult, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService, ServiceError};

use super::client::{ClientSide, Shared};
use crate::vocabulary::{Caller, DEFAULT_TOOL_TIMEOUT_SEC, McpError, tool_enabled};

/// A running connection and what the server offered when it started.
pub struct Connection {
    /// The rmcp client service.
    pub(crate) service: RunningService<RoleClient, ClientSide>,
    /// The tools, as last listed (again after the server said they changed).
    pub(crate) tools: Mutex<Vec<rmcp::model::Tool>>,
    /// The resources listed at start-up.
    pub(crate) resources: Vec<rmcp::model::Resource>,
    /// The resource templates listed at start-up.
    pub(crate) templates: Vec<rmcp::model::ResourceTemplate>,
}

impl Connection {
    /// Whether the server is gone (process exited, stream closed).
    fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }
}

/// Where a server stands.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Phase {
    /// Never started (or stopped by a reload).
    NotStarted,
    /// Starting now.
    Starting,
    /// Running.
    Ready,
    /// The last start failed, or the running server exited.
    Failed(String),
}

/// One configured server.
pub struct Slot {
    /// The server's name (`[mcp_servers.<name>]`, or `<plugin>:<server>`).
    pub name: String,
    /// The configuration it was made from (a change makes a new slot).
    pub config: McpServerConfig,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    /// The state and the last connection, readable without waiting for a start.
    view: Mutex<(Phase, Option<Arc<Connection>>)>,
    shared: Arc<Shared>,
    hub: Option<Arc<Hub>>,
    /// When the last start failed (cleared by a successful start).
    start_failed_at: Mutex<Option<std::time::Instant>>,
    /// `$AGENTWIRE_HOME`, where stored OAuth credentials are read.
    home: std::path::PathBuf,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot").field("name", &self.name).finish()
    }
}

impl Slot {
    /// A server not started yet.
    pub(crate) fn new(
        name: &str,
        config: McpServerConfig,
        hub: Option<Arc<Hub>>,
        home: std::path::PathBuf,
    ) -> Self {
        Self {
            name: name.to_owned(),
            config,
            connection: tokio::sync::Mutex::new(None),
            view: Mutex::new((Phase::NotStarted, None)),
            shared: Arc::new(Shared::new(name)),
            hub,
            start_failed_at: Mutex::new(None),
            home,
        }
    }

    /// The state now; a connection whose server exited reads as failed.
    pub(crate) fn phase(&self) -> Phase {
        let view = lock(&self.view);
        match (&view.0, &view.1) {
            (Phase::Ready, Some(connection)) if connection.is_closed() => {
                Phase::Failed("the server exited; it is restarted on next use".to_owned())
            }
            (phase, _) => phase.clone(),
        }
    }

    /// Whether the last start failed less than `within` ago (turns do not retry it at every
    /// model call; explicit uses do).
    pub(crate) fn failed_recently(&self, within: Duration) -> bool {
        lock(&self.start_failed_at).is_some_and(|at| at.elapsed() < within)
    }

    /// The connection last started, even if it has since exited (for its tool list).
    pub(crate) fn last_connection(&self) -> Option<Arc<Connection>> {
        lock(&self.view).1.clone()
    }

    /// The tools of the running (or last) connection.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.last_connection()
            .map(|c| lock(&c.tools).clone())
            .unwrap_or_default()
    }

    /// Lists the tools again if the server said they changed
    /// (`notifications/tools/list_changed`) since they were last listed.
    pub async fn refresh_tools(&self) {
        let Some(connection) = self.last_connection().filter(|c| !c.is_closed()) else {
            return;
        };
        if !self
            .shared
            .tools_changed
            .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        match connection.service.peer().list_all_tools().await {
            Ok(tools) => *lock(&connection.tools) = tools,
            Err(error) => {
                tracing::warn!(server = %self.name, %error, "listing the changed tools failed");
            }
        }
    }

    fn set_phase(&self, phase: Phase, connection: Option<Arc<Connection>>) {
        let (status, error) = match &phase {
            Phase::NotStarted => return,
            Phase::Starting => (McpServerStartupState::Starting, None),
            Phase::Ready => (McpServerStartupState::Ready, None),
            Phase::Failed(reason) => (McpServerStartupState::Failed, Some(reason.clone())),
        };
        {
            let mut view = lock(&self.view);
            view.0 = phase;
            if connection.is_some() {
                view.1 = connection;
            }
        }
        if let Some(hub) = &self.hub {
            hub.broadcast::<McpServerStartupStatusUpdated>(
                &McpServerStatusUpdatedNotification::builder()
                    .name(self.name.clone())
                    .status(status)
                    .maybe_error(error)
                    .build(),
            );
        }
    }

    /// The running connection: started now if there is none or the server exited.
    pub async fn connection(&self) -> Result<Arc<Connection>, McpError> {
        if self.config.enabled == Some(false) {
            return Err(McpError::Disabled(self.name.clone()));
        }
        let mut current = self.connection.lock().await;
        if let Some(connection) = current.as_ref() {
            if !connection.is_closed() {
                return Ok(connection.clone());
            }
            tracing::warn!(server = %self.name, "MCP server exited; restarting it");
        }
        *current = None;
        self.set_phase(Phase::Starting, None);
        match super::connect::start(&self.name, &self.config, self.shared.clone(), &self.home).await
        {
            Ok(connection) => {
                *lock(&self.start_failed_at) = None;
                let connection = Arc::new(connection);
                *current = Some(connection.clone());
                self.set_phase(Phase::Ready, Some(connection.clone()));
                Ok(connection)
            }
            Err(reason) => {
                *lock(&self.start_failed_at) = Some(std::time::Instant::now());
                self.set_phase(Phase::Failed(reason.clone()), None);
                Err(McpError::Startup {
                    server: self.name.clone(),
                    reason,
                })
            }
        }
    }

    fn call_error(&self, error: impl std::fmt::Display) -> McpError {
        McpError::Call {
            server: self.name.clone(),
            reason: error.to_string(),
        }
    }

    /// Calls `tool` with `arguments`, on behalf of `caller`; `on_progress` gets each progress
    /// message the server sends meanwhile. A server found exited before the call is sent is
    /// restarted; one that exits during the call fails it.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        meta: Option<serde_json::Value>,
        caller: Caller,
        on_progress: &mut (dyn FnMut(String) + Send),
    ) -> Result<CallToolResult, McpError> {
        if !tool_enabled(&self.config, tool) {
            return Err(McpError::ToolDisabled {
                server: self.name.clone(),
                tool: tool.to_owned(),
            });
        }
        let timeout = Duration::from_secs_f64(
            self.config
                .tool_timeout_sec
                .filter(|s| s.is_finite() && *s > 0.0)
                .unwrap_or(DEFAULT_TOOL_TIMEOUT_SEC)
                .min(24.0 * 3600.0),
        );
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let request = |params: CallToolRequestParams| {
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        };
        let mut options = PeerRequestOptions::with_timeout(timeout);
        if let Some(meta) = meta.and_then(|m| serde_json::from_value(m).ok()) {
            options = options.with_meta(meta);
        }
        let mut connection = self.connection().await?;
        let handle = match connection
            .service
            .peer()
            .send_request_with_option(request(params.clone()), options)
            .await
        {
            Ok(handle) => handle,
            Err(ServiceError::TransportClosed) => {
                // Exited since it was last used: the request was never sent; start it again.
                connection = self.connection().await?;
                connection
                    .service
                    .peer()
                    .send_request_with_option(
                        request(params),
                        PeerRequestOptions::with_timeout(timeout),
                    )
                    .await
                    .map_err(|e| self.call_error(e))?
            }
            Err(error) => return Err(self.call_error(error)),
        };
        let _caller = self.shared.enter(caller);
        let mut progress = self.shared.subscribe(handle.progress_token.clone());
        // Dropped before the answer (an interrupted turn): the server is told the call is
        // cancelled (MCP `notifications/cancelled`).
        let mut cancel = CancelOnDrop {
            peer: Some(handle.peer.clone()),
            id: handle.id.clone(),
        };
        let response = handle.await_response();
        tokio::pin!(response);
        let result = loop {
            tokio::select! {
                result = &mut response => break result,
                Some(message) = progress.recv() => on_progress(message),
            }
        };
        cancel.peer = None;
        while let Ok(message) = progress.try_recv() {
            on_progress(message);
        }
        match result {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(other) => Err(self.call_error(format!(
                "unexpected answer to tools/call: {}",
                serde_json::to_string(&other).unwrap_or_default()
            ))),
            Err(ServiceError::Timeout { timeout }) => Err(self.call_error(format!(
                "the tool `{tool}` did not answer within {} s (tool_timeout_sec)",
                timeout.as_secs_f64()
            ))),
            Err(error) => Err(self.call_error(error)),
        }
    }

    /// Reads the resource `uri`, on behalf of `caller`.
    pub async fn read_resource(
        &self,
        uri: &str,
        caller: Caller,
    ) -> Result<ReadResourceResult, McpError> {
        let connection = self.connection().await?;
        let _caller = self.shared.enter(caller);
        let timeout = Duration::from_secs_f64(DEFAULT_TOOL_TIMEOUT_SEC);
        let read = connection
            .service
            .peer()
            .read_resource(ReadResourceRequestParams::new(uri.to_owned()));
        match tokio::time::timeout(timeout, read).await {
            Err(_) => Err(self.call_error(format!(
                "reading {uri} took longer than {} s",
                timeout.as_secs()
            ))),
            Ok(result) => result.map_err(|e| self.call_error(e)),
        }
    }
}

/// Tells the server a request is cancelled when dropped while still armed.
struct CancelOnDrop {
    peer: Option<rmcp::service::Peer<RoleClient>>,
    id: rmcp::model::RequestId,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let params = rmcp::model::CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the caller stopped waiting (interrupted)".to_owned()),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            // Cleaned up after a panic: nothing to undo (the notice is best effort).
            let notice = async move {
                let _ = peer.notify_cancelled(params).await;
            };
            agentwire_support::supervised::spawn_on(&runtime, "MCP cancel notice", notice, || {});
        }
    }
}
