//! What a model call carries besides the conversation, on both wire APIs, through the binary
//! against the mock model (docs/turn-fidelity.md, "What the model is sent"): agentwire's own
//! base instructions unless others are configured, the developer instructions, the project
//! docs (`AGENTS.md`, or `AGENTS.override.md` in its place, root first) and the environment
//! context block, sent before the first turn's input and again only when it changed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, thread_id};
use crate::common::{repo, scratch};
use crate::mock_model::{MockModel, Sse};
use crate::mock_responses::Responses;

/// What opens the project-doc message the engine adds.
const DOCS_PREFIX: &str = "# AGENTS.md instructions for ";
/// What opens an environment context block.
const BLOCK_PREFIX: &str = "<environment_context>";

/// Whether `text` is context the engine adds as a user message (project docs, environment).
fn is_context_text(text: Option<&str>) -> bool {
    text.is_some_and(|t| t.starts_with(DOCS_PREFIX) || t.starts_with(BLOCK_PREFIX))
}

/// `text` without the context the engine put before it on the chat wire (project docs and
/// environment context blocks, each followed by a blank line).
fn without_context(text: &str) -> &str {
    let mut rest = text;
    loop {
        let close = if rest.starts_with(DOCS_PREFIX) {
            "</INSTRUCTIONS>\n\n"
        } else if rest.starts_with(BLOCK_PREFIX) {
            "</environment_context>\n\n"
        } else {
            return rest;
        };
        match rest.find(close) {
            Some(at) => rest = &rest[at + close.len()..],
            None => return "",
        }
    }
}

/// The conversation a chat request carries: its `messages` without the context the engine
/// adds (the system message; project docs and environment context blocks, which go at the
/// start of the user message they precede).
pub fn chat_conversation(body: &Value) -> Vec<Value> {
    let mut conversation = Vec::new();
    for message in body["messages"].as_array().expect("messages") {
        if message["role"] == json!("system") {
            continue;
        }
        let mut message = message.clone();
        match &message["content"] {
            Value::String(text) if is_context_text(Some(text)) => {
                let rest = without_context(text).to_owned();
                if rest.is_empty() {
                    continue;
                }
                message["content"] = json!(rest);
            }
            Value::Array(parts) => {
                let kept: Vec<Value> = parts
                    .iter()
                    .filter(|p| !is_context_text(p["text"].as_str()))
                    .cloned()
                    .collect();
                message["content"] = Value::Array(kept);
            }
            _ => {}
        }
        conversation.push(message);
    }
    conversation
}

/// The conversation a Responses request carries: its `input` without the context the engine
/// adds (developer messages, project docs, environment context blocks).
pub fn responses_conversation(body: &Value) -> Vec<Value> {
    body["input"]
        .as_array()
        .expect("input")
        .iter()
        .filter(|i| {
            i["role"] != json!("developer") && !is_context_text(i["content"][0]["text"].as_str())
        })
        .cloned()
        .collect()
}

/// agentwire's built-in base instructions, as the engine embeds them.
pub fn built_in() -> String {
    std::fs::read_to_string(repo().join("engine/src/turns/base_instructions.md"))
        .expect("read the built-in base instructions")
}

/// A home beside a repository `repo` (it holds `.git`) with `sub/deep` inside: `AGENTS.md` at
/// the root, `AGENTS.md` and `AGENTS.override.md` in `sub`, `AGENTS.md` in `sub/deep`, and a
/// directory `extra` outside it. Returns (home, repo, extra).
fn project(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let root = scratch(name);
    let home = root.join("home");
    let repo = root.join("repo");
    let extra = root.join("extra");
    for dir in [&home, &repo.join(".git"), &repo.join("sub/deep"), &extra] {
        std::fs::create_dir_all(dir).expect("create dir");
    }
    for (path, text) in [
        ("AGENTS.md", "Root rules."),
        ("sub/AGENTS.md", "Shadowed by the override."),
        ("sub/AGENTS.override.md", "Sub override."),
        ("sub/deep/AGENTS.md", "Deep rules."),
    ] {
        std::fs::write(repo.join(path), text).expect("write doc");
    }
    (home, repo, extra)
}

