//! Tools end to end: the fixture model calls `shell` and `apply_patch`; the real binary runs
//! them under the thread's approval and sandbox policies, asking this test (the client) for
//! approval over stdio.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, deltas, params, thread_id};
use crate::common::{alive, fixture_steps, home_and_workspace, scratch};
use crate::mock_model::{MockModel, Reply, Sse};

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
                command("git status"),
                command("git log --oneline"),
                command("git diff"),
                command("ls"),
                message("tried")
            ]},
            {"when": "case-git-status", "steps": [command("git status"), message("ok")]},
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
    let (id, asked) = client.server_request("item/commandExecution/requestApproval");
    assert_eq!(asked["threadId"], json!(thread));
    assert_eq!(asked["turnId"], json!(turn));
    assert_eq!(asked["command"], json!("touch accepted.txt"));
    assert_eq!(asked["cwd"], json!(workspace.to_str()));
    answer(&mut client, id.clone(), json!("accept"));
    let (notifications, done) = until_completed(&mut client);
    assert_eq!(done["status"], json!("completed"));
    let resolved = params(&notifications, "serverRequest/resolved");
    assert_eq!(resolved.len(), 1, "{notifications:#?}");
    assert_eq!(resolved[0]["requestId"], id);
    let item = &completed_items(&notifications, "commandExecution")[0];
    assert_eq!(item["status"], json!("completed"));
    assert_eq!(item["id"], asked["itemId"]);
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

