//! Configuration end to end: `config/read` with layers and origins, the write methods editing
//! `config.toml` in place, `configWarning`, thread defaults from the configuration, `-c` and
//! `--profile`, and `[shell_environment_policy]` on every command the server runs (a turn's,
//! `thread/shellCommand`, `command/exec`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, deltas};
use crate::common::{agentwire, scratch};
use crate::mock_model::{MockModel, Sse};

/// A home holding `config` as its `config.toml`.
fn home_with(name: &str, config: &str) -> (PathBuf, PathBuf) {
    let root = scratch(name);
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join("config.toml"), config).expect("config");
    (root, home)
}

fn read(client: &mut Client, params: Value) -> Value {
    client.call("config/read", params)
}

/// The version of the user layer, as `config/read` reports it.
fn user_version(client: &mut Client) -> String {
    let answer = read(client, json!({"includeLayers": true}));
    let layers = answer["layers"].as_array().expect("layers").clone();
    let user = layers
        .iter()
        .find(|l| l["name"]["type"] == json!("user") && l["name"]["profile"].is_null())
        .expect("a user layer");
    user["version"].as_str().expect("version").to_owned()
}

#[test]
fn read_merges_home_project_and_flag_layers_with_origins() {
    let (root, home) = home_with("config-layers", "");
    let repo = root.join("repo");
    let sub = repo.join("sub");
    std::fs::create_dir_all(repo.join(".git")).expect("git");
    std::fs::create_dir_all(repo.join(".codex")).expect("codex");
    std::fs::create_dir_all(sub.join(".agentwire")).expect("agentwire");
    std::fs::write(
        repo.join(".codex/config.toml"),
        "approval_policy = \"never\"\nmodel = \"codex-project-model\"\n",
    )
    .expect("codex project");
    std::fs::write(
        sub.join(".agentwire/config.toml"),
        "model = \"project-model\"\n",
    )
    .expect("agentwire project");
    let user_file = format!(
        "model = \"home-model\"\nsandbox_mode = \"workspace-write\"\n\n[sandbox_workspace_write]\nnetwork_access = true\n\n[features]\nanything = 1\n\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        repo.display()
    );
    std::fs::write(home.join("config.toml"), &user_file).expect("user");
    let mut client = Client::start_with(&home, &["-c", "model_reasoning_effort=\"high\""]);

    let answer = read(&mut client, json!({"cwd": sub, "includeLayers": true}));
    let config = &answer["config"];
    assert_eq!(config["model"], json!("project-model"), "{answer:#}");
    assert_eq!(config["approval_policy"], json!("never"));
    assert_eq!(config["sandbox_mode"], json!("workspace-write"));
    assert_eq!(config["model_reasoning_effort"], json!("high"));
    assert_eq!(
        config["sandbox_workspace_write"]["network_access"],
        json!(true)
    );
    assert_eq!(
        config["features"]["anything"],
        json!(1),
        "Codex-only keys pass through"
    );
    assert_eq!(config["model_provider"], Value::Null);

    let origins = &answer["origins"];
    assert_eq!(
        origins["model"]["name"],
        json!({"type": "project", "dotCodexFolder": sub.join(".agentwire")})
    );
    assert_eq!(
        origins["approval_policy"]["name"],
        json!({"type": "project", "dotCodexFolder": repo.join(".codex")})
    );
    assert_eq!(
        origins["sandbox_mode"]["name"],
        json!({"type": "user", "file": home.join("config.toml"), "profile": null})
    );
    assert_eq!(
        origins["sandbox_workspace_write.network_access"]["name"]["type"],
        json!("user")
    );
    assert_eq!(
        origins["model_reasoning_effort"]["name"],
        json!({"type": "sessionFlags"})
    );

    let layers = answer["layers"].as_array().expect("layers");
    let names: Vec<&Value> = layers.iter().map(|l| &l["name"]).collect();
    assert_eq!(
        names,
        vec![
            &json!({"type": "sessionFlags"}),
            &json!({"type": "project", "dotCodexFolder": sub.join(".agentwire")}),
            &json!({"type": "project", "dotCodexFolder": repo.join(".codex")}),
            &json!({"type": "user", "file": home.join("config.toml"), "profile": null}),
        ]
    );
    assert_eq!(layers[1]["config"], json!({"model": "project-model"}));
    assert_eq!(
        layers[0]["config"],
        json!({"model_reasoning_effort": "high"})
    );
    assert!(layers.iter().all(|l| l["disabledReason"].is_null()));
    assert!(
        layers[3]["version"]
            .as_str()
            .is_some_and(|v| v.starts_with("sha256:"))
    );
    assert_eq!(origins["model"]["version"], layers[1]["version"]);

    // Without a cwd, no project layer; without includeLayers, no layers.
    let plain = read(&mut client, json!({}));
    assert_eq!(plain["config"]["model"], json!("home-model"));
    assert_eq!(plain["layers"], Value::Null);

    // A new thread in the project gets the project's settings.
    let thread = client.start_thread(json!({"cwd": sub}));
    assert_eq!(thread["model"], json!("project-model"));
    assert_eq!(thread["approvalPolicy"], json!("never"));
    assert_eq!(thread["reasoningEffort"], json!("high"));

    // An untrusted project's layers are listed, disabled, and not in effect.
    let other = root.join("other");
    std::fs::create_dir_all(other.join(".git")).expect("git");
    std::fs::create_dir_all(other.join(".codex")).expect("codex");
    std::fs::write(
        other.join(".codex/config.toml"),
        "sandbox_mode = \"danger-full-access\"\n",
    )
    .expect("untrusted project");
    let untrusted = read(&mut client, json!({"cwd": other, "includeLayers": true}));
    assert_eq!(
        untrusted["config"]["sandbox_mode"],
        json!("workspace-write")
    );
    let disabled = &untrusted["layers"][1];
    assert_eq!(disabled["name"]["type"], json!("project"));
    assert!(
        disabled["disabledReason"]
            .as_str()
            .is_some_and(|r| r.contains("not trusted") && r.contains("trust_level")),
        "{disabled}"
    );
}

