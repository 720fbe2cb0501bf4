//! One suite, both thread stores: every test here runs once on the embedded store and once on
//! PostgreSQL (a database of its own in the test cluster), through the real binary, and must
//! see the same answers. A server restarted on PostgreSQL gets a fresh `AGENTWIRE_HOME`, so
//! each test also shows that nothing the first server kept locally is needed: another worker
//! takes over.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::scratch;
use crate::stores::Store;

/// A test's servers: each new one after the first gets its own home on PostgreSQL and the
/// same home on the embedded store.
struct Servers {
    store: Store,
    name: String,
    homes: Vec<PathBuf>,
}

impl Servers {
    fn new(store: &Store, name: &str) -> Self {
        Self {
            store: store.clone(),
            name: name.to_owned(),
            homes: Vec::new(),
        }
    }

    /// Starts the next server.
    fn start(&mut self) -> Client {
        let home = match (&self.store, self.homes.first()) {
            (Store::Embedded, Some(home)) => home.clone(),
            _ => {
                let home = scratch(&format!("{}-{}", self.name, self.homes.len()));
                self.homes.push(home.clone());
                home
            }
        };
        Client::start_with(&home, &self.store.args())
    }

    /// A project directory for threads to run in.
    fn project(&self, name: &str) -> String {
        let dir = scratch(&format!("{}-project-{name}", self.name));
        dir.to_string_lossy().into_owned()
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        for home in &self.homes {
            let _ = std::fs::remove_dir_all(home);
        }
    }
}

/// Runs one turn with `text` on `thread`; returns the completed turn.
fn turn(client: &mut Client, thread: &str, text: &str) -> Value {
    client.notifications.clear();
    client.start_turn(thread, text);
    let completed = client.notification("turn/completed")["turn"].clone();
    assert_eq!(completed["status"], json!("completed"), "{completed}");
    client.notifications.clear();
    completed
}

/// Every thread of `thread/list` with `params`, page by page (`limit` per page).
fn list_all(client: &mut Client, params: Value, limit: u32) -> Vec<Value> {
    let mut all = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut page_params = params.clone();
        page_params["limit"] = json!(limit);
        page_params["cursor"] = cursor;
        let page = client.call("thread/list", page_params);
        let data = page["data"].as_array().expect("data");
        assert!(data.len() <= limit as usize, "{page}");
        all.extend(data.iter().cloned());
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            return all;
        }
    }
}

/// The ids of `threads`.
fn ids(threads: &[Value]) -> Vec<String> {
    threads
        .iter()
        .map(|t| t["id"].as_str().expect("id").to_owned())
        .collect()
}

/// Thread `id` read back with its turns.
fn read(client: &mut Client, id: &str) -> Value {
    client.call("thread/read", json!({"threadId": id, "includeTurns": true}))["thread"].clone()
}

/// What a listed thread says that does not depend on the server that lists it.
fn stored_view(thread: &Value) -> Value {
    let mut view = thread.clone();
    if let Some(fields) = view.as_object_mut() {
        fields.remove("status");
    }
    view
}

