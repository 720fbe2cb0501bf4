//! A follower on another worker that goes away is forgotten. Two app-servers on one PostgreSQL
//! store: a client of worker B resumes a thread of worker A, so A publishes that thread's turns
//! for B (`LISTEN`/`NOTIFY`). When that client's connection closes, B says at once that it
//! follows the thread no more (`@unfollow`), and A's next turn is published to nobody. When B
//! dies instead, saying nothing, A sees B's database session end and stops publishing too; a
//! worker whose publishing session ends while it lives says again what it follows, and one
//! whose `@unfollow` was lost says all it follows again, which drops the rest. A request of a
//! turn that waits for the answer of a worker that dies stops waiting once it is seen gone.
//! Watched from outside by a `psql` listening on the relay's channel.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::app_server_ws::App;
use crate::client::{Client, completed_turn, thread_id};
use crate::common::scratch;
use crate::follow_live::{TwoHomes, fixture};
use crate::stores::Store;
use crate::ws_conn::Conn;

/// How long the listener waits for a payload that should come.
const WAIT: Duration = Duration::from_secs(15);

/// A `psql` session listening on the relay's channel: every payload published there, as `psql`
/// prints it (a header line `origin seq part parts method thread`, then the message).
struct Listener {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// Every line printed so far.
    seen: Vec<String>,
}

