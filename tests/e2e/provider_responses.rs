//! The Responses API wire, the built-in `openai` provider, images and `outputSchema`, through
//! the binary: the built-in `openai` entry is pointed at a [`MockModel`] speaking real
//! Responses SSE (`[model_providers.openai] base_url = …` merges over the built-in entry, so
//! the wire and the OpenAI sign-in stay), and the built-in `ollama` entry (chat wire, no key)
//! at a second mock the same way.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, deltas, params, thread_id};
use crate::common::scratch;
use crate::mock_model::{MockModel, Recorded, Reply, Sse};
use crate::mock_responses::Responses;

/// A PNG signature and the start of a header: enough for content sniffing.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01";

/// Writes `config.toml`: `openai` (the built-in entry) at `responses`, `ollama` (the built-in
/// chat entry) at `chat` when given, the default provider `openai`, and `extra` top-level keys.
fn configure(home: &Path, responses: &MockModel, chat: Option<&MockModel>, extra: &str) {
    let mut config = format!(
        "model_provider = \"openai\"\nmodel = \"gpt-mock\"\n{extra}\n\n\
         [model_providers.openai]\nbase_url = \"{}\"\nrequest_max_retries = 2\n\
         model_context_window = 200000\n",
        responses.base_url()
    );
    if let Some(chat) = chat {
        config.push_str(&format!(
            "\n[model_providers.ollama]\nbase_url = \"{}\"\nrequest_max_retries = 0\n",
            chat.base_url()
        ));
    }
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// A server on `home` with `OPENAI_API_KEY` set to `key` (empty: unset) and
/// `OPENAI_ORGANIZATION` to `org-e2e`, after the handshake.
fn start(home: &Path, key: &str) -> Client {
    let env = [("OPENAI_API_KEY", key), ("OPENAI_ORGANIZATION", "org-e2e")];
    let mut client = Client::spawn_with_env(home, &[], &env);
    let answer = client.request(
        "initialize",
        json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}}),
    );
    assert!(answer.is_ok(), "initialize failed: {answer:?}");
    client.send(&json!({"method": "initialized"}));
    client
}

/// A fresh home configured for `responses` (and `chat`), a server with key `sk-env`, and a
/// thread in `home/workspace` (created).
fn session(
    name: &str,
    responses: &MockModel,
    chat: Option<&MockModel>,
    extra: &str,
) -> (PathBuf, Client, String) {
    let home = scratch(name);
    configure(&home, responses, chat, extra);
    let workspace = home.join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let mut client = start(&home, "sk-env");
    let started = client.start_thread(
        json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": "workspace-write"}),
    );
    assert_eq!(
        started["thread"]["modelProvider"],
        json!("openai"),
        "{started}"
    );
    (home, client, thread_id(&started))
}

/// The `input` items of a recorded Responses request.
fn input(request: &Recorded) -> &Vec<Value> {
    request.body["input"].as_array().expect("input items")
}

/// Checks the turn failed with `info` and one `error` notification saying the same; returns
/// the message.
fn assert_failed(seen: &[Value], info: &Value) -> String {
    let turn = completed_turn(seen);
    assert_eq!(turn["status"], json!("failed"), "{turn}");
    assert_eq!(turn["error"]["codexErrorInfo"], *info, "{turn}");
    let errors = params(seen, "error");
    assert_eq!(errors.len(), 1, "{seen:?}");
    assert_eq!(errors[0]["error"], turn["error"]);
    turn["error"]["message"]
        .as_str()
        .expect("message")
        .to_owned()
}

/// The completed items of `seen`.
fn completed_items(seen: &[Value]) -> Vec<&Value> {
    params(seen, "item/completed")
        .into_iter()
        .map(|p| &p["item"])
        .collect()
}

