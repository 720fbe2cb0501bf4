//! OpenTelemetry export (`[otel]`, docs/operations.md): loopback OTLP collectors decode what
//! agentwire exports with the official protobuf definitions (the `opentelemetry-proto` crate;
//! its serde form for OTLP/JSON, its tonic services for OTLP/gRPC). After a plain turn and a
//! tool turn with an approval on the fixture model: the request, turn, model call and tool call
//! spans with their attributes and parent links, a client's `traceparent` honoured, metrics and
//! logs arriving (log records carrying the trace and span they were emitted in), and the prompt
//! absent from every exported byte unless `log_user_prompt = true`; a websocket upgrade's
//! `traceparent` parents the requests of its connection. The same over `otlp-grpc`; over HTTPS
//! with a collector whose CA is given by the exporter's `tls.ca-certificate` (and refused
//! without it, a warning and no lost turn); from `agentwire mcp-server`; a command the sandbox
//! cannot confine counted as a sandbox refusal. An unreachable collector costs one warning and
//! no turn.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::logs::v1::logs_service_server::{
    LogsService, LogsServiceServer,
};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
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

/// Reads HTTP/1.1 requests from `stream` (plain or TLS) until it closes, answering each with
/// 200.
fn serve<S: Read + Write>(stream: S, keep: &Mutex<Vec<Export>>) {
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
        let writer = reader.get_mut();
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(answer).is_err()
            || writer.flush().is_err()
        {
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
        "agentwire.requests_in_flight",
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
    let records = log_records(&exports);
    let events: Vec<&str> = records.iter().map(|r| r.event.as_str()).collect();
    for event in ["turn.started", "turn.completed", "tool.completed"] {
        assert!(events.contains(&event), "{event} in {events:?}");
    }
    // A turn's records carry the trace and span of the turn they were emitted in (the plain
    // turn's: the client's trace); the tool's, its tool call's span.
    for (turn, span) in [(&turns.plain_turn, plain), (&turns.tool_turn, tool)] {
        for event in ["turn.started", "turn.completed"] {
            let record = records
                .iter()
                .find(|r| r.event == event && r.turn.as_deref() == Some(turn.as_str()))
                .unwrap_or_else(|| panic!("{event} of {turn}: {records:?}"));
            assert_eq!(record.trace_id, span.trace_id, "{event}: {record:?}");
            assert_eq!(record.span_id, span.span_id, "{event}: {record:?}");
        }
    }
    assert_eq!(
        records
            .iter()
            .find(|r| r.event == "turn.started" && r.turn.as_deref() == Some(&turns.plain_turn))
            .map(|r| hex(&r.trace_id)),
        Some(TRACE_ID.to_owned())
    );
    let tool_record = records
        .iter()
        .find(|r| r.event == "tool.completed")
        .expect("tool.completed");
    assert_eq!(tool_record.span_id, call.span_id, "{tool_record:?}");

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

/// One exported log record, as the checks need it.
#[derive(Debug)]
struct Record {
    event: String,
    turn: Option<String>,
    trace_id: Vec<u8>,
    span_id: Vec<u8>,
    attributes: Vec<KeyValue>,
}

/// Every log record of the log exports (protobuf or JSON) that has an `event`.
fn log_records(exports: &[Export]) -> Vec<Record> {
    let mut records = Vec::new();
    for export in exports.iter().filter(|e| e.path == "/v1/logs") {
        let request: ExportLogsServiceRequest = if export.content_type.contains("json") {
            serde_json::from_slice(&export.body).expect("OTLP/JSON logs")
        } else {
            ExportLogsServiceRequest::decode(export.body.as_slice()).expect("OTLP logs")
        };
        for resource in request.resource_logs {
            for scope in resource.scope_logs {
                for record in scope.log_records {
                    let Some(Value::String(event)) = attr(&record.attributes, "event") else {
                        continue;
                    };
                    records.push(Record {
                        event,
                        turn: attr(&record.attributes, "turn.id")
                            .and_then(|v| v.as_str().map(str::to_owned)),
                        trace_id: record.trace_id,
                        span_id: record.span_id,
                        attributes: record.attributes,
                    });
                }
            }
        }
    }
    records
}

/// Every metric data point of the metric exports: (metric name, the point's attributes, its
/// value: a sum's value or a histogram's count).
fn metric_points(exports: &[Export]) -> Vec<(String, Vec<KeyValue>, f64)> {
    let mut points = Vec::new();
    for export in exports.iter().filter(|e| e.path == "/v1/metrics") {
        let request =
            ExportMetricsServiceRequest::decode(export.body.as_slice()).expect("OTLP metrics");
        for resource in request.resource_metrics {
            for scope in resource.scope_metrics {
                for metric in scope.metrics {
                    match metric.data {
                        Some(metric::Data::Sum(sum)) => {
                            for point in sum.data_points {
                                #[allow(clippy::cast_precision_loss)]
                                let value = match point.value {
                                    Some(number_data_point::Value::AsInt(i)) => i as f64,
                                    Some(number_data_point::Value::AsDouble(d)) => d,
                                    None => f64::NAN,
                                };
                                points.push((metric.name.clone(), point.attributes, value));
                            }
                        }
                        Some(metric::Data::Histogram(histogram)) => {
                            for point in histogram.data_points {
                                #[allow(clippy::cast_precision_loss)]
                                let count = point.count as f64;
                                points.push((metric.name.clone(), point.attributes, count));
                            }
                        }
                        _ => points.push((metric.name.clone(), Vec::new(), f64::NAN)),
                    }
                }
            }
        }
    }
    points
}

/// A thread on `workspace` under `sandbox` (approval `never`) and one turn saying `text`,
/// completed.
fn plain_turn(client: &mut Client, workspace: &Path, text: &str) -> (String, String) {
    let thread = thread_id(&client.start_thread(json!({
        "cwd": workspace,
        "approvalPolicy": "never",
        "sandbox": "read-only",
    })));
    let turn = client.start_turn(&thread, text);
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    (thread, turn)
}

/// The `[otel]` table sending all three signals to `endpoint` with `exporter` (`otlp-http`,
/// `otlp-grpc`) and the rest of its table (`extra`: `, tls = { … }`).
fn otel_table(exporter: &str, endpoint: &str, extra: &str) -> String {
    let table = |path: &str| {
        format!(
            "{{ {exporter} = {{ endpoint = \"{endpoint}{path}\", headers = {{ \"x-e2e\" = \"yes\" }}{extra} }} }}"
        )
    };
    let (logs, traces, metrics) = if exporter == "otlp-http" {
        ("/v1/logs", "/v1/traces", "/v1/metrics")
    } else {
        ("", "", "")
    };
    format!(
        "[otel]\nenvironment = \"e2e\"\nexporter = {}\ntrace_exporter = {}\nmetrics_exporter = {}\n",
        table(logs),
        table(traces),
        table(metrics),
    )
}

/// A loopback OTLP/gRPC collector (the official service definitions, served by tonic): keeps
/// each export, re-encoded, under its signal's OTLP/HTTP path so that the same decoding reads it.
struct GrpcCollector {
    port: u16,
    received: Arc<Mutex<Vec<Export>>>,
    _runtime: tokio::runtime::Runtime,
}

/// The services of [`GrpcCollector`].
#[derive(Clone)]
struct GrpcSink(Arc<Mutex<Vec<Export>>>);

impl GrpcSink {
    fn keep<T: Message>(
        &self,
        path: &str,
        request: tonic::Request<T>,
    ) -> Result<(), tonic::Status> {
        if request
            .metadata()
            .get("x-e2e")
            .and_then(|v| v.to_str().ok())
            != Some("yes")
        {
            return Err(tonic::Status::unauthenticated(
                "the configured header is missing",
            ));
        }
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Export {
                path: path.to_owned(),
                content_type: "application/grpc".to_owned(),
                body: request.into_inner().encode_to_vec(),
            });
        Ok(())
    }
}

#[tonic::async_trait]
impl TraceService for GrpcSink {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        self.keep("/v1/traces", request)?;
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

#[tonic::async_trait]
impl MetricsService for GrpcSink {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        self.keep("/v1/metrics", request)?;
        Ok(tonic::Response::new(ExportMetricsServiceResponse::default()))
    }
}

#[tonic::async_trait]
impl LogsService for GrpcSink {
    async fn export(
        &self,
        request: tonic::Request<ExportLogsServiceRequest>,
    ) -> Result<tonic::Response<ExportLogsServiceResponse>, tonic::Status> {
        self.keep("/v1/logs", request)?;
        Ok(tonic::Response::new(ExportLogsServiceResponse::default()))
    }
}

impl GrpcCollector {
    fn start() -> Self {
        Self::serve(None)
    }

    /// The same behind TLS with `ca`'s server certificate.
    fn start_tls(ca: &TestCa) -> Self {
        let identity = tonic::transport::Identity::from_pem(&ca.server_pem.0, &ca.server_pem.1);
        Self::serve(Some(
            tonic::transport::ServerTlsConfig::new().identity(identity),
        ))
    }

    fn serve(tls: Option<tonic::transport::ServerTlsConfig>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("the collector's runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind the gRPC collector");
        let port = listener.local_addr().expect("address").port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = GrpcSink(received.clone());
        let mut builder = tonic::transport::Server::builder();
        if let Some(tls) = tls {
            builder = builder
                .tls_config(tls)
                .expect("the collector's TLS configuration");
        }
        runtime.spawn(
            builder
                .add_service(TraceServiceServer::new(sink.clone()))
                .add_service(MetricsServiceServer::new(sink.clone()))
                .add_service(LogsServiceServer::new(sink))
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
        );
        Self {
            port,
            received,
            _runtime: runtime,
        }
    }

    fn as_collector(&self) -> Collector {
        Collector {
            port: self.port,
            received: self.received.clone(),
        }
    }
}

#[test]
fn otlp_grpc_exports_the_spans_metrics_and_logs_of_a_turn() {
    let grpc = GrpcCollector::start();
    let collector = grpc.as_collector();
    let endpoint = format!("http://127.0.0.1:{}", grpc.port);
    let (home, workspace) = setup("otel-grpc", &otel_table("otlp-grpc", &endpoint, ""));
    let mut client = Client::start_with_args_and_env(&home, &[], &[("RUST_LOG", "info")]);
    let (thread, turn) = plain_turn(
        &mut client,
        &workspace,
        &format!("{PROMPT_MARKER} case-plain"),
    );
    let stderr = client.stop();
    wait_for(&collector, &["/v1/traces", "/v1/metrics", "/v1/logs"]);
    let exports = collector.exports();
    let (spans, resources) = spans(&exports);
    assert_eq!(
        attr(&resources[0], "service.name"),
        Some(json!("agentwire"))
    );
    let turn_span = spans
        .iter()
        .find(|s| s.name == "turn" && attr(&s.attributes, "turn.id") == Some(json!(turn)))
        .unwrap_or_else(|| panic!("the turn's span: {spans:?}"));
    assert_eq!(
        attr(&turn_span.attributes, "thread.id"),
        Some(json!(thread))
    );
    assert_eq!(
        attr(&turn_span.attributes, "turn.status"),
        Some(json!("completed"))
    );
    assert!(
        spans
            .iter()
            .any(|s| s.name == "model_call" && s.parent_span_id == turn_span.span_id),
        "a model call under the turn"
    );
    let request = spans
        .iter()
        .find(|s| s.span_id == turn_span.parent_span_id)
        .expect("the request that started the turn");
    assert_eq!(
        attr(&request.attributes, "rpc.method"),
        Some(json!("turn/start"))
    );
    let points = metric_points(&exports);
    assert!(
        points
            .iter()
            .any(|(name, attributes, value)| name == "agentwire.turns"
                && attr(attributes, "status") == Some(json!("completed"))
                && *value >= 1.0),
        "{points:?}"
    );
    let records = log_records(&exports);
    let started = records
        .iter()
        .find(|r| r.event == "turn.started" && r.turn.as_deref() == Some(turn.as_str()))
        .unwrap_or_else(|| panic!("turn.started: {records:?}"));
    assert_eq!(started.trace_id, turn_span.trace_id);
    let bytes = collector.all_bytes();
    assert!(
        !bytes
            .windows(PROMPT_MARKER.len())
            .any(|window| window == PROMPT_MARKER.as_bytes()),
        "the prompt left the process"
    );
    assert!(
        !stderr.contains("OpenTelemetry export failed"),
        "no export failed: {stderr}"
    );
}

/// A CA made for one test, and a certificate it signed for 127.0.0.1.
struct TestCa {
    ca_pem: String,
    /// The server's certificate and key, PEM (the gRPC collector's TLS identity).
    server_pem: (String, String),
    server: rustls::ServerConfig,
}

impl TestCa {
    fn new() -> Self {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
        let ca_key = KeyPair::generate().expect("a CA key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "agentwire e2e CA");
        let ca_cert = ca_params.self_signed(&ca_key).expect("the CA certificate");
        let issuer = Issuer::new(ca_params, ca_key);
        let server_key = KeyPair::generate().expect("a server key");
        let server_cert = CertificateParams::new(vec!["127.0.0.1".to_owned()])
            .expect("server params")
            .signed_by(&server_key, &issuer)
            .expect("the server certificate");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![server_cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(server_key.serialize_der().into()),
            )
            .expect("the server's TLS configuration");
        Self {
            ca_pem: ca_cert.pem(),
            server_pem: (server_cert.pem(), server_key.serialize_pem()),
            server,
        }
    }
}

/// A loopback OTLP/HTTP collector behind TLS with `ca`'s certificate.
fn https_collector(ca: &TestCa) -> Collector {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the collector");
    let port = listener.local_addr().expect("address").port();
    let received = Arc::new(Mutex::new(Vec::new()));
    let keep = received.clone();
    let config = Arc::new(ca.server.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let keep = keep.clone();
            let config = config.clone();
            std::thread::spawn(move || {
                let Ok(connection) = rustls::ServerConnection::new(config) else {
                    return;
                };
                serve(rustls::StreamOwned::new(connection, stream), &keep);
            });
        }
    });
    Collector { port, received }
}

