//! What the two tools answer: the `result` of their `tools/call` requests.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The structured output of a `codex` or `codex-reply` call (the tools' `outputSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CodexToolCallOutput {
    /// The thread the turn ran on; pass it to `codex-reply` to continue.
    pub thread_id: String,
    /// The agent's last message of the turn (empty when it wrote none).
    pub content: String,
}

/// The `result` of a `tools/call` request for `codex` or `codex-reply` (an MCP tool result).
///
/// A completed turn carries its `CodexToolCallOutput` both as `structuredContent` and, for
/// hosts that only read text, as a text block in `content`. A failed call has no
/// `structuredContent`, sets `isError` and explains itself in `content`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct CodexToolCallResult {
    /// The output as MCP content blocks.
    #[builder(default)]
    pub content: Vec<McpContentBlock>,
    /// The output as structured data; absent when the call failed.
    #[serde(default)]
    #[schemars(with = "CodexToolCallOutput")]
    #[ts(optional)]
    pub structured_content: Option<CodexToolCallOutput>,
    /// `true` when the call failed; absent otherwise.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub is_error: Option<bool>,
}

/// One MCP content block of a tool result, tagged by `type`. Kinds other than text (image,
/// audio, resource …) are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum McpContentBlock {
    /// Plain text.
    #[non_exhaustive]
    Text {
        /// The text.
        text: String,
    },
    /// Any other kind of block (image, audio, resource …), kept verbatim.
    #[serde(untagged)]
    #[ts(skip)]
    Other(serde_json::Value),
}

#[bon::bon]
impl McpContentBlock {
    /// Starts building [`McpContentBlock::Text`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn text(text: String) -> Self {
        Self::Text { text }
    }
}
