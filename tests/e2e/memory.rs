//! Memory, end to end through the binary: `thread/memoryMode/set`, `thread/memory/read`,
//! `memory/status` and `memory/reset` (experimental), on the memory folder of the home
//! (`$AGENTWIRE_HOME/memories/`), with a thread's mode kept across a restart.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::scratch;

const SUMMARY: &str = "# Memory\n- The user prefers small commits.\n";

fn experimental(home: &Path) -> Client {
    Client::start_with_capabilities(home, json!({"experimentalApi": true}))
}

/// Puts a memory built from `threads` in `home`.
fn remember(home: &Path, threads: &[&str]) {
    let dir = home.join("memories");
    std::fs::create_dir_all(&dir).expect("memories");
    std::fs::write(dir.join("memory_summary.md"), SUMMARY).expect("summary");
    std::fs::write(
        dir.join("consolidated.json"),
        json!({"threads": threads}).to_string(),
    )
    .expect("thread list");
}

fn status(client: &mut Client, params: Value) -> (u64, bool) {
    let answer = client.call("memory/status", params);
    (
        answer["v2ConsolidatedThreads"].as_u64().expect("count"),
        answer["v2Ready"].as_bool().expect("ready"),
    )
}

fn summary(client: &mut Client, thread: &str) -> Value {
    client.call("thread/memory/read", json!({"threadId": thread}))["summary"].clone()
}

#[test]
fn a_threads_memory_mode_governs_what_it_reads_and_survives_a_restart() {
    let root = scratch("memory-mode");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    let mut client = experimental(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": root})));

    assert_eq!(status(&mut client, json!({})), (0, false));
    assert_eq!(summary(&mut client, &thread), Value::Null, "no memory yet");

    remember(&home, &["a", "b", "b", "c"]);
    assert_eq!(
        status(&mut client, json!({})),
        (3, false),
        "20 threads by default"
    );
    assert_eq!(
        status(&mut client, json!({"minConsolidatedThreads": 3})),
        (3, true)
    );
    assert_eq!(summary(&mut client, &thread), json!(SUMMARY));

    let set = client.call(
        "thread/memoryMode/set",
        json!({"threadId": thread, "mode": "disabled"}),
    );
    assert_eq!(set, json!({}));
    assert_eq!(
        summary(&mut client, &thread),
        Value::Null,
        "disabled reads none"
    );
    drop(client);

    let mut client = experimental(&home);
    assert_eq!(
        summary(&mut client, &thread),
        Value::Null,
        "the mode is kept in the thread's rollout"
    );
    // Set on a thread that is not loaded, then read back once it is.
    client.call(
        "thread/memoryMode/set",
        json!({"threadId": thread, "mode": "enabled"}),
    );
    assert_eq!(summary(&mut client, &thread), json!(SUMMARY));
    client.call("thread/resume", json!({"threadId": thread}));
    assert_eq!(summary(&mut client, &thread), json!(SUMMARY));
    client.call(
        "thread/memoryMode/set",
        json!({"threadId": thread, "mode": "disabled"}),
    );
    assert_eq!(summary(&mut client, &thread), Value::Null);
    client.call(
        "thread/memoryMode/set",
        json!({"threadId": thread, "mode": "enabled"}),
    );
    assert_eq!(summary(&mut client, &thread), json!(SUMMARY));
    let rollout = std::fs::read_to_string(
        client.call("thread/read", json!({"threadId": thread}))["thread"]["path"]
            .as_str()
            .expect("path"),
    )
    .expect("rollout");
    assert!(rollout.contains(r#""type":"memoryMode""#), "{rollout}");

    let reset = client.call("memory/reset", Value::Null);
    assert_eq!(reset, json!({}));
    assert!(!home.join("memories").exists());
    assert_eq!(
        status(&mut client, json!({"minConsolidatedThreads": 1})),
        (0, false)
    );
    assert_eq!(summary(&mut client, &thread), Value::Null);
    client.call("memory/reset", Value::Null);
}

#[test]
fn bad_memory_requests_are_refused_with_what_was_wrong() {
    let root = scratch("memory-errors");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");

    let mut stable = Client::start(&home);
    let refused = stable
        .request("memory/status", json!({}))
        .expect_err("experimental");
    assert_eq!(refused["code"], json!(-32600), "{refused}");
    drop(stable);

    let mut client = experimental(&home);
    for min in [0, 5000] {
        let refused = client
            .request("memory/status", json!({"minConsolidatedThreads": min}))
            .expect_err("out of range");
        assert_eq!(refused["code"], json!(-32602), "{refused}");
        assert!(
            refused["message"]
                .as_str()
                .is_some_and(|m| m.contains("minConsolidatedThreads")),
            "{refused}"
        );
    }
    let missing = client
        .request(
            "thread/memoryMode/set",
            json!({"threadId": "no-such-thread", "mode": "disabled"}),
        )
        .expect_err("no thread");
    assert!(
        missing["message"]
            .as_str()
            .is_some_and(|m| m.contains("no-such-thread")),
        "{missing}"
    );
    let missing = client
        .request("thread/memory/read", json!({"threadId": "no-such-thread"}))
        .expect_err("no thread");
    assert!(
        missing["message"]
            .as_str()
            .is_some_and(|m| m.contains("no-such-thread"))
    );
    let thread = thread_id(&client.start_thread(json!({"cwd": root})));
    let bad = client
        .request(
            "thread/memoryMode/set",
            json!({"threadId": thread, "mode": "sometimes"}),
        )
        .expect_err("unknown mode");
    assert_eq!(bad["code"], json!(-32602), "{bad}");
}

#[test]
fn an_imported_codex_memory_is_read_and_counted() {
    let root = scratch("memory-import");
    let home = root.join("home");
    let codex = root.join("codex");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(codex.join("memories/rollout_summaries")).expect("codex memories");
    std::fs::write(codex.join("memories/memory_summary.md"), SUMMARY).expect("summary");
    std::fs::write(codex.join("memories/MEMORY.md"), "details\n").expect("memory");
    for name in ["one", "two"] {
        std::fs::write(
            codex.join(format!("memories/rollout_summaries/{name}.md")),
            "summary\n",
        )
        .expect("rollout summary");
    }
    let mut client =
        Client::start_with_env(&home, &[("CODEX_HOME", codex.to_str().expect("utf-8"))]);
    let answer = client.call(
        "externalAgentConfig/import",
        json!({"migrationItems": [{"itemType": "MEMORY", "description": "memories"}]}),
    );
    let completed = client.notification("externalAgentConfig/import/completed");
    assert_eq!(completed["importId"], answer["importId"]);
    assert_eq!(
        completed["itemTypeResults"][0]["failures"],
        json!([]),
        "{completed}"
    );
    drop(client);

    let mut client = experimental(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": root})));
    assert_eq!(summary(&mut client, &thread), json!(SUMMARY));
    assert_eq!(
        status(&mut client, json!({"minConsolidatedThreads": 2})),
        (2, true)
    );
    assert!(home.join("memories/MEMORY.md").is_file());
}
