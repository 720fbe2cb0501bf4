//! Running one `tools/call`: start or resume the thread, run a turn on the engine, stream its
//! events to the host, turn its approvals into elicitations, and answer with the turn's result.

use std::sync::Arc;

use agentwire_protocol::mcp::{
    CodexApprovalElicitationParams, CodexEventMsg, CodexToolCallOutput, CodexToolCallParam,
    CodexToolCallResult, McpContentBlock,
};
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    CommandExecutionRequestApproval, FileChangeRequestApproval, ThreadResume, ThreadStart,
    TurnInterrupt, TurnStart,
};
use agentwire_protocol::{
    AskForApproval, CommandExecutionRequestApprovalParams, FileChangeRequestApprovalParams,
    SandboxMode, ThreadResumeParams, ThreadStartParams, TurnInterruptParams, TurnStartParams,
};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::approvals::{self, HostDecision};
use crate::engine_link::{EngineLink, EngineMessage, LinkError, THREAD_QUEUE};
use crate::events::{self, TurnOutcome, TurnTranslator};
use crate::host::Host;
use crate::tools::ToolCall;

/// A failed call: `isError`, with the reason as text.
pub fn failure(message: impl Into<String>) -> CodexToolCallResult {
    CodexToolCallResult::builder()
        .content(vec![McpContentBlock::text().text(message).build()])
        .is_error(true)
        .build()
}

fn success(thread_id: &str, content: String) -> CodexToolCallResult {
    CodexToolCallResult::builder()
        .content(vec![McpContentBlock::text().text(content.clone()).build()])
        .structured_content(
            CodexToolCallOutput::builder()
                .thread_id(thread_id.to_owned())
                .content(content)
                .build(),
        )
        .build()
}

/// Runs `call` to its end. `cancel` fires when the host cancels the `tools/call`: the running
/// turn is then interrupted (and its result, which rmcp does not send, says so).
pub async fn run(
    link: &Arc<EngineLink>,
    host: &Host,
    cancel: &CancellationToken,
    call: ToolCall,
) -> CodexToolCallResult {
    match call {
        ToolCall::Codex(args) => codex(link, host, cancel, args).await,
        ToolCall::Reply { thread_id, prompt } => {
            reply(link, host, cancel, &thread_id, prompt).await
        }
    }
}

/// `params` (an object whose `null` members are dropped) as the params of an engine request.
fn engine_params<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, String> {
    let params = match params {
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .filter(|(_, value)| !value.is_null())
                .collect::<Map<_, _>>(),
        ),
        other => other,
    };
    serde_json::from_value(params).map_err(|e| format!("Invalid params for {method}: {e}"))
}

fn thread_start_params(args: &CodexToolCallParam) -> Result<ThreadStartParams, String> {
    let mut config = args.config.clone().unwrap_or_default();
    if let Some(prompt) = &args.compact_prompt {
        config.insert("compact_prompt".to_owned(), json!(prompt));
    }
    let cwd = match &args.cwd {
        Some(cwd) => Some(
            std::path::absolute(cwd)
                .map_err(|e| format!("Invalid argument `cwd` ({cwd}): {e}"))?
                .display()
                .to_string(),
        ),
        None => None,
    };
    engine_params(
        ThreadStart::NAME,
        json!({
            "cwd": cwd,
            "model": args.model,
            "approvalPolicy": args.approval_policy.map(AskForApproval::from),
            "sandbox": args.sandbox.map(SandboxMode::from),
            "config": (!config.is_empty()).then_some(config),
            "baseInstructions": args.base_instructions,
            "developerInstructions": args.developer_instructions,
        }),
    )
}

async fn codex(
    link: &Arc<EngineLink>,
    host: &Host,
    cancel: &CancellationToken,
    args: CodexToolCallParam,
) -> CodexToolCallResult {
    let params = match thread_start_params(&args) {
        Ok(params) => params,
        Err(message) => return failure(message),
    };
    let started = match link.request::<ThreadStart>(&params).await {
        Ok(started) => started,
        Err(e) => return failure(format!("Could not start a thread: {e}")),
    };
    let thread_id = started.thread.id.clone();
    link.follow(&thread_id);
    host.event(&thread_id, "", events::session_configured(&started))
        .await;
    run_turn(link, host, cancel, &thread_id, args.prompt).await
}

async fn reply(
    link: &Arc<EngineLink>,
    host: &Host,
    cancel: &CancellationToken,
    thread_id: &str,
    prompt: String,
) -> CodexToolCallResult {
    if !link.follows(thread_id) {
        let params: ThreadResumeParams = match engine_params(
            ThreadResume::NAME,
            json!({"threadId": thread_id, "excludeTurns": true}),
        ) {
            Ok(params) => params,
            Err(message) => return failure(message),
        };
        match link.request::<ThreadResume>(&params).await {
            Ok(_) => link.follow(thread_id),
            Err(LinkError::Engine { message, .. }) => {
                return failure(format!("Unknown thread `{thread_id}`: {message}"));
            }
            Err(e) => return failure(format!("Could not resume thread `{thread_id}`: {e}")),
        }
    }
    run_turn(link, host, cancel, thread_id, prompt).await
}

