//! `agentwire app-server --listen ws://…|unix://…`: the real binary behind real sockets.

use crate::wire_contract::Guard;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, header};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, client_async, connect_async};

use crate::common::{scratch, signal};

/// How long any single wait may take.
const WAIT: Duration = Duration::from_secs(30);
/// The SHA-256 of the token `secret`.
const SECRET_SHA256: &str = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

/// A running `agentwire app-server` whose stderr is collected line by line.
pub(crate) struct App {
    child: Child,
    lines: Receiver<String>,
    stderr: Arc<Mutex<Vec<String>>>,
    stdout: Option<std::thread::JoinHandle<Vec<u8>>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
}

impl App {
    pub(crate) fn spawn(home: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
            .arg("app-server")
            .args(args)
            .env("AGENTWIRE_HOME", home)
            .env("RUST_LOG", "info")
            .env_remove("LOG_FORMAT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn agentwire app-server");
        let stderr_pipe = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (sender, lines) = channel();
        let collected = stderr.clone();
        let stderr_reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                collected
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(line.clone());
                let _ = sender.send(line);
            }
        });
        let mut stdout_pipe = child.stdout.take().expect("stdout is piped");
        let stdout = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stdout_pipe.read_to_end(&mut bytes);
            bytes
        });
        Self {
            child,
            lines,
            stderr,
            stdout: Some(stdout),
            stderr_reader: Some(stderr_reader),
        }
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The first stderr line (from now on) containing `needle`.
    pub(crate) fn wait_for_line(&self, needle: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(_) => panic!("no {needle:?} in stderr:\n{}", self.stderr()),
            }
        }
    }

    /// The address from the `listening addr=…` log line.
    pub(crate) fn listening_addr(&self) -> SocketAddr {
        let line = self.wait_for_line("listening addr=");
        let addr = line
            .split_whitespace()
            .find_map(|word| word.strip_prefix("addr="))
            .unwrap_or_else(|| panic!("no addr= in {line:?}"));
        addr.parse().expect("the logged address parses")
    }

    pub(crate) fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .join("\n")
    }

    /// Waits for the process to exit on its own, and for the last of its stderr.
    fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("poll the child") {
                if let Some(reader) = self.stderr_reader.take() {
                    reader.join().expect("the stderr reader");
                }
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "still running:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends SIGTERM, waits for the exit; returns the status and what went to stdout.
    pub(crate) fn terminate(mut self) -> (ExitStatus, Vec<u8>) {
        signal(self.child.id(), "TERM");
        let status = self.wait();
        let stdout = self
            .stdout
            .take()
            .expect("stdout read once")
            .join()
            .expect("the stdout reader");
        (status, stdout)
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Sends a plain HTTP/1.1 request over `stream`; returns the status code.
async fn http_status(mut stream: impl AsyncRead + AsyncWrite + Unpin, head: &str) -> u16 {
    let request = format!("{head}Host: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut answer))
        .await
        .expect("answered in time")
        .expect("read the answer");
    let answer = String::from_utf8_lossy(&answer);
    answer
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"))
}

async fn get(addr: SocketAddr, path: &str, headers: &str) -> u16 {
    let stream = TcpStream::connect(addr).await.expect("connect");
    http_status(stream, &format!("GET {path} HTTP/1.1\r\n{headers}")).await
}

/// Opens a websocket to `addr` with an optional `Authorization` value; the HTTP status on
/// refusal.
pub(crate) async fn open(
    addr: SocketAddr,
    authorization: Option<&str>,
) -> Result<WebSocketStream<MaybeTlsStream<TcpStream>>, u16> {
    let mut request = format!("ws://{addr}/")
        .into_client_request()
        .expect("a client request");
    if let Some(value) = authorization {
        request.headers_mut().insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(value).expect("a header value"),
        );
    }
    match tokio::time::timeout(WAIT, connect_async(request))
        .await
        .expect("answered in time")
    {
        Ok((ws, _)) => Ok(ws),
        Err(WsError::Http(response)) => Err(response.status().as_u16()),
        Err(other) => panic!("upgrade failed without an HTTP answer: {other}"),
    }
}

pub(crate) async fn next_json<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
) -> Value {
    loop {
        let frame = tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("a frame in time");
        match frame {
            Some(Ok(Message::Text(text))) => {
                let message: Value = serde_json::from_str(&text).expect("JSON");
                // Notifications and server requests under contract here; answers in `request`.
                if message.get("method").is_some() {
                    let guard = Guard::initialized(true);
                    guard.server_sent(&text);
                    guard.assert_clean();
                }
                return message;
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            other => panic!("expected a JSON message, got {other:?}"),
        }
    }
}

pub(crate) async fn request<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
    id: Value,
    method: &str,
    params: Value,
) -> Value {
    let message = json!({ "id": id, "method": method, "params": params });
    let guard = Guard::initialized(true);
    guard.client_sent(&message.to_string());
    ws.send(Message::text(message.to_string()))
        .await
        .expect("send");
    let answer = next_json(ws).await;
    assert_eq!(answer["id"], id, "not the answer to {id}: {answer}");
    guard.server_sent(&answer.to_string());
    guard.assert_clean();
    answer
}

/// Completes the handshake; returns the `initialize` result.
pub(crate) async fn initialize<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
) -> Value {
    let params = json!({ "clientInfo": { "name": "e2e_ws", "version": "0.0.1" } });
    let answer = request(ws, json!(0), "initialize", params).await;
    let notification = json!({ "method": "initialized" }).to_string();
    ws.send(Message::text(notification)).await.expect("send");
    answer
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("initialize failed: {answer}"))
}

