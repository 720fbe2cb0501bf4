//! Lifecycle hooks from `config.toml` run around turns and tools, through the binary against
//! the mock model: each hook command reads its event as JSON on stdin and runs under the
//! thread's sandbox in its working directory; `hook/started` and `hook/completed` go out in
//! order; a `PreToolUse` hook that exits 2 stops a shell call and the model is told why; a
//! `UserPromptSubmit` hook's output reaches the model as a `hookPrompt` item; a `Stop` hook
//! that blocks sends the turn back to the model once more.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::{Client, completed_turn, params, thread_id};
use crate::common::scratch;
use crate::mock_model::{MockModel, Reply, Sse};

/// A home and a workspace under a new scratch directory.
fn dirs(name: &str) -> (PathBuf, PathBuf) {
    let root = scratch(name);
    let (home, work) = (root.join("home"), root.join("work"));
    for dir in [&home, &work] {
        std::fs::create_dir_all(dir).expect("create dir");
    }
    (home, work)
}

/// A `config.toml` for the mock model at `base_url` (chat wire), a workspace-write sandbox,
/// no approvals, and `hooks` (TOML).
fn configure(home: &Path, base_url: &str, hooks: &str) {
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\napproval_policy = \"never\"\n\
         sandbox_mode = \"workspace-write\"\n\n{hooks}\n\n[sandbox_workspace_write]\n\
         exclude_tmpdir_env_var = true\nexclude_slash_tmp = true\n\n[model_providers.mock]\n\
         base_url = \"{base_url}\"\nwire_api = \"chat\"\nrequest_max_retries = 0\n"
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
}

/// A model reply that calls `shell` with `script` under `bash -c`.
fn shell_call(id: &str, script: &str) -> Reply {
    let arguments = json!({"command": ["bash", "-c", script]}).to_string();
    Reply::Stream(
        Sse::new()
            .tool_call(0, id, "shell", &arguments)
            .finish("tool_calls"),
    )
}

