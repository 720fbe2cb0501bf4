//! Payloads on the relay channel that no worker published: forged or malformed `NOTIFY`s
//! (`docs/deployment.md`, "Following a turn from any worker"), sent with `psql` into the database
//! two workers share while a turn runs on one of them and a client follows it on the other. And
//! the connections a worker holds to that database, the relay's two among them.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, params, resolved, thread_id};
use crate::follow_live::TwoHomes;
use crate::stores::Store;

/// The channel the workers publish and listen on (`relay.rs`, `CHANNEL`).
const CHANNEL: &str = "agentwire_events";

/// The origin every forged payload claims: no worker's.
const FORGED: &str = "forged0origin";

/// How long a log line or a notification may take to show.
const WAIT: Duration = Duration::from_secs(20);

/// Publishes `payloads` on the relay channel in one transaction, in order, as a worker's
/// publisher does, but from a session of `psql`.
fn inject(store: &Store, payloads: &[String]) {
    let notifies: Vec<String> = payloads
        .iter()
        .map(|payload| {
            assert!(!payload.contains("$forged$"), "{payload}");
            format!("pg_notify('{CHANNEL}', $forged${payload}$forged$)")
        })
        .collect();
    store.query(&format!("SELECT {}", notifies.join(", ")));
}

/// One relay payload: the header line (`relay.rs`'s module doc) and `body`.
fn payload(seq: u64, part: usize, parts: usize, method: &str, thread: &str, body: &str) -> String {
    format!("{FORGED} {seq} {part} {parts} {method} {thread}\n{body}")
}

/// A well-formed `item/agentMessage/delta` message of `turn` in `thread`, with `delta`.
fn delta_message(thread: &str, turn: &str, delta: &str) -> String {
    json!({"method": "item/agentMessage/delta", "params": {
        "threadId": thread, "turnId": turn, "itemId": "forged-item", "delta": delta}})
    .to_string()
}

