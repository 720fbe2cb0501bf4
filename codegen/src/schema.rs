//! The JSON Schema bundle: every wire type, one envelope per method, the method unions.
//!
//! The layout is described in `docs/artifacts.md`. In short: a draft-07 document whose
//! `definitions` hold every type by its Rust name, `<Marker>RequestEnvelope` /
//! `<Marker>ResponseEnvelope` / `<Marker>NotificationEnvelope` for each method (marked with
//! `x-method`, `x-direction`, `x-experimental`, `x-since`), the unions `ClientRequest`,
//! `ServerRequest`, `ServerNotification`, `ClientNotification`, the JSON-RPC envelope types, and the
//! MCP-server surface under the nested namespace `definitions/mcp`.

use std::collections::{BTreeMap, BTreeSet};

use agentwire_protocol::method::{self, Direction, Method, MethodVisitor, Notification, Request};
use agentwire_protocol::{JsonRpcMessage, PROTOCOL_VERSION, TypeVisitor, WireType};
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};

use crate::{CodegenError, FileSet, Surface};

/// File name of the bundle.
pub const BUNDLE_FILE: &str = "agentwire_app_server_protocol.schemas.json";
/// File name of the flat bundle (one level of definitions, no MCP namespace).
pub const FLAT_BUNDLE_FILE: &str = "agentwire_app_server_protocol.flat.schemas.json";
/// Name of the nested namespace that holds the MCP-server surface.
pub const MCP_NAMESPACE: &str = "mcp";
/// The `$schema` of every document written.
pub const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";

/// Marks a property (or method) as experimental.
pub const X_EXPERIMENTAL: &str = "x-experimental";
/// The wire name of the method an envelope carries.
pub const X_METHOD: &str = "x-method";
/// The direction of the method an envelope carries.
pub const X_DIRECTION: &str = "x-direction";
/// The protocol version that added the method an envelope carries.
pub const X_SINCE: &str = "x-since";

/// One method as it appears in the bundle and in `meta.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodEntry {
    /// The wire name.
    pub name: &'static str,
    /// Who sends it.
    pub direction: Direction,
    /// Whether it needs the experimental capability.
    pub experimental: bool,
    /// The version that added it.
    pub since: &'static str,
    /// The marker type's name, which prefixes the envelope names.
    pub marker: String,
    /// What the method does.
    pub doc: String,
    /// The definition name of the params type, if the method has params.
    pub params: Option<String>,
    /// Whether the params member may be absent or `null`.
    pub params_optional: bool,
    /// The definition name of the result type, for requests.
    pub response: Option<String>,
    /// The params member whose value orders the method (`ordered_by:` in the table).
    pub ordered_by: Option<&'static str>,
    /// Whether the method (a server request) declares its decline answer (`decline:`).
    pub declines: bool,
    /// Why the method (a client request) is refused instead of served (`unavailable:`).
    pub unavailable: Option<agentwire_protocol::Unavailable>,
}

impl MethodEntry {
    /// Name of the definition of the message that invokes the method.
    pub fn envelope(&self) -> String {
        if self.direction.is_request() {
            format!("{}RequestEnvelope", self.marker)
        } else {
            format!("{}NotificationEnvelope", self.marker)
        }
    }

    /// Name of the definition of a successful answer, for requests.
    pub fn response_envelope(&self) -> Option<String> {
        self.direction
            .is_request()
            .then(|| format!("{}ResponseEnvelope", self.marker))
    }
}

/// Every definition and method of one surface, before it is laid out in files.
#[derive(Debug, Clone)]
pub struct Collected {
    /// The surface collected.
    pub surface: Surface,
    /// App-server definitions (wire types, envelopes, unions), by name.
    pub definitions: Map<String, Value>,
    /// The MCP-server surface's definitions, by name.
    pub mcp_definitions: Map<String, Value>,
    /// Every method of the surface, in table order.
    pub methods: Vec<MethodEntry>,
}

