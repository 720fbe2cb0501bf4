//! Providers, features, settings, diagnostics and feedback through the binary:
//! `modelProvider/list|config/write|default/set|capabilities/read`,
//! `experimentalFeature/list|enablement/set`, `permissionProfile/list`,
//! `thread/settings/update` (with `thread/settings/updated`), `turn/settings/update`,
//! `server/diagnostics` and `feedback/save`. Each test has its own `AGENTWIRE_HOME`; what must
//! survive a restart is read back from a second server on the same home.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{home_and_workspace, scratch};
use crate::mock_model::{End, MockModel, Reply, Sse};

/// A server on `home` that offers the experimental API, with `args` after `app-server`.
fn experimental(home: &Path, args: &[&str]) -> Client {
    let mut client = Client::spawn_with(home, args);
    let answer = client.request(
        "initialize",
        json!({"clientInfo": {"name": "e2e", "version": "0.0.1"},
               "capabilities": {"experimentalApi": true}}),
    );
    assert!(answer.is_ok(), "initialize failed: {answer:?}");
    client.send(&json!({"method": "initialized"}));
    client
}

/// The provider `id` of a `modelProvider/list` answer.
fn provider<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["data"]
        .as_array()
        .and_then(|data| data.iter().find(|p| p["id"] == json!(id)))
        .unwrap_or_else(|| panic!("no provider {id} in {list}"))
}

/// The config write error code of a refusal.
fn write_code(error: &Value) -> &Value {
    &error["data"]["config_write_error_code"]
}

