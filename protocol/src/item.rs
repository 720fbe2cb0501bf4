//! Turn items: the units of agent work a turn is made of (user and agent messages, reasoning,
//! commands, file changes, tool calls, web searches …) and the notifications that stream them.
//!
//! Each item is announced by `item/started` and finalised by `item/completed`; in between, text
//! arrives through the `item/agentMessage/delta`, `item/reasoning/textDelta`,
//! `item/reasoning/summaryTextDelta` and `item/commandExecution/outputDelta` notifications.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// How an agent message reaches the user when it is not part of the normal turn stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum AgentMessageDelivery {
    /// The message was sent asynchronously, apart from the streamed turn output.
    Async,
}

/// Params of `item/agentMessage/delta`: the next chunk of an agent message being written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AgentMessageDeltaNotification {
    /// Thread the message belongs to.
    pub thread_id: String,
    /// Turn the message belongs to.
    pub turn_id: String,
    /// Id of the `agentMessage` item this text extends.
    pub item_id: String,
    /// Text to append to the item's `text`, in order of arrival.
    pub delta: String,
}

/// What a client should do with an agent message that went through moderation; discriminated by
/// `mode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "mode", rename_all = "camelCase")]
#[non_exhaustive]
pub enum AgentMessageDisplay {
    /// Render the message as written, possibly with an annotation next to it.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Show {
        /// Format version of this instruction; always `1`.
        version: DisplayVersion,
        /// Whether the client should run its trusted-contacts check before showing it.
        trusted_contacts: TrustedContacts,
        /// Extra content to render alongside the message; `null` or absent when there is none.
        #[serde(default)]
        annotation: Option<AnswerAnnotation>,
    },
    /// Do not render the message text; render the given replacement instead.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Hide {
        /// Format version of this instruction; always `1`.
        version: DisplayVersion,
        /// What to render in place of the hidden text.
        replacement: AnswerReplacement,
    },
    /// Withhold the message entirely.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Block {
        /// Format version of this instruction; always `1`.
        version: DisplayVersion,
        /// Why the message was withheld.
        reason: BlockReason,
    },
}

#[bon::bon]
impl AgentMessageDisplay {
    /// Starts building [`AgentMessageDisplay::Show`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn show(
        version: DisplayVersion,
        trusted_contacts: TrustedContacts,
        annotation: Option<AnswerAnnotation>,
    ) -> Self {
        Self::Show {
            version,
            trusted_contacts,
            annotation,
        }
    }

    /// Starts building [`AgentMessageDisplay::Hide`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn hide(version: DisplayVersion, replacement: AnswerReplacement) -> Self {
        Self::Hide {
            version,
            replacement,
        }
    }

    /// Starts building [`AgentMessageDisplay::Block`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn block(version: DisplayVersion, reason: BlockReason) -> Self {
        Self::Block { version, reason }
    }
}

/// Moderation outcome attached to an agent message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AgentMessageModeration {
    /// `true` when moderation acted on the message.
    pub moderated: bool,
    /// How to present the message; `null` or absent when the client should render it normally.
    #[serde(default)]
    pub display: Option<AgentMessageDisplay>,
}

/// Supplementary content to render next to a shown agent message; discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum AnswerAnnotation {
    /// Point the user to a wellbeing support helpline.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    WellbeingHelpline {
        /// Whether the helpline is prompted by the answer or by the user's prompt.
        subject: HelplineSubject,
    },
}

#[bon::bon]
impl AnswerAnnotation {
    /// Starts building [`AnswerAnnotation::WellbeingHelpline`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn wellbeing_helpline(subject: HelplineSubject) -> Self {
        Self::WellbeingHelpline { subject }
    }
}

/// Content rendered instead of a hidden agent message; discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum AnswerReplacement {
    /// A notice pointing the user to a wellbeing support helpline.
    WellbeingPromptHelpline,
}

/// A question the agent puts to the user without blocking the turn; no other members allowed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AsyncUserInputQuestion {
    /// The question as shown to the user.
    pub title: String,
    /// Suggested answers to offer as choices; `null` or absent for a free-form answer.
    #[serde(default)]
    pub options: Option<Vec<String>>,
}

/// Why an agent message was blocked; discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum BlockReason {
    /// A safety protection fired.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Protection {
        /// Opaque tag naming the protection that fired, for correlating with moderation records.
        protection_type: String,
    },
    /// The content falls under the cyber-security policy.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Cyber {
        /// Whether the account has trusted access for such content; `null` when unknown.
        #[serde(default)]
        trusted_access: Option<bool>,
    },
}

#[bon::bon]
impl BlockReason {
    /// Starts building [`BlockReason::Protection`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn protection(protection_type: String) -> Self {
        Self::Protection { protection_type }
    }

    /// Starts building [`BlockReason::Cyber`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn cyber(trusted_access: Option<bool>) -> Self {
        Self::Cyber { trusted_access }
    }
}

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

/// One action a shell command was recognised to perform, inferred from the command line on a
/// best-effort basis so that clients can show e.g. "Read foo.rs"; discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandAction {
    /// Reads a file (`cat`, `sed -n`, `head` …).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Read {
        /// The part of the command line that performs this action.
        command: String,
        /// File name of the file read, for display.
        name: String,
        /// Path of the file read.
        path: LegacyAppPathString,
    },
    /// Lists directory contents (`ls`, `find` …).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ListFiles {
        /// The part of the command line that performs this action.
        command: String,
        /// Directory listed; `null` when it could not be determined.
        #[serde(default)]
        path: Option<String>,
    },
    /// Searches file contents or names (`rg`, `grep` …).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Search {
        /// The part of the command line that performs this action.
        command: String,
        /// The pattern searched for; `null` when it could not be determined.
        #[serde(default)]
        query: Option<String>,
        /// Where the search runs; `null` when it could not be determined.
        #[serde(default)]
        path: Option<String>,
    },
    /// Anything the parser did not recognise.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Unknown {
        /// The part of the command line that was not recognised.
        command: String,
    },
}

