//! A relay that falls behind never holds a turn back (`docs/deployment.md`, "Never in a turn's
//! way"): with the worker's publishing session stopped inside PostgreSQL, a turn streams to its
//! end on its own worker, the publisher keeps at most 16,384 notifications for the others and
//! drops the rest (logged), and a follower elsewhere gets a prefix of the turn, reads it whole
//! once it ends, and follows the next turn live again.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::{scratch, signal};
use crate::follow_live::fixture;
use crate::stores::Store;

/// Notifications the publisher keeps for the other workers while it cannot send.
const QUEUE: usize = 16_384;

/// Payloads the publisher takes from its queue for one round trip (`relay.rs`, `BATCH`): the
/// most it can hold beside the queue while its send waits.
const BATCH: usize = 512;

/// Deltas of the turn streamed while the publisher is stopped: far more than it keeps.
const DELTAS: usize = 24_000;

fn long_deltas() -> Vec<String> {
    (0..DELTAS).map(|n| format!("d{n} ")).collect()
}

/// Checks that `got` is the start of the long turn's deltas, once and in order (naming the
/// first that is not, instead of printing thousands).
fn assert_start(got: &[String], who: &str) {
    let want = long_deltas();
    if let Some(at) = (0..got.len()).find(|&at| want.get(at) != Some(&got[at])) {
        panic!(
            "{who}: delta {at} of {} is {:?}, not {:?}",
            got.len(),
            got[at],
            want.get(at)
        );
    }
}

/// `url` with the PostgreSQL session name `name`, to find a worker's sessions by.
fn named(url: &str, name: &str) -> String {
    format!("{url}?application_name={name}")
}

/// The agent-message deltas in `seen` of the turn `turn`.
fn deltas_of(seen: &[Value], turn: &str) -> Vec<String> {
    params(seen, "item/agentMessage/delta")
        .iter()
        .filter(|p| p["turnId"] == json!(turn))
        .map(|p| p["delta"].as_str().expect("delta").to_owned())
        .collect()
}

/// A PostgreSQL backend stopped with SIGSTOP, continued when dropped (a failing test must not
/// leave a session of the shared test cluster stopped).
struct Stopped(u32);

impl Stopped {
    fn stop(pid: u32) -> Self {
        signal(pid, "STOP");
        Self(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        signal(self.0, "CONT");
    }
}

/// The process id of the session named `name` that publishes (its last statement was
/// `pg_notify`), once it is idle: between round trips it holds no lock, not even the one every
/// `NOTIFY` of the cluster takes at commit.
fn idle_publisher(store: &Store, name: &str) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = store.query(&format!(
            "SELECT pid FROM pg_stat_activity WHERE application_name = '{name}' \
             AND query LIKE '%pg_notify%' AND state = 'idle'"
        ));
        let pids: Vec<u32> = found
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        match pids.as_slice() {
            [pid] => return *pid,
            _ if Instant::now() > deadline => {
                panic!("no single idle publishing session named {name}: {found:?}")
            }
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

#[test]
fn a_publisher_that_cannot_send_drops_past_its_queue_and_never_holds_the_turn_back() {
    let store = Store::postgres("follow_behind");
    let Store::Postgres(url) = &store else {
        unreachable!("Store::postgres")
    };
    let (name_a, name_b) = ("aw_follow_behind_a", "aw_follow_behind_b");
    let (url_a, url_b) = (named(url, name_a), named(url, name_b));
    let script = json!({"version": 1, "responses": [
        {"when": "before", "steps": [{"type": "message", "deltas": ["before ", "the stop"]}]},
        {"when": "a lot", "steps": [{"type": "message", "deltas": long_deltas()}]},
        {"when": "after", "steps": [{"type": "message", "deltas": ["after ", "the stop"]}]}
    ]});
    let (home_a, home_b) = (scratch("follow-behind-a"), scratch("follow-behind-b"));
    for home in [&home_a, &home_b] {
        fixture(home, &script);
    }
    let project = scratch("follow-behind-project");
    let mut a = Client::start_with(&home_a, &["--store", &url_a]);
    let mut b = Client::start_with(&home_b, &["--store", &url_b]);
    let thread = thread_id(&a.start_thread(json!({"cwd": project})));
    b.call("thread/resume", json!({"threadId": thread}));
    // B's word that it follows the thread travels to A through the database.
    std::thread::sleep(Duration::from_secs(1));

    // The relay works: B follows a first turn live.
    let first = a.start_turn(&thread, "Before.");
    a.until_turn_completed();
    let on_b = b.until_turn_completed();
    assert_eq!(completed_turn(&on_b)["id"], json!(first), "{on_b:?}");

    // A's publishing session stops answering; the long turn streams on A regardless.
    let publisher = Stopped::stop(idle_publisher(&store, name_a));
    let long = a.start_turn(&thread, "Stream a lot.");
    let on_a = a.until_turn_completed();
    let streamed = deltas_of(&on_a, &long);
    assert_eq!(
        streamed.len(),
        DELTAS,
        "A's own client gets every delta while nothing reaches the database"
    );
    assert_start(&streamed, "A's client");
    assert_eq!(completed_turn(&on_a)["status"], json!("completed"));
    let log = a.stderr();
    assert!(
        log.contains("relay behind: notifications for other workers dropped"),
        "the drops are logged:\n{log}"
    );
    drop(publisher);

    // Once it sends again, B gets what it kept: a prefix of the long turn, then the next turn
    // whole and live.
    let after = a.start_turn(&thread, "After.");
    a.until_turn_completed();
    let on_b = b.until_turn_completed();
    assert_eq!(
        completed_turn(&on_b)["id"],
        json!(after),
        "{:?}",
        on_b.last()
    );
    let kept = deltas_of(&on_b, &long);
    assert!(
        kept.len() >= QUEUE - 16 && kept.len() <= QUEUE + BATCH,
        "the publisher kept its queue's worth ({QUEUE} notifications, a few of them not \
         deltas, plus at most one batch in flight): {} of {DELTAS} deltas reached B",
        kept.len()
    );
    assert_start(&kept, "B's client, of the long turn");
    assert_eq!(deltas_of(&on_b, &after), ["after ", "the stop"]);
    assert!(
        params(&on_b, "turn/completed")
            .iter()
            .all(|p| p["turn"]["id"] != json!(long)),
        "the long turn's end was dropped with the rest"
    );

    // B reads the long turn whole from the store.
    let read = b.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let turns = read["thread"]["turns"].as_array().expect("turns");
    let long_turn = turns
        .iter()
        .find(|t| t["id"] == json!(long))
        .expect("the long turn is recorded");
    assert_eq!(long_turn["status"], json!("completed"), "{long_turn}");
    let text = long_turn["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|item| item["type"] == json!("agentMessage"))
        .and_then(|item| item["text"].as_str())
        .expect("the long turn's message");
    assert!(
        text == long_deltas().concat(),
        "the long turn's message is whole: {} bytes",
        text.len()
    );
    a.stop();
    b.stop();
    for dir in [home_a, home_b, project] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
