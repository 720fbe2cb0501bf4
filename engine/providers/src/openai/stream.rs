//! Chat-completions stream chunks → provider events.
//!
//! Text (`delta.content`) and reasoning (`delta.reasoning_content`, spelled `delta.reasoning`
//! by some servers) are forwarded as they come. Tool calls arrive in fragments keyed by
//! `index`: the first fragment of a call carries its id and name, later ones more of its
//! arguments; the complete calls are emitted when the choice finishes or the stream ends.
//! Usage arrives in a last chunk (`stream_options.include_usage`).
//!
//! A choice that finishes for `length` (the server's output-token limit) fails the call at
//! the end of the stream as `contextWindowExceeded`, the same signal as a Responses stream
//! that ends `incomplete` for `max_output_tokens`; its unfinished tool calls are dropped.

use std::collections::BTreeMap;

use agentwire_protocol::{CodexErrorInfo, TokenUsageBreakdown};
use serde::Deserialize;

use super::sse::excerpt;
use crate::call::{ProviderEvent, ProviderNotice, ToolCall};

/// Most tool calls one response may make.
const MAX_TOOL_CALLS: usize = 128;
/// Most bytes of tool-call arguments one response may accumulate.
const MAX_ARGUMENT_BYTES: usize = 8 * 1024 * 1024;

/// The payload that ends the stream.
const DONE: &str = "[DONE]";

/// The `finish_reason` of an answer cut by the output-token limit.
const LENGTH: &str = "length";

/// One streamed chunk (the members this provider reads).
#[derive(Debug, Deserialize)]
struct Chunk {
    /// The answers being generated (servers stream one).
    #[serde(default)]
    choices: Vec<Choice>,
    /// Token counts (in the last chunk).
    #[serde(default)]
    usage: Option<Usage>,
    /// An error reported inside the stream (some servers do this after the headers).
    #[serde(default)]
    error: Option<serde_json::Value>,
    /// The model that answers, as the server names it.
    #[serde(default)]
    model: Option<String>,
}

/// One choice of a chunk; only the first is read.
#[derive(Debug, Deserialize)]
struct Choice {
    /// What this chunk adds.
    #[serde(default)]
    delta: Option<Delta>,
    /// Why the answer ended (`stop`, `tool_calls`, `length` …), in its last chunk.
    #[serde(default)]
    finish_reason: Option<String>,
}

/// What a chunk adds to the answer.
#[derive(Debug, Default, Deserialize)]
struct Delta {
    /// More answer text.
    #[serde(default)]
    content: Option<String>,
    /// More reasoning (llama.cpp, vLLM, DeepSeek spelling).
    #[serde(default)]
    reasoning_content: Option<String>,
    /// More reasoning (Ollama, OpenRouter spelling).
    #[serde(default)]
    reasoning: Option<String>,
    /// Pieces of tool calls.
    #[serde(default)]
    tool_calls: Vec<ToolCallFragment>,
}

/// A piece of a tool call.
#[derive(Debug, Deserialize)]
struct ToolCallFragment {
    /// Which call it belongs to; a fragment without one belongs to the call at its position.
    #[serde(default)]
    index: Option<u64>,
    /// The call id (first fragment).
    #[serde(default)]
    id: Option<String>,
    /// The function part.
    #[serde(default)]
    function: Option<FunctionFragment>,
}

/// A piece of a tool call's function.
#[derive(Debug, Deserialize)]
struct FunctionFragment {
    /// The tool name (first fragment).
    #[serde(default)]
    name: Option<String>,
    /// More of the JSON arguments.
    #[serde(default)]
    arguments: Option<String>,
}

/// Token counts as chat-completions reports them.
#[derive(Debug, Default, Deserialize)]
struct Usage {
    /// Input tokens, cached ones included.
    #[serde(default)]
    prompt_tokens: i64,
    /// Output tokens, reasoning included.
    #[serde(default)]
    completion_tokens: i64,
    /// Their sum, when reported.
    #[serde(default)]
    total_tokens: Option<i64>,
    /// The cached share of the input.
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    /// The reasoning share of the output.
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

/// The breakdown of prompt tokens.
#[derive(Debug, Default, Deserialize)]
struct PromptDetails {
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    cached_tokens: Option<i64>,
}

/// The breakdown of completion tokens.
#[derive(Debug, Default, Deserialize)]
struct CompletionDetails {
    /// Output tokens spent on reasoning.
    #[serde(default)]
    reasoning_tokens: Option<i64>,
}

/// A tool call being gathered.
#[derive(Debug, Default)]
struct PartialCall {
    /// The call id, once a fragment gave one.
    id: Option<String>,
    /// The tool name, once a fragment gave one.
    name: String,
    /// The arguments gathered so far.
    arguments: String,
}

/// Why a stream is unusable: the text for the user and the failure kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StreamFault {
    /// What was wrong.
    pub message: String,
    /// The failure kind.
    pub info: CodexErrorInfo,
}

