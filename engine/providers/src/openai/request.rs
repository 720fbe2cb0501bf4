//! The chat-completions request body for one model call.
//!
//! The messages are shaped so that chat templates which insist on one system message and on
//! user and assistant turns alternating (Gemma's, Mistral's, run by llama.cpp `--jinja` or
//! vLLM) accept them: the base instructions and the developer instructions that open the
//! conversation are one `system` message (joined by a blank line), and the context the engine
//! adds (project docs, environment context) goes at the start of the user message it precedes,
//! each part followed by a blank line.
//!
//! A user message with images has multi-part `content` (`text` and `image_url` parts; image
//! files as `data:` URLs; the context as leading `text` parts); one without is plain text. A
//! turn's `outputSchema` goes as
//! `response_format: {type: "json_schema", json_schema: {name, schema, strict: true}}`.

use agentwire_tools::specs::ToolSpec;
use serde_json::{Value, json};

use crate::call::{HistoryEntry, ModelRequest, user_text};
use crate::content::{self, ImageSource, Part};

/// The name structured output is sent under (both wires).
pub(crate) const OUTPUT_SCHEMA_NAME: &str = "output_schema";

/// The JSON body of `POST {base_url}/chat/completions` for `request`, sent to `model`, offering
/// `tools`.
pub(crate) fn body(request: &ModelRequest, model: &str, tools: &[ToolSpec]) -> Value {
    let messages = messages(request);
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let function = |name: &str, description: &str, parameters: &Value| {
        json!({
            "type": "function",
            "function": {"name": name, "description": description, "parameters": parameters}
        })
    };
    let offered = request.offered_tools(tools, function);
    if !offered.is_empty() {
        body["tools"] = Value::Array(offered);
    }
    if let Some(effort) = request.effort.as_ref().filter(|e| !e.0.is_empty()) {
        body["reasoning_effort"] = json!(effort.0);
    }
    if let Some(schema) = &request.output.schema {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": OUTPUT_SCHEMA_NAME, "schema": schema, "strict": true},
        });
    }
    body
}

/// The call's messages (see the module docs).
fn messages(request: &ModelRequest) -> Vec<Value> {
    let mut messages = Vec::with_capacity(request.history.len() + 1);
    let mut system: Vec<&str> = request
        .instructions
        .as_deref()
        .filter(|i| !i.is_empty())
        .into_iter()
        .collect();
    let mut history = request.history.iter().peekable();
    while let Some(HistoryEntry::Developer { text }) = history.peek() {
        system.push(text);
        history.next();
    }
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system.join("\n\n")}));
    }
    // Context waiting for the user message it goes with.
    let mut context: Vec<&str> = Vec::new();
    for entry in history {
        match entry {
            HistoryEntry::Context { text } => context.push(text),
            HistoryEntry::User { content } => {
                let content = with_context(&context, user_content(content));
                context.clear();
                messages.push(json!({"role": "user", "content": content}));
            }
            other => {
                if !context.is_empty() {
                    messages.push(json!({"role": "user", "content": context.join("\n\n")}));
                    context.clear();
                }
                messages.push(message(other));
            }
        }
    }
    if !context.is_empty() {
        messages.push(json!({"role": "user", "content": context.join("\n\n")}));
    }
    messages
}

/// A user message's `content` with `context` before it: prefixed to the text, or as leading
/// text parts.
fn with_context(context: &[&str], content: Value) -> Value {
    if context.is_empty() {
        return content;
    }
    match content {
        Value::String(text) => {
            let mut parts = context.to_vec();
            parts.push(&text);
            json!(parts.join("\n\n"))
        }
        Value::Array(parts) => context
            .iter()
            .map(|text| json!({"type": "text", "text": format!("{text}\n\n")}))
            .chain(parts)
            .collect(),
        other => other,
    }
}

/// A user message's `content`: text, or parts when it has images.
fn user_content(input: &[agentwire_protocol::UserInput]) -> Value {
    if !content::has_image(input) {
        return json!(user_text(input));
    }
    content::parts(input)
        .into_iter()
        .map(|part| match part {
            Part::Text(text) => json!({"type": "text", "text": text}),
            Part::Image {
                source: ImageSource::Url(url),
                detail,
            } => {
                let mut image = json!({"url": url});
                if let Some(detail) = detail {
                    image["detail"] = json!(content::detail_name(detail, false));
                }
                json!({"type": "image_url", "image_url": image})
            }
            Part::Image {
                source: ImageSource::FileId(id),
                ..
            } => json!({
                "type": "text",
                "text": format!("[image file id {id}: uploaded files cannot be sent on this wire]"),
            }),
        })
        .collect()
}

