//! A small JSON-RPC client that drives `agentwire app-server` over its stdio.
//!
//! It blocks on the test's thread and keeps every message as JSON, so a test can look at
//! anything the server sent; the lines are found by the client core's
//! [`LineReader`](agentwire_client::blocking::LineReader) and the requests written by its
//! [`wire`](agentwire_client::wire) grammar. [`Client::send_line`] writes bytes exactly as
//! given, for tests of what the server does with malformed input.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentwire_client::blocking::LineReader;
use agentwire_client::{RequestId, wire};
use serde_json::{Value, json};

use crate::wire_contract::Guard;

/// Longer server lines end the reader (a broken server): the server's own limit.
const MAX_LINE: usize = 64 * 1024 * 1024;

/// How long any single answer or notification may take.
const WAIT: Duration = Duration::from_secs(60);

/// A running server and the client end of its stdio.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
    next_id: i64,
    /// Checks every message the server writes against the generated bundle.
    contract: Guard,
    /// Notifications received but not yet looked at, oldest first.
    pub notifications: VecDeque<Value>,
}

impl Client {
    /// Starts `agentwire app-server` with `AGENTWIRE_HOME=home` and completes the handshake.
    pub fn start(home: &Path) -> Self {
        Self::start_with(home, &[])
    }

    /// Like [`Client::start`], with `args` after `app-server`.
    pub fn start_with(home: &Path, args: &[&str]) -> Self {
        Self::start_negotiating(home, args, Value::Null)
    }

    /// Like [`Client::start`], offering `capabilities` in `initialize`
    /// (`{"experimentalApi": true}`, say).
    pub fn start_with_capabilities(home: &Path, capabilities: Value) -> Self {
        Self::start_negotiating(home, &[], capabilities)
    }

    /// Like [`Client::start`], with `args` after `app-server` and `capabilities` offered.
    pub fn start_with_args_and_capabilities(
        home: &Path,
        args: &[&str],
        capabilities: Value,
    ) -> Self {
        Self::start_negotiating(home, args, capabilities)
    }

    /// Like [`Client::start`], with `env` added to the server's environment.
    pub fn start_with_env(home: &Path, env: &[(&str, &str)]) -> Self {
        Self::handshake(Self::spawn_with_env(home, &[], env), Value::Null)
    }

    /// Like [`Client::start`], with `args` after `app-server` and `env` added to the server's
    /// environment.
    pub fn start_with_args_and_env(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::handshake(Self::spawn_with_env(home, args, env), Value::Null)
    }

    fn start_negotiating(home: &Path, args: &[&str], capabilities: Value) -> Self {
        Self::handshake(Self::spawn_with(home, args), capabilities)
    }

