//! `agentwire mcp-server` end to end: an MCP host (this test) drives the real binary over stdio
//! and over streamable HTTP; turns run on the fixture model.

use std::collections::{BTreeSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::Client;
use crate::common::{home_and_workspace, scratch, signal};
use crate::engine_turns::slow_script;

/// How long any single message may take.
const WAIT: Duration = Duration::from_secs(60);

/// A running `agentwire mcp-server` on stdio, seen from its MCP host.
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
    next_id: i64,
    /// Messages received but not yet looked at, oldest first.
    backlog: VecDeque<Value>,
    /// While set, nothing more is read from the server's stdout (a host that stopped reading).
    paused: Arc<AtomicBool>,
}

impl Host {
    fn spawn(home: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
            .arg("mcp-server")
            .env("AGENTWIRE_HOME", home)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn agentwire mcp-server");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, lines) = channel();
        let paused = Arc::new(AtomicBool::new(false));
        let gate = paused.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("server wrote a non-JSON line ({e}): {line}"));
                if sender.send(value).is_err() {
                    break;
                }
                while gate.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        });
        let mut pipe = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            sink.lock().expect("stderr lock").push_str(&text);
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            next_id: 0,
            backlog: VecDeque::new(),
            paused,
        }
    }

    /// Spawns the server and completes the handshake (with the elicitation capability).
    fn start(home: &Path) -> Self {
        let mut host = Self::spawn(home);
        let result = host.call("initialize", initialize_params("2025-06-18"));
        assert_eq!(result["protocolVersion"], json!("2025-06-18"), "{result}");
        host.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        host
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let mut line = serde_json::to_vec(message).expect("serializes");
        line.push(b'\n');
        stdin.write_all(&line).expect("write to the server");
        stdin.flush().expect("flush");
    }

    fn next_message(&mut self, waiting_for: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        let left = deadline.saturating_duration_since(Instant::now());
        let message = self.lines.recv_timeout(left).unwrap_or_else(|e| {
            panic!(
                "no message while waiting for {waiting_for} ({e}); stderr:\n{}",
                self.stderr.lock().expect("stderr lock")
            )
        });
        assert_eq!(
            message["jsonrpc"],
            json!("2.0"),
            "every MCP message has jsonrpc 2.0: {message}"
        );
        message
    }

    /// Sends request `method` and returns its id without waiting.
    fn send_request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The response to request `id` (the whole message); what arrives first is kept.
    fn response(&mut self, id: &Value) -> Value {
        let is_response = |m: &Value| m.get("id") == Some(id) && m.get("method").is_none();
        if let Some(at) = self.backlog.iter().position(is_response) {
            return self.backlog.remove(at).expect("position is valid");
        }
        loop {
            let message = self.next_message(&format!("the response to {id}"));
            if is_response(&message) {
                return message;
            }
            self.backlog.push_back(message);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(&id)
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {response}"),
        }
    }

    fn call_err(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.get("error") {
            Some(error) => error.clone(),
            None => panic!("{method} should have failed: {response}"),
        }
    }

    /// The first message matching `wanted` (waiting for it); it leaves the backlog.
    fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.backlog.iter().position(&wanted) {
            return self.backlog.remove(at).expect("position is valid");
        }
        loop {
            let message = self.next_message(what);
            if wanted(&message) {
                return message;
            }
            self.backlog.push_back(message);
        }
    }

    /// The next `elicitation/create` request from the server.
    fn elicitation(&mut self) -> Value {
        self.wait_for("elicitation/create", |m| {
            m["method"] == json!("elicitation/create") && m.get("id").is_some()
        })
    }

    /// The `codex/event` notifications received so far for `tools/call` `id`, taken out of the
    /// backlog.
    fn events_of(&mut self, id: &Value) -> Vec<Value> {
        let (mine, rest): (Vec<Value>, Vec<Value>) = self.backlog.drain(..).partition(|m| {
            m["method"] == json!("codex/event") && m["params"]["_meta"]["requestId"] == *id
        });
        self.backlog = rest.into();
        mine.into_iter().map(|m| m["params"].clone()).collect()
    }

    /// Calls tool `name`, answering nothing; returns the result and the call's events.
    fn tool(&mut self, name: &str, arguments: Value) -> (Value, Vec<Value>) {
        let id = self.send_request("tools/call", json!({"name": name, "arguments": arguments}));
        let response = self.response(&id);
        let result = response
            .get("result")
            .unwrap_or_else(|| panic!("tools/call failed: {response}"))
            .clone();
        (result, self.events_of(&id))
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "e2e-host", "version": "0.0.1"}
    })
}

