//! The engine as an MCP client, end to end: the real binary starts a real third-party MCP
//! server, `@modelcontextprotocol/server-everything` (npm, pinned in
//! `tools/mcp-servers/package-lock.json`, installed by `scripts/install-ci-tools.sh`), offers its
//! tools to the fixture model, runs them as `mcpToolCall` items, reports it in
//! `mcpServerStatus/list`, and serves `mcpServer/tool/call`, `mcpServer/resource/read` and
//! `config/mcpServer/reload`. Also `agentwire mcp` editing `config.toml`.
//!
//! Without the npm package these tests fail (they do not skip): run
//! `scripts/install-ci-tools.sh`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::{
    everything_over_http, fixture_steps, home_and_workspace, scratch, server_everything, signal,
    text,
};

/// `[mcp_servers.everything]` running the pinned server, plus `extra` lines in its table.
pub fn everything_config(extra: &str) -> String {
    format!(
        "\n[mcp_servers.everything]\ncommand = \"node\"\nargs = [{:?}]\nstartup_timeout_sec = 60\n{extra}\n",
        server_everything().display().to_string()
    )
}

/// A home whose fixture model answers with `steps`, with `config` appended to config.toml; a
/// client on it and a thread in its workspace.
fn session(name: &str, steps: Value, config: &str) -> (PathBuf, Client, String) {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(&home, steps, config);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    (home, client, thread)
}

fn tool_step(name: &str, arguments: Value) -> Value {
    json!({"type": "tool", "name": name, "arguments": arguments})
}

fn message(text: &str) -> Value {
    json!({"type": "message", "deltas": [text]})
}

/// The `mcpToolCall` items of `kind` (`item/started` or `item/completed`).
fn mcp_items<'a>(seen: &'a [Value], kind: &str) -> Vec<&'a Value> {
    params(seen, kind)
        .into_iter()
        .map(|p| &p["item"])
        .filter(|item| item["type"] == json!("mcpToolCall"))
        .collect()
}

/// The status of server `name` from `mcpServerStatus/list`.
fn status_of(client: &mut Client, name: &str) -> Value {
    let listed = client.call("mcpServerStatus/list", json!({"serverName": name}));
    listed["data"][0].clone()
}

#[test]
fn a_turn_calls_a_real_mcp_tool_as_an_mcp_tool_call_item() {
    let steps = json!([
        tool_step(
            "everything__echo",
            json!({"message": "hello from agentwire"})
        ),
        tool_step(
            "everything__trigger-long-running-operation",
            json!({"duration": 1, "steps": 2})
        ),
        message("done")
    ]);
    let (_home, mut client, thread) = session("mcp-turn", steps, &everything_config(""));
    client.start_turn(&thread, "Use the tools.");
    let seen = client.until_turn_completed();
    assert_eq!(
        completed_turn(&seen)["status"],
        json!("completed"),
        "{seen:#?}"
    );
    let started = mcp_items(&seen, "item/started");
    assert_eq!(started.len(), 2, "{seen:#?}");
    assert_eq!(started[0]["server"], json!("everything"));
    assert_eq!(started[0]["tool"], json!("echo"));
    assert_eq!(started[0]["status"], json!("inProgress"));
    assert_eq!(
        started[0]["arguments"],
        json!({"message": "hello from agentwire"})
    );
    let completed = mcp_items(&seen, "item/completed");
    assert_eq!(completed.len(), 2, "{seen:#?}");
    let echo = completed[0];
    assert_eq!(echo["status"], json!("completed"), "{echo}");
    assert_eq!(echo["error"], Value::Null);
    assert_eq!(echo["readOnlyHint"], json!(true), "{echo}");
    let text = echo["result"]["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("hello from agentwire"), "{echo}");
    assert!(echo["durationMs"].is_i64(), "{echo}");
    // The long-running operation reports progress, streamed for its item.
    let long = completed[1];
    assert_eq!(long["tool"], json!("trigger-long-running-operation"));
    assert_eq!(long["status"], json!("completed"), "{long}");
    let progress = params(&seen, "item/mcpToolCall/progress");
    assert!(!progress.is_empty(), "no progress: {seen:#?}");
    assert!(
        progress.iter().all(|p| p["itemId"] == long["id"]),
        "{progress:?}"
    );
    assert!(progress.iter().all(|p| p["threadId"] == json!(thread)));
    // The item is recorded with the turn.
    let read = client.call(
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    );
    let items = &read["thread"]["turns"][0]["items"];
    let recorded: Vec<&Value> = items
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| i["type"] == json!("mcpToolCall"))
        .collect();
    assert_eq!(recorded.len(), 2, "{read}");
    assert_eq!(recorded[0]["result"], echo["result"]);
}