#[test]
fn an_https_collector_is_trusted_through_the_tls_ca_certificate_and_only_so() {
    let ca = TestCa::new();
    let collector = https_collector(&ca);
    let endpoint = format!("https://127.0.0.1:{}", collector.port);
    // With the CA (a path relative to the home, as Codex reads it): everything arrives.
    let (home, workspace) = setup(
        "otel-https",
        &otel_table(
            "otlp-http",
            &endpoint,
            ", tls = { ca-certificate = \"certs/ca.pem\" }",
        ),
    );
    std::fs::create_dir_all(home.join("certs")).expect("certs dir");
    std::fs::write(home.join("certs/ca.pem"), &ca.ca_pem).expect("the CA file");
    let mut client = Client::start_with_args_and_env(&home, &[], &[("RUST_LOG", "info")]);
    let (_, turn) = plain_turn(&mut client, &workspace, "case-plain");
    let stderr = client.stop();
    wait_for(&collector, &["/v1/traces", "/v1/metrics", "/v1/logs"]);
    let (spans, _) = spans(&collector.exports());
    assert!(
        spans
            .iter()
            .any(|s| s.name == "turn" && attr(&s.attributes, "turn.id") == Some(json!(turn))),
        "the turn's span over HTTPS"
    );
    assert!(
        !stderr.contains("OpenTelemetry export failed"),
        "no export failed: {stderr}"
    );

    // Without it the collector's certificate is not trusted: one warning, the turn completes,
    // nothing arrives.
    let untrusted = https_collector(&ca);
    let endpoint = format!("https://127.0.0.1:{}", untrusted.port);
    let (home, workspace) = setup(
        "otel-https-untrusted",
        &otel_table("otlp-http", &endpoint, ""),
    );
    let mut client = Client::start_with_args_and_env(&home, &[], &[("RUST_LOG", "info")]);
    plain_turn(&mut client, &workspace, "case-plain");
    let stderr = client.stop();
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("OpenTelemetry export failed"))
        .collect();
    assert_eq!(warnings.len(), 1, "one warning: {stderr}");
    assert!(untrusted.exports().is_empty(), "nothing was accepted");
}

