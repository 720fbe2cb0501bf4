//! One `session/prompt`: a turn on the session's thread, its notifications sent to the client
//! as `session/update`s, its approval requests asked as `session/request_permission`, and the
//! answer once the turn has completed.
//!
//! Approvals: the client is offered *allow once*, *allow always* and *reject once*, which the
//! engine reads as `accept`, `acceptForSession` and `decline`. A `cancelled` outcome (the
//! client cancelled the prompt), an error or an unreadable answer is `cancel` (the turn stops)
//! or, for the last two, `decline`.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, PromptRequest, PromptResponse,
    RequestPermissionOutcome, RequestPermissionRequest, SessionId, SessionNotification, StopReason,
    ToolCallContent, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use agent_client_protocol::{Client, Error, ErrorCode};
use agentwire_mcp_server::approvals::{HostDecision, command_answer, patch_answer};
use agentwire_mcp_server::engine_link::{EngineLink, EngineMessage, THREAD_QUEUE};
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    CommandExecutionRequestApproval, DynamicToolCall, FileChangeRequestApproval, TurnInterrupt,
    TurnStart,
};
use agentwire_protocol::{
    CommandExecutionRequestApprovalParams, DynamicToolCallParams, FileChangeRequestApprovalParams,
    TurnInterruptParams, TurnStartParams,
};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::agent::{AcpAgent, engine_params, error};
use crate::client_tools::{self, Allowed, ClientOffer};
use crate::mcp::SessionServers;
use crate::modes::Mode;
use crate::updates::{TurnEnd, TurnTranslator};

/// The option ids a permission request offers.
const ALLOW_ONCE: &str = "allow-once";
const ALLOW_ALWAYS: &str = "allow-always";
const REJECT_ONCE: &str = "reject-once";

/// The options every permission request offers.
pub(crate) fn options() -> Vec<PermissionOption> {
    vec![
        PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
        PermissionOption::new(
            ALLOW_ALWAYS,
            "Allow for this session",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
    ]
}

/// Which engine approval a permission request answers.
#[derive(Debug, Clone, Copy)]
enum ApprovalKind {
    Command,
    Patch,
}

/// `params` of engine request `method`; `None`, logged, when they do not parse.
fn approval_params<T: serde::de::DeserializeOwned>(method: &str, params: Value) -> Option<T> {
    serde_json::from_value(params)
        .map_err(|e| tracing::warn!(method, error = %e, "approval request not understood; refused"))
        .ok()
}

/// The permission request for an engine approval request; `None` for a request that is not
/// an approval (or not understood).
fn permission_request(
    session_id: &SessionId,
    method: &str,
    params: Value,
) -> Option<(ApprovalKind, RequestPermissionRequest)> {
    let (kind, item_id, fields) = match method {
        CommandExecutionRequestApproval::NAME => {
            let params: CommandExecutionRequestApprovalParams = approval_params(method, params)?;
            let mut fields = ToolCallUpdateFields::new().kind(ToolKind::Execute);
            if let Some(command) = &params.command {
                fields = fields.title(command.clone());
            }
            fields = fields.raw_input(json!({
                "command": params.command,
                "cwd": params.cwd.as_ref().map(|c| c.0.clone()),
                "reason": params.reason,
            }));
            (ApprovalKind::Command, params.item_id, fields)
        }
        FileChangeRequestApproval::NAME => {
            let params: FileChangeRequestApprovalParams = approval_params(method, params)?;
            let fields = ToolCallUpdateFields::new()
                .kind(ToolKind::Edit)
                .raw_input(json!({"reason": params.reason, "grantRoot": params.grant_root}));
            (ApprovalKind::Patch, params.item_id, fields)
        }
        _ => return None,
    };
    let request = RequestPermissionRequest::new(
        session_id.clone(),
        ToolCallUpdate::new(item_id, fields),
        options(),
    );
    Some((kind, request))
}

/// What the client's answer decides.
pub(crate) fn decision(answer: Result<RequestPermissionOutcome, Error>) -> HostDecision {
    match answer {
        Ok(RequestPermissionOutcome::Selected(selected)) => match selected.option_id.0.as_ref() {
            ALLOW_ONCE => HostDecision::Accept,
            ALLOW_ALWAYS => HostDecision::AcceptForSession,
            REJECT_ONCE => HostDecision::Decline,
            other => {
                tracing::info!(option = other, "unknown permission option chosen; declined");
                HostDecision::Decline
            }
        },
        Ok(RequestPermissionOutcome::Cancelled) => HostDecision::Cancel,
        Ok(_) => HostDecision::Decline,
        Err(e) => {
            tracing::info!(error = ?e, "no permission answer; declined");
            HostDecision::Decline
        }
    }
}

/// Asks the client and turns its answer into the engine's.
async fn ask(
    cx: ConnectionTo<Client>,
    kind: ApprovalKind,
    request: RequestPermissionRequest,
) -> Value {
    let answer = cx
        .send_request(request)
        .block_task()
        .await
        .map(|response| response.outcome);
    let decision = Some(decision(answer));
    match kind {
        ApprovalKind::Command => command_answer(decision),
        ApprovalKind::Patch => patch_answer(decision),
    }
}

fn interrupt(link: &Arc<EngineLink>, thread_id: &str, turn_id: &str) {
    let params = TurnInterruptParams::builder()
        .thread_id(thread_id.to_owned())
        .turn_id(turn_id.to_owned())
        .build();
    let link = link.clone();
    tokio::spawn(async move {
        if let Err(e) = link.request::<TurnInterrupt>(&params).await {
            tracing::info!(error = %e, "turn/interrupt after session/cancel failed");
        }
    });
}

/// The answer to one engine request, being worked out: the request id and the result.
type Answering = Pin<Box<dyn Future<Output = (Value, Value)> + Send>>;

/// What a prompt's dynamic tool calls need: the client tools' and MCP servers' session.
struct ToolContext {
    cx: ConnectionTo<Client>,
    session_id: SessionId,
    cwd: PathBuf,
    mode: Mode,
    offer: ClientOffer,
    servers: Arc<SessionServers>,
    allowed: Arc<Allowed>,
    cancel: CancellationToken,
}

impl ToolContext {
    /// Answers an `item/tool/call` (`params`): a client tool through the client, an MCP tool
    /// through its server; anything else fails the call.
    async fn tool_call(&self, params: Value) -> Value {
        let params: DynamicToolCallParams = match serde_json::from_value(params) {
            Ok(params) => params,
            Err(e) => {
                return client_tools::answer(
                    format!("the tool call was not understood: {e}"),
                    false,
                );
            }
        };
        match params.namespace.as_deref() {
            None if client_tools::is_client_tool(&params.tool) => {
                let call = client_tools::Call {
                    cx: &self.cx,
                    session_id: &self.session_id,
                    cwd: &self.cwd,
                    mode: self.mode,
                    offer: self.offer,
                    allowed: &self.allowed,
                    call_id: &params.call_id,
                    cancel: &self.cancel,
                };
                call.run(&params.tool, params.arguments).await
            }
            Some(ns) => match self.servers.call(ns, &params.tool, params.arguments).await {
                Some((text, success)) => {
                    client_tools::send_update(
                        &self.cx,
                        &self.session_id,
                        &params.call_id,
                        ToolCallUpdateFields::new()
                            .content(vec![ToolCallContent::from(text.clone())]),
                    );
                    client_tools::answer(text, success)
                }
                None => client_tools::answer(
                    format!(
                        "no MCP server `{ns}` is attached to this session now (the editor attaches \
                         servers with session/new, session/load or session/resume)"
                    ),
                    false,
                ),
            },
            None => client_tools::answer(
                format!(
                    "the tool `{}` is not available in this session (the editor does not offer it)",
                    params.tool
                ),
                false,
            ),
        }
    }
}

/// Clears the session's running prompt when the prompt ends, however it ends.
struct Running<'a> {
    agent: &'a AcpAgent,
    session_id: SessionId,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let _ = self
            .agent
            .with_session(&self.session_id, |session| session.cancel = None);
    }
}

