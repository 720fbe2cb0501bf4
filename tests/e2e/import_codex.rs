//! Importing a Codex home, end to end through the binary: `externalAgentConfig/detect`,
//! `externalAgentConfig/import` (with its `progress` and `completed` notifications),
//! `externalAgentConfig/import/recordHistory` and `readHistories`, and `agentwire import codex
//! [--dry-run]`. Each test builds its own Codex home (`config.toml`, `auth.json`, a skill, a
//! memory and a session rollout in the format codex 0.171.0 writes) and passes it as
//! `CODEX_HOME`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::client::Client;
use crate::common::{mode, scratch};

/// The id of the Codex session the tests import.
const SESSION: &str = "01a24945-0a7d-7332-a0c6-5899fe5fd39a";
/// Its name in Codex's session index.
const TITLE: &str = "Fix the flaky test";

/// A Codex home under `root` with a working directory for its session; returns both.
fn codex_home(root: &Path) -> (PathBuf, PathBuf) {
    let codex = root.join("codex");
    let work = root.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    std::fs::create_dir_all(&codex).expect("codex home");
    std::fs::write(
        codex.join("config.toml"),
        r#"model = "fixture"
model_provider = "fixture"
approval_policy = "never"
notify = ["say", "done"]
future_codex_key = 1

[model_providers.local]
name = "local"
base_url = "http://127.0.0.1:9/v1"
stream_max_retries = 0

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]
"#,
    )
    .expect("config.toml");
    std::fs::write(
        codex.join("auth.json"),
        r#"{"OPENAI_API_KEY": "sk-from-codex", "tokens": null, "last_refresh": null}"#,
    )
    .expect("auth.json");
    let skill = codex.join("skills/lint");
    std::fs::create_dir_all(skill.join("scripts")).expect("skill dir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: lint\ndescription: Run the linter\n---\nRun `make lint`.\n",
    )
    .expect("SKILL.md");
    std::fs::write(skill.join("scripts/lint.sh"), "make lint\n").expect("script");
    std::fs::create_dir_all(codex.join("skills/.system/builtin")).expect("system skills");
    std::fs::write(
        codex.join("skills/.system/builtin/SKILL.md"),
        "---\nname: builtin\ndescription: x\n---\n",
    )
    .expect("system skill");
    let memories = codex.join("memories/rollout_summaries");
    std::fs::create_dir_all(&memories).expect("memories");
    std::fs::write(
        codex.join("memories/memory_summary.md"),
        "# Memory\n- The user prefers small commits.\n",
    )
    .expect("summary");
    std::fs::write(memories.join("first.md"), "first thread\n").expect("rollout summary");
    std::fs::write(memories.join("second.md"), "second thread\n").expect("rollout summary");
    std::fs::write(
        codex.join("session_index.jsonl"),
        format!(
            "{}\n",
            json!({"id": SESSION, "thread_name": TITLE, "updated_at": "2026-12-06T02:53:12Z"})
        ),
    )
    .expect("session index");
    let day = codex.join("sessions/2026/12/06");
    std::fs::create_dir_all(&day).expect("sessions dir");
    let cwd = work.display().to_string();
    let event = |ts: &str, payload: Value| json!({"timestamp": ts, "type": "event_msg", "payload": payload});
    let lines = [
        json!({"timestamp": "2026-12-06T02:53:11.167Z", "type": "session_meta", "payload": {
            "id": SESSION, "session_id": SESSION, "timestamp": "2026-12-06T02:53:11.167Z",
            "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.171.0", "source": "cli",
            "model_provider": "fixture", "base_instructions": {"text": "…"}}}),
        event(
            "2026-12-06T02:53:11.200Z",
            json!({"type": "task_started", "turn_id": "turn-1", "started_at": 1_796_525_591}),
        ),
        json!({"timestamp": "2026-12-06T02:53:11.210Z", "type": "turn_context", "payload": {"turn_id": "turn-1", "cwd": cwd, "model": "fixture"}}),
        json!({"timestamp": "2026-12-06T02:53:11.220Z", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}}),
        event(
            "2026-12-06T02:53:11.239Z",
            json!({"type": "item_completed", "thread_id": SESSION, "turn_id": "turn-1",
            "item": {"type": "UserMessage", "id": "user-1", "content": [{"type": "text", "text": "fix the flaky test", "text_elements": []}]},
            "started_at_ms": 1_796_525_591_239_i64, "completed_at_ms": 1_796_525_591_239_i64}),
        ),
        event(
            "2026-12-06T02:53:11.402Z",
            json!({"type": "item_completed", "thread_id": SESSION, "turn_id": "turn-1",
            "item": {"type": "CommandExecution", "id": "call_1", "process_id": "4242", "command": ["/bin/bash", "-lc", "cargo test"],
                "cwd": format!("file://{cwd}"), "parsed_cmd": [{"type": "unknown", "cmd": "cargo test"}], "source": "unified_exec_startup",
                "status": "completed", "aggregated_output": "ok\n", "exit_code": 0, "duration": {"secs": 2, "nanos": 0}},
            "started_at_ms": 1_796_525_591_402_i64, "completed_at_ms": 1_796_525_593_402_i64}),
        ),
        event(
            "2026-12-06T02:53:13.447Z",
            json!({"type": "item_completed", "thread_id": SESSION, "turn_id": "turn-1",
            "item": {"type": "AgentMessage", "id": "msg_2", "content": [{"type": "Text", "text": "The test is fixed."}]},
            "started_at_ms": 1_796_525_593_447_i64, "completed_at_ms": 1_796_525_593_447_i64}),
        ),
        event(
            "2026-12-06T02:53:13.450Z",
            json!({"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 20, "cached_input_tokens": 0, "output_tokens": 10, "reasoning_output_tokens": 0, "total_tokens": 30},
            "last_token_usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 5, "reasoning_output_tokens": 0, "total_tokens": 15},
            "model_context_window": 258_400}}),
        ),
        event(
            "2026-12-06T02:53:13.460Z",
            json!({"type": "task_complete", "turn_id": "turn-1", "completed_at": 1_796_525_593, "duration_ms": 2260}),
        ),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(
        day.join(format!("rollout-2026-12-06T02-53-11-{SESSION}.jsonl")),
        text,
    )
    .expect("rollout");
    (codex, work)
}

