//! The websocket transports in-process: the scripted handler behind a real `ws://127.0.0.1:0`
//! or `unix://` listener, driven by tokio-tungstenite clients.

use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{Initialize, Initialized, ThreadList, ThreadRead};
use agentwire_runtime::{BearerAuth, BindError, WsListener};
use agentwire_runtime::{RuntimeConfig, Server};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, header};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, client_async, connect_async};

use crate::harness::{PATIENCE, error, home, is_answer_to, test_config};
use crate::scripted::{Scripted, State};

const INVALID_REQUEST: i64 = -32600;
const TOKEN: &str = "correct horse battery staple";

/// A listener serving the scripted handler on a task of the test's runtime.
struct Served {
    server: Server<Scripted>,
    state: Arc<State>,
    addr: Option<SocketAddr>,
    stop: Option<oneshot::Sender<()>>,
    serving: JoinHandle<std::io::Result<()>>,
}

impl Served {
    fn start(listener: WsListener, config: RuntimeConfig) -> Self {
        let handler = Scripted::default();
        let state = handler.state.clone();
        let server = Server::new(handler, config, tokio::runtime::Handle::current());
        let addr = listener.tcp_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = tokio::spawn(listener.serve(server.clone(), async {
            let _ = stopped.await;
        }));
        Self {
            server,
            state,
            addr,
            stop: Some(stop),
            serving,
        }
    }

    async fn tcp(adjust: impl FnOnce(&mut RuntimeConfig), auth: Option<BearerAuth>) -> Self {
        let mut config = test_config();
        adjust(&mut config);
        let loopback: SocketAddr = "127.0.0.1:0".parse().expect("an address");
        let listener = WsListener::bind_tcp(loopback, auth)
            .await
            .expect("bind 127.0.0.1:0");
        Self::start(listener, config)
    }

    fn addr(&self) -> SocketAddr {
        self.addr.expect("a TCP listener")
    }

    fn url(&self) -> String {
        format!("ws://{}/", self.addr())
    }

    /// Asks the listener to shut down and waits until it has.
    async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(PATIENCE, &mut self.serving)
            .await
            .expect("the listener shut down in time")
            .expect("the serving task did not panic")
            .expect("serve returned Ok");
    }
}

/// Sends `message` as one text frame.
async fn send<S: AsyncRead + AsyncWrite + Unpin>(ws: &mut WebSocketStream<S>, message: &Value) {
    ws.send(Message::text(message.to_string()))
        .await
        .expect("send a frame");
}

/// The next frame within the test's patience; `None` once the connection has ended.
async fn next_frame<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
) -> Option<Result<Message, WsError>> {
    tokio::time::timeout(PATIENCE, ws.next())
        .await
        .expect("a frame or the end of the connection in time")
}

/// The next JSON message; fails on anything else.
async fn next_json<S: AsyncRead + AsyncWrite + Unpin>(ws: &mut WebSocketStream<S>) -> Value {
    loop {
        match next_frame(ws).await {
            Some(Ok(Message::Text(text))) => {
                return serde_json::from_str(&text).expect("a JSON text frame");
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            other => panic!("expected a JSON message, got {other:?}"),
        }
    }
}

/// Sends a request and returns its answer (no other message may come first).
async fn request<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
    id: Value,
    method: &str,
    params: Value,
) -> Value {
    send(ws, &json!({ "id": id, "method": method, "params": params })).await;
    let answer = next_json(ws).await;
    assert!(
        is_answer_to(&answer, &id),
        "not the answer to {id}: {answer}"
    );
    answer
}

/// Completes the handshake; returns the `initialize` result.
async fn initialize<S: AsyncRead + AsyncWrite + Unpin>(ws: &mut WebSocketStream<S>) -> Value {
    let params = json!({ "clientInfo": { "name": "ws_client", "version": "0.0.1" } });
    let answer = request(ws, json!("init"), Initialize::NAME, params).await;
    send(ws, &json!({ "method": Initialized::NAME })).await;
    answer
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("initialize failed: {answer}"))
}

