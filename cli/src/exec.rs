//! `agentwire exec PROMPT`: one turn, non-interactive, against an app-server child.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agentwire_client::server_requests::{ServerRequest, handler_fn};
use agentwire_client::{Client, ClientOptions, Notification};
use agentwire_protocol::methods::{
    AgentMessageDelta, ThreadStart, TurnCompleted, TurnInterrupt, TurnStart,
};
use agentwire_protocol::{TurnInterruptParams, TurnStatus};
use clap::{Args, ValueEnum};
use serde_json::{Value, json};

/// Exit status of a turn that was interrupted (as a shell reports SIGINT).
const INTERRUPTED: u8 = 130;
/// The longest prompt read from stdin.
const MAX_STDIN_PROMPT: u64 = 16 * 1024 * 1024;

/// `agentwire exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The prompt; `-` reads it from stdin.
    prompt: String,
    /// Print every notification of the turn as one JSON line (`{"method", "params"}`) instead
    /// of the agent's text.
    #[arg(long)]
    json: bool,
    /// The approval policy of the turn.
    #[arg(long, value_enum, value_name = "POLICY")]
    approve: Option<Approve>,
    /// Accept every approval the agent asks for (otherwise each is declined).
    #[arg(long, short = 'y')]
    yes: bool,
    /// The model to use.
    #[arg(long, short = 'm')]
    model: Option<String>,
    /// The working directory of the turn (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The sandbox commands run in.
    #[arg(long, short = 's', value_enum, value_name = "MODE")]
    sandbox: Option<Sandbox>,
}

/// `--approve`: when the agent asks before acting.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Approve {
    /// Never ask; what would need approval fails and the agent is told.
    Never,
    /// The agent asks when it needs more than the sandbox allows.
    OnRequest,
    /// Accepted for scripts written for older Codex releases: the protocol no longer has it,
    /// and it is sent as `on-request`.
    OnFailure,
    /// Ask before any command that is not known to be harmless.
    Untrusted,
}

impl Approve {
    fn wire(self) -> &'static str {
        match self {
            Approve::Never => "never",
            Approve::OnRequest | Approve::OnFailure => "on-request",
            Approve::Untrusted => "untrusted",
        }
    }
}

/// `--sandbox`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Sandbox {
    /// Commands may read, not write.
    ReadOnly,
    /// Commands may write inside the workspace.
    WorkspaceWrite,
    /// No sandbox.
    DangerFullAccess,
}

impl Sandbox {
    fn wire(self) -> &'static str {
        match self {
            Sandbox::ReadOnly => "read-only",
            Sandbox::WorkspaceWrite => "workspace-write",
            Sandbox::DangerFullAccess => "danger-full-access",
        }
    }
}

