//! agentwire-tools: the tools a model may call, as the model sees them ([`specs`]: names,
//! argument schemas, which are offered in which shape) and as they run: how a call's arguments
//! become a typed [`Invocation`], and the code that carries it out.
//!
//! - `exec_command` / `shell` run a command ([`exec`]) under the thread's sandbox policy
//!   ([`sandbox`]); it becomes a `commandExecution` item whose output streams as
//!   `item/commandExecution/outputDelta`. An `exec_command` still running when its yield time
//!   is up goes on as a session of the thread ([`exec_sessions`]), which `write_stdin` writes
//!   to and reads from.
//! - `apply_patch` edits files ([`patch`]); it becomes a `fileChange` item carrying a unified
//!   diff per file.
//! - `update_plan` replaces the model's plan of its task ([`plan`]); it becomes a `plan` item
//!   (streamed as `item/plan/delta`) and `turn/plan/updated`.
//! - `view_image` attaches a local image to the model's next input; it becomes an `imageView`
//!   item.
//! - `web_search` asks the configured search endpoint ([`web_search`]); it becomes a
//!   `webSearch` item.
//!
//! Whether a call needs the client's approval first is decided by the engine's turns from the
//! approval policy; this crate describes, parses and runs. It uses nothing of the engine but
//! `agentwire-support`; it is an internal crate of agentwire, whose API follows the engine's
//! needs, not semver.

pub mod actions;
pub mod exec;
pub mod exec_sessions;
pub mod patch;
pub mod plan;
pub mod safe_commands;
pub mod sandbox;
pub mod specs;
pub mod truncate;
pub mod web_search;

use serde::Deserialize;
use serde_json::Value;

// The names a call is dispatched on.
pub use specs::{
    APPLY_PATCH, BUILTIN_NAMES, EXEC_COMMAND, SHELL, SHELL_COMMAND, VIEW_IMAGE, WEB_SEARCH,
    WRITE_STDIN,
};

/// A tool call, checked and typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    /// Run a command.
    Shell(ShellArgs),
    /// Write to an exec session and read what it printed since.
    WriteStdin(exec_sessions::WriteStdinArgs),
    /// Apply a patch (the patch text, not yet parsed).
    ApplyPatch {
        /// The patch.
        input: String,
    },
    /// Replace the plan.
    UpdatePlan(plan::PlanArgs),
    /// Attach a local image.
    ViewImage {
        /// The path as the model gave it.
        path: String,
    },
    /// Search the web.
    WebSearch {
        /// The query.
        query: String,
    },
}

/// The arguments of a `shell` call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    /// The command: a line for `bash -c`, or an argv.
    pub command: CommandLine,
    /// Working directory, relative to the thread's cwd or absolute.
    #[serde(default)]
    pub workdir: Option<String>,
    /// Time limit in milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// `require_escalated` asks to run outside the sandbox (needs approval).
    #[serde(default)]
    pub sandbox_permissions: Option<SandboxPermissions>,
    /// Why the model asks for escalation, shown to the user.
    #[serde(default)]
    pub justification: Option<String>,
    /// The prefix an approval could cover; accepted, not used (approvals cover one command).
    #[serde(default)]
    pub prefix_rule: Option<Vec<String>>,
    /// How much output the model wants back, in bytes (from `max_output_tokens`).
    #[serde(skip)]
    pub max_output_bytes: Option<usize>,
    /// Set for `exec_command`: how long to wait before returning while the command goes on
    /// as an exec session (`yield_time_ms`, clamped).
    #[serde(skip)]
    pub yield_time: Option<std::time::Duration>,
}

/// The arguments of an `exec_command` call (the reference's shape).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecCommandArgs {
    cmd: String,
    #[serde(default)]
    workdir: Option<String>,
    #[serde(default)]
    shell: Option<String>,
    #[serde(default)]
    login: Option<bool>,
    #[serde(default)]
    tty: Option<bool>,
    #[serde(default)]
    yield_time_ms: Option<f64>,
    #[serde(default)]
    max_output_tokens: Option<f64>,
    #[serde(default)]
    sandbox_permissions: Option<SandboxPermissions>,
    #[serde(default)]
    justification: Option<String>,
    #[serde(default)]
    prefix_rule: Option<Vec<String>>,
}

/// The most output bytes a call (or `tool_output_token_limit`) may ask for.
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Bytes of text per token (a rough measure, for budgets given in tokens).
pub const BYTES_PER_TOKEN: usize = 4;

