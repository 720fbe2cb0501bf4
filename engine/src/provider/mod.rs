//! Model providers: what produces a turn's model output.
//!
//! A [`ModelProvider`] turns one model call ([`ModelRequest`]) into a bounded stream of
//! [`ProviderEvent`]s. The turn engine reads the stream, turns it into items and
//! notifications, and drops it to cancel the call (an interrupted turn).
//!
//! A call carries the whole conversation ([`HistoryEntry`]) and the tools the model may call
//! ([`crate::tools::TOOLS`]); a model that wants a tool run answers with
//! [`ProviderEvent::ToolCall`], the turn engine runs it and calls the model again with the
//! result appended.
//!
//! The [`fixture::FixtureProvider`] replays a scripted conversation (see [`script`] for the
//! format), so turns work with no network and no account.

pub(crate) mod fixture;
pub(crate) mod script;

use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;

use agentwire_protocol::{CodexErrorInfo, ReasoningEffort, TokenUsageBreakdown, UserInput};
use tokio::sync::mpsc;

use crate::config::ConfigFile;
use fixture::FixtureProvider;
use script::Script;

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
}

/// One entry of the conversation a model call sees.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HistoryEntry {
    /// What the user said (text parts joined; other input kinds described in words).
    User {
        /// The text.
        text: String,
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

/// `input` as text for a model: text parts joined by newlines; other parts named in brackets.
pub(crate) fn user_text(input: &[UserInput]) -> String {
    input
        .iter()
        .map(|part| match part {
            UserInput::Text { text, .. } => text.clone(),
            UserInput::LocalImage { path, .. } => format!("[image file: {path}]"),
            UserInput::LocalAudio { path } => format!("[audio file: {path}]"),
            UserInput::Skill { name, path } => format!("[skill {name}: {path}]"),
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
    /// The tool's name (see [`crate::tools::TOOLS`]).
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
            message: "The model provider is not available.".to_owned(),
            details: Some(self.reason.clone()),
            info: Some(CodexErrorInfo::BadRequest),
        });
        receiver
    }
}

/// The provider `config` selects (the fixture provider with the built-in script when it
/// selects none). A configuration problem is logged and yields a provider whose calls fail
/// with the reason.
pub(crate) fn from_config(
    home: &Path,
    config: Result<ConfigFile, String>,
) -> Arc<dyn ModelProvider> {
    match select(home, config) {
        Ok(provider) => provider,
        Err(reason) => {
            tracing::error!(reason, "no model provider; turns will fail");
            Arc::new(Unavailable { reason })
        }
    }
}

fn select(
    home: &Path,
    config: Result<ConfigFile, String>,
) -> Result<Arc<dyn ModelProvider>, String> {
    let config = config?;
    match config.model_provider.as_deref() {
        None | Some("fixture") => {}
        Some(other) => {
            return Err(format!(
                "model_provider = \"{other}\" is not supported by this build (only \"fixture\")"
            ));
        }
    }
    let script = match &config.fixture_script {
        None => Script::built_in(),
        Some(path) => {
            let path = home.join(path);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read fixture_script {}: {e}", path.display()))?;
            Script::parse(&text).map_err(|e| format!("fixture_script {}: {e}", path.display()))?
        }
    };
    Ok(Arc::new(FixtureProvider::new(script)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(provider: Option<&str>, script: Option<&str>) -> Result<ConfigFile, String> {
        Ok(ConfigFile {
            model_provider: provider.map(str::to_owned),
            fixture_script: script.map(Into::into),
        })
    }

    #[test]
    fn the_fixture_provider_is_the_default_and_problems_are_explained() {
        let home = std::env::temp_dir().join(format!("agentwire-provider-{}", std::process::id()));
        std::fs::create_dir_all(&home).expect("create home");
        assert!(select(&home, config(None, None)).is_ok());
        assert!(select(&home, config(Some("fixture"), None)).is_ok());
        let other = select(&home, config(Some("openai"), None)).expect_err("unsupported");
        assert!(other.contains("\"openai\" is not supported"), "{other}");
        let missing = select(&home, config(None, Some("nope.json"))).expect_err("missing");
        assert!(missing.contains("cannot read fixture_script"), "{missing}");
        std::fs::write(home.join("bad.json"), "{\"version\": 7}").expect("write");
        let bad = select(&home, config(None, Some("bad.json"))).expect_err("bad");
        assert!(bad.contains("version 7"), "{bad}");
        let broken = select(&home, Err("config.toml: oops".to_owned())).expect_err("broken");
        assert_eq!(broken, "config.toml: oops");
        let _ = std::fs::remove_dir_all(&home);
    }
}
