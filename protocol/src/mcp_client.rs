//! The engine as an MCP client: a client calling a configured MCP server's tools and reading its
//! resources through the app-server (`mcpServer/tool/call`, `mcpServer/resource/read`),
//! reloading the set of servers (`config/mcpServer/reload`), the progress of an `mcpToolCall`
//! item (`item/mcpToolCall/progress`), and an MCP server's elicitation forwarded to the client
//! (`mcpServer/elicitation/request`).
//!
//! MCP payloads (content blocks, structured results, `_meta`) pass through unchanged as JSON.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Params of `mcpServer/tool/call`: call one tool of a configured MCP server, outside any turn.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerToolCallParams {
    /// The thread on whose behalf the tool runs (its elicitations go to this thread's client).
    pub thread_id: String,
    /// The server's name in the configuration (the key under `mcp_servers`).
    pub server: String,
    /// The tool's name on that server.
    pub tool: String,
    /// The tool's arguments (a JSON object); absent for none.
    #[serde(default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub arguments: Option<serde_json::Value>,
    /// MCP request metadata sent along with the call; absent for none.
    #[serde(rename = "_meta", default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub _meta: Option<serde_json::Value>,
    /// Pick the registration of `server` made by this environment; absent picks the server by
    /// name alone.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub environment_id: Option<String>,
}

/// Result of `mcpServer/tool/call`: the MCP `CallToolResult`, unchanged.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct McpServerToolCallResponse {
    /// MCP content blocks (text, image, resource …).
    #[builder(default)]
    pub content: Vec<serde_json::Value>,
    /// The tool's structured JSON result; absent when it returned none.
    #[serde(default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub structured_content: Option<serde_json::Value>,
    /// Whether the tool reports a failure; `null` when it did not say.
    #[serde(default)]
    #[serialize_always]
    pub is_error: Option<bool>,
    /// The result's MCP `_meta` object; absent when the server sent none.
    #[serde(rename = "_meta", default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub _meta: Option<serde_json::Value>,
}

/// Params of `mcpServer/resource/read`: read one resource of a configured MCP server.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpResourceReadParams {
    /// The thread on whose behalf the resource is read; absent for none.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread_id: Option<String>,
    /// The server's name in the configuration.
    pub server: String,
    /// The resource's URI on that server.
    pub uri: String,
    /// MCP request metadata sent along with the read; absent for none.
    #[serde(rename = "_meta", default)]
    #[ts(optional = nullable)]
    pub _meta: Option<serde_json::Map<String, serde_json::Value>>,
    /// The connector whose app the resource belongs to; absent for plain MCP servers.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub connector_id: Option<String>,
    /// Pick the registration of `server` made by this environment; absent picks it by name.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub environment_id: Option<String>,
    /// The tool call that produced the resource link, when it came from one.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub origin_call_id: Option<String>,
    /// The hosted app and account to read from; absent for plain MCP servers.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub target: Option<McpResourceReadTarget>,
}

/// The hosted app and account a resource read is aimed at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpResourceReadTarget {
    /// The app's connector id.
    pub connector_id: String,
    /// The account link to use; `null` asks for access without one.
    #[schemars(required, extend("type" = ["string", "null"]))]
    pub link_id: Option<String>,
}

/// Result of `mcpServer/resource/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct McpResourceReadResponse {
    /// The resource's contents, as the MCP server returned them.
    #[builder(default)]
    pub contents: Vec<ResourceContent>,
    /// The originating tool call when the read was scoped to it; `null` otherwise.
    #[serde(default)]
    pub origin_call_id: Option<String>,
}

/// One part of a resource's contents: text or base64 bytes.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[schemars(transform = untitled_branches)]
#[non_exhaustive]
pub enum ResourceContent {
    /// Text contents.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Text {
        /// The URI of this resource.
        uri: String,
        /// MIME type; `null` when not known.
        #[serde(default)]
        #[serialize_always]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// The contents' MCP `_meta` object; absent when the server sent none.
        #[serde(rename = "_meta", default)]
        #[schemars(with = "serde_json::Value")]
        #[ts(optional)]
        _meta: Option<serde_json::Value>,
    },
    /// Binary contents.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Blob {
        /// The URI of this resource.
        uri: String,
        /// MIME type; `null` when not known.
        #[serde(default)]
        #[serialize_always]
        mime_type: Option<String>,
        /// The bytes, base64-encoded.
        blob: String,
        /// The contents' MCP `_meta` object; absent when the server sent none.
        #[serde(rename = "_meta", default)]
        #[schemars(with = "serde_json::Value")]
        #[ts(optional)]
        _meta: Option<serde_json::Value>,
    },
}

