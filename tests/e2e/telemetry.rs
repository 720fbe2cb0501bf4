//! Operations (docs/operations.md): structured JSON logs of a turn and its tool run, with no
//! prompt or command output unless `[otel] log_user_prompt = true`; `GET /metrics` on the
//! websocket listener (same auth as the listener) and on `--metrics-listen`, parsed with the
//! Prometheus Python client's OpenMetrics parser; `--log-file`; a client that leaves without
//! the closing handshake is logged at INFO; `thread/shellCommand` and compactions counted as
//! turns of their kind, `initialize` as a request; the relay lag of two workers on PostgreSQL.
//! (OTLP export: `otel.rs`.)

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::app_server_ws::App;
use crate::client::{Client, thread_id};
use crate::common::{Killed, fixture_steps, home_and_workspace, repo, scratch};

const PROMPT_MARKER: &str = "PROMPT-MARKER-4c1d";
const OUTPUT_MARKER: &str = "OUTPUT-MARKER-9e7b";

/// A fixture turn that runs one shell command (printing [`OUTPUT_MARKER`]) and then answers.
fn turn_with_a_command(home: &Path, extra_config: &str) {
    fixture_steps(
        home,
        json!([
            {"type": "command", "command": format!("echo {OUTPUT_MARKER}")},
            {"type": "message", "deltas": ["done"]}
        ]),
        &format!("{extra_config}\n"),
    );
}

/// Starts a thread in `workspace` and runs one turn with [`PROMPT_MARKER`] in its text; the
/// last `thread/tokenUsage/updated` total of the turn.
fn run_turn(client: &mut Client, workspace: &Path) -> Value {
    let thread = thread_id(&client.start_thread(json!({
        "cwd": workspace,
        "approvalPolicy": "never",
        "sandbox": "danger-full-access",
    })));
    client.start_turn(&thread, &format!("{PROMPT_MARKER} run the command"));
    let seen = client.until_turn_completed();
    let completed = crate::client::completed_turn(&seen);
    assert_eq!(completed["status"], json!("completed"), "{completed}");
    crate::client::params(&seen, "thread/tokenUsage/updated")
        .last()
        .map(|p| p["tokenUsage"]["total"].clone())
        .expect("a token usage notification")
}

/// Every stderr line, each parsed as JSON (every one must be).
fn json_lines(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a log line is not JSON ({e}): {line}"))
        })
        .collect()
}

/// The `fields` of the log events named `event`.
fn events<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|line| line["fields"]["event"] == json!(event))
        .map(|line| &line["fields"])
        .collect()
}

