//! Where a turn runs the lifecycle hooks of its working directory (see `crate::hooks::run`):
//!
//! - `SessionStart` before the first input of a thread, and `UserPromptSubmit` before each
//!   input (the turn's, and steered input): context they add becomes a `hookPrompt` item the
//!   model reads before the input; a refusal drops the input and ends the turn.
//! - `PreToolUse` before each tool call: a refusal skips the call, and the model is told why.
//! - `PostToolUse` after each tool call: its feedback and context follow the call's result.
//! - `Stop` when the model is done: a refusal sends its reason to the model as a `hookPrompt`
//!   item and the turn goes on (at most [`MAX_STOP_CONTINUATIONS`] times).
//!
//! The hooks are read from the configuration once per turn.

use std::sync::Arc;

use agentwire_protocol::methods::{HookCompleted, HookStarted};
use agentwire_protocol::{
    HookCompletedNotification, HookEventName, HookMetadata, HookPromptFragment,
    HookStartedNotification, ThreadItemKind, UserInput,
};
use agentwire_providers::{HistoryEntry, ToolCall, user_text};
use agentwire_store::meta::new_id;
use serde_json::{Map, Value, json};

use super::{CallEnd, TurnRun, now_ms};
use crate::hooks::run::{HookEnv, HookEvent, Notice, Notify, Verdict, run_event};

/// Most times `Stop` hooks may send a turn back to the model.
const MAX_STOP_CONTINUATIONS: u32 = 3;

/// A turn's hooks: read once, when first needed.
#[derive(Debug, Default)]
pub(super) struct TurnHooks {
    declared: Option<Arc<[HookMetadata]>>,
    /// How many times `Stop` hooks sent the turn back to the model.
    continuations: u32,
}

impl TurnRun {
    /// The hooks that apply in the thread's working directory (read on the blocking pool).
    async fn declared_hooks(&mut self) -> Arc<[HookMetadata]> {
        if let Some(declared) = &self.hooks.declared {
            return declared.clone();
        }
        let config = self.turns.config.clone();
        let cwd = self.settings.cwd.clone();
        let read = tokio::task::spawn_blocking(move || {
            let effective = config.effective(Some(std::path::Path::new(&cwd)));
            crate::hooks::list(&cwd, &effective.layers).hooks
        })
        .await;
        let declared: Arc<[HookMetadata]> = read.unwrap_or_default().into();
        self.hooks.declared = Some(declared.clone());
        declared
    }

    /// Runs the hooks of `event` (none declared: nothing happens).
    async fn run_hooks(
        &mut self,
        name: HookEventName,
        tool_name: Option<&str>,
        fields: Map<String, Value>,
    ) -> Verdict {
        let declared = self.declared_hooks().await;
        if !declared.iter().any(|h| h.event_name == name) {
            return Verdict::default();
        }
        let env = HookEnv {
            thread_id: self.thread_id.clone(),
            turn_id: Some(self.turn.id.clone()),
            cwd: self.settings.cwd.clone(),
            model: self.settings.model.clone(),
            permission_mode: serde_json::to_value(&self.settings.approval_policy)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            sandbox: self.settings.sandbox.clone(),
            sandbox_exe: self.turns.sandbox_exe.clone(),
            env: Some(self.turns.command_environment(&self.settings.cwd)),
        };
        let event = HookEvent {
            name,
            tool_name: tool_name.map(str::to_owned),
            fields,
        };
        let threads = self.turns.threads.clone();
        let (thread_id, turn_id) = (self.thread_id.clone(), self.turn.id.clone());
        let notify: Notify = Arc::new(move |notice| {
            let audience = threads.subscribers.audience(&thread_id);
            match notice {
                Notice::Started(run) => audience.notify::<HookStarted>(
                    &HookStartedNotification::builder()
                        .run(run)
                        .thread_id(thread_id.clone())
                        .turn_id(turn_id.clone())
                        .build(),
                ),
                Notice::Completed(run) => audience.notify::<HookCompleted>(
                    &HookCompletedNotification::builder()
                        .run(run)
                        .thread_id(thread_id.clone())
                        .turn_id(turn_id.clone())
                        .build(),
                ),
            }
        });
        run_event(&declared, &env, &event, &notify).await
    }

