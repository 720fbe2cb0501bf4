//! Reads the reference server's transcripts through the types typify generated from the bundle.
//!
//! Every JSON line whose method (for a response: the method of the request it answers, in the
//! same session) is declared in the bundle goes through the generated types: requests and
//! notifications through their `…Envelope` type and through the union of their direction
//! (`ClientRequest`, `ServerNotification`, …), successful responses through the method's
//! `…ResponseEnvelope`, error responses through `JSONRPCError`. Requests the reference server
//! rejected with `Invalid request` (-32600) must not deserialize; everything else must.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use agentwire_typify_roundtrip::{self as generated, CheckError, MethodEntry};
use serde_json::Value;

const TRANSCRIPTS: &[&str] = &["codex-0.171.0-stdio.jsonl", "codex-0.171.0-turn.jsonl"];

/// The fewest lines the transcripts must put through the generated types.
const MIN_CHECKED: usize = 20;

/// The most definitions typify may fail on before the bundle counts as unusable for it.
const MAX_SKIPPED: usize = 5;

fn transcript_dir() -> PathBuf {
    agentwire_reference_material::file("transcripts")
}

/// One line of a transcript file.
struct Record {
    file: &'static str,
    /// 1-based line number in the transcript file.
    line_no: usize,
    session: String,
    /// `client->server` or `server->client`.
    dir: String,
    /// The exact wire bytes.
    line: String,
    /// The wire line parsed, when it is a JSON object.
    message: Option<serde_json::Map<String, Value>>,
}

impl Record {
    fn sender(&self) -> &'static str {
        if self.dir == "client->server" {
            "client"
        } else {
            "server"
        }
    }
    fn get(&self, key: &str) -> Option<&Value> {
        self.message.as_ref().and_then(|m| m.get(key))
    }
    fn where_(&self) -> String {
        format!(
            "{}:{} (session {}, {})",
            self.file, self.line_no, self.session, self.dir
        )
    }
}

fn read_transcripts() -> Vec<Record> {
    let mut records = Vec::new();
    for file in TRANSCRIPTS {
        let path = transcript_dir().join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read transcript {}: {e}", path.display()));
        for (i, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let outer: Value = serde_json::from_str(raw)
                .unwrap_or_else(|e| panic!("{file}:{}: not a transcript record: {e}", i + 1));
            let field = |key: &str| {
                outer
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| {
                        panic!("{file}:{}: transcript record without `{key}`", i + 1)
                    })
                    .to_string()
            };
            let line = field("line");
            let message = match serde_json::from_str::<Value>(&line) {
                Ok(Value::Object(map)) => Some(map),
                _ => None,
            };
            records.push(Record {
                file,
                line_no: i + 1,
                session: field("session"),
                dir: field("dir"),
                line,
                message,
            });
        }
    }
    records
}

