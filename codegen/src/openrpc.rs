//! The OpenRPC document of a surface, derived from its flat JSON Schema bundle and `meta.json`:
//! for the current protocol those of the same walk as the bundle ([`files`]), for a pinned
//! release the ones checked in under `generated/versions/<X.Y.Z>/` ([`document_from_bundle`]).
//!
//! It declares OpenRPC [`OPENRPC_VERSION`] (1.2.6) unless asked for 1.3.2 ([`OpenrpcVersion`]):
//! the content is the same, and 1.2.6 is the newest version the stock `@open-rpc` tools accept
//! (their generator's client types, test-coverage's validator).
//!
//! Mapping (see `docs/openrpc.md`):
//! - every client request is a method. Our `params` member is one object, so methods use
//!   `paramStructure: "by-name"` and each property of the params object is one param (its schema
//!   the property's, `required` as in the object). A params type that is a union of objects
//!   (`oneOf`/`anyOf`) lists the properties of every branch; a property is required only when
//!   every branch requires it. `x-params-schema` always points at the whole params definition,
//!   which is the exact constraint.
//! - the result is the response definition; errors are `components/errors` (see [`ERRORS`]);
//!   `x-since`, `x-experimental`, `x-direction`, `x-envelope` carry what the bundle marks.
//! - server requests, server notifications and client notifications are listed, in the same
//!   method shape, under `x-server-requests`, `x-server-notifications`, `x-client-notifications`.
//! - `components/schemas` holds the flat bundle's definitions under the same names, so
//!   `#/components/schemas/X` here and `#/definitions/X` in the bundle name one type. One
//!   difference: the integer widths schemars writes as `format` (`uint32`, …) are `x-format`
//!   here, because the OpenRPC tools' ajv refuses unknown formats; and a `true` subschema is
//!   written `{}` (the same constraint), because json-schema-faker fails on boolean schemas.
//! - every component schema has a `title` (its key) and every by-name param's schema one made of
//!   the params type and the param (`TurnStartParamsInput`): annotations only, so that code
//!   generators (`@open-rpc/generator`) name each type instead of hashing its content.
//! - examples are real exchanges: [`EXCHANGES`] is a transcript recorded with
//!   `agentwire app-server --record` (by `scripts/record-openrpc-examples.py`); each successful
//!   client request in it becomes an example pairing of its method. They were recorded with the
//!   current protocol, so the documents of older pinned releases have none.

use std::collections::BTreeMap;

use agentwire_protocol::PROTOCOL_VERSION;
use agentwire_protocol::jsonrpc::error_codes;
use agentwire_protocol::method::Direction;
use serde_json::{Map, Value, json};

use crate::schema::{Collected, X_DIRECTION, X_EXPERIMENTAL, X_SINCE, to_bytes};
use crate::{CodegenError, FileSet, meta, schema};

/// File name of the document.
pub const OPENRPC_FILE: &str = "agentwire_app_server_protocol.openrpc.json";
/// The OpenRPC specification version the documents declare by default (and the checked-in ones
/// declare).
pub const OPENRPC_VERSION: &str = OpenrpcVersion::V1_2_6.as_str();

/// The OpenRPC specification version a document declares. The content is the same for both:
/// it uses nothing that 1.3 added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenrpcVersion {
    /// `1.2.6`, the newest version the stock `@open-rpc` tools accept: `@open-rpc/generator`
    /// 1.22.3's client types and `@open-rpc/test-coverage` 2.2.4 refuse 1.3.x.
    #[default]
    V1_2_6,
    /// `1.3.2`, the newest version of the specification.
    V1_3_2,
}

impl OpenrpcVersion {
    /// Every version a document can declare, oldest first.
    pub const ALL: [OpenrpcVersion; 2] = [OpenrpcVersion::V1_2_6, OpenrpcVersion::V1_3_2];

    /// The version as the document's `openrpc` member writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            OpenrpcVersion::V1_2_6 => "1.2.6",
            OpenrpcVersion::V1_3_2 => "1.3.2",
        }
    }

    /// The version written `X.Y.Z`, if it is one of [`OpenrpcVersion::ALL`].
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == text)
    }
}
/// The recorded session the examples come from (JSON Lines of `{"session", "dir", "line"}`).
pub const EXCHANGES: &str = include_str!("../openrpc/exchanges.jsonl");
/// Where [`EXCHANGES`] lives in the repository, for messages.
pub const EXCHANGES_PATH: &str = "codegen/openrpc/exchanges.jsonl";
/// At most this many examples per method.
const EXAMPLES_PER_METHOD: usize = 2;

