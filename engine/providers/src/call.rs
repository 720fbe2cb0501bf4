//! One model call and what it produces: the request ([`ModelRequest`]: the conversation, the
//! tools offered, the output wanted), the events a provider streams back ([`ProviderEvent`])
//! and the [`ModelProvider`] trait every provider implements.

use std::fmt::Debug;

use agentwire_protocol::{
    CodexErrorInfo, ReasoningEffort, ReasoningSummary, TokenUsageBreakdown, UserInput,
};
use agentwire_tools::specs;
use tokio::sync::mpsc;

/// How many events a provider may buffer ahead of the turn engine.
pub(crate) const EVENT_QUEUE: usize = 64;

/// One model call.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The id of the model provider that answers (the thread's `modelProvider`, a key of
    /// `[model_providers]` in `config.toml`, or `fixture`).
    pub provider: String,
    /// The model slug (the thread's, or the turn's override).
    pub model: String,
    /// Reasoning effort, when the thread or turn sets one.
    pub effort: Option<ReasoningEffort>,
    /// Instructions that go before the conversation (the system message), if any.
    pub instructions: Option<String>,
    /// The conversation so far, oldest first. It ends with the input this call answers: a
    /// user message, or the results of the tool calls of the previous call.
    pub history: Vec<HistoryEntry>,
    /// Whether the newest user message was steered into a running turn (rather than starting
    /// it).
    pub steered: bool,
    /// What the turn asks of the model's output beyond the thread's settings.
    pub output: OutputOptions,
    /// The MCP tools offered besides the built-in ones (the engine's MCP client lists them).
    pub mcp_tools: Vec<ModelTool>,
    /// The tools the client answers (`request_user_input`, the thread's dynamic tools),
    /// offered after the MCP tools.
    pub client_tools: Vec<ModelTool>,
    /// Which of the engine's own tools the thread offers (all of them unless its
    /// configuration withholds some).
    pub builtins: specs::BuiltinTools,
}

/// A tool offered to the model besides the built-in ones (an MCP server's, the client's): its
/// qualified function name, description and parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelTool {
    /// The function name (`server__tool`, sanitised).
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: serde_json::Value,
}

/// A turn's wishes for the model's output: a reasoning summary setting and a JSON Schema the
/// final message must follow (`turn/start`'s `summary` and `outputSchema`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutputOptions {
    /// How detailed reasoning summaries are (the configured `model_reasoning_summary` when
    /// `None`).
    pub summary: Option<ReasoningSummary>,
    /// The JSON Schema of the final agent message, sent as structured output.
    pub schema: Option<serde_json::Value>,
}

/// One entry of the conversation a model call sees.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryEntry {
    /// Instructions from the developer (the thread's `developerInstructions`): a developer
    /// message, sent on the chat wire as a system message.
    Developer {
        /// The instructions.
        text: String,
    },
    /// Context the engine adds to the conversation (the project docs, the environment
    /// context): sent as a user message of one text part, and never taken for the user's own
    /// words (the fixture provider answers the newest [`HistoryEntry::User`]).
    Context {
        /// The text.
        text: String,
    },
    /// What the user said: text, images and other parts, as the client sent them (see
    /// [`content`](crate::content) for how each wire sends them).
    User {
        /// The parts, in order.
        content: Vec<UserInput>,
    },
    /// What the model answered: text, and the tools it called.
    Assistant {
        /// Its message text (may be empty when it only called tools).
        text: String,
        /// The tool calls it made, in order.
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, as text for the model.
    ToolResult {
        /// The [`ToolCall::call_id`] it answers.
        call_id: String,
        /// What the tool reported.
        output: String,
    },
}

