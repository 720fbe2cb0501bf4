//! One server process under test, driven over real stdio pipes by a single client thread.
//!
//! The client writes requests to the child's stdin and reads its stdout with plain blocking
//! reads (`agentwire_client::blocking::LineReader`, on this thread: no async runtime hop is
//! timed); lines that are not responses (notifications, server requests) are skipped, and a
//! response is read with `agentwire_client::wire::peek`, the client core's cheapest look. The same
//! client code drives every contender, so its own cost is the same for all of them.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agentwire_client::blocking::LineReader;
use agentwire_client::wire;
use serde_json::Value;

/// A server to measure: how to start it.
#[derive(Debug, Clone)]
pub struct Contender {
    /// Short name for the table.
    pub name: String,
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables pointed at the contender's home directory.
    pub home_vars: Vec<&'static str>,
    /// Its home directory: created empty for the run, kept across its starts (as a user's
    /// would be), removed at the end.
    pub home: PathBuf,
}

/// What a server answered: a result, or an error code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `{"result": …}`.
    Result,
    /// `{"error": {"code", "message"}}`.
    Error(i64, String),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Result => f.write_str("result"),
            Outcome::Error(code, message) => write!(f, "error {code} \"{message}\""),
        }
    }
}

/// How many responses of each kind a phase saw.
#[derive(Debug, Clone, Default)]
pub struct Outcomes(pub Vec<(Outcome, u64)>);

impl Outcomes {
    fn record(&mut self, outcome: Outcome) {
        match self.0.iter_mut().find(|(o, _)| *o == outcome) {
            Some((_, count)) => *count += 1,
            None => self.0.push((outcome, 1)),
        }
    }

    /// Adds another phase's counts.
    pub fn merge(&mut self, other: &Outcomes) {
        for (outcome, count) in &other.0 {
            match self.0.iter_mut().find(|(o, _)| o == outcome) {
                Some((_, total)) => *total += count,
                None => self.0.push((outcome.clone(), *count)),
            }
        }
    }
}

/// A timed run of requests.
#[derive(Debug, Clone)]
pub struct Phase {
    /// Responses received.
    pub completed: u64,
    /// From the first request written to the last response read.
    pub elapsed: Duration,
    /// What the responses were.
    pub outcomes: Outcomes,
}

impl Phase {
    /// Round trips per second.
    pub fn rate(&self) -> f64 {
        self.completed as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Lines longer than this are treated as a broken server.
const MAX_LINE: usize = 64 * 1024 * 1024;

/// Kills the child if a session takes far longer than planned (a hung server).
struct Watchdog {
    cancelled: Arc<(Mutex<bool>, Condvar)>,
}

impl Watchdog {
    fn start(pid: u32, limit: Duration) -> Self {
        let cancelled = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = cancelled.clone();
        std::thread::spawn(move || {
            let (lock, condvar) = &*flag;
            let guard = lock.lock().unwrap_or_else(PoisonError::into_inner);
            let (guard, _) = condvar
                .wait_timeout_while(guard, limit, |cancelled| !*cancelled)
                .unwrap_or_else(PoisonError::into_inner);
            if !*guard {
                eprintln!("agentwire-bench: process {pid} hung; killing it");
                let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            }
        });
        Self { cancelled }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let (lock, condvar) = &*self.cancelled;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        condvar.notify_all();
    }
}

/// A started server with a completed `initialize` handshake.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    reader: LineReader<ChildStdout>,
    next_id: i64,
    out: Vec<u8>,
    _watchdog: Watchdog,
}

const INITIALIZE: &[u8] = b"{\"id\":0,\"method\":\"initialize\",\"params\":{\"clientInfo\":{\"name\":\"agentwire-bench\",\"version\":\"0.1.0\"}}}\n";
const INITIALIZED: &[u8] = b"{\"method\":\"initialized\"}\n";

impl Session {
    /// Starts `contender`, sends `initialize`, waits for its response and sends `initialized`.
    /// Returns the session and the time from spawn to the response line.
    pub fn start(contender: &Contender, limit: Duration) -> Result<(Self, Duration), String> {
        std::fs::create_dir_all(&contender.home)
            .map_err(|e| format!("{}: {e}", contender.home.display()))?;
        let mut command = Command::new(&contender.program);
        command
            .args(&contender.args)
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for var in &contender.home_vars {
            command.env(var, &contender.home);
        }
        let started = Instant::now();
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", contender.program.display()))?;
        let watchdog = Watchdog::start(child.id(), limit);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("child has no stdio pipes".into());
        };
        let mut session = Session {
            child,
            stdin: Some(stdin),
            reader: LineReader::new(stdout, MAX_LINE),
            next_id: 1,
            out: Vec::with_capacity(64 * 1024),
            _watchdog: watchdog,
        };
        session.write(INITIALIZE)?;
        let outcome = session.wait_for(0)?;
        let startup = started.elapsed();
        if outcome != Outcome::Result {
            return Err(format!("initialize answered {outcome}"));
        }
        session.write(INITIALIZED)?;
        Ok((session, startup))
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin already closed")?;
        stdin.write_all(bytes).map_err(|e| format!("write: {e}"))
    }

    /// Appends one request line to the output buffer.
    fn push_request(&mut self, method: &str, params: &str) {
        let id = self.next_id;
        self.next_id += 1;
        let _ = writeln!(
            self.out,
            "{{\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}"
        );
    }

    fn flush_requests(&mut self) -> Result<(), String> {
        let out = std::mem::take(&mut self.out);
        let result = self.write(&out);
        self.out = out;
        self.out.clear();
        result
    }

