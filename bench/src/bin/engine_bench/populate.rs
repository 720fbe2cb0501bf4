//! The homes the engine benchmark reads: created through the real server (`thread/start` and
//! one fixture turn per thread), so every rollout and index row is one the server wrote.
//! A populated home is kept and reused by later runs (a marker file records what it holds).

use std::path::Path;
use std::time::Duration;

use agentwire_bench::session::{Contender, Session};
use serde_json::{Value, json};

/// The input that selects the long scripted answer of [`write_script`].
pub const MANY_ITEMS: &str = "many items";
/// The input that selects the streamed answer of [`write_script`].
pub const STREAM: &str = "stream";

/// Threads started per batch (their `thread/start` and then their turns are in flight together).
const BATCH: usize = 50;
/// Threads created per server process (each loaded thread keeps its rollout open).
const PER_PROCESS: usize = 1000;

/// Writes the fixture script and selects it: `items - 1` one-delta messages for
/// [`MANY_ITEMS`] (so, with the user message, `items` items), one message of `deltas` deltas
/// for [`STREAM`], and a one-delta answer for anything else.
pub fn write_script(home: &Path, items: usize, deltas: usize) -> Result<(), String> {
    std::fs::create_dir_all(home).map_err(|e| format!("{}: {e}", home.display()))?;
    let many: Vec<Value> = (1..items)
        .map(|_| json!({"type": "message", "deltas": ["item"]}))
        .collect();
    let script = json!({
        "version": 1,
        "responses": [
            {"when": MANY_ITEMS, "steps": many},
            {"when": STREAM, "steps": [{"type": "message", "deltas": vec!["x "; deltas]}]},
            {"steps": [{"type": "message", "deltas": ["ok"]}]},
        ]
    });
    let write = |name: &str, text: String| {
        std::fs::write(home.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    write("bench.json", script.to_string())?;
    write(
        "config.toml",
        "model_provider = \"fixture\"\nfixture_script = \"bench.json\"\n".to_owned(),
    )
}

/// Whether `home` was already populated with exactly `what`.
pub fn is_populated(home: &Path, what: &str) -> bool {
    std::fs::read_to_string(home.join("populated")).is_ok_and(|m| m == what)
}

/// Records that `home` holds `what`.
pub fn mark_populated(home: &Path, what: &str) -> Result<(), String> {
    std::fs::write(home.join("populated"), what).map_err(|e| format!("marker: {e}"))
}

/// Parses a line the server wrote.
pub fn value(line: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(line).map_err(|e| {
        let shown = String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned();
        format!("unreadable line ({e}): {shown}")
    })
}

/// Starts `count` threads on `session`, runs one turn with `input` on each, and returns
/// their ids.
pub fn threads_with_a_turn(
    session: &mut Session,
    count: usize,
    input: &str,
) -> Result<Vec<String>, String> {
    let mut ids = Vec::with_capacity(count);
    let mut pending: Vec<(i64, Option<String>)> = Vec::new();
    for _ in 0..count {
        pending.push((session.send("thread/start", r#"{"cwd":"/tmp"}"#)?, None));
    }
    let mut left = count;
    session.read_until(|line| {
        let message = value(line)?;
        if let Some(slot) = pending
            .iter_mut()
            .find(|(id, _)| message["id"] == json!(id))
        {
            let thread = message["result"]["thread"]["id"].as_str();
            slot.1 = Some(
                thread
                    .ok_or(format!("thread/start failed: {message}"))?
                    .to_owned(),
            );
            left -= 1;
        }
        Ok(left == 0)
    })?;
    let turn = json!([{"type": "text", "text": input}]).to_string();
    for (_, thread) in pending {
        let thread = thread.ok_or("a thread/start went unanswered")?;
        session.send(
            "turn/start",
            &format!(r#"{{"threadId":"{thread}","input":{turn}}}"#),
        )?;
        ids.push(thread);
    }
    let mut left = count;
    session.read_until(|line| {
        let message = value(line)?;
        if message.get("error").is_some() {
            return Err(format!("turn/start failed: {message}"));
        }
        if message["method"] == json!("turn/completed") {
            let status = &message["params"]["turn"]["status"];
            if *status != json!("completed") {
                return Err(format!("a turn ended {status}"));
            }
            left -= 1;
        }
        Ok(left == 0)
    })?;
    Ok(ids)
}

/// Creates `threads` threads with one short turn each in `contender`'s home.
pub fn many_threads(contender: &Contender, threads: usize) -> Result<(), String> {
    let what = format!("{threads} threads\n");
    if is_populated(&contender.home, &what) {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(&contender.home);
    write_script(&contender.home, 2, 1)?;
    let mut made = 0;
    while made < threads {
        let (mut session, _) = Session::start(contender, Duration::from_secs(3600))?;
        let in_process = PER_PROCESS.min(threads - made);
        let mut done = 0;
        while done < in_process {
            let batch = BATCH.min(in_process - done);
            threads_with_a_turn(&mut session, batch, "hello")?;
            done += batch;
        }
        session.finish(Duration::from_secs(60))?;
        made += in_process;
        eprintln!("  {made} of {threads} threads created");
    }
    mark_populated(&contender.home, &what)
}

/// Creates one thread whose single turn holds `items` items; returns its id.
pub fn many_items(contender: &Contender, items: usize) -> Result<String, String> {
    let what = format!("{items} items\n");
    let id_file = contender.home.join("thread-id");
    if is_populated(&contender.home, &what)
        && let Ok(id) = std::fs::read_to_string(&id_file)
    {
        return Ok(id);
    }
    let _ = std::fs::remove_dir_all(&contender.home);
    write_script(&contender.home, items, 1)?;
    let (mut session, _) = Session::start(contender, Duration::from_secs(3600))?;
    let id = threads_with_a_turn(&mut session, 1, MANY_ITEMS)?
        .pop()
        .ok_or("no thread made")?;
    session.finish(Duration::from_secs(60))?;
    std::fs::write(&id_file, &id).map_err(|e| format!("thread-id: {e}"))?;
    mark_populated(&contender.home, &what)?;
    Ok(id)
}
