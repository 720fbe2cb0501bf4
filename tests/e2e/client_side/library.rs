//! `agentwire-client` against `agentwire app-server`: over a child's stdio, ws:// with a bearer
//! token and the unix:// control socket; typed requests and notifications, the server-request
//! handler, errors as the server sent them, and retries of overloaded requests.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_client::server_requests::handler_fn;
use agentwire_client::{Client, ClientOptions, Error, RetryPolicy, ServerRequest};
use agentwire_protocol::methods::{
    AgentMessageDelta, CommandExecutionRequestApproval, ItemCompleted, ThreadLoadedList,
    ThreadStart, TurnCompleted, TurnStart,
};
use agentwire_protocol::{ThreadStartResponse, TurnStatus};
use serde_json::{Value, json};

use crate::app_server_ws::App;
use crate::common::{fixture_steps, home_and_workspace, scratch};

fn server(home: &Path, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agentwire"));
    command
        .arg("app-server")
        .args(args)
        .env("AGENTWIRE_HOME", home)
        .env("RUST_LOG", "warn");
    command
}

fn params<T: agentwire_protocol::method::WireType>(value: Value) -> T {
    serde_json::from_value(value).expect("valid params")
}

async fn start_thread(client: &Client, workspace: &Path, extra: Value) -> ThreadStartResponse {
    let mut thread = json!({"cwd": workspace});
    if let (Some(thread), Value::Object(extra)) = (thread.as_object_mut(), extra) {
        thread.extend(extra);
    }
    client
        .request::<ThreadStart>(params(thread))
        .await
        .expect("thread/start")
}

