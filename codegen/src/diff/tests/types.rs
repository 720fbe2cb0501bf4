//! Enums, unions and type changes.

use super::*;

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
