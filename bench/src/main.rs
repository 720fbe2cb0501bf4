//! `agentwire-bench`: the stdio benchmark of `agentwire app-server`, side by side with an echo
//! floor (`echo-floor`: a minimal loop with the same input and output rules, the physical limit
//! of the path) and the reference server (`codex app-server` 0.171.0).
//!
//! Each round starts every contender afresh (interleaved, in a rotating order, so that machine
//! noise hits all of them alike) and measures: the time from spawn to the `initialize`
//! response, `thread/list` round trips per second with 1 request in flight and with a window
//! of requests in flight, and the peak resident memory. The table reports medians over rounds,
//! their spread, and the ratios the targets are stated in.

mod report;
mod validation;

use agentwire_bench::{awake, load_average, session, sibling, stats};

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{ThreadList, ThreadLoadedList};
use clap::Parser;

use crate::session::{Contender, Outcome, Outcomes, Session};

use crate::stats::Samples;

/// The command that reproduces the measurement.
pub const REPRODUCE: &str = "cargo build --release -p agentwire -p agentwire-bench && bash scripts/install-bench-tools.sh && target/release/agentwire-bench";

/// The contenders' names in the table.
pub const AGENTWIRE: &str = "agentwire";
/// See [`AGENTWIRE`].
pub const BASELINE: &str = "agentwire baseline";
/// See [`AGENTWIRE`].
pub const ECHO: &str = "echo floor";
/// See [`AGENTWIRE`].
pub const REFERENCE: &str = "codex app-server 0.171.0";

/// The requests timed, each with its params: `thread/list` (the engine answers from its SQLite
/// index) and `thread/loaded/list` (answered from memory: what the runtime path alone costs).
pub const METHODS: [(&str, &str); 2] = [(ThreadList::NAME, "{}"), (ThreadLoadedList::NAME, "{}")];
/// Params of the first method that fail validation, sent once to show what is checked.
pub const INVALID_PARAMS: &str = r#"{"limit":"ten"}"#;

/// Side-by-side stdio benchmark.
#[derive(Debug, Parser)]
#[command(name = "agentwire-bench", about)]
struct Args {
    /// The agentwire binary (default: `agentwire` next to this program).
    #[arg(long, value_name = "PATH")]
    agentwire: Option<PathBuf>,
    /// The echo floor binary (default: `echo-floor` next to this program).
    #[arg(long, value_name = "PATH")]
    echo_floor: Option<PathBuf>,
    /// The reference `codex` binary (default: the one installed under `bench/node_modules`).
    #[arg(long, value_name = "PATH")]
    codex: Option<PathBuf>,
    /// Another agentwire binary to measure alongside (e.g. a build from before a change).
    #[arg(long, value_name = "PATH")]
    baseline: Option<PathBuf>,
    /// Leave the reference server out.
    #[arg(long)]
    skip_codex: bool,
    /// Rounds; every figure is the median over rounds.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Seconds of each timed phase.
    #[arg(long, default_value_t = 2.0)]
    duration: f64,
    /// Seconds of lockstep warm-up before the timed phases.
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// Requests in flight in the windowed phase.
    #[arg(long, default_value_t = 32)]
    window: usize,
    /// Measure only the contenders whose name contains this (for profiling one of them).
    #[arg(long, value_name = "NAME")]
    only: Option<String>,
    /// Keep every vCPU from halting while measuring (lowest-priority busy loops; see the
    /// `awake` module): takes the hypervisor's wake-up latency out of the figures.
    #[arg(long)]
    keep_awake: bool,
    /// Internal: the body of a `--keep-awake` spinner.
    #[arg(long, hide = true)]
    spin: bool,
}

/// Everything measured for one contender.
#[derive(Debug, Default)]
pub struct Results {
    /// The contender.
    pub name: String,
    /// Why it was not measured.
    pub skipped: Option<String>,
    /// The first failure, if a round failed.
    pub failure: Option<String>,
    /// The round trips of each of [`METHODS`].
    pub rates: [Rates; METHODS.len()],
    /// Milliseconds from spawn to the `initialize` response.
    pub startup_ms: Samples,
    /// Peak resident memory in MB (10^6 bytes).
    pub peak_mb: Samples,
    /// The answer to the first method with [`INVALID_PARAMS`].
    pub invalid_probe: Option<Outcome>,
}

