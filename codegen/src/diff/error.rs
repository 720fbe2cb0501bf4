//! Why two documents could not be compared.
//!
//! Every location names the bundle (`old bundle` or `new bundle`) and a JSON pointer into it, in
//! the `#/definitions/...` form that `$ref` uses.

use serde_json::Value;

/// A bundle that cannot be diffed, with what is wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    /// The document is not a schema bundle at all (not an object, no `definitions`, no methods).
    #[error("not a schema bundle: {0}")]
    NotABundle(String),
    /// A local `$ref` whose target does not exist.
    #[error(
        "dangling `$ref` \"{reference}\" in {location}: that bundle has nothing at this pointer"
    )]
    BadReference {
        /// The `$ref` value as written.
        reference: String,
        /// Where the `$ref` is.
        location: String,
    },
    /// A `$ref` that does not point into the same document (`#/...`).
    #[error(
        "unsupported `$ref` \"{reference}\" in {location}: only references into the same bundle (\"#/definitions/...\") can be compared"
    )]
    UnsupportedReference {
        /// The `$ref` value as written.
        reference: String,
        /// Where the `$ref` is.
        location: String,
    },
    /// A chain of `$ref`s (and single-part `allOf`s) that leads back to itself, or passes through
    /// more than 64 of them, without a schema in between.
    #[error(
        "`$ref` \"{reference}\" in {location} leads back to itself through other `$ref`s (or through more than 64 of them)"
    )]
    RefCycle {
        /// The `$ref` that closes the cycle.
        reference: String,
        /// Where the `$ref` is.
        location: String,
    },
    /// A member that has the wrong JSON type (a non-object where a schema is required, a
    /// `required` that is not a list of strings, an unknown `x-direction`, ...).
    #[error("{location}: expected {expected}, found {found}")]
    Malformed {
        /// Where the bad member is.
        location: String,
        /// What the bundle format requires there.
        expected: &'static str,
        /// What is there instead.
        found: String,
    },
    /// Two envelopes of the same kind declare the same method and direction.
    #[error(
        "method `{method}` ({direction}) is declared twice in the {side} bundle: at {first} and at {second}"
    )]
    DuplicateMethod {
        /// The `x-method`.
        method: String,
        /// The `x-direction`.
        direction: String,
        /// `old` or `new`.
        side: &'static str,
        /// The first envelope.
        first: String,
        /// The second envelope.
        second: String,
    },
    /// A request envelope without its response envelope, or the other way round.
    #[error(
        "{location}: `{method}` has no matching {missing} with the same `x-method` and `x-direction`"
    )]
    UnpairedEnvelope {
        /// The `x-method`.
        method: String,
        /// The envelope that has no partner.
        location: String,
        /// What is missing: the response envelope or the request envelope.
        missing: &'static str,
    },
    /// Schemas nested (through properties, items, branches and `$ref`s) deeper than the
    /// classifier follows.
    #[error("{location}: schemas nest more than {limit} levels deep; the classifier stops there")]
    TooDeep {
        /// The schema at which the limit was reached.
        location: String,
        /// The nesting limit.
        limit: usize,
    },
}

/// How a JSON value looks, for "found ..." in error messages (never the whole of a big value).
pub(super) fn describe_json(value: &Value) -> String {
    const SHOWN: usize = 40;
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(text) if text.chars().count() > SHOWN => {
            format!(
                "the string \"{}...\"",
                text.chars().take(SHOWN).collect::<String>()
            )
        }
        Value::String(text) => format!("the string \"{text}\""),
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(map) if map.is_empty() => "an empty object".to_owned(),
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().take(4).map(String::as_str).collect();
            let more = if map.len() > keys.len() { ", ..." } else { "" };
            format!("an object with the keys {}{more}", keys.join(", "))
        }
    }
}
