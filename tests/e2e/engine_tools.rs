//! Tools end to end: the fixture model calls `shell` and `apply_patch`; the real binary runs
//! them under the thread's approval and sandbox policies, asking this test (the client) for
//! approval over stdio.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, deltas, thread_id};
use crate::common::{fixture_steps, home_and_workspace, scratch};

const ADD_NOTES: &str =
    "*** Begin Patch\n*** Add File: notes.txt\n+written by the agent\n*** End Patch\n";

/// A home whose fixture script answers each `case-…` input with tool calls, and a workspace
/// directory beside it.
fn setup(name: &str) -> (PathBuf, PathBuf) {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    let command = |line: &str| json!({"type": "command", "command": line});
    let patch = |text: &str| json!({"type": "patch", "patch": text});
    let message = |text: &str| json!({"type": "message", "deltas": [text]});
    let add = |path: &str| format!("*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n");
    let script = json!({
        "version": 1,
        "responses": [
            {"when": "case-full", "steps": [
                {"type": "reasoning", "summary": ["Planning ", "the work."]},
                {"type": "message", "deltas": ["I will look ", "and write."]},
                command("echo hello-from-shell"),
                patch(ADD_NOTES),
                {"type": "message", "deltas": ["All ", "done."]}
            ]},
            {"when": "case-accept", "steps": [command("touch accepted.txt"), message("ok")]},
            {"when": "case-decline", "steps": [command("touch declined.txt"), message("ok")]},
            {"when": "case-malformed", "steps": [command("touch malformed.txt"), message("ok")]},
            {"when": "case-session", "steps": [
                command("touch session.txt"), message("again"),
                command("touch session.txt"), message("done")
            ]},
            {"when": "case-cancel", "steps": [command("touch cancelled.txt"), message("never")]},
            {"when": "case-disguised-writers", "steps": [
                command("uniq in.txt uniq-out.txt"),
                command("sort -uo sort-out.txt in.txt"),
                command("ls"),
                message("tried")
            ]},
            {"when": "case-patch", "steps": [patch(&add("patched.txt")), message("ok")]},
            {"when": "case-escape", "steps": [
                command("touch ../escaped-by-shell.txt"),
                patch(&add("../escaped-by-patch.txt")),
                patch(&add("link/escaped-through-link.txt")),
                command("touch inside.txt"),
                message("tried")
            ]}
        ]
    });
    std::fs::write(home.join("tools.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"tools.json\"\n",
    )
    .expect("config");
    (home, workspace)
}

fn new_thread(client: &mut Client, workspace: &Path, approval: &str, sandbox: &str) -> String {
    thread_id(
        &client.start_thread(
            json!({"cwd": workspace, "approvalPolicy": approval, "sandbox": sandbox}),
        ),
    )
}

/// Every notification up to and including `turn/completed`; returns them and the final turn.
fn until_completed(client: &mut Client) -> (Vec<Value>, Value) {
    let all = client.until_turn_completed();
    let turn = completed_turn(&all).clone();
    (all, turn)
}

/// The completed items of `kind` among `notifications`.
fn completed_items(notifications: &[Value], kind: &str) -> Vec<Value> {
    notifications
        .iter()
        .filter(|n| {
            n["method"] == json!("item/completed") && n["params"]["item"]["type"] == json!(kind)
        })
        .map(|n| n["params"]["item"].clone())
        .collect()
}

fn answer(client: &mut Client, id: Value, decision: Value) {
    client.send(&json!({"id": id, "result": {"decision": decision}}));
}

#[test]
fn a_full_turn_runs_a_command_and_a_patch() {
    let (home, workspace) = setup("tools-full");
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "never", "workspace-write");
    client.start_turn(&thread, "case-full");
    let (notifications, turn) = until_completed(&mut client);
    assert_eq!(turn["status"], json!("completed"), "{notifications:#?}");

    let order: Vec<String> = notifications
        .iter()
        .filter(|n| n["method"] == json!("item/started"))
        .map(|n| {
            n["params"]["item"]["type"]
                .as_str()
                .unwrap_or("?")
                .to_owned()
        })
        .collect();
    assert_eq!(
        order,
        [
            "userMessage",
            "reasoning",
            "agentMessage",
            "commandExecution",
            "fileChange",
            "agentMessage"
        ]
    );
    let output = deltas(&notifications, "item/commandExecution/outputDelta");
    assert_eq!(output, "hello-from-shell\n");
    let command = &completed_items(&notifications, "commandExecution")[0];
    assert_eq!(command["status"], json!("completed"));
    assert_eq!(command["exitCode"], json!(0));
    assert_eq!(command["command"], json!("echo hello-from-shell"));
    assert_eq!(command["aggregatedOutput"], json!("hello-from-shell\n"));
    assert_eq!(command["cwd"], json!(workspace.to_str()));
    assert!(command["durationMs"].as_i64().is_some(), "{command}");
    let change = &completed_items(&notifications, "fileChange")[0];
    assert_eq!(change["status"], json!("completed"));
    assert_eq!(change["changes"][0]["kind"], json!({"type": "add"}));
    assert!(
        change["changes"][0]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("/notes.txt"))
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("notes.txt")).expect("patched file"),
        "written by the agent\n"
    );
    assert!(
        !notifications.iter().any(|n| n.get("id").is_some()),
        "policy `never` must not ask: {notifications:#?}"
    );

    // The record has every item, in order.
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let items: Vec<&str> = read["thread"]["turns"][0]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        items,
        [
            "userMessage",
            "reasoning",
            "agentMessage",
            "commandExecution",
            "fileChange",
            "agentMessage"
        ]
    );
}

