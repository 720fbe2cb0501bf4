//! agentwire-client: a typed async client for the app-server protocol.
//!
//! ```no_run
//! # async fn demo() -> Result<(), agentwire_client::Error> {
//! use agentwire_client::{Client, ClientOptions};
//! use agentwire_protocol::methods::ThreadStart;
//!
//! let mut command = tokio::process::Command::new("agentwire");
//! command.arg("app-server");
//! let client = Client::spawn(command, ClientOptions::default()).await?;
//! let params = serde_json::from_value(serde_json::json!({"cwd": "/tmp"})).expect("params");
//! let started = client.request::<ThreadStart>(params).await?;
//! println!("thread {}", started.thread.id);
//! while let Some(notification) = client.next_notification().await {
//!     println!("{} {}", notification.method, notification.params);
//! }
//! # Ok(()) }
//! ```
//!
//! A client speaks to one server: a child it spawned ([`Client::spawn`], JSON lines over the
//! child's stdio) or a listening one ([`Client::connect`]: `ws://`, `wss://` or `unix://PATH`,
//! one message per websocket text frame, with an optional bearer token). The handshake
//! (`initialize`, then `initialized`) is done before the client is returned. Requests are typed
//! by the method table ([`Client::request`]); requests the server refuses as overloaded
//! (-32001) are retried with jittered exponential backoff ([`RetryPolicy`]); notifications
//! arrive in order on one queue ([`Client::next_notification`], typed with
//! [`Notification::parse`]); server requests (approvals) go to a handler
//! ([`ClientOptions::server_requests`]) that declines by default.
//!
//! [`Client::over`] speaks JSON lines over any byte stream instead (a `tokio::io::duplex` pair
//! for a server in the same process, a socket); [`Client::send_raw`] writes bytes exactly as
//! given, for tests of what a server does with malformed input. The message grammar itself is
//! [`wire`], without I/O, and [`blocking::LineReader`] finds lines for drivers that block on
//! their own thread: every JSON-RPC client of this workspace (the terminal UI, `exec`, the MCP
//! server's link into the engine, the conformance suite, the benchmark, the end-to-end tests)
//! is built on these.

pub mod blocking;
mod core;
mod error;
mod options;
mod retry;
pub mod server_requests;
mod transport;
pub mod wire;

use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use agentwire_protocol::method::{Method, Notification as NotificationMethod, Request, has_params};
use agentwire_protocol::methods::{Initialize, Initialized};
use agentwire_protocol::{InitializeParams, InitializeResponse};
use serde_json::Value;
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;

use crate::core::{Core, Outgoing};
pub use crate::error::Error;
pub use crate::options::ClientOptions;
pub use crate::retry::RetryPolicy;
pub use crate::server_requests::{Answer, ServerRequest, ServerRequestHandler};
pub use agentwire_protocol::jsonrpc::{JsonRpcErrorObject, RequestId, error_codes};

/// A notification from the server, in the order it was sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method, e.g. `item/agentMessage/delta`.
    pub method: String,
    /// The params as sent (`null` when absent).
    pub params: Value,
}

impl Notification {
    /// Whether this is a notification of method `M`.
    pub fn is<M: NotificationMethod>(&self) -> bool {
        self.method == M::NAME
    }

    /// The params as `M`'s type; `None` when this is another method.
    pub fn parse<M: NotificationMethod>(&self) -> Option<Result<M::Params, Error>> {
        self.is::<M>().then(|| {
            serde_json::from_value(self.params.clone()).map_err(|source| Error::Json {
                method: self.method.clone(),
                what: "the notification's params",
                source,
            })
        })
    }
}

/// A connection to an app-server, initialized.
pub struct Client {
    core: Arc<Core>,
    notifications: Mutex<mpsc::Receiver<Notification>>,
    options: ClientOptions,
    initialized: Option<InitializeResponse>,
    child: Option<Mutex<tokio::process::Child>>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("options", &self.options)
            .field("initialized", &self.initialized)
            .finish_non_exhaustive()
    }
}

/// Messages queued for the writer before `request` waits.
const OUTGOING_QUEUE: usize = 256;

