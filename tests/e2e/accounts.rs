//! Accounts through the binary: API-key sign-in stored in `auth.json`, used as the bearer token
//! of a provider without `env_key`, never echoed; sign-out; refused sign-in types;
//! `getAuthStatus`; rate limits from the provider's headers.

use std::path::Path;

use serde_json::{Value, json};

use crate::app_server_ws::{App, initialize, open, request, until};
use crate::client::{Client, thread_id};
use crate::common::scratch;
use crate::mock_model::{MockModel, Reply, Sse};

/// The key the tests sign in with; it must never show up where it does not belong.
const KEY: &str = "sk-e2e-0123456789-never-echoed";

/// Writes a `config.toml` whose default provider `mock` (no `env_key`) is served at `base_url`.
fn configure(home: &Path, base_url: &str) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\n\
         name = \"Mock\"\nbase_url = \"{base_url}\"\nrequest_max_retries = 0\n"
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// Every message text in `seen`, for scanning.
fn joined(seen: &[Value]) -> String {
    seen.iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn an_api_key_is_stored_privately_sent_as_bearer_and_never_echoed() {
    let mock = MockModel::start(vec![Reply::Stream(
        Sse::new()
            .text("hello")
            .finish("stop")
            .usage(10, 5, 0, 0)
            .header("x-ratelimit-limit-requests", "200")
            .header("x-ratelimit-remaining-requests", "150")
            .header("x-ratelimit-reset-requests", "1m30s")
            .header("x-ratelimit-limit-tokens", "10000")
            .header("x-ratelimit-remaining-tokens", "9000")
            .header("x-ratelimit-reset-tokens", "600ms"),
    )]);
    let home = scratch("accounts-login");
    configure(&home, &mock.base_url());
    let mut client = Client::start(&home);
    // Everything the server sends, except the one answer that is asked for the key.
    let mut seen = Vec::new();

    let before = client.call("account/read", json!({}));
    assert_eq!(
        before,
        json!({"account": null, "userId": null, "requiresOpenaiAuth": false})
    );
    let limits = client.call("account/rateLimits/read", json!(null));
    assert_eq!(limits["rateLimits"]["primary"], Value::Null, "{limits}");
    assert_eq!(limits["rateLimits"]["limitId"], Value::Null, "{limits}");
    assert_eq!(limits["rateLimitsByLimitId"], Value::Null, "{limits}");
    seen.extend([before, limits]);

    let login = client.call(
        "account/login/start",
        json!({"type": "apiKey", "apiKey": KEY}),
    );
    assert_eq!(login, json!({"type": "apiKey"}));
    let completed = client.notification("account/login/completed");
    assert_eq!(completed["success"], json!(true), "{completed}");
    assert_eq!(completed["loginId"], Value::Null, "{completed}");
    assert_eq!(completed["error"], Value::Null, "{completed}");
    let updated = client.notification("account/updated");
    assert_eq!(updated["authMode"], json!("apikey"), "{updated}");
    seen.extend([login, completed, updated]);

    let auth = home.join("auth.json");
    let stored = std::fs::read_to_string(&auth).expect("auth.json");
    assert!(stored.contains(KEY), "the key is stored");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&auth).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "auth.json mode {mode:o}");
    }

    let account = client.call("account/read", json!({"refreshToken": true}));
    assert_eq!(account["account"], json!({"type": "apiKey"}), "{account}");
    let status = client.call("getAuthStatus", json!({}));
    assert_eq!(status["authMethod"], json!("apikey"), "{status}");
    assert_eq!(status["authToken"], Value::Null, "{status}");
    assert_eq!(status["requiresOpenaiAuth"], json!(false), "{status}");
    let status_no = client.call("getAuthStatus", json!({"includeToken": false}));
    assert_eq!(status_no["authToken"], Value::Null, "{status_no}");
    let with_token = client.call("getAuthStatus", json!({"includeToken": true}));
    assert_eq!(with_token["authToken"], json!(KEY), "{with_token}");
    seen.extend([account, status, status_no]);

    // A provider without env_key sends the stored key.
    let started = client.start_thread(json!({}));
    let thread = thread_id(&started);
    client.start_turn(&thread, "hi");
    let turn = client.until_turn_completed();
    let requests = mock.wait_requests(1);
    let chat = requests
        .iter()
        .find(|r| r.path.ends_with("/chat/completions"))
        .expect("a model call");
    let expected = format!("Bearer {KEY}");
    assert_eq!(chat.header("authorization"), Some(expected.as_str()));
    seen.push(started);
    seen.extend(turn);

    // The headers of that call are the rate limits now.
    let limits = client.call("account/rateLimits/read", json!({}));
    let snapshot = &limits["rateLimits"];
    assert_eq!(snapshot["limitId"], json!("mock"), "{limits}");
    assert_eq!(snapshot["limitName"], json!("Mock"), "{limits}");
    assert_eq!(snapshot["primary"]["usedPercent"], json!(25), "{limits}");
    assert_eq!(
        snapshot["primary"]["windowDurationMins"],
        Value::Null,
        "{limits}"
    );
    assert!(
        snapshot["primary"]["resetsAt"].as_i64().is_some(),
        "{limits}"
    );
    assert_eq!(snapshot["secondary"]["usedPercent"], json!(10), "{limits}");
    assert_eq!(snapshot["rateLimitReachedType"], Value::Null, "{limits}");
    assert_eq!(limits["rateLimitsByLimitId"]["mock"], *snapshot, "{limits}");
    seen.push(limits);

    let logout = client.call("account/logout", json!(null));
    assert_eq!(logout, json!({}));
    let updated = client.notification("account/updated");
    assert_eq!(updated["authMode"], Value::Null, "{updated}");
    assert!(!auth.exists(), "auth.json is removed");
    let after = client.call("account/read", json!({}));
    assert_eq!(after["account"], Value::Null, "{after}");
    let status = client.call("getAuthStatus", json!({"includeToken": true}));
    assert_eq!(
        status,
        json!({"authMethod": null, "authToken": null, "requiresOpenaiAuth": false})
    );
    seen.extend([logout, updated, after, status]);
    seen.extend(client.notifications.drain(..));

    let log = client.stop();
    let out = joined(&seen);
    assert!(!out.contains(KEY), "the key was echoed: {out}");
    assert!(!log.contains(KEY), "the key was logged: {log}");
}

