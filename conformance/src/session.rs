//! A JSON-RPC client over one [`Link`], with every message going through the contract checker
//! of its scenario ([`Log`]).
//!
//! The suite keeps every server message as it came (raw lines for the checker, JSON values for
//! the scenarios) and may send anything ([`Conn::send_raw`]); what a well-behaved client writes
//! comes from the client core's grammar ([`agentwire_client::wire`]), as every client of this
//! workspace writes it.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use agentwire_client::{RequestId, wire};
use agentwire_codegen::contract::{Checker, Dir, Violation};
use serde_json::{Value, json};

use crate::target::{Incoming, Link};

/// Why a scenario stopped early.
#[derive(Debug)]
pub enum Stop {
    /// The server did something wrong (or did not do what it should).
    Fail(String),
    /// The scenario cannot run against this server/configuration.
    Skip(String),
}

/// Shorthand for a failure.
pub fn fail<T>(reason: impl Into<String>) -> Result<T, Stop> {
    Err(Stop::Fail(reason.into()))
}

/// The transcript of one scenario and what the checker found in it.
pub struct Log<'c> {
    checker: Checker<'c>,
    /// The transcript records, in order (`{"session","dir","line","ts"}`).
    pub records: Vec<Value>,
    /// Every violation, by either side.
    pub violations: Vec<Violation>,
}

impl<'c> Log<'c> {
    /// A log checked by `checker`.
    pub fn new(checker: Checker<'c>) -> Self {
        Self {
            checker,
            records: Vec::new(),
            violations: Vec::new(),
        }
    }

    fn record(&mut self, session: &str, dir: Dir, line: &str) {
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        self.records.push(
            json!({"session": session, "dir": dir.as_str(), "line": line, "ts": u64::try_from(ts).unwrap_or(u64::MAX)}),
        );
        let at = self.records.len();
        let found = self.checker.check(at, session, dir, line);
        self.violations.extend(found);
    }
}

/// One connection of a scenario.
pub struct Conn<'c> {
    session: String,
    link: Link,
    log: Rc<RefCell<Log<'c>>>,
    timeout: Duration,
    next_id: i64,
    /// Server messages received but not yet taken by a wait, oldest first.
    backlog: VecDeque<Value>,
    /// Every server message, in order.
    pub seen: Vec<Value>,
}

impl<'c> Conn<'c> {
    /// A client on `link`, logging as `session`.
    pub fn new(session: String, link: Link, log: Rc<RefCell<Log<'c>>>, timeout: Duration) -> Self {
        Self {
            session,
            link,
            log,
            timeout,
            next_id: 1,
            backlog: VecDeque::new(),
            seen: Vec::new(),
        }
    }

    /// Sends `line` exactly as given.
    pub fn send_raw(&mut self, line: &str) -> Result<(), Stop> {
        self.log
            .borrow_mut()
            .record(&self.session, Dir::ClientToServer, line);
        self.link.send(line).map_err(Stop::Fail)
    }

    /// Sends a message.
    pub fn send(&mut self, message: &Value) -> Result<(), Stop> {
        self.send_raw(&message.to_string())
    }

    /// Sends a request and returns its id, without waiting.
    pub fn send_request(&mut self, method: &str, params: Value) -> Result<i64, Stop> {
        let id = self.next_id;
        self.next_id += 1;
        self.send_raw(&wire::request(
            &RequestId::Integer(id),
            method,
            Some(&params),
        ))?;
        Ok(id)
    }

    /// The next message from the server.
    fn receive(&mut self, waiting_for: &str) -> Result<Value, Stop> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.link.incoming.recv_timeout(left) {
                Ok(Incoming::Line(line)) => line,
                Ok(Incoming::Closed(why)) => {
                    return fail(format!(
                        "{why} while waiting for {waiting_for}{}",
                        self.stderr_note()
                    ));
                }
                Err(RecvTimeoutError::Timeout) => {
                    return fail(format!(
                        "nothing in {:?} while waiting for {waiting_for}{}",
                        self.timeout,
                        self.stderr_note()
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return fail(format!(
                        "the connection is gone while waiting for {waiting_for}"
                    ));
                }
            };
            self.log
                .borrow_mut()
                .record(&self.session, Dir::ServerToClient, &line);
            if line.trim().is_empty() {
                continue;
            }
            return match serde_json::from_str::<Value>(&line) {
                Ok(value) => {
                    self.seen.push(value.clone());
                    Ok(value)
                }
                Err(e) => fail(format!(
                    "the server wrote a line that is not JSON ({e}): {}",
                    wire::clip_to(&line, REPORT_QUOTE_MAX)
                )),
            };
        }
    }

