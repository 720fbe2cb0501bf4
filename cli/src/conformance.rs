//! `conformance`: protocol scenarios against any app-server (see `agentwire-conformance`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agentwire_conformance::{Options, Target};
use clap::{ArgGroup, Args};

use crate::contract::contract;

/// Exit status when the run cannot start (bad version).
const UNUSABLE: u8 = 2;

/// `agentwire conformance`'s arguments.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").required(true).args(["server", "url"])))]
pub struct ConformanceArgs {
    /// The server's command line (run with `sh -c`; one process per scenario, each with an
    /// empty home in CODEX_HOME and AGENTWIRE_HOME). `{mock_url}` is replaced by the mock
    /// model's base URL, `{home}` by that home.
    #[arg(long, value_name = "COMMAND")]
    server: Option<String>,
    /// A running server's websocket endpoint (`ws://HOST:PORT`).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Start a loopback mock model (OpenAI Responses API streaming) per scenario, for the
    /// scenarios that need a scripted model; its URL goes where the command says `{mock_url}`.
    #[arg(long)]
    mock_model: bool,
    /// The server's bound on requests in flight (it answers -32001 past it), for the overload
    /// scenario; skipped without it.
    #[arg(long, value_name = "N")]
    bounded_queue: Option<usize>,
    /// Run only scenarios whose name (`group/name`) contains this; repeatable.
    #[arg(long, value_name = "TEXT")]
    scenario: Vec<String>,
    /// Write each scenario's transcript (`contract check` format) into this directory.
    #[arg(long, value_name = "DIR")]
    transcripts: Option<PathBuf>,
    /// Check against a pinned protocol release instead of the current one.
    #[arg(long, value_name = "X.Y.Z")]
    protocol_version: Option<String>,
    /// How long any single answer or notification may take, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    timeout: u64,
    /// `text`: one line per scenario (passed, failed with why, skipped with why), then a
    /// summary; `json`: one report document with every scenario and its violations.
    #[arg(long, value_enum, default_value_t = crate::Format::Text)]
    format: crate::Format,
}

/// Runs the suite; exit 0 when nothing failed, 1 when a scenario failed, 2 when it cannot run.
pub fn run(args: ConformanceArgs) -> ExitCode {
    let contract = match contract(args.protocol_version.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(UNUSABLE);
        }
    };
    let target = match (args.server, args.url) {
        (Some(command), _) => Target::Command(command),
        (None, Some(url)) => Target::Url(url),
        (None, None) => {
            eprintln!("error: give --server COMMAND or --url ws://HOST:PORT");
            return ExitCode::from(UNUSABLE);
        }
    };
    let options = Options {
        target,
        mock_model: args.mock_model,
        bounded_queue: args.bounded_queue,
        only: args.scenario,
        transcripts: args.transcripts,
        timeout: Duration::from_secs(args.timeout.max(1)),
    };
    let report = agentwire_conformance::run(&contract, &options);
    match args.format {
        crate::Format::Json => {
            let value = report.to_json();
            crate::stdout::line(
                &serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string()),
            );
        }
        crate::Format::Text => crate::stdout::print(&report.to_text()),
    }
    if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
