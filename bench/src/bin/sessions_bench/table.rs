//! The markdown report: the side-by-side table, the ratios, the targets of issue #14 item 4.

use std::fmt::Write as _;

use agentwire_bench::stats::{Samples, grouped};

use crate::mock::PAUSE;
use crate::{
    AGENTWIRE, CONCURRENCY, IDLE_COUNTS, LIST_PACES, LIST_STREAMS, ListFigures, REFERENCE,
    REPRODUCE, Results, StreamFigures,
};

/// Where and how the run happened.
#[derive(Debug)]
pub struct Environment {
    /// Rounds per contender.
    pub rounds: usize,
    /// Deltas per turn.
    pub deltas: usize,
    /// Seconds each streaming phase streams for at least.
    pub stream_seconds: f64,
    /// Seconds of `thread/list` timing.
    pub list_seconds: f64,
    /// CPU cores available.
    pub cores: usize,
    /// `/proc/loadavg` before the run.
    pub load_before: String,
    /// `/proc/loadavg` after the run.
    pub load_after: String,
    /// Whether this was `--quick`.
    pub quick: bool,
    /// Streams the mock model served.
    pub mock_streams: usize,
}

/// The target of idle memory per connection, bytes.
const IDLE_TARGET: f64 = 32.0 * 1000.0;
/// The target of `thread/list` p99 while turns stream, ms.
const LIST_TARGET_MS: f64 = 2.0;
/// agentwire's aggregate deltas/s at S = 200 over the reference's.
const S200_RATIO_TARGET: f64 = 10.0;

fn median_cell(results: &Results, samples: &Samples, format: fn(f64) -> String) -> String {
    if let Some(why) = &results.skipped {
        return format!("skipped: {why}");
    }
    match (samples.median(), samples.range()) {
        (Some(m), Some((lo, hi))) if lo != hi => {
            format!("{} [{}–{}]", format(m), format(lo), format(hi))
        }
        (Some(m), _) => format(m),
        _ => match &results.failure {
            Some(error) => format!("failed: {error}"),
            None => "—".into(),
        },
    }
}

fn stream_cell(
    results: &Results,
    figures: &StreamFigures,
    pick: StreamPick,
    format: Format,
) -> String {
    match &figures.failure {
        Some(failure) if pick(figures).is_empty() => format!("failed: {failure}"),
        _ => median_cell(results, pick(figures), format),
    }
}

fn kb(bytes: f64) -> String {
    format!("{:.1} KB", bytes / 1000.0)
}

fn ms(value: f64) -> String {
    format!("{value:.2} ms")
}

fn ratio(ours: &Samples, theirs: &Samples) -> String {
    match (ours.median(), theirs.median()) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "—".into(),
    }
}

fn order_cell(results: &Results, figures: &StreamFigures) -> String {
    if results.skipped.is_some() {
        return "—".into();
    }
    let mut cell = format!("{}/{} turns", figures.turns_ok, figures.turns);
    if let Some(defect) = &figures.defect {
        let _ = write!(cell, " (first defect: {defect})");
    }
    if let Some(failure) = &figures.failure {
        let _ = write!(cell, "; failed: {failure}");
    }
    cell
}

/// One figure of a streaming phase.
type StreamPick = fn(&StreamFigures) -> &Samples;
/// One figure of a `thread/list` timing.
type ListPick = fn(&ListFigures) -> &Samples;

/// How a figure is printed.
type Format = fn(f64) -> String;

fn rate(f: &StreamFigures) -> &Samples {
    &f.rate
}

fn gap_p99(f: &StreamFigures) -> &Samples {
    &f.gap_p99_ms
}

fn cpu_per_1000(f: &StreamFigures) -> &Samples {
    &f.cpu_per_1000_ms
}

/// How the turns streamed in a `thread/list` timing at `pace` (see [`LIST_PACES`]).
fn pace_words(pace: Option<usize>) -> String {
    match pace {
        None => "as fast as the server reads them".into(),
        Some(burst) => format!(
            "paced: {burst} delta{}, then a {} ms pause",
            if burst == 1 { "" } else { "s" },
            PAUSE.as_millis()
        ),
    }
}

/// The median aggregate rate of a `thread/list` timing, in words.
fn rate_words(figures: &ListFigures) -> String {
    figures.rate.median().map_or_else(
        || "rate not measured".into(),
        |r| format!("{} deltas/s in all", grouped(r)),
    )
}

fn met(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "**met**",
        Some(false) => "**not met**",
        None => "not measured",
    }
}

