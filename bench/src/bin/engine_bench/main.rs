//! `engine-bench`: what the engine costs with real data on disk, over stdio.
//!
//! Measures, each figure a median over rounds (every round a fresh server process): `thread/list`
//! page latency (p50, p95) over a home of many persisted threads, first and deep pages, default
//! and 100-thread pages; `thread/read` with `includeTurns` of a thread of many items (read from
//! disk by a fresh process); the rate of `item/agentMessage/delta` notifications from one
//! fixture turn to a client that parses every line; and `thread/list` on an empty home beside
//! the reference server (which cannot run fixture turns, so that is all it is compared on).
//! The homes are created through the server itself (see [`populate`]) and kept for later runs.

mod measure;
mod populate;
mod table;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use agentwire_bench::session::{Contender, Session};
use agentwire_bench::sibling;
use clap::Parser;

use crate::table::{Row, Table};

/// Engine benchmark over stdio.
#[derive(Debug, Parser)]
#[command(
    name = "engine-bench",
    about = "What the engine costs with real data on disk, over stdio: thread/list pages, thread/read of a long thread, the delta rate of a turn."
)]
pub struct Args {
    /// The agentwire binary (default: `agentwire` next to this program).
    #[arg(long, value_name = "PATH")]
    agentwire: Option<PathBuf>,
    /// The reference `codex` binary (default: the one installed under `bench/node_modules`).
    #[arg(long, value_name = "PATH")]
    codex: Option<PathBuf>,
    /// Leave the reference server out.
    #[arg(long)]
    skip_codex: bool,
    /// Where the populated homes are kept between runs.
    #[arg(long, value_name = "DIR")]
    homes: Option<PathBuf>,
    /// Rounds; every figure is the median over rounds.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Persisted threads for the `thread/list` figures.
    #[arg(long, default_value_t = 10_000)]
    threads: usize,
    /// Items of the thread read by `thread/read`.
    #[arg(long, default_value_t = 10_000)]
    items: usize,
    /// Deltas of the streamed turn.
    #[arg(long, default_value_t = 200_000)]
    deltas: usize,
    /// Requests timed per page kind and round.
    #[arg(long, default_value_t = 200)]
    requests: usize,
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("engine-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

/// An agentwire server on the home `name` under `homes`.
fn agentwire(program: &Path, homes: &Path, name: &str) -> Contender {
    Contender {
        name: name.to_owned(),
        program: program.to_path_buf(),
        args: vec!["app-server".into()],
        home_vars: vec!["HOME", "AGENTWIRE_HOME"],
        home: homes.join(name),
    }
}

fn run(args: &Args) -> Result<(), String> {
    if args.rounds == 0 || args.requests == 0 || args.threads <= 100 || args.items < 2 {
        return Err(
            "--rounds and --requests must be positive, --threads > 100, --items > 1".into(),
        );
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
    let homes = args
        .homes
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("agentwire-engine-bench"));
    let listing = agentwire(&program, &homes, "threads");
    let reading = agentwire(&program, &homes, "items");
    let streaming = agentwire(&program, &homes, &format!("stream-{}", std::process::id()));
    let empty = agentwire(&program, &homes, &format!("empty-{}", std::process::id()));
    let codex = agentwire_bench::reference_server(args.codex.clone());
    let reference = (!args.skip_codex && codex.is_file()).then(|| Contender {
        name: "codex app-server 0.171.0".into(),
        program: codex,
        args: vec!["app-server".into()],
        home_vars: vec!["HOME", "CODEX_HOME"],
        home: homes.join(format!("codex-{}", std::process::id())),
    });

    eprintln!(
        "engine-bench: populating {} (kept for later runs)",
        homes.display()
    );
    populate::many_threads(&listing, args.threads)?;
    let thread = populate::many_items(&reading, args.items)?;
    // A position about nine tenths of the way down the listing.
    let deep = measure::deep_cursor(&listing, args.threads / 10 * 9)?;

    // Each page kind asked the same way every time (after the first, the server may answer
    // from memory) and in 10 variants taken in turn (limits around the nominal one), more than
    // the server keeps, so that every request is read from the index.
    let page = |limit: usize, cursor: Option<&str>| {
        let mut params = serde_json::json!({});
        if limit != 25 {
            params["limit"] = limit.into();
        }
        if let Some(cursor) = cursor {
            params["cursor"] = cursor.into();
        }
        params.to_string()
    };
    let mut pages: Vec<(String, Vec<String>)> = Vec::new();
    for (name, limit) in [("default page (25)", 25), ("`limit: 100`", 100)] {
        for (position, cursor) in [("first", None), ("deep cursor", Some(deep.as_str()))] {
            pages.push((
                format!("{name}, {position}, same request repeated"),
                vec![page(limit, cursor)],
            ));
            pages.push((
                format!(
                    "{name}, {position}, 10 limits around it in turn (never repeated from memory)"
                ),
                (limit - 5..limit + 5).map(|l| page(l, cursor)).collect(),
            ));
        }
    }
    let mut list_rows: Vec<Row> = pages.iter().map(|(label, _)| Row::new(label)).collect();
    let mut cold = Row::new("first `thread/list` of a fresh process");
    let mut read = Row::new("");
    let mut deltas = Row::new("");
    let mut empty_ours = Row::new("");
    let mut empty_reference = Row::new("");
    let read_params = format!(r#"{{"threadId":"{thread}","includeTurns":true}}"#);
    for round in 0..args.rounds {
        eprintln!("  round {}/{}", round + 1, args.rounds);
        cold.push_one(measure::first_request(&listing, "thread/list", "{}")?);
        let (mut session, _) = Session::start(&listing, Duration::from_secs(600))?;
        for ((_, params), row) in pages.iter().zip(&mut list_rows) {
            row.push(&measure::latencies(
                &mut session,
                "thread/list",
                params,
                args.requests,
            )?);
        }
        session.finish(Duration::from_secs(30))?;
        read.push_one(measure::first_request(
            &reading,
            "thread/read",
            &read_params,
        )?);
        deltas.push_one(measure::delta_rate(&streaming, args.deltas)?);
        for (contender, row) in [
            (Some(&empty), &mut empty_ours),
            (reference.as_ref(), &mut empty_reference),
        ] {
            let Some(contender) = contender else { continue };
            let (mut session, _) = Session::start(contender, Duration::from_secs(600))?;
            row.push(&measure::latencies(
                &mut session,
                "thread/list",
                &["{}"],
                args.requests,
            )?);
            session.finish(Duration::from_secs(30))?;
        }
    }
    for contender in [Some(&empty), reference.as_ref()].into_iter().flatten() {
        let _ = std::fs::remove_dir_all(&contender.home);
    }
    let table = Table {
        args,
        list_rows,
        cold,
        read,
        deltas,
        empty_ours,
        empty_reference,
        reference: reference.is_some(),
    };
    print!("{}", table.render());
    Ok(())
}