#[test]
fn providers_are_listed_added_edited_and_made_the_default_across_a_restart() {
    let home = scratch("providers");
    let mut client = Client::start(&home);
    let list = client.call("modelProvider/list", json!({}));
    assert_eq!(list["defaultProviderId"], json!("fixture"), "{list}");
    assert_eq!(list["canChangeDefault"], json!(true), "{list}");
    assert_eq!(
        provider(&list, "openai")["settings"],
        json!({"type": "openai"})
    );
    assert_eq!(provider(&list, "openai")["canEdit"], json!(false));
    let ollama = provider(&list, "ollama");
    assert_eq!(
        ollama["baseUrl"],
        json!("http://localhost:11434/v1"),
        "{ollama}"
    );
    assert_eq!(
        ollama["settings"],
        json!({"type": "customGateway", "auth": {"mode": "none"}})
    );
    assert_eq!(provider(&list, "fixture")["baseUrl"], Value::Null);

    // A new gateway: its id comes from its name; it lands in the user's config.toml.
    let written = client.call(
        "modelProvider/config/write",
        json!({"settings": {"type": "customGateway", "name": "My GW",
                            "baseUrl": "http://127.0.0.1:9/v1", "envKey": "MY_GW_KEY"}}),
    );
    let added = &written["provider"];
    assert_eq!(added["id"], json!("my-gw"), "{written}");
    assert_eq!(added["name"], json!("My GW"));
    assert_eq!(added["canEdit"], json!(true));
    assert_eq!(added["baseUrl"], json!("http://127.0.0.1:9/v1"));
    assert_eq!(
        added["settings"]["auth"],
        json!({"mode": "environmentVariable", "envKey": "MY_GW_KEY"})
    );
    let config = std::fs::read_to_string(home.join("config.toml")).expect("config.toml");
    assert!(config.contains("[model_providers.my-gw]"), "{config}");
    assert!(config.contains("env_key = \"MY_GW_KEY\""), "{config}");

    // An edit: a new name, the key cleared, the URL kept.
    let edited = client.call(
        "modelProvider/config/write",
        json!({"settings": {"type": "customGateway", "providerId": "my-gw",
                            "name": "Renamed", "envKey": null}}),
    );
    assert_eq!(edited["provider"]["name"], json!("Renamed"), "{edited}");
    assert_eq!(
        edited["provider"]["settings"]["auth"],
        json!({"mode": "none"})
    );
    assert_eq!(
        edited["provider"]["baseUrl"],
        json!("http://127.0.0.1:9/v1")
    );
    let config = std::fs::read_to_string(home.join("config.toml")).expect("config.toml");
    assert!(!config.contains("MY_GW_KEY"), "{config}");

    // Refusals name what is wrong and change nothing.
    let builtin = client.call_err(
        "modelProvider/config/write",
        json!({"settings": {"type": "customGateway", "providerId": "openai",
                            "baseUrl": "http://x/v1"}}),
    );
    assert_eq!(builtin["code"], json!(-32600), "{builtin}");
    assert_eq!(write_code(&builtin), &json!("configValidationError"));
    let unknown = client.call_err(
        "modelProvider/config/write",
        json!({"settings": {"type": "customGateway", "providerId": "zzz", "name": "Z"}}),
    );
    assert_eq!(
        write_code(&unknown),
        &json!("configPathNotFound"),
        "{unknown}"
    );
    let nameless = client.call_err(
        "modelProvider/config/write",
        json!({"settings": {"type": "customGateway", "baseUrl": "http://x/v1"}}),
    );
    assert!(
        nameless["message"].as_str().unwrap_or("").contains("name"),
        "{nameless}"
    );
    let bad_url = client.call_err(
        "modelProvider/config/write",
        json!({"settings": {"type": "customGateway", "name": "Bad", "baseUrl": "ftp://x"}}),
    );
    assert!(
        bad_url["message"]
            .as_str()
            .unwrap_or("")
            .contains("baseUrl"),
        "{bad_url}"
    );
    let bedrock = client.call_err(
        "modelProvider/config/write",
        json!({"settings": {"type": "bedrock", "providerId": "amazon-bedrock",
                            "region": "us-east-1"}}),
    );
    assert_eq!(bedrock["code"], json!(-32004), "{bedrock}");
    assert_eq!(bedrock["data"]["reason"], json!("cloudProviderSetup"));
    let unknown_default =
        client.call_err("modelProvider/default/set", json!({"providerId": "nope"}));
    assert_eq!(unknown_default["code"], json!(-32600), "{unknown_default}");
    assert_eq!(
        write_code(&unknown_default),
        &json!("configValidationError")
    );

    // The default: written as `model_provider`, used by new threads.
    let set = client.call("modelProvider/default/set", json!({"providerId": "my-gw"}));
    assert_eq!(set["status"], json!("ok"), "{set}");
    assert!(
        set["filePath"]
            .as_str()
            .unwrap_or("")
            .ends_with("config.toml"),
        "{set}"
    );
    let started = client.call("thread/start", json!({}));
    assert_eq!(started["modelProvider"], json!("my-gw"), "{started}");
    let capabilities = client.call("modelProvider/capabilities/read", json!({}));
    assert_eq!(
        capabilities,
        json!({"imageGeneration": false, "webSearch": false})
    );
    client.stop();

    let mut again = Client::start(&home);
    let list = again.call("modelProvider/list", json!({}));
    assert_eq!(list["defaultProviderId"], json!("my-gw"), "{list}");
    assert_eq!(provider(&list, "my-gw")["name"], json!("Renamed"));
    again.stop();

    // A `-c` flag above the user's file decides the default: it cannot be changed here.
    let mut flagged = Client::start_with(&home, &["-c", "model_provider=\"fixture\""]);
    let list = flagged.call("modelProvider/list", json!({}));
    assert_eq!(list["defaultProviderId"], json!("fixture"), "{list}");
    assert_eq!(list["canChangeDefault"], json!(false), "{list}");
    flagged.stop();
}

