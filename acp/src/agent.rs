//! The ACP methods `agentwire acp` serves, and the sessions of its one connection.
//!
//! | ACP                | engine (app-server protocol)                                      |
//! |--------------------|-------------------------------------------------------------------|
//! | `initialize`       | opens the in-process app-server connection (`initialize`)         |
//! | `authenticate`     | `account/read`: signed in, or no sign-in needed                   |
//! | `session/new`      | `thread/start` (cwd); the session id is the thread id             |
//! | `session/load`     | `thread/resume`, its turns replayed as `session/update`s          |
//! | `session/set_mode` | the mode's approval policy and sandbox, sent with the next turn   |
//! | `session/prompt`   | `turn/start`, streamed until `turn/completed` ([`crate::turn`])   |
//! | `session/cancel`   | `turn/interrupt`; the prompt answers `cancelled`                  |
//! | `session/list`, `session/resume`, `session/close` | see [`crate::lifecycle`]           |
//! | `session/set_config_option` | see [`crate::config_options`]                            |
//!
//! `session/new` also declares the thread's dynamic tools: the client's file system and
//! terminals ([`crate::client_tools`]) and its MCP servers ([`crate::mcp`]).
//!
//! Requests arriving before `initialize` are refused with -32600; a session id the connection
//! did not create or load is -32002 (resource not found).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    CancelNotification, CloseSessionRequest, CloseSessionResponse, CurrentModeUpdate,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities,
    SessionConfigOption, SessionId, SessionListCapabilities, SessionNotification,
    SessionResumeCapabilities, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error, ErrorCode, Stdio};
use agentwire_engine::Engine;
use agentwire_mcp_server::engine_link::{EngineLink, LinkError};
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{AccountRead, ThreadResume, ThreadStart};
use agentwire_protocol::{
    AskForApproval, ClientInfo, GetAccountParams, ReasoningEffort, SandboxPolicy,
    ThreadResumeParams, ThreadResumeResponse, ThreadStartParams,
};
use agentwire_runtime::Server;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::client_tools::{Allowed, ClientOffer};
use crate::mcp::SessionServers;
use crate::modes::Mode;
use crate::updates;

/// The id of the one authentication method: an API key stored by `agentwire login`.
pub const AUTH_METHOD_ID: &str = "agentwire-login";

/// What the connection knows of one session (one thread).
pub(crate) struct Session {
    /// The thread's working directory.
    pub(crate) cwd: PathBuf,
    /// The mode the session is in.
    pub(crate) mode: Mode,
    /// Whether the mode changed since the thread's settings were last given to the engine (the
    /// next `turn/start` then carries the mode's policy and sandbox).
    pub(crate) mode_changed: bool,
    /// Cancels the prompt that runs, if one does.
    pub(crate) cancel: Option<CancellationToken>,
    /// The model and reasoning effort the session's turns run with.
    pub(crate) settings: crate::config_options::Settings,
    /// Whether the model or effort changed since the engine was last given them (the next
    /// `turn/start` then carries them).
    pub(crate) settings_changed: bool,
    /// The client's MCP servers started for the session.
    pub(crate) servers: Arc<SessionServers>,
    /// The session's *allow always* answers about client tools.
    pub(crate) allowed: Arc<Allowed>,
}

impl Session {
    /// A session in `cwd` and `mode`, running `settings`, with the client's `servers`.
    pub(crate) fn new(
        cwd: PathBuf,
        mode: Mode,
        settings: crate::config_options::Settings,
        servers: SessionServers,
    ) -> Self {
        Self {
            cwd,
            mode,
            mode_changed: false,
            cancel: None,
            settings,
            settings_changed: false,
            servers: Arc::new(servers),
            allowed: Arc::new(Allowed::default()),
        }
    }
}

