//! The built-in tools as the model sees them: names and argument shapes as the reference
//! (Codex) offers them, with descriptions of our own.
//!
//! Which tools a call offers depends on the wire and the model ([`Offer`]):
//!
//! - the command tool is `exec_command` (`cmd`, a command line) on the Responses API, as the
//!   reference offers it to every model family, and `shell` (`command`, an argv) on
//!   chat-completions, the shape open models learned from earlier Codex releases; a call to
//!   either name (or `shell_command`) is accepted on both wires;
//! - `write_stdin` (input to, and more output from, an `exec_command` still running as a
//!   session) whenever `exec_command` is offered, and accepted on both wires;
//! - `apply_patch` is a freeform `custom` tool (a Lark grammar, the patch as raw text) on the
//!   Responses API for OpenAI's GPT-5 and Codex models, and a function with one `input`
//!   string everywhere else; both forms are accepted whatever was offered;
//! - `update_plan` and `view_image` are always offered;
//! - `web_search` only when `[tools.web_search]` names a search endpoint;
//! - the command tools and `apply_patch` unless the thread withholds them
//!   ([`BuiltinTools`]).

use serde_json::{Value, json};

/// The name of the argv command tool (offered on chat-completions).
pub const SHELL: &str = "shell";
/// The name of the command-line tool (offered on the Responses API).
pub const EXEC_COMMAND: &str = "exec_command";
/// Another name of the command-line tool some models call (`command` as a line).
pub const SHELL_COMMAND: &str = "shell_command";
/// The name of the tool that writes to (and reads from) an exec session.
pub const WRITE_STDIN: &str = "write_stdin";
/// The name of the patch tool.
pub const APPLY_PATCH: &str = "apply_patch";
/// The name of the plan tool.
pub const UPDATE_PLAN: &str = "update_plan";
/// The name of the image tool.
pub const VIEW_IMAGE: &str = "view_image";
/// The name of the web search tool.
pub const WEB_SEARCH: &str = "web_search";

/// Every name a built-in tool answers to (a dynamic tool may not take one).
pub const BUILTIN_NAMES: &[&str] = &[
    SHELL,
    EXEC_COMMAND,
    WRITE_STDIN,
    SHELL_COMMAND,
    APPLY_PATCH,
    UPDATE_PLAN,
    VIEW_IMAGE,
    WEB_SEARCH,
];

/// A tool as the model sees it: a name, what it does and its JSON Schema parameters (the
/// chat-completions `tools[].function` object).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The function name.
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// JSON Schema of its arguments.
    pub parameters: Value,
    /// When set, the Responses API offers the tool as a freeform `custom` tool whose raw
    /// input follows this Lark grammar (the `parameters` are then not sent).
    pub freeform: Option<&'static str>,
}

/// Which of the engine's own tools a thread offers the model. Both are on unless the
/// configuration the thread sees (with its own `config` overrides) switches them off under
/// `[features]`: `shell_tool = false` (Codex's switch) withholds the command tools
/// (`exec_command`, `write_stdin`, `shell`), `apply_patch_tool = false` (agentwire's own)
/// withholds `apply_patch`. A client that runs commands or edits files itself (the ACP face
/// with an editor's terminal and file system) sets them, so the model has one way to do each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinTools {
    /// Whether the command tools are offered and run.
    pub shell: bool,
    /// Whether `apply_patch` is offered and run.
    pub apply_patch: bool,
}

impl Default for BuiltinTools {
    /// Every built-in tool offered.
    fn default() -> Self {
        Self {
            shell: true,
            apply_patch: true,
        }
    }
}

impl BuiltinTools {
    /// The `[features]` key that withholds the command tools (Codex's).
    pub const SHELL_FEATURE: &'static str = "shell_tool";
    /// The `[features]` key that withholds `apply_patch` (agentwire's own).
    pub const APPLY_PATCH_FEATURE: &'static str = "apply_patch_tool";

    /// Whether a call of the built-in tool `name` may run: the names [`offered`] leaves out
    /// when a switch is off are refused, whatever the model calls them by.
    pub fn allows(self, name: &str) -> bool {
        match name {
            SHELL | EXEC_COMMAND | SHELL_COMMAND | WRITE_STDIN => self.shell,
            APPLY_PATCH => self.apply_patch,
            _ => true,
        }
    }
}