/// The report.
pub fn render(results: &[Results], env: &Environment) -> String {
    let find = |name: &str| results.iter().find(|r| r.name == name);
    // The reference server, or agentwire with OpenTelemetry export on (`--otel-sink`).
    let (Some(ours), Some(theirs)) = (
        find(AGENTWIRE),
        find(REFERENCE).or_else(|| find(crate::WITH_OTEL)),
    ) else {
        return "no results\n".into();
    };
    let other = theirs.name.as_str();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Sessions over websocket: agentwire beside {other}\n"
    );
    let _ = writeln!(
        out,
        "Reproduce: `{REPRODUCE}`{}\n",
        match env.quick {
            true => " (this run: `--quick`)",
            false => "",
        }
    );
    let _ = writeln!(
        out,
        "Medians over {} rounds [min–max], each round a fresh server per contender, interleaved in \
         rotating order; each S phase runs waves of S turns at once, each wave on fresh threads, \
         until the waves have streamed for {} s (server CPU from the threads' `schedstat`, waves \
         only); `thread/list` timed for {} s at each pace per round; {} deltas per turn from one \
         loopback mock model (OpenAI Responses SSE, {} streams served); {} cores, load average {} \
         before, {} after (the machine is shared: other work ran meanwhile).\n",
        env.rounds,
        env.stream_seconds,
        env.list_seconds,
        env.deltas,
        env.mock_streams,
        env.cores,
        env.load_before,
        env.load_after
    );
    let _ = writeln!(
        out,
        "| figure | {AGENTWIRE} | {other} | {AGENTWIRE} / {other} |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for (i, count) in IDLE_COUNTS.into_iter().enumerate() {
        let _ = writeln!(
            out,
            "| idle memory per websocket connection, {count} open | {} | {} | {} |",
            median_cell(ours, &ours.idle_bytes[i], kb),
            median_cell(theirs, &theirs.idle_bytes[i], kb),
            ratio(&ours.idle_bytes[i], &theirs.idle_bytes[i]),
        );
    }
    for (i, s) in CONCURRENCY.into_iter().enumerate() {
        let (a, b) = (&ours.streams[i], &theirs.streams[i]);
        let rows: [(&str, StreamPick, Format); 3] = [
            ("aggregate deltas/s", rate, grouped),
            ("p99 gap between a turn's deltas", gap_p99, ms),
            ("server CPU per 1000 deltas", cpu_per_1000, ms),
        ];
        for (label, pick, format) in rows {
            let _ = writeln!(
                out,
                "| S = {s}: {label} | {} | {} | {} |",
                stream_cell(ours, a, pick, format),
                stream_cell(theirs, b, pick, format),
                ratio(pick(a), pick(b)),
            );
        }
        let _ = writeln!(
            out,
            "| S = {s}: every delta once and in order | {} | {} | |",
            order_cell(ours, a),
            order_cell(theirs, b),
        );
    }
    let picks: [(&str, ListPick); 2] = [("p50", |f| &f.p50_ms), ("p99", |f| &f.p99_ms)];
    for (i, pace) in LIST_PACES.into_iter().enumerate() {
        let (a, b) = (&ours.lists[i], &theirs.lists[i]);
        let how = pace_words(pace);
        for (label, pick) in picks {
            let _ = writeln!(
                out,
                "| `thread/list` {label} while {LIST_STREAMS} turns stream, {how} | {} | {} | {} |",
                median_cell(ours, pick(a), ms),
                median_cell(theirs, pick(b), ms),
                ratio(pick(a), pick(b)),
            );
        }
        let _ = writeln!(
            out,
            "| `thread/list` calls timed, {how}; turns streamed meanwhile | {} calls; {}; {} | {} calls; {}; {} | |",
            a.calls,
            order_cell(ours, &a.turns),
            rate_words(a),
            b.calls,
            order_cell(theirs, &b.turns),
            rate_words(b),
        );
    }

    let _ = writeln!(out, "\n### Targets (issue #14 item 4)\n");
    let timings: Vec<String> = LIST_PACES
        .into_iter()
        .zip(&ours.lists)
        .map(|(pace, figures)| {
            let p99 = figures.p99_ms.median();
            format!(
                "{} ({}): {} ({})",
                pace_words(pace),
                rate_words(figures),
                met(p99.map(|v| v < LIST_TARGET_MS)),
                p99.map_or("—".into(), ms),
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "- `thread/list` p99 under {LIST_TARGET_MS} ms while {LIST_STREAMS} turns stream: {}",
        timings.join("; ")
    );
    let idle: Vec<f64> = ours.idle_bytes[1..]
        .iter()
        .filter_map(Samples::median)
        .collect();
    let idle_ok =
        (idle.len() == IDLE_COUNTS.len() - 1).then(|| idle.iter().all(|b| *b < IDLE_TARGET));
    let _ = writeln!(
        out,
        "- under 32 KB per idle websocket connection (at {} and {} open): {} ({})",
        IDLE_COUNTS[1],
        IDLE_COUNTS[2],
        met(idle_ok),
        idle.iter().map(|b| kb(*b)).collect::<Vec<_>>().join(", ")
    );
    let last = CONCURRENCY.len() - 1;
    let (a, b) = (&ours.streams[last], &theirs.streams[last]);
    let complete = a.failure.is_none() && a.turns > 0 && a.turns_ok == a.turns;
    let times = match (a.rate.median(), b.rate.median()) {
        (Some(x), Some(y)) if y > 0.0 => Some(x / y),
        _ => None,
    };
    let s200_ok = times.map(|t| complete && t >= S200_RATIO_TARGET);
    let _ = writeln!(
        out,
        "- S = {}: every turn complete, every delta once and in order ({}/{} turns), at ≥ {S200_RATIO_TARGET}× the reference's aggregate deltas/s ({}): {}",
        CONCURRENCY[last],
        a.turns_ok,
        a.turns,
        times.map_or_else(
            || match &b.failure {
                Some(f) => format!("the reference: {f}"),
                None => "no reference figure".into(),
            },
            |t| format!("{t:.1}×")
        ),
        match s200_ok {
            None if complete => "complete; ratio not measured",
            other => met(other),
        }
    );
    out
}
