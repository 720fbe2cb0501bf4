//! Automatic compaction through the binary: the mock model reports a large context on one
//! turn, and the next turn first summarises the conversation (`agentMessage`,
//! `contextCompaction`, `thread/compacted`), then calls the model with the summary in place of
//! the history, also after a restart. The limit is `model_auto_compact_token_limit`, else 90%
//! of the context window; `0` turns it off.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::configure_mock;
use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::{home_and_workspace, scratch};
use crate::mock_model::{MockModel, Recorded, Reply, Sse};

/// An answer `text` whose call reports `prompt` input tokens (and 100 output tokens).
fn large(text: &str, prompt: i64) -> Reply {
    Reply::Stream(
        Sse::new()
            .text(text)
            .finish("stop")
            .usage(prompt, 100, 0, 0),
    )
}

/// A server configured for `mock` with `extra` keys, a thread, and one finished turn asking
/// "First question." whose call reported a context of `first_prompt` input tokens.
fn after_a_large_turn(name: &str, mock: &MockModel, extra: &str) -> (PathBuf, Client, String) {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    configure_mock(&home, mock, extra);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, "First question.");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    assert!(params(&seen, "thread/compacted").is_empty(), "{seen:#?}");
    (home, client, thread)
}

/// The whole conversation a recorded chat request sent, as text.
fn conversation(request: &Recorded) -> String {
    request.body["messages"].to_string()
}

#[test]
fn a_thread_over_its_limit_is_compacted_before_the_next_model_call() {
    let mock = MockModel::start(vec![
        large("First answer.", 5000),
        large("Summary: the user asked a first question.", 5100),
        Sse::answer("Second answer."),
        Sse::answer("Third answer."),
    ]);
    let (home, mut client, thread) = after_a_large_turn(
        "compact-limit",
        &mock,
        "model_auto_compact_token_limit = 1000",
    );

    let turn = client.start_turn(&thread, "Second question.");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let items: Vec<Value> = params(&seen, "item/completed")
        .into_iter()
        .map(|p| p["item"].clone())
        .collect();
    let kinds: Vec<&Value> = items.iter().map(|i| &i["type"]).collect();
    assert_eq!(
        kinds,
        vec![
            &json!("agentMessage"),
            &json!("contextCompaction"),
            &json!("userMessage"),
            &json!("agentMessage")
        ],
        "{seen:#?}"
    );
    assert_eq!(
        items[0]["text"],
        json!("Summary: the user asked a first question.")
    );
    let compacted = params(&seen, "thread/compacted");
    assert_eq!(
        compacted,
        vec![&json!({"threadId": thread, "turnId": turn})]
    );
    // The context size after compaction is the summary's, well under the limit.
    let usage = params(&seen, "thread/tokenUsage/updated");
    let sizes: Vec<i64> = usage
        .iter()
        .map(|u| {
            u["tokenUsage"]["last"]["totalTokens"]
                .as_i64()
                .expect("tokens")
        })
        .collect();
    assert_eq!(sizes.len(), 3, "{usage:#?}");
    assert_eq!(sizes[0], 5200, "the summary call: {usage:#?}");
    assert!(sizes[1] > 0 && sizes[1] < 1000, "{usage:#?}");
    assert_eq!(sizes[2], 15, "{usage:#?}");
    let totals = usage[2]["tokenUsage"]["total"]["totalTokens"].as_i64();
    assert_eq!(
        totals,
        Some(5100 + 5200 + 15),
        "every call counts: {usage:#?}"
    );

    let requests = mock.wait_requests(3);
    let summary_call = conversation(&requests[1]);
    assert!(
        summary_call.contains("Summarise the conversation so far"),
        "{summary_call}"
    );
    assert!(summary_call.contains("First question."), "{summary_call}");
    assert!(!summary_call.contains("Second question."), "{summary_call}");
    let next = conversation(&requests[2]);
    assert!(next.contains("was compacted"), "{next}");
    assert!(
        next.contains("Summary: the user asked a first question."),
        "{next}"
    );
    assert!(next.contains("Second question."), "{next}");
    assert!(!next.contains("First question."), "{next}");
    assert!(!next.contains("First answer."), "{next}");
    client.stop();

    // After a restart the history is rebuilt the same way, and nothing is compacted again.
    let mut client = Client::start(&home);
    client.call("thread/resume", json!({"threadId": thread}));
    client.start_turn(&thread, "Third question.");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    assert!(params(&seen, "thread/compacted").is_empty(), "{seen:#?}");
    let requests = mock.wait_requests(4);
    assert_eq!(requests.len(), 4);
    let third = conversation(&requests[3]);
    for kept in [
        "Summary: the user asked a first question.",
        "Second question.",
        "Second answer.",
        "Third question.",
    ] {
        assert!(third.contains(kept), "{kept} missing: {third}");
    }
    assert!(!third.contains("First question."), "{third}");
    client.stop();
}

