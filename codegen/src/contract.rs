//! Contract checking: every message of a recorded exchange, in both directions, against a
//! pinned schema bundle, plus the protocol rules a schema cannot express.
//!
//! A transcript is JSON Lines, one record per message:
//! `{"session"?: string, "dir": "client->server" | "server->client", "line": string, "ts"?: any}`
//! where `line` is the raw message. Requests are paired with their answers by id within a
//! session, so a result is checked against its method's response envelope, an error against
//! `JSONRPCError`. Everything is driven by the bundle's own method declarations (`x-method`,
//! `x-direction`, `x-experimental`), so a new method needs no change here.
//!
//! The same [`Checker`] serves `agentwire contract check` and the end-to-end test client.

mod bundle;

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::{Value, json};

pub use bundle::{Issue, Kind, SchemaSet};

/// The file name of a surface's bundle inside a `json/` directory.
pub const BUNDLE_FILE: &str = "agentwire_app_server_protocol.schemas.json";

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Dir {
    /// From the client to the server.
    #[serde(rename = "client->server")]
    ClientToServer,
    /// From the server to the client.
    #[serde(rename = "server->client")]
    ServerToClient,
}

impl Dir {
    /// The transcript spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientToServer => "client->server",
            Self::ServerToClient => "server->client",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "client->server" => Some(Self::ClientToServer),
            "server->client" => Some(Self::ServerToClient),
            _ => None,
        }
    }
}

/// The rules, by the name reports use.
pub mod rule {
    /// A transcript record that is not `{"session"?, "dir", "line"}`.
    pub const TRANSCRIPT: &str = "transcript";
    /// The message is not JSON.
    pub const NOT_JSON: &str = "not-json";
    /// The message is JSON but no JSON-RPC request, notification or answer.
    pub const NOT_JSONRPC: &str = "not-jsonrpc";
    /// The message does not match its schema.
    pub const SCHEMA: &str = "schema";
    /// An error answer that is not a JSON-RPC error object.
    pub const ERROR_SHAPE: &str = "error-shape";
    /// A method the bundle does not declare for that direction.
    pub const UNKNOWN_METHOD: &str = "unknown-method";
    /// An answer whose id no request of the other side carried.
    pub const UNKNOWN_ID: &str = "unknown-id";
    /// A second answer to one request.
    pub const DUPLICATE_ANSWER: &str = "duplicate-answer";
    /// A request reusing the id of a request still waiting for its answer.
    pub const DUPLICATE_ID: &str = "duplicate-id";
    /// A message before the handshake allows it.
    pub const BEFORE_INITIALIZE: &str = "before-initialize";
    /// A request after `initialize` was answered but before the client sent `initialized`.
    pub const BEFORE_INITIALIZED: &str = "before-initialized";
    /// A second `initialize`.
    pub const REINITIALIZE: &str = "reinitialize";
    /// A notification the client opted out of.
    pub const OPTED_OUT: &str = "opted-out";
    /// An experimental method or field without the `experimentalApi` capability (or outside the
    /// surface being checked).
    pub const EXPERIMENTAL: &str = "experimental";
}

/// One violation of the contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// 1-based line of the transcript (or message number for a live check).
    pub line: usize,
    /// The session the message belongs to.
    pub session: String,
    /// Which way it went; `null` for a record whose direction could not be read.
    pub direction: Option<Dir>,
    /// The method concerned (for an answer, its request's method), if known.
    pub method: Option<String>,
    /// JSON pointer into the message (`""` for the whole message).
    pub pointer: String,
    /// Which rule (see [`rule`]).
    pub rule: &'static str,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dir = self.direction.map_or("?", Dir::as_str);
        let method = self.method.as_deref().unwrap_or("-");
        let pointer = if self.pointer.is_empty() {
            "(message)"
        } else {
            &self.pointer
        };
        write!(
            f,
            "line {} [{}] {dir} {method} {pointer}: {}: {}",
            self.line, self.session, self.rule, self.reason
        )
    }
}

/// The stable and experimental surfaces of one protocol version.
pub struct Contract {
    version: String,
    stable: SchemaSet,
    experimental: SchemaSet,
}