#[test]
fn profiles_are_selected_by_key_or_flag() {
    let config = "profile = \"fast\"\nmodel = \"base\"\n\n[profiles.fast]\nmodel = \"fast-model\"\napproval_policy = \"never\"\n\n[profiles.careful]\nmodel = \"careful-model\"\napproval_policy = \"untrusted\"\n";
    let (_root, home) = home_with("config-profiles", config);
    let mut client = Client::start(&home);
    let answer = read(&mut client, json!({"includeLayers": true}));
    assert_eq!(answer["config"]["model"], json!("fast-model"));
    assert_eq!(
        answer["origins"]["model"]["name"],
        json!({"type": "user", "file": home.join("config.toml"), "profile": "fast"})
    );
    assert_eq!(
        answer["layers"][1]["config"],
        json!({"model": "fast-model", "approval_policy": "never"})
    );
    let thread = client.start_thread(json!({}));
    assert_eq!(thread["model"], json!("fast-model"));
    assert_eq!(thread["approvalPolicy"], json!("never"));
    drop(client);

    let mut client = Client::start_with(&home, &["--profile", "careful"]);
    let thread = client.start_thread(json!({}));
    assert_eq!(thread["model"], json!("careful-model"));
    assert_eq!(thread["approvalPolicy"], json!("untrusted"));
    assert_eq!(
        read(&mut client, json!({}))["origins"]["model"]["name"]["profile"],
        json!("careful")
    );
}

#[test]
fn thread_start_takes_its_defaults_from_the_configuration() {
    let config = "approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\nmodel_reasoning_effort = \"low\"\ndeveloper_instructions = \"be brief\"\n\n[sandbox_workspace_write]\nwritable_roots = [\"/srv/shared\"]\nnetwork_access = true\nexclude_slash_tmp = true\n";
    let (root, home) = home_with("config-thread-defaults", config);
    let mut client = Client::start(&home);
    let thread = client.start_thread(json!({"cwd": root}));
    assert_eq!(thread["approvalPolicy"], json!("never"));
    assert_eq!(thread["reasoningEffort"], json!("low"));
    assert_eq!(
        thread["sandbox"],
        json!({
            "type": "workspaceWrite",
            "writableRoots": ["/srv/shared"],
            "networkAccess": true,
            "excludeTmpdirEnvVar": false,
            "excludeSlashTmp": true
        })
    );
    // The thread's own params win; its `config` map ranks above the files.
    let explicit =
        client.start_thread(json!({"approvalPolicy": "untrusted", "sandbox": "read-only"}));
    assert_eq!(explicit["approvalPolicy"], json!("untrusted"));
    assert_eq!(explicit["sandbox"]["type"], json!("readOnly"));
    // A sandbox mode picked later still gets the configured workspace details.
    let forked = client.call(
        "thread/fork",
        json!({"threadId": explicit["thread"]["id"], "sandbox": "workspace-write"}),
    );
    assert_eq!(
        forked["sandbox"]["writableRoots"],
        json!(["/srv/shared"]),
        "{forked}"
    );
    let mapped = client.start_thread(
        json!({"config": {"sandbox_mode": "danger-full-access", "approval_policy": "on-request"}}),
    );
    assert_eq!(mapped["sandbox"], json!({"type": "dangerFullAccess"}));
    assert_eq!(mapped["approvalPolicy"], json!("on-request"));
}

const COMMENTED: &str = "# agentwire settings, kept by hand\nmodel = \"old-model\"   # the default model\n\n# how careful to be\napproval_policy = \"on-request\"\n\n[sandbox_workspace_write] # details\nnetwork_access = false\nwritable_roots = [ \"/a\" ]  # odd spacing stays\n\n[features]\nsomething = true\n";

