//! The model catalog through the binary: `model/list` from config and the provider's own
//! `GET /models` (cached; a hanging server does not hang the call), pagination,
//! `collaborationMode/list` behind `experimentalApi`, `app/list`, and a turn's
//! `collaborationMode` reaching the model request.

use std::net::TcpListener;
use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::scratch;
use crate::mock_model::{MockModel, Sse};
use crate::model_context::built_in;

/// Writes `config.toml`: default provider `mock` at `base_url` with model `model` and the
/// `models` list `models` (TOML).
fn configure(home: &Path, base_url: &str, model: &str, models: &str) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"{model}\"\n\n[model_providers.mock]\n\
         base_url = \"{base_url}\"\nrequest_max_retries = 0\nmodels = {models}\n"
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// The `id`s of a `model/list` page.
fn ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|m| m["id"].as_str().expect("id").to_owned())
        .collect()
}

#[test]
fn model_list_merges_config_models_with_the_servers_list_and_caches_it() {
    let mock = MockModel::start(Vec::new());
    mock.serve_models(&["served-z", "cfg-b", "served-a"]);
    let home = scratch("catalog-models");
    configure(
        &home,
        &mock.base_url(),
        "cfg-b",
        r#"["cfg-a", { id = "cfg-b", display_name = "Model B", reasoning_efforts = ["low", "high"] }, { id = "secret", hidden = true }]"#,
    );
    let mut client = Client::start(&home);
    let page = client.call("model/list", json!({}));
    assert_eq!(
        ids(&page),
        ["cfg-a", "cfg-b", "served-a", "served-z"],
        "{page}"
    );
    assert_eq!(page["nextCursor"], Value::Null, "{page}");
    let b = &page["data"][1];
    assert_eq!(b["displayName"], json!("Model B"), "{b}");
    assert_eq!(b["isDefault"], json!(true), "{b}");
    assert_eq!(b["hidden"], json!(false), "{b}");
    assert_eq!(b["defaultReasoningEffort"], json!("low"), "{b}");
    let efforts: Vec<&Value> = b["supportedReasoningEfforts"]
        .as_array()
        .expect("efforts")
        .iter()
        .map(|e| &e["reasoningEffort"])
        .collect();
    assert_eq!(efforts, [&json!("low"), &json!("high")], "{b}");
    let a = &page["data"][0];
    assert_eq!(a["isDefault"], json!(false), "{a}");
    assert_eq!(a["supportedReasoningEfforts"], json!([]), "{a}");

    let hidden = client.call("model/list", json!({"includeHidden": true}));
    assert!(ids(&hidden).contains(&"secret".to_owned()), "{hidden}");
    let secret = hidden["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|m| m["id"] == json!("secret"))
        .expect("secret");
    assert_eq!(secret["hidden"], json!(true), "{secret}");

    // Pages of two, then the rest; the cursor walks the same list.
    let first = client.call("model/list", json!({"limit": 2}));
    assert_eq!(ids(&first), ["cfg-a", "cfg-b"], "{first}");
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let second = client.call("model/list", json!({"limit": 2, "cursor": cursor}));
    assert_eq!(ids(&second), ["served-a", "served-z"], "{second}");
    assert_eq!(second["nextCursor"], Value::Null, "{second}");

    // The server was asked once: the later calls used the cache.
    let listed = mock
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path == "/v1/models")
        .count();
    assert_eq!(listed, 1);
    // Signing in forgets the cached list; the server is asked again, with the stored key.
    client.call(
        "account/login/start",
        json!({"type": "apiKey", "apiKey": "sk-catalog"}),
    );
    let again = client.call("model/list", json!({}));
    assert_eq!(ids(&again), ids(&page), "{again}");
    let lists: Vec<_> = mock
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path == "/v1/models")
        .collect();
    assert_eq!(lists.len(), 2);
    assert_eq!(lists[0].header("authorization"), None);
    assert_eq!(lists[1].header("authorization"), Some("Bearer sk-catalog"));

    // Bad input names the field.
    let error = client.call_err("model/list", json!({"cursor": "not-a-cursor"}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("cursor"),
        "{error}"
    );
    let error = client.call_err("model/list", json!({"modelProvider": "nope"}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(
        message.contains("modelProvider") && message.contains("`mock`"),
        "{message}"
    );
    let error = client.call_err("model/list", json!({"limit": "ten"}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("/limit"),
        "{error}"
    );
    let error = client.call_err("model/list", json!({"includeHidden": 1}));
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("/includeHidden"),
        "{error}"
    );

    // The fixture provider, asked for by name, lists its model (not the default here).
    let fixture = client.call("model/list", json!({"modelProvider": "fixture"}));
    assert_eq!(ids(&fixture), ["fixture"], "{fixture}");
    assert_eq!(fixture["data"][0]["isDefault"], json!(false), "{fixture}");
    client.stop();
}

#[test]
fn a_hanging_models_endpoint_leaves_its_models_out_without_hanging_the_call() {
    // Accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let home = scratch("catalog-hanging");
    configure(
        &home,
        &format!("http://127.0.0.1:{port}/v1"),
        "listed",
        r#"["listed", "also-listed"]"#,
    );
    let mut client = Client::start(&home);
    let page = client.call("model/list", json!({}));
    assert_eq!(ids(&page), ["listed", "also-listed"], "{page}");
    assert_eq!(page["data"][0]["isDefault"], json!(true), "{page}");
    let warning = client.notification("warning");
    let message = warning["message"].as_str().expect("message");
    assert!(message.contains("did not answer within"), "{message}");
    assert!(message.contains("mock"), "{message}");
    let log = client.stop();
    assert!(
        log.contains("listing the provider's models failed"),
        "{log}"
    );
}

#[test]
fn the_fixture_default_lists_its_model_as_the_default() {
    let home = scratch("catalog-fixture");
    let mut client = Client::start(&home);
    let page = client.call("model/list", json!({}));
    assert_eq!(ids(&page), ["fixture"], "{page}");
    assert_eq!(page["data"][0]["isDefault"], json!(true), "{page}");
    assert_eq!(page["data"][0]["model"], json!("fixture"), "{page}");
    client.stop();
}

#[test]
fn collaboration_modes_need_the_experimental_api() {
    let home = scratch("catalog-modes");
    let mut plain = Client::start(&home);
    let error = plain.call_err("collaborationMode/list", json!({}));
    assert_eq!(error["code"], json!(-32600), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("experimentalApi"),
        "{error}"
    );
    plain.stop();

    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));
    let modes = client.call("collaborationMode/list", json!({}));
    let names: Vec<&Value> = modes["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|m| &m["mode"])
        .collect();
    assert_eq!(names, [&json!("default"), &json!("plan")], "{modes}");
    assert_eq!(modes["data"][1]["name"], json!("Plan"), "{modes}");
    assert_eq!(modes["data"][1]["model"], Value::Null, "{modes}");
    client.stop();
}

#[test]
fn app_list_is_honestly_empty() {
    let home = scratch("catalog-apps");
    let mut client = Client::start(&home);
    let apps = client.call("app/list", json!({}));
    assert_eq!(apps, json!({"data": [], "nextCursor": null}));
    let apps = client.call("app/list", json!({"limit": 5, "forceRefetch": true}));
    assert_eq!(apps["data"], json!([]), "{apps}");
    let error = client.call_err("app/list", json!({"cursor": "bogus"}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("cursor"),
        "{error}"
    );
    let error = client.call_err("app/list", json!({"limit": -1}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("/limit"),
        "{error}"
    );
    client.stop();
}

#[test]
fn a_turns_collaboration_mode_reaches_the_model_request() {
    let mock = MockModel::start(vec![
        Sse::answer("one"),
        Sse::answer("two"),
        Sse::answer("three"),
    ]);
    let home = scratch("catalog-turn-mode");
    configure(&home, &mock.base_url(), "mock-model", "[]");

    // Without the capability the experimental member is refused, naming it.
    let mut plain = Client::start(&home);
    let thread = thread_id(&plain.start_thread(json!({})));
    let error = plain.call_err(
        "turn/start",
        json!({
            "threadId": thread,
            "input": [{"type": "text", "text": "hi"}],
            "collaborationMode": {"mode": "plan", "settings": {"model": "other"}}
        }),
    );
    assert_eq!(error["code"], json!(-32600), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(
        message.contains("collaborationMode") && message.contains("experimentalApi"),
        "{message}"
    );
    plain.stop();

    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));
    let thread = thread_id(&client.start_thread(json!({})));
    // Plan mode on another model: built-in plan instructions (`null`), effort set.
    client.start_turn_with(
        &thread,
        "plan it",
        json!({"model": "ignored", "collaborationMode": {"mode": "plan", "settings": {
            "model": "planner-model", "reasoning_effort": "low", "developer_instructions": null
        }}}),
    );
    client.until_turn_completed();
    // Back to default: effort cleared, own instructions set.
    client.start_turn_with(
        &thread,
        "do it",
        json!({"collaborationMode": {"mode": "default", "settings": {
            "model": "mock-model", "reasoning_effort": null, "developer_instructions": "Be brief."
        }}}),
    );
    client.until_turn_completed();
    // Absent settings keep what the last turn set.
    client.start_turn_with(
        &thread,
        "again",
        json!({"collaborationMode": {"mode": "default", "settings": {"model": "mock-model"}}}),
    );
    client.until_turn_completed();

    let requests = mock.wait_requests(3);
    let chats: Vec<&Value> = requests
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .map(|r| &r.body)
        .collect();
    assert_eq!(chats.len(), 3);
    assert_eq!(chats[0]["model"], json!("planner-model"), "{}", chats[0]);
    assert_eq!(chats[0]["reasoning_effort"], json!("low"), "{}", chats[0]);
    // agentwire's own base instructions, then the mode's developer instructions, in the one
    // system message.
    let system = chats[0]["messages"][0].clone();
    assert_eq!(system["role"], json!("system"), "{system}");
    let text = system["content"].as_str().expect("content");
    assert!(text.starts_with(&format!("{}\n\n", built_in())), "{system}");
    assert!(text.contains("plan mode"), "{system}");

    assert_eq!(chats[1]["model"], json!("mock-model"), "{}", chats[1]);
    assert!(chats[1].get("reasoning_effort").is_none(), "{}", chats[1]);
    assert_eq!(
        chats[1]["messages"][0],
        json!({"role": "system", "content": format!("{}\n\nBe brief.", built_in())})
    );

    assert_eq!(chats[2]["model"], json!("mock-model"), "{}", chats[2]);
    assert!(chats[2].get("reasoning_effort").is_none(), "{}", chats[2]);
    assert_eq!(
        chats[2]["messages"][0],
        json!({"role": "system", "content": format!("{}\n\nBe brief.", built_in())})
    );
    client.stop();
}
