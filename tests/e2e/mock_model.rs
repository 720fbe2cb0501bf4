//! A local mock of an OpenAI-compatible chat-completions server that streams real SSE.
//!
//! [`MockModel::start`] listens on `127.0.0.1:0` (plain HTTP/1.1 on tokio, one connection per
//! request, `Connection: close`) and answers each `POST …/chat/completions` (or `POST
//! …/responses`, the Responses API: see `mock_responses.rs` for its events) with the next
//! scripted [`Reply`]: a `text/event-stream` of `data: …` events (built with [`Sse`]), or an
//! HTTP error. It records every request ([`Recorded`]: path, headers, JSON body) and notices
//! when a client drops a connection it was holding open. `GET …/models` is answered with the
//! list set by [`MockModel::serve_models`]. Any other request, or one arriving when the script
//! is used up, is answered with HTTP 400 saying so.
//!
//! This file and `mock_responses.rs` are also compiled into `agentwire-conformance` (by path,
//! for `agentwire conformance --mock-model`): they may use only std, tokio and serde_json.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How long the waits of this module may take.
const WAIT: Duration = Duration::from_secs(30);
/// The largest request head the mock reads.
const MAX_HEAD: usize = 64 * 1024;
/// The largest request body the mock reads.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A `200 text/event-stream` response.
    Stream(Sse),
    /// An HTTP error: status, extra headers, body.
    Status(u16, Vec<(String, String)>, String),
}

impl Reply {
    /// An HTTP error `status` with `body` (JSON or not).
    pub fn status(status: u16, body: &str) -> Self {
        Reply::Status(status, Vec::new(), body.to_owned())
    }

    /// An HTTP error with extra headers (e.g. `Retry-After`).
    pub fn status_with(status: u16, headers: &[(&str, &str)], body: &str) -> Self {
        Reply::Status(
            status,
            headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body.to_owned(),
        )
    }
}

/// What a streamed response does after its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Sends `data: [DONE]` and closes.
    Done,
    /// Closes the connection without `[DONE]` (an early disconnect).
    Close,
    /// Sends nothing more and keeps the connection open until the client drops it.
    Stall,
    /// Waits for [`MockModel::release`], then sends `data: [DONE]` and closes (so a test can
    /// act while the model call is still running).
    Hold,
}

/// A streamed response under construction: its `data` payloads, in order, and its end.
#[derive(Debug, Clone)]
pub struct Sse {
    /// Each payload, sent as one `data: …\n\n` event (raw text, not necessarily JSON); a
    /// payload that starts with `event: ` is a named event sent as is (its own `data:` line
    /// included), followed by the blank line.
    pub events: Vec<String>,
    /// What happens after them.
    pub end: End,
    /// Extra response headers (e.g. `x-ratelimit-remaining-requests`).
    pub headers: Vec<(String, String)>,
}

impl Default for Sse {
    fn default() -> Self {
        Self::new()
    }
}

impl Sse {
    /// An empty stream that ends with `[DONE]`.
    pub fn new() -> Self {
        Self {
            events: Vec::new(),
            end: End::Done,
            headers: Vec::new(),
        }
    }

    fn chunk(mut self, choice: Value) -> Self {
        let chunk = json!({
            "id": "chatcmpl-mock",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "mock-model",
            "choices": [choice],
        });
        self.events.push(chunk.to_string());
        self
    }

    fn delta(self, delta: Value) -> Self {
        self.chunk(json!({"index": 0, "delta": delta, "finish_reason": null}))
    }

    /// A text delta (`delta.content`).
    pub fn text(self, text: &str) -> Self {
        self.delta(json!({"content": text}))
    }

    /// A reasoning delta spelled `delta.reasoning_content` (llama.cpp, vLLM, DeepSeek).
    pub fn reasoning_content(self, text: &str) -> Self {
        self.delta(json!({"reasoning_content": text}))
    }

    /// A reasoning delta spelled `delta.reasoning` (Ollama, OpenRouter).
    pub fn reasoning(self, text: &str) -> Self {
        self.delta(json!({"reasoning": text}))
    }

