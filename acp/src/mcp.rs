//! The client's MCP servers (`session/new`'s and `session/load`'s `mcpServers`) as tools of the
//! session's thread.
//!
//! The engine takes its own MCP servers from `config.toml` for the whole process; it has no
//! per-thread MCP configuration. So this face is the MCP client of the servers an editor
//! attaches to a session: it starts each stdio server (the `rmcp` SDK, as the engine does),
//! lists its tools, and declares them on the thread as one *dynamic tool* namespace per server
//! (`thread/start`'s `dynamicTools`; the model sees `server__tool`). A call arrives as
//! `item/tool/call` and is passed to the server with `tools/call`; its text goes back to the
//! model and to the client (the tool call's content). The servers live as long as the session
//! on this connection (until `session/close` or the end of the connection).
//!
//! Stdio servers are started as child processes (in the session's cwd, with the client's
//! `env`), HTTP servers reached at their `url` over streamable HTTP with the client's
//! `headers` (`mcpCapabilities.http`); SSE servers (the deprecated transport) are not
//! (`mcpCapabilities.sse` is false). A server that fails to start is left out with a warning
//! and the session still opens.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use std::collections::HashMap;

use agent_client_protocol::v1::schema::{McpServer, McpServerHttp, McpServerStdio};
use futures_util::FutureExt;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{CallToolRequestParams, ContentBlock, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ServiceExt, model::ClientConfig};
use serde_json::{Value, json};

/// How long a server may take to start and list its tools.
const STARTUP: Duration = Duration::from_secs(30);
/// How long one tool call may take.
const CALL: Duration = Duration::from_secs(600);
/// Most bytes of a tool result given back.
const MAX_RESULT_BYTES: usize = 64 * 1024;

/// One started server.
struct Server {
    /// The name the client gave it.
    name: String,
    service: RunningService<RoleClient, ClientConfig>,
    tools: Vec<Tool>,
}

/// The MCP servers of one session, by the namespace their tools are declared under.
#[derive(Default)]
pub struct SessionServers {
    servers: BTreeMap<String, Server>,
}

/// A server name as a namespace the model can call (`[A-Za-z0-9_-]`, at most 32 bytes).
pub fn namespace(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    if out.is_empty() {
        out.push_str("mcp");
    }
    out
}

impl SessionServers {
    /// Starts every stdio and HTTP server of `servers` (stdio ones in `cwd`); SSE servers, and
    /// those that fail, are left out with a warning.
    pub async fn start(servers: &[McpServer], cwd: &std::path::Path) -> Self {
        // Every server starts at once: a session waits for the slowest, not for their sum.
        let mut namespaces = BTreeSet::new();
        let mut starting = Vec::new();
        for server in servers {
            let (name, connect) = match server {
                McpServer::Stdio(stdio) => (&stdio.name, connect_stdio(stdio, cwd).boxed()),
                McpServer::Http(http) => (&http.name, connect_http(http).boxed()),
                McpServer::Sse(sse) => {
                    tracing::warn!(
                        server = %sse.name,
                        "an SSE MCP server is left out: this agent starts stdio and HTTP servers"
                    );
                    continue;
                }
                _ => {
                    tracing::warn!(
                        "an MCP server of an unknown transport is left out: this agent starts \
                         stdio and HTTP servers"
                    );
                    continue;
                }
            };
            let mut ns = namespace(name);
            while namespaces.contains(&ns) {
                ns.push('_');
            }
            namespaces.insert(ns.clone());
            starting.push(async move { (ns, name, tokio::time::timeout(STARTUP, connect).await) });
        }
        let mut started = BTreeMap::new();
        for (ns, name, outcome) in futures_util::future::join_all(starting).await {
            match outcome {
                Ok(Ok((service, tools))) => {
                    started.insert(
                        ns,
                        Server {
                            name: name.clone(),
                            service,
                            tools,
                        },
                    );
                }
                Ok(Err(reason)) => {
                    tracing::warn!(server = %name, %reason, "the client's MCP server is left out");
                }
                Err(_) => tracing::warn!(
                    server = %name,
                    "the client's MCP server did not start within {} s; left out",
                    STARTUP.as_secs()
                ),
            }
        }
        Self { servers: started }
    }

