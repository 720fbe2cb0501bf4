//! `sessions-bench`: many sessions on one server over loopback websockets, agentwire beside
//! the reference (`codex app-server` 0.171.0), both streaming from one mock model
//! ([`mock`], the OpenAI Responses SSE format).
//!
//! Each round starts every contender afresh (interleaved, in a rotating order) and measures:
//! idle memory per websocket connection at 1 / 100 / 500 connections past `initialize`
//! ((VmRSS at N − VmRSS at 0) / N); S concurrent turns, each on its own connection and thread,
//! each streaming the same number of deltas, in waves of S (fresh threads each wave) until the
//! waves have streamed for `--stream-seconds`: aggregate deltas/s, p99 gap between a turn's
//! consecutive deltas, server CPU per 1000 deltas, and whether every delta of every turn came
//! once and in order; `thread/list` latency on another connection while 10 turns stream back to
//! back, as fast as the server reads them and again at each of [`LIST_PACES`], slower and slower,
//! like models generating them. The table ([`table`]) reports medians over rounds.

mod cpu_cap;
mod driver;
mod mock;
// The loopback OTLP/HTTP sink of `--otel-sink`.
mod otlp_sink;
mod server;
mod table;
mod workers;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agentwire_bench::stats::Samples;
use agentwire_bench::{load_average, sibling};
use clap::Parser;

use crate::driver::{Conn, Streamed};
use crate::mock::MockModel;
use crate::server::{Contender, Running};

/// The command that reproduces the measurement.
pub const REPRODUCE: &str = "cargo build --release -p agentwire -p agentwire-bench && bash scripts/install-bench-tools.sh && target/release/sessions-bench";

/// The contenders' names in the table.
pub const AGENTWIRE: &str = "agentwire";
/// See [`AGENTWIRE`].
pub const REFERENCE: &str = "codex app-server 0.171.0";
/// agentwire exporting traces, metrics and logs over OTLP/HTTP to a loopback sink
/// (`--otel-sink`).
pub const WITH_OTEL: &str = "agentwire + OTLP export";

/// Connection counts of the idle-memory figure.
pub const IDLE_COUNTS: [usize; 3] = [1, 100, 500];
/// Concurrent turns of the streaming figures.
pub const CONCURRENCY: [usize; 4] = [1, 10, 50, 200];
/// The concurrency measured after `thread/list` (the largest).
const LAST_PHASE: usize = CONCURRENCY[CONCURRENCY.len() - 1];
/// Turns streaming while `thread/list` is timed.
pub const LIST_STREAMS: usize = 10;
/// How the turns stream while `thread/list` is timed, one timing each: `None` as fast as the
/// server reads them (the turns then take every core they can get), else that many deltas per
/// pause of the mock ([`mock::PAUSE`]). One burst per pause is a few hundred deltas a second per
/// turn as received, several times a fast hosted model; the bursts between are there to show
/// where, between a model's pace and saturation, the latency grows.
pub const LIST_PACES: [Option<usize>; 5] = [None, Some(32), Some(16), Some(4), Some(1)];

