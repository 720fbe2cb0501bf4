//! Unified exec through the binary, against the mock model on the Responses wire, under the
//! thread's default sandbox: an `exec_command` still running when its yield time is up goes on
//! as a session (the result says so, with its `session_id`), `write_stdin` feeds it and reads
//! its output (announced as `item/commandExecution/terminalInteraction`), its item completes
//! when it exits; a session outlives its turn, is listed by `thread/backgroundTerminals/list`
//! and killed by `terminate` (its item completed then); a `write_stdin` to a session that does
//! not exist is an error the model reads, not a failed turn.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::scratch;
use crate::mock_model::{MockModel, Recorded, Reply};
use crate::mock_responses::Responses;

/// A home whose provider is `mock` on the Responses wire, a client, and a thread with the
/// default sandbox that never asks for approval; the thread's working directory too.
fn session(name: &str, mock: &MockModel) -> (PathBuf, Client, String, PathBuf) {
    let home = scratch(name);
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"gpt-5.1-codex\"\n\n[model_providers.mock]\n\
         name = \"mock\"\nbase_url = \"{}\"\nwire_api = \"responses\"\nrequest_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
    let workspace = home.join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    // `thread/backgroundTerminals/*` are experimental.
    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));
    let started = client.start_thread(json!({"cwd": workspace, "approvalPolicy": "never"}));
    (home, client, thread_id(&started), workspace)
}

/// A model answer that calls `name` with `arguments`.
fn call(call_id: &str, name: &str, arguments: Value) -> Reply {
    Responses::new()
        .function_call(call_id, name, &[&arguments.to_string()])
        .completed(10, 0, 5, 0)
}

/// The output the engine sent back for call `call_id` in `request`.
fn tool_output(request: &Recorded, call_id: &str) -> String {
    request.body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["type"] == json!("function_call_output") && i["call_id"] == json!(call_id))
        .and_then(|i| i["output"].as_str())
        .unwrap_or_else(|| panic!("no output of {call_id} in {:#}", request.body["input"]))
        .to_owned()
}

/// The number after `session_id: ` in a tool output.
fn session_id_in(output: &str) -> i64 {
    let (_, rest) = output
        .split_once("session_id: ")
        .unwrap_or_else(|| panic!("no session_id in {output}"));
    rest.split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no session id number in {output}"))
}

/// The `commandExecution` items among `item/started` or `item/completed` notifications.
fn command_items<'a>(seen: &'a [Value], method: &str) -> Vec<&'a Value> {
    params(seen, method)
        .into_iter()
        .map(|p| &p["item"])
        .filter(|i| i["type"] == json!("commandExecution"))
        .collect()
}

#[test]
fn a_command_waiting_for_input_yields_a_session_that_write_stdin_feeds() {
    // The first session of a fresh server is number 1: the script can name it in advance, and
    // the test checks that the result said so.
    let mock = MockModel::start(vec![
        call(
            "c1",
            "exec_command",
            json!({"cmd": "read line; echo got:$line", "yield_time_ms": 500}),
        ),
        call(
            "c2",
            "write_stdin",
            json!({"session_id": 1, "chars": "hello\n", "yield_time_ms": 20000}),
        ),
        Responses::answer("done"),
    ]);
    let (_home, mut client, thread, _workspace) = session("unified-exec-stdin", &mock);
    let turn = client.start_turn(&thread, "talk to a command");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );

    let requests = mock.wait_requests(3);
    let first = tool_output(&requests[1], "c1");
    assert!(first.contains("still running"), "{first}");
    assert_eq!(session_id_in(&first), 1, "{first}");
    assert!(!first.contains("got:"), "{first}");
    let second = tool_output(&requests[2], "c2");
    assert!(second.contains("got:hello"), "{second}");
    assert!(second.contains("Exit code: 0"), "{second}");

    // The item started with the session's id and completed once the command exited.
    let started = command_items(&seen, "item/started");
    assert_eq!(started.len(), 1, "{started:#?}");
    let item_id = started[0]["id"].clone();
    assert_eq!(started[0]["processId"], json!("1"));
    assert_eq!(started[0]["status"], json!("inProgress"));
    let completed = command_items(&seen, "item/completed");
    assert_eq!(completed.len(), 1, "{completed:#?}");
    assert_eq!(completed[0]["id"], item_id);
    assert_eq!(completed[0]["status"], json!("completed"));
    assert_eq!(completed[0]["exitCode"], json!(0));
    assert_eq!(completed[0]["processId"], json!("1"));
    assert_eq!(completed[0]["aggregatedOutput"], json!("got:hello\n"));
    assert!(completed[0]["durationMs"].is_i64(), "{}", completed[0]);

    // The write was announced for the item, exactly.
    let interactions = params(&seen, "item/commandExecution/terminalInteraction");
    assert_eq!(
        interactions,
        [
            &json!({"threadId": thread, "turnId": turn, "itemId": item_id,
                 "processId": "1", "stdin": "hello\n"})
        ]
    );
    // The output streamed for the item too.
    let streamed: String = params(&seen, "item/commandExecution/outputDelta")
        .iter()
        .filter(|p| p["itemId"] == item_id)
        .filter_map(|p| p["delta"].as_str())
        .collect();
    assert_eq!(streamed, "got:hello\n");
    // The session is gone once its exit was read.
    let listed = client.call(
        "thread/backgroundTerminals/list",
        json!({"threadId": thread}),
    );
    assert_eq!(listed["data"], json!([]), "{listed}");
    client.stop();
}

