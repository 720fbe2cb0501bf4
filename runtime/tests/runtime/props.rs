//! Property tests: arbitrary bytes, deep nesting, huge strings and mutated valid messages thrown
//! at the framing (`LineFramer`), validation (`Validators::check`) and dispatch
//! (`Server::handle_message`) layers.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{self, Initialize};
use agentwire_runtime::{
    Closed, Connection, FrameEvent, LineFramer, Outbound, PARAMS_SCHEMAS, Validators,
};
use agentwire_runtime::{RuntimeConfig, Server};
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

use crate::harness::home;
use crate::scripted::Scripted;

/// An answer may carry the offending input a few times over (in the message and in `data`), but
/// never more than this many times its size, plus [`SLACK`].
const AMPLIFICATION: usize = 4;
/// Bytes every answer may take regardless of its input.
const SLACK: usize = 4096;

/// Records what the server sends to one connection.
#[derive(Clone, Default)]
struct Recorder {
    sent: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Recorder {
    fn len(&self) -> usize {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn since(&self, start: usize) -> Vec<Vec<u8>> {
        self.sent.lock().unwrap_or_else(PoisonError::into_inner)[start..].to_vec()
    }
}

impl Outbound for Recorder {
    fn send(&self, message: Vec<u8>) -> Result<(), Closed> {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message);
        Ok(())
    }

    fn close(&self) {}
}

/// A server with an in-memory transport, on its own current-thread runtime.
struct Rig {
    runtime: tokio::runtime::Runtime,
    server: Server<Scripted>,
}

impl Rig {
    fn new(max_message_bytes: usize) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("build a tokio runtime");
        let mut config = RuntimeConfig::new(home());
        config.max_message_bytes = max_message_bytes;
        config.server_request_timeout = Duration::from_millis(50);
        config.shutdown_grace = Duration::from_secs(10);
        let server = Server::new(Scripted::default(), config, runtime.handle().clone());
        Self { runtime, server }
    }

    /// Opens a connection; initializes it when asked.
    fn open(&self, initialize: Option<bool>) -> (Arc<Connection>, Recorder) {
        let recorder = Recorder::default();
        let connection = self.server.hub().open(Box::new(recorder.clone()));
        if let Some(experimental) = initialize {
            let request = json!({
                "id": "init",
                "method": Initialize::NAME,
                "params": {
                    "clientInfo": { "name": "props", "version": "0" },
                    "capabilities": { "experimentalApi": experimental },
                },
            });
            let answers = self.deliver(&connection, &recorder, &bytes_of(&request));
            assert_eq!(answers.len(), 1);
            assert!(answers[0].get("result").is_some(), "{:?}", answers[0]);
        }
        (connection, recorder)
    }

    fn close(&self, connection: &Connection) {
        self.server.hub().close(connection.id());
        assert!(self.server.hub().is_empty(), "a connection leaked");
    }

    /// Waits until no request is in flight; fails if that takes suspiciously long (a request
    /// that never gives its slot back).
    fn settle(&self) {
        let started = Instant::now();
        self.runtime.block_on(self.server.drain());
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "requests still in flight"
        );
    }

    /// Hands one message to the server, lets every request finish, and returns what was sent.
    fn deliver(
        &self,
        connection: &Arc<Connection>,
        recorder: &Recorder,
        bytes: &[u8],
    ) -> Vec<Value> {
        let start = recorder.len();
        self.server.handle_message(connection, bytes);
        self.settle();
        decode_all(&recorder.since(start))
    }
}

fn bytes_of(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("a value encodes")
}

fn decode_all(sent: &[Vec<u8>]) -> Vec<Value> {
    sent.iter()
        .map(|bytes| {
            let value: Value = serde_json::from_slice(bytes).unwrap_or_else(|e| {
                panic!(
                    "sent bytes that are not JSON ({e}): {}",
                    String::from_utf8_lossy(bytes)
                )
            });
            assert!(value.is_object(), "sent a non-object: {value}");
            assert!(!bytes.contains(&b'\n'), "a message holds a raw newline");
            value
        })
        .collect()
}

/// What the server must answer to one message.
#[derive(Debug, PartialEq)]
enum Expect {
    /// Exactly one response, with this id.
    AnswerWith(Value),
    /// Exactly one error with `id: null` and this code.
    NullError(i64),
    /// No response (notifications, answers to server requests).
    Silence,
}

