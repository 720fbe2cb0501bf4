//! The notifications clients render around turns, end to end through the binary:
//! `account/rateLimits/updated` from the mock model's rate-limit headers, `model/rerouted` when
//! the model server answers with another model, `item/fileChange/patchUpdated` when a file
//! changed while its patch waited for approval, `deprecationNotice` for deprecated config keys,
//! and the experimental members of `Thread` and of the `thread/list` result.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, params, thread_id};
use crate::common::{fixture_steps, home_and_workspace, scratch};
use crate::mock_model::{MockModel, Reply, Sse};

/// Makes `home` talk to the mock at `base_url`, asking for `model`.
fn configure(home: &Path, base_url: &str, model: &str, extra: &str) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"{model}\"\n{extra}\n[model_providers.mock]\n\
         name = \"Mock\"\nbase_url = \"{base_url}\"\nrequest_max_retries = 0\n"
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// The experimental capability.
fn experimental() -> Value {
    json!({"experimentalApi": true})
}

#[test]
fn rate_limit_headers_of_a_model_call_are_sent_before_its_output() {
    let mock = MockModel::start(vec![
        Reply::Stream(
            Sse::new()
                .text("hello")
                .finish("stop")
                .usage(10, 5, 0, 0)
                .header("x-ratelimit-limit-requests", "200")
                .header("x-ratelimit-remaining-requests", "150")
                .header("x-ratelimit-reset-requests", "1m30s")
                .header("x-ratelimit-limit-tokens", "10000")
                .header("x-ratelimit-remaining-tokens", "0")
                .header("x-ratelimit-reset-tokens", "600ms"),
        ),
        Sse::answer("no headers"),
    ]);
    let root = scratch("turn-notes-rate-limits");
    let (home, workspace) = home_and_workspace(&root);
    configure(&home, &mock.base_url(), "mock-model", "");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));

    client.start_turn(&thread, "hi");
    let seen = client.until_turn_completed();
    let methods: Vec<&str> = seen.iter().filter_map(|m| m["method"].as_str()).collect();
    let updated_at = methods
        .iter()
        .position(|m| *m == "account/rateLimits/updated")
        .unwrap_or_else(|| panic!("no account/rateLimits/updated in {methods:?}"));
    let delta_at = methods
        .iter()
        .position(|m| *m == "item/agentMessage/delta")
        .expect("a text delta");
    assert!(updated_at < delta_at, "{methods:?}");
    let limits = &params(&seen, "account/rateLimits/updated")[0]["rateLimits"];
    assert_eq!(limits["limitId"], json!("mock"), "{limits}");
    assert_eq!(limits["limitName"], json!("Mock"), "{limits}");
    assert_eq!(limits["primary"]["usedPercent"], json!(25), "{limits}");
    assert!(limits["primary"]["resetsAt"].as_i64().is_some(), "{limits}");
    assert_eq!(limits["primary"]["windowDurationMins"], Value::Null);
    assert_eq!(limits["secondary"]["usedPercent"], json!(100), "{limits}");
    assert_eq!(limits["rateLimitReachedType"], json!("rate_limit_reached"));
    assert_eq!(limits["credits"], Value::Null);
    assert_eq!(limits["planType"], Value::Null);
    // `account/rateLimits/read` agrees with what was sent.
    let read = client.call("account/rateLimits/read", json!(null));
    assert_eq!(read["rateLimits"]["primary"]["usedPercent"], json!(25));

    // A response without the headers sends nothing.
    client.start_turn(&thread, "again");
    let seen = client.until_turn_completed();
    assert!(
        params(&seen, "account/rateLimits/updated").is_empty(),
        "{seen:?}"
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn another_model_answering_is_reported_once_per_turn_and_the_same_model_is_not() {
    // The mock names itself `mock-model` in every chunk.
    let mock = MockModel::start(vec![
        Sse::answer("same"),
        Reply::Stream(
            Sse::new()
                .tool_call(0, "call_1", "shell", "{\"command\": [\"true\"]}")
                .finish("tool_calls")
                .usage(10, 5, 0, 0),
        ),
        Sse::answer("after the tool"),
    ]);
    let root = scratch("turn-notes-rerouted");
    let (home, workspace) = home_and_workspace(&root);
    configure(&home, &mock.base_url(), "mock-model", "");
    let mut client = Client::start(&home);
    let same = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&same, "hi");
    let seen = client.until_turn_completed();
    assert!(params(&seen, "model/rerouted").is_empty(), "{seen:?}");

    let other = thread_id(&client.start_thread(json!({
        "cwd": workspace, "model": "asked-model",
        "approvalPolicy": "never", "sandbox": "danger-full-access"
    })));
    let turn = client.start_turn(&other, "run something");
    let seen = client.until_turn_completed();
    let rerouted = params(&seen, "model/rerouted");
    assert_eq!(rerouted.len(), 1, "two model calls, one notice: {seen:?}");
    assert_eq!(
        *rerouted[0],
        json!({"threadId": other, "turnId": turn, "fromModel": "asked-model",
               "toModel": "mock-model", "reason": "providerSubstitutedModel"})
    );
    // The model was really asked for by its name.
    let requests = mock.wait_requests(3);
    let bodies: Vec<&Value> = requests.iter().map(|r| &r.body["model"]).collect();
    assert_eq!(bodies[1], &json!("asked-model"), "{bodies:?}");
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_file_changed_while_its_patch_waited_updates_the_items_change_set() {
    let root = scratch("turn-notes-patch-updated");
    let (home, workspace) = home_and_workspace(&root);
    std::fs::write(workspace.join("notes.txt"), "one\ntwo\nthree\n").expect("notes");
    let patch =
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n two\n-three\n+THREE\n*** End Patch\n";
    fixture_steps(
        &home,
        json!([{"type": "patch", "patch": patch}, {"type": "message", "deltas": ["done"]}]),
        "",
    );
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({
        "cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "workspace-write"
    })));

    // First: nothing changes while the approval waits, so no update is sent.
    client.start_turn(&thread, "patch");
    let (id, _) = client.server_request("item/fileChange/requestApproval");
    client.send(&json!({"id": id, "result": {"decision": "accept"}}));
    let seen = client.until_turn_completed();
    assert!(
        params(&seen, "item/fileChange/patchUpdated").is_empty(),
        "{seen:?}"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("notes.txt")).expect("read"),
        "one\ntwo\nTHREE\n"
    );

    // Again on a fresh file; this time a line is added at its top while the approval waits.
    std::fs::write(workspace.join("notes.txt"), "one\ntwo\nthree\n").expect("notes");
    let turn = client.start_turn(&thread, "patch");
    let started = client.notification("item/started");
    let started = if started["item"]["type"] == json!("fileChange") {
        started
    } else {
        client.notification("item/started")
    };
    let (id, request) = client.server_request("item/fileChange/requestApproval");
    std::fs::write(workspace.join("notes.txt"), "zero\none\ntwo\nthree\n").expect("notes");
    client.send(&json!({"id": id, "result": {"decision": "accept"}}));
    let seen = client.until_turn_completed();
    let updated = params(&seen, "item/fileChange/patchUpdated");
    assert_eq!(updated.len(), 1, "{seen:?}");
    let updated = updated[0];
    assert_eq!(updated["threadId"], json!(thread));
    assert_eq!(updated["turnId"], json!(turn));
    assert_eq!(updated["itemId"], request["itemId"]);
    assert_eq!(started["item"]["type"], json!("fileChange"), "{started}");
    assert_ne!(
        updated["changes"], started["item"]["changes"],
        "the update says something new"
    );
    let completed = params(&seen, "item/completed")
        .into_iter()
        .find(|p| p["item"]["type"] == json!("fileChange"))
        .expect("the fileChange completes");
    assert_eq!(completed["item"]["changes"], updated["changes"]);
    assert_eq!(completed["item"]["status"], json!("completed"));
    assert_eq!(
        std::fs::read_to_string(workspace.join("notes.txt")).expect("read"),
        "zero\none\ntwo\nTHREE\n"
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn deprecated_config_keys_are_named_once_the_connection_is_initialized() {
    let root = scratch("turn-notes-deprecation");
    let (home, _workspace) = home_and_workspace(&root);
    std::fs::write(
        home.join("config.toml"),
        "experimental_instructions_file = \"old.md\"\ninclude_plan_tool = true\n",
    )
    .expect("config");
    let mut client = Client::start(&home);
    let first = client.notification("deprecationNotice");
    assert_eq!(
        first["summary"],
        json!("`experimental_instructions_file` in config.toml is deprecated.")
    );
    assert!(
        first["details"]
            .as_str()
            .is_some_and(|d| d.contains("model_instructions_file")),
        "{first}"
    );
    let second = client.notification("deprecationNotice");
    assert_eq!(
        second["summary"],
        json!("`include_plan_tool` in config.toml is deprecated.")
    );
    client.stop();

    // Without them, nothing is sent.
    std::fs::write(home.join("config.toml"), "model_provider = \"fixture\"\n").expect("config");
    let mut client = Client::start(&home);
    let _ = client.call("config/read", json!({}));
    let backlog = client.backlog();
    assert!(
        !backlog
            .iter()
            .any(|m| m["method"] == json!("deprecationNotice")),
        "{backlog:?}"
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn experimental_thread_members_carry_environments_input_and_read_states() {
    let root = scratch("turn-notes-thread-members");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(&home, json!([{"type": "message", "deltas": ["hi"]}]), "");
    let cwd = workspace.to_string_lossy().into_owned();

    let mut client = Client::start_with_capabilities(&home, experimental());
    let started = client.start_thread(json!({"cwd": workspace}));
    let thread = thread_id(&started);
    let wire = &started["thread"];
    assert_eq!(
        wire["environments"],
        json!([{"environmentId": "local", "cwd": cwd, "runtimeWorkspaceRoots": [cwd]}]),
        "{wire}"
    );
    assert_eq!(wire["canAcceptDirectInput"], json!(true), "{wire}");
    assert_eq!(wire["attachedToThreadId"], Value::Null, "{wire}");
    client.start_turn(&thread, "hello");
    client.until_turn_completed();

    let listed = client.call("thread/list", json!({}));
    let state = &listed["readStates"][&thread];
    assert!(state["revision"].as_str().is_some(), "{listed}");
    assert_eq!(listed["data"][0]["canAcceptDirectInput"], json!(true));
    let read = client.call("thread/read", json!({"threadId": thread}));
    assert_eq!(
        read["thread"]["environments"][0]["environmentId"],
        json!("local")
    );
    // Marked unread: the list says where reading starts.
    let _ = client.call(
        "thread/readState/update",
        json!({"threadId": thread, "operation": {"type": "unread"}, "expectedRevision": state["revision"]}),
    );
    let listed = client.call("thread/list", json!({}));
    assert_eq!(
        listed["readStates"][&thread]["firstUnread"]["type"],
        json!("threadStart"),
        "{listed}"
    );
    client.stop();

    // After a restart the thread is stored, not loaded: no environment, no input answer, and
    // the read mark is still there.
    let mut client = Client::start_with_capabilities(&home, experimental());
    let listed = client.call("thread/list", json!({}));
    let row = &listed["data"][0];
    assert_eq!(row["id"], json!(thread));
    assert_eq!(row["environments"], Value::Null, "{row}");
    assert_eq!(row["canAcceptDirectInput"], Value::Null, "{row}");
    assert_eq!(
        listed["readStates"][&thread]["firstUnread"]["type"],
        json!("threadStart"),
        "{listed}"
    );
    client.stop();

    // A connection without the capability sees them all null.
    let mut client = Client::start(&home);
    let listed = client.call("thread/list", json!({}));
    assert_eq!(listed["readStates"], Value::Null, "{listed}");
    let resumed = client.call("thread/resume", json!({"threadId": thread}));
    assert_eq!(resumed["thread"]["environments"], Value::Null);
    assert_eq!(resumed["thread"]["canAcceptDirectInput"], Value::Null);
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}