/// A home whose fixture script answers `case-…` inputs, and a workspace beside it.
fn setup(name: &str) -> (PathBuf, PathBuf) {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    let escalated = |line: &str| json!({"type": "command", "command": line, "escalate": true, "justification": "needs it"});
    let message = |text: &str| json!({"type": "message", "deltas": [text]});
    let script = json!({
        "version": 1,
        "responses": [
            {"when": "case-run", "steps": [escalated("touch ran.txt"), message("ran")]},
            {"when": "case-refused", "steps": [escalated("touch refused.txt"), message("refused")]},
            {"when": "case-hang", "steps": [escalated("touch cancelled.txt"), message("never")]},
            {"when": "case-patch", "steps": [
                {"type": "patch", "patch": "*** Begin Patch\n*** Add File: patched.txt\n+x\n*** End Patch\n"},
                message("patched")
            ]},
            {"when": "case-fail", "steps": [{"type": "error", "message": "the model broke"}]},
            {"when": "case-flood", "steps": [{"type": "message", "deltas": vec!["x"; FLOOD]}]},
            {"steps": [{"type": "message", "deltas": ["Hello ", "from the fixture."]}]}
        ]
    });
    std::fs::write(home.join("mcp.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"mcp.json\"\n",
    )
    .expect("config");
    (home, workspace)
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"))
        .to_owned()
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["msg"]["type"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// What a schema comparison looks at: type, enum (as a set), additionalProperties, property
/// names (recursively) and required (as a set). Descriptions are prose, ours and theirs.
fn shape(schema: &Value) -> Value {
    let set = |key: &str| {
        let mut values: Vec<String> = schema
            .get(key)
            .and_then(Value::as_array)
            .map(|v| v.iter().map(Value::to_string).collect())
            .unwrap_or_default();
        values.sort();
        values
    };
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(name, property)| (name.clone(), shape(property)))
                .collect::<serde_json::Map<_, _>>()
        });
    json!({
        "type": schema.get("type"),
        "enum": set("enum"),
        "additionalProperties": schema.get("additionalProperties"),
        "properties": properties,
        "required": set("required"),
    })
}