impl ModelRequest {
    /// Every tool this call offers, as `function(name, description, parameters)` renders it
    /// for a wire: the built-in `tools`, then the MCP servers' (`server__tool`), then the
    /// client's.
    pub(crate) fn offered_tools<T>(
        &self,
        tools: &[specs::ToolSpec],
        function: impl Fn(&str, &str, &serde_json::Value) -> T,
    ) -> Vec<T> {
        tools
            .iter()
            .map(|tool| function(tool.name, tool.description, &tool.parameters))
            .chain(
                self.mcp_tools
                    .iter()
                    .chain(&self.client_tools)
                    .map(|tool| function(&tool.name, &tool.description, &tool.parameters)),
            )
            .collect()
    }
}

impl HistoryEntry {
    /// A user message of one text part (instructions and summaries the engine adds).
    pub fn user_text(text: String) -> Self {
        Self::User {
            content: vec![UserInput::text().text(text).build()],
        }
    }
}

/// `input` as text for a model: text parts joined by newlines; other parts named in brackets.
pub fn user_text(input: &[UserInput]) -> String {
    input
        .iter()
        .map(|part| match part {
            UserInput::Text { text, .. } => text.clone(),
            UserInput::LocalImage { path, .. } => format!("[image file: {path}]"),
            UserInput::LocalAudio { path, .. } => format!("[audio file: {path}]"),
            UserInput::Skill { name, path, .. } => format!("[skill {name}: {path}]"),
            UserInput::Image { .. } => "[image]".to_owned(),
            UserInput::Audio { .. } => "[audio]".to_owned(),
            _ => "[attachment]".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The model's id for the call; its result is sent back under this id.
    pub call_id: String,
    /// The tool's name (see [`specs::BUILTIN_NAMES`]).
    pub name: String,
    /// The arguments, as the JSON text the model produced (not yet checked).
    pub arguments: String,
}

/// What a model call produces, in order. Reasoning and text deltas of one output item arrive
/// together; [`ProviderEvent::ItemDone`] separates items of the same kind.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    /// More agent message text.
    TextDelta(String),
    /// More reasoning: summary text of section `index`, or (`raw`) reasoning text of part
    /// `index`.
    ReasoningDelta {
        /// Raw reasoning text rather than summary.
        raw: bool,
        /// Section (summary) or part (raw) index.
        index: i64,
        /// The text to append.
        delta: String,
    },
    /// A new reasoning summary section `index` begins (the Responses wire's
    /// `response.reasoning_summary_part.added`); its text follows as `ReasoningDelta`s.
    ReasoningSectionAdded {
        /// Section index.
        index: i64,
    },
    /// The current output item is complete.
    ItemDone,
    /// The model calls a tool; the call's arguments are complete. Calls arrive after the text
    /// and reasoning of the same call; the turn runs them once the call is `Done`.
    ToolCall(ToolCall),
    /// The call finished.
    Done {
        /// Its token counts.
        usage: TokenUsageBreakdown,
        /// The model's context window, when known.
        model_context_window: Option<i64>,
    },
    /// Something learned about the call that the turn tells clients; it is not part of the
    /// model's output (turn notifications area).
    Notice(ProviderNotice),
    /// The call failed; nothing follows.
    Error {
        /// Text for the user.
        message: String,
        /// More detail.
        details: Option<String>,
        /// The kind of failure, for clients that react to it (`codexErrorInfo`).
        info: Option<CodexErrorInfo>,
    },
}

/// What a provider learned about a call besides its output (see [`ProviderEvent::Notice`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderNotice {
    /// The response's rate-limit headers, as `account/rateLimits/updated` reports them.
    RateLimits(Box<agentwire_protocol::RateLimitSnapshot>),
    /// The model the server says answered (the chat chunk's or Responses response's `model`),
    /// sent once per call; the turn compares it with the model it asked for.
    ServedModel(String),
}

/// Produces model output.
pub trait ModelProvider: Send + Sync + Debug {
    /// Starts `request`; its events arrive on the returned receiver, which ends after `Done`
    /// or `Error`. Dropping the receiver cancels the call.
    fn stream(&self, request: ModelRequest) -> mpsc::Receiver<ProviderEvent>;
}
