//! Tool call items: MCP tools, dynamic (client) tools, function call output, collaborating
//! agents and sub-agent activity.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Last known state of one agent addressed by a collaboration tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CollabAgentState {
    /// Where the agent's lifecycle stands.
    pub status: CollabAgentStatus,
    /// Latest message from the agent (its answer or error text); `null` when it has none yet.
    #[serde(default)]
    pub message: Option<String>,
}

/// Lifecycle state of an agent in a multi-agent collaboration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CollabAgentStatus {
    /// Spawned, still being set up.
    PendingInit,
    /// Working on its task.
    Running,
    /// Its work was stopped before it finished.
    Interrupted,
    /// Finished its task.
    Completed,
    /// Stopped because of an error.
    Errored,
    /// Closed down; it takes no more input.
    Shutdown,
    /// No agent with that id exists.
    NotFound,
}

/// Which multi-agent collaboration tool the agent invoked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CollabAgentTool {
    /// Create a new sub-agent (in its own thread).
    SpawnAgent,
    /// Give input to an existing sub-agent.
    SendInput,
    /// Wake a sub-agent that was stopped.
    ResumeAgent,
    /// Block until one or more sub-agents finish.
    Wait,
    /// Shut a sub-agent down.
    CloseAgent,
    /// Send a message to another agent.
    SendMessage,
    /// Hand a sub-agent a follow-up task.
    FollowupTask,
    /// Stop a sub-agent's current work.
    InterruptAgent,
    /// Enumerate the known agents.
    ListAgents,
}

/// Progress of a collaboration tool call item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CollabAgentToolCallStatus {
    /// The call is running.
    InProgress,
    /// The call returned successfully.
    Completed,
    /// The call returned an error.
    Failed,
    /// The call was cut short by an interrupt.
    Interrupted,
}

/// One piece of the result a client-implemented (dynamic) tool returned; discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum DynamicToolCallOutputContentItem {
    /// Text passed back to the model.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    InputText {
        /// The text.
        text: String,
    },
    /// An image passed back to the model.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    InputImage {
        /// Where the image is: an `https:` or `data:` URL.
        image_url: String,
    },
    /// Audio passed back to the model.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    InputAudio {
        /// Where the audio is: an `https:` or `data:` URL.
        audio_url: String,
    },
}

#[bon::bon]
impl DynamicToolCallOutputContentItem {
    /// Starts building [`DynamicToolCallOutputContentItem::InputText`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn input_text(text: String) -> Self {
        Self::InputText { text }
    }

    /// Starts building [`DynamicToolCallOutputContentItem::InputImage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn input_image(image_url: String) -> Self {
        Self::InputImage { image_url }
    }

    /// Starts building [`DynamicToolCallOutputContentItem::InputAudio`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn input_audio(audio_url: String) -> Self {
        Self::InputAudio { audio_url }
    }
}

/// Progress of a dynamic (client-implemented) tool call item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum DynamicToolCallStatus {
    /// Waiting for the client's result.
    InProgress,
    /// The client returned a result.
    Completed,
    /// The call failed or the client reported failure.
    Failed,
}

/// What a tool call returned to the model: plain text, or a list of typed content parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum FunctionCallOutputBody {
    /// A JSON string: the whole output as text.
    Text(String),
    /// A JSON array of content parts.
    List(Vec<FunctionCallOutputContentItem>),
}

/// One content part of a tool's output, in Responses API form (snake_case `type` values such
/// as `input_text`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FunctionCallOutputContentItem {
    /// A text part.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    InputText {
        /// The text.
        text: String,
    },
    /// An image part; its source members (`image_url` or `file_id`) sit beside `type`.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    InputImage {
        /// Where the image comes from.
        #[serde(flatten)]
        source: OutputImageSource,
        /// Resolution the model should see the image at; left out for the provider's default.
        #[serde(default)]
        #[ts(optional = nullable)]
        detail: Option<ImageDetail>,
    },
    /// An audio part; its source members (`audio_url` or `file_id`) sit beside `type`.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    InputAudio {
        /// Where the audio comes from.
        #[serde(flatten)]
        source: OutputAudioSource,
    },
    /// Content encrypted by the provider, passed through opaquely.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    EncryptedContent {
        /// The encrypted payload, not readable by the client.
        #[serde(rename = "encrypted_content")]
        encrypted_content: String,
    },
}

#[bon::bon]
impl FunctionCallOutputContentItem {
    /// Starts building [`FunctionCallOutputContentItem::InputText`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn input_text(text: String) -> Self {
        Self::InputText { text }
    }

    /// Starts building [`FunctionCallOutputContentItem::InputImage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn input_image(source: OutputImageSource, detail: Option<ImageDetail>) -> Self {
        Self::InputImage { source, detail }
    }

    /// Starts building [`FunctionCallOutputContentItem::InputAudio`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn input_audio(source: OutputAudioSource) -> Self {
        Self::InputAudio { source }
    }

    /// Starts building [`FunctionCallOutputContentItem::EncryptedContent`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn encrypted_content(encrypted_content: String) -> Self {
        Self::EncryptedContent { encrypted_content }
    }
}

/// The app (connector) an MCP tool call was made through, when the tool belongs to one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpToolCallAppContext {
    /// Id of the connector that provides the tool.
    pub connector_id: String,
    /// Display name of the app; `null` when unknown.
    #[serde(default)]
    pub app_name: Option<String>,
    /// Display name of the app action invoked; `null` when unknown.
    #[serde(default)]
    pub action_name: Option<String>,
    /// Id of the user's link (connected account) to the app; `null` when unknown.
    #[serde(default)]
    pub link_id: Option<String>,
    /// URI of the app resource the call concerns; `null` when there is none.
    #[serde(default)]
    pub resource_uri: Option<String>,
}

/// Why an MCP tool call failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpToolCallError {
    /// Human-readable failure text.
    pub message: String,
}

/// What an MCP tool returned, in MCP `CallToolResult` form.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct McpToolCallResult {
    /// MCP content blocks (text, image, resource …), passed through unchanged.
    #[builder(default)]
    pub content: Vec<serde_json::Value>,
    /// The tool's structured JSON result; left out when the tool returned none.
    #[serde(default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub structured_content: Option<serde_json::Value>,
    /// The result's MCP `_meta` object; left out when the tool sent none.
    #[serde(rename = "_meta", default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub _meta: Option<serde_json::Value>,
}

/// Progress of an MCP tool call item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum McpToolCallStatus {
    /// Waiting for the MCP server's answer.
    InProgress,
    /// The server returned a result (see `result`).
    Completed,
    /// The call failed (see `error`).
    Failed,
}

/// What happened to a sub-agent, as reported by a sub-agent activity item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SubAgentActivityKind {
    /// The sub-agent was created.
    Started,
    /// The parent agent exchanged input or messages with it.
    Interacted,
    /// Its work was stopped.
    Interrupted,
    /// It finished its task.
    Completed,
}
