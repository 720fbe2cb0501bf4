//! Validation of incoming params against the method's JSON Schema.
//!
//! The schemas come from `generated/rust/validators.rs` (written by `agentwire-codegen`): one
//! standalone schema per params type. Each is compiled with the `jsonschema` crate the first
//! time its method is called, and kept. What is wrong with rejected params is worded by
//! `agentwire_protocol::schema_issues`, as `contract check` words it.

use std::collections::HashMap;
use std::sync::OnceLock;

use agentwire_protocol::schema_issues::{IssueLimits, schema_issues};
use jsonschema::Validator;
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
        let issues = schema_issues(
            validator,
            params,
            IssueLimits::new(MAX_REPORTED, MAX_ECHOED),
        );
        if issues.is_empty() {
            return Ok(());
        }
        Err(ParamsRejected {
            issues: issues
                .into_iter()
                .map(|issue| ParamsIssue {
                    pointer: issue.pointer,
                    message: issue.message,
                })
                .collect(),
        })
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
