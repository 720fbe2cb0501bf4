//! Lifecycle hooks: commands from the configuration that run at fixed points of a turn (before
//! and after a tool runs, when a prompt is submitted, when the agent stops …). `hooks/list` says
//! which hooks apply in a working directory.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{AbsolutePathBuf, LegacyAppPathString};

/// Params of `hooks/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HooksListParams {
    /// The working directories to list hooks for, one entry each in the answer; absent or
    /// empty means the server's working directory (or the thread's, with `threadId`).
    #[serde(default)]
    #[ts(as = "Option<Vec<String>>", optional)]
    #[builder(default)]
    pub cwds: Vec<String>,
    /// A loaded thread whose working directory to list hooks for, instead of `cwds`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread_id: Option<String>,
}

/// Result of `hooks/list`: one entry per working directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct HooksListResponse {
    /// The hooks of each working directory, in the order asked.
    pub data: Vec<HooksListEntry>,
}

/// The hooks that apply in one working directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HooksListEntry {
    /// The working directory, as asked.
    pub cwd: String,
    /// Hook declarations that could not be used.
    pub errors: Vec<HookErrorInfo>,
    /// The hooks in the order they run for each event.
    pub hooks: Vec<HookMetadata>,
    /// Things about the hooks the user should know that do not stop them.
    pub warnings: Vec<String>,
}

/// A hook declaration that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HookErrorInfo {
    /// What is wrong with it, naming the key.
    pub message: String,
    /// The configuration file that declares it.
    pub path: String,
}

/// One hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HookMetadata {
    /// What runs: a command, an MCP tool, a prompt or an agent.
    #[serde(flatten)]
    pub handler: HookHandlerMetadata,
    /// Most bytes of the hook's output added to the model's context; `null` for the default.
    #[serde(default)]
    pub additional_context_limit: Option<u64>,
    /// A digest of the hook's declaration: it changes whenever the declaration does.
    pub current_hash: String,
    /// Where the hook comes among the hooks of its event (0 first).
    pub display_order: i64,
    /// Whether the hook runs.
    pub enabled: bool,
    /// The environment the hook runs in; `null` for the server's own.
    #[serde(default)]
    pub environment_id: Option<String>,
    /// When the hook runs.
    pub event_name: HookEventName,
    /// Whether an administrator declared it (users cannot turn it off).
    pub is_managed: bool,
    /// The hook's identity: its event, source and place in its file.
    pub key: String,
    /// The tool names (a regular expression) an event about a tool must match; `null`
    /// matches every tool.
    #[serde(default)]
    pub matcher: Option<String>,
    /// The plugin that brought the hook; `null` for a hook of the configuration.
    #[serde(default)]
    pub plugin_id: Option<String>,
    /// Which layer of the configuration declares it.
    pub source: HookSource,
    /// The file that declares it.
    pub source_path: AbsolutePathBuf,
    /// A line a client may show while the hook runs.
    #[serde(default)]
    pub status_message: Option<String>,
    /// Seconds the hook may run before it is stopped.
    pub timeout_sec: u64,
    /// Whether the user trusts it to run.
    pub trust_status: HookTrustStatus,
}

/// What a hook runs (`handlerType` on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "handlerType", rename_all = "camelCase")]
#[non_exhaustive]
pub enum HookHandlerMetadata {
    /// A shell command, given the event as JSON on its stdin.
    #[non_exhaustive]
    Command {
        /// The command line.
        command: String,
        /// Whether the turn goes on without waiting for it.
        #[serde(default, rename = "async")]
        #[ts(as = "Option<bool>", optional)]
        is_async: bool,
    },
    /// A tool of an MCP server.
    #[non_exhaustive]
    McpTool {
        /// The MCP server's name in the configuration.
        server: String,
        /// The tool's name.
        tool: String,
    },
    /// A prompt given to the model.
    Prompt,
    /// A sub-agent.
    Agent,
}

impl HookHandlerMetadata {
    /// A command hook that the turn waits for.
    pub fn command(command: impl Into<String>) -> Self {
        Self::Command {
            command: command.into(),
            is_async: false,
        }
    }

    /// A hook that calls `tool` of the MCP server configured as `server`.
    pub fn mcp_tool(server: impl Into<String>, tool: impl Into<String>) -> Self {
        Self::McpTool {
            server: server.into(),
            tool: tool.into(),
        }
    }
}

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum HookEventName {
    /// Before each model call.
    PreModelRequest,
    /// After each model call.
    PostModelRequest,
    /// Before a tool runs; the hook may stop it.
    PreToolUse,
    /// When the agent asks for an approval.
    PermissionRequest,
    /// After a tool ran.
    PostToolUse,
    /// Before the history is compacted.
    PreCompact,
    /// After the history was compacted.
    PostCompact,
    /// When a thread starts or is resumed.
    SessionStart,
    /// When a thread is unloaded.
    SessionEnd,
    /// When the user submits a prompt, before the model sees it.
    UserPromptSubmit,
    /// When a sub-agent starts.
    SubagentStart,
    /// When a sub-agent stops.
    SubagentStop,
    /// When the agent ends its turn.
    Stop,
    /// When a turn is interrupted.
    Interrupt,
}