/// What decides the tools of one model call (the default: chat-completions, no web search).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offer<'a> {
    /// Whether the call goes over the Responses API (else chat-completions).
    pub responses: bool,
    /// The model slug.
    pub model: &'a str,
    /// Whether a web search endpoint is configured.
    pub web_search: bool,
    /// Which of the command tools and `apply_patch` the thread offers.
    pub builtins: BuiltinTools,
}

/// Whether `model` is one of OpenAI's models that take `apply_patch` as a freeform tool
/// (GPT-5 and later, Codex models; not the open-weight `gpt-oss`).
pub fn freeform_patch(model: &str) -> bool {
    let model = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    !model.starts_with("gpt-oss")
        && (model.starts_with("gpt-5") || model.starts_with("gpt-6") || model.contains("codex"))
}

/// The built-in tools one model call offers.
pub fn offered(offer: Offer<'_>) -> Vec<ToolSpec> {
    let mut tools = match (offer.builtins.shell, offer.responses) {
        (false, _) => Vec::new(),
        (true, true) => vec![exec_command(), write_stdin()],
        (true, false) => vec![shell()],
    };
    if offer.builtins.apply_patch {
        tools.push(apply_patch(offer.responses && freeform_patch(offer.model)));
    }
    tools.push(ToolSpec {
        name: UPDATE_PLAN,
        description: PLAN_DESCRIPTION,
        parameters: plan_parameters(),
        freeform: None,
    });
    tools.push(view_image());
    if offer.web_search {
        tools.push(web_search());
    }
    tools
}

/// Every built-in tool in every form (for checks of the schemas).
#[cfg(test)]
pub fn all() -> Vec<ToolSpec> {
    vec![
        shell(),
        exec_command(),
        write_stdin(),
        apply_patch(false),
        apply_patch(true),
        ToolSpec {
            name: UPDATE_PLAN,
            description: PLAN_DESCRIPTION,
            parameters: plan_parameters(),
            freeform: None,
        },
        view_image(),
        web_search(),
    ]
}

/// The escalation members the command tools share.
fn escalation(properties: &mut serde_json::Map<String, Value>) {
    properties.insert(
        "sandbox_permissions".to_owned(),
        json!({
            "type": "string",
            "description": "`use_default` (the default) runs under the sandbox; \
                            `require_escalated` asks the user to run it without the sandbox.",
            "enum": ["use_default", "require_escalated"]
        }),
    );
    properties.insert(
        "justification".to_owned(),
        json!({
            "type": "string",
            "description": "With `require_escalated`: the question the user is asked, saying \
                            why the command must leave the sandbox."
        }),
    );
    properties.insert(
        "prefix_rule".to_owned(),
        json!({
            "type": "array",
            "description": "With `require_escalated`: the command prefix an approval could \
                            cover, e.g. [\"git\", \"push\"].",
            "items": {"type": "string"}
        }),
    );
}

/// `shell`: an argv run directly, as chat models know it.
fn shell() -> ToolSpec {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "command".to_owned(),
        json!({
            "type": "array",
            "description": "The program and its arguments, e.g. [\"bash\", \"-lc\", \"ls -la\"].",
            "items": {"type": "string"}
        }),
    );
    properties.insert(
        "workdir".to_owned(),
        json!({"type": "string", "description": "Directory to run in; the thread's working directory when left out."}),
    );
    properties.insert(
        "timeout_ms".to_owned(),
        json!({"type": "number", "description": "Time limit in milliseconds (60000 when left out)."}),
    );
    escalation(&mut properties);
    ToolSpec {
        name: SHELL,
        description: "Runs a command and returns its exit code and combined output. Writes are \
                      limited by the sandbox; to run outside it, set `sandbox_permissions` to \
                      `require_escalated` with a `justification`, and the user is asked.",
        parameters: json!({
            "type": "object",
            "properties": properties,
            "required": ["command"],
            "additionalProperties": false
        }),
        freeform: None,
    }
}