#[tokio::test]
async fn ws_serves_probes_and_the_protocol_then_exits_0_on_sigterm() {
    let home = scratch("ws-serve");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    assert_eq!(get(addr, "/readyz", "").await, 200);
    assert_eq!(get(addr, "/healthz", "").await, 200);
    let origin = "Origin: https://example.test\r\n";
    assert_eq!(get(addr, "/healthz", origin).await, 403);
    assert_eq!(get(addr, "/", origin).await, 403);

    let mut ws = open(addr, None).await.expect("upgrade");
    let mut other = open(addr, None).await.expect("upgrade");
    let result = initialize(&mut ws).await;
    assert_eq!(result["codexHome"], json!(home.to_string_lossy()));
    let refused = request(&mut other, json!(1), "thread/list", json!({})).await;
    assert_eq!(refused["error"]["message"], json!("Not initialized"));
    let unknown = request(&mut ws, json!(1), "no/such", json!({})).await;
    assert_eq!(unknown["error"]["code"], json!(-32601));
    app.wait_for_line("connection opened");

    let (status, stdout) = app.terminate();
    assert!(status.success(), "exit status {status:?}");
    assert!(
        stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&stdout)
    );
    // The open connections were closed by the server with "going away".
    match tokio::time::timeout(WAIT, ws.next())
        .await
        .expect("in time")
    {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(u16::from(frame.code), 1001),
        other => panic!("expected a close frame, got {other:?}"),
    }
}

#[tokio::test]
async fn ws_bearer_token_from_a_file_or_a_digest() {
    let home = scratch("ws-auth");
    let token_file = home.join("token");
    std::fs::write(&token_file, "  secret\n").expect("write the token file");
    let token_file = token_file.to_str().expect("utf-8 path");
    for flags in [
        ["--ws-auth-token-file", token_file],
        ["--ws-auth-token-sha256", SECRET_SHA256],
    ] {
        let mut args = vec!["--listen", "ws://127.0.0.1:0"];
        args.extend_from_slice(&flags);
        let app = App::spawn(&home, &args);
        let addr = app.listening_addr();
        assert_eq!(get(addr, "/readyz", "").await, 401, "{flags:?}");
        assert_eq!(
            get(addr, "/readyz", "Authorization: Bearer secret\r\n").await,
            200
        );
        assert_eq!(get(addr, "/healthz", "").await, 200);
        assert_eq!(open(addr, None).await.err(), Some(401), "{flags:?}");
        assert_eq!(open(addr, Some("Bearer wrong")).await.err(), Some(401));
        let mut ws = open(addr, Some("Bearer secret")).await.expect("authorized");
        initialize(&mut ws).await;
        let (status, _) = app.terminate();
        assert!(status.success(), "{flags:?}: {status:?}");
    }
}

