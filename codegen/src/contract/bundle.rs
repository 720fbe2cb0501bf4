//! A pinned schema bundle, read for checking: the method envelopes it declares (`x-method`,
//! `x-direction`) and a validator per definition, compiled the first time it is used.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use agentwire_protocol::schema_issues::{IssueLimits, schema_issues};
use jsonschema::{Registry, Validator};
use serde_json::{Value, json};

/// The URI the bundle is registered under; definitions are compiled by reference to it.
const BUNDLE_URI: &str = "urn:agentwire:contract-bundle";

/// At most this many problems are reported for one message.
const MAX_ISSUES: usize = 8;

/// At most this many bytes of a reason or pointer are kept (reasons quote the offending value).
/// The wording is `agentwire_protocol::schema_issues`, shared with the runtime's -32602 details.
const MAX_REASON: usize = 400;

/// Which kind of message a method's envelope describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A request from the client.
    ClientRequest,
    /// A notification from the client.
    ClientNotification,
    /// A request from the server.
    ServerRequest,
    /// A notification from the server.
    ServerNotification,
}

impl Kind {
    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "clientRequest" => Self::ClientRequest,
            "clientNotification" => Self::ClientNotification,
            "serverRequest" => Self::ServerRequest,
            "serverNotification" => Self::ServerNotification,
            _ => return None,
        })
    }
}

/// What a bundle declares about one method.
#[derive(Debug, Clone, Default)]
pub struct MethodSchemas {
    /// The definition of the request or notification envelope.
    pub envelope: Option<String>,
    /// The definition of the success answer's envelope (requests only).
    pub response: Option<String>,
    /// `x-experimental` on its envelope.
    pub experimental: bool,
}

/// One thing wrong with a message, by JSON pointer into the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// Where, inside the whole message (`/params/cwd`, `/result/thread/id`, `""` for the message).
    pub pointer: String,
    /// What is wrong.
    pub reason: String,
}

/// One surface (stable or experimental) of a pinned version.
pub struct SchemaSet {
    registry: Registry<'static>,
    definitions: HashSet<String>,
    methods: HashMap<(Kind, String), MethodSchemas>,
    compiled: Mutex<HashMap<String, Arc<Result<Validator, String>>>>,
    version: Option<String>,
}

impl SchemaSet {
    /// Reads a bundle (`agentwire_app_server_protocol.schemas.json`). With `experimental` (the
    /// experimental bundle of the same version), every property that only the experimental
    /// bundle declares, at any depth of a definition present in both, becomes `null`-only here:
    /// the stable surface uses it so that an experimental field is caught instead of passing as
    /// an undeclared extra member.
    pub fn new(text: &str, experimental: Option<&str>) -> Result<Self, String> {
        let mut bundle: Value =
            serde_json::from_str(text).map_err(|e| format!("the bundle is not JSON: {e}"))?;
        let version = bundle
            .get("x-protocol-version")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let wider: Option<Value> = match experimental {
            Some(text) => Some(
                serde_json::from_str(text)
                    .map_err(|e| format!("the experimental bundle is not JSON: {e}"))?,
            ),
            None => None,
        };
        let Some(definitions) = bundle.get_mut("definitions").and_then(Value::as_object_mut) else {
            return Err("the bundle has no `definitions` object".into());
        };
        if let Some(wider) = wider.as_ref().and_then(|w| w.get("definitions")) {
            for (name, schema) in definitions.iter_mut() {
                if let Some(other) = wider.get(name) {
                    null_missing(schema, other);
                }
            }
        }
        let mut methods: HashMap<(Kind, String), MethodSchemas> = HashMap::new();
        for (name, schema) in definitions.iter() {
            let (Some(method), Some(kind)) = (
                schema.get("x-method").and_then(Value::as_str),
                schema
                    .get("x-direction")
                    .and_then(Value::as_str)
                    .and_then(Kind::parse),
            ) else {
                continue;
            };
            let entry = methods.entry((kind, method.to_owned())).or_default();
            if name.ends_with("ResponseEnvelope") {
                entry.response = Some(name.clone());
            } else {
                entry.envelope = Some(name.clone());
                entry.experimental = schema
                    .get("x-experimental")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
            }
        }
        let names = definitions.keys().cloned().collect();
        let registry = Registry::new()
            .add(BUNDLE_URI, bundle)
            .and_then(|b| b.prepare())
            .map_err(|e| format!("the bundle cannot be registered: {e}"))?;
        Ok(Self {
            registry,
            definitions: names,
            methods,
            compiled: Mutex::new(HashMap::new()),
            version,
        })
    }

    /// `x-protocol-version`.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// What the bundle declares for `method` as a message of `kind`.
    pub fn method(&self, kind: Kind, method: &str) -> Option<&MethodSchemas> {
        self.methods.get(&(kind, method.to_owned()))
    }

    /// Whether the bundle has a definition named `name`.
    pub fn has(&self, name: &str) -> bool {
        self.definitions.contains(name)
    }

    /// Checks `message` against definition `name`; the problems found, most specific first.
    pub fn check(&self, name: &str, message: &Value) -> Vec<Issue> {
        let compiled = {
            let mut cache = self.compiled.lock().unwrap_or_else(PoisonError::into_inner);
            cache
                .entry(name.to_owned())
                .or_insert_with(|| Arc::new(self.compile(name)))
                .clone()
        };
        let validator = match compiled.as_ref() {
            Ok(v) => v,
            Err(e) => {
                return vec![Issue {
                    pointer: String::new(),
                    reason: format!("the schema {name} does not compile: {e}"),
                }];
            }
        };
        schema_issues(validator, message, IssueLimits::new(MAX_ISSUES, MAX_REASON))
            .into_iter()
            .map(|issue| Issue {
                pointer: issue.pointer,
                reason: issue.message,
            })
            .collect()
    }

    fn compile(&self, name: &str) -> Result<Validator, String> {
        if !self.has(name) {
            return Err(format!("no definition {name}"));
        }
        let reference = json!({ "$ref": format!("{BUNDLE_URI}#/definitions/{name}") });
        jsonschema::options()
            .with_registry(&self.registry)
            .should_validate_formats(false)
            .build(&reference)
            .map_err(|e| e.to_string())
    }
}

/// Makes every property that `wider` declares and `schema` does not `null`-only in `schema`,
/// walking properties, items and same-length `oneOf`/`anyOf`/`allOf` lists in step.
fn null_missing(schema: &mut Value, wider: &Value) {
    let (Some(schema), Some(wider)) = (schema.as_object_mut(), wider.as_object()) else {
        return;
    };
    if let (Some(props), Some(wider_props)) = (
        schema.get_mut("properties").and_then(Value::as_object_mut),
        wider.get("properties").and_then(Value::as_object),
    ) {
        for (name, wider_prop) in wider_props {
            match props.get_mut(name) {
                Some(prop) => null_missing(prop, wider_prop),
                None => {
                    props.insert(
                        name.clone(),
                        json!({ "type": "null", "description": "experimental: needs `experimentalApi`" }),
                    );
                }
            }
        }
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let (Some(list), Some(wider_list)) = (
            schema.get_mut(key).and_then(Value::as_array_mut),
            wider.get(key).and_then(Value::as_array),
        ) && list.len() == wider_list.len()
        {
            for (item, wider_item) in list.iter_mut().zip(wider_list) {
                null_missing(item, wider_item);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let (Some(inner), Some(wider_inner)) = (schema.get_mut(key), wider.get(key)) {
            null_missing(inner, wider_inner);
        }
    }
}