impl StreamFault {
    fn malformed(message: String) -> Self {
        Self {
            message,
            info: CodexErrorInfo::Other,
        }
    }
}

/// The state of one response stream.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    /// Calls being gathered, by `index`.
    calls: BTreeMap<u64, PartialCall>,
    /// Bytes of arguments gathered so far.
    argument_bytes: usize,
    /// Whether text or reasoning was forwarded since the last `ItemDone`.
    content_open: bool,
    /// Whether a choice reported `finish_reason`.
    finished: bool,
    /// Whether the choice finished for `length`: the output-token limit cut the answer.
    cut: bool,
    /// Whether `[DONE]` arrived.
    done: bool,
    /// The token counts, once reported.
    usage: Option<TokenUsageBreakdown>,
    /// How many events were decoded (for error messages).
    events: usize,
    /// Whether the answering model was reported ([`ProviderNotice::ServedModel`]).
    model_reported: bool,
}

impl Decoder {
    /// Whether `[DONE]` arrived: nothing more is read.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Decodes the data of one event into the events it yields.
    pub(crate) fn event(&mut self, data: &str) -> Result<Vec<ProviderEvent>, StreamFault> {
        self.events += 1;
        if self.done {
            return Ok(Vec::new());
        }
        if data.trim() == DONE {
            self.done = true;
            return Ok(Vec::new());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            StreamFault::malformed(format!(
                "The model server sent a stream event that is not a valid chunk (event {}: {e}): {}",
                self.events,
                excerpt(data)
            ))
        })?;
        if let Some(error) = chunk.error {
            let text = error
                .get("message")
                .and_then(serde_json::Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(StreamFault {
                message: format!("The model server reported an error: {}", excerpt(&text)),
                info: CodexErrorInfo::InternalServerError,
            });
        }
        let mut events = Vec::new();
        if !self.model_reported
            && let Some(model) = chunk.model.filter(|m| !m.trim().is_empty())
        {
            self.model_reported = true;
            events.push(ProviderEvent::Notice(ProviderNotice::ServedModel(model)));
        }
        if let Some(choice) = chunk.choices.into_iter().next() {
            let delta = choice.delta.unwrap_or_default();
            for reasoning in [delta.reasoning_content, delta.reasoning]
                .into_iter()
                .flatten()
                .filter(|r| !r.is_empty())
            {
                self.content_open = true;
                events.push(ProviderEvent::ReasoningDelta {
                    raw: true,
                    index: 0,
                    delta: reasoning,
                });
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.content_open = true;
                events.push(ProviderEvent::TextDelta(text));
            }
            for (position, fragment) in delta.tool_calls.into_iter().enumerate() {
                self.fragment(position, fragment)?;
            }
            match choice.finish_reason.as_deref() {
                Some(LENGTH) => {
                    self.finished = true;
                    self.cut = true;
                    self.calls.clear();
                }
                Some(_) => {
                    self.finished = true;
                    self.flush(&mut events)?;
                }
                None => {}
            }
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(breakdown(&usage));
        }
        Ok(events)
    }

    /// The stream ended (after `[DONE]` or not): the last events, or why the stream is
    /// incomplete.
    pub(crate) fn end(&mut self) -> Result<Vec<ProviderEvent>, StreamFault> {
        if !self.done && !self.finished {
            return Err(StreamFault {
                message: "The model server closed the stream before the response was complete \
                          (no finish_reason and no [DONE])."
                    .to_owned(),
                info: CodexErrorInfo::response_stream_disconnected().build(),
            });
        }
        if self.cut {
            return Err(StreamFault {
                message: "The model stopped before finishing its response (finish_reason: \
                          length, the output-token limit)."
                    .to_owned(),
                info: CodexErrorInfo::ContextWindowExceeded,
            });
        }
        let mut events = Vec::new();
        self.flush(&mut events)?;
        events.push(ProviderEvent::Done {
            usage: self
                .usage
                .take()
                .unwrap_or_else(|| breakdown(&Usage::default())),
            model_context_window: None,
        });
        Ok(events)
    }

