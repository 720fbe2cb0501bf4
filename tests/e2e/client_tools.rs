//! Tools the client answers, through the real binary with a mock model: dynamic tools
//! (`thread/start`'s experimental `dynamicTools`, `item/tool/call`, the `dynamicToolCall`
//! item) on the chat and Responses wires and across a restart, replaced by `thread/resume`'s
//! `dynamicTools` (0.8.0), and `request_user_input`
//! (`item/tool/requestUserInput`, offered in plan mode, `waitingOnUserInput`); answered,
//! failed, errored and malformed answers, an interrupt while waiting, a second connection
//! answering first, and `request_user_input`'s bounds (1 to 8 questions with unique ids,
//! answers of at most 64 KiB, unasked answers dropped).

use std::path::{Path, PathBuf};

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::app_server_ws::{App, next_json, open, request, until};
use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::{home_and_workspace, scratch};
use crate::mock_model::{MockModel, Recorded, Reply, Sse};
use crate::mock_responses::Responses;

/// The client's tools: a plain function and a namespace with one function.
fn dynamic_tools() -> Value {
    json!([
        {"type": "function", "name": "lookup", "description": "Looks a word up.",
         "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}},
                         "required": ["q"]}},
        {"type": "namespace", "name": "crm", "description": "Customer records.",
         "tools": [{"type": "function", "name": "find", "description": "Finds a customer.",
                    "inputSchema": {"type": "object"}, "deferLoading": false}]}
    ])
}

/// Writes `config.toml` whose default provider `mock` (on `wire`) is served at `base_url`.
fn configure(home: &Path, base_url: &str, wire: &str) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\n\
         name = \"mock model\"\nbase_url = \"{base_url}\"\nwire_api = \"{wire}\"\n\
         request_max_retries = 0\n"
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// A fresh home and workspace configured for `mock` on `wire`.
fn setup(name: &str, mock: &MockModel, wire: &str) -> (PathBuf, PathBuf) {
    let (home, workspace) = home_and_workspace(&scratch(name));
    configure(&home, &mock.base_url(), wire);
    (home, workspace)
}

fn experimental(home: &Path) -> Client {
    Client::start_with_capabilities(home, json!({"experimentalApi": true}))
}

/// A chat reply that calls `name` with `arguments` as call `id`.
fn calls(id: &str, name: &str, arguments: &str) -> Reply {
    Reply::Stream(
        Sse::new()
            .tool_call(0, id, name, arguments)
            .finish("tool_calls")
            .usage(10, 5, 0, 0),
    )
}

fn chat_bodies(requests: &[Recorded]) -> Vec<Value> {
    requests
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .map(|r| r.body.clone())
        .collect()
}

/// The names of the functions a chat request offers.
fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The last message of a chat request.
fn last_message(body: &Value) -> Value {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .expect("a message")
}

/// The items of `kind` among the `item/completed` notifications in `seen`.
fn completed_items(seen: &[Value], kind: &str) -> Vec<Value> {
    params(seen, "item/completed")
        .into_iter()
        .map(|p| p["item"].clone())
        .filter(|item| item["type"] == json!(kind))
        .collect()
}

/// The `activeFlags` of every `thread/status/changed` to `active` in `seen`.
fn flags(seen: &[Value]) -> Vec<Value> {
    params(seen, "thread/status/changed")
        .into_iter()
        .filter(|p| p["status"]["type"] == json!("active"))
        .map(|p| p["status"]["activeFlags"].clone())
        .collect()
}