impl ExecCommandArgs {
    /// The call as a `shell` run: `cmd` by bash (or the named shell, `-lc` for a login
    /// shell).
    fn into_shell(self) -> ShellArgs {
        let login = self.login == Some(true);
        let shell = self
            .shell
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "bash");
        let command = match (shell, login) {
            (None, false) => CommandLine::Line(self.cmd),
            (shell, login) => CommandLine::Argv(vec![
                shell.unwrap_or("bash").to_owned(),
                if login { "-lc" } else { "-c" }.to_owned(),
                self.cmd,
            ]),
        };
        let max_output_bytes = output_budget(self.max_output_tokens);
        // Output comes through pipes whatever `tty` says.
        let _ = self.tty;
        let yield_time =
            exec_sessions::yield_time(self.yield_time_ms, exec_sessions::EXEC_YIELD_DEFAULT);
        ShellArgs {
            command,
            workdir: self.workdir,
            timeout_ms: None,
            sandbox_permissions: self.sandbox_permissions,
            justification: self.justification,
            prefix_rule: self.prefix_rule,
            max_output_bytes,
            yield_time: Some(yield_time),
        }
    }
}

/// The bytes of output a model asks for with `max_output_tokens` (bounded); `None` when it
/// gave no usable number.
pub fn output_budget(max_output_tokens: Option<f64>) -> Option<usize> {
    max_output_tokens
        .filter(|t| t.is_finite() && *t > 0.0)
        .map(|t| {
            // Bounded first, so the conversion cannot wrap.
            let bytes = (t * BYTES_PER_TOKEN as f64).min(MAX_OUTPUT_BYTES as f64);
            bytes as usize
        })
}

/// Whether a command asks to leave the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxPermissions {
    /// Run under the thread's sandbox policy.
    UseDefault,
    /// Run without the sandbox, if the user approves.
    RequireEscalated,
}

/// A command as the model gave it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum CommandLine {
    /// A line for `bash -c`.
    Line(String),
    /// A program and its arguments.
    Argv(Vec<String>),
}

impl CommandLine {
    /// The argv to run.
    pub fn argv(&self) -> Vec<String> {
        match self {
            CommandLine::Line(line) => vec!["bash".to_owned(), "-c".to_owned(), line.clone()],
            CommandLine::Argv(argv) => argv.clone(),
        }
    }

