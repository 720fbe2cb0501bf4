//! Turns the flat schema bundle into Rust types with typify 0.8, the way a third-party consumer
//! of the bundle would, and writes them (plus an index of the bundle's methods) to `OUT_DIR`.
//!
//! The bundle is `generated/schema/json/agentwire_app_server_protocol.flat.schemas.json`; the
//! environment variable `AGENTWIRE_TYPIFY_BUNDLE` points the build at another file (a path
//! relative to this crate's directory, or absolute).
//!
//! Before typify sees the bundle, it is rewritten in ways that do not change which values it
//! accepts, only to work around what typify 0.8 gets wrong (the test prints what was rewritten; a
//! bundle that already has the rewritten shape goes through unchanged):
//!
//! - `{"const": "x"}` becomes `{"enum": ["x"]}`. typify 0.8 ignores `const`: a `method` member
//!   declared with `const` would become a plain `String`, and the untagged union of envelopes
//!   would then accept a message under the first envelope whose other members fit.
//! - `{"properties": P, "required": R, "oneOf": [A, B]}` becomes `{"oneOf": [A+P+R, B+P+R]}`
//!   (see [`distribute_into_one_of`] for when that is allowed). typify 0.8 merges the outer
//!   members into the branches itself, but doing so it turns branches that share a
//!   property accepting any value into types that hold no value, and it panics on some shapes.
//!
//! Only `definitions` are converted (`TypeSpace::add_ref_types`); the root schema, its `title`
//! and its `x-…` members are not turned into a type.
//!
//! If typify panics or fails on the bundle, the definitions it cannot handle are found one by one
//! (each checked together with everything it references, dependencies first) and replaced by an
//! opaque schema that accepts any JSON value. Their names are written to `SKIPPED`, and every
//! method records which skipped definitions it reaches, so the tests can refuse to rely on them.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::{env, fs};

use schemars08::schema::{RootSchema, Schema};
use serde_json::{Map, Value};
use typify::{TypeDetails, TypeSpace, TypeSpaceSettings};

/// Where the bundle lives, relative to this crate.
const DEFAULT_BUNDLE: &str =
    "../../generated/schema/json/agentwire_app_server_protocol.flat.schemas.json";

/// The four unions of envelopes the bundle declares, by direction.
const UNIONS: &[(&str, &str)] = &[
    ("clientRequest", "ClientRequest"),
    ("serverRequest", "ServerRequest"),
    ("serverNotification", "ServerNotification"),
    ("clientNotification", "ClientNotification"),
];

/// Other definitions the transcript test deserializes into, when the bundle has them.
const EXTRA_ROOTS: &[&str] = &["JSONRPCError", "RequestId"];

/// Give up (and fail the build) when typify chokes on more definitions than this.
const MAX_SKIPPED: usize = 40;

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    println!("cargo:rerun-if-env-changed=AGENTWIRE_TYPIFY_BUNDLE");
    println!("cargo:rerun-if-changed=build.rs");
    let bundle_path = match env::var_os("AGENTWIRE_TYPIFY_BUNDLE") {
        Some(p) if !p.is_empty() => manifest_dir.join(p),
        _ => manifest_dir.join(DEFAULT_BUNDLE),
    };
    println!("cargo:rerun-if-changed={}", bundle_path.display());

    let text = fs::read_to_string(&bundle_path).unwrap_or_else(|e| {
        panic!(
            "cannot read the schema bundle {}: {e}\n(regenerate it with `cargo run -p agentwire-codegen -- write`, \
             or point AGENTWIRE_TYPIFY_BUNDLE at a bundle)",
            bundle_path.display()
        )
    });
    let bundle: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", bundle_path.display()));
    let mut definitions = match bundle.get("definitions") {
        Some(Value::Object(defs)) => defs.clone(),
        _ => panic!("{} has no `definitions` object", bundle_path.display()),
    };
    // The flat bundle has a single level of definitions; a nested namespace (like `mcp` in the
    // full bundle) is not a schema and cannot be referenced as `#/definitions/<Name>`.
    definitions.retain(|name, def| {
        let namespace = def.is_object() && !looks_like_schema(def);
        if namespace {
            println!("cargo:warning=ignoring `{name}`: a namespace of definitions, not a schema");
        }
        !namespace
    });
    let mut rewrites = Rewrites::default();
    for (name, def) in definitions.iter_mut() {
        normalize(name, "", def, &mut rewrites);
    }

    let methods = collect_methods(&definitions);
    let references: BTreeMap<String, BTreeSet<String>> = definitions
        .iter()
        .map(|(name, def)| {
            let mut refs = BTreeSet::new();
            collect_refs(def, &mut refs);
            refs.retain(|r| definitions.contains_key(r));
            (name.clone(), refs)
        })
        .collect();

    let roots: Vec<String> = methods
        .iter()
        .flat_map(|m| [Some(m.envelope.clone()), m.response_envelope.clone()])
        .flatten()
        .chain(UNIONS.iter().map(|(_, union)| (*union).to_string()))
        .chain(EXTRA_ROOTS.iter().map(|s| (*s).to_string()))
        .filter(|name| definitions.contains_key(name))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();

    let (generated, skipped) = generate_with_fallback(&definitions, &references, &roots);

    let types = format!(
        "// Generated by build.rs from {} with typify 0.8; do not edit.\n{}",
        bundle_path.display(),
        generated.code
    );
    fs::write(out_dir.join("typify_types.rs"), types).expect("write typify_types.rs");

    let index = render_index(&Index {
        bundle_path: &bundle_path,
        bundle: &bundle,
        methods: &methods,
        generated: &generated,
        skipped: &skipped,
        references: &references,
        rewrites: &rewrites,
    });
    fs::write(out_dir.join("bundle_index.rs"), index).expect("write bundle_index.rs");
}