/// A `config.toml` for `mock` at `base_url` speaking `wire`, a workspace-write sandbox whose
/// roots are `cwd` and `extra` alone, developer instructions and `extra_keys`.
fn configure(home: &Path, base_url: &str, wire: &str, extra: &Path, extra_keys: &str) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\napproval_policy = \"on-request\"\n\
         sandbox_mode = \"workspace-write\"\ndeveloper_instructions = \"Answer briefly.\"\n\
         {extra_keys}\n\n[sandbox_workspace_write]\nwritable_roots = [\"{}\"]\n\
         exclude_tmpdir_env_var = true\nexclude_slash_tmp = true\n\n[model_providers.mock]\n\
         base_url = \"{base_url}\"\nwire_api = \"{wire}\"\nrequest_max_retries = 0\n",
        extra.display()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// The project-doc message for `cwd` carrying `docs`.
fn docs_message(cwd: &Path, docs: &str) -> String {
    format!(
        "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\n{docs}\n</INSTRUCTIONS>",
        cwd.display()
    )
}

/// The environment context block for `cwd` with writable roots `roots`, network restricted,
/// `approval` and `date`.
fn environment(cwd: &Path, roots: &[&Path], approval: &str, date: &str) -> String {
    let roots: String = roots
        .iter()
        .map(|root| format!("    <root>{}</root>\n", root.display()))
        .collect();
    format!(
        "<environment_context>\n  <cwd>{}</cwd>\n  <shell>bash</shell>\n  \
         <sandbox_mode>workspace-write</sandbox_mode>\n  <writable_roots>\n{roots}  \
         </writable_roots>\n  <network_access>restricted</network_access>\n  \
         <approval_policy>{approval}</approval_policy>\n  <current_date>{date}</current_date>\n  \
         <timezone>UTC</timezone>\n</environment_context>",
        cwd.display()
    )
}

/// The `<current_date>` a block carries.
fn sent_date(block: &str) -> String {
    let start = block.find("<current_date>").expect("a date") + "<current_date>".len();
    block[start..start + 10].to_owned()
}

/// Runs a turn with `text` and `overrides`; checks it completed.
fn turn(client: &mut Client, thread: &str, text: &str, overrides: Value) {
    client.start_turn_with(thread, text, overrides);
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
}

/// A chat message of `role` with `content`.
fn chat(role: &str, content: &str) -> Value {
    json!({"role": role, "content": content})
}