#[test]
fn a_non_loopback_listener_without_a_token_refuses_to_start() {
    let home = scratch("ws-noauth");
    for listen in ["ws://0.0.0.0:0", "ws://[::]:0"] {
        let mut app = App::spawn(&home, &["--listen", listen]);
        let status = app.wait();
        assert!(!status.success(), "{listen} started");
        let stderr = app.stderr();
        assert!(
            stderr.contains("without authentication") && stderr.contains("--ws-auth-token-file"),
            "{listen}: {stderr}"
        );
    }
}

#[test]
fn bad_listen_values_and_misplaced_token_flags_are_refused() {
    let home = scratch("ws-bad");
    for args in [
        &["--listen", "tcp://127.0.0.1:1"][..],
        &["--listen", "ws://localhost:4500"],
        &["--listen", "ws://127.0.0.1"],
        &["--listen", "wss://127.0.0.1:1"],
    ] {
        let mut app = App::spawn(&home, args);
        assert!(!app.wait().success(), "{args:?} started");
        let stderr = app.stderr();
        assert!(stderr.contains("invalid --listen"), "{args:?}: {stderr}");
    }
    let mut app = App::spawn(&home, &["--ws-auth-token-sha256", SECRET_SHA256]);
    assert!(!app.wait().success());
    assert!(app.stderr().contains("apply to ws:// and unix:// only"));
    let mut app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth-token-sha256",
            "abc",
        ],
    );
    assert!(!app.wait().success());
    assert!(
        app.stderr().contains("64 hexadecimal digits"),
        "{}",
        app.stderr()
    );
    // An empty token file would stand for the empty token.
    let empty = home.join("empty-token");
    std::fs::write(&empty, "  \n").expect("write the empty token file");
    let mut app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth-token-file",
            empty.to_str().expect("utf-8 path"),
        ],
    );
    assert!(!app.wait().success());
    assert!(app.stderr().contains("is empty"), "{}", app.stderr());
    // The digest of the empty string would stand for a token no client can present.
    let mut app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth-token-sha256",
            "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
        ],
    );
    assert!(!app.wait().success());
    assert!(
        app.stderr().contains("SHA-256 of the empty string"),
        "{}",
        app.stderr()
    );
}

#[tokio::test]
async fn a_text_frame_that_is_not_utf8_closes_with_1007() {
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};

    let home = scratch("ws-utf8");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let mut ws = open(app.listening_addr(), None).await.expect("upgrade");
    initialize(&mut ws).await;
    let bad = Frame::message(
        &b"{\"id\":1,\"method\":\"\xff\"}"[..],
        OpCode::Data(Data::Text),
        true,
    );
    ws.send(Message::Frame(bad))
        .await
        .expect("send the raw frame");
    match tokio::time::timeout(WAIT, ws.next())
        .await
        .expect("in time")
    {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(u16::from(frame.code), 1007),
        other => panic!("expected a close frame, got {other:?}"),
    }
}