// ---- the bundle ------------------------------------------------------------------------------

/// One method of the bundle, from its envelope definitions (`x-method`).
#[derive(Debug, Default)]
struct MethodDecl {
    method: String,
    direction: String,
    experimental: bool,
    envelope: String,
    response_envelope: Option<String>,
}

/// Whether an object in `definitions` is a schema (as opposed to a namespace of schemas).
fn looks_like_schema(value: &Value) -> bool {
    let Some(obj) = value.as_object() else {
        return true;
    };
    if obj.is_empty() {
        return true;
    }
    const KEYWORDS: &[&str] = &[
        "type",
        "$ref",
        "properties",
        "oneOf",
        "anyOf",
        "allOf",
        "enum",
        "const",
        "items",
        "not",
        "description",
        "title",
        "additionalProperties",
        "required",
        "format",
        "default",
        "$schema",
        "if",
        "then",
        "else",
        "patternProperties",
        "definitions",
    ];
    obj.keys()
        .any(|k| KEYWORDS.contains(&k.as_str()) || k.starts_with("x-"))
}

fn collect_methods(definitions: &Map<String, Value>) -> Vec<MethodDecl> {
    let mut by_method: BTreeMap<(String, String), MethodDecl> = BTreeMap::new();
    for (name, def) in definitions {
        let Some(method) = def.get("x-method").and_then(Value::as_str) else {
            continue;
        };
        let direction = def
            .get("x-direction")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let is_response = def.pointer("/properties/result").is_some();
        let entry = by_method
            .entry((direction.clone(), method.to_string()))
            .or_insert_with(|| MethodDecl {
                method: method.to_string(),
                direction: direction.clone(),
                ..MethodDecl::default()
            });
        entry.experimental |= def
            .get("x-experimental")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if is_response {
            entry.response_envelope = Some(name.clone());
        } else {
            entry.envelope = name.clone();
        }
    }
    by_method
        .into_values()
        .filter(|m| !m.envelope.is_empty())
        .collect()
}

/// What [`normalize`] rewrote, per definition.
#[derive(Default)]
struct Rewrites {
    /// `const` strings turned into one-value `enum`s.
    consts: usize,
    /// (definition, JSON pointer of the schema) where object members were moved into `oneOf`.
    distributed: Vec<(String, String)>,
}

/// Rewrites that keep the meaning of a schema but suit typify 0.8 better (see the crate docs).
fn normalize(definition: &str, pointer: &str, schema: &mut Value, rewrites: &mut Rewrites) {
    let Value::Object(obj) = schema else { return };
    if let Some(c) = obj.get("const").cloned()
        && c.is_string()
        && !obj.contains_key("enum")
    {
        obj.remove("const");
        obj.insert("enum".to_string(), Value::Array(vec![c]));
        rewrites.consts += 1;
    }
    if distribute_into_one_of(obj) {
        rewrites
            .distributed
            .push((definition.to_string(), pointer.to_string()));
    }
    for (key, value) in obj.iter_mut() {
        let here = format!("{pointer}/{key}");
        match key.as_str() {
            "properties" | "patternProperties" | "definitions" | "dependencies" => {
                if let Value::Object(map) = value {
                    for (name, sub) in map.iter_mut() {
                        normalize(definition, &format!("{here}/{name}"), sub, rewrites);
                    }
                }
            }
            "items" | "allOf" | "anyOf" | "oneOf" => match value {
                Value::Array(list) => {
                    for (i, sub) in list.iter_mut().enumerate() {
                        normalize(definition, &format!("{here}/{i}"), sub, rewrites);
                    }
                }
                other => normalize(definition, &here, other, rewrites),
            },
            "additionalProperties"
            | "additionalItems"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames" => normalize(definition, &here, value, rewrites),
            _ => {}
        }
    }
}