fn reference_tools() -> Vec<Value> {
    let path = agentwire_reference_material::file("codex-mcp-tools.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let answer: Value = serde_json::from_str(&text).expect("reference is JSON");
    answer["result"]["tools"]
        .as_array()
        .expect("reference tools")
        .clone()
}

#[test]
fn handshake_ping_unknown_methods_and_tools_list() {
    let (home, _) = setup("mcp-handshake");
    let mut host = Host::spawn(&home);
    let init = host.call("initialize", initialize_params("2025-06-18"));
    assert_eq!(init["protocolVersion"], json!("2025-06-18"));
    assert_eq!(init["serverInfo"]["name"], json!("agentwire-mcp-server"));
    assert_eq!(init["serverInfo"]["title"], json!("agentwire"));
    assert_eq!(
        init["serverInfo"]["version"],
        json!(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(init["capabilities"]["tools"], json!({"listChanged": true}));
    host.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let again = host.call_err("initialize", initialize_params("2025-06-18"));
    assert_eq!(again["code"], json!(-32600), "{again}");
    assert!(
        again["message"]
            .as_str()
            .is_some_and(|m| m.contains("initialize")),
        "{again}"
    );
    assert_eq!(host.call("ping", json!({})), json!({}));
    let unknown = host.call_err("frobnicate/now", json!({}));
    assert_eq!(unknown["code"], json!(-32601), "{unknown}");
    assert!(
        unknown["message"]
            .as_str()
            .is_some_and(|m| m.contains("frobnicate/now")),
        "{unknown}"
    );

    // tools/list matches the reference's tools: names, titles, and the shapes of both schemas.
    let listed = host.call("tools/list", json!({}));
    let ours = listed["tools"].as_array().expect("tools").clone();
    let reference = reference_tools();
    assert_eq!(ours.len(), reference.len(), "{listed:#}");
    for theirs in &reference {
        let name = &theirs["name"];
        let mine = ours
            .iter()
            .find(|t| t["name"] == *name)
            .unwrap_or_else(|| panic!("tool {name} not listed: {listed:#}"));
        assert_eq!(mine["title"], theirs["title"], "{name}");
        assert!(mine["description"].as_str().is_some_and(|d| !d.is_empty()));
        for schema in ["inputSchema", "outputSchema"] {
            assert_eq!(
                shape(&mine[schema]),
                shape(&theirs[schema]),
                "{name} {schema}: ours {:#}",
                mine[schema]
            );
        }
    }

    // An unknown tool is a protocol error naming it.
    let error = host.call_err("tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("nope"))
    );
}

#[test]
fn protocol_versions_are_negotiated() {
    let (home, _) = setup("mcp-versions");
    let mut host = Host::spawn(&home);
    // A version the server does not know: it answers with the newest it supports.
    let init = host.call("initialize", initialize_params("1999-01-01"));
    assert_eq!(init["protocolVersion"], json!("2025-11-25"), "{init}");
    drop(host);
    let mut host = Host::spawn(&home);
    let init = host.call("initialize", initialize_params("2025-03-26"));
    assert_eq!(init["protocolVersion"], json!("2025-03-26"), "{init}");
}

#[test]
fn codex_then_codex_reply_run_turns_and_stream_events() {
    let (home, workspace) = setup("mcp-turns");
    let mut host = Host::start(&home);
    let (result, events) = host.tool(
        "codex",
        json!({"prompt": "Say hello.", "cwd": workspace, "sandbox": "read-only",
               "approval-policy": "never"}),
    );
    assert_eq!(result.get("isError"), None, "{result}");
    let thread = result["structuredContent"]["threadId"]
        .as_str()
        .expect("threadId")
        .to_owned();
    assert_eq!(
        result["structuredContent"]["content"],
        json!("Hello from the fixture.")
    );
    assert_eq!(text_of(&result), "Hello from the fixture.");

    let order = kinds(&events);
    assert_eq!(
        order.first().map(String::as_str),
        Some("session_configured")
    );
    for kind in [
        "task_started",
        "item_started",
        "agent_message_content_delta",
        "agent_message",
        "token_count",
    ] {
        assert!(order.iter().any(|k| k == kind), "no {kind} in {order:?}");
    }
    assert_eq!(order.last().map(String::as_str), Some("task_complete"));
    assert!(
        events
            .iter()
            .all(|e| e["_meta"]["threadId"] == json!(thread)),
        "{events:#?}"
    );
    let configured = &events[0]["msg"];
    assert_eq!(configured["thread_id"], json!(thread));
    assert_eq!(configured["cwd"], json!(workspace.to_str()));
    assert_eq!(configured["approval_policy"], json!("never"));
    let deltas: String = events
        .iter()
        .filter(|e| e["msg"]["type"] == json!("agent_message_content_delta"))
        .map(|e| e["msg"]["delta"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(deltas, "Hello from the fixture.");

    // codex-reply continues the same thread; the deprecated conversationId works too.
    let (reply, events) = host.tool(
        "codex-reply",
        json!({"threadId": thread, "prompt": "Again."}),
    );
    assert_eq!(
        reply["structuredContent"]["threadId"],
        json!(thread),
        "{reply}"
    );
    assert_eq!(
        kinds(&events).first().map(String::as_str),
        Some("task_started")
    );
    let (legacy, _) = host.tool(
        "codex-reply",
        json!({"conversationId": thread, "prompt": "Once more."}),
    );
    assert_eq!(legacy["structuredContent"]["threadId"], json!(thread));

    // A second host process continues the thread from its recording.
    drop(host);
    let mut other = Host::start(&home);
    let (resumed, _) = other.tool(
        "codex-reply",
        json!({"threadId": thread, "prompt": "After a restart."}),
    );
    assert_eq!(resumed.get("isError"), None, "{resumed}");
    assert_eq!(resumed["structuredContent"]["threadId"], json!(thread));
}

#[test]
fn bad_arguments_unknown_threads_and_model_errors_are_tool_errors() {
    let (home, workspace) = setup("mcp-errors");
    let mut host = Host::start(&home);
    let cases = [
        ("codex", json!({"prompt": "x", "colour": "red"}), "colour"),
        (
            "codex",
            json!({"prompt": "x", "sandbox": "anywhere"}),
            "sandbox",
        ),
        ("codex", json!({"cwd": "/tmp"}), "prompt"),
        ("codex-reply", json!({"prompt": "x"}), "threadId"),
        (
            "codex-reply",
            json!({"prompt": "x", "threadId": "no-such-thread"}),
            "no-such-thread",
        ),
    ];
    for (tool, arguments, named) in cases {
        let (result, _) = host.tool(tool, arguments.clone());
        assert_eq!(
            result["isError"],
            json!(true),
            "{tool} {arguments}: {result}"
        );
        assert!(
            text_of(&result).contains(named),
            "{tool} {arguments}: the error should name {named}: {result}"
        );
        assert_eq!(result.get("structuredContent"), None);
    }
    let (failed, events) = host.tool(
        "codex",
        json!({"prompt": "case-fail", "cwd": workspace, "approval-policy": "never"}),
    );
    assert_eq!(failed["isError"], json!(true), "{failed}");
    assert!(text_of(&failed).contains("the model broke"), "{failed}");
    assert!(
        kinds(&events).iter().any(|k| k == "error"),
        "{:?}",
        kinds(&events)
    );
}

#[test]
fn approvals_go_to_the_host_as_elicitations() {
    let (home, workspace) = setup("mcp-approvals");
    let mut host = Host::start(&home);
    let arguments = |prompt: &str| {
        json!({"prompt": prompt, "cwd": workspace, "approval-policy": "on-request",
               "sandbox": "workspace-write"})
    };

    // Accepted: the command runs.
    let call = host.send_request(
        "tools/call",
        json!({"name": "codex", "arguments": arguments("case-run")}),
    );
    let request = host.elicitation();
    let params = &request["params"];
    assert_eq!(
        params["codex_elicitation"],
        json!("exec-approval"),
        "{request}"
    );
    assert_eq!(
        params["codex_command"],
        json!(["bash", "-c", "touch ran.txt"])
    );
    assert_eq!(params["codex_cwd"], json!(workspace.to_str()));
    assert_eq!(params["codex_mcp_tool_call_id"], json!(call.to_string()));
    assert!(params["codex_parsed_cmd"].is_array(), "{request}");
    assert!(
        params["message"]
            .as_str()
            .is_some_and(|m| m.contains("touch ran.txt"))
    );
    assert_eq!(params["requestedSchema"]["type"], json!("object"));
    host.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept"}}));
    let response = host.response(&call);
    assert_eq!(response["result"].get("isError"), None, "{response}");
    assert_eq!(
        response["result"]["structuredContent"]["content"],
        json!("ran")
    );
    assert!(workspace.join("ran.txt").exists());
    let events = host.events_of(&call);
    let announced = events
        .iter()
        .find(|e| e["msg"]["type"] == json!("exec_approval_request"))
        .unwrap_or_else(|| panic!("no exec_approval_request event: {events:#?}"));
    assert_eq!(announced["id"], params["codex_event_id"]);
    let thread = response["result"]["structuredContent"]["threadId"].clone();

    // Declined: it does not run; the turn goes on.
    let call = host.send_request(
        "tools/call",
        json!({"name": "codex-reply", "arguments": {"threadId": thread, "prompt": "case-refused"}}),
    );
    let request = host.elicitation();
    host.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}}));
    let response = host.response(&call);
    assert_eq!(
        response["result"]["structuredContent"]["content"],
        json!("refused")
    );
    assert!(!workspace.join("refused.txt").exists());

    // An error answer is a denial too.
    let call = host.send_request(
        "tools/call",
        json!({"name": "codex-reply", "arguments": {"threadId": thread, "prompt": "case-refused"}}),
    );
    let request = host.elicitation();
    host.send(&json!({"jsonrpc": "2.0", "id": request["id"],
                      "error": {"code": -32000, "message": "no UI"}}));
    let response = host.response(&call);
    assert_eq!(
        response["result"]["structuredContent"]["content"],
        json!("refused")
    );
    assert!(!workspace.join("refused.txt").exists());

    // A patch outside the writable roots (read-only sandbox) asks as patch-approval; the
    // Codex-style `{decision}` answer is understood.
    let call = host.send_request(
        "tools/call",
        json!({"name": "codex", "arguments": {"prompt": "case-patch", "cwd": workspace,
               "approval-policy": "on-request", "sandbox": "read-only"}}),
    );
    let request = host.elicitation();
    let params = &request["params"];
    assert_eq!(
        params["codex_elicitation"],
        json!("patch-approval"),
        "{request}"
    );
    let changes = params["codex_changes"].as_object().expect("changes");
    assert!(
        changes.keys().any(|path| path.ends_with("patched.txt")),
        "{request}"
    );
    host.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"decision": "approved"}}));
    let response = host.response(&call);
    assert_eq!(
        response["result"]["structuredContent"]["content"],
        json!("patched")
    );
    assert!(workspace.join("patched.txt").exists());
}

