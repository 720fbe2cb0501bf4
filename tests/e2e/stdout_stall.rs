//! A stdio client that stops reading stdout does not stall the server: its running turn goes
//! on and is recorded, its further requests are still handled, and once it reads again it gets
//! every message, in order.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{home_and_workspace, scratch};

/// Deltas the turn streams: far more output than a pipe holds (64 KiB).
const DELTAS: usize = 4000;

/// Waits (at most a minute) until the file at `path` contains `needle`.
fn wait_for_record(path: &Path, needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(needle) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{needle} never reached {}:\n{text}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_client_that_stops_reading_stdout_does_not_stall_the_server() {
    let (home, workspace) = home_and_workspace(&scratch("stdout-stall"));
    let delta = format!("{} ", "w".repeat(100));
    let script = json!({"version": 1, "responses": [
        {"steps": [{"type": "message", "deltas": vec![delta.clone(); DELTAS]}]}
    ]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n",
    )
    .expect("write config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("app-server")
        .env("AGENTWIRE_HOME", &home)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn agentwire app-server");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").expect("write request");
        stdin.flush().expect("flush");
    };
    let mut lines = Vec::new();
    let mut read_until_answer = |id: i64, lines: &mut Vec<Value>| -> Value {
        loop {
            let mut line = String::new();
            assert!(
                stdout.read_line(&mut line).expect("read") > 0,
                "stdout ended"
            );
            let message: Value = serde_json::from_str(&line).expect("a JSON line");
            lines.push(message.clone());
            if message["id"] == json!(id) {
                return message;
            }
        }
    };
    send(json!({"id": 1, "method": "initialize",
        "params": {"clientInfo": {"name": "e2e", "version": "0.0.1"}}}));
    read_until_answer(1, &mut lines);
    send(json!({"method": "initialized"}));
    send(json!({"id": 2, "method": "thread/start", "params": {"cwd": workspace}}));
    let started = read_until_answer(2, &mut lines);
    let thread = started["result"]["thread"]["id"]
        .as_str()
        .expect("thread id")
        .to_owned();
    let rollout = std::path::PathBuf::from(
        started["result"]["thread"]["path"]
            .as_str()
            .expect("rollout path"),
    );

    // From here on the client reads nothing.
    send(json!({"id": 3, "method": "turn/start",
        "params": {"threadId": thread, "input": [{"type": "text", "text": "go"}]}}));
    // The turn runs to its end and is recorded although its output waits...
    wait_for_record(&rollout, "\"type\":\"turnCompleted\"");
    // ...and the next request is handled.
    send(json!({"id": 4, "method": "thread/name/set",
        "params": {"threadId": thread, "name": "still served"}}));
    wait_for_record(&rollout, "still served");

    // Reading again: every message arrives, in order, none lost.
    let mut seen = Vec::new();
    read_until_answer(4, &mut seen);
    let methods: Vec<&str> = seen.iter().filter_map(|m| m["method"].as_str()).collect();
    let text: String = seen
        .iter()
        .filter(|m| m["method"] == json!("item/agentMessage/delta"))
        .map(|m| m["params"]["delta"].as_str().expect("delta"))
        .collect();
    assert_eq!(text, delta.repeat(DELTAS), "deltas lost or out of order");
    let completed = methods
        .iter()
        .position(|m| *m == "turn/completed")
        .expect("turn/completed");
    let last_delta = methods
        .iter()
        .rposition(|m| *m == "item/agentMessage/delta")
        .expect("deltas");
    assert!(last_delta < completed, "{methods:?}");
    assert_eq!(seen.iter().filter(|m| m["id"] == json!(3)).count(), 1);
    let answer = seen.last().expect("answer");
    assert_eq!(answer["result"], json!({}), "{answer}");

    // End of input: the server exits once its output is written.
    drop(stdin);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
}