const COMPONENT_SCHEMAS: &str = "#/components/schemas/";

/// One error agentwire can answer with, as listed in `components/errors`.
pub struct ErrorEntry {
    /// The key under `components/errors`.
    pub key: &'static str,
    /// The JSON-RPC code.
    pub code: i64,
    /// The message (or how it starts).
    pub message: &'static str,
    /// The schema of `data` (under `components/schemas/<key>Data`), when it has one.
    pub data: Option<fn() -> Value>,
    /// Which methods can answer with it (`None`: none, it concerns the connection).
    pub applies: Option<fn(&str) -> bool>,
}

fn every_request(_: &str) -> bool {
    true
}

/// Every error agentwire answers with: the JSON-RPC codes the runtime uses
/// ([`error_codes`]) and the engine's errors that carry `data` (`HandlerError::with_data` in
/// `runtime/` and `engine/`).
pub const ERRORS: &[ErrorEntry] = &[
    ErrorEntry {
        key: "ParseError",
        code: error_codes::PARSE_ERROR,
        message: "Parse error",
        data: None,
        applies: None,
    },
    ErrorEntry {
        key: "MethodNotFound",
        code: error_codes::METHOD_NOT_FOUND,
        message: "Method not found",
        data: None,
        applies: None,
    },
    ErrorEntry {
        key: "InvalidRequest",
        code: error_codes::INVALID_REQUEST,
        message: "Invalid request (e.g. Not initialized, Already initialized, experimentalApi capability required)",
        data: None,
        applies: Some(every_request),
    },
    ErrorEntry {
        key: "InvalidParams",
        code: error_codes::INVALID_PARAMS,
        message: "Invalid params for <method>: <reason>",
        data: Some(invalid_params_data),
        applies: Some(every_request),
    },
    ErrorEntry {
        key: "InternalError",
        code: error_codes::INTERNAL_ERROR,
        message: "Internal error",
        data: None,
        applies: Some(every_request),
    },
    ErrorEntry {
        key: "ServerOverloaded",
        code: error_codes::SERVER_OVERLOADED,
        message: "Server overloaded; retry later.",
        data: None,
        applies: Some(every_request),
    },
    ErrorEntry {
        key: "ConfigWriteRefused",
        code: error_codes::INVALID_REQUEST,
        message: "The config write was refused",
        data: Some(config_write_data),
        applies: Some(|m| m == "config/value/write" || m == "config/batchWrite"),
    },
    ErrorEntry {
        key: "FsInvalidParams",
        code: error_codes::INVALID_PARAMS,
        message: "Invalid params for <method>: `<field>` \"<path>\" <reason>",
        data: Some(fs_data),
        applies: Some(|m| m.starts_with("fs/")),
    },
    ErrorEntry {
        key: "FsInternalError",
        code: error_codes::INTERNAL_ERROR,
        message: "<method>: `<field>` \"<path>\": <I/O error>",
        data: Some(fs_data),
        applies: Some(|m| m.starts_with("fs/")),
    },
    ErrorEntry {
        key: "LoginTypeUnsupported",
        code: error_codes::INVALID_PARAMS,
        message: "Invalid params for account/login/start: type: `<type>` sign-in is not supported by agentwire",
        data: Some(login_data),
        applies: Some(|m| m == "account/login/start"),
    },
];

fn invalid_params_data() -> Value {
    json!({
        "description": "Where the params failed their schema (or decoding): one entry per problem.",
        "type": "object",
        "properties": {
            "method": { "type": "string" },
            "errors": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "pointer": { "description": "JSON pointer (RFC 6901) into params.", "type": "string" },
                        "message": { "type": "string" },
                    },
                    "required": ["pointer", "message"],
                },
            },
        },
        "required": ["method", "errors"],
    })
}

fn config_write_data() -> Value {
    json!({
        "type": "object",
        "properties": {
            "config_write_error_code": { "type": "string" },
            "keyPath": { "type": ["string", "null"] },
        },
        "required": ["config_write_error_code", "keyPath"],
    })
}