/// Runs a turn with `text` and returns every notification up to its `turn/completed`.
async fn run_turn(
    client: &Client,
    thread: &str,
    text: &str,
) -> Vec<agentwire_client::Notification> {
    let turn = client
        .request::<TurnStart>(params(json!({
            "threadId": thread, "input": [{"type": "text", "text": text}]
        })))
        .await
        .expect("turn/start")
        .turn;
    let mut seen = Vec::new();
    loop {
        let notification =
            tokio::time::timeout(Duration::from_secs(60), client.next_notification())
                .await
                .expect("a notification in time")
                .expect("the connection is open");
        let done = notification
            .parse::<TurnCompleted>()
            .map(|c| c.expect("turn/completed parses"))
            .is_some_and(|c| c.turn.id == turn.id);
        seen.push(notification);
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn stdio_typed_requests_streamed_notifications_and_server_errors() {
    let (home, workspace) = home_and_workspace(&scratch("client-stdio"));
    fixture_steps(
        &home,
        json!([{"type": "message", "deltas": ["Hello ", "there."]}]),
        "",
    );
    let client = Client::spawn(server(&home, &[]), ClientOptions::default())
        .await
        .expect("spawn and initialize");
    let info = client.server().expect("initialize answered");
    assert_eq!(
        serde_json::to_value(&info.codex_home).expect("path"),
        json!(home)
    );

    let thread = start_thread(&client, &workspace, json!({})).await.thread.id;
    let seen = run_turn(&client, &thread, "hi").await;
    let text: String = seen
        .iter()
        .filter_map(|n| n.parse::<AgentMessageDelta>())
        .map(|d| d.expect("delta parses").delta)
        .collect();
    assert_eq!(text, "Hello there.");
    let completed = seen
        .last()
        .and_then(|n| n.parse::<TurnCompleted>())
        .expect("turn/completed last")
        .expect("parses");
    assert_eq!(completed.turn.status, TurnStatus::Completed);
    assert!(seen.iter().any(|n| n.method == "turn/started"), "{seen:?}");

    // Errors keep the server's code, message and data.
    let error = client
        .request_value("thread/start", Some(json!({"cwd": 5})))
        .await
        .expect_err("cwd must be a string");
    let Error::Rpc { method, error, .. } = &error else {
        panic!("not a JSON-RPC error: {error:?}");
    };
    assert_eq!(method, "thread/start");
    assert_eq!(error.code, -32602, "{error:?}");
    assert!(error.message.contains("cwd"), "{error:?}");
    assert!(error.data.is_some(), "the data is kept: {error:?}");
    let missing = client
        .request_value("no/such/method", None)
        .await
        .expect_err("unknown method");
    assert_eq!(missing.code(), Some(-32601), "{missing}");
    assert!(missing.to_string().contains("no/such/method"), "{missing}");

    let status = client
        .shutdown(Duration::from_secs(20))
        .await
        .expect("shutdown")
        .expect("a child");
    assert!(status.success(), "{status:?}");
}

/// A home whose fixture asks to run a command (approval needed under `untrusted`).
fn approval_home(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let (home, workspace) = home_and_workspace(&scratch(name));
    let script = json!({"version": 1, "responses": [
        {"steps": [{"type": "command", "command": "touch approved.txt"},
                   {"type": "message", "deltas": ["done"]}]}
    ]});
    std::fs::write(home.join("tools.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"tools.json\"\n",
    )
    .expect("config");
    (home, workspace)
}

fn command_status(seen: &[agentwire_client::Notification]) -> Value {
    seen.iter()
        .filter_map(|n| n.parse::<ItemCompleted>())
        .map(|c| serde_json::to_value(c.expect("item/completed parses").item).expect("item"))
        .find(|item| item["type"] == json!("commandExecution"))
        .map(|item| item["status"].clone())
        .expect("a command item")
}

#[tokio::test]
async fn server_requests_are_declined_by_default_and_go_to_the_handler() {
    let approval = json!({"approvalPolicy": "untrusted", "sandbox": "workspace-write"});

    // Default handler: declined, the command does not run.
    let (home, workspace) = approval_home("client-decline");
    let client = Client::spawn(server(&home, &[]), ClientOptions::default())
        .await
        .expect("spawn");
    let thread = start_thread(&client, &workspace, approval.clone())
        .await
        .thread
        .id;
    let seen = run_turn(&client, &thread, "go").await;
    assert_eq!(command_status(&seen), json!("declined"));
    assert!(!workspace.join("approved.txt").exists());
    drop(client);

    // A handler that records and accepts: the command runs.
    let (home, workspace) = approval_home("client-accept");
    let asked: Arc<Mutex<Vec<ServerRequest>>> = Arc::default();
    let record = asked.clone();
    let options = ClientOptions::builder()
        .server_requests(handler_fn(move |request| {
            record.lock().expect("lock").push(request.clone());
            request.accept()
        }))
        .build();
    let client = Client::spawn(server(&home, &[]), options)
        .await
        .expect("spawn");
    let thread = start_thread(&client, &workspace, approval).await.thread.id;
    let seen = run_turn(&client, &thread, "go").await;
    assert_eq!(command_status(&seen), json!("completed"));
    assert!(workspace.join("approved.txt").exists());
    let asked = asked.lock().expect("lock").clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let request = asked[0]
        .parse::<CommandExecutionRequestApproval>()
        .expect("an approval request")
        .expect("its params parse");
    assert_eq!(request.thread_id, thread);
    assert_eq!(request.command.as_deref(), Some("touch approved.txt"));
}

#[tokio::test]
async fn overloaded_requests_are_retried_until_answered() {
    let (home, workspace) = home_and_workspace(&scratch("client-retry"));
    let spawn = |retry: RetryPolicy| {
        let options = ClientOptions::builder().retry(retry).build();
        Client::spawn(server(&home, &["--max-in-flight", "1"]), options)
    };
    // One request in flight (a command that runs for a while): the next is refused -32001.
    let slow = json!({"command": ["sleep", "1"], "cwd": workspace});
    let client = spawn(RetryPolicy::none()).await.expect("spawn");
    let (held, refused) = tokio::join!(
        client.request_value("command/exec", Some(slow.clone())),
        client.request::<ThreadLoadedList>(params(json!({}))),
    );
    held.expect("command/exec");
    let refused = refused.expect_err("refused while the other request runs");
    assert_eq!(refused.code(), Some(-32001), "{refused}");
    assert!(refused.to_string().contains("overloaded"), "{refused}");

    // With retries the same request is answered once the first is done.
    let patient = RetryPolicy {
        max_attempts: 40,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
    };
    let client = spawn(patient).await.expect("spawn");
    let (held, answered) = tokio::join!(
        client.request_value("command/exec", Some(slow)),
        client.request::<ThreadLoadedList>(params(json!({}))),
    );
    held.expect("command/exec");
    answered.expect("answered after retries");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_with_a_bearer_token_and_the_unix_control_socket() {
    let (home, workspace) = home_and_workspace(&scratch("client-ws"));
    let token_file = home.join("token");
    std::fs::write(&token_file, "s3cret\n").expect("token");
    let token_arg = token_file.to_string_lossy().into_owned();
    let app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth-token-file",
            &token_arg,
        ],
    );
    let url = format!("ws://{}", app.listening_addr());

    let refused = Client::connect(&url, ClientOptions::default())
        .await
        .expect_err("no token");
    assert!(matches!(refused, Error::Connect { .. }), "{refused:?}");
    assert!(refused.to_string().contains("401"), "{refused}");

    let options = ClientOptions::builder()
        .bearer_token("s3cret".to_owned())
        .build();
    let client = Client::connect(&url, options).await.expect("connect");
    let thread = start_thread(&client, &workspace, json!({})).await.thread.id;
    let loaded = client
        .request::<ThreadLoadedList>(params(json!({})))
        .await
        .expect("thread/loaded/list");
    assert!(loaded.data.contains(&thread), "{loaded:?}");
    client
        .shutdown(Duration::from_secs(5))
        .await
        .expect("close");
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");

    let app = App::spawn(&home, &["--listen", "unix://"]);
    app.wait_for_line("listening");
    let socket = home.join("app-server-control").join("app-server.sock");
    let client = Client::connect(
        &format!("unix://{}", socket.display()),
        ClientOptions::default(),
    )
    .await
    .expect("connect over the socket");
    assert!(client.server().is_some());
    let thread = start_thread(&client, &workspace, json!({})).await.thread.id;
    let loaded = client
        .request::<ThreadLoadedList>(params(json!({})))
        .await
        .expect("thread/loaded/list");
    assert!(loaded.data.contains(&thread), "{loaded:?}");

    let missing = Client::connect(
        "unix:///nonexistent/agentwire.sock",
        ClientOptions::default(),
    )
    .await
    .expect_err("no socket");
    assert!(
        missing.to_string().contains("/nonexistent/agentwire.sock"),
        "{missing}"
    );
    let bad = Client::connect("http://127.0.0.1:1", ClientOptions::default())
        .await
        .expect_err("not a websocket URL");
    assert!(bad.to_string().contains("expected ws://"), "{bad}");
}

#[tokio::test]
async fn a_silent_server_times_out_and_a_dead_one_is_reported_closed() {
    // Reads stdin and never answers.
    let mut silent = tokio::process::Command::new("sleep");
    silent.arg("30");
    let options = ClientOptions::builder()
        .initialize_timeout(Duration::from_millis(300))
        .build();
    let error = Client::spawn(silent, options).await.expect_err("no answer");
    assert!(
        matches!(&error, Error::Timeout { method, .. } if method == "initialize"),
        "{error:?}"
    );

    // Exits at once.
    let dead = tokio::process::Command::new("true");
    let error = Client::spawn(dead, ClientOptions::default())
        .await
        .expect_err("no server");
    let Error::Closed { method, reason, .. } = &error else {
        panic!("not a closed connection: {error:?}");
    };
    assert_eq!(method, "initialize");
    assert!(
        reason.contains("closed its output") || reason.contains("cannot write"),
        "{reason}"
    );

    let error = Client::spawn(
        tokio::process::Command::new("/nonexistent/agentwire"),
        ClientOptions::default(),
    )
    .await
    .expect_err("cannot spawn");
    assert!(matches!(error, Error::Connect { .. }), "{error:?}");
    assert!(
        error.to_string().contains("/nonexistent/agentwire"),
        "{error}"
    );
}

/// Deltas of the flooding turn: far more output than the client's read buffer and the pipe hold.
const FLOOD_DELTAS: usize = 2000;

/// The `i`-th delta of the flooding turn.
fn flood_delta(i: usize) -> String {
    format!("d{i:04} ")
}

/// A home whose fixture streams [`FLOOD_DELTAS`] numbered deltas.
fn flood_home(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let (home, workspace) = home_and_workspace(&scratch(name));
    let deltas: Vec<String> = (0..FLOOD_DELTAS).map(flood_delta).collect();
    fixture_steps(&home, json!([{"type": "message", "deltas": deltas}]), "");
    (home, workspace)
}

/// Waits (at most a minute) until the file at `path` contains `needle`.
async fn wait_for_record(path: &Path, needle: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(needle) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{needle} never reached {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The rollout file of a started thread.
fn rollout(started: &ThreadStartResponse) -> std::path::PathBuf {
    started.thread.path.clone().expect("a rollout path").into()
}

/// Bytes written by process `pid` to its stdout (a pipe this process reads) and not read yet.
fn unread_stdout_bytes(pid: u32) -> u64 {
    let pipe = std::fs::read_link(format!("/proc/{pid}/fd/1")).expect("the server's stdout");
    let ours = std::fs::read_dir("/proc/self/fd")
        .expect("our fds")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|fd| std::fs::read_link(fd).is_ok_and(|target| target == pipe))
        .unwrap_or_else(|| panic!("no fd of ours reads {}", pipe.display()));
    // A second reader of the same pipe, only to ask how much it holds.
    let probe = rustix::fs::open(
        &ours,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .expect("open the pipe");
    rustix::io::ioctl_fionread(&probe).expect("FIONREAD")
}

/// docs/client.md: the queue holds `notification_buffer` messages; when it is full the client
/// stops reading, so the server sees backpressure (keep draining it). A client with a queue
/// of 8 that does not drain lets the server's output pile up in the pipe and gets no answer,
/// even to a request the server has handled; drained, it gets every notification once, in
/// order, then the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_notification_queue_stops_the_reader_until_it_is_drained() {
    let (home, workspace) = flood_home("client-backpressure");
    let options = ClientOptions::builder().notification_buffer(8).build();
    let client = Arc::new(
        Client::spawn(server(&home, &[]), options)
            .await
            .expect("spawn"),
    );
    let server_pid = client.pid().await.expect("a running server");
    let started = start_thread(&client, &workspace, json!({})).await;
    let thread = started.thread.id.clone();
    let record = rollout(&started);

    // Not drained from here on; the answers wait behind the notifications.
    let turn = tokio::spawn({
        let client = client.clone();
        let params = params(json!({"threadId": thread, "input": [{"type": "text", "text": "go"}]}));
        async move { client.request::<TurnStart>(params).await }
    });
    // The server runs the turn to its end...
    wait_for_record(&record, "\"type\":\"turnCompleted\"").await;
    // ...and handles the next request...
    let named = tokio::spawn({
        let client = client.clone();
        let params = json!({"threadId": thread, "name": "asked while full"});
        async move { client.request_value("thread/name/set", Some(params)).await }
    });
    wait_for_record(&record, "asked while full").await;
    // ...but its output stays in the pipe, and the answer does not reach the caller.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !named.is_finished(),
        "answered although nothing was drained"
    );
    let unread = unread_stdout_bytes(server_pid);
    assert!(
        unread >= 4096,
        "the client kept reading: {unread} bytes in the pipe"
    );

    // Drained: every notification, once and in order, then the answer.
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|n: &agentwire_client::Notification| n.is::<TurnCompleted>())
    {
        let notification =
            tokio::time::timeout(Duration::from_secs(60), client.next_notification())
                .await
                .expect("a notification in time")
                .expect("the connection is open");
        seen.push(notification);
    }
    let deltas: Vec<String> = seen
        .iter()
        .filter_map(|n| n.parse::<AgentMessageDelta>())
        .map(|d| d.expect("delta parses").delta)
        .collect();
    let expected: Vec<String> = (0..FLOOD_DELTAS).map(flood_delta).collect();
    assert!(deltas == expected, "deltas lost, repeated or out of order");
    let methods: Vec<&str> = seen.iter().map(|n| n.method.as_str()).collect();
    assert_eq!(
        methods.iter().filter(|m| **m == "turn/started").count(),
        1,
        "{methods:?}"
    );
    let first_delta = methods
        .iter()
        .position(|m| *m == "item/agentMessage/delta")
        .expect("deltas");
    let started_at = methods
        .iter()
        .position(|m| *m == "turn/started")
        .expect("turn/started");
    assert!(started_at < first_delta, "{methods:?}");
    turn.await
        .expect("the turn/start task")
        .expect("turn/start");
    let answer = tokio::time::timeout(Duration::from_secs(30), named)
        .await
        .expect("answered once drained")
        .expect("the thread/name/set task");
    assert_eq!(answer.expect("thread/name/set"), json!({}));
    // Nothing came twice: after turn/completed only the renaming's notification.
    let rest = tokio::time::timeout(Duration::from_secs(10), client.next_notification())
        .await
        .expect("the renaming's notification")
        .expect("open");
    assert_eq!(rest.method, "thread/name/updated", "{rest:?}");
}

/// docs/client.md: "set the buffer to 0 to discard notifications". With a queue of 0 the flood
/// of a turn is read and dropped: requests are answered behind it, and `next_notification`
/// has nothing to give.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_buffer_of_0_discards_notifications_and_requests_are_answered() {
    let (home, workspace) = flood_home("client-no-buffer");
    let options = ClientOptions::builder()
        .notification_buffer(0)
        .request_timeout(Duration::from_secs(20))
        .build();
    let client = Client::spawn(server(&home, &[]), options)
        .await
        .expect("spawn");
    let started = start_thread(&client, &workspace, json!({})).await;
    let thread = started.thread.id.clone();
    client
        .request::<TurnStart>(params(
            json!({"threadId": thread, "input": [{"type": "text", "text": "go"}]}),
        ))
        .await
        .expect("turn/start");
    wait_for_record(&rollout(&started), "\"type\":\"turnCompleted\"").await;
    let loaded = client
        .request::<ThreadLoadedList>(params(json!({})))
        .await
        .expect("answered behind the turn's notifications");
    assert!(loaded.data.contains(&thread), "{loaded:?}");
    let next = tokio::time::timeout(Duration::from_secs(5), client.next_notification())
        .await
        .expect("next_notification does not wait");
    assert_eq!(next, None);
}