fn threads_outlive_their_server(store: &Store) {
    let mut servers = Servers::new(store, "store-outlive");
    let project = servers.project("p");
    let mut first = servers.start();
    let thread = thread_id(&first.start_thread(json!({"cwd": project})));
    let hello = turn(&mut first, &thread, "Hello, store.");
    first.call(
        "thread/name/set",
        json!({"threadId": thread, "name": "Named thread"}),
    );
    first.call(
        "thread/metadata/update",
        json!({"threadId": thread, "gitInfo": {"branch": "main"}}),
    );
    let listed_first = first.call("thread/list", json!({}))["data"].clone();
    assert_eq!(
        ids(listed_first.as_array().expect("data")),
        std::slice::from_ref(&thread)
    );
    let listed = &listed_first[0];
    assert_eq!(listed["name"], json!("Named thread"), "{listed}");
    assert_eq!(listed["preview"], json!("Hello, store."), "{listed}");
    assert_eq!(listed["gitInfo"]["branch"], json!("main"), "{listed}");
    let read_first = read(&mut first, &thread);
    first.stop();

    let mut second = servers.start();
    let listed_second = second.call("thread/list", json!({}))["data"].clone();
    assert_eq!(
        stored_view(&listed_second[0]),
        stored_view(listed),
        "the next server lists the thread as the first did"
    );
    assert_eq!(listed_second[0]["status"], json!({"type": "notLoaded"}));
    let read_second = read(&mut second, &thread);
    assert_eq!(
        read_second["turns"], read_first["turns"],
        "the turns read back are the turns that ran"
    );
    let turns = read_second["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0]["id"], hello["id"]);
    assert_eq!(turns[0]["items"][0]["type"], json!("userMessage"));

    // Resumed, it takes another turn, and its history pages the same way on either store.
    let resumed = second.call("thread/resume", json!({"threadId": thread}));
    assert_eq!(resumed["thread"]["turns"], read_first["turns"]);
    let again = turn(&mut second, &thread, "Again.");
    let newest = second.call("thread/turns/list", json!({"threadId": thread, "limit": 1}));
    assert_eq!(newest["data"][0]["id"], again["id"], "{newest}");
    let cursor = newest["nextCursor"].clone();
    assert!(cursor.is_string(), "a second page: {newest}");
    let older = second.call(
        "thread/turns/list",
        json!({"threadId": thread, "limit": 1, "cursor": cursor}),
    );
    assert_eq!(older["data"][0]["id"], hello["id"], "{older}");
    assert_eq!(older["nextCursor"], Value::Null, "{older}");
    let items = second.call("thread/items/list", json!({"threadId": thread}));
    let listed_items: Vec<Value> = items["data"]
        .as_array()
        .expect("items")
        .iter()
        .map(|entry| entry["item"].clone())
        .collect();
    let read_items: Vec<Value> = read(&mut second, &thread)["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .flat_map(|t| t["items"].as_array().cloned().unwrap_or_default())
        .collect();
    assert!(read_items.len() >= 4, "both turns' items: {read_items:?}");
    assert_eq!(
        listed_items, read_items,
        "every item of both turns, in order"
    );
    second.stop();
}

fn lists_filter_and_page_alike(store: &Store) {
    let mut servers = Servers::new(store, "store-list");
    let (a, b) = (servers.project("a"), servers.project("b"));
    let mut client = servers.start();
    let mut created = Vec::new();
    for n in 0..5 {
        let cwd = if n % 2 == 0 { &a } else { &b };
        let thread = thread_id(&client.start_thread(json!({"cwd": cwd})));
        turn(&mut client, &thread, &format!("Topic {n}."));
        created.push(thread);
    }
    let newest_first: Vec<String> = created.iter().rev().cloned().collect();
    assert_eq!(ids(&list_all(&mut client, json!({}), 2)), newest_first);
    let oldest_first = list_all(&mut client, json!({"sortDirection": "asc"}), 2);
    assert_eq!(ids(&oldest_first), created);
    let in_a = list_all(&mut client, json!({"cwd": a}), 2);
    assert_eq!(
        ids(&in_a),
        [created[4].clone(), created[2].clone(), created[0].clone()]
    );
    let found = list_all(&mut client, json!({"searchTerm": "topic 3"}), 10);
    assert_eq!(ids(&found), [created[3].clone()]);

    // Archived threads leave the list for the archive, and come back.
    client.call("thread/archive", json!({"threadId": created[0]}));
    let live = list_all(&mut client, json!({}), 10);
    assert!(!ids(&live).contains(&created[0]), "archived: {live:?}");
    let archived = list_all(&mut client, json!({"archived": true}), 10);
    assert_eq!(ids(&archived), [created[0].clone()]);
    let refused = client.call_err("thread/resume", json!({"threadId": created[0]}));
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("archived")),
        "{refused}"
    );
    client.call("thread/unarchive", json!({"threadId": created[0]}));
    assert_eq!(ids(&list_all(&mut client, json!({}), 10)), newest_first);
    assert!(list_all(&mut client, json!({"archived": true}), 10).is_empty());

    // A restarted server (another worker, on PostgreSQL) lists exactly the same.
    let before: Vec<Value> = list_all(&mut client, json!({}), 10)
        .iter()
        .map(stored_view)
        .collect();
    client.stop();
    let mut next = servers.start();
    let after: Vec<Value> = list_all(&mut next, json!({}), 3)
        .iter()
        .map(stored_view)
        .collect();
    assert_eq!(after, before);
    next.stop();
}