#[bon::bon]
impl CommandAction {
    /// Starts building [`CommandAction::Read`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn read(command: String, name: String, path: LegacyAppPathString) -> Self {
        Self::Read {
            command,
            name,
            path,
        }
    }

    /// Starts building [`CommandAction::ListFiles`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn list_files(command: String, path: Option<String>) -> Self {
        Self::ListFiles { command, path }
    }

    /// Starts building [`CommandAction::Search`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn search(command: String, query: Option<String>, path: Option<String>) -> Self {
        Self::Search {
            command,
            query,
            path,
        }
    }

    /// Starts building [`CommandAction::Unknown`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn unknown(command: String) -> Self {
        Self::Unknown { command }
    }
}

/// Params of `item/commandExecution/outputDelta`: a chunk of output of a command the agent runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecutionOutputDeltaNotification {
    /// Thread the command runs in.
    pub thread_id: String,
    /// Turn the command runs in.
    pub turn_id: String,
    /// Id of the `commandExecution` item that produced the output.
    pub item_id: String,
    /// Output text (stdout and stderr interleaved), to append in order of arrival.
    pub delta: String,
}

/// Who started a command execution item.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandExecutionSource {
    /// The agent ran it as a tool call; assumed when the member is absent.
    #[default]
    Agent,
    /// The user ran it directly in the thread's shell.
    UserShell,
    /// The command that opened a long-lived interactive exec session.
    UnifiedExecStartup,
    /// Input written to an exec session that is already running.
    UnifiedExecInteraction,
}

/// Progress of a command execution item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandExecutionStatus {
    /// The command is running.
    InProgress,
    /// The command exited with status 0.
    Completed,
    /// The command exited non-zero, or could not be run.
    Failed,
    /// The approval was refused, so the command never ran.
    Declined,
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

/// One file touched by a file change item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FileUpdateChange {
    /// Path of the file (for a move, its path before the move).
    pub path: String,
    /// Whether the file is created, deleted or edited.
    pub kind: PatchChangeKind,
    /// The change as text: a unified diff for edits, the whole content for added or deleted
    /// files.
    pub diff: String,
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// A piece of text a hook contributed to the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HookPromptFragment {
    /// Id of the hook run that produced the text.
    pub hook_run_id: String,
    /// The text the hook injected.
    pub text: String,
}

/// Why an image generation did not produce an image; discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ImageGenerationFailure {
    /// The account ran out of image-generation allowance.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    UsageLimitExceeded {
        /// Which usage limit was hit.
        limit_id: String,
        /// When the limit resets, in Unix seconds; `null` when unknown.
        #[serde(default)]
        resets_at: Option<i64>,
    },
}

#[bon::bon]
impl ImageGenerationFailure {
    /// Starts building [`ImageGenerationFailure::UsageLimitExceeded`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn usage_limit_exceeded(limit_id: String, resets_at: Option<i64>) -> Self {
        Self::UsageLimitExceeded {
            limit_id,
            resets_at,
        }
    }
}

/// A local image file that was fed into an image generation as a reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ImageGenerationInputImage {
    /// Absolute path of the file on the server's machine.
    pub path: AbsolutePathBuf,
    /// SHA-256 of the file's bytes as read, in lowercase hex.
    pub sha256: String,
}

/// Params of `item/completed`: an item finished, with its final state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ItemCompletedNotification {
    /// Thread the item belongs to.
    pub thread_id: String,
    /// Turn the item belongs to.
    pub turn_id: String,
    /// The item in its final form; replaces whatever was built from deltas.
    pub item: ThreadItem,
    /// When the item finished, in Unix milliseconds.
    pub completed_at_ms: i64,
    /// Token count of a completed agent message's content; `null` when not measured. Not stored
    /// with the item.
    #[serde(default)]
    pub content_token_count: Option<u64>,
}

/// Params of `item/started`: a new item began; deltas and `item/completed` follow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ItemStartedNotification {
    /// Thread the item belongs to.
    pub thread_id: String,
    /// Turn the item belongs to.
    pub turn_id: String,
    /// The item in its initial form (e.g. an agent message with empty `text`).
    pub item: ThreadItem,
    /// When the item began, in Unix milliseconds.
    pub started_at_ms: i64,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub structured_content: Option<serde_json::Value>,
    /// The result's MCP `_meta` object; left out when the tool sent none.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
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

/// Memories the agent drew on for a message, with where they came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct MemoryCitation {
    /// The memory file passages cited.
    #[builder(default)]
    pub entries: Vec<MemoryCitationEntry>,
    /// Ids of the earlier threads those memories were learned in.
    #[builder(default)]
    pub thread_ids: Vec<String>,
}

/// One cited passage of a memory file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MemoryCitationEntry {
    /// Path of the memory file.
    pub path: String,
    /// First line of the passage (1-based).
    pub line_start: u32,
    /// Last line of the passage (1-based, inclusive).
    pub line_end: u32,
    /// Short note on what the passage contributed.
    pub note: String,
}

/// Role of an agent message within its turn; snake_case on the wire. Models do not always
/// report it, so a missing phase means "unknown", not "final".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MessagePhase {
    /// Running narration while the agent works; more tool calls may follow.
    Commentary,
    /// Part of the answer that will not change, though more may be appended.
    PartialAnswer,
    /// The turn's final answer.
    FinalAnswer,
}