#[test]
fn writes_keep_comments_byte_for_byte_and_new_threads_see_them() {
    let (_root, home) = home_with("config-write", COMMENTED);
    let path = home.join("config.toml");
    let mut client = Client::start(&home);
    let before = user_version(&mut client);
    let thread = client.start_thread(json!({}));
    assert_eq!(thread["model"], json!("old-model"));

    let answer = client.call(
        "config/value/write",
        json!({"keyPath": "model", "value": "new-model", "mergeStrategy": "replace", "expectedVersion": before}),
    );
    assert_eq!(answer["status"], json!("ok"));
    assert_eq!(answer["filePath"], json!(path));
    assert_eq!(answer["overriddenMetadata"], Value::Null);
    let written = std::fs::read_to_string(&path).expect("read");
    assert_eq!(
        written,
        COMMENTED.replace("model = \"old-model\"", "model = \"new-model\"")
    );
    let version = answer["version"].as_str().expect("version").to_owned();
    assert_ne!(version, before);
    assert_eq!(user_version(&mut client), version);

    // The next thread sees the written value, without a restart.
    let thread = client.start_thread(json!({}));
    assert_eq!(thread["model"], json!("new-model"));

    // A batch: several edits, one write.
    let answer = client.call(
        "config/batchWrite",
        json!({
            "edits": [
                {"keyPath": "approval_policy", "value": "never", "mergeStrategy": "replace"},
                {"keyPath": "sandbox_workspace_write", "value": {"exclude_slash_tmp": true}, "mergeStrategy": "upsert"},
                {"keyPath": "sandbox_mode", "value": "workspace-write", "mergeStrategy": "replace"}
            ],
            "filePath": path,
            "expectedVersion": version
        }),
    );
    assert_eq!(answer["status"], json!("ok"), "{answer}");
    let written = std::fs::read_to_string(&path).expect("read");
    let expected = COMMENTED
        .replace("model = \"old-model\"", "model = \"new-model\"")
        .replace(
            "approval_policy = \"on-request\"\n",
            "approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n",
        )
        .replace(
            "writable_roots = [ \"/a\" ]  # odd spacing stays\n",
            "writable_roots = [ \"/a\" ]  # odd spacing stays\nexclude_slash_tmp = true\n",
        );
    assert_eq!(written, expected);
    let thread = client.start_thread(json!({}));
    assert_eq!(thread["approvalPolicy"], json!("never"));
    assert_eq!(thread["sandbox"]["excludeSlashTmp"], json!(true));

    // `null` removes a key and only that key.
    client.call(
        "config/value/write",
        json!({"keyPath": "approval_policy", "value": null, "mergeStrategy": "replace"}),
    );
    let after = std::fs::read_to_string(&path).expect("read");
    assert_eq!(after, expected.replace("approval_policy = \"never\"\n", ""));
}

#[test]
fn a_write_shadowed_by_a_flag_says_so() {
    let (_root, home) = home_with("config-overridden", "model = \"a\"\n");
    let mut client = Client::start_with(&home, &["-c", "model=flag-model"]);
    let answer = client.call(
        "config/value/write",
        json!({"keyPath": "model", "value": "b", "mergeStrategy": "replace"}),
    );
    assert_eq!(answer["status"], json!("okOverridden"));
    let overridden = &answer["overriddenMetadata"];
    assert_eq!(
        overridden["overridingLayer"]["name"],
        json!({"type": "sessionFlags"})
    );
    assert_eq!(overridden["effectiveValue"], json!("flag-model"));
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).expect("read"),
        "model = \"b\"\n"
    );
}

/// Asserts that `error` is a refused write with `code` whose message names `key`.
fn assert_refused(error: &Value, code: &str, key: &str) {
    assert_eq!(error["code"], json!(-32600), "{error}");
    assert_eq!(
        error["data"]["config_write_error_code"],
        json!(code),
        "{error}"
    );
    let message = error["message"].as_str().expect("message");
    assert!(message.contains(key), "{message}");
}

#[test]
fn bad_writes_are_refused_and_nothing_is_written() {
    let (_root, home) = home_with("config-refused", COMMENTED);
    let path = home.join("config.toml");
    let mut client = Client::start(&home);
    let write = |client: &mut Client, key: &str, value: Value| {
        client.call_err(
            "config/value/write",
            json!({"keyPath": key, "value": value, "mergeStrategy": "replace"}),
        )
    };

    let error = write(&mut client, "aproval_policy", json!("never"));
    assert_refused(&error, "configSchemaUnknownKey", "aproval_policy");
    assert_eq!(error["data"]["keyPath"], json!("aproval_policy"));
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("did you mean `approval_policy`"))
    );

    let error = write(&mut client, "approval_policy", json!(5));
    assert_refused(&error, "configValidationError", "approval_policy");

    let error = write(&mut client, "sandbox_mode", json!("everything"));
    assert_refused(&error, "configValidationError", "sandbox_mode");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("everything"))
    );

    let error = write(
        &mut client,
        "sandbox_workspace_write.network_acess",
        json!(true),
    );
    // An unknown key inside a table is an unknown key too, named with its table and the key
    // it resembles.
    assert_refused(&error, "configSchemaUnknownKey", "network_acess");
    assert_eq!(
        error["data"]["keyPath"],
        json!("sandbox_workspace_write.network_acess")
    );
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("[sandbox_workspace_write]")
                && m.contains("did you mean `network_access`")),
        "{error}"
    );

    let error = write(&mut client, "model.inner", json!(true));
    assert_refused(&error, "configValidationError", "model.inner");

    // A batch with one bad edit writes none of them.
    let error = client.call_err(
        "config/batchWrite",
        json!({"edits": [
            {"keyPath": "model", "value": "fine", "mergeStrategy": "replace"},
            {"keyPath": "profiles.p.modle", "value": "typo", "mergeStrategy": "replace"}
        ]}),
    );
    assert_refused(&error, "configSchemaUnknownKey", "profiles.p.modle");

    // Another file.
    let error = client.call_err(
        "config/value/write",
        json!({"keyPath": "model", "value": "x", "mergeStrategy": "replace", "filePath": "/etc/agentwire.toml"}),
    );
    assert_refused(&error, "configLayerReadonly", "/etc/agentwire.toml");

    // Params of the wrong type are refused before the engine sees them, naming the member.
    let error = client.call_err(
        "config/value/write",
        json!({"keyPath": 5, "value": "x", "mergeStrategy": "replace"}),
    );
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("keyPath")),
        "{error}"
    );

    assert_eq!(std::fs::read_to_string(&path).expect("read"), COMMENTED);
}