#[test]
fn other_sign_in_types_are_refused_naming_the_supported_one() {
    let home = scratch("accounts-refused");
    let mut client = Client::start(&home);
    for params in [
        json!({"type": "chatgpt"}),
        json!({"type": "chatgptDeviceCode"}),
        json!({"type": "chatgptAuthTokens", "chatgptAccountId": "a", "accessToken": "t"}),
    ] {
        let error = client.call_err("account/login/start", params.clone());
        assert_eq!(error["code"], json!(-32602), "{params}: {error}");
        let message = error["message"].as_str().expect("message");
        assert!(message.contains("`apiKey`"), "{message}");
        assert!(
            message.contains(params["type"].as_str().expect("type")),
            "{message}"
        );
        assert_eq!(
            error["data"]["supportedTypes"],
            json!(["apiKey"]),
            "{error}"
        );
    }
    // A key that cannot be one, without quoting it.
    let error = client.call_err(
        "account/login/start",
        json!({"type": "apiKey", "apiKey": "sk has spaces"}),
    );
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("apiKey"),
        "{error}"
    );
    assert!(!error.to_string().contains("sk has spaces"), "{error}");
    let error = client.call_err(
        "account/login/start",
        json!({"type": "apiKey", "apiKey": ""}),
    );
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("apiKey"),
        "{error}"
    );
    // Wrong type, missing member, unknown type: refused by the schema, naming the member.
    let error = client.call_err(
        "account/login/start",
        json!({"type": "apiKey", "apiKey": 7}),
    );
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("/apiKey"),
        "{error}"
    );
    let error = client.call_err(
        "account/login/start",
        json!({"type": "password", "apiKey": KEY}),
    );
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(!error.to_string().contains(KEY), "{error}");
    assert!(!home.join("auth.json").exists(), "nothing was stored");

    // No sign-in is ever pending.
    let cancel = client.call("account/login/cancel", json!({"loginId": "nope"}));
    assert_eq!(cancel, json!({"status": "notFound"}));
    let error = client.call_err("account/login/cancel", json!({}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("loginId"),
        "{error}"
    );
    let error = client.call_err("getAuthStatus", json!({"includeToken": "yes"}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("includeToken"),
        "{error}"
    );
    client.stop();
}

#[test]
fn a_corrupt_auth_file_is_reported_and_replaced_by_a_new_sign_in() {
    let mock = MockModel::start(Vec::new());
    let home = scratch("accounts-corrupt");
    configure(&home, &mock.base_url());
    std::fs::write(home.join("auth.json"), "{\"OPENAI_API_KEY\": \"sk-half").expect("write");
    let mut client = Client::start(&home);
    for method in ["account/read", "getAuthStatus"] {
        let error = client.call_err(method, json!({}));
        assert_eq!(error["code"], json!(-32603), "{method}: {error}");
        let message = error["message"].as_str().expect("message");
        assert!(message.contains("auth.json"), "{message}");
        assert!(message.contains("account/login/start"), "{message}");
        assert!(!message.contains("sk-half"), "{message}");
    }
    // A model call that would send the stored key fails, saying why, and sends nothing.
    let thread = thread_id(&client.start_thread(json!({})));
    client.start_turn(&thread, "hi");
    let seen = client.until_turn_completed();
    let turn = crate::client::completed_turn(&seen);
    assert_eq!(turn["status"], json!("failed"), "{turn}");
    let message = turn["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("auth.json") && message.contains("stored API key"),
        "{message}"
    );
    assert!(mock.requests().is_empty(), "nothing was sent");
    client.call(
        "account/login/start",
        json!({"type": "apiKey", "apiKey": KEY}),
    );
    let account = client.call("account/read", json!({}));
    assert_eq!(account["account"], json!({"type": "apiKey"}), "{account}");
    client.call("account/logout", json!(null));
    let account = client.call("account/read", json!({}));
    assert_eq!(account["account"], Value::Null, "{account}");
    client.stop();
}

#[test]
fn openai_without_env_key_requires_the_sign_in() {
    let home = scratch("accounts-requires");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"openai\"\n[model_providers.openai]\nbase_url = \"https://api.openai.com/v1\"\n",
    )
    .expect("write config");
    let mut client = Client::start(&home);
    let account = client.call("account/read", json!({}));
    assert_eq!(account["requiresOpenaiAuth"], json!(true), "{account}");
    let status = client.call("getAuthStatus", json!({}));
    assert_eq!(status["requiresOpenaiAuth"], json!(true), "{status}");
    client.stop();
}

