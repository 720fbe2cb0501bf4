//! One `exec` run against an app-server child: start the child, start or resume the thread,
//! start the turn, show its notifications until `turn/completed`, write
//! `--output-last-message`, shut the child down.

use std::path::PathBuf;
use std::time::Duration;

use agentwire_client::server_requests::{ServerRequest, handler_fn};
use agentwire_client::{Client, ClientOptions};
use agentwire_protocol::methods::{
    ThreadList, ThreadResume, ThreadStart, TurnCompleted, TurnInterrupt, TurnStart,
};
use agentwire_protocol::{TurnInterruptParams, TurnStatus};
use serde_json::{Value, json};

use super::args::TurnArgs;
use super::printer::{Printer, StdoutError, one_error};
use crate::stdout::note;

/// Which thread the turn runs on.
pub enum Thread {
    /// A new one.
    New,
    /// A stored one, by id.
    Id(String),
    /// The stored one updated last: in the working directory, or in any with `all`.
    Last {
        /// Whether threads of every working directory count.
        all: bool,
    },
}

/// Everything one run needs, read and checked before the server starts.
pub struct Plan {
    /// The turn's flags.
    pub args: TurnArgs,
    /// The thread to run on.
    pub thread: Thread,
    /// The turn's input items (images, then the prompt).
    pub input: Vec<Value>,
    /// The JSON Schema of `--output-schema`.
    pub output_schema: Option<Value>,
    /// The absolute working directory.
    pub cwd: PathBuf,
}

/// How a run ended.
pub enum Ended {
    /// The turn ended with this status.
    Turn(TurnStatus),
    /// The turn failed; its error was printed.
    Failed,
    /// A second Ctrl-C: exit at once.
    Quit,
    /// Stdout's reader left; the turn was interrupted.
    StdoutGone,
}

/// Starts the app-server child: this binary, with the same configuration overrides, quiet on
/// stderr unless `RUST_LOG` asks otherwise.
fn server_command(overrides: &crate::ConfigOverrides) -> Result<tokio::process::Command, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let mut command = tokio::process::Command::new(exe);
    command.arg("app-server").args(overrides.child_args());
    if std::env::var_os("RUST_LOG").is_none() {
        // What the server logs is for its operator; `exec` reports what the user must know
        // (errors, warnings, MCP failures) from the protocol itself.
        command.env("RUST_LOG", "off");
    }
    // Its own process group: Ctrl-C reaches exec, which interrupts the turn and then ends the
    // server in order.
    command.process_group(0);
    Ok(command)
}

/// Runs the plan; the child is shut down however the turn ends.
pub async fn run(plan: Plan, overrides: crate::ConfigOverrides) -> Result<Ended, String> {
    let accept = plan.args.yes;
    let mut options = ClientOptions::default();
    options.client_info.name = "agentwire-exec".to_owned();
    options.server_requests = handler_fn(move |request: &ServerRequest| {
        let verdict = if accept {
            "accepted"
        } else {
            "declined (--yes accepts)"
        };
        note(&format!("approval {}: {verdict}", describe(request)));
        if accept {
            request.accept()
        } else {
            request.decline("declined by agentwire exec (run it with --yes to accept)")
        }
    });
    let client = Client::spawn(server_command(&overrides)?, options)
        .await
        .map_err(|e| e.to_string())?;
    let ended = drive(&client, &plan).await;
    let _ = client.shutdown(Duration::from_secs(5)).await;
    ended
}

/// A request's error, with the JSON-RPC error's `data` when the server sent one.
fn failed(error: agentwire_client::Error) -> String {
    match error.rpc().and_then(|rpc| rpc.data.as_ref()) {
        Some(data) => format!("{error} ({data})"),
        None => error.to_string(),
    }
}

/// The settings `thread/start` and `thread/resume` share.
fn settings(plan: &Plan) -> Value {
    let mut settings = json!({"cwd": plan.cwd.to_string_lossy()});
    if let Some(model) = &plan.args.model {
        settings["model"] = json!(model);
    }
    if let Some(policy) = plan.args.approval_wire() {
        settings["approvalPolicy"] = json!(policy);
    }
    if let Some(sandbox) = plan.args.sandbox_wire() {
        settings["sandbox"] = json!(sandbox);
    }
    settings
}

