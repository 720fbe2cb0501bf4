//! Reading an incoming message's envelope: the members the runtime routes on.
//!
//! A message is read in one pass into [`Envelope`]: `id`, `method`, `params`, `result` and
//! `error` become values, every other member (`jsonrpc`, anything unknown) is checked and
//! dropped without being stored. No map of the message's members is built and no member name
//! is copied, which for a cheap request was the largest single cost the runtime had.
//!
//! What a message means does not depend on how it is read; it is exactly what parsing it into
//! a `serde_json::Value` object would give:
//! - Text that is not JSON, or nests deeper than the parser allows anywhere (in an unknown
//!   member too), → -32700 `Parse error: …`.
//! - JSON that is not an object → -32600 `Invalid request: expected a JSON object`.
//! - A member given twice counts once, the last time.

use std::fmt;

use agentwire_protocol::RequestId;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::error::Category;

/// The members of a message the runtime routes on; `None` when absent (a member present with
/// `null` is `Some(Value::Null)`).
#[derive(Debug, Default)]
pub struct Envelope {
    /// `id`: a request's or a response's.
    pub id: Option<Value>,
    /// `method`: a request's or a notification's.
    pub method: Option<Value>,
    /// `params`.
    pub params: Option<Value>,
    /// `result`: a response's.
    pub result: Option<Value>,
    /// `error`: an error response's.
    pub error: Option<Value>,
}

/// Why a message could not be read.
#[derive(Debug)]
pub enum Unreadable {
    /// Not JSON text, or nested deeper than the parser allows: -32700.
    NotJson(serde_json::Error),
    /// JSON, but not an object: -32600.
    NotAnObject,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::NotJson(error) => write!(f, "Parse error: {error}"),
            Unreadable::NotAnObject => f.write_str("Invalid request: expected a JSON object"),
        }
    }
}

impl Envelope {
    /// Reads the envelope of one message.
    pub fn read(bytes: &[u8]) -> Result<Self, Unreadable> {
        serde_json::from_slice(bytes).map_err(|error| match error.classify() {
            // The text was not an object. Whether it is JSON at all (by the parser's own
            // measure, depth included) decides the error: `[1,2` is not JSON, `[1,2]` is.
            Category::Data => match serde_json::from_slice::<Value>(bytes) {
                Ok(_) => Unreadable::NotAnObject,
                Err(error) => Unreadable::NotJson(error),
            },
            Category::Io | Category::Syntax | Category::Eof => Unreadable::NotJson(error),
        })
    }
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(name) = map.next_key::<MemberName>()? {
            let member = match name {
                MemberName::Id => &mut envelope.id,
                MemberName::Method => &mut envelope.method,
                MemberName::Params => &mut envelope.params,
                MemberName::Result => &mut envelope.result,
                MemberName::Error => &mut envelope.error,
                MemberName::Other => {
                    map.next_value::<Skipped>()?;
                    continue;
                }
            };
            *member = Some(map.next_value()?);
        }
        Ok(envelope)
    }
}

/// A member's name, matched without copying it (unless it has escapes).
enum MemberName {
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for MemberName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(MemberNameVisitor)
    }
}

struct MemberNameVisitor;

impl Visitor<'_> for MemberNameVisitor {
    type Value = MemberName;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, name: &str) -> Result<MemberName, E> {
        Ok(match name {
            "id" => MemberName::Id,
            "method" => MemberName::Method,
            "params" => MemberName::Params,
            "result" => MemberName::Result,
            "error" => MemberName::Error,
            _ => MemberName::Other,
        })
    }
}

/// A value read and dropped. Read through `deserialize_any`, so the parser's depth limit
/// applies inside it as anywhere else (`IgnoredAny` skips without that limit).
struct Skipped;

impl<'de> Deserialize<'de> for Skipped {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SkippedVisitor)
    }
}

struct SkippedVisitor;