/// The expected outcome, worked out independently of the runtime's code.
fn expect(bytes: &[u8]) -> Expect {
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return Expect::NullError(-32700);
    };
    let Value::Object(object) = value else {
        return Expect::NullError(-32600);
    };
    let usable = |id: &Value| id.is_i64() || id.is_string();
    match (object.get("id"), object.get("method")) {
        (Some(id), Some(_)) if usable(id) => Expect::AnswerWith(id.clone()),
        (Some(id), None) if usable(id) => {
            if object.contains_key("result") != object.contains_key("error") {
                Expect::Silence
            } else {
                Expect::AnswerWith(id.clone())
            }
        }
        (None, Some(Value::String(_))) => Expect::Silence,
        _ => Expect::NullError(-32600),
    }
}

/// Checks what one message produced against [`expect`]; returns a description of the problem.
fn judge(input: &[u8], sent: &[Value]) -> Result<(), String> {
    let responses: Vec<&Value> = sent.iter().filter(|m| m.get("method").is_none()).collect();
    let expected = expect(input);
    let ok = match (&expected, responses.as_slice()) {
        (Expect::AnswerWith(id), [one]) => one.get("id") == Some(id),
        (Expect::NullError(code), [one]) => {
            one["id"].is_null() && one["error"]["code"] == json!(code)
        }
        (Expect::Silence, []) => true,
        _ => false,
    };
    for response in &responses {
        let has_result = response.get("result").is_some();
        let has_error = response.get("error").is_some();
        if has_result == has_error {
            return Err(format!(
                "a response needs exactly one of result/error: {response}"
            ));
        }
    }
    let size: usize = sent.iter().map(|m| m.to_string().len()).sum();
    if size > AMPLIFICATION * input.len() + SLACK {
        return Err(format!(
            "{size} bytes sent for an input of {} bytes",
            input.len()
        ));
    }
    if ok {
        Ok(())
    } else {
        Err(format!(
            "expected {expected:?}, got {responses:?} for {}",
            String::from_utf8_lossy(input)
        ))
    }
}

// ---- strategies ----------------------------------------------------------------------------

/// Valid messages of several kinds, the starting points of the mutations.
fn seeds() -> Vec<Value> {
    vec![
        json!({ "id": 1, "method": "initialize", "params": {
            "clientInfo": { "name": "c", "version": "1" },
            "capabilities": { "experimentalApi": true, "optOutNotificationMethods": ["warning"] },
        } }),
        json!({ "id": 2, "method": "thread/list", "params": { "cursor": "c", "limit": 5 } }),
        json!({ "id": "r", "method": "thread/read", "params": { "threadId": "t1", "includeTurns": true } }),
        json!({ "id": 4, "method": "thread/name/set", "params": { "threadId": "t1", "name": "n" } }),
        json!({ "id": 5, "method": "turn/start", "params": {
            "threadId": "t1", "input": [{ "type": "text", "text": "hi" }],
        } }),
        json!({ "id": 6, "method": "thread/start", "params": { "cwd": "/tmp", "ephemeral": true } }),
        json!({ "id": 7, "method": "config/read", "params": { "includeLayers": true } }),
        json!({ "id": 8, "method": "command/exec", "params": { "command": ["ls", "-l"] } }),
        json!({ "id": 9, "method": "collaborationMode/list", "params": {} }),
        json!({ "id": 10, "method": "account/rateLimits/read" }),
        json!({ "jsonrpc": "2.0", "method": "initialized" }),
        json!({ "id": 0, "result": { "decision": "accept" } }),
        json!({ "id": 1, "error": { "code": -1, "message": "no" } }),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "id",
            "method",
            "params",
            "result",
            "error",
            "jsonrpc",
            "threadId",
            "name",
            "clientInfo",
            "capabilities",
            "experimentalApi",
            "input",
            "type",
            "text",
            "",
        ])
        .prop_map(str::to_owned),
        any::<String>(),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::from),
        prop::sample::select(vec!["thread/list", "initialize", "t1", "text", "accept"])
            .prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    DropKey { node: usize, key: usize },
    RenameKey { node: usize, key: usize, to: String },
    Replace { node: usize, with: Value },
    Splice { at: usize, bytes: Vec<u8> },
    Truncate { at: usize },
    Repeat { at: usize, len: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(node, key)| Mutation::DropKey { node, key }),
        (any::<usize>(), any::<usize>(), key()).prop_map(|(node, key, to)| Mutation::RenameKey {
            node,
            key,
            to
        }),
        (any::<usize>(), json_value()).prop_map(|(node, with)| Mutation::Replace { node, with }),
        (any::<usize>(), vec(any::<u8>(), 0..8))
            .prop_map(|(at, bytes)| Mutation::Splice { at, bytes }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), 0usize..64).prop_map(|(at, len)| Mutation::Repeat { at, len }),
    ]
}

