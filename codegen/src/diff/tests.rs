//! Tests of the classifier, on small hand-made bundles in the documented format and on a
//! realistic fixture (`fixtures/realistic_bundle.json`). This file holds the helpers that build
//! bundles; the tests are in the submodules.

mod errors;
mod fields;
mod methods;
mod refs;
mod report;
mod types;

use serde_json::{Map, Value, json};

use super::{DiffError, DiffReport, Rule, Severity, diff_bundles};

use Severity::{Breaking as B, Compatible as C};

const REALISTIC: &str = include_str!("fixtures/realistic_bundle.json");

/// The method every single-method bundle declares.
const METHOD: &str = "test/run";

/// A method of a hand-made bundle.
#[derive(Clone)]
struct MethodSpec {
    name: &'static str,
    direction: &'static str,
    experimental: bool,
    params: Option<Value>,
    params_required: bool,
    result: Option<Value>,
}

impl MethodSpec {
    /// A method with object params and, for requests, an object result.
    fn new(name: &'static str, direction: &'static str) -> MethodSpec {
        MethodSpec {
            name,
            direction,
            experimental: false,
            params: Some(json!({ "type": "object" })),
            params_required: true,
            result: direction
                .ends_with("Request")
                .then(|| json!({ "type": "object" })),
        }
    }

    fn params(mut self, schema: Value) -> MethodSpec {
        self.params = Some(schema);
        self
    }

    fn no_params(mut self) -> MethodSpec {
        self.params = None;
        self
    }

    fn optional_params(mut self) -> MethodSpec {
        self.params_required = false;
        self
    }

    fn result(mut self, schema: Value) -> MethodSpec {
        self.result = Some(schema);
        self
    }

    fn experimental(mut self) -> MethodSpec {
        self.experimental = true;
        self
    }
}

/// `thread/start` -> `ThreadStart`.
fn marker(method: &str) -> String {
    method
        .split('/')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

/// A bundle in the documented format: `types` (an object of definitions) plus one envelope (two
/// for requests) per method.
fn bundle(version: &str, types: Value, methods: &[MethodSpec]) -> Value {
    let mut definitions: Map<String, Value> = types.as_object().cloned().unwrap_or_default();
    definitions.insert(
        "RequestId".to_owned(),
        json!({ "anyOf": [{ "type": "string" }, { "type": "integer", "format": "int64" }] }),
    );
    for method in methods {
        let mut name_base = marker(method.name);
        let is_request = method.direction.ends_with("Request");
        let mut properties = Map::new();
        let mut required = Vec::new();
        if is_request {
            properties.insert(
                "id".to_owned(),
                json!({ "$ref": "#/definitions/RequestId" }),
            );
            required.push("id");
        }
        properties.insert(
            "method".to_owned(),
            json!({ "type": "string", "const": method.name }),
        );
        required.push("method");
        if let Some(params) = &method.params {
            properties.insert("params".to_owned(), params.clone());
            if method.params_required {
                required.push("params");
            }
        }
        let kind = if is_request {
            "Request"
        } else {
            "Notification"
        };
        if definitions.contains_key(&format!("{name_base}{kind}Envelope")) {
            // The same method in another direction.
            name_base.push_str(&marker(method.direction));
        }
        let name = format!("{name_base}{kind}Envelope");
        definitions.insert(
            name,
            json!({
                "x-method": method.name,
                "x-direction": method.direction,
                "x-experimental": method.experimental,
                "x-since": "0.1.0",
                "type": "object",
                "properties": properties,
                "required": required,
            }),
        );
        if let (true, Some(result)) = (is_request, &method.result) {
            definitions.insert(
                format!("{name_base}ResponseEnvelope"),
                json!({
                    "x-method": method.name,
                    "x-direction": method.direction,
                    "x-experimental": method.experimental,
                    "x-since": "0.1.0",
                    "type": "object",
                    "properties": {
                        "id": { "$ref": "#/definitions/RequestId" },
                        "result": result,
                    },
                    "required": ["id", "result"],
                }),
            );
        }
    }
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "x-protocol-version": version,
        "x-experimental-surface": false,
        "definitions": definitions,
    })
}

/// Where the compared data sits.
#[derive(Debug, Clone, Copy)]
enum Pos {
    /// Params of a client request: the client sends them.
    Input,
    /// Params of a server notification: the server sends them.
    Output,
}

