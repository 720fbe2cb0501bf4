//! The two tools: their `tools/list` entries and the parsing of their `arguments`.
//!
//! The input and output schemas are generated from the wire types in
//! `agentwire_protocol::mcp`, so what the server lists is what it accepts. They are inlined (no
//! `$ref`s) for hosts that do not resolve references.

use agentwire_protocol::mcp::{
    CODEX_REPLY_TOOL_NAME, CODEX_TOOL_NAME, CodexReplyToolCallParam, CodexToolCallOutput,
    CodexToolCallParam,
};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// A parsed `tools/call`.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCall {
    /// `codex`: start a thread and run its first turn.
    Codex(CodexToolCallParam),
    /// `codex-reply`: run another turn on a thread.
    Reply {
        /// The thread (`threadId`, or the deprecated `conversationId`).
        thread_id: String,
        /// The next user message.
        prompt: String,
    },
}

/// Why a `tools/call` cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolCallError {
    /// No tool has that name (a protocol error, not a tool result).
    #[error("Unknown tool: {0}")]
    UnknownTool(String),
    /// The arguments do not fit the tool's input schema (a tool result with `isError`).
    #[error("{0}")]
    InvalidArguments(String),
}

/// The schema of `T`, with every subschema inlined and no `$schema` or root `title`.
fn schema_of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        object.remove("description");
    }
    schema
}

/// The `tools` array of the `tools/list` answer.
pub fn tool_list() -> Value {
    let output = schema_of::<CodexToolCallOutput>();
    json!([
        {
            "name": CODEX_TOOL_NAME,
            "title": "Codex",
            "description": "Start a new agentwire thread and run its first turn with `prompt`. \
                Optional arguments choose the model, working directory, approval policy, sandbox, \
                instructions and config overrides. Answers with the agent's last message and the \
                `threadId` to pass to `codex-reply`.",
            "inputSchema": schema_of::<CodexToolCallParam>(),
            "outputSchema": output,
        },
        {
            "name": CODEX_REPLY_TOOL_NAME,
            "title": "Codex Reply",
            "description": "Run another turn with `prompt` on the agentwire thread `threadId` \
                (returned by an earlier `codex` call).",
            "inputSchema": schema_of::<CodexReplyToolCallParam>(),
            "outputSchema": output,
        }
    ])
}

/// Parses `arguments` as `T`, naming the member that is wrong.
fn parse_arguments<T: DeserializeOwned>(
    tool: &str,
    arguments: Option<Map<String, Value>>,
) -> Result<T, ToolCallError> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        let message = if path == "." {
            format!("Invalid arguments for tool `{tool}`: {inner}")
        } else {
            format!("Invalid arguments for tool `{tool}` at `{path}`: {inner}")
        };
        ToolCallError::InvalidArguments(message)
    })
}

/// Parses a `tools/call` of tool `name` with `arguments`.
pub fn parse(name: &str, arguments: Option<Map<String, Value>>) -> Result<ToolCall, ToolCallError> {
    match name {
        CODEX_TOOL_NAME => {
            parse_arguments::<CodexToolCallParam>(name, arguments).map(ToolCall::Codex)
        }
        CODEX_REPLY_TOOL_NAME => {
            let params = parse_arguments::<CodexReplyToolCallParam>(name, arguments)?;
            let thread_id = params.thread_id().map(str::to_owned).ok_or_else(|| {
                ToolCallError::InvalidArguments(format!(
                    "Invalid arguments for tool `{name}`: missing field `threadId` (or the \
                     deprecated `conversationId`)"
                ))
            })?;
            Ok(ToolCall::Reply {
                thread_id,
                prompt: params.prompt,
            })
        }
        other => Err(ToolCallError::UnknownTool(other.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Option<Map<String, Value>> {
        match value {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    #[test]
    fn schemas_are_inlined_and_strict() {
        let tools = tool_list();
        let codex = &tools[0]["inputSchema"];
        assert_eq!(codex["additionalProperties"], json!(false));
        assert_eq!(codex["required"], json!(["prompt"]));
        assert_eq!(
            codex["properties"]["approval-policy"]["enum"],
            json!(["on-request", "never"])
        );
        let text = tools.to_string();
        assert!(!text.contains("$ref"), "{text}");
        assert!(!text.contains("$schema"), "{text}");
    }

    #[test]
    fn arguments_are_checked() {
        let call = parse(
            "codex",
            args(json!({"prompt": "hi", "approval-policy": "never"})),
        )
        .expect("valid");
        assert!(matches!(call, ToolCall::Codex(p) if p.prompt == "hi"));

        let unknown = parse("codex", args(json!({"prompt": "hi", "colour": "red"})));
        assert!(
            matches!(&unknown, Err(ToolCallError::InvalidArguments(m)) if m.contains("colour")),
            "{unknown:?}"
        );
        let bad_enum = parse(
            "codex",
            args(json!({"prompt": "hi", "sandbox": "everywhere"})),
        );
        assert!(
            matches!(&bad_enum, Err(ToolCallError::InvalidArguments(m)) if m.contains("`sandbox`")),
            "{bad_enum:?}"
        );
        let missing = parse("codex", None);
        assert!(
            matches!(&missing, Err(ToolCallError::InvalidArguments(m)) if m.contains("prompt")),
            "{missing:?}"
        );

        let reply = parse(
            "codex-reply",
            args(json!({"prompt": "again", "conversationId": "t1"})),
        );
        assert_eq!(
            reply,
            Ok(ToolCall::Reply {
                thread_id: "t1".to_owned(),
                prompt: "again".to_owned()
            })
        );
        let no_thread = parse("codex-reply", args(json!({"prompt": "again"})));
        assert!(
            matches!(&no_thread, Err(ToolCallError::InvalidArguments(m)) if m.contains("threadId")),
            "{no_thread:?}"
        );
        assert_eq!(
            parse("other", None),
            Err(ToolCallError::UnknownTool("other".to_owned()))
        );
    }
}
