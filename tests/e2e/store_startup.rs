//! The PostgreSQL store's start-up, through the binary, as docs/deployment.md promises it: a
//! worker whose database accepts the connection and never answers gives up after 10 s (or the
//! URL's `connect_timeout`) and still serves, answering -32603 for stored threads; and workers
//! that start together on an empty database apply each migration once.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{scratch, signal};
use crate::stores::Store;

/// Longer than any worker may take to give up on a silent database: past it, the worker is
/// taken to hang and the test fails (a correctness bound, not a performance claim).
const HANG: Duration = Duration::from_secs(30);

/// A server on loopback that accepts every connection and holds it open without ever writing:
/// the TCP connect succeeds, the PostgreSQL start-up never completes. Its port.
fn silent_database() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("the bound address").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            match stream {
                Ok(stream) => held.push(stream),
                Err(_) => return,
            }
        }
    });
    port
}

/// `initialize` and `initialized`, as [`Client::start_with`] does after the spawn.
fn handshake(client: &mut Client) {
    client.call(
        "initialize",
        json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}, "capabilities": null}),
    );
    client.send(&json!({"method": "initialized"}));
}

/// Starts a worker on the store `url` and asks it for a stored thread; returns the worker, its
/// answer and how long after the spawn that answer came (the worker connects before it serves,
/// so the wait falls on the handshake). A worker that has not answered within [`HANG`] is
/// killed and the test fails.
fn start_and_ask(home: &Path, url: &str) -> (Client, Result<Value, Value>, Duration) {
    let spawned = Instant::now();
    let mut client = Client::spawn_with(home, &["--store", url]);
    let pid = client.pid();
    let (answered, answer) = mpsc::channel();
    let asking = std::thread::spawn(move || {
        handshake(&mut client);
        let started = client.request("thread/start", json!({"ephemeral": false}));
        let _ = answered.send(spawned.elapsed());
        (client, started)
    });
    let Ok(elapsed) = answer.recv_timeout(HANG) else {
        signal(pid, "KILL");
        panic!("the worker still had not given up connecting after {HANG:?}");
    };
    let (client, started) = asking.join().expect("the asking thread");
    (client, started, elapsed)
}

/// Checks that `started` is the -32603 of a store that cannot be reached on `port`, naming it
/// without its password.
fn assert_unreachable(started: Result<Value, Value>, port: u16) {
    let error = started.expect_err("no store to keep the thread in");
    assert_eq!(error["code"], json!(-32603), "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    let store = format!("cannot connect to postgres://agentwire:***@127.0.0.1:{port}/agentwire");
    assert!(message.contains(&store), "{message}");
    assert!(
        !message.contains("hunter2"),
        "the password leaks: {message}"
    );
}

/// Without `connect_timeout` in the URL, a worker whose database accepts the connection and
/// never answers gives up after 10 s, not never; then it serves: a stored thread is refused
/// with the reason, an ephemeral one starts. With `connect_timeout=2`, it gives up after 2 s.
#[test]
fn a_database_that_accepts_and_never_answers_is_given_up_after_10_s() {
    let port = silent_database();
    let home = scratch("store-silent");

    let url = format!("postgres://agentwire:hunter2@127.0.0.1:{port}/agentwire");
    let (mut client, started, elapsed) = start_and_ask(&home, &url);
    assert_unreachable(started, port);
    assert!(
        elapsed >= Duration::from_secs(9),
        "gave up after {elapsed:?}, before the 10 s default"
    );
    eprintln!("no connect_timeout: gave up after {elapsed:?}");
    let ephemeral = client.start_thread(json!({"ephemeral": true}));
    assert_eq!(ephemeral["thread"]["ephemeral"], json!(true), "{ephemeral}");
    let log = client.stop();
    assert!(!log.contains("hunter2"), "the password leaks into the log");

    let url = format!("{url}?connect_timeout=2");
    let (mut client, started, elapsed) = start_and_ask(&home, &url);
    assert_unreachable(started, port);
    assert!(
        (Duration::from_millis(1500)..Duration::from_secs(9)).contains(&elapsed),
        "gave up after {elapsed:?} with connect_timeout=2"
    );
    eprintln!("connect_timeout=2: gave up after {elapsed:?}");
    let ephemeral = client.start_thread(json!({"ephemeral": true}));
    assert_eq!(ephemeral["thread"]["ephemeral"], json!(true), "{ephemeral}");
    client.stop();
    let _ = std::fs::remove_dir_all(&home);
}

/// How many workers start together.
const WORKERS: usize = 8;

/// The migration versions the engine declares (`MIGRATIONS` in
/// engine/store/src/postgres/schema.rs).
const VERSIONS: &[i32] = &[1];

/// Eight workers started at once on an empty database all come up on it: each keeps a thread
/// there, every one lists all eight, `agentwire_schema` records each migration once, and no
/// worker logs a failed migration.
#[test]
fn eight_workers_starting_together_on_an_empty_database_migrate_it_once() {
    let store = Store::postgres("eight_workers_migrate");
    // Every DDL statement in the database waits half a second before its transaction goes on
    // (an event trigger, the only thing in it), so that what one worker creates stays
    // uncommitted while the others start, however their starts spread.
    store.query(
        "CREATE FUNCTION slow_ddl() RETURNS event_trigger LANGUAGE plpgsql \
         AS $$ BEGIN PERFORM pg_sleep(0.5); END $$",
    );
    store.query("CREATE EVENT TRIGGER slow_ddl ON ddl_command_end EXECUTE FUNCTION slow_ddl()");
    let homes: Vec<PathBuf> = (0..WORKERS)
        .map(|n| scratch(&format!("store-migrate-{n}")))
        .collect();
    // Spawned without waiting on any: they connect and migrate side by side.
    let mut workers: Vec<Client> = homes
        .iter()
        .map(|home| Client::spawn_with(home, &store.args()))
        .collect();
    let mut threads = Vec::new();
    for worker in &mut workers {
        handshake(worker);
        threads.push(thread_id(&worker.start_thread(json!({"ephemeral": false}))));
    }
    threads.sort();

    for worker in &mut workers {
        let page = worker.call("thread/list", json!({"limit": 100}));
        let mut listed: Vec<String> = page["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|thread| thread["id"].as_str().expect("id").to_owned())
            .collect();
        listed.sort();
        assert_eq!(listed, threads, "every worker lists the eight threads");
    }

    let recorded = store
        .query("SELECT version, count(*) FROM agentwire_schema GROUP BY version ORDER BY version");
    let expected: String = VERSIONS.iter().map(|v| format!("{v}|1\n")).collect();
    assert_eq!(recorded, expected, "each migration recorded once");

    for worker in workers {
        let log = worker.stop();
        for alarm in [
            "ERROR",
            "panicked",
            "migration",
            "unavailable",
            "already exists",
        ] {
            assert!(!log.contains(alarm), "a worker logged {alarm:?}:\n{log}");
        }
    }
    for home in homes {
        let _ = std::fs::remove_dir_all(home);
    }
}
