//! Scripted turns (need `--mock-model`): one with every item type a model can cause, and an
//! interrupted one.
//!
//! The tools a server offers differ (agentwire: `shell` and `apply_patch`; codex:
//! `exec_command`, patches through the shell as `apply_patch <<'EOF'`), so the script is
//! written after a first turn, from the `tools` that turn's model request carried.

use serde_json::{Value, json};

use super::{Ctx, Scenario, completed_item_types};
use crate::mock_model::{End, Reply, Sse};
use crate::mock_responses::Responses;
use crate::session::{Conn, Stop, fail};

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            group: "turns",
            id: "every-item-type",
            summary: "a scripted turn yields userMessage, reasoning, agentMessage, commandExecution and fileChange items, each started and completed",
            needs_mock: true,
            run: every_item_type,
        },
        Scenario {
            group: "turns",
            id: "interrupt",
            summary: "turn/interrupt ends a running turn with status interrupted",
            needs_mock: true,
            run: interrupt,
        },
    ]
}

/// Starts a turn with `text` and waits for its `turn/completed`; its `turn`.
pub fn run_turn<'c>(conn: &mut Conn<'c>, thread: &str, text: &str) -> Result<Value, Stop> {
    let started = conn.call(
        "turn/start",
        json!({"threadId": thread, "input": [{"type": "text", "text": text}]}),
    )?;
    let Some(turn) = started["turn"]["id"].as_str().map(str::to_owned) else {
        return fail(format!(
            "turn/start answered without /result/turn/id: {started}"
        ));
    };
    let done = conn.notification("turn/completed", |m| {
        m["params"]["turn"]["id"] == turn.as_str()
    })?;
    Ok(done["params"]["turn"].clone())
}

/// A turn the model answers with `answer`; fails unless it completes.
pub fn answer_turn<'c>(
    ctx: &Ctx<'c, '_>,
    conn: &mut Conn<'c>,
    thread: &str,
    text: &str,
    answer: &str,
) -> Result<Value, Stop> {
    ctx.mock()?.push(Responses::answer(answer));
    let turn = run_turn(conn, thread, text)?;
    if turn["status"] != "completed" {
        return fail(format!(
            "a plain turn ended with status {}: {}",
            turn["status"], turn["error"]
        ));
    }
    Ok(turn)
}

/// How to make the server run a command and apply a patch, from the tools its last model
/// request offered.
pub struct Tools {
    /// The shell tool's name and the arguments that run `command` (a `bash -c` line).
    shell: Option<(String, &'static str)>,
    /// Whether a function tool `apply_patch` (argument `input`) is offered.
    apply_patch: bool,
}

impl Tools {
    /// Reads the `tools` of the mock's last request.
    pub fn offered(ctx: &Ctx<'_, '_>) -> Result<Self, Stop> {
        let requests = ctx.mock()?.requests();
        let Some(last) = requests.last() else {
            return fail("the server never called the model");
        };
        let tools = last.body["tools"].as_array().cloned().unwrap_or_default();
        let named = |name: &str| {
            tools
                .iter()
                .any(|t| t["name"] == name && t["type"] == "function")
        };
        let shell = [
            ("shell", "command"),
            ("shell_command", "command"),
            ("exec_command", "cmd"),
        ]
        .into_iter()
        .find(|(name, _)| named(name))
        .map(|(name, key)| (name.to_owned(), key));
        Ok(Self {
            shell,
            apply_patch: named("apply_patch"),
        })
    }

    /// A call running `line`.
    pub fn shell_call(&self, call_id: &str, line: &str) -> Result<Reply, Stop> {
        let Some((name, key)) = &self.shell else {
            return Err(Stop::Skip(
                "the server offers the model no shell tool this suite knows (shell, shell_command, exec_command)".to_owned(),
            ));
        };
        let arguments = json!({ *key: line }).to_string();
        Ok(Responses::new()
            .function_call(call_id, name, &[&arguments])
            .completed(10, 0, 5, 0))
    }