/// Waits until `client`'s log holds each line of `lines` (a text and how many times it shows);
/// fails naming those that fall short.
fn await_log(client: &Client, who: &str, lines: &[(&str, usize)]) {
    let deadline = Instant::now() + WAIT;
    loop {
        let log = client.stderr();
        let short: Vec<(&str, usize, usize)> = lines
            .iter()
            .map(|&(line, want)| (line, want, log.matches(line).count()))
            .filter(|(_, want, got)| got < want)
            .collect();
        if short.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            panic!("{who} logged too few of (line, wanted, seen) {short:?}:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A `psql` session listening on the relay channel, to learn what the workers publish (the id
/// of an ask, say). Killed when dropped.
struct Sniffer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    marks: usize,
}

impl Sniffer {
    /// Listens on the relay channel of `store`'s database, from before it returns.
    fn listen(store: &Store) -> Self {
        let Store::Postgres(url) = store else {
            unreachable!("Store::postgres")
        };
        let mut child = Command::new("psql")
            .args([url.as_str(), "-XAt"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run psql");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().expect("stdin is piped");
        let mut sniffer = Self {
            child,
            stdin,
            lines,
            marks: 0,
        };
        sniffer.heard(&format!("LISTEN {CHANNEL};"));
        sniffer
    }

    /// Runs `sql` and returns everything `psql` printed since: what was published on the
    /// channel before `sql` ran included (`psql` prints it after the next statement).
    fn heard(&mut self, sql: &str) -> String {
        self.marks += 1;
        let mark = format!("mark-{}", self.marks);
        writeln!(self.stdin, "{sql}\nSELECT 'flush';\nSELECT '{mark}';").expect("write to psql");
        self.stdin.flush().expect("flush psql");
        let deadline = Instant::now() + WAIT;
        let mut printed = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == mark => return printed,
                Ok(line) => {
                    printed.push_str(&line);
                    printed.push('\n');
                }
                Err(RecvTimeoutError::Timeout) => panic!("psql did not answer in time"),
                Err(RecvTimeoutError::Disconnected) => panic!("psql ended"),
            }
        }
    }
}

impl Drop for Sniffer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The id of the ask of request `method` on `thread` in what `psql` printed of the channel.
fn ask_of(printed: &str, method: &str, thread: &str) -> String {
    let header = format!(" {method} {thread}\n{{\"ask\":\"");
    let at = printed
        .find(&header)
        .unwrap_or_else(|| panic!("no ask of {method} was published:\n{printed}"));
    let rest = &printed[at + header.len()..];
    rest[..rest.find('"').expect("the ask id ends")].to_owned()
}

/// The `delta`s of every `item/agentMessage/delta` in `seen`, in order.
fn message_deltas(seen: &[Value]) -> Vec<String> {
    params(seen, "item/agentMessage/delta")
        .iter()
        .map(|p| p["delta"].as_str().expect("delta").to_owned())
        .collect()
}

/// Payloads that are not what a worker publishes (garbage, a header whose part count is not a
/// count, a fragment out of turn, a method that is not a server notification, a message that
/// is not the JSON-RPC form of its method) are dropped and logged by both workers, which serve
/// on: the turn running on A streams to its end, followed on B. Each would deliver a marked
/// delta if it were let through; none reaches a client. The control, a well-formed delta
/// claiming a made-up origin, sent last in the same transaction, does reach the followers on
/// both workers: the doc promises no refusal of what a role that may `NOTIFY` sends, only checks
/// of its form. It also shows that the payloads before it were all handled by then.
#[test]
fn malformed_payloads_on_the_relay_channel_are_dropped_and_logged_and_the_workers_serve_on() {
    let store = Store::postgres("relay_forged_malformed");
    let ticks: Vec<String> = (0..60).map(|n| format!("tick {n} ")).collect();
    let script = json!({"version": 1, "deltaDelayMs": 50,
        "responses": [{"steps": [{"type": "message", "deltas": ticks}]}]});
    let TwoHomes {
        root,
        home_a,
        workspace,
        home_b,
    } = TwoHomes::new("relay-forged-malformed", &script);
    let mut a = Client::start_with(&home_a, &store.args());
    let mut b = Client::start_with(&home_b, &store.args());
    let thread = thread_id(&a.start_thread(json!({"cwd": workspace})));
    let turn = a.start_turn(&thread, "Stream for a while.");
    a.notification("item/agentMessage/delta");
    b.call("thread/resume", json!({"threadId": thread}));
    b.notification("item/agentMessage/delta");

    // Each would be handed to the followers as a delta marked `dropped`, were it let through.
    let marked = |why: &str| delta_message(&thread, &turn, &format!("dropped: {why}"));
    let whole = marked("no parts");
    let split = marked("out of turn");
    let (head, tail) = split.split_at(split.len() / 2);
    let delta = "item/agentMessage/delta";
    let not_a_notification = json!({"method": "turn/start", "params": {
        "threadId": thread, "turnId": turn, "itemId": "forged-item", "delta": "dropped"}});
    let other_method = json!({"method": "turn/started", "params": {
        "threadId": thread, "turnId": turn, "itemId": "forged-item", "delta": "dropped: other"}});
    let control = delta_message(&thread, &turn, "forged but well-formed");
    inject(
        &store,
        &[
            // Garbage: no header line; a header that is not one.
            "dropped: garbage".to_owned(),
            format!("{FORGED} one 0 1 {delta} {thread}\n{}", marked("seq")),
            // A part count of zero (part 0 is not below it).
            payload(2, 0, 0, delta, &thread, &whole),
            // A fragment out of turn: part 2 of 3 right after part 0 (joined, they would make a
            // whole delta), then part 1, whose start is gone.
            payload(3, 0, 3, delta, &thread, head),
            payload(3, 2, 3, delta, &thread, tail),
            payload(3, 1, 3, delta, &thread, ""),
            // A client request, not a server notification; a method there is not.
            payload(
                4,
                0,
                1,
                "turn/start",
                &thread,
                &not_a_notification.to_string(),
            ),
            payload(5, 0, 1, "no/such", &thread, &marked("no such method")),
            // Another method's message under a delta's header; a body that does not parse.
            payload(6, 0, 1, delta, &thread, &other_method.to_string()),
            payload(7, 0, 1, delta, &thread, &marked("cut")[..40]),
            payload(8, 0, 1, delta, &thread, &control),
        ],
    );

    let (on_a, on_b) = (a.until_turn_completed(), b.until_turn_completed());
    for (worker, seen) in [("A", &on_a), ("B", &on_b)] {
        let deltas = message_deltas(seen);
        let dropped: Vec<&String> = deltas.iter().filter(|d| d.contains("dropped")).collect();
        assert!(dropped.is_empty(), "{worker} was handed {dropped:?}");
        let forged = params(seen, "item/agentMessage/delta")
            .into_iter()
            .filter(|p| p["itemId"] == json!("forged-item"))
            .count();
        assert_eq!(
            forged, 1,
            "{worker}'s client gets the well-formed forged delta, once"
        );
        let done = completed_turn(seen);
        assert_eq!(done["id"], json!(turn), "{worker}");
        assert_eq!(done["status"], json!("completed"), "{worker}: {done}");
    }
    let ticks: Vec<String> = (0..60).map(|n| format!("tick {n} ")).collect();
    let streamed: Vec<String> = message_deltas(&on_a)
        .into_iter()
        .filter(|d| d.starts_with("tick"))
        .collect();
    assert_eq!(streamed, ticks[1..], "A's client gets its turn whole");
    let followed: Vec<String> = message_deltas(&on_b)
        .into_iter()
        .filter(|d| d.starts_with("tick"))
        .collect();
    assert_eq!(
        followed,
        ticks[ticks.len() - followed.len()..],
        "B's client follows the turn to its end, in order"
    );
    let logged = [
        ("relay payload dropped: not understood", 3),
        ("relay fragment dropped: out of turn", 1),
        ("relay fragment dropped: its start was missed", 1),
        ("neither a server notification nor a server request", 1),
        ("not a method", 1),
        ("not the notification's JSON-RPC message", 2),
    ];
    await_log(&a, "A", &logged);
    await_log(&b, "B", &logged);

    // Both serve on.
    b.call("thread/read", json!({"threadId": thread}));
    a.call("thread/read", json!({"threadId": thread}));
    a.stop();
    b.stop();
    for dir in [root, home_b] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// An answer on the relay channel is checked against the request's result type by the worker
/// that asked: while an approval of a turn on A waits, put to clients on A and on B, a forged
/// `@answer` to its ask whose result is no approval decision decides nothing, and the answer of
/// B's client, which comes after it, counts. The control: a forged answer that is well-formed
/// decides the next approval, which no client answers (the doc says a role that may `NOTIFY`
/// can answer approvals), so the forgery does reach the worker that asked.
#[test]
fn a_forged_answer_of_the_wrong_type_does_not_decide_an_approval() {
    let store = Store::postgres("relay_forged_answer");
    let command = |line: &str| json!({"type": "command", "command": line});
    let script = json!({"version": 1, "responses": [
        {"when": "first", "steps": [command("touch from-b.txt"), {"type": "message", "deltas": ["ok"]}]},
        {"when": "second", "steps": [command("touch forged.txt"), {"type": "message", "deltas": ["ok"]}]}
    ]});
    let TwoHomes {
        root,
        home_a,
        workspace,
        home_b,
    } = TwoHomes::new("relay-forged-answer", &script);
    let mut sniffer = Sniffer::listen(&store);
    let mut a = Client::start_with(&home_a, &store.args());
    let mut b = Client::start_with(&home_b, &store.args());
    let thread = thread_id(&a.start_thread(
        json!({"cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "workspace-write"}),
    ));
    const APPROVAL: &str = "item/commandExecution/requestApproval";

    a.start_turn(&thread, "first");
    let (on_a_id, _) = a.server_request(APPROVAL);
    b.call("thread/resume", json!({"threadId": thread}));
    let (on_b_id, _) = b.server_request(APPROVAL);
    let ask = ask_of(&sniffer.heard("SELECT 1;"), APPROVAL, &thread);
    let forged = |seq: u64, result: Value| {
        let body = json!({"ask": ask, "result": result}).to_string();
        payload(seq, 0, 1, "@answer", &thread, &body)
    };
    // Checked (and dropped) by A before B's client answers.
    inject(
        &store,
        &[
            forged(1, json!({"decision": "maybe"})),
            forged(2, json!("accept")),
        ],
    );
    await_log(&a, "A", &[("malformed answer from elsewhere dropped", 2)]);
    b.send(&json!({"id": on_b_id, "result": {"decision": "accept"}}));
    let (seen_a, seen_b) = (a.until_turn_completed(), b.until_turn_completed());
    let withdrawn = |seen: &[Value], id: &Value| resolved(seen, id, &thread);
    assert!(withdrawn(&seen_a, &on_a_id), "A's request is withdrawn");
    assert!(withdrawn(&seen_b, &on_b_id), "B's request is resolved");
    for (worker, seen) in [("A", &seen_a), ("B", &seen_b)] {
        assert_eq!(
            completed_turn(seen)["status"],
            json!("completed"),
            "{worker}"
        );
    }
    assert!(
        workspace.join("from-b.txt").exists(),
        "B's client's accept, not the forged answers before it, decided the approval"
    );

    // The control: a well-formed forged answer decides the next approval on its own.
    a.start_turn(&thread, "second");
    let (on_a_id, _) = a.server_request(APPROVAL);
    let (on_b_id, _) = b.server_request(APPROVAL);
    let ask = ask_of(&sniffer.heard("SELECT 1;"), APPROVAL, &thread);
    let body = json!({"ask": ask, "result": {"decision": "accept"}}).to_string();
    inject(&store, &[payload(3, 0, 1, "@answer", &thread, &body)]);
    let (seen_a, seen_b) = (a.until_turn_completed(), b.until_turn_completed());
    assert!(withdrawn(&seen_a, &on_a_id), "A's request is withdrawn");
    assert!(withdrawn(&seen_b, &on_b_id), "B's request is withdrawn");
    assert!(
        workspace.join("forged.txt").exists(),
        "the well-formed forged answer decided the approval"
    );
    a.stop();
    b.stop();
    drop(sniffer);
    for dir in [root, home_b] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The connections to PostgreSQL the worker whose store URL names the session `name` holds.
fn sessions(store: &Store, name: &str) -> usize {
    let count = store.query(&format!(
        "SELECT count(*) FROM pg_stat_activity \
         WHERE application_name = '{name}' AND datname = current_database()"
    ));
    count.trim().parse().expect("a count")
}

/// Waits until the worker named `name` holds `want` connections, failing if it ever holds more.
fn await_sessions(store: &Store, name: &str, want: usize) {
    let deadline = Instant::now() + WAIT;
    loop {
        let held = sessions(store, name);
        assert!(
            held <= want,
            "{name} holds {held} connections, more than {want}"
        );
        if held == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name} holds {held} connections, not {want}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Connections each worker opens to PostgreSQL (`docs/deployment.md`): four for requests, the
/// committer's, the turn claims', the relay's publisher and listener.
const CONNECTIONS: usize = 8;

/// Each worker opens eight connections to PostgreSQL, and no more: counted in
/// `pg_stat_activity` by the session name each worker's store URL sets, once both have started,
/// while a turn on A streams to a follower on B with requests to both in flight, and after.
#[test]
fn each_worker_holds_eight_connections_to_postgresql_and_no_more_under_load() {
    let store = Store::postgres("relay_forged_connections");
    let Store::Postgres(url) = &store else {
        unreachable!("Store::postgres")
    };
    let (name_a, name_b) = ("aw_connections_a", "aw_connections_b");
    let named = |name: &str| format!("{url}?application_name={name}");
    let (url_a, url_b) = (named(name_a), named(name_b));
    let ticks: Vec<String> = (0..30).map(|n| format!("tick {n} ")).collect();
    let script = json!({"version": 1, "deltaDelayMs": 50,
        "responses": [{"steps": [{"type": "message", "deltas": ticks}]}]});
    let TwoHomes {
        root,
        home_a,
        workspace,
        home_b,
    } = TwoHomes::new("relay-forged-connections", &script);
    let mut a = Client::start_with(&home_a, &["--store", &url_a]);
    let mut b = Client::start_with(&home_b, &["--store", &url_b]);
    for name in [name_a, name_b] {
        await_sessions(&store, name, CONNECTIONS);
    }

    let thread = thread_id(&a.start_thread(json!({"cwd": workspace})));
    a.start_turn(&thread, "Stream for a while.");
    a.notification("item/agentMessage/delta");
    b.call("thread/resume", json!({"threadId": thread}));
    b.notification("item/agentMessage/delta");
    let read = json!({"threadId": thread, "includeTurns": true});
    let mut asked = Vec::new();
    for _ in 0..4 {
        asked.push((0, a.send_request("thread/read", read.clone())));
        asked.push((0, a.send_request("thread/list", json!({}))));
        asked.push((1, b.send_request("thread/read", read.clone())));
        asked.push((1, b.send_request("thread/list", json!({}))));
    }
    let mut most = [0, 0];
    for _ in 0..10 {
        for (at, name) in [name_a, name_b].into_iter().enumerate() {
            most[at] = most[at].max(sessions(&store, name));
        }
    }
    for (worker, id) in asked {
        let client = if worker == 0 { &mut a } else { &mut b };
        if let Err(error) = client.answer(&id) {
            panic!("request {id} failed: {error}");
        }
    }
    let (on_a, on_b) = (a.until_turn_completed(), b.until_turn_completed());
    for (worker, seen) in [("A", &on_a), ("B", &on_b)] {
        let done = completed_turn(seen);
        assert_eq!(done["status"], json!("completed"), "{worker}: {done}");
    }
    assert_eq!(
        most, [CONNECTIONS; 2],
        "the most connections A and B held while busy"
    );
    for name in [name_a, name_b] {
        assert_eq!(
            sessions(&store, name),
            CONNECTIONS,
            "{name}, after the turn"
        );
    }
    a.stop();
    b.stop();
    for dir in [root, home_b] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