#[test]
fn a_streamed_turn_brings_a_reasoning_summary_text_and_token_usage() {
    let mock = MockModel::start(vec![
        Responses::new()
            .reasoning(&[&["Reading ", "the question."], &["Answering."]])
            .message(&["Hel", "lo", "!"])
            .completed(120, 40, 30, 12),
    ]);
    let (_home, mut client, thread) = session(
        "responses-turn",
        &mock,
        None,
        "model_reasoning_effort = \"high\"\nmodel_reasoning_summary = \"detailed\"",
    );
    client.start_turn(&thread, "Say hello.");
    let seen = client.until_turn_completed();
    let turn = completed_turn(&seen);
    assert_eq!(turn["status"], json!("completed"), "{seen:#?}");
    assert_eq!(
        deltas(&seen, "item/reasoning/summaryTextDelta"),
        "Reading the question.Answering."
    );
    let indexes: Vec<&Value> = params(&seen, "item/reasoning/summaryTextDelta")
        .iter()
        .map(|p| &p["summaryIndex"])
        .collect();
    assert_eq!(indexes, vec![&json!(0), &json!(0), &json!(1)]);
    assert_eq!(deltas(&seen, "item/agentMessage/delta"), "Hello!");
    let items = completed_items(&seen);
    let kinds: Vec<&Value> = items.iter().map(|i| &i["type"]).collect();
    assert_eq!(
        kinds,
        vec![
            &json!("userMessage"),
            &json!("reasoning"),
            &json!("agentMessage")
        ]
    );
    assert_eq!(
        items[1]["summary"],
        json!(["Reading the question.", "Answering."])
    );
    assert_eq!(items[2]["text"], json!("Hello!"));
    assert_eq!(turn["items"][0]["text"], json!("Hello!"));
    let usage = params(&seen, "thread/tokenUsage/updated");
    assert_eq!(usage.len(), 1, "{seen:#?}");
    assert_eq!(usage[0]["threadId"], json!(thread));
    assert_eq!(
        usage[0]["tokenUsage"]["last"],
        json!({"inputTokens": 120, "cachedInputTokens": 40, "cacheWriteInputTokens": 0,
               "outputTokens": 30, "reasoningOutputTokens": 12, "totalTokens": 150})
    );
    assert_eq!(
        usage[0]["tokenUsage"]["total"],
        usage[0]["tokenUsage"]["last"]
    );
    assert_eq!(usage[0]["tokenUsage"]["modelContextWindow"], json!(200000));

    let request = &mock.wait_requests(1)[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.header("authorization"), Some("Bearer sk-env"));
    assert_eq!(request.header("openai-organization"), Some("org-e2e"));
    let body = &request.body;
    assert_eq!(body["model"], json!("gpt-mock"));
    assert_eq!(body["stream"], json!(true));
    assert_eq!(body["store"], json!(false));
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "detailed"})
    );
    assert!(body.get("messages").is_none(), "not the chat wire: {body}");
    assert_eq!(
        *input(request),
        vec![json!({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "Say hello."}]})]
    );
    let tools: Vec<&Value> = body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            assert_eq!(t["type"], json!("function"), "{t}");
            assert!(t["parameters"].is_object(), "{t}");
            &t["name"]
        })
        .collect();
    assert!(tools.contains(&&json!("shell")), "{tools:?}");
    client.stop();
}

