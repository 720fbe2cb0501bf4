//! Tests of the classifier, on small hand-made bundles in the documented format and on a
//! realistic fixture (`fixtures/realistic_bundle.json`).

use serde_json::{Map, Value, json};

use super::{DiffError, DiffReport, Rule, Severity, diff_bundles};

use Severity::{Breaking as B, Compatible as C};

const REALISTIC: &str = include_str!("fixtures/realistic_bundle.json");

/// The method every single-method bundle declares.
const METHOD: &str = "test/run";

// ---------------------------------------------------------------------------------------------
// Building bundles
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Methods
// ---------------------------------------------------------------------------------------------

#[test]
fn method_removed_is_breaking() {
    let old = bundle(
        "0.1.0",
        json!({}),
        &[
            MethodSpec::new("a/one", "clientRequest"),
            MethodSpec::new("a/two", "serverNotification"),
        ],
    );
    let new = bundle(
        "0.2.0",
        json!({}),
        &[MethodSpec::new("a/one", "clientRequest")],
    );
    let report = diff(&old, &new);
    expect(&report, &[(B, Rule::MethodRemoved, "a/two")]);
    let change = &report.changes[0];
    assert_eq!(change.method.as_deref(), Some("a/two"));
    assert_eq!(change.detail, "server notification removed");
}

#[test]
fn method_added_is_compatible() {
    let old = bundle(
        "0.1.0",
        json!({}),
        &[MethodSpec::new("a/one", "clientRequest")],
    );
    let new = bundle(
        "0.2.0",
        json!({}),
        &[
            MethodSpec::new("a/one", "clientRequest"),
            MethodSpec::new("a/two", "serverRequest"),
        ],
    );
    expect(&diff(&old, &new), &[(C, Rule::MethodAdded, "a/two")]);
}

#[test]
fn method_made_experimental_is_breaking() {
    let old = bundle(
        "0.1.0",
        json!({}),
        &[MethodSpec::new(METHOD, "clientRequest")],
    );
    let new = bundle(
        "0.2.0",
        json!({}),
        &[MethodSpec::new(METHOD, "clientRequest").experimental()],
    );
    expect(
        &diff(&old, &new),
        &[(B, Rule::MethodMadeExperimental, METHOD)],
    );
}

#[test]
fn method_made_stable_is_compatible() {
    let old = bundle(
        "0.1.0",
        json!({}),
        &[MethodSpec::new(METHOD, "clientRequest").experimental()],
    );
    let new = bundle(
        "0.2.0",
        json!({}),
        &[MethodSpec::new(METHOD, "clientRequest")],
    );
    expect(&diff(&old, &new), &[(C, Rule::MethodMadeStable, METHOD)]);
}

#[test]
fn method_direction_changed_is_breaking() {
    let old = bundle(
        "0.1.0",
        json!({}),
        &[MethodSpec::new(METHOD, "clientRequest")],
    );
    let new = bundle(
        "0.2.0",
        json!({}),
        &[MethodSpec::new(METHOD, "serverRequest")],
    );
    let report = diff(&old, &new);
    expect(&report, &[(B, Rule::MethodDirectionChanged, METHOD)]);
    assert_eq!(
        report.changes[0].detail,
        "was a client request, is now a server request"
    );
}

#[test]
fn experimental_method_removed_is_reported_as_compatible() {
    let old = bundle(
        "0.1.0",
        json!({}),
        &[
            MethodSpec::new("a/one", "clientRequest"),
            MethodSpec::new("a/two", "clientRequest").experimental(),
        ],
    );
    let new = bundle(
        "0.2.0",
        json!({}),
        &[MethodSpec::new("a/one", "clientRequest")],
    );
    let report = diff(&old, &new);
    expect(&report, &[(C, Rule::MethodRemoved, "a/two")]);
    assert!(
        report.changes[0]
            .detail
            .contains("no compatibility guarantee"),
        "{report}"
    );
}

#[test]
fn changes_inside_an_experimental_method_are_compatible() {
    let method = |params: Value| {
        MethodSpec::new(METHOD, "clientRequest")
            .experimental()
            .params(params)
    };
    let old = bundle(
        "0.1.0",
        json!({}),
        &[method(object(json!({ "x": { "type": "string" } }), &["x"]))],
    );
    let new = bundle(
        "0.2.0",
        json!({}),
        &[method(object(json!({ "y": { "type": "string" } }), &["y"]))],
    );
    expect(
        &diff(&old, &new),
        &[
            (C, Rule::FieldRemoved, PX),
            (C, Rule::RequiredFieldAdded, "test/run params /y"),
        ],
    );
}

