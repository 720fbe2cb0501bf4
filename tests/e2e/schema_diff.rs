//! `agentwire schema diff OLD NEW` on hand-made changes to the real bundle.

use serde_json::{Value, json};

use crate::common::{agentwire, repo, scratch, text};

fn bundle() -> Value {
    let path = repo().join("generated/schema/json/agentwire_app_server_protocol.schemas.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("read bundle"))
        .expect("bundle is JSON")
}

/// Runs the diff of the real bundle against `edit(real bundle)`; returns (exit code, stdout).
fn diff_after(name: &str, edit: impl FnOnce(&mut Value)) -> (i32, String) {
    let dir = scratch(&format!("diff-{name}"));
    let old = bundle();
    let mut new = old.clone();
    edit(&mut new);
    let old_path = dir.join("old.json");
    let new_path = dir.join("new.json");
    std::fs::write(&old_path, old.to_string()).expect("write old");
    std::fs::write(&new_path, new.to_string()).expect("write new");
    let output = agentwire(&[
        "schema",
        "diff",
        old_path.to_str().expect("utf-8"),
        new_path.to_str().expect("utf-8"),
    ]);
    let (stdout, stderr) = text(&output);
    let _ = std::fs::remove_dir_all(dir);
    (
        output.status.code().expect("exit code"),
        format!("{stdout}{stderr}"),
    )
}

/// Removes a string from an enum, whether written as `enum: [...]` or as a `oneOf` of documented
/// single-value enums.
fn remove_enum_value(schema: &mut Value, value: &str) {
    if let Some(values) = schema.get_mut("enum").and_then(Value::as_array_mut) {
        values.retain(|v| v != value);
    }
    if let Some(branches) = schema.get_mut("oneOf").and_then(Value::as_array_mut) {
        branches.retain(|b| b["enum"] != json!([value]));
    }
}

fn definitions(bundle: &mut Value) -> &mut serde_json::Map<String, Value> {
    bundle["definitions"].as_object_mut().expect("definitions")
}

#[test]
fn identical_bundles_have_no_changes() {
    let (code, out) = diff_after("identical", |_| {});
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 breaking"), "{out}");
}

#[test]
fn removing_a_method_is_breaking() {
    let (code, out) = diff_after("method-removed", |b| {
        definitions(b).remove("ThreadArchiveRequestEnvelope");
        definitions(b).remove("ThreadArchiveResponseEnvelope");
        let branches = b["definitions"]["ClientRequest"]["oneOf"]
            .as_array_mut()
            .expect("union");
        branches.retain(|r| r["$ref"] != "#/definitions/ThreadArchiveRequestEnvelope");
    });
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("method-removed") && out.contains("thread/archive"),
        "{out}"
    );
}

#[test]
fn removing_a_response_field_is_breaking() {
    let (code, out) = diff_after("field-removed", |b| {
        definitions(b)["Thread"]["properties"]
            .as_object_mut()
            .expect("props")
            .remove("preview");
        let required = b["definitions"]["Thread"]["required"]
            .as_array_mut()
            .expect("required");
        required.retain(|r| r != "preview");
    });
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("field-removed") && out.contains("preview"),
        "{out}"
    );
}

#[test]
fn making_an_optional_param_required_is_breaking() {
    let (code, out) = diff_after("made-required", |b| {
        let params = &mut definitions(b)["ThreadStartParams"];
        params["required"] = json!(["cwd"]);
    });
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("optional-field-made-required") && out.contains("thread/start"),
        "{out}"
    );
}

#[test]
fn removing_an_enum_value_is_breaking() {
    let (code, out) = diff_after("enum-value-removed", |b| {
        remove_enum_value(&mut definitions(b)["SandboxMode"], "danger-full-access");
    });
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("enum-value-removed") && out.contains("danger-full-access"),
        "{out}"
    );
}

#[test]
fn changing_a_type_is_breaking() {
    let (code, out) = diff_after("type-changed", |b| {
        definitions(b)["AgentMessageDeltaNotification"]["properties"]["delta"] =
            json!({ "type": "integer" });
    });
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("type-changed") && out.contains("item/agentMessage/delta"),
        "{out}"
    );
}

#[test]
fn adding_a_method_and_an_optional_field_is_compatible() {
    let (code, out) = diff_after("compatible", |b| {
        let mut envelope = b["definitions"]["ThreadArchiveRequestEnvelope"].clone();
        envelope["x-method"] = json!("thread/pin");
        envelope["properties"]["method"]["enum"] = json!(["thread/pin"]);
        definitions(b).insert("ThreadPinRequestEnvelope".into(), envelope);
        let mut response = b["definitions"]["ThreadArchiveResponseEnvelope"].clone();
        response["x-method"] = json!("thread/pin");
        definitions(b).insert("ThreadPinResponseEnvelope".into(), response);
        definitions(b)["ThreadStartParams"]["properties"]["color"] =
            json!({ "type": ["string", "null"] });
    });
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("method-added") && out.contains("thread/pin"),
        "{out}"
    );
    assert!(
        out.contains("optional-field-added") && out.contains("color"),
        "{out}"
    );
}

#[test]
fn json_format_reports_every_change() {
    let dir = scratch("diff-json");
    let old = bundle();
    let mut new = old.clone();
    remove_enum_value(&mut definitions(&mut new)["SandboxMode"], "read-only");
    std::fs::write(dir.join("old.json"), old.to_string()).expect("write");
    std::fs::write(dir.join("new.json"), new.to_string()).expect("write");
    let output = agentwire(&[
        "schema",
        "diff",
        dir.join("old.json").to_str().expect("utf-8"),
        dir.join("new.json").to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    let _ = std::fs::remove_dir_all(dir);
    assert_eq!(output.status.code(), Some(1));
    let changes = report["changes"].as_array().expect("changes array");
    assert!(
        changes.iter().any(|c| c["rule"] == "enum-value-removed"),
        "{report}"
    );
}

#[test]
fn unreadable_bundles_are_named_in_the_error() {
    let dir = scratch("diff-bad");
    let missing = dir.join("missing.json");
    let not_json = dir.join("not.json");
    std::fs::write(&not_json, "{ nope").expect("write");
    let real = repo().join("generated/schema/json");
    let output = agentwire(&[
        "schema",
        "diff",
        missing.to_str().expect("utf-8"),
        real.to_str().expect("utf-8"),
    ]);
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains("cannot read bundle") && stderr.contains("missing.json"),
        "{stderr}"
    );
    let output = agentwire(&[
        "schema",
        "diff",
        real.to_str().expect("utf-8"),
        not_json.to_str().expect("utf-8"),
    ]);
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(stderr.contains("not.json is not JSON"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}