#[test]
fn status_list_reports_the_real_server_with_its_tools_and_resources() {
    let config =
        everything_config("") + "\n[mcp_servers.off]\ncommand = \"node\"\nenabled = false\n";
    let (_home, mut client, _thread) = session("mcp-status", json!([message("hi")]), &config);
    let listed = client.call("mcpServerStatus/list", json!({}));
    let data = listed["data"].as_array().expect("data");
    assert_eq!(data.len(), 2, "{listed}");
    let server = &data[0];
    assert_eq!(server["name"], json!("everything"));
    assert_eq!(server["runtimeStatus"], json!("connected"), "{server}");
    assert_eq!(server["toolsError"], Value::Null, "{server}");
    assert_eq!(server["authStatus"], json!("unsupported"));
    assert_eq!(
        server["serverInfo"]["name"],
        json!("mcp-servers/everything")
    );
    for tool in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert_eq!(server["tools"][tool]["name"], json!(tool), "{server}");
    }
    assert!(server["tools"]["echo"]["inputSchema"]["properties"]["message"].is_object());
    let resources = server["resources"].as_array().expect("resources");
    assert!(
        resources
            .iter()
            .any(|r| r["uri"] == json!("demo://resource/static/document/architecture.md")),
        "{server}"
    );
    let off = &data[1];
    assert_eq!(off["name"], json!("off"));
    assert_eq!(off["runtimeStatus"], json!("disabled"));
    assert!(
        off["toolsError"]
            .as_str()
            .is_some_and(|e| e.contains("enabled = false"))
    );
    // The start was broadcast: starting, then ready.
    let first = client.notification("mcpServer/startupStatus/updated");
    assert_eq!(first["name"], json!("everything"));
    assert_eq!(first["status"], json!("starting"));
    let second = client.notification("mcpServer/startupStatus/updated");
    assert_eq!(second["status"], json!("ready"), "{second}");
    // `toolsAndAuthOnly` leaves resources out.
    let lean = client.call(
        "mcpServerStatus/list",
        json!({"serverName": "everything", "detail": "toolsAndAuthOnly"}),
    );
    assert_eq!(lean["data"][0]["resources"], json!([]));
    assert!(lean["data"][0]["tools"]["echo"].is_object());
}