impl Contract {
    /// Reads the two bundles of a version (`json/` and `experimental/json/`
    /// `agentwire_app_server_protocol.schemas.json`). Properties that only the experimental
    /// bundle declares (at any depth) are `null`-only in the stable set, so using one is
    /// detected.
    pub fn from_bundles(stable: &str, experimental: &str) -> Result<Self, String> {
        let stable = SchemaSet::new(stable, Some(experimental))
            .map_err(|e| format!("stable bundle: {e}"))?;
        let experimental =
            SchemaSet::new(experimental, None).map_err(|e| format!("experimental bundle: {e}"))?;
        let version = stable.version().unwrap_or("unknown").to_owned();
        Ok(Self {
            version,
            stable,
            experimental,
        })
    }

    /// The bundles' `x-protocol-version`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// A checker for a new exchange.
    pub fn checker(&self, options: Options) -> Checker<'_> {
        Checker {
            contract: self,
            options,
            sessions: HashMap::new(),
            messages: 0,
        }
    }

    /// Checks a whole transcript (JSON Lines, see the module docs).
    pub fn check_transcript(&self, text: &str, options: Options) -> Report {
        let mut checker = self.checker(options);
        let mut violations = Vec::new();
        for (index, raw) in text.split('\n').enumerate() {
            let line = index + 1;
            if raw.trim().is_empty() {
                continue;
            }
            match read_record(raw) {
                Ok((session, dir, message)) => {
                    violations.extend(checker.check(line, &session, dir, &message));
                }
                Err(reason) => violations.push(Violation {
                    line,
                    session: String::new(),
                    direction: None,
                    method: None,
                    pointer: String::new(),
                    rule: rule::TRANSCRIPT,
                    reason,
                }),
            }
        }
        Report {
            protocol_version: self.version.clone(),
            surface: if options.experimental {
                "experimental"
            } else {
                "stable"
            },
            messages: checker.messages,
            sessions: checker.sessions.len(),
            ok: violations.is_empty(),
            violations,
        }
    }
}

/// How to check.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Check sessions that negotiated `experimentalApi` against the experimental surface;
    /// without it the stable surface is the contract for every session.
    pub experimental: bool,
}

/// The outcome of checking a transcript.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The version checked against.
    pub protocol_version: String,
    /// `stable` or `experimental`.
    pub surface: &'static str,
    /// Messages checked.
    pub messages: usize,
    /// Sessions seen.
    pub sessions: usize,
    /// `true` when there is no violation.
    pub ok: bool,
    /// Every violation, in transcript order.
    pub violations: Vec<Violation>,
}

impl Report {
    /// One line per violation and a summary line.
    pub fn to_text(&self, source: &str) -> String {
        let mut out = String::new();
        for v in &self.violations {
            out.push_str(&format!("{source}:{v}\n"));
        }
        out.push_str(&format!(
            "{source}: {} message(s) in {} session(s) checked against protocol {} ({} surface): {}\n",
            self.messages,
            self.sessions,
            self.protocol_version,
            self.surface,
            if self.ok {
                "OK".to_owned()
            } else {
                format!("{} violation(s)", self.violations.len())
            }
        ));
        out
    }
}

fn read_record(raw: &str) -> Result<(String, Dir, String), String> {
    let record: Value = serde_json::from_str(raw)
        .map_err(|e| format!("not a transcript record (not JSON: {e})"))?;
    let Some(object) = record.as_object() else {
        return Err("not a transcript record (not a JSON object)".into());
    };
    let session = match object.get("session") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err("transcript record: `session` must be a string".into()),
    };
    let dir = object
        .get("dir")
        .and_then(Value::as_str)
        .and_then(Dir::parse)
        .ok_or("transcript record: `dir` must be \"client->server\" or \"server->client\"")?;
    let line = object
        .get("line")
        .and_then(Value::as_str)
        .ok_or("transcript record: `line` must be a string (the raw message)")?;
    Ok((session, dir, line.to_owned()))
}

/// A request waiting for its answer.
#[derive(Debug, Clone)]
struct Pending {
    method: Option<String>,
    /// `initialize` only: the capabilities it asked for.
    negotiated: Option<Negotiated>,
}

#[derive(Debug, Clone, Default)]
struct Negotiated {
    experimental: bool,
    opted_out: HashSet<String>,
}

#[derive(Debug, Default)]
struct Session {
    /// An `initialize` was sent (answered or not).
    initialize_sent: bool,
    /// `initialize` was answered with a result: what it negotiated.
    initialized: Option<Negotiated>,
    /// The client sent `initialized`.
    initialized_notified: bool,
    /// Requests waiting, by (who sent them, id).
    pending: HashMap<(Dir, String), Pending>,
    /// Requests answered, by (who sent them, id): the answer's line.
    answered: HashMap<(Dir, String), usize>,
}