fn count_nodes(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        Value::Object(members) => members.values().map(count_nodes).sum(),
        _ => 0,
    }
}

/// Calls `f` on the `target`-th node in pre-order.
fn with_node(value: &mut Value, target: &mut usize, f: &mut dyn FnMut(&mut Value)) -> bool {
    if *target == 0 {
        f(value);
        return true;
    }
    *target -= 1;
    match value {
        Value::Array(items) => items.iter_mut().any(|v| with_node(v, target, f)),
        Value::Object(members) => members.values_mut().any(|v| with_node(v, target, f)),
        _ => false,
    }
}

fn apply(seed: &Value, mutations: &[Mutation]) -> Vec<u8> {
    let mut value = seed.clone();
    for m in mutations {
        let nodes = count_nodes(&value);
        match m {
            Mutation::DropKey { node, key } => {
                with_node(&mut value, &mut (node % nodes), &mut |v| {
                    if let Value::Object(members) = v
                        && !members.is_empty()
                    {
                        let name = members.keys().nth(key % members.len()).cloned();
                        if let Some(name) = name {
                            members.remove(&name);
                        }
                    }
                });
            }
            Mutation::RenameKey { node, key, to } => {
                with_node(&mut value, &mut (node % nodes), &mut |v| {
                    if let Value::Object(members) = v
                        && !members.is_empty()
                    {
                        let name = members.keys().nth(key % members.len()).cloned();
                        if let Some(moved) = name.and_then(|n| members.remove(&n)) {
                            members.insert(to.clone(), moved);
                        }
                    }
                });
            }
            Mutation::Replace { node, with } => {
                with_node(&mut value, &mut (node % nodes), &mut |v| *v = with.clone());
            }
            _ => {}
        }
    }
    let mut bytes = bytes_of(&value);
    for m in mutations {
        match m {
            Mutation::Splice { at, bytes: extra } => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, extra.iter().copied());
            }
            Mutation::Truncate { at } => bytes.truncate(at % (bytes.len() + 1)),
            Mutation::Repeat { at, len } => {
                let at = at % (bytes.len() + 1);
                let end = (at + len).min(bytes.len());
                let piece = bytes[at..end].to_vec();
                bytes.splice(at..at, piece);
            }
            _ => {}
        }
    }
    bytes
}

fn mutated_message() -> impl Strategy<Value = Vec<u8>> {
    let seeds = seeds();
    (0..seeds.len(), vec(mutation(), 0..4))
        .prop_map(move |(seed, mutations)| apply(&seeds[seed], &mutations))
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

// ---- framing -------------------------------------------------------------------------------

/// What a framer must produce for `input` with `limit`, from a plain split on newlines.
fn model_frames(input: &[u8], limit: usize) -> Vec<String> {
    let mut lines: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let mut out = Vec::new();
    for raw in lines {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.len() > limit {
            out.push(format!("<too large: {}>", raw.len()));
        } else if !line.iter().all(u8::is_ascii_whitespace) {
            out.push(format!("{line:?}"));
        }
    }
    out
}

fn run_framer(chunks: &[Vec<u8>], limit: usize) -> Result<Vec<String>, String> {
    let mut framer = LineFramer::new(limit);
    let mut out = Vec::new();
    let mut problem = None;
    let mut record = |event: FrameEvent<'_>| match event {
        FrameEvent::Message(line) => {
            if line.len() > limit || line.contains(&b'\n') {
                problem = Some(format!("bad message {line:?}"));
            }
            out.push(format!("{line:?}"));
        }
        FrameEvent::TooLarge { bytes } => out.push(format!("<too large: {bytes}>")),
    };
    for chunk in chunks {
        framer.push(chunk, &mut record);
        // A line of `limit` bytes may wait for its `\n` with the `\r` of a CRLF ending.
        if framer.buffered() > limit + 1 {
            return Err(format!("buffered {} > limit {limit}", framer.buffered()));
        }
    }
    framer.finish(&mut record);
    if framer.buffered() != 0 {
        return Err("bytes left after finish".to_owned());
    }
    match problem {
        Some(problem) => Err(problem),
        None => Ok(out),
    }
}

/// Bytes rich in newlines, carriage returns and blanks, so lines of every length occur.
fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
    vec(
        prop_oneof![
            4 => Just(b'a'),
            2 => Just(b'\n'),
            2 => Just(b'\r'),
            1 => Just(b' '),
            1 => any::<u8>(),
        ],
        0..160,
    )
}