/// Progress of a file change item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum PatchApplyStatus {
    /// The patch is being applied (or waits for approval).
    InProgress,
    /// The patch was applied.
    Completed,
    /// Applying the patch failed.
    Failed,
    /// The approval was refused, so nothing was written.
    Declined,
}

/// What a file change does to one file; discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum PatchChangeKind {
    /// The file is created.
    Add,
    /// The file is removed.
    Delete,
    /// The file is edited, and possibly renamed.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Update {
        /// New path when the file is also moved (snake_case `move_path` on the wire); `null`
        /// when it stays in place.
        #[serde(rename = "move_path", default)]
        move_path: Option<String>,
    },
}

#[bon::bon]
impl PatchChangeKind {
    /// Starts building [`PatchChangeKind::Update`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn update(move_path: Option<String>) -> Self {
        Self::Update { move_path }
    }
}

/// Params of `item/reasoning/summaryTextDelta`: more text of one reasoning summary section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ReasoningSummaryTextDeltaNotification {
    /// Thread the reasoning belongs to.
    pub thread_id: String,
    /// Turn the reasoning belongs to.
    pub turn_id: String,
    /// Id of the `reasoning` item being extended.
    pub item_id: String,
    /// Index into the item's `summary` array of the section this text extends (0-based).
    pub summary_index: i64,
    /// Text to append to that section.
    pub delta: String,
}

/// Params of `item/reasoning/summaryPartAdded`: a new section of a reasoning summary begins;
/// its text follows as `item/reasoning/summaryTextDelta`s with the same `summaryIndex`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ReasoningSummaryPartAddedNotification {
    /// Thread the reasoning belongs to.
    pub thread_id: String,
    /// Turn the reasoning belongs to.
    pub turn_id: String,
    /// Id of the `reasoning` item the section belongs to.
    pub item_id: String,
    /// Index into the item's `summary` array of the new section (0-based).
    pub summary_index: i64,
}

/// Params of `item/reasoning/textDelta`: more raw reasoning text from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ReasoningTextDeltaNotification {
    /// Thread the reasoning belongs to.
    pub thread_id: String,
    /// Turn the reasoning belongs to.
    pub turn_id: String,
    /// Id of the `reasoning` item being extended.
    pub item_id: String,
    /// Index into the item's `content` array of the part this text extends (0-based).
    pub content_index: i64,
    /// Text to append to that part.
    pub delta: String,
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

/// One item of a turn, with the times it started and completed.
///
/// On the wire the payload is flat: `{"type": "agentMessage", "id": …, "text": …,
/// "startedAtMs": …, "completedAtMs": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadItem {
    /// What the item is and holds.
    #[serde(flatten)]
    pub kind: ThreadItemKind,
    /// Unix time in milliseconds when the item started, if recorded.
    #[serde(default)]
    pub started_at_ms: Option<i64>,
    /// Unix time in milliseconds when the item completed, if recorded.
    #[serde(default)]
    pub completed_at_ms: Option<i64>,
}