    /// The command as one line, for the item and the approval request.
    pub fn display(&self) -> String {
        match self {
            CommandLine::Line(line) => line.clone(),
            CommandLine::Argv(argv) => argv
                .iter()
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// `arg` quoted for a POSIX shell when it needs it.
fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchArgs {
    input: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathArgs {
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    query: String,
}

/// The JSON arguments of a tool call the model made; empty arguments mean `{}`.
pub fn call_arguments(arguments: &str) -> Result<Value, serde_json::Error> {
    if arguments.trim().is_empty() {
        Ok(Value::Object(serde_json::Map::new()))
    } else {
        serde_json::from_str(arguments)
    }
}

/// `arguments` as `T`; the error names the tool.
fn typed<T: serde::de::DeserializeOwned>(name: &str, arguments: &str) -> Result<T, String> {
    serde_json::from_str(arguments).map_err(|e| format!("invalid arguments for `{name}`: {e}"))
}

/// Checks a call's name and arguments. The error is a sentence for the model (it is sent
/// back as the call's result, so the model can correct itself).
///
/// Both shapes of the command and patch tools are accepted whichever was offered: `shell`
/// (`command` an argv or a line), `shell_command` (`command` a line) and `exec_command`
/// (`cmd`); `apply_patch` as JSON `{"input": …}` or as the raw patch (the freeform tool).
pub fn parse(name: &str, arguments: &str) -> Result<Invocation, String> {
    if name == APPLY_PATCH && !arguments.trim_start().starts_with('{') {
        if arguments.trim().is_empty() {
            return Err(format!(
                "invalid arguments for `{APPLY_PATCH}`: the patch is empty"
            ));
        }
        return Ok(Invocation::ApplyPatch {
            input: arguments.to_owned(),
        });
    }
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    match name {
        SHELL | SHELL_COMMAND | EXEC_COMMAND => {
            let args: ShellArgs = if name == EXEC_COMMAND {
                let args: ExecCommandArgs = typed(name, arguments)?;
                if args.cmd.trim().is_empty() {
                    return Err(format!("invalid arguments for `{name}`: `cmd` is empty"));
                }
                args.into_shell()
            } else {
                typed(name, arguments)?
            };
            if matches!(&args.command, CommandLine::Argv(argv) if argv.is_empty())
                || matches!(&args.command, CommandLine::Line(line) if line.trim().is_empty())
            {
                return Err(format!(
                    "invalid arguments for `{name}`: `command` is empty"
                ));
            }
            Ok(Invocation::Shell(args))
        }
        WRITE_STDIN => Ok(Invocation::WriteStdin(typed(name, arguments)?)),
        APPLY_PATCH => {
            let args: PatchArgs = typed(name, arguments)?;
            Ok(Invocation::ApplyPatch { input: args.input })
        }
        plan::UPDATE_PLAN => Ok(Invocation::UpdatePlan(typed(name, arguments)?)),
        VIEW_IMAGE => {
            let args: PathArgs = typed(name, arguments)?;
            if args.path.trim().is_empty() {
                return Err(format!(
                    "invalid arguments for `{VIEW_IMAGE}`: `path` is empty"
                ));
            }
            Ok(Invocation::ViewImage { path: args.path })
        }
        WEB_SEARCH => {
            let args: QueryArgs = typed(name, arguments)?;
            if args.query.trim().is_empty() {
                return Err(format!(
                    "invalid arguments for `{WEB_SEARCH}`: `query` is empty"
                ));
            }
            Ok(Invocation::WebSearch { query: args.query })
        }
        other => Err(format!(
            "unknown tool `{other}`; the built-in tools are `{EXEC_COMMAND}` (or `{SHELL}`), \
             `{WRITE_STDIN}`, `{APPLY_PATCH}`, `{}`, `{VIEW_IMAGE}` and, when offered, `{WEB_SEARCH}`",
            plan::UPDATE_PLAN
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_command_forms_and_explains_bad_calls() {
        let Ok(Invocation::Shell(line)) = parse(SHELL, r#"{"command":"ls -l"}"#) else {
            panic!("line form");
        };
        assert_eq!(line.command.argv(), ["bash", "-c", "ls -l"]);
        let Ok(Invocation::Shell(argv)) = parse(SHELL, r#"{"command":["echo","a b"]}"#) else {
            panic!("argv form");
        };
        assert_eq!(argv.command.display(), "echo 'a b'");
        assert!(parse(SHELL, r#"{"command":[]}"#).is_err());
        assert!(parse(SHELL, r#"{"cmd":"ls"}"#).is_err_and(|e| e.contains("unknown field")));
        assert!(parse("rm_rf", "{}").is_err_and(|e| e.contains("unknown tool `rm_rf`")));
        assert!(
            parse(
                plan::UPDATE_PLAN,
                r#"{"plan":[{"step":"a","status":"done"}]}"#
            )
            .is_err_and(|e| e.contains("unknown variant `done`"))
        );
        assert!(parse(plan::UPDATE_PLAN, "not json").is_err_and(|e| e.contains("`update_plan`")));
        assert!(matches!(
            parse(plan::UPDATE_PLAN, r#"{"plan":[]}"#),
            Ok(Invocation::UpdatePlan(args)) if args.plan.is_empty()
        ));
        assert_eq!(
            parse(APPLY_PATCH, r#"{"input":"x"}"#),
            Ok(Invocation::ApplyPatch {
                input: "x".to_owned()
            })
        );
    }

    #[test]
    fn both_command_shapes_and_both_patch_forms_are_accepted() {
        let Ok(Invocation::Shell(exec)) = parse(
            EXEC_COMMAND,
            r#"{"cmd":"ls -l","workdir":"src","yield_time_ms":500,"tty":true,"max_output_tokens":10}"#,
        ) else {
            panic!("exec_command");
        };
        assert_eq!(exec.command.argv(), ["bash", "-c", "ls -l"]);
        assert_eq!(exec.workdir.as_deref(), Some("src"));
        assert_eq!(exec.max_output_bytes, Some(40));
        assert_eq!(exec.yield_time, Some(std::time::Duration::from_millis(500)));
        let Ok(Invocation::Shell(login)) =
            parse(EXEC_COMMAND, r#"{"cmd":"ls","login":true,"shell":"zsh"}"#)
        else {
            panic!("login shell");
        };
        assert_eq!(login.command.argv(), ["zsh", "-lc", "ls"]);
        let Ok(Invocation::Shell(escalated)) = parse(
            SHELL,
            r#"{"command":["git","push"],"sandbox_permissions":"require_escalated",
                "justification":"push?","prefix_rule":["git","push"]}"#,
        ) else {
            panic!("shell with escalation");
        };
        assert_eq!(
            escalated.sandbox_permissions,
            Some(SandboxPermissions::RequireEscalated)
        );
        assert!(matches!(
            parse(SHELL_COMMAND, r#"{"command":"pwd"}"#),
            Ok(Invocation::Shell(_))
        ));
        assert!(
            parse(EXEC_COMMAND, r#"{"cmd":"  "}"#).is_err_and(|e| e.contains("`cmd` is empty"))
        );
        assert!(
            parse(EXEC_COMMAND, r#"{"command":"ls"}"#).is_err_and(|e| e.contains("unknown field"))
        );
        let raw = "*** Begin Patch\n*** Delete File: a\n*** End Patch\n";
        assert_eq!(
            parse(APPLY_PATCH, raw),
            Ok(Invocation::ApplyPatch {
                input: raw.to_owned()
            })
        );
        assert!(parse(APPLY_PATCH, "  ").is_err());
        assert_eq!(
            parse(VIEW_IMAGE, r#"{"path":"a.png"}"#),
            Ok(Invocation::ViewImage {
                path: "a.png".to_owned()
            })
        );
        assert!(parse(VIEW_IMAGE, r#"{"path":""}"#).is_err());
        assert_eq!(
            parse(WEB_SEARCH, r#"{"query":"rust"}"#),
            Ok(Invocation::WebSearch {
                query: "rust".to_owned()
            })
        );
        assert!(parse(WEB_SEARCH, r#"{"q":"rust"}"#).is_err_and(|e| e.contains("`web_search`")));
    }
}
