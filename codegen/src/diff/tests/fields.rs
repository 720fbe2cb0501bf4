//! Object members, nullability, maps and experimental members.

use super::*;

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