    fn fragment(&mut self, position: usize, fragment: ToolCallFragment) -> Result<(), StreamFault> {
        let index = fragment
            .index
            .unwrap_or_else(|| u64::try_from(position).unwrap_or(u64::MAX));
        if !self.calls.contains_key(&index) && self.calls.len() >= MAX_TOOL_CALLS {
            return Err(StreamFault::malformed(format!(
                "The model made more than {MAX_TOOL_CALLS} tool calls in one response."
            )));
        }
        let call = self.calls.entry(index).or_default();
        if let Some(id) = fragment.id.filter(|id| !id.is_empty()) {
            call.id.get_or_insert(id);
        }
        if let Some(function) = fragment.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty())
                && call.name.is_empty()
            {
                call.name = name;
            }
            if let Some(arguments) = function.arguments {
                self.argument_bytes += arguments.len();
                if self.argument_bytes > MAX_ARGUMENT_BYTES {
                    return Err(StreamFault::malformed(format!(
                        "The model's tool-call arguments are larger than {MAX_ARGUMENT_BYTES} bytes."
                    )));
                }
                call.arguments.push_str(&arguments);
            }
        }
        Ok(())
    }

    /// Ends the content item (if one is open) and emits the gathered tool calls.
    fn flush(&mut self, events: &mut Vec<ProviderEvent>) -> Result<(), StreamFault> {
        if self.content_open {
            self.content_open = false;
            events.push(ProviderEvent::ItemDone);
        }
        for (index, call) in std::mem::take(&mut self.calls) {
            if call.name.is_empty() {
                return Err(StreamFault::malformed(format!(
                    "The model's tool call {index} has no function name."
                )));
            }
            events.push(ProviderEvent::ToolCall(ToolCall {
                call_id: call
                    .id
                    .unwrap_or_else(|| format!("call_{}", uuid::Uuid::now_v7().simple())),
                name: call.name,
                arguments: if call.arguments.trim().is_empty() {
                    "{}".to_owned()
                } else {
                    call.arguments
                },
            }));
        }
        Ok(())
    }
}

