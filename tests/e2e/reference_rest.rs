//! The last client requests of the reference's schema, through the binary: `thread/sample`
//! (a model call on the side of a thread, against the loopback mock model) and its cancel,
//! the out-of-band elicitation counters, the execution environments, and the requests refused
//! because they need OpenAI's hosted services (the auto-review model, hosted apps' events).

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, thread_id};
use crate::common::{home_and_workspace, scratch};
use crate::mock_model::{End, MockModel, Reply, Sse};

fn configure_mock(home: &Path, mock: &MockModel) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\n\
         name = \"mock model\"\nbase_url = \"{}\"\nrequest_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// A server for `mock` that accepts experimental methods, with a thread that has one finished
/// turn ("First question." / the mock's first reply): (client, thread, turn).
fn thread_with_a_turn(name: &str, mock: &MockModel) -> (Client, String, String) {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    configure_mock(&home, mock);
    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let turn = client.start_turn(&thread, "First question.");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    (client, thread, turn)
}

/// The chat messages of the mock's request `index`.
fn messages(mock: &MockModel, index: usize) -> Vec<Value> {
    let requests = mock.wait_requests(index + 1);
    requests[index].body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_sample_asks_the_model_after_the_conversation_and_leaves_the_thread_alone() {
    let mock = MockModel::start(vec![
        Sse::answer("First answer."),
        Reply::Stream(
            Sse::new()
                .text("Side ")
                .text("answer.")
                .finish("stop")
                .usage(50, 7, 10, 0),
        ),
    ]);
    let (mut client, thread, turn) = thread_with_a_turn("rest-sample", &mock);

    let sampled = client.call(
        "thread/sample",
        json!({"threadId": thread, "expectedTurnId": turn, "prompt": "Say it in one line."}),
    );
    assert_eq!(sampled["text"], json!("Side answer."), "{sampled}");
    assert_eq!(sampled["sourceTurnId"], json!(turn));
    assert_eq!(sampled["inputTokens"], json!(50));
    assert_eq!(sampled["outputTokens"], json!(7));
    assert_eq!(sampled["cachedInputTokens"], json!(10));
    assert!(
        sampled["responseId"]
            .as_str()
            .is_some_and(|id| !id.is_empty())
    );

    // The model saw the conversation, then the prompt.
    let sent = messages(&mock, 1);
    let text = Value::Array(sent.clone()).to_string();
    assert!(text.contains("First question."), "{text}");
    assert!(text.contains("First answer."), "{text}");
    let last = sent.last().expect("a message");
    assert_eq!(last["role"], json!("user"), "{last}");
    assert!(
        last["content"].to_string().contains("Say it in one line."),
        "{last}"
    );

    // Nothing was added to the thread, and nothing was announced.
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let turns = read["thread"]["turns"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(turns.len(), 1, "{read:#}");
    assert!(!read.to_string().contains("Side answer."), "{read:#}");
    assert!(
        !read.to_string().contains("Say it in one line."),
        "{read:#}"
    );
    let backlog = client.backlog();
    assert!(
        backlog.iter().all(|m| !m["method"]
            .as_str()
            .is_some_and(|n| n.starts_with("item/") || n.starts_with("turn/"))),
        "{backlog:#?}"
    );

    // A stale turn id, and a thread that does not exist, are refused with the reason.
    let stale = client.call_err(
        "thread/sample",
        json!({"threadId": thread, "expectedTurnId": "not-a-turn", "prompt": "x"}),
    );
    assert_eq!(stale["code"], json!(-32600), "{stale}");
    assert!(
        stale["message"]
            .as_str()
            .is_some_and(|m| m.contains("expectedTurnId")),
        "{stale}"
    );
    let missing = client.call_err(
        "thread/sample",
        json!({"threadId": "nope", "expectedTurnId": turn, "prompt": "x"}),
    );
    assert_ne!(missing["code"], json!(-32601), "{missing}");
    // Only the turn and the one sample reached the model.
    assert_eq!(mock.requests().len(), 2);
}

#[test]
fn a_cancelled_sample_answers_cancelled_and_stops_the_model_call() {
    let mock = MockModel::start(vec![
        Sse::answer("First answer."),
        Reply::Stream(Sse::new().text("Never finished.").end(End::Stall)),
    ]);
    let (mut client, thread, turn) = thread_with_a_turn("rest-sample-cancel", &mock);

    let id = client.send_request(
        "thread/sample",
        json!({"threadId": thread, "expectedTurnId": turn, "prompt": "Take your time."}),
    );
    mock.wait_requests(2);
    let ack = client.call("thread/sample/cancel", json!({"requestId": id}));
    assert_eq!(ack, json!({}));
    let answer = client.answer(&id).expect_err("the sample is cancelled");
    assert_eq!(answer["code"], json!(-32800), "{answer}");
    // The model call was dropped, not left running.
    mock.wait_dropped(1);

    // A cancel of nothing is acknowledged all the same; unknown members are refused.
    assert_eq!(
        client.call("thread/sample/cancel", json!({"requestId": 999})),
        json!({})
    );
    let extra = client.call_err(
        "thread/sample/cancel",
        json!({"requestId": 1, "surprise": true}),
    );
    assert_eq!(extra["code"], json!(-32602), "{extra}");
}

#[test]
fn elicitation_counters_pause_while_above_zero_and_never_go_negative() {
    let root = scratch("rest-elicitation");
    let (home, workspace) = home_and_workspace(&root);
    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let params = json!({"threadId": thread});

    let zero = client.call_err("thread/decrement_elicitation", params.clone());
    assert_eq!(zero["code"], json!(-32600), "{zero}");
    assert!(
        zero["message"]
            .as_str()
            .is_some_and(|m| m.contains("already zero")),
        "{zero}"
    );
    assert_eq!(
        client.call("thread/increment_elicitation", params.clone()),
        json!({"count": 1, "paused": true})
    );
    assert_eq!(
        client.call("thread/increment_elicitation", params.clone()),
        json!({"count": 2, "paused": true})
    );
    assert_eq!(
        client.call("thread/decrement_elicitation", params.clone()),
        json!({"count": 1, "paused": true})
    );
    assert_eq!(
        client.call("thread/decrement_elicitation", params.clone()),
        json!({"count": 0, "paused": false})
    );
    let again = client.call_err("thread/decrement_elicitation", params);
    assert_eq!(again["code"], json!(-32600), "{again}");

    // A thread that is not loaded has no counter.
    let unknown = client.call_err("thread/increment_elicitation", json!({"threadId": "nope"}));
    assert_eq!(unknown["code"], json!(-32600), "{unknown}");
}

#[test]
fn the_local_environment_is_described_and_ready_and_no_other_can_be_added() {
    let root = scratch("rest-environment");
    let (home, _workspace) = home_and_workspace(&root);
    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));

    let info = client.call("environment/info", json!({"environmentId": "local"}));
    assert_eq!(info["shell"]["name"], json!("bash"), "{info}");
    let shell = info["shell"]["path"].as_str().unwrap_or_default();
    assert!(shell.ends_with("bash"), "{info}");
    assert!(
        info["cwd"]
            .as_str()
            .is_some_and(|c| c.starts_with("file:///")),
        "{info}"
    );

    assert_eq!(
        client.call("environment/status", json!({"environmentId": "local"})),
        json!({"status": "ready", "error": null})
    );
    let other = client.call("environment/status", json!({"environmentId": "gpu-box"}));
    assert_eq!(other["status"], json!("unknown"), "{other}");
    assert!(
        other["error"]
            .as_str()
            .is_some_and(|e| e.contains("gpu-box")),
        "{other}"
    );
    let no_info = client.call_err("environment/info", json!({"environmentId": "gpu-box"}));
    assert_eq!(no_info["code"], json!(-32600), "{no_info}");

    let add = client.call_err(
        "environment/add",
        json!({"environmentId": "gpu-box", "execServerUrl": "ws://127.0.0.1:9"}),
    );
    assert_eq!(add["code"], json!(-32600), "{add}");
    assert!(
        add["message"]
            .as_str()
            .is_some_and(|m| m.contains("exec-server")),
        "{add}"
    );
    // Still unknown after the refused add.
    let after = client.call("environment/status", json!({"environmentId": "gpu-box"}));
    assert_eq!(after["status"], json!("unknown"), "{after}");
    // A missing required member is named.
    let bad = client.call_err("environment/add", json!({"environmentId": "x"}));
    assert_eq!(bad["code"], json!(-32602), "{bad}");
}

#[test]
fn the_auto_reviewer_and_hosted_app_events_are_refused_with_the_reason() {
    let root = scratch("rest-refused");
    let (home, workspace) = home_and_workspace(&root);
    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    for (method, params) in [
        ("thread/guardianReview", json!({"threadId": thread})),
        (
            "thread/approveGuardianDeniedAction",
            json!({"threadId": thread, "event": {}}),
        ),
        (
            "mcpServer/event/stream/start",
            json!({"threadId": thread, "server": "s", "name": "n", "arguments": {},
                   "subscriptionId": "sub"}),
        ),
        (
            "mcpServer/event/stream/stop",
            json!({"subscriptionId": "sub"}),
        ),
    ] {
        let error = client.call_err(method, params);
        assert_eq!(error["code"], json!(-32004), "{method}: {error}");
        assert_eq!(
            error["data"]["reason"],
            json!("openaiCloud"),
            "{method}: {error}"
        );
        assert_eq!(error["data"]["method"], json!(method), "{method}: {error}");
    }
}