fn forks_reverts_and_deletes_alike(store: &Store) {
    let mut servers = Servers::new(store, "store-fork");
    let project = servers.project("p");
    let mut client = servers.start();
    let thread = thread_id(&client.start_thread(json!({"cwd": project})));
    let one = turn(&mut client, &thread, "One.");
    let two = turn(&mut client, &thread, "Two.");
    let fork = client.call(
        "thread/fork",
        json!({"threadId": thread, "lastTurnId": one["id"]}),
    );
    let fork_id = thread_id(&fork);
    client.notifications.clear();
    let reverted = client.call(
        "thread/revert",
        json!({"threadId": thread, "beforeTurnId": two["id"]}),
    );
    assert!(reverted["turnsBackwardsCursor"].is_string(), "{reverted}");
    let read_back = read(&mut client, &thread);
    assert_eq!(
        ids(read_back["turns"].as_array().expect("turns")),
        [one["id"].as_str().expect("id").to_owned()]
    );
    client.stop();

    let mut next = servers.start();
    for id in [&thread, &fork_id] {
        let turns = read(&mut next, id)["turns"].clone();
        let turns = turns.as_array().expect("turns");
        assert_eq!(turns.len(), 1, "{id}: {turns:?}");
        assert_eq!(turns[0]["items"], read_back["turns"][0]["items"], "{id}");
    }
    let pages = next.call("thread/turns/list", json!({"threadId": thread}));
    assert_eq!(pages["data"].as_array().map(Vec::len), Some(1), "{pages}");
    next.call("thread/delete", json!({"threadId": fork_id}));
    let gone = next.call_err("thread/read", json!({"threadId": fork_id}));
    assert!(
        gone["message"]
            .as_str()
            .is_some_and(|m| m.contains("not found")),
        "{gone}"
    );
    assert_eq!(
        ids(&list_all(&mut next, json!({}), 10)),
        std::slice::from_ref(&thread)
    );
    next.stop();
}

/// Declares each test once per store.
macro_rules! on_both_stores {
    ($($test:ident),* $(,)?) => {
        mod embedded {
            $(#[test]
            fn $test() {
                super::$test(&crate::stores::Store::Embedded);
            })*
        }
        mod postgres {
            $(#[test]
            fn $test() {
                super::$test(&crate::stores::Store::postgres(stringify!($test)));
            })*
        }
    };
}

on_both_stores!(
    threads_outlive_their_server,
    lists_filter_and_page_alike,
    forks_reverts_and_deletes_alike,
);

/// Only PostgreSQL keeps the threads outside the home: nothing is written under it.
#[test]
fn postgres_threads_leave_the_home_alone() {
    let store = Store::postgres("home_alone");
    let mut servers = Servers::new(&store, "store-home-alone");
    let project = servers.project("p");
    let mut client = servers.start();
    let thread = thread_id(&client.start_thread(json!({"cwd": project})));
    turn(&mut client, &thread, "Hello.");
    let home = servers.homes[0].clone();
    client.stop();
    assert!(
        !home.join("sessions").exists() && !home.join("state.sqlite").exists(),
        "no rollout and no index under the home"
    );
    let rows = store.query(&format!(
        "SELECT count(*) FROM agentwire_records WHERE thread_id = '{thread}'"
    ));
    assert!(
        rows.trim().parse::<u32>().is_ok_and(|n| n >= 3),
        "the thread record, the turn and its items are rows: {rows}"
    );
}

/// Makes `home`'s fixture model answer every turn with one message of `deltas` deltas,
/// `delay_ms` apart: long enough to act on another worker while a turn runs.
fn slow_model(home: &std::path::Path, deltas: usize, delay_ms: u64) {
    let script = json!({
        "version": 1,
        "deltaDelayMs": delay_ms,
        "responses": [{"steps": [{"type": "message", "deltas": vec!["tick "; deltas]}]}]
    });
    std::fs::write(home.join("slow.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"slow.json\"\n",
    )
    .expect("write config");
}

/// Two workers on one database: a turn runs on one worker at a time (the other is refused,
/// naming why), the other lists and reads the thread meanwhile without settling the running
/// turn, and once it is done takes the thread over and continues it from every turn recorded.
#[test]
fn two_workers_share_threads_and_run_one_turn_at_a_time() {
    let store = Store::postgres("two_workers");
    let (home_a, home_b) = (scratch("two-workers-a"), scratch("two-workers-b"));
    for home in [&home_a, &home_b] {
        slow_model(home, 8, 60);
    }
    let project = scratch("two-workers-project");
    let mut a = Client::start_with(&home_a, &store.args());
    let mut b = Client::start_with(&home_b, &store.args());
    let thread = thread_id(&a.start_thread(json!({"cwd": project})));
    let first = turn(&mut a, &thread, "First, on A.");

    // A second turn runs on A; B sees the thread, and the turn as running.
    let second = a.start_turn(&thread, "Second, on A.");
    a.notification("item/agentMessage/delta");
    let on_a = a.call("thread/list", json!({}))["data"].clone();
    let on_b = b.call("thread/list", json!({}))["data"].clone();
    assert_eq!(
        on_b.as_array()
            .map(|l| l.iter().map(stored_view).collect::<Vec<_>>()),
        on_a.as_array()
            .map(|l| l.iter().map(stored_view).collect::<Vec<_>>()),
        "thread/list is the same from every worker"
    );
    let resumed = b.call("thread/resume", json!({"threadId": thread}));
    let turns = resumed["thread"]["turns"]
        .as_array()
        .expect("turns")
        .clone();
    assert_eq!(turns.len(), 2, "{resumed}");
    assert_eq!(turns[0]["id"], first["id"]);
    assert_eq!(turns[1]["id"], json!(second));
    assert_eq!(
        turns[1]["status"],
        json!("inProgress"),
        "a turn running on another worker is not settled as interrupted"
    );
    let refused = b.call_err(
        "turn/start",
        json!({"threadId": thread, "input": [{"type": "text", "text": "Meanwhile, on B."}]}),
    );
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("another server")),
        "{refused}"
    );
    let done = a.notification("turn/completed")["turn"].clone();
    assert_eq!(done["status"], json!("completed"), "{done}");
    // B, following the thread since it resumed it, saw the turn end live.
    let relayed = b.notification("turn/completed")["turn"].clone();
    assert_eq!(relayed["id"], json!(second), "{relayed}");

    // Now B may run the next turn, and it starts from both of A's turns.
    let third = turn(&mut b, &thread, "Third, on B.");
    let read_b = read(&mut b, &thread);
    let statuses: Vec<(Value, Value)> = read_b["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .map(|t| (t["id"].clone(), t["status"].clone()))
        .collect();
    assert_eq!(
        statuses,
        [
            (first["id"].clone(), json!("completed")),
            (json!(second), json!("completed")),
            (third["id"].clone(), json!("completed")),
        ]
    );
    // A, with the thread still loaded, reads what B added.
    let read_a = read(&mut a, &thread);
    assert_eq!(
        read_a["turns"], read_b["turns"],
        "both workers read the same history"
    );
    a.stop();
    b.stop();
    for dir in [home_a, home_b, project] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `--store` takes `embedded` or a PostgreSQL URL; anything else stops the server at start,
/// naming what is accepted.
#[test]
fn a_store_url_of_another_kind_is_refused_at_start() {
    let home = scratch("store-refused");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["app-server", "--store", "mysql://root:hunter2@db/agentwire"])
        .env("AGENTWIRE_HOME", &home)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run agentwire");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("--store") && stderr.contains("postgres://"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "the password leaks: {stderr}");
    let _ = std::fs::remove_dir_all(&home);
}