    /// A call applying `patch`: the `apply_patch` tool, or `apply_patch` through the shell.
    pub fn patch_call(&self, call_id: &str, patch: &str) -> Result<Reply, Stop> {
        if self.apply_patch {
            let arguments = json!({ "input": patch }).to_string();
            return Ok(Responses::new()
                .function_call(call_id, "apply_patch", &[&arguments])
                .completed(10, 0, 5, 0));
        }
        self.shell_call(call_id, &format!("apply_patch <<'PATCH'\n{patch}PATCH\n"))
    }
}

fn every_item_type(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect_initialized()?;
    let thread = ctx.start_thread(
        &mut conn,
        json!({"approvalPolicy": "never", "sandbox": "danger-full-access"}),
    )?;
    ctx.mock()?.push(
        Responses::new()
            .reasoning(&[&["Planning ", "the answer."]])
            .message(&["Hello ", "from the script."])
            .completed(10, 0, 5, 0),
    );
    let first = run_turn(&mut conn, &thread, "Say hello.")?;
    if first["status"] != "completed" {
        return fail(format!(
            "the first turn ended with status {}: {}",
            first["status"], first["error"]
        ));
    }
    let tools = Tools::offered(ctx)?;
    let patch = "*** Begin Patch\n*** Add File: conformance.txt\n+written by the scripted turn\n*** End Patch\n";
    let mock = ctx.mock()?;
    mock.push(tools.shell_call("call_shell", "echo conformance-output")?);
    mock.push(tools.patch_call("call_patch", patch)?);
    mock.push(Responses::answer("Done."));
    let second = run_turn(&mut conn, &thread, "Run a command and write a file.")?;
    if second["status"] != "completed" {
        return fail(format!(
            "the scripted turn ended with status {}: {}",
            second["status"], second["error"]
        ));
    }
    let mut missing = Vec::new();
    let types = completed_item_types(&conn);
    for want in [
        "userMessage",
        "reasoning",
        "agentMessage",
        "commandExecution",
        "fileChange",
    ] {
        if !types.iter().any(|t| t == want) {
            missing.push(want);
        }
    }
    if !missing.is_empty() {
        return fail(format!(
            "no item/completed for {missing:?}; completed items: {types:?}"
        ));
    }
    let started: Vec<String> = ids_of(&conn, "item/started");
    let completed: Vec<String> = ids_of(&conn, "item/completed");
    let unstarted: Vec<&String> = completed
        .iter()
        .filter(|id| !started.contains(id))
        .collect();
    if !unstarted.is_empty() {
        return fail(format!(
            "items completed without item/started: {unstarted:?}"
        ));
    }
    if !conn.has_seen("item/agentMessage/delta") {
        return fail("no item/agentMessage/delta for the streamed message");
    }
    let output_ok = conn.seen.iter().any(|m| {
        m["method"] == "item/completed"
            && m["params"]["item"]["type"] == "commandExecution"
            && m["params"]["item"]["aggregatedOutput"]
                .as_str()
                .is_some_and(|o| o.contains("conformance-output"))
    });
    if !output_ok {
        return fail("the commandExecution item's aggregatedOutput lacks the command's output");
    }
    if !ctx.work.join("conformance.txt").exists() {
        return fail("the fileChange item completed but conformance.txt was not written");
    }
    Ok(format!("items completed: {}", dedup(&types).join(", ")))
}

fn ids_of(conn: &Conn<'_>, method: &str) -> Vec<String> {
    conn.seen
        .iter()
        .filter(|m| m.get("id").is_none() && m["method"] == method)
        .filter_map(|m| m["params"]["item"]["id"].as_str().map(str::to_owned))
        .collect()
}

fn dedup(types: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in types {
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

fn interrupt(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    let mut conn = ctx.connect_initialized()?;
    let thread = ctx.start_thread(&mut conn, json!({}))?;
    // A stream that starts a message and then holds until released.
    let held = Sse::new()
        .raw(&format!(
            "event: response.created\ndata: {}",
            json!({"type": "response.created", "sequence_number": 0,
                   "response": {"id": "resp_held", "object": "response", "status": "in_progress", "output": []}})
        ))
        .raw(&format!(
            "event: response.output_item.added\ndata: {}",
            json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                   "item": {"type": "message", "id": "msg_held", "role": "assistant", "status": "in_progress", "content": []}})
        ))
        .end(End::Hold);
    let mock = ctx.mock()?;
    mock.push(Reply::Stream(held));
    let started = conn.call(
        "turn/start",
        json!({"threadId": thread, "input": [{"type": "text", "text": "Take your time."}]}),
    )?;
    let Some(turn) = started["turn"]["id"].as_str().map(str::to_owned) else {
        return fail(format!(
            "turn/start answered without /result/turn/id: {started}"
        ));
    };
    conn.notification("turn/started", |m| {
        m["params"]["turn"]["id"] == turn.as_str()
    })?;
    conn.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    )?;
    let done = conn.notification("turn/completed", |m| {
        m["params"]["turn"]["id"] == turn.as_str()
    })?;
    mock.release();
    let status = &done["params"]["turn"]["status"];
    if status != "interrupted" {
        return fail(format!(
            "the interrupted turn completed with status {status}"
        ));
    }
    Ok(format!("turn {turn} interrupted"))
}
