//! `codex exec --remote URL --json`, Codex's own non-interactive client (the pinned 0.171.0
//! binary, unchanged), against the built `agentwire app-server` on the fixture model: the
//! JSONL events Codex prints for a text turn and for a turn that runs a command and applies a
//! patch, over ws:// with a bearer token and over unix://, and `codex exec resume ID`. The
//! server records the exchange; no request may be answered with an error.
//!
//! `codex exec --remote` takes only the prompt, `resume ID` and output options (it refuses
//! `--dangerously-bypass-approvals-and-sandbox` and other agent settings: "configure the agent
//! on the server"); it starts its threads with the `never` approval policy, so the command runs
//! without a prompt, in the server's `workspace-write` sandbox.

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::codex_tui::{Server, client_home, codex, write_fixture};
use crate::common::{home_and_workspace, scratch};

/// How long one `codex exec` may run.
const PATIENCE: Duration = Duration::from_secs(60);

/// What one `codex exec` run printed, and how it exited.
struct Run {
    status: ExitStatus,
    events: Vec<Value>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The `type` of every event, in order.
    fn types(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|e| e["type"].as_str().unwrap_or_default())
            .collect()
    }

    /// The completed items, in order.
    fn completed(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["type"] == "item.completed")
            .map(|e| &e["item"])
            .collect()
    }

    /// The id of the `thread.started` event.
    fn thread_id(&self) -> &str {
        self.events
            .iter()
            .find(|e| e["type"] == "thread.started")
            .and_then(|e| e["thread_id"].as_str())
            .unwrap_or_else(|| panic!("no thread.started: {self}"))
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "codex exec exited {}\nstdout:\n{}\nstderr:\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs `codex exec ARGS` in `cwd` with `codex_home` as `CODEX_HOME` and `HOME`, `env` added
/// and stdin empty; kills it past [`PATIENCE`].
fn exec(cwd: &Path, codex_home: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut child = Command::new(codex())
        .arg("exec")
        .args(args)
        .current_dir(cwd)
        .env("CODEX_HOME", codex_home)
        .env("HOME", codex_home)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn codex exec");
    let mut stdout_pipe = child.stdout.take().expect("stdout is piped");
    let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
    let stdout = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout_pipe.read_to_string(&mut text);
        text
    });
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll codex exec") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "codex exec {args:?} still running after {PATIENCE:?}; stderr:\n{}",
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = stdout.join().expect("the stdout reader");
    let stderr = stderr.join().expect("the stderr reader");
    let events = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON event ({e}): {l}")))
        .collect();
    Run {
        status,
        events,
        stdout,
        stderr,
    }
}

/// Fails when Codex printed a warning or an error on stderr (it prints
/// `Reading additional input from stdin...` and nothing else on a clean run).
fn assert_quiet(run: &Run) {
    let noisy: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| {
            let l = l.to_lowercase();
            l.contains("warn") || l.contains("error")
        })
        .collect();
    assert!(noisy.is_empty(), "Codex complains: {noisy:?}\n{run}");
}

/// A text turn: thread started, turn started, the fixture's message, turn completed.
fn assert_text_turn(run: &Run) {
    assert!(run.status.success(), "{run}");
    assert_quiet(run);
    assert_eq!(
        run.types(),
        [
            "thread.started",
            "turn.started",
            "item.completed",
            "turn.completed"
        ],
        "{run}"
    );
    let item = run.completed()[0];
    assert_eq!(item["type"], "agent_message", "{run}");
    assert_eq!(item["text"], "Hello from the fixture script.", "{run}");
    let usage = &run.events[3]["usage"];
    assert!(usage["input_tokens"].is_u64(), "{run}");
    assert!(usage["output_tokens"].is_u64(), "{run}");
}

