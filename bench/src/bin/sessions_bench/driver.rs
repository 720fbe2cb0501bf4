//! The load: websocket connections to the server under test, turns streamed on them, and
//! `thread/list` timed on another connection while turns stream.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::server::Running;

/// How long any one answer may take.
const ANSWER: Duration = Duration::from_secs(60);

/// One client connection, past `initialize`.
pub struct Conn {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// The `cwd` of the last thread started on it.
    cwd: String,
}

/// A message from the server and when it arrived.
struct Incoming {
    value: Value,
    at: Instant,
}

impl Conn {
    /// Follows `thread` from this connection (`thread/resume`).
    pub async fn resume(&mut self, thread: &str) -> Result<(), String> {
        self.call("thread/resume", json!({"threadId": thread}))
            .await
            .map(drop)
    }

    /// Connects and completes the handshake (`initialize`, then `initialized`).
    pub async fn open(url: &str) -> Result<Self, String> {
        let (ws, _) = tokio::time::timeout(ANSWER, tokio_tungstenite::connect_async(url))
            .await
            .map_err(|_| format!("connecting to {url} timed out"))?
            .map_err(|e| format!("cannot connect to {url}: {e}"))?;
        let mut conn = Self {
            ws,
            next_id: 0,
            cwd: String::new(),
        };
        conn.call(
            "initialize",
            json!({"clientInfo": {"name": "sessions_bench", "title": "sessions bench", "version": "0.1.0"}}),
        )
        .await?;
        conn.send(json!({"method": "initialized"})).await?;
        Ok(conn)
    }

    async fn send(&mut self, message: Value) -> Result<(), String> {
        self.ws
            .send(Message::text(message.to_string()))
            .await
            .map_err(|e| format!("send failed: {e}"))
    }

    async fn next(&mut self) -> Result<Incoming, String> {
        loop {
            let frame = tokio::time::timeout(ANSWER, self.ws.next())
                .await
                .map_err(|_| format!("no message within {} s", ANSWER.as_secs()))?;
            let at = Instant::now();
            match frame {
                Some(Ok(Message::Text(text))) => {
                    let value = serde_json::from_str(text.as_str())
                        .map_err(|e| format!("not JSON from the server: {e}"))?;
                    return Ok(Incoming { value, at });
                }
                Some(Ok(Message::Close(frame))) => {
                    return Err(format!("the server closed the connection: {frame:?}"));
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(format!("read failed: {e}")),
                None => return Err("the server closed the connection".into()),
            }
        }
    }

    /// Sends a request; its id.
    async fn request(&mut self, method: &str, params: Value) -> Result<u64, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"id": id, "method": method, "params": params}))
            .await?;
        Ok(id)
    }

    /// A request and its result (notifications before the answer are skipped).
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.request(method, params).await?;
        self.answer(method, id).await
    }

    async fn answer(&mut self, method: &str, id: u64) -> Result<Value, String> {
        loop {
            let mut message = self.next().await?.value;
            if message.get("method").is_some() {
                if message.get("id").is_some() {
                    return Err(format!(
                        "unexpected server request {} (the bench answers none)",
                        message["method"]
                    ));
                }
                continue;
            }
            if message["id"] != json!(id) {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(format!("{method} failed: {error}"));
            }
            return Ok(message["result"].take());
        }
    }

    /// Starts a thread in `cwd`; its id.
    pub async fn start_thread(&mut self, cwd: &str) -> Result<String, String> {
        let result = self.call("thread/start", json!({"cwd": cwd})).await?;
        cwd.clone_into(&mut self.cwd);
        result["thread"]["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("thread/start answered without /thread/id: {result}"))
    }
}

/// What one turn delivered.
#[derive(Debug, Default)]
pub struct TurnReport {
    /// Arrival time of each delta.
    pub arrivals: Vec<Instant>,
    /// Why the turn is not right: a delta missing, repeated or out of order, a failed turn.
    pub defect: Option<String>,
}

/// Runs one turn on `thread` until `turn/completed`; checks every delta `<k>` came once, in
/// order, `deltas` of them.
pub async fn run_turn(conn: &mut Conn, thread: &str, deltas: usize) -> Result<TurnReport, String> {
    let id = conn
        .request(
            "turn/start",
            json!({"threadId": thread, "input": [{"type": "text", "text": "stream"}]}),
        )
        .await?;
    collect_turn(conn, Some(id), deltas).await
}