    /// The servers' tools as dynamic tool namespaces (`thread/start`'s `dynamicTools`).
    pub fn tool_specs(&self) -> Vec<Value> {
        self.servers
            .iter()
            .map(|(ns, server)| {
                let tools: Vec<Value> = server
                    .tools
                    .iter()
                    .map(|tool| {
                        json!({
                            "type": "function",
                            "name": tool.name,
                            "description": tool.description.as_deref().unwrap_or_default(),
                            "inputSchema": Value::Object((*tool.input_schema).clone()),
                        })
                    })
                    .collect();
                json!({
                    "type": "namespace",
                    "name": ns,
                    "description": format!("Tools of the MCP server `{}` the editor attached.", server.name),
                    "tools": tools,
                })
            })
            .collect()
    }

    /// Calls `tool` of the server of namespace `ns`: its result as text, and whether it
    /// succeeded; `None` when no server has that namespace.
    pub async fn call(&self, ns: &str, tool: &str, arguments: Value) -> Option<(String, bool)> {
        let server = self.servers.get(ns)?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = match arguments {
            Value::Object(members) => Some(members),
            Value::Null => None,
            other => {
                return Some((
                    format!("invalid arguments for `{tool}`: an object is needed, not {other}"),
                    false,
                ));
            }
        };
        let called = tokio::time::timeout(CALL, server.service.peer().call_tool(params)).await;
        Some(match called {
            Err(_) => (
                format!(
                    "the tool `{tool}` gave no result within {} s",
                    CALL.as_secs()
                ),
                false,
            ),
            Ok(Err(e)) => (format!("the tool `{tool}` failed: {e}"), false),
            Ok(Ok(result)) => {
                let mut parts: Vec<String> = result
                    .content
                    .iter()
                    .map(|block| match block {
                        ContentBlock::Text(text) => text.text.clone(),
                        other => serde_json::to_string(other).unwrap_or_default(),
                    })
                    .collect();
                if parts.is_empty()
                    && let Some(structured) = &result.structured_content
                {
                    parts.push(structured.to_string());
                }
                let mut text = parts.join("\n");
                if text.len() > MAX_RESULT_BYTES {
                    let mut cut = MAX_RESULT_BYTES;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                    text.push_str("\n[the rest of the result was cut]");
                }
                (text, result.is_error != Some(true))
            }
        })
    }
}

/// A started server and its tools, or why it did not start.
type Connected = Result<(RunningService<RoleClient, ClientConfig>, Vec<Tool>), String>;

/// The MCP handshake over `transport`, then `tools/list`.
async fn handshake<T, E, A>(transport: T) -> Connected
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let service = ClientConfig::default()
        .serve(transport)
        .await
        .map_err(|e| format!("the MCP handshake failed: {e}"))?;
    let tools = service
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    Ok((service, tools))
}

/// Runs the stdio server `stdio` in `cwd` (its stderr dropped, killed with the session).
async fn connect_stdio(stdio: &McpServerStdio, cwd: &std::path::Path) -> Connected {
    let mut command = tokio::process::Command::new(&stdio.command);
    command
        .args(&stdio.args)
        .envs(stdio.env.iter().map(|v| (v.name.clone(), v.value.clone())))
        .current_dir(cwd)
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let transport = TokioChildProcess::new(command)
        .map_err(|e| format!("cannot run {}: {e}", stdio.command.display()))?;
    handshake(transport).await
}

/// Reaches the HTTP server `http` at its `url` (streamable HTTP) with its `headers`.
async fn connect_http(http: &McpServerHttp) -> Connected {
    let url = reqwest::Url::parse(&http.url).map_err(|e| format!("url {:?}: {e}", http.url))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "url {:?}: must start with http:// or https://",
            http.url
        ));
    }
    let mut headers = HashMap::new();
    for header in &http.headers {
        let name = HeaderName::from_bytes(header.name.as_bytes())
            .map_err(|e| format!("header {:?}: {e}", header.name))?;
        let value = HeaderValue::from_str(&header.value)
            .map_err(|e| format!("header {}: not a valid value: {e}", header.name))?;
        headers.insert(name, value);
    }
    // The HTTP client is built without a TLS crypto provider: the engine's.
    agentwire_engine::install_crypto_provider();
    let config =
        StreamableHttpClientTransportConfig::with_uri(http.url.clone()).custom_headers(headers);
    handshake(StreamableHttpClientTransport::from_config(config)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_become_callable_namespaces() {
        assert_eq!(namespace("everything"), "everything");
        assert_eq!(namespace("my server.v2"), "my_server_v2");
        assert_eq!(namespace("a__b"), "a_b");
        assert_eq!(namespace(""), "mcp");
        assert_eq!(namespace(&"x".repeat(80)).len(), 32);
    }
}
