//! Side-by-side comparison of our stable bundle with the reference wire format.
//!
//! The reference bundle (`codex-app-server-schema/` of the reference material, found by
//! `agentwire-reference-material`) is laid out differently
//! (a nested `v2` namespace, no per-method envelopes), so it is first rewritten into our layout for
//! every method we declare; then the schema diff compares the two. Every difference it reports —
//! a property name, a required set, a type, an enum value, a union variant, a method — must be
//! listed in `reference-allowlist.txt` with a reason; stale allowlist entries fail too.

use std::collections::BTreeSet;
use std::path::PathBuf;

use agentwire_codegen::Surface;
use agentwire_codegen::diff::diff_bundles;
use agentwire_codegen::schema::{self, X_DIRECTION, X_METHOD};
use serde_json::{Map, Value, json};

fn reference_dir() -> PathBuf {
    agentwire_reference_material::file("codex-app-server-schema")
}

fn read_json(path: &PathBuf) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Rewrites `#/definitions/v2/X` references to `#/definitions/X`.
fn flatten_refs(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, v) in object.iter_mut() {
                if key == "$ref" {
                    if let Value::String(r) = v {
                        *r = r.replace("#/definitions/v2/", "#/definitions/");
                    }
                } else {
                    flatten_refs(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(flatten_refs),
        _ => {}
    }
}

/// The reference's envelope branch for `method` in the union of `direction`.
fn reference_branch<'a>(reference: &'a Value, union: &str, method: &str) -> Option<&'a Value> {
    reference["definitions"][union]["oneOf"]
        .as_array()?
        .iter()
        .find(|branch| {
            branch["properties"]["method"]["enum"]
                .get(0)
                .and_then(Value::as_str)
                == Some(method)
        })
}

fn union_of(direction: &str) -> &'static str {
    match direction {
        "clientRequest" => "ClientRequest",
        "serverRequest" => "ServerRequest",
        "serverNotification" => "ServerNotification",
        _ => "ClientNotification",
    }
}

/// The reference rewritten into our layout, restricted to the methods we declare that it has.
/// Also returns the names of our methods it lacks, and of those it has that we refuse.
fn reference_in_our_layout(ours: &Value) -> (Value, BTreeSet<String>, BTreeSet<String>) {
    let raw = read_json(&reference_dir().join("codex_app_server_protocol.schemas.json"));
    let mut definitions = Map::new();
    for (name, schema) in raw["definitions"]
        .as_object()
        .expect("reference definitions")
    {
        if name != "v2" {
            definitions.insert(name.clone(), schema.clone());
        }
    }
    for (name, schema) in raw["definitions"]["v2"]
        .as_object()
        .expect("reference v2 definitions")
    {
        definitions.insert(name.clone(), schema.clone());
    }
    let mut missing = BTreeSet::new();
    let mut refused = BTreeSet::new();
    let ours_definitions = ours["definitions"].as_object().expect("our definitions");
    for (envelope_name, envelope) in ours_definitions {
        let (Some(method), Some(direction)) =
            (envelope[X_METHOD].as_str(), envelope[X_DIRECTION].as_str())
        else {
            continue;
        };
        let Some(branch) = reference_branch(&raw, union_of(direction), method) else {
            missing.insert(method.to_owned());
            continue;
        };
        if agentwire_protocol::methods::find(method).is_some_and(|m| m.unavailable().is_some()) {
            // Refused here (`unavailable:`): its params are accepted as any object and it never
            // answers a result, so only its name is compared (the branch exists).
            refused.insert(method.to_owned());
            continue;
        }
        let mut converted = envelope.clone();
        match branch["properties"].get("params") {
            Some(params) if envelope["properties"].get("result").is_none() => {
                converted["properties"]["params"] = params.clone();
            }
            _ => {}
        }
        definitions.insert(envelope_name.clone(), converted);
    }
    let mut bundle = json!({ "$schema": schema::DRAFT_07, "definitions": definitions });
    flatten_refs(&mut bundle);
    (bundle, missing, refused)
}