fn fs_data() -> Value {
    json!({
        "type": "object",
        "properties": {
            "field": { "description": "The params member, as on the wire.", "type": "string" },
            "path": { "type": "string" },
            "reason": { "type": "string" },
        },
        "required": ["field", "path", "reason"],
    })
}

fn login_data() -> Value {
    json!({
        "type": "object",
        "properties": {
            "field": { "type": "string", "enum": ["type"] },
            "unsupported": { "type": "string" },
            "supportedTypes": { "type": "array", "items": { "type": "string" } },
        },
        "required": ["field", "unsupported", "supportedTypes"],
    })
}

/// The files `generate-openrpc` writes for a surface of the current protocol.
pub fn files(collected: &Collected) -> Result<FileSet, CodegenError> {
    let document = document(collected, OpenrpcVersion::default())?;
    let mut files = FileSet::new();
    files.insert(OPENRPC_FILE, to_bytes(&document, OPENRPC_FILE)?);
    Ok(files)
}

/// The OpenRPC document of a surface of the current protocol, with the recorded examples.
pub fn document(collected: &Collected, openrpc: OpenrpcVersion) -> Result<Value, CodegenError> {
    document_from_bundle(
        &schema::flat_bundle(collected),
        &meta::meta(collected),
        openrpc,
    )
}

/// The files of [`document_from_bundle`], under [`OPENRPC_FILE`].
pub fn files_from_bundle(
    flat_bundle: &Value,
    meta: &Value,
    openrpc: OpenrpcVersion,
) -> Result<FileSet, CodegenError> {
    let document = document_from_bundle(flat_bundle, meta, openrpc)?;
    let mut files = FileSet::new();
    files.insert(OPENRPC_FILE, to_bytes(&document, OPENRPC_FILE)?);
    Ok(files)
}

/// One method of `meta.json`, as the document needs it.
#[derive(Debug)]
struct MethodRow {
    name: String,
    direction: Direction,
    experimental: bool,
    since: String,
    doc: String,
    params: Option<String>,
    params_optional: bool,
    response: Option<String>,
    envelope: String,
    response_envelope: Option<String>,
}

impl MethodRow {
    /// Reads the `n`-th entry of `meta.json`'s `methods`; `#/definitions/X` pointers become `X`.
    fn parse(n: usize, entry: &Value) -> Result<Self, CodegenError> {
        let bad = |what: &str| CodegenError::Bundle(format!("meta.json methods[{n}]: {what}"));
        let text = |key: &str| -> Result<String, CodegenError> {
            entry
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| bad(&format!("no `{key}` string")))
        };
        let definition = |key: &str| -> Result<Option<String>, CodegenError> {
            match entry.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(pointer)) => pointer
                    .strip_prefix("#/definitions/")
                    .map(|name| Some(name.to_owned()))
                    .ok_or_else(|| bad(&format!("`{key}` {pointer:?} is not #/definitions/X"))),
                Some(other) => Err(bad(&format!("`{key}` is {other}, not a pointer"))),
            }
        };
        let direction_name = text("direction")?;
        let direction = [
            Direction::ClientRequest,
            Direction::ServerRequest,
            Direction::ServerNotification,
            Direction::ClientNotification,
        ]
        .into_iter()
        .find(|d| d.wire_name() == direction_name)
        .ok_or_else(|| bad(&format!("unknown direction {direction_name:?}")))?;
        let flag = |key: &str| entry.get(key).and_then(Value::as_bool).unwrap_or(false);
        Ok(Self {
            name: text("method")?,
            direction,
            experimental: flag("experimental"),
            since: text("since")?,
            doc: entry
                .get("doc")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            params: definition("params")?,
            params_optional: flag("paramsOptional"),
            response: definition("response")?,
            envelope: definition("envelope")?.ok_or_else(|| bad("no `envelope`"))?,
            response_envelope: definition("responseEnvelope")?,
        })
    }
}