#[bon::bon]
impl ResourceContent {
    /// Starts building [`ResourceContent::Text`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn text(
        uri: String,
        mime_type: Option<String>,
        text: String,
        _meta: Option<serde_json::Value>,
    ) -> Self {
        Self::Text {
            uri,
            mime_type,
            text,
            _meta,
        }
    }

    /// Starts building [`ResourceContent::Blob`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn blob(
        uri: String,
        mime_type: Option<String>,
        blob: String,
        _meta: Option<serde_json::Value>,
    ) -> Self {
        Self::Blob {
            uri,
            mime_type,
            blob,
            _meta,
        }
    }
}

/// Result of `config/mcpServer/reload`: the servers were reloaded from the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerRefreshResponse {}

/// Params of `item/mcpToolCall/progress`: the MCP server reported progress of a running
/// `mcpToolCall` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpToolCallProgressNotification {
    /// The thread.
    pub thread_id: String,
    /// The turn.
    pub turn_id: String,
    /// The `mcpToolCall` item.
    pub item_id: String,
    /// The progress, as text (the server's message, or `progress/total`).
    pub message: String,
}

/// Params of `mcpServer/elicitation/request`: an MCP server asks the user for input (MCP
/// `elicitation/create`), forwarded to the client; its answer goes back to the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerElicitationRequestParams {
    /// The thread the request belongs to.
    pub thread_id: String,
    /// The running turn when the request came, if any.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The server's name in the configuration.
    pub server_name: String,
    /// The environment of the server's registration; `null` for a thread-wide server.
    #[serde(default)]
    pub environment_id: Option<String>,
    /// What is asked: a form or a URL to open.
    #[serde(flatten)]
    pub request: McpServerElicitationForm,
}

/// What an MCP server asks the user for, told apart by `mode`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "mode")]
#[non_exhaustive]
pub enum McpServerElicitationForm {
    /// `form`: fill in a form (MCP `requestedSchema`).
    #[serde(rename = "form", rename_all = "camelCase")]
    #[non_exhaustive]
    Form {
        /// What the server asks, for the user.
        message: String,
        /// The form: a flat object schema.
        requested_schema: McpElicitationFormSchema,
        /// The request's MCP `_meta` object; absent when the server sent none.
        #[serde(rename = "_meta", default)]
        #[schemars(with = "serde_json::Value")]
        #[ts(optional)]
        _meta: Option<serde_json::Value>,
    },
    /// `openai/form`: a form in OpenAI's extended schema dialect.
    #[serde(rename = "openai/form", rename_all = "camelCase")]
    #[non_exhaustive]
    OpenaiForm {
        /// What the server asks, for the user.
        message: String,
        /// The form, as the MCP server sent it.
        #[schemars(with = "serde_json::Value")]
        requested_schema: serde_json::Value,
        /// The request's MCP `_meta` object; absent when the server sent none.
        #[serde(rename = "_meta", default)]
        #[schemars(with = "serde_json::Value")]
        #[ts(optional)]
        _meta: Option<serde_json::Value>,
    },
    /// `openaiForm`: the same, under its camelCase name.
    #[serde(rename = "openaiForm", rename_all = "camelCase")]
    #[non_exhaustive]
    OpenaiFormCamel {
        /// What the server asks, for the user.
        message: String,
        /// The form, as the MCP server sent it.
        #[schemars(with = "serde_json::Value")]
        requested_schema: serde_json::Value,
        /// The request's MCP `_meta` object; absent when the server sent none.
        #[serde(rename = "_meta", default)]
        #[schemars(with = "serde_json::Value")]
        #[ts(optional)]
        _meta: Option<serde_json::Value>,
    },
    /// `url`: open a URL (sign-in, payment …) and confirm.
    #[serde(rename = "url", rename_all = "camelCase")]
    #[non_exhaustive]
    Url {
        /// What the server asks, for the user.
        message: String,
        /// The URL to open.
        url: String,
        /// The server's id for this elicitation.
        elicitation_id: String,
        /// The request's MCP `_meta` object; absent when the server sent none.
        #[serde(rename = "_meta", default)]
        #[schemars(with = "serde_json::Value")]
        #[ts(optional)]
        _meta: Option<serde_json::Value>,
    },
}