/// The kind-specific payload of a [`ThreadItem`], discriminated by `type`. Every kind carries an
/// `id`, unique within the thread, that deltas and approvals refer to as `itemId`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[allow(
    clippy::large_enum_variant,
    reason = "a plain wire type: items are built once per notification, and boxing variants would change the public API"
)]
#[non_exhaustive]
pub enum ThreadItemKind {
    /// Input the user sent (by `turn/start` or `turn/steer`).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    UserMessage {
        /// Item id.
        id: String,
        /// The input parts, in the order sent.
        content: Vec<UserInput>,
        /// The `clientUserMessageId` the client attached to the input; `null` when it gave none.
        #[serde(default)]
        client_id: Option<String>,
    },
    /// Text that hooks injected into the conversation on the user's side.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    HookPrompt {
        /// Item id.
        id: String,
        /// The injected text, one fragment per hook run.
        fragments: Vec<HookPromptFragment>,
    },
    /// A message from the agent to the user; its text streams via `item/agentMessage/delta`.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    AgentMessage {
        /// Item id (the `itemId` of its deltas).
        id: String,
        /// The full message text (Markdown) so far; final in `item/completed`.
        text: String,
        /// Whether the text is commentary or answer; `null` when the model did not say.
        #[serde(default)]
        phase: Option<MessagePhase>,
        /// Moderation outcome; `null` when the message was not moderated.
        #[serde(default)]
        moderation: Option<AgentMessageModeration>,
        /// Memories the message relies on; `null` when it cites none.
        #[serde(default)]
        memory_citation: Option<MemoryCitation>,
        /// Set when the message was delivered outside the streamed turn; `null` otherwise.
        #[serde(default)]
        delivery: Option<AgentMessageDelivery>,
        /// Questions the message asks the user to answer later; `null` when there are none.
        #[serde(default)]
        questions: Option<Vec<AsyncUserInputQuestion>>,
    },
    /// A tool result handed to the model (e.g. supplied through `turn/start`'s `toolOutput`).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    FunctionCallOutput {
        /// Item id.
        id: String,
        /// Name of the tool the output belongs to.
        name: String,
        /// Namespace of that tool; `null` for tools outside any namespace.
        #[serde(default)]
        namespace: Option<String>,
        /// The output itself.
        output: FunctionCallOutputBody,
    },
    /// A plan the agent proposes (plan mode; experimental); the completed item is authoritative.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Plan {
        /// Item id.
        id: String,
        /// The plan as Markdown.
        text: String,
    },
    /// The model's reasoning; streams via the two `item/reasoning/*` deltas.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Reasoning {
        /// Item id (the `itemId` of its deltas).
        id: String,
        /// Readable summary, one string per section (`summaryIndex` of the deltas); empty when
        /// the model produced none.
        #[serde(default)]
        summary: Vec<String>,
        /// Raw reasoning text, one string per part (`contentIndex` of the deltas); usually empty,
        /// since most models do not expose it.
        #[serde(default)]
        content: Vec<String>,
    },
    /// A shell command run by the agent or the user; output streams via
    /// `item/commandExecution/outputDelta`.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    CommandExecution {
        /// Item id (the `itemId` of its output deltas and approval request).
        id: String,
        /// The command line as one string.
        command: String,
        /// Working directory the command runs in.
        cwd: LegacyAppPathString,
        /// Where the command stands.
        status: CommandExecutionStatus,
        /// Who started the command; `agent` when absent.
        #[serde(default)]
        source: CommandExecutionSource,
        /// What the command was recognised to do, one entry per sub-command of a pipeline or
        /// chain; best effort.
        command_actions: Vec<CommandAction>,
        /// Combined stdout and stderr; `null` until there is output to report.
        #[serde(default)]
        aggregated_output: Option<String>,
        /// Exit status; `null` while running or when the command never ran.
        #[serde(default)]
        exit_code: Option<i32>,
        /// Wall-clock run time in milliseconds; `null` until it finishes.
        #[serde(default)]
        duration_ms: Option<i64>,
        /// Id of the interactive process (PTY) running it; `null` when there is none.
        #[serde(default)]
        process_id: Option<String>,
        /// The first-party plugin whose script the command runs; `null` for other commands.
        #[serde(default)]
        plugin_id: Option<String>,
        /// Path of that plugin script, relative to the plugin; `null` for other commands.
        #[serde(default)]
        script_path: Option<String>,
    },
    /// Edits to files the agent makes as one patch.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    FileChange {
        /// Item id (the `itemId` of its approval request).
        id: String,
        /// Where applying the patch stands.
        status: PatchApplyStatus,
        /// The files touched, one entry per file.
        changes: Vec<FileUpdateChange>,
    },
    /// A call to a tool of an MCP server.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    McpToolCall {
        /// Item id.
        id: String,
        /// Name of the MCP server, as configured.
        server: String,
        /// Name of the tool on that server.
        tool: String,
        /// Arguments the model passed, as JSON.
        arguments: serde_json::Value,
        /// Where the call stands.
        status: McpToolCallStatus,
        /// What the tool returned; `null` until it completes, and on failure.
        #[serde(default)]
        result: Option<McpToolCallResult>,
        /// Why the call failed; `null` unless it failed.
        #[serde(default)]
        error: Option<McpToolCallError>,
        /// Wall-clock time of the call in milliseconds; `null` until it finishes.
        #[serde(default)]
        duration_ms: Option<i64>,
        /// The app the tool belongs to; `null` for plain MCP tools.
        #[serde(default)]
        app_context: Option<McpToolCallAppContext>,
        /// Environment the server is registered for (not necessarily where it runs); `null` when
        /// not scoped.
        #[serde(default)]
        environment_id: Option<String>,
        /// The plugin that provides the server; `null` when none does.
        #[serde(default)]
        plugin_id: Option<String>,
        /// The tool's own read-only hint, as declared by the server; `null` when it gave none.
        #[serde(default)]
        read_only_hint: Option<bool>,
        /// How to render the tool's MCP app UI, taken from the tool descriptor; `null` when it has
        /// none or in older history.
        #[serde(default)]
        mcp_app_ui: Option<McpAppUi>,
        /// Older form of `mcpAppUi.resourceUri`, kept for compatibility; read `mcpAppUi` first.
        #[serde(default)]
        mcp_app_resource_uri: Option<String>,
    },
    /// A call to a tool the client implements (a dynamic tool registered with the thread).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    DynamicToolCall {
        /// Item id.
        id: String,
        /// Name of the tool.
        tool: String,
        /// Namespace of the tool; `null` for tools outside any namespace.
        #[serde(default)]
        namespace: Option<String>,
        /// Arguments the model passed, as JSON.
        arguments: serde_json::Value,
        /// Where the call stands.
        status: DynamicToolCallStatus,
        /// Whether the client reported success; `null` until it answers.
        #[serde(default)]
        success: Option<bool>,
        /// What the client returned to the model; `null` until it answers.
        #[serde(default)]
        content_items: Option<Vec<DynamicToolCallOutputContentItem>>,
        /// Wall-clock time of the call in milliseconds; `null` until it finishes.
        #[serde(default)]
        duration_ms: Option<i64>,
    },
    /// A multi-agent collaboration tool call (spawning, messaging or waiting for sub-agents).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    CollabAgentToolCall {
        /// Item id.
        id: String,
        /// Which collaboration tool was called.
        tool: CollabAgentTool,
        /// Where the call stands.
        status: CollabAgentToolCallStatus,
        /// Thread id of the agent making the call.
        sender_thread_id: String,
        /// Thread ids of the agents addressed (for a spawn, the new agent's thread).
        receiver_thread_ids: Vec<String>,
        /// Last known state of each addressed agent, keyed by its thread id; empty when unknown.
        agents_states: BTreeMap<String, CollabAgentState>,
        /// Text sent to the addressed agents; `null` when the call carries none.
        #[serde(default)]
        prompt: Option<String>,
        /// Model asked for a spawned agent; `null` for other calls or the default.
        #[serde(default)]
        model: Option<String>,
        /// Reasoning effort asked for a spawned agent; `null` for other calls or the default.
        #[serde(default)]
        reasoning_effort: Option<ReasoningEffort>,
    },
    /// Something happened to a sub-agent working for this thread.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    SubAgentActivity {
        /// Item id.
        id: String,
        /// What happened.
        kind: SubAgentActivityKind,
        /// Id of the sub-agent's own thread.
        agent_thread_id: String,
        /// Path naming the sub-agent in the tree of agents under this thread.
        agent_path: String,
        /// Model the sub-agent was created with; `null` for other kinds and in older history.
        #[serde(default)]
        model: Option<String>,
        /// Reasoning effort the sub-agent was created with; `null` when unknown.
        #[serde(default)]
        reasoning_effort: Option<ReasoningEffort>,
    },
    /// A web search the agent ran.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    WebSearch {
        /// Item id.
        id: String,
        /// The search query (empty until known).
        query: String,
        /// What the search did, in detail; `null` when not reported.
        #[serde(default)]
        action: Option<WebSearchAction>,
        /// Result records as opaque JSON, when the search backend returns them separately;
        /// `null` otherwise.
        #[serde(default)]
        results: Option<Vec<serde_json::Value>>,
    },
    /// The agent looked at a local image file.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ImageView {
        /// Item id.
        id: String,
        /// Path of the image file.
        path: LegacyAppPathString,
    },
    /// The agent paused on purpose (its sleep tool); the pause can be interrupted.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Sleep {
        /// Item id.
        id: String,
        /// Requested length of the pause in milliseconds.
        duration_ms: u64,
    },
    /// An image the agent generated; the image itself is `fileId` or `result`, flattened into
    /// the item.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ImageGeneration {
        /// Item id.
        id: String,
        /// Generation state as reported by the image backend (e.g. `"completed"`).
        status: String,
        /// The image: its attachment id or its inline base64 data.
        #[serde(flatten)]
        image: GeneratedImage,
        /// The prompt as rewritten by the image model; `null` when not reported.
        #[serde(default)]
        revised_prompt: Option<String>,
        /// Absolute path where the server saved the image; `null` when it was not saved.
        #[serde(default)]
        saved_path: Option<AbsolutePathBuf>,
        /// The image backend's id for this generation; `null` when it gave none.
        #[serde(default)]
        generation_id: Option<String>,
        /// Whether the image was asked for with a transparent background; `null` when unknown.
        #[serde(default)]
        transparent_background: Option<bool>,
        /// Local images used as references; left out on items from older versions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Vec<ImageGenerationInputImage>")]
        #[ts(optional)]
        input_images: Option<Vec<ImageGenerationInputImage>>,
        /// Why no image was produced; `null` unless it failed.
        #[serde(default)]
        failure: Option<ImageGenerationFailure>,
    },
    /// A code review began; the items that follow belong to the review.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    EnteredReviewMode {
        /// Item id.
        id: String,
        /// Short description of what is being reviewed, for display.
        review: String,
    },
    /// A code review ended.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ExitedReviewMode {
        /// Item id.
        id: String,
        /// The review's findings as text, for display.
        review: String,
    },
    /// The thread's history was compacted (summarised) to free context window.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ContextCompaction {
        /// Item id.
        id: String,
    },
}