/// How a message line should be checked.
enum Check {
    /// A request or notification of a declared method.
    Message {
        method: &'static MethodEntry,
        must_parse: bool,
    },
    /// A successful response to a request of a declared method.
    Response { method: &'static MethodEntry },
    /// An error response to a request of a declared method.
    ErrorResponse { method: &'static MethodEntry },
}

/// Whether an error answer says the request itself was malformed.
fn is_invalid_request(error: &Value) -> bool {
    error.get("code").and_then(Value::as_i64) == Some(-32600)
        && error
            .get("message")
            .and_then(Value::as_str)
            .is_some_and(|m| m.starts_with("Invalid request"))
}

/// Pairs responses with requests (same file, session and id, opposite direction) and decides
/// what to check for every line.
fn plan(records: &[Record]) -> (Vec<(usize, Check)>, Stats) {
    let mut stats = Stats::default();
    // (file, session, sender, id) → index of the latest request with that id.
    let mut pending: HashMap<(&str, &str, &str, String), usize> = HashMap::new();
    let mut answered_invalid: HashSet<usize> = HashSet::new();
    let mut answer_of: HashMap<usize, usize> = HashMap::new();

    for (idx, r) in records.iter().enumerate() {
        let Some(_) = r.message else { continue };
        let id = r.get("id").map(Value::to_string);
        match (r.get("method"), id) {
            (Some(_), Some(id)) => {
                pending.insert((r.file, &r.session, r.sender(), id), idx);
            }
            (None, Some(id)) => {
                let requester = if r.sender() == "client" {
                    "server"
                } else {
                    "client"
                };
                if let Some(&request) = pending.get(&(r.file, r.session.as_str(), requester, id)) {
                    answer_of.insert(idx, request);
                    if r.get("error").is_some_and(is_invalid_request) {
                        answered_invalid.insert(request);
                    }
                }
            }
            _ => {}
        }
    }

    let mut plan = Vec::new();
    for (idx, r) in records.iter().enumerate() {
        if r.message.is_none() {
            stats.not_json += 1;
            continue;
        }
        let method_of = |record: &Record| {
            let name = record.get("method")?.as_str()?;
            let kind = if record.get("id").is_some() {
                "Request"
            } else {
                "Notification"
            };
            generated::find_method(&format!("{}{kind}", record.sender()), name)
        };
        if r.get("method").is_some() {
            match method_of(r) {
                Some(method) => plan.push((
                    idx,
                    Check::Message {
                        method,
                        must_parse: !answered_invalid.contains(&idx),
                    },
                )),
                None => stats.undeclared += 1,
            }
        } else if let Some(&request) = answer_of.get(&idx) {
            match method_of(&records[request]) {
                Some(method) if r.get("result").is_some() => {
                    plan.push((idx, Check::Response { method }))
                }
                Some(method) if r.get("error").is_some() => {
                    plan.push((idx, Check::ErrorResponse { method }))
                }
                Some(_) => stats.other += 1,
                None => stats.undeclared += 1,
            }
        } else {
            stats.other += 1;
        }
    }
    (plan, stats)
}

#[derive(Default, Debug)]
struct Stats {
    not_json: usize,
    undeclared: usize,
    other: usize,
}

/// Runs one line through one definition's generated type; returns a failure description.
fn check_one(r: &Record, method: &str, definition: &str, must_parse: bool) -> Option<String> {
    let Some(result) = generated::check_definition(definition, &r.line) else {
        return Some(format!(
            "{}: method {method}: the bundle has no definition `{definition}`",
            r.where_()
        ));
    };
    match (result, must_parse) {
        (Ok(json), true) => {
            // An untagged union can accept a message under the wrong variant: the serialized
            // value must still carry the message's own method and id.
            for key in ["method", "id"] {
                if r.get(key) != json.get(key) {
                    return Some(format!(
                        "{}: method {method}: `{definition}` read `{key}` as {:?}, the line has {:?}",
                        r.where_(),
                        json.get(key),
                        r.get(key)
                    ));
                }
            }
            None
        }
        (Err(e), true) => Some(format!(
            "{}: method {method}: `{definition}` {e}",
            r.where_()
        )),
        (Ok(_), false) => Some(format!(
            "{}: method {method}: `{definition}` accepted a line the reference server rejected as \
             `Invalid request`: {}",
            r.where_(),
            r.line
        )),
        (Err(CheckError::Parse(_)), false) => None,
        (Err(e), false) => Some(format!(
            "{}: method {method}: `{definition}` {e}",
            r.where_()
        )),
    }
}

#[test]
fn transcripts_go_through_the_generated_types() {
    let records = read_transcripts();
    let (plan, stats) = plan(&records);

    let mut failures = Vec::new();
    let mut checked = 0;
    let mut rejected = 0;
    let mut methods_seen = BTreeSet::new();
    let mut definitions_used = BTreeSet::new();
    for (idx, check) in &plan {
        let r = &records[*idx];
        let mut definitions = Vec::new();
        let (method, must_parse) = match check {
            Check::Message { method, must_parse } => {
                definitions.push(method.envelope);
                definitions.extend(generated::union_for(method.direction));
                (method, *must_parse)
            }
            Check::Response { method } => match method.response_envelope {
                Some(envelope) => {
                    definitions.push(envelope);
                    (method, true)
                }
                None => {
                    failures.push(format!(
                        "{}: method {}: answered, but the bundle has no response envelope",
                        r.where_(),
                        method.method
                    ));
                    continue;
                }
            },
            Check::ErrorResponse { method } => {
                definitions.push("JSONRPCError");
                (method, true)
            }
        };
        if !method.skipped_reached.is_empty() {
            failures.push(format!(
                "{}: method {}: typify could not convert {:?}, which its envelopes reference",
                r.where_(),
                method.method,
                method.skipped_reached
            ));
        }
        checked += 1;
        if !must_parse {
            rejected += 1;
        }
        methods_seen.insert(method.method);
        for definition in definitions {
            definitions_used.insert(definition);
            failures.extend(check_one(r, method.method, definition, must_parse));
        }
    }

    println!(
        "bundle {}: {} methods; {checked} lines checked ({rejected} must be rejected) over {} definitions, \
         methods {:?}; skipped {} non-JSON lines, {} lines of undeclared methods, {} other lines",
        generated::BUNDLE_PATH,
        generated::METHODS.len(),
        definitions_used.len(),
        methods_seen,
        stats.not_json,
        stats.undeclared,
        stats.other,
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} checked lines failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        checked >= MIN_CHECKED,
        "only {checked} lines were checked, expected at least {MIN_CHECKED}"
    );
    assert!(
        rejected > 0,
        "no line the reference server rejected as invalid was checked"
    );
}

#[test]
fn typify_converts_almost_every_definition() {
    println!(
        "bundle {} (protocol {:?}): {} methods; build.rs rewrote {} `const` strings as one-value \
         enums and moved object members into the `oneOf` branches of {:?}",
        generated::BUNDLE_PATH,
        generated::PROTOCOL_VERSION,
        generated::METHODS.len(),
        generated::CONSTS_REWRITTEN,
        generated::ONE_OF_DISTRIBUTED,
    );
    let skipped: Vec<&str> = generated::SKIPPED.iter().map(|(name, _)| *name).collect();
    assert!(
        skipped.len() <= MAX_SKIPPED,
        "typify could not convert {} definitions (at most {MAX_SKIPPED} allowed): {:#?}",
        skipped.len(),
        generated::SKIPPED
    );
    // A type without values silently rejects every message that contains one.
    assert!(
        generated::UNINHABITED.is_empty(),
        "typify generated types that can hold no value (empty enums): {:?}",
        generated::UNINHABITED
    );
    // The envelope unions and the error answer must be real types, not opaque stand-ins.
    for definition in ["ClientRequest", "ServerNotification", "JSONRPCError"] {
        assert!(
            generated::RUST_NAMES.iter().any(|(d, _)| *d == definition),
            "the bundle has no `{definition}`, or typify generated no type for it"
        );
        assert!(
            !skipped.contains(&definition),
            "typify could not convert `{definition}`"
        );
    }
    assert!(
        !generated::METHODS.is_empty(),
        "the bundle declares no methods (no definition has `x-method`)"
    );
    for method in generated::METHODS {
        for envelope in std::iter::once(method.envelope).chain(method.response_envelope) {
            assert!(
                generated::RUST_NAMES.iter().any(|(d, _)| *d == envelope),
                "no generated type for `{envelope}` ({})",
                method.method
            );
        }
        if method.is_request() {
            assert!(
                method.response_envelope.is_some(),
                "request `{}` has no response envelope",
                method.method
            );
        }
    }
}