async fn connect(url: &str) -> WebSocketStream<MaybeTlsStream<TcpStream>> {
    let (ws, _) = tokio::time::timeout(PATIENCE, connect_async(url))
        .await
        .expect("connected in time")
        .expect("websocket handshake");
    ws
}

/// The HTTP status of an upgrade to `url` carrying `headers`, or 101 when it succeeded.
async fn upgrade_status(url: &str, headers: &[(header::HeaderName, &str)]) -> u16 {
    let mut request = url.into_client_request().expect("a client request");
    for (name, value) in headers {
        request.headers_mut().insert(
            name.clone(),
            HeaderValue::from_str(value).expect("a header value"),
        );
    }
    match tokio::time::timeout(PATIENCE, connect_async(request))
        .await
        .expect("answered in time")
    {
        Ok((_, response)) => response.status().as_u16(),
        Err(WsError::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("upgrade failed without an HTTP answer: {other}"),
    }
}

/// Sends a plain HTTP/1.1 request over `stream`; returns the status code.
async fn http_status(mut stream: impl AsyncRead + AsyncWrite + Unpin, request_head: &str) -> u16 {
    let request = format!("{request_head}Host: localhost\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write the request");
    let mut answer = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("answered in time")
        .expect("read the answer");
    let answer = String::from_utf8_lossy(&answer);
    let status = answer
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok());
    status.unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"))
}