impl Listener {
    fn start(url: &str) -> Self {
        let mut child = Command::new("psql")
            .args([url, "-XAtq"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run psql (postgresql-client, installed with postgresql-15)");
        let mut stdin = child.stdin.take().expect("stdin is piped");
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
        writeln!(stdin, "LISTEN agentwire_events;").expect("write to psql");
        Self {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// Reads what `psql` printed within `within`; it prints the notifications it received
    /// after each command, so one is sent every 50 ms. Stops early once a line has `needle`.
    fn read(&mut self, within: Duration, needle: Option<&str>) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            writeln!(self.stdin, "SELECT 1;").expect("write to psql");
            loop {
                match self.lines.recv_timeout(Duration::from_millis(50)) {
                    Ok(line) => {
                        let found = needle.is_some_and(|n| line.contains(n));
                        self.seen.push(line);
                        if found {
                            return true;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => panic!("psql ended: {:?}", self.seen),
                }
            }
        }
        false
    }

    /// Waits until `count` payload headers of `method` about `thread` were seen in all, then
    /// a moment more, for the workers to act on the last one as well.
    fn expect(&mut self, method: &str, thread: &str, count: usize) {
        self.expect_from(None, method, thread, count);
    }

    /// [`Listener::expect`] counting only the payloads sent by `origin` (a worker's relay id,
    /// the first word of each header), when given.
    fn expect_from(&mut self, origin: Option<&str>, method: &str, thread: &str, count: usize) {
        let needle = format!(" {method} {thread}");
        let deadline = Instant::now() + WAIT;
        while self.count_from(origin, method, thread) < count {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                self.read(left, Some(&needle)),
                "{count} payloads of {method} for {thread} from {origin:?} were not published \
                 within {WAIT:?}; seen: {:#?}",
                self.seen
            );
        }
        self.read(Duration::from_millis(200), None);
    }

    /// Waits for a payload of `method` about `thread` sent by another worker than `not` (an
    /// origin); that worker's origin.
    fn expect_other(&mut self, method: &str, thread: &str, not: &str) -> String {
        let needle = format!(" {method} {thread}");
        let deadline = Instant::now() + WAIT;
        loop {
            let other = self
                .headers(None, method, thread)
                .map(|(_, line)| origin(line))
                .find(|origin| *origin != not)
                .map(str::to_owned);
            if let Some(other) = other {
                self.read(Duration::from_millis(200), None);
                return other;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                self.read(left, Some(&needle)),
                "no payload of {method} for {thread} from another worker than {not} within \
                 {WAIT:?}; seen: {:#?}",
                self.seen
            );
        }
    }

    /// The payload headers of `method` about `thread` seen so far (from `origin` when given),
    /// with their index in `seen`.
    fn headers<'a>(
        &'a self,
        origin: Option<&'a str>,
        method: &str,
        thread: &str,
    ) -> impl Iterator<Item = (usize, &'a str)> + 'a {
        let needle = format!(" {method} {thread}");
        self.seen
            .iter()
            .enumerate()
            .filter(move |(_, line)| {
                line.contains(&needle) && origin.is_none_or(|o| self::origin(line) == o)
            })
            .map(|(at, line)| (at, line.as_str()))
    }

    /// The origin of the `nth` (from 1) payload of `method` about `thread`.
    fn origin_of(&self, method: &str, thread: &str, nth: usize) -> String {
        self.headers(None, method, thread)
            .nth(nth - 1)
            .map(|(_, line)| origin(line).to_owned())
            .unwrap_or_else(|| panic!("no payload {nth} of {method}: {:#?}", self.seen))
    }

    /// The backend process id of the session that sent the `nth` (from 1) payload of `method`
    /// about `thread` from `origin` (any, when `None`), as `psql` reports it on the line after
    /// the header.
    fn session_of_from(&self, origin: Option<&str>, method: &str, thread: &str, nth: usize) -> u32 {
        let header = self
            .headers(origin, method, thread)
            .nth(nth - 1)
            .map(|(at, _)| at)
            .unwrap_or_else(|| panic!("no payload {nth} of {method}: {:#?}", self.seen));
        self.seen[header..]
            .iter()
            .find_map(|line| line.split("server process with PID ").nth(1))
            .and_then(|pid| pid.trim_end_matches('.').parse().ok())
            .unwrap_or_else(|| panic!("no process id after {:?}", self.seen[header]))
    }

    /// How many payload headers of `method` about `thread` were seen so far.
    fn count(&self, method: &str, thread: &str) -> usize {
        self.count_from(None, method, thread)
    }

    /// [`Listener::count`] of the payloads sent by `origin`, when given.
    fn count_from(&self, origin: Option<&str>, method: &str, thread: &str) -> usize {
        self.headers(origin, method, thread).count()
    }
}

/// The origin (the sending worker's relay id) of a payload's header line as `psql` prints it.
fn origin(header: &str) -> &str {
    header
        .split("with payload \"")
        .nth(1)
        .and_then(|payload| payload.split(' ').next())
        .unwrap_or_default()
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two workers' homes, both playing a short message, and a project directory.
fn homes(test: &str) -> [std::path::PathBuf; 3] {
    let (home_a, home_b) = (scratch(&format!("{test}-a")), scratch(&format!("{test}-b")));
    let script = json!({"version": 1,
        "responses": [{"steps": [{"type": "message", "deltas": ["one ", "two ", "three"]}]}]});
    for home in [&home_a, &home_b] {
        fixture(home, &script);
    }
    [home_a, home_b, scratch(&format!("{test}-project"))]
}

/// Runs a turn on `a`'s thread `thread`; whether the listener then saw it published.
fn published(a: &mut Client, listener: &mut Listener, thread: &str) -> bool {
    let before = listener.count("turn/completed", thread);
    a.start_turn(thread, "Again.");
    let seen = a.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    listener.read(Duration::from_millis(500), None);
    listener.count("turn/completed", thread) > before
}

/// Runs turns on `a`'s thread `thread` until one is published (`wanted`) or one is not;
/// whether that came within [`WAIT`].
fn published_within(a: &mut Client, listener: &mut Listener, thread: &str, wanted: bool) -> bool {
    let deadline = Instant::now() + WAIT;
    while published(a, listener, thread) != wanted {
        if Instant::now() >= deadline {
            return false;
        }
    }
    true
}

#[test]
fn a_follower_whose_connection_closes_is_forgotten_at_once() {
    let store = Store::postgres("follow_closed");
    let Store::Postgres(url) = &store else {
        unreachable!("a PostgreSQL store")
    };
    let [home_a, home_b, project] = homes("follow-closed");
    let mut listener = Listener::start(url);
    let mut a = Client::start_with(&home_a, &store.args());
    let mut args = vec!["--listen", "ws://127.0.0.1:0"];
    args.extend(store.args());
    let b = App::spawn(&home_b, &args);
    let addr = b.listening_addr();

    let thread = thread_id(&a.start_thread(json!({"cwd": project})));
    let mut follower = Conn::open(addr);
    follower.call("thread/resume", json!({"threadId": thread}));
    // A follows its thread (its client started it), and now B.
    listener.expect("@follow", &thread, 2);

    // While B's client follows, A publishes its turn, and the client gets it.
    a.start_turn(&thread, "First.");
    let first = a.until_turn_completed();
    assert_eq!(completed_turn(&first)["status"], json!("completed"));
    let on_b = follower.until_turn_completed();
    assert_eq!(completed_turn(&on_b), completed_turn(&first));
    listener.expect("turn/completed", &thread, 1);

    // The client goes away without unsubscribing: B forgets it and says so.
    drop(follower);
    let unfollow = format!(" @unfollow {thread}");
    assert!(
        listener.read(WAIT, Some(&unfollow)),
        "B did not say it no longer follows {thread} within {WAIT:?}; B's log:\n{}",
        b.stderr()
    );

    // A heard it too (the same payload, on its own listener): its next turn is published to
    // no one.
    listener.read(Duration::from_millis(500), None);
    a.start_turn(&thread, "Second.");
    let second = a.until_turn_completed();
    assert_eq!(completed_turn(&second)["status"], json!("completed"));
    listener.read(Duration::from_secs(1), None);
    assert_eq!(
        listener.count("turn/completed", &thread),
        1,
        "only the first turn was published; seen: {:#?}",
        listener.seen
    );

    a.stop();
    drop(b);
    for dir in [home_a, home_b, project] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Two workers on one database, each driven over stdio, and a client of B following a new
/// thread of A: where the last two tests start.
struct FollowedFromB {
    store: Store,
    listener: Listener,
    a: Client,
    b: Client,
    thread: String,
    /// B's relay id, which its payloads name: A may publish a `@follow` of the thread more
    /// than once (again for a worker that joins), so the order does not tell whose is whose.
    b_origin: String,
    dirs: [std::path::PathBuf; 3],
}

/// The end of a test that began with [`followed_from_b`]: stops both clients and removes the
/// test's directories.
fn finish(clients: [Client; 2], dirs: [std::path::PathBuf; 3]) {
    for client in clients {
        client.stop();
    }
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn followed_from_b(test: &str) -> FollowedFromB {
    let store = Store::postgres(test);
    let Store::Postgres(url) = &store else {
        unreachable!("a PostgreSQL store")
    };
    let mut listener = Listener::start(url);
    let dirs = homes(&test.replace('_', "-"));
    let mut a = Client::start_with(&dirs[0], &store.args());
    let mut b = Client::start_with(&dirs[1], &store.args());
    let thread = thread_id(&a.start_thread(json!({"cwd": dirs[2]})));
    // A follows its thread (its client started it), and now B.
    listener.expect("@follow", &thread, 1);
    let a_origin = listener.origin_of("@follow", &thread, 1);
    b.call("thread/resume", json!({"threadId": thread}));
    let b_origin = listener.expect_other("@follow", &thread, &a_origin);
    FollowedFromB {
        store,
        listener,
        a,
        b,
        thread,
        b_origin,
        dirs,
    }
}

#[test]
fn a_worker_that_dies_is_forgotten_by_the_others() {
    let FollowedFromB {
        store,
        mut listener,
        mut a,
        b,
        thread,
        dirs,
        ..
    } = followed_from_b("follow_dies");
    assert!(
        published(&mut a, &mut listener, &thread),
        "followed on B, A's turn is published"
    );

    // SIGKILL: B says nothing more, and its sessions end with its process.
    drop(b);
    assert!(
        published_within(&mut a, &mut listener, &thread, false),
        "A still publishes for the dead worker after {WAIT:?}; A's log:\n{}",
        a.stderr()
    );
    assert!(
        !published(&mut a, &mut listener, &thread),
        "A stays quiet once it forgot B"
    );
    assert!(
        !listener
            .seen
            .iter()
            .any(|l| l.contains(&format!(" @unfollow {thread}"))),
        "B could not have said @unfollow: A found out by itself"
    );

    // A worker that follows the thread afterwards is published for again.
    let mut c = Client::start_with(&dirs[1], &store.args());
    c.call("thread/resume", json!({"threadId": thread}));
    listener.expect("@follow", &thread, 3);
    assert!(published(&mut a, &mut listener, &thread));
    finish([a, c], dirs);
}

#[test]
fn a_worker_whose_publishing_session_ends_says_again_what_it_follows() {
    let FollowedFromB {
        store,
        mut listener,
        mut a,
        b,
        thread,
        b_origin,
        dirs,
    } = followed_from_b("follow_session_ends");
    let from_b = Some(b_origin.as_str());
    let session = listener.session_of_from(from_b, "@follow", &thread, 1);

    // B's publisher loses its session; B lives on. A forgets B when it sees the session gone,
    // and B says again what it follows through a new one.
    assert!(store.terminate(session), "B's publishing session ended");
    listener.expect_from(from_b, "@follow", &thread, 2);
    assert_ne!(
        listener.session_of_from(from_b, "@follow", &thread, 2),
        session
    );
    assert!(
        published_within(&mut a, &mut listener, &thread, true),
        "A does not publish for B again within {WAIT:?}; B's log:\n{}",
        b.stderr()
    );
    finish([a, b], dirs);
}

#[test]
fn a_worker_whose_unfollow_was_lost_says_again_all_it_follows() {
    let FollowedFromB {
        store,
        mut listener,
        mut a,
        mut b,
        thread,
        b_origin,
        dirs,
    } = followed_from_b("follow_lost");
    let from_b = Some(b_origin.as_str());
    // B follows a second thread of A as well, and keeps following it.
    let kept = thread_id(&a.start_thread(json!({"cwd": dirs[2]})));
    b.call("thread/resume", json!({"threadId": kept}));
    listener.expect_from(from_b, "@follow", &kept, 1);
    let session = listener.session_of_from(from_b, "@follow", &thread, 1);

    // B's publisher loses its session and cannot make a new one, so the `@unfollow` of B's
    // client dropping the first thread is lost.
    store.allow_connections(false);
    assert!(store.terminate(session), "B's publishing session ended");
    b.call("thread/unsubscribe", json!({"threadId": thread}));
    let deadline = Instant::now() + WAIT;
    while !b.stderr().contains("relay cannot connect") {
        assert!(
            Instant::now() < deadline,
            "B did not try to publish within {WAIT:?}; B's log:\n{}\nthe channel: {:#?}",
            b.stderr(),
            listener.seen
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    store.allow_connections(true);

    // Back, B says everything it follows again, through a new session; the `@unfollow` itself
    // never comes.
    listener.expect_from(from_b, "@synced", "-", 1);
    assert_ne!(listener.session_of_from(from_b, "@synced", "-", 1), session);
    assert_eq!(
        listener.count_from(from_b, "@unfollow", &thread),
        0,
        "seen: {:#?}",
        listener.seen
    );
    assert!(
        listener.count_from(from_b, "@follow", &kept) >= 2,
        "seen: {:#?}",
        listener.seen
    );

    // A publishes the thread B still follows, and no longer the one it dropped.
    assert!(
        !published(&mut a, &mut listener, &thread),
        "A still publishes the thread B dropped; A's log:\n{}",
        a.stderr()
    );
    assert!(
        published(&mut a, &mut listener, &kept),
        "A stopped publishing the thread B follows; A's log:\n{}",
        a.stderr()
    );
    finish([a, b], dirs);
}

#[test]
fn a_request_waiting_on_a_worker_that_dies_stops_waiting_for_it() {
    let store = Store::postgres("ask_dies");
    let script = json!({"version": 1, "responses": [{"steps": [
        {"type": "command", "command": "touch never.txt"},
        {"type": "message", "deltas": ["done"]}
    ]}]});
    let TwoHomes {
        root,
        home_a,
        workspace,
        home_b,
    } = TwoHomes::new("ask-dies", &script);
    let mut listen = store.args();
    listen.extend(["--listen", "ws://127.0.0.1:0"]);
    let worker_a = App::spawn(&home_a, &listen);
    let addr = worker_a.listening_addr();
    let mut starter = Conn::open(addr);
    let thread = thread_id(&starter.call(
        "thread/start",
        json!({"cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "workspace-write"}),
    ));
    let mut b = Client::start_with(&home_b, &store.args());
    b.call("thread/resume", json!({"threadId": thread}));
    const APPROVAL: &str = "item/commandExecution/requestApproval";

    // The approval is put to the client on A and, through B, to B's client; neither answers.
    // The client on A leaves, so only B's answer can still come, when B is SIGKILLed.
    starter.call(
        "turn/start",
        json!({"threadId": thread, "input": [{"type": "text", "text": "run it"}]}),
    );
    starter.server_request(APPROVAL);
    b.server_request(APPROVAL);
    drop(starter);
    drop(b);
    let killed = Instant::now();

    // A sees B's session end within its 5 s sweep and stops waiting for B's answer, which the
    // server request timeout (600 s) would otherwise bound: the command is not run, and the
    // turn goes on to its end.
    let mut reader = Conn::open(addr);
    let status = loop {
        let read = reader.call(
            "thread/read",
            json!({"threadId": thread, "includeTurns": true}),
        );
        let status = read["thread"]["turns"][0]["status"].clone();
        if status != json!("inProgress") {
            break status;
        }
        assert!(
            killed.elapsed() < WAIT,
            "the turn still waits for the dead worker's answer after {WAIT:?}; A's log:\n{}",
            worker_a.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(
        status,
        json!("completed"),
        "A's log:\n{}",
        worker_a.stderr()
    );
    assert!(
        !workspace.join("never.txt").exists(),
        "no one approved the command"
    );
    drop(reader);
    let _ = worker_a.terminate();
    for dir in [root, home_b] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
