//! The tools the model may call, and how a call's JSON arguments become a typed invocation.
//!
//! - `shell` runs a command ([`exec`]) under the thread's sandbox policy ([`sandbox`]); it
//!   becomes a `commandExecution` item whose output streams as
//!   `item/commandExecution/outputDelta`.
//! - `apply_patch` edits files ([`patch`]); it becomes a `fileChange` item carrying a unified
//!   diff per file.
//! - `update_plan` replaces the model's plan of its task ([`plan`]); it becomes
//!   `turn/plan/updated`, no item.
//!
//! Whether a call needs the client's approval first is decided by the turn engine from the
//! approval policy; this module only describes and parses.

pub(crate) mod actions;
pub(crate) mod exec;
pub(crate) mod patch;
pub(crate) mod plan;
pub(crate) mod safe_commands;
pub mod sandbox;

use serde::Deserialize;
use serde_json::{Value, json};

/// The name of the shell tool.
pub(crate) const SHELL: &str = "shell";
/// The name of the patch tool.
pub(crate) const APPLY_PATCH: &str = "apply_patch";

/// A tool as the model sees it: a name, what it does and its JSON Schema parameters (the
/// chat-completions `tools[].function` object).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolSpec {
    /// The function name.
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

/// The tools every turn offers.
pub(crate) fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: SHELL,
            description: "Runs a shell command and returns its combined output and exit code. \
                          `command` is a command line for `bash -c`, or an argv array run \
                          directly. Writes are limited by the sandbox; set \
                          `sandbox_permissions` to `require_escalated` with a `justification` \
                          to ask the user to run it outside the sandbox.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {
                        "anyOf": [
                            {"type": "string"},
                            {"type": "array", "items": {"type": "string"}, "minItems": 1}
                        ]
                    },
                    "workdir": {"type": "string", "description": "Working directory; the thread's cwd when left out."},
                    "timeout_ms": {"type": "integer", "minimum": 1},
                    "sandbox_permissions": {"type": "string", "enum": ["use_default", "require_escalated"]},
                    "justification": {"type": "string"}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: APPLY_PATCH,
            description: "Edits files with a patch in this format:\n*** Begin Patch\n\
                          *** Add File: path\n+line\n*** Update File: path\n@@ context\n \
                          kept\n-removed\n+added\n*** Delete File: path\n*** End Patch\n\
                          Paths are relative to the working directory.",
            parameters: json!({
                "type": "object",
                "properties": {"input": {"type": "string", "description": "The whole patch."}},
                "required": ["input"],
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: plan::UPDATE_PLAN,
            description: plan::DESCRIPTION,
            parameters: plan::parameters(),
        },
    ]
}

/// A tool call, checked and typed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Invocation {
    /// Run a command.
    Shell(ShellArgs),
    /// Apply a patch (the patch text, not yet parsed).
    ApplyPatch {
        /// The patch.
        input: String,
    },
    /// Replace the plan.
    UpdatePlan(plan::PlanArgs),
}

/// The arguments of a `shell` call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShellArgs {
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
}

/// Whether a command asks to leave the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SandboxPermissions {
    /// Run under the thread's sandbox policy.
    UseDefault,
    /// Run without the sandbox, if the user approves.
    RequireEscalated,
}

/// A command as the model gave it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum CommandLine {
    /// A line for `bash -c`.
    Line(String),
    /// A program and its arguments.
    Argv(Vec<String>),
}

impl CommandLine {
    /// The argv to run.
    pub(crate) fn argv(&self) -> Vec<String> {
        match self {
            CommandLine::Line(line) => vec!["bash".to_owned(), "-c".to_owned(), line.clone()],
            CommandLine::Argv(argv) => argv.clone(),
        }
    }

    /// The command as one line, for the item and the approval request.
    pub(crate) fn display(&self) -> String {
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

/// The JSON arguments of a tool call the model made; empty arguments mean `{}`.
pub(crate) fn call_arguments(arguments: &str) -> Result<Value, serde_json::Error> {
    if arguments.trim().is_empty() {
        Ok(Value::Object(serde_json::Map::new()))
    } else {
        serde_json::from_str(arguments)
    }
}

/// Checks a call's name and arguments. The error is a sentence for the model (it is sent
/// back as the call's result, so the model can correct itself).
pub(crate) fn parse(name: &str, arguments: &str) -> Result<Invocation, String> {
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    match name {
        SHELL => {
            let args: ShellArgs = serde_json::from_str(arguments)
                .map_err(|e| format!("invalid arguments for `{SHELL}`: {e}"))?;
            if matches!(&args.command, CommandLine::Argv(argv) if argv.is_empty())
                || matches!(&args.command, CommandLine::Line(line) if line.trim().is_empty())
            {
                return Err(format!(
                    "invalid arguments for `{SHELL}`: `command` is empty"
                ));
            }
            Ok(Invocation::Shell(args))
        }
        APPLY_PATCH => {
            let args: PatchArgs = serde_json::from_str(arguments)
                .map_err(|e| format!("invalid arguments for `{APPLY_PATCH}`: {e}"))?;
            Ok(Invocation::ApplyPatch { input: args.input })
        }
        plan::UPDATE_PLAN => {
            let args: plan::PlanArgs = serde_json::from_str(arguments)
                .map_err(|e| format!("invalid arguments for `{}`: {e}", plan::UPDATE_PLAN))?;
            Ok(Invocation::UpdatePlan(args))
        }
        other => Err(format!(
            "unknown tool `{other}`; the tools are `{SHELL}`, `{APPLY_PATCH}` and `{}`",
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
    fn specs_are_valid_json_schema_objects() {
        for spec in specs() {
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert!(spec.parameters["required"].is_array(), "{}", spec.name);
        }
    }
}