#[test]
fn a_cancelled_call_interrupts_its_turn() {
    let (home, workspace) = setup("mcp-cancel");
    let mut host = Host::start(&home);
    let call = host.send_request(
        "tools/call",
        json!({"name": "codex", "arguments": {"prompt": "case-hang", "cwd": workspace,
               "approval-policy": "on-request", "sandbox": "workspace-write"}}),
    );
    let request = host.elicitation();
    assert_eq!(
        request["params"]["codex_elicitation"],
        json!("exec-approval")
    );
    host.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": call, "reason": "user stopped it"}}),
    );
    let aborted = host.wait_for("turn_aborted", |m| {
        m["method"] == json!("codex/event")
            && m["params"]["_meta"]["requestId"] == call
            && m["params"]["msg"]["type"] == json!("turn_aborted")
    });
    let thread = aborted["params"]["_meta"]["threadId"].clone();
    assert_eq!(aborted["params"]["msg"]["reason"], json!("interrupted"));
    // The host's late answer changes nothing; the thread is free for the next call.
    host.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept"}}));
    let (next, _) = host.tool(
        "codex-reply",
        json!({"threadId": thread, "prompt": "hello"}),
    );
    assert_eq!(next.get("isError"), None, "{next}");
    assert_eq!(
        next["structuredContent"]["content"],
        json!("Hello from the fixture.")
    );
    assert!(!workspace.join("cancelled.txt").exists());
    assert!(
        !host
            .backlog
            .iter()
            .any(|m| m.get("id") == Some(&call) && m.get("method").is_none()),
        "a cancelled call is not answered: {:#?}",
        host.backlog
    );
}

