//! Model providers: what produces a turn's model output.
//!
//! A [`ModelProvider`] turns one model call ([`ModelRequest`]) into a bounded stream of
//! [`ProviderEvent`]s. The turn engine reads the stream, turns it into items and
//! notifications, and drops it to cancel the call (an interrupted turn).
//!
//! A call carries the whole conversation ([`HistoryEntry`]) and the tools the model may call
//! ([`specs`](agentwire_tools::specs)); a model that wants a tool run answers with
//! [`ProviderEvent::ToolCall`], the turn engine runs it and calls the model again with the
//! result appended.
//!
//! The [`fixture::FixtureProvider`] replays a scripted conversation (see [`script`] for the
//! format), so turns work with no network and no account. [`openai::OpenAiProvider`] talks to
//! any server speaking the OpenAI chat-completions API (`wire_api = "chat"`) or the OpenAI
//! Responses API (`wire_api = "responses"`, see [`responses`]). [`builtin`] holds the provider
//! entries that exist without a table (`openai`, `ollama`, `oss`, `lmstudio`). [`Providers`]
//! holds them all, by id, and picks the one each call names.
//!
//! Images in user input go to the model as real image parts ([`content`]); a turn's
//! `outputSchema` is sent as structured output and its final message checked against it
//! ([`schema`]).

pub(crate) mod builtin;
pub(crate) mod content;
pub(crate) mod fixture;
pub(crate) mod openai;
pub(crate) mod responses;
pub(crate) mod schema;
pub(crate) mod script;
pub(crate) mod settings;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;

use agentwire_protocol::{
    CodexErrorInfo, ReasoningEffort, ReasoningSummary, TokenUsageBreakdown, UserInput,
};
use tokio::sync::mpsc;

use crate::accounts::Accounts;
use crate::config::ConfigFile;
use agentwire_tools::specs;
use fixture::FixtureProvider;
use openai::OpenAiProvider;
use script::Script;
use settings::FIXTURE;

/// How many events a provider may buffer ahead of the turn engine.
pub(crate) const EVENT_QUEUE: usize = 64;