#[test]
fn a_turn_and_its_tool_run_are_logged_as_json_events_without_the_prompt() {
    let root = scratch("telemetry-json-logs");
    let (home, workspace) = home_and_workspace(&root);
    turn_with_a_command(&home, "");
    let mut client = Client::start_with_args_and_env(
        &home,
        &[],
        &[("LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    let total = run_turn(&mut client, &workspace);
    let stderr = client.stop();
    let lines = json_lines(&stderr);

    let started = events(&lines, "thread");
    assert!(
        started.iter().any(|f| f["action"] == json!("started")),
        "a thread event: {stderr}"
    );
    let turns = events(&lines, "turn.completed");
    assert_eq!(turns.len(), 1, "one turn.completed event: {stderr}");
    let turn = turns[0];
    assert_eq!(turn["status"], json!("completed"), "{turn}");
    assert!(turn["duration_ms"].is_u64(), "{turn}");
    assert!(
        turn["thread.id"].is_string() && turn["turn.id"].is_string(),
        "{turn}"
    );
    // The turn's only: the thread's totals after its first turn.
    assert_eq!(
        turn["input_tokens"], total["inputTokens"],
        "{turn} vs {total}"
    );
    assert_eq!(
        turn["output_tokens"], total["outputTokens"],
        "{turn} vs {total}"
    );
    assert_eq!(
        turn["total_tokens"], total["totalTokens"],
        "{turn} vs {total}"
    );

    let tools = events(&lines, "tool.completed");
    assert_eq!(tools.len(), 1, "one tool event: {stderr}");
    let tool = tools[0];
    assert_eq!(tool["tool"], json!("shell"), "{tool}");
    assert_eq!(tool["status"], json!("completed"), "{tool}");
    assert_eq!(tool["exit_code"], json!(0), "{tool}");
    assert!(tool["duration_ms"].is_i64(), "{tool}");
    assert!(
        tool.get("command").is_none(),
        "no command line by default: {tool}"
    );

    assert!(
        !stderr.contains(PROMPT_MARKER),
        "the prompt is not logged by default: {stderr}"
    );
    assert!(
        !stderr.contains(OUTPUT_MARKER),
        "command output (or the command) is not logged: {stderr}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn log_user_prompt_lets_the_prompt_into_the_logs() {
    let root = scratch("telemetry-log-user-prompt");
    let (home, workspace) = home_and_workspace(&root);
    turn_with_a_command(
        &home,
        "[otel]\nlog_user_prompt = true\nenvironment = \"test\"",
    );
    let mut client = Client::start_with_args_and_env(
        &home,
        &[],
        &[("LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    run_turn(&mut client, &workspace);
    let stderr = client.stop();
    let lines = json_lines(&stderr);
    let started = events(&lines, "turn.started");
    assert_eq!(started.len(), 1, "{stderr}");
    assert!(
        started[0]["prompt"]
            .as_str()
            .is_some_and(|p| p.contains(PROMPT_MARKER)),
        "{}",
        started[0]
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// One HTTP/1.1 GET of `path` on `127.0.0.1:port` with `headers`: the status, the head and
/// the body (the server closes the connection after a plain answer).
fn http_get(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read the answer");
    let answer = String::from_utf8(answer).expect("UTF-8 answer");
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of head: {answer}"));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {head}"));
    (status, head.to_owned(), body.to_owned())
}

/// The Python of `.tools/venv` (scripts/install-ci-tools.sh), which has `prometheus_client`.
fn python() -> PathBuf {
    let python = repo().join(".tools/venv/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import prometheus_client"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{} with prometheus_client is missing: run scripts/install-ci-tools.sh",
        python.display()
    );
    python
}

/// Parses `text` with `prometheus_client`'s OpenMetrics parser: every sample as
/// `[name, labels, value]`.
fn parse_metrics(text: &str) -> Vec<(String, Value, f64)> {
    const PARSE: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
samples = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        samples.append([sample.name, sample.labels, sample.value])
json.dump(samples, sys.stdout)
"#;
    let mut child = Command::new(python())
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("feed the parser");
    let output = child.wait_with_output().expect("python output");
    assert!(
        output.status.success(),
        "the OpenMetrics parser refused the text: {}\n{text}",
        String::from_utf8_lossy(&output.stderr)
    );
    let samples: Vec<(String, Value, f64)> =
        serde_json::from_slice(&output.stdout).expect("samples as JSON");
    samples
}

/// The value of the sample `name` with exactly `labels`.
fn sample(samples: &[(String, Value, f64)], name: &str, labels: Value) -> Option<f64> {
    samples
        .iter()
        .find(|(n, l, _)| n == name && *l == labels)
        .map(|(_, _, v)| *v)
}

/// Waits for a JSON log line of `client` with the event `event`; its fields.
fn wait_for_event(client: &Client, event: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let stderr = client.stderr();
        let found = stderr
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|line| line["fields"]["event"] == json!(event));
        if let Some(line) = found {
            return line["fields"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "no {event} event in stderr:\n{stderr}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn metrics_listen_serves_counters_a_prometheus_parser_reads() {
    let root = scratch("telemetry-metrics-listen");
    let (home, workspace) = home_and_workspace(&root);
    turn_with_a_command(&home, "");
    let mut client = Client::start_with_args_and_env(
        &home,
        &["--metrics-listen", "127.0.0.1:0"],
        &[("LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    let listening = wait_for_event(&client, "metrics.listening");
    let port: u16 = listening["addr"]
        .as_str()
        .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
        .map(|a| a.port())
        .unwrap_or_else(|| panic!("an address: {listening}"));
    run_turn(&mut client, &workspace);

    let (status, head, body) = http_get(port, "/metrics", &[]);
    assert_eq!(status, 200, "{head}\n{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text"),
        "{head}"
    );
    let samples = parse_metrics(&body);
    let value = |name: &str, labels: Value| {
        sample(&samples, name, labels.clone())
            .unwrap_or_else(|| panic!("no {name} {labels} in:\n{body}"))
    };
    assert_eq!(
        value(
            "agentwire_turns_total",
            json!({"status": "completed", "kind": "turn"})
        ),
        1.0
    );
    assert_eq!(
        value(
            "agentwire_turn_duration_seconds_count",
            json!({"status": "completed", "kind": "turn"})
        ),
        1.0
    );
    for method in ["thread/start", "turn/start"] {
        assert_eq!(
            value(
                "agentwire_requests_total",
                json!({"method": method, "outcome": "ok", "code": "0"})
            ),
            1.0,
            "{method}"
        );
    }
    assert_eq!(
        value(
            "agentwire_tool_runs_total",
            json!({"tool": "shell", "status": "completed"})
        ),
        1.0
    );
    assert_eq!(
        value(
            "agentwire_model_calls_total",
            json!({"provider": "fixture"})
        ),
        2.0,
        "the command round and the answer"
    );
    assert_eq!(
        value("agentwire_connections_open", json!({"transport": "stdio"})),
        1.0
    );
    assert_eq!(
        value(
            "agentwire_requests_in_flight",
            json!({"transport": "stdio"})
        ),
        0.0,
        "every request taken in is answered"
    );
    // A request the table refuses: counted under its method with its error code.
    let _ = client.request("thread/start", json!({"cwd": 7}));
    let (_, _, body) = http_get(port, "/metrics", &[]);
    let samples = parse_metrics(&body);
    assert_eq!(
        sample(
            &samples,
            "agentwire_requests_total",
            json!({"method": "thread/start", "outcome": "error", "code": "-32602"})
        ),
        Some(1.0),
        "{body}"
    );
    // Another path is not found; a browser (an Origin header) is refused.
    assert_eq!(http_get(port, "/other", &[]).0, 404);
    assert_eq!(
        http_get(port, "/metrics", &[("Origin", "http://example.invalid")]).0,
        403
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn metrics_listen_refuses_a_public_address_without_a_token() {
    let home = scratch("telemetry-metrics-public");
    std::fs::create_dir_all(&home).expect("home");
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args([
            "app-server",
            "--listen",
            "off",
            "--metrics-listen",
            "0.0.0.0:0",
        ])
        .env("AGENTWIRE_HOME", &home)
        .stdin(Stdio::null())
        .output()
        .expect("run agentwire");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("--metrics-listen") && stderr.contains("without authentication"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn ws_metrics_are_behind_the_listeners_token() {
    let home = scratch("telemetry-ws-metrics");
    std::fs::create_dir_all(&home).expect("home");
    let token = home.join("token");
    std::fs::write(&token, "s3cret\n").expect("token file");
    let app = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth-token-file",
            token.to_str().expect("UTF-8 path"),
        ],
    );
    let port = app.listening_addr().port();
    let (status, _, body) = http_get(port, "/metrics", &[]);
    assert_eq!(status, 401, "no token: {body}");
    let (status, head, body) = http_get(port, "/metrics", &[("Authorization", "Bearer s3cret")]);
    assert_eq!(status, 200, "{head}\n{body}");
    let samples = parse_metrics(&body);
    assert!(
        samples
            .iter()
            .any(|(name, _, _)| name == "agentwire_overloaded_refusals_total"),
        "{body}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_client_leaving_without_the_closing_handshake_is_not_a_warning() {
    let home = scratch("telemetry-ws-reset");
    std::fs::create_dir_all(&home).expect("home");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let port = app.listening_addr().port();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let request = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("read the head");
        assert_eq!(
            n,
            1,
            "the head ended early: {}",
            String::from_utf8_lossy(&head)
        );
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    drop(stream);
    let closed = app.wait_for_line("connection closed");
    assert!(closed.contains("INFO"), "{closed}");
    assert!(
        closed.contains("peer reset the connection without closing"),
        "the path of a client that left: {closed}"
    );
    let stderr = app.stderr();
    assert!(
        !stderr.lines().any(|line| line.contains("WARN")),
        "no warning for a client that left: {stderr}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn log_file_takes_the_logs_instead_of_stderr() {
    let root = scratch("telemetry-log-file");
    let (home, workspace) = home_and_workspace(&root);
    turn_with_a_command(&home, "");
    let log = root.join("server.log");
    let mut client = Client::start_with_args_and_env(
        &home,
        &["--log-file", log.to_str().expect("UTF-8 path")],
        &[("LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    run_turn(&mut client, &workspace);
    let stderr = client.stop();
    assert!(stderr.trim().is_empty(), "nothing on stderr: {stderr}");
    let logged = std::fs::read_to_string(&log).expect("the log file");
    let lines = json_lines(&logged);
    assert_eq!(events(&lines, "turn.completed").len(), 1, "{logged}");
    let _ = std::fs::remove_dir_all(&root);
}

/// `body` without HTTP/1.1 chunked framing when `head` says it has it.
fn unchunked(head: &str, body: &str) -> String {
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return body.to_owned();
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || after.len() < size {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}

/// A port free at the time of asking on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[test]
fn prometheus_scrapes_the_server() {
    let prometheus = Path::new("/usr/bin/prometheus");
    assert!(
        prometheus.exists(),
        "{} is missing: run scripts/install-ci-tools.sh (Debian's prometheus)",
        prometheus.display()
    );
    let root = scratch("telemetry-prometheus");
    let (home, workspace) = home_and_workspace(&root);
    turn_with_a_command(&home, "");
    let mut client = Client::start_with_args_and_env(
        &home,
        &["--metrics-listen", "127.0.0.1:0"],
        &[("LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    let listening = wait_for_event(&client, "metrics.listening");
    let target = listening["addr"].as_str().expect("an address").to_owned();
    run_turn(&mut client, &workspace);

    let config = root.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: agentwire\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .expect("write prometheus.yml");
    let web = free_port();
    let _prometheus = Killed(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                root.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{web}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus"),
    );
    // Prometheus scrapes on its own schedule: ask until the first scrape is in.
    let query = |expr: &str| -> Option<String> {
        let stream_ok = TcpStream::connect(("127.0.0.1", web)).is_ok();
        if !stream_ok {
            return None;
        }
        let (status, head, body) = http_get(web, &format!("/api/v1/query?query={expr}"), &[]);
        if status != 200 {
            return None;
        }
        let answer: Value = serde_json::from_str(&unchunked(&head, &body)).ok()?;
        answer["data"]["result"][0]["value"][1]
            .as_str()
            .map(str::to_owned)
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let up = loop {
        if let Some(up) = query("up") {
            break up;
        }
        assert!(
            Instant::now() < deadline,
            "prometheus never scraped {target}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(up, "1", "the scrape of {target} succeeded");
    let turns = query("agentwire_turns_total%7Bstatus%3D%22completed%22%7D");
    assert_eq!(
        turns.as_deref(),
        Some("1"),
        "the turn counter as Prometheus stored it"
    );
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_failed_model_call_is_logged_with_its_reason() {
    let root = scratch("telemetry-model-failed");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(
        &home,
        json!([{"type": "error", "message": "the model is down"}]),
        "",
    );
    let mut client = Client::start_with_args_and_env(
        &home,
        &[],
        &[("LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, PROMPT_MARKER);
    let seen = client.until_turn_completed();
    assert_eq!(
        crate::client::completed_turn(&seen)["status"],
        json!("failed")
    );
    let stderr = client.stop();
    let lines = json_lines(&stderr);
    let failed = events(&lines, "model.failed");
    assert_eq!(failed.len(), 1, "{stderr}");
    assert_eq!(failed[0]["provider"], json!("fixture"), "{}", failed[0]);
    assert_eq!(failed[0]["reason"], json!("unclassified"), "{}", failed[0]);
    let level = lines
        .iter()
        .find(|l| l["fields"]["event"] == json!("model.failed"))
        .map(|l| l["level"].clone());
    assert_eq!(level, Some(json!("WARN")));
    let turns = events(&lines, "turn.completed");
    assert_eq!(turns.len(), 1, "{stderr}");
    assert_eq!(turns[0]["status"], json!("failed"), "{}", turns[0]);
    assert!(!stderr.contains(PROMPT_MARKER), "{stderr}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn mcp_server_serves_metrics_on_metrics_listen_with_its_token() {
    let home = scratch("telemetry-mcp-metrics");
    std::fs::create_dir_all(&home).expect("home");
    let token = home.join("token");
    std::fs::write(&token, "s3cret\n").expect("token file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args([
            "mcp-server",
            "--metrics-listen",
            "127.0.0.1:0",
            "--token-file",
        ])
        .arg(&token)
        .env("AGENTWIRE_HOME", &home)
        .env("RUST_LOG", "info")
        .env("LOG_FORMAT", "json")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentwire mcp-server");
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let listening = loop {
        let line = lines
            .next()
            .and_then(Result::ok)
            .expect("a metrics.listening line before the end of stderr");
        let Ok(line) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if line["fields"]["event"] == json!("metrics.listening") {
            break line["fields"]["addr"].clone();
        }
    };
    let port = listening
        .as_str()
        .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
        .map(|a| a.port())
        .unwrap_or_else(|| panic!("an address: {listening}"));
    assert_eq!(http_get(port, "/metrics", &[]).0, 401, "no token");
    let (status, _, body) = http_get(port, "/metrics", &[("Authorization", "Bearer s3cret")]);
    assert_eq!(status, 200, "{body}");
    assert!(body.ends_with("# EOF\n"), "{body}");
    let _server = Killed(child);
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn an_approval_is_logged_and_counted_with_its_decision() {
    let root = scratch("telemetry-approval");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(
        &home,
        json!([
            {"type": "command", "command": "touch approved.txt"},
            {"type": "message", "deltas": ["done"]}
        ]),
        "",
    );
    let mut client = Client::start_with_args_and_env(
        &home,
        &["--metrics-listen", "127.0.0.1:0"],
        &[("LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    let listening = wait_for_event(&client, "metrics.listening");
    let port: u16 = listening["addr"]
        .as_str()
        .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
        .map(|a| a.port())
        .unwrap_or_else(|| panic!("an address: {listening}"));
    let thread = thread_id(&client.start_thread(json!({
        "cwd": workspace,
        "approvalPolicy": "untrusted",
        "sandbox": "danger-full-access",
    })));
    client.start_turn(&thread, PROMPT_MARKER);
    let (id, _) = client.server_request("item/commandExecution/requestApproval");
    client.send(&json!({"id": id, "result": {"decision": "accept"}}));
    let seen = client.until_turn_completed();
    assert_eq!(
        crate::client::completed_turn(&seen)["status"],
        json!("completed")
    );
    let (_, _, body) = http_get(port, "/metrics", &[]);
    let samples = parse_metrics(&body);
    let method = "item/commandExecution/requestApproval";
    assert_eq!(
        sample(
            &samples,
            "agentwire_approvals_total",
            json!({"method": method, "decision": "accept"})
        ),
        Some(1.0),
        "{body}"
    );
    assert_eq!(
        sample(
            &samples,
            "agentwire_approval_wait_seconds_count",
            json!({"method": method})
        ),
        Some(1.0),
        "{body}"
    );
    let stderr = client.stop();
    let lines = json_lines(&stderr);
    let settled = events(&lines, "server_request.settled");
    assert_eq!(settled.len(), 1, "{stderr}");
    assert_eq!(settled[0]["method"], json!(method), "{}", settled[0]);
    assert_eq!(settled[0]["decision"], json!("accept"), "{}", settled[0]);
    assert!(settled[0]["wait_ms"].is_u64(), "{}", settled[0]);
    assert_eq!(events(&lines, "server_request.sent").len(), 1, "{stderr}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_shell_command_and_a_compaction_count_as_turns_of_their_kind() {
    let root = scratch("telemetry-turn-kinds");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(&home, json!([{"type": "message", "deltas": ["ok"]}]), "");
    let mut client = Client::start_with_args_and_env(
        &home,
        &["--metrics-listen", "127.0.0.1:0"],
        &[("LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    let listening = wait_for_event(&client, "metrics.listening");
    let port: u16 = listening["addr"]
        .as_str()
        .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
        .map(|a| a.port())
        .unwrap_or_else(|| panic!("an address: {listening}"));
    let thread = thread_id(&client.start_thread(json!({
        "cwd": workspace,
        "approvalPolicy": "never",
        "sandbox": "danger-full-access",
    })));
    client.start_turn(&thread, "hello");
    client.until_turn_completed();
    client.call("thread/compact/start", json!({"threadId": thread}));
    let seen = client.until_turn_completed();
    assert_eq!(
        crate::client::completed_turn(&seen)["status"],
        json!("completed"),
        "the compaction"
    );
    client.call(
        "thread/shellCommand",
        json!({"threadId": thread, "command": "true"}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(
        crate::client::completed_turn(&seen)["status"],
        json!("completed"),
        "the shell command"
    );
    let (_, _, body) = http_get(port, "/metrics", &[]);
    let samples = parse_metrics(&body);
    for kind in ["turn", "compaction", "shell_command"] {
        assert_eq!(
            sample(
                &samples,
                "agentwire_turns_total",
                json!({"status": "completed", "kind": kind})
            ),
            Some(1.0),
            "{kind}: {body}"
        );
    }
    // `initialize` is a request like the others.
    assert_eq!(
        sample(
            &samples,
            "agentwire_requests_total",
            json!({"method": "initialize", "outcome": "ok", "code": "0"})
        ),
        Some(1.0),
        "{body}"
    );
    let stderr = client.stop();
    let lines = json_lines(&stderr);
    let kinds: Vec<&Value> = events(&lines, "turn.completed")
        .iter()
        .map(|fields| &fields["kind"])
        .collect();
    assert_eq!(
        kinds,
        [
            &json!("turn"),
            &json!("compaction"),
            &json!("shell_command")
        ],
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Two workers on one PostgreSQL store: a client on B follows a turn running on A, and B's
/// `/metrics` counts the notifications relayed to it in `agentwire_relay_lag_seconds`, every
/// one of them published moments before (same host, same clock). B's requests are all
/// answered, so its ingress queue is empty again.
#[test]
fn a_relayed_notification_counts_in_the_relay_lag_histogram() {
    let store = crate::stores::Store::postgres("telemetry_relay_lag");
    let script = json!({"version": 1, "deltaDelayMs": 50,
        "responses": [{"steps": [{"type": "message", "deltas": vec!["tick "; 30]}]}]});
    let (home_a, home_b) = (scratch("telemetry-relay-a"), scratch("telemetry-relay-b"));
    for home in [&home_a, &home_b] {
        crate::follow_live::fixture(home, &script);
    }
    let project = scratch("telemetry-relay-project");
    let mut a = Client::start_with(&home_a, &store.args());
    let mut args_b = store.args();
    args_b.extend(["--metrics-listen", "127.0.0.1:0"]);
    let mut b = Client::start_with_args_and_env(
        &home_b,
        &args_b,
        &[("LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    let listening = wait_for_event(&b, "metrics.listening");
    let port: u16 = listening["addr"]
        .as_str()
        .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
        .map(|a| a.port())
        .unwrap_or_else(|| panic!("an address: {listening}"));

    let thread = thread_id(&a.start_thread(json!({"cwd": project})));
    a.start_turn(&thread, "Stream for a while.");
    a.notification("item/agentMessage/delta");
    b.call("thread/resume", json!({"threadId": thread}));
    let on_b = b.until_turn_completed();
    let relayed = crate::client::params(&on_b, "item/agentMessage/delta").len();
    assert!(relayed > 0, "B follows the turn from A: {on_b:?}");
    a.until_turn_completed();

    let (status, _, body) = http_get(port, "/metrics", &[]);
    assert_eq!(status, 200, "{body}");
    let samples = parse_metrics(&body);
    let count = sample(&samples, "agentwire_relay_lag_seconds_count", json!({}))
        .unwrap_or_else(|| panic!("no relay lag count in:\n{body}"));
    #[allow(clippy::cast_precision_loss)]
    let least = relayed as f64;
    assert!(
        count >= least,
        "every relayed delta ({relayed}) and more counted: {count}\n{body}"
    );
    let sum = sample(&samples, "agentwire_relay_lag_seconds_sum", json!({}))
        .unwrap_or_else(|| panic!("no relay lag sum in:\n{body}"));
    assert!(
        sum >= 0.0 && sum / count < 10.0,
        "moments on one host's clock, not years: {sum} s over {count}\n{body}"
    );
    assert_eq!(
        sample(
            &samples,
            "agentwire_requests_in_flight",
            json!({"transport": "stdio"})
        ),
        Some(0.0),
        "{body}"
    );
    a.stop();
    b.stop();
    for dir in [home_a, home_b, project] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
