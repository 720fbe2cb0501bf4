//! Turns end to end: the real binary over stdio with the fixture model provider, each test with
//! its own `AGENTWIRE_HOME`. Tests that need a slow model write a fixture script (the format is
//! documented in `engine/providers/src/script.rs`) and select it in `config.toml`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Client, params, thread_id};
use crate::common::{existing_dir, scratch};

/// Selects a fixture script whose answer streams `deltas` deltas of "word " each, `delay_ms`
/// apart.
pub(crate) fn slow_script(home: &Path, deltas: usize, delay_ms: u64) {
    let script = json!({
        "version": 1,
        "deltaDelayMs": delay_ms,
        "responses": [
            {"steps": [{"type": "message", "deltas": vec!["word "; deltas]}]}
        ]
    });
    std::fs::write(home.join("slow.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"slow.json\"\n",
    )
    .expect("write config");
}

/// Starts a thread; returns its id, with the notification backlog cleared.
fn new_thread(client: &mut Client) -> String {
    thread_id(&client.start_thread(json!({"cwd": existing_dir("/tmp/project")})))
}

fn text_input(text: &str) -> Value {
    json!([{"type": "text", "text": text}])
}

fn methods(notifications: &[Value]) -> Vec<&str> {
    notifications
        .iter()
        .map(|n| n["method"].as_str().expect("method"))
        .collect()
}

#[test]
fn a_turn_streams_in_order_and_is_recorded() {
    let home = scratch("turns-full");
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client);
    let turn = client.start_turn(&thread, "Say hello.");
    let seen = client.until_turn_completed();
    assert_eq!(
        methods(&seen),
        [
            "thread/status/changed",
            "turn/started",
            "item/started",
            "item/completed",
            "item/started",
            "item/reasoning/summaryTextDelta",
            "item/reasoning/summaryTextDelta",
            "item/completed",
            "item/started",
            "item/agentMessage/delta",
            "item/agentMessage/delta",
            "item/agentMessage/delta",
            "item/completed",
            "thread/tokenUsage/updated",
            "thread/status/changed",
            "turn/completed",
        ]
    );
    assert_eq!(
        seen[0]["params"],
        json!({"threadId": thread, "status": {"type": "active", "activeFlags": []}})
    );
    let started = &seen[1]["params"]["turn"];
    assert_eq!(started["id"], json!(turn));
    assert_eq!(started["status"], json!("inProgress"));
    assert!(started["startedAt"].is_i64());
    let user = &seen[3]["params"]["item"];
    assert_eq!(user["type"], json!("userMessage"));
    assert_eq!(user["content"][0]["text"], json!("Say hello."));
    for n in &seen[2..seen.len() - 1] {
        if n["method"] != json!("thread/status/changed") {
            assert_eq!(n["params"]["turnId"], json!(turn), "{n}");
        }
    }

    // The deltas concatenate to the completed texts.
    let reasoning = &seen[7]["params"]["item"];
    let summary: String = params(&seen, "item/reasoning/summaryTextDelta")
        .iter()
        .map(|p| p["delta"].as_str().expect("delta"))
        .collect();
    assert_eq!(reasoning["type"], json!("reasoning"));
    assert_eq!(reasoning["summary"], json!([summary]));
    let message = &seen[12]["params"]["item"];
    let text: String = params(&seen, "item/agentMessage/delta")
        .iter()
        .map(|p| {
            assert_eq!(p["itemId"], message["id"]);
            p["delta"].as_str().expect("delta")
        })
        .collect();
    assert_eq!(message["type"], json!("agentMessage"));
    assert_eq!(message["text"], json!(text));
    assert_eq!(text, "Hello from the fixture model.");

    let usage = &seen[13]["params"]["tokenUsage"];
    assert_eq!(usage["last"]["totalTokens"], json!(18));
    assert_eq!(usage["total"], usage["last"]);
    assert_eq!(seen[14]["params"]["status"], json!({"type": "idle"}));
    let completed = &seen[15]["params"]["turn"];
    assert_eq!(completed["status"], json!("completed"));
    assert_eq!(completed["error"], Value::Null);
    assert_eq!(completed["itemsView"], json!("summary"));
    assert_eq!(completed["items"], json!([message]));
    assert!(completed["completedAt"].is_i64());
    assert!(completed["durationMs"].is_i64());

    // A second turn adds to the thread's token total.
    client.start_turn(&thread, "Again.");
    let second = client.until_turn_completed();
    let usage = &params(&second, "thread/tokenUsage/updated")[0]["tokenUsage"];
    assert_eq!(usage["total"]["totalTokens"], json!(36));

    let read = |client: &mut Client| {
        client.call(
            "thread/read",
            json!({"threadId": thread, "includeTurns": true}),
        )["thread"]
            .clone()
    };
    let live = read(&mut client);
    assert_eq!(live["preview"], json!("Say hello."));
    let turns = live["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["id"], json!(turn));
    assert_eq!(turns[0]["status"], json!("completed"));
    assert_eq!(turns[0]["itemsView"], json!("full"));
    let kinds: Vec<&Value> = turns[0]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| &i["type"])
        .collect();
    assert_eq!(
        kinds,
        [
            &json!("userMessage"),
            &json!("reasoning"),
            &json!("agentMessage")
        ]
    );
    assert_eq!(turns[0]["items"][2], *message);
    client.stop();

    let mut restarted = Client::start(&home);
    let after = read(&mut restarted);
    assert_eq!(after["turns"], live["turns"]);
    assert_eq!(after["status"], json!({"type": "notLoaded"}));
    restarted.stop();
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn one_turn_at_a_time_and_interrupt_stops_it_quickly() {
    let home = scratch("turns-interrupt");
    slow_script(&home, 100, 100);
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client);
    let turn = client.start_turn(&thread, "Talk slowly.");
    client.notification("item/agentMessage/delta");

    let refused = client.call_err(
        "turn/start",
        json!({"threadId": thread, "input": text_input("Me too.")}),
    );
    assert_eq!(refused["code"], json!(-32600));
    let message = refused["message"].as_str().expect("message");
    assert!(message.contains(&turn), "{message}");

    let wrong = client.call_err(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": "not-the-turn"}),
    );
    assert_eq!(wrong["code"], json!(-32600));
    assert!(wrong["message"].as_str().expect("message").contains(&turn));

    let asked = Instant::now();
    client.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    );
    let seen = client.until_turn_completed();
    let took = asked.elapsed();
    // The turn checks for the interrupt between deltas (100 ms apart) and at once while it
    // waits; the bound leaves room for a loaded machine.
    assert!(
        took < Duration::from_millis(1500),
        "interrupt took {took:?}"
    );
    let completed = &seen.last().expect("turn/completed")["params"]["turn"];
    assert_eq!(completed["status"], json!("interrupted"));
    assert_eq!(completed["id"], json!(turn));
    let partial = &completed["items"][0];
    assert_eq!(partial["type"], json!("agentMessage"));
    let text = partial["text"].as_str().expect("text");
    assert!(text.starts_with("word ") && text.len() < 100 * 5, "{text}");
    assert_eq!(
        params(&seen, "thread/status/changed").last().expect("idle")["status"],
        json!({"type": "idle"})
    );

    // The thread is free again, and the interrupted turn is on record.
    let gone = client.call_err(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    );
    assert!(
        gone["message"]
            .as_str()
            .expect("message")
            .contains("no turn is running")
    );
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    assert_eq!(read["thread"]["turns"][0]["status"], json!("interrupted"));
    assert_eq!(read["thread"]["turns"][0]["items"][1], *partial);
    client.stop();
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn steered_input_joins_the_running_turn() {
    let home = scratch("turns-steer");
    slow_script(&home, 40, 50);
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client);
    let turn = client.start_turn(&thread, "Write something.");
    client.notification("item/agentMessage/delta");

    let wrong = client.call_err(
        "turn/steer",
        json!({"threadId": thread, "expectedTurnId": "other", "input": text_input("x")}),
    );
    assert_eq!(wrong["code"], json!(-32600));
    assert!(wrong["message"].as_str().expect("message").contains(&turn));

    let steered = client.call(
        "turn/steer",
        json!({"threadId": thread, "expectedTurnId": turn, "input": text_input("use tabs"),
               "clientUserMessageId": "c-1"}),
    );
    assert_eq!(steered, json!({"turnId": turn}));
    let seen = client.until_turn_completed();
    let completed = &seen.last().expect("turn/completed")["params"]["turn"];
    assert_eq!(completed["status"], json!("completed"));
    let reply = completed["items"][0]["text"].as_str().expect("reply");
    assert!(reply.contains("\"use tabs\""), "{reply}");

    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let items = read["thread"]["turns"][0]["items"]
        .as_array()
        .expect("items")
        .clone();
    let kinds: Vec<&str> = items
        .iter()
        .map(|i| i["type"].as_str().expect("type"))
        .collect();
    assert_eq!(
        kinds,
        ["userMessage", "agentMessage", "userMessage", "agentMessage"]
    );
    assert_eq!(items[1]["text"], json!("word ".repeat(40)));
    assert_eq!(items[2]["clientId"], json!("c-1"));
    assert_eq!(items[2]["content"][0]["text"], json!("use tabs"));

    let late = client.call_err(
        "turn/steer",
        json!({"threadId": thread, "expectedTurnId": turn, "input": text_input("x")}),
    );
    assert!(
        late["message"]
            .as_str()
            .expect("message")
            .contains("no turn is running")
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_failing_model_fails_the_turn_with_an_error_notification() {
    let home = scratch("turns-fail");
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client);
    let turn = client.start_turn(&thread, "Please fail.");
    let seen = client.until_turn_completed();
    let tail: Vec<&str> = methods(&seen).into_iter().rev().take(3).collect();
    assert_eq!(tail, ["turn/completed", "thread/status/changed", "error"]);
    let error = params(&seen, "error")[0];
    assert_eq!(error["turnId"], json!(turn));
    assert_eq!(error["willRetry"], json!(false));
    let completed = &seen.last().expect("turn/completed")["params"]["turn"];
    assert_eq!(completed["status"], json!("failed"));
    assert_eq!(completed["error"], error["error"]);
    assert!(
        completed["error"]["message"]
            .as_str()
            .expect("message")
            .contains("failed")
    );

    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    assert_eq!(read["thread"]["turns"][0]["status"], json!("failed"));
    assert_eq!(read["thread"]["turns"][0]["error"], error["error"]);

    // Turns need a loaded thread.
    let unknown = client.call_err(
        "turn/start",
        json!({"threadId": "00000000-0000-7000-8000-000000000000", "input": text_input("hi")}),
    );
    assert_eq!(unknown["code"], json!(-32600));
    client.stop();
    let _ = std::fs::remove_dir_all(&home);
}