impl Client {
    /// Spawns `command` (e.g. `agentwire app-server`) with piped stdin and stdout, speaks JSON
    /// lines over them, and completes the handshake. The child is killed when the client is
    /// dropped; [`Client::shutdown`] ends it gracefully.
    pub async fn spawn(
        mut command: tokio::process::Command,
        options: ClientOptions,
    ) -> Result<Self, Error> {
        let target = format!("{:?}", command.as_std());
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| Error::Connect {
                target: target.clone(),
                reason: e.to_string(),
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Error::Connect {
                target,
                reason: "the child's stdio is not piped".to_owned(),
            });
        };
        let limit = options.max_message_bytes;
        let mut client = Self::build(options, |core, out| {
            transport::lines(stdout, stdin, limit, core, out)
        });
        client.child = Some(Mutex::new(child));
        client.handshake().await?;
        Ok(client)
    }

    /// Speaks JSON lines over `read` and `write` (any byte stream: one half of a
    /// `tokio::io::duplex` pair whose other half a server in the same process serves, a Unix
    /// or TCP socket already connected, a pipe), and completes the handshake. `target` names
    /// the peer in errors.
    pub async fn over<R, W>(
        target: &str,
        read: R,
        write: W,
        options: ClientOptions,
    ) -> Result<Self, Error>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let limit = options.max_message_bytes;
        let mut client = Self::build(options, |core, out| {
            transport::lines(read, write, limit, core, out)
        });
        client.handshake().await.map_err(|error| match error {
            Error::Closed { reason, .. } => Error::Connect {
                target: target.to_owned(),
                reason,
            },
            other => other,
        })?;
        Ok(client)
    }

    /// Connects to a listening server: `ws://HOST:PORT`, `wss://HOST:PORT` or `unix://PATH`
    /// (the app-server's control socket), and completes the handshake.
    pub async fn connect(url: &str, options: ClientOptions) -> Result<Self, Error> {
        let token = options.bearer_token.clone();
        let limit = options.max_message_bytes;
        let mut client = if let Some(path) = url.strip_prefix("unix://") {
            if path.is_empty() {
                return Err(Error::Connect {
                    target: url.to_owned(),
                    reason: "unix:// needs the socket's path (the server's default is \
                             $AGENTWIRE_HOME/app-server-control/app-server.sock)"
                        .to_owned(),
                });
            }
            let socket =
                transport::connect_unix(&PathBuf::from(path), token.as_deref(), limit).await?;
            Self::build(options, |core, out| transport::websocket(socket, core, out))
        } else if url.starts_with("ws://") || url.starts_with("wss://") {
            let socket = transport::connect_tcp(url, token.as_deref(), limit).await?;
            Self::build(options, |core, out| transport::websocket(socket, core, out))
        } else {
            return Err(Error::Connect {
                target: url.to_owned(),
                reason: "expected ws://HOST:PORT, wss://HOST:PORT or unix://PATH".to_owned(),
            });
        };
        client.handshake().await?;
        Ok(client)
    }

    fn build(
        options: ClientOptions,
        start: impl FnOnce(Arc<Core>, mpsc::Receiver<Outgoing>) -> [JoinHandle<()>; 2],
    ) -> Self {
        let (out, out_rx) = mpsc::channel(OUTGOING_QUEUE);
        let (queue, notifications) = mpsc::channel(options.notification_buffer.max(1));
        let queue = (options.notification_buffer > 0).then_some(queue);
        let core = Core::new(out, queue, options.server_requests.clone());
        let tasks = start(core.clone(), out_rx).into();
        Self {
            core,
            notifications: Mutex::new(notifications),
            options,
            initialized: None,
            child: None,
            tasks,
        }
    }

    async fn handshake(&mut self) -> Result<(), Error> {
        let params = InitializeParams::builder()
            .client_info(self.options.client_info.clone())
            .maybe_capabilities(self.options.capabilities.clone())
            .build();
        let params = encode(Initialize::NAME, &params)?;
        let timeout = Some(self.options.initialize_timeout);
        let result = self.call(Initialize::NAME, Some(params), timeout).await?;
        self.initialized = Some(decode::<InitializeResponse>(Initialize::NAME, result)?);
        self.notify::<Initialized>(agentwire_protocol::NoParams)
            .await
    }

    /// The server's answer to `initialize`.
    pub fn server(&self) -> Option<&InitializeResponse> {
        self.initialized.as_ref()
    }

    /// Sends the request `M` and waits for its typed answer. Overloaded answers (-32001) are
    /// retried per [`ClientOptions::retry`]; any other JSON-RPC error is returned as
    /// [`Error::Rpc`] with the server's code, message and data.
    pub async fn request<M: Request>(&self, params: M::Params) -> Result<M::Response, Error> {
        let params = if has_params::<M>() {
            Some(encode(M::NAME, &params)?).filter(|p| !(M::PARAMS_OPTIONAL && p.is_null()))
        } else {
            None
        };
        let result = self
            .call(M::NAME, params, self.options.request_timeout)
            .await?;
        decode(M::NAME, result)
    }

    /// Sends a request by name with raw params (for methods outside the table, or params
    /// built by hand), with the same retries; returns the raw `result`.
    pub async fn request_value(&self, method: &str, params: Option<Value>) -> Result<Value, Error> {
        self.call(method, params, self.options.request_timeout)
            .await
    }

    async fn call(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, Error> {
        let policy = self.options.retry;
        let mut attempt = 1;
        loop {
            match self.call_once(method, params.as_ref(), timeout).await {
                Err(Error::Rpc { error, .. })
                    if error.code == error_codes::SERVER_OVERLOADED
                        && attempt < policy.max_attempts =>
                {
                    let pause = policy.backoff(attempt);
                    tracing::debug!(method, attempt, ?pause, "server overloaded; retrying");
                    tokio::time::sleep(pause).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn call_once(
        &self,
        method: &str,
        params: Option<&Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, Error> {
        let closed = |reason: String| Error::Closed {
            method: method.to_owned(),
            reason,
        };
        let (id, answer) = self.core.register().map_err(closed)?;
        let message = wire::request(&RequestId::Integer(id), method, params);
        if self
            .core
            .out
            .send(Outgoing::Message(message))
            .await
            .is_err()
        {
            self.core.forget(id);
            return Err(closed(self.closed_reason()));
        }
        let reply = match timeout {
            Some(after) => match tokio::time::timeout(after, answer).await {
                Ok(reply) => reply,
                Err(_) => {
                    self.core.forget(id);
                    return Err(Error::Timeout {
                        method: method.to_owned(),
                        after,
                    });
                }
            },
            None => answer.await,
        };
        match reply {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(Error::Rpc {
                method: method.to_owned(),
                error,
            }),
            Err(_) => Err(closed(self.closed_reason())),
        }
    }

    fn closed_reason(&self) -> String {
        self.core
            .closed()
            .unwrap_or_else(|| "the client is shutting down".to_owned())
    }

    /// Sends the client notification `M`.
    pub async fn notify<M: NotificationMethod>(&self, params: M::Params) -> Result<(), Error> {
        let params = if has_params::<M>() {
            Some(encode(M::NAME, &params)?).filter(|p| !(M::PARAMS_OPTIONAL && p.is_null()))
        } else {
            None
        };
        let message = wire::notification(M::NAME, params.as_ref());
        self.core
            .out
            .send(Outgoing::Message(message))
            .await
            .map_err(|_| Error::Closed {
                method: M::NAME.to_owned(),
                reason: self.closed_reason(),
            })
    }

    /// Writes `bytes` to the server exactly as given, as one message: over JSON lines followed
    /// by a newline, over a websocket as one text frame. Nothing checks them, so a test can send
    /// what no well-behaved client would (a line that is not JSON, an unknown method, a request
    /// with an id of its choosing); answers to ids the client did not allocate are logged and
    /// dropped, so send requests through [`Client::request`] when the answer matters.
    pub async fn send_raw(&self, bytes: impl Into<String>) -> Result<(), Error> {
        self.core
            .out
            .send(Outgoing::Message(bytes.into()))
            .await
            .map_err(|_| Error::Closed {
                method: "(raw message)".to_owned(),
                reason: self.closed_reason(),
            })
    }

    /// The next notification from the server, in order; `None` once the connection has ended
    /// and every notification was taken.
    pub async fn next_notification(&self) -> Option<Notification> {
        self.notifications.lock().await.recv().await
    }

    /// Why the connection ended, once it has.
    pub fn closed(&self) -> Option<String> {
        self.core.closed()
    }

    /// Ends the connection: closes the server's stdin (or sends a websocket close), then, for a
    /// spawned server, waits up to `grace` for it to exit before killing it. Returns the child's
    /// exit status when there was one.
    pub async fn shutdown(mut self, grace: Duration) -> Result<Option<ExitStatus>, Error> {
        let _ = self.core.out.send(Outgoing::Close).await;
        let Some(child) = self.child.take() else {
            return Ok(None);
        };
        let mut child = child.into_inner();
        let status = match tokio::time::timeout(grace, child.wait()).await {
            Ok(status) => status,
            Err(_) => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        status.map(Some).map_err(|e| Error::Connect {
            target: "the server process".to_owned(),
            reason: format!("cannot wait for it: {e}"),
        })
    }

    /// The spawned server's process id, if the client spawned one that is running.
    pub async fn pid(&self) -> Option<u32> {
        match &self.child {
            Some(child) => child.lock().await.id(),
            None => None,
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn encode<T: serde::Serialize>(method: &str, params: &T) -> Result<Value, Error> {
    serde_json::to_value(params).map_err(|source| Error::Json {
        method: method.to_owned(),
        what: "the params",
        source,
    })
}

fn decode<T: serde::de::DeserializeOwned>(method: &str, result: Value) -> Result<T, Error> {
    serde_json::from_value(result).map_err(|source| Error::Json {
        method: method.to_owned(),
        what: "the result",
        source,
    })
}

/// Opens the websocket of an app-server's Unix control socket without speaking the protocol
/// (for bridges such as `agentwire app-server proxy`): messages of at most `limit` bytes,
/// `Authorization: Bearer TOKEN` when given.
pub async fn connect_unix_websocket(
    path: &std::path::Path,
    token: Option<&str>,
    limit: usize,
) -> Result<tokio_tungstenite::WebSocketStream<tokio::net::UnixStream>, Error> {
    transport::connect_unix(path, token, limit).await
}