#[test]
fn experimental_features_are_switched_in_config_toml_and_gate_their_methods() {
    let (home, workspace) = home_and_workspace(&scratch("features"));
    let mut client = experimental(&home, &[]);
    let list = client.call("experimentalFeature/list", json!({}));
    let names: Vec<&str> = list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|f| f["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "process_api",
            "server_diagnostics",
            "thread_settings_update"
        ],
        "{list}"
    );
    for feature in list["data"].as_array().expect("data") {
        assert_eq!(feature["stage"], json!("beta"), "{feature}");
        assert_eq!(feature["enabled"], json!(true), "{feature}");
        assert_eq!(feature["defaultEnabled"], json!(true), "{feature}");
        assert!(feature["displayName"].is_string(), "{feature}");
    }
    assert_eq!(list["nextCursor"], Value::Null);
    let first = client.call("experimentalFeature/list", json!({"limit": 2}));
    assert_eq!(first["data"].as_array().map(Vec::len), Some(2), "{first}");
    let rest = client.call(
        "experimentalFeature/list",
        json!({"limit": 2, "cursor": first["nextCursor"]}),
    );
    assert_eq!(
        rest["data"][0]["name"],
        json!("thread_settings_update"),
        "{rest}"
    );
    assert_eq!(rest["nextCursor"], Value::Null);
    let bad_cursor = client.call_err("experimentalFeature/list", json!({"cursor": "x"}));
    assert_eq!(bad_cursor["code"], json!(-32602), "{bad_cursor}");

    // Switched off: written under [features]; unknown names are left out of the answer.
    let set = client.call(
        "experimentalFeature/enablement/set",
        json!({"enablement": {"process_api": false, "no_such_feature": true}}),
    );
    assert_eq!(set, json!({"enablement": {"process_api": false}}));
    let config = std::fs::read_to_string(home.join("config.toml")).expect("config.toml");
    assert!(config.contains("[features]"), "{config}");
    assert!(config.contains("process_api = false"), "{config}");
    let refused = client.call_err(
        "process/spawn",
        json!({"command": ["true"], "cwd": workspace, "processHandle": "p"}),
    );
    assert_eq!(refused["code"], json!(-32600), "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or("")
            .contains("process_api"),
        "{refused}"
    );
    let empty = client.call(
        "experimentalFeature/enablement/set",
        json!({"enablement": {}}),
    );
    assert_eq!(empty, json!({"enablement": {}}));
    // A thread's view of the features (its cwd's configuration) reads the same file.
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let seen = client.call("experimentalFeature/list", json!({"threadId": thread}));
    assert_eq!(seen["data"][0]["enabled"], json!(false), "{seen}");
    let missing = client.call_err(
        "experimentalFeature/list",
        json!({"threadId": "00000000-0000-7000-8000-00000000dead"}),
    );
    assert!(missing["message"].is_string(), "{missing}");
    client.stop();

    // Still off after a restart; `--enable` turns it on for a session.
    let mut again = experimental(&home, &[]);
    let list = again.call("experimentalFeature/list", json!({}));
    assert_eq!(list["data"][0]["enabled"], json!(false), "{list}");
    again.stop();
    let mut enabled = experimental(&home, &["--enable", "process_api"]);
    let list = enabled.call("experimentalFeature/list", json!({}));
    assert_eq!(list["data"][0]["enabled"], json!(true), "{list}");
    enabled.call(
        "process/spawn",
        json!({"command": ["true"], "cwd": workspace, "processHandle": "p"}),
    );
    let exited = enabled.notification("process/exited");
    assert_eq!(exited["exitCode"], json!(0), "{exited}");
    enabled.stop();
}

