//! The Responses API request body for one model call.
//!
//! - `input`: the conversation as items, as the reference sends it: the call's base
//!   instructions first, as a `developer` message (there is no `instructions` member), then
//!   the developer instructions (a `developer` message), the context the engine adds (project
//!   docs, environment context: `user` messages of one `input_text` part) and the
//!   conversation: a user message (`input_text` and `input_image` parts), an assistant message
//!   (`output_text`), each tool call as a `function_call` item (`call_id`, `name`,
//!   `arguments`) and each result as a `function_call_output` item;
//! - `tools`: each tool as `{type: "function", name, description, parameters, strict: false}`,
//!   a freeform one (`apply_patch` for GPT-5 and Codex models) as
//!   `{type: "custom", name, description, format: {type: "grammar", syntax: "lark", …}}`; a
//!   call to it is replayed as a `custom_tool_call` (`input`, the raw patch) and its result as
//!   a `custom_tool_call_output`;
//! - `reasoning: {effort, summary}` when either is set (the call's, else the configured
//!   `model_reasoning_effort` / `model_reasoning_summary`);
//! - `text.format: {type: "json_schema", name, schema, strict: true}` for a turn's
//!   `outputSchema`;
//! - `stream: true`, `store: false`, `tool_choice: "auto"`, `parallel_tool_calls: false`.

use agentwire_protocol::{ReasoningSummary, UserInput};
use agentwire_tools::specs::ToolSpec;
use serde_json::{Value, json};

use crate::call::{HistoryEntry, ModelRequest};
use crate::content::{self, ImageSource, Part};
use crate::openai::OUTPUT_SCHEMA_NAME;

/// The JSON body of `POST {base_url}/responses` for `request`, sent to `model`, offering
/// `tools`; `summary` is the reasoning summary setting when the call names none.
pub(crate) fn body(
    request: &ModelRequest,
    model: &str,
    tools: &[ToolSpec],
    summary: Option<&ReasoningSummary>,
) -> Value {
    let mut input = Vec::with_capacity(request.history.len() + 1);
    let custom = custom_calls(&request.history);
    if let Some(instructions) = request.instructions.as_deref().filter(|i| !i.is_empty()) {
        items(
            &HistoryEntry::Developer {
                text: instructions.to_owned(),
            },
            &mut input,
            &custom,
        );
    }
    for entry in &request.history {
        items(entry, &mut input, &custom);
    }
    let function = |name: &str, description: &str, parameters: &Value| {
        json!({
            "type": "function",
            "name": name,
            "description": description,
            "strict": false,
            "parameters": parameters,
        })
    };
    // The built-in tools (a freeform one as a `custom` tool), then the MCP and client ones.
    let mut offered: Vec<Value> = tools
        .iter()
        .map(|tool| match tool.freeform {
            Some(grammar) => json!({
                "type": "custom",
                "name": tool.name,
                "description": tool.description,
                "format": {"type": "grammar", "syntax": "lark", "definition": grammar},
            }),
            None => function(tool.name, tool.description, &tool.parameters),
        })
        .collect();
    offered.extend(request.offered_tools(&[], function));
    let mut body = json!({
        "model": model,
        "input": input,
        "tools": offered,
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "store": false,
        "stream": true,
    });
    let effort = request.effort.as_ref().filter(|e| !e.0.is_empty());
    let summary = request
        .output
        .summary
        .as_ref()
        .or(summary)
        .filter(|s| **s != ReasoningSummary::None);
    if effort.is_some() || summary.is_some() {
        let mut reasoning = json!({});
        if let Some(effort) = effort {
            reasoning["effort"] = json!(effort.0);
        }
        if let Some(summary) = summary {
            reasoning["summary"] = json!(summary);
        }
        body["reasoning"] = reasoning;
    }
    if let Some(schema) = &request.output.schema {
        body["text"] = json!({"format": {
            "type": "json_schema",
            "name": OUTPUT_SCHEMA_NAME,
            "schema": schema,
            "strict": true,
        }});
    }
    body
}

