//! `agentwire app-server generate-openrpc`: the document it writes is the checked-in one, it
//! lists the method table, its examples are answered by the binary, and its error `data` shape
//! is what the binary sends.

use std::path::PathBuf;

use agentwire_protocol::method::Direction;
use agentwire_protocol::methods::METHODS;
use serde_json::{Map, Value, json};

use crate::client::Client;
use crate::common::{agentwire, repo, scratch, text};

const FILE: &str = "agentwire_app_server_protocol.openrpc.json";

fn checked_in(experimental: bool) -> PathBuf {
    let dir = if experimental {
        "generated/schema/experimental/openrpc"
    } else {
        "generated/schema/openrpc"
    };
    repo().join(dir).join(FILE)
}

/// Runs `generate-openrpc` with `flags`; returns the written bytes, or the failure's stderr.
fn generate(name: &str, flags: &[&str]) -> Result<Vec<u8>, String> {
    let dir = scratch(&format!("openrpc-{name}"));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let out = dir.join("openrpc.json");
    let out_arg = out.to_str().expect("utf-8 path");
    let mut args = vec!["app-server", "generate-openrpc", "--out", out_arg];
    args.extend_from_slice(flags);
    let output = agentwire(&args);
    let (_, stderr) = text(&output);
    let result = if output.status.success() {
        Ok(std::fs::read(&out).expect("the document was written"))
    } else {
        Err(stderr)
    };
    let _ = std::fs::remove_dir_all(dir);
    result
}

fn document(experimental: bool) -> Value {
    let bytes = std::fs::read(checked_in(experimental)).expect("checked-in document");
    serde_json::from_slice(&bytes).expect("the document is JSON")
}

