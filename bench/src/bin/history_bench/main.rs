//! `history-bench`: paging a thread of 100,000 items with `thread/items/list` and
//! `thread/turns/list`, over stdio, beside reading it whole with `thread/read`
//! (`includeTurns: true`), the baseline in the same run.
//!
//! The thread is written once as a rollout in the documented on-disk format
//! (`engine/store/src/record.rs`) and kept for later runs; every round then starts fresh
//! server processes on it and times, from the request written to its answer read:
//! - the first request of a fresh process: the first page of items, the first page of turns,
//!   and the whole thread (`thread/read`);
//! - the same process answering again (warm): first item page, a page ~90% of the way in (a
//!   cursor walked to in advance), the first turn page, one turn with all its items;
//! - the first page of a fresh process whose index was deleted, so the turn and item positions
//!   are built from the rollout by that request (the one-off cost for a rollout this build has
//!   never indexed).
//!
//! The table gives medians over rounds and the ratio of the baseline to each figure.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use agentwire_bench::session::{Contender, Outcome, Session};
use agentwire_bench::stats::Samples;
use clap::Parser;
use serde_json::{Value, json};

/// The command that reproduces the table.
const REPRODUCE: &str =
    "cargo build --release -p agentwire -p agentwire-bench && target/release/history-bench";

/// The thread's id.
const THREAD: &str = "00000000-0000-7000-8000-0000000b1e55";

/// How long one server process may take.
const LIMIT: Duration = Duration::from_secs(600);

/// Thread history paging benchmark.
#[derive(Debug, Parser)]
#[command(
    name = "history-bench",
    about = "thread/items/list and thread/turns/list pages of a 100,000-item thread, beside thread/read of the whole thread."
)]
struct Args {
    /// The agentwire binary (default: `agentwire` next to this program).
    #[arg(long, value_name = "PATH")]
    agentwire: Option<PathBuf>,
    /// Where the home holding the thread is kept between runs.
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
    /// Items in the thread.
    #[arg(long, default_value_t = 100_000)]
    items: usize,
    /// Items per turn (one user message, the rest agent messages).
    #[arg(long, default_value_t = 50)]
    per_turn: usize,
    /// Rounds; every figure is the median over rounds.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Warm requests timed per page kind and round.
    #[arg(long, default_value_t = 100)]
    requests: usize,
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("history-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Writes the rollout of a thread of `items` items, `per_turn` to a turn, under `home`,
/// unless a previous run left exactly that.
fn populate(home: &Path, items: usize, per_turn: usize) -> Result<(), String> {
    let what = format!("{items} items, {per_turn} per turn\n");
    let marker = home.join("populated");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == what) {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(home);
    let dir = home.join("sessions/2026/01/02");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = String::with_capacity(items * 400);
    let header = json!({"type": "thread", "version": 1, "meta": {
        "id": THREAD, "sessionId": THREAD, "createdAt": 1_767_323_045, "cliVersion": "0.2.0",
        "source": "vscode",
        "settings": {"model": "fixture", "modelProvider": "fixture", "cwd": "/tmp",
            "approvalPolicy": "never", "approvalsReviewer": "user",
            "sandbox": {"type": "readOnly", "networkAccess": false}}
    }});
    let _ = writeln!(out, "{header}");
    let text = "lorem ipsum dolor sit amet, consectetur adipiscing elit ".repeat(3);
    let mut made = 0;
    let mut turn = 0;
    while made < items {
        let id = format!("turn-{turn}");
        let at = 1_767_323_046 + turn as i64;
        let _ = writeln!(
            out,
            "{}",
            json!({"type": "turnStarted", "at": at, "turnId": id, "rootTurnId": id, "startedAt": at})
        );
        for n in 0..per_turn.min(items - made) {
            let item = if n == 0 {
                json!({"type": "userMessage", "id": format!("{id}-{n}"), "clientId": null,
                       "content": [{"type": "text", "text": text, "text_elements": []}],
                       "startedAtMs": at * 1000, "completedAtMs": at * 1000})
            } else {
                json!({"type": "agentMessage", "id": format!("{id}-{n}"), "text": text,
                       "phase": null, "moderation": null, "memoryCitation": null,
                       "delivery": null, "questions": null,
                       "startedAtMs": at * 1000, "completedAtMs": at * 1000})
            };
            let _ = writeln!(
                out,
                "{}",
                json!({"type": "itemCompleted", "at": at, "turnId": id, "item": item})
            );
            made += 1;
        }
        let _ = writeln!(
            out,
            "{}",
            json!({"type": "turnCompleted", "at": at, "turnId": id, "status": "completed",
                   "error": null, "completedAt": at, "durationMs": 10})
        );
        turn += 1;
    }
    let path = dir.join(format!("rollout-2026-01-02T03-04-05-{THREAD}.jsonl"));
    std::fs::write(&path, out).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(&marker, what).map_err(|e| format!("marker: {e}"))
}

/// Times one request; it must be answered with a result.
fn timed(session: &mut Session, method: &str, params: &str) -> Result<f64, String> {
    let started = Instant::now();
    let outcome = session.probe(method, params)?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    if outcome != Outcome::Result {
        return Err(format!("{method} {params} answered {outcome}"));
    }
    Ok(ms)
}

/// The first request of a fresh process.
fn first(contender: &Contender, method: &str, params: &str) -> Result<f64, String> {
    let (mut session, _) = Session::start(contender, LIMIT)?;
    let ms = timed(&mut session, method, params)?;
    session.finish(Duration::from_secs(30))?;
    Ok(ms)
}

/// A cursor about nine tenths of the way through the items.
fn deep_cursor(contender: &Contender, items: usize) -> Result<String, String> {
    let (mut session, _) = Session::start(contender, LIMIT)?;
    let mut cursor = Value::Null;
    let mut walked = 0;
    while walked < items / 10 * 9 {
        let params = json!({"threadId": THREAD, "limit": 1000, "cursor": cursor}).to_string();
        let page = session.call("thread/items/list", &params)?;
        walked += page["data"].as_array().map_or(0, Vec::len);
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            return Err(format!("only {walked} items listed"));
        }
    }
    session.finish(Duration::from_secs(30))?;
    cursor
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| "no cursor".to_owned())
}

