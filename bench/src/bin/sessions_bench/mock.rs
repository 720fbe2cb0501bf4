//! The mock model both servers stream from: a loopback HTTP/1.1 server that answers every
//! `POST …/responses` with an OpenAI Responses SSE stream of one assistant message in
//! `deltas` text deltas, written as fast as the server under test reads them, or paced (a few
//! deltas, then a pause of [`PAUSE`]: the chunks of a model generating them; see
//! [`MockModel::set_pace`]).
//!
//! Delta `k` of a stream is the text `<k>`, so the client can check that every delta of a turn
//! arrived once and in order. `GET …/models` gets an empty list; anything else a 404.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::{TcpListener, TcpStream};

/// The largest request (head and body) the mock reads.
const MAX_REQUEST: usize = 8 * 1024 * 1024;
/// The pause after each burst of deltas of a paced stream.
pub const PAUSE: Duration = Duration::from_millis(1);

/// A running mock; its accept loop lives on the runtime it was started on.
pub struct MockModel {
    port: u16,
    deltas: Arc<AtomicUsize>,
    /// Deltas written between two pauses of a stream; 0 for as fast as they are read.
    burst: Arc<AtomicUsize>,
    streams: Arc<AtomicUsize>,
}

impl MockModel {
    /// Listens on a free loopback port.
    pub async fn start(deltas: usize) -> Result<Self, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("mock model: cannot listen: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("mock model: {e}"))?
            .port();
        let deltas = Arc::new(AtomicUsize::new(deltas));
        let streams = Arc::new(AtomicUsize::new(0));
        let burst = Arc::new(AtomicUsize::new(0));
        let (d, s, b) = (deltas.clone(), streams.clone(), burst.clone());
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                let _ = socket.set_nodelay(true);
                let (d, s) = (d.clone(), s.clone());
                let burst = b.load(Ordering::Relaxed);
                tokio::spawn(async move {
                    let _ = serve(socket, d.load(Ordering::Relaxed), burst, &s).await;
                });
            }
        });
        Ok(Self {
            port,
            deltas,
            burst,
            streams,
        })
    }

    /// The provider base URL (`…/v1`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Sets how many deltas each following stream has.
    pub fn set_deltas(&self, deltas: usize) {
        self.deltas.store(deltas, Ordering::Relaxed);
    }

    /// Paces each following stream: `burst` deltas, then a pause of [`PAUSE`], and so on
    /// (`None`: as fast as it is read).
    pub fn set_pace(&self, burst: Option<usize>) {
        self.burst.store(burst.unwrap_or(0), Ordering::Relaxed);
    }

    /// Streams answered so far.
    pub fn streams(&self) -> usize {
        self.streams.load(Ordering::Relaxed)
    }
}

/// Reads one request; `(method, path)` once its body is read.
async fn read_request(socket: &mut TcpStream) -> std::io::Result<Option<(String, String)>> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if buf.len() > MAX_REQUEST {
            return Ok(None);
        }
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut words = head.split_whitespace();
    let method = words.next().unwrap_or_default().to_owned();
    let path = words.next().unwrap_or_default().to_owned();
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_REQUEST);
    let mut have = buf.len() - head_end;
    while have < length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        have += n;
    }
    Ok(Some((method, path)))
}

async fn serve(
    mut socket: TcpStream,
    deltas: usize,
    burst: usize,
    streams: &AtomicUsize,
) -> std::io::Result<()> {
    let Some((method, path)) = read_request(&mut socket).await? else {
        return Ok(());
    };
    let path = path.split('?').next().unwrap_or_default();
    if method == "POST" && path.ends_with("/responses") {
        streams.fetch_add(1, Ordering::Relaxed);
        let mut out = BufWriter::with_capacity(64 * 1024, socket);
        out.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
        )
        .await?;
        let mut stream = Stream { sequence: 0 };
        let mut written = 0;
        for event in stream.events(deltas) {
            out.write_all(event.as_bytes()).await?;
            if burst > 0 && event.starts_with("event: response.output_text.delta\n") {
                written += 1;
                if written % burst == 0 {
                    out.flush().await?;
                    tokio::time::sleep(PAUSE).await;
                }
            }
        }
        out.flush().await?;
        out.get_mut().shutdown().await?;
        return Ok(());
    }
    let (status, body) = if method == "GET" && path.ends_with("/models") {
        ("200 OK", r#"{"object":"list","data":[],"models":[]}"#)
    } else {
        (
            "404 Not Found",
            r#"{"error":{"message":"not served by the mock"}}"#,
        )
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(answer.as_bytes()).await?;
    socket.shutdown().await
}

/// One Responses stream's events, numbered.
struct Stream {
    sequence: u64,
}

impl Stream {
    fn event(&mut self, kind: &str, mut body: Value) -> String {
        body["type"] = json!(kind);
        body["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        format!("event: {kind}\ndata: {body}\n\n")
    }

    fn events(&mut self, deltas: usize) -> Vec<String> {
        let response = json!({"id": "resp_bench", "object": "response", "status": "in_progress",
                              "model": "mock-model", "output": []});
        let mut events = vec![
            self.event("response.created", json!({"response": response})),
            self.event("response.in_progress", json!({"response": response})),
            self.event(
                "response.output_item.added",
                json!({"output_index": 0, "item": {"type": "message", "id": "msg_0",
                       "role": "assistant", "status": "in_progress", "content": []}}),
            ),
        ];
        let part = json!({"item_id": "msg_0", "output_index": 0, "content_index": 0});
        let mut added = part.clone();
        added["part"] = json!({"type": "output_text", "text": "", "annotations": []});
        events.push(self.event("response.content_part.added", added));
        let mut text = String::new();
        for k in 0..deltas {
            let delta = format!("<{k}>");
            text.push_str(&delta);
            let mut event = part.clone();
            event["delta"] = json!(delta);
            events.push(self.event("response.output_text.delta", event));
        }
        let mut done = part.clone();
        done["text"] = json!(text);
        events.push(self.event("response.output_text.done", done));
        let content = json!({"type": "output_text", "text": text, "annotations": []});
        let mut part_done = part;
        part_done["part"] = content.clone();
        events.push(self.event("response.content_part.done", part_done));
        events.push(self.event(
            "response.output_item.done",
            json!({"output_index": 0, "item": {"type": "message", "id": "msg_0",
                   "role": "assistant", "status": "completed", "content": [content]}}),
        ));
        events.push(self.event(
            "response.completed",
            json!({"response": {"id": "resp_bench", "object": "response", "status": "completed",
                   "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                             "output_tokens": deltas, "output_tokens_details": {"reasoning_tokens": 0},
                             "total_tokens": 10 + deltas}}}),
        ));
        events
    }
}