#[test]
fn a_method_existing_in_two_directions_is_matched_per_direction() {
    let both = [
        MethodSpec::new(METHOD, "clientNotification"),
        MethodSpec::new(METHOD, "serverNotification"),
    ];
    let old = bundle("0.1.0", json!({}), &both);
    let new = bundle("0.2.0", json!({}), &both[..1]);
    expect(&diff(&old, &new), &[(B, Rule::MethodRemoved, METHOD)]);
    assert!(diff(&old, &old).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Params presence
// ---------------------------------------------------------------------------------------------

#[test]
fn required_params_added_break_input_only() {
    for (direction, severity) in [("clientRequest", B), ("serverNotification", C)] {
        let old = bundle(
            "0.1.0",
            json!({}),
            &[MethodSpec::new(METHOD, direction).no_params()],
        );
        let new = bundle("0.2.0", json!({}), &[MethodSpec::new(METHOD, direction)]);
        expect(&diff(&old, &new), &[(severity, Rule::ParamsAdded, P)]);
    }
}

#[test]
fn optional_params_added_are_compatible() {
    let old = bundle(
        "0.1.0",
        json!({}),
        &[MethodSpec::new(METHOD, "clientRequest").no_params()],
    );
    let new = bundle(
        "0.2.0",
        json!({}),
        &[MethodSpec::new(METHOD, "clientRequest").optional_params()],
    );
    expect(&diff(&old, &new), &[(C, Rule::OptionalFieldAdded, P)]);
}

#[test]
fn params_removed_are_breaking_in_both_positions() {
    for direction in ["clientRequest", "serverNotification"] {
        let old = bundle("0.1.0", json!({}), &[MethodSpec::new(METHOD, direction)]);
        let new = bundle(
            "0.2.0",
            json!({}),
            &[MethodSpec::new(METHOD, direction).no_params()],
        );
        expect(&diff(&old, &new), &[(B, Rule::ParamsRemoved, P)]);
    }
}

#[test]
fn params_member_made_required_or_optional() {
    for (direction, made_required, made_optional) in
        [("clientRequest", B, C), ("serverNotification", C, B)]
    {
        let optional = bundle(
            "0.1.0",
            json!({}),
            &[MethodSpec::new(METHOD, direction).optional_params()],
        );
        let required = bundle("0.2.0", json!({}), &[MethodSpec::new(METHOD, direction)]);
        expect(
            &diff(&optional, &required),
            &[(made_required, Rule::OptionalFieldMadeRequired, P)],
        );
        expect(
            &diff(&required, &optional),
            &[(made_optional, Rule::RequiredFieldMadeOptional, P)],
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Fields
// ---------------------------------------------------------------------------------------------

#[test]
fn field_removed_is_breaking_in_both_positions() {
    for pos in [Pos::Input, Pos::Output] {
        for required in [&["x"][..], &[]] {
            let report = diff_params(
                pos,
                object(
                    json!({ "x": { "type": "string" }, "y": { "type": "string" } }),
                    required,
                ),
                object(json!({ "y": { "type": "string" } }), &[]),
            );
            expect(&report, &[(B, Rule::FieldRemoved, PX)]);
        }
    }
}

#[test]
fn optional_field_added_is_compatible_in_both_positions() {
    for pos in [Pos::Input, Pos::Output] {
        let report = diff_params(
            pos,
            object(json!({}), &[]),
            object(json!({ "x": { "type": "string" } }), &[]),
        );
        expect(&report, &[(C, Rule::OptionalFieldAdded, PX)]);
    }
}

#[test]
fn required_field_added_breaks_input_only() {
    for (pos, severity) in [(Pos::Input, B), (Pos::Output, C)] {
        let report = diff_params(
            pos,
            object(json!({}), &[]),
            object(json!({ "x": { "type": "string" } }), &["x"]),
        );
        expect(&report, &[(severity, Rule::RequiredFieldAdded, PX)]);
    }
}

#[test]
fn optional_field_made_required_breaks_input_only() {
    for (pos, severity) in [(Pos::Input, B), (Pos::Output, C)] {
        let report = diff_params(
            pos,
            object(json!({ "x": { "type": "string" } }), &[]),
            object(json!({ "x": { "type": "string" } }), &["x"]),
        );
        expect(&report, &[(severity, Rule::OptionalFieldMadeRequired, PX)]);
    }
}

#[test]
fn required_field_made_optional_breaks_output_only() {
    for (pos, severity) in [(Pos::Input, C), (Pos::Output, B)] {
        let report = diff_params(
            pos,
            object(json!({ "x": { "type": "string" } }), &["x"]),
            object(json!({ "x": { "type": "string" } }), &[]),
        );
        expect(&report, &[(severity, Rule::RequiredFieldMadeOptional, PX)]);
    }
}

#[test]
fn a_name_only_listed_in_required_is_a_field() {
    let report = diff_params(
        Pos::Input,
        json!({ "type": "object", "required": ["x"] }),
        json!({ "type": "object" }),
    );
    expect(&report, &[(B, Rule::FieldRemoved, PX)]);
}

// ---------------------------------------------------------------------------------------------
// Nullability
// ---------------------------------------------------------------------------------------------

#[test]
fn nullable_added_breaks_output_only() {
    let types = json!({ "T": { "type": "object" } });
    for (pos, severity) in [(Pos::Input, C), (Pos::Output, B)] {
        let report = diff_member(
            pos,
            json!({ "type": "string" }),
            json!({ "type": ["string", "null"] }),
        );
        expect(&report, &[(severity, Rule::NullableAdded, PX)]);

        let mut old_types = types.clone();
        let mut new_types = types.clone();
        old_types["TestParams"] = object(json!({ "x": { "$ref": "#/definitions/T" } }), &[]);
        new_types["TestParams"] = object(
            json!({ "x": { "anyOf": [{ "$ref": "#/definitions/T" }, { "type": "null" }] } }),
            &[],
        );
        let report = diff(
            &params_bundle(pos, "0.1.0", old_types),
            &params_bundle(pos, "0.2.0", new_types),
        );
        expect(&report, &[(severity, Rule::NullableAdded, PX)]);
    }
}

#[test]
fn nullable_removed_breaks_input_only() {
    for (pos, severity) in [(Pos::Input, B), (Pos::Output, C)] {
        let report = diff_member(
            pos,
            json!({ "oneOf": [{ "type": "null" }, { "type": "integer" }] }),
            json!({ "type": "integer" }),
        );
        expect(&report, &[(severity, Rule::NullableRemoved, PX)]);
    }
}

// ---------------------------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------------------------

#[test]
fn enum_value_removed_is_breaking_in_both_positions() {
    for pos in [Pos::Input, Pos::Output] {
        let report = diff_member(
            pos,
            json!({ "type": "string", "enum": ["a", "b"] }),
            json!({ "type": "string", "enum": ["a"] }),
        );
        expect(&report, &[(B, Rule::EnumValueRemoved, PX)]);
        assert_eq!(report.changes[0].detail, "enum value \"b\" removed");
    }
}

#[test]
fn enum_value_added_is_compatible_in_both_positions() {
    for pos in [Pos::Input, Pos::Output] {
        let report = diff_member(
            pos,
            json!({ "oneOf": [{ "const": "a", "description": "A." }] }),
            json!({ "oneOf": [{ "const": "a" }, { "const": "b", "description": "B." }] }),
        );
        expect(&report, &[(C, Rule::EnumValueAdded, PX)]);
        assert!(
            report.changes[0].detail.contains("must tolerate"),
            "{report}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Unions
// ---------------------------------------------------------------------------------------------

/// A variant of an internally tagged union (`type: {const: tag}`) with a string `text`.
fn tagged(tag: &str) -> Value {
    object(
        json!({ "type": { "type": "string", "const": tag }, "text": { "type": "string" } }),
        &["type", "text"],
    )
}

#[test]
fn tagged_variant_removed_is_breaking_and_added_is_compatible() {
    for pos in [Pos::Input, Pos::Output] {
        let report = diff_member(
            pos,
            json!({ "oneOf": [tagged("a"), tagged("b")] }),
            json!({ "oneOf": [tagged("a"), tagged("c")] }),
        );
        expect(
            &report,
            &[
                (B, Rule::VariantRemoved, "test/run params /x/oneOf[type=b]"),
                (C, Rule::VariantAdded, "test/run params /x/oneOf[type=c]"),
            ],
        );
    }
}

#[test]
fn tagged_variants_are_matched_by_tag_not_by_order() {
    let mut changed = tagged("b");
    changed["properties"]["text"] = json!({ "type": "integer" });
    let report = diff_member(
        Pos::Output,
        json!({ "oneOf": [tagged("a"), tagged("b")] }),
        json!({ "oneOf": [changed, tagged("a")] }),
    );
    expect(
        &report,
        &[(
            B,
            Rule::TypeChanged,
            "test/run params /x/oneOf[type=b]/text",
        )],
    );
}

#[test]
fn tagged_variants_behind_refs_are_keyed_by_their_tag() {
    let types = |b_text: &str| {
        let mut b = tagged("b");
        b["properties"]["text"] = json!({ "type": b_text });
        json!({
            "A": tagged("a"),
            "B": b,
            "TestParams": object(json!({ "x": { "oneOf": [
                { "$ref": "#/definitions/A" }, { "$ref": "#/definitions/B" }
            ] } }), &[]),
        })
    };
    let report = diff(
        &params_bundle(Pos::Input, "0.1.0", types("string")),
        &params_bundle(Pos::Input, "0.2.0", types("boolean")),
    );
    expect(
        &report,
        &[(
            B,
            Rule::TypeChanged,
            "test/run params /x/oneOf[type=b]/text",
        )],
    );
}

#[test]
fn externally_tagged_variants_and_unit_values() {
    let external = |name: &str| {
        json!({
            "type": "object",
            "properties": { name: object(json!({ "on": { "type": "boolean" } }), &["on"]) },
            "required": [name],
            "additionalProperties": false,
        })
    };
    let old = json!({ "oneOf": [
        { "type": "string", "enum": ["never", "always"] }, external("granular"), external("custom")
    ] });
    let new = json!({ "oneOf": [
        { "type": "string", "enum": ["always"] }, external("granular"), external("scoped")
    ] });
    for pos in [Pos::Input, Pos::Output] {
        expect(
            &diff_member(pos, old.clone(), new.clone()),
            &[
                (B, Rule::EnumValueRemoved, PX),
                (B, Rule::VariantRemoved, "test/run params /x/oneOf[custom]"),
                (C, Rule::VariantAdded, "test/run params /x/oneOf[scoped]"),
            ],
        );
    }
}

#[test]
fn untagged_union_branches_are_compared_by_type() {
    let old = json!({ "anyOf": [
        { "type": "string" }, { "type": "integer" }, { "type": "array", "items": { "type": "string" } }
    ] });
    let new = json!({ "anyOf": [
        { "type": "array", "items": { "type": "integer" } }, { "type": "string" }, { "type": "boolean" }
    ] });
    expect(
        &diff_member(Pos::Input, old, new),
        &[
            (B, Rule::VariantRemoved, "test/run params /x/anyOf[integer]"),
            (B, Rule::TypeChanged, "test/run params /x/anyOf[array]"),
            (C, Rule::VariantAdded, "test/run params /x/anyOf[boolean]"),
        ],
    );
}

#[test]
fn untagged_object_branches_are_told_apart_by_title() {
    let branch = |title: &str, member: &str| {
        json!({
            "title": title,
            "type": "object",
            "properties": { member: { "type": "string" }, "note": { "type": "string" } },
        })
    };
    let old = json!({ "anyOf": [branch("ByUrl", "url"), branch("ById", "id")] });
    let new = json!({ "anyOf": [branch("ById", "id"), branch("ByPath", "path")] });
    expect(
        &diff_member(Pos::Input, old, new),
        &[
            (
                B,
                Rule::VariantRemoved,
                "test/run params /x/anyOf[object:ByUrl]",
            ),
            (
                C,
                Rule::VariantAdded,
                "test/run params /x/anyOf[object:ByPath]",
            ),
        ],
    );
}

#[test]
fn a_type_that_becomes_a_union_gains_variants() {
    expect(
        &diff_member(
            Pos::Input,
            json!({ "type": "string" }),
            json!({ "oneOf": [{ "type": "string" }, { "type": "integer" }] }),
        ),
        &[(C, Rule::VariantAdded, "test/run params /x/oneOf[integer]")],
    );
    expect(
        &diff_member(
            Pos::Output,
            json!({ "anyOf": [tagged("a"), tagged("b")] }),
            tagged("a"),
        ),
        &[(B, Rule::VariantRemoved, "test/run params /x/anyOf[type=b]")],
    );
}

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

#[test]
fn type_changed_is_breaking_in_both_positions() {
    for pos in [Pos::Input, Pos::Output] {
        let report = diff_member(
            pos,
            json!({ "type": "string" }),
            json!({ "type": "integer" }),
        );
        expect(&report, &[(B, Rule::TypeChanged, PX)]);
        assert_eq!(
            report.changes[0].detail,
            "type changed from string to integer"
        );
        let report = diff_member(
            pos,
            object(json!({}), &[]),
            json!({ "type": "array", "items": { "type": "string" } }),
        );
        expect(&report, &[(B, Rule::TypeChanged, PX)]);
    }
}

#[test]
fn a_ref_to_a_different_structure_is_a_type_change() {
    let types = |target: &str| {
        json!({
            "Obj": object(json!({ "a": { "type": "string" } }), &["a"]),
            "Mode": { "type": "string", "enum": ["x", "y"] },
            "TestParams": object(json!({ "x": { "$ref": format!("#/definitions/{target}") } }), &[]),
        })
    };
    let report = diff(
        &params_bundle(Pos::Output, "0.1.0", types("Obj")),
        &params_bundle(Pos::Output, "0.2.0", types("Mode")),
    );
    expect(&report, &[(B, Rule::TypeChanged, PX)]);
}

#[test]
fn type_widened_breaks_output_only() {
    for (pos, severity) in [(Pos::Input, C), (Pos::Output, B)] {
        let report = diff_member(
            pos,
            json!({ "type": "integer" }),
            json!({ "type": "number" }),
        );
        expect(&report, &[(severity, Rule::TypeWidened, PX)]);
        let report = diff_member(
            pos,
            json!({ "type": "string", "enum": ["a"] }),
            json!({ "type": "string" }),
        );
        expect(&report, &[(severity, Rule::TypeWidened, PX)]);
    }
}

#[test]
fn type_narrowed_breaks_input_only() {
    for (pos, severity) in [(Pos::Input, B), (Pos::Output, C)] {
        let report = diff_member(
            pos,
            json!({ "type": "string" }),
            json!({ "type": "string", "enum": ["a", "b"] }),
        );
        expect(&report, &[(severity, Rule::TypeNarrowed, PX)]);
        let report = diff_member(pos, json!({}), json!({ "type": ["boolean", "null"] }));
        expect(&report, &[(severity, Rule::TypeNarrowed, PX)]);
    }
}

#[test]
fn array_items_are_compared_without_a_path_segment() {
    let report = diff_member(
        Pos::Output,
        json!({ "type": "array", "items": object(json!({ "a": { "type": "string" } }), &["a"]) }),
        json!({ "type": "array", "items": object(json!({}), &[]) }),
    );
    expect(&report, &[(B, Rule::FieldRemoved, "test/run params /x/a")]);
    let report = diff_member(
        Pos::Output,
        json!({ "type": "array", "items": { "type": "string" } }),
        json!({ "type": "array", "items": { "type": ["string", "null"] } }),
    );
    expect(&report, &[(B, Rule::NullableAdded, PX)]);
    assert_eq!(report.changes[0].detail, "array items: null is now allowed");
}

#[test]
fn tuples_are_compared_by_position() {
    let tuple = |second: &str| json!({ "type": "array", "items": [{ "type": "string" }, { "type": second }] });
    expect(
        &diff_member(Pos::Input, tuple("integer"), tuple("string")),
        &[(B, Rule::TypeChanged, "test/run params /x/1")],
    );
    expect(
        &diff_member(
            Pos::Input,
            tuple("integer"),
            json!({ "type": "array", "items": { "type": "string" } }),
        ),
        &[(B, Rule::TypeChanged, PX)],
    );
}

// ---------------------------------------------------------------------------------------------
// Maps and additionalProperties
// ---------------------------------------------------------------------------------------------

#[test]
fn map_value_changes_are_compared_like_fields() {
    let map = |value: Value| json!({ "type": "object", "additionalProperties": value });
    for (pos, nullable_severity) in [(Pos::Input, C), (Pos::Output, B)] {
        expect(
            &diff_member(
                pos,
                map(json!({ "type": "string" })),
                map(json!({ "type": "integer" })),
            ),
            &[(B, Rule::TypeChanged, "test/run params /x/*")],
        );
        expect(
            &diff_member(
                pos,
                map(json!({ "type": "string" })),
                map(json!({ "type": ["string", "null"] })),
            ),
            &[(
                nullable_severity,
                Rule::NullableAdded,
                "test/run params /x/*",
            )],
        );
    }
}

#[test]
fn additional_properties_forbidden_breaks_input_only() {
    for (pos, severity) in [(Pos::Input, B), (Pos::Output, C)] {
        let report = diff_member(
            pos,
            object(json!({ "a": { "type": "string" } }), &[]),
            json!({ "type": "object", "properties": { "a": { "type": "string" } },
                    "additionalProperties": false }),
        );
        expect(
            &report,
            &[(severity, Rule::AdditionalPropertiesForbidden, PX)],
        );
    }
}

#[test]
fn additional_properties_allowed_is_compatible() {
    for pos in [Pos::Input, Pos::Output] {
        let report = diff_member(
            pos,
            json!({ "type": "object", "additionalProperties": false }),
            json!({ "type": "object" }),
        );
        expect(&report, &[(C, Rule::AdditionalPropertiesAllowed, PX)]);
    }
}

// ---------------------------------------------------------------------------------------------
// Experimental fields
// ---------------------------------------------------------------------------------------------

#[test]
fn field_made_experimental_is_breaking_and_made_stable_compatible() {
    let stable = object(json!({ "x": { "type": "string" } }), &[]);
    let experimental = object(
        json!({ "x": { "type": "string", "x-experimental": true } }),
        &[],
    );
    expect(
        &diff_params(Pos::Input, stable.clone(), experimental.clone()),
        &[(B, Rule::FieldMadeExperimental, PX)],
    );
    expect(
        &diff_params(Pos::Input, experimental, stable),
        &[(C, Rule::FieldMadeStable, PX)],
    );
}

#[test]
fn changes_to_experimental_fields_are_compatible() {
    let old = object(
        json!({
            "x": { "type": "string", "x-experimental": true },
            "y": { "type": "string", "x-experimental": true },
        }),
        &["x"],
    );
    let new = object(
        json!({ "y": { "type": "integer", "x-experimental": true } }),
        &[],
    );
    let report = diff_params(Pos::Output, old, new);
    expect(
        &report,
        &[
            (C, Rule::FieldRemoved, PX),
            (C, Rule::TypeChanged, "test/run params /y"),
        ],
    );
    assert!(
        report.changes[1]
            .detail
            .contains("no compatibility guarantee")
    );
}

#[test]
fn experimental_variants_and_values_can_go() {
    let mut experimental = tagged("b");
    experimental["x-experimental"] = json!(true);
    let old = json!({ "oneOf": [
        tagged("a"), experimental,
        { "const": "unit", "x-experimental": true }, { "const": "kept" }
    ] });
    let new = json!({ "oneOf": [tagged("a"), { "const": "kept" }] });
    expect(
        &diff_member(Pos::Output, old, new),
        &[
            (C, Rule::EnumValueRemoved, PX),
            (C, Rule::VariantRemoved, "test/run params /x/oneOf[type=b]"),
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Positions of the four directions
// ---------------------------------------------------------------------------------------------

#[test]
fn each_part_of_each_direction_has_its_position() {
    let without = object(json!({}), &[]);
    let with = object(json!({ "x": { "type": "string" } }), &["x"]);
    // (direction, change the params?, expected severity of a required field added, location)
    let cases = [
        ("clientRequest", true, B, "test/run params /x"),
        ("clientRequest", false, C, "test/run response /x"),
        ("serverRequest", true, C, "test/run params /x"),
        ("serverRequest", false, B, "test/run response /x"),
        ("serverNotification", true, C, "test/run params /x"),
        ("clientNotification", true, B, "test/run params /x"),
    ];
    for (direction, in_params, severity, location) in cases {
        let method = |schema: &Value| {
            let spec = MethodSpec::new(METHOD, direction);
            if in_params {
                spec.params(schema.clone())
            } else {
                spec.result(schema.clone())
            }
        };
        let report = diff(
            &bundle("0.1.0", json!({}), &[method(&without)]),
            &bundle("0.2.0", json!({}), &[method(&with)]),
        );
        expect(&report, &[(severity, Rule::RequiredFieldAdded, location)]);
    }
}

// ---------------------------------------------------------------------------------------------
// The mcp namespace
// ---------------------------------------------------------------------------------------------

fn mcp_bundle(version: &str, mcp: Value) -> Value {
    bundle(
        version,
        json!({ "mcp": mcp }),
        &[MethodSpec::new(METHOD, "clientRequest")],
    )
}

#[test]
fn mcp_definitions_removed_and_added() {
    let old = mcp_bundle("0.1.0", json!({ "Gone": { "type": "string" } }));
    let new = mcp_bundle("0.2.0", json!({ "Fresh": { "type": "string" } }));
    let report = diff(&old, &new);
    expect(
        &report,
        &[
            (C, Rule::DefinitionAdded, "mcp Fresh"),
            (B, Rule::DefinitionRemoved, "mcp Gone"),
        ],
    );
    assert!(report.changes.iter().all(|c| c.method.is_none()));
}

#[test]
fn mcp_changes_are_breaking_if_breaking_in_either_position() {
    let old = mcp_bundle("0.1.0", json!({ "Param": object(json!({}), &[]) }));
    let required = mcp_bundle(
        "0.2.0",
        json!({ "Param": object(json!({ "p": { "type": "string" } }), &["p"]) }),
    );
    let optional = mcp_bundle(
        "0.2.0",
        json!({ "Param": object(json!({ "p": { "type": "string" } }), &[]) }),
    );
    expect(
        &diff(&old, &required),
        &[(B, Rule::RequiredFieldAdded, "mcp Param /p")],
    );
    expect(
        &diff(&old, &optional),
        &[(C, Rule::OptionalFieldAdded, "mcp Param /p")],
    );
}

#[test]
fn refs_into_the_mcp_namespace_resolve() {
    let types = |kind: &str| {
        json!({
            "mcp": { "Shared": { "type": kind } },
            "TestParams": object(json!({ "x": { "$ref": "#/definitions/mcp/Shared" } }), &[]),
        })
    };
    let report = diff(
        &params_bundle(Pos::Input, "0.1.0", types("string")),
        &params_bundle(Pos::Input, "0.2.0", types("boolean")),
    );
    expect(
        &report,
        &[
            (B, Rule::TypeChanged, PX),
            (B, Rule::TypeChanged, "mcp Shared"),
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Normalization and references
// ---------------------------------------------------------------------------------------------

#[test]
fn equivalent_spellings_are_not_changes() {
    let t = json!({ "$ref": "#/definitions/T" });
    let pairs = [
        (
            t.clone(),
            json!({ "allOf": [t.clone()], "description": "The T." }),
        ),
        (
            json!({ "const": "a" }),
            json!({ "type": "string", "enum": ["a"] }),
        ),
        (
            json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] }),
            json!({ "type": ["string", "null"] }),
        ),
        (
            json!({ "anyOf": [t.clone(), { "type": "null" }] }),
            json!({ "oneOf": [{ "type": "null" }, t.clone()], "default": null }),
        ),
        (
            json!({ "oneOf": [{ "const": "a", "description": "A" }, { "const": "b" }] }),
            json!({ "type": "string", "enum": ["b", "a"] }),
        ),
        (
            json!({ "type": "integer", "format": "int64", "minimum": 0, "title": "N",
                    "description": "d", "default": 0, "examples": [1], "x-since": "0.1.0" }),
            json!({ "type": "integer" }),
        ),
        (json!({ "type": ["string"] }), json!({ "type": "string" })),
        (json!(true), json!({ "description": "anything" })),
        (
            t.clone(),
            object(
                json!({ "a": { "type": "string", "description": "inline" } }),
                &["a"],
            ),
        ),
        (
            json!({ "allOf": [t.clone(), object(json!({ "b": { "type": "boolean" } }), &[])] }),
            object(
                json!({ "a": { "type": "string" }, "b": { "type": "boolean" } }),
                &["a"],
            ),
        ),
    ];
    for (old, new) in pairs {
        for pos in [Pos::Input, Pos::Output] {
            let types = |x: &Value| {
                json!({
                    "T": object(json!({ "a": { "type": "string" } }), &["a"]),
                    "TestParams": object(json!({ "x": x }), &[]),
                })
            };
            let report = diff(
                &params_bundle(pos, "0.1.0", types(&old)),
                &params_bundle(pos, "0.2.0", types(&new)),
            );
            assert!(report.is_empty(), "{old} vs {new}:\n{report}");
        }
    }
}

#[test]
fn a_bundle_compared_with_itself_has_no_changes() {
    let realistic = realistic();
    let report = diff(&realistic, &realistic);
    assert!(report.is_empty(), "{report}");
    assert!(!report.has_breaking());
    assert_eq!(
        report.to_string(),
        "0 breaking, 0 compatible changes (0.1.0 -> 0.1.0)"
    );
}

#[test]
fn recursive_types_terminate_and_report_once() {
    let tree = |extra: Value, required: &[&str]| {
        let mut properties = json!({
            "name": { "type": "string" },
            "children": { "type": "array", "items": { "$ref": "#/definitions/Tree" } },
            "parent": { "anyOf": [{ "$ref": "#/definitions/Tree" }, { "type": "null" }] },
        });
        if let (Some(properties), Some(extra)) = (properties.as_object_mut(), extra.as_object()) {
            properties.extend(extra.clone());
        }
        json!({
            "Tree": object(properties, required),
            "TestParams": object(json!({ "x": { "$ref": "#/definitions/Tree" } }), &[]),
        })
    };
    let old = params_bundle(Pos::Input, "0.1.0", tree(json!({}), &["name"]));
    assert!(diff(&old, &old).is_empty());
    let new = params_bundle(
        Pos::Input,
        "0.2.0",
        tree(json!({ "id": { "type": "string" } }), &["name", "id"]),
    );
    expect(
        &diff(&old, &new),
        &[(B, Rule::RequiredFieldAdded, "test/run params /x/id")],
    );
}

#[test]
fn nullability_is_compared_even_where_a_recursive_type_repeats() {
    let list = |next: Value| {
        json!({
            "Node": object(json!({ "value": { "type": "string" }, "next": next }), &[]),
            "TestParams": object(json!({ "x": { "$ref": "#/definitions/Node" } }), &[]),
        })
    };
    let old = params_bundle(
        Pos::Input,
        "0.1.0",
        list(json!({ "anyOf": [{ "$ref": "#/definitions/Node" }, { "type": "null" }] })),
    );
    let new = params_bundle(
        Pos::Input,
        "0.2.0",
        list(json!({ "$ref": "#/definitions/Node" })),
    );
    expect(
        &diff(&old, &new),
        &[(B, Rule::NullableRemoved, "test/run params /x/next")],
    );
}

#[test]
fn mutually_recursive_types_report_in_every_method() {
    let types = |a_extra: bool| {
        let mut a = object(
            json!({ "b": { "anyOf": [{ "$ref": "#/definitions/B" }, { "type": "null" }] } }),
            &[],
        );
        if a_extra {
            a["properties"]["z"] = json!({ "type": "string" });
        }
        json!({
            "A": a,
            "B": object(json!({ "a": { "anyOf": [{ "$ref": "#/definitions/A" }, { "type": "null" }] } }), &[]),
        })
    };
    let methods = [
        MethodSpec::new("m/a", "serverNotification").params(json!({ "$ref": "#/definitions/A" })),
        MethodSpec::new("m/b", "serverNotification").params(json!({ "$ref": "#/definitions/B" })),
    ];
    let report = diff(
        &bundle("0.1.0", types(false), &methods),
        &bundle("0.2.0", types(true), &methods),
    );
    expect(
        &report,
        &[
            (C, Rule::OptionalFieldAdded, "m/a params /z"),
            (C, Rule::OptionalFieldAdded, "m/b params /a/z"),
        ],
    );
}

#[test]
fn json_pointer_escapes_in_refs_and_locations() {
    let types = |kind: &str| {
        json!({
            "a/b~c": { "type": kind },
            "TestParams": object(json!({ "x/y": { "$ref": "#/definitions/a~1b~0c" } }), &[]),
        })
    };
    let report = diff(
        &params_bundle(Pos::Input, "0.1.0", types("string")),
        &params_bundle(Pos::Input, "0.2.0", types("integer")),
    );
    expect(&report, &[(B, Rule::TypeChanged, "test/run params /x~1y")]);
}

#[test]
fn a_shared_type_is_reported_once_per_method() {
    let types = |kind: &str| {
        json!({
            "Shared": object(json!({ "v": { "type": kind } }), &["v"]),
            "P": object(json!({ "one": { "$ref": "#/definitions/Shared" },
                                "two": { "$ref": "#/definitions/Shared" } }), &[]),
        })
    };
    let methods = [
        MethodSpec::new("m/one", "clientRequest").params(json!({ "$ref": "#/definitions/P" })),
        MethodSpec::new("m/two", "clientRequest").params(json!({ "$ref": "#/definitions/Shared" })),
    ];
    let report = diff(
        &bundle("0.1.0", types("string"), &methods),
        &bundle("0.2.0", types("boolean"), &methods),
    );
    expect(
        &report,
        &[
            (B, Rule::TypeChanged, "m/one params /one/v"),
            (B, Rule::TypeChanged, "m/one params /two/v"),
            (B, Rule::TypeChanged, "m/two params /v"),
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

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

#[test]
fn documents_that_are_not_bundles_are_refused() {
    let error = diff_error(&json!([1, 2]), &valid());
    assert!(
        matches!(&error, DiffError::NotABundle(m) if m.contains("old")),
        "{error}"
    );
    let error = diff_error(&valid(), &json!({ "definitions": 3 }));
    assert!(
        matches!(&error, DiffError::NotABundle(m) if m.contains("new") && m.contains("definitions")),
        "{error}"
    );
    let error = diff_error(
        &valid(),
        &json!({ "definitions": { "A": { "type": "string" } } }),
    );
    assert!(
        matches!(&error, DiffError::NotABundle(m) if m.contains("no methods")),
        "{error}"
    );
}

#[test]
fn a_dangling_ref_names_the_reference_and_where_it_is() {
    let error = diff_error(
        &valid(),
        &with_member(json!({ "$ref": "#/definitions/Missing" })),
    );
    assert_eq!(
        error,
        DiffError::BadReference {
            reference: "#/definitions/Missing".to_owned(),
            location: "new bundle at #/definitions/TestParams/properties/x".to_owned(),
        }
    );
    assert!(error.to_string().contains("#/definitions/Missing"));
}

#[test]
fn a_ref_outside_the_bundle_is_refused() {
    let error = diff_error(
        &valid(),
        &with_member(json!({ "$ref": "other.json#/definitions/A" })),
    );
    assert!(
        matches!(error, DiffError::UnsupportedReference { .. }),
        "{error}"
    );
}

#[test]
fn a_cycle_of_refs_is_refused() {
    let types = json!({
        "A": { "$ref": "#/definitions/B" },
        "B": { "allOf": [{ "$ref": "#/definitions/A" }] },
        "TestParams": object(json!({ "x": { "$ref": "#/definitions/A" } }), &[]),
    });
    let error = diff_error(&valid(), &params_bundle(Pos::Input, "0.2.0", types));
    assert!(matches!(error, DiffError::RefCycle { .. }), "{error}");
}

#[test]
fn members_of_the_wrong_json_type_are_refused() {
    let cases = [
        (
            json!({ "TestParams": { "type": "object", "properties": [] } }),
            "new bundle at #/definitions/TestParams/properties",
        ),
        (
            json!({ "TestParams": object(json!({ "x": 5 }), &[]) }),
            "new bundle at #/definitions/TestParams/properties/x",
        ),
        (
            json!({ "TestParams": { "type": "object", "required": [1] } }),
            "new bundle at #/definitions/TestParams/required",
        ),
        (
            json!({ "TestParams": object(json!({ "x": { "type": "str" } }), &[]) }),
            "new bundle at #/definitions/TestParams/properties/x/type",
        ),
        (
            json!({ "TestParams": object(json!({ "x": { "anyOf": {} } }), &[]) }),
            "new bundle at #/definitions/TestParams/properties/x/anyOf",
        ),
        (
            json!({ "TestParams": object(json!({ "x": { "enum": "a" } }), &[]) }),
            "new bundle at #/definitions/TestParams/properties/x/enum",
        ),
        (
            json!({ "TestParams": object(json!({}), &[]), "Junk": "not a schema" }),
            "new bundle at #/definitions/Junk",
        ),
    ];
    for (types, location) in cases {
        let error = diff_error(&valid(), &params_bundle(Pos::Input, "0.2.0", types));
        match &error {
            DiffError::Malformed { location: at, .. } => assert_eq!(at, location),
            other => panic!("expected Malformed at {location}, got {other}"),
        }
    }
}

#[test]
fn bad_envelope_markers_are_refused() {
    let mut bad = valid();
    edit(
        &mut bad,
        "/definitions/TestRunRequestEnvelope/x-direction",
        |v| {
            *v = json!("sideways");
        },
    );
    let error = diff_error(&valid(), &bad);
    assert!(
        matches!(&error, DiffError::Malformed { location, .. }
            if location.ends_with("TestRunRequestEnvelope/x-direction")),
        "{error}"
    );
    let mut bad = valid();
    edit(
        &mut bad,
        "/definitions/TestRunRequestEnvelope/x-method",
        |v| {
            *v = json!(7);
        },
    );
    assert!(matches!(
        diff_error(&bad, &valid()),
        DiffError::Malformed { .. }
    ));
}

#[test]
fn envelopes_must_pair_up_and_be_unique() {
    let mut missing_response = valid();
    remove(
        &mut missing_response,
        "/definitions",
        "TestRunResponseEnvelope",
    );
    let error = diff_error(&missing_response, &valid());
    assert!(
        matches!(&error, DiffError::UnpairedEnvelope { method, .. } if method == METHOD),
        "{error}"
    );

    let mut orphan = valid();
    remove(&mut orphan, "/definitions", "TestRunRequestEnvelope");
    let error = diff_error(&orphan, &valid());
    assert!(
        matches!(&error, DiffError::UnpairedEnvelope { missing, .. } if missing.contains("request")),
        "{error}"
    );

    let mut duplicate = valid();
    edit(&mut duplicate, "/definitions", |definitions| {
        let copy = definitions["TestRunRequestEnvelope"].clone();
        definitions["TestRunAgainRequestEnvelope"] = copy;
    });
    let error = diff_error(&valid(), &duplicate);
    assert!(
        matches!(error, DiffError::DuplicateMethod { .. }),
        "{error}"
    );
}

#[test]
fn very_deep_nesting_is_refused_not_overflowed() {
    let mut types = Map::new();
    let depth = 1000;
    for level in 0..depth {
        types.insert(
            format!("D{level}"),
            object(
                json!({ "n": { "$ref": format!("#/definitions/D{}", level + 1) } }),
                &[],
            ),
        );
    }
    types.insert(format!("D{depth}"), json!({ "type": "string" }));
    types.insert(
        "TestParams".to_owned(),
        json!({ "$ref": "#/definitions/D0" }),
    );
    let deep = params_bundle(Pos::Input, "0.1.0", Value::Object(types));
    let error = diff_error(&deep, &deep);
    assert!(matches!(error, DiffError::TooDeep { .. }), "{error}");
}

/// A small bundle with one of each construct the classifier handles.
fn compact_bundle() -> Value {
    let types = json!({
        "Mode": { "type": "string", "enum": ["a", "b"] },
        "Tree": object(json!({
            "kids": { "type": "array", "items": { "$ref": "#/definitions/Tree" } },
            "up": { "anyOf": [{ "$ref": "#/definitions/Tree" }, { "type": "null" }] },
        }), &["kids"]),
        "Item": { "oneOf": [
            tagged("a"),
            { "allOf": [{ "$ref": "#/definitions/Tree" }], "properties": {
                "type": { "const": "tree" } }, "required": ["type"] },
        ] },
        "Policy": { "oneOf": [
            { "type": "string", "enum": ["never"] },
            { "type": "object", "properties": { "granular": { "type": "boolean" } },
              "required": ["granular"], "additionalProperties": false },
        ] },
        "TestParams": object(json!({
            "mode": { "anyOf": [{ "$ref": "#/definitions/Mode" }, { "type": "null" }] },
            "items": { "type": "array", "items": { "$ref": "#/definitions/Item" } },
            "pair": { "type": "array", "items": [{ "type": "string" }, { "type": "integer" }] },
            "map": { "type": "object", "additionalProperties": { "$ref": "#/definitions/Policy" } },
            "any": true,
            "either": { "anyOf": [{ "type": "string" }, { "type": "number" }] },
        }), &["items"]),
        "mcp": { "Tool": object(json!({ "tree": { "$ref": "#/definitions/Tree" } }), &[]) },
    });
    bundle(
        "0.1.0",
        types,
        &[
            MethodSpec::new(METHOD, "clientRequest")
                .params(json!({ "$ref": "#/definitions/TestParams" }))
                .result(json!({ "$ref": "#/definitions/Tree" })),
            MethodSpec::new("test/note", "serverNotification")
                .params(json!({ "$ref": "#/definitions/Item" })),
        ],
    )
}

#[test]
fn no_mangled_bundle_makes_the_classifier_panic() {
    let original = compact_bundle();
    assert!(diff(&original, &original).is_empty());
    let mut pointers = Vec::new();
    collect_pointers(&original, String::new(), &mut pointers);
    let junk = [
        json!(null),
        json!(7),
        json!("x"),
        json!([]),
        json!({}),
        json!(false),
        json!({ "$ref": "#/definitions/Nowhere" }),
        json!({ "$ref": "#/definitions/Tree" }),
        json!(["object", "null"]),
    ];
    let mut outcomes = (0, 0);
    for pointer in &pointers {
        for replacement in &junk {
            let mut mangled = original.clone();
            edit(&mut mangled, pointer, |value| *value = replacement.clone());
            for result in [
                diff_bundles(&original, &mangled),
                diff_bundles(&mangled, &original),
            ] {
                match result {
                    Ok(_) => outcomes.0 += 1,
                    Err(_) => outcomes.1 += 1,
                }
            }
        }
    }
    assert!(outcomes.0 > 0 && outcomes.1 > 0, "{outcomes:?}");
}

fn collect_pointers(value: &Value, at: String, out: &mut Vec<String>) {
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let pointer = format!("{at}/{}", escape(key));
                out.push(pointer.clone());
                collect_pointers(child, pointer, out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                let pointer = format!("{at}/{index}");
                out.push(pointer.clone());
                collect_pointers(child, pointer, out);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------

#[test]
fn the_human_report_has_one_line_per_change_and_a_summary() {
    let old = params_bundle(
        Pos::Input,
        "0.1.0",
        json!({ "TestParams": object(json!({ "cwd": { "type": "string" } }), &[]) }),
    );
    let new = params_bundle(
        Pos::Input,
        "0.2.0",
        json!({ "TestParams": object(json!({ "model": { "type": "string" } }), &[]) }),
    );
    let report = diff(&old, &new);
    assert_eq!(
        report.to_string(),
        "BREAKING  field-removed  test/run params /cwd: optional field removed\n\
         compatible  optional-field-added  test/run params /model: optional field added\n\
         1 breaking, 1 compatible changes (0.1.0 -> 0.2.0)"
    );
    assert!(report.has_breaking());
    assert_eq!(report.breaking().count(), 1);
    assert_eq!(report.compatible().count(), 1);
}

#[test]
fn the_json_report_carries_every_field() {
    let old = bundle(
        "0.1.0",
        json!({}),
        &[MethodSpec::new(METHOD, "clientRequest")],
    );
    let mut new = bundle("0.2.0", json!({}), &[]);
    edit(&mut new, "", |root| {
        if let Some(map) = root.as_object_mut() {
            map.remove("x-protocol-version");
        }
    });
    // A bundle needs one method; give the new one another.
    let other = bundle(
        "0.2.0",
        json!({}),
        &[MethodSpec::new("b/other", "clientNotification")],
    );
    edit(&mut new, "/definitions", |definitions| {
        definitions["BOtherNotificationEnvelope"] =
            other["definitions"]["BOtherNotificationEnvelope"].clone();
    });
    let report = diff(&old, &new);
    assert_eq!(
        report.to_json(),
        json!({
            "oldVersion": "0.1.0",
            "newVersion": null,
            "breaking": 1,
            "compatible": 1,
            "changes": [
                { "severity": "compatible", "rule": "method-added", "method": "b/other",
                  "location": "b/other", "detail": "client notification added" },
                { "severity": "breaking", "rule": "method-removed", "method": METHOD,
                  "location": METHOD, "detail": "client request removed" },
            ],
        })
    );
    assert!(report.to_string().ends_with("(0.1.0 -> unknown)"));
}

#[test]
fn rule_names_are_unique_kebab_case_and_round_trip() {
    let mut names = std::collections::BTreeSet::new();
    for rule in Rule::ALL {
        let name = rule.name();
        assert!(
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                && !name.starts_with('-')
                && !name.ends_with('-'),
            "{name}"
        );
        assert!(names.insert(name), "{name} twice");
        assert_eq!(Rule::from_name(name), Some(rule));
        assert_eq!(rule.to_string(), name);
    }
    assert_eq!(Rule::from_name("no-such-rule"), None);
    assert_eq!(Rule::NullableAdded.severities(), (C, B));
    assert_eq!(Severity::Breaking.name(), "breaking");
}

// ---------------------------------------------------------------------------------------------
// A realistic bundle
// ---------------------------------------------------------------------------------------------

#[test]
fn realistic_changes_are_classified_where_they_happen() {
    let old = realistic();
    let mut new = realistic();
    edit(&mut new, "/x-protocol-version", |v| *v = json!("0.2.0"));
    // An output field goes: every method that sends a thread item reports it.
    remove(
        &mut new,
        "/definitions/ThreadItem/oneOf/1/properties",
        "text",
    );
    pull(
        &mut new,
        "/definitions/ThreadItem/oneOf/1/required",
        &json!("text"),
    );
    // An output enum gains a value.
    push(&mut new, "/definitions/TurnStatus/enum", json!("cancelled"));
    // An input field becomes required.
    edit(&mut new, "/definitions/ThreadStartParams", |params| {
        params["required"] = json!(["cwd"]);
    });
    // An enum used in both directions loses a value.
    pull(
        &mut new,
        "/definitions/AskForApproval/oneOf/0/enum",
        &json!("on-failure"),
    );
    // The answer to a server request (input) loses a value.
    edit(
        &mut new,
        "/definitions/CommandExecutionApprovalDecision/oneOf",
        |v| {
            if let Some(items) = v.as_array_mut() {
                items.pop();
            }
        },
    );
    // A server notification gains a required field (compatible: output).
    edit(&mut new, "/definitions/ItemStartedNotification", |v| {
        v["properties"]["startedAtMs"] = json!({ "type": "integer", "format": "int64" });
        push_required(v, "startedAtMs");
    });
    // A stable method goes; an experimental one goes too.
    for gone in ["ThreadList", "ThreadRollback"] {
        remove(&mut new, "/definitions", &format!("{gone}RequestEnvelope"));
        remove(&mut new, "/definitions", &format!("{gone}ResponseEnvelope"));
        pull(
            &mut new,
            "/definitions/ClientRequest/oneOf",
            &json!({ "$ref": format!("#/definitions/{gone}RequestEnvelope") }),
        );
    }
    // The mcp tool parameter gains a required member.
    edit(&mut new, "/definitions/mcp/CodexToolCallParam", |v| {
        v["properties"]["cwd"] = json!({ "type": "string" });
        push_required(v, "cwd");
    });

    let report = diff(&old, &new);
    let text = report.to_string();
    for (severity, rule, location) in [
        (
            B,
            Rule::FieldRemoved,
            "thread/read response /thread/turns/items/oneOf[type=agentMessage]/text",
        ),
        (
            B,
            Rule::FieldRemoved,
            "thread/start response /thread/turns/items/oneOf[type=agentMessage]/text",
        ),
        (
            B,
            Rule::FieldRemoved,
            "turn/start response /turn/items/oneOf[type=agentMessage]/text",
        ),
        (
            B,
            Rule::FieldRemoved,
            "item/started params /item/oneOf[type=agentMessage]/text",
        ),
        (
            C,
            Rule::EnumValueAdded,
            "turn/completed params /turn/status",
        ),
        (
            B,
            Rule::OptionalFieldMadeRequired,
            "thread/start params /cwd",
        ),
        (
            B,
            Rule::EnumValueRemoved,
            "thread/start params /approvalPolicy",
        ),
        (
            B,
            Rule::EnumValueRemoved,
            "thread/start response /approvalPolicy",
        ),
        (
            B,
            Rule::EnumValueRemoved,
            "item/commandExecution/requestApproval response /decision",
        ),
        (
            C,
            Rule::RequiredFieldAdded,
            "item/started params /startedAtMs",
        ),
        (B, Rule::MethodRemoved, "thread/list"),
        (C, Rule::MethodRemoved, "thread/rollback"),
        (B, Rule::RequiredFieldAdded, "mcp CodexToolCallParam /cwd"),
    ] {
        expect_some(&report, severity, rule, location);
    }
    // Nothing reported under thread/start params besides the two input changes.
    let under_start_params: Vec<_> = report
        .changes
        .iter()
        .filter(|c| c.location.starts_with("thread/start params"))
        .map(|c| c.rule)
        .collect();
    assert_eq!(
        under_start_params,
        [Rule::EnumValueRemoved, Rule::OptionalFieldMadeRequired],
        "{text}"
    );
    // Every line is unique.
    let lines: std::collections::BTreeSet<&str> = text.lines().collect();
    assert_eq!(lines.len(), text.lines().count(), "{text}");
    assert!(text.ends_with("(0.1.0 -> 0.2.0)"), "{text}");
}

fn push_required(schema: &mut Value, name: &str) {
    match schema.get_mut("required").and_then(Value::as_array_mut) {
        Some(required) => required.push(json!(name)),
        None => schema["required"] = json!([name]),
    }
}
