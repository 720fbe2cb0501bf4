//! What is wrong with a JSON value that fails one of the protocol's JSON Schemas: a short list
//! of issues, each with the JSON pointer of the offending value and a reason a person can act
//! on. The one place this is worded, for both of its users: the runtime's -32602 details
//! (`agentwire-runtime`, params of incoming requests) and `agentwire-codegen contract check`
//! (whole messages of a recorded session against a pinned bundle).
//!
//! It lives here, behind the `validate` feature, because both users depend on this crate and
//! on nothing else in common: the runtime includes what codegen generates, so codegen must not
//! depend on the runtime (a broken generated file would then stop the generator that mends it).
//!
//! Two things jsonschema's own messages get wrong are mended:
//! - a value outside a closed set of choices (an `enum`, or a `oneOf`/`anyOf` of constants, as
//!   schemars writes an enum with documented unit variants, possibly beside branches of another
//!   type for variants with data) names every allowed value in schema order:
//!   `"approve" is not one of "accept", "acceptForSession", "decline" or "cancel"` (plus
//!   `or an object` when a branch takes an object); jsonschema names at most three values of an
//!   enum, and only the first branch of such a union;
//! - any other failed `oneOf`/`anyOf` is explained by the branch the value most likely meant
//!   (the one whose tag matched, else the one with the fewest complaints), not by all of them.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

/// One thing wrong with a value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaIssue {
    /// JSON pointer of the offending value inside the checked value (`""` for the value itself).
    pub pointer: String,
    /// What is wrong with it.
    pub message: String,
}

impl SchemaIssue {
    /// An issue at `pointer` saying `message`.
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

/// How much is reported about one value: what is echoed back stays small whatever the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct IssueLimits {
    /// At most this many issues.
    pub max_issues: usize,
    /// At most this many bytes of a pointer or message (cut on a character boundary and marked
    /// `… (truncated)`).
    pub max_text: usize,
}

impl IssueLimits {
    /// At most `max_issues` issues of at most `max_text` bytes each.
    pub fn new(max_issues: usize, max_text: usize) -> Self {
        Self {
            max_issues,
            max_text,
        }
    }
}

/// At most this many bytes of the offending value are quoted in a choices message (the list
/// itself comes from the schema and is kept whole).
const MAX_QUOTED: usize = 120;

/// What is wrong with `instance` according to `validator`, most specific first; empty when it
/// is valid. A failure jsonschema reports without any detail becomes one issue at `""` saying
/// `does not match the schema`.
pub fn schema_issues(
    validator: &Validator,
    instance: &Value,
    limits: IssueLimits,
) -> Vec<SchemaIssue> {
    if validator.is_valid(instance) {
        return Vec::new();
    }
    let mut issues = Vec::new();
    for error in validator.iter_errors(instance) {
        collect(&error, limits, &mut issues);
        if issues.len() >= limits.max_issues {
            break;
        }
    }
    issues.truncate(limits.max_issues.max(1));
    if issues.is_empty() {
        issues.push(SchemaIssue::new("", "does not match the schema"));
    }
    issues
}

/// Records an error: a value outside a closed set of choices with every allowed value
/// ([`choices_message`]); for another failed `oneOf`/`anyOf`, descends into the branch the
/// value most likely meant.
fn collect(error: &ValidationError<'_>, limits: IssueLimits, out: &mut Vec<SchemaIssue>) {
    let base = error.instance_path().as_str();
    let pointer = || truncated(base.to_owned(), limits.max_text);
    if let Some(message) = choices_message(error) {
        out.push(SchemaIssue::new(pointer(), message));
        return;
    }
    let context = match error.kind() {
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            Some(context)
        }
        _ => None,
    };
    if let Some(branches) = context {
        let best = branches
            .iter()
            .filter(|b| !b.is_empty())
            .min_by_key(|branch| {
                let tag_mismatch = branch.iter().any(|e| {
                    let path = e.instance_path().as_str();
                    path.len() > base.len()
                        && path.starts_with(base)
                        && !path[base.len() + 1..].contains('/')
                        && matches!(
                            e.kind(),
                            ValidationErrorKind::Constant { .. } | ValidationErrorKind::Enum { .. }
                        )
                });
                (tag_mismatch, branch.len())
            });
        if let Some(branch) = best {
            for inner in branch {
                collect(inner, limits, out);
            }
            return;
        }
    }
    out.push(SchemaIssue::new(
        pointer(),
        truncated(error.to_string(), limits.max_text),
    ));
}

/// The full message when `error` is a value outside a closed set of choices; `None` for any
/// other error (which then keeps jsonschema's own message or the branch descent).
pub fn choices_message(error: &ValidationError<'_>) -> Option<String> {
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

/// `text` cut to at most `max` bytes (on a character boundary), marked when cut.
fn truncated(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("… (truncated)");
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn first_message(schema: Value, instance: Value) -> Option<String> {
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let error = validator.iter_errors(&instance).next().expect("invalid");
        choices_message(&error)
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

    #[test]
    fn a_tagged_union_is_explained_by_the_branch_whose_tag_matched() {
        let schema = json!({ "oneOf": [
            { "type": "object", "required": ["type", "text"],
              "properties": { "type": { "const": "text" }, "text": { "type": "string" } } },
            { "type": "object", "required": ["type", "url"],
              "properties": { "type": { "const": "image" }, "url": { "type": "string" } } },
        ]});
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let issues = schema_issues(
            &validator,
            &json!({ "type": "text", "text": 7 }),
            IssueLimits::new(8, 400),
        );
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].pointer, "/text");
    }

    #[test]
    fn limits_bound_the_issues_and_their_text() {
        let schema = json!({ "type": "object", "properties": {
            "a": { "type": "string" }, "b": { "type": "string" }, "c": { "type": "string" } } });
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let huge = "x".repeat(10_000);
        let instance = json!({ "a": [huge], "b": 1, "c": 2 });
        let issues = schema_issues(&validator, &instance, IssueLimits::new(2, 100));
        assert_eq!(issues.len(), 2, "{issues:?}");
        let long = issues.iter().find(|i| i.pointer == "/a").expect("/a");
        assert!(long.message.len() < 120, "{}", long.message.len());
        assert!(long.message.ends_with("(truncated)"), "{}", long.message);
        assert!(
            schema_issues(&validator, &json!({ "a": "ok" }), IssueLimits::new(2, 100)).is_empty()
        );
    }
}