#[bon::bon]
impl ThreadItemKind {
    /// Starts building [`ThreadItemKind::UserMessage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn user_message(
        id: String,
        #[builder(default)] content: Vec<UserInput>,
        client_id: Option<String>,
    ) -> Self {
        Self::UserMessage {
            id,
            content,
            client_id,
        }
    }

    /// Starts building [`ThreadItemKind::HookPrompt`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn hook_prompt(id: String, #[builder(default)] fragments: Vec<HookPromptFragment>) -> Self {
        Self::HookPrompt { id, fragments }
    }

    /// Starts building [`ThreadItemKind::AgentMessage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn agent_message(
        id: String,
        text: String,
        phase: Option<MessagePhase>,
        moderation: Option<AgentMessageModeration>,
        memory_citation: Option<MemoryCitation>,
        delivery: Option<AgentMessageDelivery>,
        questions: Option<Vec<AsyncUserInputQuestion>>,
    ) -> Self {
        Self::AgentMessage {
            id,
            text,
            phase,
            moderation,
            memory_citation,
            delivery,
            questions,
        }
    }

    /// Starts building [`ThreadItemKind::FunctionCallOutput`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn function_call_output(
        id: String,
        name: String,
        namespace: Option<String>,
        output: FunctionCallOutputBody,
    ) -> Self {
        Self::FunctionCallOutput {
            id,
            name,
            namespace,
            output,
        }
    }

    /// Starts building [`ThreadItemKind::Plan`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn plan(id: String, text: String) -> Self {
        Self::Plan { id, text }
    }

    /// Starts building [`ThreadItemKind::Reasoning`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn reasoning(
        id: String,
        #[builder(default)] summary: Vec<String>,
        #[builder(default)] content: Vec<String>,
    ) -> Self {
        Self::Reasoning {
            id,
            summary,
            content,
        }
    }

    /// Starts building [`ThreadItemKind::CommandExecution`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn command_execution(
        id: String,
        command: String,
        cwd: LegacyAppPathString,
        status: CommandExecutionStatus,
        #[builder(default)] source: CommandExecutionSource,
        #[builder(default)] command_actions: Vec<CommandAction>,
        aggregated_output: Option<String>,
        exit_code: Option<i32>,
        duration_ms: Option<i64>,
        process_id: Option<String>,
        plugin_id: Option<String>,
        script_path: Option<String>,
    ) -> Self {
        Self::CommandExecution {
            id,
            command,
            cwd,
            status,
            source,
            command_actions,
            aggregated_output,
            exit_code,
            duration_ms,
            process_id,
            plugin_id,
            script_path,
        }
    }

    /// Starts building [`ThreadItemKind::FileChange`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn file_change(
        id: String,
        status: PatchApplyStatus,
        #[builder(default)] changes: Vec<FileUpdateChange>,
    ) -> Self {
        Self::FileChange {
            id,
            status,
            changes,
        }
    }

    /// Starts building [`ThreadItemKind::McpToolCall`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn mcp_tool_call(
        id: String,
        server: String,
        tool: String,
        arguments: serde_json::Value,
        status: McpToolCallStatus,
        result: Option<McpToolCallResult>,
        error: Option<McpToolCallError>,
        duration_ms: Option<i64>,
        app_context: Option<McpToolCallAppContext>,
        environment_id: Option<String>,
        plugin_id: Option<String>,
        read_only_hint: Option<bool>,
        mcp_app_ui: Option<McpAppUi>,
        mcp_app_resource_uri: Option<String>,
    ) -> Self {
        Self::McpToolCall {
            id,
            server,
            tool,
            arguments,
            status,
            result,
            error,
            duration_ms,
            app_context,
            environment_id,
            plugin_id,
            read_only_hint,
            mcp_app_ui,
            mcp_app_resource_uri,
        }
    }

    /// Starts building [`ThreadItemKind::DynamicToolCall`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn dynamic_tool_call(
        id: String,
        tool: String,
        namespace: Option<String>,
        arguments: serde_json::Value,
        status: DynamicToolCallStatus,
        success: Option<bool>,
        content_items: Option<Vec<DynamicToolCallOutputContentItem>>,
        duration_ms: Option<i64>,
    ) -> Self {
        Self::DynamicToolCall {
            id,
            tool,
            namespace,
            arguments,
            status,
            success,
            content_items,
            duration_ms,
        }
    }

    /// Starts building [`ThreadItemKind::CollabAgentToolCall`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn collab_agent_tool_call(
        id: String,
        tool: CollabAgentTool,
        status: CollabAgentToolCallStatus,
        sender_thread_id: String,
        #[builder(default)] receiver_thread_ids: Vec<String>,
        #[builder(default)] agents_states: BTreeMap<String, CollabAgentState>,
        prompt: Option<String>,
        model: Option<String>,
        reasoning_effort: Option<ReasoningEffort>,
    ) -> Self {
        Self::CollabAgentToolCall {
            id,
            tool,
            status,
            sender_thread_id,
            receiver_thread_ids,
            agents_states,
            prompt,
            model,
            reasoning_effort,
        }
    }

    /// Starts building [`ThreadItemKind::SubAgentActivity`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn sub_agent_activity(
        id: String,
        kind: SubAgentActivityKind,
        agent_thread_id: String,
        agent_path: String,
        model: Option<String>,
        reasoning_effort: Option<ReasoningEffort>,
    ) -> Self {
        Self::SubAgentActivity {
            id,
            kind,
            agent_thread_id,
            agent_path,
            model,
            reasoning_effort,
        }
    }

    /// Starts building [`ThreadItemKind::WebSearch`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn web_search(
        id: String,
        query: String,
        action: Option<WebSearchAction>,
        results: Option<Vec<serde_json::Value>>,
    ) -> Self {
        Self::WebSearch {
            id,
            query,
            action,
            results,
        }
    }

    /// Starts building [`ThreadItemKind::ImageView`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn image_view(id: String, path: LegacyAppPathString) -> Self {
        Self::ImageView { id, path }
    }

    /// Starts building [`ThreadItemKind::Sleep`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn sleep(id: String, duration_ms: u64) -> Self {
        Self::Sleep { id, duration_ms }
    }

    /// Starts building [`ThreadItemKind::ImageGeneration`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn image_generation(
        id: String,
        status: String,
        image: GeneratedImage,
        revised_prompt: Option<String>,
        saved_path: Option<AbsolutePathBuf>,
        generation_id: Option<String>,
        transparent_background: Option<bool>,
        input_images: Option<Vec<ImageGenerationInputImage>>,
        failure: Option<ImageGenerationFailure>,
    ) -> Self {
        Self::ImageGeneration {
            id,
            status,
            image,
            revised_prompt,
            saved_path,
            generation_id,
            transparent_background,
            input_images,
            failure,
        }
    }

    /// Starts building [`ThreadItemKind::EnteredReviewMode`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn entered_review_mode(id: String, review: String) -> Self {
        Self::EnteredReviewMode { id, review }
    }

    /// Starts building [`ThreadItemKind::ExitedReviewMode`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn exited_review_mode(id: String, review: String) -> Self {
        Self::ExitedReviewMode { id, review }
    }

    /// Starts building [`ThreadItemKind::ContextCompaction`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn context_compaction(id: String) -> Self {
        Self::ContextCompaction { id }
    }
}

