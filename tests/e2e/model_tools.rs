//! The built-in tools a model is offered and calls, through the binary against the mock model
//! (both wires): their names and argument shapes as the reference offers them (`exec_command`
//! on the Responses API, `shell` on chat-completions, `apply_patch` freeform for GPT-5 and
//! Codex models), both argument shapes accepted, `update_plan` as a `plan` item with
//! `item/plan/delta`, `view_image` as an `imageView` item whose image reaches the next model
//! call, and `web_search` against a loopback SearXNG-style endpoint, offered only when
//! configured; the command and patch tools withheld per thread by `[features]`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::scratch;
use crate::mock_model::{MockModel, Recorded, Reply, Sse};
use crate::mock_responses::Responses;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01";

/// A home whose provider `mock` speaks `wire` (`chat` or `responses`) and serves `model`.
fn session(
    name: &str,
    mock: &MockModel,
    wire: &str,
    model: &str,
    extra: &str,
) -> (PathBuf, Client, String) {
    let home = scratch(name);
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"{model}\"\n{extra}\n\n[model_providers.mock]\n\
         name = \"mock\"\nbase_url = \"{}\"\nwire_api = \"{wire}\"\nrequest_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
    let workspace = home.join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));
    let started = client.start_thread(
        json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": "danger-full-access"}),
    );
    (home, client, thread_id(&started))
}

/// The tools of a recorded request, by name.
fn tools(request: &Recorded) -> Vec<Value> {
    request.body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The tool named `name` (chat: `function.name`; Responses: `name`).
fn tool<'a>(tools: &'a [Value], name: &str) -> Option<&'a Value> {
    tools
        .iter()
        .find(|t| t["name"] == json!(name) || t["function"]["name"] == json!(name))
}

fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| {
            t["name"]
                .as_str()
                .or(t["function"]["name"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn completed_items(seen: &[Value]) -> Vec<&Value> {
    params(seen, "item/completed")
        .into_iter()
        .map(|p| &p["item"])
        .collect()
}

fn item<'a>(seen: &'a [Value], kind: &str) -> &'a Value {
    completed_items(seen)
        .into_iter()
        .find(|i| i["type"] == json!(kind))
        .unwrap_or_else(|| panic!("no completed {kind} item in {seen:#?}"))
}

fn keys(schema: &Value) -> Vec<String> {
    let mut keys: Vec<String> = schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

/// One chat answer calling `name` with `arguments`.
fn chat_call(id: &str, name: &str, arguments: &str) -> Reply {
    Reply::Stream(
        Sse::new()
            .tool_call(0, id, name, arguments)
            .finish("tool_calls"),
    )
}

#[test]
fn the_responses_wire_offers_the_reference_tools_and_a_freeform_patch_to_codex_models() {
    let mock = MockModel::start(vec![Responses::answer("hi"), Responses::answer("hi")]);
    let (_home, mut client, thread) = session(
        "tools-offer-responses",
        &mock,
        "responses",
        "gpt-5.1-codex",
        "",
    );
    client.start_turn(&thread, "hello");
    client.until_turn_completed();
    let offered = tools(&mock.wait_requests(1)[0]);
    let names = names(&offered);
    for name in ["exec_command", "apply_patch", "update_plan", "view_image"] {
        assert!(names.contains(&name.to_owned()), "{name} not in {names:?}");
    }
    assert!(!names.contains(&"web_search".to_owned()), "{names:?}");
    assert!(!names.contains(&"shell".to_owned()), "{names:?}");
    let exec = tool(&offered, "exec_command").expect("exec_command");
    assert_eq!(exec["type"], json!("function"));
    assert_eq!(exec["parameters"]["required"], json!(["cmd"]));
    assert_eq!(
        keys(&exec["parameters"]),
        [
            "cmd",
            "justification",
            "login",
            "max_output_tokens",
            "prefix_rule",
            "sandbox_permissions",
            "shell",
            "tty",
            "workdir",
            "yield_time_ms"
        ]
    );
    let patch = tool(&offered, "apply_patch").expect("apply_patch");
    assert_eq!(patch["type"], json!("custom"), "{patch}");
    assert_eq!(patch["format"]["type"], json!("grammar"));
    assert_eq!(patch["format"]["syntax"], json!("lark"));
    let grammar = patch["format"]["definition"].as_str().expect("grammar");
    assert!(
        grammar.starts_with("start: begin_patch hunk+ end_patch"),
        "{grammar}"
    );
    let view = tool(&offered, "view_image").expect("view_image");
    assert_eq!(view["parameters"]["required"], json!(["path"]));

    // An open model on the same wire gets the JSON form.
    let thread2 = thread_id(&client.start_thread(json!({"model": "qwen3-coder"})));
    client.start_turn(&thread2, "hello");
    client.until_turn_completed();
    let offered = tools(&mock.wait_requests(2)[1]);
    let patch = tool(&offered, "apply_patch").expect("apply_patch");
    assert_eq!(patch["type"], json!("function"), "{patch}");
    assert_eq!(patch["parameters"]["required"], json!(["input"]));
    client.stop();
}

#[test]
fn the_chat_wire_offers_shell_with_an_argv_and_a_json_patch() {
    let mock = MockModel::start(vec![Sse::answer("hi")]);
    let (_home, mut client, thread) = session("tools-offer-chat", &mock, "chat", "gpt-oss:20b", "");
    client.start_turn(&thread, "hello");
    client.until_turn_completed();
    let offered = tools(&mock.wait_requests(1)[0]);
    assert_eq!(
        names(&offered),
        ["shell", "apply_patch", "update_plan", "view_image"]
    );
    let shell = &tool(&offered, "shell").expect("shell")["function"]["parameters"];
    assert_eq!(shell["properties"]["command"]["type"], json!("array"));
    assert_eq!(
        keys(shell),
        [
            "command",
            "justification",
            "prefix_rule",
            "sandbox_permissions",
            "timeout_ms",
            "workdir"
        ]
    );
    for t in &offered {
        assert_eq!(t["type"], json!("function"), "{t}");
        assert_eq!(t["function"]["parameters"]["type"], json!("object"), "{t}");
    }
    client.stop();
}

#[test]
fn exec_command_and_shell_calls_both_run_commands() {
    let mock = MockModel::start(vec![
        chat_call(
            "c1",
            "exec_command",
            r#"{"cmd": "echo from-exec", "yield_time_ms": 1000, "tty": false}"#,
        ),
        chat_call(
            "c2",
            "shell",
            r#"{"command": ["echo", "from-shell"], "timeout_ms": 5000}"#,
        ),
        chat_call(
            "c3",
            "exec_command",
            r#"{"cmd": "seq 1 5000", "max_output_tokens": 20}"#,
        ),
        chat_call("c4", "exec_command", r#"{"command": "ls"}"#),
        Sse::answer("done"),
    ]);
    let (_home, mut client, thread) = session("tools-exec", &mock, "chat", "m", "");
    client.start_turn(&thread, "run things");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let commands: Vec<&Value> = completed_items(&seen)
        .into_iter()
        .filter(|i| i["type"] == json!("commandExecution"))
        .collect();
    assert_eq!(commands.len(), 3, "{commands:#?}");
    assert_eq!(commands[0]["command"], json!("echo from-exec"));
    assert_eq!(commands[0]["aggregatedOutput"], json!("from-exec\n"));
    assert_eq!(commands[1]["command"], json!("echo from-shell"));
    assert_eq!(commands[1]["status"], json!("completed"));
    let requests = mock.wait_requests(5);
    let result = |index: usize| {
        let messages = requests[index].body["messages"]
            .as_array()
            .expect("messages")
            .clone();
        messages
            .iter()
            .rev()
            .find(|m| m["role"] == json!("tool"))
            .and_then(|m| m["content"].as_str().map(str::to_owned))
            .expect("a tool result")
    };
    assert!(result(1).contains("from-exec"), "{}", result(1));
    // `max_output_tokens` bounds what the model gets back (not the item).
    let cut = result(3);
    assert!(cut.contains("bytes left out"), "{cut}");
    assert!(cut.len() < 400, "{cut}");
    assert!(
        commands[2]["aggregatedOutput"]
            .as_str()
            .is_some_and(|o| o.len() > 20000)
    );
    // The wrong shape for `exec_command` is explained to the model.
    let wrong = result(4);
    assert!(
        wrong.contains("invalid arguments for `exec_command`"),
        "{wrong}"
    );
    client.stop();
}

const PATCH: &str = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n";

#[test]
fn a_freeform_patch_writes_files_and_goes_back_as_a_custom_call() {
    let mut call = Responses::new();
    call.push(
        "response.output_item.added",
        json!({"output_index": 0, "item": {"type": "custom_tool_call", "id": "ct_0",
               "call_id": "call_patch", "name": "apply_patch", "input": ""}}),
    );
    for chunk in PATCH.split_inclusive('\n') {
        call.push(
            "response.custom_tool_call_input.delta",
            json!({"item_id": "ct_0", "output_index": 0, "delta": chunk}),
        );
    }
    call.push(
        "response.output_item.done",
        json!({"output_index": 0, "item": {"type": "custom_tool_call", "id": "ct_0",
               "call_id": "call_patch", "name": "apply_patch", "input": PATCH}}),
    );
    let mock = MockModel::start(vec![
        call.completed(10, 0, 10, 0),
        Responses::answer("done"),
    ]);
    let (home, mut client, thread) = session(
        "tools-patch-freeform",
        &mock,
        "responses",
        "gpt-5.1-codex",
        "",
    );
    client.start_turn(&thread, "write hello");
    let seen = client.until_turn_completed();
    let change = item(&seen, "fileChange");
    assert_eq!(change["status"], json!("completed"), "{change}");
    assert_eq!(
        change["changes"][0]["kind"]["type"],
        json!("add"),
        "{change}"
    );
    let written = std::fs::read_to_string(home.join("workspace/hello.txt")).expect("written");
    assert_eq!(written, "hello\n");
    let second = &mock.wait_requests(2)[1].body;
    let input = second["input"].as_array().expect("input");
    let sent = input
        .iter()
        .find(|i| i["type"] == json!("custom_tool_call"))
        .unwrap_or_else(|| panic!("no custom_tool_call in {input:#?}"));
    assert_eq!(sent["input"], json!(PATCH));
    assert_eq!(sent["call_id"], json!("call_patch"));
    let output = input
        .iter()
        .find(|i| i["type"] == json!("custom_tool_call_output"))
        .expect("custom_tool_call_output");
    assert!(
        output["output"]
            .as_str()
            .is_some_and(|o| o.contains("hello.txt")),
        "{output}"
    );
    client.stop();
}

#[test]
fn a_json_patch_on_the_chat_wire_writes_files() {
    let arguments = json!({"input": PATCH}).to_string();
    let mock = MockModel::start(vec![
        chat_call("c1", "apply_patch", &arguments),
        chat_call(
            "c2",
            "apply_patch",
            "*** Begin Patch\n*** Add File: raw.txt\n+raw\n*** End Patch\n",
        ),
        Sse::answer("done"),
    ]);
    let (home, mut client, thread) = session("tools-patch-json", &mock, "chat", "m", "");
    client.start_turn(&thread, "write hello");
    let seen = client.until_turn_completed();
    let changes: Vec<&Value> = completed_items(&seen)
        .into_iter()
        .filter(|i| i["type"] == json!("fileChange"))
        .collect();
    assert_eq!(changes.len(), 2, "{seen:#?}");
    assert!(changes.iter().all(|c| c["status"] == json!("completed")));
    let workspace = home.join("workspace");
    assert_eq!(
        std::fs::read_to_string(workspace.join("hello.txt")).expect("hello"),
        "hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("raw.txt")).expect("raw"),
        "raw\n"
    );
    client.stop();
}

#[test]
fn update_plan_makes_a_plan_item_streamed_as_deltas() {
    let arguments = json!({"explanation": "Two steps.", "plan": [
        {"step": "Read the code", "status": "completed"},
        {"step": "Fix the bug", "status": "in_progress"}]})
    .to_string();
    let mock = MockModel::start(vec![
        chat_call("c1", "update_plan", &arguments),
        chat_call(
            "c2",
            "update_plan",
            r#"{"plan": [{"step": "x", "status": "done"}]}"#,
        ),
        Sse::answer("done"),
    ]);
    let (_home, mut client, thread) = session("tools-plan", &mock, "chat", "m", "");
    client.start_turn(&thread, "plan it");
    let seen = client.until_turn_completed();
    let plan = item(&seen, "plan");
    let text = plan["text"].as_str().expect("text");
    assert_eq!(
        text,
        "Two steps.\n\n- [x] Read the code\n- [ ] Fix the bug (in progress)\n"
    );
    let deltas: Vec<&Value> = params(&seen, "item/plan/delta");
    assert!(deltas.len() >= 2, "{seen:#?}");
    assert!(
        deltas
            .iter()
            .all(|d| d["itemId"] == plan["id"] && d["threadId"] == json!(thread))
    );
    let joined: String = deltas.iter().filter_map(|d| d["delta"].as_str()).collect();
    assert_eq!(joined, text);
    let updated = params(&seen, "turn/plan/updated");
    assert_eq!(updated.len(), 1, "the bad call updates nothing: {seen:#?}");
    assert_eq!(updated[0]["plan"][1]["status"], json!("inProgress"));
    assert_eq!(updated[0]["explanation"], json!("Two steps."));
    client.stop();
}

#[test]
fn view_image_attaches_a_workspace_image_to_the_next_call() {
    let mock = MockModel::start(vec![
        chat_call("c1", "view_image", r#"{"path": "shot.png"}"#),
        chat_call("c2", "view_image", r#"{"path": "notes.txt"}"#),
        Sse::answer("a small picture"),
        Sse::answer("still the same picture"),
    ]);
    let (home, mut client, thread) = session("tools-view-image", &mock, "chat", "m", "");
    let workspace = home.join("workspace");
    std::fs::write(workspace.join("shot.png"), PNG).expect("png");
    std::fs::write(workspace.join("notes.txt"), "not an image").expect("text");
    client.start_turn(&thread, "look at it");
    let seen = client.until_turn_completed();
    let views: Vec<&Value> = completed_items(&seen)
        .into_iter()
        .filter(|i| i["type"] == json!("imageView"))
        .collect();
    assert_eq!(views.len(), 1, "only the real image is viewed: {seen:#?}");
    let path = views[0]["path"].as_str().expect("path");
    assert!(Path::new(path).ends_with("workspace/shot.png"), "{path}");
    let requests = mock.wait_requests(3);
    let second = requests[1].body["messages"].as_array().expect("messages");
    let last = second.last().expect("a message");
    assert_eq!(last["role"], json!("user"), "{last}");
    let url = last["content"]
        .as_array()
        .and_then(|parts| parts.iter().find(|p| p["type"] == json!("image_url")))
        .and_then(|p| p["image_url"]["url"].as_str())
        .unwrap_or_else(|| panic!("no image in {last}"));
    assert!(url.starts_with("data:image/png;base64,"), "{url}");
    let third = requests[2].body["messages"].as_array().expect("messages");
    let refused = third
        .iter()
        .rev()
        .find(|m| m["role"] == json!("tool"))
        .and_then(|m| m["content"].as_str())
        .expect("tool result");
    assert!(
        refused.contains("not a PNG, JPEG, GIF or WebP"),
        "{refused}"
    );
    // The next turn's history still carries the image the model viewed, after the call that
    // viewed it, read again from its path.
    client.start_turn(&thread, "and now?");
    client.until_turn_completed();
    let requests = mock.wait_requests(4);
    let fourth = requests[3].body["messages"].as_array().expect("messages");
    let images: Vec<&Value> = fourth
        .iter()
        .filter(|m| m["role"] == json!("user"))
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|p| p["type"] == json!("image_url"))
        .collect();
    assert_eq!(images.len(), 1, "one viewed image in {fourth:#?}");
    assert!(
        images[0]["image_url"]["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("data:image/png;base64,")),
        "{fourth:#?}"
    );
    client.stop();
}

/// A loopback SearXNG stand-in: answers every `GET` with `answer` and records the request
/// lines.
struct Searx {
    url: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Searx {
    fn start(answer: Value) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/search", listener.local_addr().expect("addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                        break;
                    }
                }
                record.lock().expect("lock").push(line.trim().to_owned());
                let body = answer.to_string();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Self { url, seen }
    }
}

#[test]
fn web_search_is_offered_only_when_configured_and_asks_the_endpoint() {
    let searx = Searx::start(json!({"query": "rust", "results": [
        {"title": "The Rust Language", "url": "https://www.rust-lang.org/", "content": "A language empowering everyone."},
        {"title": "Rust docs", "url": "https://doc.rust-lang.org/", "content": "Documentation."}
    ]}));
    let mock = MockModel::start(vec![
        chat_call("c1", "web_search", r#"{"query": "rust language"}"#),
        Sse::answer("found it"),
    ]);
    let extra = format!("[tools.web_search]\nendpoint = \"{}\"", searx.url);
    let (_home, mut client, thread) = session("tools-web-search", &mock, "chat", "m", &extra);
    client.start_turn(&thread, "search");
    let seen = client.until_turn_completed();
    let requests = mock.wait_requests(2);
    let offered = tools(&requests[0]);
    let search = tool(&offered, "web_search").expect("web_search offered");
    assert_eq!(
        search["function"]["parameters"]["required"],
        json!(["query"])
    );
    let lines = searx.seen.lock().expect("lock").clone();
    assert_eq!(lines, ["GET /search?q=rust+language&format=json HTTP/1.1"]);
    let found = item(&seen, "webSearch");
    assert_eq!(found["query"], json!("rust language"));
    assert_eq!(
        found["action"],
        json!({"type": "search", "query": "rust language", "queries": null})
    );
    assert_eq!(
        found["results"][0]["url"],
        json!("https://www.rust-lang.org/")
    );
    let messages = requests[1].body["messages"].as_array().expect("messages");
    let result = messages
        .iter()
        .rev()
        .find(|m| m["role"] == json!("tool"))
        .and_then(|m| m["content"].as_str())
        .expect("tool result");
    assert!(
        result.contains("1. The Rust Language\n   https://www.rust-lang.org/"),
        "{result}"
    );
    client.stop();

    // Off by default (Codex's own `[tools]` booleans change nothing).
    let mock = MockModel::start(vec![Sse::answer("hi")]);
    let (_home, mut client, thread) = session(
        "tools-web-search-off",
        &mock,
        "chat",
        "m",
        "[tools]\nweb_search = true",
    );
    client.start_turn(&thread, "hello");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let about_tools = params(&seen, "configWarning")
        .into_iter()
        .filter(|w| w.to_string().contains("web_search"))
        .count();
    assert_eq!(about_tools, 0, "{seen:#?}");
    let offered = tools(&mock.wait_requests(1)[0]);
    assert!(tool(&offered, "web_search").is_none(), "{offered:#?}");
    client.stop();
}

/// The tool result of the last `tool` message of `request`.
fn last_tool_result(request: &Recorded) -> String {
    request.body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == json!("tool")))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no tool result in {}", request.body))
        .to_owned()
}

#[test]
fn tool_output_is_cut_to_the_models_budget_and_the_item_keeps_all_of_it() {
    // 50,000 bytes of output: an open model's family shows it 10,000 bytes, a configured
    // `tool_output_token_limit` of 500 tokens 2,000, and the item always keeps all of it.
    let command = r#"{"command": ["bash", "-c", "head -c 50000 /dev/zero | tr '\\0' a"]}"#;
    for (model, extra, budget) in [
        ("qwen2.5-coder:7b", "", 10_000),
        ("qwen2.5-coder:7b", "tool_output_token_limit = 500", 2_000),
    ] {
        let mock = MockModel::start(vec![
            chat_call("c1", "shell", command),
            Sse::answer("long"),
            Sse::answer("again"),
        ]);
        let (_home, mut client, thread) =
            session("tools-output-budget", &mock, "chat", model, extra);
        client.start_turn(&thread, "print a lot");
        let seen = client.until_turn_completed();
        let run = item(&seen, "commandExecution");
        assert_eq!(
            run["aggregatedOutput"].as_str().map(str::len),
            Some(50_000),
            "the item keeps every byte"
        );
        let requests = mock.wait_requests(2);
        let shown = last_tool_result(&requests[1]);
        let left_out = format!("[… {} bytes left out …]", 50_000 - budget);
        assert!(shown.contains(&left_out), "{model} {extra}: {shown:.300}");
        assert!(shown.len() < budget + 200, "{}", shown.len());
        // The next turn sees the earlier result within the same budget.
        client.start_turn(&thread, "and?");
        client.until_turn_completed();
        let requests = mock.wait_requests(3);
        let again = last_tool_result(&requests[2]);
        assert!(again.contains("bytes left out"), "{again:.300}");
        assert!(again.len() < budget + 200, "{}", again.len());
        client.stop();
    }
}

#[test]
fn a_thread_can_withhold_the_shell_and_patch_tools() {
    // The user's file withholds `apply_patch`; one thread also withholds the command tools,
    // another switches the patch tool back on: each thread sees its own set.
    let mock = MockModel::start(vec![
        chat_call("c1", "shell", r#"{"command": ["touch", "ran.txt"]}"#),
        chat_call("c2", "apply_patch", &json!({ "input": PATCH }).to_string()),
        // Not explained how to call, either.
        chat_call("c3", "exec_command", r#"{"no_such_argument": 1}"#),
        Sse::answer("done"),
        Sse::answer("hi"),
    ]);
    let (home, mut client, _) = session(
        "tools-withheld",
        &mock,
        "chat",
        "m",
        "[features]\napply_patch_tool = false\n",
    );
    let workspace = home.join("workspace");
    let bare = client.start_thread(json!({
        "cwd": workspace, "approvalPolicy": "never", "sandbox": "danger-full-access",
        "config": {"features.shell_tool": false},
    }));
    client.start_turn(&thread_id(&bare), "run things");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let requests = mock.wait_requests(4);
    assert_eq!(names(&tools(&requests[0])), ["update_plan", "view_image"]);
    // Calls of withheld tools run nothing and tell the model so.
    assert!(
        completed_items(&seen)
            .iter()
            .all(|i| i["type"] != json!("commandExecution") && i["type"] != json!("fileChange")),
        "{seen:#?}"
    );
    assert!(!workspace.join("ran.txt").exists());
    assert!(!workspace.join("hello.txt").exists());
    for (index, tool) in [(1, "shell"), (2, "apply_patch"), (3, "exec_command")] {
        let answer = last_tool_result(&requests[index]);
        assert!(
            answer.contains(&format!("`{tool}` is not available")),
            "{answer}"
        );
    }
    let full = client.start_thread(json!({
        "cwd": workspace, "config": {"features.apply_patch_tool": true},
    }));
    client.start_turn(&thread_id(&full), "hello");
    client.until_turn_completed();
    assert_eq!(
        names(&tools(&mock.wait_requests(5)[4])),
        ["shell", "apply_patch", "update_plan", "view_image"]
    );
    client.stop();
}