/// A bundle whose one method `test/run` has the params `#/definitions/TestParams`, where
/// `types` holds `TestParams` and whatever it refers to.
fn params_bundle(pos: Pos, version: &str, types: Value) -> Value {
    let direction = match pos {
        Pos::Input => "clientRequest",
        Pos::Output => "serverNotification",
    };
    let method =
        MethodSpec::new(METHOD, direction).params(json!({ "$ref": "#/definitions/TestParams" }));
    bundle(version, types, &[method])
}

/// An object schema.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// Diffs two bundles that must both be valid.
fn diff(old: &Value, new: &Value) -> DiffReport {
    match diff_bundles(old, new) {
        Ok(report) => report,
        Err(error) => panic!("diff failed: {error}"),
    }
}

/// Diffs `TestParams` = `old` against `TestParams` = `new` at `pos`.
fn diff_params(pos: Pos, old: Value, new: Value) -> DiffReport {
    diff(
        &params_bundle(pos, "0.1.0", json!({ "TestParams": old })),
        &params_bundle(pos, "0.2.0", json!({ "TestParams": new })),
    )
}

/// Diffs a params object with the single member `x` of schema `old` against one with `new`
/// (`x` optional on both sides).
fn diff_member(pos: Pos, old: Value, new: Value) -> DiffReport {
    diff_params(
        pos,
        object(json!({ "x": old }), &[]),
        object(json!({ "x": new }), &[]),
    )
}

/// Asserts that the report holds exactly these (severity, rule, location) triples, in order.
#[track_caller]
fn expect(report: &DiffReport, expected: &[(Severity, Rule, &str)]) {
    let actual: Vec<(Severity, Rule, &str)> = report
        .changes
        .iter()
        .map(|c| (c.severity, c.rule, c.location.as_str()))
        .collect();
    assert_eq!(actual, expected, "report was:\n{report}");
}

/// Asserts that the report holds this (severity, rule, location) triple.
#[track_caller]
fn expect_some(report: &DiffReport, severity: Severity, rule: Rule, location: &str) {
    assert!(
        report
            .changes
            .iter()
            .any(|c| c.severity == severity && c.rule == rule && c.location == location),
        "no {severity} {rule} at {location} in:\n{report}"
    );
}

fn realistic() -> Value {
    match serde_json::from_str(REALISTIC) {
        Ok(value) => value,
        Err(error) => panic!("the fixture is not JSON: {error}"),
    }
}

/// Applies `f` to the member at `pointer`, which must exist.
#[track_caller]
fn edit(bundle: &mut Value, pointer: &str, f: impl FnOnce(&mut Value)) {
    match bundle.pointer_mut(pointer) {
        Some(value) => f(value),
        None => panic!("no member at {pointer}"),
    }
}

/// Removes the member `key` of the object at `pointer`.
#[track_caller]
fn remove(bundle: &mut Value, pointer: &str, key: &str) {
    edit(bundle, pointer, |value| {
        let removed = value.as_object_mut().and_then(|map| map.remove(key));
        assert!(removed.is_some(), "no member {key} at {pointer}");
    });
}

/// Appends `item` to the array at `pointer`.
#[track_caller]
fn push(bundle: &mut Value, pointer: &str, item: Value) {
    edit(bundle, pointer, |value| match value.as_array_mut() {
        Some(items) => items.push(item),
        None => panic!("no array at {pointer}"),
    });
}

/// Removes `item` from the array at `pointer`.
#[track_caller]
fn pull(bundle: &mut Value, pointer: &str, item: &Value) {
    edit(bundle, pointer, |value| match value.as_array_mut() {
        Some(items) => {
            let before = items.len();
            items.retain(|i| i != item);
            assert_eq!(items.len() + 1, before, "{item} not at {pointer}");
        }
        None => panic!("no array at {pointer}"),
    });
}

const P: &str = "test/run params";
const PX: &str = "test/run params /x";

/// A variant of an internally tagged union (`type: {const: tag}`) with a string `text`.
fn tagged(tag: &str) -> Value {
    object(
        json!({ "type": { "type": "string", "const": tag }, "text": { "type": "string" } }),
        &["type", "text"],
    )
}

fn diff_error(old: &Value, new: &Value) -> DiffError {
    match diff_bundles(old, new) {
        Ok(report) => panic!("expected an error, got:\n{report}"),
        Err(error) => error,
    }
}

fn valid() -> Value {
    params_bundle(
        Pos::Input,
        "0.1.0",
        json!({ "TestParams": object(json!({}), &[]) }),
    )
}

/// A bundle whose `TestParams` has the member `x` of schema `x`.
fn with_member(x: Value) -> Value {
    params_bundle(
        Pos::Input,
        "0.2.0",
        json!({ "TestParams": object(json!({ "x": x }), &[]) }),
    )
}
