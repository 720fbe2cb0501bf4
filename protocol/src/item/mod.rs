//! Turn items: the units of agent work a turn is made of (user and agent messages, reasoning,
//! commands, file changes, tool calls, web searches …) and the notifications that stream them.
//!
//! Each item is announced by `item/started` and finalised by `item/completed`; in between, text
//! arrives through the `item/agentMessage/delta`, `item/reasoning/textDelta`,
//! `item/reasoning/summaryTextDelta` and `item/commandExecution/outputDelta` notifications.
//!
//! The item kinds and their notifications are here; what each kind holds is split by family:
//! `agent_message.rs`, `command.rs`, `file_change.rs`, `tool_call.rs`, `reasoning.rs`, `media.rs`.

mod agent_message;
mod command;
mod file_change;
mod media;
mod reasoning;
mod tool_call;

pub use self::agent_message::*;
pub use self::command::*;
pub use self::file_change::*;
pub use self::media::*;
pub use self::reasoning::*;
pub use self::tool_call::*;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

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
mod tests;
