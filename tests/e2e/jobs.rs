//! The job model (issue #35): a shell command (`thread/shellCommand`) or a compaction
//! (`thread/compact/start`) whose task panics ends like any failed turn (its open item
//! completed as failed, `error`, `turn/completed` with status `failed`), and its thread takes
//! the next turn. The panic comes from the test hook `AGENTWIRE_TEST_PANIC_JOB` (see
//! `engine/src/turns/job.rs`), which names the kind of job that panics at its fault point.
//!
//! And nothing blocking on the async path: a config write that waits for the config file's
//! lock does not hold up the other requests of its connection.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::{fixture_steps, home_and_workspace, scratch};

/// The environment variable of the engine's fault hook.
const PANIC_VAR: &str = "AGENTWIRE_TEST_PANIC_JOB";

fn methods(seen: &[Value]) -> Vec<&str> {
    seen.iter().filter_map(|n| n["method"].as_str()).collect()
}

/// Checks that `seen`, up to `turn/completed`, ends a job that panicked: `error` naming the
/// panic, the thread idle, then `turn/completed` as `failed` with the same error. Returns the
/// completed turn.
fn ended_as_failed_by_a_panic<'a>(seen: &'a [Value], job: &str) -> &'a Value {
    let order = methods(seen);
    let tail = &order[order.len() - 3..];
    assert_eq!(
        tail,
        ["error", "thread/status/changed", "turn/completed"],
        "{order:?}"
    );
    let error = params(seen, "error");
    assert_eq!(error.len(), 1, "{seen:#?}");
    assert_eq!(error[0]["willRetry"], json!(false));
    let message = error[0]["error"]["message"].as_str().expect("message");
    assert!(message.contains("internal error"), "{message}");
    let details = error[0]["error"]["additionalDetails"]
        .as_str()
        .expect("details");
    for part in [job, "panicked", "injected panic"] {
        assert!(details.contains(part), "`{part}` missing: {details}");
    }
    assert_eq!(
        seen[seen.len() - 2]["params"]["status"],
        json!({"type": "idle"})
    );
    let completed = completed_turn(seen);
    assert_eq!(completed["status"], json!("failed"), "{completed}");
    assert_eq!(completed["error"], error[0]["error"]);
    assert_eq!(error[0]["turnId"], completed["id"]);
    completed
}

/// Runs a model turn on `thread` and checks that it completes with the fixture's answer.
fn next_turn_completes(client: &mut Client, thread: &str) {
    let next = client.start_turn(thread, "Anything else?");
    let seen = client.until_turn_completed();
    let completed = completed_turn(&seen);
    assert_eq!(completed["id"], json!(next));
    assert_eq!(completed["status"], json!("completed"), "{seen:#?}");
    assert_eq!(
        crate::client::deltas(&seen, "item/agentMessage/delta"),
        "Done."
    );
}

