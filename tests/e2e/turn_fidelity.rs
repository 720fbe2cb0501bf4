//! What a rich client renders around a turn, through the real binary: the thread's
//! `waitingOnApproval` flag (seen by every connection following the thread, in the
//! reference's order around the approval request and `serverRequest/resolved`),
//! `turn/diff/updated`, the `update_plan` tool and `turn/plan/updated`, token totals at every
//! turn end and across a restart, and the exact prompt (`AGENTS.md`, base and developer
//! instructions) a model receives.

use std::path::{Path, PathBuf};

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use crate::app_server_ws::{App, initialize, next_json, open, request, until};
use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::{fixture_steps, home_and_workspace, scratch};
use crate::mock_model::{MockModel, Recorded, Reply, Sse};

/// A label per message that matters for the order around approvals, file changes and the end
/// of a turn; other messages are left out.
fn labels(seen: &[Value]) -> Vec<String> {
    seen.iter()
        .filter_map(|m| {
            let method = m["method"].as_str()?;
            let p = &m["params"];
            match method {
                "thread/status/changed" => {
                    let status = &p["status"];
                    Some(match status["type"].as_str()? {
                        "active" => format!("status:active{}", status["activeFlags"]),
                        other => format!("status:{other}"),
                    })
                }
                "item/started" | "item/completed" => {
                    let kind = p["item"]["type"].as_str()?;
                    (kind != "userMessage" && kind != "agentMessage" && kind != "reasoning")
                        .then(|| format!("{method}:{kind}"))
                }
                "item/commandExecution/requestApproval" | "item/fileChange/requestApproval"
                    if m.get("id").is_some() =>
                {
                    Some(format!("request:{method}"))
                }
                "serverRequest/resolved"
                | "turn/diff/updated"
                | "turn/plan/updated"
                | "thread/tokenUsage/updated"
                | "turn/completed"
                | "error" => Some(method.to_owned()),
                _ => None,
            }
        })
        .collect()
}

/// Messages on `ws` up to and including the server request `method`.
async fn until_request<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
    method: &str,
) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let message = next_json(ws).await;
        let done = message["method"] == json!(method) && message.get("id").is_some();
        seen.push(message);
        if done {
            return seen;
        }
    }
}

/// A workspace that is a repository root (it holds `.git`), in a fresh scratch directory with
/// a home beside it.
fn repository(name: &str) -> (PathBuf, PathBuf) {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    std::fs::create_dir_all(workspace.join(".git")).expect("create .git");
    (home, workspace)
}