/// Through the binary, `--max-message-bytes` on ws: a binary frame gets -32600 and the
/// connection goes on; a message at the limit is served; one past it gets -32600 naming both
/// sizes, then close 1009.
#[tokio::test]
async fn ws_refuses_binary_frames_and_messages_over_the_limit() {
    const LIMIT: usize = 1024;
    let home = scratch("ws-message-limit");
    let app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--max-message-bytes",
            "1024",
        ],
    );
    let mut ws = open(app.listening_addr(), None).await.expect("upgrade");
    initialize(&mut ws).await;
    let padded = |id: u64, bytes: usize| {
        let mut text = json!({"id": id, "method": "thread/list", "params": {}}).to_string();
        text.push_str(&" ".repeat(bytes - text.len()));
        Message::text(text)
    };

    ws.send(Message::binary(b"{}".to_vec()))
        .await
        .expect("send");
    let refused = next_json(&mut ws).await;
    assert_eq!(refused["error"]["code"], json!(-32600), "{refused}");
    ws.send(padded(1, LIMIT)).await.expect("send");
    let listed = next_json(&mut ws).await;
    assert_eq!(listed["id"], json!(1), "{listed}");
    assert!(listed.get("result").is_some(), "{listed}");

    ws.send(padded(2, LIMIT + 1)).await.expect("send");
    let refused = next_json(&mut ws).await;
    assert_eq!(
        refused["error"]["message"],
        json!(format!(
            "Message of {} bytes exceeds the limit of {LIMIT} bytes",
            LIMIT + 1
        )),
        "{refused}"
    );
    assert_eq!(refused["error"]["code"], json!(-32600));
    match tokio::time::timeout(WAIT, ws.next())
        .await
        .expect("in time")
    {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(u16::from(frame.code), 1009),
        other => panic!("expected a close frame with 1009, got {other:?}"),
    }
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn unix_default_socket_is_private_serves_and_is_removed_on_exit() {
    let home = scratch("ws-unix");
    let app = App::spawn(&home, &["--listen", "unix://"]);
    app.wait_for_line("listening");
    let path = home.join("app-server-control").join("app-server.sock");
    let mode = std::fs::metadata(&path)
        .expect("the socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");

    let probe = UnixStream::connect(&path).await.expect("connect");
    assert_eq!(http_status(probe, "GET /readyz HTTP/1.1\r\n").await, 200);
    let stream = UnixStream::connect(&path).await.expect("connect");
    let (mut ws, _) = client_async("ws://localhost/", stream)
        .await
        .expect("websocket handshake over the socket");
    let result = initialize(&mut ws).await;
    assert_eq!(result["codexHome"], json!(home.to_string_lossy()));

    let (status, stdout) = app.terminate();
    assert!(status.success(), "{status:?}");
    assert!(stdout.is_empty());
    assert!(!path.exists(), "the socket file was left behind");
}

/// docs/app-server.md (`unix://PATH`): a socket at a path of the user's choosing is private too (0600),
/// whatever the umask the server was started with; it is made so before it listens, so no
/// connection is ever accepted while it has the umask's mode.
#[test]
fn a_unix_socket_at_a_chosen_path_is_private_under_any_umask() {
    let home = scratch("ws-unix-path");
    let dir = scratch("ws-unix-path-dir");
    let path = dir.join("chosen.sock");
    let listen = format!("unix://{}", path.display());
    let mut child = Command::new("sh")
        .args(["-c", "umask 000 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_agentwire"))
        .args(["app-server", "--listen", &listen])
        .env("AGENTWIRE_HOME", &home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn agentwire app-server");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(Instant::now() < deadline, "no socket at {listen}");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Listening, so made private already.
    let connected = (0..3000).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        std::os::unix::net::UnixStream::connect(&path).is_ok()
    });
    assert!(connected, "the server never listened at {listen}");
    let mode = std::fs::metadata(&path)
        .expect("the socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");
    signal(child.id(), "TERM");
    assert!(child.wait().expect("wait").success());
    assert!(!path.exists(), "the socket file was left behind");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_is_disconnected_and_others_keep_being_answered() {
    let home = scratch("ws-slow");
    let app = App::spawn(
        &home,
        &["--listen", "ws://127.0.0.1:0", "--outbound-queue", "4"],
    );
    let addr = app.listening_addr();
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .set_recv_buffer_size(4096)
        .expect("a small receive buffer");
    let stream = socket.connect(addr).await.expect("connect");
    let (mut slow, _) = client_async(format!("ws://{addr}/"), stream)
        .await
        .expect("handshake");
    initialize(&mut slow).await;
    let mut fast = open(addr, None).await.expect("upgrade");
    initialize(&mut fast).await;

    // Each request answers "Method not found: <its 32 KiB method name>"; the slow client
    // sends them without ever reading.
    let padding = "x".repeat(32 * 1024);
    let flood = tokio::spawn(async move {
        let mut sent = 0u32;
        for id in 0..2000u32 {
            let message = json!({ "id": id, "method": format!("no/such/{padding}") });
            let sending = slow.send(Message::text(message.to_string()));
            match tokio::time::timeout(Duration::from_secs(5), sending).await {
                Ok(Ok(())) => sent += 1,
                Ok(Err(_)) | Err(_) => break,
            }
        }
        sent
    });
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut id = 1u32;
    while !flood.is_finished() || id <= 20 {
        assert!(started.elapsed() < WAIT, "the flood did not end");
        let asked = Instant::now();
        let answer = request(&mut fast, json!(id), "no/such", json!({})).await;
        assert_eq!(answer["error"]["code"], json!(-32601));
        slowest = slowest.max(asked.elapsed());
        id += 1;
    }
    assert!(
        slowest < Duration::from_secs(2),
        "an answer took {slowest:?}"
    );
    let sent = flood.await.expect("the flood task");
    assert!(sent < 2000, "the slow reader was never disconnected");
    let line = app.wait_for_line("slow reader: outbound queue full");
    assert!(line.contains("connection closed"), "{line}");
    let answer = request(&mut fast, json!("after"), "no/such", json!({})).await;
    assert_eq!(answer["error"]["code"], json!(-32601));
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
}

