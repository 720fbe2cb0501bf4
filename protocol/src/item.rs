use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum AgentMessageDelivery {
    Async,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentMessageDeltaNotification {
    pub delta: String,
    pub item_id: String,
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum AgentMessageDisplay {
    #[serde(rename_all = "camelCase")]
    Show {
        #[serde(default)]
        annotation: Option<AnswerAnnotation>,
        trusted_contacts: TrustedContacts,
        version: DisplayVersion,
    },
    #[serde(rename_all = "camelCase")]
    Hide {
        replacement: AnswerReplacement,
        version: DisplayVersion,
    },
    #[serde(rename_all = "camelCase")]
    Block {
        reason: BlockReason,
        version: DisplayVersion,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentMessageModeration {
    #[serde(default)]
    pub display: Option<AgentMessageDisplay>,
    pub moderated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AnswerAnnotation {
    #[serde(rename_all = "camelCase")]
    WellbeingHelpline {
        subject: HelplineSubject,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AnswerReplacement {
    WellbeingPromptHelpline,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AsyncUserInputQuestion {
    #[serde(default)]
    pub options: Option<Vec<String>>,
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum BlockReason {
    #[serde(rename_all = "camelCase")]
    Protection {
        protection_type: String,
    },
    #[serde(rename_all = "camelCase")]
    Cyber {
        #[serde(default)]
        trusted_access: Option<bool>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CollabAgentState {
    #[serde(default)]
    pub message: Option<String>,
    pub status: CollabAgentStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum CollabAgentStatus {
    PendingInit,
    Running,
    Interrupted,
    Completed,
    Errored,
    Shutdown,
    NotFound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum CollabAgentTool {
    SpawnAgent,
    SendInput,
    ResumeAgent,
    Wait,
    CloseAgent,
    SendMessage,
    FollowupTask,
    InterruptAgent,
    ListAgents,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum CollabAgentToolCallStatus {
    InProgress,
    Completed,
    Failed,
    Interrupted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum CommandAction {
    #[serde(rename_all = "camelCase")]
    Read {
        command: String,
        name: String,
        path: LegacyAppPathString,
    },
    #[serde(rename_all = "camelCase")]
    ListFiles {
        command: String,
        #[serde(default)]
        path: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Search {
        command: String,
        #[serde(default)]
        path: Option<String>,
        #[serde(default)]
        query: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Unknown {
        command: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionOutputDeltaNotification {
    pub delta: String,
    pub item_id: String,
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionSource {
    #[default]
    Agent,
    UserShell,
    UnifiedExecStartup,
    UnifiedExecInteraction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionStatus {
    InProgress,
    Completed,
    Failed,
    Declined,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum DynamicToolCallOutputContentItem {
    #[serde(rename_all = "camelCase")]
    InputText {
        text: String,
    },
    #[serde(rename_all = "camelCase")]
    InputImage {
        image_url: String,
    },
    #[serde(rename_all = "camelCase")]
    InputAudio {
        audio_url: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum DynamicToolCallStatus {
    InProgress,
    Completed,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileUpdateChange {
    pub diff: String,
    pub kind: PatchChangeKind,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum FunctionCallOutputBody {
    Text(String),
    List(Vec<FunctionCallOutputContentItem>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FunctionCallOutputContentItem {
    #[serde(rename_all = "camelCase")]
    InputText {
        text: String,
    },
    #[serde(rename_all = "camelCase")]
    InputImage {
        #[serde(flatten)]
        source: OutputImageSource,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional = nullable)]
        detail: Option<ImageDetail>,
    },
    #[serde(rename_all = "camelCase")]
    InputAudio {
        #[serde(flatten)]
        source: OutputAudioSource,
    },
    #[serde(rename_all = "camelCase")]
    EncryptedContent {
        #[serde(rename = "encrypted_content")]
        encrypted_content: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct HookPromptFragment {
    pub hook_run_id: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ImageGenerationFailure {
    #[serde(rename_all = "camelCase")]
    UsageLimitExceeded {
        limit_id: String,
        #[serde(default)]
        resets_at: Option<i64>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImageGenerationInputImage {
    pub path: AbsolutePathBuf,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ItemCompletedNotification {
    pub completed_at_ms: i64,
    #[serde(default)]
    pub content_token_count: Option<u64>,
    pub item: ThreadItem,
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ItemStartedNotification {
    pub item: ThreadItem,
    pub started_at_ms: i64,
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallAppContext {
    #[serde(default)]
    pub action_name: Option<String>,
    #[serde(default)]
    pub app_name: Option<String>,
    pub connector_id: String,
    #[serde(default)]
    pub link_id: Option<String>,
    #[serde(default)]
    pub resource_uri: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallError {
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallResult {
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub _meta: Option<serde_json::Value>,
    pub content: Vec<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub structured_content: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum McpToolCallStatus {
    InProgress,
    Completed,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct MemoryCitation {
    pub entries: Vec<MemoryCitationEntry>,
    pub thread_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct MemoryCitationEntry {
    pub line_end: u32,
    pub line_start: u32,
    pub note: String,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum MessagePhase {
    Commentary,
    PartialAnswer,
    FinalAnswer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum PatchApplyStatus {
    InProgress,
    Completed,
    Failed,
    Declined,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PatchChangeKind {
    Add,
    Delete,
    #[serde(rename_all = "camelCase")]
    Update {
        #[serde(rename = "move_path", default)]
        move_path: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningSummaryTextDeltaNotification {
    pub delta: String,
    pub item_id: String,
    pub summary_index: i64,
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningTextDeltaNotification {
    pub content_index: i64,
    pub delta: String,
    pub item_id: String,
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum SubAgentActivityKind {
    Started,
    Interacted,
    Interrupted,
    Completed,
}

/// One item of a turn, with the times it started and completed.
///
/// On the wire the payload is flat: `{"type": "agentMessage", "id": …, "text": …,
/// "startedAtMs": …, "completedAtMs": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadItemKind {
    #[serde(rename_all = "camelCase")]
    UserMessage {
        #[serde(default)]
        client_id: Option<String>,
        content: Vec<UserInput>,
        id: String,
    },
    #[serde(rename_all = "camelCase")]
    HookPrompt {
        fragments: Vec<HookPromptFragment>,
        id: String,
    },
    #[serde(rename_all = "camelCase")]
    AgentMessage {
        #[serde(default)]
        delivery: Option<AgentMessageDelivery>,
        id: String,
        #[serde(default)]
        memory_citation: Option<MemoryCitation>,
        #[serde(default)]
        moderation: Option<AgentMessageModeration>,
        #[serde(default)]
        phase: Option<MessagePhase>,
        #[serde(default)]
        questions: Option<Vec<AsyncUserInputQuestion>>,
        text: String,
    },
    #[serde(rename_all = "camelCase")]
    FunctionCallOutput {
        id: String,
        name: String,
        #[serde(default)]
        namespace: Option<String>,
        output: FunctionCallOutputBody,
    },
    #[serde(rename_all = "camelCase")]
    Plan {
        id: String,
        text: String,
    },
    #[serde(rename_all = "camelCase")]
    Reasoning {
        #[serde(default)]
        content: Vec<String>,
        id: String,
        #[serde(default)]
        summary: Vec<String>,
    },
    #[serde(rename_all = "camelCase")]
    CommandExecution {
        #[serde(default)]
        aggregated_output: Option<String>,
        command: String,
        command_actions: Vec<CommandAction>,
        cwd: LegacyAppPathString,
        #[serde(default)]
        duration_ms: Option<i64>,
        #[serde(default)]
        exit_code: Option<i32>,
        id: String,
        #[serde(default)]
        plugin_id: Option<String>,
        #[serde(default)]
        process_id: Option<String>,
        #[serde(default)]
        script_path: Option<String>,
        #[serde(default)]
        source: CommandExecutionSource,
        status: CommandExecutionStatus,
    },
    #[serde(rename_all = "camelCase")]
    FileChange {
        changes: Vec<FileUpdateChange>,
        id: String,
        status: PatchApplyStatus,
    },
    #[serde(rename_all = "camelCase")]
    McpToolCall {
        #[serde(default)]
        app_context: Option<McpToolCallAppContext>,
        arguments: serde_json::Value,
        #[serde(default)]
        duration_ms: Option<i64>,
        #[serde(default)]
        environment_id: Option<String>,
        #[serde(default)]
        error: Option<McpToolCallError>,
        id: String,
        #[serde(default)]
        mcp_app_resource_uri: Option<String>,
        #[serde(default)]
        mcp_app_ui: Option<McpAppUi>,
        #[serde(default)]
        plugin_id: Option<String>,
        #[serde(default)]
        read_only_hint: Option<bool>,
        #[serde(default)]
        result: Option<McpToolCallResult>,
        server: String,
        status: McpToolCallStatus,
        tool: String,
    },
    #[serde(rename_all = "camelCase")]
    DynamicToolCall {
        arguments: serde_json::Value,
        #[serde(default)]
        content_items: Option<Vec<DynamicToolCallOutputContentItem>>,
        #[serde(default)]
        duration_ms: Option<i64>,
        id: String,
        #[serde(default)]
        namespace: Option<String>,
        status: DynamicToolCallStatus,
        #[serde(default)]
        success: Option<bool>,
        tool: String,
    },
    #[serde(rename_all = "camelCase")]
    CollabAgentToolCall {
        agents_states: BTreeMap<String, CollabAgentState>,
        id: String,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        prompt: Option<String>,
        #[serde(default)]
        reasoning_effort: Option<ReasoningEffort>,
        receiver_thread_ids: Vec<String>,
        sender_thread_id: String,
        status: CollabAgentToolCallStatus,
        tool: CollabAgentTool,
    },
    #[serde(rename_all = "camelCase")]
    SubAgentActivity {
        agent_path: String,
        agent_thread_id: String,
        id: String,
        kind: SubAgentActivityKind,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        reasoning_effort: Option<ReasoningEffort>,
    },
    #[serde(rename_all = "camelCase")]
    WebSearch {
        #[serde(default)]
        action: Option<WebSearchAction>,
        id: String,
        query: String,
        #[serde(default)]
        results: Option<Vec<serde_json::Value>>,
    },
    #[serde(rename_all = "camelCase")]
    ImageView {
        id: String,
        path: LegacyAppPathString,
    },
    #[serde(rename_all = "camelCase")]
    Sleep {
        duration_ms: u64,
        id: String,
    },
    #[serde(rename_all = "camelCase")]
    ImageGeneration {
        #[serde(flatten)]
        image: GeneratedImage,
        #[serde(default)]
        failure: Option<ImageGenerationFailure>,
        #[serde(default)]
        generation_id: Option<String>,
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Vec<ImageGenerationInputImage>")]
        #[ts(optional)]
        input_images: Option<Vec<ImageGenerationInputImage>>,
        #[serde(default)]
        revised_prompt: Option<String>,
        #[serde(default)]
        saved_path: Option<AbsolutePathBuf>,
        status: String,
        #[serde(default)]
        transparent_background: Option<bool>,
    },
    #[serde(rename_all = "camelCase")]
    EnteredReviewMode {
        id: String,
        review: String,
    },
    #[serde(rename_all = "camelCase")]
    ExitedReviewMode {
        id: String,
        review: String,
    },
    #[serde(rename_all = "camelCase")]
    ContextCompaction {
        id: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum WebSearchAction {
    #[serde(rename_all = "camelCase")]
    Search {
        #[serde(default)]
        queries: Option<Vec<String>>,
        #[serde(default)]
        query: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    OpenPage {
        #[serde(default)]
        url: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    FindInPage {
        #[serde(default)]
        pattern: Option<String>,
        #[serde(default)]
        url: Option<String>,
    },
    Other,
}


/// Where an image in a tool's output comes from (Responses API member names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum OutputImageSource {
    /// Fetched from a URL (`data:` URLs included).
    ImageUrl {
        /// The URL.
        image_url: String,
    },
    /// A file uploaded to the provider.
    FileId {
        /// The provider's file id.
        file_id: String,
    },
}

/// Where audio in a tool's output comes from (Responses API member names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum OutputAudioSource {
    /// Fetched from a URL (`data:` URLs included).
    AudioUrl {
        /// The URL.
        audio_url: String,
    },
    /// A file uploaded to the provider.
    FileId {
        /// The provider's file id.
        file_id: String,
    },
}

/// A generated image: its durable attachment id, or its inline data.
///
/// The attachment form comes first so that items carrying both keep the attachment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum GeneratedImage {
    /// Stored as an attachment.
    #[serde(rename_all = "camelCase")]
    File {
        /// The attachment-store id.
        file_id: String,
    },
    /// Inline image data.
    Inline {
        /// Base64 image data.
        result: String,
    },
}

/// The version of a moderation display instruction; only version 1 exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(try_from = "u8", into = "u8")]
#[ts(type = "1")]
pub struct DisplayVersion;

impl TryFrom<u8> for DisplayVersion {
    type Error = String;
    fn try_from(value: u8) -> Result<Self, Self::Error> {
        if value == 1 { Ok(DisplayVersion) } else { Err(format!("unsupported display version {value}; expected 1")) }
    }
}

impl From<DisplayVersion> for u8 {
    fn from(_: DisplayVersion) -> u8 {
        1
    }
}

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