/// Many sessions over websocket, side by side with the reference server.
#[derive(Debug, Parser)]
#[command(name = "sessions-bench", about)]
struct Args {
    /// The agentwire binary (default: `agentwire` next to this program).
    #[arg(long, value_name = "PATH")]
    agentwire: Option<PathBuf>,
    /// The reference `codex` binary (default: the one installed under `bench/node_modules`).
    #[arg(long, value_name = "PATH")]
    codex: Option<PathBuf>,
    /// Leave the reference server out.
    #[arg(long)]
    skip_codex: bool,
    /// Instead of the reference server, agentwire again with OpenTelemetry export on: traces,
    /// metrics and logs over OTLP/HTTP (protobuf) to a loopback sink this program runs, which
    /// answers every export 200 (the cost of telemetry, docs/operations.md).
    #[arg(long)]
    otel_sink: bool,
    /// A short run: 1 round, 100 deltas per turn, 0.2 s of each streaming phase, 1 s of
    /// `thread/list`.
    #[arg(long)]
    quick: bool,
    /// Rounds; every figure is the median over rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Deltas per turn.
    #[arg(long, default_value_t = 500)]
    deltas: usize,
    /// Seconds each streaming phase streams for at least: its S turns run at once, then S
    /// more on fresh threads, and so on, until the waves add up to this. One wave of 500 deltas
    /// can take a few milliseconds, too short to measure a rate or CPU time by.
    #[arg(long, default_value_t = 1.0)]
    stream_seconds: f64,
    /// Seconds of `thread/list` timing while turns stream.
    #[arg(long, default_value_t = 3.0)]
    list_seconds: f64,
    /// The request timed while turns stream (`thread/loaded/list` is answered from memory:
    /// comparing the two separates the runtime's share from the thread store's).
    #[arg(long, default_value = "thread/list", value_name = "METHOD")]
    list_method: String,
    /// Seconds one wave of a streaming phase may take before it counts as failed.
    #[arg(long, default_value_t = 180)]
    limit_seconds: u64,
    /// Instead of the side-by-side run: agentwire workers on one PostgreSQL store, one against
    /// two (`ADMIN_URL`: the cluster's `postgres` database, as `scripts/postgres-cluster.sh
    /// start` prints it; a database per round is made there).
    #[arg(long, value_name = "ADMIN_URL")]
    postgres: Option<String>,
    /// Concurrent turns of the workers phase.
    #[arg(long, default_value_t = 50)]
    worker_sessions: usize,
    /// In the workers phase, holds each worker to this many cores (a control group of its own
    /// with a CPU quota; needs root): a worker then stands for one on a machine of that size,
    /// where this machine has too few cores to give each its own.
    #[arg(long, value_name = "CORES")]
    worker_cpu: Option<f64>,
}

/// The figures of one streaming phase (S concurrent turns).
#[derive(Debug, Default)]
pub struct StreamFigures {
    /// Aggregate deltas per second.
    pub rate: Samples,
    /// p99 gap between a turn's consecutive deltas, ms.
    pub gap_p99_ms: Samples,
    /// Server CPU per 1000 deltas, ms.
    pub cpu_per_1000_ms: Samples,
    /// Turns that came complete, every delta once and in order.
    pub turns_ok: usize,
    /// Turns run.
    pub turns: usize,
    /// The first defect of a turn.
    pub defect: Option<String>,
    /// Why the phase failed (in any round).
    pub failure: Option<String>,
}

/// Everything measured for one contender.
#[derive(Debug, Default)]
pub struct Results {
    /// The contender.
    pub name: String,
    /// Why it was not measured.
    pub skipped: Option<String>,
    /// Why a round could not start or measure memory.
    pub failure: Option<String>,
    /// Bytes per idle connection at each of [`IDLE_COUNTS`].
    pub idle_bytes: [Samples; IDLE_COUNTS.len()],
    /// Each of [`CONCURRENCY`].
    pub streams: [StreamFigures; CONCURRENCY.len()],
    /// `thread/list` timed while turns stream at each of [`LIST_PACES`].
    pub lists: [ListFigures; LIST_PACES.len()],
}

/// `thread/list` timed while turns stream.
#[derive(Debug, Default)]
pub struct ListFigures {
    /// p50, ms.
    pub p50_ms: Samples,
    /// p99, ms.
    pub p99_ms: Samples,
    /// Calls timed.
    pub calls: usize,
    /// The turns that streamed meanwhile.
    pub turns: StreamFigures,
    /// Deltas per second of all the turns together while the calls were timed, as received.
    pub rate: Samples,
}