/// The (method, eventName, status) of every hook notification in `seen`, in order.
fn hook_trace(seen: &[Value]) -> Vec<(String, String, String)> {
    seen.iter()
        .filter(|m| m["method"] == json!("hook/started") || m["method"] == json!("hook/completed"))
        .map(|m| {
            let run = &m["params"]["run"];
            (
                m["method"].as_str().unwrap_or_default().to_owned(),
                run["eventName"].as_str().unwrap_or_default().to_owned(),
                run["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", path.display()))
}

/// A prompt hook adds context, a pre-tool hook lets one shell call through and refuses the
/// next (exit 2, reason on stderr), a post-tool hook sees the allowed call's result, a stop
/// hook runs at the end (and fails: the sandbox refuses its write outside the workspace);
/// every hook writes its stdin to a marker file in the workspace.
#[test]
fn hooks_run_around_the_prompt_and_tools_and_a_refusing_pre_tool_hook_blocks_a_shell_call() {
    let mock = MockModel::start(vec![
        shell_call("call_ok", "echo allowed > allowed.txt"),
        shell_call("call_no", "echo forbidden > forbidden.txt"),
        Sse::answer("Done."),
    ]);
    let (home, work) = dirs("hooks-run-tools");
    configure(
        &home,
        &mock.base_url(),
        r#"[[hooks.UserPromptSubmit]]
hooks = [{ type = "command", command = "cat > prompt.json; echo 'Hook context: the deploy freeze is on.'" }]

[[hooks.PreToolUse]]
matcher = "shell"
hooks = [{ type = "command", command = "cat > pre.json; if grep -q forbidden pre.json; then echo 'forbidden commands are not allowed here' >&2; exit 2; fi", timeout = 20 }]

[[hooks.PreToolUse]]
matcher = "apply_patch"
hooks = [{ type = "command", command = "touch never.txt" }]

[[hooks.PostToolUse]]
hooks = [{ type = "command", command = "cat > post.json" }]

[[hooks.Stop]]
hooks = [{ type = "command", command = "cat > stop.json; touch ../home/escaped" }]"#,
    );
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": work})));
    client.start_turn(&thread, "Clean up the build");
    let seen = client.until_turn_completed();
    client.stop();
    assert_eq!(completed_turn(&seen)["status"], json!("completed"));

    // The allowed call ran; the refused one did not; the other matcher's hook never ran.
    assert!(work.join("allowed.txt").exists());
    assert!(!work.join("forbidden.txt").exists());
    assert!(!work.join("never.txt").exists());
    // Hooks run under the thread's sandbox: nothing is written outside the workspace.
    assert!(!home.join("escaped").exists());

    // Each hook read its event on stdin.
    let prompt = read_json(&work.join("prompt.json"));
    assert_eq!(prompt["hook_event_name"], json!("UserPromptSubmit"));
    assert_eq!(prompt["prompt"], json!("Clean up the build"));
    assert_eq!(prompt["session_id"], json!(thread));
    assert_eq!(prompt["cwd"], json!(work.display().to_string()));
    let post = read_json(&work.join("post.json"));
    assert_eq!(post["hook_event_name"], json!("PostToolUse"));
    assert_eq!(post["tool_name"], json!("shell"));
    assert_eq!(post["tool_use_id"], json!("call_ok"));
    assert!(
        post["tool_response"]
            .as_str()
            .is_some_and(|r| r.contains("Exit code: 0")),
        "{post}"
    );
    let stop = read_json(&work.join("stop.json"));
    assert_eq!(stop["hook_event_name"], json!("Stop"));
    assert_eq!(stop["last_assistant_message"], json!("Done."));
    assert_eq!(stop["stop_hook_active"], json!(false));

    // Notifications, in order: each run starts, then completes.
    let trace = hook_trace(&seen);
    let expected: Vec<(String, String, String)> = [
        ("hook/started", "userPromptSubmit", "running"),
        ("hook/completed", "userPromptSubmit", "completed"),
        ("hook/started", "preToolUse", "running"),
        ("hook/completed", "preToolUse", "completed"),
        ("hook/started", "postToolUse", "running"),
        ("hook/completed", "postToolUse", "completed"),
        ("hook/started", "preToolUse", "running"),
        ("hook/completed", "preToolUse", "blocked"),
        ("hook/started", "stop", "running"),
        ("hook/completed", "stop", "failed"),
    ]
    .iter()
    .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
    .collect();
    assert_eq!(trace, expected);
    let completed = params(&seen, "hook/completed");
    let blocked = completed[3];
    assert_eq!(blocked["threadId"], json!(thread));
    assert_eq!(blocked["run"]["handlerType"], json!("command"));
    assert_eq!(blocked["run"]["executionMode"], json!("sync"));
    assert_eq!(blocked["run"]["scope"], json!("turn"));
    assert_eq!(blocked["run"]["source"], json!("user"));
    assert_eq!(
        blocked["run"]["entries"],
        json!([{"kind": "feedback", "text": "forbidden commands are not allowed here"}])
    );
    let started = params(&seen, "hook/started");
    assert_eq!(started[3]["run"]["id"], blocked["run"]["id"]);

    // The prompt hook's text is a hookPrompt item, before the user's message.
    let items: Vec<&Value> = params(&seen, "item/completed")
        .into_iter()
        .map(|p| &p["item"])
        .collect();
    let hook_prompt = items
        .iter()
        .position(|i| i["type"] == json!("hookPrompt"))
        .expect("a hookPrompt item");
    let user = items
        .iter()
        .position(|i| i["type"] == json!("userMessage"))
        .expect("a user message");
    assert!(hook_prompt < user, "{items:?}");
    assert_eq!(
        items[hook_prompt]["fragments"][0]["text"],
        json!("Hook context: the deploy freeze is on.")
    );
    assert_eq!(
        items[hook_prompt]["fragments"][0]["hookRunId"],
        completed[0]["run"]["id"]
    );

    // The model saw the context, and why its second call did not run.
    let bodies: Vec<Value> = mock.wait_requests(3).into_iter().map(|r| r.body).collect();
    assert!(
        bodies[0]["messages"]
            .to_string()
            .contains("Hook context: the deploy freeze is on."),
        "{}",
        bodies[0]
    );
    let last = bodies[2]["messages"].as_array().expect("messages");
    let refusal = last
        .iter()
        .find(|m| m["role"] == json!("tool") && m["tool_call_id"] == json!("call_no"))
        .expect("the refused call's result");
    let text = refusal["content"].to_string();
    assert!(
        text.contains("A hook refused this call")
            && text.contains("forbidden commands are not allowed here"),
        "{text}"
    );
}

/// A `Stop` hook that answers `decision: "block"` sends its reason to the model (a
/// `hookPrompt` item) and the turn goes on; the next time it lets the turn end.
#[test]
fn a_blocking_stop_hook_sends_the_turn_back_to_the_model_once() {
    let mock = MockModel::start(vec![Sse::answer("First."), Sse::answer("Tests ran.")]);
    let (home, work) = dirs("hooks-run-stop");
    configure(
        &home,
        &mock.base_url(),
        r#"[[hooks.Stop]]
hooks = [{ type = "command", command = "cat >> stops.jsonl; echo >> stops.jsonl; if [ -e again ]; then exit 0; fi; touch again; echo '{\"decision\": \"block\", \"reason\": \"Run the tests before you stop.\"}'" }]"#,
    );
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": work})));
    client.start_turn(&thread, "Fix it");
    let seen = client.until_turn_completed();
    client.stop();
    let turn = completed_turn(&seen);
    assert_eq!(turn["status"], json!("completed"));

    let statuses: Vec<String> = hook_trace(&seen)
        .into_iter()
        .filter(|(m, _, _)| m == "hook/completed")
        .map(|(_, _, s)| s)
        .collect();
    assert_eq!(statuses, ["blocked", "completed"]);
    let stops: Vec<Value> = std::fs::read_to_string(work.join("stops.jsonl"))
        .expect("stops")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(stops.len(), 2);
    assert_eq!(stops[0]["stop_hook_active"], json!(false));
    assert_eq!(stops[1]["stop_hook_active"], json!(true));
    assert_eq!(stops[1]["last_assistant_message"], json!("Tests ran."));

    let items: Vec<&Value> = params(&seen, "item/completed")
        .into_iter()
        .map(|p| &p["item"])
        .collect();
    let kinds: Vec<&str> = items
        .iter()
        .map(|i| i["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        ["userMessage", "agentMessage", "hookPrompt", "agentMessage"]
    );
    assert_eq!(
        items[2]["fragments"][0]["text"],
        json!("Run the tests before you stop.")
    );
    let bodies: Vec<Value> = mock.wait_requests(2).into_iter().map(|r| r.body).collect();
    let last = bodies[1]["messages"].as_array().expect("messages");
    assert_eq!(
        last.last().map(|m| m["content"].clone()),
        Some(json!("Run the tests before you stop.")),
        "{last:?}"
    );
}