/// docs/turn-fidelity.md: on the chat wire, with no base instructions configured, a call opens
/// with agentwire's own and the developer instructions (one system message), then the project
/// docs of every directory from the repository root down to `cwd` (the override in place of
/// `sub/AGENTS.md`); the environment context block goes before the first turn's input and
/// stays there; a turn whose approval policy or `cwd` changed gets a new block before its
/// input, and a turn where nothing changed none (docs/providers.md: on the chat wire the
/// context starts the user message it precedes).
#[test]
fn chat_calls_carry_instructions_docs_and_an_environment_block_sent_again_on_change() {
    let mock = MockModel::start(
        ["One.", "Two.", "Three.", "Four.", "Five."]
            .into_iter()
            .map(Sse::answer)
            .collect(),
    );
    let (home, repo, extra) = project("context-chat");
    configure(&home, &mock.base_url(), "chat", &extra, "");
    let deep = repo.join("sub/deep");
    let sub = repo.join("sub");
    let mut client = Client::start(&home);
    let started = client.start_thread(json!({"cwd": deep}));
    assert_eq!(
        started["instructionSources"],
        json!([
            repo.join("AGENTS.md"),
            sub.join("AGENTS.override.md"),
            deep.join("AGENTS.md")
        ]),
        "{started}"
    );
    let thread = thread_id(&started);
    turn(&mut client, &thread, "First", json!({}));
    turn(&mut client, &thread, "Second", json!({}));
    turn(
        &mut client,
        &thread,
        "Third",
        json!({"approvalPolicy": "never"}),
    );
    turn(&mut client, &thread, "Fourth", json!({}));
    turn(&mut client, &thread, "Fifth", json!({"cwd": sub}));
    client.stop();

    let bodies: Vec<Value> = mock.wait_requests(5).into_iter().map(|r| r.body).collect();
    let messages = |n: usize| bodies[n]["messages"].as_array().expect("messages").clone();
    let first = messages(0);
    let date = sent_date(first[1]["content"].as_str().expect("block"));
    // One system message: templates that allow no second one (Gemma's) accept the call.
    let system = chat("system", &format!("{}\n\nAnswer briefly.", built_in()));
    // The context goes at the start of the user message it precedes, so user and assistant
    // messages alternate as strict templates (Gemma's, Mistral's) insist.
    let joined = |parts: &[&str]| parts.join("\n\n");
    let deep_docs = docs_message(&deep, "Root rules.\n\nSub override.\n\nDeep rules.");
    let deep_block = environment(&deep, &[&deep, &extra], "on-request", &date);
    let mut conversation = vec![
        system.clone(),
        chat("user", &joined(&[&deep_docs, &deep_block, "First"])),
    ];
    assert_eq!(first, conversation);
    let never = environment(&deep, &[&deep, &extra], "never", &date);
    for (n, (answer, next)) in [
        ("One.", "Second".to_owned()),
        ("Two.", joined(&[&never, "Third"])),
        ("Three.", "Fourth".to_owned()),
    ]
    .into_iter()
    .enumerate()
    {
        conversation.push(chat("assistant", answer));
        conversation.push(chat("user", &next));
        assert_eq!(messages(n + 1), conversation, "call {}", n + 2);
    }
    // A new `cwd`: its docs open the conversation, and a new block says where the tools now
    // run.
    let sub_docs = docs_message(&sub, "Root rules.\n\nSub override.");
    conversation[1] = chat("user", &joined(&[&sub_docs, &deep_block, "First"]));
    conversation.push(chat("assistant", "Four."));
    conversation.push(chat(
        "user",
        &joined(&[&environment(&sub, &[&sub, &extra], "never", &date), "Fifth"]),
    ));
    assert_eq!(messages(4), conversation);
}

/// The input item of a Responses call for a message of `role` with `text`.
fn item(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})
}

/// docs/turn-fidelity.md: on the Responses wire, as the reference sends them, the base
/// instructions are the first `developer` input item (no `instructions` member), the developer
/// instructions the second, then the project docs and the environment context as `user` items,
/// then the conversation; a changed environment gets a new block before the turn's input.
#[test]
fn responses_calls_carry_the_same_context_as_input_items() {
    let mock = MockModel::start(vec![
        Responses::answer("One."),
        Responses::answer("Two."),
        Responses::answer("Three."),
    ]);
    let (home, repo, extra) = project("context-responses");
    configure(&home, &mock.base_url(), "responses", &extra, "");
    let deep = repo.join("sub/deep");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": deep})));
    turn(&mut client, &thread, "First", json!({}));
    turn(&mut client, &thread, "Second", json!({}));
    turn(
        &mut client,
        &thread,
        "Third",
        json!({"approvalPolicy": "untrusted"}),
    );
    client.stop();

    let bodies: Vec<Value> = mock.wait_requests(3).into_iter().map(|r| r.body).collect();
    for body in &bodies {
        assert!(body.get("instructions").is_none(), "{body}");
    }
    let input = |n: usize| bodies[n]["input"].as_array().expect("input").clone();
    let first = input(0);
    let date = sent_date(first[3]["content"][0]["text"].as_str().expect("block"));
    let opening = vec![
        item("developer", &built_in()),
        item("developer", "Answer briefly."),
        item(
            "user",
            &docs_message(&deep, "Root rules.\n\nSub override.\n\nDeep rules."),
        ),
        item(
            "user",
            &environment(&deep, &[&deep, &extra], "on-request", &date),
        ),
        item("user", "First"),
    ];
    assert_eq!(first, opening);
    let answer = |text: &str| {
        json!({"type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": text}]})
    };
    let second = [
        opening.clone(),
        vec![answer("One."), item("user", "Second")],
    ]
    .concat();
    assert_eq!(input(1), second);
    let third = [
        second,
        vec![
            answer("Two."),
            item(
                "user",
                &environment(&deep, &[&deep, &extra], "untrusted", &date),
            ),
            item("user", "Third"),
        ],
    ]
    .concat();
    assert_eq!(input(2), third);
}

