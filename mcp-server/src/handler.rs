//! The MCP server proper: rmcp's [`ServerHandler`] for one MCP session.
//!
//! rmcp does the framing, the lifecycle and the dispatch (each request runs as a task of its
//! own, so a long `tools/call` never blocks the session's message loop; `notifications/cancelled`
//! fires the request's cancellation token). This handler adds what is ours: `initialize` once,
//! the two tools, and the engine connection their calls run on.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agentwire_engine::Engine;
use agentwire_protocol::mcp::CodexToolCallResult;
use agentwire_protocol::{ClientInfo, RequestId};
use agentwire_runtime::Server;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult,
    ErrorCode, InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::json;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::calls;
use crate::engine_link::EngineLink;
use crate::host::Host;
use crate::tools::{self, ToolCallError};

/// The name the server gives in `serverInfo`.
pub const SERVER_NAME: &str = "agentwire-mcp-server";

/// The title the server gives in `serverInfo`.
pub const SERVER_TITLE: &str = "agentwire";

/// One MCP session's handler. Every session gets its own (and its own engine connection); the
/// app-server [`Server`] behind them is shared.
#[derive(Clone)]
pub struct CodexMcpServer {
    server: Server<Engine>,
    session: Arc<Session>,
    /// Cancelled when the host's input ends (stdio); see [`CodexMcpServer::input_ended`].
    input_ended: CancellationToken,
}

struct Session {
    initialized: AtomicBool,
    link: OnceCell<Arc<EngineLink>>,
    info: ServerConfig,
    tools: ListToolsResult,
}

fn server_config() -> ServerConfig {
    let config = json!({
        "protocolVersion": ProtocolVersion::LATEST_WITH_INITIALIZE,
        "capabilities": {"tools": {"listChanged": true}},
        "serverInfo": {
            "name": SERVER_NAME,
            "title": SERVER_TITLE,
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": "Call `codex` with a prompt to start an agentwire thread and run a turn; \
            continue it with `codex-reply` and the returned `threadId`. Progress streams as \
            `codex/event` notifications; commands and patches that need consent arrive as \
            elicitations.",
    });
    match serde_json::from_value(config) {
        Ok(config) => config,
        Err(e) => {
            tracing::error!(error = %e, "server info does not parse; using rmcp's defaults");
            ServerConfig::default()
        }
    }
}

fn tool_list() -> ListToolsResult {
    match serde_json::from_value(json!({ "tools": tools::tool_list() })) {
        Ok(list) => list,
        Err(e) => {
            tracing::error!(error = %e, "tool list does not parse; listing none");
            ListToolsResult::default()
        }
    }
}

fn response(result: &CodexToolCallResult) -> Result<CallToolResponse, McpError> {
    serde_json::to_value(result)
        .and_then(serde_json::from_value::<CallToolResult>)
        .map(CallToolResponse::Complete)
        .map_err(|e| McpError::internal_error(format!("tool result not encodable: {e}"), None))
}

impl CodexMcpServer {
    /// A handler for a new session on `server`.
    pub fn new(server: Server<Engine>) -> Self {
        Self {
            input_ended: CancellationToken::new(),
            server,
            session: Arc::new(Session {
                initialized: AtomicBool::new(false),
                link: OnceCell::new(),
                info: server_config(),
                tools: tool_list(),
            }),
        }
    }

    /// The token to cancel when the host's input ends: tool calls then stop sending it events
    /// and asking it for approvals (rmcp no longer carries them), so they end as soon as their
    /// turns do.
    pub fn input_ended(&self) -> CancellationToken {
        self.input_ended.clone()
    }

    /// The session's engine connection, opened at its first tool call (named after the host).
    async fn link(&self, context: &RequestContext<RoleServer>) -> Result<Arc<EngineLink>, String> {
        let client = context
            .peer
            .peer_info()
            .map(|info| {
                ClientInfo::builder()
                    .name(info.client_info.name.clone())
                    .maybe_title(info.client_info.title.clone())
                    .version(info.client_info.version.clone())
                    .build()
            })
            .unwrap_or_else(|| {
                ClientInfo::builder()
                    .name("mcp-host".to_owned())
                    .version("0".to_owned())
                    .build()
            });
        self.session
            .link
            .get_or_try_init(|| EngineLink::open(&self.server, client))
            .await
            .cloned()
            .map_err(|e| format!("Could not connect to the engine: {e}"))
    }
}

impl ServerHandler for CodexMcpServer {
    fn get_info(&self) -> ServerConfig {
        self.session.info.clone()
    }

    /// Versions with an `initialize` handshake only: the session model this server implements.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        if self.session.initialized.swap(true, Ordering::SeqCst) {
            return Err(McpError::invalid_request(
                "initialize was already called: a session is initialized exactly once",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(self.session.tools.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let call = match tools::parse(&request.name, request.arguments) {
            Ok(call) => call,
            Err(ToolCallError::UnknownTool(name)) => {
                return Err(McpError::invalid_params(
                    format!("Unknown tool: {name}"),
                    Some(json!({"tool": name})),
                ));
            }
            Err(ToolCallError::InvalidArguments(message)) => {
                return response(&calls::failure(message));
            }
        };
        let link = match self.link(&context).await {
            Ok(link) => link,
            Err(message) => return response(&calls::failure(message)),
        };
        let request_id: RequestId = serde_json::to_value(&context.id)
            .and_then(serde_json::from_value)
            .map_err(|e| McpError::internal_error(format!("request id: {e}"), None))?;
        let host = Host::new(context.peer.clone(), request_id, self.input_ended.clone());
        let result = calls::run(&link, &host, &context.ct, call).await;
        response(&result)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", request.method),
            Some(json!({"method": request.method})),
        ))
    }
}
