//! Tools the client answers: the server→client requests by which a running turn asks the
//! client for something the model needs.
//!
//! - `item/tool/requestUserInput`: the model asks the user one or more questions (the
//!   `request_user_input` tool); the client answers with the chosen or typed answers per
//!   question id.
//! - `item/tool/call`: the model calls a *dynamic tool*, one the client declared with
//!   `thread/start`'s `dynamicTools` ([`DynamicToolSpec`]) and runs itself; the client answers
//!   with the content the model gets back and whether the call succeeded.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// A tool the client declares on `thread/start` and runs itself when the model calls it;
/// discriminated by `type`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum DynamicToolSpec {
    /// One callable function.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Function {
        /// The function name the model calls.
        name: String,
        /// What it does, for the model.
        description: String,
        /// JSON Schema of its arguments.
        input_schema: serde_json::Value,
        /// `true` lets the server hold the tool back until the model searches for it; absent
        /// means `false`.
        #[serde(default)]
        #[schemars(with = "bool")]
        #[ts(optional)]
        defer_loading: Option<bool>,
    },
    /// A named group of functions.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Namespace {
        /// The group's name.
        name: String,
        /// What the group is for, for the model.
        description: String,
        /// The functions of the group.
        tools: Vec<DynamicToolNamespaceTool>,
    },
}

#[bon::bon]
impl DynamicToolSpec {
    /// Starts building [`DynamicToolSpec::Function`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn function(
        name: String,
        description: String,
        input_schema: serde_json::Value,
        defer_loading: Option<bool>,
    ) -> Self {
        Self::Function {
            name,
            description,
            input_schema,
            defer_loading,
        }
    }

    /// Starts building [`DynamicToolSpec::Namespace`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn namespace(
        name: String,
        description: String,
        #[builder(default)] tools: Vec<DynamicToolNamespaceTool>,
    ) -> Self {
        Self::Namespace {
            name,
            description,
            tools,
        }
    }
}

/// One function of a [`DynamicToolSpec::Namespace`]; discriminated by `type`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum DynamicToolNamespaceTool {
    /// One callable function.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Function {
        /// The function name, unique within its namespace.
        name: String,
        /// What it does, for the model.
        description: String,
        /// JSON Schema of its arguments.
        input_schema: serde_json::Value,
        /// `true` lets the server hold the tool back until the model searches for it; absent
        /// means `false`.
        #[serde(default)]
        #[schemars(with = "bool")]
        #[ts(optional)]
        defer_loading: Option<bool>,
    },
}

#[bon::bon]
impl DynamicToolNamespaceTool {
    /// Starts building [`DynamicToolNamespaceTool::Function`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn function(
        name: String,
        description: String,
        input_schema: serde_json::Value,
        defer_loading: Option<bool>,
    ) -> Self {
        Self::Function {
            name,
            description,
            input_schema,
            defer_loading,
        }
    }
}

/// Params of `item/tool/call`: run this call of a dynamic tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct DynamicToolCallParams {
    /// Thread of the turn that waits.
    pub thread_id: String,
    /// Turn that waits for the result.
    pub turn_id: String,
    /// Id of the call; also the id of its `dynamicToolCall` item.
    pub call_id: String,
    /// Namespace of the tool; `null` for a tool outside any namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Name of the tool.
    pub tool: String,
    /// Arguments the model passed, as JSON.
    pub arguments: serde_json::Value,
}

/// Result of `item/tool/call`: what the tool produced for the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct DynamicToolCallResponse {
    /// The content passed back to the model, in order.
    #[builder(default)]
    pub content_items: Vec<DynamicToolCallOutputContentItem>,
    /// Whether the tool did what was asked.
    pub success: bool,
}

/// Params of `item/tool/requestUserInput`: questions the model asks the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ToolRequestUserInputParams {
    /// Thread of the turn that waits.
    pub thread_id: String,
    /// Turn that waits for the answers.
    pub turn_id: String,
    /// Id of the model's tool call that asks.
    pub item_id: String,
    /// The questions, in display order.
    #[builder(default)]
    pub questions: Vec<ToolRequestUserInputQuestion>,
    /// Whether the turn waits for the answers (`true`) or goes on without them.
    pub is_blocking: bool,
    /// Deprecated: milliseconds after which the request resolves by itself; read
    /// `isBlocking` instead.
    #[serde(default)]
    pub auto_resolution_ms: Option<u64>,
}

/// One question of a `item/tool/requestUserInput` request.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ToolRequestUserInputQuestion {
    /// Id of the question; its answer is keyed by it.
    pub id: String,
    /// Short title of the question.
    pub header: String,
    /// The question itself.
    pub question: String,
    /// Whether the user may answer with free text besides the options.
    #[serde(default)]
    #[builder(default)]
    pub is_other: bool,
    /// Whether the answer is secret (a password, a token) and should be hidden while typed.
    #[serde(default)]
    #[builder(default)]
    pub is_secret: bool,
    /// The choices offered; `null` for a free-text question.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub options: Option<Vec<ToolRequestUserInputOption>>,
}

/// One choice offered by a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ToolRequestUserInputOption {
    /// What the user picks.
    pub label: String,
    /// What picking it means.
    pub description: String,
}

/// Result of `item/tool/requestUserInput`: the answers, keyed by question id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ToolRequestUserInputResponse {
    /// Answers by question id; a question left out was not answered.
    #[builder(default)]
    pub answers: BTreeMap<String, ToolRequestUserInputAnswer>,
}

/// The user's answer to one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ToolRequestUserInputAnswer {
    /// The chosen option labels and/or the typed text.
    #[builder(default)]
    pub answers: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dynamic_tool_specs_read_both_kinds() {
        let specs: Vec<DynamicToolSpec> = serde_json::from_value(json!([
            {"type": "function", "name": "lookup", "description": "d", "inputSchema": {"type": "object"}},
            {"type": "namespace", "name": "crm", "description": "d", "tools": [
                {"type": "function", "name": "find", "description": "d", "inputSchema": true, "deferLoading": true}
            ]}
        ]))
        .expect("specs");
        assert!(
            matches!(&specs[0], DynamicToolSpec::Function { name, defer_loading: None, .. } if name == "lookup")
        );
        let DynamicToolSpec::Namespace { tools, .. } = &specs[1] else {
            panic!("namespace expected");
        };
        assert_eq!(tools.len(), 1);
        assert!(
            serde_json::from_value::<DynamicToolSpec>(json!({"type": "other", "name": "x"}))
                .is_err()
        );
    }

    #[test]
    fn user_input_answers_are_keyed_by_question() {
        let response: ToolRequestUserInputResponse =
            serde_json::from_value(json!({"answers": {"q1": {"answers": ["Yes"]}}}))
                .expect("response");
        assert_eq!(response.answers["q1"].answers, vec!["Yes".to_owned()]);
        let question: ToolRequestUserInputQuestion =
            serde_json::from_value(json!({"id": "q", "header": "h", "question": "?"}))
                .expect("question");
        assert!(!question.is_other && !question.is_secret && question.options.is_none());
    }
}
