//! Shutdown loses nothing: end of input delivers every answer and notification already due and
//! lets a running turn finish; SIGTERM interrupts running turns, records them and flushes their
//! last notifications before the server exits 0.

use std::process::Command;

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::scratch;
use crate::engine_turns::slow_script;

fn count(messages: &[Value], method: &str) -> usize {
    messages
        .iter()
        .filter(|m| m["method"] == json!(method))
        .count()
}

fn answers(messages: &[Value]) -> usize {
    messages
        .iter()
        .filter(|m| m.get("id").is_some() && m.get("method").is_none())
        .count()
}

/// The `turn/completed` params among `messages`.
fn completed_turns(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["method"] == json!("turn/completed"))
        .map(|m| &m["params"]["turn"])
        .collect()
}

#[test]
fn end_of_input_delivers_every_notification_already_due() {
    let home = scratch("shutdown-eof-burst");
    let mut client = Client::start(&home);
    const THREADS: usize = 500;
    for id in 0..THREADS {
        client.send(&json!({"id": 1000 + id, "method": "thread/start", "params": {}}));
    }
    let rest = client.finish();
    assert_eq!(answers(&rest), THREADS, "every thread/start answered");
    assert_eq!(
        count(&rest, "thread/started"),
        THREADS,
        "every thread/started delivered before exit"
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn end_of_input_lets_a_running_turn_finish() {
    let home = scratch("shutdown-eof-turn");
    slow_script(&home, 10, 50);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({})));
    let turn = client.start_turn(&thread, "Talk a while.");
    let rest = client.finish();
    let completed = completed_turns(&rest);
    assert_eq!(completed.len(), 1, "one turn/completed: {rest:?}");
    assert_eq!(completed[0]["id"], json!(turn));
    assert_eq!(completed[0]["status"], json!("completed"));
    assert_eq!(count(&rest, "item/agentMessage/delta"), 10, "every delta");

    let mut again = Client::start(&home);
    let read = again.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    assert_eq!(read["thread"]["turns"][0]["status"], json!("completed"));
    again.stop();
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn sigterm_interrupts_running_turns_records_them_and_exits_cleanly() {
    let home = scratch("shutdown-sigterm");
    slow_script(&home, 1000, 50);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({})));
    let turn = client.start_turn(&thread, "Talk for a long time.");
    client.notification("item/agentMessage/delta");
    let killed = Command::new("kill")
        .args(["-TERM", &client.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    // The server exits 0 on its own, having sent the turn's end.
    let rest = client.rest();
    let completed = completed_turns(&rest);
    assert_eq!(completed.len(), 1, "one turn/completed: {rest:?}");
    assert_eq!(completed[0]["id"], json!(turn));
    assert_eq!(completed[0]["status"], json!("interrupted"));
    assert!(
        count(&rest, "item/agentMessage/delta") < 999,
        "the turn was cut short, not run to its end"
    );

    let mut again = Client::start(&home);
    let read = again.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    assert_eq!(read["thread"]["turns"][0]["status"], json!("interrupted"));
    again.stop();
    let _ = std::fs::remove_dir_all(&home);
}