/// Follows the next turn on a thread `conn` follows (resumed there, run from elsewhere) until
/// `turn/completed`, with the checks of [`run_turn`].
pub async fn follow_turn(conn: &mut Conn, deltas: usize) -> Result<TurnReport, String> {
    collect_turn(conn, None, deltas).await
}

/// The deltas of a turn until its `turn/completed`; `id` is the `turn/start` that began it, if
/// it was sent on `conn`.
async fn collect_turn(
    conn: &mut Conn,
    id: Option<u64>,
    deltas: usize,
) -> Result<TurnReport, String> {
    let mut report = TurnReport {
        arrivals: Vec::with_capacity(deltas),
        defect: None,
    };
    let mut expected = 0usize;
    loop {
        let Incoming { value, at } = conn.next().await?;
        let method = value
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        match method.as_deref() {
            Some("item/agentMessage/delta") => {
                report.arrivals.push(at);
                let delta = value["params"]["delta"].as_str().unwrap_or_default();
                if report.defect.is_none() && delta != format!("<{expected}>") {
                    report.defect = Some(format!(
                        "delta {} is {delta:?}, expected \"<{expected}>\"",
                        report.arrivals.len()
                    ));
                }
                expected += 1;
            }
            Some("turn/completed") => {
                let status = value["params"]["turn"]["status"].clone();
                if report.defect.is_none() && status != json!("completed") {
                    report.defect = Some(format!("turn ended {status}"));
                }
                if report.defect.is_none() && report.arrivals.len() != deltas {
                    report.defect = Some(format!(
                        "{} deltas, expected {deltas}",
                        report.arrivals.len()
                    ));
                }
                return Ok(report);
            }
            Some(_) if value.get("id").is_some() => {
                return Err(format!("unexpected server request {}", value["method"]));
            }
            Some(_) => {}
            None if id.is_some() && value["id"] == json!(id) => {
                if let Some(error) = value.get("error") {
                    return Err(format!("turn/start failed: {error}"));
                }
            }
            None => {}
        }
    }
}

/// Opens `count` connections, `parallel` handshakes at a time.
pub async fn open_many(url: &str, count: usize, parallel: usize) -> Result<Vec<Conn>, String> {
    let mut conns = Vec::with_capacity(count);
    let mut left = count;
    while left > 0 {
        let batch = left.min(parallel.max(1));
        let opening: Vec<_> = (0..batch)
            .map(|_| {
                let url = url.to_owned();
                tokio::spawn(async move { Conn::open(&url).await })
            })
            .collect();
        for handle in opening {
            conns.push(handle.await.map_err(|e| format!("task failed: {e}"))??);
        }
        left -= batch;
    }
    Ok(conns)
}

/// Sessions that each have a connection and a thread.
pub async fn sessions(url: &str, cwd: &str, count: usize) -> Result<Vec<(Conn, String)>, String> {
    let conns = open_many(url, count, 50).await?;
    start_threads(conns.into_iter().map(|conn| (conn, cwd.to_owned()))).await
}

/// Starts a thread on each connection in the directory given with it, all at once.
async fn start_threads(
    conns: impl IntoIterator<Item = (Conn, String)>,
) -> Result<Vec<(Conn, String)>, String> {
    let starting: Vec<_> = conns
        .into_iter()
        .map(|(mut conn, cwd)| {
            tokio::spawn(async move {
                let thread = conn.start_thread(&cwd).await?;
                Ok::<_, String>((conn, thread))
            })
        })
        .collect();
    let mut out = Vec::with_capacity(starting.len());
    for handle in starting {
        out.push(handle.await.map_err(|e| format!("task failed: {e}"))??);
    }
    Ok(out)
}

/// Every turn of a streaming phase.
#[derive(Debug, Default)]
pub struct Streamed {
    /// The turns, in no particular order.
    pub turns: Vec<TurnReport>,
    /// From the first `turn/start` sent to the last `turn/completed` received (added up over
    /// the waves of a phase that has several).
    pub wall: Duration,
}

