//! `search-bench`: `fuzzyFileSearch` on a generated tree of many files, agentwire beside the
//! reference server, over stdio.
//!
//! Every round starts each server afresh (in turn, alternating which goes first) and times,
//! from the request written to its answer read:
//! - *cold*: the first `fuzzyFileSearch` of the fresh process (nothing walked yet; the
//!   operating system's file cache is warm for both, since the tree was just read);
//! - *warm*: then each of the queries again, several times, in turn (a server may answer from
//!   what it kept);
//! - `config/read` and `model/list` round trips (whatever they answer, which is reported).
//!
//! The table gives medians over all rounds and the ratio reference ÷ agentwire.

mod tree;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use agentwire_bench::session::{Contender, Outcome, Session};
use agentwire_bench::sibling;
use agentwire_bench::stats::Samples;
use clap::Parser;
use serde_json::{Value, json};

/// The command that reproduces the table.
const REPRODUCE: &str = "cargo build --release -p agentwire -p agentwire-bench && bash scripts/install-bench-tools.sh && target/release/search-bench";

/// The queries, each timed warm; the first is also the cold one.
const QUERIES: [&str; 5] = ["widget", "srvhndl", "pkg42mod7", "cachetok", "zzqqxx"];

/// Fuzzy file search benchmark.
#[derive(Debug, Parser)]
#[command(
    name = "search-bench",
    about = "fuzzyFileSearch on a generated tree, agentwire beside the reference server: cold (first query of a fresh process) and warm."
)]
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
    /// Listed (not ignored) files in the generated tree.
    #[arg(long, default_value_t = 100_000)]
    files: usize,
    /// Where the tree is generated (kept for later runs).
    #[arg(long, value_name = "DIR")]
    tree: Option<PathBuf>,
    /// Rounds (fresh processes per server).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Warm repetitions of each query per round.
    #[arg(long, default_value_t = 4)]
    repeat: usize,
}

/// What was measured for one server.
#[derive(Default)]
struct Figures {
    name: String,
    cold_ms: Samples,
    warm_ms: Samples,
    config_read_ms: Samples,
    model_list_ms: Samples,
    /// Results of each query in the last round.
    results: Vec<(String, usize)>,
    config_read: Option<Outcome>,
    model_list: Option<Outcome>,
    failure: Option<String>,
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("search-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

fn home(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("search-bench-{}-{name}", std::process::id()))
}

fn run(args: &Args) -> Result<(), String> {
    if args.rounds == 0 || args.repeat == 0 || args.files == 0 {
        return Err("--rounds, --repeat and --files must be positive".into());
    }
    let program = match &args.agentwire {
        Some(path) => path.clone(),
        None => sibling("agentwire")?,
    };
    if !program.is_file() {
        return Err(format!(
            "{} not found; build it: cargo build --release -p agentwire -p agentwire-bench",
            program.display()
        ));
    }
    let mut contenders = vec![Contender {
        name: "agentwire".into(),
        program,
        args: vec!["app-server".into()],
        home_vars: vec!["HOME", "AGENTWIRE_HOME"],
        home: home("agentwire"),
    }];
    let codex = agentwire_bench::reference_server(args.codex.clone());
    let mut skipped = None;
    if args.skip_codex {
        skipped = Some("left out (--skip-codex)".to_owned());
    } else if !codex.is_file() {
        skipped = Some(format!(
            "not installed ({} missing): run bash scripts/install-bench-tools.sh",
            codex.display()
        ));
    } else {
        contenders.push(Contender {
            name: "codex app-server 0.171.0".into(),
            program: codex,
            args: vec!["app-server".into()],
            home_vars: vec!["HOME", "CODEX_HOME"],
            home: home("codex"),
        });
    }
    let root = args.tree.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("agentwire-search-bench-tree-{}", args.files))
    });
    eprintln!(
        "search-bench: tree of {} files at {} (kept)",
        args.files,
        root.display()
    );
    tree::ensure(&root, args.files)?;
    let root_text = root.to_string_lossy().into_owned();

    let mut figures: Vec<Figures> = contenders
        .iter()
        .map(|c| Figures {
            name: c.name.clone(),
            ..Figures::default()
        })
        .collect();
    for round in 0..args.rounds {
        for k in 0..contenders.len() {
            let i = (round + k) % contenders.len();
            if figures[i].failure.is_some() {
                continue;
            }
            eprintln!(
                "  round {}/{}: {}",
                round + 1,
                args.rounds,
                contenders[i].name
            );
            if let Err(e) = one_round(&contenders[i], &root_text, args, &mut figures[i]) {
                eprintln!("    failed: {e}");
                figures[i].failure = Some(e);
            }
        }
    }
    for contender in &contenders {
        let _ = std::fs::remove_dir_all(&contender.home);
    }
    print!("{}", render(&figures, skipped.as_deref(), args, &root_text));
    Ok(())
}

