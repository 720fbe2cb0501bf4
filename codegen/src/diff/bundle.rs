//! Reading a bundle: its version, its methods (from the envelopes that carry `x-method`), the
//! definitions of its namespaces, and `$ref` resolution.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

use super::error::{DiffError, describe_json};
use super::rules::Position;

/// The definitions namespaces that hold types but no methods, compared definition by
/// definition (`#/definitions/<namespace>/<Type>`).
pub(super) const NAMESPACES: [&str; 1] = ["mcp"];

/// Which of the two bundles a value comes from, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// The first argument of the diff.
    Old,
    /// The second argument of the diff.
    New,
}

impl Side {
    /// `old` or `new`.
    pub(super) fn name(self) -> &'static str {
        match self {
            Side::Old => "old",
            Side::New => "new",
        }
    }
}

/// Who sends a method's message, as written in `x-direction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Direction {
    /// `clientRequest`: the client asks, the server answers.
    ClientRequest,
    /// `serverRequest`: the server asks, the client answers.
    ServerRequest,
    /// `serverNotification`: the server tells, nobody answers.
    ServerNotification,
    /// `clientNotification`: the client tells, nobody answers.
    ClientNotification,
}

impl Direction {
    const ALL: [Direction; 4] = [
        Direction::ClientRequest,
        Direction::ServerRequest,
        Direction::ServerNotification,
        Direction::ClientNotification,
    ];

    /// The `x-direction` value.
    pub(super) fn wire_name(self) -> &'static str {
        match self {
            Direction::ClientRequest => "clientRequest",
            Direction::ServerRequest => "serverRequest",
            Direction::ServerNotification => "serverNotification",
            Direction::ClientNotification => "clientNotification",
        }
    }

    fn from_wire_name(name: &str) -> Option<Direction> {
        Direction::ALL.into_iter().find(|d| d.wire_name() == name)
    }

    /// Whether the method expects an answer (and so has a response envelope).
    pub(super) fn is_request(self) -> bool {
        matches!(self, Direction::ClientRequest | Direction::ServerRequest)
    }

    /// Which way the method's params travel.
    pub(super) fn params_position(self) -> Position {
        match self {
            Direction::ClientRequest | Direction::ClientNotification => Position::Input,
            Direction::ServerRequest | Direction::ServerNotification => Position::Output,
        }
    }

    /// Which way the method's result travels (requests only).
    pub(super) fn response_position(self) -> Position {
        match self {
            Direction::ServerRequest => Position::Input,
            _ => Position::Output,
        }
    }
}

impl fmt::Display for Direction {
    /// In words: `client request`, `server notification`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::ClientRequest => "client request",
            Direction::ServerRequest => "server request",
            Direction::ServerNotification => "server notification",
            Direction::ClientNotification => "client notification",
        })
    }
}

/// A schema inside a bundle together with its JSON pointer (`#/definitions/...`).
#[derive(Debug, Clone)]
pub(super) struct Sub<'a> {
    /// The schema.
    pub(super) value: &'a Value,
    /// Where it is, in `$ref` form.
    pub(super) ptr: String,
}

impl<'a> Sub<'a> {
    /// The member `key` of this schema (`ptr/key`).
    pub(super) fn child(&self, value: &'a Value, key: &str) -> Sub<'a> {
        Sub {
            value,
            ptr: format!("{}/{}", self.ptr, escape(key)),
        }
    }

    /// The member `keyword/key` of this schema, e.g. `properties/cwd`.
    pub(super) fn grandchild(&self, value: &'a Value, keyword: &str, key: &str) -> Sub<'a> {
        Sub {
            value,
            ptr: format!("{}/{}/{}", self.ptr, keyword, escape(key)),
        }
    }
}

/// Escapes one JSON-pointer segment (`~` as `~0`, `/` as `~1`).
pub(super) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// One method of a bundle, from its envelope(s).
#[derive(Debug, Clone)]
pub(super) struct MethodDecl<'a> {
    /// `x-experimental` of the request or notification envelope.
    pub(super) experimental: bool,
    /// The schema of `params` (usually a `$ref`); `None` when the envelope has no `params`.
    pub(super) params: Option<Sub<'a>>,
    /// Whether the envelope lists `params` in `required`.
    pub(super) params_required: bool,
    /// The schema of the response envelope's `result` (requests only).
    pub(super) response: Option<Sub<'a>>,
}

/// A parsed bundle.
#[derive(Debug)]
pub(super) struct Bundle<'a> {
    side: Side,
    root: &'a Value,
    /// `x-protocol-version`, when it is a string.
    pub(super) version: Option<String>,
    /// Methods by (`x-method`, `x-direction`).
    pub(super) methods: BTreeMap<(String, Direction), MethodDecl<'a>>,
    /// Definitions of each namespace in [`NAMESPACES`] that the bundle has, by name.
    pub(super) namespaces: BTreeMap<&'static str, BTreeMap<&'a str, Sub<'a>>>,
}