/// Runs `request` to its end: the answer's stop reason, or the error that ended the turn.
pub async fn prompt(
    agent: &AcpAgent,
    cx: &ConnectionTo<Client>,
    request: PromptRequest,
) -> Result<PromptResponse, Error> {
    let link = agent.link()?.clone();
    let session_id = request.session_id.clone();
    let thread_id = session_id.0.to_string();
    let input = crate::prompt::user_input(&request.prompt)
        .map_err(|message| error(ErrorCode::INVALID_PARAMS, message))?;
    let cancel = CancellationToken::new();
    let (cwd, mode, changed_mode, settings, tools) =
        agent.with_session(&session_id, |session| {
            if session.cancel.as_ref().is_some_and(|c| !c.is_cancelled()) {
                return Err(error(
                    ErrorCode::INVALID_REQUEST,
                    "a prompt is already running in this session; cancel it or wait for its answer",
                ));
            }
            session.cancel = Some(cancel.clone());
            let changed_mode = session.mode_changed.then_some(session.mode);
            session.mode_changed = false;
            let settings = session.settings_changed.then(|| session.settings.clone());
            session.settings_changed = false;
            let tools = (session.servers.clone(), session.allowed.clone());
            Ok((
                session.cwd.clone(),
                session.mode,
                changed_mode,
                settings,
                tools,
            ))
        })??;
    let tool_context = Arc::new(ToolContext {
        cx: cx.clone(),
        session_id: session_id.clone(),
        cwd: cwd.clone(),
        mode,
        offer: agent.offer(),
        servers: tools.0,
        allowed: tools.1,
        cancel: cancel.clone(),
    });
    let _running = Running {
        agent,
        session_id: session_id.clone(),
    };
    let Some(mut messages) = link.hold_thread(&thread_id).await else {
        return Err(error(
            ErrorCode::INTERNAL_ERROR,
            "the engine connection is closed",
        ));
    };
    let mut params = json!({"threadId": thread_id, "input": input});
    if let Some(mode) = changed_mode {
        params["approvalPolicy"] = json!(mode.approval_policy());
        params["sandboxPolicy"] = mode.sandbox_policy();
    }
    if let Some(settings) = settings {
        params["model"] = json!(settings.model);
        params["effort"] = json!(settings.effort);
    }
    let params: TurnStartParams = engine_params(TurnStart::NAME, params)?;
    let turn = link
        .request::<TurnStart>(&params)
        .await
        .map_err(|e| {
            error(
                ErrorCode::INTERNAL_ERROR,
                format!("Could not start a turn: {e}"),
            )
        })?
        .turn;
    let mut translator = TurnTranslator::new(turn.id.clone(), cwd);
    let mut pending: FuturesUnordered<Answering> = FuturesUnordered::new();
    let mut cancelled = false;
    loop {
        tokio::select! {
            () = cancel.cancelled(), if !cancelled => {
                cancelled = true;
                interrupt(&link, &thread_id, &turn.id);
            }
            Some((id, answer)) = pending.next(), if !pending.is_empty() => {
                link.answer(&id, &answer);
            }
            message = messages.next() => match message {
                None if messages.overflowed() => {
                    interrupt(&link, &thread_id, &turn.id);
                    return Err(error(ErrorCode::INTERNAL_ERROR, format!(
                        "the client read this turn's updates too slowly (over {THREAD_QUEUE} were \
                         waiting); the turn was interrupted and thread {thread_id} keeps what was \
                         recorded so far"
                    )));
                }
                None => {
                    return Err(error(
                        ErrorCode::INTERNAL_ERROR,
                        "the engine stopped before the turn completed",
                    ));
                }
                Some(EngineMessage::Notification { method, params }) => {
                    let (updates, end) = translator.notification(&method, params);
                    for update in updates {
                        cx.send_notification(SessionNotification::new(session_id.clone(), update))?;
                    }
                    match end {
                        None => {}
                        Some(_) if cancelled => {
                            return Ok(PromptResponse::new(StopReason::Cancelled));
                        }
                        Some(TurnEnd::Stopped(reason)) => return Ok(PromptResponse::new(reason)),
                        Some(TurnEnd::Failed(message)) => {
                            return Err(error(
                                ErrorCode::INTERNAL_ERROR,
                                format!("The turn failed: {message}"),
                            ));
                        }
                    }
                }
                Some(EngineMessage::Request { id, method, params }) if method == DynamicToolCall::NAME => {
                    let context = tool_context.clone();
                    pending.push(Box::pin(async move {
                        let answer = context.tool_call(params).await;
                        (id, answer)
                    }));
                }
                Some(EngineMessage::Request { id, method, params }) => {
                    match permission_request(&session_id, &method, params) {
                        Some((kind, request)) => {
                            let cx = cx.clone();
                            pending.push(Box::pin(async move { (id, ask(cx, kind, request).await) }));
                        }
                        None => {
                            tracing::warn!(method, "engine request an ACP client cannot answer");
                            link.refuse(&id, &format!("{method} is not supported over ACP"));
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    use super::*;

    #[test]
    fn permission_answers_become_engine_decisions() {
        let selected = |id: &str| {
            Ok(RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(id.to_owned()),
            ))
        };
        assert_eq!(decision(selected(ALLOW_ONCE)), HostDecision::Accept);
        assert_eq!(
            decision(selected(ALLOW_ALWAYS)),
            HostDecision::AcceptForSession
        );
        assert_eq!(decision(selected(REJECT_ONCE)), HostDecision::Decline);
        assert_eq!(decision(selected("maybe")), HostDecision::Decline);
        assert_eq!(
            decision(Ok(RequestPermissionOutcome::Cancelled)),
            HostDecision::Cancel
        );
        assert_eq!(
            decision(Err(Error::internal_error())),
            HostDecision::Decline
        );
        assert_eq!(
            command_answer(Some(decision(selected(ALLOW_ALWAYS)))),
            json!({"decision": "acceptForSession"})
        );
    }

    #[test]
    fn only_approvals_become_permission_requests() {
        let session = SessionId::new("th");
        let (_, request) = permission_request(
            &session,
            CommandExecutionRequestApproval::NAME,
            json!({"threadId": "th", "turnId": "t", "itemId": "call_1", "command": "touch x", "cwd": "/w", "startedAtMs": 1}),
        )
        .expect("a command approval");
        let request = serde_json::to_value(request).expect("json");
        assert_eq!(request["toolCall"]["toolCallId"], "call_1");
        assert_eq!(request["toolCall"]["title"], "touch x");
        let kinds: Vec<&str> = request["options"]
            .as_array()
            .expect("options")
            .iter()
            .filter_map(|o| o["kind"].as_str())
            .collect();
        assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);
        assert!(permission_request(&session, "item/tool/call", json!({})).is_none());
    }
}
