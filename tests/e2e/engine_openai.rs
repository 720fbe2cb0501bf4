//! Turns against an OpenAI-compatible endpoint (the mock model server): the real binary over
//! stdio, with an `AGENTWIRE_HOME` whose `config.toml` points the default provider at a
//! [`MockModel`] on loopback.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, deltas, params, thread_id};
use crate::common::{existing_dir, scratch};
use crate::mock_model::{End, MockModel, Recorded, Reply, Sse};
use crate::model_context::{built_in, chat_conversation};

/// Writes a `config.toml` whose default provider `mock` is served at `base_url`; `extra`
/// keys are added to the provider's table (replacing the test defaults they name: a TOML
/// comment naming a key, say `# request_max_retries unset`, leaves it to the server's default).
fn configure(home: &Path, base_url: &str, extra: &str) {
    let mut table = format!(
        "name = \"mock model\"\nbase_url = \"{base_url}\"\nmodel_context_window = 32768\n\
         http_headers = {{ \"X-Test\" = \"e2e\" }}\n{extra}\n"
    );
    for default in ["request_max_retries = 2", "stream_idle_timeout_ms = 20000"] {
        let key = default.split(' ').next().expect("key");
        if !extra.contains(key) {
            table.push_str(default);
            table.push('\n');
        }
    }
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\n{table}"
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// A server on a fresh home configured for `mock` (with `extra` provider keys), and a thread.
fn session(name: &str, mock: &MockModel, extra: &str) -> (PathBuf, Client, String) {
    let home = scratch(name);
    configure(&home, &mock.base_url(), extra);
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client);
    (home, client, thread)
}

/// Starts a thread; returns its id, with the notification backlog cleared.
fn new_thread(client: &mut Client) -> String {
    let started = client.start_thread(json!({"cwd": existing_dir("/tmp/project")}));
    assert_eq!(
        started["thread"]["modelProvider"],
        json!("mock"),
        "{started}"
    );
    assert_eq!(started["model"], json!("mock-model"), "{started}");
    thread_id(&started)
}

/// Checks the turn failed with `info` and an `error` notification saying the same; returns
/// the error's message.
fn assert_failed(seen: &[Value], info: &Value) -> String {
    let turn = completed_turn(seen);
    assert_eq!(turn["status"], json!("failed"), "{turn}");
    assert_eq!(turn["error"]["codexErrorInfo"], *info, "{turn}");
    let errors = params(seen, "error");
    assert_eq!(errors.len(), 1, "{seen:?}");
    assert_eq!(errors[0]["error"], turn["error"]);
    assert_eq!(errors[0]["willRetry"], json!(false));
    turn["error"]["message"]
        .as_str()
        .expect("error message")
        .to_owned()
}

/// The conversation a recorded request carries: its `messages` after the context the engine
/// opens with (tested in `model_context`).
fn messages(request: &Recorded) -> Value {
    Value::Array(chat_conversation(&request.body))
}

#[test]
fn a_turn_streams_reasoning_and_text_and_reports_token_usage() {
    let mock = MockModel::start(vec![Reply::Stream(
        Sse::new()
            .reasoning_content("Thinking ")
            .reasoning("it over.")
            .text("Hel")
            .text("lo!")
            .finish("stop")
            .usage(12, 7, 2, 3),
    )]);
    let (_home, mut client, thread) = session("openai-turn", &mock, "");
    client.start_turn(&thread, "Say hello.");
    let seen = client.until_turn_completed();
    let turn = completed_turn(&seen);
    assert_eq!(turn["status"], json!("completed"), "{turn}");
    assert_eq!(
        deltas(&seen, "item/reasoning/textDelta"),
        "Thinking it over."
    );
    assert_eq!(deltas(&seen, "item/agentMessage/delta"), "Hello!");
    assert_eq!(turn["items"][0]["text"], json!("Hello!"));
    let completed: Vec<&Value> = params(&seen, "item/completed")
        .iter()
        .map(|p| &p["item"])
        .collect();
    assert_eq!(completed[1]["type"], json!("reasoning"));
    assert_eq!(completed[1]["content"], json!(["Thinking it over."]));
    let usage = &params(&seen, "thread/tokenUsage/updated")[0]["tokenUsage"];
    assert_eq!(
        usage["last"],
        json!({"inputTokens": 12, "cachedInputTokens": 2, "cacheWriteInputTokens": 0,
               "outputTokens": 7, "reasoningOutputTokens": 3, "totalTokens": 19})
    );
    assert_eq!(usage["modelContextWindow"], json!(32768));

    let first = &mock.wait_requests(1)[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.header("content-type"), Some("application/json"));
    assert_eq!(first.header("x-test"), Some("e2e"));
    assert_eq!(first.header("authorization"), None);
    assert_eq!(first.body["model"], json!("mock-model"));
    assert_eq!(first.body["stream"], json!(true));
    assert_eq!(first.body["stream_options"], json!({"include_usage": true}));
    assert!(first.body.get("reasoning_effort").is_none());
    let tools: Vec<&Value> = first.body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            assert_eq!(t["type"], json!("function"));
            assert!(t["function"]["parameters"].is_object(), "{t}");
            &t["function"]["name"]
        })
        .collect();
    assert!(tools.contains(&&json!("shell")), "{tools:?}");
    assert!(tools.contains(&&json!("apply_patch")), "{tools:?}");
    assert_eq!(
        first.body["messages"][0],
        json!({"role": "system", "content": built_in()}),
        "agentwire's own base instructions open the call"
    );
    assert_eq!(
        messages(first),
        json!([{"role": "user", "content": "Say hello."}])
    );

    client.stop();
}