/// The OpenRPC document of a surface given by its flat JSON Schema bundle
/// (`agentwire_app_server_protocol.flat.schemas.json`) and method index (`meta.json`): how the
/// documents of pinned releases are derived from what `generated/versions/` pins. The recorded
/// examples are included only when `meta` is of the current protocol version (they were
/// recorded with it).
pub fn document_from_bundle(
    flat_bundle: &Value,
    meta: &Value,
    openrpc: OpenrpcVersion,
) -> Result<Value, CodegenError> {
    let definitions = flat_bundle
        .get("definitions")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            CodegenError::Bundle("the flat bundle has no `definitions` object".into())
        })?;
    let version = meta
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| CodegenError::Bundle("meta.json has no `protocolVersion`".into()))?;
    let experimental = meta
        .get("experimentalSurface")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let rows = meta
        .get("methods")
        .and_then(Value::as_array)
        .ok_or_else(|| CodegenError::Bundle("meta.json has no `methods` list".into()))?
        .iter()
        .enumerate()
        .map(|(n, entry)| MethodRow::parse(n, entry))
        .collect::<Result<Vec<_>, _>>()?;
    let examples = if version == PROTOCOL_VERSION {
        recorded_examples(EXCHANGES)?
    } else {
        BTreeMap::new()
    };
    let mut schemas = Map::new();
    for (name, schema) in definitions {
        let mut schema = schema.clone();
        rewrite_refs(&mut schema);
        no_boolean_schemas(&mut schema);
        titled(&mut schema, name);
        schemas.insert(name.clone(), schema);
    }
    let mut errors = Map::new();
    let mut error_data = Map::new();
    for entry in ERRORS {
        let mut error = json!({ "code": entry.code, "message": entry.message });
        if let Some(data) = entry.data {
            let name = format!("{}Data", entry.key);
            let mut data = data();
            titled(&mut data, &name);
            schemas.insert(name.clone(), data);
            error_data.insert(entry.key.into(), reference(&name));
            if let Some(example) = error_example(entry.key) {
                error["data"] = example;
            }
        }
        errors.insert(entry.key.into(), error);
    }

    let by_direction = |direction: Direction| -> Vec<Value> {
        rows.iter()
            .filter(|m| m.direction == direction)
            .map(|m| method(m, definitions, &examples))
            .collect()
    };
    let surface = if experimental {
        "experimental (methods and fields that need the `experimentalApi` capability included)"
    } else {
        "stable"
    };
    Ok(json!({
        "openrpc": openrpc.as_str(),
        "info": {
            "title": "agentwire app-server protocol",
            "version": version,
            "description": format!(
                "The Codex app-server protocol as agentwire serves it: JSON-RPC 2.0 without the \
                 `jsonrpc` member, one message per line over stdio or one per text frame over \
                 websocket. A connection first sends `initialize` and then the `initialized` \
                 notification. Surface: {surface}. Generated from the method table of \
                 agentwire-protocol {version}; `#/components/schemas/X` is \
                 `#/definitions/X` of the JSON Schema bundle."
            ),
            "license": { "name": "Apache-2.0" },
            "x-experimental-surface": experimental,
        },
        "servers": [{
            "name": "websocket",
            "url": "ws://127.0.0.1:4500",
            "description": "`agentwire app-server --listen ws://127.0.0.1:4500` (or stdio: `agentwire app-server`).",
        }],
        "methods": by_direction(Direction::ClientRequest),
        "components": {
            "schemas": schemas,
            "errors": errors,
        },
        "x-connection-errors": [error_ref("ParseError"), error_ref("MethodNotFound")],
        "x-error-data": error_data,
        "x-server-requests": by_direction(Direction::ServerRequest),
        "x-server-notifications": by_direction(Direction::ServerNotification),
        "x-client-notifications": by_direction(Direction::ClientNotification),
    }))
}

/// A `data` value of an error, as the engine writes it (for readers; the schema is in
/// `x-error-data`).
fn error_example(key: &str) -> Option<Value> {
    Some(match key {
        "InvalidParams" => json!({
            "method": "thread/start",
            "errors": [{ "pointer": "/cwd", "message": "42 is not of type \"string\"" }],
        }),
        "ConfigWriteRefused" => json!({
            "config_write_error_code": "configVersionConflict",
            "keyPath": "model",
        }),
        "FsInvalidParams" | "FsInternalError" => {
            json!({ "field": "path", "path": "relative/file", "reason": "notAbsolute" })
        }
        "LoginTypeUnsupported" => json!({
            "field": "type",
            "unsupported": "chatgpt",
            "supportedTypes": ["apiKey"],
        }),
        _ => return None,
    })
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("{COMPONENT_SCHEMAS}{name}") })
}