#[test]
fn several_threads_run_at_once_on_one_connection() {
    let (home, workspace) = setup("mcp-concurrent");
    let mut host = Host::start(&home);
    // The first call waits for its approval while the second runs to completion.
    let waiting = host.send_request(
        "tools/call",
        json!({"name": "codex", "arguments": {"prompt": "case-run", "cwd": workspace,
               "approval-policy": "on-request", "sandbox": "workspace-write"}}),
    );
    let request = host.elicitation();
    let (other, events) = host.tool("codex", json!({"prompt": "hi", "cwd": workspace}));
    assert_eq!(other.get("isError"), None, "{other}");
    let other_thread = other["structuredContent"]["threadId"].clone();
    assert!(
        events
            .iter()
            .all(|e| e["_meta"]["threadId"] == other_thread)
    );
    host.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept"}}));
    let response = host.response(&waiting);
    let first_thread = response["result"]["structuredContent"]["threadId"].clone();
    assert_ne!(first_thread, other_thread);
    let events = host.events_of(&waiting);
    assert!(!events.is_empty());
    assert!(
        events
            .iter()
            .all(|e| e["_meta"]["threadId"] == first_thread)
    );
}

/// Deltas in the `case-flood` answer: far more messages than a call may leave waiting.
const FLOOD: usize = 12_000;

