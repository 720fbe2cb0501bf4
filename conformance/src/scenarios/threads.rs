//! Thread lifecycle: start and read, list with pagination, archive and unarchive, resume.
//!
//! A server may keep a thread that never had a turn out of its lists (the reference does);
//! with the scripted model each thread gets one turn first, so the lifecycle is the same one a
//! real client sees.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::turns::answer_turn;
use super::{Ctx, Scenario};
use crate::session::{Conn, Stop, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            group: "threads",
            id: "start-read",
            summary: "thread/start answers a thread and announces it (thread/started); thread/read returns it",
            needs_mock: false,
            run: start_read,
        },
        Scenario {
            group: "threads",
            id: "list-pagination",
            summary: "thread/list pages (limit 1) through every thread once, following nextCursor",
            needs_mock: false,
            run: list_pagination,
        },
        Scenario {
            group: "threads",
            id: "archive-unarchive",
            summary: "an archived thread leaves thread/list and shows with archived: true; unarchive brings it back",
            needs_mock: false,
            run: archive_unarchive,
        },
        Scenario {
            group: "threads",
            id: "resume",
            summary: "thread/resume on a new connection (a new process for --server) returns the thread",
            needs_mock: false,
            run: resume,
        },
    ]
}

/// A thread, given a turn when the scripted model is there.
fn used_thread<'c>(ctx: &Ctx<'c, '_>, conn: &mut Conn<'c>) -> Result<String, Stop> {
    let thread = ctx.start_thread(conn, json!({}))?;
    if ctx.mock().is_ok() {
        answer_turn(ctx, conn, &thread, "Say hello.", "Hello.")?;
    }
    Ok(thread)
}

fn start_read(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect_initialized()?;
    let thread = ctx.start_thread(&mut conn, json!({}))?;
    conn.notification("thread/started", |m| {
        m["params"]["thread"]["id"] == thread.as_str()
    })?;
    let read = conn.call("thread/read", json!({"threadId": thread}))?;
    if read["thread"]["id"] != thread.as_str() {
        return fail(format!(
            "thread/read {thread} answered thread {}",
            read["thread"]["id"]
        ));
    }
    Ok(format!("thread {thread} started, announced and read back"))
}

/// Every id of `thread/list` (with `extra` params), page by page with `limit: 1`.
fn list_all(conn: &mut Conn<'_>, extra: &Value) -> Result<(Vec<String>, usize), Stop> {
    let mut ids = Vec::new();
    let mut cursor = Value::Null;
    for page in 1..=200 {
        let mut params = json!({"limit": 1, "cursor": cursor});
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        let result = conn.call("thread/list", params)?;
        let Some(data) = result["data"].as_array() else {
            return fail(format!("thread/list page {page}: no /result/data array"));
        };
        if data.len() > 1 {
            return fail(format!(
                "thread/list page {page} with limit 1 has {} threads",
                data.len()
            ));
        }
        ids.extend(
            data.iter()
                .filter_map(|t| t["id"].as_str().map(str::to_owned)),
        );
        match &result["nextCursor"] {
            Value::Null => return Ok((ids, page)),
            next => cursor = next.clone(),
        }
    }
    fail("thread/list gave a nextCursor for 200 pages of one thread each")
}

fn list_pagination(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect_initialized()?;
    let mut started = Vec::new();
    for _ in 0..3 {
        started.push(used_thread(ctx, &mut conn)?);
    }
    let (listed, pages) = list_all(&mut conn, &json!({}))?;
    let unique: BTreeSet<&String> = listed.iter().collect();
    if unique.len() != listed.len() {
        return fail(format!(
            "thread/list returned a thread twice across pages: {listed:?}"
        ));
    }
    let missing: Vec<&String> = started.iter().filter(|t| !listed.contains(t)).collect();
    if !missing.is_empty() {
        let hint = if ctx.mock().is_err() {
            " (a server may list only threads that had a turn: try --mock-model)"
        } else {
            ""
        };
        return fail(format!("thread/list never returned {missing:?}{hint}"));
    }
    Ok(format!(
        "{} threads over {pages} pages, each started thread once",
        listed.len()
    ))
}

fn archive_unarchive(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect_initialized()?;
    let thread = used_thread(ctx, &mut conn)?;
    conn.call("thread/archive", json!({"threadId": thread}))?;
    let (active, _) = list_all(&mut conn, &json!({}))?;
    if active.contains(&thread) {
        return fail("the archived thread is still in thread/list");
    }
    let (archived, _) = list_all(&mut conn, &json!({"archived": true}))?;
    if !archived.contains(&thread) {
        return fail("the archived thread is not in thread/list {\"archived\": true}");
    }
    conn.call("thread/unarchive", json!({"threadId": thread}))?;
    let (active, _) = list_all(&mut conn, &json!({}))?;
    if !active.contains(&thread) {
        return fail("the unarchived thread is not back in thread/list");
    }
    Ok(format!(
        "thread {thread} archived, listed as archived, unarchived"
    ))
}

fn resume(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let thread = {
        let mut first = ctx.connect_initialized()?;
        used_thread(ctx, &mut first)?
    };
    let mut second = ctx.connect_initialized()?;
    let result = second.call("thread/resume", json!({"threadId": thread}))?;
    if result["thread"]["id"] != thread.as_str() {
        return fail(format!(
            "thread/resume {thread} answered thread {}",
            result["thread"]["id"]
        ));
    }
    Ok(format!("thread {thread} resumed on a new connection"))
}
