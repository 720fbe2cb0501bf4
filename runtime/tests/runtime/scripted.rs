//! A handler whose behaviour each test picks through the params it sends.
//!
//! - `thread/read`: `threadId` `sleep:<ms>[:tag]` sleeps, then answers; `panic` panics;
//!   anything else (e.g. `echo:<n>`) answers at once. The answer's `thread.preview` is
//!   `call <n>`, the handler's call counter when the call began.
//! - `thread/list` and `collaborationMode/list` answer at once with empty pages.
//! - `thread/name/set`: `name` `sleep:<ms>` sleeps, `panic` panics, `notify` sends
//!   `thread/name/updated`, `warning` and the experimental [`ExperimentalProbe`] to the caller.
//! - `command/exec`: `command[0]` `approve` sends `item/commandExecution/requestApproval` through
//!   `request_or_decline` and answers the decision it got as JSON in `stdout`; `ask` does the same
//!   through `request` and answers `exitCode` 1 with the error's kind in `stdout` when there is no
//!   usable answer. `command[1]`, when present, is the approval's `threadId`.
//!
//! Every call appends `start <key>` and `end <key>` to [`State::log`] (the key is the `threadId`,
//! plus `/<name>` for `thread/name/set`), so tests can see the order calls ran in; a connection
//! that closes appends `closed <connection id>`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentwire_protocol::method::{Direction, Method, Notification};
use agentwire_protocol::methods::{
    CommandExec, CommandExecutionRequestApproval, ThreadNameUpdated, Warning as WarningMethod,
};
use agentwire_protocol::{
    ClientInfo, CollaborationModeListParams, CollaborationModeListResponse, CommandExecParams,
    CommandExecResponse, CommandExecutionRequestApprovalParams, InitializeResponse,
    ThreadListParams, ThreadListResponse, ThreadNameUpdatedNotification, ThreadReadParams,
    ThreadReadResponse, ThreadSetNameParams, ThreadSetNameResponse, WarningNotification,
};
use agentwire_runtime::{ConnectionId, Handler, HandlerError, RequestContext, ServerRequestError};
use serde_json::json;

/// A server notification declared experimental, which the method table does not have: it lets
/// the tests check that experimental notifications stay away from connections without the
/// capability.
#[derive(Debug)]
pub enum ExperimentalProbe {}

impl Method for ExperimentalProbe {
    const NAME: &'static str = "test/experimentalProbe";
    const DIRECTION: Direction = Direction::ServerNotification;
    const EXPERIMENTAL: bool = true;
    const SINCE: &'static str = "0.1.0";
    const DOC: &'static str = "An experimental notification used only by tests.";
    const PARAMS_OPTIONAL: bool = false;
    type Params = WarningNotification;
}

impl Notification for ExperimentalProbe {}

/// What the handler saw.
#[derive(Debug, Default)]
pub struct State {
    calls: AtomicU64,
    log: Mutex<Vec<String>>,
}

impl State {
    /// The `closed …` entries of [`State::log`]: one per connection closed so far.
    pub fn closed(&self) -> Vec<String> {
        let mut log = self.log();
        log.retain(|entry| entry.starts_with("closed "));
        log
    }