#[test]
fn a_shell_command_that_panics_fails_its_turn_and_the_thread_takes_the_next() {
    let (home, workspace) = home_and_workspace(&scratch("jobs-shell-panic"));
    fixture_steps(&home, json!([{"type": "message", "deltas": ["Done."]}]), "");
    let mut client = Client::start_with_env(&home, &[(PANIC_VAR, "shell_command")]);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));

    let answer = client.call(
        "thread/shellCommand",
        json!({"threadId": thread, "command": "echo made > made.txt"}),
    );
    assert_eq!(answer, json!({}));
    let seen = client.until_turn_completed();
    let completed = ended_as_failed_by_a_panic(&seen, "shell_command").clone();
    // The command's item, announced before the panic, is completed as failed; the command
    // never ran.
    let started = params(&seen, "item/started");
    assert_eq!(started.len(), 1, "{seen:#?}");
    let items = params(&seen, "item/completed");
    assert_eq!(items.len(), 1, "{seen:#?}");
    assert_eq!(items[0]["item"]["id"], started[0]["item"]["id"]);
    assert_eq!(items[0]["item"]["type"], json!("commandExecution"));
    assert_eq!(items[0]["item"]["status"], json!("failed"));
    assert_eq!(
        completed["items"][0]["status"],
        json!("failed"),
        "{completed}"
    );
    assert!(!workspace.join("made.txt").exists());

    // The thread is free: a model turn runs to its end, and the record holds both.
    next_turn_completes(&mut client, &thread);
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let turns = read["thread"]["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 2, "{read:#}");
    assert_eq!(turns[0]["id"], completed["id"]);
    assert_eq!(turns[0]["status"], json!("failed"));
    assert_eq!(turns[0]["error"], completed["error"]);
    assert_eq!(turns[1]["status"], json!("completed"));
    assert_eq!(read["thread"]["status"], json!({"type": "idle"}));
    // The server says why in its log.
    let log = client.stderr();
    assert!(log.contains("turn ended without settling"), "{log}");
    client.stop();
}

#[test]
fn a_compaction_that_panics_fails_its_turn_and_the_thread_takes_the_next() {
    let (home, workspace) = home_and_workspace(&scratch("jobs-compact-panic"));
    fixture_steps(&home, json!([{"type": "message", "deltas": ["Done."]}]), "");
    let mut client = Client::start_with_env(&home, &[(PANIC_VAR, "compaction")]);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    // Something to compact.
    next_turn_completes(&mut client, &thread);

    let answer = client.call("thread/compact/start", json!({"threadId": thread}));
    assert_eq!(answer, json!({}));
    let seen = client.until_turn_completed();
    let completed = ended_as_failed_by_a_panic(&seen, "compaction").clone();
    assert!(params(&seen, "thread/compacted").is_empty(), "{seen:#?}");

    // A second compaction is accepted too (and panics the same way): the thread was freed.
    client.call("thread/compact/start", json!({"threadId": thread}));
    let again = client.until_turn_completed();
    ended_as_failed_by_a_panic(&again, "compaction");

    next_turn_completes(&mut client, &thread);
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let turns = read["thread"]["turns"].as_array().expect("turns");
    let statuses: Vec<&Value> = turns.iter().map(|t| &t["status"]).collect();
    assert_eq!(
        statuses,
        [
            &json!("completed"),
            &json!("failed"),
            &json!("failed"),
            &json!("completed")
        ],
        "{read:#}"
    );
    assert_eq!(turns[1]["id"], completed["id"]);
    client.stop();
}

#[test]
fn without_the_hook_jobs_do_not_panic() {
    // The hook names one kind: a shell command runs normally when compactions are the ones
    // told to panic (so the tests above are not passing on a hook that fails every job).
    let (home, workspace) = home_and_workspace(&scratch("jobs-no-panic"));
    fixture_steps(&home, json!([{"type": "message", "deltas": ["Done."]}]), "");
    let mut client = Client::start_with_env(&home, &[(PANIC_VAR, "compaction")]);
    let thread =
        thread_id(&client.start_thread(json!({"cwd": workspace, "sandbox": "danger-full-access"})));
    client.call(
        "thread/shellCommand",
        json!({"threadId": thread, "command": "echo made > made.txt"}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    assert!(workspace.join("made.txt").is_file());
    assert!(!client.stderr().contains("panicked"), "{}", client.stderr());
    client.stop();
}

#[test]
fn a_config_write_waiting_for_the_file_lock_does_not_hold_up_other_requests() {
    let (home, _) = home_and_workspace(&scratch("jobs-config-lock"));
    fixture_steps(&home, json!([{"type": "message", "deltas": ["Done."]}]), "");
    let mut client = Client::start(&home);
    // Another writer (here: the test) holds the config file's lock.
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(home.join(".config.toml.lock"))
        .expect("open the lock file");
    lock.lock().expect("take the lock");

    let write = client.send_request(
        "config/value/write",
        json!({"keyPath": "model", "value": "locked-model", "mergeStrategy": "replace"}),
    );
    // The connection keeps answering while the write waits.
    let since = Instant::now();
    for _ in 0..3 {
        let read = client.call("config/read", json!({}));
        assert_ne!(read["config"]["model"], json!("locked-model"), "{read}");
        client.call("thread/list", json!({}));
    }
    let took = since.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "requests took {took:?} while a write waited for the lock"
    );
    let is_write_answer = |m: &Value| m.get("id") == Some(&write) && m.get("method").is_none();
    assert!(
        !client.backlog().iter().any(is_write_answer),
        "the write was answered while the lock was held"
    );

    // Once the lock is free, the write goes through.
    drop(lock);
    let answer = client.answer(&write).expect("the write succeeds");
    assert_eq!(answer["status"], json!("ok"), "{answer}");
    let read = client.call("config/read", json!({}));
    assert_eq!(read["config"]["model"], json!("locked-model"), "{read}");
    client.stop();
}
