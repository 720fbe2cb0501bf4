//! Model metadata through the binary (docs: `engine/src/catalog/families.rs`): `model/list`
//! shows the facts of each model's family, a model no family knows gets one `configWarning`,
//! and `model_context_window` in `config.toml` changes the window automatic compaction uses.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::{home_and_workspace, scratch};
use crate::mock_model::{MockModel, Reply, Sse};

/// A `config.toml` selecting `model` of the mock provider (whose table names no context
/// window), with `extra` top-level keys.
fn configure(home: &Path, mock: &MockModel, model: &str, extra: &str) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"{model}\"\n{extra}\n\n[model_providers.mock]\n\
         base_url = \"{}\"\nrequest_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// The `model/list` entry `id` of `page`.
fn entry<'a>(page: &'a Value, id: &str) -> &'a Value {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("no {id} in {page:#}"))
}

/// The efforts an entry lists.
fn efforts(entry: &Value) -> Vec<&str> {
    entry["supportedReasoningEfforts"]
        .as_array()
        .expect("efforts")
        .iter()
        .map(|e| e["reasoningEffort"].as_str().expect("effort"))
        .collect()
}

#[test]
fn model_list_shows_each_family_s_facts_and_the_configured_window() {
    let mock = MockModel::start(Vec::new());
    mock.serve_models(&[
        "gemma3:12b",
        "gpt-oss:20b",
        "mystery-model",
        "qwen2.5-coder:7b",
    ]);
    let home = scratch("metadata-list");
    configure(&home, &mock, "qwen2.5-coder:7b", "");
    let mut client = Client::start(&home);
    let page = client.call("model/list", json!({}));
    let qwen = entry(&page, "qwen2.5-coder:7b");
    let text = qwen["description"].as_str().expect("description");
    assert!(text.contains("Qwen2.5 family"), "{text}");
    assert!(text.contains("32768-token context"), "{text}");
    assert!(text.contains("tools (one call at a time)"), "{text}");
    assert!(
        text.contains("no reasoning") && text.contains("text only"),
        "{text}"
    );
    assert_eq!(qwen["inputModalities"], json!(["text"]), "{qwen}");
    assert!(efforts(qwen).is_empty(), "{qwen}");

    let gemma = entry(&page, "gemma3:12b");
    let text = gemma["description"].as_str().expect("description");
    assert!(
        text.contains("no tools") && text.contains("131072-token context"),
        "{text}"
    );
    assert_eq!(
        gemma["inputModalities"],
        json!(["text", "image"]),
        "{gemma}"
    );

    let oss = entry(&page, "gpt-oss:20b");
    assert!(
        oss["description"]
            .as_str()
            .is_some_and(|t| t.contains(", reasoning,")),
        "{oss}"
    );
    assert_eq!(efforts(oss), ["low", "medium", "high"], "{oss}");
    assert_eq!(oss["defaultReasoningEffort"], json!("medium"), "{oss}");

    let mystery = entry(&page, "mystery-model");
    let text = mystery["description"].as_str().expect("description");
    assert!(
        text.contains("Unknown model family") && text.contains("context window unknown"),
        "{text}"
    );
    client.stop();

    // `model_context_window` and `model_supports_reasoning_summaries` describe the default
    // model.
    configure(
        &home,
        &mock,
        "qwen2.5-coder:7b",
        "model_context_window = 65536\nmodel_supports_reasoning_summaries = true",
    );
    let mut client = Client::start(&home);
    let page = client.call("model/list", json!({}));
    let text = entry(&page, "qwen2.5-coder:7b")["description"]
        .as_str()
        .expect("description")
        .to_owned();
    assert!(text.contains("65536-token context"), "{text}");
    assert!(text.contains(", reasoning,"), "{text}");
    let gemma = entry(&page, "gemma3:12b")["description"].to_string();
    assert!(gemma.contains("131072-token context"), "{gemma}");
    client.stop();
}