/// Runs one turn; the exit code is 0 when it completed, 1 when it failed, 130 when it was
/// interrupted.
pub fn run(args: ExecArgs, overrides: crate::ConfigOverrides) -> Result<ExitCode, String> {
    let prompt = if args.prompt == "-" {
        // One byte more than the limit tells a prompt that fits from one that would be cut.
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(MAX_STDIN_PROMPT + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
        if bytes.len() as u64 > MAX_STDIN_PROMPT {
            return Err(format!(
                "the prompt on stdin is over 16 MiB ({MAX_STDIN_PROMPT} bytes); nothing was sent"
            ));
        }
        String::from_utf8(bytes)
            .map_err(|e| format!("cannot read the prompt from stdin: it is not UTF-8 ({e})"))?
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        return Err("the prompt is empty".to_owned());
    }
    if matches!(args.approve, Some(Approve::OnFailure)) {
        eprintln!("note: --approve on-failure is not in the protocol any more; using on-request");
    }
    let cwd = match &args.cwd {
        Some(dir) => std::path::absolute(dir),
        None => std::env::current_dir(),
    }
    .map_err(|e| format!("cannot resolve the working directory: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(turn(args, overrides, prompt, cwd))
}

/// Starts the app-server child: this binary, with the same configuration overrides.
fn server_command(overrides: &crate::ConfigOverrides) -> Result<tokio::process::Command, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let mut command = tokio::process::Command::new(exe);
    command.arg("app-server").args(overrides.child_args());
    // Its own process group: Ctrl-C reaches exec, which interrupts the turn and then ends the
    // server in order.
    command.process_group(0);
    Ok(command)
}

async fn turn(
    args: ExecArgs,
    overrides: crate::ConfigOverrides,
    prompt: String,
    cwd: PathBuf,
) -> Result<ExitCode, String> {
    let accept = args.yes;
    let mut options = ClientOptions::default();
    options.client_info.name = "agentwire-exec".to_owned();
    options.server_requests = handler_fn(move |request: &ServerRequest| {
        let verdict = if accept {
            "accepted"
        } else {
            "declined (--yes accepts)"
        };
        eprintln!("approval {}: {verdict}", describe(request));
        if accept {
            request.accept()
        } else {
            request.decline("declined by agentwire exec (run it with --yes to accept)")
        }
    });
    let client = Client::spawn(server_command(&overrides)?, options)
        .await
        .map_err(|e| e.to_string())?;
    let code = drive(&client, &args, prompt, cwd).await;
    let _ = client.shutdown(Duration::from_secs(5)).await;
    code
}

async fn drive(
    client: &Client,
    args: &ExecArgs,
    prompt: String,
    cwd: PathBuf,
) -> Result<ExitCode, String> {
    let mut thread = json!({"cwd": cwd.to_string_lossy()});
    if let Some(model) = &args.model {
        thread["model"] = json!(model);
    }
    if let Some(approve) = args.approve {
        thread["approvalPolicy"] = json!(approve.wire());
    }
    if let Some(sandbox) = args.sandbox {
        thread["sandbox"] = json!(sandbox.wire());
    }
    let thread = serde_json::from_value(thread).map_err(|e| format!("thread/start params: {e}"))?;
    let thread = client
        .request::<ThreadStart>(thread)
        .await
        .map_err(|e| e.to_string())?
        .thread
        .id;
    let turn = json!({"threadId": thread, "input": [{"type": "text", "text": prompt}]});
    let turn = serde_json::from_value(turn).map_err(|e| format!("turn/start params: {e}"))?;
    let turn = client
        .request::<TurnStart>(turn)
        .await
        .map_err(|e| e.to_string())?
        .turn
        .id;
    let mut printer = Printer {
        json: args.json,
        open_message: false,
    };
    let mut interrupted = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        let notification = tokio::select! {
            notification = client.next_notification() => notification,
            _ = &mut ctrl_c => {
                if interrupted {
                    return Ok(ExitCode::from(INTERRUPTED));
                }
                interrupted = true;
                eprintln!("interrupting the turn (Ctrl-C again to quit at once)");
                let params = TurnInterruptParams::builder().thread_id(thread.clone()).turn_id(turn.clone()).build();
                if let Err(error) = client.request::<TurnInterrupt>(params).await {
                    eprintln!("error: {error}");
                }
                // Listen for a second Ctrl-C.
                ctrl_c.set(tokio::signal::ctrl_c());
                continue;
            }
        };
        let Some(notification) = notification else {
            let reason = client.closed().unwrap_or_default();
            return Err(format!("the server ended before the turn did: {reason}"));
        };
        printer.show(&notification);
        if let Some(completed) = notification.parse::<TurnCompleted>() {
            let completed = completed.map_err(|e| e.to_string())?;
            if completed.thread_id != thread || completed.turn.id != turn {
                continue;
            }
            printer.end_message();
            return Ok(match completed.turn.status {
                TurnStatus::Completed => ExitCode::SUCCESS,
                TurnStatus::Interrupted => {
                    eprintln!("the turn was interrupted");
                    ExitCode::from(INTERRUPTED)
                }
                status => {
                    let reason = completed
                        .turn
                        .error
                        .map(|e| e.message)
                        .unwrap_or_else(|| format!("{status:?}"));
                    eprintln!("error: the turn failed: {reason}");
                    ExitCode::FAILURE
                }
            });
        }
    }
}

/// One line about a server request, for stderr.
fn describe(request: &ServerRequest) -> String {
    let params = &request.params;
    let detail = ["command", "reason", "message"]
        .iter()
        .find_map(|key| params.get(key).and_then(Value::as_str))
        .unwrap_or_default();
    format!("{} {detail}", request.method).trim_end().to_owned()
}

/// Writes what the turn does: the agent's text on stdout and a line per action on stderr, or
/// every notification as a JSON line.
struct Printer {
    json: bool,
    /// Whether agent text was printed without its final newline yet.
    open_message: bool,
}

impl Printer {
    fn show(&mut self, notification: &Notification) {
        if self.json {
            let line = json!({"method": notification.method, "params": notification.params});
            println!("{line}");
            return;
        }
        if let Some(Ok(delta)) = notification.parse::<AgentMessageDelta>() {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(delta.delta.as_bytes());
            let _ = out.flush();
            self.open_message = !delta.delta.is_empty() || self.open_message;
            return;
        }
        let params = &notification.params;
        let item = &params["item"];
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        match (notification.method.as_str(), item["type"].as_str()) {
            ("item/started", Some("commandExecution")) => {
                self.end_message();
                eprintln!("$ {}", text(&item["command"]));
            }
            ("item/completed", Some("commandExecution")) => match item["exitCode"].as_i64() {
                Some(code) => eprintln!("(exit {code})"),
                None => eprintln!("({})", text(&item["status"])),
            },
            ("item/completed", Some("fileChange")) => {
                let paths: Vec<String> = item["changes"]
                    .as_array()
                    .map(|changes| changes.iter().map(|c| text(&c["path"])).collect())
                    .unwrap_or_default();
                eprintln!("patch {}: {}", text(&item["status"]), paths.join(", "));
            }
            ("item/completed", Some("agentMessage")) => {
                if !self.open_message {
                    // No deltas came: the whole text is in the item.
                    let whole = text(&item["text"]);
                    if !whole.is_empty() {
                        println!("{whole}");
                    }
                }
                self.end_message();
            }
            ("error", _) => eprintln!("error: {}", text(&params["error"]["message"])),
            ("warning", _) => eprintln!("warning: {}", text(&params["message"])),
            ("configWarning", _) => eprintln!("warning: {}", config_warning(params)),
            _ => {}
        }
    }

    fn end_message(&mut self) {
        if self.open_message {
            println!();
            self.open_message = false;
        }
    }
}

/// A `configWarning` as one line: where (`FILE:LINE:COLUMN: `, as much of it as is known),
/// what, and the details.
fn config_warning(params: &Value) -> String {
    let mut place = params["path"].as_str().unwrap_or_default().to_owned();
    let start = &params["range"]["start"];
    if let (Some(line), Some(column)) = (start["line"].as_u64(), start["column"].as_u64()) {
        place.push_str(&format!(":{line}:{column}"));
    }
    if !place.is_empty() {
        place.push_str(": ");
    }
    let summary = params["summary"].as_str().unwrap_or_default();
    match params["details"].as_str().filter(|d| !d.is_empty()) {
        Some(details) => format!("{place}{summary}: {details}"),
        None => format!("{place}{summary}"),
    }
}