/// Detail of what a web search item did; discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum WebSearchAction {
    /// Ran one or more search queries.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Search {
        /// The main query; `null` when not reported.
        #[serde(default)]
        query: Option<String>,
        /// All queries run, when there were several; `null` when not reported.
        #[serde(default)]
        queries: Option<Vec<String>>,
    },
    /// Opened a web page.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    OpenPage {
        /// The page's URL; `null` when not reported.
        #[serde(default)]
        url: Option<String>,
    },
    /// Looked for a pattern inside a page.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    FindInPage {
        /// The page's URL; `null` when not reported.
        #[serde(default)]
        url: Option<String>,
        /// The text searched for; `null` when not reported.
        #[serde(default)]
        pattern: Option<String>,
    },
    /// Any other browsing action.
    Other,
}

#[bon::bon]
impl WebSearchAction {
    /// Starts building [`WebSearchAction::Search`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn search(query: Option<String>, queries: Option<Vec<String>>) -> Self {
        Self::Search { query, queries }
    }

    /// Starts building [`WebSearchAction::OpenPage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn open_page(url: Option<String>) -> Self {
        Self::OpenPage { url }
    }

    /// Starts building [`WebSearchAction::FindInPage`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn find_in_page(url: Option<String>, pattern: Option<String>) -> Self {
        Self::FindInPage { url, pattern }
    }
}

