//! The fixture script: a scripted conversation the [`super::fixture::FixtureProvider`] replays.
//!
//! # Format (version 1)
//!
//! A JSON object:
//!
//! ```text
//! {
//!   "version": 1,                       required; this build reads version 1
//!   "deltaDelayMs": 0,                  optional pause before each delta (default 0)
//!   "modelContextWindow": 258400,       optional, reported in thread/tokenUsage/updated
//!   "steerReply": "Noted: {input}",     optional; the reply to steered input, `{input}` is
//!                                       replaced by the steered text
//!   "responses": [                      tried in order; the first that matches answers
//!     {
//!       "when": "fail",                 optional: matches when the user's text contains it
//!                                       (ignoring case); no `when` matches every input
//!       "steps": [
//!         {"type": "reasoning", "summary": ["Thinking ", "it over."], "content": []},
//!         {"type": "message", "deltas": ["Hello ", "there."]},
//!         {"type": "command", "command": "ls -l", "workdir": "src", "timeoutMs": 5000,
//!          "escalate": false, "justification": "…"},
//!         {"type": "patch", "patch": "*** Begin Patch\n…\n*** End Patch\n"},
//!         {"type": "tool", "name": "update_plan", "arguments": {"plan": […]}},
//!         {"type": "tool", "name": "everything__echo", "arguments": {"message": "hi"}},
//!         {"type": "error", "message": "…", "details": "…"},
//!         {"type": "panic", "message": "…"}
//!       ],
//!       "usage": {"inputTokens": 10, "outputTokens": 5}    optional token counts
//!     }
//!   ]
//! }
//! ```
//!
//! Each `reasoning` and `message` step becomes one item; its strings are streamed as deltas in
//! order (`summary` into summary section 0, `content` into raw part 0). `command` and `patch`
//! steps are tool calls (`shell`, `apply_patch`): a run of them ends the model call, the turn
//! runs the tools, and the next call (which carries their results) replays the steps after
//! the run. An `error` step ends the model call with that error, so the turn fails. A `panic` step makes the provider panic, inside the
//! turn, when it is asked for the model call that holds it (the steps before it in that call
//! are not streamed; put a tool step before it to stream something first): it tests that the
//! server settles a turn whose task panics (as `failed`, the thread idle again). Unknown members
//! are rejected, so a typo does not silently change a test.

use agentwire_protocol::TokenUsageBreakdown;
use serde::Deserialize;

/// The script version this build reads.
pub(crate) const SCRIPT_VERSION: u32 = 1;

/// The script built into the binary: used when no `fixture_script` is configured.
pub(crate) const BUILT_IN: &str = include_str!("default_script.json");

/// A parsed fixture script.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Script {
    /// Format version; must be [`SCRIPT_VERSION`].
    pub version: u32,
    /// Pause before each delta, in milliseconds.
    #[serde(default)]
    pub delta_delay_ms: u64,
    /// Context window reported with token usage.
    #[serde(default)]
    pub model_context_window: Option<i64>,
    /// Reply template for steered input (`{input}` is the steered text).
    #[serde(default = "default_steer_reply")]
    pub steer_reply: String,
    /// The scripted responses, tried in order.
    pub responses: Vec<Response>,
}

/// One scripted model response.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Response {
    /// Case-insensitive substring of the input that selects this response; `None` matches all.
    #[serde(default)]
    pub when: Option<String>,
    /// What the model produces, in order.
    pub steps: Vec<Step>,
    /// Token counts of the call.
    #[serde(default)]
    pub usage: Usage,
}

/// One step of a scripted response.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub(crate) enum Step {
    /// A reasoning item.
    Reasoning {
        /// Summary deltas (section 0).
        #[serde(default)]
        summary: Vec<String>,
        /// Raw reasoning deltas (part 0).
        #[serde(default)]
        content: Vec<String>,
    },
    /// An agent message streamed in `deltas`.
    Message {
        /// The message text, in the chunks it streams in.
        deltas: Vec<String>,
    },
    /// A `shell` tool call running `command` (a line for `bash -c`). Consecutive tool steps
    /// are the calls of one model call; the steps after them answer the next call, which
    /// carries the tools' results.
    #[serde(rename_all = "camelCase")]
    Command {
        /// The command line.
        command: String,
        /// Working directory, relative to the thread's cwd.
        #[serde(default)]
        workdir: Option<String>,
        /// Time limit in milliseconds.
        #[serde(default)]
        timeout_ms: Option<u64>,
        /// Ask to run outside the sandbox (`sandbox_permissions: require_escalated`).
        #[serde(default)]
        escalate: bool,
        /// Why, shown in the approval request.
        #[serde(default)]
        justification: Option<String>,
    },
    /// An `apply_patch` tool call with this patch text.
    Patch {
        /// The patch (`*** Begin Patch` … `*** End Patch`).
        patch: String,
    },
    /// A call of any tool by its function name (`update_plan`; an MCP tool is `server__tool`).
    /// `arguments` is sent as its JSON text; a string is sent as it is, so a script can send
    /// arguments that are not JSON.
    Tool {
        /// The function name.
        name: String,
        /// The arguments.
        #[serde(default)]
        arguments: serde_json::Value,
    },
    /// The model call fails.
    Error {
        /// Text for the user.
        message: String,
        /// More detail.
        #[serde(default)]
        details: Option<String>,
    },
    /// The provider panics when asked for the model call holding this step (see the module
    /// doc: it exercises the turn's panic guard).
    Panic {
        /// The panic message.
        message: String,
    },
}