/// The id of the thread to run on, started or resumed.
async fn thread(client: &Client, plan: &Plan) -> Result<String, String> {
    let mut params = settings(plan);
    let id = match &plan.thread {
        Thread::New => {
            let params =
                serde_json::from_value(params).map_err(|e| format!("thread/start params: {e}"))?;
            let started = client
                .request::<ThreadStart>(params)
                .await
                .map_err(failed)?;
            return Ok(started.thread.id);
        }
        Thread::Id(id) => id.clone(),
        Thread::Last { all } => last_thread(client, plan, *all).await?,
    };
    params["threadId"] = json!(id);
    // The turns are not shown, so they need not be sent.
    params["excludeTurns"] = json!(true);
    let params =
        serde_json::from_value(params).map_err(|e| format!("thread/resume params: {e}"))?;
    let resumed = client
        .request::<ThreadResume>(params)
        .await
        .map_err(failed)?;
    Ok(resumed.thread.id)
}

/// The stored thread updated last (in the working directory unless `all`).
async fn last_thread(client: &Client, plan: &Plan, all: bool) -> Result<String, String> {
    let mut params = json!({"limit": 1, "sortKey": "updated_at", "sortDirection": "desc"});
    if !all {
        params["cwd"] = json!(plan.cwd.to_string_lossy());
    }
    let params = serde_json::from_value(params).map_err(|e| format!("thread/list params: {e}"))?;
    let listed = client.request::<ThreadList>(params).await.map_err(failed)?;
    match listed.data.into_iter().next() {
        Some(thread) => Ok(thread.id),
        None if all => Err("exec resume --last: there is no stored thread".to_owned()),
        None => Err(format!(
            "exec resume --last: no stored thread has the working directory {} (--all looks at every directory)",
            plan.cwd.display()
        )),
    }
}

async fn drive(client: &Client, plan: &Plan) -> Result<Ended, String> {
    let thread = thread(client, plan).await?;
    let mut turn = json!({"threadId": thread, "input": plan.input});
    if let Some(schema) = &plan.output_schema {
        turn["outputSchema"] = schema.clone();
    }
    let turn = serde_json::from_value(turn).map_err(|e| format!("turn/start params: {e}"))?;
    let turn = client
        .request::<TurnStart>(turn)
        .await
        .map_err(failed)?
        .turn
        .id;
    let mut printer = Printer::new(plan.args.json);
    let mut interrupted = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        let notification = tokio::select! {
            notification = client.next_notification() => notification,
            _ = &mut ctrl_c => {
                if interrupted {
                    return Ok(Ended::Quit);
                }
                interrupted = true;
                note("interrupting the turn (Ctrl-C again to quit at once)");
                if let Err(error) = interrupt(client, &thread, &turn).await {
                    note(&format!("error: {error}"));
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
        if let Err(error) = printer.show(&notification) {
            // Nobody reads on: stop the agent rather than let it work for nothing.
            let _ = interrupt(client, &thread, &turn).await;
            return stdout_failed(error);
        }
        let Some(completed) = notification.parse::<TurnCompleted>() else {
            continue;
        };
        let completed = completed.map_err(|e| e.to_string())?;
        if completed.thread_id != thread || completed.turn.id != turn {
            continue;
        }
        if let Err(error) = printer.end_message() {
            return stdout_failed(error);
        }
        if let Some(file) = &plan.args.output_last_message {
            write_last_message(file, printer.last_message.as_deref())?;
        }
        return Ok(match completed.turn.status {
            TurnStatus::Completed | TurnStatus::Interrupted => Ended::Turn(completed.turn.status),
            status => {
                let reason = completed
                    .turn
                    .error
                    .or(printer.last_error.take())
                    .map(|e| one_error(&e))
                    .unwrap_or_else(|| format!("it ended {status:?}"));
                note(&format!("error: the turn failed: {reason}"));
                Ended::Failed
            }
        });
    }
}

/// How a run ends when stdout cannot take more.
fn stdout_failed(error: StdoutError) -> Result<Ended, String> {
    match error {
        StdoutError::Gone => Ok(Ended::StdoutGone),
        StdoutError::Failed(reason) => Err(format!(
            "cannot write to stdout: {reason}; the turn was interrupted"
        )),
    }
}

/// Asks the server to interrupt the turn.
async fn interrupt(client: &Client, thread: &str, turn: &str) -> Result<(), String> {
    let params = TurnInterruptParams::builder()
        .thread_id(thread)
        .turn_id(turn)
        .build();
    client
        .request::<TurnInterrupt>(params)
        .await
        .map(|_| ())
        .map_err(failed)
}

/// `--output-last-message FILE`: the agent's last message, or nothing (said on stderr).
fn write_last_message(file: &std::path::Path, message: Option<&str>) -> Result<(), String> {
    if message.is_none() {
        note(&format!(
            "warning: the agent sent no message; {} is left empty",
            file.display()
        ));
    }
    std::fs::write(file, message.unwrap_or_default())
        .map_err(|e| format!("--output-last-message {}: {e}", file.display()))
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
