//! The message for a value that is none of a closed set of choices: an `enum`, or a
//! `oneOf`/`anyOf` whose branches are constants (schemars writes a Rust enum with documented
//! unit variants as one `{"enum": [..]}` branch per variant), possibly beside object or array
//! branches (variants with data).
//!
//! jsonschema's own messages name at most three values of an `enum` ("… or 4 other
//! candidates"), and for a failed `oneOf` the most likely branch of a union of constants is
//! just the first one, so a check would say `"approve" is not one of "accept"` although four
//! values are allowed. Here every allowed value is listed, in schema order:
//! `"approve" is not one of "accept", "acceptForSession", "decline" or "cancel"`, with `or an
//! object` appended when a branch takes an object instead.
//!
//! The runtime (`runtime/src/validate.rs`) words its -32602 details the same way.

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

/// The full message when `error` is a value outside a closed set of choices; `None` for any
/// other error (which then keeps jsonschema's own message or the usual branch descent).
pub(super) fn message(error: &ValidationError<'_>) -> Option<String> {
    if !matches!(
        error.kind(),
        ValidationErrorKind::Enum { .. }
            | ValidationErrorKind::OneOfNotValid { .. }
            | ValidationErrorKind::AnyOf { .. }
    ) {
        return None;
    }
    let base = error.instance_path().as_str();
    let mut values: Vec<Value> = Vec::new();
    let mut shapes: Vec<String> = Vec::new();
    gather(error, base, &mut values, &mut shapes)?;
    if values.is_empty() {
        return None;
    }
    let mut listed: Vec<String> = Vec::new();
    for item in values.iter().map(Value::to_string).chain(shapes) {
        if !listed.contains(&item) {
            listed.push(item);
        }
    }
    Some(format!(
        "{} is not one of {}",
        quoted(error.instance()),
        spoken_list(&listed)
    ))
}

/// Adds what `error` allows: the values of an `enum` or `const`, and for a `oneOf`/`anyOf`
/// what each branch allows (nested unions included, so `anyOf: [{$ref: Enum}, null]` lists
/// the enum's values and `null`). `Some(true)` when it found values, `None` when the error is
/// of another kind.
fn gather(
    error: &ValidationError<'_>,
    base: &str,
    values: &mut Vec<Value>,
    shapes: &mut Vec<String>,
) -> Option<bool> {
    match error.kind() {
        ValidationErrorKind::Enum { options } => {
            values.extend(options.as_array()?.iter().cloned());
            Some(true)
        }
        ValidationErrorKind::Constant { expected_value } => {
            values.push(expected_value.as_ref().clone());
            Some(true)
        }
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            let mut found = false;
            for branch in context {
                found |= gather_branch(branch, base, values, shapes)?;
            }
            Some(found)
        }
        _ => None,
    }
}

/// What one failed branch allows: constants, or else the type it wants (`an object`); `None`
/// when the branch failed for another reason (a union of objects, say) or below the value
/// itself, so that the caller explains that branch instead.
fn gather_branch(
    branch: &[ValidationError<'_>],
    base: &str,
    values: &mut Vec<Value>,
    shapes: &mut Vec<String>,
) -> Option<bool> {
    if branch.is_empty() || branch.iter().any(|e| e.instance_path().as_str() != base) {
        return None;
    }
    let mut constants = false;
    let mut types = Vec::new();
    for error in branch {
        match error.kind() {
            ValidationErrorKind::Type {
                kind: TypeKind::Single(kind),
            } => types.push(with_article(&kind.to_string())),
            _ => constants |= gather(error, base, values, shapes)?,
        }
    }
    if !constants {
        shapes.extend(types);
    }
    Some(constants)
}

/// At most this many bytes of the offending value are quoted (the list itself comes from our
/// schema and is kept whole).
const MAX_QUOTED: usize = 120;

fn quoted(value: &Value) -> String {
    let mut text = value.to_string();
    if text.len() > MAX_QUOTED {
        let mut end = MAX_QUOTED;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

fn with_article(kind: &str) -> String {
    match kind {
        "array" | "integer" | "object" => format!("an {kind}"),
        "null" => "null".to_owned(),
        other => format!("a {other}"),
    }
}

/// `a`, `a or b`, `a, b or c`.
fn spoken_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn first_message(schema: Value, instance: Value) -> Option<String> {
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let error = validator.iter_errors(&instance).next().expect("invalid");
        message(&error)
    }

    #[test]
    fn a_union_of_constants_lists_every_value() {
        let schema = json!({ "oneOf": [
            { "type": "string", "enum": ["accept"] },
            { "type": "string", "enum": ["acceptForSession"] },
            { "type": "string", "enum": ["decline"] },
            { "type": "string", "enum": ["cancel"] },
        ]});
        assert_eq!(
            first_message(schema.clone(), json!("approve")).as_deref(),
            Some(r#""approve" is not one of "accept", "acceptForSession", "decline" or "cancel""#)
        );
        // A value of the wrong type is outside the set too.
        assert_eq!(
            first_message(schema, json!(5)).as_deref(),
            Some(r#"5 is not one of "accept", "acceptForSession", "decline" or "cancel""#)
        );
    }

    #[test]
    fn object_branches_are_named_after_the_constants() {
        let schema = json!({ "oneOf": [
            { "type": "string", "enum": ["accept"] },
            { "type": "object", "properties": { "amend": { "type": "string" } },
              "required": ["amend"], "additionalProperties": false },
            { "const": "cancel" },
        ]});
        assert_eq!(
            first_message(schema, json!("approve")).as_deref(),
            Some(r#""approve" is not one of "accept", "cancel" or an object"#)
        );
    }

    #[test]
    fn a_nullable_union_of_constants_lists_null_too() {
        let schema = json!({
            "anyOf": [{ "$ref": "#/definitions/Mode" }, { "type": "null" }],
            "definitions": { "Mode": { "oneOf": [
                { "type": "string", "enum": ["untrusted"] },
                { "type": "string", "enum": ["never"] },
                { "type": "object", "required": ["granular"] },
            ]}},
        });
        assert_eq!(
            first_message(schema, json!("sometimes")).as_deref(),
            Some(r#""sometimes" is not one of "untrusted", "never", an object or null"#)
        );
    }

    #[test]
    fn a_long_enum_is_listed_whole() {
        let schema = json!({ "enum": ["a", "b", "c", "d", "e"] });
        assert_eq!(
            first_message(schema, json!("z")).as_deref(),
            Some(r#""z" is not one of "a", "b", "c", "d" or "e""#)
        );
    }

    #[test]
    fn other_failures_keep_their_own_explanation() {
        // A union of objects: the caller descends into the likely branch.
        let objects = json!({ "oneOf": [
            { "type": "object", "required": ["a"] },
            { "type": "object", "required": ["b"] },
        ]});
        assert_eq!(first_message(objects, json!({})), None);
        // No constants at all.
        let types = json!({ "oneOf": [{ "type": "string" }, { "type": "integer" }] });
        assert_eq!(first_message(types, json!(true)), None);
        assert_eq!(first_message(json!({ "type": "string" }), json!(1)), None);
    }
}
