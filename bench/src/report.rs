//! The markdown report: the side-by-side table, the targets, what the servers answered and
//! what validation costs.

use std::fmt::Write as _;

use crate::session::Outcome;
use crate::stats::{Samples, grouped};
use crate::validation::ValidationCost;
use crate::{
    AGENTWIRE, BASELINE, ECHO, INVALID_PARAMS, METHODS, REFERENCE, REPRODUCE, Rates, Results,
};

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
    /// Whether idle-priority spinners kept the vCPUs from halting.
    pub keep_awake: bool,
    /// `/proc/loadavg` before the run.
    pub load_before: String,
    /// `/proc/loadavg` after the run.
    pub load_after: String,
}

fn one_decimal(value: f64) -> String {
    format!("{value:.1}")
}

fn cell(results: &Results, samples: &Samples, format: fn(f64) -> String) -> String {
    if let Some(why) = &results.skipped {
        return format!("skipped: {why}");
    }
    match (samples.median(), samples.range()) {
        (Some(median), Some((low, high))) => {
            format!("{} [{}–{}]", format(median), format(low), format(high))
        }
        _ => match &results.failure {
            Some(error) => format!("failed: {error}"),
            None => "—".into(),
        },
    }
}

fn ratio(a: &Samples, b: &Samples) -> Option<f64> {
    Some(a.median()? / b.median()?)
}

fn ratio_cell(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |r| format!("{r:.2}×"))
}

fn judged(measured: String, met: Option<bool>) -> String {
    match met {
        Some(true) => format!("{measured} **met**"),
        Some(false) => format!("{measured} **missed**"),
        None => "not measured".into(),
    }
}

type Pick = fn(&Rates) -> &Samples;
const LOCKSTEP: Pick = |r| &r.lockstep;
const WINDOWED: Pick = |r| &r.windowed;

fn outcomes_line(rates: &Rates) -> String {
    let total: u64 = rates.outcomes.0.iter().map(|(_, n)| n).sum();
    rates
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
    let baseline = results.iter().find(|r| r.name == BASELINE);
    let columns: Vec<&Results> = [Some(agentwire), baseline, Some(echo), Some(codex)]
        .into_iter()
        .flatten()
        .collect();
    let mut out = String::new();
    let awake = if env.keep_awake {
        ", the vCPUs kept from halting by nice-19 spinners (`--keep-awake`)"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "Measured by `agentwire-bench` over real stdio pipes on {} cores{awake}, load average {} \
         before (1, 5, 15 min) and {} after; {} rounds with the contenders interleaved (each started afresh every \
         round in a rotating order, its home directory kept across rounds), {} s per phase \
         after a warm-up. Figures are medians with [min–max] over rounds; ratios are ratios of \
         medians.\n",
        env.cores, env.load_before, env.load_after, env.rounds, env.duration
    );

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
    let row = |out: &mut String, label: String, pick: &dyn Fn(&Results) -> &Samples, format| {
        let mut line = format!("| {label}");
        for r in &columns {
            let _ = write!(line, " | {}", cell(r, pick(r), format));
        }
        let _ = writeln!(
            out,
            "{line} | {} | {} |",
            ratio_cell(ratio(pick(agentwire), pick(codex))),
            ratio_cell(ratio(pick(agentwire), pick(echo))),
        );
    };
    for (index, (method, _)) in METHODS.iter().enumerate() {
        for (pick, in_flight) in [(LOCKSTEP, 1), (WINDOWED, env.window)] {
            row(
                &mut out,
                format!("`{method}` round trips/s, {in_flight} in flight"),
                &|r: &Results| pick(&r.rates[index]),
                grouped,
            );
        }
    }
    row(
        &mut out,
        "start-up to `initialize` response (ms)".into(),
        &|r: &Results| &r.startup_ms,
        one_decimal,
    );
    row(
        &mut out,
        "peak memory, VmHWM (MB)".into(),
        &|r: &Results| &r.peak_mb,
        one_decimal,
    );
    if let Some(baseline) = baseline {
        let mut line = String::from("\nagentwire ÷ baseline:");
        for (index, (method, _)) in METHODS.iter().enumerate() {
            for (pick, in_flight) in [(LOCKSTEP, 1), (WINDOWED, env.window)] {
                let _ = write!(
                    line,
                    " `{method}` {in_flight} in flight {},",
                    ratio_cell(ratio(
                        pick(&agentwire.rates[index]),
                        pick(&baseline.rates[index])
                    ))
                );
            }
        }
        let _ = writeln!(
            out,
            "{line} start-up {}, memory {}.",
            ratio_cell(ratio(&agentwire.startup_ms, &baseline.startup_ms)),
            ratio_cell(ratio(&agentwire.peak_mb, &baseline.peak_mb)),
        );
    }

    targets(&mut out, agentwire, echo, codex, env);
    answers(&mut out, &columns, agentwire);
    validation_costs(&mut out, validation, agentwire);
    let _ = writeln!(out, "\nReproduce:\n\n    {REPRODUCE}");
    out
}