/// `--server-request-timeout-ms` (docs/app-server.md: server requests "time out (10 minutes by default)"):
/// an approval nobody answers is withdrawn (`serverRequest/resolved`) once it has waited that
/// long, and declined, so the command does not run and the turn goes on. An answer that comes
/// after that decides nothing, and the server serves on.
#[test]
fn an_approval_left_unanswered_times_out_as_declined_and_a_late_answer_changes_nothing() {
    let (home, workspace) = setup("tools-approval-timeout");
    let mut client = Client::start_with(&home, &["--server-request-timeout-ms", "400"]);
    let thread = new_thread(&mut client, &workspace, "untrusted", "workspace-write");
    // The request is sent after this, so it has waited less than this measures.
    let asked = Instant::now();
    client.start_turn(&thread, "case-accept");
    let (id, _) = client.server_request("item/commandExecution/requestApproval");
    let (notifications, done) = until_completed(&mut client);
    let waited = asked.elapsed();
    assert!(
        waited >= Duration::from_millis(400),
        "withdrawn after {waited:?}, before the timeout"
    );
    assert_eq!(done["status"], json!("completed"));
    let resolved = params(&notifications, "serverRequest/resolved");
    assert_eq!(resolved.len(), 1, "{notifications:#?}");
    assert_eq!(resolved[0]["requestId"], id);
    assert_eq!(
        completed_items(&notifications, "commandExecution")[0]["status"],
        json!("declined")
    );
    // Too late: the command still does not run, and the server answers the next request.
    answer(&mut client, id, json!("accept"));
    let read = client.call("thread/read", json!({"threadId": thread}));
    assert_eq!(read["thread"]["id"], json!(thread));
    assert!(!workspace.join("accepted.txt").exists());
    let log = client.stop();
    // Both are logged: the timeout, and the answer that came too late.
    assert!(log.contains("did not answer within 400ms"), "{log}");
    assert!(
        log.contains("answer to an unknown or settled server request ignored"),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(home.parent().expect("the test's root"));
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

/// Promise (docs/security.md, `untrusted`; README, "Approvals"): a reader's name does not make
/// a command safe. `uniq IN OUT` and `sort -uo OUT` write, and every `git` command reads the
/// repository's config, which can run programs: here `core.fsmonitor` names a hook that
/// writes `hooked.txt`. `uniq`, `sort -uo`, `git status`, `git log` and `git diff` each ask;
/// declined, nothing is written and the hook never runs, while `ls` runs unasked. The control:
/// `git status`, accepted, does run the hook.
#[test]
fn untrusted_asks_before_writers_that_look_like_readers() {
    let (home, workspace) = setup("tools-disguised");
    std::fs::write(workspace.join("in.txt"), "b\na\na\n").expect("input");
    let git = |args: &[&str]| crate::common::git(&workspace, args);
    git(&["init", "-q"]);
    git(&["add", "in.txt"]);
    git(&["commit", "-qm", "input"]);
    std::fs::write(
        workspace.join("hook.sh"),
        "#!/bin/sh\necho ran >> hooked.txt\n",
    )
    .expect("hook");
    std::fs::set_permissions(
        workspace.join("hook.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod hook");
    git(&["config", "core.fsmonitor", "./hook.sh"]);
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "untrusted", "workspace-write");
    client.start_turn(&thread, "case-disguised-writers");
    for command in [
        "uniq in.txt uniq-out.txt",
        "sort -uo sort-out.txt in.txt",
        "git status",
        "git log --oneline",
        "git diff",
    ] {
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
    assert_eq!(ran.len(), 6, "{ran:#?}");
    assert!(
        ran[..5].iter().all(|c| c["status"] == json!("declined")),
        "{ran:#?}"
    );
    assert_eq!(ran[5]["command"], json!("ls"));
    assert_eq!(ran[5]["status"], json!("completed"));
    assert!(!workspace.join("uniq-out.txt").exists());
    assert!(!workspace.join("sort-out.txt").exists());
    assert!(
        !workspace.join("hooked.txt").exists(),
        "a declined git command ran the repository's hook"
    );

    // The control: the hook is real, `git status` runs it once accepted.
    client.start_turn(&thread, "case-git-status");
    let (id, params) = client.server_request("item/commandExecution/requestApproval");
    assert_eq!(params["command"], json!("git status"));
    answer(&mut client, id, json!("accept"));
    let (notifications, done) = until_completed(&mut client);
    assert_eq!(done["status"], json!("completed"));
    let status = &completed_items(&notifications, "commandExecution")[0];
    assert_eq!(status["status"], json!("completed"), "{status}");
    assert!(
        workspace.join("hooked.txt").exists(),
        "git status did not run the core.fsmonitor hook: the control proves nothing"
    );
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

/// Output streamed to the client before streaming stops (docs/sandbox.md, "How a command runs").
const STREAM_BYTES: usize = 4 * 1024 * 1024;
/// Output kept from each end for the model (docs/sandbox.md, "How a command runs").
const KEEP_BYTES: usize = 64 * 1024;
/// How long a command's leftovers that hold its pipes may live after it exits
/// (docs/sandbox.md, "How a command runs").
const DRAIN_GRACE: Duration = Duration::from_millis(250);
/// What the test allows on top of [`DRAIN_GRACE`]: room for a CI machine running many tests
/// at once, still far short of the 30 s the leftovers would live if nothing killed them.
const KILL_SLACK: Duration = Duration::from_secs(2);
const HEAD_MARKER: &str = "HEAD-MARKER-7f3a";
const TAIL_MARKER: &str = "TAIL-MARKER-9c2e";
/// A line from the middle of [`big_output`], far from both kept ends.
const MIDDLE_LINE: &str = "\n450000\n";

/// Bytes `from..to` of `text` (clamped; a cut character shows as U+FFFD), for messages.
fn excerpt(text: &str, from: usize, to: usize) -> String {
    let bytes = text.as_bytes();
    String::from_utf8_lossy(&bytes[from.min(bytes.len())..to.min(bytes.len())]).into_owned()
}

/// A command printing about 6.2 MB of distinct lines between two markers, and that output.
fn big_output() -> (String, String) {
    let command = format!("echo {HEAD_MARKER}; seq 1 900000; echo {TAIL_MARKER}");
    let mut output = format!("{HEAD_MARKER}\n");
    for n in 1..=900_000 {
        output.push_str(&n.to_string());
        output.push('\n');
    }
    output.push_str(TAIL_MARKER);
    output.push('\n');
    assert!(output.len() > STREAM_BYTES + 1024 * 1024);
    (command, output)
}

/// Checks that the `outputDelta`s of `notifications` are the first [`STREAM_BYTES`] of
/// `output`, exactly, followed by one short note and nothing else (docs/sandbox.md, "How a
/// command runs").
fn assert_streamed(notifications: &[Value], item_id: &Value, output: &str) {
    let streamed_deltas = params(notifications, "item/commandExecution/outputDelta");
    assert!(
        streamed_deltas.iter().all(|p| p["itemId"] == *item_id),
        "a delta of another item"
    );
    let streamed = deltas(notifications, "item/commandExecution/outputDelta");
    let same = streamed
        .bytes()
        .zip(output.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(
        same >= STREAM_BYTES,
        "the stream departs from the output at byte {same} (of {} streamed): {:?}",
        streamed.len(),
        excerpt(&streamed, same.saturating_sub(40), same + 120)
    );
    let note = &streamed[STREAM_BYTES..];
    assert!(
        note.len() < 256 && note.contains("4 MiB"),
        "{} bytes streamed: the first 4 MiB of the output should be followed by a short note \
         only, not {:?}…",
        streamed.len(),
        excerpt(note, 0, 300)
    );
    assert!(
        !note.contains(&output[STREAM_BYTES..STREAM_BYTES + 32]) && !note.contains(TAIL_MARKER),
        "output past 4 MiB was streamed: {note:?}"
    );
}

/// Checks that `text` is the first and last [`KEEP_BYTES`] of `output` with
/// `[… N bytes omitted …]` between, N being what was left out (docs/sandbox.md, "How a
/// command runs").
fn assert_head_and_tail(text: &str, output: &str) {
    let head = &output[..KEEP_BYTES];
    let tail = &output[output.len() - KEEP_BYTES..];
    assert!(
        text.starts_with(head),
        "not the first 64 KiB: {:?}…",
        excerpt(text, 0, 200)
    );
    assert!(
        text.ends_with(tail),
        "not the last 64 KiB: …{:?}",
        excerpt(text, text.len().saturating_sub(200), text.len())
    );
    assert!(text.len() >= 2 * KEEP_BYTES, "{} bytes", text.len());
    let between = &text[KEEP_BYTES..text.len() - KEEP_BYTES];
    assert!(
        between.len() < 256,
        "{} bytes between the head and the tail",
        between.len()
    );
    let omitted = output.len() - 2 * KEEP_BYTES;
    assert_eq!(between.trim(), format!("[… {omitted} bytes omitted …]"));
    assert!(
        !text.contains(MIDDLE_LINE),
        "the middle of the output was kept"
    );
}

/// Promise (docs/sandbox.md, "How a command runs"): streaming to the client stops after 4 MiB with
/// a note, while the command keeps running and its output keeps being read. Through the binary,
/// unconfined: a command printing about 6.2 MB streams exactly its first 4 MiB plus a note, exits
/// 0, and its item's `aggregatedOutput` keeps the first and last 64 KiB (tail marker included, so
/// the output past 4 MiB was read) with the omitted-bytes note between.
#[test]
fn streaming_stops_after_4_mib_and_the_command_runs_to_its_end() {
    let root = scratch("tools-stream-limit");
    let (home, workspace) = home_and_workspace(&root);
    let (command, output) = big_output();
    fixture_steps(
        &home,
        json!([
            {"type": "command", "command": command},
            {"type": "message", "deltas": ["done"]}
        ]),
        "",
    );
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "never", "danger-full-access");
    client.start_turn(&thread, "print a lot");
    let (notifications, turn) = until_completed(&mut client);
    assert_eq!(turn["status"], json!("completed"), "{turn}");
    let items = completed_items(&notifications, "commandExecution");
    assert_eq!(items.len(), 1, "{} command items", items.len());
    let item = &items[0];
    assert_eq!(item["status"], json!("completed"), "{}", item["status"]);
    assert_eq!(item["exitCode"], json!(0));
    assert_streamed(&notifications, &item["id"], &output);
    let aggregated = item["aggregatedOutput"].as_str().expect("aggregatedOutput");
    assert_head_and_tail(aggregated, &output);
    assert_eq!(
        completed_items(&notifications, "agentMessage").len(),
        1,
        "the turn went on after the command"
    );
    client.stop();
}

/// Promise (docs/sandbox.md, "How a command runs"): the output returned to the model keeps
/// the first and the last 64 KiB with `[… N bytes omitted …]` between. Through the binary,
/// confined (`workspace-write`), with the mock model: the request after the tool call carries the
/// head marker and the tail marker, the exact first and last 64 KiB and the note, about
/// 128 KiB in all, and no line from the middle. The client's stream stops at 4 MiB here too.
#[test]
fn the_model_gets_the_first_and_last_64_kib_of_a_long_output() {
    let (command, output) = big_output();
    let mock = MockModel::start(vec![
        Reply::Stream(
            Sse::new()
                .tool_call(
                    0,
                    "call_big",
                    "shell",
                    &json!({ "command": command }).to_string(),
                )
                .finish("tool_calls")
                .usage(20, 9, 0, 0),
        ),
        Sse::answer("Read it."),
    ]);
    let root = scratch("tools-model-head-tail");
    let (home, workspace) = home_and_workspace(&root);
    // A model budget (`tool_output_token_limit`, 160,000 bytes) above what the command keeps,
    // so the model is shown exactly the item's output.
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_provider = \"mock\"\nmodel = \"mock-model\"\ntool_output_token_limit = 40000\n\n[model_providers.mock]\n\
             name = \"mock model\"\nbase_url = \"{}\"\nmodel_context_window = 1000000\n\
             request_max_retries = 0\nstream_idle_timeout_ms = 20000\n",
            mock.base_url()
        ),
    )
    .expect("config");
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "never", "workspace-write");
    client.start_turn(&thread, "print a lot");
    let (notifications, turn) = until_completed(&mut client);
    assert_eq!(turn["status"], json!("completed"), "{turn}");
    let item = &completed_items(&notifications, "commandExecution")[0];
    assert_eq!(item["status"], json!("completed"), "{}", item["status"]);
    assert_streamed(&notifications, &item["id"], &output);

    let requests = mock.wait_requests(2);
    let messages = requests[1].body["messages"].as_array().expect("messages");
    let content = messages
        .iter()
        .find(|m| m["role"] == json!("tool") && m["tool_call_id"] == json!("call_big"))
        .and_then(|m| m["content"].as_str())
        .expect("the tool result in the second request");
    assert!(content.contains(HEAD_MARKER), "no head marker");
    assert!(content.contains(TAIL_MARKER), "no tail marker");
    let at = content.find(HEAD_MARKER).expect("head marker");
    assert!(
        at < 256,
        "{at} bytes before the output: {:?}",
        excerpt(content, 0, at.min(300))
    );
    assert_head_and_tail(&content[at..], &output);
    assert!(
        content.len() <= 2 * KEEP_BYTES + 512,
        "{} bytes sent to the model",
        content.len()
    );
    assert!(
        item["aggregatedOutput"] == json!(content[at..]),
        "the item's aggregatedOutput is not what the model got"
    );
    client.stop();
}

/// The contents of `path` once a line has been written to it.
fn line_in(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "nothing in {}", path.display());
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Waits for the pid in `workspace/{name}.pid` to stop running; returns how long after the
/// command's exit (the time in `workspace/{name}.exited`, nanoseconds since the epoch) it
/// was first seen gone.
fn death_after_exit(workspace: &Path, name: &str) -> Duration {
    // The documented case: the child stays in the command's process group.
    let group = line_in(&workspace.join(format!("{name}.group")));
    let (leader, child_group) = group.split_once(' ').expect("two numbers");
    assert_eq!(
        leader, child_group,
        "{name}: the child left the command's group"
    );
    let pid: u32 = line_in(&workspace.join(format!("{name}.pid")))
        .parse()
        .expect("pid");
    let deadline = Instant::now() + Duration::from_secs(40);
    while alive(pid) {
        assert!(
            Instant::now() < deadline,
            "{name}: the background child {pid} still runs"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let gone = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock");
    let exited: u64 = line_in(&workspace.join(format!("{name}.exited")))
        .parse()
        .expect("nanoseconds");
    gone.saturating_sub(Duration::from_nanos(exited))
}

/// Promise (docs/sandbox.md, "How a command runs"): when the command exits, anything it left
/// running in its group is killed too, after 250 ms if it still holds the output pipes. Through the
/// binary, unconfined (so the test sees the child's pid): a command backgrounds `sleep 30` in its
/// own process group, once holding the pipes and once with them redirected, records its pid and
/// exits at once; each `sleep` is gone within 250 ms (plus slack) of the command's exit, and the
/// turn completes in well under the 30 s of the `sleep`s.
#[test]
fn a_commands_background_children_are_killed_when_it_exits() {
    let root = scratch("tools-group-kill");
    let (home, workspace) = home_and_workspace(&root);
    let leave = |name: &str, redirect: &str| {
        json!({"type": "command", "command": format!(
            "sleep 30 {redirect}& echo $$ $(cut -d' ' -f5 /proc/$!/stat) > {name}.group; \
             echo $! > {name}.pid; date +%s%N > {name}.exited"
        )})
    };
    fixture_steps(
        &home,
        json!([
            leave("holding", ""),
            leave("detached", ">/dev/null 2>&1 "),
            {"type": "message", "deltas": ["done"]}
        ]),
        "",
    );
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "never", "danger-full-access");
    let started = Instant::now();
    client.start_turn(&thread, "leave children behind");
    let holding = death_after_exit(&workspace, "holding");
    let detached = death_after_exit(&workspace, "detached");
    let (notifications, turn) = until_completed(&mut client);
    let took = started.elapsed();
    eprintln!("killed {holding:?} and {detached:?} after exit; turn took {took:?}");
    assert_eq!(turn["status"], json!("completed"), "{turn}");
    let items = completed_items(&notifications, "commandExecution");
    assert_eq!(items.len(), 2, "{items:#?}");
    assert!(
        items
            .iter()
            .all(|i| i["status"] == json!("completed") && i["exitCode"] == json!(0)),
        "{items:#?}"
    );
    assert!(
        holding <= DRAIN_GRACE + KILL_SLACK,
        "the child holding the pipes lived {holding:?} after the command exited"
    );
    assert!(
        detached <= DRAIN_GRACE + KILL_SLACK,
        "the child with its output redirected lived {detached:?} after the command exited"
    );
    assert!(took < Duration::from_secs(5), "the turn took {took:?}");
    client.stop();
}

/// The command line of [`command_family`]: `bash -c` (the leader, which the engine spawns in a
/// group of its own) runs `sh spawn.sh` (its child), which starts `sh watch.sh` (a grandchild)
/// in the background and waits for it. The grandchild records its pid, then watches the leader:
/// should the leader die while the grandchild still runs, it writes `outlived` and sleeps on.
const FAMILY_COMMAND: &str = "sh spawn.sh; echo unreachable";

/// Writes the scripts [`FAMILY_COMMAND`] runs into `workspace`.
fn write_family_scripts(workspace: &Path) {
    std::fs::write(
        workspace.join("spawn.sh"),
        "echo $$ > child.pid\nsh watch.sh \"$PPID\" &\nwait\n",
    )
    .expect("spawn.sh");
    std::fs::write(
        workspace.join("watch.sh"),
        "leader=$1\necho $$ > grandchild.pid\n\
         while state=$(cut -d' ' -f3 /proc/$leader/stat 2>/dev/null) && [ \"$state\" != Z ]; do \
         sleep 0.01; done\n\
         echo \"$leader\" > outlived\nexec sleep 60\n",
    )
    .expect("watch.sh");
}

/// The parent and the process group of `pid`, from `/proc/PID/stat`.
fn parent_and_group(pid: u32) -> (u32, u32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let fields: Vec<&str> = stat.rsplit_once(") ").expect("comm").1.split(' ').collect();
    (
        fields[1].parse().expect("ppid"),
        fields[2].parse().expect("pgrp"),
    )
}

/// The child and the grandchild [`FAMILY_COMMAND`] started in `workspace`, once both run;
/// checks that the grandchild is one (its parent's parent is the command) and that the three
/// share the command's process group, and that the grandchild runs (the control).
fn command_family(workspace: &Path) -> (u32, u32) {
    let child: u32 = line_in(&workspace.join("child.pid"))
        .parse()
        .expect("child pid");
    let grandchild: u32 = line_in(&workspace.join("grandchild.pid"))
        .parse()
        .expect("grandchild pid");
    let (leader, child_group) = parent_and_group(child);
    let (parent, grandchild_group) = parent_and_group(grandchild);
    let (_, leader_group) = parent_and_group(leader);
    assert_eq!(parent, child, "the grandchild's parent is not the child");
    assert_eq!(
        (leader_group, child_group, grandchild_group),
        (leader, leader, leader),
        "the command {leader} does not lead a group holding its child and grandchild"
    );
    assert!(
        alive(grandchild),
        "the grandchild {grandchild} does not run"
    );
    (child, grandchild)
}

/// Waits (up to 10 s) for `pid` to stop running.
fn wait_dead(pid: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(Instant::now() < deadline, "the {what} {pid} still runs");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Checks that the child and the grandchild of [`FAMILY_COMMAND`] are gone, and that the
/// grandchild was killed with the command rather than after it (it never saw the command
/// dead).
fn assert_family_killed(workspace: &Path, (child, grandchild): (u32, u32)) {
    wait_dead(grandchild, "grandchild");
    wait_dead(child, "child");
    assert!(
        !workspace.join("outlived").exists(),
        "the grandchild outlived the command (it was not killed with the whole group)"
    );
}

/// Promise (docs/sandbox.md, "How a command runs"): on timeout the whole process group is
/// killed (`SIGKILL`), grandchildren included. Through the binary, unconfined (a confined
/// command runs in a PID namespace of its own, whose pids mean nothing in the host's `/proc`):
/// a command with `timeoutMs` 4000 starts a grandchild in its group that would sleep for a
/// minute; the test sees it run, then the command item ends `failed` with no exit code after
/// the 4 s, the grandchild is dead and never saw the command dead before it (so it was killed
/// with it, not by the clean-up after the command's exit), and the turn goes on.
#[test]
fn a_timeout_kills_the_commands_whole_process_group() {
    const TIMEOUT_MS: u64 = 4000;
    let root = scratch("tools-timeout-group");
    let (home, workspace) = home_and_workspace(&root);
    write_family_scripts(&workspace);
    fixture_steps(
        &home,
        json!([
            {"type": "command", "command": FAMILY_COMMAND, "timeoutMs": TIMEOUT_MS},
            {"type": "message", "deltas": ["done"]}
        ]),
        "",
    );
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "never", "danger-full-access");
    let started = Instant::now();
    client.start_turn(&thread, "run until the timeout");
    let family = command_family(&workspace);
    let (notifications, turn) = until_completed(&mut client);
    let took = started.elapsed();
    assert_family_killed(&workspace, family);
    assert_eq!(turn["status"], json!("completed"), "{turn}");
    let items = completed_items(&notifications, "commandExecution");
    assert_eq!(items.len(), 1, "{items:#?}");
    assert_eq!(
        items[0]["status"],
        json!("failed"),
        "{}",
        items[0]["status"]
    );
    assert_eq!(
        items[0]["exitCode"],
        Value::Null,
        "{}",
        items[0]["exitCode"]
    );
    let ran = items[0]["durationMs"].as_u64().expect("durationMs");
    assert!(ran >= TIMEOUT_MS, "the command ended after {ran} ms");
    assert!(took < Duration::from_secs(20), "the turn took {took:?}");
    assert_eq!(
        completed_items(&notifications, "agentMessage").len(),
        1,
        "the turn went on after the timeout"
    );
    client.stop();
}

/// Promise (docs/sandbox.md, "How a command runs"; README, "Turns"): when the turn is
/// interrupted, the running command's whole process group is killed (`SIGKILL`), grandchildren
/// included. Through the binary, unconfined (see
/// [`a_timeout_kills_the_commands_whole_process_group`]): while a command (one-minute time
/// limit) waits on a grandchild in its group, seen running, `turn/interrupt` ends the turn
/// `interrupted`, the command item `failed`, and the grandchild is dead, killed with the
/// command (it never saw the command dead).
#[test]
fn an_interrupt_kills_the_running_commands_whole_process_group() {
    let root = scratch("tools-interrupt-group");
    let (home, workspace) = home_and_workspace(&root);
    write_family_scripts(&workspace);
    fixture_steps(
        &home,
        json!([
            {"type": "command", "command": FAMILY_COMMAND},
            {"type": "message", "deltas": ["never"]}
        ]),
        "",
    );
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client, &workspace, "never", "danger-full-access");
    let turn = client.start_turn(&thread, "run until interrupted");
    let family = command_family(&workspace);
    client.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    );
    let (notifications, done) = until_completed(&mut client);
    assert_family_killed(&workspace, family);
    assert_eq!(done["status"], json!("interrupted"), "{done}");
    let items = completed_items(&notifications, "commandExecution");
    assert_eq!(items.len(), 1, "{items:#?}");
    assert_eq!(
        items[0]["status"],
        json!("failed"),
        "{}",
        items[0]["status"]
    );
    assert!(
        completed_items(&notifications, "agentMessage").is_empty(),
        "the turn went on after the interrupt"
    );
    client.stop();
}