#[test]
fn approvals_accepted_declined_malformed_and_for_the_session() {
    let (home, workspace) = setup("tools-approvals");
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "untrusted", "workspace-write");

    // Accepted: the command runs.
    let turn = client.start_turn(&thread, "case-accept");
    let (id, params) = client.server_request("item/commandExecution/requestApproval");
    assert_eq!(params["threadId"], json!(thread));
    assert_eq!(params["turnId"], json!(turn));
    assert_eq!(params["command"], json!("touch accepted.txt"));
    assert_eq!(params["cwd"], json!(workspace.to_str()));
    answer(&mut client, id.clone(), json!("accept"));
    let (notifications, done) = until_completed(&mut client);
    assert_eq!(done["status"], json!("completed"));
    let resolved: Vec<&Value> = notifications
        .iter()
        .filter(|n| n["method"] == json!("serverRequest/resolved"))
        .collect();
    assert_eq!(resolved.len(), 1, "{notifications:#?}");
    assert_eq!(resolved[0]["params"]["requestId"], id);
    let item = &completed_items(&notifications, "commandExecution")[0];
    assert_eq!(item["status"], json!("completed"));
    assert_eq!(item["id"], params["itemId"]);
    assert!(workspace.join("accepted.txt").exists());

    // Declined: it does not run, the turn goes on.
    client.start_turn(&thread, "case-decline");
    let (id, _) = client.server_request("item/commandExecution/requestApproval");
    answer(&mut client, id, json!("decline"));
    let (notifications, done) = until_completed(&mut client);
    assert_eq!(done["status"], json!("completed"));
    assert_eq!(
        completed_items(&notifications, "commandExecution")[0]["status"],
        json!("declined")
    );
    assert!(!workspace.join("declined.txt").exists());

    // A malformed answer declines.
    client.start_turn(&thread, "case-malformed");
    let (id, _) = client.server_request("item/commandExecution/requestApproval");
    client.send(&json!({"id": id, "result": {"decision": "maybe"}}));
    let (notifications, _) = until_completed(&mut client);
    assert_eq!(
        completed_items(&notifications, "commandExecution")[0]["status"],
        json!("declined")
    );
    assert!(!workspace.join("malformed.txt").exists());

    // An error answer declines too.
    client.start_turn(&thread, "case-malformed");
    let (id, _) = client.server_request("item/commandExecution/requestApproval");
    client.send(&json!({"id": id, "error": {"code": -32000, "message": "no"}}));
    let (notifications, _) = until_completed(&mut client);
    assert_eq!(
        completed_items(&notifications, "commandExecution")[0]["status"],
        json!("declined")
    );

    // Accepted for the session: the same command is not asked about again.
    client.start_turn(&thread, "case-session");
    let (id, _) = client.server_request("item/commandExecution/requestApproval");
    answer(&mut client, id, json!("acceptForSession"));
    let (notifications, done) = until_completed(&mut client);
    assert_eq!(done["status"], json!("completed"));
    let commands = completed_items(&notifications, "commandExecution");
    assert_eq!(commands.len(), 2);
    assert!(
        commands.iter().all(|c| c["status"] == json!("completed")),
        "{commands:#?}"
    );
    assert!(
        !notifications
            .iter()
            .any(|n| n["method"] == json!("item/commandExecution/requestApproval")),
        "asked twice: {notifications:#?}"
    );

    // Cancel stops the turn.
    client.start_turn(&thread, "case-cancel");
    let (id, _) = client.server_request("item/commandExecution/requestApproval");
    answer(&mut client, id, json!("cancel"));
    let (notifications, done) = until_completed(&mut client);
    assert_eq!(done["status"], json!("interrupted"));
    assert!(
        completed_items(&notifications, "agentMessage").is_empty(),
        "{notifications:#?}"
    );
    assert!(!workspace.join("cancelled.txt").exists());
}

