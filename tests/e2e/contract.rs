//! `agentwire contract check` on transcripts with one planted violation per rule, on a session
//! recorded live with `app-server --record`, and on the reference transcripts.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::client::Client;
use crate::common::{mode, scratch};

const C2S: &str = "client->server";
const S2C: &str = "server->client";

fn record(dir: &str, message: &Value) -> String {
    json!({ "session": "s1", "dir": dir, "line": message.to_string() }).to_string()
}

fn initialize_request(capabilities: Value) -> Value {
    json!({ "id": 1, "method": "initialize",
            "params": { "clientInfo": { "name": "t", "version": "1" }, "capabilities": capabilities } })
}

fn initialize_result() -> Value {
    json!({ "id": 1, "result": { "userAgent": "t/0.3.0", "codexHome": "/home/u/.agentwire",
            "platformFamily": "unix", "platformOs": "linux" } })
}

/// The handshake (3 lines), then `rest`; the first line of `rest` is transcript line 4.
fn handshake_then(capabilities: Value, rest: &[(&str, Value)]) -> Vec<String> {
    let mut lines = vec![
        record(C2S, &initialize_request(capabilities)),
        record(S2C, &initialize_result()),
        record(C2S, &json!({ "method": "initialized" })),
    ];
    lines.extend(rest.iter().map(|(dir, m)| record(dir, m)));
    lines
}

fn write_transcript(name: &str, lines: &[String]) -> PathBuf {
    let dir = scratch(&format!("contract-{name}"));
    let path = dir.join("transcript.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write transcript");
    path
}

