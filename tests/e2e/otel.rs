//! OpenTelemetry export (`[otel]`, docs/operations.md): a loopback OTLP/HTTP collector decodes
//! what agentwire app-server exports with the official protobuf definitions (the
//! `opentelemetry-proto` crate; its serde form for OTLP/JSON) after a plain turn and a tool
//! turn with an approval on the fixture model: the request, turn, model call and tool call
//! spans with their attributes and parent links, a client's `traceparent` honoured, metrics and
//! logs arriving, and the prompt absent from every exported byte unless `log_user_prompt =
//! true`; a websocket upgrade's `traceparent` parents the requests of its connection. An
//! unreachable collector costs one warning and no turn.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::metric;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{Value, json};

use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

use crate::app_server_ws::App;
use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::{home_and_workspace, scratch};

const PROMPT_MARKER: &str = "OTEL-PROMPT-5e0c";
const OUTPUT_MARKER: &str = "OTEL-OUTPUT-a81d";
/// The client's trace and the span it calls from (W3C trace context).
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

/// One payload the collector received.
#[derive(Debug, Clone)]
struct Export {
    path: String,
    content_type: String,
    body: Vec<u8>,
}

/// A loopback OTLP/HTTP collector: answers every POST with 200 and keeps its payload.
struct Collector {
    port: u16,
    received: Arc<Mutex<Vec<Export>>>,
}

impl Collector {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the collector");
        let port = listener.local_addr().expect("address").port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let keep = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let keep = keep.clone();
                std::thread::spawn(move || serve(stream, &keep));
            }
        });
        Self { port, received }
    }

    fn endpoint(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The `[otel]` table sending all three signals here with `protocol`.
    fn config(&self, protocol: &str, extra: &str) -> String {
        let exporter = |path: &str| {
            format!(
                "{{ otlp-http = {{ endpoint = \"{}\", protocol = \"{protocol}\", headers = {{ \"x-e2e\" = \"yes\" }} }} }}",
                self.endpoint(path)
            )
        };
        format!(
            "[otel]\nenvironment = \"e2e\"\nexporter = {}\ntrace_exporter = {}\nmetrics_exporter = {}\n{extra}\n",
            exporter("/v1/logs"),
            exporter("/v1/traces"),
            // Without a path: the server adds `/v1/metrics`.
            exporter(""),
        )
    }

    fn exports(&self) -> Vec<Export> {
        self.received
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Every byte received, for the leak checks.
    fn all_bytes(&self) -> Vec<u8> {
        self.exports().into_iter().flat_map(|e| e.body).collect()
    }
}

/// Reads HTTP/1.1 requests from `stream` until it closes, answering each with 200.
fn serve(stream: TcpStream, keep: &Mutex<Vec<Export>>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
        let (mut length, mut content_type, mut x_e2e) = (0usize, String::new(), false);
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap_or(0),
                    "content-type" => content_type = value.trim().to_owned(),
                    "x-e2e" => x_e2e = value.trim() == "yes",
                    _ => {}
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        assert!(x_e2e, "the configured header came with {path}");
        let json = content_type.contains("json");
        keep.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Export {
                path,
                content_type: content_type.clone(),
                body,
            });
        let answer: &[u8] = if json { b"{}" } else { b"" };
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            answer.len()
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(answer).is_err() {
            return;
        }
    }
}

/// A home whose fixture model answers `case-plain` with a message and `case-tool` with a
/// command that needs an approval (and prints [`OUTPUT_MARKER`]) and then a message; `otel` is the `[otel]` table.
fn setup(name: &str, otel: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    let script = json!({
        "version": 1,
        "responses": [
            {"when": "case-plain", "steps": [{"type": "message", "deltas": ["hello"]}]},
            {"when": "case-tool", "steps": [
                {"type": "command", "command": format!("touch approved.txt && echo {OUTPUT_MARKER}")},
                {"type": "message", "deltas": ["done"]}
            ]}
        ]
    });
    std::fs::write(home.join("script.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        format!("model_provider = \"fixture\"\nfixture_script = \"script.json\"\n{otel}"),
    )
    .expect("config");
    (home, workspace)
}

/// What the two turns left to check against the exports.
struct Turns {
    thread: String,
    plain_turn: String,
    tool_turn: String,
    tool_item: String,
}

