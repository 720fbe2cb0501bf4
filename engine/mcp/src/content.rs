//! MCP results as protocol types (through their JSON, which the two sides share), and a tool
//! result as the text the model reads.

use agentwire_protocol::{
    McpServerToolCallResponse, McpToolCallResult, Resource, ResourceContent, ResourceTemplate, Tool,
};
use rmcp::model::{CallToolResult, ReadResourceResult};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Most bytes of a tool result the model reads; the rest is cut with a note.
const MAX_MODEL_TEXT: usize = 64 * 1024;

/// `value` converted through JSON; `None` when the shapes do not match.
fn convert<T: DeserializeOwned>(value: &impl Serialize) -> Option<T> {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
}

fn blocks(result: &CallToolResult) -> Vec<Value> {
    result
        .content
        .iter()
        .filter_map(|block| serde_json::to_value(block).ok())
        .collect()
}

fn meta(result: &CallToolResult) -> Option<Value> {
    result
        .meta
        .as_ref()
        .and_then(|m| serde_json::to_value(m).ok())
        .filter(Value::is_object)
}

/// The `result` of an `mcpToolCall` item.
pub fn item_result(result: &CallToolResult) -> McpToolCallResult {
    McpToolCallResult::builder()
        .content(blocks(result))
        .maybe_structured_content(result.structured_content.clone())
        .maybe_meta(meta(result))
        .build()
}

/// The answer of `mcpServer/tool/call`.
pub fn call_response(result: &CallToolResult) -> McpServerToolCallResponse {
    McpServerToolCallResponse::builder()
        .content(blocks(result))
        .maybe_structured_content(result.structured_content.clone())
        .maybe_is_error(result.is_error)
        .maybe_meta(meta(result))
        .build()
}

/// What the model reads: the text blocks, other blocks as JSON, the structured result when
/// there is nothing else; an error is said to be one.
pub fn model_text(result: &CallToolResult) -> String {
    text_of(
        &blocks(result),
        result.structured_content.as_ref(),
        result.is_error == Some(true),
    )
}

/// What the model read of a recorded `mcpToolCall` item (for the history of a later model
/// call): the same text [`model_text`] gave it, or the failure it was told about.
pub fn recorded_text(
    result: Option<&McpToolCallResult>,
    error: Option<&agentwire_protocol::McpToolCallError>,
) -> String {
    match (result, error) {
        (Some(result), error) => text_of(
            &result.content,
            result.structured_content.as_ref(),
            error.is_some(),
        ),
        (None, Some(error)) if error.message == "interrupted" => {
            "The tool call was interrupted.".to_owned()
        }
        (None, Some(error)) => format!("The tool call failed: {}", error.message),
        (None, None) => "The tool call did not finish.".to_owned(),
    }
}

fn text_of(blocks: &[Value], structured: Option<&Value>, is_error: bool) -> String {
    let mut parts: Vec<String> = blocks
        .iter()
        .map(|block| match block.get("text").and_then(Value::as_str) {
            Some(text) if block.get("type").and_then(Value::as_str) == Some("text") => {
                text.to_owned()
            }
            _ => block.to_string(),
        })
        .collect();
    if parts.is_empty()
        && let Some(structured) = structured
    {
        parts.push(structured.to_string());
    }
    let mut text = parts.join("\n");
    if is_error {
        text = format!("The tool reported an error:\n{text}");
    }
    if text.len() > MAX_MODEL_TEXT {
        let mut cut = MAX_MODEL_TEXT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[output cut: too long]");
    }
    text
}

/// A tool as `mcpServerStatus/list` reports it.
pub(crate) fn tool(tool: &rmcp::model::Tool) -> Tool {
    convert(tool).unwrap_or_else(|| {
        Tool::builder()
            .name(tool.name.to_string())
            .maybe_description(tool.description.as_deref().map(str::to_owned))
            .input_schema(Value::Object((*tool.input_schema).clone()))
            .build()
    })
}

/// A resource as `mcpServerStatus/list` reports it.
pub(crate) fn resource(resource: &rmcp::model::Resource) -> Option<Resource> {
    convert(resource)
}

/// A resource template as `mcpServerStatus/list` reports it.
pub(crate) fn template(template: &rmcp::model::ResourceTemplate) -> Option<ResourceTemplate> {
    convert(template)
}

/// The contents of a resource read.
pub fn contents(result: &ReadResourceResult) -> Vec<ResourceContent> {
    result.contents.iter().filter_map(convert).collect()
}

/// A value as protocol JSON, for `serverInfo` and `serverCapabilities`.
pub(crate) fn json<T: DeserializeOwned>(value: &impl Serialize) -> Option<T> {
    convert(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(json: Value) -> CallToolResult {
        serde_json::from_value(json).expect("a CallToolResult")
    }

    #[test]
    fn model_text_joins_text_and_marks_errors() {
        let ok = result(serde_json::json!({
            "content": [{"type": "text", "text": "Echo: hi"}, {"type": "text", "text": "more"}]
        }));
        assert_eq!(model_text(&ok), "Echo: hi\nmore");
        let structured = result(serde_json::json!({"content": [], "structuredContent": {"a": 1}}));
        assert_eq!(model_text(&structured), r#"{"a":1}"#);
        let error = result(serde_json::json!({
            "content": [{"type": "text", "text": "boom"}], "isError": true
        }));
        assert_eq!(model_text(&error), "The tool reported an error:\nboom");
        let item = item_result(&ok);
        assert_eq!(item.content[0]["text"], "Echo: hi");
        assert_eq!(call_response(&error).is_error, Some(true));
    }
}