#[test]
fn output_equals_the_checked_in_documents_for_every_pinned_version() {
    for (name, flags, experimental) in [
        ("stable", &[][..], false),
        ("experimental", &["--experimental"][..], true),
        (
            "pinned",
            &["--protocol-version", agentwire_protocol::PROTOCOL_VERSION][..],
            false,
        ),
    ] {
        let written = generate(name, flags).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected = std::fs::read(checked_in(experimental)).expect("checked-in document");
        assert!(
            written == expected,
            "{name}: generate-openrpc {flags:?} differs from {}",
            checked_in(experimental).display()
        );
    }
    // Every pinned release has a document, derived from its pinned bundle: the binary writes
    // the checked-in bytes, OpenRPC 1.2.6, with every method of that release's meta.json.
    let versions = std::fs::read_dir(repo().join("generated/versions")).expect("pinned versions");
    let mut seen = Vec::new();
    for version in versions {
        let version = version
            .expect("entry")
            .file_name()
            .into_string()
            .expect("utf-8");
        for surface in ["", "experimental/"] {
            let mut flags = vec!["--protocol-version", version.as_str()];
            if !surface.is_empty() {
                flags.push("--experimental");
            }
            let dir = repo().join(format!("generated/versions/{version}/{surface}"));
            let written = generate(&format!("v{version}"), &flags)
                .unwrap_or_else(|e| panic!("{version} {surface}: {e}"));
            let expected = std::fs::read(dir.join("openrpc").join(FILE))
                .unwrap_or_else(|e| panic!("{version} {surface}: no checked-in document: {e}"));
            assert!(
                written == expected,
                "{version} {surface}: differs from the checked-in document"
            );
            let document: Value = serde_json::from_slice(&written).expect("JSON");
            assert_eq!(document["openrpc"], json!("1.2.6"), "{version}");
            assert_eq!(document["info"]["version"], json!(version));
            let meta: Value = serde_json::from_slice(
                &std::fs::read(dir.join("json/meta.json")).expect("pinned meta.json"),
            )
            .expect("meta.json is JSON");
            let listed = [
                "methods",
                "x-server-requests",
                "x-server-notifications",
                "x-client-notifications",
            ]
            .iter()
            .map(|key| document[*key].as_array().map_or(0, Vec::len))
            .sum::<usize>();
            assert_eq!(
                listed,
                meta["methods"].as_array().map_or(0, Vec::len),
                "{version} {surface}: every method of meta.json"
            );
            if version != agentwire_protocol::PROTOCOL_VERSION {
                let examples = document["methods"]
                    .as_array()
                    .expect("methods")
                    .iter()
                    .filter(|m| m.get("examples").is_some())
                    .count();
                assert_eq!(
                    examples, 0,
                    "{version}: examples recorded with another version"
                );
            }
            seen.push(version.clone());
        }
    }
    assert!(
        seen.iter().any(|v| v == "0.1.0"),
        "0.1.0 has a document: {seen:?}"
    );
    // 1.3.2 on request: the same document but for the version it declares.
    let newer = generate("openrpc-1.3.2", &["--openrpc-version", "1.3.2"]).expect("1.3.2");
    let mut newer: Value = serde_json::from_slice(&newer).expect("JSON");
    assert_eq!(newer["openrpc"], json!("1.3.2"));
    newer["openrpc"] = json!("1.2.6");
    assert_eq!(newer, document(false), "only the declared version differs");
    let refused = generate("openrpc-2", &["--openrpc-version", "2.0.0"]).expect_err("no 2.0.0");
    assert!(
        refused.contains("\"2.0.0\"") && refused.contains("1.2.6") && refused.contains("1.3.2"),
        "the error names the version asked for and the ones there are: {refused}"
    );
    let unknown = generate("unknown", &["--protocol-version", "9.9.9"]).expect_err("no 9.9.9");
    assert!(unknown.contains("\"9.9.9\""), "{unknown}");

    let dir = scratch("openrpc-out-dir");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let output = agentwire(&[
        "app-server",
        "generate-openrpc",
        "--out",
        dir.to_str().expect("utf-8 path"),
    ]);
    let (_, stderr) = text(&output);
    assert!(!output.status.success(), "a directory as --out must fail");
    assert!(stderr.contains("--out"), "the error names --out: {stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn every_method_of_the_table_is_listed_under_its_direction() {
    for experimental in [false, true] {
        let doc = document(experimental);
        let schemas = doc["components"]["schemas"]
            .as_object()
            .expect("components/schemas");
        for info in METHODS.iter().filter(|m| experimental || !m.experimental) {
            let list = match info.direction {
                Direction::ClientRequest => "methods",
                Direction::ServerRequest => "x-server-requests",
                Direction::ServerNotification => "x-server-notifications",
                Direction::ClientNotification => "x-client-notifications",
            };
            let found = doc[list]
                .as_array()
                .and_then(|l| l.iter().find(|m| m["name"] == info.name))
                .unwrap_or_else(|| panic!("{} is not under {list}", info.name));
            assert_eq!(found["x-since"], info.since, "{}", info.name);
            assert_eq!(found["x-experimental"], info.experimental, "{}", info.name);
            assert_eq!(found["paramStructure"], "by-name", "{}", info.name);
            if let Some(response) = info.response {
                assert_eq!(
                    found["result"]["schema"]["$ref"],
                    format!("#/components/schemas/{response}"),
                    "{}",
                    info.name
                );
                assert!(schemas.contains_key(response), "{response} is a component");
            }
            let schema = &found["x-params-schema"];
            if schema["type"] == "null" {
                assert_eq!(found["params"], json!([]), "{}: no params", info.name);
            } else {
                let pointer = schema["$ref"]
                    .as_str()
                    .or_else(|| schema["anyOf"][0]["$ref"].as_str())
                    .unwrap_or_else(|| panic!("{}: x-params-schema {schema}", info.name));
                let definition = pointer.trim_start_matches("#/components/schemas/");
                let params_schema = schemas
                    .get(definition)
                    .unwrap_or_else(|| panic!("{}: {definition} is not a component", info.name));
                // The object's properties and those of each branch of a union.
                let branches = ["oneOf", "anyOf"]
                    .iter()
                    .filter_map(|k| params_schema[*k].as_array())
                    .flatten();
                let mut expected: Vec<&str> = std::iter::once(params_schema)
                    .chain(branches)
                    .filter_map(|part| part["properties"].as_object())
                    .flat_map(|p| p.keys().map(String::as_str))
                    .collect();
                expected.sort_unstable();
                expected.dedup();
                let mut listed: Vec<&str> = found["params"]
                    .as_array()
                    .expect("params")
                    .iter()
                    .filter_map(|p| p["name"].as_str())
                    .collect();
                listed.sort_unstable();
                assert_eq!(listed, expected, "{}: one param per property", info.name);
            }
            if info.direction == Direction::ClientRequest {
                let codes: Vec<&str> = found["errors"]
                    .as_array()
                    .expect("errors")
                    .iter()
                    .filter_map(|e| e["$ref"].as_str())
                    .collect();
                assert!(
                    codes.contains(&"#/components/errors/InvalidParams"),
                    "{}: {codes:?}",
                    info.name
                );
            }
        }
        // Nothing that is not in the table.
        let listed: usize = [
            "methods",
            "x-server-requests",
            "x-server-notifications",
            "x-client-notifications",
        ]
        .iter()
        .map(|l| doc[*l].as_array().map_or(0, Vec::len))
        .sum();
        let declared = METHODS
            .iter()
            .filter(|m| experimental || !m.experimental)
            .count();
        assert_eq!(listed, declared, "experimental={experimental}");
    }
}

/// The by-name params object of an example.
fn example_params(example: &Value) -> Value {
    let mut object = Map::new();
    for param in example["params"].as_array().expect("example params") {
        let name = param["name"].as_str().expect("param name");
        object.insert(name.to_owned(), param["value"].clone());
    }
    Value::Object(object)
}

#[test]
fn every_example_is_answered_with_a_result_by_a_fresh_server() {
    let doc = document(true);
    let home = scratch("openrpc-examples");
    let mut client = Client::start(&home);
    let mut replayed = 0;
    for method in doc["methods"].as_array().expect("methods") {
        let name = method["name"].as_str().expect("method name");
        // `initialize` was the handshake; a second one is refused by design.
        if name == "initialize" {
            continue;
        }
        for example in method["examples"].as_array().into_iter().flatten() {
            let params = example_params(example);
            let result = client.request(name, params.clone());
            assert!(
                result.is_ok(),
                "{name} {params}: the recorded example is refused: {result:?}"
            );
            replayed += 1;
        }
    }
    assert!(replayed >= 10, "only {replayed} examples replayed");
    let _ = client.stop();
}

#[test]
fn the_invalid_params_data_is_what_the_server_sends() {
    let doc = document(false);
    let data_schema = &doc["components"]["schemas"]["InvalidParamsData"];
    assert_eq!(
        doc["x-error-data"]["InvalidParams"]["$ref"],
        "#/components/schemas/InvalidParamsData"
    );
    let home = scratch("openrpc-invalid-params");
    let mut client = Client::start(&home);
    let error = client.call_err("thread/list", json!({"limit": "ten"}));
    assert_eq!(error["code"], -32602, "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("limit"),
        "the message names the field: {message}"
    );
    let data = error["data"].as_object().expect("data is an object");
    for required in data_schema["required"].as_array().expect("required") {
        let key = required.as_str().expect("a name");
        assert!(data.contains_key(key), "data lacks {key}: {error}");
    }
    let first = &data["errors"][0];
    assert_eq!(first["pointer"], "/limit", "{error}");
    assert!(first["message"].is_string(), "{error}");
    let _ = client.stop();
}