#[test]
fn a_session_outlives_its_turn_until_terminated() {
    let mock = MockModel::start(vec![
        call(
            "c1",
            "exec_command",
            json!({"cmd": "sleep 600", "yield_time_ms": 250}),
        ),
        Responses::answer("left it running"),
    ]);
    let (_home, mut client, thread, workspace) = session("unified-exec-background", &mock);
    client.start_turn(&thread, "start something long");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let output = tool_output(&mock.wait_requests(2)[1], "c1");
    let id = session_id_in(&output);
    let started = command_items(&seen, "item/started");
    assert_eq!(started.len(), 1, "{started:#?}");
    let item_id = started[0]["id"].clone();
    assert!(
        command_items(&seen, "item/completed").is_empty(),
        "the command's item completed with its turn: {seen:#?}"
    );

    let listed = client.call(
        "thread/backgroundTerminals/list",
        json!({"threadId": thread}),
    );
    let data = listed["data"].as_array().expect("data");
    assert_eq!(data.len(), 1, "{listed}");
    let terminal = &data[0];
    assert_eq!(terminal["processId"], json!(id.to_string()));
    assert_eq!(terminal["command"], json!("sleep 600"));
    assert_eq!(terminal["itemId"], item_id);
    assert_eq!(terminal["cwd"], json!(workspace.display().to_string()));
    let pid = terminal["osPid"].as_u64().expect("osPid") as u32;
    assert!(crate::common::alive(pid), "{listed}");
    assert_eq!(listed["nextCursor"], Value::Null);

    // Another thread's id, or a process id that names no session, terminates nothing.
    let missing = client.call(
        "thread/backgroundTerminals/terminate",
        json!({"threadId": thread, "processId": "999"}),
    );
    assert_eq!(missing["terminated"], json!(false));
    let terminated = client.call(
        "thread/backgroundTerminals/terminate",
        json!({"threadId": thread, "processId": id.to_string()}),
    );
    assert_eq!(terminated["terminated"], json!(true));
    let completed = client.notification("item/completed");
    assert_eq!(completed["item"]["id"], item_id);
    assert_eq!(completed["item"]["status"], json!("failed"));
    assert_eq!(completed["item"]["exitCode"], Value::Null);
    assert_eq!(completed["threadId"], json!(thread));
    let listed = client.call(
        "thread/backgroundTerminals/list",
        json!({"threadId": thread}),
    );
    assert_eq!(listed["data"], json!([]), "{listed}");
    for _ in 0..100 {
        if !crate::common::alive(pid) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!crate::common::alive(pid), "the command still runs");
    // The thread's record of the turn holds the completed item.
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let items = read["thread"]["turns"][0]["items"]
        .as_array()
        .expect("items");
    let item = items
        .iter()
        .find(|i| i["id"] == item_id)
        .unwrap_or_else(|| panic!("no command item in {read:#}"));
    assert_eq!(item["status"], json!("failed"));
    client.stop();
}

#[test]
fn clean_kills_every_session_of_the_thread() {
    let mock = MockModel::start(vec![
        call(
            "c1",
            "exec_command",
            json!({"cmd": "sleep 600", "yield_time_ms": 250}),
        ),
        call(
            "c2",
            "exec_command",
            json!({"cmd": "sleep 601", "yield_time_ms": 250}),
        ),
        Responses::answer("two running"),
    ]);
    let (_home, mut client, thread, _workspace) = session("unified-exec-clean", &mock);
    client.start_turn(&thread, "start two");
    client.until_turn_completed();
    let listed = client.call(
        "thread/backgroundTerminals/list",
        json!({"threadId": thread}),
    );
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(2), "{listed}");
    // One per page, the cursor going on.
    let page = client.call(
        "thread/backgroundTerminals/list",
        json!({"threadId": thread, "limit": 1}),
    );
    assert_eq!(page["data"][0]["command"], json!("sleep 600"), "{page}");
    let cursor = page["nextCursor"].clone();
    let page = client.call(
        "thread/backgroundTerminals/list",
        json!({"threadId": thread, "limit": 1, "cursor": cursor}),
    );
    assert_eq!(page["data"][0]["command"], json!("sleep 601"), "{page}");
    assert_eq!(page["nextCursor"], Value::Null);

    client.call(
        "thread/backgroundTerminals/clean",
        json!({"threadId": thread}),
    );
    let listed = client.call(
        "thread/backgroundTerminals/list",
        json!({"threadId": thread}),
    );
    assert_eq!(listed["data"], json!([]), "{listed}");
    let first = client.notification("item/completed");
    let second = client.notification("item/completed");
    for completed in [first, second] {
        assert_eq!(completed["item"]["status"], json!("failed"), "{completed}");
    }
    client.stop();
}