/// Server requests the client handles at once (docs/client.md).
const HANDLED_AT_ONCE: usize = 64;

/// Holds every server request until opened, counting them.
#[derive(Default)]
struct Gate {
    calls: AtomicUsize,
    in_flight: AtomicUsize,
    most: AtomicUsize,
    open: tokio::sync::watch::Sender<bool>,
}

impl Gate {
    /// A handler that waits for the gate to open, then declines.
    fn handler(self: &Arc<Self>) -> agentwire_client::ServerRequestHandler {
        let gate = self.clone();
        Arc::new(move |request: ServerRequest| {
            let gate = gate.clone();
            Box::pin(async move {
                gate.calls.fetch_add(1, Ordering::SeqCst);
                let now = gate.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                gate.most.fetch_max(now, Ordering::SeqCst);
                let mut open = gate.open.subscribe();
                let _ = open.wait_for(|open| *open).await;
                gate.in_flight.fetch_sub(1, Ordering::SeqCst);
                request.decline("held, then declined")
            })
        })
    }
}

/// Sends a request over a raw websocket and reads up to its answer (anything else is dropped).
async fn ws_call<S>(
    ws: &mut tokio_tungstenite::WebSocketStream<S>,
    id: u64,
    method: &str,
    params: Value,
) -> Value
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use futures_util::SinkExt;
    let message = json!({"id": id, "method": method, "params": params});
    ws.send(tokio_tungstenite::tungstenite::Message::text(
        message.to_string(),
    ))
    .await
    .expect("send");
    loop {
        let answer = crate::app_server_ws::next_json(ws).await;
        if answer["id"] == json!(id) && answer.get("method").is_none() {
            return answer;
        }
    }
}