/// `GET path` with extra header lines (each ending in `\r\n`) over TCP.
async fn get(addr: SocketAddr, path: &str, headers: &str) -> u16 {
    let stream = TcpStream::connect(addr).await.expect("connect");
    http_status(stream, &format!("GET {path} HTTP/1.1\r\n{headers}")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_over_websocket_with_independent_connections() {
    let served = Served::tcp(|_| {}, None).await;
    let mut a = connect(&served.url()).await;
    let mut b = connect(&format!("{}any/path", served.url())).await;

    let result = initialize(&mut a).await;
    assert_eq!(result["codexHome"], json!(home().to_string_lossy()));
    let again = request(
        &mut a,
        json!(1),
        Initialize::NAME,
        json!({ "clientInfo": { "name": "x", "version": "1" } }),
    )
    .await;
    assert_eq!(
        again,
        error(json!(1), INVALID_REQUEST, "Already initialized")
    );

    // B has its own handshake state: not initialized although A is.
    let refused = request(&mut b, json!(1), ThreadList::NAME, json!({})).await;
    assert_eq!(refused, error(json!(1), INVALID_REQUEST, "Not initialized"));
    let listed = request(&mut a, json!(2), ThreadList::NAME, json!({})).await;
    assert_eq!(listed["result"]["data"], json!([]));
    initialize(&mut b).await;
    let listed = request(&mut b, json!(2), ThreadList::NAME, json!({})).await;
    assert_eq!(listed["result"]["data"], json!([]));

    // A parse error is answered and the connection lives on.
    a.send(Message::text("{not json")).await.expect("send");
    let parse = next_json(&mut a).await;
    assert_eq!(parse["error"]["code"], json!(-32700));
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(served.server.hub().len(), 2);
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_do_not_finish_their_headers_in_time_are_disconnected() {
    let timeout = Duration::from_millis(300);
    let served = Served::tcp(|c| c.http_header_timeout = timeout, None).await;
    // A websocket opened in time lives on past the deadline.
    let mut ws = connect(&served.url()).await;
    initialize(&mut ws).await;

    // One that trickles its headers, and one that sends nothing, are closed.
    let mut trickle = TcpStream::connect(served.addr()).await.expect("connect");
    trickle
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .expect("write");
    let mut silent = TcpStream::connect(served.addr()).await.expect("connect");
    let started = Instant::now();
    for stream in [&mut trickle, &mut silent] {
        let mut buffer = [0u8; 64];
        let read = tokio::time::timeout(PATIENCE, stream.read(&mut buffer))
            .await
            .expect("the server closed the connection in time");
        assert!(
            matches!(read, Ok(0) | Err(_)),
            "expected the connection closed, read {read:?}"
        );
    }
    assert!(started.elapsed() >= timeout, "closed before the deadline");

    let listed = request(&mut ws, json!(1), ThreadList::NAME, json!({})).await;
    assert_eq!(listed["result"]["data"], json!([]));
    assert_eq!(get(served.addr(), "/healthz", "").await, 200);
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_http_answer_ends_its_connection() {
    let served = Served::tcp(|_| {}, None).await;
    for (head, status) in [
        ("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", "200"),
        (
            "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
            "200",
        ),
        (
            "GET /healthz HTTP/1.1\r\nHost: x\r\nOrigin: http://a.test\r\n\r\n",
            "403",
        ),
    ] {
        let mut stream = TcpStream::connect(served.addr()).await.expect("connect");
        stream.write_all(head.as_bytes()).await.expect("write");
        // The whole answer, then the end of the stream: no second request can follow.
        let mut answer = Vec::new();
        tokio::time::timeout(PATIENCE, stream.read_to_end(&mut answer))
            .await
            .expect("the server ended the connection")
            .expect("read");
        let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
        assert!(
            answer.starts_with(&format!("http/1.1 {status}")),
            "{answer}"
        );
        assert!(answer.contains("connection: close\r\n"), "{answer}");
    }
    // The websocket upgrade is not affected.
    let mut ws = connect(&served.url()).await;
    initialize(&mut ws).await;
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_and_healthz_answer_200_and_origin_gets_403_everywhere() {
    let served = Served::tcp(|_| {}, None).await;
    let addr = served.addr();
    assert_eq!(get(addr, "/readyz", "").await, 200);
    assert_eq!(get(addr, "/healthz", "").await, 200);
    let origin = "Origin: http://localhost:3000\r\n";
    assert_eq!(get(addr, "/readyz", origin).await, 403);
    assert_eq!(get(addr, "/healthz", origin).await, 403);
    assert_eq!(get(addr, "/", origin).await, 403);
    let status = upgrade_status(&served.url(), &[(header::ORIGIN, "http://localhost:3000")]).await;
    assert_eq!(status, 403);
    assert_eq!(upgrade_status(&served.url(), &[]).await, 101);
    // A plain GET on the websocket path is not an upgrade.
    assert_ne!(get(addr, "/", "").await, 200);
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_token_is_required_on_every_route_but_healthz() {
    let served = Served::tcp(|_| {}, Some(BearerAuth::from_token(TOKEN))).await;
    let addr = served.addr();
    let right = format!("Authorization: Bearer {TOKEN}\r\n");
    assert_eq!(get(addr, "/readyz", "").await, 401);
    assert_eq!(
        get(addr, "/readyz", "Authorization: Bearer nope\r\n").await,
        401
    );
    assert_eq!(get(addr, "/readyz", &right).await, 200);
    assert_eq!(get(addr, "/healthz", "").await, 200);
    // The Origin check comes first, token or not.
    assert_eq!(
        get(
            addr,
            "/readyz",
            &format!("{right}Origin: http://a.test\r\n")
        )
        .await,
        403
    );

    let url = served.url();
    assert_eq!(upgrade_status(&url, &[]).await, 401);
    assert_eq!(
        upgrade_status(&url, &[(header::AUTHORIZATION, "Bearer wrong")]).await,
        401
    );
    assert_eq!(
        upgrade_status(&url, &[(header::AUTHORIZATION, TOKEN)]).await,
        401
    );

    let mut request = url
        .as_str()
        .into_client_request()
        .expect("a client request");
    request.headers_mut().insert(
        header::AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {TOKEN}")).expect("a header value"),
    );
    let (mut ws, _) = connect_async(request).await.expect("authorized upgrade");
    initialize(&mut ws).await;
    served.shutdown().await;
}

#[tokio::test]
async fn a_non_loopback_listener_needs_a_token() {
    for addr in ["0.0.0.0:0", "[::]:0"] {
        let addr: SocketAddr = addr.parse().expect("an address");
        match WsListener::bind_tcp(addr, None).await {
            Err(BindError::NeedsAuth(refused)) => assert_eq!(refused, addr),
            Err(other) => panic!("wrong refusal for {addr}: {other}"),
            Ok(_) => panic!("{addr} was bound without a token"),
        }
    }
    let message = BindError::NeedsAuth("0.0.0.0:4500".parse().expect("an address")).to_string();
    assert!(message.contains("without authentication"), "{message}");
    assert!(message.contains("--ws-auth-token-file"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_frames_are_refused_and_the_connection_lives_on() {
    let served = Served::tcp(|_| {}, None).await;
    let mut ws = connect(&served.url()).await;
    initialize(&mut ws).await;
    let body = json!({ "id": 1, "method": ThreadList::NAME, "params": {} }).to_string();
    ws.send(Message::binary(body.into_bytes()))
        .await
        .expect("send");
    let refused = next_json(&mut ws).await;
    assert_eq!(refused["id"], Value::Null);
    assert_eq!(refused["error"]["code"], json!(INVALID_REQUEST));
    let message = refused["error"]["message"].as_str().expect("a message");
    assert!(
        message.contains("Binary frames are not supported"),
        "{message}"
    );
    let listed = request(&mut ws, json!(2), ThreadList::NAME, json!({})).await;
    assert_eq!(listed["result"]["data"], json!([]));
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_at_the_limit_is_served_and_one_past_it_is_refused_with_1009() {
    let limit = 64 * 1024;
    let served = Served::tcp(|c| c.max_message_bytes = limit, None).await;
    let mut ws = connect(&served.url()).await;
    initialize(&mut ws).await;

    let mut exact = json!({ "id": 1, "method": ThreadList::NAME, "params": {} }).to_string();
    exact.push_str(&" ".repeat(limit - exact.len()));
    ws.send(Message::text(exact)).await.expect("send");
    let listed = next_json(&mut ws).await;
    assert_eq!(listed["result"]["data"], json!([]), "{listed}");

    let too_long = limit + 1;
    let mut oversized = json!({ "id": 2, "method": ThreadList::NAME, "params": {} }).to_string();
    oversized.push_str(&" ".repeat(too_long - oversized.len()));
    ws.send(Message::text(oversized)).await.expect("send");
    let refused = next_json(&mut ws).await;
    assert_eq!(
        refused,
        error(
            Value::Null,
            INVALID_REQUEST,
            &format!("Message of {too_long} bytes exceeds the limit of {limit} bytes")
        )
    );
    match next_frame(&mut ws).await {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(u16::from(frame.code), 1009),
        other => panic!("expected a close frame with 1009, got {other:?}"),
    }
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_is_disconnected_while_others_keep_being_served() {
    slow_reader_is_cut(|c| c.outbound_queue_messages = 4).await;
}

/// The queue has room for every answer, but not the memory budget: the same cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_past_the_memory_budget_is_disconnected_while_others_keep_being_served() {
    slow_reader_is_cut(|c| {
        c.outbound_queue_messages = 4096;
        c.ws_memory_budget_bytes = 512 * 1024;
    })
    .await;
}

/// A client that sends 2000 requests with ~32 KiB answers and never reads is disconnected by
/// `limits` (fewer answers reach it than it asked for), while another client is answered
/// promptly throughout.
async fn slow_reader_is_cut(limits: impl FnOnce(&mut RuntimeConfig)) {
    let served = Served::tcp(limits, None).await;
    // The slow client: a small receive buffer, and it never reads once initialized.
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .set_recv_buffer_size(4096)
        .expect("a small receive buffer");
    let stream = socket.connect(served.addr()).await.expect("connect");
    let (mut slow, _) = client_async(served.url(), stream).await.expect("handshake");
    initialize(&mut slow).await;
    let mut fast = connect(&served.url()).await;
    initialize(&mut fast).await;
    assert_eq!(served.server.hub().len(), 2);

    // Every request answers "Method not found: <its long method name>": ~32 KiB per answer.
    let padding = "x".repeat(32 * 1024);
    let flood = tokio::spawn(async move {
        let mut sent = 0u32;
        for id in 0..2000u32 {
            let message = json!({ "id": id, "method": format!("no/such/{padding}") });
            let sending = slow.send(Message::text(message.to_string()));
            match tokio::time::timeout(Duration::from_secs(5), sending).await {
                Ok(Ok(())) => sent += 1,
                // Disconnected (or the socket is jammed both ways): stop.
                Ok(Err(_)) | Err(_) => break,
            }
        }
        (slow, sent)
    });

    // Meanwhile the other connection is answered promptly, request after request.
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut id = 0u32;
    while !flood.is_finished() || id < 20 {
        assert!(started.elapsed() < PATIENCE, "the flood did not end");
        let asked = Instant::now();
        let listed = request(&mut fast, json!(id), ThreadList::NAME, json!({})).await;
        assert_eq!(listed["result"]["data"], json!([]));
        slowest = slowest.max(asked.elapsed());
        id += 1;
    }
    assert!(
        slowest < Duration::from_secs(2),
        "an answer took {slowest:?}"
    );

    let (mut slow, sent) = flood.await.expect("the flood task");
    // The slow client reads what reached it, then the connection ends: far fewer answers.
    let mut answers = 0u32;
    let deadline = Instant::now() + PATIENCE;
    loop {
        assert!(
            Instant::now() < deadline,
            "the slow connection was not closed"
        );
        match next_frame(&mut slow).await {
            Some(Ok(Message::Text(_))) => answers += 1,
            Some(Ok(_)) => {}
            Some(Err(_)) | None => break,
        }
    }
    assert!(answers < sent, "{answers} answers for {sent} requests");
    // The server forgets the connection right after dropping its socket.
    while served.server.hub().len() != 1 {
        assert!(
            Instant::now() < deadline,
            "the slow connection is still open"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let listed = request(&mut fast, json!("after"), ThreadList::NAME, json!({})).await;
    assert_eq!(listed["result"]["data"], json!([]));
    // Closed by the server, not the client, the handler hears of it all the same.
    closed_within(&served.state, 1).await;
    served.shutdown().await;
}

/// Waits until the handler has heard of `count` closed connections, then checks it hears of
/// no more: each one once.
async fn closed_within(state: &State, count: usize) -> Vec<String> {
    let deadline = Instant::now() + PATIENCE;
    while state.closed().len() < count {
        assert!(
            Instant::now() < deadline,
            "the handler heard of {:?}, not {count} closed connections",
            state.closed()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let closed = state.closed();
    assert_eq!(closed.len(), count, "told more than once: {closed:?}");
    closed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handler_hears_of_each_closed_connection_once() {
    let served = Served::tcp(|_| {}, None).await;
    let mut a = connect(&served.url()).await;
    let mut b = connect(&served.url()).await;
    initialize(&mut a).await;
    initialize(&mut b).await;
    assert!(served.state.closed().is_empty());

    a.close(None).await.expect("close a");
    drop(a);
    let first = closed_within(&served.state, 1).await;
    // The other connection is not told about, and is served as before.
    let listed = request(&mut b, json!(1), ThreadList::NAME, json!({})).await;
    assert_eq!(listed["result"]["data"], json!([]));
    assert_eq!(served.server.hub().len(), 1);

    // Dropped without a close frame: the same.
    drop(b);
    let both = closed_within(&served.state, 2).await;
    assert_eq!(both[0], first[0]);
    assert_ne!(both[1], both[0], "two connections, two ids: {both:?}");
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_answers_requests_in_flight_then_closes_with_1001() {
    let served = Served::tcp(|_| {}, None).await;
    let mut ws = connect(&served.url()).await;
    initialize(&mut ws).await;
    let slow =
        json!({ "id": 7, "method": ThreadRead::NAME, "params": { "threadId": "sleep:500:a" } });
    send(&mut ws, &slow).await;
    let deadline = Instant::now() + PATIENCE;
    while !served.state.log().contains(&"start sleep:500:a".to_owned()) {
        assert!(Instant::now() < deadline, "the request never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let addr = served.addr();
    let state = served.state.clone();
    let shutting_down = tokio::spawn(served.shutdown());

    let answer = next_json(&mut ws).await;
    assert!(is_answer_to(&answer, &json!(7)), "{answer}");
    assert_eq!(answer["result"]["thread"]["id"], json!("sleep:500:a"));
    match next_frame(&mut ws).await {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(u16::from(frame.code), 1001),
        other => panic!("expected a close frame with 1001, got {other:?}"),
    }
    shutting_down.await.expect("shut down");
    let mut calls = state.log();
    calls.retain(|entry| !entry.starts_with("closed "));
    assert_eq!(calls, ["start sleep:500:a", "end sleep:500:a"]);
    assert!(TcpStream::connect(addr).await.is_err(), "still accepting");
}

fn socket_path(name: &str) -> PathBuf {
    // Short: a Unix socket path must fit in about 100 bytes.
    let dir = std::env::temp_dir().join(format!("aw-ws-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("ctl").join("app-server.sock")
}

async fn unix_ws(path: &Path) -> WebSocketStream<UnixStream> {
    let stream = UnixStream::connect(path)
        .await
        .expect("connect to the socket");
    let (ws, _) = client_async("ws://localhost/", stream)
        .await
        .expect("websocket handshake over the Unix socket");
    ws
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unix_socket_is_private_serves_the_protocol_and_is_removed_on_shutdown() {
    let path = socket_path("serve");
    let listener = WsListener::bind_unix(&path, None).await.expect("bind");
    let mode = std::fs::metadata(&path)
        .expect("the socket exists")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "socket mode {mode:o}");
    let served = Served::start(listener, test_config());

    let readyz = UnixStream::connect(&path).await.expect("connect");
    assert_eq!(http_status(readyz, "GET /readyz HTTP/1.1\r\n").await, 200);
    let with_origin = UnixStream::connect(&path).await.expect("connect");
    let head = "GET /healthz HTTP/1.1\r\nOrigin: http://a.test\r\n";
    assert_eq!(http_status(with_origin, head).await, 403);

    let mut a = unix_ws(&path).await;
    let mut b = unix_ws(&path).await;
    initialize(&mut a).await;
    let refused = request(&mut b, json!(1), ThreadList::NAME, json!({})).await;
    assert_eq!(refused, error(json!(1), INVALID_REQUEST, "Not initialized"));
    let listed = request(&mut a, json!(1), ThreadList::NAME, json!({})).await;
    assert_eq!(listed["result"]["data"], json!([]));

    served.shutdown().await;
    assert!(!path.exists(), "the socket file was left behind");
}

#[tokio::test]
async fn unix_socket_replaces_a_stale_file_but_not_a_live_socket_or_a_regular_file() {
    let path = socket_path("stale");
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create the directory");
    // A socket file whose server is gone.
    drop(std::os::unix::net::UnixListener::bind(&path).expect("bind a stale socket"));
    assert!(path.exists());
    let listener = WsListener::bind_unix(&path, None)
        .await
        .expect("stale socket replaced");
    // Now it is live: a second listener must not take it over.
    match WsListener::bind_unix(&path, None).await {
        Err(BindError::InUse(p)) => assert_eq!(p, path),
        Err(other) => panic!("wrong refusal: {other}"),
        Ok(_) => panic!("a live socket was taken over"),
    }
    drop(listener);
    assert!(!path.exists(), "dropping the listener removes its socket");

    std::fs::write(&path, b"not a socket").expect("write a regular file");
    match WsListener::bind_unix(&path, None).await {
        Err(BindError::NotASocket(p)) => assert_eq!(p, path),
        Err(other) => panic!("wrong refusal: {other}"),
        Ok(_) => panic!("a regular file was replaced"),
    }
    assert_eq!(std::fs::read(&path).expect("still there"), b"not a socket");
    let _ = std::fs::remove_dir_all(path.parent().and_then(Path::parent).expect("the test dir"));
}
