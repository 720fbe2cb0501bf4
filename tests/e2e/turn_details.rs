//! Smaller turn-fidelity points through the binary: `item/reasoning/summaryPartAdded` from the
//! Responses wire, the `summary` (and `effort`) of `turn/start` kept for later turns (also after
//! a restart), a fork keeping its source's token totals, and a relative `localImage` path
//! taken from the thread's `cwd`.

use std::path::Path;

use serde_json::{Value, json};

use super::configure_mock;
use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::{home_and_workspace, scratch};
use crate::mock_model::{MockModel, Reply, Sse};
use crate::mock_responses::Responses;

/// A PNG signature and the start of a header: enough for content sniffing.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01";

/// Writes `home`'s `config.toml` for the built-in `openai` provider (Responses wire) at `mock`.
fn configure_responses(home: &Path, mock: &MockModel) {
    let config = format!(
        "model_provider = \"openai\"\nmodel = \"gpt-mock\"\n\n[model_providers.openai]\n\
         base_url = \"{}\"\nrequest_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// A server on `home` speaking to the Responses mock with an API key.
fn responses_client(home: &Path) -> Client {
    Client::start_with_env(home, &[("OPENAI_API_KEY", "sk-e2e")])
}

/// The method names of `seen`, with the `summaryIndex` of reasoning notifications.
fn reasoning_order(seen: &[Value]) -> Vec<String> {
    seen.iter()
        .filter_map(|n| {
            let method = n["method"].as_str()?;
            let params = &n["params"];
            match method {
                "item/reasoning/summaryPartAdded" | "item/reasoning/summaryTextDelta" => {
                    Some(format!("{method} {}", params["summaryIndex"]))
                }
                "item/started" | "item/completed" => {
                    Some(format!("{method} {}", params["item"]["type"].as_str()?))
                }
                _ => None,
            }
        })
        .collect()
}

#[test]
fn summary_parts_are_announced_in_order_and_turn_overrides_stay() {
    let mock = MockModel::start(vec![
        Responses::new()
            .reasoning(&[&["Reading ", "the question."], &["Answering."]])
            .message(&["Hello!"])
            .completed(100, 0, 20, 8),
        Responses::answer("Again."),
        Responses::answer("And again."),
    ]);
    let root = scratch("details-summary-parts");
    let (home, workspace) = home_and_workspace(&root);
    configure_responses(&home, &mock);
    let mut client = responses_client(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn_with(
        &thread,
        "Say hello.",
        json!({"summary": "detailed", "effort": "high"}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    assert_eq!(
        reasoning_order(&seen),
        vec![
            "item/started userMessage",
            "item/completed userMessage",
            "item/started reasoning",
            "item/reasoning/summaryPartAdded 0",
            "item/reasoning/summaryTextDelta 0",
            "item/reasoning/summaryTextDelta 0",
            "item/reasoning/summaryPartAdded 1",
            "item/reasoning/summaryTextDelta 1",
            "item/completed reasoning",
            "item/started agentMessage",
            "item/completed agentMessage",
        ]
    );
    let reasoning = params(&seen, "item/started")
        .into_iter()
        .find(|p| p["item"]["type"] == json!("reasoning"))
        .expect("reasoning item")["item"]["id"]
        .clone();
    for part in params(&seen, "item/reasoning/summaryPartAdded") {
        assert_eq!(part["itemId"], reasoning, "{part}");
        assert_eq!(part["threadId"], json!(thread), "{part}");
        assert_eq!(part["turnId"], completed_turn(&seen)["id"], "{part}");
    }

    // The next turn names no summary or effort: the first turn's stay in force.
    client.start_turn(&thread, "Once more.");
    client.until_turn_completed();
    let requests = mock.wait_requests(2);
    let expected = json!({"effort": "high", "summary": "detailed"});
    assert_eq!(requests[0].body["reasoning"], expected);
    assert_eq!(requests[1].body["reasoning"], expected);
    client.stop();

    // Also after a restart.
    let mut client = responses_client(&home);
    client.call("thread/resume", json!({"threadId": thread}));
    client.start_turn(&thread, "And once more.");
    client.until_turn_completed();
    assert_eq!(mock.wait_requests(3)[2].body["reasoning"], expected);
    client.stop();
}

/// The token totals of a `thread/tokenUsage/updated` notification.
fn total_tokens(notification: &Value) -> Option<i64> {
    notification["tokenUsage"]["total"]["totalTokens"].as_i64()
}

#[test]
fn a_fork_keeps_the_token_totals_of_its_source() {
    let mock = MockModel::start(vec![
        Reply::Stream(
            Sse::new()
                .text("First.")
                .finish("stop")
                .usage(100, 20, 0, 0),
        ),
        Sse::answer("On the fork."),
    ]);
    let root = scratch("details-fork-totals");
    let (home, workspace) = home_and_workspace(&root);
    configure_mock(&home, &mock, "");
    let mut client = Client::start(&home);
    let source = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&source, "Hello.");
    client.until_turn_completed();

    let fork = thread_id(&client.call("thread/fork", json!({"threadId": source})));
    client.notification("thread/started");
    let copied = client.notification("thread/tokenUsage/updated");
    assert_eq!(copied["threadId"], json!(fork), "{copied}");
    assert_eq!(total_tokens(&copied), Some(120), "{copied}");
    client.stop();

    // The copy is in the fork's own record: a resume after a restart sends it.
    let mut client = Client::start(&home);
    client.call("thread/resume", json!({"threadId": fork}));
    let resumed = client.notification("thread/tokenUsage/updated");
    assert_eq!(resumed["threadId"], json!(fork), "{resumed}");
    assert_eq!(total_tokens(&resumed), Some(120), "{resumed}");
    // And the fork's next turn adds to it.
    client.notifications.clear();
    client.start_turn(&fork, "Go on.");
    let seen = client.until_turn_completed();
    let usage = params(&seen, "thread/tokenUsage/updated");
    assert_eq!(
        total_tokens(usage.last().expect("usage")),
        Some(135),
        "{usage:#?}"
    );
    client.stop();
}

#[test]
fn a_relative_image_path_is_read_from_the_threads_cwd() {
    let mock = MockModel::start(vec![Sse::answer("A dot.")]);
    let root = scratch("details-relative-image");
    let (home, workspace) = home_and_workspace(&root);
    configure_mock(&home, &mock, "");
    std::fs::create_dir_all(workspace.join("pics")).expect("pics");
    std::fs::write(workspace.join("pics/dot.png"), PNG).expect("write image");
    // The server runs elsewhere: the path means something only under the thread's cwd.
    assert!(!Path::new("pics/dot.png").exists());
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));

    let missing = client.call_err(
        "turn/start",
        json!({"threadId": thread, "input": [{"type": "localImage", "path": "pics/none.png"}]}),
    );
    assert_eq!(missing["code"], json!(-32602), "{missing}");
    let message = missing["message"].as_str().expect("message");
    assert!(message.contains("input[0].path"), "{message}");
    let expected_missing = workspace.join("pics/none.png");
    assert!(
        message.contains(expected_missing.to_str().expect("utf-8 path")),
        "{message}"
    );

    client.call(
        "turn/start",
        json!({"threadId": thread, "input": [
            {"type": "text", "text": "What is this?"},
            {"type": "localImage", "path": "pics/dot.png"},
        ]}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let user = params(&seen, "item/completed")
        .into_iter()
        .find(|p| p["item"]["type"] == json!("userMessage"))
        .expect("user message")["item"]
        .clone();
    let absolute = workspace.join("pics/dot.png");
    assert_eq!(
        user["content"][1]["path"],
        json!(absolute.to_str().expect("utf-8 path")),
        "{user}"
    );
    let body = mock.wait_requests(1)[0].body.to_string();
    assert!(body.contains("data:image/png;base64,"), "{body}");
    client.stop();
}