/// A request or notification envelope found while scanning, before pairing.
struct RequestEnvelope<'a> {
    ptr: String,
    experimental: bool,
    params: Option<Sub<'a>>,
    params_required: bool,
}

impl<'a> Bundle<'a> {
    /// Reads the methods and namespaces of `root`.
    pub(super) fn parse(root: &'a Value, side: Side) -> Result<Bundle<'a>, DiffError> {
        let Some(root_map) = root.as_object() else {
            return Err(DiffError::NotABundle(format!(
                "the {} bundle is {}, not a JSON object",
                side.name(),
                describe_json(root)
            )));
        };
        let Some(definitions) = root_map.get("definitions").and_then(Value::as_object) else {
            return Err(DiffError::NotABundle(format!(
                "the {} document has no `definitions` object; pass the bundle \
                 (agentwire_app_server_protocol.schemas.json), not a single-type schema or meta.json",
                side.name()
            )));
        };
        let mut bundle = Bundle {
            side,
            root,
            version: root_map
                .get("x-protocol-version")
                .and_then(Value::as_str)
                .map(str::to_owned),
            methods: BTreeMap::new(),
            namespaces: BTreeMap::new(),
        };
        bundle.read_methods(definitions)?;
        if bundle.methods.is_empty() {
            return Err(DiffError::NotABundle(format!(
                "the {} document declares no methods: none of its definitions carries `x-method`; \
                 is it an agentwire bundle?",
                side.name()
            )));
        }
        for namespace in NAMESPACES {
            let Some(value) = definitions.get(namespace) else {
                continue;
            };
            let ptr = format!("#/definitions/{}", escape(namespace));
            let Some(members) = value.as_object() else {
                return Err(bundle.malformed(&ptr, "an object of definitions", value));
            };
            let namespace_sub = Sub {
                value,
                ptr: ptr.clone(),
            };
            let defs = members
                .iter()
                .map(|(name, schema)| (name.as_str(), namespace_sub.child(schema, name)))
                .collect();
            bundle.namespaces.insert(namespace, defs);
        }
        bundle.check(definitions)?;
        Ok(bundle)
    }

    fn read_methods(&mut self, definitions: &'a Map<String, Value>) -> Result<(), DiffError> {
        let mut requests: BTreeMap<(String, Direction), RequestEnvelope<'a>> = BTreeMap::new();
        let mut responses: BTreeMap<(String, Direction), Sub<'a>> = BTreeMap::new();
        for (name, def) in definitions {
            let ptr = format!("#/definitions/{}", escape(name));
            let Some(def_map) = def.as_object() else {
                if def.is_boolean() {
                    continue;
                }
                return Err(self.malformed(&ptr, "a schema (a JSON object or boolean)", def));
            };
            let Some(method) = def_map.get("x-method") else {
                continue;
            };
            let Some(method) = method.as_str() else {
                return Err(self.malformed(&format!("{ptr}/x-method"), "a string", method));
            };
            let direction = match def_map.get("x-direction") {
                Some(Value::String(d)) => Direction::from_wire_name(d),
                _ => None,
            };
            let Some(direction) = direction else {
                let found = def_map.get("x-direction").unwrap_or(&Value::Null);
                return Err(self.malformed(
                    &format!("{ptr}/x-direction"),
                    "one of \"clientRequest\", \"serverRequest\", \"serverNotification\", \"clientNotification\"",
                    found,
                ));
            };
            let experimental = match def_map.get("x-experimental") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(self.malformed(
                        &format!("{ptr}/x-experimental"),
                        "a boolean",
                        other,
                    ));
                }
            };
            let properties = match def_map.get("properties") {
                Some(Value::Object(p)) => p,
                other => {
                    return Err(self.malformed(
                        &format!("{ptr}/properties"),
                        "the envelope's `properties` object",
                        other.unwrap_or(&Value::Null),
                    ));
                }
            };
            let envelope = Sub {
                value: def,
                ptr: ptr.clone(),
            };
            let key = (method.to_owned(), direction);
            if let Some(result) = properties.get("result") {
                if !direction.is_request() {
                    return Err(self.malformed(
                        &format!("{ptr}/properties/result"),
                        "no `result` in a notification envelope",
                        result,
                    ));
                }
                let result = envelope.grandchild(result, "properties", "result");
                if let Some(first) = responses.get(&key) {
                    return Err(self.duplicate(method, direction, &first.ptr, &ptr));
                }
                responses.insert(key, result);
            } else {
                let params_required = self.required_names(&envelope)?.contains(&"params");
                let params = properties
                    .get("params")
                    .map(|p| envelope.grandchild(p, "properties", "params"));
                if let Some(first) = requests.get(&key) {
                    return Err(self.duplicate(method, direction, &first.ptr, &ptr));
                }
                requests.insert(
                    key,
                    RequestEnvelope {
                        ptr,
                        experimental,
                        params,
                        params_required,
                    },
                );
            }
        }
        for (key, request) in requests {
            let response = responses.remove(&key);
            if key.1.is_request() && response.is_none() {
                return Err(DiffError::UnpairedEnvelope {
                    method: key.0,
                    location: self.at(&request.ptr),
                    missing: "response envelope (a definition with a `result` property)",
                });
            }
            self.methods.insert(
                key,
                MethodDecl {
                    experimental: request.experimental,
                    params: request.params,
                    params_required: request.params_required,
                    response,
                },
            );
        }
        if let Some(((method, _), orphan)) = responses.into_iter().next() {
            return Err(DiffError::UnpairedEnvelope {
                method,
                location: self.at(&orphan.ptr),
                missing: "request envelope",
            });
        }
        Ok(())
    }

    /// The names listed in a schema's `required` (none when it has no `required`).
    pub(super) fn required_names(&self, schema: &Sub<'a>) -> Result<Vec<&'a str>, DiffError> {
        let Some(required) = schema.value.get("required") else {
            return Ok(Vec::new());
        };
        let not_names = || {
            self.malformed(
                &format!("{}/required", schema.ptr),
                "an array of property names",
                required,
            )
        };
        let Some(items) = required.as_array() else {
            return Err(not_names());
        };
        items
            .iter()
            .map(|item| item.as_str().ok_or_else(not_names))
            .collect()
    }

    /// The schema a `$ref` written at `at` points to.
    pub(super) fn resolve(&self, reference: &str, at: &str) -> Result<Sub<'a>, DiffError> {
        let target = match reference.strip_prefix('#') {
            Some("") => Some(self.root),
            Some(pointer) if pointer.starts_with('/') => self.root.pointer(pointer),
            _ => {
                return Err(DiffError::UnsupportedReference {
                    reference: reference.to_owned(),
                    location: self.at(at),
                });
            }
        };
        match target {
            Some(value) => Ok(Sub {
                value,
                ptr: reference.to_owned(),
            }),
            None => Err(DiffError::BadReference {
                reference: reference.to_owned(),
                location: self.at(at),
            }),
        }
    }

    /// `old bundle at #/definitions/...`, for error messages.
    pub(super) fn at(&self, ptr: &str) -> String {
        format!("{} bundle at {}", self.side.name(), ptr)
    }

    /// A [`DiffError::Malformed`] for the value at `ptr`.
    pub(super) fn malformed(&self, ptr: &str, expected: &'static str, found: &Value) -> DiffError {
        DiffError::Malformed {
            location: self.at(ptr),
            expected,
            found: describe_json(found),
        }
    }

    fn duplicate(
        &self,
        method: &str,
        direction: Direction,
        first: &str,
        second: &str,
    ) -> DiffError {
        DiffError::DuplicateMethod {
            method: method.to_owned(),
            direction: direction.wire_name().to_owned(),
            side: self.side.name(),
            first: first.to_owned(),
            second: second.to_owned(),
        }
    }
}