/// One fresh process of one server: the cold query, the warm ones, the other round trips.
fn one_round(
    contender: &Contender,
    root: &str,
    args: &Args,
    into: &mut Figures,
) -> Result<(), String> {
    let (mut session, _) = Session::start(contender, Duration::from_secs(600))?;
    let search = |session: &mut Session, query: &str| -> Result<(f64, usize), String> {
        let params = json!({"query": query, "roots": [root]}).to_string();
        let started = Instant::now();
        let answer = session.call("fuzzyFileSearch", &params)?;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let count = answer
            .get("files")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        Ok((ms, count))
    };
    let (cold, _) = search(&mut session, QUERIES[0])?;
    let mut warm = Vec::new();
    let mut results = Vec::new();
    for _ in 0..args.repeat {
        results.clear();
        for query in QUERIES {
            let (ms, count) = search(&mut session, query)?;
            warm.push(ms);
            results.push((query.to_owned(), count));
        }
    }
    let mut timed = |method: &str| -> Result<(Samples, Outcome), String> {
        let mut samples = Samples::default();
        let mut outcome = Outcome::Result;
        for _ in 0..20 {
            let started = Instant::now();
            outcome = session.probe(method, "{}")?;
            samples.push(started.elapsed().as_secs_f64() * 1e3);
        }
        Ok((samples, outcome))
    };
    let (config_read, config_outcome) = timed("config/read")?;
    let (model_list, model_outcome) = timed("model/list")?;
    session.finish(Duration::from_secs(10))?;
    into.cold_ms.push(cold);
    for ms in warm {
        into.warm_ms.push(ms);
    }
    if let Some(ms) = config_read.median() {
        into.config_read_ms.push(ms);
    }
    if let Some(ms) = model_list.median() {
        into.model_list_ms.push(ms);
    }
    into.results = results;
    into.config_read = Some(config_outcome);
    into.model_list = Some(model_outcome);
    Ok(())
}

fn ms(value: Option<f64>) -> String {
    match value {
        Some(v) if v < 1.0 => format!("{v:.3}"),
        Some(v) => format!("{v:.1}"),
        None => "–".into(),
    }
}

fn render(figures: &[Figures], skipped: Option<&str>, args: &Args, root: &str) -> String {
    let mut out = String::new();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let _ = writeln!(
        out,
        "\n### fuzzyFileSearch on {} listed files ({} rounds, {} cores)\n",
        args.files, args.rounds, cores
    );
    let _ = writeln!(
        out,
        "| server | cold: first query, ms (median) | warm: per query, ms (median) | warm p95, ms | config/read, ms | model/list, ms |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
    for f in figures {
        if let Some(failure) = &f.failure {
            let _ = writeln!(out, "| {} | failed: {failure} | | | | |", f.name);
            continue;
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            f.name,
            ms(f.cold_ms.median()),
            ms(f.warm_ms.median()),
            ms(f.warm_ms.percentile(95.0)),
            ms(f.config_read_ms.median()),
            ms(f.model_list_ms.median()),
        );
    }
    if let Some(why) = skipped {
        let _ = writeln!(out, "| codex app-server 0.171.0 | {why} | | | | |");
    }
    if let [ours, reference] = figures
        && ours.failure.is_none()
        && reference.failure.is_none()
    {
        let ratio = |a: &Samples, b: &Samples| match (a.median(), b.median()) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.1}×", a / b),
            _ => "–".into(),
        };
        // Round trips are compared only when both servers gave an answer of the same kind.
        let same = |a: &Option<Outcome>, b: &Option<Outcome>| {
            matches!((a, b), (Some(Outcome::Result), Some(Outcome::Result)))
        };
        let trip = |a: &Samples, b: &Samples, comparable: bool| match comparable {
            true => ratio(a, b),
            false => "– (answers differ)".to_owned(),
        };
        let _ = writeln!(
            out,
            "| reference ÷ agentwire | {} | {} | | {} | {} |",
            ratio(&reference.cold_ms, &ours.cold_ms),
            ratio(&reference.warm_ms, &ours.warm_ms),
            trip(
                &reference.config_read_ms,
                &ours.config_read_ms,
                same(&reference.config_read, &ours.config_read)
            ),
            trip(
                &reference.model_list_ms,
                &ours.model_list_ms,
                same(&reference.model_list, &ours.model_list)
            ),
        );
    }
    let _ = writeln!(out, "\nResults per query (last round):");
    for f in figures.iter().filter(|f| f.failure.is_none()) {
        let counts: Vec<String> = f
            .results
            .iter()
            .map(|(q, n)| format!("`{q}` {n}"))
            .collect();
        let _ = writeln!(
            out,
            "- {}: {}; config/read answered {}; model/list answered {}",
            f.name,
            counts.join(", "),
            f.config_read
                .as_ref()
                .map_or("–".into(), ToString::to_string),
            f.model_list
                .as_ref()
                .map_or("–".into(), ToString::to_string),
        );
    }
    let _ = writeln!(
        out,
        "\nTree: {root} (generated once, kept). Cold = the first query of a fresh process with the \
         OS file cache warm; warm = {} repetitions of {} queries in the same process.\n\
         Reproduce: `{REPRODUCE}`",
        args.repeat,
        QUERIES.len()
    );
    out
}