/// Whether a rollout under `home` records a completed turn (of any status).
fn a_turn_completed_on_disk(home: &Path) -> bool {
    fn walk(dir: &Path) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return false;
        };
        entries.flatten().any(|entry| {
            let path = entry.path();
            if path.is_dir() {
                walk(&path)
            } else {
                path.extension().is_some_and(|e| e == "jsonl")
                    && std::fs::read_to_string(&path)
                        .is_ok_and(|text| text.contains("\"type\":\"turnCompleted\""))
            }
        })
    }
    walk(&home.join("sessions"))
}

#[test]
fn a_host_that_stops_reading_fails_its_call_instead_of_queueing_without_bound() {
    let (home, workspace) = setup("mcp-slow-host");
    let mut host = Host::start(&home);
    host.paused.store(true, Ordering::Release);
    let call = host.send_request(
        "tools/call",
        json!({"name": "codex", "arguments": {"prompt": "case-flood", "cwd": workspace}}),
    );
    // The engine runs the whole turn while the host reads nothing: every one of its messages
    // has been routed (or refused a place) by the time the turn is on disk.
    let deadline = Instant::now() + WAIT;
    while !a_turn_completed_on_disk(&home) {
        assert!(
            Instant::now() < deadline,
            "the turn never completed; stderr:\n{}",
            host.stderr.lock().expect("stderr lock")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    host.paused.store(false, Ordering::Release);
    let response = host.response(&call);
    let result = &response["result"];
    assert_eq!(result["isError"], json!(true), "{response}");
    let text = text_of(result);
    assert!(
        text.contains("read this turn's events too slowly") && text.contains("4096"),
        "{text}"
    );
    let events = host.events_of(&call);
    assert!(
        events.len() < FLOOD,
        "the call stopped following the turn, so not every delta reached the host: {}",
        events.len()
    );
    // The thread is free again and keeps working.
    let thread = events
        .iter()
        .find_map(|e| e["_meta"]["threadId"].as_str().map(str::to_owned))
        .expect("the call's events name its thread");
    let (next, _) = host.tool(
        "codex-reply",
        json!({"threadId": thread, "prompt": "hello"}),
    );
    assert_eq!(next.get("isError"), None, "{next}");
}

// ---- stopping the server ------------------------------------------------------------------------

/// How the host stops the server (docs/mcp-server.md:30).
#[derive(Clone, Copy, Debug)]
enum Stop {
    Sigterm,
    Sigint,
    EndOfStdin,
}

/// How long the server may take to exit once told to stop. The doc names no time, but a stop
/// that interrupts the running turn at once (the fixture notices between deltas, 50 ms apart)
/// lets the server exit in about a second on an idle machine (the async runtime gives its
/// blocking tasks 1 s to end); the rest of the 5 s is slack for a loaded one.
const STOP_BOUND: Duration = Duration::from_secs(5);

/// Deltas in the slow turn: 1000 at 50 ms, some 50 s, far longer than [`STOP_BOUND`].
const SLOW_DELTAS: usize = 1000;

/// Starts a `codex` call whose turn streams [`SLOW_DELTAS`] deltas slowly, waits for its first
/// delta (the turn really runs), stops the server `how`, and checks that the server exits with
/// status 0 within [`STOP_BOUND`] and that the turn is recorded as interrupted: `agentwire
/// app-server` on the same home reads it back (`thread/read` with `includeTurns`) as the
/// thread's only turn, `interrupted`, with the partial agent message it had streamed.
fn a_stop_interrupts_and_records_the_running_turn(name: &str, how: Stop) {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    slow_script(&home, SLOW_DELTAS, 50);
    let mut host = Host::start(&home);
    let call = host.send_request(
        "tools/call",
        json!({"name": "codex", "arguments": {"prompt": "Talk for a long time.", "cwd": workspace,
               "approval-policy": "never", "sandbox": "read-only"}}),
    );
    let delta = host.wait_for("the turn's first delta", |m| {
        m["method"] == json!("codex/event")
            && m["params"]["_meta"]["requestId"] == call
            && m["params"]["msg"]["type"] == json!("agent_message_content_delta")
    });
    let thread = delta["params"]["_meta"]["threadId"]
        .as_str()
        .unwrap_or_else(|| panic!("the event names its thread: {delta}"))
        .to_owned();
    let turn = delta["params"]["id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| panic!("the event names its turn: {delta}"))
        .to_owned();

    let asked = Instant::now();
    match how {
        Stop::Sigterm | Stop::Sigint => {
            let name = if matches!(how, Stop::Sigterm) {
                "TERM"
            } else {
                "INT"
            };
            signal(host.child.id(), name);
        }
        Stop::EndOfStdin => drop(host.stdin.take()),
    }
    // Wait past the bound (the usual wait at most), so that a slow stop is measured, not just
    // noticed, and the record it leaves is checked too.
    let status = loop {
        if let Some(status) = host.child.try_wait().expect("poll the server") {
            break status;
        }
        assert!(
            asked.elapsed() <= WAIT,
            "{how:?}: the server still runs {WAIT:?} after being told to stop"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = asked.elapsed();
    // Let the stderr reader take the last of the log before it is shown.
    std::thread::sleep(Duration::from_millis(100));
    let log = host.stderr.lock().expect("stderr lock").clone();
    assert!(
        status.success(),
        "{how:?}: the server exited with {status}; stderr:\n{log}"
    );

    let mut app = Client::start(&home);
    let read = app.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let turns = read["thread"]["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 1, "{how:?}: one turn on record: {read:#}");
    let recorded = &turns[0];
    assert_eq!(recorded["id"], json!(turn), "{how:?}: {read:#}");
    assert_eq!(
        recorded["status"],
        json!("interrupted"),
        "{how:?}: the running turn is recorded as interrupted: {read:#}"
    );
    let text = recorded["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|item| item["type"] == json!("agentMessage"))
        .and_then(|item| item["text"].as_str())
        .unwrap_or_else(|| panic!("{how:?}: the partial agent message is recorded: {read:#}"));
    let words = text.matches("word ").count();
    assert!(
        (1..SLOW_DELTAS).contains(&words),
        "{how:?}: the turn was cut short, not run to its end ({words} of {SLOW_DELTAS} deltas)"
    );
    app.stop();
    assert!(
        took <= STOP_BOUND,
        "{how:?}: the server took {took:?} to exit, allowed {STOP_BOUND:?}; stderr:\n{log}"
    );
    drop(host);
    let _ = std::fs::remove_dir_all(&root);
}

/// SIGTERM stops the server; the running turn is interrupted and recorded
/// (docs/mcp-server.md:30).
#[test]
fn sigterm_interrupts_and_records_the_running_turn() {
    a_stop_interrupts_and_records_the_running_turn("mcp-stop-term", Stop::Sigterm);
}

/// SIGINT stops the server; the running turn is interrupted and recorded
/// (docs/mcp-server.md:30).
#[test]
fn sigint_interrupts_and_records_the_running_turn() {
    a_stop_interrupts_and_records_the_running_turn("mcp-stop-int", Stop::Sigint);
}

/// The end of stdin stops the server; the running turn is interrupted and recorded
/// (docs/mcp-server.md:30).
#[test]
fn end_of_stdin_interrupts_and_records_the_running_turn() {
    a_stop_interrupts_and_records_the_running_turn("mcp-stop-eof", Stop::EndOfStdin);
}

// ---- streamable HTTP ----------------------------------------------------------------------------

/// A server on `--listen http://127.0.0.1:0/mcp` (plus `args`), and the URL it printed.
pub(crate) fn spawn_http(home: &Path, args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["mcp-server", "--listen", "http://127.0.0.1:0/mcp"])
        .args(args)
        .env("AGENTWIRE_HOME", home)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentwire mcp-server --listen http://");
    let stderr = child.stderr.take().expect("stderr is piped");
    let (sender, receiver) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(url) = line.strip_prefix("agentwire mcp-server listening on ") {
                let _ = sender.send(url.to_owned());
            }
        }
    });
    let url = receiver
        .recv_timeout(WAIT)
        .expect("the server prints its URL");
    (child, url)
}

/// One HTTP/1.1 POST of `body` to `url`; the status, the headers (lower-cased names) and the
/// JSON-RPC messages of the answer (a JSON body or an SSE stream).
fn post(
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Vec<(String, String)>, Vec<Value>) {
    let rest = url.strip_prefix("http://").expect("http url");
    let (authority, path) = rest.split_at(rest.find('/').expect("path"));
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    let body = serde_json::to_vec(body).expect("serializes");
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).expect("write head");
    stream.write_all(&body).expect("write body");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read answer");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        unchunk(body)
    } else {
        body.to_owned()
    };
    let messages = if body.trim_start().starts_with('{') {
        vec![serde_json::from_str(&body).expect("JSON body")]
    } else {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| d.starts_with('{'))
            .map(|d| serde_json::from_str(d).expect("SSE data is JSON"))
            .collect()
    };
    (status, headers, messages)
}

fn unchunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || tail.len() < size {
            break;
        }
        out.push_str(&tail[..size]);
        rest = tail[size..].trim_start_matches("\r\n");
    }
    out
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn response_to(messages: &[Value], id: i64) -> Value {
    messages
        .iter()
        .find(|m| m["id"] == json!(id) && m.get("method").is_none())
        .unwrap_or_else(|| panic!("no response to {id} in {messages:#?}"))
        .clone()
}