#[test]
fn a_client_calls_tools_and_reads_resources_of_a_configured_server() {
    let (_home, mut client, thread) = session(
        "mcp-client-calls",
        json!([message("hi")]),
        &everything_config("disabled_tools = [\"get-env\"]"),
    );
    let echo = client.call(
        "mcpServer/tool/call",
        json!({"threadId": thread, "server": "everything", "tool": "echo", "arguments": {"message": "ping"}}),
    );
    assert!(
        echo["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("ping")),
        "{echo}"
    );
    let sum = client.call(
        "mcpServer/tool/call",
        json!({"threadId": thread, "server": "everything", "tool": "get-sum", "arguments": {"a": 2, "b": 40}}),
    );
    assert!(
        sum["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("42")),
        "{sum}"
    );
    let read = client.call(
        "mcpServer/resource/read",
        json!({"threadId": thread, "server": "everything", "uri": "demo://resource/static/document/architecture.md"}),
    );
    let contents = read["contents"].as_array().expect("contents");
    assert_eq!(
        contents[0]["uri"],
        json!("demo://resource/static/document/architecture.md")
    );
    assert!(
        contents[0]["text"].as_str().is_some_and(|t| !t.is_empty()),
        "{read}"
    );
    // Bad input names what was wrong.
    let unknown = client.call_err(
        "mcpServer/tool/call",
        json!({"threadId": thread, "server": "nope", "tool": "echo"}),
    );
    assert_eq!(unknown["code"], json!(-32602), "{unknown}");
    let message = unknown["message"].as_str().expect("message");
    assert!(
        message.contains("server") && message.contains("nope"),
        "{unknown}"
    );
    let disabled = client.call_err(
        "mcpServer/tool/call",
        json!({"threadId": thread, "server": "everything", "tool": "get-env"}),
    );
    assert_eq!(disabled["code"], json!(-32602), "{disabled}");
    assert!(
        disabled["message"]
            .as_str()
            .is_some_and(|m| m.contains("tool") && m.contains("get-env"))
    );
    let arguments = client.call_err(
        "mcpServer/tool/call",
        json!({"threadId": thread, "server": "everything", "tool": "echo", "arguments": [1]}),
    );
    assert_eq!(arguments["code"], json!(-32602), "{arguments}");
    assert!(
        arguments["message"]
            .as_str()
            .is_some_and(|m| m.contains("arguments"))
    );
    let no_thread = client.call_err(
        "mcpServer/tool/call",
        json!({"threadId": "00000000-0000-0000-0000-000000000000", "server": "everything", "tool": "echo"}),
    );
    assert_ne!(no_thread["code"], json!(-32601), "{no_thread}");
    let missing = client.call_err("mcpServer/resource/read", json!({"server": "everything"}));
    assert_eq!(missing["code"], json!(-32602), "{missing}");
    assert!(
        missing["message"]
            .as_str()
            .is_some_and(|m| m.contains("uri")),
        "{missing}"
    );
    // A tool that fails reports it in the result, not as an error.
    let failing = client.call(
        "mcpServer/tool/call",
        json!({"threadId": thread, "server": "everything", "tool": "get-sum", "arguments": {"a": "x"}}),
    );
    assert_eq!(failing["isError"], json!(true), "{failing}");
}

#[test]
fn an_mcp_servers_elicitation_reaches_the_client_and_its_answer_goes_back() {
    let (_home, mut client, thread) = session(
        "mcp-elicitation",
        json!([message("hi")]),
        &everything_config(""),
    );
    let call = |client: &mut Client| {
        client.send_request(
            "mcpServer/tool/call",
            json!({"threadId": thread, "server": "everything", "tool": "trigger-elicitation-request"}),
        )
    };
    let request = call(&mut client);
    let (id, asked) = client.server_request("mcpServer/elicitation/request");
    assert_eq!(asked["serverName"], json!("everything"));
    assert_eq!(asked["threadId"], json!(thread));
    assert_eq!(asked["mode"], json!("form"), "{asked}");
    assert_eq!(asked["requestedSchema"]["type"], json!("object"));
    assert!(
        asked["requestedSchema"]["properties"]["name"].is_object(),
        "{asked}"
    );
    client.send(&json!({"id": id, "result": {"action": "accept", "content": {"name": "Ada Lovelace", "check": true}}}));
    let answer = client.answer(&request).expect("tool result");
    let all: String = answer["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect();
    assert!(all.contains("Ada Lovelace"), "{answer}");
    // A malformed answer declines.
    let request = call(&mut client);
    let (id, _) = client.server_request("mcpServer/elicitation/request");
    client.send(&json!({"id": id, "result": {"action": "maybe"}}));
    let answer = client.answer(&request).expect("tool result");
    assert!(answer.to_string().contains("declined"), "{answer}");
}

#[test]
fn disabled_tools_are_not_offered_to_the_model() {
    let config = everything_config(
        "enabled_tools = [\"echo\", \"get-sum\"]\ndisabled_tools = [\"get-sum\"]",
    );
    let steps = json!([
        tool_step("everything__get-sum", json!({"a": 1, "b": 2})),
        tool_step("everything__echo", json!({"message": "allowed"})),
        message("done")
    ]);
    let (_home, mut client, thread) = session("mcp-disabled-tools", steps, &config);
    let status = status_of(&mut client, "everything");
    let tools: Vec<&String> = status["tools"].as_object().expect("tools").keys().collect();
    assert_eq!(tools, ["echo"], "{status}");
    client.start_turn(&thread, "Use the tools.");
    let seen = client.until_turn_completed();
    let items = mcp_items(&seen, "item/completed");
    // `get-sum` is not a tool the model has: no item; `echo` runs.
    assert_eq!(items.len(), 1, "{seen:#?}");
    assert_eq!(items[0]["tool"], json!("echo"));
}

#[test]
fn the_model_is_offered_qualified_mcp_tool_names() {
    use crate::mock_model::{MockModel, Sse};
    let mock = MockModel::start(vec![Sse::answer("Nothing to do.")]);
    let root = scratch("mcp-offered");
    let (home, workspace) = home_and_workspace(&root);
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_provider = \"mock\"\nmodel = \"m\"\n[model_providers.mock]\nbase_url = {:?}\n{}",
            mock.base_url(),
            everything_config("disabled_tools = [\"get-env\"]")
        ),
    )
    .expect("config");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, "hi");
    client.until_turn_completed();
    let requests = mock.wait_requests(1);
    let names: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(names.contains(&"shell"), "{names:?}");
    assert!(names.contains(&"everything__echo"), "{names:?}");
    assert!(names.contains(&"everything__get-sum"), "{names:?}");
    assert!(!names.contains(&"everything__get-env"), "{names:?}");
    assert!(
        names.iter().all(|n| n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')),
        "{names:?}"
    );
}

#[test]
fn a_required_server_that_fails_fails_thread_and_turn_start_naming_it() {
    let root = scratch("mcp-required");
    let (home, workspace) = home_and_workspace(&root);
    let config = "\n[mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\nrequired = true\n";
    fixture_steps(&home, json!([message("hi")]), config);
    let mut client = Client::start(&home);
    let error = client.call_err("thread/start", json!({"cwd": workspace}));
    let text = error["message"].as_str().expect("message");
    assert!(
        text.contains("broken") && text.contains("required"),
        "{error}"
    );
    assert!(text.contains("/nonexistent/mcp-server"), "{error}");
    // The same server, not required: threads start; its status says why it failed.
    fixture_steps(
        &home,
        json!([message("hi")]),
        "\n[mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n",
    );
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, "hi");
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    let status = status_of(&mut client, "broken");
    assert_eq!(status["runtimeStatus"], json!("failed"), "{status}");
    assert!(
        status["toolsError"]
            .as_str()
            .is_some_and(|e| e.contains("/nonexistent/mcp-server")),
        "{status}"
    );
}

/// The pid of the server-everything process the agentwire process `parent` started.
fn server_pid(parent: u32) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let after = stat.rsplit_once(')')?.1;
            let ppid: u32 = after.split_whitespace().nth(1)?.parse().ok()?;
            let state = after.split_whitespace().next()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            (ppid == parent
                && state != "Z"
                && String::from_utf8_lossy(&cmdline).contains("server-everything"))
            .then_some(pid)
        })
}