/// A thread (started from the client's trace), a plain turn (with a `traceparent` in its
/// `_meta`) and a tool turn whose command is approved.
fn run_turns(client: &mut Client, workspace: &Path) -> Turns {
    let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    let thread = thread_id(&client.start_thread(json!({
        "cwd": workspace,
        "approvalPolicy": "untrusted",
        "sandbox": "danger-full-access",
        "_meta": {"traceparent": traceparent},
    })));
    let plain_turn = client.start_turn_with(
        &thread,
        &format!("{PROMPT_MARKER} case-plain"),
        json!({"_meta": {"traceparent": traceparent}}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let tool_turn = client.start_turn(&thread, &format!("{PROMPT_MARKER} case-tool"));
    let (id, asked) = client.server_request("item/commandExecution/requestApproval");
    std::thread::sleep(Duration::from_millis(30));
    client.send(&json!({"id": id, "result": {"decision": "accept"}}));
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let completed = params(&seen, "item/completed");
    assert!(
        completed
            .iter()
            .any(|p| p["item"]["type"] == json!("commandExecution")
                && p["item"]["status"] == json!("completed")),
        "{seen:#?}"
    );
    Turns {
        thread,
        plain_turn,
        tool_turn,
        tool_item: asked["itemId"].as_str().expect("an item id").to_owned(),
    }
}

/// The value of `key` among `attributes`, as JSON.
fn attr(attributes: &[KeyValue], key: &str) -> Option<Value> {
    let value = attributes.iter().find(|kv| kv.key == key)?.value.as_ref()?;
    Some(match value.value.as_ref()? {
        any_value::Value::StringValue(s) => json!(s),
        any_value::Value::IntValue(i) => json!(i),
        any_value::Value::BoolValue(b) => json!(b),
        any_value::Value::DoubleValue(d) => json!(d),
        other => json!(format!("{other:?}")),
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every span of the trace exports (protobuf or JSON), and the resources' attributes.
fn spans(exports: &[Export]) -> (Vec<Span>, Vec<Vec<KeyValue>>) {
    let mut spans = Vec::new();
    let mut resources = Vec::new();
    for export in exports.iter().filter(|e| e.path == "/v1/traces") {
        let request: ExportTraceServiceRequest = if export.content_type.contains("json") {
            serde_json::from_slice(&export.body).expect("OTLP/JSON traces")
        } else {
            ExportTraceServiceRequest::decode(export.body.as_slice()).expect("OTLP traces")
        };
        for resource_spans in request.resource_spans {
            resources.push(
                resource_spans
                    .resource
                    .map(|r| r.attributes)
                    .unwrap_or_default(),
            );
            for scope in resource_spans.scope_spans {
                spans.extend(scope.spans);
            }
        }
    }
    (spans, resources)
}

/// Waits until the collector holds a payload for each of `paths`.
fn wait_for(collector: &Collector, paths: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let exports = collector.exports();
        if paths.iter().all(|p| exports.iter().any(|e| e.path == *p)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no export to each of {paths:?}: {:?}",
            exports.iter().map(|e| &e.path).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn spans_metrics_and_logs_reach_the_collector_without_the_prompt() {
    let collector = Collector::start();
    let (home, workspace) = setup(
        "otel-export",
        &collector.config("binary", "log_user_prompt = false"),
    );
    let mut client = Client::start_with_args_and_env(
        &home,
        &[],
        &[("LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    let turns = run_turns(&mut client, &workspace);
    // A request the schema refuses: its span says so.
    let refused = client.request("thread/start", json!({"cwd": 7}));
    assert!(refused.is_err(), "{refused:?}");
    // A clean stop flushes everything queued.
    let stderr = client.stop();
    wait_for(&collector, &["/v1/traces", "/v1/metrics", "/v1/logs"]);
    let exports = collector.exports();
    assert!(
        exports
            .iter()
            .all(|e| e.content_type == "application/x-protobuf"),
        "{:?}",
        exports.iter().map(|e| &e.content_type).collect::<Vec<_>>()
    );
    let (spans, resources) = spans(&exports);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();

    // The resource.
    let resource = &resources[0];
    assert_eq!(attr(resource, "service.name"), Some(json!("agentwire")));
    assert_eq!(
        attr(resource, "service.version"),
        Some(json!(env!("CARGO_PKG_VERSION")))
    );
    assert_eq!(attr(resource, "deployment.environment"), Some(json!("e2e")));

    // Request spans: one per request, initialize included.
    let requests = |method: &str| -> Vec<&Span> {
        spans
            .iter()
            .filter(|s| attr(&s.attributes, "rpc.method") == Some(json!(method)))
            .collect()
    };
    assert_eq!(requests("initialize").len(), 1, "{names:?}");
    let turn_starts = requests("turn/start");
    assert_eq!(turn_starts.len(), 2, "{names:?}");
    for span in &turn_starts {
        assert_eq!(span.name, "turn/start");
        assert_eq!(attr(&span.attributes, "rpc.system"), Some(json!("jsonrpc")));
        assert_eq!(attr(&span.attributes, "transport"), Some(json!("stdio")));
        assert_eq!(attr(&span.attributes, "outcome"), Some(json!("ok")));
        assert!(
            attr(&span.attributes, "connection.id").is_some_and(|v| v.is_i64()),
            "{span:?}"
        );
    }
    let refused = requests("thread/start")
        .into_iter()
        .find(|s| attr(&s.attributes, "outcome") == Some(json!("error")))
        .unwrap_or_else(|| panic!("the refused thread/start: {names:?}"));
    assert_eq!(
        attr(&refused.attributes, "rpc.jsonrpc.error_code"),
        Some(json!(-32602))
    );

    // The client's traceparent: the plain turn's request joins its trace, under its span.
    let honoured: Vec<&&Span> = turn_starts
        .iter()
        .filter(|s| hex(&s.trace_id) == TRACE_ID)
        .collect();
    assert_eq!(honoured.len(), 1, "one turn/start in the client's trace");
    let plain_request = honoured[0];
    assert_eq!(hex(&plain_request.parent_span_id), PARENT_ID);
    let tool_request = turn_starts
        .iter()
        .find(|s| hex(&s.trace_id) != TRACE_ID)
        .expect("the other turn/start");
    assert!(
        tool_request.parent_span_id.is_empty(),
        "no traceparent: a root span"
    );

    // Turn spans: children of the request that started them.
    let turn_span = |turn: &str| -> &Span {
        spans
            .iter()
            .find(|s| s.name == "turn" && attr(&s.attributes, "turn.id") == Some(json!(turn)))
            .unwrap_or_else(|| panic!("a turn span for {turn}: {names:?}"))
    };
    let plain = turn_span(&turns.plain_turn);
    let tool = turn_span(&turns.tool_turn);
    assert_eq!(plain.trace_id, plain_request.trace_id);
    assert_eq!(plain.parent_span_id, plain_request.span_id);
    assert_eq!(tool.parent_span_id, tool_request.span_id);
    for turn in [plain, tool] {
        assert_eq!(
            attr(&turn.attributes, "thread.id"),
            Some(json!(turns.thread))
        );
        assert_eq!(
            attr(&turn.attributes, "turn.status"),
            Some(json!("completed"))
        );
        assert_eq!(attr(&turn.attributes, "turn.kind"), Some(json!("turn")));
        assert!(
            attr(&turn.attributes, "tokens.output").is_some(),
            "{turn:?}"
        );
    }

    // Model calls: one under the plain turn, two under the tool turn.
    let children = |parent: &Span, name: &str| -> Vec<&Span> {
        spans
            .iter()
            .filter(|s| s.name == name && s.parent_span_id == parent.span_id)
            .collect()
    };
    let plain_calls = children(plain, "model_call");
    assert_eq!(plain_calls.len(), 1, "{names:?}");
    let call = plain_calls[0];
    assert_eq!(
        attr(&call.attributes, "model.provider"),
        Some(json!("fixture"))
    );
    assert!(attr(&call.attributes, "model.name").is_some(), "{call:?}");
    assert_eq!(attr(&call.attributes, "model.attempt"), Some(json!(1)));
    assert!(
        attr(&call.attributes, "model.time_to_first_token_ms").is_some_and(|v| v.is_i64()),
        "{call:?}"
    );
    for key in ["tokens.input", "tokens.output", "tokens.cached_input"] {
        assert!(attr(&call.attributes, key).is_some(), "{key}: {call:?}");
    }
    assert_eq!(
        attr(&call.attributes, "turn.id"),
        Some(json!(turns.plain_turn))
    );
    let mut attempts: Vec<Value> = children(tool, "model_call")
        .iter()
        .filter_map(|s| attr(&s.attributes, "model.attempt"))
        .collect();
    attempts.sort_by_key(|v| v.as_i64());
    assert_eq!(attempts, [json!(1), json!(2)]);

    // The tool call: under the tool turn, with its item, approval and exit code.
    let tools = children(tool, "tool_call");
    assert_eq!(tools.len(), 1, "{names:?}");
    let call = tools[0];
    assert_eq!(
        attr(&call.attributes, "item.id"),
        Some(json!(turns.tool_item))
    );
    assert!(attr(&call.attributes, "tool.name").is_some(), "{call:?}");
    assert_eq!(
        attr(&call.attributes, "tool.status"),
        Some(json!("completed"))
    );
    assert_eq!(attr(&call.attributes, "tool.exit_code"), Some(json!(0)));
    assert!(
        attr(&call.attributes, "tool.duration_ms").is_some(),
        "{call:?}"
    );
    assert_eq!(
        attr(&call.attributes, "approval.decision"),
        Some(json!("accept"))
    );
    let waited = attr(&call.attributes, "approval.wait_ms")
        .and_then(|v| v.as_i64())
        .unwrap_or_else(|| panic!("approval.wait_ms: {call:?}"));
    assert!(
        waited >= 20,
        "the approval waited for the client: {waited} ms"
    );
    assert!(children(plain, "tool_call").is_empty());

    // Metrics: the instruments of the registry, initialize counted.
    let mut metric_names = Vec::new();
    let mut initialize_counted = false;
    for export in exports.iter().filter(|e| e.path == "/v1/metrics") {
        let request =
            ExportMetricsServiceRequest::decode(export.body.as_slice()).expect("OTLP metrics");
        for resource in request.resource_metrics {
            for scope in resource.scope_metrics {
                for metric in scope.metrics {
                    if metric.name == "agentwire.requests"
                        && let Some(metric::Data::Sum(sum)) = &metric.data
                    {
                        initialize_counted |= sum.data_points.iter().any(|point| {
                            attr(&point.attributes, "method") == Some(json!("initialize"))
                        });
                    }
                    metric_names.push(metric.name);
                }
            }
        }
    }
    for name in [
        "agentwire.requests",
        "agentwire.request.duration",
        "agentwire.connections_open",
        "agentwire.turns",
        "agentwire.turn.duration",
        "agentwire.model_calls",
        "agentwire.model.time_to_first_token",
        "agentwire.tokens",
        "agentwire.approvals",
        "agentwire.approval.wait",
        "agentwire.tool_runs",
    ] {
        assert!(
            metric_names.iter().any(|n| n == name),
            "{name} in {metric_names:?}"
        );
    }
    assert!(initialize_counted, "initialize in agentwire.requests");

    // Logs: the operational events, as OTLP log records.
    let mut events = Vec::new();
    for export in exports.iter().filter(|e| e.path == "/v1/logs") {
        let request = ExportLogsServiceRequest::decode(export.body.as_slice()).expect("OTLP logs");
        for resource in request.resource_logs {
            for scope in resource.scope_logs {
                for record in scope.log_records {
                    if let Some(Value::String(event)) = attr(&record.attributes, "event") {
                        events.push(event);
                    }
                }
            }
        }
    }
    for event in ["turn.started", "turn.completed", "tool.completed"] {
        assert!(events.iter().any(|e| e == event), "{event} in {events:?}");
    }

    // Nothing the user wrote, nor the command's output, left the process.
    let bytes = collector.all_bytes();
    for marker in [PROMPT_MARKER, OUTPUT_MARKER] {
        assert!(
            !bytes
                .windows(marker.len())
                .any(|window| window == marker.as_bytes()),
            "{marker} in the exported bytes"
        );
    }
    assert!(
        !stderr.contains("OpenTelemetry export failed"),
        "no export failed: {stderr}"
    );
}

#[test]
fn log_user_prompt_lets_the_prompt_into_otlp_json_logs() {
    let collector = Collector::start();
    let (home, workspace) = setup(
        "otel-json-prompt",
        &collector.config("json", "log_user_prompt = true"),
    );
    let mut client = Client::start_with_args_and_env(&home, &[], &[("RUST_LOG", "info")]);
    let turns = run_turns(&mut client, &workspace);
    client.stop();
    wait_for(&collector, &["/v1/traces", "/v1/logs"]);
    let exports = collector.exports();
    assert!(
        exports.iter().all(|e| e.content_type == "application/json"),
        "{:?}",
        exports.iter().map(|e| &e.content_type).collect::<Vec<_>>()
    );
    // OTLP/JSON decodes with the official definitions too.
    let (spans, _) = spans(&exports);
    assert!(
        spans
            .iter()
            .any(|s| s.name == "turn"
                && attr(&s.attributes, "turn.id") == Some(json!(turns.tool_turn))),
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let logs: Vec<String> = exports
        .iter()
        .filter(|e| e.path == "/v1/logs")
        .map(|e| String::from_utf8_lossy(&e.body).into_owned())
        .collect();
    assert!(
        logs.iter().any(|l| l.contains(PROMPT_MARKER)),
        "the prompt is in the logs when allowed"
    );
    for log in &logs {
        serde_json::from_str::<ExportLogsServiceRequest>(log).expect("OTLP/JSON logs");
    }
}

#[test]
fn an_unreachable_collector_costs_one_warning_and_no_turn() {
    // A port nothing listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let gone = Collector {
        port,
        received: Arc::default(),
    };
    let (home, workspace) = setup("otel-unreachable", &gone.config("binary", ""));
    let mut client = Client::start_with_args_and_env(
        &home,
        &[],
        &[
            ("RUST_LOG", "info"),
            // Export while the turns run, not only at the end.
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("OTEL_BLRP_SCHEDULE_DELAY", "100"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
        ],
    );
    let started = Instant::now();
    run_turns(&mut client, &workspace);
    std::thread::sleep(Duration::from_millis(800));
    let turns = run_turns(&mut client, &workspace);
    assert!(!turns.tool_item.is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the turns were not held up: {:?}",
        started.elapsed()
    );
    let stderr = client.stop();
    let warnings = stderr
        .lines()
        .filter(|l| l.contains("OpenTelemetry export failed"))
        .count();
    assert_eq!(warnings, 1, "one warning: {stderr}");
}

#[tokio::test]
async fn a_websocket_upgrades_traceparent_parents_its_requests() {
    const UPGRADE_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
    const UPGRADE_PARENT: &str = "b7ad6b7169203331";
    let collector = Collector::start();
    let root = scratch("otel-ws-upgrade");
    let (home, _) = home_and_workspace(&root);
    std::fs::write(home.join("config.toml"), collector.config("binary", "")).expect("config");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let mut upgrade = format!("ws://{addr}/")
        .into_client_request()
        .expect("a client request");
    upgrade.headers_mut().insert(
        "traceparent",
        HeaderValue::from_str(&format!("00-{UPGRADE_TRACE}-{UPGRADE_PARENT}-01"))
            .expect("a header value"),
    );
    let (mut ws, _) = connect_async(upgrade).await.expect("the upgrade");
    crate::app_server_ws::initialize(&mut ws).await;
    let answer =
        crate::app_server_ws::request(&mut ws, json!(1), "thread/loaded/list", json!({})).await;
    assert!(answer.get("result").is_some(), "{answer}");
    drop(ws);
    let (status, _) = app.terminate();
    assert!(status.success(), "{status}");
    wait_for(&collector, &["/v1/traces"]);
    let (spans, _) = spans(&collector.exports());
    for method in ["initialize", "thread/loaded/list"] {
        let span = spans
            .iter()
            .find(|s| s.name == method)
            .unwrap_or_else(|| panic!("a {method} span"));
        assert_eq!(hex(&span.trace_id), UPGRADE_TRACE, "{span:?}");
        assert_eq!(hex(&span.parent_span_id), UPGRADE_PARENT, "{span:?}");
        assert_eq!(attr(&span.attributes, "transport"), Some(json!("ws")));
    }
}