#[test]
fn two_writers_with_the_same_version_cannot_lose_a_change() {
    let (_root, home) = home_with("config-conflict", COMMENTED);
    let path = home.join("config.toml");
    let mut first = Client::start(&home);
    let mut second = Client::start(&home);
    let version = user_version(&mut first);
    assert_eq!(user_version(&mut second), version);
    first.call(
        "config/value/write",
        json!({"keyPath": "model", "value": "first", "mergeStrategy": "replace", "expectedVersion": version}),
    );
    let error = second.call_err(
        "config/value/write",
        json!({"keyPath": "approval_policy", "value": "never", "mergeStrategy": "replace", "expectedVersion": version}),
    );
    assert_refused(&error, "configVersionConflict", &version);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains("model = \"first\""), "{text}");
    assert!(text.contains("approval_policy = \"on-request\""), "{text}");
    // Read again, retry: both changes are in.
    let version = user_version(&mut second);
    second.call(
        "config/value/write",
        json!({"keyPath": "approval_policy", "value": "never", "mergeStrategy": "replace", "expectedVersion": version}),
    );
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains("model = \"first\"") && text.contains("approval_policy = \"never\""));
}

/// Two servers on one home write different keys at the same time, neither with
/// `expectedVersion`: every write lands, because a lock file beside `config.toml` serialises
/// the read-edit-rename of both processes, and the file keeps its mode (docs/engine.md, Configuration).
#[test]
fn writers_in_two_processes_lose_no_write_and_the_file_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;

    const WRITES: usize = 40;
    let (root, home) = home_with("config-two-processes", "# kept by hand\n");
    let file = home.join("config.toml");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|writer| {
            let home = home.clone();
            std::thread::spawn(move || {
                let mut client = Client::start(&home);
                for n in 0..WRITES {
                    client.call(
                        "config/value/write",
                        json!({"keyPath": format!("profiles.{writer}{n}.model"),
                               "value": format!("{writer}{n}"), "mergeStrategy": "replace"}),
                    );
                }
                client.stop();
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("writer");
    }
    let written = std::fs::read_to_string(&file).expect("read config");
    let lost: Vec<String> = ["a", "b"]
        .into_iter()
        .flat_map(|writer| (0..WRITES).map(move |n| format!("{writer}{n}")))
        .filter(|value| !written.contains(&format!("model = \"{value}\"")))
        .collect();
    assert!(lost.is_empty(), "writes lost: {lost:?}\n{written}");
    assert!(written.contains("# kept by hand\n"), "{written}");
    let mode = std::fs::metadata(&file).expect("stat").permissions().mode();
    assert_eq!(mode & 0o777, 0o640, "mode {mode:o}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn an_unreadable_or_unwritable_file_is_an_error_naming_it() {
    // config.toml is a directory: it cannot be read.
    let root = scratch("config-unreadable");
    let home = root.join("home");
    std::fs::create_dir_all(home.join("config.toml")).expect("dir in the way");
    let mut client = Client::start(&home);
    let error = client.call_err(
        "config/value/write",
        json!({"keyPath": "model", "value": "x", "mergeStrategy": "replace"}),
    );
    assert_eq!(error["code"], json!(-32603), "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("config.toml")),
        "{error}"
    );
    drop(client);

    // config.toml is a link into a directory that does not exist: it cannot be written.
    let home = root.join("home2");
    std::fs::create_dir_all(&home).expect("home");
    std::os::unix::fs::symlink(
        root.join("missing/dir/config.toml"),
        home.join("config.toml"),
    )
    .expect("symlink");
    let mut client = Client::start(&home);
    let error = client.call_err(
        "config/value/write",
        json!({"keyPath": "model", "value": "x", "mergeStrategy": "replace"}),
    );
    assert_eq!(error["code"], json!(-32603), "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot write")),
        "{error}"
    );
    assert!(!root.join("missing").exists());
}

