//! `command/exec` and `command/exec/write`, `terminate`, `resize`, through the binary: output
//! in the answer or streamed before it, limits, environment, sandbox, an interactive terminal,
//! and every kind of bad input.
//!
//! Like `sandbox_exec.rs`, the sandbox tests expect a kernel with Landlock. The scratch
//! directories live under the temporary directory, which `readOnly` leaves read-only.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::client::Client;
use crate::common::{alive, scratch};

const FULL_ACCESS: &str = "dangerFullAccess";

/// A server with its own home.
fn client(name: &str) -> (Client, std::path::PathBuf) {
    let home = scratch(&format!("exec-{name}"));
    (Client::start(&home), home)
}

/// `command/exec` of `sh -c script` with `extra` params; its answer.
fn sh(client: &mut Client, script: &str, extra: Value) -> Value {
    let mut params = json!({"command": ["sh", "-c", script]});
    merge(&mut params, extra);
    client.call("command/exec", params)
}

fn merge(params: &mut Value, extra: Value) {
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
}

fn policy(kind: &str) -> Value {
    json!({"type": kind})
}

fn b64(text: &str) -> String {
    STANDARD.encode(text)
}

/// The `command/exec/outputDelta` params for `process_id` in the backlog, removed from it.
fn take_deltas(client: &mut Client, process_id: &str) -> Vec<Value> {
    let mut taken = Vec::new();
    client.notifications.retain(|n| {
        let ours = n["method"] == json!("command/exec/outputDelta")
            && n["params"]["processId"] == json!(process_id);
        if ours {
            taken.push(n["params"].clone());
        }
        !ours
    });
    taken
}

