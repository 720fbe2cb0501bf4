//! The Responses API wire, the built-in `openai` provider, images and `outputSchema`, through
//! the binary: the built-in `openai` entry is pointed at a [`MockModel`] speaking real
//! Responses SSE (`[model_providers.openai] base_url = …` merges over the built-in entry, so
//! the wire and the OpenAI sign-in stay), and the built-in `ollama` entry (chat wire, no key)
//! at a second mock the same way. The stream reader's bounds on both wires (events over 8 MiB,
//! never ended, not UTF-8, not JSON) are attacked with [`RawModel`], a loopback server of raw
//! bytes.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, deltas, params, thread_id};
use crate::common::{memory_kib, scratch};
use crate::mock_model::{MockModel, Recorded, Reply, Sse};
use crate::mock_responses::Responses;
use crate::model_context::{chat_conversation, responses_conversation};

/// A PNG signature and the start of a header: enough for content sniffing.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01";

/// Writes `config.toml`: `openai` (the built-in entry) at `responses`, `ollama` (the built-in
/// chat entry) at `chat` when given, the default provider `openai`, and `extra` top-level keys.
fn configure(home: &Path, responses: &MockModel, chat: Option<&MockModel>, extra: &str) {
    let chat = chat.map(MockModel::base_url);
    configure_urls(home, &responses.base_url(), chat.as_deref(), extra);
}

