//! The slash commands both front ends take, and the key bindings `/help` lists.
//!
//! Settings changes (`/model NAME`, `/approvals …`) go to the server with
//! `thread/settings/update`, so the status line shows them once the server has them; a server
//! without that method gets them with the next `turn/start` instead. `/diff` shows the last
//! `turn/diff/updated` the server sent for the thread: what the agent's turn changed, on the
//! server's machine, whether or not the directory is a git repository (and not the user's own
//! edits, which `git diff` would mix in).

use agentwire_protocol::Turn;
use serde_json::{Value, json};

use crate::connection::RpcError;
use crate::policy::{APPROVAL_NAMES, ApprovalPolicy, SANDBOX_NAMES, SandboxMode};
use crate::session::Session;
use crate::settings::InUse;
use crate::status::{Activity, Status};
use crate::transcript::Transcript;

/// A slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/new`: start a new thread.
    New,
    /// `/threads`: list recent threads.
    Threads,
    /// `/resume ID`: continue a thread.
    Resume(String),
    /// `/model`: list models; `/model NAME [EFFORT]`: use NAME (at EFFORT) for the next turns.
    Model {
        /// The model to use; `None` lists them.
        name: Option<String>,
        /// The reasoning effort to use with it.
        effort: Option<String>,
    },
    /// `/status`: the thread's settings and token usage.
    Status,
    /// `/diff`: the last turn's diff.
    Diff,
    /// `/approvals [POLICY] [SANDBOX]`: show or change the approval policy and sandbox.
    Approvals(Vec<String>),
    /// `/compact`: summarise the thread to free context.
    Compact,
    /// `/review`: review the uncommitted changes.
    Review,
    /// `/init`: have the agent write an AGENTS.md.
    Init,
    /// `/mcp`: the MCP servers and their tools.
    Mcp,
    /// `/help`.
    Help,
    /// `/quit` or `/exit`.
    Quit,
}

/// What running a command asks of the front end.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Exit the client.
    pub quit: bool,
    /// The command started a turn (a compaction, a review, `/init`): its notifications follow.
    pub turn_started: bool,
}

/// The command `text` names: `Ok(None)` when it is not a command (it does not start with `/`),
/// an error naming the command when it is not one this client knows or lacks its argument.
pub fn parse(text: &str) -> Result<Option<Command>, String> {
    let Some(rest) = text.strip_prefix('/') else {
        return Ok(None);
    };
    let mut words = rest.split_whitespace();
    let name = words.next().unwrap_or_default();
    let argument = words.next().map(str::to_owned);
    Ok(Some(match name {
        "new" => Command::New,
        "threads" => Command::Threads,
        "resume" => Command::Resume(
            argument.ok_or_else(|| "/resume needs a thread id (see /threads)".to_owned())?,
        ),
        "model" => Command::Model {
            name: argument,
            effort: words.next().map(str::to_owned),
        },
        "status" => Command::Status,
        "diff" => Command::Diff,
        "approvals" | "permissions" => Command::Approvals(
            argument
                .into_iter()
                .chain(words.map(str::to_owned))
                .collect(),
        ),
        "compact" => Command::Compact,
        "review" => Command::Review,
        "init" => Command::Init,
        "mcp" => Command::Mcp,
        "help" => Command::Help,
        "quit" | "exit" => Command::Quit,
        other => return Err(format!("/{other} is not a command; /help lists them")),
    }))
}

/// The help text of the commands, one per line.
pub const HELP: &[&str] = &[
    "/new — start a new thread",
    "/threads — list recent threads",
    "/resume ID — continue a thread",
    "/model [NAME [EFFORT]] — list models, or switch to NAME (at EFFORT: low, high …)",
    "/status — thread, model, effort, cwd, approvals, sandbox and token usage",
    "/diff — what the last turn changed (the server's turn diff)",
    "/approvals [POLICY] [SANDBOX] — show or change the approval policy and sandbox",
    "/compact — summarise the thread so far, to free context",
    "/review — have the agent review the uncommitted changes",
    "/init — have the agent write an AGENTS.md for this repository",
    "/mcp — the MCP servers, their state and their tools",
    "/quit — exit (or Ctrl-C twice)",
];