/// Messages up to and including the notification `method`.
pub(crate) async fn until<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
    method: &str,
) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let message = next_json(ws).await;
        let done = message["method"] == json!(method);
        seen.push(message);
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn a_connection_that_resumes_a_thread_follows_its_turns() {
    let home = scratch("ws-follow");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let mut a = open(addr, None).await.expect("upgrade");
    let mut b = open(addr, None).await.expect("upgrade");
    let mut c = open(addr, None).await.expect("upgrade");
    for ws in [&mut a, &mut b, &mut c] {
        initialize(ws).await;
    }
    let started = request(&mut a, json!(1), "thread/start", json!({})).await;
    let thread = started["result"]["thread"]["id"].clone();
    until(&mut a, "thread/started").await;
    let resumed = request(
        &mut b,
        json!(1),
        "thread/resume",
        json!({"threadId": thread}),
    )
    .await;
    assert_eq!(resumed["result"]["thread"]["id"], thread, "{resumed}");

    let input = json!([{"type": "text", "text": "Say hello."}]);
    let turn = request(
        &mut a,
        json!(2),
        "turn/start",
        json!({"threadId": thread, "input": input}),
    )
    .await;
    assert!(turn.get("result").is_some(), "{turn}");
    let for_a = until(&mut a, "turn/completed").await;
    let for_b = until(&mut b, "turn/completed").await;
    let turn_events = |seen: &[Value]| -> Vec<String> {
        seen.iter()
            .filter_map(|m| m["method"].as_str())
            .filter(|m| m.starts_with("turn/") || m.starts_with("item/"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(turn_events(&for_a), turn_events(&for_b));
    assert!(
        turn_events(&for_b).contains(&"item/agentMessage/delta".to_owned()),
        "{for_b:?}"
    );
    // A connection that never touched the thread sees none of its turn (thread status changes
    // are for every connection).
    let ask = json!({"id": 1, "method": "thread/loaded/list", "params": {}});
    c.send(Message::text(ask.to_string())).await.expect("send");
    let mut for_c = Vec::new();
    let listed = loop {
        let message = next_json(&mut c).await;
        if message["id"] == json!(1) {
            break message;
        }
        for_c.push(message);
    };
    assert_eq!(listed["result"]["data"], json!([thread]), "{listed}");
    assert!(turn_events(&for_c).is_empty(), "{for_c:?}");
    drop(app);
}

/// A frame that stops arriving half-way is not held for ever: the server pings, and closes a
/// connection that sends no frame at all (not even a pong) within the idle timeout. A client
/// that is merely quiet answers the pings and stays.
#[tokio::test]
async fn a_frame_that_stops_arriving_is_cut_and_a_quiet_client_stays() {
    let home = scratch("ws-idle");
    let app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-ping-interval-ms",
            "200",
            "--ws-idle-timeout-ms",
            "1000",
        ],
    );
    let addr = app.listening_addr();
    let mut quiet = open(addr, None).await.expect("upgrade");
    initialize(&mut quiet).await;

    // The attacker: a 1 MiB text frame announced, 10 bytes of it sent, then nothing.
    let mut stalled = crate::ws_budget::raw_upgrade(addr).await;
    let mut frame = crate::ws_budget::text_frame_header(1 << 20);
    frame.extend_from_slice(&[b'x' ^ 1; 10]);
    stalled.write_all(&frame).await.expect("partial frame");

    // Meanwhile the quiet client only reads (answering pings) for longer than the timeout.
    let listening = async {
        loop {
            match quiet.next().await {
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                other => panic!("the quiet client got {other:?}"),
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_millis(2500), listening).await;

    // The stalled connection was closed: the server's close frame, then the end of the stream.
    let mut rest = Vec::new();
    tokio::time::timeout(WAIT, stalled.read_to_end(&mut rest))
        .await
        .expect("the server closed the stalled connection")
        .expect("read");
    // Pings (0x89) may come first; then a close frame (0x88) with code 1008.
    assert!(
        rest.windows(4)
            .any(|w| w[0] == 0x88 && w[2..4] == 1008u16.to_be_bytes()),
        "no close frame with code 1008 in {rest:?}"
    );
    // The quiet one still answers.
    let answer = request(&mut quiet, json!("still"), "no/such", json!({})).await;
    assert_eq!(answer["error"]["code"], json!(-32601));
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
}

/// Reads `stream` until the server ends it (end of stream or reset), writing one byte of
/// `trickle` a second meanwhile; how long after `since` it ended. Panics if that takes 20 s.
async fn cut_after(mut stream: TcpStream, trickle: &[u8], since: Instant) -> Duration {
    let mut next = trickle.iter();
    let mut buffer = [0u8; 1024];
    let deadline = since + Duration::from_secs(20);
    loop {
        let tick = tokio::time::sleep(Duration::from_secs(1));
        tokio::select! {
            read = stream.read(&mut buffer) => match read {
                Ok(0) | Err(_) => return since.elapsed(),
                Ok(n) => panic!(
                    "an answer to an unfinished head: {:?}",
                    String::from_utf8_lossy(&buffer[..n])
                ),
            },
            () = tick => {
                if let Some(byte) = next.next()
                    && stream.write_all(&[*byte]).await.is_err()
                {
                    return since.elapsed();
                }
            }
        }
        assert!(Instant::now() < deadline, "still open after 20 s");
    }
}

/// docs/security.md ("Websocket framing"): "Slow or silent HTTP heads are cut after 10 s",
/// through the binary at its default. A connection that sends nothing, and one that trickles
/// a request head a byte a second without ever finishing it, are both closed about 10 s after
/// they connected; a websocket client connected meanwhile is answered throughout, and after.
#[tokio::test]
async fn silent_and_trickling_http_heads_are_cut_after_10_s_while_others_are_served() {
    let home = scratch("ws-head-deadline");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let head = format!(
        "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         X-Slow: {}",
        "x".repeat(64)
    );
    let silent = TcpStream::connect(addr).await.expect("connect");
    let silent_since = Instant::now();
    let silent = tokio::spawn(cut_after(silent, b"", silent_since));
    let trickling = TcpStream::connect(addr).await.expect("connect");
    let trickling_since = Instant::now();
    let trickling =
        tokio::spawn(async move { cut_after(trickling, head.as_bytes(), trickling_since).await });

    // Meanwhile a websocket client asks something every half second, answered at once.
    let mut ws = open(addr, None).await.expect("upgrade");
    initialize(&mut ws).await;
    let mut asked = 0u32;
    while !(silent.is_finished() && trickling.is_finished()) {
        let sent = Instant::now();
        let answer = request(&mut ws, json!(asked), "thread/list", json!({})).await;
        assert_eq!(answer["result"]["data"], json!([]), "{answer}");
        assert!(
            sent.elapsed() < Duration::from_secs(2),
            "answered in {:?}",
            sent.elapsed()
        );
        asked += 1;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        asked >= 15,
        "only {asked} requests while the heads were pending"
    );
    for (name, task) in [("silent", silent), ("trickling", trickling)] {
        let after = task.await.expect("the watching task");
        assert!(
            (Duration::from_secs(9)..Duration::from_secs(15)).contains(&after),
            "the {name} connection was cut after {after:?}"
        );
    }

    // The websocket opened in time lives on past the deadline; new clients are served.
    let answer = request(&mut ws, json!("after"), "thread/list", json!({})).await;
    assert_eq!(answer["result"]["data"], json!([]), "{answer}");
    assert_eq!(get(addr, "/healthz", "").await, 200);
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
}

/// A websocket upgrade request for `path` with `extra` header lines (each ending in CRLF).
fn upgrade_head(path: &str, extra: &str) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    )
}

/// Writes `bytes` on a fresh connection to `addr` and returns, lowercased, everything the
/// server writes until it ends the connection (which it must do within 10 s).
async fn until_closed(addr: SocketAddr, bytes: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(bytes.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the server kept the connection open after {:?}",
                String::from_utf8_lossy(&answer)
            )
        })
        .expect("read the answer");
    String::from_utf8_lossy(&answer).to_ascii_lowercase()
}