#[test]
fn without_a_limit_ninety_percent_of_the_context_window_triggers_compaction() {
    // The mock provider's window is 32768 tokens: 30000 + 100 is over 90% of it.
    let mock = MockModel::start(vec![
        large("First answer.", 30_000),
        Sse::answer("Summary of the first question."),
        Sse::answer("Second answer."),
    ]);
    let (_home, mut client, thread) = after_a_large_turn("compact-window", &mock, "");
    client.start_turn(&thread, "Second question.");
    let seen = client.until_turn_completed();
    assert_eq!(params(&seen, "thread/compacted").len(), 1, "{seen:#?}");
    let next = conversation(&mock.wait_requests(3)[2]);
    assert!(next.contains("Summary of the first question."), "{next}");
    assert!(!next.contains("First question."), "{next}");
    client.stop();
}

#[test]
fn a_limit_of_zero_turns_automatic_compaction_off() {
    let mock = MockModel::start(vec![
        large("First answer.", 30_000),
        Sse::answer("Second answer."),
    ]);
    let (_home, mut client, thread) =
        after_a_large_turn("compact-off", &mock, "model_auto_compact_token_limit = 0");
    client.start_turn(&thread, "Second question.");
    let seen = client.until_turn_completed();
    assert!(params(&seen, "thread/compacted").is_empty(), "{seen:#?}");
    let requests = mock.wait_requests(2);
    assert_eq!(requests.len(), 2);
    let next = conversation(&requests[1]);
    assert!(
        next.contains("First question.") && next.contains("Second question."),
        "{next}"
    );
    client.stop();
}

#[test]
fn a_turn_whose_tool_round_fills_the_context_compacts_before_its_next_call() {
    let plan = r#"{"plan": [{"step": "Look around", "status": "in_progress"}]}"#;
    let mock = MockModel::start(vec![
        Reply::Stream(
            Sse::new()
                .tool_call(0, "call_plan", "update_plan", plan)
                .finish("tool_calls")
                .usage(5000, 100, 0, 0),
        ),
        Sse::answer("Summary: planning the first question."),
        Sse::answer("Done after compaction."),
    ]);
    let root = scratch("compact-mid-turn");
    let (home, workspace) = home_and_workspace(&root);
    configure_mock(&home, &mock, "model_auto_compact_token_limit = 1000");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let turn = client.start_turn(&thread, "First question.");
    let seen = client.until_turn_completed();
    let finished = completed_turn(&seen);
    assert_eq!(finished["status"], json!("completed"), "{seen:#?}");
    assert_eq!(
        finished["items"][0]["text"],
        json!("Done after compaction."),
        "{finished}"
    );
    assert_eq!(params(&seen, "turn/plan/updated").len(), 1, "{seen:#?}");
    let compacted = params(&seen, "thread/compacted");
    assert_eq!(
        compacted,
        vec![&json!({"threadId": thread, "turnId": turn})]
    );
    let kinds: Vec<Value> = params(&seen, "item/completed")
        .into_iter()
        .map(|p| p["item"]["type"].clone())
        .filter(|kind| kind == "agentMessage" || kind == "contextCompaction")
        .collect();
    assert_eq!(
        kinds,
        vec![
            json!("agentMessage"),
            json!("contextCompaction"),
            json!("agentMessage")
        ]
    );
    let requests = mock.wait_requests(3);
    let summary_call = conversation(&requests[1]);
    assert!(
        summary_call.contains("call_plan"),
        "the tool round: {summary_call}"
    );
    let last = conversation(&requests[2]);
    assert!(
        last.contains("Summary: planning the first question."),
        "{last}"
    );
    assert!(!last.contains("First question."), "{last}");
    assert!(!last.contains("call_plan"), "{last}");
    client.stop();
}
