//! Crash safety: a server killed mid-turn loses at most the item in flight.
//!
//! Each case runs one complete turn, starts a second one, waits for a chosen point of it and
//! SIGKILLs the server (`Child::kill`, through dropping the client). A restarted server must
//! list the thread, read back the first turn exactly as it was, every item of the second turn
//! whose `item/completed` the client saw (and no partial item), with the second turn settled
//! as `interrupted` (`settle_dangling`), and a resumed thread must run a new turn.
//!
//! The last two cases, one per store, run turns on several threads at once, so that the
//! committer makes their records durable in shared groups (embedded: one `write` and
//! `fdatasync` per rollout; PostgreSQL: one transaction per group), check at each
//! `item/completed` that the item is durable already, kill the server midway and read every
//! acknowledged item back: the promise of README (Persistence) and docs/deployment.md that an
//! item is announced only once it is durable and a kill loses at most the item in flight.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::Client;
use crate::common::{existing_dir, scratch};
use crate::stores::Store;

/// Deltas per scripted message, and the pause before each delta: wide enough that the item
/// after the kill point cannot complete before the kill lands.
const DELTAS: usize = 4;
const DELAY_MS: u64 = 100;
/// Messages per turn.
const MESSAGES: usize = 3;

/// Selects a fixture script whose answer is [`MESSAGES`] messages of [`DELTAS`] deltas each.
fn crash_script(home: &Path) {
    let steps: Vec<Value> = (0..MESSAGES)
        .map(|m| json!({"type": "message", "deltas": vec![format!("m{m} "); DELTAS]}))
        .collect();
    let script = json!({
        "version": 1,
        "deltaDelayMs": DELAY_MS,
        "responses": [{"steps": steps}]
    });
    std::fs::write(home.join("crash.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"crash.json\"\n",
    )
    .expect("write config");
}

/// The full text of scripted message `m`.
fn message_text(m: usize) -> String {
    format!("m{m} ").repeat(DELTAS)
}

/// Where in the second turn the server is killed.
#[derive(Debug, Clone, Copy)]
enum KillPoint {
    /// As soon as `turn/started` arrives.
    TurnStarted,
    /// On the first delta of the second message (the first message completed).
    MidDelta,
    /// On the `item/completed` of the second message (the third has not streamed yet).
    ItemCompleted,
}

fn turn_input(text: &str) -> Value {
    json!([{"type": "text", "text": text}])
}

/// Reads thread `id` with its turns.
fn read(client: &mut Client, id: &str) -> Value {
    client.call("thread/read", json!({"threadId": id, "includeTurns": true}))["thread"].clone()
}

/// Drives the second turn up to `point`; returns the items whose completion the client saw.
fn run_until(client: &mut Client, point: KillPoint) -> Vec<Value> {
    client.notification("turn/started");
    let completed_in_backlog = |client: &Client| -> Vec<Value> {
        client
            .notifications
            .iter()
            .filter(|n| n["method"] == json!("item/completed"))
            .map(|n| n["params"]["item"].clone())
            .collect()
    };
    match point {
        KillPoint::TurnStarted => completed_in_backlog(client),
        KillPoint::MidDelta => {
            let mut seen = Vec::new();
            for _ in 0..2 {
                seen.push(client.notification("item/completed")["item"].clone());
            }
            // Deltas of the first answer may still be queued before the second one's.
            loop {
                let delta = client.notification("item/agentMessage/delta");
                if delta["itemId"] != seen[1]["id"] {
                    break;
                }
            }
            seen.extend(completed_in_backlog(client));
            seen
        }
        KillPoint::ItemCompleted => (0..3)
            .map(|_| client.notification("item/completed")["item"].clone())
            .collect(),
    }
}

/// Checks that `second` (the turn read back) holds every item in `seen`, in order, and at most
/// the one item that was in flight at the kill, complete.
fn assert_items_survived(second: &Value, seen: &[Value], point: KillPoint) {
    let items = second["items"].as_array().expect("items");
    assert!(
        items.len() >= seen.len() && items[..seen.len()] == *seen,
        "{point:?}: every item completed before the kill is on record\nseen: {seen:#?}\nread: {items:#?}"
    );
    assert!(
        items.len() <= seen.len() + 1,
        "{point:?}: at most the item in flight was completed meanwhile: {items:#?}"
    );
    for (n, item) in items.iter().enumerate() {
        match item["type"].as_str() {
            Some("userMessage") => assert_eq!(n, 0, "{point:?}: the user message comes first"),
            Some("agentMessage") => {
                assert_eq!(
                    item["text"],
                    json!(message_text(n - 1)),
                    "{point:?}: no partial item"
                );
                assert!(item["completedAtMs"].is_i64(), "{point:?}: {item}");
            }
            other => panic!("{point:?}: unexpected item {other:?}: {item}"),
        }
    }
}

fn crash_at(point: KillPoint, store: &Store) {
    let home = scratch(&format!("crash-{point:?}"));
    crash_script(&home);
    let mut client = Client::start_with(&home, &store.args());
    let thread =
        client.call("thread/start", json!({"cwd": existing_dir("/tmp/project")}))["thread"]["id"]
            .as_str()
            .expect("thread id")
            .to_owned();
    client.call(
        "turn/start",
        json!({"threadId": thread, "input": turn_input("First.")}),
    );
    let first = client.notification("turn/completed")["turn"].clone();
    assert_eq!(first["status"], json!("completed"));
    let before = read(&mut client, &thread);
    let first_turn = before["turns"][0].clone();
    assert_eq!(
        first_turn["items"].as_array().expect("items").len(),
        1 + MESSAGES
    );
    client.notifications.clear();

    let second_id = client.call(
        "turn/start",
        json!({"threadId": thread, "input": turn_input("Second.")}),
    )["turn"]["id"]
        .as_str()
        .expect("turn id")
        .to_owned();
    let seen = run_until(&mut client, point);
    match point {
        KillPoint::TurnStarted => {}
        KillPoint::MidDelta => assert_eq!(seen.len(), 2, "user message and first answer"),
        KillPoint::ItemCompleted => assert_eq!(seen.len(), 3, "user message and two answers"),
    }
    // Dropping the client SIGKILLs the server (`Child::kill`) and reaps it.
    drop(client);

    // With PostgreSQL, another worker (with a home of its own) takes the thread over: nothing
    // the killed one kept locally is needed.
    let other_home = match store {
        Store::Embedded => home.clone(),
        Store::Postgres(_) => {
            let other = scratch(&format!("crash-{point:?}-other-worker"));
            crash_script(&other);
            other
        }
    };
    let mut restarted = Client::start_with(&other_home, &store.args());
    let listed = restarted.call("thread/list", json!({}));
    let ids: Vec<&Value> = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|t| &t["id"])
        .collect();
    assert_eq!(ids, [&json!(thread)], "{point:?}: the thread is listed");

    let after = read(&mut restarted, &thread);
    let turns = after["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 2, "{point:?}: both turns are on record");
    assert_eq!(turns[0], first_turn, "{point:?}: the first turn is intact");
    let second = &turns[1];
    assert_eq!(second["id"], json!(second_id));
    // A turn a crash left running reads back as interrupted, without an error.
    assert_eq!(second["status"], json!("interrupted"), "{point:?}");
    assert_eq!(second["error"], Value::Null, "{point:?}");
    assert_items_survived(second, &seen, point);

    // Resuming settles the dangling turn on record and the thread takes a new turn.
    let resumed = restarted.call("thread/resume", json!({"threadId": thread}));
    let resumed_turns = resumed["thread"]["turns"].as_array().expect("turns");
    assert_eq!(resumed_turns.len(), 2, "{point:?}");
    assert_eq!(
        resumed_turns[1]["status"],
        json!("interrupted"),
        "{point:?}"
    );
    restarted.notifications.clear();
    restarted.call(
        "turn/start",
        json!({"threadId": thread, "input": turn_input("Third.")}),
    );
    let third = restarted.notification("turn/completed")["turn"].clone();
    assert_eq!(third["status"], json!("completed"), "{point:?}: {third}");
    let reread = read(&mut restarted, &thread);
    let reread_turns = reread["turns"].as_array().expect("turns");
    assert_eq!(reread_turns.len(), 3, "{point:?}");
    assert_eq!(reread_turns[1]["status"], json!("interrupted"));
    assert_eq!(
        reread_turns[2]["items"].as_array().expect("items").len(),
        1 + MESSAGES
    );
    restarted.stop();
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_dir_all(&other_home);
}

const KILL_POINTS: [KillPoint; 3] = [
    KillPoint::TurnStarted,
    KillPoint::MidDelta,
    KillPoint::ItemCompleted,
];

#[test]
fn a_killed_server_keeps_every_completed_item() {
    for point in KILL_POINTS {
        crash_at(point, &Store::Embedded);
    }
}

/// The same kills with the threads in PostgreSQL: a worker killed mid-turn loses no
/// acknowledged item, and another worker (another home) lists, reads, resumes and continues
/// the thread.
#[test]
fn a_worker_killed_mid_turn_leaves_the_thread_whole_and_resumable_on_another() {
    for point in KILL_POINTS {
        crash_at(point, &Store::postgres(&format!("crash_{point:?}")));
    }
}

/// Turns on this many threads complete items at the same moment in the group-commit tests.
const CONCURRENT: usize = 6;
/// Messages of each of those turns (one delta each, no pause: items complete back to back).
const QUICK_MESSAGES: usize = 40;
/// Completions the client sees before the kill: well inside the turns, so that most of the
/// concurrent turns are mid-stream when it lands.
const SEEN_BEFORE_KILL: usize = 60;
/// How long each commit group is held before it is made durable, in both stores.
const HOLD_MS: u64 = 100;

/// Makes every transaction that appends records to the PostgreSQL store wait [`HOLD_MS`]
/// before it commits, once per transaction, so once per commit group: what
/// `AGENTWIRE_TEST_COMMIT_DELAY_MS` does for the embedded committer (the PostgreSQL committer
/// has no such hook). A statement-level trigger on the records table of the test's own
/// database, run after the server has created its tables; records inserted but not committed
/// stay invisible to the test's queries, which run in sessions of their own.
fn hold_postgres_groups(store: &Store) {
    store.query(&format!(
        "CREATE FUNCTION e2e_hold_group() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
           IF current_setting('e2e.held', true) IS DISTINCT FROM 'yes' THEN \
             PERFORM set_config('e2e.held', 'yes', true); \
             PERFORM pg_sleep({HOLD_MS} / 1000.0); \
           END IF; \
           RETURN NULL; \
         END $$; \
         CREATE TRIGGER e2e_hold_group AFTER INSERT ON agentwire_records \
           FOR EACH STATEMENT EXECUTE FUNCTION e2e_hold_group()"
    ));
}

/// Selects a fixture script whose answer is [`QUICK_MESSAGES`] one-delta messages.
fn quick_script(home: &Path) {
    let steps: Vec<Value> = (0..QUICK_MESSAGES)
        .map(|m| json!({"type": "message", "deltas": [format!("q{m}")]}))
        .collect();
    let script = json!({"version": 1, "responses": [{"steps": steps}]});
    std::fs::write(home.join("quick.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"quick.json\"\n",
    )
    .expect("write config");
}

/// Starts `agentwire app-server` on `store` with `env` added, and completes the handshake.
fn start_on(home: &Path, store: &Store, env: &[(&str, &str)]) -> Client {
    let mut client = Client::spawn_with_env(home, &store.args(), env);
    let answer = client.request(
        "initialize",
        json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}, "capabilities": null}),
    );
    assert!(answer.is_ok(), "initialize failed: {answer:?}");
    client.send(&json!({"method": "initialized"}));
    client
}