/// The agent side of one ACP connection.
pub struct AcpAgent {
    server: Server<Engine>,
    link: tokio::sync::OnceCell<Arc<EngineLink>>,
    sessions: Mutex<HashMap<String, Session>>,
    /// What the client offers of its file system and terminals (from `initialize`).
    offer: Mutex<ClientOffer>,
}

/// An ACP error with `code` and `message`.
pub(crate) fn error(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::new(code, message)
}

/// A request's params that the engine refused, as an ACP error naming the method.
pub(crate) fn engine_error(what: &str, e: &LinkError) -> Error {
    match e {
        LinkError::Engine { code, message, .. } if *code == -32602 || *code == -32600 => {
            error(ErrorCode::INVALID_PARAMS, format!("{what}: {message}"))
        }
        _ => error(ErrorCode::INTERNAL_ERROR, format!("{what}: {e}")),
    }
}

/// `params` (an object whose `null` members are dropped) as the params of engine request
/// `method`.
pub(crate) fn engine_params<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, Error> {
    let params = match params {
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .filter(|(_, value)| !value.is_null())
                .collect::<Map<_, _>>(),
        ),
        other => other,
    };
    serde_json::from_value(params).map_err(|e| {
        error(
            ErrorCode::INTERNAL_ERROR,
            format!("Invalid params for {method}: {e}"),
        )
    })
}

/// A `cwd` ACP clients must give as an absolute path.
fn absolute_cwd(cwd: &std::path::Path) -> Result<String, Error> {
    if !cwd.is_absolute() {
        return Err(error(
            ErrorCode::INVALID_PARAMS,
            format!("cwd must be an absolute path, not {}", cwd.display()),
        ));
    }
    Ok(cwd.display().to_string())
}

impl AcpAgent {
    /// The agent of a connection to the engine behind `server`.
    pub fn new(server: Server<Engine>) -> Self {
        Self {
            server,
            link: tokio::sync::OnceCell::new(),
            sessions: Mutex::new(HashMap::new()),
            offer: Mutex::new(ClientOffer::default()),
        }
    }