#[test]
fn patches_outside_the_writable_roots_ask_first() {
    let (home, workspace) = setup("tools-patch-approval");
    let mut client = Client::start(&home);
    // read-only: every write is outside the (empty) writable roots, so on-request asks.
    let thread = new_thread(&mut client, &workspace, "on-request", "read-only");
    client.start_turn(&thread, "case-patch");
    let (id, params) = client.server_request("item/fileChange/requestApproval");
    assert_eq!(params["threadId"], json!(thread));
    answer(&mut client, id, json!("decline"));
    let (notifications, _) = until_completed(&mut client);
    let declined = &completed_items(&notifications, "fileChange")[0];
    assert_eq!(declined["status"], json!("declined"));
    assert_eq!(declined["id"], params["itemId"]);
    assert!(!workspace.join("patched.txt").exists());

    client.start_turn(&thread, "case-patch");
    let (id, _) = client.server_request("item/fileChange/requestApproval");
    answer(&mut client, id, json!("accept"));
    let (notifications, _) = until_completed(&mut client);
    assert_eq!(
        completed_items(&notifications, "fileChange")[0]["status"],
        json!("completed")
    );
    assert!(workspace.join("patched.txt").exists());
}

#[test]
fn sandbox_escapes_are_refused() {
    let (home, workspace) = setup("tools-escape");
    let outside = workspace.parent().expect("parent").join("outside");
    std::fs::create_dir_all(&outside).expect("outside dir");
    std::os::unix::fs::symlink(&outside, workspace.join("link")).expect("symlink");
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "never", "workspace-write");
    // The scratch directories live under /tmp, which workspace-write allows by default.
    client.start_turn_with(
        &thread,
        "case-escape",
        json!({"sandboxPolicy": {
            "type": "workspaceWrite",
            "excludeSlashTmp": true,
            "excludeTmpdirEnvVar": true
        }}),
    );
    let (notifications, turn) = until_completed(&mut client);
    assert_eq!(turn["status"], json!("completed"), "{notifications:#?}");
    let parent = workspace.parent().expect("parent");
    assert!(
        !parent.join("escaped-by-shell.txt").exists(),
        "the shell wrote outside"
    );
    assert!(
        !parent.join("escaped-by-patch.txt").exists(),
        "a patch wrote outside"
    );
    assert!(
        !outside.join("escaped-through-link.txt").exists(),
        "a patch wrote through a link"
    );
    let commands = completed_items(&notifications, "commandExecution");
    assert_eq!(commands[0]["status"], json!("failed"), "{commands:#?}");
    assert_eq!(
        commands[1]["status"],
        json!("completed"),
        "writes inside still work"
    );
    assert!(workspace.join("inside.txt").exists());
    let patches = completed_items(&notifications, "fileChange");
    assert_eq!(patches.len(), 2, "{notifications:#?}");
    assert!(
        patches.iter().all(|p| p["status"] == json!("declined")),
        "{patches:#?}"
    );

    // A per-turn override tightens the policy for this and later turns.
    client.start_turn_with(
        &thread,
        "case-accept",
        json!({"approvalPolicy": "never", "sandboxPolicy": {"type": "readOnly"}}),
    );
    let (notifications, _) = until_completed(&mut client);
    assert_eq!(
        completed_items(&notifications, "commandExecution")[0]["status"],
        json!("failed")
    );
    assert!(
        !workspace.join("accepted.txt").exists(),
        "read-only let a write through"
    );
    let resumed = client.call("thread/resume", json!({"threadId": thread}));
    assert_eq!(
        resumed["sandbox"],
        json!({"type": "readOnly", "networkAccess": false})
    );
}