#[test]
fn permission_profiles_follow_the_requirements() {
    let home = scratch("permission-profiles");
    let mut client = Client::start(&home);
    let list = client.call("permissionProfile/list", json!({}));
    let ids: Vec<&str> = list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|p| p["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, [":read-only", ":workspace", ":danger-full-access"]);
    assert!(
        list["data"]
            .as_array()
            .expect("data")
            .iter()
            .all(|p| p["allowed"] == json!(true) && p["description"].is_string()),
        "{list}"
    );
    let page = client.call("permissionProfile/list", json!({"limit": 1, "cursor": "2"}));
    assert_eq!(
        page["data"][0]["id"],
        json!(":danger-full-access"),
        "{page}"
    );
    assert_eq!(page["nextCursor"], Value::Null);
    let relative = client.call_err("permissionProfile/list", json!({"cwd": "rel"}));
    assert_eq!(relative["code"], json!(-32602), "{relative}");
    std::fs::write(
        home.join("requirements.toml"),
        "allowed_sandbox_modes = [\"read-only\", \"workspace-write\"]\n",
    )
    .expect("requirements");
    let list = client.call("permissionProfile/list", json!({}));
    assert_eq!(list["data"][2]["allowed"], json!(false), "{list}");
    assert_eq!(list["data"][1]["allowed"], json!(true), "{list}");
    client.stop();
}

#[test]
fn thread_settings_update_records_announces_and_survives_a_restart() {
    let (home, workspace) = home_and_workspace(&scratch("thread-settings"));
    let mut client = experimental(&home, &[]);
    let thread = thread_id(&client.start_thread(json!({})));
    client.call(
        "thread/settings/update",
        json!({"threadId": thread, "model": "other-model", "effort": "high",
               "approvalPolicy": "never", "permissions": ":workspace", "cwd": workspace,
               "serviceTier": "flex", "personality": "pragmatic", "summary": "concise",
               "multiAgentMode": "proactive"}),
    );
    let updated = client.notification("thread/settings/updated");
    assert_eq!(updated["threadId"], json!(thread), "{updated}");
    let settings = &updated["threadSettings"];
    assert_eq!(settings["model"], json!("other-model"), "{settings}");
    assert_eq!(settings["effort"], json!("high"));
    assert_eq!(settings["approvalPolicy"], json!("never"));
    assert_eq!(settings["sandboxPolicy"]["type"], json!("workspaceWrite"));
    assert_eq!(
        settings["activePermissionProfile"]["id"],
        json!(":workspace")
    );
    assert_eq!(settings["cwd"], json!(workspace));
    assert_eq!(settings["serviceTier"], json!("flex"));
    assert_eq!(settings["personality"], json!("pragmatic"));
    assert_eq!(settings["summary"], json!("concise"));
    assert_eq!(settings["modelProvider"], json!("fixture"));
    assert_eq!(settings["collaborationMode"]["mode"], json!("default"));
    assert_eq!(
        settings["collaborationMode"]["settings"]["model"],
        json!("other-model")
    );

    // `null` clears the tier; a change that changes nothing is not announced.
    client.call(
        "thread/settings/update",
        json!({"threadId": thread, "serviceTier": null}),
    );
    let cleared = client.notification("thread/settings/updated");
    assert_eq!(
        cleared["threadSettings"]["serviceTier"],
        Value::Null,
        "{cleared}"
    );
    client.call(
        "thread/settings/update",
        json!({"threadId": thread, "model": "other-model"}),
    );
    client.call("thread/read", json!({"threadId": thread}));
    assert!(
        !client
            .backlog()
            .iter()
            .any(|m| m["method"] == json!("thread/settings/updated")),
        "an update that changed nothing was announced"
    );

    // Refusals.
    for (params, code, word) in [
        (
            json!({"threadId": thread, "permissions": ":workspace",
                   "sandboxPolicy": {"type": "readOnly"}}),
            -32602,
            "sandboxPolicy",
        ),
        (
            json!({"threadId": thread, "permissions": ":nope"}),
            -32602,
            ":nope",
        ),
        (
            json!({"threadId": thread, "environments": [{"environmentId": "e", "cwd": "/"}]}),
            -32602,
            "environments",
        ),
        (
            json!({"threadId": thread, "disabledPluginIds": ["p"]}),
            -32602,
            "disabledPluginIds",
        ),
        (
            json!({"threadId": thread, "cwd": "relative"}),
            -32602,
            "cwd",
        ),
    ] {
        let error = client.call_err("thread/settings/update", params.clone());
        assert_eq!(error["code"], json!(code), "{params}: {error}");
        assert!(
            error["message"].as_str().unwrap_or("").contains(word),
            "{params}: {error}"
        );
    }
    let unknown = client.call_err(
        "thread/settings/update",
        json!({"threadId": "00000000-0000-7000-8000-00000000dead", "model": "m"}),
    );
    assert!(unknown["message"].is_string(), "{unknown}");
    // The administrator's requirements hold here as on thread/start.
    std::fs::write(
        home.join("requirements.toml"),
        "allowed_sandbox_modes = [\"read-only\", \"workspace-write\"]\n",
    )
    .expect("requirements");
    let required = client.call_err(
        "thread/settings/update",
        json!({"threadId": thread, "permissions": ":danger-full-access"}),
    );
    assert_eq!(required["code"], json!(-32600), "{required}");
    std::fs::remove_file(home.join("requirements.toml")).expect("remove requirements");
    client.stop();

    // Recorded in the rollout: a resumed thread runs with them.
    let mut again = experimental(&home, &[]);
    let resumed = again.call("thread/resume", json!({"threadId": thread}));
    assert_eq!(resumed["model"], json!("other-model"), "{resumed}");
    assert_eq!(resumed["approvalPolicy"], json!("never"));
    assert_eq!(resumed["sandbox"]["type"], json!("workspaceWrite"));
    assert_eq!(resumed["cwd"], json!(workspace));
    assert_eq!(resumed["serviceTier"], Value::Null);
    again.stop();

    // Without the experimental API the method is not offered.
    let mut stable = Client::start(&home);
    let error = stable.call_err(
        "thread/settings/update",
        json!({"threadId": thread, "model": "m"}),
    );
    assert_eq!(error["code"], json!(-32600), "{error}");
    stable.stop();
}

/// A config whose default provider is `mock` at `base_url`, commands never asking.
fn mock_config(home: &Path, base_url: &str) {
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_provider = \"mock\"\nmodel = \"first-model\"\napproval_policy = \"never\"\n\
             sandbox_mode = \"danger-full-access\"\n\n[model_providers.mock]\n\
             base_url = \"{base_url}\"\nrequest_max_retries = 0\n"
        ),
    )
    .expect("write config");
}