/// [`configure`] with the providers' base URLs.
fn configure_urls(home: &Path, responses: &str, chat: Option<&str>, extra: &str) {
    let mut config = format!(
        "model_provider = \"openai\"\nmodel = \"gpt-mock\"\n{extra}\n\n\
         [model_providers.openai]\nbase_url = \"{responses}\"\nrequest_max_retries = 2\n\
         model_context_window = 200000\n"
    );
    if let Some(chat) = chat {
        config.push_str(&format!(
            "\n[model_providers.ollama]\nbase_url = \"{chat}\"\nrequest_max_retries = 0\n"
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

/// The `input` items of a recorded Responses request after the context the engine opens with
/// (tested in `model_context`).
fn input(request: &Recorded) -> Vec<Value> {
    responses_conversation(&request.body)
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
        input(request),
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
    // The reference's command tool on this wire (model tools area).
    assert!(tools.contains(&&json!("exec_command")), "{tools:?}");
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
        json!(chat_conversation(&request.body)),
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

/// docs/providers.md (Images), docs/engine.md: `localImage` files of up to 20 MiB are read and sent.
/// A PNG of exactly 20 MiB reaches the model whole, as a `data:` URL; the same file one byte
/// longer is refused at `turn/start`, naming the limit, and no model call is made.
#[test]
fn a_local_image_of_exactly_20_mib_reaches_the_model_and_one_byte_more_is_refused() {
    const LIMIT: usize = 20 * 1024 * 1024;
    // RawModel keeps request bodies whole (the mock model reads at most 16 MiB of one).
    let raw = RawModel::start(vec![responses_stream_with_event_of(300, "A big picture.")]);
    let home = scratch("responses-image-limit");
    configure_urls(&home, &raw.base_url(), None, "");
    let mut client = start(&home, "sk-env");
    let thread = thread_id(&client.start_thread(json!({"cwd": home})));
    let picture = home.join("big.png");
    let mut bytes = PNG.to_vec();
    bytes.resize(LIMIT, 0x5a);
    std::fs::write(&picture, &bytes).expect("write picture");
    let input = json!([
        {"type": "text", "text": "Look."},
        {"type": "localImage", "path": picture},
    ]);
    client.call("turn/start", json!({"threadId": thread, "input": input}));
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    assert_eq!(raw.requests(), 1);
    let body = raw.body(0);
    let content = &responses_conversation(&body)[0]["content"];
    assert_eq!(content[0], json!({"type": "input_text", "text": "Look."}));
    assert_eq!(content[1]["type"], json!("input_image"));
    let sent = content[1]["image_url"].as_str().expect("image_url");
    let expected = format!("data:image/png;base64,{}", base64_of(&bytes));
    assert!(
        sent == expected,
        "the image sent ({} bytes, starting {:?}) is not the file ({} bytes)",
        sent.len(),
        &sent[..sent.len().min(40)],
        expected.len()
    );

    std::fs::OpenOptions::new()
        .append(true)
        .open(&picture)
        .and_then(|mut file| std::io::Write::write_all(&mut file, b"!"))
        .expect("grow the picture by one byte");
    let error = client.call_err("turn/start", json!({"threadId": thread, "input": input}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(
        message.contains("input[1].path") && message.contains("over the limit of 20971520 bytes"),
        "{message}"
    );
    assert_eq!(raw.requests(), 1);
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

/// docs/providers.md (Structured output): a final message that breaks the `outputSchema` is
/// quoted in `additionalDetails` up to 2,000 characters. Counted in characters, not bytes (the
/// message is mostly two-byte `é`): one of exactly 2,000 is quoted whole after
/// `final message: `; one of 2,001 is cut after its 2,000th character and ends with `…`.
#[test]
fn a_final_message_breaking_the_schema_is_quoted_up_to_2000_characters() {
    const QUOTED: usize = 2_000;
    let explanation = |chars: usize| {
        let start = "I would rather explain: ";
        format!("{start}{}", "é".repeat(chars - start.chars().count()))
    };
    let fits = explanation(QUOTED);
    let over = explanation(QUOTED + 1);
    let mock = MockModel::start(vec![Responses::answer(&fits), Responses::answer(&over)]);
    let (_home, mut client, thread) = session("responses-schema-quote", &mock, None, "");
    let details = |client: &mut Client| {
        client.start_turn_with(&thread, "Answer.", json!({"outputSchema": answer_schema()}));
        let seen = client.until_turn_completed();
        let message = assert_failed(&seen, &json!("other"));
        assert!(message.contains("is not JSON"), "{message}");
        completed_turn(&seen)["error"]["additionalDetails"]
            .as_str()
            .expect("details")
            .to_owned()
    };
    let whole = details(&mut client);
    assert!(
        whole == format!("final message: {fits}"),
        "{} characters: {:?}…",
        whole.chars().count(),
        whole.chars().take(40).collect::<String>()
    );
    let cut = details(&mut client);
    let expected = format!("final message: {}…", &over[..over.len() - "é".len()]);
    assert!(
        cut == expected,
        "{} characters, ending {:?}",
        cut.chars().count(),
        cut.chars().rev().take(5).collect::<String>()
    );
    assert_eq!(cut.chars().count(), "final message: ".len() + QUOTED + 1);
    client.stop();
}

/// The largest stream event the server accepts (docs/providers.md: "larger than 8 MiB").
const MAX_EVENT: usize = 8 * 1024 * 1024;

/// What [`RawModel`] sends after its `200 text/event-stream` head.
enum RawBody {
    /// These bytes, then it closes.
    Bytes(Vec<u8>),
    /// `start`, then `x` up to `total` bytes in all (an event that never ends), then it
    /// closes.
    Endless { start: Vec<u8>, total: usize },
}

/// How one streamed answer went.
#[derive(Debug)]
struct Sent {
    /// The bytes the connection took (head excluded).
    written: usize,
    /// Whether the client hung up before all of them were sent.
    hung_up: bool,
}

/// A loopback HTTP server that streams raw bytes: unlike [`MockModel`], whose events are text
/// and always ended, it can send bytes that are not UTF-8 and an event that never ends. Each
/// `POST …/chat/completions` or `…/responses` gets the next [`RawBody`]; anything else, or a
/// request when none is left, gets HTTP 400.
struct RawModel {
    url: String,
    /// How each streamed answer went, in order.
    sent: std::sync::mpsc::Receiver<Sent>,
    /// How many model requests arrived.
    requests: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// The body of each model request, in arrival order.
    bodies: std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
}

impl RawModel {
    fn start(bodies: Vec<RawBody>) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::{Arc, Mutex};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let bodies = Arc::new(Mutex::new(std::collections::VecDeque::from(bodies)));
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = requests.clone();
        let received: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let recorded = received.clone();
        let (report, sent) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for socket in listener.incoming() {
                let Ok(socket) = socket else { break };
                let bodies = bodies.clone();
                let counted = counted.clone();
                let recorded = recorded.clone();
                let report = report.clone();
                std::thread::spawn(move || {
                    let Some((path, request)) = raw_request(&socket) else {
                        return;
                    };
                    let is_model =
                        path.ends_with("/chat/completions") || path.ends_with("/responses");
                    let body = if is_model {
                        recorded.lock().expect("bodies").push(request);
                        counted.fetch_add(1, Ordering::SeqCst);
                        bodies.lock().expect("bodies").pop_front()
                    } else {
                        None
                    };
                    let outcome = raw_answer(socket, body);
                    if let Some(outcome) = outcome {
                        let _ = report.send(outcome);
                    }
                });
            }
        });
        Self {
            url,
            sent,
            requests,
            bodies: received,
        }
    }

    fn base_url(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// How the next streamed answer went, once it is over.
    fn next_sent(&self) -> Sent {
        self.sent
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the raw model finished an answer in time")
    }

    fn requests(&self) -> usize {
        self.requests.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The body of model request `index` (from 0), as JSON.
    fn body(&self, index: usize) -> Value {
        let bodies = self.bodies.lock().expect("bodies");
        serde_json::from_slice(&bodies[index]).expect("a JSON request body")
    }
}

/// Reads one request (head and `content-length` body); returns its path and body.
fn raw_request(mut socket: &std::net::TcpStream) -> Option<(String, Vec<u8>)> {
    use std::io::Read;
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 65536];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = socket.read(&mut chunk).ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
    let path = head.split(' ').nth(1)?.to_owned();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = buffer.split_off(head_end);
    while body.len() < length {
        let n = socket.read(&mut chunk).ok().filter(|n| *n > 0)?;
        body.extend_from_slice(&chunk[..n]);
    }
    Some((path, body))
}

/// Answers with `body` (HTTP 400 when there is none); how the stream went, if one was sent.
fn raw_answer(mut socket: std::net::TcpStream, body: Option<RawBody>) -> Option<Sent> {
    use std::io::Write;
    let Some(body) = body else {
        let error = "{\"error\":{\"message\":\"raw model: no answer left\"}}";
        let _ = write!(
            socket,
            "HTTP/1.1 400 Raw\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{error}",
            error.len()
        );
        return None;
    };
    socket
        .set_write_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("write timeout");
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                connection: close\r\n\r\n";
    socket.write_all(head.as_bytes()).ok()?;
    let (start, total) = match body {
        RawBody::Bytes(bytes) => {
            let total = bytes.len();
            (bytes, total)
        }
        RawBody::Endless { start, total } => (start, total),
    };
    let filler = vec![b'x'; 64 * 1024];
    let mut written = 0;
    let mut hung_up = false;
    while written < total {
        let piece = if written < start.len() {
            &start[written..start.len().min(written + filler.len())]
        } else {
            &filler[..filler.len().min(total - written)]
        };
        if socket.write_all(piece).is_err() {
            hung_up = true;
            break;
        }
        written += piece.len();
    }
    let _ = socket.shutdown(std::net::Shutdown::Both);
    Some(Sent { written, hung_up })
}

/// `data: ` and the JSON object `members` with a `pad` member that makes the line exactly
/// `len` bytes long.
fn padded_data_line(members: &str, len: usize) -> String {
    let head = format!("data: {{{members},\"pad\":\"");
    let tail = "\"}";
    let line = format!("{head}{}{tail}", "x".repeat(len - head.len() - tail.len()));
    assert_eq!(line.len(), len);
    line
}

/// A chat-completions stream whose first event is one `data:` line of `len` bytes carrying
/// the text `text`, then the finish and `[DONE]`.
fn chat_stream_with_event_of(len: usize, text: &str) -> RawBody {
    let delta = format!(
        "\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":null}}]"
    );
    let finish = json!({"object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    RawBody::Bytes(
        format!(
            "{}\n\ndata: {finish}\n\ndata: [DONE]\n\n",
            padded_data_line(&delta, len)
        )
        .into_bytes(),
    )
}

/// A Responses stream whose first event is `response.output_text.delta` with the text
/// `text`, its `data:` line `len` bytes long, then `response.completed`.
fn responses_stream_with_event_of(len: usize, text: &str) -> RawBody {
    let delta = format!(
        "\"type\":\"response.output_text.delta\",\"delta\":\"{text}\",\"item_id\":\"msg_0\",\"output_index\":0,\"content_index\":0"
    );
    let completed = json!({"type": "response.completed", "response": {"id": "resp_raw",
        "status": "completed", "usage": {"input_tokens": 10, "output_tokens": 5,
                                         "total_tokens": 15}}});
    RawBody::Bytes(
        format!(
            "event: response.output_text.delta\n{}\n\nevent: response.completed\ndata: {completed}\n\n",
            padded_data_line(&delta, len)
        )
        .into_bytes(),
    )
}

/// A fresh home whose `openai` (Responses) and `ollama` (chat) providers are both served by
/// `raw`, a server, and a thread on each: (home, client, Responses thread, chat thread).
fn raw_session(name: &str, raw: &RawModel) -> (PathBuf, Client, String, String) {
    let home = scratch(name);
    configure_urls(&home, &raw.base_url(), Some(&raw.base_url()), "");
    let workspace = home.join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let mut client = start(&home, "sk-env");
    let responses = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let chat =
        thread_id(&client.start_thread(json!({"cwd": workspace, "modelProvider": "ollama"})));
    (home, client, responses, chat)
}

/// docs/providers.md (How errors surface): an event larger than 8 MiB fails the turn with
/// `other`, the message quoting the start of the event; on both wires, an event of exactly
/// 8 MiB (its `data:` line) is read, and one byte more is not.
#[test]
fn a_stream_event_of_8_mib_is_read_and_one_byte_more_fails_the_turn_on_both_wires() {
    let raw = RawModel::start(vec![
        responses_stream_with_event_of(MAX_EVENT, "Fits."),
        responses_stream_with_event_of(MAX_EVENT + 1, "Over."),
        chat_stream_with_event_of(MAX_EVENT, "Fits."),
        chat_stream_with_event_of(MAX_EVENT + 1, "Over."),
    ]);
    let (_home, mut client, responses, chat) = raw_session("responses-event-size", &raw);
    let starts = [
        (
            responses,
            "data: {\"type\":\"response.output_text.delta\",\"delta\":\"Over.\"",
        ),
        (
            chat,
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Over.\"}",
        ),
    ];
    for (thread, start) in starts {
        client.start_turn(&thread, "Fit.");
        let seen = client.until_turn_completed();
        assert_eq!(
            completed_turn(&seen)["status"],
            json!("completed"),
            "{thread}"
        );
        assert_eq!(deltas(&seen, "item/agentMessage/delta"), "Fits.");

        client.start_turn(&thread, "Overflow.");
        let seen = client.until_turn_completed();
        let message = assert_failed(&seen, &json!("other"));
        assert!(
            message.contains(&format!("a stream event is larger than {MAX_EVENT} bytes")),
            "{message}"
        );
        assert!(
            message.contains(&format!("it starts with: {start}")),
            "{message}"
        );
        assert!(!message.contains("Fits."), "{message}");
    }
    // Nothing was retried.
    assert_eq!(raw.requests(), 4);
    client.stop();
}

/// docs/providers.md (How errors surface): an event larger than 8 MiB fails the turn with
/// `other`, quoting the event's start. A model that streams a 64 MiB event without ever
/// ending it, on either wire, fails the turn while it is still sending: the server stops
/// reading soon after 8 MiB, and its peak memory grows by far less than the event.
#[test]
fn an_endless_64_mib_event_fails_the_turn_promptly_and_is_never_held_whole() {
    const ENDLESS: usize = 64 * 1024 * 1024;
    let cases = [
        (
            "responses",
            "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"",
            "data: {\"type\":\"response.output_text.delta\",\"delta\":\"xxxx",
        ),
        (
            "chat",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"xxxx",
        ),
        // An event whose data comes in two lines: the quote is still of its start.
        (
            "chat",
            "data: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"",
            "{\"choices\":[{\"index\":0,",
        ),
    ];
    for (wire, start, quoted) in cases {
        let raw = RawModel::start(vec![RawBody::Endless {
            start: start.as_bytes().to_vec(),
            total: ENDLESS,
        }]);
        let (_home, mut client, responses, chat) =
            raw_session(&format!("responses-endless-{wire}-{}", start.len()), &raw);
        let thread = if wire == "chat" { chat } else { responses };
        let before = memory_kib(client.pid(), "VmRSS");
        let clock = std::time::Instant::now();
        client.start_turn(&thread, "Stream forever.");
        let seen = client.until_turn_completed();
        let took = clock.elapsed();
        let peak = memory_kib(client.pid(), "VmHWM");
        let sent = raw.next_sent();
        let growth = peak.saturating_sub(before);
        eprintln!("{wire}: failed in {took:?}; {sent:?}; grew by {growth} KiB from {before} KiB");
        let message = assert_failed(&seen, &json!("other"));
        assert!(
            message.contains(&format!("a stream event is larger than {MAX_EVENT} bytes")),
            "{wire}: {message}"
        );
        assert!(
            message.contains(&format!("it starts with: {quoted}")),
            "{wire}: {message}"
        );
        assert!(
            took < std::time::Duration::from_secs(20),
            "{wire}: {took:?}"
        );
        // The server hung up while the model was still sending. What the socket took past
        // 8 MiB sat in the kernel's buffers (up to `tcp_rmem`'s maximum, 32 MiB on some
        // hosts, counting overhead).
        assert!(
            sent.hung_up && sent.written < ENDLESS * 3 / 4,
            "{wire}: the server read on: {sent:?}"
        );
        assert!(
            growth < 32 * 1024,
            "{wire}: the server grew by {growth} KiB (from {before} KiB) reading the event"
        );
        assert_eq!(raw.requests(), 1, "{wire}: retried");
        client.stop();
    }
}

/// docs/providers.md (How errors surface): an event that is not UTF-8 or not valid JSON
/// fails the turn with `other`, and the message quotes the start of the event; on both
/// wires.
#[test]
fn stream_events_that_are_not_utf8_or_not_json_fail_the_turn_quoting_them_on_both_wires() {
    let responses_start = "data: {\"type\":\"response.output_text.delta\",\"delta\":\"";
    let chat_start = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"";
    // The Responses wire names its events, as OpenAI does; the chat wire does not.
    let named = "event: response.output_text.delta\n";
    let bytes = |parts: &[&[u8]]| RawBody::Bytes(parts.concat());
    let raw = RawModel::start(vec![
        bytes(&[
            named.as_bytes(),
            responses_start.as_bytes(),
            b"caf\xe9 latin-1\"}\n\n",
        ]),
        bytes(&[
            named.as_bytes(),
            responses_start.as_bytes(),
            b"cut short\n\n",
        ]),
        bytes(&[chat_start.as_bytes(), b"caf\xe9 latin-1\"}}]}\n\n"]),
        bytes(&[chat_start.as_bytes(), b"cut short\n\n"]),
    ]);
    let (_home, mut client, responses, chat) = raw_session("responses-bad-events", &raw);
    let cases = [
        (
            &responses,
            "not UTF-8",
            format!("{responses_start}caf\u{fffd} latin-1"),
        ),
        (
            &responses,
            "not JSON",
            format!("{}cut short", responses_start.trim_start_matches("data: ")),
        ),
        (
            &chat,
            "not UTF-8",
            format!("{chat_start}caf\u{fffd} latin-1"),
        ),
        (
            &chat,
            "not a valid chunk",
            format!("{}cut short", chat_start.trim_start_matches("data: ")),
        ),
    ];
    for (thread, why, quoted) in cases {
        client.start_turn(thread, "Hi.");
        let seen = client.until_turn_completed();
        let message = assert_failed(&seen, &json!("other"));
        assert!(
            message.contains(why) && message.contains(&quoted),
            "{why}, {quoted}: {message}"
        );
    }
    assert_eq!(raw.requests(), 4);
    client.stop();
}
