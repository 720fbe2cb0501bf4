//! The `agentwire mcp-server` surface: the same engine offered to MCP hosts as two tools.
//!
//! An MCP host lists the tools with `tools/list` and runs a turn with `tools/call`:
//!
//! - [`CODEX_TOOL_NAME`] starts a new thread; its `arguments` are a [`CodexToolCallParam`].
//! - [`CODEX_REPLY_TOOL_NAME`] continues one; its `arguments` are a [`CodexReplyToolCallParam`].
//!
//! Both answer with a [`CodexToolCallResult`] whose `structuredContent` is a
//! [`CodexToolCallOutput`]. While the call runs, the server streams [`CODEX_EVENT_METHOD`]
//! notifications ([`CodexEventNotificationParams`]) and, when a command or a patch needs the
//! user's consent, sends MCP `elicitation/create` requests ([`CodexApprovalElicitationParams`])
//! that the host answers with an [`McpElicitationResult`].
//!
//! These types are not params or results of an app-server method; they form their own namespace
//! (`#/definitions/mcp/` in the schema bundle), walked by [`visit_types`]. Their wire conventions
//! are the MCP server's, not the app-server's: the `codex` tool's arguments are kebab-case, the
//! event payloads are snake_case, and the elicitation members are prefixed `codex_`.

mod elicitation;
mod event;
mod tool_args;
mod tool_result;

#[cfg(test)]
#[cfg(all(feature = "schema", feature = "ts"))]
mod tests;

pub use elicitation::*;
pub use event::*;
pub use tool_args::*;
pub use tool_result::*;

/// The name of the tool that starts a new thread.
pub const CODEX_TOOL_NAME: &str = "codex";

/// The name of the tool that continues an existing thread.
pub const CODEX_REPLY_TOOL_NAME: &str = "codex-reply";

/// The method of the notification that streams a running tool call's events.
pub const CODEX_EVENT_METHOD: &str = "codex/event";

/// The method of the MCP request the server sends to ask the host for an approval.
pub const ELICITATION_CREATE_METHOD: &str = "elicitation/create";

/// Calls `visitor.visit::<T>()` once for each root type of the MCP-server surface; the types they
/// reference are reached from these.
pub fn visit_types<V: crate::TypeVisitor>(visitor: &mut V) {
    visitor.visit::<CodexToolCallParam>();
    visitor.visit::<CodexReplyToolCallParam>();
    visitor.visit::<CodexToolCallOutput>();
    visitor.visit::<CodexToolCallResult>();
    visitor.visit::<CodexApprovalElicitationParams>();
    visitor.visit::<McpElicitationResult>();
    visitor.visit::<CodexEventNotificationParams>();
}

#[cfg(feature = "schema")]
/// Schema transform for unit enums whose variants carry doc comments.
///
/// schemars renders such an enum as a `oneOf` of documented `const`s; the MCP tool schemas (and
/// the hosts that read them) expect the plain `{"type": "string", "enum": [...]}` form. The
/// variant docs stay on the Rust side.
fn plain_string_enum(schema: &mut schemars::Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let Some(serde_json::Value::Array(branches)) = object.get("oneOf") else {
        return;
    };
    let values: Option<Vec<serde_json::Value>> = branches
        .iter()
        .map(|branch| branch.get("const").filter(|v| v.is_string()).cloned())
        .collect();
    let Some(values) = values else {
        return;
    };
    object.remove("oneOf");
    object.insert("type".into(), "string".into());
    object.insert("enum".into(), serde_json::Value::Array(values));
}