#[test]
fn a_function_call_runs_and_its_output_goes_back_with_the_whole_input() {
    let mock = MockModel::start(vec![
        Responses::new()
            .message(&["Let me look."])
            .function_call("call_ls", "shell", &["{\"command\": ", "[\"ls\"]}"])
            .completed(50, 0, 10, 0),
        Responses::answer("There is marker.txt."),
    ]);
    let (home, mut client, thread) = session("responses-tools", &mock, None, "");
    std::fs::write(home.join("workspace").join("marker.txt"), "").expect("marker");
    client.start_turn(&thread, "What files are here?");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let items = completed_items(&seen);
    let command = items
        .iter()
        .find(|i| i["type"] == json!("commandExecution"))
        .unwrap_or_else(|| panic!("no command in {items:#?}"));
    assert_eq!(command["status"], json!("completed"));
    assert_eq!(command["command"], json!("ls"));
    let output = command["aggregatedOutput"].as_str().expect("output");
    assert!(output.contains("marker.txt"), "{command}");
    assert_eq!(
        deltas(&seen, "item/agentMessage/delta"),
        "Let me look.There is marker.txt."
    );
    assert_eq!(params(&seen, "thread/tokenUsage/updated").len(), 2);

    // Stateless: the second call sends the whole conversation, the call and its output.
    let requests = mock.wait_requests(2);
    let second = input(&requests[1]);
    assert_eq!(second.len(), 4, "{second:#?}");
    assert_eq!(second[0]["role"], json!("user"));
    assert_eq!(
        second[1],
        json!({"type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": "Let me look."}]})
    );
    assert_eq!(
        second[2],
        json!({"type": "function_call", "call_id": "call_ls", "name": "shell",
               "arguments": "{\"command\": [\"ls\"]}"})
    );
    assert_eq!(second[3]["type"], json!("function_call_output"));
    assert_eq!(second[3]["call_id"], json!("call_ls"));
    let sent = second[3]["output"].as_str().expect("output text");
    assert!(sent.contains("marker.txt"), "{sent}");
    assert!(requests[1].body.get("previous_response_id").is_none());
    client.stop();
}

#[test]
fn a_rate_limited_request_is_retried_and_the_turn_completes() {
    let mock = MockModel::start(vec![
        Reply::status_with(
            429,
            &[("retry-after", "0")],
            "{\"error\":{\"code\":\"rate_limit_exceeded\"}}",
        ),
        Responses::answer("Made it."),
    ]);
    let (_home, mut client, thread) = session("responses-429", &mock, None, "");
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    assert_eq!(deltas(&seen, "item/agentMessage/delta"), "Made it.");
    assert!(params(&seen, "error").is_empty());
    let requests = mock.wait_requests(2);
    assert_eq!(requests[0].body, requests[1].body);
    client.stop();
}

#[test]
fn a_response_that_fails_before_any_output_is_retried() {
    let mock = MockModel::start(vec![
        Responses::new().failed("server_error", "The server had an error"),
        Responses::new().failed("rate_limit_exceeded", "Slow down"),
        Responses::answer("Recovered."),
    ]);
    let (_home, mut client, thread) = session("responses-stream-retry", &mock, None, "");
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    assert_eq!(deltas(&seen, "item/agentMessage/delta"), "Recovered.");
    assert!(params(&seen, "error").is_empty(), "{seen:#?}");
    let requests = mock.wait_requests(3);
    assert_eq!(requests[0].body, requests[2].body);

    // Past request_max_retries (2), the last failure is the turn's.
    for _ in 0..3 {
        mock.push(Responses::new().failed("server_error", "Still broken"));
    }
    client.start_turn(&thread, "Again.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("internalServerError"));
    assert!(message.contains("Still broken"), "{message}");
    assert_eq!(mock.wait_requests(6).len(), 6);
    client.stop();
}

#[test]
fn server_errors_that_outlast_the_retries_fail_the_turn() {
    let failing = || Reply::status(500, "{\"error\":{\"message\":\"boom inside\"}}");
    let mock = MockModel::start(vec![failing(), failing(), failing()]);
    let (_home, mut client, thread) = session("responses-500", &mock, None, "");
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("internalServerError"));
    assert!(message.contains("HTTP 500"), "{message}");
    assert!(message.contains("retries did not help"), "{message}");
    let turn = completed_turn(&seen);
    let details = turn["error"]["additionalDetails"]
        .as_str()
        .expect("details");
    assert!(
        details.contains("boom inside") && details.contains("/v1/responses"),
        "{details}"
    );
    // The first attempt and the two retries.
    assert_eq!(mock.wait_requests(3).len(), 3);
    client.stop();
}

