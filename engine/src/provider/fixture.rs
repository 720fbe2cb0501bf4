//! The fixture provider: replays a [`Script`], deterministically and offline.

use std::time::Duration;

use agentwire_protocol::UserInput;
use tokio::sync::mpsc;

use super::script::{Response, Script, Step, Usage};
use super::{EVENT_QUEUE, ModelProvider, ModelRequest, ProviderEvent};

/// Answers each model call with the first scripted response matching the input's text; a
/// steered input is answered with the script's `steerReply`, quoting it.
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
        let text = input_text(&request.input);
        let window = self.script.model_context_window;
        if request.steered {
            let reply = self.script.steer_reply.replace("{input}", &text);
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
        let Some(response) = self.script.response_for(&text) else {
            return vec![ProviderEvent::Error {
                message: "The fixture script has no response for this input.".to_owned(),
                details: Some(format!("input: {text:?}")),
            }];
        };
        response_events(response, window)
    }
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

/// The events of a scripted `response`.
fn response_events(response: &Response, window: Option<i64>) -> Vec<ProviderEvent> {
    let mut events = Vec::new();
    for step in &response.steps {
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
            Step::Error { message, details } => {
                events.push(ProviderEvent::Error {
                    message: message.clone(),
                    details: details.clone(),
                });
                return events;
            }
        }
    }
    events.push(ProviderEvent::Done {
        usage: response.usage.breakdown(),
        model_context_window: window,
    });
    events
}

/// The text parts of `input`, joined by newlines.
fn input_text(input: &[UserInput]) -> String {
    input
        .iter()
        .filter_map(|part| match part {
            UserInput::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` cut after each space, so that the pieces concatenate back to it.
fn split_words(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Vec<UserInput> {
        vec![UserInput::Text {
            text: t.to_owned(),
            text_elements: Vec::new(),
        }]
    }

    #[test]
    fn built_in_answer_streams_reasoning_then_a_message() {
        let provider = FixtureProvider::new(Script::built_in());
        let events = provider.events(&ModelRequest {
            input: text("Say hello."),
            steered: false,
        });
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
        let events = provider.events(&ModelRequest {
            input: text("use tabs"),
            steered: true,
        });
        let message: String = events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::TextDelta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        assert!(message.contains("\"use tabs\""), "{message}");
    }
}