#[test]
fn turn_settings_update_reaches_the_next_model_call_of_the_running_turn_only() {
    let mock = MockModel::start(vec![
        Reply::Stream(
            Sse::new()
                .tool_call(0, "call_1", "shell", "{\"command\": \"true\"}")
                .finish("tool_calls")
                .end(End::Hold),
        ),
        Sse::answer("Done."),
        Sse::answer("Again."),
    ]);
    let (home, workspace) = home_and_workspace(&scratch("turn-settings"));
    mock_config(&home, &mock.base_url());
    let mut client = experimental(&home, &[]);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let turn = client.start_turn(&thread, "Run a command.");
    // The first model call is held open: the change waits for the next one.
    mock.wait_requests(1);
    let applied = client.call(
        "turn/settings/update",
        json!({"threadId": thread, "turnId": turn, "model": "second-model"}),
    );
    assert_eq!(applied, json!({"status": "applied"}));
    mock.release();
    let seen = client.until_turn_completed();
    let completed = seen.last().expect("turn/completed");
    assert_eq!(
        completed["params"]["turn"]["status"],
        json!("completed"),
        "{completed}"
    );
    let requests = mock.wait_requests(2);
    assert_eq!(requests[0].body["model"], json!("first-model"));
    assert_eq!(requests[1].body["model"], json!("second-model"));

    // The turn has ended; the thread's own model is unchanged for the next turn.
    let gone = client.call(
        "turn/settings/update",
        json!({"threadId": thread, "turnId": turn, "model": "third-model"}),
    );
    assert_eq!(gone, json!({"status": "targetUnavailable"}));
    client.start_turn(&thread, "Again.");
    client.until_turn_completed();
    let requests = mock.wait_requests(3);
    assert_eq!(requests[2].body["model"], json!("first-model"));

    let unknown = client.call_err(
        "turn/settings/update",
        json!({"threadId": "00000000-0000-7000-8000-00000000dead", "turnId": "t"}),
    );
    assert!(unknown["message"].is_string(), "{unknown}");
    let extra = client.call_err(
        "turn/settings/update",
        json!({"threadId": thread, "turnId": turn, "cwd": "/"}),
    );
    assert_eq!(extra["code"], json!(-32602), "{extra}");
    client.stop();
}