/// The ids of the calls in `history` made to a freeform tool (their arguments are the raw
/// patch, not JSON): they are sent back as `custom_tool_call` items, their results as
/// `custom_tool_call_output`.
fn custom_calls(history: &[HistoryEntry]) -> std::collections::BTreeSet<&str> {
    history
        .iter()
        .filter_map(|entry| match entry {
            HistoryEntry::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .filter(|call| {
            call.name == agentwire_tools::specs::APPLY_PATCH
                && !call.arguments.trim_start().starts_with('{')
        })
        .map(|call| call.call_id.as_str())
        .collect()
}

/// Appends the input items of one conversation entry; `custom` holds the ids of freeform
/// calls.
fn items(entry: &HistoryEntry, input: &mut Vec<Value>, custom: &std::collections::BTreeSet<&str>) {
    match entry {
        HistoryEntry::Developer { text } => input.push(json!({
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": text}],
        })),
        HistoryEntry::Context { text } => input.push(json!({
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        })),
        HistoryEntry::User { content } => input.push(json!({
            "type": "message",
            "role": "user",
            "content": user_content(content),
        })),
        HistoryEntry::Assistant { text, tool_calls } => {
            if !text.is_empty() {
                input.push(json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                }));
            }
            for call in tool_calls {
                if custom.contains(call.call_id.as_str()) {
                    input.push(json!({
                        "type": "custom_tool_call",
                        "call_id": call.call_id,
                        "name": call.name,
                        "input": call.arguments,
                    }));
                    continue;
                }
                input.push(json!({
                    "type": "function_call",
                    "call_id": call.call_id,
                    "name": call.name,
                    "arguments": call.arguments,
                }));
            }
        }
        HistoryEntry::ToolResult { call_id, output } if custom.contains(call_id.as_str()) => {
            input.push(json!({
                "type": "custom_tool_call_output",
                "call_id": call_id,
                "output": output,
            }));
        }
        HistoryEntry::ToolResult { call_id, output } => input.push(json!({
            "type": "function_call_output",
            "call_id": call_id,
            "output": output,
        })),
    }
}

