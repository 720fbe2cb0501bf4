//! `agentwire-client` against `agentwire app-server`: over a child's stdio, ws:// with a bearer
//! token and the unix:// control socket; typed requests and notifications, the server-request
//! handler, errors as the server sent them, and retries of overloaded requests.

use std::path::Path;
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
    let Error::Rpc { method, error } = &error else {
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
    let options = ClientOptions {
        server_requests: handler_fn(move |request| {
            record.lock().expect("lock").push(request.clone());
            request.accept()
        }),
        ..ClientOptions::default()
    };
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
        let options = ClientOptions {
            retry,
            ..ClientOptions::default()
        };
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

    let options = ClientOptions {
        bearer_token: Some("s3cret".to_owned()),
        ..ClientOptions::default()
    };
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
    let options = ClientOptions {
        initialize_timeout: Duration::from_millis(300),
        ..ClientOptions::default()
    };
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
    let Error::Closed { method, reason } = &error else {
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