/// A process spoken to in JSON lines over its stdio (`agentwire mcp-server`, or app-server
/// from another path than the test's binary).
struct Lines {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<Value>,
    stderr: Arc<Mutex<String>>,
}

impl Lines {
    fn spawn(mut command: std::process::Command) -> Self {
        use std::process::Stdio;
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn agentwire");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("a non-JSON line ({e}): {line}"));
                if sender.send(value).is_err() {
                    break;
                }
            }
        });
        let mut pipe = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            sink.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push_str(&text);
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let mut line = serde_json::to_vec(message).expect("serializes");
        line.push(b'\n');
        stdin.write_all(&line).expect("write to the server");
        stdin.flush().expect("flush");
    }

    /// The first message `wanted` accepts (the ones before it are dropped).
    fn until(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.lines.recv_timeout(left).unwrap_or_else(|e| {
                panic!(
                    "no {what} ({e}); stderr:\n{}",
                    self.stderr
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                )
            });
            if wanted(&message) {
                return message;
            }
        }
    }

    /// Sends request `method` as `id` and returns its result.
    fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = self.until(&format!("the answer to {method}"), |m| {
            m.get("id") == Some(&json!(id)) && m.get("method").is_none()
        });
        answer
            .get("result")
            .unwrap_or_else(|| panic!("{method} failed: {answer}"))
            .clone()
    }

    /// Closes stdin, waits for a clean exit and returns stderr.
    fn stop(mut self) -> String {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match self.child.try_wait().expect("poll the server") {
                Some(status) => {
                    assert!(status.success(), "exited with {status}");
                    break;
                }
                None if Instant::now() > deadline => {
                    let _ = self.child.kill();
                    panic!("the server did not exit");
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        std::thread::sleep(Duration::from_millis(50));
        self.stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[test]
fn mcp_server_exports_the_spans_metrics_and_logs_of_its_tool_calls() {
    let collector = Collector::start();
    let (home, workspace) = setup(
        "otel-mcp-server",
        &otel_table("otlp-http", &collector.endpoint(""), ""),
    );
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agentwire"));
    command
        .arg("mcp-server")
        .env("AGENTWIRE_HOME", &home)
        .env("RUST_LOG", "warn");
    let mut host = Lines::spawn(command);
    host.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "e2e-host", "version": "0.0.1"}}),
    );
    host.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let result = host.call(
        2,
        "tools/call",
        json!({"name": "codex", "arguments": {"prompt": format!("{PROMPT_MARKER} case-plain"),
               "cwd": workspace, "approval-policy": "never", "sandbox": "read-only"}}),
    );
    assert_eq!(result.get("isError"), None, "{result}");
    let stderr = host.stop();
    wait_for(&collector, &["/v1/traces", "/v1/metrics", "/v1/logs"]);
    let exports = collector.exports();
    let (spans, resources) = spans(&exports);
    assert_eq!(
        attr(&resources[0], "service.name"),
        Some(json!("agentwire"))
    );
    let turn = spans
        .iter()
        .find(|s| s.name == "turn")
        .unwrap_or_else(|| panic!("a turn span: {spans:?}"));
    assert_eq!(
        attr(&turn.attributes, "turn.status"),
        Some(json!("completed"))
    );
    assert!(
        spans
            .iter()
            .any(|s| s.name == "model_call" && s.parent_span_id == turn.span_id),
        "a model call under the turn"
    );
    // The tool call's requests to the engine: a span each, the turn under its turn/start.
    assert!(
        spans
            .iter()
            .any(|s| attr(&s.attributes, "rpc.method") == Some(json!("thread/start"))),
        "a thread/start span: {spans:?}"
    );
    assert!(
        spans.iter().any(|s| s.span_id == turn.parent_span_id
            && attr(&s.attributes, "rpc.method") == Some(json!("turn/start"))),
        "the turn/start request of the tool call: {spans:?}"
    );
    let points = metric_points(&exports);
    assert!(
        points
            .iter()
            .any(|(name, attributes, value)| name == "agentwire.turns"
                && attr(attributes, "status") == Some(json!("completed"))
                && *value >= 1.0),
        "{points:?}"
    );
    let records = log_records(&exports);
    assert!(
        records.iter().any(|r| r.event == "turn.completed"),
        "{records:?}"
    );
    let bytes = collector.all_bytes();
    assert!(
        !bytes
            .windows(PROMPT_MARKER.len())
            .any(|window| window == PROMPT_MARKER.as_bytes()),
        "the prompt left the process"
    );
    assert!(
        !stderr.contains("OpenTelemetry export failed"),
        "no export failed: {stderr}"
    );
}