/// A user message's content parts.
fn user_content(content: &[UserInput]) -> Vec<Value> {
    content::parts(content)
        .into_iter()
        .map(|part| match part {
            Part::Text(text) => json!({"type": "input_text", "text": text}),
            Part::Image { source, detail } => {
                let mut image = match source {
                    ImageSource::Url(url) => json!({"type": "input_image", "image_url": url}),
                    ImageSource::FileId(id) => json!({"type": "input_image", "file_id": id}),
                };
                if let Some(detail) = detail {
                    image["detail"] = json!(content::detail_name(detail, true));
                }
                image
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{OutputOptions, ToolCall};
    use agentwire_protocol::{MediaSource, ReasoningEffort};

    fn responses(model: &str) -> agentwire_tools::specs::Offer<'_> {
        agentwire_tools::specs::Offer {
            responses: true,
            model,
            ..Default::default()
        }
    }

    fn text(text: &str) -> UserInput {
        UserInput::text().text(text.to_owned()).build()
    }

    fn request(history: Vec<HistoryEntry>) -> ModelRequest {
        ModelRequest {
            provider: "openai".to_owned(),
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

    #[test]
    fn the_conversation_becomes_input_items() {
        let mut request = request(vec![
            HistoryEntry::User {
                content: vec![
                    text("what is in"),
                    UserInput::image()
                        .source(
                            MediaSource::url()
                                .url("https://example.com/a.png".to_owned())
                                .build(),
                        )
                        .build(),
                ],
            },
            HistoryEntry::Assistant {
                text: "Let me look.".to_owned(),
                tool_calls: vec![ToolCall {
                    call_id: "call_1".to_owned(),
                    name: "shell".to_owned(),
                    arguments: "{\"command\":\"ls\"}".to_owned(),
                }],
            },
            HistoryEntry::ToolResult {
                call_id: "call_1".to_owned(),
                output: "a.txt".to_owned(),
            },
        ]);
        request.instructions = Some("be brief".to_owned());
        let body = body(
            &request,
            "gpt-x",
            &agentwire_tools::specs::offered(responses("gpt-x")),
            None,
        );
        assert_eq!(body["model"], json!("gpt-x"));
        assert!(body.get("instructions").is_none());
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["store"], json!(false));
        assert!(body.get("reasoning").is_none());
        assert!(body.get("text").is_none());
        assert_eq!(
            body["input"],
            json!([
                {"type": "message", "role": "developer",
                 "content": [{"type": "input_text", "text": "be brief"}]},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "what is in"},
                    {"type": "input_image", "image_url": "https://example.com/a.png"}
                ]},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Let me look."}]},
                {"type": "function_call", "call_id": "call_1", "name": "shell",
                 "arguments": "{\"command\":\"ls\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}
            ])
        );
        let tools = body["tools"].as_array().expect("tools");
        assert_eq!(tools[0]["type"], json!("function"));
        assert_eq!(tools[0]["name"], json!("exec_command"));
        assert_eq!(tools[0]["parameters"]["type"], json!("object"));
    }

    #[test]
    fn a_freeform_patch_is_offered_and_replayed_as_a_custom_tool() {
        let patch = "*** Begin Patch\n*** Delete File: a\n*** End Patch\n";
        let request = request(vec![
            HistoryEntry::User {
                content: vec![text("delete a")],
            },
            HistoryEntry::Assistant {
                text: String::new(),
                tool_calls: vec![
                    ToolCall {
                        call_id: "call_p".to_owned(),
                        name: "apply_patch".to_owned(),
                        arguments: patch.to_owned(),
                    },
                    ToolCall {
                        call_id: "call_j".to_owned(),
                        name: "apply_patch".to_owned(),
                        arguments: "{\"input\":\"x\"}".to_owned(),
                    },
                ],
            },
            HistoryEntry::ToolResult {
                call_id: "call_p".to_owned(),
                output: "done".to_owned(),
            },
            HistoryEntry::ToolResult {
                call_id: "call_j".to_owned(),
                output: "bad".to_owned(),
            },
        ]);
        let body = body(
            &request,
            "gpt-5.1-codex",
            &agentwire_tools::specs::offered(responses("gpt-5.1-codex")),
            None,
        );
        let patch_tool = body["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == json!("apply_patch")))
            .expect("apply_patch");
        assert_eq!(patch_tool["type"], json!("custom"));
        assert_eq!(patch_tool["format"]["syntax"], json!("lark"));
        assert!(patch_tool.get("parameters").is_none());
        assert_eq!(
            body["input"].as_array().expect("input")[1..],
            [
                json!({"type": "custom_tool_call", "call_id": "call_p", "name": "apply_patch",
                       "input": patch}),
                json!({"type": "function_call", "call_id": "call_j", "name": "apply_patch",
                       "arguments": "{\"input\":\"x\"}"}),
                json!({"type": "custom_tool_call_output", "call_id": "call_p", "output": "done"}),
                json!({"type": "function_call_output", "call_id": "call_j", "output": "bad"}),
            ]
        );
    }

    #[test]
    fn developer_instructions_and_mcp_tools() {
        let mut request = request(vec![
            HistoryEntry::Developer {
                text: "dev rules".to_owned(),
            },
            HistoryEntry::User {
                content: vec![text("hi")],
            },
        ]);
        request.mcp_tools = vec![crate::call::ModelTool {
            name: "everything__echo".to_owned(),
            description: "Echoes".to_owned(),
            parameters: json!({"type": "object"}),
        }];
        let body = body(
            &request,
            "m",
            &agentwire_tools::specs::offered(responses("m")),
            None,
        );
        assert_eq!(
            body["input"][0],
            json!({"type": "message", "role": "developer",
                   "content": [{"type": "input_text", "text": "dev rules"}]})
        );
        let tools = body["tools"].as_array().expect("tools");
        assert_eq!(
            tools.len(),
            agentwire_tools::specs::offered(responses("m")).len() + 1
        );
        assert_eq!(
            tools.last().expect("the MCP tool"),
            &json!({"type": "function", "name": "everything__echo", "description": "Echoes",
                    "strict": false, "parameters": {"type": "object"}})
        );
    }

    #[test]
    fn reasoning_and_output_schema() {
        let mut request = request(vec![HistoryEntry::User {
            content: vec![text("hi")],
        }]);
        request.effort = Some(ReasoningEffort("high".to_owned()));
        let configured = ReasoningSummary::Concise;
        let body1 = body(&request, "m", &[], Some(&configured));
        assert_eq!(
            body1["reasoning"],
            json!({"effort": "high", "summary": "concise"})
        );
        request.effort = None;
        request.output = OutputOptions {
            summary: Some(ReasoningSummary::Detailed),
            schema: Some(json!({"type": "object"})),
        };
        let body2 = body(&request, "m", &[], Some(&configured));
        assert_eq!(body2["reasoning"], json!({"summary": "detailed"}));
        assert_eq!(
            body2["text"],
            json!({"format": {"type": "json_schema", "name": "output_schema",
                              "schema": {"type": "object"}, "strict": true}})
        );
        request.output.summary = Some(ReasoningSummary::None);
        assert!(body(&request, "m", &[], None).get("reasoning").is_none());
    }
}