    /// What the client offers of its file system and terminals.
    pub(crate) fn offer(&self) -> ClientOffer {
        *self.offer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The engine connection, once `initialize` has opened it.
    pub(crate) fn link(&self) -> Result<&Arc<EngineLink>, Error> {
        self.link.get().ok_or_else(|| {
            error(
                ErrorCode::INVALID_REQUEST,
                "Not initialized: send `initialize` first",
            )
        })
    }

    /// Runs `f` on session `id`'s state; -32002 when the connection has no such session.
    pub(crate) fn with_session<T>(
        &self,
        id: &SessionId,
        f: impl FnOnce(&mut Session) -> T,
    ) -> Result<T, Error> {
        let mut sessions = self.sessions();
        match sessions.get_mut(id.0.as_ref()) {
            Some(session) => Ok(f(session)),
            None => {
                Err(agent_client_protocol::v1::schema::Error::session_not_found(id.clone()).into())
            }
        }
    }

    /// `initialize`: opens the engine connection (named after the client) and describes the
    /// agent. The protocol version is the client's when it is 1, else 1 (the only one served).
    pub async fn initialize(
        &self,
        request: InitializeRequest,
    ) -> Result<InitializeResponse, Error> {
        let client = request.client_info.as_ref().map_or_else(
            || {
                ClientInfo::builder()
                    .name("acp-client")
                    .version("0")
                    .build()
            },
            |info| {
                ClientInfo::builder()
                    .name(info.name.clone())
                    .maybe_title(info.title.clone())
                    .version(info.version.clone())
                    .build()
            },
        );
        self.link
            .get_or_try_init(|| EngineLink::open_experimental(&self.server, client))
            .await
            .map_err(|e| {
                error(
                    ErrorCode::INTERNAL_ERROR,
                    format!("Could not connect to the engine: {e}"),
                )
            })?;
        *self.offer.lock().unwrap_or_else(PoisonError::into_inner) =
            ClientOffer::of(&request.client_capabilities);
        let sessions = SessionCapabilities::new()
            .list(SessionListCapabilities::new())
            .resume(SessionResumeCapabilities::new())
            .close(SessionCloseCapabilities::new());
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .session_capabilities(sessions)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true));
        let login = AuthMethodAgent::new(AUTH_METHOD_ID, "API key").description(
            "Store an API key with `agentwire login` (or set the provider's API key variable) before starting the agent."
                .to_owned(),
        );
        Ok(InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .auth_methods(vec![AuthMethod::Agent(login)])
            .agent_info(Implementation::new(
                crate::AGENT_NAME,
                env!("CARGO_PKG_VERSION"),
            )))
    }

    /// `authenticate`: succeeds when the engine has what its provider needs (a stored key, or
    /// a provider that needs none); otherwise -32000 saying to run `agentwire login`.
    pub async fn authenticate(
        &self,
        request: AuthenticateRequest,
    ) -> Result<AuthenticateResponse, Error> {
        if request.method_id.0.as_ref() != AUTH_METHOD_ID {
            return Err(error(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "unknown authentication method {:?}: the one method is {AUTH_METHOD_ID:?}",
                    request.method_id.0
                ),
            ));
        }
        let params: GetAccountParams = engine_params(AccountRead::NAME, json!({}))?;
        let account = self
            .link()?
            .request::<AccountRead>(&params)
            .await
            .map_err(|e| engine_error("account/read", &e))?;
        if account.account.is_some() || !account.requires_openai_auth {
            Ok(AuthenticateResponse::new())
        } else {
            Err(error(
                ErrorCode::AUTH_REQUIRED,
                "No API key is stored: run `agentwire login` (it reads the key from stdin), then retry",
            ))
        }
    }

    /// A session's thread tools: the client's file and terminal tools and its MCP servers'
    /// tools (`dynamicTools`), and the configuration overrides that withhold the engine's
    /// own tools the client replaces (`config`, see [`ClientOffer::withheld_builtins`]).
    fn session_tools(&self, servers: &SessionServers) -> (Vec<Value>, Map<String, Value>) {
        let offer = self.offer();
        let mut tools = offer.tool_specs();
        tools.extend(servers.tool_specs());
        (tools, offer.withheld_builtins())
    }

    /// Records the session of thread `thread_id` (started or resumed in `cwd` with the
    /// thread's approval policy and sandbox, model and effort, and the session's MCP
    /// `servers`) and follows the thread: the session's mode and its config options.
    async fn open_session(
        &self,
        thread_id: &str,
        cwd: &str,
        (approval_policy, sandbox): (&AskForApproval, &SandboxPolicy),
        (model, effort): (&str, Option<&ReasoningEffort>),
        servers: SessionServers,
    ) -> Result<(Mode, Vec<SessionConfigOption>), Error> {
        self.link()?.follow(thread_id);
        let mode = Mode::of_thread(approval_policy, sandbox);
        let settings = crate::config_options::Settings {
            model: model.to_owned(),
            effort: effort.map(|e| e.0.clone()),
        };
        let options = crate::config_options::options(self.link()?, mode, &settings).await;
        let session = Session::new(PathBuf::from(cwd), mode, settings, servers);
        self.sessions().insert(thread_id.to_owned(), session);
        Ok((mode, options))
    }

    /// `session/new`: a new thread in `cwd`, with the settings of the configuration, the
    /// client's tools and MCP servers as its dynamic tools; the session id is the thread id.
    pub async fn new_session(
        &self,
        request: NewSessionRequest,
    ) -> Result<NewSessionResponse, Error> {
        let cwd = absolute_cwd(&request.cwd)?;
        let servers = SessionServers::start(&request.mcp_servers, &request.cwd).await;
        let (tools, config) = self.session_tools(&servers);
        let mut params = json!({"cwd": cwd});
        if !tools.is_empty() {
            params["dynamicTools"] = Value::Array(tools);
        }
        if !config.is_empty() {
            params["config"] = Value::Object(config);
        }
        let params: ThreadStartParams = engine_params(ThreadStart::NAME, params)?;
        let started = self
            .link()?
            .request::<ThreadStart>(&params)
            .await
            .map_err(|e| engine_error("session/new", &e))?;
        let thread_id = started.thread.id.clone();
        let (mode, options) = self
            .open_session(
                &thread_id,
                &started.cwd.0,
                (&started.approval_policy, &started.sandbox),
                (&started.model, started.reasoning_effort.as_ref()),
                servers,
            )
            .await?;
        Ok(NewSessionResponse::new(thread_id)
            .modes(mode.state())
            .config_options(options))
    }

    /// Resumes thread `session_id` in `cwd` (with its turns unless `exclude_turns`), starts
    /// the client's `mcp_servers` for it and records the session; the resumed thread.
    pub(crate) async fn resume_thread(
        &self,
        session_id: &SessionId,
        cwd: &std::path::Path,
        mcp_servers: &[agent_client_protocol::v1::schema::McpServer],
        exclude_turns: bool,
    ) -> Result<(ThreadResumeResponse, Mode, Vec<SessionConfigOption>), Error> {
        let cwd_text = absolute_cwd(cwd)?;
        let servers = SessionServers::start(mcp_servers, cwd).await;
        // The thread takes this session's tools, and withholds what this client replaces,
        // whatever an earlier session (or client) of it had.
        let (tools, config) = self.session_tools(&servers);
        let params: ThreadResumeParams = engine_params(
            ThreadResume::NAME,
            json!({
                "threadId": session_id.0.as_ref(),
                "cwd": cwd_text,
                "excludeTurns": exclude_turns,
                "dynamicTools": tools,
                "config": config,
            }),
        )?;
        let resumed = self
            .link()?
            .request::<ThreadResume>(&params)
            .await
            .map_err(|e| match e {
                LinkError::Engine { message, .. } => error(
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("session {}: {message}", session_id.0),
                )
                .data(json!({"sessionId": session_id.0.as_ref()})),
                other => engine_error("session/load", &other),
            })?;
        let (mode, options) = self
            .open_session(
                &resumed.thread.id,
                &resumed.cwd.0,
                (&resumed.approval_policy, &resumed.sandbox),
                (&resumed.model, resumed.reasoning_effort.as_ref()),
                servers,
            )
            .await?;
        Ok((resumed, mode, options))
    }

    /// `session/load`: resumes the thread (in the client's `cwd`), sends its history as
    /// `session/update`s, then answers.
    pub async fn load_session(
        &self,
        cx: &ConnectionTo<Client>,
        request: LoadSessionRequest,
    ) -> Result<LoadSessionResponse, Error> {
        let session_id = request.session_id.clone();
        let (resumed, mode, options) = self
            .resume_thread(&session_id, &request.cwd, &request.mcp_servers, false)
            .await?;
        let cwd = PathBuf::from(&resumed.cwd.0);
        for update in updates::replay(&cwd, &resumed.thread.turns) {
            cx.send_notification(SessionNotification::new(session_id.clone(), update))?;
        }
        Ok(LoadSessionResponse::new()
            .modes(mode.state())
            .config_options(options))
    }

    /// `session/set_mode`: the session's later turns run with the mode's approval policy and
    /// sandbox; a `current_mode_update` confirms it.
    pub fn set_mode(
        &self,
        cx: &ConnectionTo<Client>,
        request: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, Error> {
        let Some(mode) = Mode::from_id(request.mode_id.0.as_ref()) else {
            let known: Vec<&str> = Mode::ALL.iter().map(|m| m.id()).collect();
            return Err(error(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "unknown mode {:?}: the modes are {}",
                    request.mode_id.0,
                    known.join(", ")
                ),
            ));
        };
        self.with_session(&request.session_id, |session| {
            if session.mode != mode {
                session.mode = mode;
                session.mode_changed = true;
            }
        })?;
        cx.send_notification(SessionNotification::new(
            request.session_id,
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.id())),
        ))?;
        Ok(SetSessionModeResponse::new())
    }

    /// `session/cancel`: cancels the session's running prompt, if any.
    pub fn cancel(&self, notification: &CancelNotification) {
        let cancel = self
            .sessions()
            .get(notification.session_id.0.as_ref())
            .and_then(|session| session.cancel.clone());
        match cancel {
            Some(cancel) => cancel.cancel(),
            None => tracing::debug!(
                session = %notification.session_id.0,
                "session/cancel for a session with no running prompt"
            ),
        }
    }
}