/// Runs `contract check` with `args` on `path`: exit code, stdout.
fn check(path: &Path, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["contract", "check"])
        .args(args)
        .arg(path)
        .output()
        .expect("run agentwire contract check");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "contract check panicked: {stderr}"
    );
    (
        output.status.code().expect("exit code"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The JSON report of `path`, with the exit code.
fn json_report(path: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let (code, out) = check(path, &all);
    let report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    (code, report)
}

/// Asserts exactly one violation, with these fields; exit code 1; and the text format names
/// the same line, rule and pointer.
fn planted(
    name: &str,
    lines: &[String],
    (line, direction, method, pointer, rule): (u64, &str, Option<&str>, &str, &str),
    reason_mentions: &str,
) {
    let path = write_transcript(name, lines);
    let (code, report) = json_report(&path, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["ok"], json!(false), "{report:#}");
    let violations = report["violations"].as_array().expect("violations");
    assert_eq!(violations.len(), 1, "{name}: {report:#}");
    let v = &violations[0];
    assert_eq!(v["line"], json!(line), "{name}: {v:#}");
    assert_eq!(v["direction"], json!(direction), "{name}: {v:#}");
    assert_eq!(v["method"], json!(method), "{name}: {v:#}");
    assert_eq!(v["pointer"], json!(pointer), "{name}: {v:#}");
    assert_eq!(v["rule"], json!(rule), "{name}: {v:#}");
    assert_eq!(v["session"], json!("s1"), "{name}: {v:#}");
    let reason = v["reason"].as_str().expect("reason");
    assert!(reason.contains(reason_mentions), "{name}: {reason}");
    let (text_code, text) = check(&path, &[]);
    assert_eq!(text_code, 1);
    assert!(
        text.contains(&format!("line {line} [s1] {direction}")) && text.contains(rule),
        "{name}: {text}"
    );
    assert!(text.contains("1 violation(s)"), "{text}");
}

#[test]
fn a_clean_transcript_passes_in_both_formats() {
    let lines = handshake_then(
        json!({}),
        &[
            (
                C2S,
                json!({ "id": 2, "method": "thread/loaded/list", "params": {} }),
            ),
            (
                S2C,
                json!({ "id": 2, "result": { "data": [], "nextCursor": null } }),
            ),
            (
                S2C,
                json!({ "method": "configWarning", "params": { "summary": "s" } }),
            ),
            (
                C2S,
                json!({ "id": 3, "method": "thread/loaded/list", "params": {} }),
            ),
            (
                S2C,
                json!({ "id": 3, "error": { "code": -32602, "message": "bad" } }),
            ),
            (
                S2C,
                json!({ "id": null, "error": { "code": -32700, "message": "Parse error" } }),
            ),
        ],
    );
    let path = write_transcript("clean", &lines);
    let (code, report) = json_report(&path, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["ok"], json!(true));
    assert_eq!(report["violations"], json!([]));
    assert_eq!(report["messages"], json!(9));
    assert_eq!(report["sessions"], json!(1));
    assert_eq!(
        report["protocolVersion"],
        json!(agentwire_protocol::PROTOCOL_VERSION)
    );
    let (code, text) = check(&path, &[]);
    assert_eq!(code, 0);
    assert!(
        text.contains("9 message(s) in 1 session(s)") && text.contains("OK"),
        "{text}"
    );
}

#[test]
fn wrong_type_in_a_result() {
    let mut answer = initialize_result();
    answer["result"]["platformOs"] = json!(42);
    let lines = vec![
        record(C2S, &initialize_request(json!({}))),
        record(S2C, &answer),
    ];
    planted(
        "wrong-type",
        &lines,
        (2, S2C, Some("initialize"), "/result/platformOs", "schema"),
        "42",
    );
}

#[test]
fn missing_required_field_in_params() {
    let lines = handshake_then(
        json!({}),
        &[(
            C2S,
            json!({ "id": 2, "method": "thread/read", "params": {} }),
        )],
    );
    planted(
        "missing-field",
        &lines,
        (4, C2S, Some("thread/read"), "/params", "schema"),
        "threadId",
    );
}

#[test]
fn unknown_method() {
    let lines = handshake_then(
        json!({}),
        &[(S2C, json!({ "method": "thread/exploded", "params": {} }))],
    );
    planted(
        "unknown-method",
        &lines,
        (4, S2C, Some("thread/exploded"), "/method", "unknown-method"),
        "not a server notification",
    );
}

#[test]
fn answer_to_an_unknown_id() {
    let lines = handshake_then(json!({}), &[(S2C, json!({ "id": 77, "result": {} }))]);
    planted(
        "unknown-id",
        &lines,
        (4, S2C, None, "/id", "unknown-id"),
        "77",
    );
}

#[test]
fn a_second_answer() {
    let lines = handshake_then(json!({}), &[(S2C, initialize_result())]);
    planted(
        "duplicate",
        &lines,
        (4, S2C, None, "/id", "duplicate-answer"),
        "already answered on line 2",
    );
}

#[test]
fn a_request_before_initialize_and_before_initialized() {
    let lines = vec![record(
        C2S,
        &json!({ "id": 1, "method": "thread/loaded/list", "params": {} }),
    )];
    planted(
        "before-initialize",
        &lines,
        (1, C2S, Some("thread/loaded/list"), "", "before-initialize"),
        "before `initialize` was answered",
    );
    let lines = vec![
        record(C2S, &initialize_request(json!({}))),
        record(S2C, &initialize_result()),
        record(
            C2S,
            &json!({ "id": 2, "method": "thread/loaded/list", "params": {} }),
        ),
    ];
    planted(
        "before-initialized",
        &lines,
        (3, C2S, Some("thread/loaded/list"), "", "before-initialized"),
        "`initialized`",
    );
}

#[test]
fn a_notification_the_client_opted_out_of() {
    let lines = handshake_then(
        json!({ "optOutNotificationMethods": ["configWarning"] }),
        &[(
            S2C,
            json!({ "method": "configWarning", "params": { "summary": "s" } }),
        )],
    );
    planted(
        "opted-out",
        &lines,
        (4, S2C, Some("configWarning"), "/method", "opted-out"),
        "optOutNotificationMethods",
    );
}

#[test]
fn experimental_methods_and_fields_need_the_capability() {
    let list = json!({ "id": 2, "method": "collaborationMode/list", "params": {} });
    let lines = handshake_then(json!({}), &[(C2S, list.clone())]);
    planted(
        "experimental-method",
        &lines,
        (
            4,
            C2S,
            Some("collaborationMode/list"),
            "/method",
            "experimental",
        ),
        "without the `experimentalApi` capability",
    );
    let turn = json!({ "id": 2, "method": "turn/start", "params": {
        "threadId": "t", "input": [], "collaborationMode": { "mode": "plan", "settings": { "model": "m" } } } });
    let lines = handshake_then(json!({}), &[(C2S, turn.clone())]);
    planted(
        "experimental-field",
        &lines,
        (
            4,
            C2S,
            Some("turn/start"),
            "/params/collaborationMode",
            "experimental",
        ),
        "experimental field /params/collaborationMode",
    );
    // With the capability and --experimental, both are in the contract.
    let mut turn = turn;
    turn["id"] = json!(3);
    let lines = handshake_then(
        json!({ "experimentalApi": true }),
        &[(C2S, list), (C2S, turn)],
    );
    let path = write_transcript("experimental-ok", &lines);
    let (code, report) = json_report(&path, &["--experimental"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["surface"], json!("experimental"));
    // With the capability but against the stable surface, the hint names the flag.
    let (code, report) = json_report(&path, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert!(
        report["violations"][0]["reason"]
            .as_str()
            .expect("reason")
            .contains("--experimental"),
        "{report:#}"
    );
}

#[test]
fn a_bad_error_object() {
    let lines = handshake_then(
        json!({}),
        &[
            (
                C2S,
                json!({ "id": 2, "method": "thread/loaded/list", "params": {} }),
            ),
            (
                S2C,
                json!({ "id": 2, "error": { "code": "oops", "message": "m" } }),
            ),
        ],
    );
    planted(
        "error-shape",
        &lines,
        (
            5,
            S2C,
            Some("thread/loaded/list"),
            "/error/code",
            "error-shape",
        ),
        "oops",
    );
}

#[test]
fn a_client_answer_is_checked_against_the_server_request() {
    let lines = handshake_then(
        json!({}),
        &[
            (
                S2C,
                json!({ "id": 0, "method": "item/commandExecution/requestApproval",
                          "params": { "threadId": "t", "turnId": "u", "itemId": "i", "startedAtMs": 1 } }),
            ),
            (C2S, json!({ "id": 0, "result": { "decision": "sure" } })),
        ],
    );
    planted(
        "server-request-answer",
        &lines,
        (
            5,
            C2S,
            Some("item/commandExecution/requestApproval"),
            "/result/decision",
            "schema",
        ),
        "sure",
    );
}

/// A value outside a closed set of choices (a `oneOf` of constants, as schemars writes an enum
/// with documented variants) is reported with every allowed value, not only the first branch.
#[test]
fn a_wrong_choice_names_every_allowed_value() {
    let approval = |method: &str, decision: Value| {
        handshake_then(
            json!({}),
            &[
                (
                    S2C,
                    json!({ "id": 0, "method": method,
                            "params": { "threadId": "t", "turnId": "u", "itemId": "i", "startedAtMs": 1 } }),
                ),
                (C2S, json!({ "id": 0, "result": { "decision": decision } })),
            ],
        )
    };
    let where_ = |method| (5, C2S, Some(method), "/result/decision", "schema");
    let file_change = "item/fileChange/requestApproval";
    let all_four = r#""approve" is not one of "accept", "acceptForSession", "decline" or "cancel""#;
    planted(
        "choice-constants",
        &approval(file_change, json!("approve")),
        where_(file_change),
        all_four,
    );
    // Beside object variants (the answers that save a rule), the constants come first.
    let command = "item/commandExecution/requestApproval";
    let path = write_transcript("choice-objects", &approval(command, json!("approve")));
    let (code, report) = json_report(&path, &[]);
    assert_eq!(code, 1, "{report:#}");
    let reason = report["violations"][0]["reason"].as_str().expect("reason");
    assert!(
        reason.starts_with(r#""approve" is not one of "accept", "acceptForSession", "#)
            && reason.contains(r#""decline""#)
            && reason.contains(r#""cancel""#)
            && reason.ends_with("or an object"),
        "{reason}"
    );
    // The text format carries the same sentence.
    let path = write_transcript("choice-text", &approval(file_change, json!("approve")));
    let (_, text) = check(&path, &[]);
    assert!(text.contains(all_four), "{text}");
}

/// The server words a -32602 for such a value the same way.
#[test]
fn the_server_names_every_allowed_value_too() {
    let home = scratch("contract-choices-server");
    let mut client = Client::start(&home);
    let error = client.call_err("thread/start", json!({ "approvalPolicy": "sometimes" }));
    assert_eq!(error["code"], json!(-32602), "{error:#}");
    let problems = error["data"]["errors"].as_array().expect("data.errors");
    assert_eq!(problems.len(), 1, "{error:#}");
    assert_eq!(
        problems[0]["pointer"],
        json!("/approvalPolicy"),
        "{error:#}"
    );
    assert_eq!(
        problems[0]["message"],
        json!(r#""sometimes" is not one of "untrusted", "on-request", "never", an object or null"#),
        "{error:#}"
    );
    client.stop();
}

#[test]
fn unreadable_input_and_versions() {
    let path = write_transcript("unreadable", &["not json".to_owned()]);
    let (code, report) = json_report(&path, &[]);
    assert_eq!(code, 1);
    assert_eq!(report["violations"][0]["rule"], json!("transcript"));
    assert_eq!(report["violations"][0]["line"], json!(1));
    let (code, _) = check(&path.with_file_name("missing.jsonl"), &[]);
    assert_eq!(code, 2);
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["contract", "check", "--protocol-version", "9.9.9"])
        .arg(&path)
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown protocol version \"9.9.9\""));
    // A pinned release is checked against its own bundle.
    let lines = handshake_then(json!({}), &[]);
    let path = write_transcript("pinned", &lines);
    let (code, report) = json_report(&path, &["--protocol-version", "0.1.0"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["protocolVersion"], json!("0.1.0"));
}

#[test]
fn a_recorded_live_session_passes() {
    let home = scratch("contract-record");
    let transcript = home.join("session.jsonl");
    let mut client = Client::start_with(&home, &["--record", transcript.to_str().expect("utf-8")]);
    client.call("thread/loaded/list", json!({}));
    let started = client.call("thread/start", json!({}));
    let thread = crate::client::thread_id(&started);
    client.call("thread/read", json!({ "threadId": thread }));
    client.call_err("thread/read", json!({}));
    client.call_err("no/such", json!({}));
    client.stop();
    let text = std::fs::read_to_string(&transcript).expect("the transcript");
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect();
    assert!(records.len() >= 12, "{text}");
    for r in &records {
        assert!(r["session"].is_string() && r["line"].is_string(), "{r}");
        assert!(
            r["ts"].as_u64().is_some_and(|t| t > 1_600_000_000_000),
            "{r}"
        );
    }
    assert!(records.iter().any(|r| r["dir"] == json!(C2S)));
    assert!(records.iter().any(|r| {
        r["dir"] == json!(S2C)
            && r["line"]
                .as_str()
                .is_some_and(|l| l.contains("thread/started"))
    }));
    // Only the two bad requests the client sent on purpose are reported.
    let (code, report) = json_report(&transcript, &[]);
    assert_eq!(code, 1, "{report:#}");
    let violations = report["violations"].as_array().expect("violations");
    assert!(
        violations.iter().all(|v| v["direction"] == json!(C2S)),
        "the server broke its contract: {report:#}"
    );
    let rules: Vec<&Value> = violations.iter().map(|v| &v["rule"]).collect();
    assert!(rules.contains(&&json!("unknown-method")), "{report:#}");
    assert!(rules.contains(&&json!("schema")), "{report:#}");
}

/// docs/app-server.md (`--record`): the transcript holds every message, an API key sent to
/// `account/login/start` included, so it is the user's alone: created 0600 whatever the umask,
/// an existing file made private (and emptied) before anything is written to it, and a symbolic
/// link refused rather than followed.
#[test]
fn the_transcript_is_private_and_never_follows_a_link() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let home = scratch("contract-record-private");
    // A new file, and an old one left world-readable by an earlier run.
    let fresh = home.join("fresh.jsonl");
    let old = home.join("old.jsonl");
    std::fs::write(&old, "an earlier session\n").expect("write the old transcript");
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    for transcript in [&fresh, &old] {
        let mut client =
            Client::start_with(&home, &["--record", transcript.to_str().expect("utf-8")]);
        client.call(
            "account/login/start",
            json!({"type": "apiKey", "apiKey": "sk-recorded-secret"}),
        );
        client.stop();
        let text = std::fs::read_to_string(transcript).expect("the transcript");
        assert!(text.contains("sk-recorded-secret"), "{text}");
        assert!(!text.contains("an earlier session"), "{text}");
        assert_eq!(mode(transcript), 0o600, "{}", transcript.display());
    }
    // A link planted where the transcript goes is not followed.
    let target = home.join("elsewhere.jsonl");
    std::fs::write(&target, "").expect("write the link's target");
    let link = home.join("link.jsonl");
    symlink(&target, &link).expect("symlink");
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["app-server", "--record", link.to_str().expect("utf-8")])
        .env("AGENTWIRE_HOME", &home)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run agentwire");
    assert!(!output.status.success(), "{output:?}");
    assert_eq!(std::fs::read_to_string(&target).expect("target"), "");
    let _ = std::fs::remove_dir_all(&home);
}

/// Experimental members of `Thread` that the reference sends to every client, with or without
/// the `experimentalApi` capability (its schema marks them experimental; agentwire sends them
/// only where that capability was given).
const LEAKED_EXPERIMENTAL: &[&str] = &[
    "attachedToThreadId",
    "canAcceptDirectInput",
    "environments",
    "readStates",
];

/// The reference's own transcripts: they pass except for what the reference does and our
/// pinned contract does not declare (methods we do not serve), the malformed input the
/// stdio transcript sends on purpose, and the experimental members it does not withhold.
#[test]
fn the_reference_transcripts() {
    let dir = agentwire_reference_material::file("transcripts");
    for (name, allowed) in [
        (
            "codex-0.171.0-turn.jsonl",
            &["unknown-method", "experimental"][..],
        ),
        (
            "codex-0.171.0-stdio.jsonl",
            &[
                "unknown-method",
                "not-json",
                "not-jsonrpc",
                "schema",
                "before-initialize",
                "reinitialize",
                "unknown-id",
                "duplicate-id",
                "before-initialized",
                "experimental",
            ][..],
        ),
    ] {
        let (_, report) = json_report(&dir.join(name), &[]);
        let violations = report["violations"].as_array().expect("violations");
        for v in violations {
            let rule = v["rule"].as_str().expect("rule");
            assert!(allowed.contains(&rule), "{name}: unexpected {v:#}");
            if rule == "experimental" {
                let pointer = v["pointer"].as_str().unwrap_or_default();
                let member = pointer.rsplit('/').next().unwrap_or_default();
                assert!(
                    v["direction"] == json!("server->client")
                        && LEAKED_EXPERIMENTAL.contains(&member),
                    "{name}: unexpected {v:#}"
                );
            }
            if rule == "schema" {
                assert_eq!(
                    v["direction"],
                    json!(C2S),
                    "{name}: the reference's output: {v:#}"
                );
            }
        }
    }
}

/// The test client's guard sees every message of the exchange and fails on a server violation.
#[test]
fn the_test_client_checks_every_server_message() {
    let home = scratch("contract-guard");
    let mut client = Client::start(&home);
    client.call("thread/loaded/list", json!({}));
    // initialize, its answer, initialized, the request and its answer.
    assert!(
        client.contract().messages() >= 5,
        "{}",
        client.contract().messages()
    );
    client.stop();

    let guard = crate::wire_contract::Guard::initialized(false);
    guard.client_sent(r#"{"id":1,"method":"thread/loaded/list","params":{}}"#);
    guard.server_sent(r#"{"id":1,"result":{"data":"not a list"}}"#);
    // The client's own bad input is not the server's fault.
    guard.client_sent(r#"{"id":2,"method":"no/such"}"#);
    let failure = std::panic::catch_unwind(|| guard.assert_clean())
        .expect_err("a server violation fails the test");
    let text = failure
        .downcast_ref::<String>()
        .expect("the report is a String");
    assert!(
        text.contains("server->client thread/loaded/list /result/data: schema"),
        "{text}"
    );
    assert!(!text.contains("no/such"), "{text}");
}

/// `--record` on the websocket transport: two connections, two sessions, both clean.
#[tokio::test]
async fn a_recorded_websocket_session_passes() {
    use crate::app_server_ws::{App, initialize, open, request};

    let home = scratch("contract-record-ws");
    let transcript = home.join("ws.jsonl");
    let app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--record",
            transcript.to_str().expect("utf-8"),
        ],
    );
    let addr = app.listening_addr();
    for _ in 0..2 {
        let mut ws = open(addr, None).await.expect("upgrade");
        initialize(&mut ws).await;
        let answer = request(&mut ws, json!(1), "thread/loaded/list", json!({})).await;
        assert!(answer.get("result").is_some(), "{answer}");
    }
    let (status, _) = app.terminate();
    assert!(status.success(), "{status:?}");
    let text = std::fs::read_to_string(&transcript).expect("the transcript");
    let sessions: std::collections::HashSet<String> = text
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).expect("a JSON record");
            r["session"].as_str().expect("session").to_owned()
        })
        .collect();
    assert_eq!(sessions.len(), 2, "{text}");
    let (code, report) = json_report(&transcript, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["messages"], json!(10), "{report:#}");
}