/// One conversation entry as a chat message (context is joined to the user message after it
/// by [`messages`]).
fn message(entry: &HistoryEntry) -> Value {
    match entry {
        // Chat servers other than OpenAI's do not all know the `developer` role.
        HistoryEntry::Developer { text } => json!({"role": "system", "content": text}),
        HistoryEntry::Context { text } => json!({"role": "user", "content": text}),
        HistoryEntry::User { content } => json!({"role": "user", "content": user_content(content)}),
        HistoryEntry::Assistant { text, tool_calls } => {
            let mut message = json!({"role": "assistant", "content": text});
            if !tool_calls.is_empty() {
                message["tool_calls"] = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
            }
            message
        }
        HistoryEntry::ToolResult { call_id, output } => {
            json!({"role": "tool", "tool_call_id": call_id, "content": output})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{OutputOptions, ToolCall};
    use agentwire_protocol::{ImageDetail, MediaSource, ReasoningEffort, UserInput};

    fn request(history: Vec<HistoryEntry>) -> ModelRequest {
        ModelRequest {
            provider: "local".to_owned(),
            model: "m".to_owned(),
            effort: None,
            instructions: None,
            history,
            steered: false,
            output: OutputOptions::default(),
            mcp_tools: Vec::new(),
            client_tools: Vec::new(),
            builtins: agentwire_tools::specs::BuiltinTools::default(),
        }
    }

    fn user(text: &str) -> HistoryEntry {
        HistoryEntry::User {
            content: vec![UserInput::text().text(text.to_owned()).build()],
        }
    }

    #[test]
    fn images_make_a_multi_part_message_and_the_schema_a_response_format() {
        let mut request = request(vec![HistoryEntry::User {
            content: vec![
                UserInput::text().text("what is this?".to_owned()).build(),
                UserInput::image()
                    .source(
                        MediaSource::url()
                            .url("https://example.com/a.png".to_owned())
                            .build(),
                    )
                    .detail(ImageDetail::Original)
                    .build(),
            ],
        }]);
        request.output.schema = Some(json!({"type": "object"}));
        let body = body(&request, "m", &[]);
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "high"}}
            ])
        );
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {
                "name": "output_schema", "schema": {"type": "object"}, "strict": true}})
        );
    }

    #[test]
    fn a_history_with_tool_calls_and_results_becomes_messages() {
        let mut request = request(vec![
            user("list files"),
            HistoryEntry::Assistant {
                text: String::new(),
                tool_calls: vec![
                    ToolCall {
                        call_id: "call_1".to_owned(),
                        name: "shell".to_owned(),
                        arguments: "{\"command\":\"ls\"}".to_owned(),
                    },
                    ToolCall {
                        call_id: "call_2".to_owned(),
                        name: "shell".to_owned(),
                        arguments: "{\"command\":\"pwd\"}".to_owned(),
                    },
                ],
            },
            HistoryEntry::ToolResult {
                call_id: "call_1".to_owned(),
                output: "a.txt".to_owned(),
            },
            HistoryEntry::ToolResult {
                call_id: "call_2".to_owned(),
                output: "/w".to_owned(),
            },
            HistoryEntry::Assistant {
                text: "done".to_owned(),
                tool_calls: Vec::new(),
            },
        ]);
        request.instructions = Some("be brief".to_owned());
        let body = body(
            &request,
            "qwen",
            &agentwire_tools::specs::offered(agentwire_tools::specs::Offer::default()),
        );
        assert_eq!(body["model"], json!("qwen"));
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert!(body.get("reasoning_effort").is_none());
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "list files"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "shell", "arguments": "{\"command\":\"ls\"}"}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "shell", "arguments": "{\"command\":\"pwd\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
                {"role": "tool", "tool_call_id": "call_2", "content": "/w"},
                {"role": "assistant", "content": "done"}
            ])
        );
        let tools = body["tools"].as_array().expect("tools");
        assert_eq!(
            tools.len(),
            agentwire_tools::specs::offered(agentwire_tools::specs::Offer::default()).len()
        );
        assert_eq!(tools[0]["type"], json!("function"));
        assert_eq!(tools[0]["function"]["name"], json!("shell"));
        assert!(tools[0]["function"]["description"].is_string());
        assert_eq!(tools[0]["function"]["parameters"]["type"], json!("object"));
    }

    #[test]
    fn one_system_message_and_context_joined_to_the_user_message_it_precedes() {
        let mut request = request(vec![
            HistoryEntry::Developer {
                text: "dev".to_owned(),
            },
            HistoryEntry::Context {
                text: "docs".to_owned(),
            },
            HistoryEntry::Context {
                text: "env".to_owned(),
            },
            user("hi"),
            HistoryEntry::Assistant {
                text: "hello".to_owned(),
                tool_calls: Vec::new(),
            },
            HistoryEntry::Context {
                text: "env 2".to_owned(),
            },
            HistoryEntry::User {
                content: vec![
                    UserInput::text().text("look".to_owned()).build(),
                    UserInput::image()
                        .source(MediaSource::url().url("https://x/a.png".to_owned()).build())
                        .build(),
                ],
            },
        ]);
        request.instructions = Some("base".to_owned());
        let body = body(&request, "m", &[]);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "base\n\ndev"},
                {"role": "user", "content": "docs\n\nenv\n\nhi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": [
                    {"type": "text", "text": "env 2\n\n"},
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "https://x/a.png"}}
                ]}
            ])
        );
    }

    #[test]
    fn effort_is_sent_only_when_set_and_no_system_message_without_instructions() {
        let mut request = request(vec![user("hi")]);
        request.effort = Some(ReasoningEffort("high".to_owned()));
        let body = body(&request, "m", &[]);
        assert_eq!(body["reasoning_effort"], json!("high"));
        assert_eq!(body["messages"], json!([{"role": "user", "content": "hi"}]));
        assert!(body.get("tools").is_none());
    }
}