/// One figure: per round, a median.
struct Row {
    label: String,
    params: String,
    rounds: Samples,
}

impl Row {
    fn new(label: &str, method: &str, params: &str) -> Self {
        Self {
            label: label.to_owned(),
            params: format!("`{method}` `{params}`"),
            rounds: Samples::default(),
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    if args.rounds == 0 || args.requests == 0 || args.items < 10 || args.per_turn < 2 {
        return Err("--rounds, --requests positive; --items ≥ 10; --per-turn ≥ 2".into());
    }
    let program = match &args.agentwire {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .map_err(|e| format!("cannot locate myself: {e}"))?
            .with_file_name("agentwire"),
    };
    if !program.is_file() {
        return Err(format!(
            "{} not found; build it: cargo build --release -p agentwire -p agentwire-bench",
            program.display()
        ));
    }
    let home = args
        .home
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("agentwire-history-bench"));
    eprintln!(
        "history-bench: thread of {} items in {} (kept)",
        args.items,
        home.display()
    );
    populate(&home, args.items, args.per_turn)?;
    let contender = Contender {
        name: "agentwire".into(),
        program,
        args: vec!["app-server".into()],
        home_vars: vec!["HOME", "AGENTWIRE_HOME"],
        home: home.clone(),
    };
    // Builds the index and the positions once (and checks that the pages answer).
    let deep = deep_cursor(&contender, args.items)?;

    let items_first = json!({"threadId": THREAD, "limit": 50}).to_string();
    let items_deep = json!({"threadId": THREAD, "limit": 50, "cursor": deep}).to_string();
    let turns_first = json!({"threadId": THREAD}).to_string();
    let one_turn = json!({"threadId": THREAD, "limit": 1, "itemsView": "full"}).to_string();
    let read_all = json!({"threadId": THREAD, "includeTurns": true}).to_string();
    let mut baseline = Row::new(
        "baseline: whole thread, first request of a fresh process",
        "thread/read",
        &read_all,
    );
    let mut fresh = [
        Row::new(
            "first item page, first request of a fresh process",
            "thread/items/list",
            &items_first,
        ),
        Row::new(
            "first turn page, first request of a fresh process",
            "thread/turns/list",
            &turns_first,
        ),
    ];
    let mut warm = [
        Row::new("first item page, warm", "thread/items/list", &items_first),
        Row::new(
            "item page 90% in (cursor), warm",
            "thread/items/list",
            &items_deep,
        ),
        Row::new(
            "first turn page (25 turns, summary), warm",
            "thread/turns/list",
            &turns_first,
        ),
        Row::new(
            "newest turn with all its items, warm",
            "thread/turns/list",
            &one_turn,
        ),
    ];
    let mut unindexed = Row::new(
        "first item page, index deleted (positions built by this request)",
        "thread/items/list",
        &items_first,
    );
    for round in 0..args.rounds {
        eprintln!("  round {}/{}", round + 1, args.rounds);
        baseline
            .rounds
            .push(first(&contender, "thread/read", &read_all)?);
        fresh[0]
            .rounds
            .push(first(&contender, "thread/items/list", &items_first)?);
        fresh[1]
            .rounds
            .push(first(&contender, "thread/turns/list", &turns_first)?);
        let (mut session, _) = Session::start(&contender, LIMIT)?;
        for (row, (method, params)) in warm.iter_mut().zip([
            ("thread/items/list", &items_first),
            ("thread/items/list", &items_deep),
            ("thread/turns/list", &turns_first),
            ("thread/turns/list", &one_turn),
        ]) {
            let mut samples = Samples::default();
            for _ in 0..args.requests {
                samples.push(timed(&mut session, method, params)?);
            }
            row.rounds.push(samples.median().ok_or("nothing measured")?);
        }
        session.finish(Duration::from_secs(30))?;
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(home.join(format!("state.sqlite{suffix}")));
        }
        unindexed
            .rounds
            .push(first(&contender, "thread/items/list", &items_first)?);
    }
    print!("{}", render(args, &baseline, &fresh, &warm, &unindexed));
    Ok(())
}