/// Every `configWarning` sent up to the answer of a `config/read` after the handshake.
fn warnings(client: &mut Client) -> Vec<Value> {
    read(client, json!({}));
    client
        .notifications
        .iter()
        .filter(|n| n["method"] == json!("configWarning"))
        .map(|n| n["params"].clone())
        .collect()
}

#[test]
fn problems_in_the_file_are_config_warnings_with_their_place() {
    let config = "model = \"m\"\naproval_policy = \"never\"\nsandbox_mode = \"everything\"\n";
    let (_root, home) = home_with("config-warnings", config);
    let path = home.join("config.toml");
    let mut client = Client::start(&home);
    let found = warnings(&mut client);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0]["summary"]
            .as_str()
            .is_some_and(|s| s.contains("aproval_policy"))
    );
    assert_eq!(found[0]["path"], json!(path));
    assert_eq!(
        found[0]["range"],
        json!({"start": {"line": 2, "column": 1}, "end": {"line": 2, "column": 15}})
    );
    assert!(
        found[1]["summary"]
            .as_str()
            .is_some_and(|s| s.contains("sandbox_mode"))
    );
    assert!(
        found[1]["details"]
            .as_str()
            .is_some_and(|s| s.contains("everything"))
    );
    assert_eq!(found[1]["range"]["start"]["line"], json!(3));
    // The rest of the file still applies.
    let thread = client.start_thread(json!({}));
    assert_eq!(thread["model"], json!("m"));
    assert_eq!(thread["sandbox"]["type"], json!("readOnly"));
}

#[test]
fn a_syntax_error_is_a_config_warning_and_the_server_still_serves() {
    let (_root, home) = home_with("config-syntax", "model = \"m\"\nmodel_provider = \n");
    let mut client = Client::start(&home);
    let found = warnings(&mut client);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["summary"], json!("TOML syntax error"));
    assert_eq!(found[0]["path"], json!(home.join("config.toml")));
    assert_eq!(found[0]["range"]["start"]["line"], json!(2));
    let thread = client.start_thread(json!({}));
    assert_eq!(thread["model"], json!("fixture"));
    // A file that does not parse is not rewritten.
    let error = client.call_err(
        "config/value/write",
        json!({"keyPath": "model", "value": "x", "mergeStrategy": "replace"}),
    );
    assert_refused(&error, "configValidationError", "does not parse");
}

#[test]
fn a_clean_configuration_sends_no_warning() {
    let (_root, home) = home_with("config-clean", COMMENTED);
    let mut client = Client::start(&home);
    assert_eq!(warnings(&mut client), Vec::<Value>::new());
}

#[test]
fn the_shell_environment_policy_shapes_what_commands_see() {
    let (root, home) = home_with(
        "config-shell-env",
        "model_provider = \"fixture\"\nfixture_script = \"env.json\"\napproval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n\n[shell_environment_policy]\nexclude = [\"AGENTWIRE_TEST_DROP*\"]\nset = { AGENTWIRE_TEST_SET = \"from-config\" }\n",
    );
    let script = json!({"version": 1, "responses": [
        {"when": "show-env", "steps": [
            {"type": "command", "command": "env"},
            {"type": "message", "deltas": ["done"]}
        ]}
    ]});
    std::fs::write(home.join("env.json"), script.to_string()).expect("script");
    let mut client = Client::spawn_with_env(
        &home,
        &[],
        &[
            ("AGENTWIRE_TEST_API_KEY", "sk-secret"),
            ("AGENTWIRE_TEST_PLAIN", "visible"),
            ("AGENTWIRE_TEST_DROPPED", "gone"),
        ],
    );
    client.call(
        "initialize",
        json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}}),
    );
    client.send(&json!({"method": "initialized"}));
    let thread = client.start_thread(json!({"cwd": root}));
    let id = thread["thread"]["id"].as_str().expect("id").to_owned();
    client.start_turn(&id, "show-env");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let output = deltas(&seen, "item/commandExecution/outputDelta");
    assert!(
        output.contains("AGENTWIRE_TEST_SET=from-config\n"),
        "{output}"
    );
    assert!(
        output.contains("AGENTWIRE_TEST_PLAIN=visible\n"),
        "{output}"
    );
    assert!(output.contains("PATH="), "{output}");
    assert!(!output.contains("AGENTWIRE_TEST_API_KEY"), "{output}");
    assert!(!output.contains("sk-secret"), "{output}");
    assert!(!output.contains("AGENTWIRE_TEST_DROPPED"), "{output}");
}

#[test]
fn config_flags_are_accepted_on_every_subcommand() {
    let out = scratch("config-flags");
    let ok = agentwire(&["-c", "model=x", "app-server", "--listen", "off"]);
    assert!(ok.status.success(), "{ok:?}");
    let ok = agentwire(&[
        "app-server",
        "generate-json-schema",
        "--out",
        out.to_str().expect("utf-8"),
        "-c",
        "model=\"x\"",
        "--profile",
        "p",
    ]);
    assert!(ok.status.success(), "{ok:?}");
    let ok = agentwire(&["schema", "diff", "--help", "-c", "a.b=1"]);
    assert!(ok.status.success(), "{ok:?}");
    let bad = agentwire(&["-c", "no-equals-sign", "app-server", "--listen", "off"]);
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("no-equals-sign") && stderr.contains("key=value"),
        "{stderr}"
    );
}