/// One model call.
#[derive(Debug, Clone)]
pub(crate) struct ModelRequest {
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
    /// The MCP tools offered besides the built-in ones (see [`crate::mcp`]).
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
pub(crate) struct ModelTool {
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
pub(crate) struct OutputOptions {
    /// How detailed reasoning summaries are (the configured `model_reasoning_summary` when
    /// `None`).
    pub summary: Option<ReasoningSummary>,
    /// The JSON Schema of the final agent message, sent as structured output.
    pub schema: Option<serde_json::Value>,
}

/// One entry of the conversation a model call sees.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HistoryEntry {
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
    /// [`content`] for how each wire sends them).
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
    pub(crate) fn user_text(text: String) -> Self {
        Self::User {
            content: vec![UserInput::text().text(text).build()],
        }
    }
}

/// `input` as text for a model: text parts joined by newlines; other parts named in brackets.
pub(crate) fn user_text(input: &[UserInput]) -> String {
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
pub(crate) struct ToolCall {
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
pub(crate) enum ProviderEvent {
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
pub(crate) enum ProviderNotice {
    /// The response's rate-limit headers, as `account/rateLimits/updated` reports them.
    RateLimits(Box<agentwire_protocol::RateLimitSnapshot>),
    /// The model the server says answered (the chat chunk's or Responses response's `model`),
    /// sent once per call; the turn compares it with the model it asked for.
    ServedModel(String),
}

/// Produces model output.
pub(crate) trait ModelProvider: Send + Sync + Debug {
    /// Starts `request`; its events arrive on the returned receiver, which ends after `Done`
    /// or `Error`. Dropping the receiver cancels the call.
    fn stream(&self, request: ModelRequest) -> mpsc::Receiver<ProviderEvent>;
}

/// A provider that cannot run: every call fails with `reason` (a bad configuration).
#[derive(Debug)]
struct Unavailable {
    reason: String,
}

impl ModelProvider for Unavailable {
    fn stream(&self, _request: ModelRequest) -> mpsc::Receiver<ProviderEvent> {
        let (sender, receiver) = mpsc::channel(1);
        let _ = sender.try_send(ProviderEvent::Error {
            message: format!("The model provider is not available: {}", self.reason),
            details: Some(self.reason.clone()),
            info: Some(CodexErrorInfo::BadRequest),
        });
        receiver
    }
}

/// The model providers by id; a call goes to the one its `provider` names (the configured
/// default when it names none).
#[derive(Debug)]
pub(crate) struct Providers {
    /// The provider of calls that name none (`model_provider`, else `fixture`).
    default: String,
    /// Every provider: `fixture` and each `[model_providers.<id>]`.
    by_id: BTreeMap<String, Arc<dyn ModelProvider>>,
}

impl Providers {
    /// The providers `config` describes. A provider whose table (or fixture script) is
    /// unusable is kept as one whose calls fail with the reason, so the others still work.
    fn new(home: &Path, config: &ConfigFile, accounts: &Arc<Accounts>) -> Self {
        let mut by_id: BTreeMap<String, Arc<dyn ModelProvider>> = BTreeMap::new();
        let fixture: Arc<dyn ModelProvider> = match fixture_script(home, config) {
            Ok(script) => Arc::new(FixtureProvider::new(script)),
            Err(reason) => unavailable(FIXTURE, reason),
        };
        by_id.insert(FIXTURE.to_owned(), fixture);
        for (id, table) in &config.model_providers {
            let defaults = openai::Defaults {
                model: config.model.clone(),
                summary: config.model_reasoning_summary.clone(),
                web_search: config.tools.web_search_endpoint.is_some(),
            };
            let provider: Arc<dyn ModelProvider> =
                match OpenAiProvider::new(id, table, defaults, accounts.clone()) {
                    Ok(provider) => Arc::new(provider),
                    Err(reason) => unavailable(id, reason),
                };
            by_id.insert(id.clone(), provider);
        }
        Self {
            default: config
                .model_provider
                .clone()
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| FIXTURE.to_owned()),
            by_id,
        }
    }
}

impl ModelProvider for Providers {
    fn stream(&self, request: ModelRequest) -> mpsc::Receiver<ProviderEvent> {
        let id = if request.provider.is_empty() {
            self.default.as_str()
        } else {
            request.provider.as_str()
        };
        if let Some(provider) = self.by_id.get(id) {
            return match request.output.schema.clone() {
                Some(schema) => schema::checked(provider.stream(request), schema),
                None => provider.stream(request),
            };
        }
        let known = self
            .by_id
            .keys()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        Unavailable {
            reason: format!(
                "there is no model provider `{id}`; the configured ones are {known} (add a \
                 [model_providers.{id}] table to config.toml, or pick one of those)."
            ),
        }
        .stream(request)
    }
}

/// A provider whose calls fail because of `reason`; the reason is logged once now.
fn unavailable(id: &str, reason: String) -> Arc<dyn ModelProvider> {
    tracing::error!(
        provider = id,
        reason,
        "model provider unusable; its turns will fail"
    );
    Arc::new(Unavailable { reason })
}

/// The fixture provider's script: the one `fixture_script` names, else the built-in one.
fn fixture_script(home: &Path, config: &ConfigFile) -> Result<Script, String> {
    match &config.fixture_script {
        None => Ok(Script::built_in()),
        Some(path) => {
            let path = home.join(path);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read fixture_script {}: {e}", path.display()))?;
            Script::parse(&text).map_err(|e| format!("fixture_script {}: {e}", path.display()))
        }
    }
}

/// The providers `config` describes (see [`Providers`]); they take the stored API key from,
/// and report rate limits to, `accounts`. When `config.toml` itself is unusable, the problem is
/// logged and every call fails with the reason.
pub(crate) fn from_config(
    home: &Path,
    config: Result<ConfigFile, String>,
    accounts: &Arc<Accounts>,
) -> Arc<dyn ModelProvider> {
    match config {
        Ok(config) => Arc::new(Providers::new(home, &config, accounts)),
        Err(reason) => unavailable("*", reason),
    }
}

#[cfg(test)]
mod tests {
    use super::settings::ProviderConfig;
    use super::*;

    fn config(provider: Option<&str>, script: Option<&str>) -> ConfigFile {
        ConfigFile {
            model_provider: provider.map(str::to_owned),
            fixture_script: script.map(Into::into),
            ..ConfigFile::default()
        }
    }

    fn request(provider: &str) -> ModelRequest {
        ModelRequest {
            provider: provider.to_owned(),
            model: String::new(),
            effort: None,
            instructions: None,
            history: vec![HistoryEntry::User {
                content: vec![UserInput::text().text("hi".to_owned()).build()],
            }],
            steered: false,
            output: OutputOptions::default(),
            mcp_tools: Vec::new(),
            client_tools: Vec::new(),
            builtins: specs::BuiltinTools::default(),
        }
    }

    /// The first event of a call to `provider` through `providers`.
    async fn first(providers: &dyn ModelProvider, provider: &str) -> ProviderEvent {
        providers
            .stream(request(provider))
            .recv()
            .await
            .expect("an event")
    }

    fn error_text(event: &ProviderEvent) -> String {
        match event {
            ProviderEvent::Error {
                message, details, ..
            } => format!("{message} | {details:?}"),
            other => panic!("not an error: {other:?}"),
        }
    }

    #[tokio::test]
    async fn calls_go_to_the_provider_they_name_or_the_default() {
        let home = std::env::temp_dir().join(format!("agentwire-provider-{}", std::process::id()));
        std::fs::create_dir_all(&home).expect("create home");
        let accounts = Arc::new(Accounts::new(&home));
        let mut with_table = config(Some("local"), None);
        with_table.model_providers.insert(
            "local".to_owned(),
            ProviderConfig {
                base_url: "ftp://nowhere".to_owned(),
                ..ProviderConfig::default()
            },
        );
        let providers = Providers::new(&home, &with_table, &accounts);
        // The default (`local`) is unusable: its calls say why.
        let bad = error_text(&first(&providers, "").await);
        assert!(bad.contains("http:// or https://"), "{bad}");
        // `fixture` still works.
        assert!(!matches!(
            first(&providers, "fixture").await,
            ProviderEvent::Error { .. }
        ));
        // An unknown id names itself and the known ones.
        let unknown = error_text(&first(&providers, "nope").await);
        assert!(unknown.contains("`nope`"), "{unknown}");
        assert!(unknown.contains("`fixture`, `local`"), "{unknown}");

        // Without a configuration, the fixture answers.
        let plain = Providers::new(&home, &config(None, None), &accounts);
        assert!(!matches!(
            first(&plain, "").await,
            ProviderEvent::Error { .. }
        ));

        // A broken fixture script fails fixture calls with the reason.
        let missing = Providers::new(&home, &config(None, Some("nope.json")), &accounts);
        let text = error_text(&first(&missing, "fixture").await);
        assert!(text.contains("cannot read fixture_script"), "{text}");
        std::fs::write(home.join("bad.json"), "{\"version\": 7}").expect("write");
        let bad = Providers::new(&home, &config(None, Some("bad.json")), &accounts);
        let text = error_text(&first(&bad, "").await);
        assert!(text.contains("version 7"), "{text}");

        // A broken config.toml fails every call with the reason.
        let broken = from_config(&home, Err("config.toml: oops".to_owned()), &accounts);
        let text = error_text(&first(broken.as_ref(), "fixture").await);
        assert!(text.contains("config.toml: oops"), "{text}");
        let _ = std::fs::remove_dir_all(&home);
    }
}