/// The key bindings of the full screen, one per line (`/help` lists them after the commands).
pub const KEYS: &[&str] = &[
    "Enter — send the message (while a turn runs: steer it)",
    "Ctrl-C — interrupt the running turn; twice within 3 s exits (Ctrl-D too)",
    "PageUp / PageDown — scroll the transcript",
    "Backspace — delete the last character",
    "y / a / n / c — answer an approval: yes, yes for the session, no, no and stop the turn",
];

/// What `/init` asks the agent (in the thread's working directory).
pub const INIT_PROMPT: &str = "Write a file named AGENTS.md at the root of this repository: \
a short guide, titled \"Repository Guidelines\", for coding agents and people who work on it. \
Look around first (the layout, build and package files, tests, CI configuration, recent \
commits), then describe what someone new needs to know here: where the code, tests and assets \
live; the exact commands to build, test, lint and run it; the coding style and naming \
conventions in use; how tests are organised and run; and how commits and pull requests are \
written. Be specific to this repository, with real paths and commands. Use Markdown with a \
heading per section and keep it between 200 and 400 words.";

/// Runs `command`, reporting into `transcript`.
pub async fn run(session: &mut Session, transcript: &mut Transcript, command: Command) -> Outcome {
    let mut outcome = Outcome::default();
    match command {
        Command::New => match session.start_thread().await {
            Ok(id) => {
                transcript.clear();
                transcript.notice(format!("new thread {id}"));
            }
            Err(e) => transcript.error(format!("/new: {e}")),
        },
        Command::Threads => match session.list_threads().await {
            Ok(threads) if threads.is_empty() => transcript.notice("no threads yet"),
            Ok(threads) => {
                for (id, preview) in threads {
                    transcript.notice(format!("{id}  {preview}"));
                }
            }
            Err(e) => transcript.error(format!("/threads: {e}")),
        },
        Command::Resume(id) => match session.resume(&id).await {
            Ok(result) => {
                transcript.clear();
                transcript.notice(format!("resumed thread {id}"));
                let turns: Vec<Turn> = result
                    .pointer("/thread/turns")
                    .cloned()
                    .and_then(|turns| serde_json::from_value(turns).ok())
                    .unwrap_or_default();
                transcript.load_turns(&turns);
                if let Some(model) = result.get("model").and_then(Value::as_str) {
                    transcript.notice(format!("model {model}"));
                }
            }
            Err(e) => transcript.error(format!("/resume {id}: {e}")),
        },
        Command::Model {
            name: Some(name),
            effort,
        } => {
            let mut changes = json!({"model": name});
            if let Some(effort) = &effort {
                changes["effort"] = json!(effort);
            }
            session.model = Some(name.clone());
            let what = match &effort {
                Some(effort) => format!("{name} at {effort} effort"),
                None => name,
            };
            change_settings(session, transcript, "/model", changes, &what).await;
        }
        Command::Model { name: None, .. } => match session.list_models().await {
            Ok(models) => {
                for (id, default) in models {
                    let mark = if default { " (default)" } else { "" };
                    transcript.notice(format!("{id}{mark}"));
                }
            }
            Err(e) => transcript.error(format!("/model: {e}")),
        },
        Command::Status => {
            // Before the first thread: what a new thread will ask for.
            let wanted = InUse {
                model: session.model.clone(),
                cwd: session.cwd.clone(),
                approval: session.approval_policy.map(|p| p.wire().to_owned()),
                sandbox: session.sandbox.map(|s| s.name().to_owned()),
                ..InUse::default()
            };
            let status = Status {
                thread: session.thread_id.as_deref(),
                in_use: match session.thread_id {
                    Some(_) => &session.in_use,
                    None => &wanted,
                },
                default_effort: session.default_effort(),
                activity: Activity::Ready,
                usage: transcript.token_usage.as_ref(),
            };
            for line in status.report() {
                transcript.notice(line);
            }
        }
        Command::Diff => transcript.show_turn_diff(),
        Command::Approvals(words) => approvals(session, transcript, &words).await,
        Command::Compact | Command::Review | Command::Init if transcript.running_turn.is_some() => {
            transcript.error("a turn is running: wait for it to end, or Ctrl-C to interrupt it");
        }
        Command::Compact => match session.compact().await {
            Ok(()) => {
                transcript.notice("compacting the thread…");
                outcome.turn_started = true;
            }
            Err(e) => transcript.error(format!("/compact: {e}")),
        },
        Command::Review => match session.review_uncommitted().await {
            Ok(()) => {
                transcript.notice("reviewing the uncommitted changes…");
                outcome.turn_started = true;
            }
            Err(e) => transcript.error(format!("/review: {e}")),
        },
        Command::Init => {
            let cwd = session.in_use.cwd.clone().or_else(|| session.cwd.clone());
            let existing = match cwd {
                Some(cwd) => {
                    let path = format!("{}/AGENTS.md", cwd.trim_end_matches('/'));
                    session.is_file(&path).await.then_some(path)
                }
                None => None,
            };
            match existing {
                Some(path) => {
                    transcript.notice(format!("{path} already exists; /init leaves it as it is"))
                }
                None => match session.send(INIT_PROMPT, None).await {
                    Ok(()) => outcome.turn_started = true,
                    Err(e) => transcript.error(format!("/init: {e}")),
                },
            }
        }
        Command::Mcp => match session.mcp_servers().await {
            Ok(servers) if servers.is_empty() => transcript.notice(
                "no MCP servers are configured (add them as [mcp_servers.NAME] in config.toml)",
            ),
            Ok(servers) => {
                for server in &servers {
                    transcript.notice(describe_mcp_server(server));
                }
            }
            Err(e) => transcript.error(format!("/mcp: {e}")),
        },
        Command::Help => {
            transcript.notice("commands:");
            for line in HELP {
                transcript.notice(format!("  {line}"));
            }
            transcript.notice("keys:");
            for line in KEYS {
                transcript.notice(format!("  {line}"));
            }
        }
        Command::Quit => outcome.quit = true,
    }
    outcome
}