#[test]
fn a_provider_written_at_run_time_answers_the_next_turn() {
    let mock = MockModel::start(vec![Sse::answer("hello from the written provider")]);
    let (_root, home) = home_with("config-live-provider", "# no provider yet\n");
    let mut client = Client::start(&home);
    let answer = client.call(
        "config/batchWrite",
        json!({"edits": [
            {"keyPath": "model_providers.mock", "value": {"base_url": mock.base_url(), "request_max_retries": 0}, "mergeStrategy": "replace"},
            {"keyPath": "model_provider", "value": "mock", "mergeStrategy": "replace"},
            {"keyPath": "model", "value": "written-model", "mergeStrategy": "replace"}
        ]}),
    );
    assert_eq!(answer["status"], json!("ok"), "{answer}");
    let thread = client.start_thread(json!({}));
    assert_eq!(thread["modelProvider"], json!("mock"));
    let id = thread["thread"]["id"].as_str().expect("id").to_owned();
    client.start_turn(&id, "hi");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    assert_eq!(
        deltas(&seen, "item/agentMessage/delta"),
        "hello from the written provider"
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], json!("written-model"));
}

#[test]
fn malformed_params_are_refused_naming_the_member() {
    let (root, home) = home_with("config-params", "model = \"m\"\n");
    let mut client = Client::start(&home);
    let cases = [
        ("config/read", json!({"cwd": 5}), "cwd"),
        (
            "config/read",
            json!({"includeLayers": "yes"}),
            "includeLayers",
        ),
        (
            "config/value/write",
            json!({"keyPath": "model", "value": "x", "mergeStrategy": "merge"}),
            "mergeStrategy",
        ),
        (
            "config/value/write",
            json!({"keyPath": "model", "mergeStrategy": "replace"}),
            "value",
        ),
        ("config/batchWrite", json!({"edits": "model=x"}), "edits"),
        (
            "config/batchWrite",
            json!({"edits": [{"keyPath": "model", "value": 1}]}),
            "mergeStrategy",
        ),
    ];
    for (method, params, member) in cases {
        let error = client.call_err(method, params.clone());
        assert_eq!(error["code"], json!(-32602), "{method} {params}: {error}");
        let message = error["message"].as_str().expect("message");
        assert!(message.contains(member), "{method} {params}: {message}");
    }
    // A key path that does not split is refused by the engine, naming it.
    let error = client.call_err(
        "config/value/write",
        json!({"keyPath": "a..b", "value": 1, "mergeStrategy": "replace"}),
    );
    assert_refused(&error, "configValidationError", "a..b");
    // A cwd that does not exist just has no project layers.
    let answer = read(
        &mut client,
        json!({"cwd": root.join("missing"), "includeLayers": true}),
    );
    assert_eq!(answer["config"]["model"], json!("m"));
    assert_eq!(answer["layers"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).expect("read"),
        "model = \"m\"\n"
    );
}

/// Variables of the server's environment whose names match a default exclude (`*KEY*`,
/// `*SECRET*`, `*TOKEN*`, any case), each with a value found nowhere else. The match is on a
/// substring: `AGENTWIRE_KEYBOARD` holds `KEY`, so it is dropped too.
const SECRET_LOOKING: &[(&str, &str)] = &[
    ("MY_SECRET_X", "aw-leak-my-secret"),
    ("gh_token", "aw-leak-gh-token"),
    ("Some_Key", "aw-leak-some-key"),
    ("AWS_SECRET_ACCESS_KEY", "aw-leak-aws"),
    ("tokenizer_path", "aw-leak-tokenizer"),
    ("AGENTWIRE_KEYBOARD", "aw-leak-keyboard"),
];

/// Variables whose names match no default exclude, near misses included: they reach commands.
const HARMLESS: &[(&str, &str)] = &[
    ("AGENTWIRE_HARMLESS", "aw-kept-harmless"),
    ("agentwire_lower", "aw-kept-lower"),
    ("AGENTWIRE_K_E_Y", "aw-kept-k-e-y"),
    ("AGENTWIRE_SECRE", "aw-kept-secre"),
    ("AGENTWIRE_TOKE_N", "aw-kept-toke-n"),
];

/// A home whose fixture model runs `env` when asked to `show-env`, with `config` appended to a
/// configuration where commands run confined (`read-only`) without asking.
fn env_home(name: &str, config: &str) -> (PathBuf, PathBuf) {
    let (root, home) = home_with(
        name,
        &format!(
            "model_provider = \"fixture\"\nfixture_script = \"env.json\"\napproval_policy = \"never\"\nsandbox_mode = \"read-only\"\n\n{config}"
        ),
    );
    let script = json!({"version": 1, "responses": [
        {"when": "show-env", "steps": [
            {"type": "command", "command": "env"},
            {"type": "message", "deltas": ["done"]}
        ]}
    ]});
    std::fs::write(home.join("env.json"), script.to_string()).expect("script");
    (root, home)
}