/// A database that cannot be reached leaves the server serving: stored-thread requests answer
/// -32603 naming the store (without its password), ephemeral threads still work.
#[test]
fn an_unreachable_database_is_reported_by_every_stored_request() {
    let home = scratch("store-unreachable");
    // Nothing listens on port 1 of loopback.
    let url = "postgres://agentwire:hunter2@127.0.0.1:1/agentwire?connect_timeout=2";
    let mut client = Client::start_with(&home, &["--store", url]);
    let refused = client.request("thread/start", json!({}));
    let error = refused.expect_err("no store to keep the thread in");
    assert_eq!(error["code"], json!(-32603), "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("cannot connect to postgres://agentwire:***@127.0.0.1:1/agentwire"),
        "{message}"
    );
    let listed = client.request("thread/list", json!({}));
    assert_eq!(listed.expect_err("no list")["code"], json!(-32603));
    let ephemeral = client.start_thread(json!({"ephemeral": true}));
    assert_eq!(ephemeral["thread"]["ephemeral"], json!(true));
    let log = client.stop();
    assert!(
        !log.contains("hunter2"),
        "the password leaks into the log: {log}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// A database migrated by a newer agentwire is left alone, and the server says why.
#[test]
fn a_database_with_a_newer_schema_is_refused_naming_both_versions() {
    let store = Store::postgres("newer_schema");
    let home = scratch("store-newer");
    // A first start creates the schema; then a newer release records its migration.
    Client::start_with(&home, &store.args()).stop();
    store.query("INSERT INTO agentwire_schema (version) VALUES (99)");
    let mut client = Client::start_with(&home, &store.args());
    let error = client
        .request("thread/list", json!({}))
        .expect_err("the store is refused");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("version 99") && message.contains("(1)"),
        "{message}"
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&home);
}

/// The store is read from `[store] url` in `config.toml` when the command line names none.
#[test]
fn the_store_comes_from_config_toml() {
    let store = Store::postgres("from_config");
    let Store::Postgres(url) = &store else {
        unreachable!("a PostgreSQL store")
    };
    let home = scratch("store-config");
    std::fs::write(
        home.join("config.toml"),
        format!("[store]\nurl = \"{url}\"\n"),
    )
    .expect("write config");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"ephemeral": false})));
    turn(&mut client, &thread, "Kept in PostgreSQL.");
    client.stop();
    let rows = store.query(&format!(
        "SELECT preview FROM agentwire_threads WHERE id = '{thread}'"
    ));
    assert_eq!(rows.trim(), "Kept in PostgreSQL.");
    let _ = std::fs::remove_dir_all(&home);
}