    fn handshake(mut client: Self, capabilities: Value) -> Self {
        let answer = client.request(
            "initialize",
            json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}, "capabilities": capabilities}),
        );
        assert!(answer.is_ok(), "initialize failed: {answer:?}");
        client.send_line(&wire::notification("initialized", None));
        client
    }

    /// Starts the server with `args` after `app-server`, without the handshake.
    pub fn spawn_with(home: &Path, args: &[&str]) -> Self {
        Self::spawn_with_env(home, args, &[])
    }

    /// Like [`Client::spawn_with`], with `env` added to the server's environment.
    pub fn spawn_with_env(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
            .arg("app-server")
            .args(args)
            // Before `env`: a test may ask for more logs.
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .env("AGENTWIRE_HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn agentwire app-server");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, messages) = channel();
        let contract = Guard::new();
        let checked = contract.clone();
        std::thread::spawn(move || {
            let mut reader = LineReader::new(stdout, MAX_LINE);
            let mut listening = true;
            while listening {
                let read = reader.read_lines(|line| {
                    if !listening {
                        return;
                    }
                    let line = String::from_utf8_lossy(line);
                    checked.server_sent(&line);
                    let value = serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("server wrote a non-JSON line ({e}): {line}"));
                    listening = sender.send(value).is_ok();
                });
                listening &= read.is_ok();
            }
        });
        let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("stderr lock")
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            messages,
            stderr,
            next_id: 0,
            contract,
            notifications: VecDeque::new(),
        }
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    /// Writes `line` exactly as given, followed by a newline (what no well-behaved client would
    /// send too: the raw escape hatch).
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        self.contract.client_sent(line);
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        stdin.write_all(&bytes).expect("write to the server");
        stdin.flush().expect("flush to the server");
    }

    /// Writes the request `method` with the next id; returns the id.
    fn write_request(&mut self, method: &str, params: &Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send_line(&wire::request(
            &RequestId::Integer(id),
            method,
            Some(params),
        ));
        id
    }

    /// Sends a request and waits for its answer: `Ok(result)` or `Err(error)`. Notifications
    /// that arrive meanwhile are kept in [`Client::notifications`].
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.write_request(method, &params);
        let deadline = Instant::now() + WAIT;
        loop {
            let message = self.next_message(deadline, method);
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
            }
            self.notifications.push_back(message);
        }
    }

    /// [`Client::request`] that must succeed.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params)
            .unwrap_or_else(|error| panic!("{method} failed: {error}\nstderr:\n{}", self.stderr()))
    }

    /// [`Client::request`] that must fail; returns the error object.
    pub fn call_err(&mut self, method: &str, params: Value) -> Value {
        match self.request(method, params) {
            Ok(result) => panic!("{method} should have failed, got {result}"),
            Err(error) => error,
        }
    }

    /// Sends a request without waiting for its answer; returns its id (see
    /// [`Client::answer`]).
    pub fn send_request(&mut self, method: &str, params: Value) -> Value {
        json!(self.write_request(method, &params))
    }

    /// Waits for the answer to the request `id` sent with [`Client::send_request`]:
    /// `Ok(result)` or `Err(error)`. Messages that arrive first are kept in
    /// [`Client::notifications`] (so is an answer to another request).
    pub fn answer(&mut self, id: &Value) -> Result<Value, Value> {
        let deadline = Instant::now() + WAIT;
        let is_answer = |m: &Value| m.get("id") == Some(id) && m.get("method").is_none();
        let message = match self.notifications.iter().position(is_answer) {
            Some(at) => self.notifications.remove(at).expect("position is valid"),
            None => loop {
                let message = self.next_message(deadline, &format!("the answer to {id}"));
                if is_answer(&message) {
                    break message;
                }
                self.notifications.push_back(message);
            },
        };
        match message.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        }
    }

    /// The params of the first notification `method` received (waiting for it if needed); it is
    /// removed from the backlog.
    pub fn notification(&mut self, method: &str) -> Value {
        let found = self.first(method, |n| n.get("method") == Some(&json!(method)));
        found.get("params").cloned().unwrap_or(Value::Null)
    }

    /// The first request `method` the server sent (waiting for it if needed), as its id and
    /// params; it is removed from the backlog.
    pub fn server_request(&mut self, method: &str) -> (Value, Value) {
        let found = self.first(method, |n| {
            n.get("method") == Some(&json!(method)) && n.get("id").is_some()
        });
        let params = found.get("params").cloned().unwrap_or(Value::Null);
        (found["id"].clone(), params)
    }

    /// The first message (notification or server request, whole) whose method is one of
    /// `methods`, waiting for it if needed; it is removed from the backlog. For a test that
    /// must see which of two things happens first (an approval request or the turn's end).
    pub fn first_of(&mut self, methods: &[&str]) -> Value {
        self.first(&methods.join(" or "), |m| {
            m.get("method")
                .and_then(Value::as_str)
                .is_some_and(|method| methods.contains(&method))
        })
    }

    /// Removes and returns the first message of the backlog, or else the first to arrive, that
    /// `wanted` accepts; what arrives before it joins the backlog. Each message is looked at
    /// once, so waiting behind a long stream stays linear.
    fn first(&mut self, waiting_for: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.notifications.iter().position(&wanted) {
            return self.notifications.remove(at).expect("position is valid");
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let message = self.next_message(deadline, waiting_for);
            if wanted(&message) {
                return message;
            }
            self.notifications.push_back(message);
        }
    }

    fn next_message(&mut self, deadline: Instant, waiting_for: &str) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        let received = self.messages.recv_timeout(left);
        self.contract.assert_clean();
        match received {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "no answer for {waiting_for} in time\nstderr:\n{}",
                    self.stderr()
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!(
                    "the server closed stdout while waiting for {waiting_for}\nstderr:\n{}",
                    self.stderr()
                )
            }
        }
    }

    /// `thread/start` with `params`; returns its answer once `thread/started` has arrived,
    /// with the notification backlog cleared.
    pub fn start_thread(&mut self, params: Value) -> Value {
        let started = self.call("thread/start", params);
        self.notification("thread/started");
        self.notifications.clear();
        started
    }

    /// `turn/start` on `thread` with `text` as its input; checks that the answer is a turn
    /// just begun and returns its id.
    pub fn start_turn(&mut self, thread: &str, text: &str) -> String {
        self.start_turn_with(thread, text, json!({}))
    }

    /// Like [`Client::start_turn`], with `overrides` merged into the params.
    pub fn start_turn_with(&mut self, thread: &str, text: &str, overrides: Value) -> String {
        let mut params = json!({"threadId": thread, "input": [{"type": "text", "text": text}]});
        if let (Some(params), Some(overrides)) = (params.as_object_mut(), overrides.as_object()) {
            params.extend(overrides.clone());
        }
        let answer = self.call("turn/start", params);
        let turn = &answer["turn"];
        assert_eq!(turn["status"], json!("inProgress"), "{answer}");
        assert_eq!(turn["items"], json!([]), "{answer}");
        assert_eq!(turn["itemsView"], json!("notLoaded"), "{answer}");
        assert_eq!(turn["startedAt"], Value::Null, "{answer}");
        turn["id"].as_str().expect("turn id").to_owned()
    }

    /// Every message received and not looked at yet, in order; the backlog is left empty.
    pub fn backlog(&mut self) -> Vec<Value> {
        self.notifications.drain(..).collect()
    }

    /// Every notification up to and including `turn/completed`, in order.
    pub fn until_turn_completed(&mut self) -> Vec<Value> {
        let completed = self.notification("turn/completed");
        let mut all: Vec<Value> = self.notifications.drain(..).collect();
        all.push(json!({"method": "turn/completed", "params": completed}));
        all
    }

    /// The contract guard of this connection (every message checked so far).
    pub fn contract(&self) -> &Guard {
        &self.contract
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server logged so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr lock").clone()
    }

    /// Closes stdin, waits for the server to exit successfully, and returns every message it
    /// wrote that has not been looked at yet (the backlog first), up to the end of its output.
    pub fn finish(&mut self) -> Vec<Value> {
        drop(self.stdin.take());
        self.rest()
    }

    /// Waits for the server to exit successfully (after a signal, say), and returns every
    /// message it wrote that has not been looked at yet, up to the end of its output.
    pub fn rest(&mut self) -> Vec<Value> {
        let status = self.wait_exit();
        assert!(
            status.success(),
            "server exited with {status}\n{}",
            self.stderr()
        );
        let mut all: Vec<Value> = self.notifications.drain(..).collect();
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) => all.push(message),
                Err(RecvTimeoutError::Disconnected) => {
                    self.contract.assert_clean();
                    return all;
                }
                Err(RecvTimeoutError::Timeout) => panic!("stdout stayed open after exit"),
            }
        }
    }

    /// Waits (at most the usual wait) for the server to exit.
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            match self.child.try_wait().expect("poll the server") {
                Some(status) => return status,
                None if Instant::now() > deadline => {
                    panic!("server did not exit\n{}", self.stderr())
                }
                None => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    /// Closes stdin and waits for the server to exit; returns its log.
    pub fn stop(mut self) -> String {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        loop {
            match self.child.try_wait().expect("poll the server") {
                Some(status) => {
                    assert!(
                        status.success(),
                        "server exited with {status}\n{}",
                        self.stderr()
                    );
                    break;
                }
                None if Instant::now() > deadline => panic!("server did not exit"),
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        // Let the reader threads drain.
        std::thread::sleep(Duration::from_millis(50));
        self.stderr()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.contract.assert_clean_on_drop();
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The id of the thread in a `thread/start`, `resume` or `fork` answer.
pub fn thread_id(answer: &Value) -> String {
    answer["thread"]["id"]
        .as_str()
        .expect("thread id")
        .to_owned()
}

/// The params of every notification `method` in `seen`.
pub fn params<'a>(seen: &'a [Value], method: &str) -> Vec<&'a Value> {
    seen.iter()
        .filter(|n| n["method"] == json!(method))
        .map(|n| &n["params"])
        .collect()
}

/// Whether `seen` holds the `serverRequest/resolved` of server request `id` of `thread`.
pub fn resolved(seen: &[Value], id: &Value, thread: &str) -> bool {
    params(seen, "serverRequest/resolved")
        .iter()
        .any(|p| p["requestId"] == *id && p["threadId"] == json!(thread))
}

/// The concatenated `delta`s of the notifications `method` in `seen`.
pub fn deltas(seen: &[Value], method: &str) -> String {
    params(seen, method)
        .iter()
        .map(|p| p["delta"].as_str().expect("delta"))
        .collect()
}

/// The completed turn of notifications that end with `turn/completed`
/// ([`Client::until_turn_completed`]).
pub fn completed_turn(seen: &[Value]) -> &Value {
    &seen.last().expect("notifications")["params"]["turn"]
}