/// Where an image in a tool's output comes from (Responses API member names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum OutputImageSource {
    /// Fetched from a URL (`data:` URLs included).
    #[non_exhaustive]
    ImageUrl {
        /// The URL.
        image_url: String,
    },
    /// A file uploaded to the provider.
    #[non_exhaustive]
    FileId {
        /// The provider's file id.
        file_id: String,
    },
}

#[bon::bon]
impl OutputImageSource {
    /// Starts building [`OutputImageSource::ImageUrl`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn image_url(image_url: String) -> Self {
        Self::ImageUrl { image_url }
    }

    /// Starts building [`OutputImageSource::FileId`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn file_id(file_id: String) -> Self {
        Self::FileId { file_id }
    }
}

/// Where audio in a tool's output comes from (Responses API member names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum OutputAudioSource {
    /// Fetched from a URL (`data:` URLs included).
    #[non_exhaustive]
    AudioUrl {
        /// The URL.
        audio_url: String,
    },
    /// A file uploaded to the provider.
    #[non_exhaustive]
    FileId {
        /// The provider's file id.
        file_id: String,
    },
}

#[bon::bon]
impl OutputAudioSource {
    /// Starts building [`OutputAudioSource::AudioUrl`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn audio_url(audio_url: String) -> Self {
        Self::AudioUrl { audio_url }
    }

    /// Starts building [`OutputAudioSource::FileId`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn file_id(file_id: String) -> Self {
        Self::FileId { file_id }
    }
}

/// A generated image: its durable attachment id, or its inline data.
///
/// The attachment form comes first so that items carrying both keep the attachment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum GeneratedImage {
    /// Stored as an attachment.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    File {
        /// The attachment-store id.
        file_id: String,
    },
    /// Inline image data.
    #[non_exhaustive]
    Inline {
        /// Base64 image data.
        result: String,
    },
}

#[bon::bon]
impl GeneratedImage {
    /// Starts building [`GeneratedImage::File`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn file(file_id: String) -> Self {
        Self::File { file_id }
    }

    /// Starts building [`GeneratedImage::Inline`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn inline(result: String) -> Self {
        Self::Inline { result }
    }
}

/// The version of a moderation display instruction; only version 1 exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(try_from = "u8", into = "u8")]
#[ts(type = "1")]
pub struct DisplayVersion;

impl TryFrom<u8> for DisplayVersion {
    type Error = String;
    fn try_from(value: u8) -> Result<Self, Self::Error> {
        if value == 1 {
            Ok(DisplayVersion)
        } else {
            Err(format!("unsupported display version {value}; expected 1"))
        }
    }
}

impl From<DisplayVersion> for u8 {
    fn from(_: DisplayVersion) -> u8 {
        1
    }
}

#[cfg(feature = "schema")]
impl JsonSchema for DisplayVersion {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DisplayVersion".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "integer", "format": "uint8", "minimum": 0, "enum": [1] })
    }
}