#[test]
fn a_dynamic_tool_call_goes_to_the_client_and_its_content_to_the_model() {
    let mock = MockModel::start(vec![
        calls("call_1", "lookup", r#"{"q":"wire"}"#),
        Sse::answer("It means a cable."),
    ]);
    let (home, workspace) = setup("client-tools-dynamic", &mock, "chat");
    let mut client = experimental(&home);
    let thread =
        thread_id(&client.start_thread(json!({"cwd": workspace, "dynamicTools": dynamic_tools()})));
    let turn = client.start_turn(&thread, "what is a wire?");
    let (id, asked) = client.server_request("item/tool/call");
    assert_eq!(asked["threadId"], json!(thread), "{asked}");
    assert_eq!(asked["turnId"], json!(turn), "{asked}");
    assert_eq!(asked["tool"], json!("lookup"), "{asked}");
    assert_eq!(asked["namespace"], Value::Null, "{asked}");
    assert_eq!(asked["arguments"], json!({"q": "wire"}), "{asked}");
    let started = loop {
        let started = client.notification("item/started");
        if started["item"]["type"] != json!("userMessage") {
            break started;
        }
    };
    assert_eq!(
        started["item"]["type"],
        json!("dynamicToolCall"),
        "{started}"
    );
    assert_eq!(started["item"]["id"], asked["callId"], "{started}");
    assert_eq!(started["item"]["status"], json!("inProgress"), "{started}");
    client.send(&json!({"id": id, "result": {
        "contentItems": [{"type": "inputText", "text": "a cable"},
                         {"type": "inputImage", "imageUrl": "https://example.com/w.png"}],
        "success": true}}));
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let items = completed_items(&seen, "dynamicToolCall");
    assert_eq!(items.len(), 1, "{seen:#?}");
    assert_eq!(items[0]["status"], json!("completed"));
    assert_eq!(items[0]["success"], json!(true));
    assert_eq!(items[0]["tool"], json!("lookup"));
    assert_eq!(items[0]["arguments"], json!({"q": "wire"}));
    assert_eq!(items[0]["contentItems"][0]["text"], json!("a cable"));
    assert!(items[0]["durationMs"].is_i64(), "{}", items[0]);
    assert_eq!(
        params(&seen, "serverRequest/resolved").len(),
        1,
        "{seen:#?}"
    );

    let bodies = chat_bodies(&mock.wait_requests(2));
    let names = offered(&bodies[0]);
    assert!(
        names.contains(&"lookup".to_owned()) && names.contains(&"crm__find".to_owned()),
        "{names:?}"
    );
    let lookup = bodies[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["function"]["name"] == json!("lookup"))
        .expect("lookup offered")
        .clone();
    assert_eq!(
        lookup["function"]["parameters"],
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
    );
    // Not in plan mode: no `request_user_input`.
    assert!(
        !names.contains(&"request_user_input".to_owned()),
        "{names:?}"
    );
    assert_eq!(
        last_message(&bodies[1]),
        json!({"role": "tool", "tool_call_id": "call_1",
               "content": "a cable\n[image: https://example.com/w.png]"})
    );
    // The item is in the thread's history.
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let recorded: Vec<&Value> = read["thread"]["turns"][0]["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| i["type"] == json!("dynamicToolCall"))
        .collect();
    assert_eq!(recorded.len(), 1, "{read}");
    assert_eq!(recorded[0]["status"], json!("completed"), "{read}");
    // The next turn's model call sees the call and its result again.
    mock.push(Sse::answer("Still a cable."));
    client.start_turn(&thread, "and again?");
    client.until_turn_completed();
    let bodies = chat_bodies(&mock.wait_requests(3));
    let messages = bodies[2]["messages"].as_array().expect("messages");
    let call = messages
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .find(|c| c["function"]["name"] == json!("lookup"))
        .expect("the earlier call");
    assert_eq!(call["id"], recorded[0]["id"], "{call}");
    assert!(
        messages.contains(&json!({"role": "tool", "tool_call_id": recorded[0]["id"],
                                  "content": "a cable\n[image: https://example.com/w.png]"})),
        "{messages:#?}"
    );
    client.stop();
}

#[test]
fn an_error_or_malformed_answer_fails_the_call_and_the_turn_goes_on() {
    let mock = MockModel::start(vec![
        calls("call_err", "crm__find", r#"{"name":"Ada"}"#),
        calls("call_bad", "lookup", r#"{"q":"x"}"#),
        Sse::answer("Gave up."),
    ]);
    let (home, workspace) = setup("client-tools-errors", &mock, "chat");
    let mut client = experimental(&home);
    let thread =
        thread_id(&client.start_thread(json!({"cwd": workspace, "dynamicTools": dynamic_tools()})));
    client.start_turn(&thread, "find Ada");
    let (id, asked) = client.server_request("item/tool/call");
    assert_eq!(asked["namespace"], json!("crm"), "{asked}");
    assert_eq!(asked["tool"], json!("find"), "{asked}");
    client.send(&json!({"id": id, "error": {"code": -32000, "message": "tool crashed"}}));
    let (id, asked) = client.server_request("item/tool/call");
    assert_eq!(asked["tool"], json!("lookup"), "{asked}");
    // `success` missing and `contentItems` not an array.
    client.send(&json!({"id": id, "result": {"contentItems": "nope"}}));
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let items = completed_items(&seen, "dynamicToolCall");
    assert_eq!(items.len(), 2, "{seen:#?}");
    for item in &items {
        assert_eq!(item["status"], json!("failed"), "{item}");
        assert_eq!(item["success"], json!(false), "{item}");
        assert_eq!(item["contentItems"], Value::Null, "{item}");
    }
    assert_eq!(items[0]["namespace"], json!("crm"));

    let bodies = chat_bodies(&mock.wait_requests(3));
    let errored = last_message(&bodies[1]);
    let text = errored["content"].as_str().expect("text");
    assert!(
        text.contains("item/tool/call") && text.contains("tool crashed"),
        "{text}"
    );
    let malformed = last_message(&bodies[2]);
    let text = malformed["content"].as_str().expect("text");
    assert!(
        text.contains("item/tool/call") && text.contains("malformed"),
        "{text}"
    );
    client.stop();
}

#[test]
fn an_experimental_field_is_refused_without_the_capability() {
    let (home, workspace) = home_and_workspace(&scratch("client-tools-experimental"));
    let mut client = Client::start(&home);
    let error = client.call_err(
        "thread/start",
        json!({"cwd": workspace, "dynamicTools": dynamic_tools()}),
    );
    assert_eq!(error["code"], json!(-32600), "{error}");
    assert_eq!(
        error["message"],
        json!("thread/start/dynamicTools requires experimentalApi capability"),
        "{error}"
    );
    // A malformed spec is named by its pointer (with the capability).
    let mut client = experimental(&home);
    let error = client.call_err(
        "thread/start",
        json!({"cwd": workspace, "dynamicTools": [{"type": "function", "name": "x"}]}),
    );
    assert_eq!(error["code"], json!(-32602), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(message.contains("dynamicTools"), "{message}");
    client.stop();
}

/// The Responses-wire stream that calls `name` with `arguments`.
fn responses_call(id: &str, name: &str, arguments: &str) -> Reply {
    Responses::new()
        .function_call(id, name, &[arguments])
        .completed(10, 0, 5, 0)
}

#[test]
fn a_resumed_thread_keeps_its_dynamic_tools_on_the_responses_wire() {
    let mock = MockModel::start(vec![Responses::answer("Hello.")]);
    let (home, workspace) = setup("client-tools-resume", &mock, "responses");
    let mut client = experimental(&home);
    let thread =
        thread_id(&client.start_thread(json!({"cwd": workspace, "dynamicTools": dynamic_tools()})));
    client.start_turn(&thread, "hi");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    client.stop();

    // A new server process: the tools come back with the thread.
    mock.push(responses_call("call_r", "lookup", r#"{"q":"again"}"#));
    mock.push(Responses::answer("Done."));
    let mut client = experimental(&home);
    client.call("thread/resume", json!({"threadId": thread}));
    client.notifications.clear();
    client.start_turn(&thread, "look it up");
    let (id, asked) = client.server_request("item/tool/call");
    assert_eq!(asked["tool"], json!("lookup"), "{asked}");
    assert_eq!(asked["arguments"], json!({"q": "again"}), "{asked}");
    client.send(&json!({"id": id, "result": {
        "contentItems": [{"type": "inputText", "text": "not found"}], "success": false}}));
    let seen = client.until_turn_completed();
    let items = completed_items(&seen, "dynamicToolCall");
    assert_eq!(items.len(), 1, "{seen:#?}");
    assert_eq!(items[0]["status"], json!("failed"));
    assert_eq!(items[0]["success"], json!(false));

    let bodies: Vec<Value> = mock
        .wait_requests(3)
        .iter()
        .filter(|r| r.path.ends_with("/responses"))
        .map(|r| r.body.clone())
        .collect();
    assert_eq!(bodies.len(), 3);
    for body in &bodies[..2] {
        let names: Vec<&str> = body["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            names.contains(&"lookup") && names.contains(&"crm__find"),
            "{names:?}"
        );
    }
    let output = bodies[2]["input"]
        .as_array()
        .expect("input")
        .iter()
        .find(|i| i["type"] == json!("function_call_output") && i["call_id"] == json!("call_r"))
        .expect("the tool's output")
        .clone();
    let text = output["output"].as_str().expect("output text");
    assert!(
        text.contains("reported a failure") && text.contains("not found"),
        "{text}"
    );
    client.stop();
}

#[test]
fn thread_resume_replaces_the_dynamic_tools_of_the_thread_it_loads() {
    let mock = MockModel::start(vec![
        Sse::answer("One."),
        Sse::answer("Two."),
        Sse::answer("Three."),
    ]);
    let (home, workspace) = setup("client-tools-resume-replace", &mock, "chat");
    let mut client = experimental(&home);
    let thread =
        thread_id(&client.start_thread(json!({"cwd": workspace, "dynamicTools": dynamic_tools()})));
    client.start_turn(&thread, "hi");
    client.until_turn_completed();
    client.stop();

    // Without the capability the field is refused, naming it.
    let mut plain = Client::start(&home);
    let error = plain.call_err(
        "thread/resume",
        json!({"threadId": thread, "dynamicTools": []}),
    );
    assert_eq!(error["code"], json!(-32600), "{error}");
    assert_eq!(
        error["message"],
        json!("thread/resume/dynamicTools requires experimentalApi capability"),
        "{error}"
    );
    plain.stop();

    // A resume that loads the thread replaces its tools, and the thread keeps the new ones.
    let other = json!([{"type": "function", "name": "other", "description": "Another tool.",
                        "inputSchema": {"type": "object"}}]);
    let mut client = experimental(&home);
    client.call(
        "thread/resume",
        json!({"threadId": thread, "dynamicTools": other}),
    );
    client.notifications.clear();
    client.start_turn(&thread, "again");
    client.until_turn_completed();
    client.stop();
    let mut client = experimental(&home);
    client.call("thread/resume", json!({"threadId": thread}));
    client.notifications.clear();
    client.start_turn(&thread, "and again");
    client.until_turn_completed();
    client.stop();

    let bodies = chat_bodies(&mock.wait_requests(3));
    let has = |body: &Value, name: &str| offered(body).iter().any(|t| t == name);
    assert!(has(&bodies[0], "lookup") && has(&bodies[0], "crm__find"));
    for body in &bodies[1..] {
        assert!(has(body, "other"), "{:?}", offered(body));
        assert!(
            !has(body, "lookup") && !has(body, "crm__find"),
            "{:?}",
            offered(body)
        );
    }
}

/// `turn/start` params that select plan mode.
fn plan_mode() -> Value {
    json!({"collaborationMode": {"mode": "plan", "settings": {
        "model": "", "reasoning_effort": null, "developer_instructions": null}}})
}

const QUESTIONS: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"Postgres","description":"Server"},{"label":"SQLite","description":"Embedded"}]}]}"#;

#[test]
fn request_user_input_in_plan_mode_asks_the_client_and_returns_the_answers() {
    let mock = MockModel::start(vec![
        calls("call_q", "request_user_input", QUESTIONS),
        Sse::answer("Postgres it is."),
        calls("call_q2", "request_user_input", "not json"),
        Sse::answer("Fine."),
    ]);
    let (home, workspace) = setup("client-tools-user-input", &mock, "chat");
    let mut client = experimental(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let turn = client.start_turn_with(&thread, "plan the storage", plan_mode());
    let (id, asked) = client.server_request("item/tool/requestUserInput");
    assert_eq!(asked["threadId"], json!(thread), "{asked}");
    assert_eq!(asked["turnId"], json!(turn), "{asked}");
    assert_eq!(asked["isBlocking"], json!(true), "{asked}");
    assert_eq!(
        asked["questions"],
        json!([{"id": "db", "header": "Database", "question": "Which database?",
                "isOther": true, "isSecret": false,
                "options": [{"label": "Postgres", "description": "Server"},
                            {"label": "SQLite", "description": "Embedded"}]}]),
        "{asked}"
    );
    client.send(&json!({"id": id, "result": {"answers": {
        "db": {"answers": ["Postgres"]}, "unasked": {"answers": ["dropped"]}}}}));
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    assert_eq!(
        flags(&seen),
        [json!([]), json!(["waitingOnUserInput"]), json!([])],
        "{seen:#?}"
    );
    let answers = r#"{"answers":{"db":{"answers":["Postgres"]}}}"#;
    let outputs = completed_items(&seen, "functionCallOutput");
    assert_eq!(outputs.len(), 1, "{seen:#?}");
    assert_eq!(outputs[0]["name"], json!("request_user_input"));
    assert_eq!(outputs[0]["output"], json!(answers));
    let bodies = chat_bodies(&mock.wait_requests(2));
    assert!(offered(&bodies[0]).contains(&"request_user_input".to_owned()));
    assert_eq!(
        last_message(&bodies[1]),
        json!({"role": "tool", "tool_call_id": "call_q", "content": answers})
    );

    // Bad arguments from the model: no request, the model is told, the turn goes on.
    client.start_turn(&thread, "again");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    assert!(
        !seen
            .iter()
            .any(|m| m["method"] == json!("item/tool/requestUserInput")),
        "{seen:#?}"
    );
    let bodies = chat_bodies(&mock.wait_requests(4));
    let refused = last_message(&bodies[3]);
    let text = refused["content"].as_str().expect("text");
    assert!(
        text.contains("invalid arguments for `request_user_input`"),
        "{text}"
    );
    client.stop();
}

#[test]
fn an_interrupt_while_the_user_is_asked_withdraws_the_request() {
    let mock = MockModel::start(vec![calls("call_q", "request_user_input", QUESTIONS)]);
    let (home, workspace) = setup("client-tools-interrupt", &mock, "chat");
    let mut client = experimental(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let turn = client.start_turn_with(&thread, "plan", plan_mode());
    let (id, _) = client.server_request("item/tool/requestUserInput");
    client.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("interrupted"),
        "{seen:#?}"
    );
    let resolved = params(&seen, "serverRequest/resolved");
    assert_eq!(resolved.len(), 1, "{seen:#?}");
    assert_eq!(resolved[0]["requestId"], id, "{seen:#?}");
    assert_eq!(
        flags(&seen),
        [json!([]), json!(["waitingOnUserInput"]), json!([])],
        "{seen:#?}"
    );
    assert!(completed_items(&seen, "functionCallOutput").is_empty());
    // A late answer to the withdrawn request changes nothing.
    client.send(&json!({"id": id, "result": {"answers": {}}}));
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    assert_eq!(
        read["thread"]["turns"][0]["status"],
        json!("interrupted"),
        "{read}"
    );
    client.stop();
}

#[test]
fn a_second_connection_answers_a_dynamic_tool_call_first() {
    // The mock runs its own runtime, so the websocket side gets one of its own too.
    let mock = MockModel::start(vec![
        calls("call_1", "lookup", r#"{"q":"x"}"#),
        Sse::answer("Thanks."),
    ]);
    let (home, workspace) = setup("client-tools-second", &mock, "chat");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(second_connection(&mock, &home, &workspace));
}

async fn second_connection(mock: &MockModel, home: &Path, workspace: &Path) {
    let app = App::spawn(home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let mut a = open(addr, None).await.expect("upgrade");
    let mut b = open(addr, None).await.expect("upgrade");
    for ws in [&mut a, &mut b] {
        let answer = request(
            ws,
            json!(0),
            "initialize",
            json!({"clientInfo": {"name": "e2e_ws", "version": "0.0.1"},
                   "capabilities": {"experimentalApi": true}}),
        )
        .await;
        assert!(answer.get("result").is_some(), "{answer}");
        ws.send(Message::text(json!({"method": "initialized"}).to_string()))
            .await
            .expect("send");
    }
    let started = request(
        &mut a,
        json!(1),
        "thread/start",
        json!({"cwd": workspace, "dynamicTools": dynamic_tools()}),
    )
    .await;
    let thread = started["result"]["thread"]["id"].clone();
    assert!(thread.is_string(), "{started}");
    until(&mut a, "thread/started").await;
    let resumed = request(
        &mut b,
        json!(1),
        "thread/resume",
        json!({"threadId": thread}),
    )
    .await;
    assert_eq!(resumed["result"]["thread"]["id"], thread, "{resumed}");
    let turn = request(
        &mut a,
        json!(2),
        "turn/start",
        json!({"threadId": thread, "input": [{"type": "text", "text": "look"}]}),
    )
    .await;
    assert!(turn.get("result").is_some(), "{turn}");
    let asked_a = until_server_request(&mut a, "item/tool/call").await;
    let asked_b = until_server_request(&mut b, "item/tool/call").await;
    assert_eq!(asked_a["params"], asked_b["params"]);
    // The second connection answers; the first one's request is withdrawn.
    let answer = json!({"id": asked_b["id"], "result": {
        "contentItems": [{"type": "inputText", "text": "from b"}], "success": true}});
    b.send(Message::text(answer.to_string()))
        .await
        .expect("send");
    let seen_a = until(&mut a, "turn/completed").await;
    let resolved: Vec<&Value> = seen_a
        .iter()
        .filter(|m| m["method"] == json!("serverRequest/resolved"))
        .collect();
    assert_eq!(resolved.len(), 1, "{seen_a:#?}");
    assert_eq!(resolved[0]["params"]["requestId"], asked_a["id"]);
    let items = completed_items(&seen_a, "dynamicToolCall");
    assert_eq!(items.len(), 1, "{seen_a:#?}");
    assert_eq!(items[0]["contentItems"][0]["text"], json!("from b"));
    // A's late answer is ignored: the model got b's content.
    let late = json!({"id": asked_a["id"], "result": {
        "contentItems": [{"type": "inputText", "text": "from a"}], "success": true}});
    a.send(Message::text(late.to_string())).await.expect("send");
    let bodies = chat_bodies(&mock.wait_requests(2));
    assert_eq!(
        last_message(&bodies[1]),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "from b"})
    );
    drop(app);
}

/// Messages on `ws` up to the server request `method`; returns that request.
async fn until_server_request<S>(
    ws: &mut tokio_tungstenite::WebSocketStream<S>,
    method: &str,
) -> Value
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    loop {
        let message = next_json(ws).await;
        if message["method"] == json!(method) && message.get("id").is_some() {
            return message;
        }
    }
}

/// `request_user_input` arguments asking the questions `ids` (each a plain question).
fn questions(ids: &[&str]) -> String {
    let questions: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "header": format!("Header {id}"), "question": format!("Question {id}?")}))
        .collect();
    json!({ "questions": questions }).to_string()
}