#[test]
fn an_interrupt_while_waiting_for_approval_ends_the_turn() {
    let (home, workspace) = setup("tools-interrupt");
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "untrusted", "workspace-write");
    let turn = client.start_turn(&thread, "case-cancel");
    let (id, _) = client.server_request("item/commandExecution/requestApproval");
    client.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    );
    let (notifications, done) = until_completed(&mut client);
    assert_eq!(done["status"], json!("interrupted"));
    assert!(
        notifications
            .iter()
            .any(|n| n["method"] == json!("serverRequest/resolved")
                && n["params"]["requestId"] == id),
        "the pending approval was not resolved: {notifications:#?}"
    );
    assert!(!workspace.join("cancelled.txt").exists());
}

/// Under `untrusted`, a reader's name does not make a command safe: `uniq IN OUT` and
/// `sort -uo OUT` write, so each asks; declined, neither writes. `ls` runs unasked.
#[test]
fn untrusted_asks_before_writers_that_look_like_readers() {
    let (home, workspace) = setup("tools-disguised");
    std::fs::write(workspace.join("in.txt"), "b\na\na\n").expect("input");
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "untrusted", "workspace-write");
    client.start_turn(&thread, "case-disguised-writers");
    for command in ["uniq in.txt uniq-out.txt", "sort -uo sort-out.txt in.txt"] {
        let (id, params) = client.server_request("item/commandExecution/requestApproval");
        assert_eq!(params["command"], json!(command));
        answer(&mut client, id, json!("decline"));
    }
    let (notifications, done) = until_completed(&mut client);
    assert_eq!(done["status"], json!("completed"));
    assert!(
        !notifications
            .iter()
            .any(|n| n["method"] == json!("item/commandExecution/requestApproval")),
        "ls ran without asking: {notifications:#?}"
    );
    let ran = completed_items(&notifications, "commandExecution");
    assert_eq!(ran.last().expect("ls")["command"], json!("ls"));
    assert_eq!(ran.last().expect("ls")["status"], json!("completed"));
    assert!(!workspace.join("uniq-out.txt").exists());
    assert!(!workspace.join("sort-out.txt").exists());
    client.stop();
}

/// A `turn/interrupt` sent while the model's run of patches is being applied is answered
/// before the run ends, and stops it: the turn is `interrupted` with the rest not written.
#[test]
fn an_interrupt_stops_a_run_of_patches() {
    const PATCHES: usize = 300;
    let root = scratch("tools-interrupt-patches");
    let (home, workspace) = home_and_workspace(&root);
    let steps: Vec<Value> = (0..PATCHES)
        .map(|n| {
            json!({"type": "patch", "patch": format!(
                "*** Begin Patch\n*** Add File: file-{n}.txt\n+{n}\n*** End Patch\n"
            )})
        })
        .collect();
    fixture_steps(&home, json!(steps), "");
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "never", "workspace-write");
    let turn = client.start_turn(&thread, "write many files");
    client.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    );
    let (_, done) = until_completed(&mut client);
    assert_eq!(done["status"], json!("interrupted"), "{done}");
    let written = std::fs::read_dir(&workspace).expect("workspace").count();
    assert!(written < PATCHES, "all {written} patches were applied");
    client.stop();
}