impl ThreadItemKind {
    /// The `id` every kind of item carries (the item's `id` on the wire).
    pub fn id(&self) -> &str {
        use ThreadItemKind as K;
        match self {
            K::UserMessage { id, .. }
            | K::HookPrompt { id, .. }
            | K::AgentMessage { id, .. }
            | K::FunctionCallOutput { id, .. }
            | K::Plan { id, .. }
            | K::Reasoning { id, .. }
            | K::CommandExecution { id, .. }
            | K::FileChange { id, .. }
            | K::McpToolCall { id, .. }
            | K::DynamicToolCall { id, .. }
            | K::CollabAgentToolCall { id, .. }
            | K::SubAgentActivity { id, .. }
            | K::WebSearch { id, .. }
            | K::ImageView { id, .. }
            | K::Sleep { id, .. }
            | K::ImageGeneration { id, .. }
            | K::EnteredReviewMode { id, .. }
            | K::ExitedReviewMode { id, .. }
            | K::ContextCompaction { id, .. } => id,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Deserializes `value` into `T`, serializes it back and asserts nothing changed.
    fn round_trip<T: Serialize + serde::de::DeserializeOwned>(value: &Value) -> T {
        let parsed: T = serde_json::from_value(value.clone()).expect("deserialize");
        let back = serde_json::to_value(&parsed).expect("serialize");
        assert_eq!(&back, value);
        parsed
    }

    #[test]
    fn item_started_user_message_round_trips() {
        let value = json!({
            "item": {
                "type": "userMessage",
                "id": "01a22805-92f5-7093-85ba-02bf52816b69",
                "clientId": null,
                "content": [{"type": "text", "text": "Say hello.", "text_elements": []}],
                "startedAtMs": 1795967783670_i64,
                "completedAtMs": null
            },
            "threadId": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "turnId": "01a22805-92bf-7720-83d6-e7310d217d47",
            "startedAtMs": 1795967783670_i64
        });
        let n: ItemStartedNotification = round_trip(&value);
        assert_eq!(n.item.started_at_ms, Some(1795967783670));
        assert_eq!(n.item.completed_at_ms, None);
        let ThreadItemKind::UserMessage {
            id,
            content,
            client_id,
        } = n.item.kind
        else {
            panic!("expected a userMessage item");
        };
        assert_eq!(id, "01a22805-92f5-7093-85ba-02bf52816b69");
        assert_eq!(client_id, None);
        assert_eq!(
            content,
            vec![UserInput::Text {
                text: "Say hello.".into(),
                text_elements: vec![]
            }]
        );
    }

    #[test]
    fn item_completed_agent_message_round_trips() {
        let value = json!({
            "item": {
                "type": "agentMessage",
                "moderation": null,
                "id": "msg_1",
                "text": "Hello from mock (1).",
                "phase": null,
                "memoryCitation": null,
                "delivery": null,
                "questions": null,
                "startedAtMs": 1795967783706_i64,
                "completedAtMs": 1795967783707_i64
            },
            "threadId": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "turnId": "01a22805-92bf-7720-83d6-e7310d217d47",
            "contentTokenCount": null,
            "completedAtMs": 1795967783707_i64
        });
        let n: ItemCompletedNotification = round_trip(&value);
        assert_eq!(n.completed_at_ms, 1795967783707);
        assert!(matches!(
            n.item.kind,
            ThreadItemKind::AgentMessage { ref text, phase: None, .. } if text == "Hello from mock (1)."
        ));
    }

    #[test]
    fn agent_message_delta_round_trips() {
        let value = json!({
            "threadId": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "turnId": "01a22805-92bf-7720-83d6-e7310d217d47",
            "itemId": "msg_1",
            "delta": "Hello "
        });
        let n: AgentMessageDeltaNotification = round_trip(&value);
        assert_eq!(n.delta, "Hello ");
    }

    #[test]
    fn command_execution_item_round_trips() {
        let value = json!({
            "type": "commandExecution",
            "id": "call_7",
            "command": "bash -lc 'cat src/lib.rs | rg fn'",
            "cwd": "/home/user/work",
            "status": "completed",
            "source": "agent",
            "commandActions": [
                {"type": "read", "command": "cat src/lib.rs", "name": "lib.rs", "path": "src/lib.rs"},
                {"type": "search", "command": "rg fn", "query": "fn", "path": null}
            ],
            "aggregatedOutput": "pub fn main() {}\n",
            "exitCode": 0,
            "durationMs": 12,
            "processId": null,
            "pluginId": null,
            "scriptPath": null,
            "startedAtMs": 1795967783800_i64,
            "completedAtMs": 1795967783812_i64
        });
        let item: ThreadItem = round_trip(&value);
        assert!(matches!(
            item.kind,
            ThreadItemKind::CommandExecution {
                status: CommandExecutionStatus::Completed,
                exit_code: Some(0),
                ..
            }
        ));

        // `source` may be left out; it then means the agent ran the command.
        let mut without_source = value.clone();
        without_source
            .as_object_mut()
            .expect("object")
            .remove("source");
        let item: ThreadItem = serde_json::from_value(without_source).expect("deserialize");
        assert!(matches!(
            item.kind,
            ThreadItemKind::CommandExecution {
                source: CommandExecutionSource::Agent,
                ..
            }
        ));
    }

    #[test]
    fn file_change_item_round_trips() {
        let value = json!({
            "type": "fileChange",
            "id": "call_9",
            "status": "inProgress",
            "changes": [
                {"path": "a.txt", "kind": {"type": "add"}, "diff": "hello\n"},
                {
                    "path": "b.txt",
                    "kind": {"type": "update", "move_path": "c.txt"},
                    "diff": "@@ -1 +1 @@\n-old\n+new\n"
                }
            ],
            "startedAtMs": 1795967783900_i64,
            "completedAtMs": null
        });
        round_trip::<ThreadItem>(&value);
    }

    #[test]
    fn tool_output_image_leaves_out_unset_detail() {
        let value = json!({"type": "input_image", "image_url": "data:image/png;base64,AAAA"});
        let part: FunctionCallOutputContentItem = round_trip(&value);
        assert!(matches!(
            part,
            FunctionCallOutputContentItem::InputImage { detail: None, .. }
        ));
        assert!(
            serde_json::to_value(&part)
                .expect("serialize")
                .get("detail")
                .is_none()
        );

        let body: FunctionCallOutputBody = round_trip(&json!([
            {"type": "input_text", "text": "done"},
            {"type": "input_image", "file_id": "file_1", "detail": "high"}
        ]));
        assert!(matches!(body, FunctionCallOutputBody::List(ref parts) if parts.len() == 2));
        round_trip::<FunctionCallOutputBody>(&json!("plain text output"));
    }

    #[test]
    fn image_generation_leaves_out_unset_input_images() {
        let value = json!({
            "type": "imageGeneration",
            "id": "ig_1",
            "status": "completed",
            "fileId": "file_42",
            "revisedPrompt": "a red fox",
            "savedPath": null,
            "generationId": null,
            "transparentBackground": null,
            "failure": null,
            "startedAtMs": null,
            "completedAtMs": null
        });
        let item: ThreadItem = round_trip(&value);
        assert!(matches!(
            item.kind,
            ThreadItemKind::ImageGeneration {
                image: GeneratedImage::File { .. },
                input_images: None,
                ..
            }
        ));
        assert!(
            serde_json::to_value(&item)
                .expect("serialize")
                .get("inputImages")
                .is_none()
        );
    }
}