/// The protocol's breakdown of `usage`.
fn breakdown(usage: &Usage) -> TokenUsageBreakdown {
    let cached = usage
        .prompt_tokens_details
        .as_ref()
        .and_then(|d| d.cached_tokens)
        .unwrap_or(0);
    let reasoning = usage
        .completion_tokens_details
        .as_ref()
        .and_then(|d| d.reasoning_tokens)
        .unwrap_or(0);
    TokenUsageBreakdown::builder()
        .input_tokens(usage.prompt_tokens)
        .cached_input_tokens(cached)
        .cache_write_input_tokens(0)
        .output_tokens(usage.completion_tokens)
        .reasoning_output_tokens(reasoning)
        .total_tokens(
            usage
                .total_tokens
                .unwrap_or(usage.prompt_tokens.saturating_add(usage.completion_tokens)),
        )
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(decoder: &mut Decoder, chunks: &[serde_json::Value]) -> Vec<ProviderEvent> {
        chunks
            .iter()
            .flat_map(|c| decoder.event(&c.to_string()).expect("decodes"))
            .collect()
    }

    fn delta(delta: serde_json::Value) -> serde_json::Value {
        json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
    }

    fn finish(reason: &str) -> serde_json::Value {
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
    }

    fn reasoning(text: &str) -> ProviderEvent {
        ProviderEvent::ReasoningDelta {
            raw: true,
            index: 0,
            delta: text.to_owned(),
        }
    }

    #[test]
    fn text_and_both_reasoning_spellings_then_usage() {
        let mut decoder = Decoder::default();
        let mut events = decode(
            &mut decoder,
            &[
                delta(json!({"role": "assistant", "content": null, "reasoning_content": "think "})),
                delta(json!({"reasoning": "more"})),
                delta(json!({"content": "Hel"})),
                delta(json!({"content": "lo"})),
                finish("stop"),
                json!({"choices": [], "usage": {
                    "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
                    "prompt_tokens_details": {"cached_tokens": 4},
                    "completion_tokens_details": {"reasoning_tokens": 2}}}),
            ],
        );
        assert!(decoder.event("[DONE]").expect("done").is_empty());
        assert!(decoder.is_done());
        events.extend(decoder.end().expect("complete"));
        assert_eq!(
            events,
            vec![
                reasoning("think "),
                reasoning("more"),
                ProviderEvent::TextDelta("Hel".to_owned()),
                ProviderEvent::TextDelta("lo".to_owned()),
                ProviderEvent::ItemDone,
                ProviderEvent::Done {
                    usage: TokenUsageBreakdown::builder()
                        .input_tokens(10)
                        .cached_input_tokens(4)
                        .cache_write_input_tokens(0)
                        .output_tokens(5)
                        .reasoning_output_tokens(2)
                        .total_tokens(15)
                        .build(),
                    model_context_window: None,
                },
            ]
        );
    }

    #[test]
    fn tool_call_fragments_accumulate_by_index_over_several_chunks_and_calls() {
        let mut decoder = Decoder::default();
        let events = decode(
            &mut decoder,
            &[
                delta(json!({"content": "Let me look."})),
                delta(
                    json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                    "function": {"name": "shell", "arguments": ""}}]}),
                ),
                delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"comm"}}]})),
                delta(json!({"tool_calls": [
                    {"index": 0, "function": {"arguments": "and\":\"ls\"}"}},
                    {"index": 1, "id": "call_b", "function": {"name": "apply_patch", "arguments": "{\"input\""}}
                ]})),
                delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": ":\"x\"}"}}]})),
            ],
        );
        assert_eq!(
            events,
            vec![ProviderEvent::TextDelta("Let me look.".to_owned())]
        );
        let events = decode(&mut decoder, &[finish("tool_calls")]);
        assert_eq!(
            events,
            vec![
                ProviderEvent::ItemDone,
                ProviderEvent::ToolCall(ToolCall {
                    call_id: "call_a".to_owned(),
                    name: "shell".to_owned(),
                    arguments: "{\"command\":\"ls\"}".to_owned(),
                }),
                ProviderEvent::ToolCall(ToolCall {
                    call_id: "call_b".to_owned(),
                    name: "apply_patch".to_owned(),
                    arguments: "{\"input\":\"x\"}".to_owned(),
                }),
            ]
        );
        // No [DONE], but the choice finished: the stream is complete.
        let end = decoder.end().expect("complete");
        assert!(
            matches!(end.as_slice(), [ProviderEvent::Done { .. }]),
            "{end:?}"
        );
    }

    #[test]
    fn tool_calls_left_open_are_emitted_at_the_end_with_generated_ids() {
        let mut decoder = Decoder::default();
        let events = decode(
            &mut decoder,
            &[delta(
                json!({"tool_calls": [{"index": 0, "function": {"name": "shell"}}]}),
            )],
        );
        assert!(events.is_empty());
        decoder.event("[DONE]").expect("done");
        let end = decoder.end().expect("complete");
        let [ProviderEvent::ToolCall(call), ProviderEvent::Done { .. }] = end.as_slice() else {
            panic!("unexpected {end:?}");
        };
        assert_eq!(call.name, "shell");
        assert_eq!(call.arguments, "{}");
        assert!(call.call_id.starts_with("call_"), "{}", call.call_id);
    }

    #[test]
    fn an_answer_cut_by_the_token_limit_fails_as_context_window_exceeded() {
        let mut decoder = Decoder::default();
        let events = decode(
            &mut decoder,
            &[
                delta(json!({"content": "half an ans"})),
                delta(json!({"tool_calls": [{"index": 0, "id": "call_cut",
                    "function": {"name": "shell", "arguments": "{\"comm"}}]})),
                finish("length"),
            ],
        );
        assert_eq!(
            events,
            vec![ProviderEvent::TextDelta("half an ans".to_owned())]
        );
        decoder.event(DONE).expect("done");
        let fault = decoder.end().expect_err("cut");
        assert_eq!(fault.info, CodexErrorInfo::ContextWindowExceeded);
        assert!(fault.message.contains("length"), "{}", fault.message);
    }

    #[test]
    fn malformed_and_incomplete_streams_are_faults() {
        let mut decoder = Decoder::default();
        let fault = decoder.event("{\"choices\": [").expect_err("not json");
        assert!(
            fault.message.contains("not a valid chunk"),
            "{}",
            fault.message
        );
        assert!(
            fault.message.contains("{\"choices\": ["),
            "{}",
            fault.message
        );

        let mut decoder = Decoder::default();
        decode(&mut decoder, &[delta(json!({"content": "half"}))]);
        let fault = decoder.end().expect_err("incomplete");
        assert!(fault.message.contains("before the response was complete"));
        assert_eq!(
            fault.info,
            CodexErrorInfo::response_stream_disconnected().build()
        );

        let mut decoder = Decoder::default();
        let fault = decoder
            .event(&json!({"error": {"message": "out of memory"}}).to_string())
            .expect_err("error event");
        assert!(fault.message.contains("out of memory"), "{}", fault.message);

        let mut decoder = Decoder::default();
        decode(
            &mut decoder,
            &[delta(
                json!({"tool_calls": [{"index": 3, "function": {"arguments": "{}"}}]}),
            )],
        );
        decoder.event("[DONE]").expect("done");
        let fault = decoder.end().expect_err("nameless call");
        assert!(
            fault.message.contains("no function name"),
            "{}",
            fault.message
        );
    }
}