/// Checks the messages of one or more sessions, in order.
pub struct Checker<'c> {
    contract: &'c Contract,
    options: Options,
    sessions: HashMap<String, Session>,
    messages: usize,
}

/// The facts about one message the rules need.
struct Message<'a> {
    line: usize,
    session: &'a str,
    dir: Dir,
}

impl Checker<'_> {
    /// Checks one message (`raw`, the exact line) of `session` going `dir`; `line` is what
    /// violations report.
    pub fn check(&mut self, line: usize, session: &str, dir: Dir, raw: &str) -> Vec<Violation> {
        self.messages += 1;
        let mut out = Vec::new();
        let at = Message { line, session, dir };
        let value: Value = match serde_json::from_str(raw) {
            Ok(v) => v,
            Err(e) => {
                out.push(at.violation(None, "", rule::NOT_JSON, format!("not JSON: {e}")));
                return out;
            }
        };
        let Some(object) = value.as_object() else {
            out.push(at.violation(None, "", rule::NOT_JSONRPC, "not a JSON object".to_owned()));
            return out;
        };
        let id = object.get("id");
        match (
            object.get("method"),
            object.get("result"),
            object.get("error"),
        ) {
            (Some(Value::String(method)), None, None) => match id {
                Some(id) => self.request(&at, method, id, &value, &mut out),
                None => self.notification(&at, method, &value, &mut out),
            },
            (None, Some(_), None) | (None, None, Some(_)) => {
                self.answer(&at, id, object.contains_key("error"), &value, &mut out);
            }
            (Some(m), _, _) if !m.is_string() => out.push(at.violation(
                None,
                "/method",
                rule::NOT_JSONRPC,
                "`method` must be a string".to_owned(),
            )),
            _ => out.push(
                at.violation(
                    None,
                    "",
                    rule::NOT_JSONRPC,
                    "not a request (`method`, `id`), notification (`method`) or answer (`id` with \
                 exactly one of `result` and `error`)"
                        .to_owned(),
                ),
            ),
        }
        out
    }

    /// Treats `session` as past the handshake (with `experimental` negotiated or not), for a
    /// check that sees only part of an exchange.
    pub fn assume_initialized(&mut self, session: &str, experimental: bool) {
        let state = self.session(session);
        state.initialize_sent = true;
        state.initialized_notified = true;
        state.initialized = Some(Negotiated {
            experimental,
            opted_out: HashSet::new(),
        });
    }

    fn session(&mut self, name: &str) -> &mut Session {
        self.sessions.entry(name.to_owned()).or_default()
    }

    fn request(
        &mut self,
        at: &Message<'_>,
        method: &str,
        id: &Value,
        message: &Value,
        out: &mut Vec<Violation>,
    ) {
        let kind = match at.dir {
            Dir::ClientToServer => Kind::ClientRequest,
            Dir::ServerToClient => Kind::ServerRequest,
        };
        let key = (at.dir, id_key(id));
        let session = self.session(at.session);
        if session.pending.contains_key(&key) {
            out.push(at.violation(
                Some(method),
                "/id",
                rule::DUPLICATE_ID,
                format!("request id {} is already waiting for its answer", key.1),
            ));
        }
        let mut negotiated = None;
        if at.dir == Dir::ClientToServer && method == "initialize" {
            if session.initialize_sent {
                out.push(at.violation(
                    Some(method),
                    "",
                    rule::REINITIALIZE,
                    "a second `initialize` on one connection".to_owned(),
                ));
            }
            session.initialize_sent = true;
            negotiated = Some(negotiated_by(message));
        } else {
            self.handshake_allows(at, method, true, out);
        }
        self.session(at.session).pending.insert(
            key,
            Pending {
                method: Some(method.to_owned()),
                negotiated,
            },
        );
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            out.push(at.violation(
                Some(method),
                "/id",
                rule::SCHEMA,
                format!("a request id must be a string or an integer, not {id}"),
            ));
        }
        self.against_method(at, kind, method, message, false, out);
    }

    fn notification(
        &mut self,
        at: &Message<'_>,
        method: &str,
        message: &Value,
        out: &mut Vec<Violation>,
    ) {
        let kind = match at.dir {
            Dir::ClientToServer => Kind::ClientNotification,
            Dir::ServerToClient => Kind::ServerNotification,
        };
        if at.dir == Dir::ClientToServer && method == "initialized" {
            let session = self.session(at.session);
            if session.initialized.is_none() {
                out.push(at.violation(
                    Some(method),
                    "",
                    rule::BEFORE_INITIALIZE,
                    "`initialized` before `initialize` was answered".to_owned(),
                ));
            }
            session.initialized_notified = true;
        } else {
            self.handshake_allows(at, method, false, out);
        }
        if at.dir == Dir::ServerToClient {
            let opted_out = self
                .session(at.session)
                .initialized
                .as_ref()
                .is_some_and(|n| n.opted_out.contains(method));
            if opted_out {
                out.push(at.violation(
                    Some(method),
                    "/method",
                    rule::OPTED_OUT,
                    format!(
                        "the client opted out of `{method}` (capabilities.optOutNotificationMethods)"
                    ),
                ));
            }
        }
        self.against_method(at, kind, method, message, false, out);
    }

    /// The handshake rules for a message other than `initialize`/`initialized`.
    fn handshake_allows(
        &mut self,
        at: &Message<'_>,
        method: &str,
        is_request: bool,
        out: &mut Vec<Violation>,
    ) {
        let session = self.session(at.session);
        if session.initialized.is_none() {
            let who = match at.dir {
                Dir::ClientToServer => "the client",
                Dir::ServerToClient => "the server",
            };
            out.push(at.violation(
                Some(method),
                "",
                rule::BEFORE_INITIALIZE,
                format!("{who} sent `{method}` before `initialize` was answered"),
            ));
        } else if is_request && at.dir == Dir::ClientToServer && !session.initialized_notified {
            out.push(at.violation(
                Some(method),
                "",
                rule::BEFORE_INITIALIZED,
                format!("request `{method}` before the client sent `initialized`"),
            ));
        }
    }

    fn answer(
        &mut self,
        at: &Message<'_>,
        id: Option<&Value>,
        is_error: bool,
        message: &Value,
        out: &mut Vec<Violation>,
    ) {
        // Answers go the other way from their requests.
        let request_dir = match at.dir {
            Dir::ClientToServer => Dir::ServerToClient,
            Dir::ServerToClient => Dir::ClientToServer,
        };
        let id = match id {
            None | Some(Value::Null) if is_error => {
                // An error about a message that could not be read far enough to know its id.
                self.error_shape(at, None, message, out);
                return;
            }
            None => {
                out.push(at.violation(
                    None,
                    "",
                    rule::NOT_JSONRPC,
                    "an answer without `id`".to_owned(),
                ));
                return;
            }
            Some(id) => id,
        };
        let key = (request_dir, id_key(id));
        let session = self.session(at.session);
        let Some(pending) = session.pending.remove(&key) else {
            let (rule, reason) = match session.answered.get(&key) {
                Some(first) => (
                    rule::DUPLICATE_ANSWER,
                    format!("request {} was already answered on line {first}", key.1),
                ),
                None => (
                    rule::UNKNOWN_ID,
                    format!(
                        "answer to id {}, which no {} request carried",
                        key.1,
                        match request_dir {
                            Dir::ClientToServer => "client",
                            Dir::ServerToClient => "server",
                        }
                    ),
                ),
            };
            out.push(at.violation(None, "/id", rule, reason));
            if is_error {
                self.error_shape(at, None, message, out);
            }
            return;
        };
        session.answered.insert(key, at.line);
        if let (Some(negotiated), false) = (pending.negotiated, is_error) {
            session.initialized = Some(negotiated);
        }
        let method = pending.method.as_deref();
        if is_error {
            self.error_shape(at, method, message, out);
            return;
        }
        let Some(method) = method else {
            return;
        };
        let kind = match request_dir {
            Dir::ClientToServer => Kind::ClientRequest,
            Dir::ServerToClient => Kind::ServerRequest,
        };
        // An unknown method was reported with its request.
        if self.contract.experimental.method(kind, method).is_some() {
            self.against_method(at, kind, method, message, true, out);
        }
    }

    fn error_shape(
        &mut self,
        at: &Message<'_>,
        method: Option<&str>,
        message: &Value,
        out: &mut Vec<Violation>,
    ) {
        for issue in self.contract.stable.check("JSONRPCError", message) {
            out.push(at.violation(method, &issue.pointer, rule::ERROR_SHAPE, issue.reason));
        }
    }

    /// Checks `message` against `method`'s envelope (`response`: its success answer's), with
    /// the experimental gate.
    fn against_method(
        &mut self,
        at: &Message<'_>,
        kind: Kind,
        method: &str,
        message: &Value,
        response: bool,
        out: &mut Vec<Violation>,
    ) {
        let contract = self.contract;
        let capability = self
            .session(at.session)
            .initialized
            .as_ref()
            .is_some_and(|n| n.experimental);
        let allowed = capability && self.options.experimental;
        let not_allowed = |what: String| {
            if !capability {
                format!("{what} without the `experimentalApi` capability")
            } else {
                format!(
                    "{what}: checked against the stable surface (pass --experimental to check \
                     experimental sessions against the experimental one)"
                )
            }
        };
        let Some(declared) = contract.experimental.method(kind, method) else {
            if !response {
                out.push(at.violation(
                    Some(method),
                    "/method",
                    rule::UNKNOWN_METHOD,
                    format!(
                        "`{method}` is not a {} of protocol {}",
                        kind_name(kind),
                        contract.version
                    ),
                ));
            }
            return;
        };
        let definition = if response {
            declared.response.clone()
        } else {
            declared.envelope.clone()
        };
        let Some(definition) = definition else {
            return;
        };
        let stable_method = contract.stable.method(kind, method).is_some();
        if !stable_method {
            if !response && !allowed {
                out.push(at.violation(
                    Some(method),
                    "/method",
                    rule::EXPERIMENTAL,
                    not_allowed(format!("experimental method `{method}`")),
                ));
            }
            self.push_schema(
                at,
                method,
                &contract.experimental,
                &definition,
                message,
                out,
            );
            return;
        }
        let stable_issues = contract.stable.check(&definition, message);
        if stable_issues.is_empty() {
            return;
        }
        let experimental_issues = contract.experimental.check(&definition, message);
        if allowed {
            for issue in experimental_issues {
                out.push(at.violation(Some(method), &issue.pointer, rule::SCHEMA, issue.reason));
            }
        } else if experimental_issues.is_empty() {
            // Valid only with the experimental fields: the stable issues name them.
            for issue in stable_issues {
                out.push(at.violation(
                    Some(method),
                    &issue.pointer,
                    rule::EXPERIMENTAL,
                    not_allowed(format!("experimental field {}", issue.pointer)),
                ));
            }
        } else {
            for issue in stable_issues {
                out.push(at.violation(Some(method), &issue.pointer, rule::SCHEMA, issue.reason));
            }
        }
    }

    fn push_schema(
        &self,
        at: &Message<'_>,
        method: &str,
        set: &SchemaSet,
        definition: &str,
        message: &Value,
        out: &mut Vec<Violation>,
    ) {
        for issue in set.check(definition, message) {
            out.push(at.violation(Some(method), &issue.pointer, rule::SCHEMA, issue.reason));
        }
    }
}

