//! A stdio client that stops reading stdout does not stall the server: its running turn goes
//! on and is recorded, its further requests are still handled, and once it reads again it gets
//! every message, in order. What waits for it is bounded (256 MiB): past that, the connection
//! is closed and the server exits.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::common::{home_and_workspace, scratch};

/// Deltas the turn streams: far more output than a pipe holds (64 KiB).
const DELTAS: usize = 4000;

/// Waits (at most a minute) until the file at `path` contains `needle`.
fn wait_for_record(path: &Path, needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(needle) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{needle} never reached {}:\n{text}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_client_that_stops_reading_stdout_does_not_stall_the_server() {
    let (home, workspace) = home_and_workspace(&scratch("stdout-stall"));
    let delta = format!("{} ", "w".repeat(100));
    let script = json!({"version": 1, "responses": [
        {"steps": [{"type": "message", "deltas": vec![delta.clone(); DELTAS]}]}
    ]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n",
    )
    .expect("write config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("app-server")
        .env("AGENTWIRE_HOME", &home)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn agentwire app-server");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").expect("write request");
        stdin.flush().expect("flush");
    };
    let mut lines = Vec::new();
    let mut read_until_answer = |id: i64, lines: &mut Vec<Value>| -> Value {
        loop {
            let mut line = String::new();
            assert!(
                stdout.read_line(&mut line).expect("read") > 0,
                "stdout ended"
            );
            let message: Value = serde_json::from_str(&line).expect("a JSON line");
            lines.push(message.clone());
            if message["id"] == json!(id) {
                return message;
            }
        }
    };
    send(json!({"id": 1, "method": "initialize",
        "params": {"clientInfo": {"name": "e2e", "version": "0.0.1"}}}));
    read_until_answer(1, &mut lines);
    send(json!({"method": "initialized"}));
    send(json!({"id": 2, "method": "thread/start", "params": {"cwd": workspace}}));
    let started = read_until_answer(2, &mut lines);
    let thread = started["result"]["thread"]["id"]
        .as_str()
        .expect("thread id")
        .to_owned();
    let rollout = PathBuf::from(
        started["result"]["thread"]["path"]
            .as_str()
            .expect("rollout path"),
    );

    // From here on the client reads nothing.
    send(json!({"id": 3, "method": "turn/start",
        "params": {"threadId": thread, "input": [{"type": "text", "text": "go"}]}}));
    // The turn runs to its end and is recorded although its output waits...
    wait_for_record(&rollout, "\"type\":\"turnCompleted\"");
    // ...and the next request is handled.
    send(json!({"id": 4, "method": "thread/name/set",
        "params": {"threadId": thread, "name": "still served"}}));
    wait_for_record(&rollout, "still served");

    // Reading again: every message arrives, in order, none lost.
    let mut seen = Vec::new();
    read_until_answer(4, &mut seen);
    let methods: Vec<&str> = seen.iter().filter_map(|m| m["method"].as_str()).collect();
    let text: String = seen
        .iter()
        .filter(|m| m["method"] == json!("item/agentMessage/delta"))
        .map(|m| m["params"]["delta"].as_str().expect("delta"))
        .collect();
    assert_eq!(text, delta.repeat(DELTAS), "deltas lost or out of order");
    let completed = methods
        .iter()
        .position(|m| *m == "turn/completed")
        .expect("turn/completed");
    let last_delta = methods
        .iter()
        .rposition(|m| *m == "item/agentMessage/delta")
        .expect("deltas");
    assert!(last_delta < completed, "{methods:?}");
    assert_eq!(seen.iter().filter(|m| m["id"] == json!(3)).count(), 1);
    let answer = seen.last().expect("answer");
    assert_eq!(answer["result"], json!({}), "{answer}");

    // End of input: the server exits once its output is written.
    drop(stdin);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
}

/// The file read back again and again: each answer carries 20 MiB of base64, so 12 answers
/// (240 MiB) fit in the stdout queue and the 13th (260 MiB) does not.
const FILE_BYTES: usize = 15 * 1024 * 1024;
/// `RuntimeConfig::stdout_queue_bytes`, the bound docs/app-server.md promises.
const QUEUE_BYTES: u64 = 256 * 1024 * 1024;
/// Answers that fit in the queue.
const FIT: usize = 12;
/// Memory the server may hold beyond its idle size and a full queue: the answer being produced
/// (the file, its base64, the encoded message) and the allocator's slack. Measured: 340 to 360
/// MiB over the idle size at the peak, with 240 MiB queued. Without the bound, the 15th or 16th
/// answer goes past it.
const MARGIN: u64 = 160 * 1024 * 1024;
/// How long one step (an answer queued, what is waiting read) may take.
const STEP: Duration = Duration::from_secs(60);

/// One line of stdout, as the reader thread saw it.
#[derive(Debug, PartialEq)]
enum Line {
    /// An answer to `fs/readFile` `id`; `exact` if it is complete and holds the file.
    File { id: String, exact: bool },
    /// Any other answer: its id, and its error code if it is an error.
    Other { id: String, code: Option<i64> },
}

/// What the reader thread is asked to do.
enum Ask {
    /// Read until each of these ids has been answered; send back the lines.
    Answers(HashSet<String>),
    /// Read to the end of stdout; send back the bytes.
    End,
}

enum Got {
    Lines(Vec<Line>),
    Rest(Vec<u8>),
}

/// `{"id":"read-N","result":{"dataBase64":"` comes before the data.
const DATA_HEAD: &[u8] = b",\"result\":{\"dataBase64\":\"";
const DATA_TAIL: &[u8] = b"\"}}\n";

/// The whole line answering `fs/readFile` `id` with `base64`.
fn file_answer(id: &str, base64: &[u8]) -> Vec<u8> {
    let mut line = format!("{{\"id\":{}", json!(id)).into_bytes();
    line.extend_from_slice(DATA_HEAD);
    line.extend_from_slice(base64);
    line.extend_from_slice(DATA_TAIL);
    line
}

fn classify(line: &[u8], base64: &[u8]) -> Line {
    let head = line
        .get(..200)
        .and_then(|start| start.windows(DATA_HEAD.len()).position(|w| w == DATA_HEAD));
    if let Some(at) = head {
        let id: String = serde_json::from_slice(&line[b"{\"id\":".len()..at]).expect("an id");
        let data = &line[at + DATA_HEAD.len()..];
        let exact = data.len() == base64.len() + DATA_TAIL.len()
            && &data[..base64.len()] == base64
            && &data[base64.len()..] == DATA_TAIL;
        return Line::File { id, exact };
    }
    let message: Value = serde_json::from_slice(line).unwrap_or_else(|e| {
        panic!(
            "not a JSON line ({e}): {}",
            String::from_utf8_lossy(&line[..line.len().min(300)])
        )
    });
    Line::Other {
        id: message["id"].as_str().expect("a string id").to_owned(),
        code: message["error"]["code"].as_i64(),
    }
}

/// Whether `line` answers one of the requests that only pace the test: a marker, created or
/// refused while a read held the only slot, or a read refused while a marker held it.
fn pacing(line: &Line) -> bool {
    match line {
        Line::Other { id, code } => {
            (id.starts_with("mark-") && matches!(code, None | Some(-32001)))
                || (id.starts_with("read-") && *code == Some(-32001))
        }
        Line::File { .. } => false,
    }
}

/// Reads stdout only when asked, checking each answer to `fs/readFile` against `base64`
/// without keeping it.
fn read_stdout(stdout: ChildStdout, base64: &[u8], asks: Receiver<Ask>, got: &Sender<Got>) {
    let mut reader = BufReader::with_capacity(1 << 20, stdout);
    let mut line = Vec::new();
    for ask in asks {
        match ask {
            Ask::Answers(mut ids) => {
                let mut lines = Vec::new();
                while !ids.is_empty() {
                    line.clear();
                    if reader.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    let seen = classify(&line, base64);
                    let (Line::File { id, .. } | Line::Other { id, .. }) = &seen;
                    ids.remove(id);
                    lines.push(seen);
                }
                let _ = got.send(Got::Lines(lines));
            }
            Ask::End => {
                let mut rest = Vec::new();
                let _ = reader.read_to_end(&mut rest);
                let _ = got.send(Got::Rest(rest));
            }
        }
    }
}

/// `agentwire app-server` over pipes whose client reads stdout only when the test says so.
/// At most one request runs at a time (`--max-in-flight 1`), so the answers are produced one
/// after another and queued in order. The test never blocks on the server: a thread writes
/// stdin, another reads stdout when asked, and every wait has a deadline.
struct Stalled {
    child: Child,
    status: Option<ExitStatus>,
    stdin: Sender<Vec<u8>>,
    asks: Sender<Ask>,
    got: Receiver<Got>,
    stderr: Arc<Mutex<String>>,
    file: PathBuf,
    marks: PathBuf,
    next: usize,
    /// Ids sent whose answers have not been read.
    unread: HashSet<String>,
    /// The server's peak resident memory so far (`VmHWM`), in bytes.
    peak: u64,
}

impl Stalled {
    fn start(home: &Path, workspace: &Path, file: PathBuf, base64: Arc<Vec<u8>>) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
            .args(["app-server", "--max-in-flight", "1"])
            // With no thread loaded, `fs/*` may go under the server's working directory.
            .current_dir(workspace)
            .env("AGENTWIRE_HOME", home)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn agentwire app-server");
        let mut stdin = child.stdin.take().expect("stdin");
        let (lines, to_write) = channel::<Vec<u8>>();
        std::thread::spawn(move || {
            for line in to_write {
                if stdin.write_all(&line).is_err() {
                    break;
                }
            }
        });
        let stdout = child.stdout.take().expect("stdout");
        let (asks, asked) = channel();
        let (answered, got) = channel();
        std::thread::spawn(move || read_stdout(stdout, &base64, asked, &answered));
        let mut stderr_pipe = child.stderr.take().expect("stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = stderr_pipe.read(&mut buffer) {
                sink.lock()
                    .expect("stderr")
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        let marks = workspace.join("marks");
        let mut server = Self {
            child,
            status: None,
            stdin: lines,
            asks,
            got,
            stderr,
            file,
            marks,
            next: 0,
            unread: HashSet::new(),
            peak: 0,
        };
        server.send(
            "init",
            "initialize",
            json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}}),
        );
        let lines = server.read_answers();
        assert_eq!(
            lines,
            [Line::Other {
                id: "init".into(),
                code: None
            }]
        );
        let initialized = json!({"method": "initialized"});
        server.write(&initialized);
        server
    }

    fn write(&self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        // The writer thread ends once the server is gone; what is sent then is lost.
        let _ = self.stdin.send(line);
    }

    fn send(&mut self, id: &str, method: &str, params: Value) {
        self.unread.insert(id.to_owned());
        self.write(&json!({"id": id, "method": method, "params": params}));
    }

    fn id(&mut self, kind: &str) -> String {
        self.next += 1;
        format!("{kind}-{}", self.next)
    }

    /// The server's exit status, once it has exited.
    fn exited(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().expect("poll the server");
        }
        self.status
    }

    /// A counter of `/proc/PID/io` or a line of `/proc/PID/status`, while the server runs.
    fn proc_value(&self, file: &str, key: &str) -> Option<u64> {
        let text = std::fs::read_to_string(format!("/proc/{}/{file}", self.child.id())).ok()?;
        let line = text.lines().find(|line| line.starts_with(key))?;
        line[key.len()..].split_whitespace().next()?.parse().ok()
    }

    /// Bytes the server has read so far (files and stdin), or `None` once it has exited.
    fn rchar(&mut self) -> Option<u64> {
        let read = self.proc_value("io", "rchar:");
        if read.is_none() && self.exited().is_none() {
            panic!("cannot read /proc/{}/io", self.child.id());
        }
        read
    }

    /// Notes the server's peak memory so far.
    fn sample(&mut self) {
        if let Some(kib) = self.proc_value("status", "VmHWM:") {
            self.peak = self.peak.max(kib * 1024);
        }
    }

    /// Has the server read the file once more, answer it, and waits until that answer is
    /// queued: returns its id, or `None` if the server exited instead.
    ///
    /// Waiting without reading stdout: after `fs/readFile` the client asks for a marker
    /// directory, again every 10 ms. While the read runs, the only slot is taken and the
    /// marker is refused; once it is created, the read has been answered. If the read itself
    /// was refused (the marker before it still held the slot), the server has not read the
    /// file (`rchar` in `/proc/PID/io`): the read is asked again.
    fn queue_one(&mut self) -> Option<String> {
        loop {
            let before = self.rchar()?;
            let id = self.id("read");
            let path = json!(self.file.to_str().expect("utf-8 path"));
            self.send(&id, "fs/readFile", json!({"path": path}));
            let round = self.marks.join(&id);
            let deadline = Instant::now() + STEP;
            while !round.exists() {
                self.sample();
                if self.exited().is_some() {
                    return None;
                }
                assert!(
                    Instant::now() < deadline,
                    "{id} was not answered in time:\n{}",
                    self.stderr()
                );
                let mark = self.id("mark");
                let path = json!(round.join(&mark).to_str().expect("utf-8 path"));
                self.send(&mark, "fs/createDirectory", json!({"path": path}));
                std::thread::sleep(Duration::from_millis(10));
            }
            self.sample();
            let after = self.rchar()?;
            if after - before >= FILE_BYTES as u64 {
                return Some(id);
            }
        }
    }

    /// Has the server start one more read of the file, sending nothing once it has: returns
    /// when the server has read the file (`rchar`) or exited.
    ///
    /// The read is asked again while it is refused. The marker that ended the last round may
    /// still hold the only slot: its directory exists before its answer is written and the
    /// slot freed. A refusal is answered within milliseconds; an accepted read reads the file.
    fn read_once_more(&mut self) {
        let deadline = Instant::now() + STEP;
        loop {
            let Some(before) = self.rchar() else { return };
            let id = self.id("read");
            let path = json!(self.file.to_str().expect("utf-8 path"));
            self.send(&id, "fs/readFile", json!({"path": path}));
            let retry = Instant::now() + Duration::from_millis(500);
            while Instant::now() < retry {
                self.sample();
                match self.rchar() {
                    Some(after) if after - before < FILE_BYTES as u64 => {}
                    _ => return,
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(
                Instant::now() < deadline,
                "the server did not read the file again in time:\n{}",
                self.stderr()
            );
        }
    }

    /// Reads stdout until every message sent so far is answered.
    fn read_answers(&mut self) -> Vec<Line> {
        let ids = std::mem::take(&mut self.unread);
        self.asks.send(Ask::Answers(ids.clone())).expect("reader");
        let Ok(Got::Lines(lines)) = self.got.recv_timeout(STEP) else {
            panic!("the answers were not read in time:\n{}", self.stderr());
        };
        let seen: HashSet<&str> = lines
            .iter()
            .map(|(Line::File { id, .. } | Line::Other { id, .. })| id.as_str())
            .collect();
        let missing: Vec<&String> = ids
            .iter()
            .filter(|id| !seen.contains(id.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "stdout ended before {missing:?}:\n{}",
            self.stderr()
        );
        lines
    }

    /// Reads stdout to its end.
    fn read_rest(&mut self) -> Vec<u8> {
        self.asks.send(Ask::End).expect("reader");
        let Ok(Got::Rest(rest)) = self.got.recv_timeout(STEP) else {
            panic!("stdout did not end:\n{}", self.stderr());
        };
        rest
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr").clone()
    }
}

impl Drop for Stalled {
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// docs/app-server.md (`stdio://`): the output of a client that stops reading waits in a bounded
/// queue (256 MiB, all delivered in order once it reads); past that, the connection is closed
/// and the server exits 1 saying why. Twelve answers of 20 MiB (240 MiB) wait, the server
/// alive and serving, and then all arrive complete and in order; the thirteenth (260 MiB)
/// closes the connection: stdout ends, the server exits 1 with the reason on stderr, and its
/// memory never grew past the queue and the answer in the making.
#[test]
fn the_stdout_queue_holds_up_to_256_mib_and_past_that_the_connection_is_closed() {
    let root = scratch("stdout-queue");
    let (home, workspace) = home_and_workspace(&root);
    let file = workspace.join("big.bin");
    let bytes: Vec<u8> = (0..FILE_BYTES).map(|i| (i ^ (i >> 9)) as u8).collect();
    std::fs::write(&file, &bytes).expect("write the file");
    let base64 = Arc::new(STANDARD.encode(&bytes).into_bytes());
    drop(bytes);
    let mut server = Stalled::start(&home, &workspace, file, base64.clone());
    let idle = server.proc_value("status", "VmRSS:").expect("VmRSS") * 1024;
    let bound = idle + QUEUE_BYTES + MARGIN;
    let check_memory = |server: &Stalled, answers: usize| {
        assert!(
            server.peak <= bound,
            "answers waiting: {answers}; the server holds {} MiB (idle {} MiB, bound {} MiB)",
            server.peak >> 20,
            idle >> 20,
            bound >> 20
        );
    };

    // 240 MiB wait for a client that reads nothing: the server keeps it all and goes on.
    let mut queued = Vec::new();
    for _ in 0..FIT {
        let id = server.queue_one().unwrap_or_else(|| {
            panic!(
                "closed with {} answers waiting:\n{}",
                queued.len(),
                server.stderr()
            )
        });
        queued.push(id);
        check_memory(&server, queued.len());
    }
    assert!(server.exited().is_none());

    // The client reads: every answer arrives, complete and in order.
    let lines = server.read_answers();
    let files: Vec<&Line> = lines
        .iter()
        .filter(|line| matches!(line, Line::File { .. }))
        .collect();
    let expected: Vec<Line> = queued
        .iter()
        .map(|id| Line::File {
            id: id.clone(),
            exact: true,
        })
        .collect();
    assert_eq!(files, expected.iter().collect::<Vec<_>>());
    for line in lines
        .iter()
        .filter(|line| matches!(line, Line::Other { .. }))
    {
        assert!(pacing(line), "{line:?}");
    }

    // Stalled again, up to the bound...
    let mut queued = Vec::new();
    for _ in 0..FIT {
        let id = server.queue_one().unwrap_or_else(|| {
            panic!(
                "closed with {} answers waiting:\n{}",
                queued.len(),
                server.stderr()
            )
        });
        queued.push(id);
        check_memory(&server, queued.len());
    }
    // ...and past it: the thirteenth answer closes the connection, although the client sends
    // nothing more (the server is not waiting for its next message to notice).
    server.read_once_more();
    let deadline = Instant::now() + STEP;
    let status = loop {
        server.sample();
        if let Some(status) = server.exited() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "{} MiB of answers waiting and the connection still open:\n{}",
            ((FIT + 1) * FILE_BYTES * 4 / 3) >> 20,
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    check_memory(&server, FIT + 1);
    let stderr = server.stderr();
    assert_eq!(status.code(), Some(1), "{status}:\n{stderr}");
    assert!(
        stderr.contains("error: the client is not reading stdout")
            && stderr.contains(&format!("(at most {QUEUE_BYTES})"))
            && !stderr.contains("panicked"),
        "{stderr}"
    );
    // Stdout has ended: what the pipe held (the markers refused while the first read ran,
    // then the start of its answer), then nothing.
    let rest = server.read_rest();
    let cut = rest
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    for line in rest[..cut].split_inclusive(|&b| b == b'\n') {
        let seen = classify(line, &base64);
        assert!(pacing(&seen), "{seen:?}");
    }
    let first = file_answer(&queued[0], &base64);
    assert!(
        rest.len() - cut < first.len() && first.starts_with(&rest[cut..]),
        "stdout after the close ends with {} bytes that are not a part of the first answer",
        rest.len() - cut
    );
    // The file is large: do not leave it behind.
    let _ = std::fs::remove_dir_all(&root);
}
