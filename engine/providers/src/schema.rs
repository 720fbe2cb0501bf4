//! A turn's `outputSchema`: checked when the turn starts, sent to the model as structured
//! output (each wire's request builder), and the model's final message checked against it.
//!
//! The check ([`checked`]) watches a model call's events: when the call ends without tool
//! calls (the model's answer is final), its last message must be JSON that the schema accepts.
//! The reference server sends the schema and trusts the model; agentwire also checks, and a
//! final message that does not conform fails the turn: the message item stays as the model
//! wrote it (completed), then the turn ends `failed` with an error whose message names the
//! first violation (JSON pointer and reason), `codexErrorInfo: "other"`, and the offending text
//! (an excerpt) in `additionalDetails`. The token usage of that last call is not reported.

use agentwire_protocol::CodexErrorInfo;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::call::{EVENT_QUEUE, ProviderEvent};

/// Most violations an error lists.
const MAX_LISTED: usize = 3;
/// Most characters of the offending message quoted.
const MAX_QUOTED: usize = 2_000;

/// Compiles `schema`; the error says why it is not a usable JSON Schema.
fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .should_validate_formats(false)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Checks that `schema` (a turn's `outputSchema`) is a JSON Schema object that compiles.
pub fn check(schema: &Value) -> Result<(), String> {
    if !schema.is_object() {
        return Err("outputSchema: must be a JSON Schema object".to_owned());
    }
    compile(schema)
        .map(|_| ())
        .map_err(|e| format!("outputSchema: not a usable JSON Schema: {e}"))
}

/// Why `text` (a final message) does not conform to `validator`, if it does not.
fn violation(validator: &jsonschema::Validator, text: Option<&str>) -> Option<String> {
    let Some(text) = text else {
        return Some("the model gave no final message".to_owned());
    };
    let value: Value = match serde_json::from_str(text.trim()) {
        Ok(value) => value,
        Err(e) => return Some(format!("the final message is not JSON ({e})")),
    };
    let problems: Vec<String> = validator
        .iter_errors(&value)
        .take(MAX_LISTED)
        .map(|e| {
            let pointer = e.instance_path().as_str().to_owned();
            let at = if pointer.is_empty() { "/" } else { &pointer };
            format!("at {at}: {e}")
        })
        .collect();
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// The events of `inner` with the final message checked against `schema` (see the module
/// docs). Dropping the returned receiver drops `inner` (cancelling the call).
pub fn checked(
    mut inner: mpsc::Receiver<ProviderEvent>,
    schema: Value,
) -> mpsc::Receiver<ProviderEvent> {
    let (sender, receiver) = mpsc::channel(EVENT_QUEUE);
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return inner;
    };
    drop(runtime.spawn(async move {
        // The schema compiled when the turn started; should it not now, the call goes
        // unchecked rather than failing for the server's sake.
        let validator = compile(&schema).ok();
        let mut current = String::new();
        let mut last: Option<String> = None;
        let mut calls_tools = false;
        loop {
            let event = tokio::select! {
                () = sender.closed() => return,
                event = inner.recv() => event,
            };
            let Some(mut event) = event else { return };
            match &event {
                ProviderEvent::TextDelta(delta) => current.push_str(delta),
                ProviderEvent::ItemDone if !current.is_empty() => {
                    last = Some(std::mem::take(&mut current));
                }
                ProviderEvent::ToolCall(_) => calls_tools = true,
                ProviderEvent::Done { .. } => {
                    if !current.is_empty() {
                        last = Some(std::mem::take(&mut current));
                    }
                    if !calls_tools
                        && let Some(validator) = &validator
                        && let Some(why) = violation(validator, last.as_deref())
                    {
                        let quoted =
                            last.as_deref()
                                .map(|text| match text.char_indices().nth(MAX_QUOTED) {
                                    Some((at, _)) => format!("{}…", &text[..at]),
                                    None => text.to_owned(),
                                });
                        event = ProviderEvent::Error {
                            message: format!(
                                "The model's final message does not match the turn's \
                                 outputSchema: {why}."
                            ),
                            details: quoted.map(|q| format!("final message: {q}")),
                            info: Some(CodexErrorInfo::Other),
                        };
                    }
                }
                _ => {}
            }
            let end = matches!(
                event,
                ProviderEvent::Done { .. } | ProviderEvent::Error { .. }
            );
            if sender.send(event).await.is_err() || end {
                return;
            }
        }
    }));
    receiver
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_protocol::TokenUsageBreakdown;
    use serde_json::json;

    fn done() -> ProviderEvent {
        ProviderEvent::Done {
            usage: TokenUsageBreakdown::builder()
                .input_tokens(1)
                .cached_input_tokens(0)
                .cache_write_input_tokens(0)
                .output_tokens(1)
                .reasoning_output_tokens(0)
                .total_tokens(2)
                .build(),
            model_context_window: None,
        }
    }

    async fn run(events: Vec<ProviderEvent>) -> Vec<ProviderEvent> {
        let (sender, receiver) = mpsc::channel(16);
        for event in events {
            sender.send(event).await.expect("send");
        }
        drop(sender);
        let schema = json!({
            "type": "object",
            "properties": {"answer": {"type": "integer"}},
            "required": ["answer"],
            "additionalProperties": false
        });
        let mut out = checked(receiver, schema);
        let mut seen = Vec::new();
        while let Some(event) = out.recv().await {
            seen.push(event);
        }
        seen
    }

    fn text(t: &str) -> ProviderEvent {
        ProviderEvent::TextDelta(t.to_owned())
    }

    #[tokio::test]
    async fn a_conforming_final_message_passes_through() {
        let events = vec![
            text("{\"answer\""),
            text(": 42}"),
            ProviderEvent::ItemDone,
            done(),
        ];
        assert_eq!(run(events.clone()).await, events);
    }

    #[tokio::test]
    async fn a_non_conforming_final_message_fails_the_call() {
        let seen = run(vec![text("{\"answer\": \"x\"}"), done()]).await;
        let Some(ProviderEvent::Error {
            message, details, ..
        }) = seen.last()
        else {
            panic!("{seen:?}");
        };
        assert!(message.contains("outputSchema"), "{message}");
        assert!(message.contains("at /answer"), "{message}");
        assert!(details.as_deref().unwrap_or_default().contains("\"x\""));

        let seen = run(vec![text("forty-two"), done()]).await;
        let Some(ProviderEvent::Error { message, .. }) = seen.last() else {
            panic!("{seen:?}");
        };
        assert!(message.contains("not JSON"), "{message}");
    }

    #[tokio::test]
    async fn calls_that_run_tools_are_not_final() {
        let events = vec![
            text("let me check"),
            ProviderEvent::ItemDone,
            ProviderEvent::ToolCall(crate::call::ToolCall {
                call_id: "c".to_owned(),
                name: "shell".to_owned(),
                arguments: "{}".to_owned(),
            }),
            done(),
        ];
        assert_eq!(run(events.clone()).await, events);
    }

    #[test]
    fn schemas_are_checked_when_the_turn_starts() {
        assert!(check(&json!({"type": "object"})).is_ok());
        let error = check(&json!("object")).expect_err("not an object");
        assert!(error.starts_with("outputSchema:"), "{error}");
        let error = check(&json!({"type": 7})).expect_err("bad schema");
        assert!(error.contains("not a usable JSON Schema"), "{error}");
    }
}
