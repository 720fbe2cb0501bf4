//! `agentwire conformance` through the binary: against agentwire itself (stdio with the mock
//! model, and a websocket listener), and against a deliberately broken server whose failures
//! must be reported with line, method and JSON pointer.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::app_server_ws::App;
use crate::common::scratch;

fn agentwire_bin() -> &'static str {
    env!("CARGO_BIN_EXE_agentwire")
}

/// Runs `agentwire conformance ARGS`.
fn conformance(args: &[&str]) -> Output {
    Command::new(agentwire_bin())
        .arg("conformance")
        .args(args)
        .output()
        .expect("spawn agentwire conformance")
}

/// The `--format json` report and the exit code.
fn json_report(args: &[&str]) -> (i32, Value) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let output = conformance(&all);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not a JSON report ({e}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().expect("exit code"), report)
}

fn scenario<'r>(report: &'r Value, name: &str) -> &'r Value {
    report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no scenario {name} in {report:#}"))
}

/// agentwire's command line pointed at the mock model.
fn agentwire_with_mock(extra: &str) -> String {
    format!(
        "{} app-server {extra} -c model_provider=\\\"mock\\\" -c 'model_providers.mock.base_url=\"{{mock_url}}\"' \
         -c model_providers.mock.wire_api=\\\"responses\\\" -c model=\\\"mock-model\\\"",
        agentwire_bin()
    )
}

#[test]
fn every_scenario_passes_against_agentwire_with_the_mock_model() {
    let server = agentwire_with_mock("--max-in-flight 1");
    let transcripts = scratch("conformance-transcripts");
    let (code, report) = json_report(&[
        "--server",
        &server,
        "--mock-model",
        "--bounded-queue",
        "1",
        "--transcripts",
        transcripts.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["ok"], json!(true), "{report:#}");
    let scenarios = report["scenarios"].as_array().expect("scenarios");
    assert!(scenarios.len() >= 17, "{report:#}");
    for s in scenarios {
        assert_eq!(s["result"], json!("pass"), "{s:#}");
        assert!(s["messages"].as_u64().expect("messages") > 0, "{s:#}");
        assert_eq!(s["violations"], json!([]), "{s:#}");
    }
    assert_eq!(report["failed"], json!(0));
    assert_eq!(report["skipped"], json!(0));
    // The scripted turn saw every item type; the approvals did what their answers said.
    let turn = scenario(&report, "turns/every-item-type");
    for item in [
        "userMessage",
        "reasoning",
        "agentMessage",
        "commandExecution",
        "fileChange",
    ] {
        assert!(
            turn["detail"].as_str().expect("detail").contains(item),
            "{turn:#}"
        );
    }
    let cancelled = scenario(&report, "approvals/cancelled");
    assert!(
        cancelled["detail"]
            .as_str()
            .expect("detail")
            .contains("turn interrupted"),
        "{cancelled:#}"
    );
    // Each scenario's transcript is one `contract check` accepts.
    let file = transcripts.join("turns-every-item-type.jsonl");
    let checked = Command::new(agentwire_bin())
        .args(["contract", "check", "--experimental"])
        .arg(&file)
        .output()
        .expect("contract check");
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stdout)
    );
}

#[test]
fn without_the_mock_model_scripted_scenarios_are_skipped_with_the_reason() {
    let server = format!("{} app-server", agentwire_bin());
    let output = conformance(&["--server", &server]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let skipped: Vec<&str> = text.lines().filter(|l| l.starts_with("skip")).collect();
    for name in [
        "turns/every-item-type",
        "turns/interrupt",
        "approvals/accepted",
        "approvals/declined",
        "approvals/cancelled",
    ] {
        let line = skipped
            .iter()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} not skipped:\n{text}"));
        assert!(line.contains("--mock-model"), "{line}");
    }
    let overload = skipped
        .iter()
        .find(|l| l.contains("overload/bounded-queue"))
        .unwrap_or_else(|| panic!("overload not skipped:\n{text}"));
    assert!(
        overload.contains("no bound on requests in flight"),
        "{overload}"
    );
    let summary = text.lines().last().expect("summary line");
    assert!(
        summary.starts_with("conformance: 11 passed, 0 failed, 6 skipped of 17 scenarios"),
        "{summary}"
    );
}