/// `/approvals`: with no words, what is in force and how to change it; otherwise each word is
/// an approval policy or a sandbox mode, applied to the thread's next turns (and to new
/// threads).
async fn approvals(session: &mut Session, transcript: &mut Transcript, words: &[String]) {
    if words.is_empty() {
        let unknown = || "unknown".to_owned();
        transcript.notice(format!(
            "approvals {} · sandbox {}",
            session.in_use.approval.clone().unwrap_or_else(unknown),
            session.in_use.sandbox.clone().unwrap_or_else(unknown)
        ));
        transcript.notice(format!(
            "/approvals POLICY and/or SANDBOX changes them: POLICY is one of {}; SANDBOX one of {}",
            APPROVAL_NAMES.join(", "),
            SANDBOX_NAMES.join(", ")
        ));
        return;
    }
    let mut changes = json!({});
    let mut said = Vec::new();
    for word in words {
        if let Some(policy) = ApprovalPolicy::parse(word) {
            changes["approvalPolicy"] = json!(policy.wire());
            session.approval_policy = Some(policy);
            said.push(format!("approvals {}", policy.wire()));
        } else if let Some(mode) = SandboxMode::parse(word) {
            changes["sandboxPolicy"] = mode.policy();
            session.sandbox = Some(mode);
            said.push(format!("sandbox {}", mode.name()));
        } else {
            transcript.error(format!(
                "/approvals: {word:?} is neither an approval policy ({}) nor a sandbox ({})",
                APPROVAL_NAMES.join(", "),
                SANDBOX_NAMES.join(", ")
            ));
            return;
        }
    }
    change_settings(session, transcript, "/approvals", changes, &said.join(", ")).await;
}

