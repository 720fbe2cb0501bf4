//! First contact with an open model (docs/providers.md, "Which model a call asks for"): a
//! provider nobody chose a model for never gets the fixture's model; it gets the first of its
//! `models` list, its documented default, or the first model its server lists. `--oss` and
//! `--local-provider` select the local servers, as Codex's flags do.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, thread_id};
use crate::common::scratch;
use crate::mock_model::{MockModel, Recorded, Sse};

/// A fresh home whose `config.toml` is `config`.
fn home(name: &str, config: &str) -> PathBuf {
    let home = scratch(name);
    std::fs::write(home.join("config.toml"), config).expect("write config");
    home
}

/// The model calls among `requests` (chat completions).
fn calls(requests: &[Recorded]) -> Vec<&Recorded> {
    requests
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect()
}

/// How many `GET …/models` `requests` holds.
fn model_lists(requests: &[Recorded]) -> usize {
    requests
        .iter()
        .filter(|r| r.method == "GET" && r.path.ends_with("/models"))
        .count()
}

/// Starts a thread in `home` and runs a turn on it; returns the `thread/start` answer and the
/// completed turn.
fn one_turn(client: &mut Client, home: &Path, params: Value) -> (Value, Value) {
    let mut params = params;
    params["cwd"] = json!(home);
    let started = client.start_thread(params);
    client.start_turn(&thread_id(&started), "Hello");
    let seen = client.until_turn_completed();
    (started, completed_turn(&seen).clone())
}

/// docs/providers.md: `model_provider = "ollama"` with no `model` anywhere: the thread's model
/// is left to the server (`""`, never `fixture`), and the call asks for the first model
/// `GET /models` lists; the answer is kept, so the next turn asks no more.
#[test]
fn a_built_in_provider_without_a_model_asks_for_the_servers_first_model() {
    let mock = MockModel::start(vec![Sse::answer("Hi."), Sse::answer("Again.")]);
    mock.serve_models(&["qwen2.5-coder:7b", "llama3.2"]);
    let home = home(
        "open-first-served",
        &format!(
            "model_provider = \"ollama\"\n[model_providers.ollama]\nbase_url = \"{}\"\n",
            mock.base_url()
        ),
    );
    let mut client = Client::start(&home);
    let (started, turn) = one_turn(&mut client, &home, json!({}));
    assert_eq!(started["modelProvider"], json!("ollama"), "{started}");
    assert_eq!(started["model"], json!(""), "{started}");
    assert_eq!(turn["status"], json!("completed"), "{turn}");
    client.start_turn(&thread_id(&started), "Again");
    client.until_turn_completed();
    client.stop();
    let requests = mock.wait_requests(3);
    let sent: Vec<&Value> = calls(&requests).iter().map(|r| &r.body["model"]).collect();
    assert_eq!(
        sent,
        vec![&json!("qwen2.5-coder:7b"), &json!("qwen2.5-coder:7b")]
    );
    assert_eq!(model_lists(&requests), 1, "{requests:?}");
}

