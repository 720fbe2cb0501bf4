//! The standalone process API through the binary: `process/spawn`, `process/writeStdin`,
//! `process/kill` and `process/resizePty`, with `process/outputDelta` and `process/exited`:
//! output kept or streamed, stdin, a terminal, limits, handles, the sandbox, and bad input.
//!
//! Processes run under the sandbox policy a new thread in their `cwd` gets (read-only unless
//! the configuration says otherwise); the scratch directories live under the temporary
//! directory, which `readOnly` leaves read-only.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::client::Client;
use crate::common::{alive, home_and_workspace, scratch};

/// A server that offers the experimental API on a fresh home; the home and a workspace.
fn server(name: &str) -> (Client, PathBuf, PathBuf) {
    let (home, workspace) = home_and_workspace(&scratch(&format!("process-{name}")));
    let client = experimental(&home);
    (client, home, workspace)
}

fn experimental(home: &Path) -> Client {
    Client::start_with_capabilities(home, json!({"experimentalApi": true}))
}

/// `process/spawn` of `command` in `cwd` as `handle`, with `extra` params.
fn spawn(client: &mut Client, handle: &str, command: &[&str], cwd: &Path, extra: Value) -> Value {
    let mut params = json!({"command": command, "cwd": cwd, "processHandle": handle});
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    client.call("process/spawn", params)
}

/// The `process/exited` of `handle`, with every `process/outputDelta` of it before it (in
/// order).
fn exited(client: &mut Client, handle: &str) -> (Value, Vec<Value>) {
    let mut deltas = Vec::new();
    loop {
        let message = client.first_of(&["process/outputDelta", "process/exited"]);
        let params = message["params"].clone();
        if params["processHandle"] != json!(handle) {
            continue;
        }
        if message["method"] == json!("process/exited") {
            return (params, deltas);
        }
        deltas.push(params);
    }
}

