//! The markdown report: the side-by-side table, the targets, what the servers answered and
//! what validation costs.

use std::fmt::Write as _;

use crate::session::Outcome;
use crate::stats::Samples;
use crate::validation::ValidationCost;
use crate::{AGENTWIRE, BASELINE, ECHO, INVALID_PARAMS, PARAMS, REFERENCE, REPRODUCE, Results};

/// Where and how the run happened.
#[derive(Debug)]
pub struct Environment {
    /// Rounds per contender.
    pub rounds: usize,
    /// Seconds per timed phase.
    pub duration: f64,
    /// Requests in flight in the windowed phase.
    pub window: usize,
    /// CPU cores available.
    pub cores: usize,
    /// `/proc/loadavg` before the run.
    pub load_before: String,
    /// `/proc/loadavg` after the run.
    pub load_after: String,
}

fn grouped(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn cell(results: &Results, samples: &Samples, format: fn(f64) -> String) -> String {
    if let Some(why) = &results.skipped {
        return format!("skipped: {why}");
    }
    if let Some(error) = &results.failure {
        if samples.is_empty() {
            return format!("failed: {error}");
        }
    }
    match (samples.median(), samples.range()) {
        (Some(median), Some((low, high))) => {
            format!("{} [{}–{}]", format(median), format(low), format(high))
        }
        _ => "—".into(),
    }
}

fn ratio(a: &Samples, b: &Samples) -> Option<f64> {
    Some(a.median()? / b.median()?)
}

fn ratio_cell(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |r| format!("{r:.2}×"))
}

fn status(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "**met**",
        Some(false) => "**missed**",
        None => "not measured",
    }
}