/// The head of the server's answer to `bytes` on a fresh connection to `addr`, lowercased,
/// without waiting for the connection to end.
async fn answer_head(addr: SocketAddr, bytes: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(bytes.as_bytes()).await.expect("write");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let read = tokio::time::timeout(WAIT, stream.read(&mut byte))
            .await
            .expect("answered in time")
            .expect("read the answer");
        assert_eq!(read, 1, "the connection ended after {head:?}");
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).to_ascii_lowercase()
}

/// A server listening on loopback whose clients must give the bearer token `secret`, and its
/// address.
fn with_token(name: &str) -> (App, SocketAddr) {
    let home = scratch(name);
    let token_file = home.join("token");
    std::fs::write(&token_file, "secret\n").expect("write the token file");
    let token_file = token_file.to_str().expect("utf-8 path");
    let app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth-token-file",
            token_file,
        ],
    );
    let addr = app.listening_addr();
    (app, addr)
}

/// docs/app-server.md (`ws://`) and docs/security.md ("Who can talk to the server"): any request
/// carrying an `Origin` header gets 403, the websocket upgrade included, and a valid bearer
/// token does not change that. Through the binary with `--ws-auth-token-file`: upgrade
/// requests with an `Origin` (on `/` and another path, with the right token) get 403, no
/// switch of protocols, and the connection ends; the same request without `Origin` switches
/// to a websocket that serves (the control), and without the token gets 401.
#[tokio::test]
async fn an_upgrade_carrying_an_origin_is_refused_with_403_even_with_a_valid_token() {
    let (app, addr) = with_token("ws-origin-upgrade");
    let token = "Authorization: Bearer secret\r\n";
    for (path, origin) in [
        ("/", "Origin: https://example.test\r\n"),
        ("/", "Origin: null\r\n"),
        ("/any/path", &format!("Origin: http://{addr}\r\n")),
    ] {
        let answer = until_closed(addr, &upgrade_head(path, &format!("{token}{origin}"))).await;
        assert!(
            answer.starts_with("http/1.1 403 "),
            "{path} {origin:?}: {answer}"
        );
        assert!(!answer.contains("upgrade: websocket"), "{answer}");
        assert!(answer.contains("connection: close\r\n"), "{answer}");
    }
    app.wait_for_line("request with an Origin header refused");
    // The same refusal through a websocket client library.
    let mut browser = format!("ws://{addr}/")
        .into_client_request()
        .expect("a client request");
    for (name, value) in [
        (header::AUTHORIZATION, "Bearer secret"),
        (header::ORIGIN, "http://localhost:3000"),
    ] {
        browser
            .headers_mut()
            .insert(name, HeaderValue::from_static(value));
    }
    match tokio::time::timeout(WAIT, connect_async(browser))
        .await
        .expect("answered in time")
    {
        Err(WsError::Http(response)) => assert_eq!(response.status().as_u16(), 403),
        Ok(_) => panic!("a websocket opened despite the Origin header"),
        Err(other) => panic!("upgrade failed without an HTTP answer: {other}"),
    }

    // Controls: without `Origin`, the same upgrade switches protocols; without the token, 401.
    let head = answer_head(addr, &upgrade_head("/", token)).await;
    assert!(head.starts_with("http/1.1 101 "), "{head}");
    assert!(head.contains("upgrade: websocket\r\n"), "{head}");
    let refused = until_closed(addr, &upgrade_head("/", "")).await;
    assert!(refused.starts_with("http/1.1 401 "), "{refused}");
    let mut ws = open(addr, Some("Bearer secret")).await.expect("authorized");
    initialize(&mut ws).await;
    let listed = request(&mut ws, json!(1), "thread/list", json!({})).await;
    assert_eq!(listed["result"]["data"], json!([]), "{listed}");
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
}