    /// Adds what hooks gave for the model as a `hookPrompt` item and to the conversation.
    async fn hook_prompt(&mut self, fragments: Vec<(String, String)>) {
        if fragments.is_empty() {
            return;
        }
        let text = fragments
            .iter()
            .map(|(_, text)| text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let kind = ThreadItemKind::hook_prompt()
            .id(new_id())
            .fragments(
                fragments
                    .into_iter()
                    .map(|(hook_run_id, text)| {
                        HookPromptFragment::builder()
                            .hook_run_id(hook_run_id)
                            .text(text)
                            .build()
                    })
                    .collect(),
            )
            .build();
        let at = now_ms();
        self.started(kind.clone(), at);
        self.complete(kind, at).await;
        self.history.push(HistoryEntry::Context { text });
    }

    /// `SessionStart` (before a thread's first input) and `UserPromptSubmit` for `input`: the
    /// turn's end when a hook refused the input or stopped the turn.
    pub(super) async fn prompt_hooks(&mut self, input: &[UserInput]) -> Option<CallEnd> {
        if self.review.is_some() {
            return None;
        }
        let mut fragments = Vec::new();
        if self
            .history
            .iter()
            .all(|e| !matches!(e, HistoryEntry::User { .. }))
        {
            let mut fields = Map::new();
            fields.insert("source".into(), json!("startup"));
            let verdict = self
                .run_hooks(HookEventName::SessionStart, None, fields)
                .await;
            fragments.extend(verdict.context);
            if verdict.stop.is_some() {
                self.hook_prompt(fragments).await;
                return Some(CallEnd::Done(Vec::new()));
            }
        }
        let mut fields = Map::new();
        fields.insert("prompt".into(), json!(user_text(input)));
        let verdict = self
            .run_hooks(HookEventName::UserPromptSubmit, None, fields)
            .await;
        fragments.extend(verdict.context);
        if verdict.blocked.is_some() || verdict.stop.is_some() {
            return Some(CallEnd::Done(Vec::new()));
        }
        self.hook_prompt(fragments).await;
        None
    }

    /// `PreToolUse` for `call`: what the model is told when a hook refused it.
    pub(super) async fn pre_tool_hooks(&mut self, call: &ToolCall) -> Option<String> {
        let mut fields = tool_fields(call);
        fields.insert("tool_use_id".into(), json!(call.call_id));
        let verdict = self
            .run_hooks(HookEventName::PreToolUse, Some(&call.name), fields)
            .await;
        verdict
            .blocked
            .or(verdict.stop)
            .map(|reason| format!("A hook refused this call, so it did not run: {reason}"))
    }

    /// `PostToolUse` for `call`, whose result was `result`: the result the model sees, with
    /// the hooks' feedback and context after it.
    pub(super) async fn post_tool_hooks(&mut self, call: &ToolCall, result: String) -> String {
        let mut fields = tool_fields(call);
        fields.insert("tool_use_id".into(), json!(call.call_id));
        fields.insert("tool_response".into(), json!(result));
        let verdict = self
            .run_hooks(HookEventName::PostToolUse, Some(&call.name), fields)
            .await;
        let mut result = result;
        if let Some(reason) = verdict.blocked.or(verdict.stop) {
            result.push_str(&format!("\n\nA hook reported on this call: {reason}"));
        }
        for (_, text) in verdict.context {
            result.push_str(&format!("\n\n{text}"));
        }
        result
    }

    /// `Stop` once the model is done: whether a hook sent the turn back to the model (its
    /// reason is then in the conversation).
    pub(super) async fn stop_hooks_continue(&mut self) -> bool {
        let last = self.turn.items.iter().rev().find_map(|i| match &i.kind {
            ThreadItemKind::AgentMessage { text, .. } => Some(text.clone()),
            _ => None,
        });
        let mut fields = Map::new();
        fields.insert(
            "stop_hook_active".into(),
            json!(self.hooks.continuations > 0),
        );
        fields.insert("last_assistant_message".into(), json!(last));
        let verdict = self.run_hooks(HookEventName::Stop, None, fields).await;
        let Some(reason) = verdict.blocked else {
            return false;
        };
        if verdict.stop.is_some() || self.hooks.continuations >= MAX_STOP_CONTINUATIONS {
            return false;
        }
        self.hooks.continuations += 1;
        let run_id = verdict.blocked_by.unwrap_or_else(new_id);
        let mut fragments = vec![(run_id, reason)];
        fragments.extend(verdict.context);
        self.hook_prompt(fragments).await;
        true
    }
}

/// The payload members of a tool event: its name and input (the arguments, as JSON when they
/// parse).
fn tool_fields(call: &ToolCall) -> Map<String, Value> {
    let input = serde_json::from_str::<Value>(&call.arguments)
        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
    let mut fields = Map::new();
    fields.insert("tool_name".into(), json!(call.name));
    fields.insert("tool_input".into(), input);
    fields
}