/// `{"properties": P, "required": R, "oneOf": [A, B]}` → `{"oneOf": [A+P+R, B+P+R]}`.
///
/// The two accept the same values when every branch is an inline object schema without
/// `additionalProperties` and shares no property name with the outer schema. typify 0.8 merges
/// such outer members into the branches itself, but while doing so "subtracts" the other
/// branches property by property, which turns branches that share a property accepting any
/// value (`"arguments": true`) into types without values (an empty `enum`); a struct with a
/// flattened enum (`#[serde(flatten)]`) is the usual source of this shape.
fn distribute_into_one_of(obj: &mut Map<String, Value>) -> bool {
    const OBJECT_KEYWORDS: &[&str] = &["properties", "required"];
    const BLOCKING: &[&str] = &[
        "anyOf",
        "allOf",
        "not",
        "$ref",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependencies",
        "enum",
        "const",
        "if",
    ];
    let Some(Value::Array(branches)) = obj.get("oneOf") else {
        return false;
    };
    if !OBJECT_KEYWORDS.iter().any(|k| obj.contains_key(*k))
        || BLOCKING.iter().any(|k| obj.contains_key(*k))
    {
        return false;
    }
    if obj.get("type").is_some_and(|t| t != "object") {
        return false;
    }
    let empty = Map::new();
    let outer_props = obj
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let shareable = branches.iter().all(|branch| {
        let Some(b) = branch.as_object() else {
            return false;
        };
        let props = b.get("properties").and_then(Value::as_object);
        !b.contains_key("$ref")
            && !b.contains_key("additionalProperties")
            && !b.contains_key("patternProperties")
            && b.get("type").is_none_or(|t| t == "object")
            && props.is_none_or(|p| outer_props.keys().all(|k| !p.contains_key(k)))
    });
    if !shareable {
        return false;
    }

    let outer_props = obj
        .remove("properties")
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    let outer_required: Vec<Value> = obj
        .remove("required")
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    obj.remove("type");
    if let Some(Value::Array(branches)) = obj.get_mut("oneOf") {
        for branch in branches.iter_mut().filter_map(Value::as_object_mut) {
            branch.insert("type".to_string(), Value::String("object".to_string()));
            let props = branch
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(props) = props {
                props.extend(outer_props.clone());
            }
            let required = branch
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(required) = required {
                for name in &outer_required {
                    if !required.contains(name) {
                        required.push(name.clone());
                    }
                }
            }
        }
    }
    true
}