fn main() -> ExitCode {
    let mut args = Args::parse();
    if args.quick {
        args.rounds = 1;
        args.deltas = args.deltas.min(100);
        args.stream_seconds = args.stream_seconds.min(0.2);
        args.list_seconds = args.list_seconds.min(1.0);
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("sessions-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

fn contenders(
    args: &Args,
    sink: Option<std::net::SocketAddr>,
) -> Result<(Vec<Contender>, Vec<Results>), String> {
    let agentwire = match &args.agentwire {
        Some(path) => path.clone(),
        None => sibling("agentwire")?,
    };
    // Servers run in their own work directory: a relative path would not be found from there.
    let agentwire = std::path::absolute(&agentwire).unwrap_or(agentwire);
    if !agentwire.is_file() {
        return Err(format!(
            "{} not found; build it: cargo build --release -p agentwire -p agentwire-bench",
            agentwire.display()
        ));
    }
    let mut list = vec![Contender {
        name: AGENTWIRE.into(),
        program: agentwire,
        home_vars: vec!["HOME", "AGENTWIRE_HOME"],
        extra_args: Vec::new(),
    }];
    let mut results = vec![Results {
        name: AGENTWIRE.into(),
        ..Results::default()
    }];
    if let Some(sink) = sink {
        let exporter = |signal: &str| {
            format!(
                "{{ otlp-http = {{ endpoint = \"http://{sink}/v1/{signal}\", protocol = \"binary\" }} }}"
            )
        };
        let mut extra_args = Vec::new();
        for (key, signal) in [
            ("trace_exporter", "traces"),
            ("metrics_exporter", "metrics"),
            ("exporter", "logs"),
        ] {
            extra_args.push("-c".to_owned());
            extra_args.push(format!("otel.{key}={}", exporter(signal)));
        }
        list.push(Contender {
            name: WITH_OTEL.into(),
            program: list[0].program.clone(),
            home_vars: vec!["HOME", "AGENTWIRE_HOME"],
            extra_args,
        });
        results.push(Results {
            name: WITH_OTEL.into(),
            ..Results::default()
        });
        return Ok((list, results));
    }
    let codex = agentwire_bench::reference_server(args.codex.clone());
    let skipped = if args.skip_codex {
        Some("left out (--skip-codex)".to_owned())
    } else if !codex.is_file() {
        Some(format!(
            "not installed ({} missing): run bash scripts/install-bench-tools.sh",
            codex.display()
        ))
    } else {
        list.push(Contender {
            name: REFERENCE.into(),
            program: codex,
            home_vars: vec!["HOME", "CODEX_HOME"],
            extra_args: Vec::new(),
        });
        None
    };
    results.push(Results {
        name: REFERENCE.into(),
        skipped,
        ..Results::default()
    });
    Ok((list, results))
}

fn run(args: &Args) -> Result<(), String> {
    if args.rounds == 0
        || args.deltas == 0
        || args.list_seconds <= 0.0
        || args.stream_seconds <= 0.0
    {
        return Err(
            "--rounds, --deltas, --stream-seconds and --list-seconds must be positive".into(),
        );
    }
    // The mock (and the OTLP sink) on its own thread; the clients on two others.
    let mock_runtime = runtime(1, "the mock's")?;
    let sink = match args.otel_sink {
        true => Some(mock_runtime.block_on(otlp_sink::start())?),
        false => None,
    };
    let (list, mut results) = contenders(args, sink)?;
    if let Some(admin) = &args.postgres {
        return run_workers(&list[0], admin, args);
    }
    let mock = mock_runtime.block_on(MockModel::start(args.deltas))?;
    let clients = runtime(2, "the clients'")?;
    let load_before = load_average();
    eprintln!(
        "sessions-bench: {} rounds of {} contenders, {} deltas per turn; load average {load_before}",
        args.rounds,
        list.len(),
        args.deltas
    );
    for round in 0..args.rounds {
        for k in 0..list.len() {
            let index = (round + k) % list.len();
            let result = &mut results[index];
            eprintln!(
                "  round {}/{}: {}",
                round + 1,
                args.rounds,
                list[index].name
            );
            let tag = format!("r{round}");
            if let Err(error) = clients.block_on(run_once(&list[index], &mock, args, &tag, result))
            {
                eprintln!("    failed: {error}");
                result.failure.get_or_insert(error);
            }
        }
    }
    let environment = table::Environment {
        rounds: args.rounds,
        deltas: args.deltas,
        stream_seconds: args.stream_seconds,
        list_seconds: args.list_seconds,
        cores: std::thread::available_parallelism().map_or(1, usize::from),
        load_before,
        load_after: load_average(),
        quick: args.quick,
        mock_streams: mock.streams(),
    };
    print!("{}", table::render(&results, &environment));
    drop(clients);
    drop(mock_runtime);
    Ok(())
}

/// The workers phase alone (`--postgres`), with a mock of its own.
fn run_workers(agentwire: &Contender, admin: &str, args: &Args) -> Result<(), String> {
    let clients = runtime(2, "the clients'")?;
    let mock_runtime = runtime(1, "the mock's")?;
    let mock = mock_runtime.block_on(MockModel::start(args.deltas))?;
    let shape = workers::Shape {
        sessions: args.worker_sessions,
        deltas: args.deltas,
        rounds: args.rounds,
        least: Duration::from_secs_f64(args.stream_seconds),
        cpu: args.worker_cpu,
    };
    let limit = Duration::from_secs(args.limit_seconds);
    let figures = clients.block_on(workers::measure(agentwire, &mock, admin, &shape, limit))?;
    print!("{}", workers::render(&figures, &shape));
    drop(clients);
    drop(mock_runtime);
    Ok(())
}

/// A runtime of `workers` threads for `whose` tasks.
fn runtime(workers: usize, whose: &str) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start {whose} runtime: {e}"))
}

/// One fresh server: every measurement of a round.
async fn run_once(
    contender: &Contender,
    mock: &MockModel,
    args: &Args,
    tag: &str,
    into: &mut Results,
) -> Result<(), String> {
    let mut server = Running::start(contender, &mock.base_url(), tag)?;
    let url = server.url();
    let work = server.work.to_string_lossy().into_owned();
    mock.set_deltas(args.deltas);

    // Idle memory: the baseline after one connection came and went, then 1, 100, 500 held.
    drop(Conn::open(&url).await?);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let base = server.rss_bytes().ok_or("cannot read the server's VmRSS")?;
    let mut held = Vec::new();
    for (i, count) in IDLE_COUNTS.into_iter().enumerate() {
        let more = driver::open_many(&url, count - held.len(), 50).await?;
        held.extend(more);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let rss = server.rss_bytes().ok_or("cannot read the server's VmRSS")?;
        into.idle_bytes[i].push(rss.saturating_sub(base) as f64 / count as f64);
    }
    eprintln!(
        "    idle: {:.0} B per connection at {}",
        into.idle_bytes[2].median().unwrap_or(0.0),
        IDLE_COUNTS[2]
    );
    drop(held);

    let limit = Duration::from_secs(args.limit_seconds);
    for (i, s) in CONCURRENCY.into_iter().enumerate() {
        if s == LAST_PHASE {
            // The largest last: a server that struggles with it cannot spoil the others.
            list_phase(&url, &work, args, mock, into).await?;
        }
        let figures = &mut into.streams[i];
        if figures.failure.is_some() {
            continue;
        }
        let least = Duration::from_secs_f64(args.stream_seconds);
        match stream_phase(&server, &url, &work, s, args.deltas, least, limit).await {
            Ok(_) if !server.alive() => {
                figures.failure = Some("the server exited".into());
            }
            Ok((streamed, cpu)) => record(figures, &streamed, cpu),
            Err(error) => {
                eprintln!("    S = {s}: {error}");
                figures.failure = Some(error);
                continue;
            }
        }
        if let Some(rate) = figures.rate.median() {
            eprintln!("    S = {s}: {rate:.0} deltas/s (median so far)");
        }
    }

    Ok(())
}

/// `thread/list` timed on its own connection while [`LIST_STREAMS`] turns stream, once at each
/// of [`LIST_PACES`].
async fn list_phase(
    url: &str,
    work: &str,
    args: &Args,
    mock: &MockModel,
    into: &mut Results,
) -> Result<(), String> {
    for (pace, figures) in LIST_PACES.into_iter().zip(&mut into.lists) {
        let what = pace.map_or_else(String::new, |burst| format!(" ({burst} per pause)"));
        mock.set_pace(pace);
        let timed = time_lists(url, work, args, &what).await;
        mock.set_pace(None);
        let (percentiles, calls, turns) = timed?;
        if let Some((p50, p99)) = percentiles {
            figures.p50_ms.push(p50);
            figures.p99_ms.push(p99);
        }
        figures.calls += calls;
        tally(&mut figures.turns, &turns);
        if let Some(rate) = aggregate_rate(&turns) {
            figures.rate.push(rate);
        }
    }
    Ok(())
}

/// Deltas per second of `turns` together, from the first delta of any to the last of any.
fn aggregate_rate(turns: &[driver::TurnReport]) -> Option<f64> {
    let first = turns.iter().filter_map(|t| t.arrivals.first()).min()?;
    let last = turns.iter().filter_map(|t| t.arrivals.last()).max()?;
    let delivered: usize = turns.iter().map(|t| t.arrivals.len()).sum();
    let span = last.duration_since(*first).as_secs_f64();
    (span > 0.0).then(|| delivered as f64 / span)
}

/// One timing of `thread/list` while [`LIST_STREAMS`] turns stream (`what` names it in the
/// log): its p50 and p99 in ms, the calls timed, and the turns that streamed meanwhile.
async fn time_lists(
    url: &str,
    work: &str,
    args: &Args,
    what: &str,
) -> Result<(Option<(f64, f64)>, usize, Vec<driver::TurnReport>), String> {
    let sessions = driver::sessions(url, work, LIST_STREAMS).await?;
    let duration = Duration::from_secs_f64(args.list_seconds);
    let (latencies, turns) =
        driver::list_while_streaming(url, &args.list_method, sessions, args.deltas, duration)
            .await?;
    let mut samples = Samples::default();
    for latency in &latencies {
        samples.push(latency.as_secs_f64() * 1e3);
    }
    let percentiles = samples.percentile(50.0).zip(samples.percentile(99.0));
    if let Some((p50, p99)) = percentiles {
        eprintln!("    thread/list while streaming{what}: p50 {p50:.2} ms, p99 {p99:.2} ms");
    }
    Ok((percentiles, latencies.len(), turns))
}

/// S sessions streaming one turn each at once, in waves ([`driver::stream_waves`]): the turns
/// and the server CPU seconds they cost.
async fn stream_phase(
    server: &Running,
    url: &str,
    work: &str,
    s: usize,
    deltas: usize,
    least: Duration,
    limit: Duration,
) -> Result<(Streamed, f64), String> {
    let sessions = driver::sessions(url, work, s).await?;
    let servers = std::slice::from_ref(server);
    let (streamed, cpu, _) = driver::stream_waves(sessions, deltas, least, limit, servers).await?;
    Ok((streamed, cpu))
}

fn tally(figures: &mut StreamFigures, turns: &[driver::TurnReport]) {
    figures.turns += turns.len();
    for turn in turns {
        match &turn.defect {
            None => figures.turns_ok += 1,
            Some(defect) => {
                figures.defect.get_or_insert_with(|| defect.clone());
            }
        }
    }
}

fn record(figures: &mut StreamFigures, streamed: &Streamed, cpu: f64) {
    tally(figures, &streamed.turns);
    let delivered: usize = streamed.turns.iter().map(|t| t.arrivals.len()).sum();
    let wall = streamed.wall.as_secs_f64();
    if delivered == 0 || wall <= 0.0 {
        return;
    }
    figures.rate.push(delivered as f64 / wall);
    figures
        .cpu_per_1000_ms
        .push(cpu_per_1000_ms(cpu, &streamed.turns));
    let mut gaps = Samples::default();
    for turn in &streamed.turns {
        for pair in turn.arrivals.windows(2) {
            gaps.push((pair[1] - pair[0]).as_secs_f64() * 1e3);
        }
    }
    if let Some(p99) = gaps.percentile(99.0) {
        figures.gap_p99_ms.push(p99);
    }
}

/// Milliseconds of CPU per 1000 deltas, for `cpu_seconds` spent on what `turns` delivered.
pub fn cpu_per_1000_ms(cpu_seconds: f64, turns: &[driver::TurnReport]) -> f64 {
    let delivered: usize = turns.iter().map(|t| t.arrivals.len()).sum();
    cpu_seconds * 1e6 / delivered.max(1) as f64
}