/// A server on `home` started with `args` and `env` added to its environment, past the
/// handshake.
fn start_with_env(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Client {
    let mut client = Client::spawn_with_env(home, args, env);
    client.call(
        "initialize",
        json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}}),
    );
    client.send(&json!({"method": "initialized"}));
    client
}

/// What `env` prints when the server runs it in each of its ways, named: a model command in a
/// turn, `thread/shellCommand` on that thread, and `command/exec` under the default policy
/// (confined here) and unconfined.
fn env_everywhere(client: &mut Client, cwd: &Path) -> Vec<(&'static str, String)> {
    let thread = client.start_thread(json!({"cwd": cwd}));
    let id = thread["thread"]["id"].as_str().expect("id").to_owned();
    client.start_turn(&id, "show-env");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "model command"
    );
    let model = deltas(&seen, "item/commandExecution/outputDelta");

    client.call(
        "thread/shellCommand",
        json!({"threadId": id, "command": "env"}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "shell command"
    );
    let shell = deltas(&seen, "item/commandExecution/outputDelta");

    let mut exec = |policy: Value| {
        let mut params = json!({"command": ["env"], "cwd": cwd});
        if !policy.is_null() {
            params["sandboxPolicy"] = policy;
        }
        let answer = client.call("command/exec", params);
        assert_eq!(answer["exitCode"], json!(0), "command/exec");
        answer["stdout"].as_str().expect("stdout").to_owned()
    };
    let confined = exec(Value::Null);
    let unconfined = exec(json!({"type": "dangerFullAccess"}));
    vec![
        ("model command", model),
        ("thread/shellCommand", shell),
        ("command/exec (default policy)", confined),
        ("command/exec (dangerFullAccess)", unconfined),
    ]
}

/// The variables of `env`'s output, by name.
fn parse_env(output: &str) -> BTreeMap<&str, &str> {
    output
        .lines()
        .filter_map(|line| line.split_once('='))
        .collect()
}

/// Whether `name` holds `KEY`, `SECRET` or `TOKEN`, ignoring case.
fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["KEY", "SECRET", "TOKEN"].iter().any(|s| name.contains(s))
}

/// docs/engine.md (Command environment) and docs/sandbox.md (The environment a command gets): by
/// default every name matching `*KEY*`, `*SECRET*` or `*TOKEN*`, in any case, is dropped from the
/// environment of every command the server runs (model commands, `thread/shellCommand`,
/// `command/exec`, confined or not), and every other name of the server's environment reaches it.
#[test]
fn secret_looking_names_reach_no_command_the_server_runs() {
    let (root, home) = env_home("config-env-secrets", "");
    let server_env: Vec<_> = SECRET_LOOKING.iter().chain(HARMLESS).copied().collect();
    let mut client = start_with_env(&home, &[], &server_env);
    for (path, output) in env_everywhere(&mut client, &root) {
        let seen = parse_env(&output);
        assert!(seen.contains_key("PATH"), "{path}: no PATH");
        for (name, value) in HARMLESS {
            assert_eq!(seen.get(name), Some(value), "{path}: {name} did not arrive");
        }
        for (name, value) in SECRET_LOOKING {
            assert!(
                !seen.contains_key(name) && !output.contains(value),
                "{path}: {name} reached the command"
            );
        }
        let leaked: Vec<_> = seen.keys().filter(|name| looks_secret(name)).collect();
        assert!(leaked.is_empty(), "{path}: {leaked:?} reached the command");
    }
    client.stop();
}

/// docs/sandbox.md (The environment a command gets): `ignore_default_excludes = true` keeps the
/// names the default excludes drop, on every path a command takes (the control of
/// [`secret_looking_names_reach_no_command_the_server_runs`]).
#[test]
fn ignore_default_excludes_lets_secret_looking_names_reach_every_command() {
    let (root, home) = env_home(
        "config-env-ignore-excludes",
        "[shell_environment_policy]\nignore_default_excludes = true\n",
    );
    let server_env: Vec<_> = SECRET_LOOKING.iter().chain(HARMLESS).copied().collect();
    let mut client = start_with_env(&home, &[], &server_env);
    for (path, output) in env_everywhere(&mut client, &root) {
        let seen = parse_env(&output);
        for (name, value) in SECRET_LOOKING.iter().chain(HARMLESS) {
            assert_eq!(seen.get(name), Some(value), "{path}: {name} did not arrive");
        }
    }
    client.stop();
}