#[test]
fn framing_is_bounded_and_independent_of_chunking() {
    let strategy = (line_bytes(), vec(1usize..40, 0..12), 1usize..24);
    runner(256)
        .run(&strategy, |(input, cuts, limit)| {
            let expected = model_frames(&input, limit);
            // Cut the input where `cuts` says, then byte by byte, then whole.
            let mut chunks = Vec::new();
            let mut rest = input.as_slice();
            for cut in cuts {
                let (head, tail) = rest.split_at(cut.min(rest.len()));
                chunks.push(head.to_vec());
                rest = tail;
            }
            chunks.push(rest.to_vec());
            let bytewise: Vec<Vec<u8>> = input.iter().map(|b| vec![*b]).collect();
            for split in [chunks, bytewise, vec![input.clone()]] {
                let got = run_framer(&split, limit).map_err(TestCaseError::fail)?;
                prop_assert_eq!(&got, &expected, "chunks {:?}", split);
            }
            Ok(())
        })
        .expect("framing property");
}

#[test]
fn framing_survives_arbitrary_bytes() {
    let strategy = (vec(vec(any::<u8>(), 0..300), 0..8), 1usize..512);
    runner(128)
        .run(&strategy, |(chunks, limit)| {
            run_framer(&chunks, limit).map_err(TestCaseError::fail)?;
            Ok(())
        })
        .expect("framing property");
}

// ---- validation ----------------------------------------------------------------------------

fn check_validation(
    validators: &Validators,
    method: &str,
    params: Option<&Value>,
) -> Result<(), String> {
    let first = validators.check(method, params);
    if validators.check(method, params) != first {
        return Err("validation is not deterministic".to_owned());
    }
    let Err(rejected) = first else { return Ok(()) };
    if rejected.issues.is_empty() || rejected.issues.len() > 16 {
        return Err(format!("{} issues", rejected.issues.len()));
    }
    for issue in &rejected.issues {
        let resolves = match params {
            Some(params) => params.pointer(&issue.pointer).is_some(),
            None => issue.pointer.is_empty(),
        };
        if !resolves {
            return Err(format!("pointer {:?} is not in the params", issue.pointer));
        }
    }
    let data = rejected.to_data(method);
    if data["method"] != json!(method) || !data["errors"].is_array() {
        return Err(format!("bad data {data}"));
    }
    Ok(())
}

#[test]
fn validation_of_arbitrary_params_never_panics_and_points_into_them() {
    let validators = Validators::new();
    let names: Vec<&str> = PARAMS_SCHEMAS.iter().map(|(name, _, _)| *name).collect();
    let strategy = (prop::sample::select(names), prop::option::of(json_value()));
    runner(256)
        .run(&strategy, |(method, params)| {
            check_validation(&validators, method, params.as_ref()).map_err(TestCaseError::fail)
        })
        .expect("validation property");
}

#[test]
fn validation_of_mutated_params_never_panics_and_points_into_them() {
    let validators = Validators::new();
    runner(256)
        .run(&mutated_message(), |bytes| {
            let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(&bytes) else {
                return Ok(());
            };
            let Some(Value::String(method)) = message.remove("method") else {
                return Ok(());
            };
            let params = message.remove("params");
            check_validation(&validators, &method, params.as_ref()).map_err(TestCaseError::fail)
        })
        .expect("validation property");
}

#[test]
fn every_seed_is_valid() {
    let validators = Validators::new();
    for seed in seeds() {
        if let Some(method) = seed["method"].as_str() {
            assert!(methods::find(method).is_some(), "{method}");
            assert_eq!(
                validators.check(method, seed.get("params")),
                Ok(()),
                "{seed}"
            );
        }
    }
}

// ---- dispatch ------------------------------------------------------------------------------

#[test]
fn dispatch_answers_every_mutated_message_correctly() {
    let rig = Rig::new(64 * 1024);
    let strategy = (
        prop::option::of(any::<bool>()),
        vec(mutated_message(), 1..4),
    );
    runner(192)
        .run(&strategy, |(initialize, messages)| {
            let (connection, recorder) = rig.open(initialize);
            for message in &messages {
                let sent = rig.deliver(&connection, &recorder, message);
                judge(message, &sent).map_err(TestCaseError::fail)?;
            }
            rig.close(&connection);
            Ok(())
        })
        .expect("dispatch property");
}