/// Answers `responder` with `result`, logging a failure to send (the client has gone).
fn answer<T: agent_client_protocol::JsonRpcResponse>(
    responder: Responder<T>,
    result: Result<T, Error>,
) -> Result<(), Error> {
    if let Err(e) = responder.respond_with_result(result) {
        tracing::debug!(error = ?e, "ACP answer not delivered");
    }
    Ok(())
}

/// Serves ACP on stdin and stdout until the client closes stdin.
pub async fn serve_stdio(server: &Server<Engine>) -> Result<(), String> {
    let agent = Arc::new(AcpAgent::new(server.clone()));
    let (h, i, j, k) = (agent.clone(), agent.clone(), agent.clone(), agent.clone());
    let (a, b, c, d, e, f, g) = (
        agent.clone(),
        agent.clone(),
        agent.clone(),
        agent.clone(),
        agent.clone(),
        agent.clone(),
        agent.clone(),
    );
    Agent
        .v1()
        .name(crate::AGENT_NAME)
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                answer(responder, a.initialize(request).await)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: AuthenticateRequest,
                        responder: Responder<AuthenticateResponse>,
                        cx: ConnectionTo<Client>| {
                let agent = b.clone();
                cx.spawn(async move { answer(responder, agent.authenticate(request).await) })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                // Off the dispatch loop: the client's MCP servers may take a while to start,
                // and the other sessions go on meanwhile. The session is recorded before the
                // answer goes out, so a prompt sent on the answer finds it.
                let agent = c.clone();
                cx.spawn(async move { answer(responder, agent.new_session(request).await) })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest,
                        responder: Responder<LoadSessionResponse>,
                        cx: ConnectionTo<Client>| {
                // Off the dispatch loop, as session/new; the replay precedes the answer.
                let (agent, task_cx) = (d.clone(), cx.clone());
                cx.spawn(
                    async move { answer(responder, agent.load_session(&task_cx, request).await) },
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest,
                        responder: Responder<SetSessionModeResponse>,
                        cx: ConnectionTo<Client>| {
                answer(responder, e.set_mode(&cx, request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse>,
                        cx: ConnectionTo<Client>| {
                let agent = f.clone();
                let task_cx = cx.clone();
                cx.spawn(async move {
                    answer(
                        responder,
                        crate::turn::prompt(&agent, &task_cx, request).await,
                    )
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest,
                        responder: Responder<ListSessionsResponse>,
                        cx: ConnectionTo<Client>| {
                let agent = h.clone();
                cx.spawn(async move { answer(responder, agent.list_sessions(request).await) })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ResumeSessionRequest,
                        responder: Responder<ResumeSessionResponse>,
                        cx: ConnectionTo<Client>| {
                // Off the dispatch loop, as session/new.
                let agent = i.clone();
                cx.spawn(async move { answer(responder, agent.resume_session(request).await) })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CloseSessionRequest,
                        responder: Responder<CloseSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                answer(responder, j.close_session(request).await)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest,
                        responder: Responder<SetSessionConfigOptionResponse>,
                        cx: ConnectionTo<Client>| {
                answer(responder, k.set_config_option(&cx, request).await)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx: ConnectionTo<Client>| {
                g.cancel(&notification);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
        .map_err(|e| format!("ACP connection failed: {e}"))
}
