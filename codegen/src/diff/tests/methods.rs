//! Methods matched by name and direction, params presence, and the position of each part of each direction.

use super::*;

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