/// docs/providers.md: the first of a provider's `models` list is its default (no `/models`
/// question), and a thread moved to another provider by `thread/start`'s `modelProvider` does
/// not take the fixture's model along; the built-in `openai` provider's documented default is
/// the reference's.
#[test]
fn a_listed_model_is_the_default_and_a_thread_moved_to_a_provider_leaves_fixture_behind() {
    let mock = MockModel::start(vec![Sse::answer("Listed."), Sse::answer("Moved.")]);
    mock.serve_models(&["served-first"]);
    let home = home(
        "open-listed",
        &format!(
            "[model_providers.local]\nbase_url = \"{url}\"\nmodels = [\"listed-first\", \"other\"]\n\
             [model_providers.lmstudio]\nbase_url = \"{url}\"\n",
            url = mock.base_url()
        ),
    );
    let mut client = Client::start(&home);
    let (local, turn) = one_turn(&mut client, &home, json!({"modelProvider": "local"}));
    assert_eq!(turn["status"], json!("completed"), "{turn}");
    assert_eq!(local["model"], json!(""), "{local}");
    let (lmstudio, turn) = one_turn(&mut client, &home, json!({"modelProvider": "lmstudio"}));
    assert_eq!(turn["status"], json!("completed"), "{turn}");
    assert_eq!(lmstudio["model"], json!(""), "{lmstudio}");
    let openai = client.start_thread(json!({"cwd": home, "modelProvider": "openai"}));
    assert_eq!(openai["model"], json!("gpt-6.2-sol"), "{openai}");
    client.stop();
    let requests = mock.wait_requests(3);
    let sent: Vec<&Value> = calls(&requests).iter().map(|r| &r.body["model"]).collect();
    assert_eq!(sent, vec![&json!("listed-first"), &json!("served-first")]);
    assert_eq!(
        model_lists(&requests),
        1,
        "only lmstudio asked: {requests:?}"
    );

    // With `model_provider = "local"`, new threads name the listed model at once.
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_provider = \"local\"\n[model_providers.local]\nbase_url = \"{}\"\n\
             models = [\"listed-first\"]\n",
            mock.base_url()
        ),
    )
    .expect("rewrite config");
    let mut client = Client::start(&home);
    let started = client.start_thread(json!({"cwd": home}));
    assert_eq!(started["model"], json!("listed-first"), "{started}");
    client.stop();
}

/// docs/providers.md: `--oss` selects Ollama and `--local-provider lmstudio` LM Studio, as
/// Codex's flags do (here at loopback mocks standing in for them).
#[test]
fn oss_and_local_provider_select_the_local_servers() {
    let ollama = MockModel::start(vec![Sse::answer("From Ollama.")]);
    ollama.serve_models(&["gpt-oss:20b"]);
    let lmstudio = MockModel::start(vec![Sse::answer("From LM Studio.")]);
    lmstudio.serve_models(&["openai/gpt-oss-20b"]);
    let home = home(
        "open-oss",
        &format!(
            "[model_providers.ollama]\nbase_url = \"{}\"\n[model_providers.lmstudio]\n\
             base_url = \"{}\"\n",
            ollama.base_url(),
            lmstudio.base_url()
        ),
    );
    for (args, mock, id, model) in [
        (&["--oss"][..], &ollama, "ollama", "gpt-oss:20b"),
        (
            &["--oss", "--local-provider", "lmstudio"][..],
            &lmstudio,
            "lmstudio",
            "openai/gpt-oss-20b",
        ),
    ] {
        let mut client = Client::start_with(&home, args);
        let (started, turn) = one_turn(&mut client, &home, json!({}));
        assert_eq!(started["modelProvider"], json!(id), "{args:?}: {started}");
        assert_eq!(turn["status"], json!("completed"), "{args:?}: {turn}");
        client.stop();
        let requests = mock.wait_requests(2);
        assert_eq!(calls(&requests)[0].body["model"], json!(model), "{args:?}");
    }
}

/// docs/providers.md: a server that lists no model fails the turn saying so and what to set,
/// and still never gets `fixture`.
#[test]
fn a_server_listing_no_model_fails_the_turn_saying_what_to_set() {
    let mock = MockModel::start(Vec::new());
    mock.serve_models(&[]);
    let home = home(
        "open-none-served",
        &format!(
            "model_provider = \"ollama\"\n[model_providers.ollama]\nbase_url = \"{}\"\n",
            mock.base_url()
        ),
    );
    let mut client = Client::start(&home);
    let (_, turn) = one_turn(&mut client, &home, json!({}));
    client.stop();
    assert_eq!(turn["status"], json!("failed"), "{turn}");
    let message = turn["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("lists no model") && message.contains("set `model`"),
        "{message}"
    );
    let requests = mock.requests();
    assert!(calls(&requests).is_empty(), "{requests:?}");
}