#[test]
fn streamable_http_serves_the_tools() {
    let (home, workspace) = setup("mcp-http");
    let (mut child, url) = spawn_http(&home, &[]);
    let (status, headers, messages) = post(
        &url,
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": initialize_params("2025-11-25")}),
    );
    assert_eq!(status, 200, "{messages:?}");
    let init = response_to(&messages, 1);
    assert_eq!(init["result"]["protocolVersion"], json!("2025-11-25"));
    assert_eq!(
        init["result"]["serverInfo"]["name"],
        json!("agentwire-mcp-server")
    );
    let session = header(&headers, "mcp-session-id")
        .expect("a session id")
        .to_owned();
    let with_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (status, _, _) = post(
        &url,
        &with_session,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(status, 202);
    let (_, _, messages) = post(
        &url,
        &with_session,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let names: BTreeSet<String> = response_to(&messages, 2)["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["codex".to_owned(), "codex-reply".to_owned()])
    );
    let (_, _, messages) = post(
        &url,
        &with_session,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "codex", "arguments": {"prompt": "hi", "cwd": workspace}}}),
    );
    let result = &response_to(&messages, 3)["result"];
    assert_eq!(result.get("isError"), None, "{result}");
    assert_eq!(
        result["structuredContent"]["content"],
        json!("Hello from the fixture.")
    );
    // A second initialize on the same session is refused.
    let (_, _, messages) = post(
        &url,
        &with_session,
        &json!({"jsonrpc": "2.0", "id": 4, "method": "initialize",
                "params": initialize_params("2025-11-25")}),
    );
    let again = response_to(&messages, 4);
    assert!(again.get("error").is_some(), "{again}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn streamable_http_needs_a_token_off_loopback_and_checks_it() {
    let (home, _) = setup("mcp-http-auth");
    let refused = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["mcp-server", "--listen", "http://0.0.0.0:0/mcp"])
        .env("AGENTWIRE_HOME", &home)
        .output()
        .expect("run");
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--token-file"), "{stderr}");

    let token = home.join("token");
    std::fs::write(&token, "s3cret\n").expect("token file");
    let token_arg = token.to_str().expect("utf-8 path");
    let (mut child, url) = spawn_http(&home, &["--token-file", token_arg]);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": initialize_params("2025-11-25")});
    let (status, headers, _) = post(&url, &[], &init);
    assert_eq!(status, 401);
    assert_eq!(header(&headers, "www-authenticate"), Some("Bearer"));
    let (status, _, _) = post(&url, &[("Authorization", "Bearer wrong")], &init);
    assert_eq!(status, 401);
    let (status, _, messages) = post(&url, &[("Authorization", "Bearer s3cret")], &init);
    assert_eq!(status, 200);
    assert!(response_to(&messages, 1).get("result").is_some());
    let _ = child.kill();
    let _ = child.wait();
}