/// docs/app-server.md: "Plain HTTP answers (`/readyz`, `/healthz`, refusals) carry `Connection:
/// close`, so every request on a connection is its first." Through the binary with a token:
/// each plain request (a 200, a 401, two 403s), sent asking for keep-alive and followed on the
/// same connection by a second request, gets exactly one answer with `Connection: close`, and
/// the server ends the connection without answering the second.
#[tokio::test]
async fn a_plain_http_answer_closes_its_connection_and_a_second_request_on_it_is_never_answered() {
    let (app, addr) = with_token("ws-connection-close");
    let token = "Authorization: Bearer secret\r\n";
    let keep_alive = "Host: localhost\r\nConnection: keep-alive\r\n";
    let second = format!("GET /healthz HTTP/1.1\r\n{keep_alive}\r\n");
    for (head, status) in [
        (
            format!("GET /readyz HTTP/1.1\r\n{keep_alive}{token}\r\n"),
            200,
        ),
        (format!("GET /healthz HTTP/1.1\r\n{keep_alive}\r\n"), 200),
        (format!("GET /readyz HTTP/1.1\r\n{keep_alive}\r\n"), 401),
        (
            format!("GET /healthz HTTP/1.1\r\n{keep_alive}Origin: http://a.test\r\n\r\n"),
            403,
        ),
        (
            upgrade_head("/", &format!("{token}Origin: http://a.test\r\n")),
            403,
        ),
    ] {
        let answer = until_closed(addr, &format!("{head}{second}")).await;
        assert!(
            answer.starts_with(&format!("http/1.1 {status} ")),
            "{head:?}: {answer}"
        );
        assert_eq!(
            answer.matches("http/1.1 ").count(),
            1,
            "{head:?}: the second request was answered: {answer}"
        );
        assert!(
            answer.contains("connection: close\r\n"),
            "{head:?}: {answer}"
        );
    }
    // The switch to a websocket is not affected.
    let mut ws = open(addr, Some("Bearer secret")).await.expect("authorized");
    initialize(&mut ws).await;
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
}