/// Our stable bundle without the given methods (those the reference lacks, those we refuse).
fn ours_restricted(ours: &Value, missing: &BTreeSet<String>) -> Value {
    let mut ours = ours.clone();
    let Some(definitions) = ours["definitions"].as_object_mut() else {
        return ours;
    };
    let removed: BTreeSet<String> = definitions
        .iter()
        .filter(|(_, d)| d[X_METHOD].as_str().is_some_and(|m| missing.contains(m)))
        .map(|(name, _)| format!("#/definitions/{name}"))
        .collect();
    definitions.retain(|name, _| !removed.contains(&format!("#/definitions/{name}")));
    for (union, _, _) in schema::UNIONS {
        if let Some(Value::Array(branches)) =
            definitions.get_mut(union).and_then(|u| u.get_mut("oneOf"))
        {
            branches.retain(|b| b["$ref"].as_str().is_none_or(|r| !removed.contains(r)));
        }
    }
    ours
}

struct Allowed {
    key: String,
    used: bool,
}

fn allowlist() -> Vec<Allowed> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference-allowlist.txt");
    let text = std::fs::read_to_string(&path).expect("read the allowlist");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let (key, reason) = line
                .split_once(" | ")
                .unwrap_or_else(|| panic!("allowlist line without ` | reason`: {line}"));
            assert!(
                !reason.trim().is_empty(),
                "allowlist line without a reason: {line}"
            );
            Allowed {
                key: key.trim().to_owned(),
                used: false,
            }
        })
        .collect()
}

#[test]
fn stable_bundle_matches_the_reference_wire_format() {
    let collected = schema::collect(Surface::Stable);
    let ours = schema::flat_bundle(&collected);
    let (reference, missing, refused) = reference_in_our_layout(&ours);
    assert!(
        !refused.is_empty(),
        "no refused method found in the reference"
    );
    let left_out: BTreeSet<String> = missing.union(&refused).cloned().collect();
    let report =
        diff_bundles(&reference, &ours_restricted(&ours, &left_out)).expect("diff the bundles");

    let mut allowed = allowlist();
    let mut unexplained = Vec::new();
    let mut differences: Vec<String> = missing
        .iter()
        .map(|m| format!("method-not-in-reference {m}"))
        .collect();
    differences.extend(
        report
            .changes
            .iter()
            .map(|c| format!("{} {}", c.rule.name(), c.location)),
    );
    for difference in &differences {
        match allowed.iter_mut().find(|a| a.key == *difference) {
            Some(entry) => entry.used = true,
            None => unexplained.push(difference.clone()),
        }
    }
    let stale: Vec<&str> = allowed
        .iter()
        .filter(|a| !a.used)
        .map(|a| a.key.as_str())
        .collect();
    let detail: Vec<String> = report
        .changes
        .iter()
        .map(|c| format!("  {} {} — {}", c.rule.name(), c.location, c.detail))
        .collect();
    assert!(
        unexplained.is_empty() && stale.is_empty(),
        "{} differences from the reference are not in tests/reference-allowlist.txt:\n  {}\n\n\
         {} allowlist entries match nothing (remove them):\n  {}\n\nall changes:\n{}",
        unexplained.len(),
        unexplained.join("\n  "),
        stale.len(),
        stale.join("\n  "),
        detail.join("\n")
    );
}

#[test]
fn every_declared_stable_method_is_compared() {
    // A comparison that silently skips methods proves nothing: at least the core methods must be
    // present on both sides.
    let collected = schema::collect(Surface::Stable);
    let ours = schema::flat_bundle(&collected);
    let (reference, missing, _refused) = reference_in_our_layout(&ours);
    for method in [
        "initialize",
        "thread/start",
        "turn/start",
        "item/completed",
        "item/commandExecution/requestApproval",
    ] {
        assert!(
            !missing.contains(method),
            "{method} not found in the reference"
        );
        let found = reference["definitions"]
            .as_object()
            .expect("definitions")
            .values()
            .any(|d| d[X_METHOD] == method);
        assert!(found, "{method} not converted");
    }
    assert!(
        missing.len() <= 3,
        "too many methods absent from the reference: {missing:?}"
    );
}