fn ms(value: Option<f64>) -> String {
    match value {
        Some(v) if v < 1.0 => format!("{v:.3}"),
        Some(v) => format!("{v:.1}"),
        None => "–".into(),
    }
}

fn render(args: &Args, baseline: &Row, fresh: &[Row], warm: &[Row], unindexed: &Row) -> String {
    let mut out = String::new();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let _ = writeln!(
        out,
        "\n### Paging a thread of {} items ({} per turn), {} rounds, {} cores\n",
        args.items, args.per_turn, args.rounds, cores
    );
    let _ = writeln!(out, "Reproduce: `{REPRODUCE}`\n");
    let _ = writeln!(
        out,
        "| request | params | ms (median of round medians) | baseline ÷ this |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|");
    let base = baseline.rounds.median();
    for row in std::iter::once(baseline)
        .chain(fresh)
        .chain(warm)
        .chain([unindexed])
    {
        let ratio = match (base, row.rounds.median()) {
            (Some(b), Some(r)) if r > 0.0 => format!("{:.0}×", b / r),
            _ => "–".into(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            row.label,
            row.params.replace(THREAD, "…"),
            ms(row.rounds.median()),
            ratio
        );
    }
    let _ = writeln!(
        out,
        "\nWarm figures: {} requests per round on one connection. \"First request\" figures: one \
         fresh server process each, timed from the request written to its answer read.",
        args.requests
    );
    out
}