impl<'de> Visitor<'de> for SkippedVisitor {
    type Value = Skipped;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_str<E>(self, _: &str) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_unit<E>(self) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skipped, A::Error> {
        while seq.next_element::<Skipped>()?.is_some() {}
        Ok(Skipped)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skipped, A::Error> {
        while map.next_entry::<Skipped, Skipped>()?.is_some() {}
        Ok(Skipped)
    }
}

/// The id of a message, read the way `RequestId`'s untagged `Deserialize` reads it (a string,
/// or a number that fits an `i64`), without going through serde: for an integer id serde tries
/// the string variant first and builds an error message, on every request.
pub fn request_id(raw: Value) -> Option<RequestId> {
    match raw {
        Value::String(id) => Some(RequestId::String(id)),
        Value::Number(number) => number.as_i64().map(RequestId::Integer),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What the envelope of `text` would be, read by parsing all of it into a `Value`.
    fn by_value(text: &str) -> Result<Option<[Option<Value>; 5]>, ()> {
        match serde_json::from_str::<Value>(text) {
            Err(_) => Err(()),
            Ok(Value::Object(mut object)) => Ok(Some(
                ["id", "method", "params", "result", "error"].map(|name| object.remove(name)),
            )),
            Ok(_) => Ok(None),
        }
    }

    fn by_envelope(text: &str) -> Result<Option<[Option<Value>; 5]>, ()> {
        match Envelope::read(text.as_bytes()) {
            Ok(e) => Ok(Some([e.id, e.method, e.params, e.result, e.error])),
            Err(Unreadable::NotAnObject) => Ok(None),
            Err(Unreadable::NotJson(_)) => Err(()),
        }
    }

    #[test]
    fn reads_what_parsing_into_a_value_reads() {
        let deep = |depth: usize| {
            format!(
                r#"{{"id":1,"x":{}0{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        let texts = [
            r#"{"jsonrpc":"2.0","id":7,"method":"thread/list","params":{"limit":2}}"#.to_owned(),
            r#"{"id":"a","result":{"decision":"accept"},"x":[1,{"y":null}],"z":-1.5e3}"#.to_owned(),
            r#"{"id":null,"method":"a","method":"b","error":{"code":1}}"#.to_owned(),
            r#"{"i\u0064":1,"method":"thread\/list","params":null}"#.to_owned(),
            r#"{"id":{},"method":7,"params":[],"":true,"id ":false}"#.to_owned(),
            "{}".to_owned(),
            " \t{ } ".to_owned(),
            "[1,2,3]".to_owned(),
            "\"just a string\"".to_owned(),
            "null".to_owned(),
            "5".to_owned(),
            "[1,2".to_owned(),
            "{\"id\":1}}".to_owned(),
            "{\"id\":1,}".to_owned(),
            "\u{0}".to_owned(),
            "".to_owned(),
            deep(100),
            deep(126),
            deep(127),
            deep(128),
            deep(10_000),
            "[".repeat(10_000),
            format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
        ];
        for text in &texts {
            assert_eq!(by_envelope(text), by_value(text), "{text:.80}");
        }
    }

    #[test]
    fn errors_say_what_was_wrong() {
        let not_json = Envelope::read(b"{\"id\":1").expect_err("not JSON");
        assert!(
            not_json
                .to_string()
                .starts_with("Parse error: EOF while parsing"),
            "{not_json}"
        );
        let not_object = Envelope::read(b"[1]").expect_err("not an object");
        assert_eq!(
            not_object.to_string(),
            "Invalid request: expected a JSON object"
        );
    }

    #[test]
    fn request_ids_are_read_like_serde_reads_them() {
        for raw in [
            json!(0),
            json!(-7),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(1.0),
            json!(1.5),
            json!(""),
            json!("a-1"),
            json!(null),
            json!(true),
            json!([1]),
            json!({ "id": 1 }),
        ] {
            let by_serde = serde_json::from_value::<RequestId>(raw.clone()).ok();
            assert_eq!(request_id(raw.clone()), by_serde, "{raw}");
        }
    }
}
