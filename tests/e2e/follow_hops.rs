//! A client hopping onto another worker mid-turn, again and again: each time it resumes the
//! thread there, what the answer holds and what it is relayed after the answer leave nothing out
//! and say nothing twice, however the turn's items fall around the moment it joins.

use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::scratch;
use crate::follow_live::fixture;
use crate::stores::Store;

/// Agent messages the model sends, one short delta each, every `DELAY_MS`: a turn whose items
/// complete every few milliseconds, so that some complete while a client joins. At least twice
/// what the hops take on an idle machine (about 0.8 s), so that the turn outlasts them on a
/// loaded one too.
const MESSAGES: usize = 800;
const DELAY_MS: u64 = 2;

/// How many times the client joins and leaves on worker B while the turn runs on A.
const HOPS: usize = 12;

/// The ids of the items of turn `turn` that the `item/completed` notifications in `seen` report.
fn completed_items(seen: &[Value], turn: &str) -> Vec<String> {
    params(seen, "item/completed")
        .iter()
        .filter(|p| p["turnId"] == json!(turn))
        .map(|p| p["item"]["id"].as_str().expect("item id").to_owned())
        .collect()
}

/// The ids of the items of the turn `turn` in a `thread/resume` answer, and that turn.
fn resumed_items(resumed: &Value, turn: &str) -> (Vec<String>, Value) {
    let turns = resumed["thread"]["turns"].as_array().expect("turns");
    let found = turns
        .iter()
        .find(|t| t["id"] == json!(turn))
        .unwrap_or_else(|| panic!("the answer holds turn {turn}: {resumed}"))
        .clone();
    let items = found["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["id"].as_str().expect("item id").to_owned())
        .collect();
    (items, found)
}

#[test]
fn a_client_joining_another_worker_mid_turn_misses_no_item_and_gets_none_twice() {
    let store = Store::postgres("follow_hops");
    let (home_a, home_b) = (scratch("follow-hops-a"), scratch("follow-hops-b"));
    let steps: Vec<Value> = (0..MESSAGES)
        .map(|n| json!({"type": "message", "deltas": [format!("m{n} ")]}))
        .collect();
    let script = json!({"version": 1, "deltaDelayMs": DELAY_MS, "responses": [{"steps": steps}]});
    for home in [&home_a, &home_b] {
        fixture(home, &script);
    }
    let project = scratch("follow-hops-project");
    let mut a = Client::start_with(&home_a, &store.args());
    let mut b = Client::start_with(&home_b, &store.args());
    let thread = thread_id(&a.start_thread(json!({"cwd": project})));
    let turn = a.start_turn(&thread, "Say many things.");
    a.notification("item/agentMessage/delta");

    // Each hop: what the answer holds, then what was relayed until the client left.
    let mut hops: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    let mut last_seen = Vec::new();
    for hop in 0..=HOPS {
        let resumed = b.call("thread/resume", json!({"threadId": thread}));
        let (held, resumed_turn) = resumed_items(&resumed, &turn);
        let running = resumed_turn["status"] == json!("inProgress");
        if running {
            assert_eq!(
                resumed["thread"]["status"]["type"],
                json!("active"),
                "a thread whose turn runs on another worker reads as active: {}",
                resumed["thread"]["status"]
            );
        }
        if hop == HOPS || !running {
            let mut seen = if running {
                b.until_turn_completed()
            } else {
                Vec::new()
            };
            // Whatever else was relayed for the ended turn has had time to arrive.
            std::thread::sleep(Duration::from_millis(100));
            b.call("thread/loaded/list", json!({}));
            seen.extend(b.backlog());
            hops.push((held, completed_items(&seen, &turn)));
            last_seen = seen;
            break;
        }
        std::thread::sleep(Duration::from_millis(20 + 7 * hop as u64));
        b.call("thread/unsubscribe", json!({"threadId": thread}));
        let seen = b.backlog();
        assert!(
            params(&seen, "turn/completed").is_empty() || !running,
            "hop {hop}: the turn ended while the client was there"
        );
        hops.push((held, completed_items(&seen, &turn)));
    }

    let on_a = a.until_turn_completed();
    let all = completed_items(&on_a, &turn);
    let (whole, finished) = {
        let read = a.call(
            "thread/read",
            json!({"threadId": thread, "includeTurns": true}),
        );
        resumed_items(&read, &turn)
    };
    assert_eq!(finished["status"], json!("completed"), "{finished}");
    assert!(
        whole.len() > MESSAGES,
        "every message is an item: {}",
        whole.len()
    );
    assert_eq!(all, whole, "A's notifications follow its records");

    let mut joined_mid_item = 0;
    for (hop, (held, relayed)) in hops.iter().enumerate() {
        let mut followed = held.clone();
        followed.extend(relayed.iter().cloned());
        assert!(
            followed.len() <= whole.len() && followed[..] == whole[..followed.len()],
            "hop {hop}: the {} items held and {} relayed are not the turn's first {} items, \
             in order, once each\nheld: {held:?}\nrelayed: {relayed:?}",
            held.len(),
            relayed.len(),
            followed.len()
        );
        if !relayed.is_empty() && held.len() > 1 {
            joined_mid_item += 1;
        }
    }
    assert!(
        joined_mid_item >= HOPS / 2,
        "most hops joined the running turn: {joined_mid_item} of {HOPS}"
    );
    let (held, relayed) = hops.last().expect("the last hop");
    assert_eq!(
        held.len() + relayed.len(),
        whole.len(),
        "the last hop follows the turn to its end"
    );
    let ends = params(&last_seen, "turn/completed");
    assert!(ends.len() <= 1, "turn/completed once: {ends:?}");
    if let Some(end) = ends.first() {
        assert_eq!(end["turn"]["status"], json!("completed"));
        assert_eq!(completed_turn(&last_seen)["id"], json!(turn));
    }
    a.stop();
    b.stop();
    for dir in [home_a, home_b, project] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