/// The names of the definitions a schema references directly.
fn collect_refs(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(obj) => {
            if let Some(Value::String(r)) = obj.get("$ref")
                && let Some(name) = r.strip_prefix("#/definitions/")
            {
                out.insert(name.to_string());
            }
            obj.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(list) => list.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// A definition and everything it references, transitively.
fn closure(name: &str, references: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![name.to_string()];
    while let Some(next) = stack.pop() {
        if seen.insert(next.clone())
            && let Some(refs) = references.get(&next)
        {
            stack.extend(refs.iter().filter(|r| !seen.contains(*r)).cloned());
        }
    }
    seen
}

// ---- typify ----------------------------------------------------------------------------------

struct Generated {
    code: String,
    /// Definition name → the Rust type typify gave it, for the roots that were asked for.
    names: BTreeMap<String, String>,
    /// Generated types that cannot hold any value (empty enums).
    uninhabited: Vec<String>,
}

fn settings() -> TypeSpaceSettings {
    // typify always derives Serialize, Deserialize, Debug and Clone, which is all the test needs
    // (more derives only make the generated code slower to compile). Maps with sorted keys
    // serialize the same way every time.
    let mut settings = TypeSpaceSettings::default();
    settings.with_map_type("::std::collections::BTreeMap");
    settings
}

/// Runs typify over `definitions` (all of them), catching panics.
fn run_typify(definitions: &Map<String, Value>, roots: &[String]) -> Result<Generated, String> {
    let root: RootSchema = serde_json::from_value(serde_json::json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": definitions,
    }))
    .map_err(|e| format!("not a schemars 0.8 RootSchema: {e}"))?;

    let message: Arc<Mutex<Option<String>>> = Arc::default();
    let sink = Arc::clone(&message);
    let previous_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(non-string panic payload)".to_string());
        if let Ok(mut slot) = sink.lock() {
            *slot = Some(format!("typify panicked{location}: {payload}"));
        }
    }));
    let result = panic::catch_unwind(AssertUnwindSafe(|| -> Result<Generated, String> {
        let mut space = TypeSpace::new(&settings());
        space
            .add_ref_types(root.definitions.clone())
            .map_err(|e| format!("typify error: {e}"))?;
        let mut names = BTreeMap::new();
        for name in roots {
            if !root.definitions.contains_key(name) {
                continue;
            }
            let reference = Schema::new_ref(format!("#/definitions/{name}"));
            let id = space
                .add_type(&reference)
                .map_err(|e| format!("typify error on {name}: {e}"))?;
            let ty = space
                .get_type(&id)
                .map_err(|e| format!("typify error on {name}: {e}"))?;
            names.insert(name.clone(), ty.name());
        }
        // typify turns a schema it decides nothing can satisfy into an enum without variants.
        let uninhabited = space
            .iter_types()
            .filter(
                |ty| matches!(ty.details(), TypeDetails::Enum(e) if e.variants().next().is_none()),
            )
            .map(|ty| ty.name())
            .collect();
        Ok(Generated {
            code: space.to_stream().to_string(),
            names,
            uninhabited,
        })
    }));
    panic::set_hook(previous_hook);
    match result {
        Ok(generated) => generated,
        Err(_) => Err(message
            .lock()
            .ok()
            .and_then(|m| m.clone())
            .unwrap_or_else(|| "typify panicked".to_string())),
    }
}

/// The opaque stand-in for a definition typify cannot handle: any JSON value.
fn opaque(name: &str, error: &str) -> Value {
    serde_json::json!({
        "description": format!("`{name}`: typify 0.8 could not convert this definition ({error}); accepts any value."),
    })
}

/// Runs typify on the whole bundle; if that fails, finds the definitions typify chokes on,
/// replaces them by opaque schemas and runs again. Returns the code and the replaced names.
fn generate_with_fallback(
    definitions: &Map<String, Value>,
    references: &BTreeMap<String, BTreeSet<String>>,
    roots: &[String],
) -> (Generated, BTreeMap<String, String>) {
    let first_error = match run_typify(definitions, roots) {
        Ok(generated) => return (generated, BTreeMap::new()),
        Err(e) => e,
    };
    println!(
        "cargo:warning=typify failed on the whole bundle ({first_error}); looking for the definitions it cannot handle"
    );

    // Dependencies first: a definition's closure contains the closures of what it references,
    // so sorting by closure size checks every definition after the ones it needs (members of a
    // reference cycle share one closure and are checked in name order).
    let closures: BTreeMap<&String, BTreeSet<String>> = definitions
        .keys()
        .map(|name| (name, closure(name, references)))
        .collect();
    let mut order: Vec<&String> = definitions.keys().collect();
    order.sort_by_key(|name| (closures[name].len(), (*name).clone()));

    let mut patched = definitions.clone();
    let mut skipped: BTreeMap<String, String> = BTreeMap::new();
    for name in order {
        let subset: Map<String, Value> = closures[name]
            .iter()
            .map(|n| (n.clone(), patched[n].clone()))
            .collect();
        if let Err(error) = run_typify(&subset, &[]) {
            println!("cargo:warning=typify cannot handle `{name}`: {error}");
            patched.insert(name.clone(), opaque(name, &error));
            skipped.insert(name.clone(), error);
            assert!(
                skipped.len() <= MAX_SKIPPED,
                "typify chokes on more than {MAX_SKIPPED} definitions: {:?}",
                skipped.keys().collect::<Vec<_>>()
            );
        }
    }
    match run_typify(&patched, roots) {
        Ok(generated) => (generated, skipped),
        Err(e) => panic!(
            "typify still fails with {} definition(s) replaced ({:?}): {e}",
            skipped.len(),
            skipped.keys().collect::<Vec<_>>()
        ),
    }
}

// ---- the index -------------------------------------------------------------------------------