/// Over ws:// with a bearer token: a text turn, a turn that runs a command and applies a
/// patch, and a wrong token refused.
#[test]
fn codex_exec_runs_text_and_tool_turns_over_ws_with_a_token() {
    let root = scratch("codex-exec-ws");
    let (home, workspace) = home_and_workspace(&root);
    write_fixture(&home);
    let token_file = root.join("token");
    std::fs::write(&token_file, "exec-s3cret\n").expect("write the token");
    let server = Server::start(
        &root,
        &home,
        &workspace,
        "ws://127.0.0.1:0",
        &["--ws-auth-token-file", token_file.to_str().expect("utf-8")],
    );
    let codex_home = client_home("exec-ws");
    let remote = [
        "--remote",
        server.url(),
        "--remote-auth-token-env",
        "AW_TOKEN",
        "--json",
        "--skip-git-repo-check",
    ];
    let token = [("AW_TOKEN", "exec-s3cret")];

    let mut args = remote.to_vec();
    args.push("say hello");
    let run = exec(&workspace, &codex_home, &args, &token);
    assert_text_turn(&run);

    let mut args = remote.to_vec();
    args.push("use the exec tools");
    let run = exec(&workspace, &codex_home, &args, &token);
    assert!(run.status.success(), "{run}");
    assert_quiet(&run);
    assert_eq!(
        run.types(),
        [
            "thread.started",
            "turn.started",
            "item.started",
            "item.completed",
            "item.started",
            "item.completed",
            "item.completed",
            "turn.completed"
        ],
        "{run}"
    );
    let items = run.completed();
    let command = items[0];
    assert_eq!(command["type"], "command_execution", "{run}");
    assert!(
        command["command"]
            .as_str()
            .is_some_and(|c| c.contains("echo exec-output-7 | tee exec-made.txt")),
        "{run}"
    );
    assert_eq!(command["aggregated_output"], "exec-output-7\n", "{run}");
    assert_eq!(command["exit_code"], 0, "{run}");
    assert_eq!(command["status"], "completed", "{run}");
    let patch = items[1];
    assert_eq!(patch["type"], "file_change", "{run}");
    assert_eq!(patch["status"], "completed", "{run}");
    assert_eq!(
        patch["changes"],
        json!([{"path": workspace.join("exec-patch.txt").display().to_string(), "kind": "add"}]),
        "{run}"
    );
    assert_eq!(items[2]["type"], "agent_message", "{run}");
    assert_eq!(items[2]["text"], "Ran it and patched.", "{run}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("exec-made.txt")).expect("the command ran"),
        "exec-output-7\n"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("exec-patch.txt")).expect("the patch applied"),
        "patched from exec\n"
    );

    let mut args = remote.to_vec();
    args.push("say hello");
    let refused = exec(&workspace, &codex_home, &args, &[("AW_TOKEN", "wrong")]);
    assert!(!refused.status.success(), "{refused}");
    assert!(refused.stderr.contains("401 Unauthorized"), "{refused}");
    assert!(refused.events.is_empty(), "{refused}");

    server.assert_served();
}

/// Over unix://: a text turn, then `codex exec resume ID` goes on in the same thread.
#[test]
fn codex_exec_runs_and_resumes_over_unix() {
    let root = scratch("codex-exec-unix");
    let (home, workspace) = home_and_workspace(&root);
    write_fixture(&home);
    let socket = root.join("app-server.sock");
    let server = Server::start(
        &root,
        &home,
        &workspace,
        &format!("unix://{}", socket.display()),
        &[],
    );
    let codex_home = client_home("exec-unix");
    let url = server.url().to_owned();

    let run = exec(
        &workspace,
        &codex_home,
        &[
            "--remote",
            &url,
            "--json",
            "--skip-git-repo-check",
            "say hello",
        ],
        &[],
    );
    assert_text_turn(&run);
    let thread = run.thread_id().to_owned();

    let run = exec(
        &workspace,
        &codex_home,
        &[
            "--remote",
            &url,
            "--json",
            "--skip-git-repo-check",
            "resume",
            &thread,
            "a second question",
        ],
        &[],
    );
    assert!(run.status.success(), "{run}");
    assert_quiet(&run);
    assert_eq!(run.thread_id(), thread, "the same thread goes on: {run}");
    let items = run.completed();
    assert_eq!(items.len(), 1, "{run}");
    assert_eq!(items[0]["text"], "The second answer.", "{run}");
    assert_eq!(run.types().last(), Some(&"turn.completed"), "{run}");
    assert!(server.called("thread/resume"));

    server.assert_served();
}