/// `exec_command`: a command line run by a shell, as the reference offers it.
fn exec_command() -> ToolSpec {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "cmd".to_owned(),
        json!({"type": "string", "description": "The command line to run."}),
    );
    properties.insert(
        "workdir".to_owned(),
        json!({"type": "string", "description": "Directory to run in; the thread's working directory when left out."}),
    );
    properties.insert(
        "shell".to_owned(),
        json!({"type": "string", "description": "The shell that runs `cmd` (bash when left out)."}),
    );
    properties.insert(
        "login".to_owned(),
        json!({"type": "boolean", "description": "Run the shell as a login shell."}),
    );
    properties.insert(
        "tty".to_owned(),
        json!({"type": "boolean", "description": "Accepted for compatibility; output always comes through pipes (stdin is a pipe too)."}),
    );
    properties.insert(
        "yield_time_ms".to_owned(),
        json!({"type": "number", "description": "How long to wait for the command before returning, in milliseconds (10000 when left out; 250 to 30000). A command still running then keeps running as a session."}),
    );
    properties.insert(
        "max_output_tokens".to_owned(),
        json!({"type": "number", "description": "Roughly how much output to return (10000 tokens when left out); the rest is cut from the middle."}),
    );
    escalation(&mut properties);
    ToolSpec {
        name: EXEC_COMMAND,
        description: "Runs a shell command and returns its exit code, wall time and combined \
                      output. If it is still running after `yield_time_ms`, you get the output \
                      so far and a `session_id`: it keeps running, and `write_stdin` sends it \
                      input or reads what it printed since. Writes are limited by the sandbox; \
                      to run outside it, set `sandbox_permissions` to `require_escalated` with \
                      a `justification`, and the user is asked.",
        parameters: json!({
            "type": "object",
            "properties": properties,
            "required": ["cmd"],
            "additionalProperties": false
        }),
        freeform: None,
    }
}

/// `write_stdin`: input to a command `exec_command` left running, and its output since.
fn write_stdin() -> ToolSpec {
    ToolSpec {
        name: WRITE_STDIN,
        description: "Writes to the standard input of a command that `exec_command` left \
                      running (its `session_id`), waits up to `yield_time_ms`, and returns \
                      what it printed since the last read, with its exit code once it has \
                      exited. Send empty `chars` to only read. Include a newline to submit a \
                      line.",
        parameters: json!({
            "type": "object",
            "properties": {
                "session_id": {"type": "number", "description": "The session, as `exec_command` returned it."},
                "chars": {"type": "string", "description": "Text to write to its stdin (may be empty)."},
                "yield_time_ms": {"type": "number", "description": "How long to wait for output, in milliseconds (250 when left out; 250 to 30000); returns early when the command exits."},
                "max_output_tokens": {"type": "number", "description": "Roughly how much output to return (10000 tokens when left out); the rest is cut from the middle."}
            },
            "required": ["session_id"],
            "additionalProperties": false
        }),
        freeform: None,
    }
}

/// The grammar of a patch, for the freeform `apply_patch` (Lark syntax).
pub const PATCH_GRAMMAR: &str = r#"start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"#;

/// The patch format, for the model.
const PATCH_FORMAT: &str = "Edits files. A patch looks like this:\n\
*** Begin Patch\n\
*** Add File: path/new.txt\n\
+first line of the new file\n\
*** Update File: path/old.txt\n\
*** Move to: path/renamed.txt   (optional)\n\
@@ a line near the change (optional)\n \
unchanged line\n\
-removed line\n\
+added line\n\
*** Delete File: path/gone.txt\n\
*** End Patch\n\
Paths are relative to the working directory. Give three lines of context around each \
change.";

/// `apply_patch`, freeform (the patch as raw text) or as a function of one `input`.
fn apply_patch(freeform: bool) -> ToolSpec {
    ToolSpec {
        name: APPLY_PATCH,
        description: PATCH_FORMAT,
        parameters: json!({
            "type": "object",
            "properties": {"input": {"type": "string", "description": "The whole patch, from `*** Begin Patch` to `*** End Patch`."}},
            "required": ["input"],
            "additionalProperties": false
        }),
        freeform: freeform.then_some(PATCH_GRAMMAR),
    }
}

/// `view_image`: attach a local image to the conversation.
fn view_image() -> ToolSpec {
    ToolSpec {
        name: VIEW_IMAGE,
        description: "Looks at an image file on this machine (PNG, JPEG, GIF or WebP): it is \
                      attached to your next input. The path is relative to the working \
                      directory unless absolute.",
        parameters: json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "The image file's path."}},
            "required": ["path"],
            "additionalProperties": false
        }),
        freeform: None,
    }
}

