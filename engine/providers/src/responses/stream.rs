//! Responses API stream events → provider events.
//!
//! Each SSE `data` is one JSON event named by its `type`:
//!
//! - `response.output_text.delta` → text; `response.reasoning_summary_text.delta` → summary
//!   text of section `summary_index`; `response.reasoning_summary_part.added` → a new
//!   section `summary_index` (before its text); `response.reasoning_text.delta` → raw
//!   reasoning text;
//! - `response.output_item.added` / `.done`: a `function_call` item gets its `call_id` and
//!   `name` when added, its arguments from `response.function_call_arguments.delta` (or whole
//!   from the finished item), and is emitted as a tool call when done (a freeform
//!   `custom_tool_call` likewise, its raw `input` from `response.custom_tool_call_input.delta`
//!   or the finished item taking the place of the arguments); a finished message or
//!   reasoning item ends the current output item;
//! - `response.completed` → the call's token usage and its end;
//! - `response.failed`, `response.incomplete` and `error` → the call fails with the server's
//!   code and message.
//!
//! Other events (`response.created`, `response.in_progress`, `…content_part…`, `….done`
//! recaps) carry nothing new and are skipped, as are unknown ones (the API grows).

use std::collections::BTreeMap;

use agentwire_protocol::{CodexErrorInfo, TokenUsageBreakdown};
use serde_json::Value;

use crate::call::{ProviderEvent, ProviderNotice, ToolCall};
use crate::openai::sse::excerpt;
use crate::openai::stream::StreamFault;

/// Most tool calls one response may make.
const MAX_TOOL_CALLS: usize = 128;
/// Most bytes of tool-call arguments one response may accumulate.
const MAX_ARGUMENT_BYTES: usize = 8 * 1024 * 1024;

/// A function call being gathered.
#[derive(Debug, Default)]
struct PartialCall {
    call_id: String,
    name: String,
    arguments: String,
}

/// The state of one response stream.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    /// Function calls being gathered, by item id (else output index).
    calls: BTreeMap<String, PartialCall>,
    /// Bytes of arguments gathered so far.
    argument_bytes: usize,
    /// Tool calls emitted so far.
    emitted_calls: usize,
    /// Whether text or reasoning was forwarded since the last `ItemDone`.
    content_open: bool,
    /// Whether `response.completed` arrived.
    done: bool,
    /// How many events were decoded (for error messages).
    events: usize,
    /// Whether the answering model was reported ([`ProviderNotice::ServedModel`]).
    model_reported: bool,
}