/// One turn on each session at once, wave after wave until the waves have streamed for `least`
/// in all. Each wave after the first starts a new thread on every connection, where its last
/// one was, so that every turn is the first of its thread, as in one wave. Also the CPU time the
/// waves cost `servers` (not counting the `thread/start`s between them), in seconds.
pub async fn stream_waves(
    mut sessions: Vec<(Conn, String)>,
    deltas: usize,
    least: Duration,
    limit: Duration,
    servers: &[Running],
) -> Result<(Streamed, f64, Vec<(Conn, String)>), String> {
    let cpu = || {
        servers
            .iter()
            .map(|server| server.cpu().ok_or("cannot read a server's CPU time"))
            .collect::<Result<Vec<_>, _>>()
    };
    let mut all = Streamed::default();
    let mut seconds = 0.0;
    loop {
        let before = cpu()?;
        let (wave, back) = stream_once(sessions, deltas, limit).await?;
        let after = cpu()?;
        seconds += after
            .iter()
            .zip(&before)
            .map(|(after, before)| after.seconds_since(before))
            .sum::<f64>();
        all.wall += wave.wall;
        all.turns.extend(wave.turns);
        if all.wall >= least {
            return Ok((all, seconds, back));
        }
        sessions = start_threads(back.into_iter().map(|(conn, _)| {
            let cwd = conn.cwd.clone();
            (conn, cwd)
        }))
        .await?;
    }
}

/// One turn on each session at once.
pub async fn stream_once(
    sessions: Vec<(Conn, String)>,
    deltas: usize,
    limit: Duration,
) -> Result<(Streamed, Vec<(Conn, String)>), String> {
    let start = Instant::now();
    let running: Vec<_> = sessions
        .into_iter()
        .map(|(mut conn, thread)| {
            tokio::spawn(async move {
                let report = run_turn(&mut conn, &thread, deltas).await;
                (report, conn, thread)
            })
        })
        .collect();
    let count = running.len();
    let all = futures_util::future::join_all(running);
    let joined = tokio::time::timeout(limit, all).await.map_err(|_| {
        format!(
            "{count} turns of {deltas} deltas did not all complete within {} s",
            limit.as_secs()
        )
    })?;
    let wall = start.elapsed();
    let mut streamed = Streamed {
        turns: Vec::with_capacity(count),
        wall,
    };
    let mut back = Vec::with_capacity(count);
    for joined in joined {
        let (report, conn, thread) = joined.map_err(|e| format!("task failed: {e}"))?;
        streamed.turns.push(report?);
        back.push((conn, thread));
    }
    Ok((streamed, back))
}

/// Latencies of `method` (no params) on a connection of its own to `url` while every session
/// streams turns back to back; stops after `duration`, once the turns in flight complete.
///
/// The timed connection lives on a thread and a runtime of its own: on the clients' runtime its
/// answers would wait behind the streaming sessions' tasks in the bench itself, and the figure
/// would be the bench's scheduling as much as the server's.
pub async fn list_while_streaming(
    url: &str,
    method: &str,
    sessions: Vec<(Conn, String)>,
    deltas: usize,
    duration: Duration,
) -> Result<(Vec<Duration>, Vec<TurnReport>), String> {
    let lister = {
        let (url, method) = (url.to_owned(), method.to_owned());
        let (ready_tx, ready) = tokio::sync::oneshot::channel();
        let (go, go_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("lister".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot start the lister's runtime: {e}"))?;
                runtime.block_on(async move {
                    let mut lister = Conn::open(&url).await;
                    let opened = lister.as_ref().map(drop).map_err(Clone::clone);
                    let _ = ready_tx.send(opened);
                    let lister = lister.as_mut().map_err(|e| e.clone())?;
                    go_rx
                        .recv()
                        .map_err(|_| "the streaming sessions never began".to_owned())?;
                    let mut latencies = Vec::new();
                    let begin = Instant::now();
                    while begin.elapsed() < duration {
                        let sent = Instant::now();
                        lister.call(&method, json!({})).await?;
                        latencies.push(sent.elapsed());
                    }
                    Ok::<_, String>(latencies)
                })
            })
            .map_err(|e| format!("cannot start the lister's thread: {e}"))?;
        ready
            .await
            .map_err(|_| "the lister's thread ended before connecting".to_owned())??;
        (thread, go)
    };
    let stop = Arc::new(AtomicBool::new(false));
    let streaming: Vec<_> = sessions
        .into_iter()
        .map(|(mut conn, thread)| {
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut reports = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    reports.push(run_turn(&mut conn, &thread, deltas).await?);
                }
                Ok::<_, String>(reports)
            })
        })
        .collect();
    let (thread, go) = lister;
    let _ = go.send(());
    let latencies = tokio::task::spawn_blocking(move || thread.join())
        .await
        .map_err(|e| format!("task failed: {e}"))?
        .map_err(|_| "the lister's thread panicked".to_owned())?;
    stop.store(true, Ordering::Relaxed);
    let mut turns = Vec::new();
    for handle in streaming {
        turns.extend(handle.await.map_err(|e| format!("task failed: {e}"))??);
    }
    Ok((latencies?, turns))
}
