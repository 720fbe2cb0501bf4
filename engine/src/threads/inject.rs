//! `thread/inject_items`: items in the shape of the OpenAI Responses API that a client adds to
//! what the model sees of a thread, without a turn.
//!
//! A batch is checked, then kept as an `injected` rollout record naming the turn it follows
//! (the thread's last turn when it was added; `null` before any), so it persists in whichever
//! store holds the thread and comes back when the thread is read again. It is part of the
//! thread's summary (`ThreadSummary::injected`, in `agentwire_store::meta`), not of its turns:
//! `thread/read`, the history pages and the timeline never show it. Every later model call of
//! the thread sees it, right after the turn it follows ([`Threads::with_model_history`]); a
//! batch added while a turn runs is seen from the next turn on. A batch whose turn is reverted
//! away goes with it.
//!
//! Accepted items: `message` (role `user`, `assistant`, `developer` or `system`; its text
//! parts), `function_call`, `function_call_output`, `custom_tool_call`,
//! `custom_tool_call_output`, and `reasoning` (kept, but not sent back, as for the model's own
//! reasoning). Anything else is refused, naming the item.

use agentwire_protocol::{ThreadInjectItemsParams, ThreadInjectItemsResponse, UserInput};
use agentwire_providers::{HistoryEntry, ToolCall};
use agentwire_store::error::ThreadError;
use agentwire_store::meta::now;
use agentwire_store::record::RolloutRecord;
use agentwire_store::replay::apply_injected;
use agentwire_support::lock;
use serde_json::Value;

use super::Threads;

/// Most items one request may add.
const MAX_ITEMS: usize = 1000;

impl Threads {
    /// `thread/inject_items`: checks the items, then records them after the thread's last
    /// turn (durably, for a persisted thread) before answering.
    pub(crate) fn inject_items(
        &self,
        params: ThreadInjectItemsParams,
    ) -> Result<ThreadInjectItemsResponse, ThreadError> {
        let id = params.thread_id;
        if params.items.is_empty() {
            return Err(ThreadError::InvalidParams(
                "items: must not be empty".to_owned(),
            ));
        }
        if params.items.len() > MAX_ITEMS {
            return Err(ThreadError::InvalidParams(format!(
                "items: {} items, at most {MAX_ITEMS} at once",
                params.items.len()
            )));
        }
        for (at, item) in params.items.iter().enumerate() {
            check(item).map_err(|why| ThreadError::InvalidParams(format!("items[{at}]: {why}")))?;
        }
        let at = now();
        if let Some(thread) = self.loaded(&id) {
            let pending = {
                let mut thread = lock(&thread);
                let record = RolloutRecord::Injected {
                    at,
                    after_turn_id: thread.turns.last().map(|t| t.id.clone()),
                    items: params.items,
                };
                apply_injected(&mut thread.summary, &record);
                thread.append(&[record], at)?
            };
            pending.wait()?;
        } else {
            let mut row = self.lookup(&id)?;
            let replayed = self.read_rollout(&row)?;
            let record = RolloutRecord::Injected {
                at,
                after_turn_id: replayed.turns.last().map(|t| t.id.clone()),
                items: params.items,
            };
            self.append_stored(&mut row, replayed, record.clone(), at, |summary| {
                apply_injected(summary, &record)
            })?;
        }
        Ok(ThreadInjectItemsResponse::builder().build())
    }
}

/// Why `item` cannot be injected, if it cannot.
fn check(item: &Value) -> Result<(), String> {
    let Some(object) = item.as_object() else {
        return Err("must be an object".to_owned());
    };
    let Some(kind) = object.get("type").and_then(Value::as_str) else {
        return Err("`type` must be a string".to_owned());
    };
    let text = |name: &str| -> Result<(), String> {
        match object.get(name) {
            Some(Value::String(_)) => Ok(()),
            _ => Err(format!("a `{kind}` item needs a string `{name}`")),
        }
    };
    match kind {
        "message" => {
            match object.get("role").and_then(Value::as_str) {
                Some("user" | "assistant" | "developer" | "system") => {}
                Some(other) => {
                    return Err(format!(
                        "role {other:?}: expected user, assistant, developer or system"
                    ));
                }
                None => return Err("a `message` item needs a string `role`".to_owned()),
            }
            match object.get("content") {
                Some(Value::String(_)) => Ok(()),
                Some(Value::Array(parts)) if parts.iter().all(Value::is_object) => Ok(()),
                _ => Err("a `message` item needs `content`: a string or an array of parts".into()),
            }
        }
        "function_call" | "custom_tool_call" => {
            text("call_id")?;
            text("name")?;
            if kind == "function_call" {
                text("arguments")
            } else {
                text("input")
            }
        }
        "function_call_output" | "custom_tool_call_output" => {
            text("call_id")?;
            match object.get("output") {
                Some(Value::String(_) | Value::Array(_)) => Ok(()),
                _ => Err(format!(
                    "a `{kind}` item needs `output`: a string or an array of parts"
                )),
            }
        }
        "reasoning" => Ok(()),
        other => Err(format!(
            "type {other:?} cannot be injected; accepted: message, function_call, \
             function_call_output, custom_tool_call, custom_tool_call_output, reasoning"
        )),
    }
}

