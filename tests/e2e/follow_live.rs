//! Following a turn live from another worker: two app-servers on one PostgreSQL store, the turn
//! running on one of them, a client resuming the thread on the other. What the running worker
//! sends its followers reaches that client too (`LISTEN`/`NOTIFY`), in order and whole,
//! notifications longer than one `NOTIFY` payload included.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::app_server_ws::App;
use crate::client::{Client, completed_turn, params, resolved, thread_id};
use crate::common::scratch;
use crate::stores::Store;
use crate::ws_conn::Conn;

/// The deltas the model streams, one every `DELAY_MS`: short ticks around one delta far longer
/// than a `NOTIFY` payload (8000 bytes), with characters of several bytes at its cuts.
fn script_deltas() -> Vec<String> {
    let mut deltas: Vec<String> = (0..40).map(|n| format!("tick {n} ")).collect();
    deltas.insert(20, format!("{}{}", "ü".repeat(6000), "x".repeat(5000)));
    deltas
}

const DELAY_MS: u64 = 50;

/// The approval the scripts' commands ask for.
const APPROVAL: &str = "item/commandExecution/requestApproval";

/// Makes `home`'s model the fixture provider playing `script`.
pub(crate) fn fixture(home: &std::path::Path, script: &Value) {
    std::fs::write(home.join("live.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"live.json\"\n",
    )
    .expect("write config");
}

/// The directories of a test with two workers that play one script: A's home and workspace
/// under `root`, and B's home.
pub(crate) struct TwoHomes {
    pub(crate) root: PathBuf,
    pub(crate) home_a: PathBuf,
    pub(crate) workspace: PathBuf,
    pub(crate) home_b: PathBuf,
}

impl TwoHomes {
    /// Fresh directories named after `test`, both homes' model playing `script`.
    pub(crate) fn new(test: &str, script: &Value) -> Self {
        let root = scratch(test);
        let (home_a, workspace) = crate::common::home_and_workspace(&root);
        let home_b = scratch(&format!("{test}-b"));
        for home in [&home_a, &home_b] {
            fixture(home, script);
        }
        Self {
            root,
            home_a,
            workspace,
            home_b,
        }
    }
}

fn streaming_model(home: &std::path::Path) {
    let script = json!({
        "version": 1,
        "deltaDelayMs": DELAY_MS,
        "responses": [{"steps": [{"type": "message", "deltas": script_deltas()}]}]
    });
    fixture(home, &script);
}

/// The `delta`s of every `item/agentMessage/delta` in `seen`, in order.
fn message_deltas(seen: &[Value]) -> Vec<String> {
    params(seen, "item/agentMessage/delta")
        .iter()
        .map(|p| p["delta"].as_str().expect("delta").to_owned())
        .collect()
}

/// The text of the agent message `item/completed` in `seen` reports.
fn completed_message(seen: &[Value]) -> Option<String> {
    params(seen, "item/completed")
        .iter()
        .find(|p| p["item"]["type"] == json!("agentMessage"))
        .and_then(|p| p["item"]["text"].as_str().map(str::to_owned))
}

/// A client starts a turn on worker A; another resumes the thread on worker B mid-turn and
/// follows it there to its end: every delta from the one it joined at, once and in order, the
/// long one whole, the completed item and turn as A reports them, and the thread going idle.
#[test]
fn a_client_on_another_worker_follows_a_running_turn_live() {
    let store = Store::postgres("follow_live");
    let (home_a, home_b) = (scratch("follow-live-a"), scratch("follow-live-b"));
    for home in [&home_a, &home_b] {
        streaming_model(home);
    }
    let project = scratch("follow-live-project");
    let mut a = Client::start_with(&home_a, &store.args());
    let mut b = Client::start_with(&home_b, &store.args());
    let thread = thread_id(&a.start_thread(json!({"cwd": project})));
    let turn = a.start_turn(&thread, "Stream for a while.");
    let first = a.notification("item/agentMessage/delta");
    assert_eq!(first["delta"], json!("tick 0 "), "{first}");

    let resumed = b.call("thread/resume", json!({"threadId": thread}));
    let turns = resumed["thread"]["turns"].as_array().expect("turns");
    assert_eq!(
        turns.last().map(|t| t["status"].clone()),
        Some(json!("inProgress")),
        "{resumed}"
    );
    let on_b = b.until_turn_completed();
    let mut on_a = vec![json!({"method": "item/agentMessage/delta", "params": first})];
    on_a.extend(a.until_turn_completed());

    let sent = message_deltas(&on_a);
    assert_eq!(sent, script_deltas(), "A streams the whole script");
    let followed = message_deltas(&on_b);
    assert!(
        followed.len() > sent.len() / 2,
        "B joined early and follows most of the turn: {} of {} deltas",
        followed.len(),
        sent.len()
    );
    assert_eq!(
        followed,
        sent[sent.len() - followed.len()..],
        "B gets every delta from where it joined, once and in order"
    );
    for delta in params(&on_b, "item/agentMessage/delta") {
        assert_eq!(delta["threadId"], json!(thread));
        assert_eq!(delta["turnId"], json!(turn));
    }
    let text = completed_message(&on_a).expect("A reports the message");
    assert_eq!(text, script_deltas().concat());
    assert_eq!(
        completed_message(&on_b).as_deref(),
        Some(text.as_str()),
        "the completed message, far longer than one NOTIFY payload, reaches B whole"
    );
    let (done_a, done_b) = (completed_turn(&on_a), completed_turn(&on_b));
    assert_eq!(done_b["id"], json!(turn));
    assert_eq!(done_b["status"], json!("completed"), "{done_b}");
    assert_eq!(done_b, done_a, "B sees the turn end as A reports it");

    let idle = |seen: &[Value]| {
        params(seen, "thread/status/changed")
            .iter()
            .any(|p| p["threadId"] == json!(thread) && p["status"]["type"] == json!("idle"))
    };
    if !idle(&on_b) {
        let status = b.notification("thread/status/changed");
        assert!(
            idle(&[json!({"method": "thread/status/changed", "params": status})]),
            "{status}"
        );
    }
    // What B now reads is what A ran.
    let read = b.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let last = read["thread"]["turns"]
        .as_array()
        .and_then(|t| t.last().cloned());
    assert_eq!(last.map(|t| t["status"].clone()), Some(json!("completed")));
    a.stop();
    b.stop();
    for dir in [home_a, home_b, project] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `turn/interrupt` on the worker that follows a turn stops it on the worker that runs it: both
/// clients see the turn complete as `interrupted`, and the thread takes a turn on the follower's
/// worker next.
#[test]
fn a_client_on_another_worker_interrupts_a_running_turn() {
    let store = Store::postgres("interrupt_live");
    let (home_a, home_b) = (scratch("interrupt-live-a"), scratch("interrupt-live-b"));
    // A streams for half a minute unless stopped; B answers at once.
    let long = vec!["tick "; 600];
    for (home, deltas) in [(&home_a, long), (&home_b, vec!["Done on B."])] {
        let script = json!({"version": 1, "deltaDelayMs": DELAY_MS,
            "responses": [{"steps": [{"type": "message", "deltas": deltas}]}]});
        fixture(home, &script);
    }
    let project = scratch("interrupt-live-project");
    let mut a = Client::start_with(&home_a, &store.args());
    let mut b = Client::start_with(&home_b, &store.args());
    let thread = thread_id(&a.start_thread(json!({"cwd": project})));
    let turn = a.start_turn(&thread, "Stream until stopped.");
    a.notification("item/agentMessage/delta");
    b.call("thread/resume", json!({"threadId": thread}));
    b.notification("item/agentMessage/delta");

    let wrong = b.call_err(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": "no-such-turn"}),
    );
    assert_eq!(wrong["code"], json!(-32600), "{wrong}");
    b.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    );
    let (on_a, on_b) = (a.until_turn_completed(), b.until_turn_completed());
    for (worker, seen) in [("A", &on_a), ("B", &on_b)] {
        let done = completed_turn(seen);
        assert_eq!(done["id"], json!(turn), "{worker}: {done}");
        assert_eq!(done["status"], json!("interrupted"), "{worker}: {done}");
    }
    assert!(
        message_deltas(&on_a).len() < 500,
        "the turn stopped early, not at the end of its stream"
    );
    let partial = completed_message(&on_a).expect("the message so far is completed");
    assert!(partial.len() < 500 * "tick ".len(), "{partial}");
    assert_eq!(
        completed_message(&on_b),
        Some(partial),
        "B sees the message as A completed it"
    );
    let next = b.start_turn(&thread, "Now on B.");
    let seen = b.until_turn_completed();
    assert_eq!(completed_turn(&seen)["id"], json!(next));
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    a.stop();
    b.stop();
    for dir in [home_a, home_b, project] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// An approval a turn on worker A waits for is put to a client that resumes the thread on worker
/// B meanwhile; B's answer counts on A, and A's client sees its own request withdrawn. Once B
/// follows the thread, the next approval goes to both, and an answer on A withdraws B's.
#[test]
fn an_approval_waiting_on_one_worker_is_answered_from_another() {
    let store = Store::postgres("approve_live");
    let command = |line: &str| json!({"type": "command", "command": line});
    let script = json!({"version": 1, "responses": [
        {"when": "first", "steps": [command("touch from-b.txt"), {"type": "message", "deltas": ["ok"]}]},
        {"when": "second", "steps": [command("touch from-a.txt"), {"type": "message", "deltas": ["ok"]}]}
    ]});
    let TwoHomes {
        root,
        home_a,
        workspace,
        home_b,
    } = TwoHomes::new("approve-live", &script);
    let mut a = Client::start_with(&home_a, &store.args());
    let mut b = Client::start_with(&home_b, &store.args());
    let thread = thread_id(&a.start_thread(
        json!({"cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "workspace-write"}),
    ));

    // The client on A is asked and does not answer; one that resumes on B is asked too.
    let turn = a.start_turn(&thread, "first");
    let (on_a_id, on_a) = a.server_request(APPROVAL);
    b.call("thread/resume", json!({"threadId": thread}));
    let (on_b_id, on_b) = b.server_request(APPROVAL);
    assert_eq!(on_b, on_a, "B is asked what A asks");
    assert_eq!(on_b["turnId"], json!(turn));
    b.send(&json!({"id": on_b_id, "result": {"decision": "accept"}}));
    let (seen_a, seen_b) = (a.until_turn_completed(), b.until_turn_completed());
    for (worker, seen) in [("A", &seen_a), ("B", &seen_b)] {
        assert_eq!(
            completed_turn(seen)["status"],
            json!("completed"),
            "{worker}"
        );
        let command = params(seen, "item/completed")
            .into_iter()
            .find(|p| p["item"]["type"] == json!("commandExecution"))
            .cloned()
            .unwrap_or_else(|| panic!("{worker}: no command item in {seen:#?}"));
        assert_eq!(command["item"]["status"], json!("completed"), "{worker}");
    }
    assert!(
        workspace.join("from-b.txt").exists(),
        "B's accept ran the command on A"
    );
    let withdrawn = |seen: &[Value], id: &Value| resolved(seen, id, &thread);
    assert!(withdrawn(&seen_a, &on_a_id), "A's request is withdrawn");
    assert!(withdrawn(&seen_b, &on_b_id), "B's request is resolved");

    // B follows now: the next request goes to both at once; A's answer withdraws B's.
    a.start_turn(&thread, "second");
    let (on_a_id, _) = a.server_request(APPROVAL);
    let (on_b_id, _) = b.server_request(APPROVAL);
    a.send(&json!({"id": on_a_id, "result": {"decision": "accept"}}));
    let (_, seen_b) = (a.until_turn_completed(), b.until_turn_completed());
    assert!(withdrawn(&seen_b, &on_b_id), "B's request is withdrawn");
    assert!(workspace.join("from-a.txt").exists());
    a.stop();
    b.stop();
    for dir in [root, home_b] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Worker A serving one client over stdio and worker B listening on a loopback websocket,
/// both on `store` and playing one script whose turn runs `command` and says "ok"; A's client
/// has started a thread that asks before running any command (`untrusted`).
struct ApprovalOnA {
    root: PathBuf,
    workspace: PathBuf,
    home_b: PathBuf,
    a: Client,
    worker_b: App,
    addr: std::net::SocketAddr,
    thread: String,
}

impl ApprovalOnA {
    fn new(store: &Store, test: &str, command: &str) -> Self {
        let script = json!({"version": 1, "responses": [{"steps": [
            {"type": "command", "command": command},
            {"type": "message", "deltas": ["ok"]}
        ]}]});
        let TwoHomes {
            root,
            home_a,
            workspace,
            home_b,
        } = TwoHomes::new(test, &script);
        let mut a = Client::start_with(&home_a, &store.args());
        let mut listen = store.args();
        listen.extend(["--listen", "ws://127.0.0.1:0"]);
        let worker_b = App::spawn(&home_b, &listen);
        let addr = worker_b.listening_addr();
        let thread = thread_id(&a.start_thread(
            json!({"cwd": workspace, "approvalPolicy": "untrusted", "sandbox": "workspace-write"}),
        ));
        Self {
            root,
            workspace,
            home_b,
            a,
            worker_b,
            addr,
            thread,
        }
    }
}

/// An approval a turn on worker A waits for, already put to a client on worker B, is put as well
/// to a second client that resumes the thread on B afterwards (B is not asked again: it follows
/// the thread already); that client's answer counts on A, and the others' requests are withdrawn.
#[test]
fn an_approval_put_to_a_worker_reaches_a_client_joining_it_later() {
    let store = Store::postgres("approve_late");
    let ApprovalOnA {
        root,
        workspace,
        home_b,
        mut a,
        worker_b,
        addr,
        thread,
    } = ApprovalOnA::new(&store, "approve-late", "touch from-late.txt");

    let mut first = Conn::open(addr);
    first.call("thread/resume", json!({"threadId": thread}));
    let turn = a.start_turn(&thread, "run it");
    let (on_a_id, on_a) = a.server_request(APPROVAL);
    let (first_id, on_first) = first.server_request(APPROVAL);
    assert_eq!(on_first, on_a, "B's first client is asked what A asks");

    let mut late = Conn::open(addr);
    late.call("thread/resume", json!({"threadId": thread}));
    let (late_id, on_late) = late.server_request(APPROVAL);
    assert_eq!(on_late, on_a, "the client joining later is asked too");
    assert_eq!(on_late["turnId"], json!(turn));
    late.send(&json!({"id": late_id, "result": {"decision": "accept"}}));

    let seen_a = a.until_turn_completed();
    let (seen_first, seen_late) = (first.until_turn_completed(), late.until_turn_completed());
    for (who, seen) in [("A", &seen_a), ("first", &seen_first), ("late", &seen_late)] {
        assert_eq!(completed_turn(seen)["status"], json!("completed"), "{who}");
    }
    assert!(
        workspace.join("from-late.txt").exists(),
        "the late client's accept ran the command on A"
    );
    let withdrawn = |seen: &[Value], id: &Value| resolved(seen, id, &thread);
    assert!(withdrawn(&seen_a, &on_a_id), "A's request is withdrawn");
    assert!(
        withdrawn(&seen_first, &first_id),
        "B's first client's is withdrawn"
    );
    assert!(
        withdrawn(&seen_late, &late_id),
        "the late client's is resolved"
    );
    a.stop();
    drop((first, late));
    let _ = worker_b.terminate();
    for dir in [root, home_b] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A malformed answer from one client of worker B is not B's answer: B keeps its other
/// client's request open, and that client's accept, which comes later, decides the approval on
/// A. (B used to relay the first result any client sent, which A then dropped as malformed,
/// after B had withdrawn the request from its other client: nobody could answer any more.)
#[test]
fn a_malformed_answer_on_another_worker_leaves_its_other_clients_asked() {
    let store = Store::postgres("approve_malformed");
    let ApprovalOnA {
        root,
        workspace,
        home_b,
        mut a,
        worker_b,
        addr,
        thread,
    } = ApprovalOnA::new(&store, "approve-malformed", "touch from-good.txt");

    let (mut sloppy, mut good) = (Conn::open(addr), Conn::open(addr));
    for conn in [&mut sloppy, &mut good] {
        conn.call("thread/resume", json!({"threadId": thread}));
    }
    a.start_turn(&thread, "run it");
    let (on_a_id, _) = a.server_request(APPROVAL);
    let (sloppy_id, _) = sloppy.server_request(APPROVAL);
    let (good_id, _) = good.server_request(APPROVAL);
    sloppy.send(&json!({"id": sloppy_id, "result": {"decision": "maybe"}}));
    // Time for B to take the malformed answer, then a round trip that reads what B sent `good`
    // meanwhile: its request is still open.
    std::thread::sleep(std::time::Duration::from_millis(500));
    good.call("thread/loaded/list", json!({}));
    let backlog: Vec<Value> = good.backlog().iter().cloned().collect();
    assert!(
        !params(&backlog, "serverRequest/resolved")
            .iter()
            .any(|p| p["requestId"] == good_id),
        "B withdrew the request from its other client after a malformed answer: {:?}",
        backlog.iter().map(|m| &m["method"]).collect::<Vec<_>>()
    );
    good.send(&json!({"id": good_id, "result": {"decision": "accept"}}));

    let seen_a = a.until_turn_completed();
    let (seen_sloppy, seen_good) = (sloppy.until_turn_completed(), good.until_turn_completed());
    for (who, seen) in [
        ("A", &seen_a),
        ("sloppy", &seen_sloppy),
        ("good", &seen_good),
    ] {
        assert_eq!(completed_turn(seen)["status"], json!("completed"), "{who}");
    }
    assert!(
        workspace.join("from-good.txt").exists(),
        "the good client's accept ran the command on A"
    );
    assert!(
        resolved(&seen_a, &on_a_id, &thread),
        "A's request is withdrawn"
    );
    assert!(
        resolved(&seen_sloppy, &sloppy_id, &thread),
        "the sloppy client's request is withdrawn"
    );
    assert!(
        resolved(&seen_good, &good_id, &thread),
        "the good client's request is resolved"
    );
    a.stop();
    drop((sloppy, good));
    let _ = worker_b.terminate();
    for dir in [root, home_b] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `turn/steer` on a worker that follows the turn is passed to the worker that runs it, which
/// answers: the input joins the turn there (both clients see the reply to it), and a steer that
/// names another turn is refused with the running worker's reason.
#[test]
fn a_client_on_another_worker_steers_a_running_turn() {
    let store = Store::postgres("steer_live");
    let (home_a, home_b) = (scratch("steer-live-a"), scratch("steer-live-b"));
    let script = json!({"version": 1, "deltaDelayMs": DELAY_MS, "steerReply": "Noted: {input}",
        "responses": [{"steps": [{"type": "message", "deltas": vec!["word "; 30]}]}]});
    for home in [&home_a, &home_b] {
        fixture(home, &script);
    }
    let project = scratch("steer-live-project");
    let mut a = Client::start_with(&home_a, &store.args());
    let mut b = Client::start_with(&home_b, &store.args());
    let thread = thread_id(&a.start_thread(json!({"cwd": project})));
    let turn = a.start_turn(&thread, "Write something.");
    a.notification("item/agentMessage/delta");
    b.call("thread/resume", json!({"threadId": thread}));
    b.notification("item/agentMessage/delta");

    let input = json!([{"type": "text", "text": "use tabs"}]);
    let wrong = b.call_err(
        "turn/steer",
        json!({"threadId": thread, "expectedTurnId": "other", "input": input}),
    );
    assert_eq!(wrong["code"], json!(-32600), "{wrong}");
    let steered = b.call(
        "turn/steer",
        json!({"threadId": thread, "expectedTurnId": turn, "input": input,
               "clientUserMessageId": "from-b"}),
    );
    assert_eq!(steered, json!({"turnId": turn}));
    let (on_a, on_b) = (a.until_turn_completed(), b.until_turn_completed());
    for (worker, seen) in [("A", &on_a), ("B", &on_b)] {
        let done = completed_turn(seen);
        assert_eq!(done["status"], json!("completed"), "{worker}: {done}");
        let reply = done["items"][0]["text"].as_str().unwrap_or_default();
        assert!(reply.contains("use tabs"), "{worker}: {reply}");
        let steered_in = params(seen, "item/completed").into_iter().any(|p| {
            p["item"]["type"] == json!("userMessage") && p["item"]["clientId"] == json!("from-b")
        });
        assert!(steered_in, "{worker} sees the steered message: {seen:#?}");
    }
    a.stop();
    b.stop();
    for dir in [home_a, home_b, project] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
