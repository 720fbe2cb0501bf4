//! Validation of incoming params against the method's JSON Schema.
//!
//! The schemas come from `generated/rust/validators.rs` (written by `agentwire-codegen`): one
//! standalone schema per params type. Each is compiled with the `jsonschema` crate the first
//! time its method is called, and kept.

use std::collections::HashMap;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::{Value, json};

mod generated {
    include!("../../generated/rust/validators.rs");
}

pub use generated::{EXPERIMENTAL_PARAMS, PARAMS_SCHEMAS};

/// The first experimental params member of `method` that `params` sets (to anything but `null`),
/// as `method` plus the member's pointer, according to `table` (normally [`EXPERIMENTAL_PARAMS`]).
pub fn experimental_member_used(
    table: &[(&str, &str)],
    method: &str,
    params: Option<&Value>,
) -> Option<String> {
    let params = params?;
    table
        .iter()
        .filter(|(m, _)| *m == method)
        .find(|(_, pointer)| params.pointer(pointer).is_some_and(|v| !v.is_null()))
        .map(|(_, pointer)| format!("{method}{pointer}"))
}

/// At most this many problems are reported for one request.
const MAX_REPORTED: usize = 16;

/// At most this many bytes of a pointer or message are echoed back.
const MAX_ECHOED: usize = 512;

/// One thing wrong with a request's params.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamsIssue {
    /// JSON pointer of the offending value inside `params` (`""` for `params` itself).
    pub pointer: String,
    /// What is wrong with it.
    pub message: String,
}

/// The params of a request do not match the method's schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamsRejected {
    /// What is wrong, most specific first.
    pub issues: Vec<ParamsIssue>,
}

impl ParamsRejected {
    fn single(pointer: &str, message: impl Into<String>) -> Self {
        Self {
            issues: vec![ParamsIssue {
                pointer: pointer.to_owned(),
                message: message.into(),
            }],
        }
    }

    /// A one-line summary: the first issue with its pointer.
    pub fn summary(&self) -> String {
        match self.issues.first() {
            Some(issue) if issue.pointer.is_empty() => issue.message.clone(),
            Some(issue) => format!("{}: {}", issue.pointer, issue.message),
            None => "invalid params".to_owned(),
        }
    }

    /// The error `data`: every issue with its pointer.
    pub fn to_data(&self, method: &str) -> Value {
        let issues: Vec<Value> = self
            .issues
            .iter()
            .map(|i| json!({ "pointer": i.pointer, "message": i.message }))
            .collect();
        json!({ "method": method, "errors": issues })
    }
}

struct Entry {
    schema: &'static str,
    optional: bool,
    compiled: OnceLock<Result<Validator, String>>,
}

/// The params validators of every method, compiled on first use.
pub struct Validators {
    entries: HashMap<&'static str, Entry>,
}

impl Default for Validators {
    fn default() -> Self {
        Self::new()
    }
}

impl Validators {
    /// Validators for every method of the generated table (nothing is compiled yet).
    pub fn new() -> Self {
        let entries = PARAMS_SCHEMAS
            .iter()
            .map(|(method, schema, optional)| {
                (
                    *method,
                    Entry {
                        schema,
                        optional: *optional,
                        compiled: OnceLock::new(),
                    },
                )
            })
            .collect();
        Self { entries }
    }

    /// Compiles every validator now (for start-up checks and benchmarks).
    pub fn compile_all(&self) -> Result<(), String> {
        for (method, entry) in &self.entries {
            compiled(entry).map_err(|e| format!("{method}: {e}"))?;
        }
        Ok(())
    }

    /// Checks the params of `method`; methods without params accept anything.
    pub fn check(&self, method: &str, params: Option<&Value>) -> Result<(), ParamsRejected> {
        let Some(entry) = self.entries.get(method) else {
            return Ok(());
        };
        let params = match params {
            None | Some(Value::Null) if entry.optional => return Ok(()),
            None => return Err(ParamsRejected::single("", "missing `params`")),
            Some(params) => params,
        };
        let validator = compiled(entry)
            .map_err(|e| ParamsRejected::single("", format!("schema error: {e}")))?;
        if validator.is_valid(params) {
            return Ok(());
        }
        let mut issues = Vec::new();
        for error in validator.iter_errors(params) {
            collect(&error, &mut issues);
            if issues.len() >= MAX_REPORTED {
                break;
            }
        }
        issues.truncate(MAX_REPORTED);
        if issues.is_empty() {
            issues.push(ParamsIssue {
                pointer: String::new(),
                message: "does not match the schema".into(),
            });
        }
        Err(ParamsRejected { issues })
    }
}