/// Which kind of approval an elicitation answers.
#[derive(Debug, Clone, Copy)]
enum ApprovalKind {
    Command,
    Patch,
}

/// An approval request as the elicitation to send, and the event announcing it; `None` for a
/// request that is not an approval.
fn approval(
    translator: &TurnTranslator,
    host: &Host,
    method: &str,
    params: Value,
) -> Option<(ApprovalKind, Value, CodexApprovalElicitationParams)> {
    let turn_id = translator.turn_id();
    match method {
        CommandExecutionRequestApproval::NAME => {
            let params: CommandExecutionRequestApprovalParams =
                serde_json::from_value(params).ok()?;
            let line = translator.command(&params.item_id);
            let (event, elicitation) =
                approvals::exec_elicitation(&params, line, host.request_id(), turn_id);
            Some((ApprovalKind::Command, event, elicitation))
        }
        FileChangeRequestApproval::NAME => {
            let params: FileChangeRequestApprovalParams = serde_json::from_value(params).ok()?;
            let changes = translator.file_changes(&params.item_id);
            let (event, elicitation) =
                approvals::patch_elicitation(&params, changes, host.request_id(), turn_id);
            Some((ApprovalKind::Patch, event, elicitation))
        }
        _ => None,
    }
}

/// Asks the host, and turns its answer into the engine's.
async fn ask(
    host: &Host,
    kind: ApprovalKind,
    elicitation: CodexApprovalElicitationParams,
) -> Value {
    let decision: Option<HostDecision> = match host.elicit(&elicitation).await {
        Ok(answer) => {
            let decision = approvals::host_decision(&answer);
            if decision.is_none() {
                tracing::info!(%answer, "unreadable approval answer; denied");
            }
            decision
        }
        Err(reason) => {
            tracing::info!(reason, "no approval answer; denied");
            None
        }
    };
    match kind {
        ApprovalKind::Command => approvals::command_answer(decision),
        ApprovalKind::Patch => approvals::patch_answer(decision),
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
            tracing::info!(error = %e, "turn/interrupt after a cancellation failed");
        }
    });
}

async fn run_turn(
    link: &Arc<EngineLink>,
    host: &Host,
    cancel: &CancellationToken,
    thread_id: &str,
    prompt: String,
) -> CodexToolCallResult {
    // A call on a thread that is running a turn for another call waits for it to end.
    let held = tokio::select! {
        held = link.hold_thread(thread_id) => held,
        () = cancel.cancelled() => {
            return failure("The call was cancelled before its turn started");
        }
    };
    let Some(mut messages) = held else {
        return failure("The engine connection is closed");
    };
    if cancel.is_cancelled() {
        return failure("The call was cancelled before its turn started");
    }
    let params: TurnStartParams = match engine_params(
        TurnStart::NAME,
        json!({"threadId": thread_id, "input": [{"type": "text", "text": prompt}]}),
    ) {
        Ok(params) => params,
        Err(message) => return failure(message),
    };
    let turn = match link.request::<TurnStart>(&params).await {
        Ok(started) => started.turn,
        Err(e) => return failure(format!("Could not start a turn: {e}")),
    };
    let mut translator = TurnTranslator::new(turn.id.clone());
    let mut pending = FuturesUnordered::new();
    let mut interrupted = false;
    loop {
        tokio::select! {
            () = cancel.cancelled(), if !interrupted => {
                interrupted = true;
                interrupt(link, thread_id, &turn.id);
            }
            Some((id, answer)) = pending.next(), if !pending.is_empty() => {
                link.answer(&id, &answer);
            }
            message = messages.next() => match message {
                None if messages.overflowed() => {
                    interrupt(link, thread_id, &turn.id);
                    return failure(format!(
                        "The MCP host read this turn's events too slowly: over {THREAD_QUEUE} were \
                         waiting, so the call stopped following the turn and interrupted it if it \
                         was still running; thread {thread_id} keeps everything recorded so far"
                    ));
                }
                None => return failure("The engine stopped before the turn completed"),
                Some(EngineMessage::Notification { method, params }) => {
                    let (emitted, outcome) = translator.notification(&method, params);
                    for msg in emitted {
                        host.event(thread_id, translator.turn_id(), msg).await;
                    }
                    match outcome {
                        None => {}
                        Some(TurnOutcome::Completed(content)) => {
                            return success(thread_id, content);
                        }
                        Some(TurnOutcome::Failed(reason)) => {
                            return failure(format!("The turn failed: {reason}"));
                        }
                        Some(TurnOutcome::Interrupted) => {
                            return failure("The turn was interrupted");
                        }
                    }
                }
                Some(EngineMessage::Request { id, method, params }) => {
                    match approval(&translator, host, &method, params) {
                        Some((kind, event, elicitation)) => {
                            host.event(thread_id, translator.turn_id(), CodexEventMsg::Other(event))
                                .await;
                            pending.push(async move { (id, ask(host, kind, elicitation).await) });
                        }
                        None => {
                            tracing::warn!(method, "engine request an MCP host cannot answer");
                            link.refuse(&id, &format!("{method} is not supported over MCP"));
                        }
                    }
                }
            }
        }
    }
}