/// Waits (a bounded number of times) until process `pid` is gone from `/proc` (reaped).
fn reaped(pid: u32) -> bool {
    let path = PathBuf::from(format!("/proc/{pid}"));
    for _ in 0..400 {
        if !path.exists() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    false
}

#[test]
fn a_crashed_server_is_restarted_on_next_use() {
    let (_home, mut client, thread) = session(
        "mcp-restart",
        json!([message("hi")]),
        &everything_config(""),
    );
    let echo = json!({"threadId": thread, "server": "everything", "tool": "echo", "arguments": {"message": "one"}});
    client.call("mcpServer/tool/call", echo.clone());
    let first = server_pid(client.pid()).expect("the MCP server runs as a child");
    signal(first, "KILL");
    // The engine reaps its child once it has seen the server's output end: wait for that,
    // then use the server again.
    assert!(
        reaped(first),
        "the engine did not notice that the server exited"
    );
    let again = client.call("mcpServer/tool/call", echo);
    assert!(
        again["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("one")),
        "{again}"
    );
    let second = server_pid(client.pid()).expect("restarted");
    assert_ne!(first, second);
    assert_eq!(
        status_of(&mut client, "everything")["runtimeStatus"],
        json!("connected")
    );
}

#[test]
fn reload_applies_config_changes_to_running_servers() {
    let (home, mut client, thread) =
        session("mcp-reload", json!([message("hi")]), &everything_config(""));
    let echo = json!({"threadId": thread, "server": "everything", "tool": "echo", "arguments": {"message": "x"}});
    client.call("mcpServer/tool/call", echo.clone());
    let first = server_pid(client.pid()).expect("running");
    // The server is renamed in config.toml: after the reload the old name is gone and its
    // process stopped.
    let config = std::fs::read_to_string(home.join("config.toml")).expect("config");
    std::fs::write(
        home.join("config.toml"),
        config.replace("[mcp_servers.everything]", "[mcp_servers.renamed]"),
    )
    .expect("rewrite");
    let answer = client.call("config/mcpServer/reload", Value::Null);
    assert_eq!(answer, json!({}));
    let gone = client.call_err("mcpServer/tool/call", echo);
    assert_eq!(gone["code"], json!(-32602), "{gone}");
    assert!(
        gone["message"]
            .as_str()
            .is_some_and(|m| m.contains("everything"))
    );
    let renamed = client.call(
        "mcpServer/tool/call",
        json!({"threadId": thread, "server": "renamed", "tool": "echo", "arguments": {"message": "y"}}),
    );
    assert!(
        renamed["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains('y'))
    );
    // The old process stops in the background: once it is gone, the one left is the new one.
    assert!(reaped(first), "the reload did not stop the old server");
    let second = server_pid(client.pid()).expect("the renamed server runs");
    assert_ne!(first, second);
    let listed = client.call("mcpServerStatus/list", json!({}));
    let names: Vec<&Value> = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|s| &s["name"])
        .collect();
    assert_eq!(names, [&json!("renamed")]);
}

#[test]
fn approval_modes_fall_back_from_tool_to_server_and_a_decline_fails_the_item() {
    // The server's default is `prompt`; `get-sum` overrides it with `approve`.
    let config = everything_config("default_tools_approval_mode = \"prompt\"")
        + "[mcp_servers.everything.tools.get-sum]\napproval_mode = \"approve\"\n";
    let steps = json!([
        tool_step("everything__echo", json!({"message": "needs consent"})),
        tool_step("everything__get-sum", json!({"a": 1, "b": 1})),
        message("done")
    ]);
    let (_home, mut client, thread) = session("mcp-approval", steps, &config);
    client.start_turn(&thread, "go");
    let (id, asked) = client.server_request("mcpServer/elicitation/request");
    assert_eq!(asked["serverName"], json!("everything"));
    assert_eq!(
        asked["_meta"]["codex_approval_kind"],
        json!("mcp_tool_call"),
        "{asked}"
    );
    assert_eq!(asked["_meta"]["tool"], json!("echo"), "{asked}");
    assert!(asked["turnId"].is_string());
    client.send(&json!({"id": id, "result": {"action": "decline"}}));
    let seen = client.until_turn_completed();
    // Only `echo` asked.
    assert!(
        !seen
            .iter()
            .any(|m| m["method"] == json!("mcpServer/elicitation/request")),
        "{seen:#?}"
    );
    let items = mcp_items(&seen, "item/completed");
    assert_eq!(items.len(), 2, "{seen:#?}");
    assert_eq!(items[0]["tool"], json!("echo"));
    assert_eq!(items[0]["status"], json!("failed"));
    assert!(
        items[0]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("declined"))
    );
    assert_eq!(items[0]["result"], Value::Null);
    assert_eq!(items[1]["tool"], json!("get-sum"));
    assert_eq!(items[1]["status"], json!("completed"), "{}", items[1]);
}

#[test]
fn an_elicitation_during_a_turn_carries_the_turn_and_an_interrupt_stops_a_call() {
    let steps = json!([
        tool_step("everything__trigger-elicitation-request", json!({})),
        tool_step(
            "everything__trigger-long-running-operation",
            json!({"duration": 30, "steps": 30})
        ),
        message("never")
    ]);
    let (_home, mut client, thread) =
        session("mcp-turn-elicitation", steps, &everything_config(""));
    let turn = client.start_turn(&thread, "go");
    let (id, asked) = client.server_request("mcpServer/elicitation/request");
    assert_eq!(asked["turnId"], json!(turn), "{asked}");
    assert_eq!(asked["mode"], json!("form"));
    client.send(
        &json!({"id": id, "result": {"action": "accept", "content": {"name": "Grace Hopper"}}}),
    );
    // The long operation reports progress; interrupt it then.
    let progress = client.notification("item/mcpToolCall/progress");
    assert_eq!(progress["turnId"], json!(turn));
    client.call(
        "turn/interrupt",
        json!({"threadId": thread, "turnId": turn}),
    );
    let seen = client.until_turn_completed();
    assert_eq!(completed_turn(&seen)["status"], json!("interrupted"));
    let items = mcp_items(&seen, "item/completed");
    assert_eq!(items.len(), 2, "{seen:#?}");
    let elicited = items[0]["result"].to_string();
    assert!(elicited.contains("Grace Hopper"), "{}", items[0]);
    assert_eq!(items[1]["tool"], json!("trigger-long-running-operation"));
    assert_eq!(items[1]["status"], json!("failed"));
    assert_eq!(items[1]["error"]["message"], json!("interrupted"));
}

/// `agentwire mcp ARGS` with `home` as `$AGENTWIRE_HOME`: (success, stdout, stderr).
fn mcp(home: &Path, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("mcp")
        .args(args)
        .env("AGENTWIRE_HOME", home)
        .output()
        .expect("run agentwire mcp");
    let (out, err) = text(&output);
    (output.status.success(), out, err)
}

/// Whether every line of `original` is still in `written`, in the same order.
fn keeps(written: &str, original: &str) -> bool {
    let mut lines = written.lines();
    original
        .lines()
        .filter(|l| !l.is_empty())
        .all(|wanted| lines.any(|l| l == wanted))
}

#[test]
fn the_mcp_command_edits_config_toml_keeping_comments() {
    let root = scratch("mcp-cli");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    let original = "# my agentwire settings\nmodel = \"m\" # keep this\n\n# servers:\n";
    std::fs::write(home.join("config.toml"), original).expect("config");
    let (ok, out, err) = mcp(
        &home,
        &[
            "add",
            "docs",
            "--env",
            "TOKEN=abc",
            "--",
            "docs-server",
            "--stdio",
        ],
    );
    assert!(ok, "{err}");
    assert!(out.contains("Added") && out.contains("docs"), "{out}");
    let (ok, _, err) = mcp(
        &home,
        &[
            "add",
            "remote",
            "--url",
            "https://mcp.example.com/mcp",
            "--bearer-token-env-var",
            "REMOTE_TOKEN",
        ],
    );
    assert!(ok, "{err}");
    let written = std::fs::read_to_string(home.join("config.toml")).expect("read");
    assert!(keeps(&written, original), "{written}");
    assert!(written.contains("[mcp_servers.docs]"), "{written}");
    let (ok, out, _) = mcp(&home, &["list", "--json"]);
    assert!(ok);
    let listed: Value = serde_json::from_str(&out).expect("list --json is JSON");
    assert_eq!(listed[0]["name"], json!("docs"));
    assert_eq!(listed[0]["transport"]["type"], json!("stdio"));
    assert_eq!(listed[0]["transport"]["command"], json!("docs-server"));
    assert_eq!(listed[0]["transport"]["args"], json!(["--stdio"]));
    assert_eq!(listed[0]["transport"]["env"], json!({"TOKEN": "abc"}));
    assert_eq!(listed[1]["name"], json!("remote"));
    assert_eq!(
        listed[1]["transport"]["url"],
        json!("https://mcp.example.com/mcp")
    );
    assert_eq!(
        listed[1]["transport"]["bearer_token_env_var"],
        json!("REMOTE_TOKEN")
    );
    let (ok, out, _) = mcp(&home, &["list"]);
    assert!(
        ok && out.contains("docs") && out.contains("https://mcp.example.com/mcp"),
        "{out}"
    );
    let (ok, out, _) = mcp(&home, &["get", "docs", "--json"]);
    assert!(ok);
    let got: Value = serde_json::from_str(&out).expect("get --json is JSON");
    assert_eq!(got["name"], json!("docs"));
    let (ok, out, _) = mcp(&home, &["get", "docs"]);
    assert!(
        ok && out.contains("docs-server") && !out.contains("abc"),
        "{out}"
    );
    // Unknown names and bad input are errors naming them.
    let (ok, _, err) = mcp(&home, &["get", "nope"]);
    assert!(!ok && err.contains("nope"), "{err}");
    let (ok, _, err) = mcp(&home, &["remove", "nope"]);
    assert!(!ok && err.contains("nope"), "{err}");
    let (ok, _, err) = mcp(&home, &["add", "bad.name", "--", "x"]);
    assert!(!ok && err.contains("bad.name"), "{err}");
    let (ok, _, err) = mcp(&home, &["add", "nothing"]);
    assert!(!ok && err.contains("--url"), "{err}");
    let (ok, out, err) = mcp(&home, &["remove", "docs"]);
    assert!(ok && out.contains("Removed"), "{err}");
    let written = std::fs::read_to_string(home.join("config.toml")).expect("read");
    assert!(keeps(&written, original), "{written}");
    assert!(!written.contains("docs-server"), "{written}");
    assert!(written.contains("[mcp_servers.remote]"), "{written}");
    // The server reads what the command wrote.
    let mut client = Client::start(&home);
    let listed = client.call(
        "mcpServerStatus/list",
        json!({"serverName": "remote", "detail": "toolsAndAuthOnly"}),
    );
    assert_eq!(
        listed["data"][0]["authStatus"],
        json!("bearerToken"),
        "{listed}"
    );
}

/// Runs `get-env` of a server started with `config` by an agentwire whose own environment
/// holds `env`; returns the tool's text.
fn server_environment(name: &str, config: &str, env: &[(&str, &str)]) -> String {
    let root = scratch(name);
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(&home, json!([message("hi")]), config);
    let mut client = Client::spawn_with_env(&home, &[], env);
    client.call(
        "initialize",
        json!({"clientInfo": {"name": "e2e", "version": "0"}}),
    );
    client.send(&json!({"method": "initialized"}));
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let answer = client.call(
        "mcpServer/tool/call",
        json!({"threadId": thread, "server": "everything", "tool": "get-env"}),
    );
    answer["content"][0]["text"]
        .as_str()
        .expect("get-env text")
        .to_owned()
}

#[test]
fn a_stdio_server_gets_its_configured_env_and_a_whitelist_never_the_servers_secrets() {
    let config = everything_config(
        "env = { CONFIGURED_FOR_MCP = \"yes-configured\" }\nenv_vars = [\"PASSED_THROUGH\"]",
    );
    let text = server_environment(
        "mcp-env",
        &config,
        &[
            ("OPENAI_API_KEY", "sk-e2e-must-not-leak"),
            ("PASSED_THROUGH", "named-in-env-vars"),
        ],
    );
    assert!(text.contains("yes-configured"), "{text}");
    assert!(text.contains("named-in-env-vars"), "{text}");
    assert!(text.contains("\"PATH\""), "{text}");
    assert!(!text.contains("sk-e2e-must-not-leak"), "{text}");
    assert!(!text.contains("OPENAI_API_KEY"), "{text}");
    assert!(!text.contains("AGENTWIRE_HOME"), "{text}");
}

#[test]
fn tool_and_startup_timeouts_fail_naming_the_setting() {
    let config = everything_config("tool_timeout_sec = 0.5")
        + "\n[mcp_servers.silent]\ncommand = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_ms = 500\n";
    let (_home, mut client, thread) = session("mcp-timeouts", json!([message("hi")]), &config);
    let slow = client.call_err(
        "mcpServer/tool/call",
        json!({"threadId": thread, "server": "everything", "tool": "trigger-long-running-operation", "arguments": {"duration": 5, "steps": 2}}),
    );
    assert_eq!(slow["code"], json!(-32603), "{slow}");
    assert!(
        slow["message"]
            .as_str()
            .is_some_and(|m| m.contains("tool_timeout_sec") && m.contains("everything")),
        "{slow}"
    );
    let silent = status_of(&mut client, "silent");
    assert_eq!(silent["runtimeStatus"], json!("failed"), "{silent}");
    assert!(
        silent["toolsError"]
            .as_str()
            .is_some_and(|e| e.contains("startup_timeout_sec")),
        "{silent}"
    );
}

#[test]
fn a_streamable_http_server_is_reached_by_url_with_a_bearer_token() {
    let (_server, port) = everything_over_http();
    let config = format!(
        "\n[mcp_servers.everything]\nurl = \"http://127.0.0.1:{port}/mcp\"\nbearer_token_env_var = \"E2E_MCP_TOKEN\"\n\
         [mcp_servers.tokenless]\nurl = \"http://127.0.0.1:{port}/mcp\"\nbearer_token_env_var = \"E2E_UNSET_TOKEN\"\n"
    );
    let root = scratch("mcp-http");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(
        &home,
        json!([
            tool_step("everything__echo", json!({"message": "over http"})),
            message("done")
        ]),
        &config,
    );
    let mut client = Client::spawn_with_env(&home, &[], &[("E2E_MCP_TOKEN", "token-e2e")]);
    client.call(
        "initialize",
        json!({"clientInfo": {"name": "e2e", "version": "0"}}),
    );
    client.send(&json!({"method": "initialized"}));
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, "go");
    let seen = client.until_turn_completed();
    let items = mcp_items(&seen, "item/completed");
    assert_eq!(items.len(), 1, "{seen:#?}");
    assert_eq!(items[0]["status"], json!("completed"), "{}", items[0]);
    assert!(
        items[0]["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("over http"))
    );
    let status = status_of(&mut client, "everything");
    assert_eq!(status["authStatus"], json!("bearerToken"));
    assert_eq!(
        status["httpOrigin"],
        json!(format!("http://127.0.0.1:{port}"))
    );
    assert_eq!(status["runtimeStatus"], json!("connected"));
    // A token variable that is not set fails the start, naming it.
    let tokenless = status_of(&mut client, "tokenless");
    assert_eq!(tokenless["runtimeStatus"], json!("failed"), "{tokenless}");
    assert!(
        tokenless["toolsError"]
            .as_str()
            .is_some_and(|e| e.contains("E2E_UNSET_TOKEN")),
        "{tokenless}"
    );
}

/// A server name long enough that `<server>__<tool>` passes 64 characters.
const LONG_SERVER: &str = "an_mcp_server_whose_name_alone_takes_up_most_of_the_64_chars";

/// `[mcp_servers.<name>]` (quoted) running the pinned server with only `echo` and `get-sum`.
fn named_everything(name: &str) -> String {
    format!(
        "\n[mcp_servers.{name:?}]\ncommand = \"node\"\nargs = [{:?}]\nstartup_timeout_sec = 60\nenabled_tools = [\"echo\", \"get-sum\"]\n",
        server_everything().display().to_string()
    )
}

/// Whether `name` ends with `_` and a hash (at least 8 lowercase hex digits).
fn ends_with_hash(name: &str) -> bool {
    name.rsplit_once('_').is_some_and(|(_, hash)| {
        hash.len() >= 8
            && hash
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
    })
}

/// Attacks "a name longer than 64 characters, or one that would collide with another, is cut
/// and ends with a hash" (Tools for the model): a long server name, and `a.b` next to `a_b`
/// (both `a_b` once sanitised), offered to a mock model; then each cut name is called by the
/// fixture model and must reach its own server and tool.
#[test]
fn long_and_colliding_tool_names_are_cut_with_a_hash_and_still_reach_their_tool() {
    use crate::mock_model::{MockModel, Sse};
    let servers =
        named_everything(LONG_SERVER) + &named_everything("a.b") + &named_everything("a_b");
    let mock = MockModel::start(vec![Sse::answer("Nothing to do.")]);
    let root = scratch("mcp-cut-names");
    let (home, workspace) = home_and_workspace(&root);
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_provider = \"mock\"\nmodel = \"m\"\n[model_providers.mock]\nbase_url = {:?}\n{servers}",
            mock.base_url(),
        ),
    )
    .expect("config");
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, "hi");
    client.until_turn_completed();
    drop(client);
    let requests = mock.wait_requests(1);
    // (name, description) of every MCP function offered.
    let offered: Vec<(String, String)> = requests[0].body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| {
            let name = t["function"]["name"].as_str()?;
            let description = t["function"]["description"].as_str().unwrap_or_default();
            (name.starts_with("a_b__") || name.starts_with(&LONG_SERVER[..40]))
                .then(|| (name.to_owned(), description.to_owned()))
        })
        .collect();
    let names: Vec<&str> = offered.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    let unique: std::collections::HashSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "names collide: {names:?}");
    assert!(
        names.iter().all(|n| n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')),
        "{names:?}"
    );
    // The long server's tools: cut, starting like the plain name, ending with a hash.
    assert!(format!("{LONG_SERVER}__echo").len() > 64);
    let long: Vec<&(String, String)> = offered
        .iter()
        .filter(|(n, _)| n.starts_with(&LONG_SERVER[..40]))
        .collect();
    assert_eq!(long.len(), 2, "{names:?}");
    assert!(
        long.iter().all(|(n, _)| n.len() == 64 && ends_with_hash(n)),
        "{names:?}"
    );
    // The tool is told apart by its description (what the server gave).
    let long_of = |needle: &str| {
        long.iter()
            .find(|(_, d)| d.to_lowercase().contains(needle))
            .map(|(n, _)| n.clone())
            .unwrap_or_else(|| panic!("no `{needle}` tool of the long server: {offered:?}"))
    };
    let long_echo = long_of("echo");
    let long_sum = long_of("sum");
    // `a.b` and `a_b` would both be `a_b__echo`: one keeps it, the other is cut and hashed.
    assert!(
        names.contains(&"a_b__echo") && names.contains(&"a_b__get-sum"),
        "{names:?}"
    );
    let collided: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.starts_with("a_b__") && !["a_b__echo", "a_b__get-sum"].contains(n))
        .collect();
    assert_eq!(collided.len(), 2, "{names:?}");
    assert!(collided.iter().all(|n| ends_with_hash(n)), "{names:?}");
    // The fixture model calls each name; each reaches its own server and tool.
    let collided_echo = collided
        .iter()
        .find(|n| {
            offered
                .iter()
                .any(|(o, d)| o == *n && d.to_lowercase().contains("echo"))
        })
        .map(|n| (*n).to_owned())
        .expect("a cut echo");
    let steps = json!([
        tool_step(&long_sum, json!({"a": 2, "b": 40})),
        tool_step(&long_echo, json!({"message": "long echo"})),
        tool_step("a_b__echo", json!({"message": "plain"})),
        tool_step(&collided_echo, json!({"message": "hashed"})),
        message("done")
    ]);
    fixture_steps(&home, steps, &servers);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    client.start_turn(&thread, "Use the tools.");
    let seen = client.until_turn_completed();
    let items = mcp_items(&seen, "item/completed");
    let called: Vec<(&Value, &Value, &Value)> = items
        .iter()
        .map(|i| (&i["server"], &i["tool"], &i["status"]))
        .collect();
    assert_eq!(called.len(), 4, "{called:?}");
    assert_eq!(
        called[..2],
        [
            (&json!(LONG_SERVER), &json!("get-sum"), &json!("completed")),
            (&json!(LONG_SERVER), &json!("echo"), &json!("completed")),
        ]
    );
    let text = |i: usize| items[i]["result"]["content"][0]["text"].to_string();
    assert!(text(0).contains("42"), "{}", text(0));
    assert!(text(1).contains("long echo"), "{}", text(1));
    // The plain and the hashed `echo` are the two different servers.
    assert_eq!(called[2].1, &json!("echo"));
    assert_eq!(called[3].1, &json!("echo"));
    assert_eq!(called[2].2, &json!("completed"));
    assert_eq!(called[3].2, &json!("completed"));
    let servers: std::collections::HashSet<&Value> = [called[2].0, called[3].0].into();
    assert_eq!(servers, [&json!("a.b"), &json!("a_b")].into(), "{called:?}");
    assert!(text(3).contains("hashed"), "{}", text(3));
}