fn compiled(entry: &Entry) -> Result<&Validator, String> {
    entry
        .compiled
        .get_or_init(|| {
            let schema: Value = serde_json::from_str(entry.schema).map_err(|e| e.to_string())?;
            jsonschema::options()
                .should_validate_formats(false)
                .build(&schema)
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Records an error: a value outside a closed set of choices with every allowed value
/// ([`choices_message`]); for another failed `oneOf`/`anyOf`, descends into the branch the
/// value most likely meant (the one whose tag matched, else the one with the fewest complaints).
fn collect(error: &ValidationError<'_>, out: &mut Vec<ParamsIssue>) {
    let base = error.instance_path().as_str();
    if let Some(message) = choices_message(error) {
        out.push(ParamsIssue {
            pointer: truncated(base.to_owned()),
            message,
        });
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
                collect(inner, out);
            }
            return;
        }
    }
    out.push(ParamsIssue {
        pointer: truncated(base.to_owned()),
        message: truncated(error.to_string()),
    });
}

/// The message for a value outside a closed set of choices — an `enum`, or a `oneOf`/`anyOf`
/// of constants (how schemars writes an enum with documented unit variants), possibly beside
/// branches of another type (variants with data) — naming every allowed value in schema order:
/// `"approve" is not one of "accept", "acceptForSession", "decline" or "cancel"` (plus `or an
/// object` when a branch takes an object). jsonschema itself names at most three values of an
/// enum, and only the first branch of such a union. `None` for any other error. Worded as
/// `contract check` words it (`codegen/src/contract/choices.rs`).
fn choices_message(error: &ValidationError<'_>) -> Option<String> {
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
    gather_choices(error, base, &mut values, &mut shapes)?;
    if values.is_empty() {
        return None;
    }
    let mut listed: Vec<String> = Vec::new();
    for item in values.iter().map(Value::to_string).chain(shapes) {
        if !listed.contains(&item) {
            listed.push(item);
        }
    }
    let list = match listed.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => return None,
    };
    let value = truncated_to(error.instance().to_string(), 120);
    Some(format!("{value} is not one of {list}"))
}

/// Adds what `error` allows (enum and const values; for a union, what each branch allows,
/// nested unions included; a branch with no constants adds the type it wants, `an object`).
/// `Some(true)` when values were found, `None` for an error of another kind.
fn gather_choices(
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
                if branch.is_empty() || branch.iter().any(|e| e.instance_path().as_str() != base) {
                    return None;
                }
                let mut constants = false;
                let mut types = Vec::new();
                for inner in branch {
                    match inner.kind() {
                        ValidationErrorKind::Type {
                            kind: jsonschema::error::TypeKind::Single(kind),
                        } => types.push(match kind.to_string().as_str() {
                            k @ ("array" | "integer" | "object") => format!("an {k}"),
                            "null" => "null".to_owned(),
                            k => format!("a {k}"),
                        }),
                        _ => constants |= gather_choices(inner, base, values, shapes)?,
                    }
                }
                if !constants {
                    shapes.extend(types);
                }
                found |= constants;
            }
            Some(found)
        }
        _ => None,
    }
}

/// Error text quotes the offending value; keep what is echoed back small whatever the input.
fn truncated(text: String) -> String {
    truncated_to(text, MAX_ECHOED)
}

/// `text` cut to at most `max` bytes (on a character boundary), marked when cut.
fn truncated_to(mut text: String, max: usize) -> String {
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
    use super::*;

    #[test]
    fn every_generated_schema_compiles() {
        Validators::new()
            .compile_all()
            .expect("all params schemas compile");
    }

    #[test]
    fn wrong_types_name_the_pointer() {
        let validators = Validators::new();
        let rejected = validators
            .check("thread/start", Some(&json!({ "cwd": 42 })))
            .expect_err("cwd must be a string");
        assert_eq!(rejected.issues[0].pointer, "/cwd");
        assert!(rejected.issues[0].message.contains("42"), "{rejected:?}");
    }

    #[test]
    fn a_value_outside_a_set_of_choices_names_every_allowed_value() {
        let validators = Validators::new();
        let rejected = validators
            .check(
                "thread/start",
                Some(&json!({ "approvalPolicy": "sometimes" })),
            )
            .expect_err("not an approval policy");
        assert_eq!(rejected.issues.len(), 1, "{rejected:?}");
        assert_eq!(rejected.issues[0].pointer, "/approvalPolicy");
        assert_eq!(
            rejected.issues[0].message,
            r#""sometimes" is not one of "untrusted", "on-request", "never", an object or null"#
        );
    }

    #[test]
    fn tagged_union_errors_come_from_the_matching_branch() {
        let validators = Validators::new();
        let params = json!({ "threadId": "t", "input": [{ "type": "text", "text": 7 }] });
        let rejected = validators
            .check("turn/start", Some(&params))
            .expect_err("text must be a string");
        assert!(
            rejected.issues.iter().any(|i| i.pointer == "/input/0/text"),
            "{rejected:?}"
        );
    }

    #[test]
    fn experimental_members_are_detected_when_set() {
        let table = [("thread/start", "/cwd"), ("thread/start", "/config/deep")];
        let used = |params: Value| experimental_member_used(&table, "thread/start", Some(&params));
        assert_eq!(
            used(json!({ "cwd": "/tmp" })),
            Some("thread/start/cwd".to_owned())
        );
        assert_eq!(
            used(json!({ "config": { "deep": 1 } })),
            Some("thread/start/config/deep".to_owned())
        );
        assert_eq!(used(json!({ "cwd": null })), None);
        assert_eq!(used(json!({ "model": "m" })), None);
        assert_eq!(
            experimental_member_used(&table, "thread/list", Some(&json!({ "cwd": "/" }))),
            None
        );
    }

    #[test]
    fn echoed_values_are_truncated() {
        let validators = Validators::new();
        let huge = "x".repeat(100_000);
        let rejected = validators
            .check("thread/start", Some(&json!({ "cwd": [huge] })))
            .expect_err("cwd must be a string");
        assert!(
            rejected.issues[0].message.len() < 600,
            "{}",
            rejected.issues[0].message.len()
        );
        assert!(rejected.issues[0].message.ends_with("(truncated)"));
    }

    #[test]
    fn missing_and_optional_params() {
        let validators = Validators::new();
        assert!(validators.check("thread/list", None).is_err());
        assert!(validators.check("thread/list", Some(&json!({}))).is_ok());
        assert!(validators.check("account/rateLimits/read", None).is_ok());
        assert!(validators.check("account/logout", None).is_ok());
    }
}