/// The bytes of the deltas of `stream`, concatenated.
fn stream_text(deltas: &[Value], stream: &str) -> String {
    let bytes: Vec<u8> = deltas
        .iter()
        .filter(|d| d["stream"] == json!(stream))
        .flat_map(|d| {
            STANDARD
                .decode(d["deltaBase64"].as_str().expect("deltaBase64"))
                .expect("valid base64")
        })
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Reads `command/exec/outputDelta` for `process_id` until its stdout so far contains `wanted`;
/// returns that stdout.
fn stdout_until(client: &mut Client, process_id: &str, seen: &mut String, wanted: &str) -> String {
    while !seen.contains(wanted) {
        let delta = client.notification("command/exec/outputDelta");
        assert_eq!(delta["processId"], json!(process_id), "{delta}");
        assert_eq!(delta["stream"], json!("stdout"), "{delta}");
        let bytes = STANDARD
            .decode(delta["deltaBase64"].as_str().expect("deltaBase64"))
            .expect("valid base64");
        seen.push_str(&String::from_utf8_lossy(&bytes));
    }
    seen.clone()
}

/// Asserts the error is `code` and its message names `field`.
fn assert_error(error: &Value, code: i64, field: &str) {
    assert_eq!(error["code"], json!(code), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(message.contains(field), "`{field}` not named in: {message}");
}

/// The host pid of the process whose command line is `argv`, once there is one.
fn wait_for_process(argv: &[&str]) -> u32 {
    let wanted: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = std::fs::read_dir("/proc")
            .expect("/proc")
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
            .find(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted));
        if let Some(pid) = found {
            return pid;
        }
        assert!(Instant::now() < deadline, "no process runs {argv:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (generously) for every process in `pids` to be gone.
fn assert_all_die(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while pids.iter().any(|&pid| alive(pid)) {
        assert!(Instant::now() < deadline, "still running: {pids:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pids a script wrote to `file`, one a line.
fn pids_in(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .expect("pid file")
        .split_whitespace()
        .map(|p| p.parse().expect("pid"))
        .collect()
}

#[test]
fn exit_code_and_output_come_back_in_the_answer() {
    let (mut client, home) = client("buffered");
    let answer = sh(
        &mut client,
        "echo out; printf 'é\\n'; echo err >&2; pwd; exit 3",
        json!({"cwd": home.display().to_string()}),
    );
    assert_eq!(
        answer,
        json!({
            "exitCode": 3,
            "stdout": format!("out\né\n{}\n", home.display()),
            "stderr": "err\n"
        })
    );
    // A process killed by a signal reports 128 + the signal.
    let answer = sh(&mut client, "kill -TERM $$", json!({}));
    assert_eq!(answer["exitCode"], json!(143), "{answer}");
    // Nothing was streamed for a buffered run.
    assert!(
        client.notifications.is_empty(),
        "{:?}",
        client.notifications
    );
}

#[test]
fn streamed_output_arrives_before_the_answer_and_reassembles() {
    let (mut client, _home) = client("streamed");
    let id = client.send_request(
        "command/exec",
        json!({
            "processId": "s1",
            "command": ["sh", "-c", "for i in 1 2 3; do echo line$i; sleep 0.05; done; echo oops >&2"],
            "streamStdoutStderr": true
        }),
    );
    let answer = client.answer(&id).expect("command/exec answers");
    assert_eq!(answer, json!({"exitCode": 0, "stdout": "", "stderr": ""}));
    // Every delta was received before the answer (they are in the backlog already).
    let deltas = take_deltas(&mut client, "s1");
    assert!(deltas.len() >= 2, "{deltas:?}");
    assert_eq!(stream_text(&deltas, "stdout"), "line1\nline2\nline3\n");
    assert_eq!(stream_text(&deltas, "stderr"), "oops\n");
    assert!(deltas.iter().all(|d| d["capReached"] == json!(false)));
}

/// With no `timeoutMs`, a command is stopped at the 10 s docs/engine.md gives as the default
/// (`command/exec`), not before and not much after.
#[test]
fn without_a_timeout_a_command_is_stopped_after_ten_seconds() {
    let (mut client, _home) = client("default-timeout");
    let started = Instant::now();
    let answer = sh(
        &mut client,
        "echo started; sleep 60",
        json!({"sandboxPolicy": policy(FULL_ACCESS)}),
    );
    let took = started.elapsed();
    assert_eq!(
        answer,
        json!({"exitCode": 124, "stdout": "started\n", "stderr": ""})
    );
    assert!(
        (10.0..20.0).contains(&took.as_secs_f64()),
        "stopped after {took:?}, the default is 10 s"
    );
}

#[test]
fn the_timeout_kills_the_process_group_and_reports_124() {
    let (mut client, home) = client("timeout");
    let pidfile = home.join("pids");
    let answer = sh(
        &mut client,
        &format!(
            "sleep 60 & echo $$ $! > {}; echo started; wait",
            pidfile.display()
        ),
        json!({"timeoutMs": 300, "sandboxPolicy": policy(FULL_ACCESS)}),
    );
    assert_eq!(
        answer,
        json!({"exitCode": 124, "stdout": "started\n", "stderr": ""})
    );
    let pids = pids_in(&pidfile);
    assert_eq!(pids.len(), 2);
    assert_all_die(&pids);
    // Without a limit the same kind of command runs to its end.
    let answer = sh(
        &mut client,
        "sleep 0.5; echo done",
        json!({"disableTimeout": true}),
    );
    assert_eq!(answer["stdout"], json!("done\n"), "{answer}");
}

#[test]
fn the_output_cap_cuts_each_stream() {
    let (mut client, _home) = client("cap");
    let script = "printf 0123456789; printf abcdefgh >&2";
    let answer = sh(&mut client, script, json!({"outputBytesCap": 5}));
    assert_eq!(
        answer,
        json!({"exitCode": 0, "stdout": "01234", "stderr": "abcde"})
    );

    let id = client.send_request(
        "command/exec",
        json!({
            "processId": "capped", "command": ["sh", "-c", script],
            "streamStdoutStderr": true, "outputBytesCap": 5
        }),
    );
    client.answer(&id).expect("command/exec answers");
    let deltas = take_deltas(&mut client, "capped");
    for stream in ["stdout", "stderr"] {
        let ours: Vec<&Value> = deltas
            .iter()
            .filter(|d| d["stream"] == json!(stream))
            .collect();
        let last = ours.last().expect("a delta");
        assert_eq!(last["capReached"], json!(true), "{deltas:?}");
        assert!(
            ours[..ours.len() - 1]
                .iter()
                .all(|d| d["capReached"] == json!(false))
        );
    }
    assert_eq!(stream_text(&deltas, "stdout"), "01234");
    assert_eq!(stream_text(&deltas, "stderr"), "abcde");

    // The default cap is 1 MiB per stream; `disableOutputCap` keeps everything.
    let big = "head -c 1500000 /dev/zero | tr '\\0' a";
    let answer = sh(&mut client, big, json!({}));
    assert_eq!(answer["stdout"].as_str().map(str::len), Some(1024 * 1024));
    let answer = sh(&mut client, big, json!({"disableOutputCap": true}));
    assert_eq!(answer["stdout"].as_str().map(str::len), Some(1_500_000));
    assert_eq!(answer["exitCode"], json!(0));
}

#[test]
fn env_changes_apply_over_the_server_environment() {
    let (mut client, home) = client("env");
    let answer = sh(
        &mut client,
        "echo \"$AW_SET\"; echo \"${HOME-unset}\"; echo \"$AGENTWIRE_HOME\"",
        json!({"env": {"AW_SET": "value", "HOME": null, "AW_ABSENT": null}}),
    );
    // `AGENTWIRE_HOME` comes from the server's own environment.
    assert_eq!(
        answer["stdout"],
        json!(format!("value\nunset\n{}\n", home.display())),
        "{answer}"
    );
}

#[test]
fn the_sandbox_policy_confines_the_command() {
    let (mut client, _home) = client("sandbox");
    let dir = scratch("exec-sandbox-target");
    let cwd = json!(dir.display().to_string());
    let target = dir.join("written");

    // The default policy is the read-only one new threads get; so is an explicit readOnly.
    for extra in [json!({}), json!({"sandboxPolicy": policy("readOnly")})] {
        let mut params = json!({"cwd": cwd});
        merge(&mut params, extra);
        let answer = sh(&mut client, "echo data > written", params);
        assert_ne!(answer["exitCode"], json!(0), "{answer}");
        assert!(
            !target.exists(),
            "the read-only command wrote {}",
            target.display()
        );
    }
    // Reading still works under readOnly.
    let answer = sh(&mut client, "ls /", json!({"cwd": cwd}));
    assert_eq!(answer["exitCode"], json!(0), "{answer}");

    // workspaceWrite lets it write in its working directory.
    let answer = sh(
        &mut client,
        "echo ws > written",
        json!({"cwd": cwd, "sandboxPolicy": {"type": "workspaceWrite"}}),
    );
    assert_eq!(answer["exitCode"], json!(0), "{answer}");
    assert_eq!(std::fs::read_to_string(&target).expect("written"), "ws\n");

    // Full access writes anywhere.
    let outside = scratch("exec-sandbox-outside").join("file");
    let answer = sh(
        &mut client,
        &format!("echo full > {}", outside.display()),
        json!({"sandboxPolicy": policy(FULL_ACCESS)}),
    );
    assert_eq!(answer["exitCode"], json!(0), "{answer}");
    assert_eq!(
        std::fs::read_to_string(&outside).expect("written"),
        "full\n"
    );
}

#[test]
fn stdin_streams_through_write_until_closed() {
    let (mut client, _home) = client("stdin");
    let id = client.send_request(
        "command/exec",
        json!({"processId": "cat", "command": ["cat"], "streamStdin": true}),
    );
    let written = client.call(
        "command/exec/write",
        json!({"processId": "cat", "deltaBase64": b64("hello ")}),
    );
    assert_eq!(written, json!({}));
    client.call(
        "command/exec/write",
        json!({"processId": "cat", "deltaBase64": b64("world"), "closeStdin": true}),
    );
    let answer = client.answer(&id).expect("cat ends at end of input");
    assert_eq!(
        answer,
        json!({"exitCode": 0, "stdout": "hello world", "stderr": ""})
    );
    // The process is gone: its id names nothing any more.
    let error = client.call_err(
        "command/exec/write",
        json!({"processId": "cat", "closeStdin": true}),
    );
    assert_error(&error, -32600, "processId");
}

#[test]
fn an_interactive_terminal_echoes_resizes_and_terminates() {
    let (mut client, _home) = client("tty");
    let id = client.send_request(
        "command/exec",
        json!({
            "processId": "term",
            "command": ["sh"],
            "tty": true,
            "size": {"rows": 30, "cols": 100},
            "disableTimeout": true,
            "env": {"PS1": "$ "}
        }),
    );
    let mut seen = String::new();
    let write = |client: &mut Client, text: &str| {
        client.call(
            "command/exec/write",
            json!({"processId": "term", "deltaBase64": b64(text)}),
        )
    };
    write(
        &mut client,
        "test -t 0 && stty size && echo is-tty-$((40+2))\n",
    );
    // The terminal echoes the typed line, then the command's output follows.
    let out = stdout_until(&mut client, "term", &mut seen, "is-tty-42\r\n");
    assert!(out.contains("test -t 0 && stty size"), "{out:?}");
    assert!(out.contains("30 100\r\n"), "{out:?}");

    write(&mut client, "echo sum-$((6*7))\n");
    stdout_until(&mut client, "term", &mut seen, "sum-42\r\n");

    let resized = client.call(
        "command/exec/resize",
        json!({"processId": "term", "size": {"rows": 40, "cols": 120}}),
    );
    assert_eq!(resized, json!({}));
    write(&mut client, "stty size\n");
    stdout_until(&mut client, "term", &mut seen, "40 120\r\n");

    // A background job (in a process group of its own when the shell does job control). The
    // command runs in a PID namespace with its own `/proc`, so this test finds the job's host
    // pid by its unique argument.
    let nap = format!("3600.{}", std::process::id());
    write(
        &mut client,
        &format!("(echo job-$((1+1)); exec sleep {nap}) &\n"),
    );
    stdout_until(&mut client, "term", &mut seen, "job-2\r\n");
    let job = wait_for_process(&["sleep", &nap]);
    assert!(alive(job));

    let terminated = client.call("command/exec/terminate", json!({"processId": "term"}));
    assert_eq!(terminated, json!({}));
    let answer = client.answer(&id).expect("command/exec answers");
    // SIGKILL: 128 + 9. The output was streamed, so the answer carries none.
    assert_eq!(answer, json!({"exitCode": 137, "stdout": "", "stderr": ""}));
    assert_all_die(&[job]);
}

#[test]
fn closing_a_terminal_s_stdin_ends_its_input() {
    let (mut client, _home) = client("tty-eof");
    let id = client.send_request(
        "command/exec",
        json!({"processId": "t", "command": ["cat"], "tty": true}),
    );
    client.call(
        "command/exec/write",
        json!({"processId": "t", "deltaBase64": b64("abc\n"), "closeStdin": true}),
    );
    let answer = client.answer(&id).expect("cat ends at end of input");
    assert_eq!(answer["exitCode"], json!(0), "{answer}");
    let deltas = take_deltas(&mut client, "t");
    // The echo of the typed line and cat's copy of it, all on stdout.
    assert_eq!(stream_text(&deltas, "stdout"), "abc\r\nabc\r\n");
    assert_eq!(stream_text(&deltas, "stderr"), "");
}

#[test]
fn a_running_process_id_cannot_be_reused_on_the_same_connection() {
    let (mut client, _home) = client("duplicate");
    let first = client.send_request(
        "command/exec",
        json!({"processId": "dup", "command": ["sleep", "60"], "streamStdin": true}),
    );
    // Known once it answers write; then a second start with the same id is refused.
    let deadline = Instant::now() + Duration::from_secs(30);
    while client
        .request(
            "command/exec/write",
            json!({"processId": "dup", "deltaBase64": ""}),
        )
        .is_err()
    {
        assert!(Instant::now() < deadline, "the first process never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let error = client.call_err(
        "command/exec",
        json!({"processId": "dup", "command": ["true"], "streamStdin": true}),
    );
    assert_error(&error, -32600, "processId");
    assert!(
        error["message"].as_str().expect("message").contains("dup"),
        "{error}"
    );
    client.call("command/exec/terminate", json!({"processId": "dup"}));
    let answer = client.answer(&first).expect("command/exec answers");
    assert_eq!(answer["exitCode"], json!(137), "{answer}");
    // Free again.
    let answer = client.call(
        "command/exec",
        json!({"processId": "dup", "command": ["true"], "streamStdin": true}),
    );
    assert_eq!(answer["exitCode"], json!(0));
}

#[test]
fn a_closed_connection_kills_its_processes() {
    let (mut client, home) = client("closed");
    let pidfile = home.join("pids");
    let script = format!(
        "sleep 60 & echo $$ $! > {}; echo ready; wait",
        pidfile.display()
    );
    client.send_request(
        "command/exec",
        json!({
            "processId": "bg", "command": ["sh", "-c", script], "streamStdoutStderr": true,
            "disableTimeout": true, "sandboxPolicy": policy(FULL_ACCESS)
        }),
    );
    let mut seen = String::new();
    stdout_until(&mut client, "bg", &mut seen, "ready\n");
    let pids = pids_in(&pidfile);
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&pid| alive(pid)));
    client.stop();
    assert_all_die(&pids);
}

#[test]
fn bad_command_exec_params_are_refused_naming_the_member() {
    let (mut client, home) = client("bad-exec");
    let cases = [
        (json!({"command": []}), -32602, "command"),
        (json!({"command": "ls"}), -32602, "command"),
        (json!({"command": [""]}), -32602, "command[0]"),
        (
            json!({"command": ["agentwire-no-such-program"]}),
            -32602,
            "command[0]",
        ),
        (
            json!({"command": ["true"], "timeoutMs": 10, "disableTimeout": true}),
            -32602,
            "timeoutMs",
        ),
        (
            json!({"command": ["true"], "timeoutMs": -5}),
            -32602,
            "timeoutMs",
        ),
        (
            json!({"command": ["true"], "outputBytesCap": 10, "disableOutputCap": true}),
            -32602,
            "outputBytesCap",
        ),
        (
            json!({"command": ["true"], "size": {"rows": 10, "cols": 10}}),
            -32602,
            "size",
        ),
        (
            json!({"command": ["true"], "processId": "p", "tty": true, "size": {"rows": 0, "cols": 10}}),
            -32602,
            "size.rows",
        ),
        (
            json!({"command": ["true"], "tty": true}),
            -32602,
            "processId",
        ),
        (
            json!({"command": ["true"], "streamStdoutStderr": true}),
            -32602,
            "processId",
        ),
        (
            json!({"command": ["true"], "cwd": home.join("missing").display().to_string()}),
            -32602,
            "cwd",
        ),
        (
            json!({"command": ["true"], "env": {"A=B": "x"}}),
            -32602,
            "env.A=B",
        ),
        (
            json!({"command": ["true"], "sandboxPolicy": {"type": "noSuchPolicy"}}),
            -32602,
            "sandboxPolicy",
        ),
    ];
    for (params, code, field) in cases {
        let error = client.call_err("command/exec", params.clone());
        assert_error(&error, code, field);
    }
}

#[test]
fn bad_follow_up_requests_are_refused_naming_the_member() {
    let (mut client, _home) = client("bad-follow-up");
    // Nothing runs yet: every id is unknown.
    for (method, params) in [
        (
            "command/exec/write",
            json!({"processId": "ghost", "deltaBase64": b64("x")}),
        ),
        ("command/exec/terminate", json!({"processId": "ghost"})),
        (
            "command/exec/resize",
            json!({"processId": "ghost", "size": {"rows": 5, "cols": 5}}),
        ),
    ] {
        let error = client.call_err(method, params);
        assert_error(&error, -32600, "processId");
    }

    // A running process without stdin streaming and without a terminal.
    let id = client.send_request(
        "command/exec",
        json!({"processId": "plain", "command": ["sleep", "60"], "streamStdoutStderr": true}),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let refusal = loop {
        let error = client.call_err(
            "command/exec/write",
            json!({"processId": "plain", "deltaBase64": b64("x")}),
        );
        if error["message"]
            .as_str()
            .is_some_and(|m| m.contains("streamStdin"))
        {
            break error;
        }
        assert!(
            Instant::now() < deadline,
            "the process never started: {error}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_error(&refusal, -32600, "processId");
    let error = client.call_err(
        "command/exec/resize",
        json!({"processId": "plain", "size": {"rows": 5, "cols": 5}}),
    );
    assert_error(&error, -32600, "tty");
    let cases = [
        (
            "command/exec/write",
            json!({"processId": "plain", "deltaBase64": "not base64!"}),
            -32602,
            "deltaBase64",
        ),
        (
            "command/exec/write",
            json!({"processId": "plain"}),
            -32602,
            "deltaBase64",
        ),
        (
            "command/exec/write",
            json!({"deltaBase64": "eA=="}),
            -32602,
            "processId",
        ),
        (
            "command/exec/resize",
            json!({"processId": "plain", "size": {"rows": 5, "cols": 0}}),
            -32602,
            "size.cols",
        ),
        (
            "command/exec/resize",
            json!({"processId": "plain"}),
            -32602,
            "size",
        ),
        (
            "command/exec/terminate",
            json!({"processId": 7}),
            -32602,
            "processId",
        ),
    ];
    for (method, params, code, field) in cases {
        let error = client.call_err(method, params.clone());
        assert_error(&error, code, field);
    }
    client.call("command/exec/terminate", json!({"processId": "plain"}));
    let answer = client.answer(&id).expect("command/exec answers");
    assert_eq!(answer["exitCode"], json!(137), "{answer}");
}

#[tokio::test]
async fn a_websocket_that_closes_kills_its_processes_while_the_server_runs_on() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;

    use crate::app_server_ws::{App, initialize, next_json};

    let home = scratch("exec-ws");
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let pidfile = home.join("pids");
    let script = format!(
        "sleep 60 & echo $$ $! > {}; echo ready; wait",
        pidfile.display()
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}"))
        .await
        .expect("connect");
    initialize(&mut ws).await;
    let request = json!({
        "id": 1, "method": "command/exec",
        "params": {
            "processId": "bg", "command": ["sh", "-c", script], "streamStdoutStderr": true,
            "disableTimeout": true, "sandboxPolicy": policy(FULL_ACCESS)
        }
    });
    ws.send(Message::text(request.to_string()))
        .await
        .expect("send");
    let delta = next_json(&mut ws).await;
    assert_eq!(
        delta["method"],
        json!("command/exec/outputDelta"),
        "{delta}"
    );
    let pids = pids_in(&pidfile);
    assert!(pids.iter().all(|&pid| alive(pid)));

    ws.close(None).await.expect("close");
    drop(ws);
    tokio::task::spawn_blocking(move || assert_all_die(&pids))
        .await
        .expect("the processes die");
    // The server itself keeps serving other connections.
    let (mut other, _) = tokio_tungstenite::connect_async(format!("ws://{addr}"))
        .await
        .expect("connect again");
    initialize(&mut other).await;
    drop(app);
}

#[test]
fn sandbox_exec_tty_refuses_a_stdin_that_is_not_a_terminal() {
    let marker = scratch("exec-tty-refused").join("ran");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args([
            "sandbox-exec",
            "--tty",
            "--policy",
            r#"{"type":"dangerFullAccess"}"#,
        ])
        .arg("--cwd")
        .arg(std::env::temp_dir())
        .args(["--", "touch"])
        .arg(&marker)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("spawn agentwire");
    assert_eq!(output.status.code(), Some(125), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("controlling terminal"), "{stderr}");
    assert!(!marker.exists(), "the command ran");
}