    fn stderr_note(&self) -> String {
        let tail = self.link.stderr();
        let tail = tail.trim();
        if tail.is_empty() {
            String::new()
        } else {
            format!("; server stderr: {}", wire::clip_to(tail, REPORT_QUOTE_MAX))
        }
    }

    /// Waits for the first server message `matches` accepts (looking at the backlog first);
    /// the others stay in the backlog.
    pub fn wait(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Result<Value, Stop> {
        if let Some(index) = self.backlog.iter().position(&matches)
            && let Some(found) = self.backlog.remove(index)
        {
            return Ok(found);
        }
        loop {
            let message = self.receive(what)?;
            if matches(&message) {
                return Ok(message);
            }
            self.backlog.push_back(message);
        }
    }

    /// Waits for notification `method` (matching `also`).
    pub fn notification(
        &mut self,
        method: &str,
        also: impl Fn(&Value) -> bool,
    ) -> Result<Value, Stop> {
        self.wait(&format!("notification {method}"), |m| {
            m.get("id").is_none() && m["method"] == method && also(m)
        })
    }

    /// Waits for a server request `method` (an approval).
    pub fn server_request(&mut self, method: &str) -> Result<Value, Stop> {
        self.wait(&format!("server request {method}"), |m| {
            m.get("id").is_some() && m["method"] == method
        })
    }

    /// Waits for the answer to request `id`: `Ok(result)` or `Err(error object)`.
    pub fn answer_to(&mut self, id: &Value, method: &str) -> Result<Result<Value, Value>, Stop> {
        let answer = self.wait(&format!("the answer to {method} (id {id})"), |m| {
            m.get("method").is_none() && m.get("id") == Some(id)
        })?;
        match (answer.get("result"), answer.get("error")) {
            (Some(result), None) => Ok(Ok(result.clone())),
            (None, Some(error)) => Ok(Err(error.clone())),
            _ => fail(format!(
                "the answer to {method} has neither one result nor one error: {}",
                wire::clip_to(&answer.to_string(), REPORT_QUOTE_MAX)
            )),
        }
    }

    /// Sends a request and waits for its answer.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Result<Value, Value>, Stop> {
        let id = self.send_request(method, params)?;
        self.answer_to(&json!(id), method)
    }

    /// A request that must succeed.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, Stop> {
        match self.request(method, params)? {
            Ok(result) => Ok(result),
            Err(error) => fail(format!(
                "{method} answered with an error: {}",
                wire::clip_to(&error.to_string(), REPORT_QUOTE_MAX)
            )),
        }
    }

    /// A request that must fail; its error object.
    pub fn call_err(&mut self, method: &str, params: Value) -> Result<Value, Stop> {
        match self.request(method, params)? {
            Ok(result) => fail(format!(
                "{method} was expected to fail but answered with a result: {}",
                wire::clip_to(&result.to_string(), REPORT_QUOTE_MAX)
            )),
            Err(error) => Ok(error),
        }
    }

    /// Answers a server request (its id echoed as sent, even one the grammar would not accept).
    pub fn respond(&mut self, id: &Value, result: Value) -> Result<(), Stop> {
        self.send(&json!({"id": id, "result": result}))
    }

    /// `initialize` (with `capabilities`), then `initialized`.
    pub fn initialize(&mut self, capabilities: Value) -> Result<Value, Stop> {
        let mut params = json!({"clientInfo": {"name": "agentwire_conformance", "title": "agentwire conformance", "version": env!("CARGO_PKG_VERSION")}});
        if !capabilities.is_null() {
            params["capabilities"] = capabilities;
        }
        let result = self.call("initialize", params)?;
        self.send_raw(&wire::notification("initialized", None))?;
        Ok(result)
    }

    /// Whether a notification `method` has been received.
    pub fn has_seen(&self, method: &str) -> bool {
        self.seen
            .iter()
            .any(|m| m.get("id").is_none() && m["method"] == method)
    }
}

/// How much of a server's message or error a report line quotes, in bytes
/// ([`wire::clip_to`] cuts it).
pub const REPORT_QUOTE_MAX: usize = 300;

/// The error code of an error object, if it has an integer one.
pub fn code(error: &Value) -> Option<i64> {
    error.get("code").and_then(Value::as_i64)
}

/// `code message` of an error object, for reports.
pub fn describe_error(error: &Value) -> String {
    format!(
        "{} {}",
        error.get("code").map_or("?".to_owned(), Value::to_string),
        wire::clip_to(
            error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)"),
            REPORT_QUOTE_MAX,
        )
    )
}