    /// The first fragment of tool call `index`: its id, name and the start of its arguments.
    pub fn tool_call(self, index: u64, id: &str, name: &str, arguments: &str) -> Self {
        self.delta(json!({"tool_calls": [{
            "index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": arguments}
        }]}))
    }

    /// More arguments of tool call `index`.
    pub fn tool_arguments(self, index: u64, arguments: &str) -> Self {
        self.delta(json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}))
    }

    /// The choice's `finish_reason` (`stop`, `tool_calls`, `length`).
    pub fn finish(self, reason: &str) -> Self {
        self.chunk(json!({"index": 0, "delta": {}, "finish_reason": reason}))
    }

    /// The usage chunk (`choices: []`), as `stream_options.include_usage` asks for.
    pub fn usage(mut self, prompt: i64, completion: i64, cached: i64, reasoning: i64) -> Self {
        let chunk = json!({
            "id": "chatcmpl-mock",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached},
                "completion_tokens_details": {"reasoning_tokens": reasoning},
            }
        });
        self.events.push(chunk.to_string());
        self
    }

    /// A raw payload, sent as is (e.g. something that is not JSON).
    pub fn raw(mut self, data: &str) -> Self {
        self.events.push(data.to_owned());
        self
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets how the stream ends.
    pub fn end(mut self, end: End) -> Self {
        self.end = end;
        self
    }

    /// A complete answer: `text`, `finish_reason: stop`, usage and `[DONE]`.
    pub fn answer(text: &str) -> Reply {
        Reply::Stream(Self::new().text(text).finish("stop").usage(10, 5, 0, 0))
    }
}

/// One request the mock received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The request method.
    pub method: String,
    /// The request path.
    pub path: String,
    /// The headers, names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Null` when it is not JSON).
    pub body: Value,
}

impl Recorded {
    /// The value of header `name` (case-insensitive), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the mock saw and what it has left to say.
#[derive(Debug, Default)]
struct State {
    /// The replies not yet sent, next first.
    replies: VecDeque<Reply>,
    /// Every request, in arrival order.
    requests: Vec<Recorded>,
    /// Indexes (into `requests`) of stalled responses whose client hung up.
    dropped: Vec<usize>,
    /// The model ids `GET …/models` answers with; `None` answers it with HTTP 400.
    models: Option<Vec<String>>,
}

/// The shared state and a signal for waiters.
#[derive(Debug)]
struct Shared {
    /// What the mock saw and has left to say.
    state: Mutex<State>,
    /// Signalled whenever `state` changes.
    changed: Condvar,
    /// Permits for held responses to finish.
    release: tokio::sync::Semaphore,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            state: Mutex::default(),
            changed: Condvar::new(),
            release: tokio::sync::Semaphore::new(0),
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("mock state lock")
    }

    /// Waits until `done` holds, at most [`WAIT`]; fails with `failure` otherwise.
    fn wait_until(
        &self,
        done: impl Fn(&State) -> bool,
        failure: impl FnOnce(&State) -> String,
    ) -> MutexGuard<'_, State> {
        let (state, waited) = self
            .changed
            .wait_timeout_while(self.lock(), WAIT, |state| !done(state))
            .expect("mock state lock");
        assert!(!waited.timed_out() || done(&state), "{}", failure(&state));
        state
    }

    fn update(&self, change: impl FnOnce(&mut State)) {
        change(&mut self.lock());
        self.changed.notify_all();
    }
}

/// A running mock server; it stops when dropped.
pub struct MockModel {
    /// `http://127.0.0.1:PORT`.
    url: String,
    /// The state the connections update.
    shared: Arc<Shared>,
    /// The runtime serving the connections; shut down on drop.
    runtime: Option<tokio::runtime::Runtime>,
}