#[tokio::test]
async fn every_follower_sees_waiting_on_approval_around_the_request_in_order() {
    let (home, workspace) = repository("fidelity-approval");
    fixture_steps(
        &home,
        json!([
            {"type": "command", "command": "touch approved.txt"},
            {"type": "message", "deltas": ["ran it"]}
        ]),
        "",
    );
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let mut a = open(addr, None).await.expect("upgrade");
    let mut b = open(addr, None).await.expect("upgrade");
    initialize(&mut a).await;
    initialize(&mut b).await;
    let started = request(
        &mut a,
        json!(1),
        "thread/start",
        json!({"cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "danger-full-access"}),
    )
    .await;
    let thread = started["result"]["thread"]["id"].clone();
    until(&mut a, "thread/started").await;
    let resumed = request(
        &mut b,
        json!(1),
        "thread/resume",
        json!({"threadId": thread}),
    )
    .await;
    assert_eq!(resumed["result"]["thread"]["id"], thread, "{resumed}");

    let input = json!([{"type": "text", "text": "touch it"}]);
    let turn = request(
        &mut a,
        json!(2),
        "turn/start",
        json!({"threadId": thread, "input": input}),
    )
    .await;
    assert!(turn.get("result").is_some(), "{turn}");
    let method = "item/commandExecution/requestApproval";
    let mut for_a = until_request(&mut a, method).await;
    let mut for_b = until_request(&mut b, method).await;
    let asked_a = for_a.last().expect("the request").clone();
    let asked_b = for_b.last().expect("the request").clone();
    assert_eq!(asked_a["params"]["command"], json!("touch approved.txt"));
    assert_eq!(asked_a["params"], asked_b["params"]);
    // Only the first connection answers; the request to the second is withdrawn.
    let answer = json!({"id": asked_a["id"], "result": {"decision": "accept"}});
    a.send(Message::text(answer.to_string()))
        .await
        .expect("send");
    for_a.extend(until(&mut a, "turn/completed").await);
    for_b.extend(until(&mut b, "turn/completed").await);

    let expected = [
        "status:active[]",
        // The model call that asked for the command.
        "thread/tokenUsage/updated",
        "status:active[\"waitingOnApproval\"]",
        "item/started:commandExecution",
        "request:item/commandExecution/requestApproval",
        "serverRequest/resolved",
        "status:active[]",
        "item/completed:commandExecution",
        "thread/tokenUsage/updated",
        "status:idle",
        "turn/completed",
    ];
    for (who, seen, asked) in [("a", &for_a, &asked_a), ("b", &for_b, &asked_b)] {
        assert_eq!(labels(seen), expected, "{who}: {seen:#?}");
        let resolved = params(seen, "serverRequest/resolved");
        assert_eq!(
            *resolved[0],
            json!({"threadId": thread, "requestId": asked["id"]}),
            "{who}"
        );
        let waiting = params(seen, "thread/status/changed");
        assert_eq!(waiting[1]["threadId"], thread, "{who}");
        let turn = completed_turn(seen);
        assert_eq!(turn["status"], json!("completed"), "{who}: {turn}");
        let ran = params(seen, "item/completed")
            .into_iter()
            .find(|p| p["item"]["type"] == json!("commandExecution"))
            .expect("the command item");
        assert_eq!(ran["item"]["status"], json!("completed"), "{who}: {ran}");
    }
    assert!(workspace.join("approved.txt").exists());
    drop(app);
}

#[tokio::test]
async fn a_connection_joining_while_an_approval_waits_is_asked_and_may_answer() {
    let (home, workspace) = repository("fidelity-join");
    fixture_steps(
        &home,
        json!([
            {"type": "command", "command": "touch joined.txt"},
            {"type": "message", "deltas": ["ran it"]}
        ]),
        "",
    );
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let mut a = open(addr, None).await.expect("upgrade");
    initialize(&mut a).await;
    let started = request(
        &mut a,
        json!(1),
        "thread/start",
        json!({"cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "danger-full-access"}),
    )
    .await;
    let thread = started["result"]["thread"]["id"].clone();
    until(&mut a, "thread/started").await;
    let input = json!([{"type": "text", "text": "touch it"}]);
    let turn = request(
        &mut a,
        json!(2),
        "turn/start",
        json!({"threadId": thread, "input": input}),
    )
    .await;
    let turn_id = turn["result"]["turn"]["id"].clone();
    let method = "item/commandExecution/requestApproval";
    let mut for_a = until_request(&mut a, method).await;
    let asked_a = for_a.last().expect("the request").clone();

    // A second connection joins while the request waits: its answer shows the flag, then it
    // gets the thread's totals and the request.
    let mut c = open(addr, None).await.expect("upgrade");
    initialize(&mut c).await;
    let resumed = request(
        &mut c,
        json!(1),
        "thread/resume",
        json!({"threadId": thread}),
    )
    .await;
    assert_eq!(
        resumed["result"]["thread"]["status"],
        json!({"type": "active", "activeFlags": ["waitingOnApproval"]}),
        "{resumed}"
    );
    let usage = next_json(&mut c).await;
    assert_eq!(
        usage["method"],
        json!("thread/tokenUsage/updated"),
        "{usage}"
    );
    assert_eq!(usage["params"]["turnId"], turn_id, "{usage}");
    let asked_c = next_json(&mut c).await;
    assert_eq!(asked_c["method"], json!(method), "{asked_c}");
    assert_eq!(asked_c["params"], asked_a["params"]);
    // The newcomer answers; the first connection's request is withdrawn.
    let answer = json!({"id": asked_c["id"], "result": {"decision": "accept"}});
    c.send(Message::text(answer.to_string()))
        .await
        .expect("send");
    for_a.extend(until(&mut a, "turn/completed").await);
    let for_c = until(&mut c, "turn/completed").await;
    for (who, seen, asked) in [("a", &for_a, &asked_a), ("c", &for_c, &asked_c)] {
        let labels = labels(seen);
        let resolved_at = labels
            .iter()
            .position(|l| l == "serverRequest/resolved")
            .unwrap_or_else(|| panic!("{who}: no serverRequest/resolved in {labels:?}"));
        assert_eq!(
            labels[resolved_at..],
            [
                "serverRequest/resolved",
                "status:active[]",
                "item/completed:commandExecution",
                "thread/tokenUsage/updated",
                "status:idle",
                "turn/completed",
            ],
            "{who}: {seen:#?}"
        );
        let resolved = params(seen, "serverRequest/resolved");
        assert_eq!(resolved[0]["requestId"], asked["id"], "{who}");
    }
    assert!(workspace.join("joined.txt").exists());
    drop(app);
}

#[test]
fn an_interrupt_while_waiting_clears_the_flag_and_resends_the_totals() {
    let (home, workspace) = repository("fidelity-interrupt");
    fixture_steps(
        &home,
        json!([
            {"type": "command", "command": "touch never.txt"},
            {"type": "message", "deltas": ["never"]}
        ]),
        "",
    );
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(
        json!({"cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "danger-full-access"}),
    ));
    let turn = client.start_turn(&thread, "touch it");
    let (_, asked) = client.server_request("item/commandExecution/requestApproval");
    assert_eq!(asked["turnId"], json!(turn));
    client.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(
        labels(&seen),
        [
            "status:active[]",
            "thread/tokenUsage/updated",
            "status:active[\"waitingOnApproval\"]",
            "item/started:commandExecution",
            "serverRequest/resolved",
            "status:active[]",
            "item/completed:commandExecution",
            "thread/tokenUsage/updated",
            "status:idle",
            "turn/completed",
        ],
        "{seen:#?}"
    );
    assert_eq!(completed_turn(&seen)["status"], json!("interrupted"));
    // The totals: the one model call that asked for the command (10 in, 5 out).
    let usage = params(&seen, "thread/tokenUsage/updated");
    let last = usage.last().expect("totals at the end");
    assert_eq!(last["turnId"], json!(turn));
    assert_eq!(
        last["tokenUsage"]["total"]["totalTokens"],
        json!(15),
        "{last}"
    );
    assert_eq!(
        last["tokenUsage"]["total"]["inputTokens"],
        json!(10),
        "{last}"
    );
    assert!(!workspace.join("never.txt").exists());
    client.stop();
}

#[test]
fn a_declined_patch_clears_the_flag_after_the_request_is_resolved() {
    let (home, workspace) = repository("fidelity-decline");
    fixture_steps(
        &home,
        json!([
            {"type": "patch", "patch": ADD_NOTES},
            {"type": "message", "deltas": ["declined"]}
        ]),
        "",
    );
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(
        json!({"cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "danger-full-access"}),
    ));
    client.start_turn(&thread, "write notes");
    let (id, _) = client.server_request("item/fileChange/requestApproval");
    client.send(&json!({"id": id, "result": {"decision": "decline"}}));
    let seen = client.until_turn_completed();
    assert_eq!(
        labels(&seen),
        [
            "status:active[]",
            "thread/tokenUsage/updated",
            "status:active[\"waitingOnApproval\"]",
            "item/started:fileChange",
            "serverRequest/resolved",
            "status:active[]",
            "item/completed:fileChange",
            "thread/tokenUsage/updated",
            "status:idle",
            "turn/completed",
        ],
        "{seen:#?}"
    );
    // Nothing changed, so no diff was sent.
    assert!(!workspace.join("notes.txt").exists());
    client.stop();
}

const ADD_NOTES: &str =
    "*** Begin Patch\n*** Add File: notes.txt\n+written by the agent\n*** End Patch\n";
const EDIT_LIB: &str =
    "*** Begin Patch\n*** Update File: src/lib.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n";

#[test]
fn each_applied_patch_sends_the_turns_whole_diff() {
    let (home, workspace) = repository("fidelity-diff");
    std::fs::create_dir_all(workspace.join("src")).expect("src");
    std::fs::write(workspace.join("src/lib.txt"), "one\ntwo\nthree\n").expect("lib");
    fixture_steps(
        &home,
        json!([
            {"type": "patch", "patch": ADD_NOTES},
            {"type": "message", "deltas": ["added"]},
            {"type": "patch", "patch": EDIT_LIB},
            {"type": "message", "deltas": ["edited"]}
        ]),
        "",
    );
    let mut client = Client::start(&home);
    // Paths in the diff are relative to the repository root (the workspace holds `.git`).
    let thread = thread_id(&client.start_thread(json!({
        "cwd": workspace, "approvalPolicy": "never", "sandbox": "workspace-write"
    })));
    let turn = client.start_turn(&thread, "edit");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    assert_eq!(
        labels(&seen)
            .into_iter()
            .filter(|l| l.contains("fileChange") || l == "turn/diff/updated")
            .collect::<Vec<_>>(),
        [
            "item/started:fileChange",
            "item/completed:fileChange",
            "turn/diff/updated",
            "item/started:fileChange",
            "item/completed:fileChange",
            "turn/diff/updated",
        ],
        "{seen:#?}"
    );
    // Blob ids as `git hash-object` gives them.
    let notes = "diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n\
                 index 0000000000000000000000000000000000000000..\
                 bfa10f035d9dce88d7bfe94a4d0e095744da3ce8\n--- /dev/null\n\
                 +++ b/notes.txt\n@@ -0,0 +1 @@\n+written by the agent\n";
    let lib = "diff --git a/src/lib.txt b/src/lib.txt\n\
               index 4cb29ea38f70d7c61b2a3a25b02e3bdf44905402..\
               ddc897f039f57aa91e16efa6dfde386c4255206f\n\
               --- a/src/lib.txt\n+++ b/src/lib.txt\n\
               @@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
    let diffs = params(&seen, "turn/diff/updated");
    assert_eq!(
        *diffs[0],
        json!({"threadId": thread, "turnId": turn, "diff": notes})
    );
    assert_eq!(
        *diffs[1],
        json!({"threadId": thread, "turnId": turn, "diff": format!("{notes}{lib}")})
    );
    client.stop();
}

const GOOD_PLAN: &str = r#"{"explanation":"Two steps left.","plan":[
    {"step":"Read the code","status":"completed"},
    {"step":"Fix the bug","status":"in_progress"},
    {"step":"Run the tests","status":"pending"}]}"#;

fn wire_plan() -> Value {
    json!([
        {"step": "Read the code", "status": "completed"},
        {"step": "Fix the bug", "status": "inProgress"},
        {"step": "Run the tests", "status": "pending"}
    ])
}

#[test]
fn an_update_plan_call_sends_the_plan_and_bad_arguments_do_not_end_the_turn() {
    let (home, workspace) = repository("fidelity-plan");
    let good: Value = serde_json::from_str(GOOD_PLAN).expect("plan JSON");
    fixture_steps(
        &home,
        json!([
            {"type": "tool", "name": "update_plan", "arguments": good},
            {"type": "tool", "name": "update_plan", "arguments": "{\"plan\": 7}"},
            {"type": "tool", "name": "update_plan", "arguments": "not json"},
            {"type": "message", "deltas": ["planned"]}
        ]),
        "",
    );
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let turn = client.start_turn(&thread, "plan it");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let plans = params(&seen, "turn/plan/updated");
    assert_eq!(plans.len(), 1, "{seen:#?}");
    assert_eq!(
        *plans[0],
        json!({"threadId": thread, "turnId": turn, "plan": wire_plan(),
               "explanation": "Two steps left."})
    );
    assert!(params(&seen, "error").is_empty(), "{seen:#?}");
    client.stop();
}

/// Writes a `config.toml` whose default provider `mock` is served at `base_url`, with `extra`
/// top-level keys.
fn configure_mock(home: &Path, base_url: &str, extra: &str) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n{extra}\n\n[model_providers.mock]\n\
         name = \"mock model\"\nbase_url = \"{base_url}\"\nrequest_max_retries = 0\n"
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

fn chat_bodies(requests: &[Recorded]) -> Vec<Value> {
    requests
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .map(|r| r.body.clone())
        .collect()
}

#[test]
fn the_model_is_offered_update_plan_and_told_when_its_arguments_are_bad() {
    let mock = MockModel::start(vec![
        Reply::Stream(
            Sse::new()
                .tool_call(
                    0,
                    "call_bad",
                    "update_plan",
                    r#"{"plan":[{"step":"x","status":"done"}]}"#,
                )
                .finish("tool_calls")
                .usage(10, 5, 0, 0),
        ),
        Reply::Stream(
            Sse::new()
                .tool_call(0, "call_good", "update_plan", GOOD_PLAN)
                .finish("tool_calls")
                .usage(10, 5, 0, 0),
        ),
        Sse::answer("Planned."),
    ]);
    let (home, workspace) = repository("fidelity-plan-mock");
    configure_mock(&home, &mock.base_url(), "");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let turn = client.start_turn(&thread, "plan it");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let plans = params(&seen, "turn/plan/updated");
    assert_eq!(plans.len(), 1, "{seen:#?}");
    assert_eq!(
        *plans[0],
        json!({"threadId": thread, "turnId": turn, "plan": wire_plan(),
               "explanation": "Two steps left."})
    );

    let bodies = chat_bodies(&mock.wait_requests(3));
    assert_eq!(bodies.len(), 3);
    let tool = bodies[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["function"]["name"] == json!("update_plan"))
        .expect("update_plan is offered")
        .clone();
    assert_eq!(
        tool["function"]["parameters"],
        json!({
            "type": "object",
            "properties": {
                "explanation": {"type": "string"},
                "plan": {
                    "type": "array",
                    "description": "The list of steps",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string"},
                            "status": {
                                "type": "string",
                                "description": "One of: pending, in_progress, completed"
                            }
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["plan"],
            "additionalProperties": false
        })
    );
    let last = |body: &Value| {
        body["messages"]
            .as_array()
            .expect("messages")
            .last()
            .cloned()
    };
    let refused = last(&bodies[1]).expect("a message");
    assert_eq!(refused["role"], json!("tool"), "{refused}");
    assert_eq!(refused["tool_call_id"], json!("call_bad"), "{refused}");
    let text = refused["content"].as_str().expect("content");
    assert!(
        text.contains("invalid arguments for `update_plan`") && text.contains("done"),
        "{text}"
    );
    assert_eq!(
        last(&bodies[2]).expect("a message"),
        json!({"role": "tool", "tool_call_id": "call_good", "content": "Plan updated"})
    );
    client.stop();
}

#[test]
fn token_totals_end_every_turn_and_survive_a_restart() {
    let (home, workspace) = repository("fidelity-tokens");
    let script = json!({"version": 1, "responses": [
        {"when": "fail", "steps": [{"type": "error", "message": "The model broke."}]},
        {"steps": [{"type": "message", "deltas": ["fine"]}]}
    ]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n",
    )
    .expect("config");
    let total = |seen: &[Value]| -> (Value, Value) {
        let usage = params(seen, "thread/tokenUsage/updated");
        let last = usage.last().expect("thread/tokenUsage/updated");
        (
            last["turnId"].clone(),
            last["tokenUsage"]["total"]["totalTokens"].clone(),
        )
    };

    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let first = client.start_turn(&thread, "hello");
    let seen = client.until_turn_completed();
    assert_eq!(total(&seen), (json!(first), json!(15)));
    let failing = client.start_turn(&thread, "please fail");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("failed"));
    assert_eq!(
        labels(&seen),
        [
            "status:active[]",
            "thread/tokenUsage/updated",
            "error",
            "status:idle",
            "turn/completed"
        ],
        "{seen:#?}"
    );
    // The failed call counted nothing: the totals are re-sent as they stand.
    assert_eq!(total(&seen), (json!(failing), json!(15)));
    client.stop();

    // A new process: resuming sends the recorded totals, and the next turn adds to them.
    let mut client = Client::start(&home);
    client.call("thread/resume", json!({"threadId": thread}));
    let restored = client.notification("thread/tokenUsage/updated");
    assert_eq!(restored["threadId"], json!(thread));
    assert_eq!(restored["turnId"], json!(first), "{restored}");
    assert_eq!(
        restored["tokenUsage"]["total"],
        json!({"totalTokens": 15, "inputTokens": 10, "cachedInputTokens": 0,
               "cacheWriteInputTokens": 0, "outputTokens": 5, "reasoningOutputTokens": 0}),
        "{restored}"
    );
    let third = client.start_turn(&thread, "again");
    let seen = client.until_turn_completed();
    assert_eq!(total(&seen), (json!(third), json!(30)));
    client.stop();
}

#[test]
fn the_model_gets_base_and_developer_instructions_and_the_agents_md_docs() {
    let mock = MockModel::start(vec![Sse::answer("One."), Sse::answer("Two.")]);
    let (home, workspace) = repository("fidelity-prompt");
    let package = workspace.join("pkg");
    std::fs::create_dir_all(&package).expect("pkg");
    std::fs::write(workspace.join("AGENTS.md"), "Root rules.\n").expect("root doc");
    std::fs::write(package.join("AGENTS.md"), "Package rules: be careful.\n").expect("pkg doc");
    // Above the repository root: not read.
    std::fs::write(
        workspace.parent().expect("parent").join("AGENTS.md"),
        "Outside.",
    )
    .expect("outer doc");
    // 12 bytes of the root doc, then 8 of the package's.
    configure_mock(&home, &mock.base_url(), "project_doc_max_bytes = 20");
    let mut client = Client::start(&home);
    let started = client.start_thread(json!({
        "cwd": package,
        "baseInstructions": "You are a careful agent.",
        "developerInstructions": "Answer in one word."
    }));
    let sources = json!([workspace.join("AGENTS.md"), package.join("AGENTS.md")]);
    assert_eq!(started["instructionSources"], sources, "{started}");
    let thread = thread_id(&started);
    client.start_turn(&thread, "Hello");
    client.until_turn_completed();
    client.start_turn(&thread, "Again");
    client.until_turn_completed();

    let bodies = chat_bodies(&mock.wait_requests(2));
    let cwd = package.to_string_lossy();
    let docs = format!(
        "# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\nRoot rules.\n\n\nPackage \n</INSTRUCTIONS>"
    );
    // One system message; the docs and the environment context block (its text is tested in
    // `model_context`) start the first user message (docs/providers.md, chat wire).
    let opening = bodies[0]["messages"][1]["content"]
        .as_str()
        .expect("the first user message")
        .to_owned();
    assert!(
        opening.starts_with(&format!("{docs}\n\n<environment_context>\n"))
            && opening.ends_with("</environment_context>\n\nHello"),
        "{opening}"
    );
    let first = vec![
        json!({"role": "system", "content": "You are a careful agent.\n\nAnswer in one word."}),
        json!({"role": "user", "content": opening}),
    ];
    assert_eq!(bodies[0]["messages"], json!(first));
    // The instructions and docs open every call once; they are not part of the recorded
    // conversation. The environment block is, once: nothing in it changed.
    let mut second = first.clone();
    second.push(json!({"role": "assistant", "content": "One."}));
    second.push(json!({"role": "user", "content": "Again"}));
    assert_eq!(bodies[1]["messages"], json!(second));
    let resumed = client.call("thread/resume", json!({"threadId": thread}));
    assert_eq!(resumed["instructionSources"], sources, "{resumed}");
    client.stop();
}

/// The project-doc message for `cwd` carrying `docs`, as docs/turn-fidelity.md shows it.
fn project_doc_message(cwd: &Path, docs: &str) -> String {
    format!(
        "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\n{docs}\n</INSTRUCTIONS>",
        cwd.to_string_lossy()
    )
}

/// The project doc a chat request carries: the text between `<INSTRUCTIONS>` tags of its
/// user message naming `AGENTS.md`, if any.
fn sent_doc(body: &Value) -> Option<String> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .find(|c| c.starts_with("# AGENTS.md instructions for "))
        .map(|c| {
            let start = c.find("<INSTRUCTIONS>\n").expect("open tag") + "<INSTRUCTIONS>\n".len();
            let end = c.rfind("\n</INSTRUCTIONS>").expect("close tag");
            c[start..end].to_owned()
        })
}

/// docs/turn-fidelity.md ("What the model is sent"): without `project_doc_max_bytes` the
/// project docs are capped at 32 KiB of file content. An `AGENTS.md` of exactly 32,768 bytes
/// arrives whole; one of 32,768 bytes and more arrives cut at exactly 32,768 bytes, with no
/// marker; one whose byte 32,768 falls inside a two-byte character arrives without it (32,767
/// bytes). The doc is read again at every turn start, so one thread shows all three.
#[test]
fn without_a_configured_cap_agents_md_is_sent_up_to_exactly_32_kib() {
    const CAP: usize = 32 * 1024;
    let mock = MockModel::start(vec![
        Sse::answer("One."),
        Sse::answer("Two."),
        Sse::answer("Three."),
    ]);
    let (home, workspace) = repository("fidelity-doc-default");
    configure_mock(&home, &mock.base_url(), "");
    let doc = workspace.join("AGENTS.md");
    // Distinct bytes throughout, so a cut anywhere else shows.
    let body: String = (0..CAP)
        .map(|n| char::from(b'a' + u8::try_from(n % 26).expect("small")))
        .collect();
    let exact = format!("{}Z", &body[..CAP - 1]);
    let over = format!("{body}OVER THE CAP");
    let split = format!("{}é tail", &body[..CAP - 1]);
    assert_eq!(split.as_bytes()[CAP - 1], 0xc3, "byte 32,768 opens the é");

    let mut client = Client::start(&home);
    let started = client.start_thread(json!({"cwd": workspace, "baseInstructions": "Base."}));
    let thread = thread_id(&started);
    for (text, prompt) in [(&exact, "exact"), (&over, "over"), (&split, "split")] {
        std::fs::write(&doc, text).expect("write AGENTS.md");
        client.start_turn(&thread, prompt);
        client.until_turn_completed();
    }
    client.stop();

    let bodies = chat_bodies(&mock.wait_requests(3));
    let expected = [exact.clone(), body.clone(), body[..CAP - 1].to_owned()];
    for (n, (sent, want)) in bodies.iter().zip(&expected).enumerate() {
        let sent = sent_doc(sent).unwrap_or_else(|| panic!("call {n}: no project doc"));
        assert_eq!(
            (sent.len(), sent == *want),
            (want.len(), true),
            "call {n}: the doc sent differs from its first bytes (tail: {:?})",
            &sent[sent.len().saturating_sub(20)..]
        );
    }
    let first_user = bodies[0]["messages"][1]["content"]
        .as_str()
        .expect("the first user message");
    assert!(
        first_user.starts_with(&format!(
            "{}\n\n<environment_context>",
            project_doc_message(&workspace, &exact)
        )),
        "the doc message as documented, then the environment block: {}",
        &first_user[..first_user.len().min(200)]
    );
}

/// docs/turn-fidelity.md ("What the model is sent"): `project_doc_max_bytes = 0` reads no
/// project doc: the model gets its instructions and the user's text, nothing naming
/// `AGENTS.md`, and `thread/start` lists no `instructionSources`. At 1 the same doc sends one
/// byte, so the 0 is what leaves it out.
#[test]
fn a_project_doc_cap_of_zero_sends_no_project_doc_and_one_sends_one_byte() {
    let mock = MockModel::start(vec![Sse::answer("One."), Sse::answer("Two.")]);
    let (home, workspace) = repository("fidelity-doc-zero");
    std::fs::write(workspace.join("AGENTS.md"), "Rules of the project.\n").expect("doc");
    let mut bodies = Vec::new();
    for (cap, request) in [(0, 1), (1, 2)] {
        configure_mock(
            &home,
            &mock.base_url(),
            &format!("project_doc_max_bytes = {cap}"),
        );
        let mut client = Client::start(&home);
        let started = client.start_thread(json!({"cwd": workspace, "baseInstructions": "Base."}));
        let sources = if cap == 0 {
            json!([])
        } else {
            json!([workspace.join("AGENTS.md")])
        };
        assert_eq!(
            started["instructionSources"], sources,
            "cap {cap}: {started}"
        );
        client.start_turn(&thread_id(&started), "Hello");
        client.until_turn_completed();
        client.stop();
        bodies.push(chat_bodies(&mock.wait_requests(request)).remove(request - 1));
    }
    let messages = bodies[0]["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0], json!({"role": "system", "content": "Base."}));
    assert!(
        messages[1]["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("<environment_context>") && c.ends_with("\n\nHello")),
        "a cap of 0 sends no project doc: {messages:?}"
    );
    assert_eq!(sent_doc(&bodies[1]).as_deref(), Some("R"), "a cap of 1");
}

/// The largest file the turn's diff shows as text (docs/turn-fidelity.md: "larger than
/// 4 MiB" shows as binary).
const MAX_TEXT: usize = 4 * 1024 * 1024;
/// The blob id of no file.
const ZERO_OID: &str = "0000000000000000000000000000000000000000";

/// The git blob id of `bytes`, as `git hash-object` gives it (run in `dir`, outside any
/// repository).
fn git_blob_id(dir: &Path, bytes: &[u8]) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("git")
        .args(["hash-object", "--no-filters", "--stdin"])
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run git hash-object");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(bytes)
        .expect("write to git");
    let output = child.wait_with_output().expect("git hash-object");
    assert!(output.status.success(), "git hash-object failed");
    String::from_utf8(output.stdout)
        .expect("hex")
        .trim()
        .to_owned()
}

/// Runs one turn whose model applies `patch` in `workspace` (with the fixture model set up in
/// `home`), and returns the `diff` of its one `turn/diff/updated`.
fn turn_diff_of_one_patch(home: &Path, workspace: &Path, patch: &str) -> String {
    fixture_steps(
        home,
        json!([
            {"type": "patch", "patch": patch},
            {"type": "message", "deltas": ["patched"]}
        ]),
        "",
    );
    let mut client = Client::start(home);
    let thread = thread_id(&client.start_thread(json!({
        "cwd": workspace, "approvalPolicy": "never", "sandbox": "workspace-write"
    })));
    let turn = client.start_turn(&thread, "patch it");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let change = params(&seen, "item/completed")
        .into_iter()
        .find(|p| p["item"]["type"] == json!("fileChange"))
        .expect("the fileChange item");
    assert_eq!(change["item"]["status"], json!("completed"), "{change}");
    let diffs = params(&seen, "turn/diff/updated");
    assert_eq!(diffs.len(), 1, "{seen:#?}");
    assert_eq!(diffs[0]["threadId"], json!(thread));
    assert_eq!(diffs[0]["turnId"], json!(turn));
    let diff = diffs[0]["diff"].as_str().expect("diff").to_owned();
    client.stop();
    diff
}

/// docs/turn-fidelity.md: a file "larger than 4 MiB, which is only hashed, not held" shows
/// `Binary files differ` in the turn's diff (with its git blob ids). One patch edits a line of
/// a file of exactly 4 MiB, which shows its hunk, and the same line of one of 4 MiB and one
/// byte, which shows as binary.
#[test]
fn a_file_past_4_mib_shows_as_binary_with_its_blob_ids_and_one_at_4_mib_shows_its_hunk() {
    let (home, workspace) = repository("fidelity-diff-large");
    // 16-byte lines: 262144 of them make exactly 4 MiB.
    let lines: String = (0..MAX_TEXT / 16).map(|i| format!("{i:015}\n")).collect();
    assert_eq!(lines.len(), MAX_TEXT);
    let edge_before = lines.clone();
    let big_before = format!("{lines}\n");
    assert_eq!(big_before.len(), MAX_TEXT + 1);
    std::fs::write(workspace.join("edge.txt"), &edge_before).expect("write edge.txt");
    std::fs::write(workspace.join("big.txt"), &big_before).expect("write big.txt");
    // The same line of each is replaced by one as long: both files keep their sizes.
    let (old, new) = ("000000000100000\n", "changed-line-00\n");
    let edge_after = edge_before.replacen(old, new, 1);
    let big_after = big_before.replacen(old, new, 1);
    let edit = "@@\n 000000000099999\n-000000000100000\n+changed-line-00\n 000000000100001\n";
    let patch = format!(
        "*** Begin Patch\n*** Update File: big.txt\n{edit}*** Update File: edge.txt\n{edit}\
         *** End Patch\n"
    );

    let diff = turn_diff_of_one_patch(&home, &workspace, &patch);
    let read = |name: &str| std::fs::read_to_string(workspace.join(name)).expect("read");
    assert!(read("big.txt") == big_after, "big.txt was patched");
    assert!(read("edge.txt") == edge_after, "edge.txt was patched");
    let ids = |before: &str, after: &str| {
        let dir = workspace.parent().expect("scratch root");
        (
            git_blob_id(dir, before.as_bytes()),
            git_blob_id(dir, after.as_bytes()),
        )
    };
    let (big_old, big_new) = ids(&big_before, &big_after);
    let (edge_old, edge_new) = ids(&edge_before, &edge_after);
    let expected = format!(
        "diff --git a/big.txt b/big.txt\nindex {big_old}..{big_new}\n\
         --- a/big.txt\n+++ b/big.txt\nBinary files differ\n\
         diff --git a/edge.txt b/edge.txt\nindex {edge_old}..{edge_new}\n\
         --- a/edge.txt\n+++ b/edge.txt\n@@ -99998,7 +99998,7 @@\n 000000000099997\n \
         000000000099998\n 000000000099999\n-000000000100000\n+changed-line-00\n \
         000000000100001\n 000000000100002\n 000000000100003\n"
    );
    assert_eq!(diff, expected);
    let _ = std::fs::remove_dir_all(workspace.parent().expect("scratch root"));
}

/// docs/turn-fidelity.md: "A file that is not UTF-8 text shows `Binary files differ` instead
/// of hunks". One patch deletes two files that differ by one byte: the UTF-8 one shows its
/// removed line, the other (a stray `0xff`) shows as binary, each with its git blob id.
#[test]
fn a_deleted_file_that_is_not_utf8_shows_as_binary_in_the_turns_diff() {
    let (home, workspace) = repository("fidelity-diff-binary");
    let text = b"hello\n".to_vec();
    let binary = b"hello\n\xff".to_vec();
    std::fs::write(workspace.join("text.txt"), &text).expect("write text.txt");
    std::fs::write(workspace.join("blob.bin"), &binary).expect("write blob.bin");
    let patch = "*** Begin Patch\n*** Delete File: text.txt\n*** Delete File: blob.bin\n\
                 *** End Patch\n";

    let diff = turn_diff_of_one_patch(&home, &workspace, patch);
    assert!(!workspace.join("blob.bin").exists() && !workspace.join("text.txt").exists());
    let dir = workspace.parent().expect("scratch root");
    let (blob, hello) = (git_blob_id(dir, &binary), git_blob_id(dir, &text));
    assert_eq!(hello, "ce013625030ba8dba906f756967f9e9ca394464a");
    let expected = format!(
        "diff --git a/blob.bin b/blob.bin\ndeleted file mode 100644\nindex {blob}..{ZERO_OID}\n\
         --- a/blob.bin\n+++ /dev/null\nBinary files differ\n\
         diff --git a/text.txt b/text.txt\ndeleted file mode 100644\nindex {hello}..{ZERO_OID}\n\
         --- a/text.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-hello\n"
    );
    assert_eq!(diff, expected);
    let _ = std::fs::remove_dir_all(dir);
}
