//! Starting a connection to an MCP server: the transport, the MCP handshake (`rmcp`), and the
//! lists of tools, resources and resource templates, all within `startup_timeout_sec`.
//!
//! A stdio server is a program the user configured, started as it is (no sandbox, as Codex
//! does) in `cwd`, with an environment made of a short whitelist of the server's own variables
//! (`HOME`, `PATH`, `USER`, …), the variables named in `env_vars`, and `env`; nothing else of
//! the server's environment (API keys, tokens) reaches it. Its stderr is logged, and the last
//! lines are quoted when start-up fails.
//!
//! An HTTP server is reached at `url` (streamable HTTP), with `Authorization: Bearer` from the
//! variable `bearer_token_env_var`, else from an OAuth sign-in (`mcpServer/oauth/login`,
//! refreshed when expired), and `http_headers` and `env_http_headers`.

use std::collections::{BTreeMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_config::McpServerConfig;
use agentwire_support::lock;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncBufReadExt;

use super::client::{ClientSide, Shared};
use super::slot::Connection;
use crate::vocabulary::DEFAULT_STARTUP_TIMEOUT_SEC;

/// The variables of the server's own environment every stdio MCP server gets (when set).
pub(crate) const ENV_WHITELIST: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
    "TZ",
];

/// Lines of a server's stderr kept for the start-up error.
const STDERR_LINES: usize = 8;
/// Longest stderr line kept.
const STDERR_LINE_BYTES: usize = 400;

/// The environment of a stdio server configured as `config`, from the server's `own`.
pub(crate) fn environment(
    config: &McpServerConfig,
    own: impl Iterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = own
        .filter(|(k, _)| {
            ENV_WHITELIST.contains(&k.as_str()) || config.env_vars.iter().any(|v| v == k)
        })
        .collect();
    env.extend(config.env.clone());
    env
}

/// Starts server `name`: the connection, or why it could not start (a sentence).
pub(crate) async fn start(
    name: &str,
    config: &McpServerConfig,
    shared: Arc<Shared>,
    home: &std::path::Path,
) -> Result<Connection, String> {
    let timeout = Duration::from_secs_f64(
        config
            .startup_timeout_sec
            .or(config.startup_timeout_ms.map(|ms| ms as f64 / 1000.0))
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(DEFAULT_STARTUP_TIMEOUT_SEC)
            .min(3600.0),
    );
    let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
    let handler = ClientSide { shared };
    let started = async {
        let service = match (&config.command, &config.url) {
            (Some(_), Some(_)) => {
                return Err("both `command` and `url` are set; use one".to_owned());
            }
            (None, None) => {
                return Err("neither `command` (stdio) nor `url` (HTTP) is set".to_owned());
            }
            (Some(program), None) => {
                let transport = stdio(name, program, config, stderr_tail.clone())?;
                handler
                    .serve(transport)
                    .await
                    .map_err(|e| format!("the MCP handshake failed: {e}"))?
            }
            (None, Some(url)) => {
                let oauth = match &config.bearer_token_env_var {
                    Some(_) => None,
                    None => super::oauth::bearer(home, name, url).await?,
                };
                let signed_in = oauth.is_some();
                let transport = http(url, config, oauth)?;
                handler.serve(transport).await.map_err(|e| {
                    let hint = if signed_in || config.bearer_token_env_var.is_some() {
                        ""
                    } else {
                        " (if it needs OAuth, sign in with mcpServer/oauth/login)"
                    };
                    format!("the MCP handshake with {url} failed: {e}{hint}")
                })?
            }
        };
        let tools = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        let offers_resources = service
            .peer()
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some());
        let (resources, templates) = if offers_resources {
            let resources = service.peer().list_all_resources().await;
            let templates = service.peer().list_all_resource_templates().await;
            (resources.unwrap_or_default(), templates.unwrap_or_default())
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(Connection {
            service,
            tools: Mutex::new(tools),
            resources,
            templates,
        })
    };
    let result = match tokio::time::timeout(timeout, started).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "it did not start within {} s (startup_timeout_sec)",
            timeout.as_secs_f64()
        )),
    };
    result.map_err(|reason| {
        let tail: Vec<String> = lock(&stderr_tail).iter().cloned().collect();
        if tail.is_empty() {
            reason
        } else {
            format!("{reason}; its stderr ended with: {}", tail.join(" | "))
        }
    })
}

