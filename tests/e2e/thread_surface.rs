//! The thread surface added in 0.3.0, end to end through the binary: `thread/delete`,
//! `thread/unsubscribe`, `thread/metadata/update`, `thread/turns/list`, `thread/items/list`,
//! `thread/revert` and `thread/shellCommand`. Each test has its own `AGENTWIRE_HOME`; some write
//! a rollout in the 0.2.0 on-disk format themselves (so old files are shown to load).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::app_server_ws::App;
use crate::client::{Client, params, thread_id};
use crate::common::{home_and_workspace, scratch};
use crate::ws_conn::Conn;

/// What the tests ask of a connection, stdio or websocket.
trait Rpc {
    fn call(&mut self, method: &str, params: Value) -> Value;
}

impl Rpc for Client {
    fn call(&mut self, method: &str, params: Value) -> Value {
        Client::call(self, method, params)
    }
}

impl Rpc for Conn {
    fn call(&mut self, method: &str, params: Value) -> Value {
        Conn::call(self, method, params)
    }
}

/// A server on `home` listening on a websocket, and two connections to it.
fn server(home: &Path) -> (App, Conn, Conn) {
    let app = App::spawn(home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let (first, second) = (Conn::open(addr), Conn::open(addr));
    (app, first, second)
}

/// A thread id for a rollout written by [`old_rollout`].
const OLD: &str = "00000000-0000-7000-8000-000000000042";

/// Writes, in the format agentwire 0.2.0 wrote, the rollout of thread [`OLD`] with `turns`
/// turns (`t0`, `t1`, …), each a user message `u<n>`, a reasoning item `r<n>` and an agent
/// message `a<n>`; returns its path.
fn old_rollout(home: &Path, turns: usize) -> PathBuf {
    let dir = home.join("sessions/2026/01/02");
    std::fs::create_dir_all(&dir).expect("sessions dir");
    let path = dir.join(format!("rollout-2026-01-02T03-04-05-{OLD}.jsonl"));
    let mut lines = vec![json!({"type": "thread", "version": 1, "meta": {
        "id": OLD, "sessionId": OLD, "createdAt": 1_767_323_045, "cliVersion": "0.2.0",
        "source": "vscode",
        "settings": {
            "model": "fixture", "modelProvider": "fixture", "cwd": "/tmp",
            "approvalPolicy": "never", "approvalsReviewer": "user",
            "sandbox": {"type": "readOnly", "networkAccess": false}
        }
    }})];
    for n in 0..turns {
        let (turn, at) = (format!("t{n}"), 1_767_323_046 + n as i64);
        lines.push(json!({"type": "turnStarted", "at": at, "turnId": turn, "rootTurnId": turn, "startedAt": at}));
        lines.push(
            json!({"type": "itemCompleted", "at": at, "turnId": turn, "item": {
            "type": "userMessage", "id": format!("u{n}"), "clientId": null,
            "content": [{"type": "text", "text": format!("question {n}"), "text_elements": []}],
            "startedAtMs": at * 1000, "completedAtMs": at * 1000}}),
        );
        lines.push(
            json!({"type": "itemCompleted", "at": at, "turnId": turn, "item": {
            "type": "reasoning", "id": format!("r{n}"), "summary": ["thinking"], "content": [],
            "startedAtMs": at * 1000, "completedAtMs": at * 1000}}),
        );
        lines.push(
            json!({"type": "itemCompleted", "at": at, "turnId": turn, "item": {
            "type": "agentMessage", "id": format!("a{n}"), "text": format!("answer {n}"),
            "phase": null, "moderation": null, "memoryCitation": null, "delivery": null,
            "questions": null, "startedAtMs": at * 1000, "completedAtMs": at * 1000 + 5}}),
        );
        lines.push(
            json!({"type": "turnCompleted", "at": at, "turnId": turn, "status": "completed",
                          "error": null, "completedAt": at, "durationMs": 5}),
        );
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).expect("write rollout");
    path
}

/// A fixture model that answers slowly (one delta every 100 ms, for a minute), so a turn is
/// still running when the test acts on it.
fn slow_model(home: &Path) {
    let script = json!({"version": 1, "deltaDelayMs": 100,
        "responses": [{"steps": [{"type": "message", "deltas": vec!["tick "; 600]}]}]});
    std::fs::write(home.join("slow.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"slow.json\"\n",
    )
    .expect("config");
}

/// Asserts that `error` is an invalid-params error whose message names `field`.
fn names_field(error: &Value, field: &str) {
    assert_eq!(error["code"], json!(-32602), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(message.contains(field), "{field} not named in: {message}");
}

/// Asserts that `error` is the invalid-request error for an unknown thread.
fn unknown_thread(error: &Value, id: &str) {
    assert_eq!(error["code"], json!(-32600), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(
        message.contains("not found") && message.contains(id),
        "{message}"
    );
}

fn ids(list: &Value, key: &str) -> Vec<String> {
    list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|e| {
            let value = if key == "item" {
                &e["item"]["id"]
            } else {
                &e["id"]
            };
            value.as_str().expect("id").to_owned()
        })
        .collect()
}

fn listed(client: &mut impl Rpc) -> Vec<String> {
    ids(&client.call("thread/list", json!({"limit": 100})), "id")
}

#[test]
fn delete_stops_the_turn_then_removes_the_thread_for_every_follower() {
    let root = scratch("surface-delete");
    let (home, _) = home_and_workspace(&root);
    slow_model(&home);
    let (app, mut owner, mut follower) = server(&home);
    let started = owner.call("thread/start", json!({"cwd": "/tmp"}));
    let id = thread_id(&started);
    let path = PathBuf::from(started["thread"]["path"].as_str().expect("path"));
    follower.call("thread/resume", json!({"threadId": id}));
    let turn = owner.start_turn(&id, "count slowly");
    follower.notification("item/agentMessage/delta");

    owner.call("thread/delete", json!({"threadId": id}));
    assert!(!path.exists(), "the rollout is gone");
    // The turn was stopped (and its end sent) before the thread went.
    for conn in [&mut owner, &mut follower] {
        let completed = conn.notification("turn/completed");
        assert_eq!(completed["turn"]["id"], json!(turn));
        assert_eq!(completed["turn"]["status"], json!("interrupted"));
        assert_eq!(conn.notification("thread/deleted"), json!({"threadId": id}));
    }
    assert!(!listed(&mut follower).contains(&id));
    assert_eq!(
        follower.call("thread/loaded/list", json!({}))["data"],
        json!([])
    );
    unknown_thread(&owner.call_err("thread/read", json!({"threadId": id})), &id);
    unknown_thread(
        &owner.call_err("thread/delete", json!({"threadId": id})),
        &id,
    );
    names_field(&owner.call_err("thread/delete", json!({})), "threadId");
    drop((owner, follower));
    let (status, _) = app.terminate();
    assert!(status.success(), "{status}");

    // A restart does not bring it back; an old rollout deletes too, without being loaded.
    old_rollout(&home, 2);
    let mut again = Client::start(&home);
    assert!(!listed(&mut again).contains(&id));
    assert!(listed(&mut again).contains(&OLD.to_owned()));
    again.call("thread/delete", json!({"threadId": OLD}));
    assert_eq!(
        again.notification("thread/deleted"),
        json!({"threadId": OLD})
    );
    assert!(!listed(&mut again).contains(&OLD.to_owned()));
    again.stop();
    let mut third = Client::start(&home);
    assert!(listed(&mut third).is_empty());
    third.stop();
}

#[test]
fn unsubscribe_unloads_the_thread_when_its_last_follower_leaves() {
    let root = scratch("surface-unsubscribe");
    let (home, _) = home_and_workspace(&root);
    let (_app, mut first, mut second) = server(&home);
    let id = thread_id(&first.call("thread/start", json!({"cwd": "/tmp"})));
    second.call("thread/resume", json!({"threadId": id}));
    let unsubscribe = json!({"threadId": id});
    let status = |answer: Value| answer["status"].clone();

    assert_eq!(
        status(second.call("thread/unsubscribe", unsubscribe.clone())),
        json!("unsubscribed")
    );
    assert_eq!(
        status(second.call("thread/unsubscribe", unsubscribe.clone())),
        json!("notSubscribed")
    );
    let loaded = first.call("thread/loaded/list", json!({}));
    assert_eq!(
        loaded["data"],
        json!([id]),
        "another connection still follows it"
    );
    // The connection that left no longer sees the thread's turns.
    let turn = first.start_turn(&id, "hello");
    first.until_turn_completed();
    let read = second.call("thread/read", json!({"threadId": id}));
    assert_eq!(read["thread"]["id"], json!(id));
    assert!(
        !second
            .backlog()
            .iter()
            .any(|m| m["method"] == json!("turn/started")),
        "turn {turn} reached a connection that unsubscribed: {:?}",
        second.backlog()
    );

    assert_eq!(
        status(first.call("thread/unsubscribe", unsubscribe.clone())),
        json!("unsubscribed")
    );
    assert_eq!(first.notification("thread/closed"), json!({"threadId": id}));
    let changed = second.notification("thread/status/changed");
    let changed = if changed["status"] == json!({"type": "notLoaded"}) {
        changed
    } else {
        // The turn's own status changes come first.
        loop {
            let next = second.notification("thread/status/changed");
            if next["status"] == json!({"type": "notLoaded"}) {
                break next;
            }
        }
    };
    assert_eq!(changed["threadId"], json!(id));
    assert_eq!(
        first.call("thread/loaded/list", json!({}))["data"],
        json!([])
    );
    assert_eq!(
        status(first.call("thread/unsubscribe", unsubscribe.clone())),
        json!("notLoaded")
    );
    // Still on disk, and it loads again.
    let read = first.call("thread/read", json!({"threadId": id}));
    assert_eq!(read["thread"]["status"], json!({"type": "notLoaded"}));
    first.call("thread/resume", json!({"threadId": id}));

    unknown_thread(
        &first.call_err("thread/unsubscribe", json!({"threadId": "no-such-thread"})),
        "no-such-thread",
    );
    names_field(
        &first.call_err("thread/unsubscribe", json!({"threadId": 7})),
        "threadId",
    );
}

#[test]
fn metadata_update_patches_git_info_durably() {
    let root = scratch("surface-metadata");
    let (home, _) = home_and_workspace(&root);
    let mut client = Client::start(&home);
    let id = thread_id(&client.start_thread(json!({"cwd": "/tmp"})));
    let update = |client: &mut Client, git: Value| {
        client.call(
            "thread/metadata/update",
            json!({"threadId": id, "gitInfo": git}),
        )["thread"]["gitInfo"]
            .clone()
    };
    assert_eq!(
        update(&mut client, json!({"sha": "abc123", "branch": "main"})),
        json!({"sha": "abc123", "branch": "main", "originUrl": null})
    );
    // Left out: kept; null: cleared.
    assert_eq!(
        update(
            &mut client,
            json!({"branch": null, "originUrl": "https://example.invalid/r.git"})
        ),
        json!({"sha": "abc123", "branch": null, "originUrl": "https://example.invalid/r.git"})
    );
    let unchanged = client.call("thread/metadata/update", json!({"threadId": id}));
    assert_eq!(unchanged["thread"]["gitInfo"]["sha"], json!("abc123"));
    let listed = client.call("thread/list", json!({}));
    assert_eq!(listed["data"][0]["gitInfo"]["sha"], json!("abc123"));

    names_field(
        &client.call_err(
            "thread/metadata/update",
            json!({"threadId": id, "gitInfo": {"sha": ""}}),
        ),
        "gitInfo.sha",
    );
    names_field(
        &client.call_err(
            "thread/metadata/update",
            json!({"threadId": id, "gitInfo": {"branch": 5}}),
        ),
        "branch",
    );
    unknown_thread(
        &client.call_err("thread/metadata/update", json!({"threadId": "nope"})),
        "nope",
    );
    client.stop();

    // After a restart the patch is still there, and a thread that is not loaded (an old
    // rollout, too) is patched on disk.
    old_rollout(&home, 1);
    let mut again = Client::start(&home);
    let read = again.call("thread/read", json!({"threadId": id}));
    assert_eq!(
        read["thread"]["gitInfo"]["originUrl"],
        json!("https://example.invalid/r.git")
    );
    let old = again.call(
        "thread/metadata/update",
        json!({"threadId": OLD, "gitInfo": {"sha": "fff"}}),
    );
    assert_eq!(old["thread"]["status"], json!({"type": "notLoaded"}));
    assert_eq!(old["thread"]["gitInfo"]["sha"], json!("fff"));
    again.stop();
    let mut third = Client::start(&home);
    let read = third.call(
        "thread/read",
        json!({"threadId": OLD, "includeTurns": true}),
    );
    assert_eq!(read["thread"]["gitInfo"]["sha"], json!("fff"));
    assert_eq!(read["thread"]["turns"].as_array().expect("turns").len(), 1);
    third.stop();
}

/// Walks every page of `method` from `params` on, following `nextCursor`; returns the ids of
/// each page and the pages' backwards cursors. More pages than any walk here needs (50) is a
/// failure, not a hang.
fn walk(
    client: &mut Client,
    method: &str,
    params: Value,
    key: &str,
) -> (Vec<Vec<String>>, Vec<String>) {
    let mut pages = Vec::new();
    let mut backwards = Vec::new();
    let mut params = params;
    loop {
        let page = client.call(method, params.clone());
        pages.push(ids(&page, key));
        assert!(
            pages.len() <= 50,
            "{method}: the cursors never end ({params})"
        );
        backwards.push(
            page["backwardsCursor"]
                .as_str()
                .expect("backwards")
                .to_owned(),
        );
        match page["nextCursor"].as_str() {
            Some(next) => params["cursor"] = json!(next),
            None => return (pages, backwards),
        }
    }
}

#[test]
fn turns_and_items_page_through_an_old_rollout() {
    const TURNS: usize = 23;
    let root = scratch("surface-pages");
    let (home, _) = home_and_workspace(&root);
    old_rollout(&home, TURNS);
    let mut client = Client::start(&home);
    let turn_ids: Vec<String> = (0..TURNS).map(|n| format!("t{n}")).collect();

    // Turns: newest first by default, summary view (user message and final answer).
    let first = client.call("thread/turns/list", json!({"threadId": OLD, "limit": 5}));
    assert_eq!(ids(&first, "id"), ["t22", "t21", "t20", "t19", "t18"]);
    let summary = &first["data"][0];
    assert_eq!(summary["itemsView"], json!("summary"));
    assert_eq!(summary["status"], json!("completed"));
    assert_eq!(summary["durationMs"], json!(5));
    let kinds: Vec<&Value> = summary["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| &i["type"])
        .collect();
    assert_eq!(kinds, [&json!("userMessage"), &json!("agentMessage")]);
    let (newest_first, _) = walk(
        &mut client,
        "thread/turns/list",
        json!({"threadId": OLD, "limit": 5}),
        "id",
    );
    let mut expected = turn_ids.clone();
    expected.reverse();
    assert_eq!(newest_first.concat(), expected);
    let (oldest_first, backwards) = walk(
        &mut client,
        "thread/turns/list",
        json!({"threadId": OLD, "limit": 4, "sortDirection": "asc", "itemsView": "full"}),
        "id",
    );
    assert_eq!(oldest_first.concat(), turn_ids);
    // A backwards cursor, with the other direction, starts at that page's first turn.
    let back = client.call(
        "thread/turns/list",
        json!({"threadId": OLD, "cursor": backwards[1], "sortDirection": "desc", "limit": 3, "itemsView": "notLoaded"}),
    );
    assert_eq!(ids(&back, "id"), ["t4", "t3", "t2"]);
    assert_eq!(back["data"][0]["items"], json!([]));
    let full = client.call(
        "thread/turns/list",
        json!({"threadId": OLD, "limit": 1, "sortDirection": "asc", "itemsView": "full"}),
    );
    assert_eq!(
        ids(&json!({"data": full["data"][0]["items"]}), "id"),
        ["u0", "r0", "a0"]
    );

    // Items: oldest first by default, across turns, with the turn of each.
    let items = walk(
        &mut client,
        "thread/items/list",
        json!({"threadId": OLD, "limit": 7}),
        "item",
    )
    .0
    .concat();
    assert_eq!(items.len(), TURNS * 3);
    assert_eq!(&items[..4], ["u0", "r0", "a0", "u1"]);
    let page = client.call(
        "thread/items/list",
        json!({"threadId": OLD, "limit": 2, "sortDirection": "desc"}),
    );
    assert_eq!(ids(&page, "item"), ["a22", "r22"]);
    assert_eq!(page["data"][0]["turnId"], json!("t22"));
    assert_eq!(
        page["data"][0]["completedAtMs"],
        page["data"][0]["item"]["completedAtMs"]
    );
    let one_turn = client.call(
        "thread/items/list",
        json!({"threadId": OLD, "turnId": "t7"}),
    );
    assert_eq!(ids(&one_turn, "item"), ["u7", "r7", "a7"]);
    assert_eq!(one_turn["nextCursor"], Value::Null);
    let anchored = client.call(
        "thread/items/list",
        json!({"threadId": OLD, "turnId": "t7", "cursor": {"type": "item", "itemId": "u7"}}),
    );
    assert_eq!(ids(&anchored, "item"), ["r7", "a7"]);
    let before = client.call(
        "thread/items/list",
        json!({"threadId": OLD, "turnId": "t7", "sortDirection": "desc", "cursor": {"type": "item", "itemId": "a7"}}),
    );
    assert_eq!(ids(&before, "item"), ["r7", "u7"]);

    // Bad input names the field; an unknown thread is refused.
    for bad in [json!("not-a-cursor"), json!(first["nextCursor"])] {
        names_field(
            &client.call_err("thread/items/list", json!({"threadId": OLD, "cursor": bad})),
            "cursor",
        );
    }
    names_field(
        &client.call_err(
            "thread/turns/list",
            json!({"threadId": OLD, "cursor": "%%%"}),
        ),
        "cursor",
    );
    names_field(
        &client.call_err(
            "thread/items/list",
            json!({"threadId": OLD, "cursor": {"type": "item", "itemId": "u1"}}),
        ),
        "cursor",
    );
    names_field(
        &client.call_err(
            "thread/items/list",
            json!({"threadId": OLD, "turnId": "t1", "cursor": {"type": "item", "itemId": "u2"}}),
        ),
        "cursor",
    );
    names_field(
        &client.call_err(
            "thread/items/list",
            json!({"threadId": OLD, "turnId": "t99"}),
        ),
        "turnId",
    );
    names_field(
        &client.call_err("thread/turns/list", json!({"threadId": OLD, "limit": -1})),
        "limit",
    );
    unknown_thread(
        &client.call_err("thread/turns/list", json!({"threadId": "gone"})),
        "gone",
    );
    unknown_thread(
        &client.call_err("thread/items/list", json!({"threadId": "gone"})),
        "gone",
    );
    client.stop();
}

#[test]
fn pages_follow_a_live_thread_and_an_ephemeral_one() {
    let root = scratch("surface-live-pages");
    let (home, _) = home_and_workspace(&root);
    let mut client = Client::start(&home);
    for ephemeral in [false, true] {
        let id = thread_id(&client.start_thread(json!({"cwd": "/tmp", "ephemeral": ephemeral})));
        let empty = client.call("thread/turns/list", json!({"threadId": id}));
        assert_eq!(
            empty,
            json!({"data": [], "nextCursor": null, "backwardsCursor": null})
        );
        let mut turns = Vec::new();
        for text in ["one", "two"] {
            turns.push(client.start_turn(&id, text));
            client.until_turn_completed();
        }
        let page = client.call(
            "thread/turns/list",
            json!({"threadId": id, "sortDirection": "asc"}),
        );
        assert_eq!(ids(&page, "id"), turns, "ephemeral: {ephemeral}");
        let items = client.call(
            "thread/items/list",
            json!({"threadId": id, "turnId": turns[1]}),
        );
        let first = &items["data"][0]["item"];
        assert_eq!(first["type"], json!("userMessage"), "{items}");
        assert_eq!(first["content"][0]["text"], json!("two"));
        assert!(
            items["data"].as_array().expect("data").len() >= 2,
            "{items}"
        );
    }
    client.stop();
}

#[test]
fn revert_drops_the_later_turns_for_good() {
    let root = scratch("surface-revert");
    let (home, _) = home_and_workspace(&root);
    old_rollout(&home, 5);
    let (app, mut client, mut follower) = server(&home);
    client.call("thread/resume", json!({"threadId": OLD}));
    follower.call("thread/resume", json!({"threadId": OLD}));

    let reverted = client.call(
        "thread/revert",
        json!({"threadId": OLD, "beforeTurnId": "t3"}),
    );
    assert_eq!(reverted["thread"]["id"], json!(OLD));
    assert_eq!(reverted["thread"]["turns"], json!([]));
    assert_eq!(
        client.notification("thread/reverted"),
        json!({"threadId": OLD})
    );
    assert_eq!(
        follower.notification("thread/reverted"),
        json!({"threadId": OLD})
    );
    let back = follower.call(
        "thread/turns/list",
        json!({"threadId": OLD, "sortDirection": "desc", "cursor": reverted["turnsBackwardsCursor"]}),
    );
    assert_eq!(ids(&back, "id"), ["t2", "t1", "t0"]);
    let items = client.call(
        "thread/items/list",
        json!({"threadId": OLD, "sortDirection": "desc", "limit": 2, "cursor": reverted["itemsBackwardsCursor"]}),
    );
    assert_eq!(ids(&items, "item"), ["a2", "r2"]);
    let read = client.call(
        "thread/read",
        json!({"threadId": OLD, "includeTurns": true}),
    );
    assert_eq!(
        ids(&json!({"data": read["thread"]["turns"]}), "id"),
        ["t0", "t1", "t2"]
    );
    // A new turn goes after the kept ones.
    let turn = client.start_turn(OLD, "after the revert");
    client.until_turn_completed();

    names_field(
        &client.call_err(
            "thread/revert",
            json!({"threadId": OLD, "beforeTurnId": "t4"}),
        ),
        "beforeTurnId",
    );
    names_field(
        &client.call_err("thread/revert", json!({"threadId": OLD})),
        "beforeTurnId",
    );
    unknown_thread(
        &client.call_err(
            "thread/revert",
            json!({"threadId": "nope", "beforeTurnId": "t0"}),
        ),
        "nope",
    );
    drop((client, follower));
    let (status, _) = app.terminate();
    assert!(status.success(), "{status}");

    // A restart sees the shortened thread; a thread that is not loaded reverts on disk.
    let mut again = Client::start(&home);
    let listed = again.call(
        "thread/turns/list",
        json!({"threadId": OLD, "sortDirection": "asc"}),
    );
    assert_eq!(ids(&listed, "id"), ["t0", "t1", "t2", turn.as_str()]);
    again.call(
        "thread/revert",
        json!({"threadId": OLD, "beforeTurnId": "t1"}),
    );
    let read = again.call(
        "thread/read",
        json!({"threadId": OLD, "includeTurns": true}),
    );
    assert_eq!(ids(&json!({"data": read["thread"]["turns"]}), "id"), ["t0"]);
    again.stop();
}

#[test]
fn revert_is_refused_while_a_turn_runs() {
    let root = scratch("surface-revert-busy");
    let (home, _) = home_and_workspace(&root);
    slow_model(&home);
    let mut client = Client::start(&home);
    let id = thread_id(&client.start_thread(json!({"cwd": "/tmp"})));
    let turn = client.start_turn(&id, "count slowly");
    client.notification("item/agentMessage/delta");
    let error = client.call_err(
        "thread/revert",
        json!({"threadId": id, "beforeTurnId": turn}),
    );
    assert_eq!(error["code"], json!(-32600), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("running"),
        "{error}"
    );
    client.call("turn/interrupt", json!({"threadId": id, "turnId": turn}));
    client.until_turn_completed();
    client.call(
        "thread/revert",
        json!({"threadId": id, "beforeTurnId": turn}),
    );
    let read = client.call("thread/read", json!({"threadId": id, "includeTurns": true}));
    assert_eq!(read["thread"]["turns"], json!([]));
    client.stop();
}

/// The item of the `item/completed` notifications among `seen`.
fn completed_commands(seen: &[Value]) -> Vec<Value> {
    params(seen, "item/completed")
        .into_iter()
        .map(|p| p["item"].clone())
        .filter(|i| i["type"] == json!("commandExecution"))
        .collect()
}

#[test]
fn shell_command_is_recorded_as_a_user_command_item() {
    let root = scratch("surface-shell");
    let (home, workspace) = home_and_workspace(&root);
    let cwd = workspace.to_str().expect("utf-8").to_owned();
    let (app, mut client, mut follower) = server(&home);
    let id = thread_id(&client.call(
        "thread/start",
        json!({"cwd": cwd, "sandbox": "danger-full-access"}),
    ));
    follower.call("thread/resume", json!({"threadId": id}));

    let answer = client.call(
        "thread/shellCommand",
        json!({"threadId": id, "command": "echo hello | tr a-z A-Z; echo made > made.txt"}),
    );
    assert_eq!(answer, json!({}));
    let seen = client.until_turn_completed();
    let started = params(&seen, "item/started");
    assert_eq!(started[0]["item"]["type"], json!("commandExecution"));
    assert_eq!(started[0]["item"]["source"], json!("userShell"));
    assert_eq!(started[0]["item"]["status"], json!("inProgress"));
    assert!(crate::client::deltas(&seen, "item/commandExecution/outputDelta").contains("HELLO"));
    let item = completed_commands(&seen).pop().expect("command item");
    assert_eq!(item["status"], json!("completed"), "{item}");
    assert_eq!(item["exitCode"], json!(0));
    assert_eq!(item["source"], json!("userShell"));
    assert_eq!(item["cwd"], json!(cwd));
    assert!(
        item["aggregatedOutput"]
            .as_str()
            .expect("output")
            .contains("HELLO")
    );
    assert!(workspace.join("made.txt").is_file());
    let other = follower.until_turn_completed();
    assert_eq!(
        completed_commands(&other)
            .pop()
            .expect("the follower sees it"),
        item
    );

    // Refused while something runs; bad input names the field; unknown threads are refused.
    client.call(
        "thread/shellCommand",
        json!({"threadId": id, "command": "sleep 30"}),
    );
    let busy = client.call_err(
        "thread/shellCommand",
        json!({"threadId": id, "command": "true"}),
    );
    assert_eq!(busy["code"], json!(-32600), "{busy}");
    let turn = client.notification("turn/started")["turn"]["id"].clone();
    client.call("turn/interrupt", json!({"threadId": id, "turnId": turn}));
    let done = client.notification("turn/completed");
    assert_eq!(done["turn"]["status"], json!("interrupted"));
    names_field(
        &client.call_err(
            "thread/shellCommand",
            json!({"threadId": id, "command": " "}),
        ),
        "command",
    );
    names_field(
        &client.call_err(
            "thread/shellCommand",
            json!({"threadId": id, "command": "true", "timeoutMs": -1}),
        ),
        "timeoutMs",
    );
    names_field(
        &client.call_err("thread/shellCommand", json!({"threadId": id})),
        "command",
    );
    let error = client.call_err(
        "thread/shellCommand",
        json!({"threadId": "nope", "command": "true"}),
    );
    assert_eq!(error["code"], json!(-32600), "{error}");
    drop((client, follower));
    let (status, _) = app.terminate();
    assert!(status.success(), "{status}");

    // Recorded: a restart reads the command back as an item of its own turn.
    let mut again = Client::start(&home);
    let items = again.call("thread/items/list", json!({"threadId": id}));
    let first = &items["data"][0]["item"];
    assert_eq!(first["type"], json!("commandExecution"));
    assert_eq!(first["aggregatedOutput"], item["aggregatedOutput"]);
    again.stop();
}

#[test]
fn shell_command_runs_under_the_thread_sandbox() {
    let root = scratch("surface-shell-sandbox");
    let (home, workspace) = home_and_workspace(&root);
    let cwd = workspace.to_str().expect("utf-8").to_owned();
    let mut client = Client::start(&home);
    let id = thread_id(&client.start_thread(json!({"cwd": cwd, "sandbox": "read-only"})));
    client.call(
        "thread/shellCommand",
        json!({"threadId": id, "command": "echo nope > blocked.txt"}),
    );
    let seen = client.until_turn_completed();
    let item = completed_commands(&seen).pop().expect("command item");
    assert_eq!(item["status"], json!("failed"), "{item}");
    assert!(
        !workspace.join("blocked.txt").exists(),
        "a read-only thread wrote a file"
    );
    client.stop();
}

#[test]
fn compaction_summarises_the_history_for_the_next_model_call() {
    use crate::mock_model::{MockModel, Sse};

    let mock = MockModel::start(vec![
        Sse::answer("The capital is Paris."),
        Sse::answer("SUMMARY: the user asked about the capital of France; it is Paris."),
        Sse::answer("Lyon is second."),
    ]);
    let root = scratch("surface-compact");
    let (home, _) = home_and_workspace(&root);
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\n\
         name = \"mock\"\nbase_url = \"{}\"\nrequest_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("config");
    let (app, mut client, mut follower) = server(&home);
    let id = thread_id(&client.call("thread/start", json!({"cwd": "/tmp"})));
    follower.call("thread/resume", json!({"threadId": id}));
    names_field(
        &client.call_err("thread/compact/start", json!({})),
        "threadId",
    );
    let empty = client.call_err("thread/compact/start", json!({"threadId": id}));
    assert_eq!(
        empty["code"],
        json!(-32600),
        "nothing to compact yet: {empty}"
    );
    client.start_turn(&id, "What is the capital of France?");
    client.until_turn_completed();
    follower.until_turn_completed();

    assert_eq!(
        client.call("thread/compact/start", json!({"threadId": id})),
        json!({})
    );
    let seen = client.until_turn_completed();
    let compacted = params(&seen, "thread/compacted");
    assert_eq!(compacted.len(), 1, "{seen:?}");
    assert_eq!(compacted[0]["threadId"], json!(id));
    let kinds: Vec<Value> = params(&seen, "item/completed")
        .iter()
        .map(|p| p["item"]["type"].clone())
        .collect();
    assert_eq!(kinds, [json!("agentMessage"), json!("contextCompaction")]);
    assert_eq!(follower.notification("thread/compacted"), *compacted[0]);
    let summary_request = &mock.requests()[1].body["messages"];
    let asked = summary_request.to_string();
    assert!(
        asked.contains("capital of France") && asked.contains("Summarise"),
        "{asked}"
    );

    // The next model call sees the summary, not the turns before it.
    client.start_turn(&id, "And the second city?");
    client.until_turn_completed();
    let next = mock.requests()[2].body["messages"].to_string();
    assert!(next.contains("SUMMARY: the user asked"), "{next}");
    assert!(!next.contains("What is the capital of France?"), "{next}");
    assert!(next.contains("And the second city?"), "{next}");
    unknown_thread(
        &client.call_err("thread/compact/start", json!({"threadId": "nope"})),
        "nope",
    );
    drop((client, follower));
    let (status, _) = app.terminate();
    assert!(status.success(), "{status}");

    // After a restart the thread still starts from the summary.
    mock.push(Sse::answer("Still Lyon."));
    let mut again = Client::start(&home);
    again.call("thread/resume", json!({"threadId": id}));
    again.start_turn(&id, "Sure?");
    again.until_turn_completed();
    let after = mock.requests()[3].body["messages"].to_string();
    assert!(after.contains("SUMMARY: the user asked"), "{after}");
    assert!(!after.contains("What is the capital of France?"), "{after}");
    again.stop();
}

/// Attacks the largest page of `method` (`max`) on a thread of more than `max` entries,
/// `expected` oldest first: a `limit` above `max` (just above, far above, `u32::MAX`) and a
/// `limit` of exactly `max`, in both directions, must each give pages of `max` entries (the
/// last one the rest) joined by `nextCursor`, every entry exactly once and in order.
fn pages_at_most(
    client: &mut Client,
    method: &str,
    base: &Value,
    key: &str,
    max: usize,
    expected: &[String],
) {
    assert!(
        expected.len() > max,
        "the thread must be longer than a page"
    );
    let sizes: Vec<usize> = expected.chunks(max).map(<[String]>::len).collect();
    let newest_first: Vec<String> = expected.iter().rev().cloned().collect();
    for limit in [max + 1, max * 10, u32::MAX as usize, max] {
        for (direction, want) in [("asc", expected), ("desc", newest_first.as_slice())] {
            let mut params = base.clone();
            params["limit"] = json!(limit);
            params["sortDirection"] = json!(direction);
            let (walked, _) = walk(client, method, params, key);
            let got: Vec<usize> = walked.iter().map(Vec::len).collect();
            assert_eq!(
                got, sizes,
                "{method}, limit {limit}, {direction}: page sizes"
            );
            assert_eq!(
                walked.concat(),
                want,
                "{method}, limit {limit}, {direction}: every entry once, in order"
            );
        }
    }
}

/// Promise: docs/thread-surface.md:11 (`thread/turns/list`: "`limit` … 200 at most") and
/// docs/thread-surface.md:12 (`thread/items/list`: "`limit` … 1000 at most"), enforced by
/// engine/src/threads/history.rs:266 and :354, which clamp `limit` to 200 / 1000: a larger
/// `limit` is not refused, it gets a full page and a `nextCursor` to the rest. Attacked on a
/// thread paged from its rollout (334 turns of 3 items: 1,002 items, written directly in the
/// on-disk format so no model runs), never loaded.
#[test]
fn page_limits_above_the_maximum_give_full_pages_from_the_rollout() {
    const TURNS: usize = 334;
    let root = scratch("surface-page-limits");
    let (home, _) = home_and_workspace(&root);
    old_rollout(&home, TURNS);
    let mut client = Client::start(&home);
    let turns: Vec<String> = (0..TURNS).map(|n| format!("t{n}")).collect();
    let items: Vec<String> = (0..TURNS)
        .flat_map(|n| [format!("u{n}"), format!("r{n}"), format!("a{n}")])
        .collect();
    let base = json!({"threadId": OLD});
    pages_at_most(&mut client, "thread/turns/list", &base, "id", 200, &turns);
    pages_at_most(
        &mut client,
        "thread/items/list",
        &base,
        "item",
        1000,
        &items,
    );
    // The clamp holds with the other views too (the full view carries every item of a turn).
    let full = client.call(
        "thread/turns/list",
        json!({"threadId": OLD, "limit": 201, "itemsView": "full", "sortDirection": "asc"}),
    );
    assert_eq!(ids(&full, "id"), turns[..200]);
    assert!(full["nextCursor"].is_string(), "{}", full["nextCursor"]);
    assert_eq!(
        ids(&json!({"data": full["data"][199]["items"]}), "id"),
        ["u199", "r199", "a199"]
    );
    let read = client.call("thread/read", json!({"threadId": OLD}));
    assert_eq!(read["thread"]["status"], json!({"type": "notLoaded"}));
    client.stop();
}

/// The same promises as [`page_limits_above_the_maximum_give_full_pages_from_the_rollout`]
/// (docs/thread-surface.md:11 and :12), on the other source of pages: an ephemeral thread,
/// paged from memory (docs/thread-surface.md:34). 201 fixture turns of 5 items (a user message
/// and four scripted agent messages): 1,005 items.
#[test]
fn page_limits_above_the_maximum_give_full_pages_from_memory() {
    const TURNS: usize = 201;
    let root = scratch("surface-page-limits-memory");
    let (home, _) = home_and_workspace(&root);
    crate::common::fixture_steps(
        &home,
        json!([
            {"type": "message", "deltas": ["one"]},
            {"type": "message", "deltas": ["two"]},
            {"type": "message", "deltas": ["three"]},
            {"type": "message", "deltas": ["four"]}
        ]),
        "",
    );
    let mut client = Client::start(&home);
    let id = thread_id(&client.start_thread(json!({"cwd": "/tmp", "ephemeral": true})));
    let (mut turns, mut items) = (Vec::new(), Vec::new());
    for n in 0..TURNS {
        turns.push(client.start_turn(&id, &format!("turn {n}")));
        let seen = client.until_turn_completed();
        items.extend(
            params(&seen, "item/completed")
                .iter()
                .map(|p| p["item"]["id"].as_str().expect("item id").to_owned()),
        );
    }
    assert_eq!(items.len(), TURNS * 5, "the script makes 5 items a turn");
    let base = json!({"threadId": id});
    pages_at_most(&mut client, "thread/turns/list", &base, "id", 200, &turns);
    pages_at_most(
        &mut client,
        "thread/items/list",
        &base,
        "item",
        1000,
        &items,
    );
    client.stop();
}

/// Promise: docs/thread-surface.md:14, `thread/shellCommand` `timeoutMs`: "default one hour,
/// `0` times out at once" (engine/src/turns/shell.rs:39 and :81; the deadline is
/// engine/tools/src/exec.rs:158). `0` is attacked with `sleep 20; echo late`: had `0` meant
/// "no limit" or "the default", the command would run its 20 s and print `late`, and the test
/// fails on the wait (under 10 s), the `failed` status, the missing exit code and the output.
/// Both a confined (`read-only`, through the sandbox helper) and an unconfined thread are tried.
/// The one-hour default cannot be waited out in a test; what is checked is that no `timeoutMs`
/// is not "at once" either: a 1 s command runs to its end (exit 0, its output, at least 1 s).
/// A negative `timeoutMs` is refused in `shell_command_is_recorded_as_a_user_command_item`.
#[test]
fn shell_command_timeout_zero_times_out_at_once() {
    use std::time::{Duration, Instant};

    let root = scratch("surface-shell-timeout");
    let (home, workspace) = home_and_workspace(&root);
    let cwd = workspace.to_str().expect("utf-8").to_owned();
    let mut client = Client::start(&home);
    for sandbox in ["danger-full-access", "read-only"] {
        let id = thread_id(&client.start_thread(json!({"cwd": cwd, "sandbox": sandbox})));
        let asked = Instant::now();
        let answer = client.call(
            "thread/shellCommand",
            json!({"threadId": id, "command": "sleep 20; echo late", "timeoutMs": 0}),
        );
        assert_eq!(answer, json!({}), "timeoutMs 0 is accepted ({sandbox})");
        let seen = client.until_turn_completed();
        let waited = asked.elapsed();
        let item = completed_commands(&seen).pop().expect("command item");
        assert!(
            waited < Duration::from_secs(10),
            "timeoutMs 0 let the command run {waited:?} ({sandbox}): {item}"
        );
        assert_eq!(item["status"], json!("failed"), "{sandbox}: {item}");
        assert_eq!(
            item["exitCode"],
            Value::Null,
            "killed, no exit code ({sandbox}): {item}"
        );
        let ran = item["durationMs"].as_i64().expect("durationMs");
        assert!(ran < 5_000, "{sandbox}: ran {ran} ms: {item}");
        let output = item["aggregatedOutput"].as_str().unwrap_or_default();
        assert!(!output.contains("late"), "{sandbox}: {output}");

        // Without `timeoutMs` (the default) a command is not cut short.
        client.call(
            "thread/shellCommand",
            json!({"threadId": id, "command": "sleep 1; echo done"}),
        );
        let seen = client.until_turn_completed();
        let item = completed_commands(&seen).pop().expect("command item");
        assert_eq!(item["status"], json!("completed"), "{sandbox}: {item}");
        assert_eq!(item["exitCode"], json!(0), "{sandbox}: {item}");
        assert!(
            item["durationMs"].as_i64().expect("durationMs") >= 1_000,
            "{item}"
        );
        let output = item["aggregatedOutput"].as_str().expect("output");
        assert!(output.contains("done"), "{sandbox}: {output}");
    }
    client.stop();
}