#[test]
fn server_diagnostics_reports_the_process_and_its_load() {
    let (home, workspace) = home_and_workspace(&scratch("diagnostics"));
    let mut client = experimental(&home, &[]);
    client.start_thread(json!({"cwd": workspace}));
    client.call(
        "process/spawn",
        json!({"command": ["sleep", "30"], "cwd": workspace, "processHandle": "s",
               "timeoutMs": null}),
    );
    let report = client.call("server/diagnostics", json!({}));
    assert_eq!(report["process"]["id"], json!(client.pid()), "{report}");
    assert!(
        report["process"]["residentMemoryBytes"]
            .as_u64()
            .is_some_and(|rss| rss > 1024 * 1024),
        "{report}"
    );
    assert_eq!(report["process"]["physicalFootprintBytes"], Value::Null);
    let gauge = |name: &str| {
        report["gauges"]
            .as_array()
            .and_then(|g| g.iter().find(|g| g["name"] == json!(name)))
            .and_then(|g| g["value"].as_u64())
            .unwrap_or_else(|| panic!("no gauge {name} in {report}"))
    };
    assert_eq!(gauge("app.threads.loaded"), 1);
    assert_eq!(gauge("app.connections.open"), 1);
    assert_eq!(gauge("app.processes.running"), 1);
    assert_eq!(gauge("app.turns.running"), 0);
    assert!(gauge("process.threads") >= 2);
    assert!(gauge("process.open_fds") >= 3);
    assert!(gauge("process.virtual_memory_bytes") >= gauge("process.peak_resident_memory_bytes"));
    client.call("process/kill", json!({"processHandle": "s"}));
    client.notification("process/exited");
    let after = client.call("server/diagnostics", json!({}));
    let running = after["gauges"]
        .as_array()
        .and_then(|g| {
            g.iter()
                .find(|g| g["name"] == json!("app.processes.running"))
        })
        .map(|g| g["value"].clone());
    assert_eq!(running, Some(json!(0)), "{after}");
    client.stop();
}

/// The entries of the ZIP archive `feedback/save` wrote, name and bytes, in archive order, read
/// by the `zip` crate (which checks every entry's CRC-32 as it reads it to the end).
fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("the report is a ZIP archive");
    (0..archive.len())
        .map(|index| {
            let mut entry = archive.by_index(index).expect("an entry of the archive");
            let mut data = Vec::new();
            entry
                .read_to_end(&mut data)
                .expect("the entry reads back and its CRC-32 matches");
            let name = entry.name().expect("the entry has a readable name");
            (name.into_owned(), data)
        })
        .collect()
}

/// The JSON of entry `name`.
fn entry_json(entries: &[(String, Vec<u8>)], name: &str) -> Value {
    let (_, bytes) = entries
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name} in the archive"));
    serde_json::from_slice(bytes).expect("entry is JSON")
}