/// Round trips of one method.
#[derive(Debug, Default)]
pub struct Rates {
    /// Per second, 1 in flight.
    pub lockstep: Samples,
    /// Per second, a window in flight.
    pub windowed: Samples,
    /// The responses of the timed phases.
    pub outcomes: Outcomes,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.spin {
        awake::spin();
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("agentwire-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A fresh home directory for one contender in this run.
fn home_of(name: &str) -> PathBuf {
    let slug: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    std::env::temp_dir().join(format!("agentwire-bench-{}-{slug}", std::process::id()))
}

fn contenders(args: &Args) -> Result<(Vec<Contender>, Vec<Results>), String> {
    let agentwire = match &args.agentwire {
        Some(path) => path.clone(),
        None => sibling("agentwire")?,
    };
    let echo = match &args.echo_floor {
        Some(path) => path.clone(),
        None => sibling("echo-floor")?,
    };
    for path in [&agentwire, &echo] {
        if !path.is_file() {
            return Err(format!(
                "{} not found; build it: cargo build --release -p agentwire -p agentwire-bench",
                path.display()
            ));
        }
    }
    let mut list = vec![
        Contender {
            name: AGENTWIRE.into(),
            program: agentwire,
            args: vec!["app-server".into()],
            home_vars: vec!["HOME", "AGENTWIRE_HOME"],
            home: home_of(AGENTWIRE),
        },
        Contender {
            name: ECHO.into(),
            program: echo,
            args: Vec::new(),
            home_vars: Vec::new(),
            home: home_of(ECHO),
        },
    ];
    if let Some(path) = &args.baseline {
        if !path.is_file() {
            return Err(format!("{} not found", path.display()));
        }
        list.insert(
            1,
            Contender {
                name: BASELINE.into(),
                program: path.clone(),
                args: vec!["app-server".into()],
                home_vars: vec!["HOME", "AGENTWIRE_HOME"],
                home: home_of(BASELINE),
            },
        );
    }
    let mut skipped = Vec::new();
    let codex = agentwire_bench::reference_server(args.codex.clone());
    let codex_name = REFERENCE.to_owned();
    if args.skip_codex {
        skipped.push((codex_name, "left out (--skip-codex)".to_owned()));
    } else if !codex.is_file() {
        skipped.push((
            codex_name,
            format!(
                "not installed ({} missing): run bash scripts/install-bench-tools.sh",
                codex.display()
            ),
        ));
    } else {
        list.push(Contender {
            name: codex_name,
            program: codex,
            args: vec!["app-server".into()],
            home_vars: vec!["HOME", "CODEX_HOME"],
            home: home_of(REFERENCE),
        });
    }
    if let Some(only) = &args.only {
        let (kept, left_out): (Vec<_>, Vec<_>) = list
            .into_iter()
            .partition(|c| c.name.contains(only.as_str()));
        list = kept;
        for c in left_out {
            skipped.push((c.name, "left out (--only)".to_owned()));
        }
    }
    let mut results: Vec<Results> = list
        .iter()
        .map(|c| Results {
            name: c.name.clone(),
            ..Results::default()
        })
        .collect();
    results.extend(skipped.into_iter().map(|(name, why)| Results {
        name,
        skipped: Some(why),
        ..Results::default()
    }));
    Ok((list, results))
}

/// One start of one contender: every measurement of a round.
fn run_once(
    contender: &Contender,
    args: &Args,
    first: bool,
    into: &mut Results,
) -> Result<(), String> {
    let duration = Duration::from_secs_f64(args.duration);
    let warmup = Duration::from_secs_f64(args.warmup);
    let phases = METHODS.len() as u32 * 2;
    let limit = (warmup + duration) * phases + Duration::from_secs(60);
    let (mut session, startup) = Session::start(contender, limit)?;
    if first {
        into.invalid_probe = Some(session.probe(METHODS[0].0, INVALID_PARAMS)?);
    }
    let mut phases = Vec::new();
    for (method, params) in METHODS {
        session.lockstep(method, params, warmup)?;
        let lockstep = session.lockstep(method, params, duration)?;
        let windowed = session.windowed(method, params, args.window, duration)?;
        phases.push((lockstep, windowed));
    }
    let peak_kib = session.peak_memory_kib();
    session.finish(Duration::from_secs(10))?;
    // Recorded only once the whole round succeeded, so that every series has the same rounds.
    into.startup_ms.push(startup.as_secs_f64() * 1e3);
    if let Some(kib) = peak_kib {
        into.peak_mb.push(kib as f64 * 1024.0 / 1e6);
    }
    for ((lockstep, windowed), rates) in phases.iter().zip(&mut into.rates) {
        rates.lockstep.push(lockstep.rate());
        rates.windowed.push(windowed.rate());
        rates.outcomes.merge(&lockstep.outcomes);
        rates.outcomes.merge(&windowed.outcomes);
    }
    Ok(())
}

fn run(args: &Args) -> Result<(), String> {
    if args.rounds == 0 || args.window == 0 || args.duration <= 0.0 {
        return Err("--rounds, --window and --duration must be positive".into());
    }
    let (list, mut results) = contenders(args)?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let load_before = load_average();
    let awake = match args.keep_awake {
        true => Some(awake::KeepAwake::start(cores)?),
        false => None,
    };
    eprintln!(
        "agentwire-bench: {} rounds of {} contenders, {} s per phase; load average {load_before}",
        args.rounds,
        list.len(),
        args.duration
    );
    for round in 0..args.rounds {
        for k in 0..list.len() {
            let index = (round + k) % list.len();
            let result = &mut results[index];
            if result.failure.is_some() {
                continue;
            }
            eprintln!(
                "  round {}/{}: {}",
                round + 1,
                args.rounds,
                list[index].name
            );
            if let Err(error) = run_once(&list[index], args, round == 0, result) {
                eprintln!("    failed: {error}");
                result.failure = Some(error);
            }
        }
    }
    let load_after = load_average();
    drop(awake);
    for contender in &list {
        let _ = std::fs::remove_dir_all(&contender.home);
    }
    let validation = validation::measure()?;
    let environment = report::Environment {
        rounds: args.rounds,
        duration: args.duration,
        window: args.window,
        cores,
        keep_awake: args.keep_awake,
        load_before,
        load_after,
    };
    print!("{}", report::render(&results, &validation, &environment));
    Ok(())
}