#[test]
fn write_stdin_to_an_unknown_session_is_an_error_the_model_reads() {
    let mock = MockModel::start(vec![
        call(
            "c1",
            "write_stdin",
            json!({"session_id": 999, "chars": "hello\n"}),
        ),
        Responses::answer("oh well"),
    ]);
    let (_home, mut client, thread, _workspace) = session("unified-exec-unknown", &mock);
    client.start_turn(&thread, "write somewhere");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    assert!(
        params(&seen, "item/commandExecution/terminalInteraction").is_empty(),
        "{seen:#?}"
    );
    let requests = mock.wait_requests(2);
    let output = tool_output(&requests[1], "c1");
    assert!(output.contains("no session 999"), "{output}");

    // `write_stdin` is offered beside `exec_command`, with a schema that says what it takes.
    let tools = requests[0].body["tools"].as_array().expect("tools").clone();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let exec = names.iter().position(|n| *n == "exec_command");
    let write = names.iter().position(|n| *n == "write_stdin");
    assert!(exec.is_some() && write.is_some(), "{names:?}");
    let spec = &tools[write.unwrap_or_default()];
    assert_eq!(spec["type"], json!("function"));
    let schema = &spec["parameters"];
    assert_eq!(schema["type"], json!("object"));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(schema["required"], json!(["session_id"]));
    assert_eq!(schema["properties"]["session_id"]["type"], json!("number"));
    assert_eq!(schema["properties"]["chars"]["type"], json!("string"));
    let mut keys: Vec<&String> = schema["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        ["chars", "max_output_tokens", "session_id", "yield_time_ms"]
    );
    let yield_doc =
        tools[exec.unwrap_or_default()]["parameters"]["properties"]["yield_time_ms"]["description"]
            .as_str()
            .unwrap_or_default();
    assert!(yield_doc.contains("session"), "{yield_doc}");
    client.stop();
}

#[test]
fn archiving_the_thread_kills_its_sessions() {
    let mock = MockModel::start(vec![
        call(
            "c1",
            "exec_command",
            json!({"cmd": "sleep 600", "yield_time_ms": 250}),
        ),
        Responses::answer("left it running"),
    ]);
    let (_home, mut client, thread, _workspace) = session("unified-exec-archive", &mock);
    client.start_turn(&thread, "start something long");
    client.until_turn_completed();
    let listed = client.call(
        "thread/backgroundTerminals/list",
        json!({"threadId": thread}),
    );
    let pid = listed["data"][0]["osPid"].as_u64().expect("osPid") as u32;
    assert!(crate::common::alive(pid), "{listed}");
    client.call("thread/archive", json!({"threadId": thread}));
    // The session notices that its thread is gone within a second or so; the wait is bounded
    // generously so that a slow machine does not fail the test.
    for _ in 0..400 {
        if !crate::common::alive(pid) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !crate::common::alive(pid),
        "the session outlived its archived thread"
    );
    client.stop();
}

#[test]
fn the_server_kills_sessions_when_it_exits_unconfined_ones_included() {
    let mock = MockModel::start(vec![
        call(
            "c1",
            "exec_command",
            json!({"cmd": "sleep 600", "yield_time_ms": 250}),
        ),
        Responses::answer("left it running"),
    ]);
    let (_home, mut client, _thread, workspace) = session("unified-exec-exit", &mock);
    // No sandbox would end this one: the server must.
    let unconfined = thread_id(&client.start_thread(json!({
        "cwd": workspace, "approvalPolicy": "never", "sandbox": "danger-full-access"
    })));
    client.start_turn(&unconfined, "start something long");
    client.until_turn_completed();
    let listed = client.call(
        "thread/backgroundTerminals/list",
        json!({"threadId": unconfined}),
    );
    let pid = listed["data"][0]["osPid"].as_u64().expect("osPid") as u32;
    assert!(crate::common::alive(pid), "{listed}");
    client.stop();
    for _ in 0..200 {
        if !crate::common::alive(pid) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !crate::common::alive(pid),
        "the session outlived the server"
    );
}
