//! The markdown table of the engine benchmark.

use std::fmt::Write as _;

use agentwire_bench::stats::Samples;

use crate::Args;

/// The command that reproduces the table.
const REPRODUCE: &str = "cargo build --release -p agentwire -p agentwire-bench && bash scripts/install-bench-tools.sh && target/release/engine-bench";

/// One measured quantity: per round, its median and 95th percentile.
#[derive(Debug, Default)]
pub struct Row {
    /// What was measured.
    pub label: String,
    /// Each round's median.
    pub p50: Samples,
    /// Each round's 95th percentile (empty when a round times a single request).
    pub p95: Samples,
}

impl Row {
    /// An empty row labelled `label`.
    pub fn new(label: &str) -> Self {
        Self {
            label: label.to_owned(),
            ..Self::default()
        }
    }

    /// Adds one round's latencies.
    pub fn push(&mut self, round: &Samples) {
        if let (Some(p50), Some(p95)) = (round.median(), round.percentile(95.0)) {
            self.p50.push(p50);
            self.p95.push(p95);
        }
    }

    /// Adds one round's single figure.
    pub fn push_one(&mut self, value: f64) {
        self.p50.push(value);
    }
}

/// Everything measured.
pub struct Table<'a> {
    /// How the run was set up.
    pub args: &'a Args,
    /// `thread/list` pages over the populated home.
    pub list_rows: Vec<Row>,
    /// The first `thread/list` of a fresh process, ms.
    pub cold: Row,
    /// `thread/read` with turns by a fresh process, ms.
    pub read: Row,
    /// Deltas per second.
    pub deltas: Row,
    /// `thread/list` on an empty home, agentwire.
    pub empty_ours: Row,
    /// `thread/list` on an empty home, the reference server.
    pub empty_reference: Row,
    /// Whether the reference server was measured.
    pub reference: bool,
}

/// `median [min–max]` of `samples` with `decimals` decimals.
fn cell(samples: &Samples, decimals: usize) -> String {
    match (samples.median(), samples.range()) {
        (Some(m), Some((lo, hi))) => format!("{m:.decimals$} [{lo:.decimals$}–{hi:.decimals$}]"),
        _ => "—".to_owned(),
    }
}

fn judged(samples: &Samples, met: impl Fn(f64) -> bool) -> &'static str {
    match samples.median().map(met) {
        Some(true) => "**met**",
        Some(false) => "**missed**",
        None => "—",
    }
}

impl Table<'_> {
    /// The report: the table, the machine and the command.
    pub fn render(&self) -> String {
        let a = self.args;
        let mut out = String::new();
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let load: Vec<&str> = load.split_whitespace().take(3).collect();
        let _ = writeln!(
            out,
            "Measured by `engine-bench` over real stdio pipes on {cores} cores, load average {} \
             (1, 5, 15 min) at the end; {} rounds, each with fresh server processes. Figures are \
             medians over rounds with [min–max]; p50/p95 are per round over {} requests sent one \
             at a time.\n",
            load.join(" "),
            a.rounds,
            a.requests
        );
        let _ = writeln!(
            out,
            "| measurement | p50 | p95 | target |\n|---|---:|---:|---|"
        );
        for row in &self.list_rows {
            let _ = writeln!(
                out,
                "| `thread/list` over {} threads, {} (ms) | {} | {} | p50 < 5 ms {} |",
                a.threads,
                row.label,
                cell(&row.p50, 2),
                cell(&row.p95, 2),
                judged(&row.p50, |v| v < 5.0)
            );
        }
        let _ = writeln!(
            out,
            "| {} over {} threads (ms) | {} | | |",
            self.cold.label,
            a.threads,
            cell(&self.cold.p50, 2)
        );
        let _ = writeln!(
            out,
            "| `thread/read` `includeTurns: true`, {} items, first request of a fresh process (ms) | {} | | < 100 ms {} |",
            a.items,
            cell(&self.read.p50, 1),
            judged(&self.read.p50, |v| v < 100.0)
        );
        let _ = writeln!(
            out,
            "| `item/agentMessage/delta` per second, one turn of {} deltas, every line parsed | {} | | > 100,000/s {} |",
            a.deltas,
            cell(&self.deltas.p50, 0),
            judged(&self.deltas.p50, |v| v > 100_000.0)
        );
        let _ = writeln!(
            out,
            "| `thread/list` `{{}}` on an empty home, agentwire (ms) | {} | {} | |",
            cell(&self.empty_ours.p50, 3),
            cell(&self.empty_ours.p95, 3)
        );
        if self.reference {
            let _ = writeln!(
                out,
                "| `thread/list` `{{}}` on an empty home, codex app-server 0.171.0 (ms) | {} | {} | |",
                cell(&self.empty_reference.p50, 3),
                cell(&self.empty_reference.p95, 3)
            );
        } else {
            let _ = writeln!(
                out,
                "| `thread/list` on an empty home, codex app-server 0.171.0 | not measured (not installed or `--skip-codex`) | | |"
            );
        }
        let _ = writeln!(
            out,
            "\nThe reference server cannot run fixture turns, so it is compared only on \
             `thread/list` over its own empty home.\n\nReproduce:\n\n    {REPRODUCE}"
        );
        out
    }
}