#[test]
fn dispatch_survives_arbitrary_framed_bytes() {
    const LIMIT: usize = 512;
    let rig = Rig::new(LIMIT);
    let strategy = (
        prop::option::of(any::<bool>()),
        vec(
            prop_oneof![
                vec(any::<u8>(), 0..200),
                mutated_message().prop_map(|mut m| {
                    m.push(b'\n');
                    m
                }),
            ],
            0..6,
        ),
    );
    runner(128)
        .run(&strategy, |(initialize, chunks)| {
            let (connection, recorder) = rig.open(initialize);
            let mut framer = LineFramer::new(LIMIT);
            let mut problems = Vec::new();
            let mut handle = |event: FrameEvent<'_>| match event {
                FrameEvent::Message(line) => {
                    let sent = rig.deliver(&connection, &recorder, line);
                    if let Err(problem) = judge(line, &sent) {
                        problems.push(problem);
                    }
                }
                FrameEvent::TooLarge { bytes } => {
                    let start = recorder.len();
                    rig.server.refuse_oversized(&connection, bytes);
                    let sent = decode_all(&recorder.since(start));
                    if sent.len() != 1 || !sent[0]["id"].is_null() {
                        problems.push(format!("oversized line answered {sent:?}"));
                    }
                }
            };
            for chunk in &chunks {
                framer.push(chunk, &mut handle);
            }
            framer.finish(&mut handle);
            rig.close(&connection);
            prop_assert!(problems.is_empty(), "{:?}", problems);
            Ok(())
        })
        .expect("dispatch property");
}

#[test]
fn deep_nesting_is_refused_without_harm() {
    let rig = Rig::new(1 << 20);
    let (connection, recorder) = rig.open(Some(true));
    let depth = 10_000;
    let arrays = "[".repeat(depth);
    let closed = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
    let in_params = format!(
        r#"{{"id":1,"method":"thread/read","params":{{"threadId":{}}}}}"#,
        closed
    );
    // As deep as the parser allows, in a place the schema checks.
    let allowed = 120;
    let deep_ok = format!(
        r#"{{"id":2,"method":"thread/read","params":{{"threadId":{}"x"{}}}}}"#,
        "[".repeat(allowed),
        "]".repeat(allowed)
    );
    for input in [arrays, closed, objects, in_params, deep_ok] {
        let sent = rig.deliver(&connection, &recorder, input.as_bytes());
        judge(input.as_bytes(), &sent).expect("deep input answered correctly");
    }
    let sent = rig.deliver(&connection, &recorder, &recorder_probe());
    assert_eq!(sent.len(), 1);
    assert!(sent[0].get("result").is_some(), "{sent:?}");
    rig.close(&connection);
}

fn recorder_probe() -> Vec<u8> {
    bytes_of(&json!({ "id": "probe", "method": "thread/list", "params": {} }))
}

#[test]
fn huge_strings_are_answered_in_bounded_size() {
    let rig = Rig::new(8 << 20);
    let strategy = (1usize..(2 << 20), 0usize..7);
    runner(14)
        .run(&strategy, |(size, place)| {
            let (connection, recorder) = rig.open(Some(false));
            let huge = "\u{e9}x\"\\\n".repeat(size / 8 + 1);
            let message = match place {
                0 => json!({ "id": 1, "method": huge }),
                1 => json!({ "id": huge, "method": "thread/list", "params": {} }),
                2 => json!({ "id": 1, "method": "thread/read", "params": { "threadId": huge } }),
                3 => json!({ "id": 1, "method": "thread/list", "params": { "cursor": [huge] } }),
                4 => json!({ "id": 1, "method": "turn/start", "params": { "threadId": "t", "input": [{ "type": "text", "text": 1, "x": huge }] } }),
                5 => json!({ "id": 1, "method": "thread/list", "params": { huge.clone(): huge } }),
                _ => json!({ "method": huge, "params": [huge] }),
            };
            let bytes = bytes_of(&message);
            let sent = rig.deliver(&connection, &recorder, &bytes);
            judge(&bytes, &sent).map_err(TestCaseError::fail)?;
            rig.close(&connection);
            Ok(())
        })
        .expect("huge strings property");
}

#[test]
fn many_cases_leave_nothing_behind() {
    // The same inputs over many connections: every connection is forgotten, every in-flight
    // slot given back, and each round sends exactly as many bytes as the first.
    let rig = Rig::new(64 * 1024);
    let inputs: Vec<Vec<u8>> = seeds().iter().map(bytes_of).collect();
    let mut first_round = None;
    for _ in 0..200 {
        let (connection, recorder) = rig.open(Some(true));
        for input in &inputs {
            rig.deliver(&connection, &recorder, input);
        }
        let bytes: usize = recorder.since(0).iter().map(Vec::len).sum();
        rig.close(&connection);
        // Only the handler's call counter in `thread/read` answers grows (a few digits).
        let first = *first_round.get_or_insert(bytes);
        assert!((first..first + 16).contains(&bytes), "{first} then {bytes}");
    }
    assert!(rig.server.hub().is_empty());
}