/// docs/client.md: "at most 64 server requests are handled at once" (the handler is "called
/// once per request on its own task"). 70 turns on 70 threads each wait for an approval; a
/// second connection following every thread shows that the server sent all 70, yet the
/// client's handler holds 64 and is not called again until one of them answers; then all 70
/// are answered and every turn completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_64_server_requests_are_handled_at_once() {
    const TURNS: usize = HANDLED_AT_ONCE + 6;
    let (home, workspace) = approval_home("client-64-requests");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let gate = Arc::new(Gate::default());
    let options = ClientOptions::builder()
        .server_requests(gate.handler())
        .build();
    let client = Arc::new(
        Client::connect(&format!("ws://{addr}"), options)
            .await
            .expect("connect"),
    );
    let approval = json!({"approvalPolicy": "untrusted", "sandbox": "workspace-write"});
    let mut threads = Vec::new();
    for _ in 0..TURNS {
        threads.push(
            start_thread(&client, &workspace, approval.clone())
                .await
                .thread
                .id,
        );
    }

    // The observer follows every thread and never answers.
    let mut observer = crate::app_server_ws::open(addr, None)
        .await
        .expect("upgrade");
    crate::app_server_ws::initialize(&mut observer).await;
    for (id, thread) in (1..).zip(&threads) {
        let resumed = ws_call(
            &mut observer,
            id,
            "thread/resume",
            json!({"threadId": thread}),
        )
        .await;
        assert!(resumed.get("result").is_some(), "{resumed}");
    }
    let (asked, mut all_asked) = tokio::sync::watch::channel(0usize);
    let observer = tokio::spawn(async move {
        let mut completed = 0;
        while completed < TURNS {
            let message = crate::app_server_ws::next_json(&mut observer).await;
            match message["method"].as_str() {
                Some("item/commandExecution/requestApproval") => {
                    asked.send_modify(|n| *n += 1);
                }
                Some("turn/completed") => completed += 1,
                _ => {}
            }
        }
        *asked.borrow()
    });

    let turns: Vec<_> = threads
        .iter()
        .map(|thread| {
            let client = client.clone();
            let params = params(json!({
                "threadId": thread, "input": [{"type": "text", "text": "go"}]
            }));
            tokio::spawn(async move { client.request::<TurnStart>(params).await })
        })
        .collect();
    tokio::time::timeout(Duration::from_secs(60), all_asked.wait_for(|n| *n == TURNS))
        .await
        .expect("the server asks about every turn")
        .expect("the observer runs");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while gate.calls.load(Ordering::SeqCst) < HANDLED_AT_ONCE {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the handler was called {} times",
            gate.calls.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // All 70 were sent; the 65th waits for a slot.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(gate.calls.load(Ordering::SeqCst), HANDLED_AT_ONCE);
    assert_eq!(gate.in_flight.load(Ordering::SeqCst), HANDLED_AT_ONCE);

    gate.open.send_replace(true);
    for turn in turns {
        tokio::time::timeout(Duration::from_secs(60), turn)
            .await
            .expect("turn/start answered")
            .expect("the turn/start task")
            .expect("turn/start");
    }
    let mut completed = Vec::new();
    while completed.len() < TURNS {
        let notification =
            tokio::time::timeout(Duration::from_secs(60), client.next_notification())
                .await
                .expect("a notification in time")
                .expect("the connection is open");
        if let Some(done) = notification.parse::<TurnCompleted>() {
            let done = done.expect("turn/completed parses");
            assert_eq!(done.turn.status, TurnStatus::Completed, "{done:?}");
            completed.push(done.thread_id);
        }
    }
    completed.sort();
    threads.sort();
    assert_eq!(completed, threads);
    assert_eq!(gate.calls.load(Ordering::SeqCst), TURNS);
    assert_eq!(gate.most.load(Ordering::SeqCst), HANDLED_AT_ONCE);
    let asked = tokio::time::timeout(Duration::from_secs(60), observer)
        .await
        .expect("the observer sees every turn end")
        .expect("the observer task");
    assert_eq!(asked, TURNS);
}
