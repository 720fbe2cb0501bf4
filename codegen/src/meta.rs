//! `meta.json`: every method of a surface as data, for tools that do not read Rust.

use serde_json::{Value, json};

use crate::schema::Collected;

/// File name of the method index.
pub const META_FILE: &str = "meta.json";

/// The method index of a surface.
pub fn meta(collected: &Collected) -> Value {
    let pointer = |name: &String| format!("#/definitions/{name}");
    let methods: Vec<Value> = collected
        .methods
        .iter()
        .map(|m| {
            json!({
                "method": m.name,
                "direction": m.direction.wire_name(),
                "experimental": m.experimental,
                "since": m.since,
                "params": m.params.as_ref().map(pointer),
                "paramsOptional": m.params_optional,
                "response": m.response.as_ref().map(pointer),
                "envelope": pointer(&m.envelope()),
                "responseEnvelope": m.response_envelope().as_ref().map(pointer),
                "doc": m.doc,
            })
        })
        .collect();
    json!({
        "protocolVersion": agentwire_protocol::PROTOCOL_VERSION,
        "experimentalSurface": collected.surface.is_experimental(),
        "methods": methods,
    })
}