/// A server on `home` importing from `codex`.
fn server(home: &Path, codex: &Path) -> Client {
    Client::start_with_env(home, &[("CODEX_HOME", codex.to_str().expect("utf-8 path"))])
}

/// The item types of a detection answer, in order.
fn types(detected: &Value) -> Vec<String> {
    detected["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["itemType"].as_str().expect("itemType").to_owned())
        .collect()
}

/// Runs `externalAgentConfig/import` on `items` and returns its `progress` notifications and
/// its `completed` one.
fn import(client: &mut Client, items: &Value) -> (Vec<Value>, Value) {
    let answer = client.call(
        "externalAgentConfig/import",
        json!({"migrationItems": items, "providerId": "e2e"}),
    );
    let id = answer["importId"].as_str().expect("importId").to_owned();
    let completed = client.notification("externalAgentConfig/import/completed");
    assert_eq!(completed["importId"], json!(id), "{completed}");
    let progress: Vec<Value> = client
        .backlog()
        .into_iter()
        .filter(|m| m["method"] == json!("externalAgentConfig/import/progress"))
        .map(|m| m["params"].clone())
        .collect();
    assert!(progress.iter().all(|p| p["importId"] == json!(id)));
    (progress, completed)
}

/// The result of `kind` in a `completed` notification.
fn result<'a>(completed: &'a Value, kind: &str) -> &'a Value {
    completed["itemTypeResults"]
        .as_array()
        .expect("itemTypeResults")
        .iter()
        .find(|r| r["itemType"] == json!(kind))
        .unwrap_or_else(|| panic!("no {kind} result in {completed}"))
}

