//! `agentwire conformance`: protocol scenarios run against any app-server implementation.
//!
//! Each scenario starts from a clean server: for `--server COMMAND` a new process (through
//! `sh -c`) with its own empty home (`CODEX_HOME` and `AGENTWIRE_HOME` point at it) and, with
//! `--mock-model`, its own loopback mock model whose URL replaces `{mock_url}` in the command;
//! for `--url ws://…` new connections to the one running server. Every message of every
//! scenario, in both directions, goes through the contract checker
//! ([`agentwire_codegen::contract`]); a violation by the server fails the scenario it happened
//! in. Scenarios that need a scripted model are skipped, saying so, without `--mock-model`.
//!
//! The mock model is the end-to-end tests' own (`tests/e2e/mock_model.rs` and
//! `mock_responses.rs`, compiled into this crate as they are), so the scripted turns speak the
//! same Responses API stream the engine's tests are written against.

#[allow(dead_code, clippy::new_without_default)]
#[path = "../../tests/e2e/mock_model.rs"]
mod mock_model;
#[allow(dead_code, clippy::new_without_default)]
#[path = "../../tests/e2e/mock_responses.rs"]
mod mock_responses;
mod report;
mod scenarios;
mod session;
mod target;

use std::path::PathBuf;
use std::time::Duration;

use agentwire_codegen::contract::Contract;

pub use report::{Outcome, Report, ScenarioResult};
pub use target::Target;

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct Options {
    /// The server under test.
    pub target: Target,
    /// Start a mock model per scenario and substitute its URL for `{mock_url}` in the command.
    pub mock_model: bool,
    /// The server's bound on requests in flight, when it has one (the overload scenario).
    pub bounded_queue: Option<usize>,
    /// Run only the scenarios whose name contains one of these (all when empty).
    pub only: Vec<String>,
    /// Write each scenario's transcript (`<dir>/<group>-<name>.jsonl`) here.
    pub transcripts: Option<PathBuf>,
    /// The longest any single answer or notification may take.
    pub timeout: Duration,
}

/// Runs every selected scenario against the target and reports.
pub fn run(contract: &Contract, options: &Options) -> Report {
    let mut results = Vec::new();
    for scenario in scenarios::all() {
        let name = scenario.name();
        if !options.only.is_empty() && !options.only.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        results.push(scenarios::execute(contract, options, &scenario));
    }
    Report::new(options, contract.version(), results)
}
