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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use agentwire_codegen::contract::{Dir, Violation};

    use super::*;
    use crate::Target;

    fn row(name: &str, outcome: Outcome, detail: &str) -> ScenarioResult {
        ScenarioResult {
            name: name.to_owned(),
            summary: String::new(),
            outcome,
            detail: detail.to_owned(),
            violations: Vec::new(),
            notes: Vec::new(),
            messages: 4,
        }
    }

    fn report(results: Vec<ScenarioResult>) -> Report {
        let options = Options {
            target: Target::Command("srv".to_owned()),
            mock_model: false,
            bounded_queue: None,
            only: Vec::new(),
            transcripts: None,
            timeout: Duration::from_secs(1),
        };
        Report::new(&options, "9.9.9", results)
    }

    #[test]
    fn the_table_lists_each_row_its_violations_and_a_summary() {
        let mut failed = row("errors/x", Outcome::Fail, "answered -32600,\nnot -32601");
        failed.violations.push(Violation {
            line: 3,
            session: "errors/x#1".to_owned(),
            direction: Some(Dir::ServerToClient),
            method: Some("thread/list".to_owned()),
            pointer: "/result/data".to_owned(),
            rule: "schema",
            reason: "missing".to_owned(),
        });
        let report = report(vec![
            row("a/b", Outcome::Pass, "fine"),
            failed,
            row("c/d", Outcome::Skip, "needs the mock"),
        ]);
        let text = report.to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "RESULT  SCENARIO  DETAIL");
        assert_eq!(lines[1], "pass    a/b       fine");
        assert_eq!(lines[2], "FAIL    errors/x  answered -32600, not -32601");
        assert_eq!(
            lines[3],
            "                    line 3 [errors/x#1] server->client thread/list /result/data: schema: missing"
        );
        assert_eq!(lines[4], "skip    c/d       needs the mock");
        assert_eq!(
            lines[5],
            "conformance: 1 passed, 1 failed, 1 skipped of 3 scenarios against --server srv (protocol 9.9.9; 12 messages contract-checked, 1 violation(s) by the server)"
        );
        assert!(!report.ok());
        let json = report.to_json();
        assert_eq!(json["failed"], 1);
        assert_eq!(json["scenarios"][1]["result"], "fail");
        assert_eq!(
            json["scenarios"][1]["violations"][0]["pointer"],
            "/result/data"
        );
    }

    #[test]
    fn skips_alone_are_not_a_failure() {
        assert!(report(vec![row("c/d", Outcome::Skip, "why")]).ok());
    }
}