/// The ids of the threads `thread/list` shows.
fn listed(client: &mut Client) -> Vec<String> {
    let list = client.call("thread/list", json!({"limit": 50}));
    list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|t| t["id"].as_str().expect("id").to_owned())
        .collect()
}

#[test]
fn a_codex_home_is_detected_imported_once_and_its_session_reads_and_resumes() {
    let root = scratch("import-codex-rpc");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join("config.toml"), "model_provider = \"fixture\"\n").expect("ours");
    let (codex, work) = codex_home(&root);
    let mut client = server(&home, &codex);

    let detected = client.call("externalAgentConfig/detect", json!({"includeHome": true}));
    assert_eq!(
        types(&detected),
        [
            "CONFIG",
            "MCP_SERVER_CONFIG",
            "SKILLS",
            "MEMORY",
            "SESSIONS"
        ],
        "{detected}"
    );
    assert_eq!(detected["connectors"], json!([]));
    let items = detected["items"].clone();
    let sessions = &items[4]["details"]["sessions"];
    assert_eq!(sessions.as_array().map(Vec::len), Some(1), "{sessions}");
    assert_eq!(sessions[0]["title"], json!(TITLE));
    assert_eq!(sessions[0]["cwd"], json!(work.display().to_string()));
    assert_eq!(items[2]["details"]["skills"], json!([{"name": "lint"}]));
    assert_eq!(items[1]["details"]["mcpServers"], json!([{"name": "docs"}]));
    // Repositories are read in place, and without `includeHome` nothing is looked at.
    let none = client.call("externalAgentConfig/detect", json!({"cwds": [work]}));
    assert_eq!(none["items"], json!([]));

    let (progress, completed) = import(&mut client, &items);
    assert_eq!(progress.len(), 5, "one progress per item: {progress:?}");
    // Everything but the sessions is done before the answer; the sessions come last.
    assert_eq!(
        progress[4]["itemTypeResults"][0]["itemType"],
        json!("SESSIONS")
    );

    let config = result(&completed, "CONFIG");
    let sources: Vec<&str> = config["successes"]
        .as_array()
        .expect("successes")
        .iter()
        .filter_map(|s| s["source"].as_str())
        .collect();
    for key in ["model", "approval_policy", "notify", "model_providers"] {
        assert!(
            sources.contains(&format!("config.toml {key}").as_str()),
            "{key} in {sources:?}"
        );
    }
    let failed: Vec<&str> = config["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .filter_map(|f| f["source"].as_str())
        .collect();
    assert_eq!(
        failed,
        [
            "config.toml future_codex_key",
            "config.toml model_providers.local.stream_max_retries"
        ],
        "{config}"
    );
    let written = std::fs::read_to_string(home.join("config.toml")).expect("our config");
    assert!(written.contains("approval_policy = \"never\""), "{written}");
    assert!(
        written.contains("notify"),
        "a Codex-only key is kept: {written}"
    );
    assert!(written.contains("[mcp_servers.docs]"), "{written}");
    assert!(
        written.contains("base_url = \"http://127.0.0.1:9/v1\""),
        "{written}"
    );
    assert!(!written.contains("future_codex_key") && !written.contains("stream_max_retries"));
    let auth = std::fs::read_to_string(home.join("auth.json")).expect("auth.json");
    assert!(auth.contains("sk-from-codex"));
    assert_eq!(mode(&home.join("auth.json")), 0o600);
    let account = client.call("account/read", json!({}));
    assert_eq!(account["account"], json!({"type": "apiKey"}), "{account}");
    assert!(home.join("skills/lint/scripts/lint.sh").is_file());
    assert!(!home.join("skills/.system").exists());
    assert!(home.join("memories/memory_summary.md").is_file());

    let session = &result(&completed, "SESSIONS")["successes"][0];
    assert_eq!(session["target"], json!(SESSION), "{completed}");
    assert_eq!(session["title"], json!(TITLE));
    assert_eq!(listed(&mut client), [SESSION]);
    let read = client.call(
        "thread/read",
        json!({"threadId": SESSION, "includeTurns": true}),
    );
    let thread = &read["thread"];
    assert_eq!(thread["name"], json!(TITLE), "{read}");
    assert_eq!(thread["preview"], json!("fix the flaky test"));
    assert_eq!(thread["cliVersion"], json!("0.171.0"));
    assert_eq!(thread["createdAt"], json!(1_796_525_591));
    assert_eq!(thread["cwd"], json!(work.display().to_string()));
    let turns = thread["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 1, "{read}");
    assert_eq!(turns[0]["status"], json!("completed"));
    assert_eq!(turns[0]["durationMs"], json!(2260));
    let kinds: Vec<&str> = turns[0]["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["type"].as_str())
        .collect();
    assert_eq!(kinds, ["userMessage", "commandExecution", "agentMessage"]);
    let command = &turns[0]["items"][1];
    assert_eq!(command["command"], json!("/bin/bash -lc 'cargo test'"));
    assert_eq!(command["cwd"], json!(work.display().to_string()));
    assert_eq!(command["exitCode"], json!(0));
    assert_eq!(turns[0]["items"][2]["text"], json!("The test is fixed."));

    let histories = client.call("externalAgentConfig/import/readHistories", Value::Null);
    assert_eq!(histories["connectors"], json!([]));
    assert_eq!(histories["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(histories["data"][0]["importId"], completed["importId"]);
    assert_eq!(histories["data"][0]["providerId"], json!("e2e"));

    // Twice changes nothing: nothing is left to detect, and the same items import again
    // without a second copy of the thread.
    let again = client.call("externalAgentConfig/detect", json!({"includeHome": true}));
    assert_eq!(again["items"], json!([]), "{again}");
    let (_, completed) = import(&mut client, &items);
    assert_eq!(
        result(&completed, "SESSIONS")["successes"][0]["target"],
        json!(SESSION)
    );
    assert_eq!(result(&completed, "SKILLS")["failures"], json!([]));
    assert_eq!(listed(&mut client), [SESSION]);
    drop(client);

    // After a restart the thread is still there, once, and resumes.
    let mut client = server(&home, &codex);
    assert_eq!(listed(&mut client), [SESSION]);
    let resumed = client.call("thread/resume", json!({"threadId": SESSION}));
    assert_eq!(
        resumed["thread"]["turns"].as_array().map(Vec::len),
        Some(1),
        "{resumed}"
    );
    assert_eq!(resumed["model"], json!("fixture"));
    let histories = client.call("externalAgentConfig/import/readHistories", Value::Null);
    assert_eq!(histories["data"].as_array().map(Vec::len), Some(2));
}

#[test]
fn records_of_imports_done_elsewhere_and_items_this_import_cannot_do() {
    let root = scratch("import-codex-history");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    let (codex, _) = codex_home(&root);
    let mut client = server(&home, &codex);

    let recorded = client.call(
        "externalAgentConfig/import/recordHistory",
        json!({"providerId": "claude-migrator", "itemTypeResults": [{
            "itemType": "AGENTS_MD",
            "successes": [{"itemType": "AGENTS_MD", "source": "CLAUDE.md", "target": "AGENTS.md"}],
            "failures": [{"itemType": "AGENTS_MD", "failureStage": "copy", "message": "denied"}],
        }]}),
    );
    let recorded_id = recorded["importId"].as_str().expect("importId").to_owned();
    let refused = client
        .request(
            "externalAgentConfig/import/recordHistory",
            json!({"providerId": " ", "itemTypeResults": []}),
        )
        .expect_err("empty providerId");
    assert_eq!(refused["code"], json!(-32602), "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("providerId"))
    );

    let outside = root.join("elsewhere.jsonl");
    std::fs::write(&outside, "{}\n").expect("outside");
    let (_, completed) = import(
        &mut client,
        &json!([
            {"itemType": "SESSIONS", "description": "one", "details": {"sessions": [
                {"path": outside, "cwd": "/"}]}},
            {"itemType": "PLUGINS", "description": "plugins"},
            {"itemType": "SKILLS", "description": "repo skills", "cwd": root},
            {"itemType": "SKILLS", "description": "missing", "details": {"skills": [{"name": "nope"}]}},
        ]),
    );
    let results = completed["itemTypeResults"].as_array().expect("results");
    assert_eq!(results.len(), 4, "{completed}");
    let failure = |kind: &str, error: &str| {
        results.iter().any(|r| {
            r["itemType"] == json!(kind)
                && r["failures"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(|f| f["errorType"] == json!(error)))
        })
    };
    assert!(failure("SESSIONS", "session_missing"), "{completed}");
    assert!(failure("PLUGINS", "unsupported_item"), "{completed}");
    assert!(failure("SKILLS", "repository_item"), "{completed}");
    assert!(failure("SKILLS", "skill_missing"), "{completed}");
    assert!(
        !home.join("skills").exists(),
        "nothing asked for was copied"
    );
    assert_eq!(listed(&mut client), Vec::<String>::new());

    let histories = client.call("externalAgentConfig/import/readHistories", Value::Null);
    let data = histories["data"].as_array().expect("data");
    assert_eq!(data.len(), 2, "{histories}");
    assert_eq!(data[0]["importId"], completed["importId"], "newest first");
    assert_eq!(data[1]["importId"], json!(recorded_id));
    assert_eq!(data[1]["providerId"], json!("claude-migrator"));
    assert_eq!(data[1]["successes"][0]["target"], json!("AGENTS.md"));
    assert_eq!(data[1]["failures"][0]["message"], json!("denied"));

    // An import of nothing answers and records nothing.
    let empty = client.call("externalAgentConfig/import", json!({"migrationItems": []}));
    assert!(empty["importId"].is_string());
    let histories = client.call("externalAgentConfig/import/readHistories", Value::Null);
    assert_eq!(histories["data"].as_array().map(Vec::len), Some(2));
    assert!(
        client.backlog().is_empty(),
        "no notification for an empty import"
    );
    let bad = client
        .request(
            "externalAgentConfig/import",
            json!({"migrationItems": [{"itemType": "NOTES"}]}),
        )
        .expect_err("unknown item type");
    assert_eq!(bad["code"], json!(-32602), "{bad}");
}

/// Runs `agentwire import codex` with `args`.
fn cli(home: &Path, codex: &Path, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["import", "codex"])
        .args(args)
        .env("AGENTWIRE_HOME", home)
        .env("CODEX_HOME", codex)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run agentwire import codex");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (
        output.status.code().unwrap_or(-1),
        format!("{stdout}{stderr}"),
    )
}

#[test]
fn the_cli_dry_runs_then_imports_once() {
    let root = scratch("import-codex-cli");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    let (codex, _) = codex_home(&root);

    let (code, out) = cli(&home, &codex, &["--dry-run"]);
    assert_eq!(code, 0, "{out}");
    for kind in [
        "CONFIG",
        "MCP_SERVER_CONFIG",
        "SKILLS",
        "MEMORY",
        "SESSIONS",
    ] {
        assert!(
            out.contains(&format!("would import  {kind}")),
            "{kind}: {out}"
        );
    }
    assert!(out.contains(TITLE), "{out}");
    assert!(out.contains("Nothing written (--dry-run)."), "{out}");
    assert!(!home.join("config.toml").exists() && !home.join("sessions").exists());

    let (code, out) = cli(&home, &codex, &[]);
    assert_eq!(code, 0, "settings left out are not failures: {out}");
    assert!(out.contains(&format!("-> {SESSION}")), "{out}");
    assert!(out.contains("left out  CONFIG"), "{out}");
    assert!(home.join("auth.json").is_file());

    let (code, out) = cli(&home, &codex, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Nothing to import"), "{out}");

    let mut client = server(&home, &codex);
    assert_eq!(listed(&mut client), [SESSION]);
    let histories = client.call("externalAgentConfig/import/readHistories", Value::Null);
    assert_eq!(
        histories["data"].as_array().map(Vec::len),
        Some(1),
        "{histories}"
    );

    let missing = root.join("no-codex-here");
    let (code, out) = cli(&home, &missing, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no Codex home"), "{out}");
}