/// `web_search`: a query to the configured search endpoint.
fn web_search() -> ToolSpec {
    ToolSpec {
        name: WEB_SEARCH,
        description: "Searches the web and returns the top results (title, URL and a snippet \
                      each).",
        parameters: json!({
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to search for."}},
            "required": ["query"],
            "additionalProperties": false
        }),
        freeform: None,
    }
}

/// The JSON Schema of `update_plan`'s arguments (as Codex defines them).
fn plan_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "explanation": {"type": "string"},
            "plan": {
                "type": "array",
                "description": "The list of steps",
                "items": {
                    "type": "object",
                    "properties": {
                        "step": {"type": "string"},
                        "status": {
                            "type": "string",
                            "description": "One of: pending, in_progress, completed"
                        }
                    },
                    "required": ["step", "status"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["plan"],
        "additionalProperties": false
    })
}

/// What the model is told about `update_plan`.
const PLAN_DESCRIPTION: &str = "Keeps the plan of the task up to date. Give every step \
    in order, each with its status (`pending`, `in_progress` or `completed`; one step at a time \
    in progress), and optionally an explanation of what changed. Each call replaces the plan.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_valid_json_schema_objects() {
        for spec in all() {
            let parameters = &spec.parameters;
            assert_eq!(parameters["type"], "object", "{}", spec.name);
            assert!(parameters["required"].is_array(), "{}", spec.name);
            // Checked against the JSON Schema meta-schema (draft 2020-12 when undeclared).
            if let Err(error) = jsonschema::meta::validate(parameters) {
                panic!("{}: not a valid JSON Schema: {error}", spec.name);
            }
            assert!(
                jsonschema::options().build(parameters).is_ok(),
                "{}: does not compile",
                spec.name
            );
            let required = parameters["required"].as_array().into_iter().flatten();
            for name in required {
                let name = name.as_str().unwrap_or_default();
                assert!(
                    parameters["properties"].get(name).is_some(),
                    "{}: `{name}` is required but not a property",
                    spec.name
                );
            }
        }
        // The check can fail.
        assert!(jsonschema::meta::validate(&json!({"type": "objekt"})).is_err());
    }

    #[test]
    fn the_offer_follows_the_wire_and_the_model() {
        let names = |offer: Offer<'_>| offered(offer).iter().map(|s| s.name).collect::<Vec<_>>();
        let chat = Offer::default();
        assert_eq!(names(chat), [SHELL, APPLY_PATCH, UPDATE_PLAN, VIEW_IMAGE]);
        let codex = Offer {
            responses: true,
            model: "gpt-5.1-codex",
            web_search: true,
            builtins: BuiltinTools::default(),
        };
        assert_eq!(
            names(codex),
            [
                EXEC_COMMAND,
                WRITE_STDIN,
                APPLY_PATCH,
                UPDATE_PLAN,
                VIEW_IMAGE,
                WEB_SEARCH
            ]
        );
        let freeform = |offer| offered(offer).iter().any(|s| s.freeform.is_some());
        assert!(freeform(codex));
        assert!(!freeform(Offer {
            responses: false,
            ..codex
        }));
        assert!(!freeform(Offer {
            model: "gpt-oss:20b",
            ..codex
        }));
        assert!(!freeform(Offer {
            model: "qwen3-coder",
            ..codex
        }));
        // A thread that withholds them offers neither the command tools nor the patch tool.
        let bare = BuiltinTools {
            shell: false,
            apply_patch: false,
        };
        assert_eq!(
            names(Offer {
                builtins: bare,
                ..codex
            }),
            [UPDATE_PLAN, VIEW_IMAGE, WEB_SEARCH]
        );
        assert_eq!(
            names(Offer {
                builtins: BuiltinTools {
                    apply_patch: true,
                    ..bare
                },
                ..chat
            }),
            [APPLY_PATCH, UPDATE_PLAN, VIEW_IMAGE]
        );
        assert_eq!(
            names(Offer {
                builtins: BuiltinTools {
                    shell: true,
                    ..bare
                },
                ..chat
            }),
            [SHELL, UPDATE_PLAN, VIEW_IMAGE]
        );
    }
}