#[test]
fn feedback_is_saved_as_a_zip_with_the_thread_and_its_logs() {
    let (home, workspace) = home_and_workspace(&scratch("feedback"));
    let log = workspace.join("client.log");
    std::fs::write(&log, "client side log line\n").expect("log");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, "Hello there.");
    client.until_turn_completed();
    let path = workspace.join("feedback.zip");
    let saved = client.call(
        "feedback/save",
        json!({"classification": "bug", "reason": "it broke", "tags": {"area": "tests"},
               "threadId": thread, "includeLogs": true, "extraLogFiles": [log],
               "savePath": path}),
    );
    assert_eq!(saved["savedPath"], json!(path), "{saved}");
    assert_eq!(saved["threadId"], json!(thread));
    assert_eq!(saved["promptHash"], Value::Null);
    let bytes = std::fs::read(&path).expect("the archive");
    let entries = unzip(&bytes);
    let report = entry_json(&entries, "report.json");
    assert_eq!(report["classification"], json!("bug"), "{report}");
    assert_eq!(report["reason"], json!("it broke"));
    assert_eq!(report["tags"], json!({"area": "tests"}));
    assert_eq!(report["threadId"], json!(thread));
    let thread_json = entry_json(&entries, "thread.json");
    assert_eq!(thread_json["thread"]["id"], json!(thread), "{thread_json}");
    assert_eq!(
        thread_json["thread"]["turns"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(thread_json["settings"]["model"], json!("fixture"));
    let manifest = entry_json(&entries, "manifest.json");
    let attached: Vec<&str> = manifest
        .as_array()
        .expect("manifest")
        .iter()
        .map(|a| a["entry"].as_str().expect("entry"))
        .collect();
    assert_eq!(
        attached.len(),
        2,
        "the rollout and the extra log: {manifest}"
    );
    assert!(attached[0].ends_with(".jsonl"), "{manifest}");
    assert_eq!(attached[1], "attachments/0001/client.log");
    let (_, log_bytes) = entries
        .iter()
        .find(|(n, _)| n == "attachments/0001/client.log")
        .expect("the log");
    assert_eq!(log_bytes, b"client side log line\n");
    let (_, rollout) = entries
        .iter()
        .find(|(n, _)| n == attached[0])
        .expect("the rollout");
    assert!(String::from_utf8_lossy(rollout).contains("Hello there."));

    // The path is the caller's: never replaced.
    let again = client.call_err(
        "feedback/save",
        json!({"classification": "bug", "savePath": path}),
    );
    assert_eq!(again["code"], json!(-32600), "{again}");
    assert!(
        again["message"]
            .as_str()
            .unwrap_or("")
            .contains("already exists"),
        "{again}"
    );
    assert_eq!(std::fs::read(&path).expect("still there"), bytes);
    let relative = client.call_err(
        "feedback/save",
        json!({"classification": "bug", "savePath": "feedback.zip"}),
    );
    assert_eq!(relative["code"], json!(-32600), "{relative}");
    std::fs::write(home.join("auth.json"), "{\"secret\": 1}").expect("auth");
    let private = client.call_err(
        "feedback/save",
        json!({"classification": "bug", "savePath": workspace.join("p.zip"),
               "extraLogFiles": [home.join("auth.json")]}),
    );
    assert_eq!(private["code"], json!(-32602), "{private}");
    assert!(
        private["message"]
            .as_str()
            .unwrap_or("")
            .contains("extraLogFiles[0]"),
        "{private}"
    );
    assert!(!workspace.join("p.zip").exists());

    // Without a thread the report gets an id of its own.
    let bare_path = workspace.join("bare.zip");
    let bare = client.call(
        "feedback/save",
        json!({"classification": "good_result", "savePath": bare_path}),
    );
    assert!(
        bare["threadId"]
            .as_str()
            .is_some_and(|id| id.starts_with("no-active-thread-")),
        "{bare}"
    );
    let entries = unzip(&std::fs::read(&bare_path).expect("bare archive"));
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["report.json", "manifest.json"]);
    client.stop();
}