/// The bytes of the deltas of `stream`, as text.
fn stream_text(deltas: &[Value], stream: &str) -> String {
    let bytes: Vec<u8> = deltas
        .iter()
        .filter(|d| d["stream"] == json!(stream))
        .flat_map(|d| {
            STANDARD
                .decode(d["deltaBase64"].as_str().expect("deltaBase64"))
                .expect("base64")
        })
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Reads `process/outputDelta` of `handle` until its stdout so far contains `wanted`.
fn stdout_until(client: &mut Client, handle: &str, seen: &mut String, wanted: &str) {
    while !seen.contains(wanted) {
        let delta = client.notification("process/outputDelta");
        if delta["processHandle"] == json!(handle) {
            seen.push_str(&stream_text(&[delta], "stdout"));
        }
    }
}

fn b64(text: &str) -> String {
    STANDARD.encode(text)
}

#[test]
fn a_process_answers_at_once_and_reports_its_end_with_its_output() {
    let (mut client, _home, workspace) = server("buffered");
    let answer = spawn(
        &mut client,
        "p1",
        &["sh", "-c", "echo hi; echo err >&2; exit 3"],
        &workspace,
        json!({}),
    );
    assert_eq!(answer, json!({}));
    let (end, deltas) = exited(&mut client, "p1");
    assert!(
        deltas.is_empty(),
        "nothing streams unless asked: {deltas:?}"
    );
    assert_eq!(
        end,
        json!({"processHandle": "p1", "exitCode": 3, "stdout": "hi\n", "stderr": "err\n",
               "stdoutCapReached": false, "stderrCapReached": false,
               "outputDrainTimedOut": false})
    );
    client.stop();
}

#[test]
fn stdin_and_output_stream_after_the_answer() {
    let (mut client, _home, workspace) = server("streaming");
    spawn(
        &mut client,
        "cat",
        &["cat"],
        &workspace,
        json!({"streamStdin": true, "streamStdoutStderr": true}),
    );
    assert!(
        !client
            .notifications
            .iter()
            .any(|n| n["params"]["processHandle"] == json!("cat")),
        "nothing about the process comes before its answer"
    );
    client.call(
        "process/writeStdin",
        json!({"processHandle": "cat", "deltaBase64": b64("hello\n")}),
    );
    client.call(
        "process/writeStdin",
        json!({"processHandle": "cat", "deltaBase64": b64("world\n"), "closeStdin": true}),
    );
    let (end, deltas) = exited(&mut client, "cat");
    assert_eq!(stream_text(&deltas, "stdout"), "hello\nworld\n");
    assert_eq!(end["exitCode"], json!(0), "{end}");
    assert_eq!(
        end["stdout"],
        json!(""),
        "streamed output is not repeated: {end}"
    );
    // Closed, then gone.
    let gone = client.call_err(
        "process/writeStdin",
        json!({"processHandle": "cat", "deltaBase64": b64("late")}),
    );
    assert_eq!(gone["code"], json!(-32600), "{gone}");
    assert!(
        gone["message"]
            .as_str()
            .unwrap_or("")
            .contains("processHandle"),
        "{gone}"
    );
    client.stop();
}

#[test]
fn handles_are_unique_while_running_and_free_again_after_the_end() {
    let (mut client, _home, workspace) = server("handles");
    spawn(
        &mut client,
        "h",
        &["sleep", "30"],
        &workspace,
        json!({"timeoutMs": null}),
    );
    let duplicate = client.call_err(
        "process/spawn",
        json!({"command": ["true"], "cwd": workspace, "processHandle": "h"}),
    );
    assert_eq!(duplicate["code"], json!(-32600), "{duplicate}");
    assert!(
        duplicate["message"]
            .as_str()
            .unwrap_or("")
            .contains("\"h\""),
        "{duplicate}"
    );
    let not_streamed = client.call_err(
        "process/writeStdin",
        json!({"processHandle": "h", "deltaBase64": b64("x")}),
    );
    assert_eq!(not_streamed["code"], json!(-32600), "{not_streamed}");
    let no_terminal = client.call_err(
        "process/resizePty",
        json!({"processHandle": "h", "size": {"rows": 10, "cols": 10}}),
    );
    assert_eq!(no_terminal["code"], json!(-32600), "{no_terminal}");
    client.call("process/kill", json!({"processHandle": "h"}));
    let (end, _) = exited(&mut client, "h");
    assert_eq!(end["exitCode"], json!(137), "SIGKILL: {end}");
    // Free again.
    spawn(&mut client, "h", &["true"], &workspace, json!({}));
    let (end, _) = exited(&mut client, "h");
    assert_eq!(end["exitCode"], json!(0), "{end}");
    for (method, params) in [
        ("process/kill", json!({"processHandle": "nope"})),
        (
            "process/writeStdin",
            json!({"processHandle": "nope", "closeStdin": true}),
        ),
        (
            "process/resizePty",
            json!({"processHandle": "nope", "size": {"rows": 1, "cols": 1}}),
        ),
    ] {
        let error = client.call_err(method, params);
        assert_eq!(error["code"], json!(-32600), "{method}: {error}");
        assert!(
            error["message"].as_str().unwrap_or("").contains("\"nope\""),
            "{method}: {error}"
        );
    }
    client.stop();
}

#[test]
fn a_terminal_process_reads_input_and_follows_resizes() {
    let (mut client, _home, workspace) = server("tty");
    spawn(
        &mut client,
        "t",
        &["sh", "-c", "read a; stty size; read b; stty size; exit 5"],
        &workspace,
        json!({"tty": true, "size": {"rows": 24, "cols": 80}, "timeoutMs": 30000}),
    );
    let mut seen = String::new();
    client.call(
        "process/writeStdin",
        json!({"processHandle": "t", "deltaBase64": b64("go\n")}),
    );
    stdout_until(&mut client, "t", &mut seen, "24 80");
    client.call(
        "process/resizePty",
        json!({"processHandle": "t", "size": {"rows": 40, "cols": 100}}),
    );
    let zero = client.call_err(
        "process/resizePty",
        json!({"processHandle": "t", "size": {"rows": 0, "cols": 100}}),
    );
    assert_eq!(zero["code"], json!(-32602), "{zero}");
    client.call(
        "process/writeStdin",
        json!({"processHandle": "t", "deltaBase64": b64("go\n")}),
    );
    let (end, deltas) = exited(&mut client, "t");
    seen.push_str(&stream_text(&deltas, "stdout"));
    assert!(seen.contains("40 100"), "{seen:?}");
    assert_eq!(end["exitCode"], json!(5), "{end}");
    client.stop();
}

#[test]
fn time_and_output_limits_apply_and_can_be_lifted() {
    let (mut client, _home, workspace) = server("limits");
    let started = Instant::now();
    spawn(
        &mut client,
        "slow",
        &["sleep", "20"],
        &workspace,
        json!({"timeoutMs": 300}),
    );
    let (end, _) = exited(&mut client, "slow");
    assert_eq!(end["exitCode"], json!(124), "{end}");
    assert!(started.elapsed() < Duration::from_secs(15));

    spawn(
        &mut client,
        "capped",
        &["printf", "hello"],
        &workspace,
        json!({"outputBytesCap": 3}),
    );
    let (end, _) = exited(&mut client, "capped");
    assert_eq!(end["stdout"], json!("hel"), "{end}");
    assert_eq!(end["stdoutCapReached"], json!(true), "{end}");

    spawn(
        &mut client,
        "streamed",
        &["printf", "hello"],
        &workspace,
        json!({"outputBytesCap": 2, "streamStdoutStderr": true}),
    );
    let (end, deltas) = exited(&mut client, "streamed");
    assert_eq!(stream_text(&deltas, "stdout"), "he");
    assert_eq!(
        deltas.last().map(|d| d["capReached"].clone()),
        Some(json!(true))
    );
    assert_eq!(end["stdoutCapReached"], json!(true), "{end}");

    // `null` lifts both limits: 2 MiB of output (past the 1 MiB default) comes back whole.
    spawn(
        &mut client,
        "big",
        &["head", "-c", "2097152", "/dev/zero"],
        &workspace,
        json!({"outputBytesCap": null, "timeoutMs": null}),
    );
    let (end, _) = exited(&mut client, "big");
    assert_eq!(end["stdout"].as_str().map(str::len), Some(2_097_152));
    assert_eq!(end["stdoutCapReached"], json!(false));
    client.stop();
}

#[test]
fn bad_requests_are_refused_naming_the_member() {
    let (mut client, _home, workspace) = server("bad");
    for (params, code, word) in [
        (
            json!({"command": [], "cwd": workspace, "processHandle": "a"}),
            -32602,
            "command",
        ),
        (
            json!({"command": ["true"], "cwd": "relative", "processHandle": "a"}),
            -32602,
            "cwd",
        ),
        (
            json!({"command": ["true"], "cwd": workspace, "processHandle": "a",
                   "size": {"rows": 5, "cols": 5}}),
            -32602,
            "size",
        ),
        (
            json!({"command": ["agentwire-no-such-program"], "cwd": workspace,
                   "processHandle": "a"}),
            -32602,
            "command[0]",
        ),
        (
            json!({"command": ["true"], "cwd": workspace, "processHandle": ""}),
            -32602,
            "processHandle",
        ),
    ] {
        let error = client.call_err("process/spawn", params.clone());
        assert_eq!(error["code"], json!(code), "{params}: {error}");
        assert!(
            error["message"].as_str().unwrap_or("").contains(word),
            "{params}: {error}"
        );
    }
    spawn(
        &mut client,
        "c",
        &["cat"],
        &workspace,
        json!({"streamStdin": true}),
    );
    let bad = client.call_err(
        "process/writeStdin",
        json!({"processHandle": "c", "deltaBase64": "***"}),
    );
    assert_eq!(bad["code"], json!(-32602), "{bad}");
    let nothing = client.call_err("process/writeStdin", json!({"processHandle": "c"}));
    assert_eq!(nothing["code"], json!(-32602), "{nothing}");
    client.call(
        "process/writeStdin",
        json!({"processHandle": "c", "closeStdin": true}),
    );
    let (end, _) = exited(&mut client, "c");
    assert_eq!(end["exitCode"], json!(0), "{end}");
    // Without the experimental API the methods are not offered.
    let mut stable = Client::start(&scratch("process-stable"));
    let error = stable.call_err(
        "process/spawn",
        json!({"command": ["true"], "cwd": workspace, "processHandle": "a"}),
    );
    assert_eq!(error["code"], json!(-32600), "{error}");
    stable.stop();
    client.stop();
}

#[test]
fn processes_run_in_the_sandbox_new_threads_get() {
    let (mut client, home, workspace) = server("sandbox");
    spawn(
        &mut client,
        "ro",
        &["sh", "-c", "touch written"],
        &workspace,
        json!({}),
    );
    let (end, _) = exited(&mut client, "ro");
    assert_ne!(end["exitCode"], json!(0), "read-only by default: {end}");
    assert!(!workspace.join("written").exists());
    client.stop();

    std::fs::write(
        home.join("config.toml"),
        "sandbox_mode = \"workspace-write\"\n",
    )
    .expect("config");
    let mut client = experimental(&home);
    spawn(
        &mut client,
        "ww",
        &["sh", "-c", "touch written"],
        &workspace,
        json!({}),
    );
    let (end, _) = exited(&mut client, "ww");
    assert_eq!(end["exitCode"], json!(0), "{end}");
    assert!(workspace.join("written").exists());
    client.stop();
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

#[test]
fn the_processes_of_a_closed_connection_are_killed() {
    let (mut client, _home, workspace) = server("closed");
    spawn(
        &mut client,
        "long",
        &["sleep", "987.25"],
        &workspace,
        json!({"timeoutMs": null}),
    );
    let pid = wait_for_process(&["sleep", "987.25"]);
    assert!(alive(pid));
    client.stop();
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(pid) {
        assert!(
            Instant::now() < deadline,
            "pid {pid} outlived its connection"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