#[test]
fn the_next_turn_carries_the_conversation() {
    let mock = MockModel::start(vec![Sse::answer("Hello!")]);
    let (_home, mut client, thread) = session("openai-next-turn", &mock, "");
    client.start_turn(&thread, "Say hello.");
    client.until_turn_completed();
    mock.push(Sse::answer("Hello again."));
    client.start_turn(&thread, "And again.");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let usage = &params(&seen, "thread/tokenUsage/updated")[0]["tokenUsage"];
    assert_eq!(usage["total"]["totalTokens"], json!(30));
    let requests = mock.wait_requests(2);
    assert_eq!(
        messages(&requests[1]),
        json!([
            {"role": "user", "content": "Say hello."},
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "And again."}
        ])
    );
    client.stop();
}

#[test]
fn the_next_call_carries_the_conversation_and_a_tool_message_for_each_tool_call() {
    let mock = MockModel::start(vec![
        Reply::Stream(
            Sse::new()
                .text("Let me look.")
                .tool_call(0, "call_e2e_1", "shell", "{\"comm")
                .tool_arguments(0, "and\": \"ls\"}")
                .tool_call(1, "call_e2e_2", "shell", "{\"command\": \"pwd\"}")
                .finish("tool_calls")
                .usage(20, 9, 0, 0)
                .end(End::Hold),
        ),
        Sse::answer("There are no files."),
        Sse::answer("Hi."),
    ]);
    let (_home, mut client, thread) = session("openai-tool", &mock, "");
    let turn = client.start_turn(&thread, "List the files.");
    // While the first call runs, steer more input in: the turn makes a second call.
    mock.wait_requests(1);
    client.call(
        "turn/steer",
        json!({"threadId": thread, "expectedTurnId": turn,
               "input": [{"type": "text", "text": "Also say hi."}]}),
    );
    mock.release();
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));

    let requests = mock.wait_requests(2);
    let sent = chat_conversation(&requests[1].body);
    assert_eq!(
        sent[0],
        json!({"role": "user", "content": "List the files."})
    );
    let call = sent
        .iter()
        .position(|m| m["role"] == json!("assistant") && m.get("tool_calls").is_some())
        .unwrap_or_else(|| panic!("no assistant tool call in {sent:?}"));
    assert_eq!(sent[call]["content"], json!("Let me look."));
    assert_eq!(
        sent[call]["tool_calls"],
        json!([
            {"id": "call_e2e_1", "type": "function",
             "function": {"name": "shell", "arguments": "{\"command\": \"ls\"}"}},
            {"id": "call_e2e_2", "type": "function",
             "function": {"name": "shell", "arguments": "{\"command\": \"pwd\"}"}}
        ])
    );
    // What the tool results say is the tools' business; each call gets one.
    for (offset, id) in ["call_e2e_1", "call_e2e_2"].iter().enumerate() {
        let result = &sent[call + 1 + offset];
        assert_eq!(result["role"], json!("tool"), "{sent:?}");
        assert_eq!(result["tool_call_id"], json!(id));
        assert!(result["content"].is_string(), "{result}");
    }
    client.stop();
}