#[test]
fn a_websocket_server_is_tested_over_its_url() {
    let home = scratch("conformance-ws");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let url = format!("ws://{}", app.listening_addr());
    let (code, report) = json_report(&[
        "--url",
        &url,
        "--scenario",
        "handshake/",
        "--scenario",
        "errors/",
        "--scenario",
        "threads/start-read",
    ]);
    assert_eq!(code, 0, "{report:#}");
    let names: Vec<&str> = report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "handshake/request-before-initialize",
            "handshake/double-initialize",
            "errors/unknown-method",
            "errors/bad-params",
            "errors/parse-error",
            "threads/start-read"
        ]
    );
    assert_eq!(report["passed"], json!(6), "{report:#}");
}

/// A server that answers everything wrongly: `initialize` with a number for `userAgent`,
/// every other request with an empty result, nothing for lines it cannot read.
fn broken_server(dir: &Path) -> PathBuf {
    let script = dir.join("broken-server.sh");
    std::fs::write(
        &script,
        r#"#!/bin/sh
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  method=$(printf '%s' "$line" | sed -n 's/.*"method":"\([^"]*\)".*/\1/p')
  [ -n "$id" ] || continue
  if [ "$method" = initialize ]; then
    printf '{"id":%s,"result":{"userAgent":42,"codexHome":"/tmp","platformFamily":"unix","platformOs":"linux"}}\n' "$id"
  else
    printf '{"id":%s,"result":{}}\n' "$id"
  fi
done
"#,
    )
    .expect("write the broken server");
    script
}

#[test]
fn a_broken_server_fails_with_line_method_and_pointer() {
    let dir = scratch("conformance-broken");
    let script = broken_server(&dir);
    let server = format!("sh {}", script.display());
    let (code, report) = json_report(&["--server", &server, "--timeout", "5"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["ok"], json!(false));
    // Every scenario that ran failed; the scripted ones were skipped.
    assert_eq!(report["passed"], json!(0), "{report:#}");
    assert!(
        report["failed"].as_u64().expect("failed") >= 10,
        "{report:#}"
    );

    // The initialize answer breaks the schema: reported with its line, method and pointer.
    let handshake = scenario(&report, "handshake/double-initialize");
    assert_eq!(handshake["result"], json!("fail"));
    let violation = handshake["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .find(|v| v["pointer"] == "/result/userAgent")
        .unwrap_or_else(|| panic!("no /result/userAgent violation: {handshake:#}"));
    assert_eq!(violation["method"], json!("initialize"));
    assert_eq!(violation["rule"], json!("schema"));
    assert_eq!(violation["direction"], json!("server->client"));
    assert_eq!(
        violation["line"],
        json!(2),
        "the answer is the transcript's 2nd line"
    );

    // An unknown method answered with a result is a behaviour failure.
    let unknown = scenario(&report, "errors/unknown-method");
    assert!(
        unknown["detail"]
            .as_str()
            .expect("detail")
            .contains("answered with a result"),
        "{unknown:#}"
    );
    // thread/list's empty result lacks `data`.
    let list = scenario(&report, "threads/list-pagination");
    assert!(
        list["violations"]
            .as_array()
            .expect("violations")
            .iter()
            .any(|v| v["method"] == "thread/start" || v["method"] == "thread/list"),
        "{list:#}"
    );

    // The text table names the same.
    let output = conformance(&[
        "--server",
        &server,
        "--timeout",
        "5",
        "--scenario",
        "handshake/double",
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL    handshake/double-initialize"),
        "{text}"
    );
    assert!(
        text.contains("line 2 [handshake/double-initialize#1] server->client initialize /result/userAgent: schema:"),
        "{text}"
    );
    assert!(
        text.contains("conformance: 0 passed, 1 failed, 0 skipped of 1 scenarios"),
        "{text}"
    );
}

#[test]
fn the_target_is_required() {
    let output = conformance(&[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--server") && stderr.contains("--url"),
        "{stderr}"
    );
}