impl Message<'_> {
    fn violation(
        &self,
        method: Option<&str>,
        pointer: &str,
        rule: &'static str,
        reason: String,
    ) -> Violation {
        Violation {
            line: self.line,
            session: self.session.to_owned(),
            direction: Some(self.dir),
            method: method.map(str::to_owned),
            pointer: pointer.to_owned(),
            rule,
            reason,
        }
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::ClientRequest => "client request",
        Kind::ClientNotification => "client notification",
        Kind::ServerRequest => "server request",
        Kind::ServerNotification => "server notification",
    }
}

/// JSON text keeps `1` and `"1"` apart, as JSON-RPC does.
fn id_key(id: &Value) -> String {
    id.to_string()
}

/// What an `initialize` request asks for.
fn negotiated_by(message: &Value) -> Negotiated {
    let capabilities = message.pointer("/params/capabilities");
    let experimental = capabilities
        .and_then(|c| c.get("experimentalApi"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let opted_out = capabilities
        .and_then(|c| c.get("optOutNotificationMethods"))
        .and_then(Value::as_array)
        .map(|methods| {
            methods
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Negotiated {
        experimental,
        opted_out,
    }
}

/// The JSON report.
pub fn report_json(report: &Report, transcript: &str) -> Value {
    let mut value = serde_json::to_value(report).unwrap_or(Value::Null);
    if let Some(object) = value.as_object_mut() {
        object.insert("transcript".into(), json!(transcript));
    }
    value
}