/// Whether the record of item `item` of `thread` is durable already, read from outside the
/// server: in the thread's rollout file (embedded), or committed in the database (PostgreSQL).
fn on_record(store: &Store, rollout: Option<&Path>, thread: &str, item: &str) -> bool {
    let needle = format!("\"id\":\"{item}\"");
    match store {
        Store::Embedded => {
            let rollout = rollout.expect("an embedded thread has a rollout path");
            std::fs::read_to_string(rollout)
                .expect("read rollout")
                .contains(&needle)
        }
        Store::Postgres(_) => {
            let quoted = |text: &str| format!("'{}'", text.replace('\'', "''"));
            let found = store.query(&format!(
                "SELECT count(*) FROM agentwire_records WHERE thread_id = {} AND strpos(line, {}) > 0",
                quoted(thread),
                quoted(&needle)
            ));
            found.trim() != "0"
        }
    }
}

/// Runs [`CONCURRENT`] turns at once on `store`, so that the committer makes their records
/// durable in shared groups, each held [`HOLD_MS`]. The promise (docs/engine.md, Persistence;
/// docs/deployment.md, "When a worker dies"): an item is announced (`item/completed`) only once
/// it is durable, and a process killed at any instant loses at most the item in flight.
///
/// At each of the first [`SEEN_BEFORE_KILL`] `item/completed` the item is looked up in the
/// store from outside the server; then the server is SIGKILLed with most turns mid-stream. A
/// fresh server on the same store (for PostgreSQL, another worker with a home of its own)
/// lists every thread and reads back, for each, every item whose `item/completed` the client
/// saw, equal to what was announced and in order, nothing partial, and the turn the kill left
/// running settled as `interrupted`.
fn kill_amid_concurrent_turns(store: &Store, name: &str) {
    let home = scratch(&format!("crash-concurrent-{name}"));
    quick_script(&home);
    let hold = HOLD_MS.to_string();
    // The hold makes an item announced before its record is durable visible to the lookup
    // below (the committer is otherwise faster than this client, which checks every message
    // against the schema before the test sees it), and paces the turns so that the kill lands
    // well inside them.
    let mut client = match store {
        Store::Embedded => start_on(
            &home,
            store,
            &[("AGENTWIRE_TEST_COMMIT_DELAY_MS", hold.as_str())],
        ),
        Store::Postgres(_) => {
            let client = start_on(&home, store, &[]);
            hold_postgres_groups(store);
            client
        }
    };
    let mut rollouts = std::collections::HashMap::new();
    let threads: Vec<String> = (0..CONCURRENT)
        .map(|n| {
            let started = client.call(
                "thread/start",
                json!({"cwd": existing_dir(&format!("/tmp/project-{n}"))}),
            );
            let id = started["thread"]["id"]
                .as_str()
                .expect("thread id")
                .to_owned();
            let path = started["thread"]["path"]
                .as_str()
                .map(std::path::PathBuf::from);
            rollouts.insert(id.clone(), path);
            id
        })
        .collect();
    for thread in &threads {
        client.send_request(
            "turn/start",
            json!({"threadId": thread, "input": turn_input("Go.")}),
        );
    }
    let mut seen: std::collections::HashMap<String, Vec<Value>> = Default::default();
    for _ in 0..SEEN_BEFORE_KILL {
        let completed = client.notification("item/completed");
        let thread = completed["threadId"].as_str().expect("threadId").to_owned();
        let item_id = completed["item"]["id"].as_str().expect("item id");
        assert!(
            on_record(store, rollouts[&thread].as_deref(), &thread, item_id),
            "{name}: item {item_id} of thread {thread} was announced before its record was durable"
        );
        seen.entry(thread)
            .or_default()
            .push(completed["item"].clone());
    }
    let announced: usize = seen.values().map(Vec::len).sum();
    assert_eq!(
        announced, SEEN_BEFORE_KILL,
        "{name}: items announced before the kill"
    );
    assert!(
        seen.len() > 1,
        "{name}: items of several turns completed before the kill: {:?}",
        seen.keys()
    );
    // Dropping the client SIGKILLs the server (`Child::kill`) and reaps it.
    drop(client);

    let other_home = match store {
        Store::Embedded => home.clone(),
        Store::Postgres(_) => {
            // One transaction per commit group: the records a group inserted share their
            // `xmin`, and some group carried the records of several turns.
            let widest = store.query(
                "SELECT coalesce(max(n), 0) FROM (SELECT count(DISTINCT thread_id) AS n \
                 FROM agentwire_records GROUP BY xmin::text) AS groups",
            );
            let widest: usize = widest.trim().parse().expect("a count");
            assert!(
                widest > 1,
                "{name}: some commit group held the records of several threads ({widest})"
            );
            let other = scratch(&format!("crash-concurrent-{name}-other-worker"));
            quick_script(&other);
            other
        }
    };
    let mut restarted = start_on(&other_home, store, &[]);
    let listed = restarted.call("thread/list", json!({}));
    let mut ids: Vec<&str> = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|t| t["id"].as_str().expect("thread id"))
        .collect();
    ids.sort_unstable();
    let mut expected: Vec<&str> = threads.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(ids, expected, "{name}: every thread is listed");

    let mut interrupted = 0;
    for thread in &threads {
        let after = read(&mut restarted, thread);
        let turns = after["turns"].as_array().expect("turns");
        assert_eq!(turns.len(), 1, "{name}: thread {thread} has its one turn");
        let turn = &turns[0];
        let items = turn["items"].as_array().expect("items");
        let acknowledged = seen.get(thread).map(Vec::as_slice).unwrap_or_default();
        if let Some(k) = (0..acknowledged.len()).find(|&k| items.get(k) != Some(&acknowledged[k])) {
            panic!(
                "{name}: thread {thread}: acknowledged item {} (number {k} of the turn) is not \
                 on record as announced: every acknowledged item is, in order\n\
                 announced: {:#}\nread there: {:#}\nall read: {items:#?}",
                acknowledged[k]["id"],
                acknowledged[k],
                items.get(k).unwrap_or(&Value::Null),
            );
        }
        for (n, item) in items.iter().enumerate() {
            if n == 0 {
                assert_eq!(item["type"], json!("userMessage"), "{name}: {item}");
            } else {
                assert_eq!(
                    (&item["type"], &item["text"]),
                    (&json!("agentMessage"), &json!(format!("q{}", n - 1))),
                    "{name}: thread {thread}: no partial item"
                );
            }
        }
        // A turn the kill left running reads back as interrupted, without an error.
        if items.len() < 1 + QUICK_MESSAGES {
            assert_eq!(
                turn["status"],
                json!("interrupted"),
                "{name}: thread {thread}: {turn}"
            );
            assert_eq!(turn["error"], Value::Null, "{name}: thread {thread}");
            interrupted += 1;
        }
    }
    assert!(
        interrupted > 1,
        "{name}: the kill landed while several turns were mid-stream ({interrupted})"
    );
    restarted.stop();
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_dir_all(&other_home);
}

/// Embedded store: the rollout committer writes the records of all running turns in groups
/// (one `write` and one `fdatasync` per rollout), and each announced item is in its rollout file
/// already when `item/completed` arrives ([`kill_amid_concurrent_turns`]).
#[test]
fn concurrent_turns_keep_every_acknowledged_item_across_a_kill() {
    kill_amid_concurrent_turns(&Store::Embedded, "embedded");
}

/// PostgreSQL store: the committer commits the records of all running turns in groups, one
/// transaction per group, and each announced item is committed already when `item/completed`
/// arrives; another worker reads every acknowledged item back after the kill
/// ([`kill_amid_concurrent_turns`]).
#[test]
fn concurrent_turns_on_postgres_keep_every_acknowledged_item_across_a_kill() {
    kill_amid_concurrent_turns(&Store::postgres("crash_concurrent"), "postgres");
}
