//! The fixture provider: replays a [`Script`], deterministically and offline.

use std::time::Duration;

use agentwire_tools::specs;
use tokio::sync::mpsc;

use crate::call::{
    EVENT_QUEUE, HistoryEntry, ModelProvider, ModelRequest, ProviderEvent, ToolCall, user_text,
};
use crate::script::{Response, Script, Step, Usage};

/// Answers each model call with the first scripted response matching the newest user
/// message; a steered message is answered with the script's `steerReply`, quoting it.
///
/// A response with tool steps spans several model calls: the calls made since the newest user
/// message (the assistant entries after it in the history) say how far into the response the
/// conversation is, so the provider itself keeps no state.
#[derive(Debug)]
pub(crate) struct FixtureProvider {
    script: Script,
}

impl FixtureProvider {
    /// A provider replaying `script`.
    pub(crate) fn new(script: Script) -> Self {
        Self { script }
    }

    /// The events answering `request`, in order.
    fn events(&self, request: &ModelRequest) -> Vec<ProviderEvent> {
        let (text, calls_so_far) = newest_user_message(&request.history);
        let text = text.as_str();
        let window = self.script.model_context_window;
        if request.steered && calls_so_far == 0 {
            let reply = self.script.steer_reply.replace("{input}", text);
            let mut events: Vec<ProviderEvent> = split_words(&reply)
                .into_iter()
                .map(ProviderEvent::TextDelta)
                .collect();
            events.push(ProviderEvent::ItemDone);
            events.push(ProviderEvent::Done {
                usage: Usage::default().breakdown(),
                model_context_window: window,
            });
            return events;
        }
        let Some(response) = self.script.response_for(text) else {
            return vec![ProviderEvent::Error {
                message: "The fixture script has no response for this input.".to_owned(),
                details: Some(format!("input: {text:?}")),
                info: None,
            }];
        };
        response_events(response, calls_so_far, window)
    }
}

/// The text of the newest user message in `history`, and how many model calls answered it
/// since.
fn newest_user_message(history: &[HistoryEntry]) -> (String, usize) {
    let mut calls = 0;
    for entry in history.iter().rev() {
        match entry {
            HistoryEntry::User { content } => return (user_text(content), calls),
            HistoryEntry::Assistant { .. } => calls += 1,
            HistoryEntry::ToolResult { .. }
            | HistoryEntry::Developer { .. }
            | HistoryEntry::Context { .. } => {}
        }
    }
    (String::new(), calls)
}

impl ModelProvider for FixtureProvider {
    fn stream(&self, request: ModelRequest) -> mpsc::Receiver<ProviderEvent> {
        let events = self.events(&request);
        let delay = Duration::from_millis(self.script.delta_delay_ms);
        let (sender, receiver) = mpsc::channel(EVENT_QUEUE);
        tokio::spawn(async move {
            for event in events {
                let is_delta = matches!(
                    event,
                    ProviderEvent::TextDelta(_) | ProviderEvent::ReasoningDelta { .. }
                );
                if is_delta && !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                if sender.send(event).await.is_err() {
                    // The turn dropped the call (interrupted).
                    return;
                }
            }
        });
        receiver
    }
}

/// The events of model call number `call` (from 0) answering a scripted `response`: the
/// steps after the `call`-th run of tool steps, up to and including the next run.
fn response_events(response: &Response, call: usize, window: Option<i64>) -> Vec<ProviderEvent> {
    let mut events = Vec::new();
    let mut segment = 0;
    let mut steps = response.steps.iter().peekable();
    while let Some(step) = steps.next() {
        let is_tool = step.is_tool_call();
        if segment == call {
            match step {
                Step::Reasoning { summary, content } => {
                    for delta in summary {
                        events.push(ProviderEvent::ReasoningDelta {
                            raw: false,
                            index: 0,
                            delta: delta.clone(),
                        });
                    }
                    for delta in content {
                        events.push(ProviderEvent::ReasoningDelta {
                            raw: true,
                            index: 0,
                            delta: delta.clone(),
                        });
                    }
                    events.push(ProviderEvent::ItemDone);
                }
                Step::Message { deltas } => {
                    events.extend(deltas.iter().cloned().map(ProviderEvent::TextDelta));
                    events.push(ProviderEvent::ItemDone);
                }
                Step::Command { .. } | Step::Patch { .. } | Step::Tool { .. } => {
                    events.push(ProviderEvent::ToolCall(tool_call(step, call, events.len())));
                }
                Step::Error { message, details } => {
                    events.push(ProviderEvent::Error {
                        message: message.clone(),
                        details: details.clone(),
                        info: None,
                    });
                    return events;
                }
                Step::Panic { message } => {
                    // Deliberate: this step exists to test the server's panic safety.
                    panic!("fixture script panic step: {message}");
                }
            }
        }
        if is_tool && !steps.peek().is_some_and(|next| next.is_tool_call()) {
            if segment == call {
                break;
            }
            segment += 1;
        }
    }
    events.push(ProviderEvent::Done {
        usage: response.usage.breakdown(),
        model_context_window: window,
    });
    events
}