/// Walks the method table and the MCP surface and collects every schema of `surface`.
pub fn collect(surface: Surface) -> Collected {
    let mut collector = Collector {
        generator: settings("/definitions").into_generator(),
        surface,
        methods: Vec::new(),
    };
    agentwire_protocol::methods::visit_methods(&mut collector);
    collector.generator.subschema_for::<JsonRpcMessage>();
    let mut definitions = collector.generator.take_definitions(true);

    let mut mcp = McpCollector {
        generator: settings(&format!("/definitions/{MCP_NAMESPACE}")).into_generator(),
    };
    agentwire_protocol::mcp::visit_types(&mut mcp);
    let mut mcp_definitions = mcp.generator.take_definitions(true);

    for entry in &collector.methods {
        add_envelopes(&mut definitions, entry);
    }
    add_unions(&mut definitions, &collector.methods);

    for schema in definitions.values_mut().chain(mcp_definitions.values_mut()) {
        const_to_enum(schema);
        if !surface.is_experimental() {
            strip_experimental_fields(schema);
        }
    }
    Collected {
        surface,
        definitions: sorted_members(&definitions),
        mcp_definitions: sorted_members(&mcp_definitions),
        methods: collector.methods,
    }
}

/// `map` with every object in it, itself included, in key order (see [`sorted`]): what is
/// derived from the definitions by walking them comes out the same whichever way serde_json
/// orders maps.
fn sorted_members(map: &Map<String, Value>) -> Map<String, Value> {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    keys.into_iter()
        .map(|key| (key.clone(), sorted(&map[key])))
        .collect()
}

fn settings(definitions_path: &str) -> SchemaSettings {
    let mut settings = SchemaSettings::draft07();
    settings.definitions_path = definitions_path.to_owned().into();
    settings.untagged_enum_variant_titles = true;
    settings.meta_schema = None;
    settings
}

struct Collector {
    generator: SchemaGenerator,
    surface: Surface,
    methods: Vec<MethodEntry>,
}

impl Collector {
    fn add<M: Method>(&mut self, response: Option<String>) {
        let params =
            method::has_params::<M>().then(|| definition_for::<M::Params>(&mut self.generator));
        let params_optional = M::PARAMS_OPTIONAL;
        self.methods.push(MethodEntry {
            name: M::NAME,
            direction: M::DIRECTION,
            experimental: M::EXPERIMENTAL,
            since: M::SINCE,
            marker: marker_name::<M>(),
            doc: M::DOC.trim().to_owned(),
            params,
            params_optional,
            response,
            ordered_by: M::ORDERED_BY,
            declines: agentwire_protocol::methods::find(M::NAME).is_some_and(|m| m.declines),
            unavailable: agentwire_protocol::methods::find(M::NAME).and_then(|m| m.unavailable()),
        });
    }

    fn request<M: Request>(&mut self) {
        if self.surface.includes(M::EXPERIMENTAL) {
            let response = definition_for::<M::Response>(&mut self.generator);
            self.add::<M>(Some(response));
        }
    }

    fn notification<M: Notification>(&mut self) {
        if self.surface.includes(M::EXPERIMENTAL) {
            self.add::<M>(None);
        }
    }
}

impl MethodVisitor for Collector {
    fn client_request<M: Request>(&mut self) {
        self.request::<M>();
    }
    fn server_request<M: Request>(&mut self) {
        self.request::<M>();
    }
    fn server_notification<M: Notification>(&mut self) {
        self.notification::<M>();
    }
    fn client_notification<M: Notification>(&mut self) {
        self.notification::<M>();
    }
}

struct McpCollector {
    generator: SchemaGenerator,
}

impl TypeVisitor for McpCollector {
    fn visit<T: WireType>(&mut self) {
        definition_for::<T>(&mut self.generator);
    }
}

/// Adds `T` to the generator's definitions and returns its definition name.
fn definition_for<T: WireType>(generator: &mut SchemaGenerator) -> String {
    let reference = generator.subschema_for::<T>().to_value();
    // A plain `$ref`, or `anyOf: [{$ref}, {type: null}]` for optional params.
    let target = reference.get("$ref").or_else(|| {
        reference
            .get("anyOf")?
            .as_array()?
            .iter()
            .find_map(|branch| branch.get("$ref"))
    });
    match target.and_then(Value::as_str) {
        Some(r) => r.rsplit('/').next().unwrap_or(r).to_owned(),
        None => {
            // An inlined type (never the case for params and results today): give it a name.
            let name = T::schema_name().into_owned();
            let schema = T::json_schema(generator);
            generator
                .definitions_mut()
                .insert(name.clone(), schema.to_value());
            name
        }
    }
}

fn marker_name<M: 'static>() -> String {
    let full = std::any::type_name::<M>();
    full.rsplit("::").next().unwrap_or(full).to_owned()
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/definitions/{name}") })
}

