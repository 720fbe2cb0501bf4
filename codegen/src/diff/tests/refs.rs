//! Normalization, `$ref`s, recursion and the `mcp` namespace.

use super::*;

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