/// The tool call a `command` or `patch` step makes.
fn tool_call(step: &Step, call: usize, position: usize) -> ToolCall {
    let (name, arguments) = match step {
        Step::Command {
            command,
            workdir,
            timeout_ms,
            escalate,
            justification,
        } => {
            let mut arguments = serde_json::json!({ "command": command });
            if let Some(workdir) = workdir {
                arguments["workdir"] = workdir.as_str().into();
            }
            if let Some(timeout) = timeout_ms {
                arguments["timeout_ms"] = (*timeout).into();
            }
            if *escalate {
                arguments["sandbox_permissions"] = "require_escalated".into();
            }
            if let Some(why) = justification {
                arguments["justification"] = why.as_str().into();
            }
            (specs::SHELL, arguments)
        }
        Step::Patch { patch } => (specs::APPLY_PATCH, serde_json::json!({ "input": patch })),
        Step::Tool { name, arguments } => {
            let arguments = match arguments {
                serde_json::Value::String(raw) => raw.clone(),
                other => other.to_string(),
            };
            return ToolCall {
                call_id: format!("fixture_call_{call}_{position}"),
                name: name.clone(),
                arguments,
            };
        }
        _ => ("", serde_json::Value::Null),
    };
    ToolCall {
        call_id: format!("fixture_call_{call}_{position}"),
        name: name.to_owned(),
        arguments: arguments.to_string(),
    }
}

/// `text` cut after each space, so that the pieces concatenate back to it.
fn split_words(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(history: Vec<HistoryEntry>, steered: bool) -> ModelRequest {
        ModelRequest {
            provider: "fixture".to_owned(),
            model: "fixture".to_owned(),
            effort: None,
            instructions: None,
            history,
            steered,
            output: crate::call::OutputOptions::default(),
            mcp_tools: Vec::new(),
            client_tools: Vec::new(),
            builtins: specs::BuiltinTools::default(),
        }
    }

    fn user(text: &str) -> HistoryEntry {
        HistoryEntry::User {
            content: vec![
                agentwire_protocol::UserInput::text()
                    .text(text.to_owned())
                    .build(),
            ],
        }
    }

    #[test]
    fn built_in_answer_streams_reasoning_then_a_message() {
        let provider = FixtureProvider::new(Script::built_in());
        let events = provider.events(&request(vec![user("Say hello.")], false));
        assert!(matches!(
            events[0],
            ProviderEvent::ReasoningDelta { raw: false, .. }
        ));
        let message: String = events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::TextDelta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(message, "Hello from the fixture model.");
        assert!(matches!(events.last(), Some(ProviderEvent::Done { .. })));
    }

    #[test]
    fn steered_input_is_quoted() {
        let provider = FixtureProvider::new(Script::built_in());
        let events = provider.events(&request(vec![user("use tabs")], true));
        let message: String = events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::TextDelta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        assert!(message.contains("\"use tabs\""), "{message}");
    }

    #[test]
    fn tool_steps_split_a_response_into_calls() {
        let script = Script::parse(
            r#"{"version":1,"responses":[{"steps":[
                {"type":"message","deltas":["Looking."]},
                {"type":"command","command":"ls","escalate":true},
                {"type":"patch","patch":"P"},
                {"type":"message","deltas":["Done."]}
            ]}]}"#,
        )
        .expect("script");
        let provider = FixtureProvider::new(script);
        let first = provider.events(&request(vec![user("go")], false));
        let calls: Vec<&ToolCall> = first
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::ToolCall(call) => Some(call),
                _ => None,
            })
            .collect();
        assert_eq!(calls.len(), 2, "{first:?}");
        assert_eq!(calls[0].name, specs::SHELL);
        assert!(calls[0].arguments.contains("require_escalated"));
        assert_eq!(calls[1].name, specs::APPLY_PATCH);
        assert!(matches!(first.last(), Some(ProviderEvent::Done { .. })));
        let history = vec![
            user("go"),
            HistoryEntry::Assistant {
                text: "Looking.".to_owned(),
                tool_calls: calls.into_iter().cloned().collect(),
            },
        ];
        let second = provider.events(&request(history, false));
        assert_eq!(second[0], ProviderEvent::TextDelta("Done.".to_owned()));
        assert!(
            !second
                .iter()
                .any(|e| matches!(e, ProviderEvent::ToolCall(_)))
        );
    }
}