/// Sends `changes` with `thread/settings/update`; a server that does not take it gets them
/// with the next turn instead.
async fn change_settings(
    session: &mut Session,
    transcript: &mut Transcript,
    command: &str,
    changes: Value,
    what: &str,
) {
    if session.thread_id.is_none() {
        transcript.notice(format!("new threads use {what}"));
        return;
    }
    match session.update_settings(changes.clone()).await {
        Ok(()) => transcript.notice(format!("the next turns use {what}")),
        // No such method, or switched off on this server.
        Err(RpcError { code, message })
            if code == -32601 || (code == -32600 && message.contains("switched off")) =>
        {
            session.defer(changes);
            transcript.notice(format!(
                "the next turns use {what} (sent with the next turn: {message})"
            ));
        }
        Err(e) => transcript.error(format!("{command}: {e}")),
    }
}

/// One line about an MCP server of `mcpServerStatus/list`: its name, state, tools and error.
fn describe_mcp_server(server: &Value) -> String {
    let text = |key: &str| server.get(key).and_then(Value::as_str);
    let mut line = format!(
        "{}: {}",
        text("name").unwrap_or("(unnamed)"),
        text("runtimeStatus").unwrap_or("state unknown")
    );
    if let Some(auth) = text("authStatus").filter(|a| *a == "notLoggedIn") {
        line.push_str(&format!(" ({auth})"));
    }
    // By name: the order of a JSON object's members depends on how serde_json was built.
    let mut tools: Vec<&str> = server
        .get("tools")
        .and_then(Value::as_object)
        .map(|tools| tools.keys().map(String::as_str).collect())
        .unwrap_or_default();
    tools.sort_unstable();
    if !tools.is_empty() {
        const SHOWN: usize = 8;
        let mut names = tools[..tools.len().min(SHOWN)].join(", ");
        if tools.len() > SHOWN {
            names.push_str(&format!(", … {} more", tools.len() - SHOWN));
        }
        line.push_str(&format!(" · {} tools: {names}", tools.len()));
    }
    if let Some(error) = text("toolsError") {
        line.push_str(&format!(" — {error}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_and_mistakes_name_the_command() {
        assert_eq!(parse("hello"), Ok(None));
        assert_eq!(parse("/new"), Ok(Some(Command::New)));
        assert_eq!(
            parse("/resume abc"),
            Ok(Some(Command::Resume("abc".into())))
        );
        assert_eq!(
            parse("/model"),
            Ok(Some(Command::Model {
                name: None,
                effort: None
            }))
        );
        assert_eq!(
            parse("/model o4 high "),
            Ok(Some(Command::Model {
                name: Some("o4".into()),
                effort: Some("high".into())
            }))
        );
        assert_eq!(
            parse("/approvals never  read-only"),
            Ok(Some(Command::Approvals(vec![
                "never".into(),
                "read-only".into()
            ])))
        );
        assert_eq!(parse("/approvals"), Ok(Some(Command::Approvals(vec![]))));
        for (text, command) in [
            ("/status", Command::Status),
            ("/diff", Command::Diff),
            ("/compact", Command::Compact),
            ("/review", Command::Review),
            ("/init", Command::Init),
            ("/mcp", Command::Mcp),
        ] {
            assert_eq!(parse(text), Ok(Some(command)), "{text}");
        }
        assert!(
            parse("/resume")
                .expect_err("needs an id")
                .contains("/resume")
        );
        assert!(parse("/frob").expect_err("unknown").contains("/frob"));
    }

    #[test]
    fn an_mcp_server_line_names_its_state_tools_and_error() {
        let server = json!({"name": "docs", "runtimeStatus": "connected",
            "authStatus": "unsupported", "tools": {"search": {}, "fetch": {}}});
        assert_eq!(
            describe_mcp_server(&server),
            "docs: connected · 2 tools: fetch, search"
        );
        let broken = json!({"name": "broken", "runtimeStatus": "failed",
            "authStatus": "notLoggedIn", "tools": {}, "toolsError": "no such file"});
        assert_eq!(
            describe_mcp_server(&broken),
            "broken: failed (notLoggedIn) — no such file"
        );
        let many: serde_json::Map<String, Value> =
            (0..10).map(|i| (format!("t{i}"), json!({}))).collect();
        let line = describe_mcp_server(&json!({"name": "big", "tools": many}));
        assert!(
            line.ends_with("10 tools: t0, t1, t2, t3, t4, t5, t6, t7, … 2 more"),
            "{line}"
        );
    }
}
