//! The agentwire terminal client.
//!
//! `agentwire` with no subcommand (or `agentwire tui`) spawns a local app-server child and
//! drives it; `--remote ws://HOST:PORT | wss://… | unix://PATH` drives a running one instead.
//! On a terminal it is full-screen ([`app`]): the transcript streams as the server sends it
//! (agent text, reasoning, command output, diffs, plans), approvals are asked in place, Ctrl-C
//! interrupts the turn and a second one exits. When stdout is not a terminal it prints plain
//! lines instead ([`plain`]), reading messages from stdin.
//!
//! Modules: [`app`] (keys and server messages in, screen out), [`view`] (the layout), [`wrap`]
//! (word wrapping), [`status`] (the status line and `/status`), [`transcript`] (what a thread
//! shows), [`command`] (the slash commands), [`session`] (requests to the server),
//! [`settings`] (what the thread runs with), [`policy`] (`--sandbox` and
//! `--ask-for-approval` values), [`connection`] and [`target`] (where the server is).

pub mod app;
pub mod command;
pub mod connection;
pub mod plain;
pub mod policy;
pub mod session;
pub mod settings;
pub mod status;
pub mod target;
pub mod transcript;
pub mod view;
pub mod wrap;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use tokio::sync::mpsc;

use crate::connection::Incoming;
use crate::policy::{ApprovalPolicy, SandboxMode};
use crate::session::Session;
use crate::target::Target;

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--remote URL`.
    pub remote: Option<String>,
    /// `--remote-auth-token-env VAR`.
    pub remote_auth_token_env: Option<String>,
    /// `--model`: the model for new turns.
    pub model: Option<String>,
    /// `--cwd`: the working directory of new threads.
    pub cwd: Option<PathBuf>,
    /// `--ask-for-approval`: the approval policy of new threads.
    pub approval_policy: Option<ApprovalPolicy>,
    /// `--sandbox`: the sandbox of new threads.
    pub sandbox: Option<SandboxMode>,
    /// A first message to send.
    pub prompt: Option<String>,
    /// The program to spawn as the local app-server (normally this binary).
    pub program: PathBuf,
    /// Arguments before `app-server` is added: the configuration overrides (`-c k=v` …).
    pub server_flags: Vec<String>,
}

/// Runs the client; the exit code is 0 unless it could not connect or lost the server.
pub async fn run(options: Options) -> ExitCode {
    let target = match target::remote(
        options.remote.as_deref(),
        options.remote_auth_token_env.as_deref(),
        |var| std::env::var(var).ok(),
    ) {
        Ok(Some(target)) => target,
        Ok(None) => Target::Spawn {
            program: options.program.clone(),
            args: local_server_args(&options),
        },
        Err(reason) => {
            eprintln!("agentwire: {reason}");
            return ExitCode::from(2);
        }
    };
    let full_screen = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let (connection, incoming) = match connection::open(&target, full_screen).await {
        Ok(connected) => connected,
        Err(reason) => {
            eprintln!("agentwire: {reason}");
            return ExitCode::from(2);
        }
    };
    let cwd = options
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .map(|dir| dir.display().to_string());
    let mut session = Session::new(connection, options.model.clone(), cwd);
    session.approval_policy = options.approval_policy;
    session.sandbox = options.sandbox;
    let connected = if full_screen {
        full_screen_session(session, incoming, options.prompt).await
    } else {
        plain::run(session, incoming, options.prompt).await
    };
    if connected {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn full_screen_session(
    mut session: Session,
    incoming: mpsc::Receiver<Incoming>,
    prompt: Option<String>,
) -> bool {
    let mut app_transcript_note = None;
    if let Err(e) = session.start_thread().await {
        app_transcript_note = Some(format!("starting a thread: {e}"));
    }
    let mut app = app::App::new(session);
    match app_transcript_note {
        Some(error) => app.transcript.error(error),
        None => app
            .transcript
            .notice("new thread — type a message, /help for commands"),
    }
    if let Some(prompt) = prompt {
        app.input = prompt;
    }
    let mut terminal = ratatui::init();
    let result = app::run(&mut terminal, app, incoming).await;
    ratatui::restore();
    match result {
        Ok(()) => true,
        Err(e) => {
            eprintln!("agentwire: terminal error: {e}");
            false
        }
    }
}

/// `app-server` with the overrides, for the local child.
fn local_server_args(options: &Options) -> Vec<String> {
    let mut args = options.server_flags.clone();
    args.push("app-server".to_owned());
    args
}
