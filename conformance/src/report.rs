//! The outcome of a run: a pass/fail/skip table and a summary line, or a JSON document.

use agentwire_codegen::contract::Violation;
use serde_json::{Value, json};

use crate::Options;

/// How one scenario ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It did what it checks, and the server broke no contract rule.
    Pass,
    /// Something was wrong (see the detail and the violations).
    Fail,
    /// It did not run (see the detail for why).
    Skip,
}

impl Outcome {
    fn as_str(&self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "FAIL",
            Self::Skip => "skip",
        }
    }
}

/// One scenario's row.
#[derive(Debug, Clone)]
pub struct ScenarioResult {
    /// `group/name`.
    pub name: String,
    /// What it checks.
    pub summary: String,
    /// How it ended.
    pub outcome: Outcome,
    /// What it saw (pass), what was wrong (fail) or why it did not run (skip).
    pub detail: String,
    /// Contract violations by the server (each fails the scenario).
    pub violations: Vec<Violation>,
    /// Things worth knowing that do not fail it (e.g. notifications the contract does not
    /// declare).
    pub notes: Vec<String>,
    /// Messages exchanged (both directions).
    pub messages: usize,
}

/// The whole run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The server under test, as given.
    pub target: String,
    /// The contract's version.
    pub protocol_version: String,
    /// Every scenario run or skipped, in order.
    pub results: Vec<ScenarioResult>,
}

impl Report {
    /// A report of `results`.
    pub fn new(options: &Options, version: &str, results: Vec<ScenarioResult>) -> Self {
        Self {
            target: options.target.describe(),
            protocol_version: version.to_owned(),
            results,
        }
    }

    fn count(&self, outcome: &Outcome) -> usize {
        self.results
            .iter()
            .filter(|r| r.outcome == *outcome)
            .count()
    }

    /// `true` when no scenario failed.
    pub fn ok(&self) -> bool {
        self.count(&Outcome::Fail) == 0
    }

    /// The summary line.
    pub fn summary(&self) -> String {
        let messages: usize = self.results.iter().map(|r| r.messages).sum();
        let violations: usize = self.results.iter().map(|r| r.violations.len()).sum();
        format!(
            "conformance: {} passed, {} failed, {} skipped of {} scenarios against {} (protocol {}; {messages} messages contract-checked, {violations} violation(s) by the server)",
            self.count(&Outcome::Pass),
            self.count(&Outcome::Fail),
            self.count(&Outcome::Skip),
            self.results.len(),
            self.target,
            self.protocol_version,
        )
    }

    /// The table, each failure's violations under its row, and the summary line.
    pub fn to_text(&self) -> String {
        let width = self
            .results
            .iter()
            .map(|r| r.name.len())
            .max()
            .unwrap_or(8)
            .max(8);
        let mut out = format!("{:<6}  {:<width$}  DETAIL\n", "RESULT", "SCENARIO");
        for result in &self.results {
            out.push_str(&format!(
                "{:<6}  {:<width$}  {}\n",
                result.outcome.as_str(),
                result.name,
                one_line(&result.detail)
            ));
            for violation in &result.violations {
                out.push_str(&format!("{:<6}  {:<width$}    {violation}\n", "", ""));
            }
            for note in &result.notes {
                out.push_str(&format!("{:<6}  {:<width$}    note: {note}\n", "", ""));
            }
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// The JSON document of `--format json`.
    pub fn to_json(&self) -> Value {
        let scenarios: Vec<Value> = self
            .results
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "summary": r.summary,
                    "result": match r.outcome { Outcome::Pass => "pass", Outcome::Fail => "fail", Outcome::Skip => "skip" },
                    "detail": r.detail,
                    "messages": r.messages,
                    "violations": r.violations,
                    "notes": r.notes,
                })
            })
            .collect();
        json!({
            "target": self.target,
            "protocolVersion": self.protocol_version,
            "ok": self.ok(),
            "passed": self.count(&Outcome::Pass),
            "failed": self.count(&Outcome::Fail),
            "skipped": self.count(&Outcome::Skip),
            "summary": self.summary(),
            "scenarios": scenarios,
        })
    }
}

fn one_line(text: &str) -> String {
    text.replace('\n', " ")
}