impl Step {
    /// Whether the step is a tool call.
    pub(crate) fn is_tool_call(&self) -> bool {
        matches!(
            self,
            Step::Command { .. } | Step::Patch { .. } | Step::Tool { .. }
        )
    }
}

/// Token counts of a scripted call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Usage {
    /// Prompt tokens.
    #[serde(default = "ten")]
    pub input_tokens: i64,
    /// Generated tokens.
    #[serde(default = "five")]
    pub output_tokens: i64,
    /// Of the generated tokens, those spent reasoning.
    #[serde(default)]
    pub reasoning_output_tokens: i64,
}

fn ten() -> i64 {
    10
}

fn five() -> i64 {
    5
}

fn default_steer_reply() -> String {
    "Noted, I will also take this into account: \"{input}\"".to_owned()
}

impl Default for Usage {
    fn default() -> Self {
        Self {
            input_tokens: ten(),
            output_tokens: five(),
            reasoning_output_tokens: 0,
        }
    }
}

impl Usage {
    /// The wire breakdown of these counts.
    pub(crate) fn breakdown(&self) -> TokenUsageBreakdown {
        TokenUsageBreakdown::builder()
            .input_tokens(self.input_tokens)
            .cached_input_tokens(0)
            .cache_write_input_tokens(0)
            .output_tokens(self.output_tokens)
            .reasoning_output_tokens(self.reasoning_output_tokens)
            .total_tokens(self.input_tokens.saturating_add(self.output_tokens))
            .build()
    }
}

impl Script {
    /// Parses and checks a script.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let version = serde_json::from_str::<serde_json::Value>(text)
            .map_err(|e| format!("not JSON: {e}"))?
            .get("version")
            .and_then(serde_json::Value::as_u64);
        match version {
            Some(v) if v == u64::from(SCRIPT_VERSION) => {}
            Some(v) => {
                return Err(format!(
                    "script version {v} is not supported (this build reads {SCRIPT_VERSION})"
                ));
            }
            None => return Err("`version` is missing or not a number".to_owned()),
        }
        let script: Script = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if script.responses.is_empty() {
            return Err("`responses` is empty".to_owned());
        }
        Ok(script)
    }

    /// The built-in script.
    pub(crate) fn built_in() -> Self {
        match Self::parse(BUILT_IN) {
            Ok(script) => script,
            // The unit tests parse it, so this cannot happen in a tested build.
            Err(error) => {
                tracing::error!(error, "the built-in fixture script is broken");
                Self {
                    version: SCRIPT_VERSION,
                    delta_delay_ms: 0,
                    model_context_window: None,
                    steer_reply: default_steer_reply(),
                    responses: Vec::new(),
                }
            }
        }
    }

    /// The first response matching `text`.
    pub(crate) fn response_for(&self, text: &str) -> Option<&Response> {
        let text = text.to_lowercase();
        self.responses.iter().find(|r| {
            r.when
                .as_ref()
                .is_none_or(|w| text.contains(&w.to_lowercase()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_script_parses_and_has_a_failure_case() {
        let script = Script::parse(BUILT_IN).expect("built-in script parses");
        let fail = script.response_for("please FAIL now").expect("fail case");
        assert!(matches!(fail.steps.last(), Some(Step::Error { .. })));
        let normal = script.response_for("Say hello.").expect("default case");
        assert!(
            normal
                .steps
                .iter()
                .any(|s| matches!(s, Step::Message { .. }))
        );
        assert!(
            normal
                .steps
                .iter()
                .any(|s| matches!(s, Step::Reasoning { .. }))
        );
    }

    #[test]
    fn defaults_fill_optional_members() {
        let script = Script::parse(
            r#"{"version": 1, "responses": [{"steps": [{"type": "message", "deltas": ["a"]}]}]}"#,
        )
        .expect("parses");
        assert_eq!(script.delta_delay_ms, 0);
        assert_eq!(script.responses[0].usage, Usage::default());
        assert_eq!(script.responses[0].usage.breakdown().total_tokens, 15);
        assert!(script.steer_reply.contains("{input}"));
    }

    #[test]
    fn first_matching_response_wins() {
        let script = Script::parse(
            r#"{"version": 1, "deltaDelayMs": 20, "responses": [
                {"when": "Bye", "steps": [{"type": "message", "deltas": ["bye"]}]},
                {"steps": [{"type": "error", "message": "no"}]}
            ]}"#,
        )
        .expect("parses");
        assert_eq!(script.delta_delay_ms, 20);
        assert_eq!(
            script.response_for("say bye").map(|r| r.steps.clone()),
            Some(vec![Step::Message {
                deltas: vec!["bye".to_owned()]
            }])
        );
        assert!(matches!(
            script.response_for("hello").map(|r| &r.steps[0]),
            Some(Step::Error { details: None, .. })
        ));
    }

    #[test]
    fn bad_scripts_are_refused_with_a_reason() {
        for (text, reason) in [
            ("not json", "not JSON"),
            (r#"{"responses": []}"#, "`version` is missing"),
            (
                r#"{"version": 2, "responses": []}"#,
                "version 2 is not supported",
            ),
            (r#"{"version": 1, "responses": []}"#, "`responses` is empty"),
            (
                r#"{"version": 1, "responses": [{"steps": [{"type": "song"}]}]}"#,
                "unknown variant",
            ),
            (
                r#"{"version": 1, "responsez": []}"#,
                "unknown field `responsez`",
            ),
        ] {
            let error = Script::parse(text).expect_err(text);
            assert!(error.contains(reason), "{text}: {error}");
        }
    }
}