/// The content of the first system message of a chat call, if it has one.
fn system(body: &Value) -> Option<String> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["role"] == json!("system"))
        .and_then(|m| m["content"].as_str())
        .map(str::to_owned)
}

/// Whether a chat call carries an environment context block.
fn has_block(body: &Value) -> bool {
    body["messages"]
        .to_string()
        .contains("<environment_context>")
}

/// docs/turn-fidelity.md: `model_instructions_file` replaces the built-in base instructions
/// (and `instructions`), `baseInstructions` of `thread/start` replaces both, an empty
/// `baseInstructions` sends none, and `include_environment_context = false` sends no block; a
/// `model_instructions_file` that cannot be read is a `configWarning` naming it, and the
/// built-in instructions are sent.
#[test]
fn configured_base_instructions_replace_ours_and_the_block_can_be_turned_off() {
    let mock = MockModel::start(
        ["A.", "B.", "C.", "D."]
            .into_iter()
            .map(Sse::answer)
            .collect(),
    );
    let (home, repo, extra) = project("context-configured");
    std::fs::write(home.join("prompt.md"), "Instructions from the file.").expect("prompt");
    configure(
        &home,
        &mock.base_url(),
        "chat",
        &extra,
        "instructions = \"From instructions.\"\nmodel_instructions_file = \"prompt.md\"\n\
         include_environment_context = false",
    );
    let mut client = Client::start(&home);
    for params in [
        json!({"cwd": repo}),
        json!({"cwd": repo, "baseInstructions": "From thread/start."}),
        json!({"cwd": repo, "baseInstructions": ""}),
    ] {
        let thread = thread_id(&client.start_thread(params));
        turn(&mut client, &thread, "Hello", json!({}));
    }
    client.stop();
    let bodies: Vec<Value> = mock.wait_requests(3).into_iter().map(|r| r.body).collect();
    assert_eq!(
        system(&bodies[0]).as_deref(),
        Some("Instructions from the file.\n\nAnswer briefly.")
    );
    assert_eq!(
        system(&bodies[1]).as_deref(),
        Some("From thread/start.\n\nAnswer briefly.")
    );
    assert_eq!(
        system(&bodies[2]).as_deref(),
        Some("Answer briefly."),
        "no base instructions: the developer instructions alone"
    );
    assert!(!bodies.iter().any(has_block), "{bodies:?}");

    // A file that is not there: a warning naming it, and our own instructions.
    configure(
        &home,
        &mock.base_url(),
        "chat",
        &extra,
        "model_instructions_file = \"missing.md\"",
    );
    let mut client = Client::start(&home);
    client.call("config/read", json!({}));
    let warning = client
        .backlog()
        .into_iter()
        .find(|n| n["method"] == json!("configWarning"))
        .expect("a configWarning");
    let summary = warning["params"]["summary"].as_str().expect("summary");
    assert!(
        summary.contains("model_instructions_file") && summary.contains("missing.md"),
        "{warning}"
    );
    let thread = thread_id(&client.start_thread(json!({"cwd": repo})));
    turn(&mut client, &thread, "Hello", json!({}));
    client.stop();
    let body = &mock.wait_requests(4)[3].body;
    assert_eq!(
        system(body),
        Some(format!("{}\n\nAnswer briefly.", built_in()))
    );
    assert!(has_block(body), "{body}");
}