/// Which layer of the configuration declares a hook.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum HookSource {
    /// The machine's configuration.
    System,
    /// The user's `config.toml`.
    User,
    /// A trusted project's `config.toml`.
    Project,
    /// A device-management profile.
    Mdm,
    /// Flags given to this session.
    SessionFlags,
    /// A plugin.
    Plugin,
    /// Requirements served by a cloud service.
    CloudRequirements,
    /// Configuration served by a cloud service.
    CloudManagedConfig,
    /// An older managed configuration file.
    LegacyManagedConfigFile,
    /// An older device-management profile.
    LegacyManagedConfigMdm,
    /// None of the above.
    #[default]
    Unknown,
}

/// Whether the user trusts a hook to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum HookTrustStatus {
    /// An administrator declared it; it runs.
    Managed,
    /// Not trusted yet; it does not run.
    Untrusted,
    /// Trusted; it runs.
    Trusted,
    /// Trusted once, but its declaration changed since; it does not run until trusted again.
    Modified,
}

// ---- hook runs (hook/started, hook/completed) ----

/// Params of `hook/started`: a hook began to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HookStartedNotification {
    /// The run, as it stands when it starts (`status: "running"`).
    pub run: HookRunSummary,
    /// The thread the hook runs for.
    pub thread_id: String,
    /// The turn it runs in; `null` for a hook of the thread (a session start).
    #[serde(default)]
    pub turn_id: Option<String>,
}

/// Params of `hook/completed`: a hook finished (or was stopped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HookCompletedNotification {
    /// The run, with its outcome and what it reported.
    pub run: HookRunSummary,
    /// The thread the hook ran for.
    pub thread_id: String,
    /// The turn it ran in; `null` for a hook of the thread.
    #[serde(default)]
    pub turn_id: Option<String>,
}

/// One run of one hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HookRunSummary {
    /// When it finished, in Unix seconds; `null` while it runs.
    #[serde(default)]
    pub completed_at: Option<i64>,
    /// Where the hook comes among the hooks of its event (0 first), as `hooks/list` says.
    pub display_order: i64,
    /// How long it ran, in milliseconds; `null` while it runs.
    #[serde(default)]
    pub duration_ms: Option<i64>,
    /// What the hook reported, in order (context it added, feedback, errors …).
    pub entries: Vec<HookOutputEntry>,
    /// The event it ran for.
    pub event_name: HookEventName,
    /// Whether the turn waited for it.
    pub execution_mode: HookExecutionMode,
    /// What kind of handler ran.
    pub handler_type: HookHandlerType,
    /// The run's id (unique per run).
    pub id: String,
    /// Whether it belongs to the thread or to one turn.
    pub scope: HookScope,
    /// Which layer of the configuration declares the hook.
    #[serde(default)]
    pub source: HookSource,
    /// The file that declares the hook.
    pub source_path: LegacyAppPathString,
    /// When it started, in Unix seconds.
    pub started_at: i64,
    /// How it stands or ended.
    pub status: HookRunStatus,
    /// The hook's status line, if its declaration has one.
    #[serde(default)]
    pub status_message: Option<String>,
}

/// How a hook run stands or ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum HookRunStatus {
    /// Still running.
    Running,
    /// Ran to its end and let the action go on.
    Completed,
    /// Could not run, exited with an error, or timed out; the action goes on.
    Failed,
    /// Refused the action (a tool call, a prompt, the end of the turn).
    Blocked,
    /// Asked for the turn to stop.
    Stopped,
}

/// One thing a hook run reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HookOutputEntry {
    /// What kind of report it is.
    pub kind: HookOutputEntryKind,
    /// The text.
    pub text: String,
}

/// What kind of report a hook output entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum HookOutputEntryKind {
    /// A message for the user.
    Warning,
    /// Why the hook stopped the turn.
    Stop,
    /// Why the hook refused the action; the model is told.
    Feedback,
    /// Text the hook added to the model's context.
    Context,
    /// Why the hook failed.
    Error,
}

/// Whether the turn waits for a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum HookExecutionMode {
    /// The turn waits for it and heeds its answer.
    Sync,
    /// The turn goes on while it runs.
    Async,
}

/// What a hook run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum HookScope {
    /// The thread (a session start or end).
    Thread,
    /// One turn.
    Turn,
}

/// What kind of handler a hook has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum HookHandlerType {
    /// A shell command.
    Command,
    /// A tool of an MCP server.
    McpTool,
    /// A prompt given to the model.
    Prompt,
    /// A sub-agent.
    Agent,
}