#[test]
fn failed_responses_and_error_events_fail_the_turn_with_the_servers_words() {
    let mock = MockModel::start(vec![
        Responses::new()
            .message(&["Partial"])
            .failed("server_error", "The server had an error while processing"),
        Responses::new().error(
            "context_length_exceeded",
            "Your input exceeds the context window of this model.",
        ),
    ]);
    let (_home, mut client, thread) = session("responses-failed", &mock, None, "");
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("internalServerError"));
    assert!(
        message.contains("server_error") && message.contains("had an error while processing"),
        "{message}"
    );
    // What streamed before the failure stays, as a completed item.
    let items = completed_items(&seen);
    assert!(
        items
            .iter()
            .any(|i| i["type"] == json!("agentMessage") && i["text"] == json!("Partial")),
        "{items:#?}"
    );

    client.start_turn(&thread, "Again.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("contextWindowExceeded"));
    assert!(message.contains("exceeds the context window"), "{message}");
    // Not retried: output had streamed before the first failure; the second is not a server
    // error.
    assert_eq!(mock.wait_requests(2).len(), 2);
    client.stop();
}

#[test]
fn the_openai_key_is_the_stored_login_else_the_environment_else_an_error() {
    let mock = MockModel::start(vec![Responses::answer("Keyed.")]);
    let home = scratch("responses-keys");
    configure(&home, &mock, None, "");
    // No stored login and no variable: the turn fails at once, saying how to fix it.
    let mut client = start(&home, "");
    let thread = thread_id(&client.start_thread(json!({"cwd": home})));
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("unauthorized"));
    assert!(
        message.contains("OPENAI_API_KEY") && message.contains("account/login/start"),
        "{message}"
    );
    assert!(mock.requests().is_empty());
    client.stop();

    // A stored login wins over the variable.
    let mut client = start(&home, "sk-env");
    client.call(
        "account/login/start",
        json!({"type": "apiKey", "apiKey": "sk-stored"}),
    );
    // The built-in `openai` entry asks for the OpenAI sign-in, wherever its base_url points.
    let account = client.call("account/read", json!({}));
    assert_eq!(account["requiresOpenaiAuth"], json!(true), "{account}");
    let thread = thread_id(&client.start_thread(json!({"cwd": home})));
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let request = &mock.wait_requests(1)[0];
    assert_eq!(request.header("authorization"), Some("Bearer sk-stored"));
    client.stop();
}

#[test]
fn images_reach_both_wires_as_image_parts() {
    let responses = MockModel::start(vec![Responses::answer("A pixel.")]);
    let chat = MockModel::start(vec![Sse::answer("A pixel.")]);
    let (home, mut client, openai_thread) =
        session("responses-images", &responses, Some(&chat), "");
    // The content decides the type, not the name.
    let picture = home.join("pixel.dat");
    std::fs::write(&picture, PNG).expect("write png");
    let expected_data = format!(
        "data:image/png;base64,{}",
        base64_of(PNG) // checked against an independent encoding below
    );
    let input = json!([
        {"type": "text", "text": "What are these?"},
        {"type": "image", "url": "https://example.com/cat.jpg", "detail": "low"},
        {"type": "localImage", "path": picture},
    ]);
    client.call(
        "turn/start",
        json!({"threadId": openai_thread, "input": input}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let request = &responses.wait_requests(1)[0];
    assert_eq!(
        input_of(request),
        json!([
            {"type": "input_text", "text": "What are these?"},
            {"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "low"},
            {"type": "input_image", "image_url": expected_data},
        ])
    );

    let local = client.start_thread(json!({"cwd": home, "modelProvider": "ollama"}));
    assert_eq!(local["thread"]["modelProvider"], json!("ollama"), "{local}");
    client.call(
        "turn/start",
        json!({"threadId": thread_id(&local), "input": input}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let request = &chat.wait_requests(1)[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), None, "Ollama takes no key");
    assert_eq!(
        request.body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "What are these?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg", "detail": "low"}},
            {"type": "image_url", "image_url": {"url": expected_data}},
        ]}])
    );
    client.stop();
}

/// The content of the first input item of a Responses request.
fn input_of(request: &Recorded) -> Value {
    input(request)[0]["content"].clone()
}