#[test]
fn a_turns_command_the_sandbox_cannot_confine_is_counted_as_refused() {
    let collector = Collector::start();
    let root = scratch("otel-sandbox-refused");
    let (home, workspace) = home_and_workspace(&root);
    let script = json!({"version": 1, "responses": [{"steps": [
        {"type": "command", "command": "touch confined-ran.txt"},
        {"type": "message", "deltas": ["done"]}
    ]}]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n{}",
            otel_table("otlp-http", &collector.endpoint(""), "")
        ),
    )
    .expect("config");
    // The server runs from a name that is removed once it started (a binary replaced by an
    // upgrade): its sandbox program, itself, can no longer be started, so a confined command
    // is refused, not run unconfined.
    let exe = root.join("agentwire");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_agentwire"), &exe).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_agentwire"), &exe).expect("a copy of the binary");
    }
    let mut command = std::process::Command::new(&exe);
    command
        .arg("app-server")
        .env("AGENTWIRE_HOME", &home)
        .env("RUST_LOG", "info")
        .env("LOG_FORMAT", "json");
    let mut server = Lines::spawn(command);
    server.call(
        1,
        "initialize",
        json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}, "capabilities": null}),
    );
    server.send(&json!({"method": "initialized"}));
    std::fs::remove_file(&exe).expect("remove the server's binary");
    let thread = server.call(
        2,
        "thread/start",
        json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": "workspace-write"}),
    );
    let thread = thread_id(&thread);
    server.call(
        3,
        "turn/start",
        json!({"threadId": thread, "input": [{"type": "text", "text": "go"}]}),
    );
    let command_item = server.until("the command's item", |m| {
        m["method"] == json!("item/completed")
            && m["params"]["item"]["type"] == json!("commandExecution")
    });
    assert_eq!(
        command_item["params"]["item"]["status"],
        json!("failed"),
        "{command_item}"
    );
    let completed = server.until("turn/completed", |m| m["method"] == json!("turn/completed"));
    assert_eq!(
        completed["params"]["turn"]["status"],
        json!("completed"),
        "{completed}"
    );
    assert!(
        !workspace.join("confined-ran.txt").exists(),
        "the command ran without its sandbox"
    );
    let stderr = server.stop();
    assert!(
        stderr.contains("\"sandbox.refused\""),
        "the refusal is logged: {stderr}"
    );
    wait_for(&collector, &["/v1/metrics", "/v1/logs"]);
    let exports = collector.exports();
    let points = metric_points(&exports);
    let refused = points
        .iter()
        .find(|(name, attributes, _)| {
            name == "agentwire.sandbox_refusals"
                && attr(attributes, "what") == Some(json!("command"))
        })
        .unwrap_or_else(|| panic!("agentwire.sandbox_refusals{{what=command}}: {points:?}"));
    assert!(refused.2 >= 1.0, "{refused:?}");
    let records = log_records(&exports);
    let record = records
        .iter()
        .find(|r| r.event == "sandbox.refused")
        .unwrap_or_else(|| panic!("sandbox.refused: {records:?}"));
    assert_eq!(attr(&record.attributes, "what"), Some(json!("command")));
}