/// docs/engine.md (Command environment) and docs/sandbox.md (The environment a command gets,
/// `command/exec`): `thread/shellCommand` and `command/exec` get the environment model commands
/// get, so every step of `[shell_environment_policy]` shapes theirs too, from the file and
/// from `-c` alike, in Codex's order: `inherit`, the default excludes, `exclude`, `set`, then
/// `include_only` (which drops a `set` variable it does not name).
#[test]
fn every_step_of_the_policy_and_its_flags_shape_every_command() {
    let (root, home) = env_home(
        "config-env-steps",
        "[shell_environment_policy]\ninherit = \"core\"\nexclude = [\"us?r\"]\nset = { AGENTWIRE_SET = \"from-config\", AGENTWIRE_SET_TOKEN = \"set-after-the-excludes\", OUTSIDE_SET = \"not-included\" }\n",
    );
    let fake_home = root.join("fake-home");
    let fake_home = fake_home.to_str().expect("utf-8");
    let mut server_env: Vec<_> = SECRET_LOOKING.iter().chain(HARMLESS).copied().collect();
    server_env.extend([("HOME", fake_home), ("USER", "aw-user")]);
    let mut client = start_with_env(
        &home,
        &[
            "-c",
            "shell_environment_policy.include_only=[\"PATH\",\"HOME\",\"USER\",\"AGENTWIRE_*\",\"*_TOKEN\"]",
            "-c",
            "shell_environment_policy.set.AGENTWIRE_FLAG=\"from-flag\"",
        ],
        &server_env,
    );
    for (path, output) in env_everywhere(&mut client, &root) {
        let mut seen = parse_env(&output);
        // What the shell of a model command or a shell command adds itself.
        for added in ["PWD", "OLDPWD", "SHLVL", "_"] {
            seen.remove(added);
        }
        let path_value = seen.remove("PATH");
        assert!(path_value.is_some_and(|p| !p.is_empty()), "{path}: no PATH");
        assert_eq!(
            seen,
            BTreeMap::from([
                ("AGENTWIRE_FLAG", "from-flag"),
                ("AGENTWIRE_SET", "from-config"),
                ("AGENTWIRE_SET_TOKEN", "set-after-the-excludes"),
                ("HOME", fake_home),
            ]),
            "{path}"
        );
    }
    client.stop();
}

/// docs/sandbox.md (`command/exec`): a `command/exec` request's `env` is applied over the
/// policy's environment: a value sets a variable, a secret-looking name included (the client
/// chose to pass it), and `null` removes one; the server's own secrets stay out.
#[test]
fn a_command_exec_request_env_applies_over_the_policy_secret_looking_names_included() {
    let (root, home) = env_home("config-env-request", "");
    let server_env: Vec<_> = SECRET_LOOKING.iter().chain(HARMLESS).copied().collect();
    let mut client = start_with_env(&home, &[], &server_env);
    let answer = client.call(
        "command/exec",
        json!({"command": ["env"], "cwd": root, "env": {
            "gh_token": "from-the-request",
            "REQUEST_API_KEY": "also-from-the-request",
            "AGENTWIRE_NEW": "new",
            "AGENTWIRE_HARMLESS": null
        }}),
    );
    assert_eq!(answer["exitCode"], json!(0), "{answer}");
    let output = answer["stdout"].as_str().expect("stdout");
    let seen = parse_env(output);
    assert_eq!(seen.get("gh_token"), Some(&"from-the-request"));
    assert_eq!(seen.get("REQUEST_API_KEY"), Some(&"also-from-the-request"));
    assert_eq!(seen.get("AGENTWIRE_NEW"), Some(&"new"));
    assert_eq!(seen.get("AGENTWIRE_HARMLESS"), None);
    assert_eq!(seen.get("agentwire_lower"), Some(&"aw-kept-lower"));
    let leaked: Vec<_> = seen
        .keys()
        .filter(|name| looks_secret(name) && !["gh_token", "REQUEST_API_KEY"].contains(name))
        .collect();
    assert!(leaked.is_empty(), "{leaked:?} reached the command");
    assert!(
        !output.contains("aw-leak-"),
        "a server secret reached the command"
    );
    client.stop();
}

/// docs/sandbox.md (`command/exec`: the environment model commands get): a trusted project's
/// own `[shell_environment_policy]` shapes every command run in it, `command/exec` included;
/// an untrusted project's is ignored by all of them.
#[test]
fn a_trusted_projects_environment_policy_shapes_every_command_run_in_it() {
    let scratch_root = scratch("config-env-project");
    let project_in = |name: &str| {
        let project = scratch_root.join(name);
        std::fs::create_dir_all(project.join(".git")).expect("project");
        std::fs::create_dir_all(project.join(".codex")).expect(".codex");
        std::fs::write(
            project.join(".codex/config.toml"),
            "[shell_environment_policy]\nexclude = [\"AGENTWIRE_HARMLESS\"]\n",
        )
        .expect("project config");
        project
    };
    let (trusted, untrusted) = (project_in("trusted"), project_in("untrusted"));
    let (_root, home) = env_home(
        "config-env-project-home",
        &format!(
            "[projects.{:?}]\ntrust_level = \"trusted\"\n",
            trusted.display().to_string()
        ),
    );
    let mut client = start_with_env(&home, &[], HARMLESS);
    for (project, excluded) in [(&trusted, true), (&untrusted, false)] {
        for (path, output) in env_everywhere(&mut client, project) {
            let seen = parse_env(&output);
            assert_eq!(
                seen.contains_key("AGENTWIRE_HARMLESS"),
                !excluded,
                "{path} in {}",
                project.display()
            );
            assert_eq!(
                seen.get("agentwire_lower"),
                Some(&"aw-kept-lower"),
                "{path}"
            );
        }
    }
    client.stop();
}