#[tokio::test]
async fn sign_in_and_out_are_broadcast_to_every_connection() {
    let home = scratch("accounts-broadcast");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let mut a = open(addr, None).await.expect("upgrade");
    let mut b = open(addr, None).await.expect("upgrade");
    initialize(&mut a).await;
    initialize(&mut b).await;
    let login = request(
        &mut a,
        json!(1),
        "account/login/start",
        json!({"type": "apiKey", "apiKey": KEY}),
    )
    .await;
    assert_eq!(login["result"], json!({"type": "apiKey"}), "{login}");
    let for_a = until(&mut a, "account/updated").await;
    assert!(
        for_a
            .iter()
            .any(|m| m["method"] == json!("account/login/completed")),
        "{for_a:?}"
    );
    let for_b = until(&mut b, "account/updated").await;
    assert_eq!(
        for_b.last().expect("updated")["params"]["authMode"],
        json!("apikey")
    );
    // The other connection signs out; both hear of it.
    let logout = request(&mut b, json!(2), "account/logout", json!(null)).await;
    assert_eq!(logout["result"], json!({}), "{logout}");
    for ws in [&mut a, &mut b] {
        let seen = until(ws, "account/updated").await;
        assert_eq!(
            seen.last().expect("updated")["params"]["authMode"],
            Value::Null
        );
        assert!(!joined(&seen).contains(KEY));
    }
    assert!(!joined(&for_a).contains(KEY) && !joined(&for_b).contains(KEY));
    // The log (at `info`) tells of both, without the key.
    app.wait_for_line("signed out");
    let log = app.stderr();
    assert!(log.contains("signed in with an API key"), "{log}");
    assert!(!log.contains(KEY), "the key was logged: {log}");
    let (status, stdout) = app.terminate();
    assert!(status.success(), "{status:?}");
    assert!(!String::from_utf8_lossy(&stdout).contains(KEY));
}