#[test]
fn otlp_grpc_over_tls_trusts_the_tls_ca_certificate() {
    let ca = TestCa::new();
    let grpc = GrpcCollector::start_tls(&ca);
    let collector = grpc.as_collector();
    let endpoint = format!("https://127.0.0.1:{}", grpc.port);
    let (home, workspace) = setup(
        "otel-grpc-tls",
        &otel_table(
            "otlp-grpc",
            &endpoint,
            ", tls = { ca-certificate = \"ca.pem\" }",
        ),
    );
    std::fs::write(home.join("ca.pem"), &ca.ca_pem).expect("the CA file");
    let mut client = Client::start_with_args_and_env(&home, &[], &[("RUST_LOG", "info")]);
    let (_, turn) = plain_turn(&mut client, &workspace, "case-plain");
    let stderr = client.stop();
    wait_for(&collector, &["/v1/traces", "/v1/metrics", "/v1/logs"]);
    let (spans, _) = spans(&collector.exports());
    assert!(
        spans
            .iter()
            .any(|s| s.name == "turn" && attr(&s.attributes, "turn.id") == Some(json!(turn))),
        "the turn's span over gRPC with TLS"
    );
    assert!(
        !stderr.contains("OpenTelemetry export failed"),
        "no export failed: {stderr}"
    );
}
