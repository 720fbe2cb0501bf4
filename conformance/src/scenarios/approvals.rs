//! Command approvals (need `--mock-model`): under `approvalPolicy: "untrusted"` the scripted
//! model runs `touch`, the server asks `item/commandExecution/requestApproval`, and the answer
//! is `accept` (the command runs), `decline` (it does not; the turn goes on) or `cancel` (it
//! does not; the turn ends interrupted).

use serde_json::json;

use super::turns::{Tools, answer_turn};
use super::{Ctx, Scenario};
use crate::mock_responses::Responses;
use crate::session::{Stop, fail};

const APPROVAL: &str = "item/commandExecution/requestApproval";

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            group: "approvals",
            id: "accepted",
            summary: "an accepted command approval runs the command",
            needs_mock: true,
            run: accepted,
        },
        Scenario {
            group: "approvals",
            id: "declined",
            summary: "a declined command approval does not run it; the turn completes",
            needs_mock: true,
            run: declined,
        },
        Scenario {
            group: "approvals",
            id: "cancelled",
            summary: "a cancelled command approval does not run it; the turn ends interrupted",
            needs_mock: true,
            run: cancelled,
        },
    ]
}

fn accepted(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    approval(ctx, "accept")
}

fn declined(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    approval(ctx, "decline")
}

fn cancelled(ctx: &mut Ctx<'_, '_>) -> Result<String, Stop> {
    approval(ctx, "cancel")
}

fn approval(ctx: &mut Ctx<'_, '_>, decision: &str) -> Result<String, Stop> {
    let mut conn = ctx.connect_initialized()?;
    let thread = ctx.start_thread(
        &mut conn,
        json!({"approvalPolicy": "untrusted", "sandbox": "danger-full-access"}),
    )?;
    answer_turn(ctx, &mut conn, &thread, "Say hello.", "Hello.")?;
    let tools = Tools::offered(ctx)?;
    let file = format!("approval-{decision}.txt");
    let mock = ctx.mock()?;
    mock.push(tools.shell_call("call_touch", &format!("touch {file}"))?);
    if decision != "cancel" {
        mock.push(Responses::answer("Done."));
    }
    let started = conn.call(
        "turn/start",
        json!({"threadId": thread, "input": [{"type": "text", "text": "Create the file."}]}),
    )?;
    let turn = started["turn"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let request = conn.server_request(APPROVAL)?;
    let id = request["id"].clone();
    conn.respond(&id, json!({"decision": decision}))?;
    let done = conn.notification("turn/completed", |m| {
        m["params"]["turn"]["id"] == turn.as_str()
    })?;
    let status = done["params"]["turn"]["status"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let created = ctx.work.join(&file).exists();
    let item_status = conn
        .seen
        .iter()
        .filter(|m| {
            m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
        })
        .filter_map(|m| m["params"]["item"]["status"].as_str())
        .next_back()
        .unwrap_or("(no commandExecution item completed)")
        .to_owned();
    let summary = format!("turn {status}, command item {item_status}, file created: {created}");
    let ok = match decision {
        "accept" => created && status == "completed",
        "decline" => !created && status == "completed",
        _ => !created && status == "interrupted",
    };
    if ok {
        Ok(format!("{APPROVAL} answered {decision}: {summary}"))
    } else {
        fail(format!("after {decision}: {summary}"))
    }
}
