//! The timed parts of the engine benchmark: request latencies over one stdio connection and
//! the rate of streamed deltas.

use std::time::{Duration, Instant};

use agentwire_bench::session::{Contender, Outcome, Session};
use agentwire_bench::stats::Samples;
use serde_json::json;

use crate::populate::{self, STREAM, value};

/// How long one server process may take before the watchdog kills it.
const LIMIT: Duration = Duration::from_secs(600);

/// Times `count` requests sent one at a time, their params taken from `variants` in turn;
/// returns their latencies in milliseconds.
pub fn latencies<S: AsRef<str>>(
    session: &mut Session,
    method: &str,
    variants: &[S],
    count: usize,
) -> Result<Samples, String> {
    let mut samples = Samples::default();
    for params in variants.iter().cycle().take(count) {
        let params = params.as_ref();
        let started = Instant::now();
        let outcome = session.probe(method, params)?;
        samples.push(started.elapsed().as_secs_f64() * 1e3);
        if outcome != Outcome::Result {
            return Err(format!("{method} {params} answered {outcome}"));
        }
    }
    Ok(samples)
}

/// Starts a fresh server on `contender`'s home and times its very first request.
pub fn first_request(contender: &Contender, method: &str, params: &str) -> Result<f64, String> {
    let (mut session, _) = Session::start(contender, LIMIT)?;
    let first = latencies(&mut session, method, &[params], 1)?;
    session.finish(Duration::from_secs(30))?;
    first.median().ok_or_else(|| "nothing measured".into())
}

/// The cursor of the `thread/list` page that starts after `skip` threads (newest first).
pub fn deep_cursor(contender: &Contender, skip: usize) -> Result<String, String> {
    let (mut session, _) = Session::start(contender, LIMIT)?;
    let mut cursor = serde_json::Value::Null;
    let mut walked = 0;
    while walked < skip {
        let limit = (skip - walked).min(500);
        let params = json!({"limit": limit, "cursor": cursor}).to_string();
        let page = session.call("thread/list", &params)?;
        walked += page["data"].as_array().map_or(0, Vec::len);
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            return Err(format!("only {walked} threads listed, wanted {skip}"));
        }
    }
    session.finish(Duration::from_secs(30))?;
    cursor
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| "no cursor".into())
}

/// Streams one turn of `deltas` deltas to a client that parses every line; returns the rate
/// in deltas per second, from the `turn/start` request to the `turn/completed` line.
pub fn delta_rate(contender: &Contender, deltas: usize) -> Result<f64, String> {
    let _ = std::fs::remove_dir_all(&contender.home);
    populate::write_script(&contender.home, 2, deltas)?;
    let (mut session, _) = Session::start(contender, LIMIT)?;
    let thread = session.call("thread/start", r#"{"cwd":"/tmp"}"#)?;
    let thread = thread["thread"]["id"].as_str().ok_or("no thread id")?;
    let params = json!({"threadId": thread, "input": [{"type": "text", "text": STREAM}]});
    let started = Instant::now();
    session.send("turn/start", &params.to_string())?;
    let mut seen = 0usize;
    session.read_until(|line| {
        let message = value(line)?;
        match message["method"].as_str() {
            Some("item/agentMessage/delta") => seen += 1,
            Some("turn/completed") => return Ok(true),
            _ => {}
        }
        Ok(false)
    })?;
    let elapsed = started.elapsed();
    session.finish(Duration::from_secs(30))?;
    let _ = std::fs::remove_dir_all(&contender.home);
    if seen != deltas {
        return Err(format!("{seen} deltas streamed, {deltas} scripted"));
    }
    Ok(seen as f64 / elapsed.as_secs_f64().max(1e-9))
}