/// The text of a message's `content` (a string, or parts whose text is joined by newlines;
/// parts without text are named in brackets).
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|part| match part.get("text").and_then(Value::as_str) {
                Some(text) => text.to_owned(),
                None => format!(
                    "[{}]",
                    part.get("type").and_then(Value::as_str).unwrap_or("part")
                ),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What the model is sent for `items` (checked by [`check`]), in order: a tool call joins the
/// assistant entry just before it, and its result follows that entry.
pub(crate) fn history_entries(items: &[Value]) -> Vec<HistoryEntry> {
    let mut entries = Vec::new();
    let field = |item: &Value, name: &str| {
        item.get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    for item in items {
        match item.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message" => {
                let text = content_text(item.get("content"));
                entries.push(match item.get("role").and_then(Value::as_str) {
                    Some("assistant") => HistoryEntry::Assistant {
                        text,
                        tool_calls: Vec::new(),
                    },
                    Some("developer" | "system") => HistoryEntry::Developer { text },
                    _ => HistoryEntry::User {
                        content: vec![UserInput::text().text(text).build()],
                    },
                });
            }
            kind @ ("function_call" | "custom_tool_call") => {
                let arguments = if kind == "function_call" {
                    field(item, "arguments")
                } else {
                    serde_json::json!({ "input": field(item, "input") }).to_string()
                };
                let call = ToolCall {
                    call_id: field(item, "call_id"),
                    name: field(item, "name"),
                    arguments,
                };
                match entries.last_mut() {
                    Some(HistoryEntry::Assistant { tool_calls, .. }) => tool_calls.push(call),
                    _ => entries.push(HistoryEntry::Assistant {
                        text: String::new(),
                        tool_calls: vec![call],
                    }),
                }
            }
            "function_call_output" | "custom_tool_call_output" => {
                entries.push(HistoryEntry::ToolResult {
                    call_id: field(item, "call_id"),
                    output: content_text(item.get("output")),
                });
            }
            // Reasoning is not sent back (as for the model's own).
            _ => {}
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn items_are_checked_and_a_refusal_names_what_is_wrong() {
        assert!(
            check(&json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}))
                .is_ok()
        );
        assert!(check(&json!({"type": "reasoning", "summary": []})).is_ok());
        let refused = check(&json!({"type": "web_search_call"})).expect_err("refused");
        assert!(refused.contains("web_search_call"), "{refused}");
        let refused = check(&json!({"type": "message", "role": "tool", "content": "x"}))
            .expect_err("refused");
        assert!(refused.contains("tool"), "{refused}");
        let refused = check(&json!({"type": "function_call", "name": "f", "arguments": "{}"}))
            .expect_err("refused");
        assert!(refused.contains("call_id"), "{refused}");
        assert!(check(&json!("text")).is_err());
    }

    #[test]
    fn messages_and_tool_calls_become_history_entries() {
        let entries = history_entries(&[
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]}),
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "let me look"}]}),
            json!({"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{\"command\":[\"ls\"]}"}),
            json!({"type": "function_call_output", "call_id": "c1", "output": "a.txt"}),
            json!({"type": "reasoning", "summary": []}),
            json!({"type": "message", "role": "developer", "content": "be brief"}),
        ]);
        assert_eq!(entries.len(), 4, "{entries:#?}");
        assert!(matches!(&entries[0], HistoryEntry::User { content } if content.len() == 1));
        assert!(
            matches!(&entries[1], HistoryEntry::Assistant { text, tool_calls } if text == "let me look" && tool_calls.len() == 1)
        );
        assert!(
            matches!(&entries[2], HistoryEntry::ToolResult { call_id, output } if call_id == "c1" && output == "a.txt")
        );
        assert!(matches!(&entries[3], HistoryEntry::Developer { text } if text == "be brief"));
    }
}