/// The opening handshake (`runtime/src/ws/upgrade.rs`, RFC 6455 §4.2), through the binary: a
/// handshake switches protocols with the `Sec-WebSocket-Accept` that RFC 6455 §1.3 gives for
/// its key, and a request that is not one is told what is wrong in the connection's only
/// answer: another method gets 405 and `Allow: GET`, no upgrade asked for 426 and `Upgrade:
/// websocket`, another protocol version 426 and `Sec-WebSocket-Version: 13`, no key 400.
#[tokio::test]
async fn a_handshake_switches_with_the_rfc_accept_value_and_other_requests_hear_what_is_wrong() {
    let home = scratch("ws-handshake");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let handshake = upgrade_head("/", "");
    let head = answer_head(addr, &handshake).await;
    assert!(head.starts_with("http/1.1 101 "), "{head}");
    assert!(
        head.contains("\r\nsec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo=\r\n"),
        "{head}"
    );
    let no_upgrade = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".to_owned();
    let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    for (request, status, telling) in [
        (
            handshake.replacen("GET", "POST", 1),
            405,
            "\r\nallow: get\r\n",
        ),
        (no_upgrade, 426, "\r\nupgrade: websocket\r\n"),
        (
            handshake.replace("Version: 13", "Version: 8"),
            426,
            "\r\nsec-websocket-version: 13\r\n",
        ),
        (handshake.replace(key, ""), 400, "sec-websocket-key"),
    ] {
        let answer = until_closed(addr, &request).await;
        assert!(
            answer.starts_with(&format!("http/1.1 {status} ")),
            "{request:?}: {answer}"
        );
        assert!(answer.contains(telling), "{request:?}: {answer}");
        assert!(!answer.contains("sec-websocket-accept"), "{answer}");
    }
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
}