fn error_ref(key: &str) -> Value {
    json!({ "$ref": format!("#/components/errors/{key}") })
}

const SCHEMA_KEYWORDS: [&str; 9] = [
    "items",
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];
const SCHEMA_MAPS: [&str; 3] = ["properties", "patternProperties", "definitions"];
const SCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "items"];

/// Writes every `true` schema as `{}` (the same constraint): json-schema-faker, which the mock
/// server and test-coverage use, fails on boolean subschemas.
fn no_boolean_schemas(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    for (key, value) in object.iter_mut() {
        let key = key.as_str();
        if SCHEMA_KEYWORDS.contains(&key) {
            if *value == Value::Bool(true) {
                *value = json!({});
            }
            no_boolean_schemas(value);
        }
        if SCHEMA_MAPS.contains(&key)
            && let Value::Object(map) = value
        {
            for sub in map.values_mut() {
                if *sub == Value::Bool(true) {
                    *sub = json!({});
                }
                no_boolean_schemas(sub);
            }
        }
        if SCHEMA_LISTS.contains(&key)
            && let Value::Array(list) = value
        {
            for sub in list {
                if *sub == Value::Bool(true) {
                    *sub = json!({});
                }
                no_boolean_schemas(sub);
            }
        }
    }
}

/// The integer widths schemars writes as `format` (`int64`, `uint32`, …).
fn is_integer_width(format: &str) -> bool {
    let digits = format
        .strip_prefix("uint")
        .or_else(|| format.strip_prefix("int"))
        .unwrap_or_default();
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Points every `#/definitions/X` at `#/components/schemas/X`, and moves the integer widths of
/// `format` (not JSON Schema formats: the ajv of the OpenRPC tools refuses schemas using them)
/// to `x-format`; the bounds that matter are in `minimum`/`maximum` already.
fn rewrite_refs(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(format)) = object.get("format")
                && is_integer_width(format)
                && let Some(format) = object.remove("format")
            {
                object.insert("x-format".into(), format);
            }
            for (key, value) in object.iter_mut() {
                match (key.as_str(), value) {
                    ("$ref", Value::String(r)) => {
                        if let Some(name) = r.strip_prefix("#/definitions/") {
                            *r = format!("{COMPONENT_SCHEMAS}{name}");
                        }
                    }
                    (_, value) => rewrite_refs(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// Gives an object schema the `title` `name` unless it has one. A title is an annotation (the
/// constraint is the same); code generators such as `@open-rpc/generator` name the type after
/// it, where without one they invent a content hash (docs/openrpc.md).
fn titled(schema: &mut Value, name: &str) {
    if let Value::Object(object) = schema {
        object
            .entry("title")
            .or_insert_with(|| Value::String(name.to_owned()));
    }
}

/// Titles each by-name param's schema `<ParamsType><Param>` (`TurnStartParamsInput`), with a
/// `Param` suffix when that is the name of a component, so a generated client names every
/// argument's type (the params are inline copies of the properties, not `$ref`s).
fn param_titles(params: &mut [Value], params_type: &str, definitions: &Map<String, Value>) {
    for param in params {
        let Some(name) = param.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut title = format!("{params_type}{}", upper_camel(name));
        if definitions.contains_key(&title) {
            title.push_str("Param");
        }
        if let Some(schema) = param.get_mut("schema") {
            titled(schema, &title);
        }
    }
}

/// `threadId` -> `ThreadId`, `_meta` -> `Meta`, `dry-run` -> `DryRun`.
fn upper_camel(name: &str) -> String {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The first line of a doc comment.
fn summary(doc: &str) -> &str {
    doc.lines().next().unwrap_or_default().trim()
}

fn method(
    entry: &MethodRow,
    definitions: &Map<String, Value>,
    examples: &BTreeMap<String, Vec<Example>>,
) -> Value {
    let params_schema = entry.params.as_ref().and_then(|p| definitions.get(p));
    let params = params_schema
        .zip(entry.params.as_deref())
        .map(|(schema, name)| {
            let mut params = content_params(schema, entry.params_optional);
            param_titles(&mut params, name, definitions);
            params
        })
        .unwrap_or_default();
    let mut object = Map::new();
    object.insert("name".into(), entry.name.as_str().into());
    object.insert("summary".into(), summary(&entry.doc).into());
    object.insert("description".into(), entry.doc.clone().into());
    object.insert("paramStructure".into(), "by-name".into());
    if let Some(name) = &entry.response {
        object.insert(
            "result".into(),
            json!({ "name": name, "required": true, "schema": reference(name) }),
        );
    }
    if entry.direction == Direction::ClientRequest {
        let errors: Vec<Value> = ERRORS
            .iter()
            .filter(|e| e.applies.is_some_and(|applies| applies(&entry.name)))
            .map(|e| error_ref(e.key))
            .collect();
        object.insert("errors".into(), errors.into());
        let pairs: Vec<Value> = examples
            .get(&entry.name)
            .map(|list| {
                list.iter()
                    .enumerate()
                    .map(|(n, example)| example.pairing(&entry.name, n, &params))
                    .collect()
            })
            .unwrap_or_default();
        if !pairs.is_empty() {
            object.insert("examples".into(), pairs.into());
        }
    }
    // The method table has no deprecation flag; its `Legacy:` methods are the ones kept only
    // for old clients.
    object.insert("deprecated".into(), entry.doc.starts_with("Legacy").into());
    object.insert("params".into(), params.into());
    object.insert(
        "x-params-schema".into(),
        match &entry.params {
            Some(name) if entry.params_optional => {
                json!({ "anyOf": [reference(name), { "type": "null" }] })
            }
            Some(name) => reference(name),
            None => json!({ "type": "null" }),
        },
    );
    object.insert(X_DIRECTION.into(), entry.direction.wire_name().into());
    object.insert(X_EXPERIMENTAL.into(), entry.experimental.into());
    object.insert(X_SINCE.into(), entry.since.as_str().into());
    object.insert("x-envelope".into(), reference(&entry.envelope));
    if let Some(envelope) = &entry.response_envelope {
        object.insert("x-response-envelope".into(), reference(envelope));
    }
    Value::Object(object)
}

/// The by-name params of a params object: one content descriptor per property.
fn content_params(schema: &Value, optional: bool) -> Vec<Value> {
    // The object's own properties hold in every branch of a union (a flattened enum).
    let branches: Vec<&Value> = ["oneOf", "anyOf"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(Value::as_array))
        .map(|list| {
            list.iter()
                .filter(|b| b.get("properties").is_some())
                .collect()
        })
        .filter(|list: &Vec<&Value>| !list.is_empty())
        .unwrap_or_default();
    let views: Vec<Vec<&Value>> = if branches.is_empty() {
        vec![vec![schema]]
    } else {
        branches.iter().map(|b| vec![schema, *b]).collect()
    };
    // name -> (schemas seen, how many views require it)
    let mut order: Vec<String> = Vec::new();
    let mut seen: BTreeMap<String, (Vec<Value>, usize)> = BTreeMap::new();
    for view in &views {
        let required: Vec<&str> = view
            .iter()
            .filter_map(|part| part.get("required").and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut counted: Vec<&str> = Vec::new();
        for properties in view
            .iter()
            .filter_map(|part| part.get("properties").and_then(Value::as_object))
        {
            for (name, property) in properties {
                let slot = seen.entry(name.clone()).or_insert_with(|| {
                    order.push(name.clone());
                    (Vec::new(), 0)
                });
                let mut property = if *property == Value::Bool(true) {
                    json!({})
                } else {
                    property.clone()
                };
                rewrite_refs(&mut property);
                no_boolean_schemas(&mut property);
                if !slot.0.contains(&property) {
                    slot.0.push(property);
                }
                if required.contains(&name.as_str()) && !counted.contains(&name.as_str()) {
                    counted.push(name);
                    slot.1 += 1;
                }
            }
        }
    }
    let mut params: Vec<Value> = order
        .into_iter()
        .filter_map(|name| {
            let (mut schemas, required_in) = seen.remove(&name)?;
            let schema = if schemas.len() == 1 {
                schemas.pop()?
            } else {
                json!({ "anyOf": schemas })
            };
            let description = schema
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let mut param = json!({
                "name": name,
                "required": !optional && required_in == views.len(),
                "schema": schema,
            });
            if let Some(description) = description {
                param["description"] = description.into();
            }
            Some(param)
        })
        .collect();
    // Required params first (a by-position reading, and generated clients' argument lists,
    // cannot have a required param after an optional one); otherwise in declaration order.
    params.sort_by_key(|p| p.get("required") != Some(&Value::Bool(true)));
    params
}

/// One recorded call: the params object and the result.
#[derive(Debug, Clone)]
struct Example {
    session: String,
    params: Option<Value>,
    result: Value,
}

impl Example {
    fn pairing(&self, method: &str, n: usize, declared: &[Value]) -> Value {
        let object = self.params.as_ref().and_then(Value::as_object);
        // In the order the params are declared, so a by-name client sends the same object.
        let params: Vec<Value> = declared
            .iter()
            .filter_map(|d| d.get("name").and_then(Value::as_str))
            .filter_map(|name| {
                let value = object?.get(name)?;
                Some(json!({ "name": name, "value": value }))
            })
            .collect();
        json!({
            "name": format!("{method} #{}", n + 1),
            "description": format!(
                "Recorded from agentwire (session `{}` of {EXCHANGES_PATH}).",
                self.session
            ),
            "params": params,
            "result": { "name": "result", "value": self.result },
        })
    }
}

/// The successful client requests of a transcript, by method, in recorded order.
fn recorded_examples(transcript: &str) -> Result<BTreeMap<String, Vec<Example>>, CodegenError> {
    let bad = |line: usize, what: &str| CodegenError::Examples {
        path: EXCHANGES_PATH,
        line: line + 1,
        message: what.to_owned(),
    };
    // (session, id as JSON text) -> (method, params)
    let mut pending: BTreeMap<(String, String), (String, Option<Value>)> = BTreeMap::new();
    let mut examples: BTreeMap<String, Vec<Example>> = BTreeMap::new();
    for (n, line) in transcript.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Value =
            serde_json::from_str(line).map_err(|e| bad(n, &format!("not JSON: {e}")))?;
        let session = record
            .get("session")
            .map(Value::to_string)
            .unwrap_or_default();
        let dir = record
            .get("dir")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if dir != "client->server" && dir != "server->client" {
            return Err(bad(n, &format!("unknown `dir` {dir:?}")));
        }
        let text = record
            .get("line")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(n, "no `line` string"))?;
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        let Some(id) = message.get("id").map(Value::to_string) else {
            continue;
        };
        match dir {
            "client->server" => {
                if let Some(method) = message.get("method").and_then(Value::as_str) {
                    pending.insert(
                        (session, id),
                        (method.to_owned(), message.get("params").cloned()),
                    );
                }
            }
            "server->client" => {
                if message.get("method").is_some() {
                    continue; // a server request, not an answer
                }
                let Some(result) = message.get("result") else {
                    pending.remove(&(session, id));
                    continue;
                };
                if let Some((method, params)) = pending.remove(&(session.clone(), id)) {
                    let list = examples.entry(method).or_default();
                    if list.len() < EXAMPLES_PER_METHOD {
                        list.push(Example {
                            session: session.trim_matches('"').to_owned(),
                            params,
                            result: result.clone(),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    Ok(examples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_params_list_every_branch_and_require_only_what_all_require() {
        let schema = json!({
            "properties": { "threadId": { "type": "string" } },
            "required": ["threadId"],
            "oneOf": [
                { "properties": { "type": { "enum": ["a"] }, "x": { "$ref": "#/definitions/X" } },
                  "required": ["type", "x"] },
                { "properties": { "type": { "enum": ["b"] } }, "required": ["type"] },
            ],
        });
        let params = content_params(&schema, false);
        let find = |name: &str| {
            params
                .iter()
                .find(|p| p["name"] == name)
                .unwrap_or_else(|| panic!("no {name} in {params:?}"))
                .clone()
        };
        assert_eq!(find("threadId")["required"], true);
        assert_eq!(find("type")["required"], true);
        assert_eq!(find("x")["required"], false);
        assert_eq!(find("x")["schema"]["$ref"], "#/components/schemas/X");
        assert_eq!(
            find("type")["schema"]["anyOf"].as_array().map(Vec::len),
            Some(2)
        );
        // Required first.
        let required: Vec<bool> = params.iter().map(|p| p["required"] == true).collect();
        assert_eq!(required, [true, true, false]);
        // Optional params: nothing is required.
        assert!(
            content_params(&schema, true)
                .iter()
                .all(|p| p["required"] == false)
        );
    }

    #[test]
    fn components_and_params_are_titled_without_overwriting_a_title() {
        let mut component =
            json!({ "type": "object", "properties": { "title": { "type": "string" } } });
        titled(&mut component, "Thing");
        assert_eq!(component["title"], "Thing");
        assert_eq!(
            component["properties"]["title"],
            json!({ "type": "string" })
        );
        let mut kept = json!({ "type": "string", "title": "Given" });
        titled(&mut kept, "Other");
        assert_eq!(kept["title"], "Given");

        let definitions: Map<String, Value> =
            serde_json::from_value(json!({ "TurnStartParamsCwd": {} })).expect("map");
        let mut params = vec![
            json!({ "name": "threadId", "schema": { "type": "string" } }),
            json!({ "name": "_meta", "schema": {} }),
            json!({ "name": "cwd", "schema": { "$ref": "#/components/schemas/Path" } }),
        ];
        param_titles(&mut params, "TurnStartParams", &definitions);
        assert_eq!(params[0]["schema"]["title"], "TurnStartParamsThreadId");
        assert_eq!(params[1]["schema"]["title"], "TurnStartParamsMeta");
        assert_eq!(params[2]["schema"]["title"], "TurnStartParamsCwdParam");
        assert_eq!(params[2]["schema"]["$ref"], "#/components/schemas/Path");
    }

    #[test]
    fn schemas_are_rewritten_for_the_openrpc_tools_without_touching_data() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "n": { "type": "integer", "format": "uint32", "minimum": 0 },
                "when": { "type": "string", "format": "date-time" },
                "format": { "type": "string" },
                "any": true,
                "list": { "type": "array", "items": true },
                "x-experimental": true,
            },
            "additionalProperties": false,
            "x-experimental": true,
        });
        rewrite_refs(&mut schema);
        no_boolean_schemas(&mut schema);
        assert_eq!(schema["properties"]["n"]["x-format"], "uint32");
        assert!(schema["properties"]["n"].get("format").is_none());
        assert_eq!(schema["properties"]["when"]["format"], "date-time");
        assert_eq!(schema["properties"]["format"], json!({ "type": "string" }));
        assert_eq!(schema["properties"]["any"], json!({}));
        assert_eq!(schema["properties"]["list"]["items"], json!({}));
        assert_eq!(schema["properties"]["x-experimental"], json!({}));
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["x-experimental"], true);
    }

    #[test]
    fn examples_pair_answers_with_requests_and_skip_errors_and_server_requests() {
        let line = |dir: &str, message: Value| {
            json!({ "session": "s", "dir": dir, "line": message.to_string() }).to_string()
        };
        let transcript = [
            line(
                "client->server",
                json!({"id": 1, "method": "thread/list", "params": {"limit": 1}}),
            ),
            line(
                "server->client",
                json!({"id": 1, "method": "item/tool/requestApproval", "params": {}}),
            ),
            line("server->client", json!({"id": 1, "result": {"data": []}})),
            line(
                "client->server",
                json!({"id": 2, "method": "thread/read", "params": {}}),
            ),
            line(
                "server->client",
                json!({"id": 2, "error": {"code": -32602, "message": "no"}}),
            ),
            "{\"dir\": \"client->server\", \"line\": \"not json\"}".to_owned(),
        ]
        .join("\n");
        let examples = recorded_examples(&transcript).expect("parses");
        let list = &examples["thread/list"];
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].result, json!({"data": []}));
        assert_eq!(list[0].params, Some(json!({"limit": 1})));
        assert!(!examples.contains_key("thread/read"));

        let bad = format!("{transcript}\n{{\"dir\": \"sideways\", \"line\": \"{{}}\"}}");
        let error = recorded_examples(&bad).expect_err("unknown dir");
        assert!(error.to_string().contains(":7:"), "{error}");
    }

    #[test]
    fn every_recorded_example_is_valid_json_for_its_method() {
        let examples = recorded_examples(EXCHANGES).expect("the checked-in exchanges parse");
        assert!(examples.len() >= 10, "{} methods", examples.len());
    }
}