fn outcomes_line(results: &Results) -> String {
    let total: u64 = results.outcomes.0.iter().map(|(_, n)| n).sum();
    results
        .outcomes
        .0
        .iter()
        .map(|(outcome, n)| format!("{outcome} ({n} of {total})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Renders the report.
pub fn render(results: &[Results], validation: &[ValidationCost], env: &Environment) -> String {
    let empty = Results::default();
    let find = |name: &str| results.iter().find(|r| r.name == name).unwrap_or(&empty);
    let (agentwire, echo, codex) = (find(AGENTWIRE), find(ECHO), find(REFERENCE));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Measured by `agentwire-bench` over real stdio pipes on {} cores, load average {} before \
         and {} after; {} rounds with the contenders interleaved (each started afresh every \
         round), {} s per phase after a warm-up. Figures are medians with [min–max] over rounds; \
         ratios are ratios of medians.\n",
        env.cores, env.load_before, env.load_after, env.rounds, env.duration
    );
    let baseline = results.iter().find(|r| r.name == BASELINE);
    let columns: Vec<&Results> = [Some(agentwire), baseline, Some(echo), Some(codex)]
        .into_iter()
        .flatten()
        .collect();
    let mut header = String::from("|");
    let mut rule = String::from("|---");
    for r in &columns {
        let _ = write!(header, " | {}", r.name);
        rule.push_str("|---:");
    }
    let _ = writeln!(
        out,
        "{header} | agentwire ÷ reference | agentwire ÷ echo floor |\n{rule}|---:|---:|"
    );
    type Pick = fn(&Results) -> &Samples;
    let rows: [(String, Pick, fn(f64) -> String); 4] = [
        (
            "`thread/list` round trips/s, 1 in flight".into(),
            |r| &r.lockstep,
            grouped,
        ),
        (
            format!("`thread/list` round trips/s, {} in flight", env.window),
            |r| &r.windowed,
            grouped,
        ),
        (
            "start-up to `initialize` response (ms)".into(),
            |r| &r.startup_ms,
            |v| format!("{v:.1}"),
        ),
        (
            "peak memory, VmHWM (MB)".into(),
            |r| &r.peak_mb,
            |v| format!("{v:.1}"),
        ),
    ];
    for (label, pick, format) in &rows {
        let mut line = format!("| {label}");
        for r in &columns {
            let _ = write!(line, " | {}", cell(r, pick(r), *format));
        }
        let _ = writeln!(
            out,
            "{line} | {} | {} |",
            ratio_cell(ratio(pick(agentwire), pick(codex))),
            ratio_cell(ratio(pick(agentwire), pick(echo))),
        );
    }
    if let Some(baseline) = baseline {
        let _ = writeln!(
            out,
            "\nagentwire ÷ baseline: {} (1 in flight), {} ({} in flight), start-up {}, memory {}.",
            ratio_cell(ratio(&agentwire.lockstep, &baseline.lockstep)),
            ratio_cell(ratio(&agentwire.windowed, &baseline.windowed)),
            env.window,
            ratio_cell(ratio(&agentwire.startup_ms, &baseline.startup_ms)),
            ratio_cell(ratio(&agentwire.peak_mb, &baseline.peak_mb)),
        );
    }

    let lock_vs_ref = ratio(&agentwire.lockstep, &codex.lockstep);
    let win_vs_ref = ratio(&agentwire.windowed, &codex.windowed);
    let lock_vs_echo = ratio(&agentwire.lockstep, &echo.lockstep);
    let win_vs_echo = ratio(&agentwire.windowed, &echo.windowed);
    let startup = agentwire.startup_ms.median();
    let memory = agentwire.peak_mb.median();
    let targets: [(&str, String, Option<bool>); 6] = [
        (
            "round trips/s ≥ 10× reference, 1 in flight",
            ratio_cell(lock_vs_ref),
            lock_vs_ref.map(|r| r >= 10.0),
        ),
        (
            "round trips/s ≥ 10× reference, window in flight",
            ratio_cell(win_vs_ref),
            win_vs_ref.map(|r| r >= 10.0),
        ),
        (
            "round trips/s ≥ 0.5× echo floor, 1 in flight",
            ratio_cell(lock_vs_echo),
            lock_vs_echo.map(|r| r >= 0.5),
        ),
        (
            "round trips/s ≥ 0.5× echo floor, window in flight",
            ratio_cell(win_vs_echo),
            win_vs_echo.map(|r| r >= 0.5),
        ),
        (
            "start-up < 20 ms",
            startup.map_or_else(|| "—".into(), |v| format!("{v:.1} ms")),
            startup.map(|v| v < 20.0),
        ),
        (
            "peak memory < 20 MB",
            memory.map_or_else(|| "—".into(), |v| format!("{v:.1} MB")),
            memory.map(|v| v < 20.0),
        ),
    ];
    let _ = writeln!(out, "\n| target (agentwire) | measured | |\n|---|---:|---|");
    for (target, measured, met) in &targets {
        let _ = writeln!(out, "| {target} | {measured} | {} |", status(*met));
    }

    let _ = writeln!(
        out,
        "\nWhat each server answered to `thread/list` with `{PARAMS}` (after the `initialize` \
         handshake) in the timed phases, and to one probe with invalid params `{INVALID_PARAMS}`:\n"
    );
    for r in &columns {
        if r.skipped.is_some() {
            continue;
        }
        let probe = r
            .probes
            .as_ref()
            .map_or_else(|| "—".into(), |(_, invalid)| invalid.to_string());
        let _ = writeln!(
            out,
            "- {}: {}; invalid params → {probe}",
            r.name,
            outcomes_line(r)
        );
    }
    let not_found = agentwire
        .outcomes
        .0
        .iter()
        .any(|(o, _)| matches!(o, Outcome::Error(-32601, _)));
    let validated = matches!(&agentwire.probes, Some((_, Outcome::Error(-32602, _))));
    if not_found && validated {
        let _ = writeln!(
            out,
            "\nThe engine does not implement `thread/list` yet: its -32601 comes from the \
             handler's default, at the end of the full runtime path (parse, handshake, method \
             table, params schema validation, in-flight slot, params decoding, handler call, \
             response encoding). The -32602 for invalid params shows validation is on that path."
        );
    }

    let _ = writeln!(
        out,
        "\nSchema validation per request, in-process (`Validators::check` on compiled \
         validators; medians of batches):\n"
    );
    let _ = writeln!(
        out,
        "| params | check (ns) | parse line + check (ns) | check ÷ agentwire lockstep round trip |\n|---|---:|---:|---:|"
    );
    let round_trip_ns = agentwire.lockstep.median().map(|rate| 1e9 / rate);
    for cost in validation {
        let share = round_trip_ns.map_or_else(
            || "—".into(),
            |rt| format!("{:.2} % of {:.1} µs", 100.0 * cost.check_ns / rt, rt / 1e3),
        );
        let params = if cost.params.len() > 40 {
            format!("{} bytes", cost.params.len())
        } else {
            format!("`{}`", cost.params)
        };
        let _ = writeln!(
            out,
            "| `{}` {params} | {:.0} | {:.0} | {share} |",
            cost.method, cost.check_ns, cost.parse_and_check_ns
        );
    }
    let _ = writeln!(out, "\nReproduce:\n\n    {REPRODUCE}");
    out
}
