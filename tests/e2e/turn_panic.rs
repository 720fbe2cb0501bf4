//! Panic-safe turns: a turn whose task panics mid-turn is settled as `failed` (error
//! notification, `turn/completed`, the rollout record) and its thread accepts the next turn.
//! The panic comes from the fixture provider's `panic` step (see
//! `engine/providers/src/script.rs`), selected by the home's `config.toml`.

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, deltas, params, thread_id};
use crate::common::{home_and_workspace, scratch};

/// A script whose answer to "panic" streams a message, calls `update_plan`, and panics when
/// asked for the next model call (inside the turn's task); every other input gets "All good.".
fn panicking_script(home: &std::path::Path) {
    let script = json!({
        "version": 1,
        "responses": [
            {"when": "panic", "steps": [
                {"type": "message", "deltas": ["Working ", "on it."]},
                {"type": "tool", "name": "update_plan",
                 "arguments": {"plan": [{"step": "Panic", "status": "in_progress"}]}},
                {"type": "panic", "message": "mid-turn"}
            ]},
            {"steps": [{"type": "message", "deltas": ["All ", "good."]}]}
        ]
    });
    std::fs::write(home.join("script.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n",
    )
    .expect("write config");
}

fn methods(seen: &[Value]) -> Vec<&str> {
    seen.iter()
        .map(|n| n["method"].as_str().expect("method"))
        .collect()
}

#[test]
fn a_turn_that_panics_mid_stream_fails_and_the_thread_takes_the_next_turn() {
    let (home, workspace) = home_and_workspace(&scratch("turn-panic"));
    panicking_script(&home);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));

    let failed = client.start_turn(&thread, "please panic");
    let seen = client.until_turn_completed();
    let order = methods(&seen);
    // It streamed before the panic.
    assert_eq!(
        deltas(&seen, "item/agentMessage/delta"),
        "Working on it.",
        "{seen:#?}"
    );
    assert!(order.contains(&"turn/plan/updated"), "{order:?}");
    // Then it ended like a failed turn: error, idle, turn/completed (in that order, last).
    let tail = &order[order.len() - 3..];
    assert_eq!(
        tail,
        ["error", "thread/status/changed", "turn/completed"],
        "{order:?}"
    );
    let error = params(&seen, "error");
    assert_eq!(error.len(), 1, "{seen:#?}");
    assert_eq!(error[0]["turnId"], json!(failed));
    assert_eq!(error[0]["willRetry"], json!(false));
    let message = error[0]["error"]["message"].as_str().expect("message");
    assert!(message.contains("internal error"), "{message}");
    assert!(
        error[0]["error"]["additionalDetails"]
            .as_str()
            .expect("details")
            .contains("panicked"),
        "{error:?}"
    );
    assert_eq!(
        seen[seen.len() - 2]["params"]["status"],
        json!({"type": "idle"})
    );
    let completed = completed_turn(&seen);
    assert_eq!(completed["id"], json!(failed));
    assert_eq!(completed["status"], json!("failed"));
    assert_eq!(completed["error"], error[0]["error"]);
    assert!(completed["durationMs"].is_i64(), "{completed}");

    // The thread is idle again: the next turn runs to completion.
    let next = client.start_turn(&thread, "Say something.");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["id"], json!(next));
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    assert_eq!(deltas(&seen, "item/agentMessage/delta"), "All good.");

    // Both turns are in the thread's record: the failed one with its error and the items it
    // completed before the panic (the plan `update_plan` made among them).
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let turns = read["thread"]["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 2, "{read:#}");
    assert_eq!(turns[0]["id"], json!(failed));
    assert_eq!(turns[0]["status"], json!("failed"));
    assert_eq!(turns[0]["error"], completed["error"]);
    let kinds: Vec<&str> = turns[0]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["type"].as_str().expect("type"))
        .collect();
    assert_eq!(kinds, ["userMessage", "agentMessage", "plan"], "{read:#}");
    assert_eq!(turns[0]["items"][1]["text"], json!("Working on it."));
    assert_eq!(
        turns[0]["items"][2]["text"],
        json!("- [ ] Panic (in progress)\n")
    );
    assert_eq!(turns[1]["id"], json!(next));
    assert_eq!(turns[1]["status"], json!("completed"));
    assert_eq!(read["thread"]["status"], json!({"type": "idle"}));
    // The server says why in its log.
    assert!(
        client.stderr().contains("turn ended without settling"),
        "{}",
        client.stderr()
    );
}

#[test]
fn a_panic_step_needs_its_message() {
    let (home, workspace) = home_and_workspace(&scratch("turn-panic-bad-step"));
    std::fs::write(
        home.join("script.json"),
        json!({"version": 1, "responses": [{"steps": [{"type": "panic"}]}]}).to_string(),
    )
    .expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n",
    )
    .expect("write config");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    // The script is refused as a whole: the turn fails naming the missing member, and nothing
    // panics.
    client.start_turn(&thread, "go");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("failed"));
    let error = &completed_turn(&seen)["error"];
    let text = format!(
        "{} {}",
        error["message"].as_str().unwrap_or_default(),
        error["additionalDetails"].as_str().unwrap_or_default()
    );
    assert!(text.contains("missing field `message`"), "{error}");
    assert!(text.contains("script.json"), "{error}");
    assert!(!client.stderr().contains("panicked"), "{}", client.stderr());
}