#[bon::bon]
impl McpServerElicitationForm {
    /// Starts building [`McpServerElicitationForm::Form`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn form(
        message: String,
        requested_schema: McpElicitationFormSchema,
        _meta: Option<serde_json::Value>,
    ) -> Self {
        Self::Form {
            message,
            requested_schema,
            _meta,
        }
    }

    /// Starts building [`McpServerElicitationForm::OpenaiForm`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn openai_form(
        message: String,
        requested_schema: serde_json::Value,
        _meta: Option<serde_json::Value>,
    ) -> Self {
        Self::OpenaiForm {
            message,
            requested_schema,
            _meta,
        }
    }

    /// Starts building [`McpServerElicitationForm::OpenaiFormCamel`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn openai_form_camel(
        message: String,
        requested_schema: serde_json::Value,
        _meta: Option<serde_json::Value>,
    ) -> Self {
        Self::OpenaiFormCamel {
            message,
            requested_schema,
            _meta,
        }
    }

    /// Starts building [`McpServerElicitationForm::Url`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn url(
        message: String,
        url: String,
        elicitation_id: String,
        _meta: Option<serde_json::Value>,
    ) -> Self {
        Self::Url {
            message,
            url,
            elicitation_id,
            _meta,
        }
    }
}

/// The form of a `form` elicitation: a flat object schema whose fields are primitive schemas.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpElicitationFormSchema {
    /// The JSON Schema dialect, when the server names one.
    #[serde(rename = "$schema", default)]
    #[ts(optional = nullable)]
    pub schema: Option<String>,
    /// Always `object`.
    #[serde(rename = "type")]
    pub kind: McpElicitationObjectType,
    /// The form's fields by name: each a string, number, boolean or enum schema, as the MCP
    /// server sent it.
    #[builder(default)]
    pub properties: std::collections::BTreeMap<String, serde_json::Value>,
    /// The fields the user must fill in; absent when none are.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub required: Option<Vec<String>>,
}

/// The `type` of an elicitation form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum McpElicitationObjectType {
    /// A JSON object.
    Object,
}

/// Result of `mcpServer/elicitation/request`: the user's answer.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerElicitationRequestResponse {
    /// Accept (with `content`), decline, or cancel.
    pub action: McpServerElicitationAction,
    /// The filled-in form for `accept`; absent or `null` otherwise.
    #[serde(default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub content: Option<serde_json::Value>,
    /// Client metadata for the server; absent for none.
    #[serde(rename = "_meta", default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub _meta: Option<serde_json::Value>,
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum McpServerElicitationAction {
    /// Go ahead, with the form's content.
    Accept,
    /// No.
    Decline,
    /// Dismissed without an answer.
    Cancel,
}

#[cfg(feature = "schema")]
/// Drops the `title` schemars gives each branch of an untagged enum: the reference's branches
/// of these unions are untitled objects.
fn untitled_branches(schema: &mut schemars::Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    for key in ["anyOf", "oneOf"] {
        if let Some(serde_json::Value::Array(branches)) = object.get_mut(key) {
            for branch in branches {
                if let Some(branch) = branch.as_object_mut() {
                    branch.remove("title");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_result_that_does_not_say_whether_it_failed_sends_a_null_is_error() {
        let sent = json!({"content": [], "isError": null});
        let result = McpServerToolCallResponse::default();
        assert_eq!(serde_json::to_value(&result).expect("serialize"), sent);
        let read: McpServerToolCallResponse = serde_json::from_value(sent).expect("deserialize");
        assert_eq!(read, result);
    }

    #[test]
    fn resource_contents_of_unknown_type_send_a_null_mime_type() {
        let text = ResourceContent::text().uri("file:///a").text("x").build();
        assert_eq!(
            serde_json::to_value(&text).expect("serialize"),
            json!({"uri": "file:///a", "mimeType": null, "text": "x"})
        );
        let blob = ResourceContent::blob()
            .uri("file:///b")
            .blob("AA==")
            .build();
        assert_eq!(
            serde_json::to_value(&blob).expect("serialize"),
            json!({"uri": "file:///b", "mimeType": null, "blob": "AA=="})
        );
    }
}