fn targets(
    out: &mut String,
    agentwire: &Results,
    echo: &Results,
    codex: &Results,
    env: &Environment,
) {
    let mut header = String::from("\n| target (agentwire) |");
    let mut rule = String::from("|---|");
    for (method, _) in METHODS {
        let _ = write!(header, " `{method}` |");
        rule.push_str("---:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    let ratios = [
        ("≥ 10× reference", codex, 10.0),
        ("≥ 0.5× echo floor", echo, 0.5),
    ];
    for (goal, other, needed) in ratios {
        for (pick, in_flight) in [(LOCKSTEP, 1), (WINDOWED, env.window)] {
            let mut line = format!("| round trips/s {goal}, {in_flight} in flight |");
            for index in 0..METHODS.len() {
                let value = ratio(pick(&agentwire.rates[index]), pick(&other.rates[index]));
                let _ = write!(
                    line,
                    " {} |",
                    judged(ratio_cell(value), value.map(|r| r >= needed))
                );
            }
            let _ = writeln!(out, "{line}");
        }
    }
    let startup = agentwire.startup_ms.median();
    let memory = agentwire.peak_mb.median();
    let spare = " |".repeat(METHODS.len() - 1);
    let _ = writeln!(
        out,
        "| start-up < 20 ms | {} |{spare}",
        judged(
            startup.map_or_else(String::new, |v| format!("{v:.1} ms")),
            startup.map(|v| v < 20.0)
        )
    );
    let _ = writeln!(
        out,
        "| peak memory < 20 MB | {} |{spare}",
        judged(
            memory.map_or_else(String::new, |v| format!("{v:.1} MB")),
            memory.map(|v| v < 20.0)
        )
    );
}

fn answers(out: &mut String, columns: &[&Results], agentwire: &Results) {
    let _ = writeln!(
        out,
        "\nWhat each server answered in the timed phases (after the `initialize` handshake), and \
         to one `{}` with invalid params `{INVALID_PARAMS}`:\n",
        METHODS[0].0
    );
    for r in columns {
        if r.skipped.is_some() {
            continue;
        }
        let mut line = format!("- {}:", r.name);
        for ((method, params), rates) in METHODS.iter().zip(&r.rates) {
            let _ = write!(line, " `{method}` `{params}` → {};", outcomes_line(rates));
        }
        let probe = r
            .invalid_probe
            .as_ref()
            .map_or_else(|| "—".into(), Outcome::to_string);
        let _ = writeln!(out, "{line} invalid params → {probe}");
    }
    if matches!(&agentwire.invalid_probe, Some(Outcome::Error(-32602, _))) {
        let _ = writeln!(
            out,
            "\nagentwire's -32602 shows the params schema validation on the measured path (parse, \
             handshake, method table, validation, in-flight slot, params decoding, handler, \
             response encoding)."
        );
    }
}

fn validation_costs(out: &mut String, validation: &[ValidationCost], agentwire: &Results) {
    let _ = writeln!(
        out,
        "\nSchema validation per request, in-process (`Validators::check` on compiled \
         validators; medians of batches), against agentwire's lockstep round trip:\n"
    );
    let mut header = String::from("| params | check (ns) | read line + check (ns) |");
    let mut rule = String::from("|---|---:|---:|");
    let round_trips: Vec<Option<f64>> = agentwire
        .rates
        .iter()
        .map(|r| r.lockstep.median().map(|rate| 1e9 / rate))
        .collect();
    for ((method, _), round_trip) in METHODS.iter().zip(&round_trips) {
        let time = round_trip.map_or_else(|| "—".into(), |ns| format!("{:.1} µs", ns / 1e3));
        let _ = write!(header, " check ÷ `{method}` round trip ({time}) |");
        rule.push_str("---:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    for cost in validation {
        let params = if cost.params.len() > 40 {
            format!("{} bytes", cost.params.len())
        } else {
            format!("`{}`", cost.params)
        };
        let mut line = format!(
            "| `{}` {params} | {:.0} | {:.0} |",
            cost.method, cost.check_ns, cost.parse_and_check_ns
        );
        for round_trip in &round_trips {
            let share = round_trip.map_or_else(
                || "—".into(),
                |ns| format!("{:.2} %", 100.0 * cost.check_ns / ns),
            );
            let _ = write!(line, " {share} |");
        }
        let _ = writeln!(out, "{line}");
    }
}
