//! Bundles that cannot be compared, and inputs that must not make the classifier panic.

use super::*;

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
fn deeply_nested_inline_schemas_are_refused_not_overflowed() {
    // Built by hand: `json!` would serialize the nested value again at every level.
    fn wrap(key: &str, value: Value) -> Value {
        let mut map = Map::new();
        map.insert(key.to_owned(), value);
        Value::Object(map)
    }
    for keyword in ["properties", "anyOf", "allOf"] {
        let mut schema = wrap("type", Value::String("string".to_owned()));
        for _ in 0..100 {
            schema = match keyword {
                "properties" => wrap("properties", wrap("n", schema)),
                other => wrap(
                    other,
                    Value::Array(vec![schema, wrap("type", Value::String("null".to_owned()))]),
                ),
            };
        }
        let mut types = Map::new();
        types.insert("TestParams".to_owned(), schema);
        let deep = params_bundle(Pos::Input, "0.2.0", Value::Object(types));
        let error = diff_error(&valid(), &deep);
        assert!(
            matches!(error, DiffError::TooDeep { .. }),
            "{keyword}: {error}"
        );
    }
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