#[test]
fn refused_credentials_fail_the_turn_as_unauthorized() {
    let mock = MockModel::start(vec![Reply::status(
        401,
        "{\"error\":{\"message\":\"Incorrect API key provided\",\"type\":\"invalid_request_error\"}}",
    )]);
    // PATH is set in every test environment; it stands in for an API key variable.
    let (_home, mut client, thread) = session("openai-401", &mock, "env_key = \"PATH\"");
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("unauthorized"));
    assert!(message.contains("$PATH"), "{message}");
    let turn = completed_turn(&seen);
    let details = turn["error"]["additionalDetails"]
        .as_str()
        .expect("details");
    assert!(
        details.contains("401") && details.contains("Incorrect API key"),
        "{details}"
    );
    // Sent once (not retried), with the key as a bearer token.
    let requests = mock.wait_requests(1);
    assert_eq!(requests.len(), 1);
    let path = std::env::var("PATH").expect("PATH is set");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {path}").as_str())
    );
    client.stop();
}

#[test]
fn an_unset_key_variable_fails_the_turn_at_once() {
    let mock = MockModel::start(Vec::new());
    let (_home, mut client, thread) = session(
        "openai-nokey",
        &mock,
        "env_key = \"AGENTWIRE_E2E_KEY_THAT_IS_NOT_SET\"",
    );
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("unauthorized"));
    assert!(
        message.contains("AGENTWIRE_E2E_KEY_THAT_IS_NOT_SET"),
        "{message}"
    );
    assert!(mock.requests().is_empty());
    client.stop();
}

#[test]
fn a_rate_limited_request_is_retried_and_the_turn_completes() {
    let mock = MockModel::start(vec![
        Reply::status_with(429, &[("retry-after", "0")], "{\"error\":\"slow down\"}"),
        Reply::status(503, "overloaded"),
        Sse::answer("Made it."),
    ]);
    let (_home, mut client, thread) = session("openai-429", &mock, "");
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    assert_eq!(deltas(&seen, "item/agentMessage/delta"), "Made it.");
    assert!(params(&seen, "error").is_empty());
    let requests = mock.wait_requests(3);
    assert_eq!(requests[0].body, requests[2].body);
    client.stop();
}

#[test]
fn rate_limits_that_outlast_the_retries_fail_the_turn() {
    let limited = || Reply::status_with(429, &[("retry-after", "0")], "slow down");
    let mock = MockModel::start(vec![limited(), limited()]);
    let (_home, mut client, thread) = session("openai-429-fail", &mock, "request_max_retries = 1");
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    assert_failed(&seen, &json!("rateLimitExceeded"));
    assert_eq!(mock.wait_requests(2).len(), 2);
    client.stop();
}

#[test]
fn an_unreachable_server_fails_the_turn_with_a_connection_error() {
    // A port nobody listens on: bound, then released.
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("address")
        .port();
    let home = scratch("openai-refused");
    configure(&home, &format!("http://127.0.0.1:{port}/v1"), "");
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client);
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    let message = assert_failed(
        &seen,
        &json!({"httpConnectionFailed": {"httpStatusCode": null}}),
    );
    assert!(message.contains("could not be reached"), "{message}");
    assert!(message.contains("3 attempts"), "{message}");
    client.stop();
}