/// Standard base64 (written here so the test does not share the server's encoder).
fn base64_of(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn image_files_too_large_or_not_images_are_refused_at_turn_start() {
    let mock = MockModel::start(Vec::new());
    let (home, mut client, thread) = session("responses-bad-images", &mock, None, "");
    let big = home.join("big.png");
    std::fs::File::create(&big)
        .expect("create")
        .set_len(20 * 1024 * 1024 + 1)
        .expect("grow");
    let notes = home.join("notes.png");
    std::fs::write(&notes, "just text, named like a picture").expect("write");
    for (path, why) in [
        (&big, "over the limit of 20971520 bytes"),
        (&notes, "is not a PNG, JPEG, GIF or WebP image"),
    ] {
        let error = client.call_err(
            "turn/start",
            json!({"threadId": thread, "input": [
                {"type": "text", "text": "Look."},
                {"type": "localImage", "path": path},
            ]}),
        );
        assert_eq!(error["code"], json!(-32602), "{error}");
        let message = error["message"].as_str().expect("message");
        assert!(message.contains("input[1].path"), "{message}");
        assert!(message.contains(&*path.to_string_lossy()), "{message}");
        assert!(message.contains(why), "{message}");
    }
    let missing = client.call_err(
        "turn/start",
        json!({"threadId": thread, "input": [
            {"type": "localImage", "path": home.join("nope.png")},
        ]}),
    );
    assert_eq!(missing["code"], json!(-32602), "{missing}");
    assert!(
        missing["message"]
            .as_str()
            .is_some_and(|m| m.contains("input[0].path") && m.contains("nope.png")),
        "{missing}"
    );
    assert!(mock.requests().is_empty());
    client.stop();
}

/// The schema the structured-output tests ask for.
fn answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
        "additionalProperties": false
    })
}

#[test]
fn an_output_schema_is_sent_on_both_wires_and_the_final_message_checked() {
    let responses = MockModel::start(vec![
        Responses::answer("{\"answer\": 42}"),
        Responses::answer("{\"answer\": \"forty-two\"}"),
    ]);
    let chat = MockModel::start(vec![Sse::answer("{\"answer\": 7}")]);
    let (home, mut client, thread) = session("responses-schema", &responses, Some(&chat), "");
    let schema = answer_schema();

    client.start_turn_with(&thread, "Answer.", json!({"outputSchema": schema}));
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let request = &responses.wait_requests(1)[0];
    assert_eq!(
        request.body["text"],
        json!({"format": {"type": "json_schema", "name": "output_schema",
                          "schema": schema, "strict": true}})
    );

    // A final message that does not conform: the item stays, the turn fails saying where.
    client.start_turn_with(&thread, "Answer again.", json!({"outputSchema": schema}));
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("other"));
    assert!(
        message.contains("outputSchema") && message.contains("at /answer"),
        "{message}"
    );
    let turn = completed_turn(&seen);
    assert_eq!(
        turn["items"][0]["text"],
        json!("{\"answer\": \"forty-two\"}")
    );
    let details = turn["error"]["additionalDetails"]
        .as_str()
        .expect("details");
    assert!(details.contains("forty-two"), "{details}");

    // The chat wire sends it as `response_format`.
    let local = thread_id(&client.start_thread(json!({"cwd": home, "modelProvider": "ollama"})));
    client.start_turn_with(&local, "Answer.", json!({"outputSchema": schema}));
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let request = &chat.wait_requests(1)[0];
    assert_eq!(
        request.body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "output_schema",
               "schema": schema, "strict": true}})
    );

    // A schema that is not one is refused, naming the field.
    let error = client.call_err(
        "turn/start",
        json!({"threadId": thread, "input": [{"type": "text", "text": "x"}],
               "outputSchema": {"type": 12}}),
    );
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("outputSchema")),
        "{error}"
    );
    assert_eq!(responses.requests().len(), 2);
    client.stop();
}