/// What the index file is written from.
struct Index<'a> {
    bundle_path: &'a Path,
    bundle: &'a Value,
    methods: &'a [MethodDecl],
    generated: &'a Generated,
    skipped: &'a BTreeMap<String, String>,
    references: &'a BTreeMap<String, BTreeSet<String>>,
    rewrites: &'a Rewrites,
}

fn render_index(index: &Index<'_>) -> String {
    let Index {
        bundle_path,
        bundle,
        methods,
        generated,
        skipped,
        references,
        rewrites,
    } = *index;
    let names = &generated.names;
    let version = bundle.get("x-protocol-version").and_then(Value::as_str);

    let mut out = String::from("// Generated by build.rs; do not edit.\n");
    let mut item = |doc: &str, code: String| {
        out.push_str(&format!("/// {doc}\n{code}\n"));
    };
    let list = |rows: Vec<String>| {
        rows.iter()
            .map(|row| format!("    {row},\n"))
            .collect::<String>()
    };

    item(
        "The bundle the types were generated from.",
        format!(
            "pub const BUNDLE_PATH: &str = {:?};",
            bundle_path.display().to_string()
        ),
    );
    item(
        "The bundle's `x-protocol-version`, if it has one.",
        format!("pub const PROTOCOL_VERSION: Option<&str> = {version:?};"),
    );
    item(
        "Definitions typify could not convert, replaced by `serde_json::Value`, with the reason.",
        format!(
            "pub const SKIPPED: &[(&str, &str)] = &[\n{}];",
            list(
                skipped
                    .iter()
                    .map(|(n, r)| format!("({n:?}, {r:?})"))
                    .collect()
            )
        ),
    );
    item(
        "Generated types typify made uninhabitable (enums without variants).",
        format!(
            "pub const UNINHABITED: &[&str] = &{:?};",
            generated.uninhabited
        ),
    );
    item(
        "How many `const` strings build.rs turned into one-value `enum`s.",
        format!("pub const CONSTS_REWRITTEN: usize = {};", rewrites.consts),
    );
    item(
        "(definition, JSON pointer) where build.rs moved object members into `oneOf` branches.",
        format!(
            "pub const ONE_OF_DISTRIBUTED: &[(&str, &str)] = &[\n{}];",
            list(
                rewrites
                    .distributed
                    .iter()
                    .map(|(d, p)| format!("({d:?}, {p:?})"))
                    .collect()
            )
        ),
    );

    let method_rows = methods
        .iter()
        .map(|m| {
            let reached: BTreeSet<String> = std::iter::once(&m.envelope)
                .chain(m.response_envelope.as_ref())
                .flat_map(|root| closure(root, references))
                .filter(|n| skipped.contains_key(n))
                .collect();
            format!(
                "MethodEntry {{ method: {:?}, direction: {:?}, experimental: {}, envelope: {:?}, \
                 response_envelope: {:?}, skipped_reached: &{:?} }}",
                m.method,
                m.direction,
                m.experimental,
                m.envelope,
                m.response_envelope,
                reached.iter().collect::<Vec<_>>(),
            )
        })
        .collect();
    item(
        "Every method of the bundle (definitions with `x-method`).",
        format!(
            "pub const METHODS: &[MethodEntry] = &[\n{}];",
            list(method_rows)
        ),
    );
    item(
        "The union of envelopes for each direction, when the bundle declares it.",
        format!(
            "pub const UNIONS: &[(&str, &str)] = &[\n{}];",
            list(
                UNIONS
                    .iter()
                    .filter(|(_, union)| names.contains_key(*union))
                    .map(|(d, u)| format!("({d:?}, {u:?})"))
                    .collect()
            )
        ),
    );
    item(
        "The Rust name typify gave each definition the tests use.",
        format!(
            "pub const RUST_NAMES: &[(&str, &str)] = &[\n{}];",
            list(
                names
                    .iter()
                    .map(|(d, r)| format!("({d:?}, {r:?})"))
                    .collect()
            )
        ),
    );
    let arms: String = names
        .iter()
        .map(|(definition, rust)| {
            format!(
                "        {definition:?} => Some(crate::roundtrip::<crate::types::{rust}>(line)),\n"
            )
        })
        .collect();
    item(
        "Deserializes `line` into the typify type generated for the definition `definition` and\n\
         /// checks that it survives a serialize → deserialize round trip. `None` when the bundle\n\
         /// has no such definition.",
        format!(
            "pub fn check_definition(definition: &str, line: &str) \
             -> Option<Result<serde_json::Value, CheckError>> {{\n    match definition {{\n{arms}        _ => None,\n    }}\n}}"
        ),
    );
    out
}