/// Runs one turn on `thread` under the approval `policy`, accepting every approval the client
/// is asked for; returns the (server, tool) of each ask, in order, and everything up to
/// `turn/completed`. Waiting for either an ask or the end of the turn, it polls with a cheap
/// request, so an ask that should not come fails the test instead of hanging it.
fn turn_accepting_asks(
    client: &mut Client,
    thread: &str,
    policy: &Value,
) -> (Vec<(String, String)>, Vec<Value>) {
    client.start_turn_with(thread, "go", json!({"approvalPolicy": policy}));
    let mut asked = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let ask = client.notifications.iter().position(|m| {
            m["method"] == json!("mcpServer/elicitation/request") && m.get("id").is_some()
        });
        if let Some(at) = ask {
            let request = client.notifications.remove(at).expect("position is valid");
            let params = &request["params"];
            assert_eq!(
                params["_meta"]["codex_approval_kind"],
                json!("mcp_tool_call"),
                "{params}"
            );
            asked.push((
                params["serverName"].as_str().unwrap_or_default().to_owned(),
                params["_meta"]["tool"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ));
            client.send(&json!({"id": request["id"], "result": {"action": "accept"}}));
            continue;
        }
        if client
            .notifications
            .iter()
            .any(|m| m["method"] == json!("turn/completed"))
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the turn under {policy} neither asked nor ended; asked so far: {asked:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        client.call(
            "thread/read",
            json!({"threadId": thread, "includeTurns": false}),
        );
    }
    (asked, client.until_turn_completed())
}

/// Attacks the Approvals table and the sentence after it: for each approval mode (as a
/// server's `default_tools_approval_mode`), each thread approval policy, and a tool with
/// `readOnlyHint: true` (`echo`) or `false` (`toggle-simulated-logging`): whether the client
/// is asked, and whether the call then runs or is refused with the policy's reason (the
/// item's error, the text the model is given for the call).
#[test]
fn approval_modes_ask_or_refuse_by_policy_and_read_only_hint() {
    let mut config = String::new();
    for mode in ["approve", "prompt", "auto"] {
        config += &named_everything(mode).replace("\"get-sum\"", "\"toggle-simulated-logging\"");
        config += &format!("default_tools_approval_mode = {mode:?}\n");
    }
    let mut steps = Vec::new();
    for mode in ["approve", "prompt", "auto"] {
        steps.push(tool_step(
            &format!("{mode}__echo"),
            json!({"message": "read only"}),
        ));
        steps.push(tool_step(
            &format!("{mode}__toggle-simulated-logging"),
            json!({}),
        ));
    }
    steps.push(message("done"));
    let (_home, mut client, thread) = session("mcp-approval-table", json!(steps), &config);
    let refused = "The approval policy does not allow asking, and this tool needs approval; \
                   it was not run.";
    let granular = |mcp_elicitations: bool| json!({"granular": {"sandbox_approval": true, "rules": true, "mcp_elicitations": mcp_elicitations}});
    // Per policy: the (server, tool) asked, and the (server, tool) refused; the rest run.
    let table = [
        (
            json!("untrusted"),
            vec![
                ("prompt", "echo"),
                ("prompt", "toggle-simulated-logging"),
                ("auto", "toggle-simulated-logging"),
            ],
            vec![],
        ),
        (
            json!("on-request"),
            vec![("prompt", "echo"), ("prompt", "toggle-simulated-logging")],
            vec![],
        ),
        (
            granular(true),
            vec![("prompt", "echo"), ("prompt", "toggle-simulated-logging")],
            vec![],
        ),
        (
            json!("never"),
            vec![],
            vec![("prompt", "echo"), ("prompt", "toggle-simulated-logging")],
        ),
        (
            granular(false),
            vec![],
            vec![("prompt", "echo"), ("prompt", "toggle-simulated-logging")],
        ),
    ];
    for (policy, asks, refusals) in table {
        let (asked, seen) = turn_accepting_asks(&mut client, &thread, &policy);
        let want: Vec<(String, String)> = asks
            .iter()
            .map(|(s, t)| ((*s).to_owned(), (*t).to_owned()))
            .collect();
        assert_eq!(asked, want, "asks under {policy}");
        let items = mcp_items(&seen, "item/completed");
        assert_eq!(items.len(), 6, "under {policy}: {seen:#?}");
        for item in items {
            let (server, tool) = (item["server"].as_str(), item["tool"].as_str());
            let call = (server.unwrap_or_default(), tool.unwrap_or_default());
            if refusals.contains(&call) {
                assert_eq!(
                    item["status"],
                    json!("failed"),
                    "{call:?} under {policy}: {item}"
                );
                assert_eq!(
                    item["error"]["message"],
                    json!(refused),
                    "{call:?} under {policy}"
                );
                assert_eq!(item["result"], Value::Null, "{call:?} under {policy}");
            } else {
                assert_eq!(
                    item["status"],
                    json!("completed"),
                    "{call:?} under {policy}: {item}"
                );
                assert!(item["result"]["content"][0]["text"].is_string(), "{item}");
            }
        }
        assert_eq!(completed_turn(&seen)["status"], json!("completed"));
    }
}