/// The text of the tool message answering `call` in a chat request.
fn tool_output(body: &Value, call: &str) -> String {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["role"] == json!("tool") && m["tool_call_id"] == json!(call))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no output for {call} in {body}"))
        .to_owned()
}

/// docs/client-tools.md: `request_user_input` takes 1 to 8 questions with unique ids; bad
/// arguments go back to the model as the call's result and nothing is asked.
#[test]
fn request_user_input_asks_one_to_eight_questions_with_unique_ids_and_refuses_the_rest() {
    let nine = ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"];
    let mock = MockModel::start(vec![
        calls("call_none", "request_user_input", &questions(&[])),
        calls("call_nine", "request_user_input", &questions(&nine)),
        calls(
            "call_twice",
            "request_user_input",
            &questions(&["a", "b", "a"]),
        ),
        calls("call_eight", "request_user_input", &questions(&nine[..8])),
        Sse::answer("Planned."),
    ]);
    let (home, workspace) = setup("client-tools-question-count", &mock, "chat");
    let mut client = experimental(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn_with(&thread, "plan it", plan_mode());
    // The first request the client gets is the one with eight questions: the three calls
    // before it were refused without asking.
    let (id, asked) = client.server_request("item/tool/requestUserInput");
    let ids: Vec<&str> = asked["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .filter_map(|q| q["id"].as_str())
        .collect();
    assert_eq!(ids, nine[..8], "{asked}");
    let bodies = chat_bodies(&mock.wait_requests(4));
    let refused = [
        ("call_none", "`questions` must hold 1 to 8 questions, not 0"),
        ("call_nine", "`questions` must hold 1 to 8 questions, not 9"),
        (
            "call_twice",
            "question ids must be unique and not empty (`a`)",
        ),
    ];
    for (at, (call, why)) in refused.iter().enumerate() {
        let text = tool_output(&bodies[at + 1], call);
        assert_eq!(
            text,
            format!("invalid arguments for `request_user_input`: {why}"),
            "{call}"
        );
    }
    let answers: serde_json::Map<String, Value> = nine[..8]
        .iter()
        .map(|id| {
            (
                (*id).to_owned(),
                json!({"answers": [format!("answer {id}")]}),
            )
        })
        .collect();
    client.send(&json!({"id": id, "result": {"answers": answers}}));
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    assert!(
        !seen
            .iter()
            .any(|m| m["method"] == json!("item/tool/requestUserInput")),
        "{seen:#?}"
    );
    // Only the call that asked waited for the user, and only its answers were recorded.
    assert_eq!(
        flags(&seen),
        [json!([]), json!(["waitingOnUserInput"]), json!([])],
        "{seen:#?}"
    );
    let outputs = completed_items(&seen, "functionCallOutput");
    assert_eq!(outputs.len(), 1, "{seen:#?}");
    let expected = json!({ "answers": answers }).to_string();
    assert_eq!(outputs[0]["output"], json!(expected));
    let bodies = chat_bodies(&mock.wait_requests(5));
    assert_eq!(tool_output(&bodies[4], "call_eight"), expected);
    client.stop();
}

/// The answers the model gets when question `db` is answered with `text`, as the server
/// writes them.
fn db_answer(text: &str) -> String {
    json!({"answers": {"db": {"answers": [text]}}}).to_string()
}

/// Fails unless `got` is `want`, showing only their lengths and starts (they may be long).
fn same_text(got: &str, want: &str) {
    let start = |text: &str| text.chars().take(120).collect::<String>();
    assert!(
        got == want,
        "got {} bytes: {}…\nwanted {} bytes: {}…",
        got.len(),
        start(got),
        want.len(),
        start(want)
    );
}

/// docs/client-tools.md: answers to questions that were not asked are dropped, and the rest,
/// at most 64 KiB, goes to the model: answers of exactly 64 KiB (once the unasked one is
/// dropped) reach it whole, one byte more and the model is told the user did not answer.
#[test]
fn answers_of_64_kib_reach_the_model_whole_and_one_byte_more_are_refused() {
    const LIMIT: usize = 64 * 1024;
    let mock = MockModel::start(vec![
        calls("call_fits", "request_user_input", QUESTIONS),
        calls("call_over", "request_user_input", QUESTIONS),
        Sse::answer("Noted."),
    ]);
    let (home, workspace) = setup("client-tools-answer-size", &mock, "chat");
    let mut client = experimental(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn_with(&thread, "plan the storage", plan_mode());
    let fill = LIMIT - db_answer("").len();
    let fits = db_answer(&"x".repeat(fill));
    assert_eq!(fits.len(), LIMIT);
    // With an answer to a question that was not asked, larger than the limit on its own.
    let ghost = format!("GHOST-ANSWER {}", "g".repeat(2 * LIMIT));
    let (id, _) = client.server_request("item/tool/requestUserInput");
    client.send(&json!({"id": id, "result": {"answers": {
        "db": {"answers": ["x".repeat(fill)]}, "ghost": {"answers": [ghost]}}}}));
    let (id, _) = client.server_request("item/tool/requestUserInput");
    client.send(&json!({"id": id, "result": {"answers": {
        "db": {"answers": ["x".repeat(fill + 1)]}}}}));
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let bodies = chat_bodies(&mock.wait_requests(3));
    same_text(&tool_output(&bodies[1], "call_fits"), &fits);
    same_text(
        &tool_output(&bodies[2], "call_over"),
        &format!(
            "The user did not answer the questions (the answers are {} bytes long, more than \
             the {LIMIT} bytes allowed).",
            LIMIT + 1
        ),
    );
    // The unasked answer never reached the model, and only the answers handed over are
    // recorded.
    for body in &bodies {
        assert!(!body.to_string().contains("GHOST-ANSWER"));
    }
    let outputs = completed_items(&seen, "functionCallOutput");
    assert_eq!(outputs.len(), 1, "{} outputs", outputs.len());
    same_text(outputs[0]["output"].as_str().expect("output"), &fits);
    client.stop();
}
