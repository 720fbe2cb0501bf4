//! The environment context block across a server restart, through the binary against the mock
//! model: a resumed thread's next turn rebuilds the conversation with the block where the
//! earlier turn sent it (kept in the rollout), and sends no second one unless something in it
//! changed.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, thread_id};
use crate::common::{home_and_workspace, scratch};
use crate::mock_model::{MockModel, Sse};

/// What opens an environment context block.
const BLOCK: &str = "<environment_context>";

/// A `config.toml` for `mock` on the chat wire, asking before commands.
fn configure(home: &Path, mock: &MockModel) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\napproval_policy = \"on-request\"\n\
         sandbox_mode = \"workspace-write\"\n\n[model_providers.mock]\nbase_url = \"{}\"\n\
         request_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// Runs a turn with `text` and `overrides`; checks it completed.
fn turn(client: &mut Client, thread: &str, text: &str, overrides: Value) {
    client.start_turn_with(thread, text, overrides);
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
}

/// The chat messages of a recorded request body.
fn messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().expect("messages").clone()
}

/// How many environment context blocks the messages of `body` carry (the system message,
/// which explains the block, aside).
fn blocks(body: &Value) -> usize {
    messages(body)
        .iter()
        .filter(|m| m["role"] != json!("system"))
        .map(|m| m["content"].to_string().matches(BLOCK).count())
        .sum()
}

/// The environment context blocks of `body`'s messages, in order, each with its message
/// index.
fn block_texts(body: &Value) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (at, message) in messages(body).iter().enumerate() {
        if message["role"] == json!("system") {
            continue;
        }
        let Some(text) = message["content"].as_str() else {
            continue;
        };
        let mut rest = text;
        while let Some(start) = rest.find(BLOCK) {
            let end = rest[start..]
                .find("</environment_context>")
                .map_or(rest.len(), |e| start + e + "</environment_context>".len());
            found.push((at, rest[start..end].to_owned()));
            rest = &rest[end..];
        }
    }
    found
}

/// One turn, a restart, `thread/resume`, a second turn with `overrides`: returns the bodies of
/// the two model calls.
fn across_a_restart(name: &str, overrides: Value) -> (Value, Value) {
    let mock = MockModel::start(vec![Sse::answer("One."), Sse::answer("Two.")]);
    let (home, workspace) = home_and_workspace(&scratch(name));
    configure(&home, &mock);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    turn(&mut client, &thread, "First", json!({}));
    client.stop();

    let mut client = Client::start(&home);
    client.call("thread/resume", json!({"threadId": thread}));
    turn(&mut client, &thread, "Second", overrides);
    client.stop();
    let bodies: Vec<Value> = mock.wait_requests(2).into_iter().map(|r| r.body).collect();
    (bodies[0].clone(), bodies[1].clone())
}

/// Nothing changed: after the restart the conversation holds the first turn's block where it
/// was sent (the first user message, as before the restart) and no other.
#[test]
fn a_resumed_thread_keeps_its_one_block_in_place_after_a_restart() {
    let (first, second) = across_a_restart("env-restart-same", json!({}));
    assert_eq!(blocks(&first), 1, "{first:#}");
    assert_eq!(blocks(&second), 1, "the block was sent again: {second:#}");
    let before = messages(&first);
    let after = messages(&second);
    // The system message and the first user message (block + "First") are as they were.
    assert_eq!(after[..2], before[..2], "{second:#}");
    assert_eq!(after[2], json!({"role": "assistant", "content": "One."}));
    assert_eq!(after[3], json!({"role": "user", "content": "Second"}));
    assert_eq!(after.len(), 4, "{second:#}");
}

/// Something changed (the approval policy): after the restart the first block stays in place
/// and one new block, saying what changed, opens the second turn's input.
#[test]
fn a_changed_environment_after_a_restart_adds_exactly_one_block() {
    let (first, second) =
        across_a_restart("env-restart-changed", json!({"approvalPolicy": "never"}));
    let sent = block_texts(&first);
    assert_eq!(sent.len(), 1, "{first:#}");
    let resent = block_texts(&second);
    assert_eq!(resent.len(), 2, "{second:#}");
    assert_eq!(resent[0], sent[0], "the first block moved: {second:#}");
    assert_eq!(
        resent[1].0, 3,
        "the new block opens the second input: {second:#}"
    );
    assert!(
        resent[1]
            .1
            .contains("<approval_policy>never</approval_policy>"),
        "{}",
        resent[1].1
    );
    assert_eq!(
        resent[1].1.replace("never", "on-request"),
        sent[0].1,
        "only the approval policy differs"
    );
}
