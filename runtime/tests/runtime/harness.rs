//! Serves the [`Scripted`] handler in-process over real OS pipes, the way `agentwire
//! app-server` serves stdio: a current-thread tokio runtime driven by its own thread, and
//! `stdio::serve_lines` reading the input pipe on another.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, PipeWriter, Write};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use agentwire_runtime::{RuntimeConfig, Server};
use serde_json::{Value, json};

use crate::scripted::{Scripted, State};

/// How long any single wait in a test may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The settings the tests start from: small enough limits to reach, short enough timeouts.
pub fn test_config() -> RuntimeConfig {
    let mut config = RuntimeConfig::new(home());
    config.max_message_bytes = 64 * 1024;
    config.max_in_flight_requests = 64;
    config.server_request_timeout = Duration::from_secs(10);
    config.shutdown_grace = Duration::from_secs(10);
    config
}

/// The home directory the tests' servers report as `codexHome`.
pub fn home() -> std::path::PathBuf {
    std::env::temp_dir().join("agentwire-runtime-tests-home")
}

/// A server on the other end of two pipes.
pub struct Harness {
    server: Server<Scripted>,
    /// What the handler saw.
    pub state: Arc<State>,
    input: Option<PipeWriter>,
    output: Receiver<Vec<u8>>,
    serving: Option<JoinHandle<std::io::Result<()>>>,
    /// Messages read while waiting for something else, oldest first.
    stash: VecDeque<Value>,
}

impl Harness {
    /// A server with [`test_config`].
    pub fn start() -> Self {
        Self::start_with(|_| {})
    }

    /// A server with [`test_config`] changed by `adjust`.
    pub fn start_with(adjust: impl FnOnce(&mut RuntimeConfig)) -> Self {
        let mut config = test_config();
        adjust(&mut config);
        let handler = Scripted::default();
        let state = handler.state.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("build a tokio runtime");
        let server = Server::new(handler, config, runtime.handle().clone());
        let (input_reader, input_writer) = std::io::pipe().expect("create the input pipe");
        let (output_reader, output_writer) = std::io::pipe().expect("create the output pipe");

        let serving_server = server.clone();
        let serving = std::thread::spawn(move || {
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let result = std::thread::scope(|scope| {
                let runtime = &runtime;
                let driver = scope.spawn(move || {
                    runtime.block_on(async {
                        let _ = stopped.await;
                    })
                });
                let result = agentwire_runtime::serve_lines(
                    &serving_server,
                    input_reader,
                    output_writer,
                    |drain| runtime.handle().block_on(drain),
                );
                let _ = stop.send(());
                let _ = driver.join();
                result
            });
            drop(serving_server);
            // Dropping the runtime drops every task, and with them the last handle on the
            // output pipe: the reader sees end of file.
            drop(runtime);
            result
        });

        let (lines, output) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(output_reader).split(b'\n') {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });

        Self {
            server,
            state,
            input: Some(input_writer),
            output,
            serving: Some(serving),
            stash: VecDeque::new(),
        }
    }

    /// The server, for what a test does beside the pipe (e.g. broadcasts).
    pub fn server(&self) -> &Server<Scripted> {
        &self.server
    }

    /// Writes raw bytes to the server's input.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("input still open");
        input.write_all(bytes).expect("write to the server");
        input.flush().expect("flush to the server");
    }

    /// Writes one line (a newline is added).
    pub fn send_line(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    /// Writes one JSON message as a line.
    pub fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    /// Closes the server's input (end of file).
    pub fn close_input(&mut self) {
        self.input = None;
    }

    /// The next message the server wrote, within `wait`; `None` if nothing came (or the output
    /// ended).
    pub fn try_next(&mut self, wait: Duration) -> Option<Value> {
        if let Some(message) = self.stash.pop_front() {
            return Some(message);
        }
        match self.output.recv_timeout(wait) {
            Ok(line) => Some(parse_line(&line)),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The next message the server wrote; fails the test if none comes in time.
    pub fn next(&mut self) -> Value {
        self.try_next(PATIENCE)
            .expect("the server wrote a message in time")
    }

    /// Reads until the response (result or error) with `id`; messages read on the way are kept
    /// for later.
    pub fn answer_to(&mut self, id: &Value) -> Value {
        if let Some(at) = self.stash.iter().position(|m| is_answer_to(m, id)) {
            return self.stash.remove(at).expect("index is in range");
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.output.recv_timeout(left) {
                Ok(line) => line,
                Err(error) => panic!(
                    "no answer to {id} ({error:?}); read so far: {:?}",
                    self.stash
                ),
            };
            let message = parse_line(&line);
            if is_answer_to(&message, id) {
                return message;
            }
            self.stash.push_back(message);
        }
    }

    /// Sends a request and returns its answer.
    pub fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(&json!({ "id": id, "method": method, "params": params }));
        self.answer_to(&id)
    }

    /// Completes the handshake with `capabilities` (or none); returns the `initialize` answer.
    pub fn initialize(&mut self, capabilities: Option<Value>) -> Value {
        let mut params = json!({ "clientInfo": { "name": "test_client", "version": "1.2.3" } });
        if let Some(capabilities) = capabilities {
            params["capabilities"] = capabilities;
        }
        let answer = self.request(json!("init"), "initialize", params);
        assert!(
            answer.get("result").is_some(),
            "initialize failed: {answer}"
        );
        self.send(&json!({ "method": "initialized" }));
        answer
    }

    /// The messages read but not yet taken, removing them.
    pub fn take_stash(&mut self) -> Vec<Value> {
        self.stash.drain(..).collect()
    }

    /// Closes the input, reads everything the server writes until its output ends, and checks
    /// that the transport returned cleanly. Returns the messages not yet taken.
    pub fn finish(mut self) -> Vec<Value> {
        self.close_input();
        let deadline = Instant::now() + PATIENCE;
        let mut rest: Vec<Value> = self.stash.drain(..).collect();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(line) => rest.push(parse_line(&line)),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("the server's output did not end"),
            }
        }
        let serving = self.serving.take().expect("served once");
        while !serving.is_finished() {
            assert!(Instant::now() < deadline, "the server did not return");
            std::thread::sleep(Duration::from_millis(5));
        }
        serving
            .join()
            .expect("the serving thread did not panic")
            .expect("serve_lines returned Ok");
        rest
    }
}

/// Whether `message` is a response (result or error) to the request `id`.
pub fn is_answer_to(message: &Value, id: &Value) -> bool {
    message.get("method").is_none()
        && message.get("id") == Some(id)
        && (message.get("result").is_some() || message.get("error").is_some())
}

fn parse_line(line: &[u8]) -> Value {
    serde_json::from_slice(line).unwrap_or_else(|e| {
        panic!(
            "the server wrote a line that is not JSON ({e}): {:?}",
            String::from_utf8_lossy(line)
        )
    })
}

/// `{"id": id, "error": {"code": code, "message": message}}` exactly.
pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "id": id, "error": { "code": code, "message": message } })
}