fn add_envelopes(definitions: &mut Map<String, Value>, entry: &MethodEntry) {
    let marks = |mut schema: Map<String, Value>| {
        schema.insert(X_METHOD.into(), entry.name.into());
        schema.insert(X_DIRECTION.into(), entry.direction.wire_name().into());
        schema.insert(X_EXPERIMENTAL.into(), entry.experimental.into());
        schema.insert(X_SINCE.into(), entry.since.into());
        Value::Object(schema)
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    if entry.direction.is_request() {
        properties.insert("id".into(), reference("RequestId"));
        required.push("id");
    }
    properties.insert(
        "method".into(),
        json!({ "type": "string", "enum": [entry.name] }),
    );
    required.push("method");
    match &entry.params {
        Some(params) if entry.params_optional => {
            properties.insert(
                "params".into(),
                json!({ "anyOf": [reference(params), { "type": "null" }] }),
            );
        }
        Some(params) => {
            properties.insert("params".into(), reference(params));
            required.push("params");
        }
        // Methods without params accept an absent or `null` member.
        None => {
            properties.insert("params".into(), json!({ "type": "null" }));
        }
    }
    let envelope = json!({
        "description": entry.doc,
        "type": "object",
        "properties": properties,
        "required": required,
    });
    if let Value::Object(envelope) = envelope {
        definitions.insert(entry.envelope(), marks(envelope));
    }

    if let (Some(name), Some(response)) = (entry.response_envelope(), &entry.response) {
        let envelope = json!({
            "description": format!("A successful answer to `{}`.", entry.name),
            "type": "object",
            "properties": { "id": reference("RequestId"), "result": reference(response) },
            "required": ["id", "result"],
        });
        if let Value::Object(envelope) = envelope {
            definitions.insert(name, marks(envelope));
        }
    }
}

/// The four method unions and what each holds.
pub const UNIONS: [(&str, Direction, &str); 4] = [
    (
        "ClientRequest",
        Direction::ClientRequest,
        "Any request a client may send.",
    ),
    (
        "ServerRequest",
        Direction::ServerRequest,
        "Any request the server may send.",
    ),
    (
        "ServerNotification",
        Direction::ServerNotification,
        "Any notification the server may send.",
    ),
    (
        "ClientNotification",
        Direction::ClientNotification,
        "Any notification a client may send.",
    ),
];

fn add_unions(definitions: &mut Map<String, Value>, methods: &[MethodEntry]) {
    for (name, direction, doc) in UNIONS {
        let branches: Vec<Value> = methods
            .iter()
            .filter(|m| m.direction == direction)
            .map(|m| reference(&m.envelope()))
            .collect();
        definitions.insert(
            name.into(),
            json!({ "description": doc, "oneOf": branches }),
        );
    }
}

/// Writes `const: v` as `enum: [v]`, recursively: the same constraint, in the form the reference
/// bundle uses and that more generators understand (typify ignores `const` on members).
fn const_to_enum(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if let Some(value) = object.remove("const") {
                object.insert("enum".into(), Value::Array(vec![value]));
            }
            for (key, value) in object.iter_mut() {
                // Property names are data, not keywords: a property called `const` stays.
                if key == "properties" {
                    if let Value::Object(properties) = value {
                        properties.values_mut().for_each(const_to_enum);
                    }
                } else {
                    const_to_enum(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(const_to_enum),
        _ => {}
    }
}

/// Removes every property marked `x-experimental` (and its `required` entry), recursively.
fn strip_experimental_fields(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            let mut removed = BTreeSet::new();
            if let Some(Value::Object(properties)) = object.get_mut("properties") {
                properties.retain(|name, property| {
                    let experimental =
                        property.get(X_EXPERIMENTAL).and_then(Value::as_bool) == Some(true);
                    if experimental {
                        removed.insert(name.clone());
                    }
                    !experimental
                });
            }
            if let Some(Value::Array(required)) = object.get_mut("required") {
                required.retain(|r| r.as_str().is_none_or(|r| !removed.contains(r)));
            }
            for value in object.values_mut() {
                strip_experimental_fields(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_experimental_fields),
        _ => {}
    }
}

/// The bundle document.
pub fn bundle(collected: &Collected) -> Value {
    let mut definitions = collected.definitions.clone();
    definitions.insert(
        MCP_NAMESPACE.into(),
        Value::Object(collected.mcp_definitions.clone()),
    );
    document(collected.surface, definitions)
}

/// The flat bundle: app-server definitions only, one level.
pub fn flat_bundle(collected: &Collected) -> Value {
    document(collected.surface, collected.definitions.clone())
}

fn document(surface: Surface, definitions: Map<String, Value>) -> Value {
    json!({
        "$schema": DRAFT_07,
        "x-protocol-version": PROTOCOL_VERSION,
        "x-experimental-surface": surface.is_experimental(),
        "definitions": definitions,
    })
}

/// A standalone schema for one definition: its own schema at the root, and every definition it
/// reaches under `definitions` (nested the same way as in the bundle, so `$ref`s resolve).
pub fn standalone(bundle: &Value, pointer: &str, title: &str) -> Option<Value> {
    let root = bundle.pointer(pointer)?;
    // Walk the references by pointer; clone each reached definition once, into the output.
    let mut needed: BTreeMap<String, &Value> = BTreeMap::new();
    let mut pending = vec![root];
    let mut refs = Vec::new();
    while let Some(schema) = pending.pop() {
        refs.clear();
        collect_refs(schema, &mut refs);
        for r in &refs {
            let Some(target) = r.strip_prefix('#') else {
                continue;
            };
            if needed.contains_key(target) {
                continue;
            }
            if let Some(found) = bundle.pointer(target) {
                needed.insert(target.to_owned(), found);
                pending.push(found);
            }
        }
    }
    let root = root.clone();
    let mut document = Map::new();
    document.insert("$schema".into(), DRAFT_07.into());
    document.insert("title".into(), title.into());
    if let Value::Object(root) = root {
        document.extend(root);
    }
    let mut definitions = Value::Object(Map::new());
    for (target, schema) in needed {
        let path: Vec<&str> = target.trim_start_matches('/').split('/').skip(1).collect();
        insert_path(&mut definitions, &path, schema.clone());
    }
    if definitions.as_object().is_some_and(|d| !d.is_empty()) {
        document.insert("definitions".into(), definitions);
    }
    Some(Value::Object(document))
}

fn insert_path(into: &mut Value, path: &[&str], value: Value) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let Value::Object(map) = into else { return };
    if rest.is_empty() {
        map.insert((*first).to_owned(), value);
    } else {
        let child = map
            .entry(*first)
            .or_insert_with(|| Value::Object(Map::new()));
        insert_path(child, rest, value);
    }
}

/// Every `$ref` string in a schema.
pub fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                match (key.as_str(), value) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => collect_refs(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// `value` with the members of every object in key order. Maps are sorted already unless
/// serde_json's `preserve_order` feature is on, which any crate in the same build can switch
/// on (the ACP SDK does); sorting here keeps the written files the same bytes either way.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut members: Vec<(&String, &Value)> = object.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                members
                    .into_iter()
                    .map(|(key, value)| (key.clone(), sorted(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Pretty JSON with a trailing newline, members in key order: the byte format of every JSON
/// file written.
pub fn to_bytes(value: &Value, what: &str) -> Result<Vec<u8>, CodegenError> {
    let mut bytes =
        serde_json::to_vec_pretty(&sorted(value)).map_err(|source| CodegenError::Json {
            what: what.to_owned(),
            source,
        })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The files `generate-json-schema` writes for a surface: both bundles, `meta.json` and one
/// schema per definition (MCP types under `mcp/`).
pub fn files(collected: &Collected) -> Result<FileSet, CodegenError> {
    let mut files = FileSet::new();
    let bundle = bundle(collected);
    files.insert(BUNDLE_FILE, to_bytes(&bundle, BUNDLE_FILE)?);
    files.insert(
        FLAT_BUNDLE_FILE,
        to_bytes(&flat_bundle(collected), FLAT_BUNDLE_FILE)?,
    );
    files.insert(
        crate::meta::META_FILE,
        to_bytes(&crate::meta::meta(collected), crate::meta::META_FILE)?,
    );
    for name in collected.definitions.keys() {
        if let Some(schema) = standalone(&bundle, &format!("/definitions/{name}"), name) {
            let path = format!("{name}.json");
            files.insert(path.clone(), to_bytes(&schema, &path)?);
        }
    }
    for name in collected.mcp_definitions.keys() {
        let pointer = format!("/definitions/{MCP_NAMESPACE}/{name}");
        if let Some(schema) = standalone(&bundle, &pointer, name) {
            let path = format!("{MCP_NAMESPACE}/{name}.json");
            files.insert(path.clone(), to_bytes(&schema, &path)?);
        }
    }
    Ok(files)
}