#[test]
fn a_conversation_too_long_for_the_model_is_a_context_window_error() {
    let mock = MockModel::start(vec![Reply::status(
        400,
        "{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens.\",\
         \"code\":\"context_length_exceeded\"}}",
    )]);
    let (_home, mut client, thread) = session("openai-context", &mock, "");
    client.start_turn(&thread, "A very long question.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("contextWindowExceeded"));
    assert!(message.contains("context window"), "{message}");
    client.stop();
}

/// A chat answer cut by the server's output-token limit (`finish_reason: "length"`) fails
/// the turn as `contextWindowExceeded`, as a Responses stream `incomplete` for
/// `max_output_tokens` does; the text streamed before the cut is kept.
#[test]
fn an_answer_cut_by_the_output_token_limit_is_a_context_window_error() {
    let mock = MockModel::start(vec![Reply::Stream(
        Sse::new()
            .text("Half an ans")
            .finish("length")
            .usage(10, 5, 0, 0),
    )]);
    let (_home, mut client, thread) = session("openai-length", &mock, "");
    client.start_turn(&thread, "A long answer, please.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("contextWindowExceeded"));
    assert!(message.contains("finish_reason: length"), "{message}");
    assert_eq!(deltas(&seen, "item/agentMessage/delta"), "Half an ans");
    assert_eq!(mock.requests().len(), 1);
    client.stop();
}

#[test]
fn broken_streams_fail_the_turn_with_what_was_wrong() {
    let mock = MockModel::start(vec![
        Reply::Stream(Sse::new().text("Part").raw("{this is not json")),
        Reply::Stream(Sse::new().text("Half an ans").end(End::Close)),
    ]);
    let (_home, mut client, thread) = session("openai-malformed", &mock, "");

    client.start_turn(&thread, "One.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("other"));
    assert!(message.contains("not a valid chunk"), "{message}");
    assert!(message.contains("{this is not json"), "{message}");
    // What streamed before the bad event is kept.
    assert_eq!(deltas(&seen, "item/agentMessage/delta"), "Part");

    client.start_turn(&thread, "Two.");
    let seen = client.until_turn_completed();
    let message = assert_failed(
        &seen,
        &json!({"responseStreamDisconnected": {"httpStatusCode": 200}}),
    );
    assert!(
        message.contains("before the response was complete"),
        "{message}"
    );
    client.stop();
}

#[test]
fn a_silent_stream_times_out() {
    let mock = MockModel::start(vec![Reply::Stream(
        Sse::new().text("And then").end(End::Stall),
    )]);
    let (_home, mut client, thread) = session("openai-idle", &mock, "stream_idle_timeout_ms = 300");
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    let message = assert_failed(
        &seen,
        &json!({"responseStreamDisconnected": {"httpStatusCode": 200}}),
    );
    assert!(message.contains("300 ms"), "{message}");
    // The abandoned response's connection is closed.
    mock.wait_dropped(0);
    client.stop();
}

#[test]
fn interrupting_a_turn_drops_the_model_connection() {
    let mock = MockModel::start(vec![Reply::Stream(
        Sse::new().text("Once upon ").end(End::Stall),
    )]);
    let (_home, mut client, thread) = session("openai-interrupt", &mock, "");
    let turn = client.start_turn(&thread, "Tell a long story.");
    let delta = client.notification("item/agentMessage/delta");
    assert_eq!(delta["delta"], json!("Once upon "));
    client.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    );
    let seen = client.until_turn_completed();
    let completed = completed_turn(&seen);
    assert_eq!(completed["status"], json!("interrupted"), "{completed}");
    assert!(params(&seen, "error").is_empty());
    mock.wait_dropped(0);
    client.stop();
}

#[test]
fn tool_calls_from_the_model_run_as_a_command_and_a_patch() {
    let patch = "*** Begin Patch\n*** Add File: from-model.txt\n+hello\n*** End Patch\n";
    let mock = MockModel::start(vec![
        Reply::Stream(
            Sse::new()
                .tool_call(0, "call_ls", "shell", "{\"command\": [\"ls\"]}")
                .tool_call(
                    1,
                    "call_patch",
                    "apply_patch",
                    &json!({ "input": patch }).to_string(),
                )
                .finish("tool_calls")
                .usage(20, 9, 0, 0),
        ),
        Sse::answer("Listed and wrote."),
    ]);
    let home = scratch("openai-tools");
    configure(&home, &mock.base_url(), "");
    let workspace = home.join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    std::fs::write(workspace.join("marker.txt"), "").expect("marker");
    let mut client = Client::start(&home);
    client.call(
        "thread/start",
        json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": "workspace-write"}),
    );
    let thread = client.notification("thread/started")["thread"]["id"]
        .as_str()
        .expect("thread id")
        .to_owned();
    client.notifications.clear();
    client.start_turn(&thread, "List the files and write one.");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let items: Vec<&Value> = params(&seen, "item/completed")
        .into_iter()
        .map(|p| &p["item"])
        .collect();
    let command = items
        .iter()
        .find(|i| i["type"] == json!("commandExecution"))
        .unwrap_or_else(|| panic!("no command item in {items:#?}"));
    assert_eq!(command["status"], json!("completed"));
    assert_eq!(command["command"], json!("ls"));
    assert!(
        command["aggregatedOutput"]
            .as_str()
            .is_some_and(|o| o.contains("marker.txt")),
        "{command}"
    );
    let change = items
        .iter()
        .find(|i| i["type"] == json!("fileChange"))
        .unwrap_or_else(|| panic!("no file change in {items:#?}"));
    assert_eq!(change["status"], json!("completed"));
    assert_eq!(
        std::fs::read_to_string(workspace.join("from-model.txt")).expect("written"),
        "hello\n"
    );
    // The second call carries both results under their call ids.
    let requests = mock.wait_requests(2);
    let sent = chat_conversation(&requests[1].body);
    let result = |id: &str| {
        sent.iter()
            .find(|m| m["role"] == json!("tool") && m["tool_call_id"] == json!(id))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_else(|| panic!("no result for {id} in {sent:#?}"))
            .to_owned()
    };
    assert!(result("call_ls").contains("marker.txt"));
    assert!(result("call_patch").contains("from-model.txt"));
    client.stop();
}

/// docs/providers.md (How errors surface): each HTTP failure on the chat wire fails the turn
/// with the `codexErrorInfo` of its row in the table, and only 429 and 5xx are retried.
#[test]
fn http_failures_fail_the_turn_with_the_documented_error_info() {
    let quick = [("retry-after", "0")];
    // (status, body, codexErrorInfo, words of the message, requests made)
    let cases: [(u16, &str, &str, &str, usize); 7] = [
        (
            404,
            "{\"error\":{\"message\":\"The model `mock-model` does not exist\"}}",
            "modelNotFound",
            "does not know the model",
            1,
        ),
        (
            404,
            "404 page not found",
            "badRequest",
            "check `base_url`",
            1,
        ),
        (
            422,
            "{\"error\":{\"message\":\"messages: field required\"}}",
            "badRequest",
            "refused the request as invalid (HTTP 422)",
            1,
        ),
        (
            403,
            "{\"error\":\"forbidden\"}",
            "unauthorized",
            "HTTP 403",
            1,
        ),
        (
            503,
            "upstream overloaded",
            "serverOverloaded",
            "overloaded (HTTP 503)",
            2,
        ),
        (
            502,
            "bad gateway",
            "internalServerError",
            "failed (HTTP 502)",
            2,
        ),
        (
            429,
            "{\"error\":\"slow down\"}",
            "rateLimitExceeded",
            "rate limiting requests (HTTP 429)",
            2,
        ),
    ];
    let mock = MockModel::start(Vec::new());
    let (_home, mut client, thread) = session("openai-statuses", &mock, "request_max_retries = 1");
    let mut total = 0;
    for (status, body, info, words, requests) in cases {
        // One more reply than a retry may take: a success after the failures.
        for _ in 0..requests {
            mock.push(Reply::status_with(status, &quick, body));
        }
        mock.push(Sse::answer("Should not be asked for."));
        client.start_turn(&thread, "Hi.");
        let seen = client.until_turn_completed();
        let message = assert_failed(&seen, &json!(info));
        assert!(message.contains(words), "{status}: {message}");
        let details = completed_turn(&seen)["error"]["additionalDetails"]
            .as_str()
            .expect("details")
            .to_owned();
        assert!(
            details.contains(&format!("HTTP {status}")) && details.contains(body),
            "{status}: {details}"
        );
        total += requests;
        assert_eq!(mock.requests().len(), total, "{status}: requests made");
        // Drop the unused answer: the next case scripts its own replies from an empty queue.
        client.start_turn(&thread, "Take the answer.");
        let seen = client.until_turn_completed();
        assert_eq!(
            completed_turn(&seen)["status"],
            json!("completed"),
            "{status}"
        );
        total += 1;
    }
    client.stop();
}

/// docs/providers.md (How errors surface): "an `error` object inside the stream" fails the
/// turn with `internalServerError`, quoting the server's message; what streamed before it
/// stays.
#[test]
fn an_error_object_inside_the_chat_stream_fails_the_turn_as_an_internal_server_error() {
    let mock =
        MockModel::start(vec![Reply::Stream(Sse::new().text("Partly ").raw(
            "{\"error\":{\"message\":\"the GPU fell over\",\"type\":\"server_error\"}}",
        ))]);
    let (_home, mut client, thread) = session("openai-stream-error", &mock, "");
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("internalServerError"));
    assert!(message.contains("the GPU fell over"), "{message}");
    assert_eq!(deltas(&seen, "item/agentMessage/delta"), "Partly ");
    assert_eq!(mock.requests().len(), 1);
    client.stop();
}

/// docs/providers.md (Configuration, Retries): `request_max_retries` defaults to 4, so a
/// server that keeps failing gets at most 5 attempts: five HTTP 500s fail the turn, and the
/// answer scripted after them is never asked for.
#[test]
fn without_request_max_retries_a_failing_request_is_made_five_times() {
    let failing = || Reply::status_with(500, &[("retry-after", "0")], "still broken");
    let mock = MockModel::start(vec![
        failing(),
        failing(),
        failing(),
        failing(),
        failing(),
        Sse::answer("One retry too many."),
    ]);
    let (_home, mut client, thread) = session(
        "openai-default-retries",
        &mock,
        "# request_max_retries unset: the default",
    );
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    let message = assert_failed(&seen, &json!("internalServerError"));
    assert!(message.contains("HTTP 500"), "{message}");
    assert_eq!(mock.requests().len(), 5);
    client.stop();
}

/// A loopback server that accepts connections and reads requests but never answers; counts
/// the connections it accepted, and holds them open while it lives.
struct Mute {
    url: String,
    accepted: Arc<Mutex<Vec<TcpStream>>>,
}

impl Mute {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let accepted: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let held = Arc::clone(&accepted);
        std::thread::spawn(move || {
            for socket in listener.incoming() {
                let Ok(socket) = socket else { break };
                let mut held = held.lock().expect("held");
                held.push(socket);
            }
        });
        Self { url, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.lock().expect("held").len()
    }
}

/// docs/providers.md (Configuration, How errors surface): `request_timeout_ms` bounds connect
/// plus the response headers. A server that accepts the request and never answers fails the
/// turn once that time is up (500 ms here, not the 10-minute default), as a connection
/// failure naming the setting.
#[test]
fn a_server_that_never_sends_response_headers_fails_the_turn_after_request_timeout_ms() {
    let mute = Mute::start();
    let home = scratch("openai-request-timeout");
    configure(
        &home,
        &mute.url,
        "request_timeout_ms = 500\nrequest_max_retries = 0",
    );
    let mut client = Client::start(&home);
    let thread = new_thread(&mut client);
    let clock = Instant::now();
    client.start_turn(&thread, "Hi.");
    let seen = client.until_turn_completed();
    let took = clock.elapsed();
    let message = assert_failed(
        &seen,
        &json!({"httpConnectionFailed": {"httpStatusCode": null}}),
    );
    assert!(
        message.contains("did not answer in time") && message.contains("1 attempt)"),
        "{message}"
    );
    let details = completed_turn(&seen)["error"]["additionalDetails"].clone();
    assert_eq!(
        details,
        json!("no response headers within 500 ms (request_timeout_ms)")
    );
    assert!(took >= Duration::from_millis(500), "{took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(mute.accepted(), 1);
    client.stop();
}

/// docs/providers.md (Configuration): "A thread whose provider id is not configured fails its
/// turns with an error naming the id and the configured ones": one named by `thread/start`'s
/// `modelProvider`, and one that is the configured default (`model_provider`). No model call
/// is made.
#[test]
fn a_turn_on_an_unconfigured_provider_fails_naming_it_and_the_configured_ones() {
    let mock = MockModel::start(Vec::new());
    let (home, mut client, _thread) = session("openai-unknown-provider", &mock, "");
    let check = |client: &mut Client, thread: &str, id: &str| {
        client.start_turn(thread, "Hi.");
        let seen = client.until_turn_completed();
        let message = assert_failed(&seen, &json!("badRequest"));
        assert!(
            message.contains(&format!("there is no model provider `{id}`")),
            "{message}"
        );
        // The configured ones: the table, the built-in ids and the fixture.
        for known in ["mock", "openai", "ollama", "lmstudio", "oss", "fixture"] {
            assert!(
                message.contains(&format!("`{known}`")),
                "{known}: {message}"
            );
        }
        assert!(
            message.contains(&format!("[model_providers.{id}]")),
            "{message}"
        );
    };
    let started =
        client.start_thread(json!({"cwd": existing_dir("/tmp/project"), "modelProvider": "nope"}));
    assert_eq!(
        started["thread"]["modelProvider"],
        json!("nope"),
        "{started}"
    );
    check(&mut client, &thread_id(&started), "nope");
    client.stop();

    // The default provider of new threads, named in config.toml but given no table.
    let config = std::fs::read_to_string(home.join("config.toml")).expect("config");
    let config = config.replace("model_provider = \"mock\"", "model_provider = \"missing\"");
    std::fs::write(home.join("config.toml"), config).expect("write config");
    let mut client = Client::start(&home);
    let started = client.start_thread(json!({"cwd": existing_dir("/tmp/project")}));
    assert_eq!(
        started["thread"]["modelProvider"],
        json!("missing"),
        "{started}"
    );
    check(&mut client, &thread_id(&started), "missing");
    assert!(mock.requests().is_empty());
    client.stop();
}