impl MockModel {
    /// Starts a mock that answers with `replies`, in order.
    pub fn start(replies: Vec<Reply>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("mock runtime");
        let listener = runtime
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("bind the mock");
        let url = format!("http://{}", listener.local_addr().expect("mock address"));
        let shared = Arc::new(Shared::default());
        shared.update(|s| s.replies.extend(replies));
        let accepting = shared.clone();
        runtime.spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, accepting.clone()));
            }
        });
        Self {
            url,
            shared,
            runtime: Some(runtime),
        }
    }

    /// The mock's `base_url` (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// Queues another reply.
    pub fn push(&self, reply: Reply) {
        self.shared.update(|s| s.replies.push_back(reply));
    }

    /// Answers `GET …/models` with `ids` (as `{"object": "list", "data": [{"id": …}]}`).
    pub fn serve_models(&self, ids: &[&str]) {
        let ids = ids.iter().map(|id| (*id).to_owned()).collect();
        self.shared.update(|s| s.models = Some(ids));
    }

    /// Lets one held response ([`End::Hold`]) finish.
    pub fn release(&self) {
        self.shared.release.add_permits(1);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().requests.clone()
    }

    /// Waits until at least `count` requests arrived; returns them all.
    pub fn wait_requests(&self, count: usize) -> Vec<Recorded> {
        let state = self.shared.wait_until(
            |state| state.requests.len() >= count,
            |state| {
                format!(
                    "the mock model got {} requests, not {count}, in {WAIT:?}",
                    state.requests.len()
                )
            },
        );
        state.requests.clone()
    }

    /// Waits until the client drops the stalled response to request `index`.
    pub fn wait_dropped(&self, index: usize) {
        let _state = self.shared.wait_until(
            |state| state.dropped.contains(&index),
            |_| format!("the client did not drop the connection of request {index} in {WAIT:?}"),
        );
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Answers one connection: reads the request, records it, sends the next reply.
async fn serve(mut socket: TcpStream, shared: Arc<Shared>) {
    let Some((method, path, headers, body)) = read_request(&mut socket).await else {
        return;
    };
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let is_chat =
        method == "POST" && (path.ends_with("/chat/completions") || path.ends_with("/responses"));
    let is_models = method == "GET" && path.ends_with("/models");
    let mut index = 0;
    let mut reply = None;
    shared.update(|s| {
        if is_models && let Some(ids) = &s.models {
            let data: Vec<Value> = ids
                .iter()
                .map(|id| json!({"id": id, "object": "model", "owned_by": "mock"}))
                .collect();
            let body = json!({"object": "list", "data": data}).to_string();
            reply = Some(Reply::Status(200, Vec::new(), body));
        }
        index = s.requests.len();
        s.requests.push(Recorded {
            method,
            path,
            headers,
            body,
        });
        if is_chat {
            reply = s.replies.pop_front();
        }
    });
    let reply = reply.unwrap_or_else(|| {
        Reply::status(
            400,
            "{\"error\":{\"message\":\"mock model: unexpected request or no scripted reply left\"}}",
        )
    });
    match reply {
        Reply::Status(status, extra, body) => {
            let mut head = format!(
                "HTTP/1.1 {status} Mock\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in extra {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(body.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
        Reply::Stream(sse) => {
            let mut head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n".to_owned();
            for (name, value) in &sse.headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            // A write that fails means the client hung up already (a call cancelled before the
            // mock got to answer it): that is a drop too.
            if socket.write_all(head.as_bytes()).await.is_err() {
                shared.update(|s| s.dropped.push(index));
                return;
            }
            for data in &sse.events {
                let event = if data.starts_with("event: ") {
                    format!("{data}\n\n")
                } else {
                    format!("data: {data}\n\n")
                };
                if socket.write_all(event.as_bytes()).await.is_err() {
                    shared.update(|s| s.dropped.push(index));
                    return;
                }
                let _ = socket.flush().await;
            }
            match sse.end {
                End::Done => {
                    let _ = socket.write_all(b"data: [DONE]\n\n").await;
                    let _ = socket.shutdown().await;
                }
                End::Hold => {
                    if let Ok(permit) = shared.release.acquire().await {
                        permit.forget();
                    }
                    let _ = socket.write_all(b"data: [DONE]\n\n").await;
                    let _ = socket.shutdown().await;
                }
                End::Close => {
                    let _ = socket.shutdown().await;
                }
                End::Stall => {
                    // Wait for the client to hang up: a read returns end-of-file or fails.
                    let mut sink = [0u8; 1024];
                    loop {
                        match socket.read(&mut sink).await {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {}
                        }
                    }
                    shared.update(|s| s.dropped.push(index));
                }
            }
        }
    }
}

/// The head fields and body of one request read from `socket`.
type Request = (String, String, Vec<(String, String)>, Vec<u8>);

/// Reads one HTTP/1.1 request with a `content-length` body; `None` if it is not one.
async fn read_request(socket: &mut TcpStream) -> Option<Request> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_HEAD {
            return None;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
        .min(MAX_BODY);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Some((method, path, headers, body))
}