    /// Every `start …` / `end …` entry so far, in the order they happened.
    pub fn log(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn record(&self, entry: String) {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(entry);
    }

    fn next_call(&self) -> u64 {
        self.calls.fetch_add(1, Ordering::SeqCst)
    }
}

/// The scripted handler; clones share their [`State`].
#[derive(Debug, Clone, Default)]
pub struct Scripted {
    /// What the handler saw.
    pub state: Arc<State>,
}

/// Sleeps for `sleep:<ms>[:…]`, panics for `panic`, does nothing otherwise.
async fn act(command: &str) {
    if command == "panic" {
        panic!("scripted panic");
    }
    let mut parts = command.split(':');
    if parts.next() == Some("sleep") {
        let ms = parts.next().and_then(|ms| ms.parse().ok()).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

fn thread(id: &str, preview: String) -> agentwire_protocol::Thread {
    serde_json::from_value(json!({
        "id": id,
        "sessionId": id,
        "name": null,
        "preview": preview,
        "status": { "type": "notLoaded" },
        "source": "appServer",
        "cwd": "/tmp",
        "cliVersion": "0.0.0",
        "modelProvider": "test",
        "ephemeral": true,
        "createdAt": 0,
        "updatedAt": 0,
        "projectId": null,
        "turns": [],
    }))
    .expect("a minimal thread decodes")
}

fn approval_params(thread_id: &str) -> CommandExecutionRequestApprovalParams {
    serde_json::from_value(json!({
        "threadId": thread_id,
        "turnId": "turn-1",
        "itemId": "item-1",
        "command": "echo hi",
        "startedAtMs": 0,
    }))
    .expect("minimal approval params decode")
}

fn error_kind(error: &ServerRequestError) -> &'static str {
    match error {
        ServerRequestError::Closed => "closed",
        ServerRequestError::TimedOut(_) => "timedOut",
        ServerRequestError::Client(_) => "client",
        ServerRequestError::Malformed(_) => "malformed",
    }
}

impl Handler for Scripted {
    fn initialize_response(&self, client: &ClientInfo) -> InitializeResponse {
        InitializeResponse::builder()
            .user_agent(format!(
                "{name}/{version} (test; {arch}) test ({name}; {client_version})",
                name = client.name,
                version = env!("CARGO_PKG_VERSION"),
                arch = std::env::consts::ARCH,
                client_version = client.version,
            ))
            .codex_home(agentwire_protocol::AbsolutePathBuf(
                crate::harness::home().to_string_lossy().into_owned(),
            ))
            .platform_family(std::env::consts::FAMILY.to_owned())
            .platform_os(std::env::consts::OS.to_owned())
            .build()
    }

    fn connection_closed(&self, connection: ConnectionId) {
        self.state.record(format!("closed {}", connection.0));
    }

    async fn thread_read(
        &self,
        _context: RequestContext,
        params: ThreadReadParams,
    ) -> Result<ThreadReadResponse, HandlerError> {
        let call = self.state.next_call();
        self.state.record(format!("start {}", params.thread_id));
        act(&params.thread_id).await;
        self.state.record(format!("end {}", params.thread_id));
        Ok(ThreadReadResponse::builder()
            .thread(thread(&params.thread_id, format!("call {call}")))
            .build())
    }

    async fn thread_list(
        &self,
        _context: RequestContext,
        _params: ThreadListParams,
    ) -> Result<ThreadListResponse, HandlerError> {
        Ok(ThreadListResponse::builder().build())
    }

    async fn collaboration_mode_list(
        &self,
        _context: RequestContext,
        _params: CollaborationModeListParams,
    ) -> Result<CollaborationModeListResponse, HandlerError> {
        Ok(CollaborationModeListResponse::builder().build())
    }

    async fn thread_set_name(
        &self,
        context: RequestContext,
        params: ThreadSetNameParams,
    ) -> Result<ThreadSetNameResponse, HandlerError> {
        let key = format!("{}/{}", params.thread_id, params.name);
        self.state.next_call();
        self.state.record(format!("start {key}"));
        if params.name == "notify" {
            let warning = WarningNotification::builder()
                .thread_id(params.thread_id.clone())
                .message("scripted warning".to_owned())
                .build();
            context.peer.notify::<ThreadNameUpdated>(
                &ThreadNameUpdatedNotification::builder()
                    .thread_id(params.thread_id.clone())
                    .thread_name(params.name.clone())
                    .build(),
            );
            context.peer.notify::<WarningMethod>(&warning);
            context.peer.notify::<ExperimentalProbe>(&warning);
        }
        act(&params.name).await;
        self.state.record(format!("end {key}"));
        Ok(ThreadSetNameResponse::builder().build())
    }

    async fn command_exec(
        &self,
        context: RequestContext,
        params: CommandExecParams,
    ) -> Result<CommandExecResponse, HandlerError> {
        let mode = params.command.first().map(String::as_str).unwrap_or("");
        let thread_id = params
            .command
            .get(1)
            .map(String::as_str)
            .unwrap_or("t-approval");
        let approval = approval_params(thread_id);
        let answer = |decision: &agentwire_protocol::CommandExecutionApprovalDecision| {
            serde_json::to_string(decision).expect("a decision encodes")
        };
        match mode {
            "approve" => {
                let response = context
                    .peer
                    .request_or_decline::<CommandExecutionRequestApproval>(&approval)
                    .await;
                Ok(CommandExecResponse::builder()
                    .exit_code(0)
                    .stdout(answer(&response.decision))
                    .stderr(String::new())
                    .build())
            }
            "ask" => {
                match context
                    .peer
                    .request::<CommandExecutionRequestApproval>(&approval)
                    .await
                {
                    Ok(response) => Ok(CommandExecResponse::builder()
                        .exit_code(0)
                        .stdout(answer(&response.decision))
                        .stderr(String::new())
                        .build()),
                    Err(error) => Ok(CommandExecResponse::builder()
                        .exit_code(1)
                        .stdout(error_kind(&error).to_owned())
                        .stderr(error.to_string())
                        .build()),
                }
            }
            other => Err(HandlerError::invalid_params(
                CommandExec::NAME,
                format!("unknown scripted command {other:?}"),
            )),
        }
    }
}