/// A child process speaking MCP on its stdin and stdout.
fn stdio(
    name: &str,
    program: &str,
    config: &McpServerConfig,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
) -> Result<TokioChildProcess, String> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(&config.args)
        .env_clear()
        .envs(environment(config, std::env::vars()))
        .kill_on_drop(true);
    if let Some(cwd) = &config.cwd {
        command.current_dir(cwd);
    }
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{program}`: {e}"))?;
    if let Some(stderr) = stderr {
        let server = name.to_owned();
        // Cleaned up after a panic: nothing to undo; the pipe closes with the task, and the
        // tail kept for error messages stays as it was.
        let what = "MCP server stderr reader";
        agentwire_support::supervised::spawn(
            what,
            async move {
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(mut line)) = lines.next_line().await {
                    if line.len() > STDERR_LINE_BYTES {
                        let mut cut = STDERR_LINE_BYTES;
                        while !line.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        line.truncate(cut);
                    }
                    tracing::debug!(server = %server, "{line}");
                    let mut tail = lock(&stderr_tail);
                    if tail.len() == STDERR_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            },
            || {},
        );
    }
    Ok(transport)
}

/// A streamable HTTP connection to `url`.
fn http(
    url: &str,
    config: &McpServerConfig,
    oauth_token: Option<String>,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("url {url:?}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("url {url:?}: must start with http:// or https://"));
    }
    let mut headers = reqwest::header::HeaderMap::new();
    let from_env = config.env_http_headers.iter().filter_map(|(header, var)| {
        std::env::var(var)
            .ok()
            .filter(|v| !v.is_empty())
            .map(|v| (header, v))
    });
    for (name, value) in config
        .http_headers
        .iter()
        .map(|(k, v)| (k, v.clone()))
        .chain(from_env)
    {
        let header = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("http header {name:?}: {e}"))?;
        let value = reqwest::header::HeaderValue::from_str(&value)
            .map_err(|e| format!("http header {name}: not a valid value: {e}"))?;
        headers.insert(header, value);
    }
    agentwire_support::tls::install_crypto_provider();
    let client = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(var) = &config.bearer_token_env_var {
        let token = std::env::var(var)
            .ok()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| format!("bearer_token_env_var: the variable {var} is not set"))?;
        transport_config = transport_config.auth_header(token);
    } else if let Some(token) = oauth_token {
        transport_config = transport_config.auth_header(token);
    }
    Ok(StreamableHttpClientTransport::with_client(
        client,
        transport_config,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_is_the_whitelist_the_named_variables_and_env() {
        let config = McpServerConfig {
            env: BTreeMap::from([("TOKEN".to_owned(), "configured".to_owned())]),
            env_vars: vec!["PASS_ME".to_owned()],
            ..McpServerConfig::default()
        };
        let own = [
            ("PATH", "/bin"),
            ("HOME", "/root"),
            ("OPENAI_API_KEY", "secret"),
            ("PASS_ME", "yes"),
            ("TOKEN", "overridden"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let env = environment(&config, own.into_iter());
        assert_eq!(env.get("PATH").map(String::as_str), Some("/bin"));
        assert_eq!(env.get("HOME").map(String::as_str), Some("/root"));
        assert_eq!(env.get("PASS_ME").map(String::as_str), Some("yes"));
        assert_eq!(env.get("TOKEN").map(String::as_str), Some("configured"));
        assert!(!env.contains_key("OPENAI_API_KEY"));
    }
}