/// `value[key]` as a string, if it is one.
fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// `value[key]` as an integer, 0 when absent.
fn int(value: &Value, key: &str) -> i64 {
    value.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// The key a function call item is gathered under.
fn call_key(event: &Value, item: Option<&Value>) -> String {
    item.and_then(|i| text(i, "id"))
        .or_else(|| text(event, "item_id"))
        .map_or_else(|| format!("#{}", int(event, "output_index")), str::to_owned)
}

impl Decoder {
    /// Whether the response completed: nothing more is read.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Decodes the data of one event into the events it yields.
    pub(crate) fn event(&mut self, data: &str) -> Result<Vec<ProviderEvent>, StreamFault> {
        self.events += 1;
        if self.done || data.trim() == "[DONE]" {
            return Ok(Vec::new());
        }
        let event: Value = serde_json::from_str(data).map_err(|e| {
            malformed(format!(
                "The model server sent a stream event that is not JSON (event {}: {e}): {}",
                self.events,
                excerpt(data)
            ))
        })?;
        let Some(kind) = text(&event, "type") else {
            return Err(malformed(format!(
                "The model server sent a stream event without a `type` (event {}): {}",
                self.events,
                excerpt(data)
            )));
        };
        let mut out = Vec::new();
        // `response.created` (and the other whole-response events) name the answering model.
        if !self.model_reported
            && let Some(model) = event
                .get("response")
                .and_then(|r| text(r, "model"))
                .filter(|m| !m.trim().is_empty())
        {
            self.model_reported = true;
            out.push(ProviderEvent::Notice(ProviderNotice::ServedModel(
                model.to_owned(),
            )));
        }
        match kind {
            "response.output_text.delta" => {
                if let Some(delta) = text(&event, "delta").filter(|d| !d.is_empty()) {
                    self.content_open = true;
                    out.push(ProviderEvent::TextDelta(delta.to_owned()));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let raw = kind == "response.reasoning_text.delta";
                let index_key = if raw {
                    "content_index"
                } else {
                    "summary_index"
                };
                if let Some(delta) = text(&event, "delta").filter(|d| !d.is_empty()) {
                    self.content_open = true;
                    out.push(ProviderEvent::ReasoningDelta {
                        raw,
                        index: int(&event, index_key),
                        delta: delta.to_owned(),
                    });
                }
            }
            "response.reasoning_summary_part.added" => {
                self.content_open = true;
                out.push(ProviderEvent::ReasoningSectionAdded {
                    index: int(&event, "summary_index"),
                });
            }
            "response.output_item.added" => {
                if let Some(item) = event.get("item")
                    && matches!(
                        text(item, "type"),
                        Some("function_call" | "custom_tool_call")
                    )
                {
                    let key = call_key(&event, Some(item));
                    if self.calls.len() + self.emitted_calls >= MAX_TOOL_CALLS {
                        return Err(malformed(format!(
                            "The model made more than {MAX_TOOL_CALLS} tool calls in one response."
                        )));
                    }
                    let call = self.calls.entry(key).or_default();
                    call.call_id = text(item, "call_id").unwrap_or_default().to_owned();
                    call.name = text(item, "name").unwrap_or_default().to_owned();
                    let arguments = text(item, "arguments")
                        .or_else(|| text(item, "input"))
                        .unwrap_or_default();
                    self.argument_bytes += arguments.len();
                    call.arguments.push_str(arguments);
                    self.check_arguments()?;
                }
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                let key = call_key(&event, None);
                let delta = text(&event, "delta").unwrap_or_default();
                self.argument_bytes += delta.len();
                self.check_arguments()?;
                self.calls.entry(key).or_default().arguments.push_str(delta);
            }
            "response.output_item.done" => {
                let item = event.get("item").cloned().unwrap_or(Value::Null);
                match text(&item, "type") {
                    Some("function_call" | "custom_tool_call") => {
                        let key = call_key(&event, Some(&item));
                        let mut call = self.calls.remove(&key).unwrap_or_default();
                        if let Some(call_id) = text(&item, "call_id") {
                            call.call_id = call_id.to_owned();
                        }
                        if let Some(name) = text(&item, "name") {
                            call.name = name.to_owned();
                        }
                        if let Some(arguments) =
                            text(&item, "arguments").or_else(|| text(&item, "input"))
                        {
                            call.arguments = arguments.to_owned();
                        }
                        self.close(&mut out);
                        out.push(self.tool_call(call)?);
                    }
                    _ => self.close(&mut out),
                }
            }
            "response.completed" => {
                self.done = true;
                self.close(&mut out);
                for (_, call) in std::mem::take(&mut self.calls) {
                    out.push(self.tool_call(call)?);
                }
                let usage = event
                    .get("response")
                    .and_then(|r| r.get("usage"))
                    .map_or_else(|| breakdown(&Value::Null), breakdown);
                out.push(ProviderEvent::Done {
                    usage,
                    model_context_window: None,
                });
            }
            "response.failed" => {
                let error = event
                    .get("response")
                    .and_then(|r| r.get("error"))
                    .cloned()
                    .unwrap_or(Value::Null);
                return Err(server_error("failed", &error));
            }
            "response.incomplete" => {
                let reason = event
                    .get("response")
                    .and_then(|r| r.get("incomplete_details"))
                    .and_then(|d| text(d, "reason"))
                    .unwrap_or("unknown")
                    .to_owned();
                let info = if reason == "max_output_tokens" {
                    CodexErrorInfo::ContextWindowExceeded
                } else {
                    CodexErrorInfo::Other
                };
                return Err(StreamFault {
                    message: format!(
                        "The model stopped before finishing its response (incomplete: {reason})."
                    ),
                    info,
                });
            }
            "error" => {
                let error = event.get("error").cloned().unwrap_or(event.clone());
                return Err(server_error("reported an error", &error));
            }
            _ => {}
        }
        Ok(out)
    }

    /// The stream ended: the last events, or why the stream is incomplete.
    pub(crate) fn end(&mut self) -> Result<Vec<ProviderEvent>, StreamFault> {
        if self.done {
            return Ok(Vec::new());
        }
        Err(StreamFault {
            message: "The model server closed the stream before the response was complete \
                      (no response.completed event)."
                .to_owned(),
            info: CodexErrorInfo::response_stream_disconnected().build(),
        })
    }

    /// Ends the content item, if one is open.
    fn close(&mut self, out: &mut Vec<ProviderEvent>) {
        if self.content_open {
            self.content_open = false;
            out.push(ProviderEvent::ItemDone);
        }
    }

    fn check_arguments(&self) -> Result<(), StreamFault> {
        if self.argument_bytes > MAX_ARGUMENT_BYTES {
            return Err(malformed(format!(
                "The model's tool-call arguments are larger than {MAX_ARGUMENT_BYTES} bytes."
            )));
        }
        Ok(())
    }

    /// A gathered call as a provider event.
    fn tool_call(&mut self, call: PartialCall) -> Result<ProviderEvent, StreamFault> {
        if call.name.is_empty() {
            return Err(malformed(
                "The model's function call has no name.".to_owned(),
            ));
        }
        self.emitted_calls += 1;
        Ok(ProviderEvent::ToolCall(ToolCall {
            call_id: if call.call_id.is_empty() {
                format!("call_{}", uuid::Uuid::now_v7().simple())
            } else {
                call.call_id
            },
            name: call.name,
            arguments: if call.arguments.trim().is_empty() {
                "{}".to_owned()
            } else {
                call.arguments
            },
        }))
    }
}

fn malformed(message: String) -> StreamFault {
    StreamFault {
        message,
        info: CodexErrorInfo::Other,
    }
}

/// The fault for a server-reported `error` (`{code, message}`) of a response that `what`.
fn server_error(what: &str, error: &Value) -> StreamFault {
    let code = text(error, "code").unwrap_or_default();
    let message = text(error, "message").map_or_else(
        || {
            if error.is_null() {
                "no details given".to_owned()
            } else {
                error.to_string()
            }
        },
        str::to_owned,
    );
    let info = match code {
        "context_length_exceeded" => CodexErrorInfo::ContextWindowExceeded,
        "insufficient_quota" | "usage_limit_reached" => CodexErrorInfo::UsageLimitExceeded,
        "rate_limit_exceeded" => CodexErrorInfo::RateLimitExceeded,
        "server_is_overloaded" | "slow_down" => CodexErrorInfo::ServerOverloaded,
        "invalid_prompt" | "invalid_request_error" => CodexErrorInfo::BadRequest,
        _ => CodexErrorInfo::InternalServerError,
    };
    let code = if code.is_empty() {
        String::new()
    } else {
        format!(" ({code})")
    };
    StreamFault {
        message: format!("The model server {what}{code}: {}", excerpt(&message)),
        info,
    }
}

/// The protocol's breakdown of a Responses `usage` object.
fn breakdown(usage: &Value) -> TokenUsageBreakdown {
    let input = int(usage, "input_tokens");
    let output = int(usage, "output_tokens");
    let detail = |key: &str, inner: &str| usage.get(key).map_or(0, |d| int(d, inner));
    TokenUsageBreakdown::builder()
        .input_tokens(input)
        .cached_input_tokens(detail("input_tokens_details", "cached_tokens"))
        .cache_write_input_tokens(0)
        .output_tokens(output)
        .reasoning_output_tokens(detail("output_tokens_details", "reasoning_tokens"))
        .total_tokens(
            usage
                .get("total_tokens")
                .and_then(Value::as_i64)
                .unwrap_or(input.saturating_add(output)),
        )
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openai::sse::SseParser;
    use serde_json::json;

    /// A realistic stream: reasoning summary, a message, a function call, completion.
    fn stream() -> Vec<(String, Value)> {
        let events = vec![
            json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1",
                   "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1",
                   "output_index": 0, "summary_index": 0, "delta": "Thinking é"}),
            json!({"type": "response.reasoning_summary_text.done", "item_id": "rs_1",
                   "output_index": 0, "summary_index": 0, "text": "Thinking é"}),
            json!({"type": "response.output_item.done", "output_index": 0,
                   "item": {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Thinking é"}]}}),
            json!({"type": "response.output_item.added", "output_index": 1,
                   "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1,
                   "content_index": 0, "delta": "Hel"}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1,
                   "content_index": 0, "delta": "lo"}),
            json!({"type": "response.output_item.done", "output_index": 1,
                   "item": {"type": "message", "id": "msg_1", "role": "assistant",
                            "content": [{"type": "output_text", "text": "Hello"}]}}),
            json!({"type": "response.output_item.added", "output_index": 2,
                   "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                            "name": "shell", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                   "output_index": 2, "delta": "{\"command\""}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                   "output_index": 2, "delta": ":\"ls\"}"}),
            json!({"type": "response.output_item.done", "output_index": 2,
                   "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                            "name": "shell", "arguments": "{\"command\":\"ls\"}", "status": "completed"}}),
            json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
                   "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40},
                             "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 8},
                             "total_tokens": 120}}}),
        ];
        events
            .into_iter()
            .map(|e| (e["type"].as_str().expect("type").to_owned(), e))
            .collect()
    }

    /// The stream as SSE bytes, with `event:` lines as OpenAI sends them.
    fn wire(events: &[(String, Value)]) -> Vec<u8> {
        events
            .iter()
            .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
            .collect::<String>()
            .into_bytes()
    }

    fn expected() -> Vec<ProviderEvent> {
        vec![
            ProviderEvent::ReasoningSectionAdded { index: 0 },
            ProviderEvent::ReasoningDelta {
                raw: false,
                index: 0,
                delta: "Thinking é".to_owned(),
            },
            ProviderEvent::ItemDone,
            ProviderEvent::TextDelta("Hel".to_owned()),
            ProviderEvent::TextDelta("lo".to_owned()),
            ProviderEvent::ItemDone,
            ProviderEvent::ToolCall(ToolCall {
                call_id: "call_1".to_owned(),
                name: "shell".to_owned(),
                arguments: "{\"command\":\"ls\"}".to_owned(),
            }),
            ProviderEvent::Done {
                usage: TokenUsageBreakdown::builder()
                    .input_tokens(100)
                    .cached_input_tokens(40)
                    .cache_write_input_tokens(0)
                    .output_tokens(20)
                    .reasoning_output_tokens(8)
                    .total_tokens(120)
                    .build(),
                model_context_window: None,
            },
        ]
    }

    /// Feeds `chunks` through the SSE parser and the decoder.
    fn decode(chunks: &[&[u8]]) -> Vec<ProviderEvent> {
        let mut parser = SseParser::default();
        let mut decoder = Decoder::default();
        let mut out = Vec::new();
        for chunk in chunks {
            for data in parser.feed(chunk).expect("parses") {
                out.extend(decoder.event(&data).expect("decodes"));
            }
        }
        assert!(decoder.is_done());
        out.extend(decoder.end().expect("complete"));
        out
    }

    #[test]
    fn a_full_stream_decodes_whole_or_split_at_any_byte() {
        let bytes = wire(&stream());
        assert_eq!(decode(&[&bytes]), expected());
        // Split in two everywhere (inside `event:` lines, JSON, a UTF-8 character, the
        // blank line), and in three.
        for cut in 1..bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(decode(&[a, b]), expected(), "cut at {cut}");
        }
        for cut in (1..bytes.len() - 7).step_by(7) {
            let (a, rest) = bytes.split_at(cut);
            let (b, c) = rest.split_at(5);
            assert_eq!(decode(&[a, b, c]), expected(), "cuts at {cut}, {}", cut + 5);
        }
        // Byte by byte.
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode(&singles), expected());
    }

    #[test]
    fn calls_without_done_items_are_emitted_on_completion_with_delta_arguments() {
        let mut decoder = Decoder::default();
        let mut out = Vec::new();
        for event in [
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "function_call", "id": "fc_9", "call_id": "call_9", "name": "shell"}}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_9", "delta": "{\"a\":1}"}),
            json!({"type": "response.completed", "response": {}}),
        ] {
            out.extend(decoder.event(&event.to_string()).expect("decodes"));
        }
        assert_eq!(
            out[0],
            ProviderEvent::ToolCall(ToolCall {
                call_id: "call_9".to_owned(),
                name: "shell".to_owned(),
                arguments: "{\"a\":1}".to_owned(),
            })
        );
        assert!(matches!(out[1], ProviderEvent::Done { .. }));
        // Events after completion (and a stray [DONE]) are ignored.
        assert!(decoder.event("[DONE]").expect("ignored").is_empty());
    }

    #[test]
    fn a_custom_tool_call_brings_its_raw_input() {
        let mut decoder = Decoder::default();
        let mut out = Vec::new();
        for event in [
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "custom_tool_call", "id": "ct_1", "call_id": "call_p",
                            "name": "apply_patch", "input": ""}}),
            json!({"type": "response.custom_tool_call_input.delta", "item_id": "ct_1",
                   "output_index": 0, "delta": "*** Begin Patch\n"}),
            json!({"type": "response.custom_tool_call_input.delta", "item_id": "ct_1",
                   "output_index": 0, "delta": "*** End Patch\n"}),
            json!({"type": "response.output_item.done", "output_index": 0,
                   "item": {"type": "custom_tool_call", "id": "ct_1", "call_id": "call_p",
                            "name": "apply_patch"}}),
        ] {
            out.extend(decoder.event(&event.to_string()).expect("decodes"));
        }
        assert_eq!(
            out,
            [ProviderEvent::ToolCall(ToolCall {
                call_id: "call_p".to_owned(),
                name: "apply_patch".to_owned(),
                arguments: "*** Begin Patch\n*** End Patch\n".to_owned(),
            })]
        );
    }

    #[test]
    fn failures_and_errors_become_faults_with_their_kind() {
        let fault = Decoder::default()
            .event(
                &json!({"type": "response.failed", "response": {"status": "failed",
                    "error": {"code": "server_error", "message": "The server had an error"}}})
                .to_string(),
            )
            .expect_err("failed");
        assert_eq!(fault.info, CodexErrorInfo::InternalServerError);
        assert!(
            fault.message.contains("server_error") && fault.message.contains("had an error"),
            "{}",
            fault.message
        );
        let fault = Decoder::default()
            .event(
                &json!({"type": "error", "code": "context_length_exceeded",
                        "message": "Your input exceeds the context window", "param": "input"})
                .to_string(),
            )
            .expect_err("error");
        assert_eq!(fault.info, CodexErrorInfo::ContextWindowExceeded);
        let fault = Decoder::default()
            .event(
                &json!({"type": "response.incomplete",
                        "response": {"incomplete_details": {"reason": "max_output_tokens"}}})
                .to_string(),
            )
            .expect_err("incomplete");
        assert!(
            fault.message.contains("max_output_tokens"),
            "{}",
            fault.message
        );
        let fault = Decoder::default().event("{not json").expect_err("bad");
        assert!(fault.message.contains("not JSON"), "{}", fault.message);
        let fault = Decoder::default().event("{}").expect_err("untyped");
        assert!(
            fault.message.contains("without a `type`"),
            "{}",
            fault.message
        );

        let mut decoder = Decoder::default();
        decoder
            .event(&json!({"type": "response.output_text.delta", "delta": "half"}).to_string())
            .expect("text");
        let fault = decoder.end().expect_err("cut short");
        assert!(
            fault.message.contains("response.completed"),
            "{}",
            fault.message
        );
    }

    #[test]
    fn a_nameless_call_is_refused() {
        let mut decoder = Decoder::default();
        let fault = decoder
            .event(
                &json!({"type": "response.output_item.done",
                        "item": {"type": "function_call", "id": "x", "arguments": "{}"}})
                .to_string(),
            )
            .expect_err("nameless");
        assert!(fault.message.contains("no name"), "{}", fault.message);
    }
}