    /// Reads lines until the response to `id`; returns what it was.
    fn wait_for(&mut self, id: i64) -> Result<Outcome, String> {
        let mut found = None;
        let mut failure = None;
        while found.is_none() {
            self.reader
                .read_lines(|line| match parse(line) {
                    Ok(Some((got, outcome))) if got == id => found = Some(outcome),
                    Ok(_) => {}
                    Err(e) => failure = Some(e),
                })
                .map_err(|e| format!("read: {e}"))?;
            if let Some(e) = failure.take() {
                return Err(e);
            }
        }
        found.ok_or_else(|| "no response".into())
    }

    /// Sends one request and returns its response.
    pub fn probe(&mut self, method: &str, params: &str) -> Result<Outcome, String> {
        let id = self.next_id;
        self.push_request(method, params);
        self.flush_requests()?;
        self.wait_for(id)
    }

    /// Writes one request without waiting for its answer; returns its id.
    pub fn send(&mut self, method: &str, params: &str) -> Result<i64, String> {
        let id = self.next_id;
        self.push_request(method, params);
        self.flush_requests()?;
        Ok(id)
    }

    /// Sends one request and returns its `result` (an error response is an error).
    pub fn call(&mut self, method: &str, params: &str) -> Result<Value, String> {
        let id = self.send(method, params)?;
        let mut found = None;
        while found.is_none() {
            self.reader
                .read_lines(|line| {
                    if found.is_none() && matches!(parse(line), Ok(Some((got, _))) if got == id) {
                        found = Some(serde_json::from_slice::<Value>(line));
                    }
                })
                .map_err(|e| format!("read: {e}"))?;
        }
        let mut answer = match found {
            Some(Ok(answer)) => answer,
            Some(Err(e)) => return Err(format!("{method}: unreadable response: {e}")),
            None => return Err(format!("{method}: no response")),
        };
        if let Some(error) = answer.get("error") {
            return Err(format!("{method} answered {error}"));
        }
        Ok(answer
            .get_mut("result")
            .map(Value::take)
            .unwrap_or(Value::Null))
    }

    /// Reads lines (every one, notifications included) until `on_line` returns `Ok(true)`.
    pub fn read_until(
        &mut self,
        mut on_line: impl FnMut(&[u8]) -> Result<bool, String>,
    ) -> Result<(), String> {
        let mut done = false;
        let mut failure = None;
        while !done {
            self.reader
                .read_lines(|line| {
                    if done || failure.is_some() {
                        return;
                    }
                    match on_line(line) {
                        Ok(stop) => done = stop,
                        Err(e) => failure = Some(e),
                    }
                })
                .map_err(|e| format!("read: {e}"))?;
            if let Some(e) = failure.take() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// One request at a time for `duration`.
    pub fn lockstep(
        &mut self,
        method: &str,
        params: &str,
        duration: Duration,
    ) -> Result<Phase, String> {
        let mut outcomes = Outcomes::default();
        let mut completed = 0;
        let started = Instant::now();
        let deadline = started + duration;
        loop {
            let outcome = self.probe(method, params)?;
            outcomes.record(outcome);
            completed += 1;
            if Instant::now() >= deadline {
                break;
            }
        }
        Ok(Phase {
            completed,
            elapsed: started.elapsed(),
            outcomes,
        })
    }

    /// `window` requests in flight for `duration`: every response read is replaced by a new
    /// request (written together, once per read), then the window drains.
    pub fn windowed(
        &mut self,
        method: &str,
        params: &str,
        window: usize,
        duration: Duration,
    ) -> Result<Phase, String> {
        let mut outcomes = Outcomes::default();
        let mut completed: u64 = 0;
        let started = Instant::now();
        let deadline = started + duration;
        for _ in 0..window {
            self.push_request(method, params);
        }
        self.flush_requests()?;
        let mut in_flight = window;
        while in_flight > 0 {
            let mut answered = 0;
            let mut failure = None;
            self.reader
                .read_lines(|line| match parse(line) {
                    Ok(Some((_, outcome))) => {
                        answered += 1;
                        outcomes.record(outcome);
                    }
                    Ok(None) => {}
                    Err(e) => failure = Some(e),
                })
                .map_err(|e| format!("read: {e}"))?;
            if let Some(e) = failure {
                return Err(e);
            }
            completed += answered as u64;
            in_flight = in_flight.saturating_sub(answered);
            if answered > 0 && Instant::now() < deadline {
                for _ in 0..answered {
                    self.push_request(method, params);
                }
                self.flush_requests()?;
                in_flight += answered;
            }
        }
        Ok(Phase {
            completed,
            elapsed: started.elapsed(),
            outcomes,
        })
    }

    /// The server's peak resident memory so far (`VmHWM`), in KiB.
    pub fn peak_memory_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// Closes stdin and waits for the server to exit (killing it after `grace`).
    pub fn finish(mut self, grace: Duration) -> Result<(), String> {
        drop(self.stdin.take());
        let deadline = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break Ok(()),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break Err("did not exit after stdin closed; killed".into());
                }
                Err(e) => break Err(format!("wait: {e}")),
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A response's id and outcome; `None` for notifications and server requests. Only the id and
/// the error are decoded ([`wire::peek`]), so the client's own cost stays what it was.
fn parse(line: &[u8]) -> Result<Option<(i64, Outcome)>, String> {
    let Some(reply) = wire::peek(line).map_err(|e| format!("unreadable line ({e})"))? else {
        return Ok(None);
    };
    let Some(id) = reply.id else {
        return Err("response without an integer id".to_owned());
    };
    let outcome = match reply.error {
        Some((code, message)) => Outcome::Error(code, message),
        None => Outcome::Result,
    };
    Ok(Some((id, outcome)))
}