#[test]
fn an_unknown_model_gets_one_config_warning() {
    let mock = MockModel::start(
        ["One.", "Two.", "Three."]
            .into_iter()
            .map(Sse::answer)
            .collect(),
    );
    let home = scratch("metadata-unknown");
    configure(&home, &mock, "mystery-model", "");
    let mut client = Client::start(&home);
    let mut seen = Vec::new();
    for text in ["First", "Second"] {
        let thread = thread_id(&client.start_thread(json!({})));
        client.start_turn(&thread, text);
        seen.extend(client.until_turn_completed());
        if text == "First" {
            client.start_turn(&thread, "Again");
            seen.extend(client.until_turn_completed());
        }
    }
    let warnings = params(&seen, "configWarning");
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let summary = warnings[0]["summary"].as_str().expect("summary");
    assert!(summary.contains("mystery-model"), "{summary}");
    assert!(summary.contains("model_context_window"), "{summary}");
    client.stop();

    // A model the table knows gets none.
    let mock = MockModel::start(vec![Sse::answer("One.")]);
    let home = scratch("metadata-known");
    configure(&home, &mock, "qwen3:8b", "");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({})));
    client.start_turn(&thread, "First");
    let seen = client.until_turn_completed();
    assert!(params(&seen, "configWarning").is_empty(), "{seen:#?}");
    client.stop();
}

/// An answer `text` whose call reports `prompt` input tokens (and 100 output tokens).
fn large(text: &str, prompt: i64) -> Reply {
    Reply::Stream(
        Sse::new()
            .text(text)
            .finish("stop")
            .usage(prompt, 100, 0, 0),
    )
}

/// Two turns of a Qwen2.5 model (a 32768-token family) whose first call reports 20,000 input
/// tokens, with `extra` keys: the notifications of the second turn, and how many model calls
/// were made.
fn two_turns(name: &str, extra: &str, replies: Vec<Reply>) -> (Vec<Value>, Vec<Value>, usize) {
    let mock = MockModel::start(replies);
    let (home, workspace) = home_and_workspace(&scratch(name));
    configure(&home, &mock, "qwen2.5-coder:7b", extra);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, "First question.");
    let first = client.until_turn_completed();
    assert_eq!(
        completed_turn(&first)["status"],
        json!("completed"),
        "{first:#?}"
    );
    client.start_turn(&thread, "Second question.");
    let second = client.until_turn_completed();
    assert_eq!(
        completed_turn(&second)["status"],
        json!("completed"),
        "{second:#?}"
    );
    client.stop();
    (first, second, mock.requests().len())
}

/// The `modelContextWindow` of the token usage the turn reported.
fn windows(seen: &[Value]) -> Vec<Value> {
    params(seen, "thread/tokenUsage/updated")
        .iter()
        .map(|u| u["tokenUsage"]["modelContextWindow"].clone())
        .collect()
}

#[test]
fn a_configured_context_window_changes_when_threads_are_compacted() {
    // The family's window: 90% of 32768 is above the 20,100-token context: no compaction.
    let (first, second, calls) = two_turns(
        "metadata-family-window",
        "",
        vec![
            large("First answer.", 20_000),
            Sse::answer("Second answer."),
        ],
    );
    assert_eq!(windows(&first)[0], json!(32768), "{first:#?}");
    assert!(
        params(&second, "thread/compacted").is_empty(),
        "{second:#?}"
    );
    assert_eq!(calls, 2);

    // `model_context_window = 20000`: 90% of it is below the context, so the second turn
    // compacts first.
    let (first, second, calls) = two_turns(
        "metadata-configured-window",
        "model_context_window = 20000",
        vec![
            large("First answer.", 20_000),
            Sse::answer("Summary: a first question."),
            Sse::answer("Second answer."),
        ],
    );
    assert_eq!(windows(&first)[0], json!(20000), "{first:#?}");
    assert_eq!(params(&second, "thread/compacted").len(), 1, "{second:#?}");
    assert_eq!(calls, 3);
}
