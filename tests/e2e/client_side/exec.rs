//! `agentwire exec`: one turn against an app-server child, with the fixture provider and the
//! mock model.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::{fixture_steps, home_and_workspace, scratch, text};

fn exec(home: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("exec")
        .args(args)
        .env("AGENTWIRE_HOME", home)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentwire exec");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).expect("write the prompt");
    }
    drop(input);
    child.wait_with_output().expect("exec output")
}

#[test]
fn prints_the_agent_text_and_exits_0() {
    let (home, workspace) = home_and_workspace(&scratch("exec-text"));
    fixture_steps(
        &home,
        json!([{"type": "message", "deltas": ["Hello ", "from exec."]}]),
        "",
    );
    let output = exec(
        &home,
        &["--cwd", workspace.to_str().expect("utf-8"), "say hi"],
        None,
    );
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "Hello from exec.\n", "{stderr}");
}

#[test]
fn json_lines_carry_every_notification_and_stdin_is_the_prompt() {
    let (home, workspace) = home_and_workspace(&scratch("exec-json"));
    fixture_steps(
        &home,
        json!([{"type": "reasoning", "summary": ["Thinking."]},
               {"type": "message", "deltas": ["A", "B"]}]),
        "",
    );
    let output = exec(
        &home,
        &["--json", "--cwd", workspace.to_str().expect("utf-8"), "-"],
        Some("the prompt from stdin\n"),
    );
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect();
    let methods: Vec<&str> = lines
        .iter()
        .map(|l| l["method"].as_str().expect("method"))
        .collect();
    assert_eq!(methods.first(), Some(&"thread/started"), "{methods:?}");
    assert_eq!(methods.last(), Some(&"turn/completed"), "{methods:?}");
    for expected in [
        "turn/started",
        "item/reasoning/summaryTextDelta",
        "item/agentMessage/delta",
    ] {
        assert!(
            methods.contains(&expected),
            "{expected} missing: {methods:?}"
        );
    }
    let deltas: String = lines
        .iter()
        .filter(|l| l["method"] == json!("item/agentMessage/delta"))
        .map(|l| l["params"]["delta"].as_str().expect("delta"))
        .collect();
    assert_eq!(deltas, "AB");
    // The prompt came from stdin.
    let user = lines
        .iter()
        .find(|l| {
            l["method"] == json!("item/started")
                && l["params"]["item"]["type"] == json!("userMessage")
        })
        .expect("the user message item");
    assert_eq!(
        user["params"]["item"]["content"][0]["text"],
        json!("the prompt from stdin\n")
    );
}

#[test]
fn a_failed_turn_exits_1_with_the_reason() {
    let (home, workspace) = home_and_workspace(&scratch("exec-fail"));
    fixture_steps(
        &home,
        json!([{"type": "error", "message": "the model fell over"}]),
        "",
    );
    let output = exec(
        &home,
        &["--cwd", workspace.to_str().expect("utf-8"), "go"],
        None,
    );
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the model fell over"), "{stderr}");
}

/// A home whose fixture runs `touch ran.txt` under the `untrusted` policy, so it asks first.
fn approval_case(name: &str, args: &[&str]) -> (Output, std::path::PathBuf) {
    let (home, workspace) = home_and_workspace(&scratch(name));
    fixture_steps(
        &home,
        json!([{"type": "command", "command": "touch ran.txt"},
               {"type": "message", "deltas": ["finished"]}]),
        "",
    );
    let mut all = vec![
        "--approve",
        "untrusted",
        "--sandbox",
        "workspace-write",
        "--cwd",
        workspace.to_str().expect("utf-8"),
    ];
    all.extend_from_slice(args);
    all.push("run it");
    (exec(&home, &all, None), workspace)
}

#[test]
fn approvals_are_declined_unless_yes() {
    let (output, workspace) = approval_case("exec-decline", &[]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(!workspace.join("ran.txt").exists());
    assert!(
        stderr.contains("item/commandExecution/requestApproval touch ran.txt: declined"),
        "{stderr}"
    );
    assert_eq!(stdout, "finished\n");

    let (output, workspace) = approval_case("exec-yes", &["--yes"]);
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(workspace.join("ran.txt").exists(), "{stderr}");
    assert!(stderr.contains("$ touch ran.txt"), "{stderr}");
    assert!(stderr.contains("accepted"), "{stderr}");
}

#[test]
fn config_overrides_and_model_reach_the_server() {
    let (home, workspace) = home_and_workspace(&scratch("exec-overrides"));
    // No config file: the fixture provider comes from `-c` flags alone.
    let script = json!({"version": 1, "responses": [{"steps": [
        {"type": "message", "deltas": ["from the override"]}
    ]}]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("script");
    let output = exec(
        &home,
        &[
            "-c",
            "model_provider=\"fixture\"",
            "-c",
            "fixture_script=\"script.json\"",
            "--json",
            "--model",
            "my-model",
            "--cwd",
            workspace.to_str().expect("utf-8"),
            "hi",
        ],
        None,
    );
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("from the override"), "{stdout}");
    let started: Value = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON"))
        .find(|l| l["method"] == json!("thread/started"))
        .expect("thread/started");
    assert_eq!(
        started["params"]["thread"]["modelProvider"],
        json!("fixture"),
        "{started}"
    );
}

#[test]
fn bad_arguments_are_refused() {
    let home = scratch("exec-bad");
    let output = exec(&home, &["--approve", "sometimes", "hi"], None);
    assert_eq!(output.status.code(), Some(2));
    // `--approve` is the hidden alias of `--ask-for-approval`, the name clap reports.
    assert!(
        text(&output).1.contains("--ask-for-approval"),
        "{:?}",
        text(&output)
    );
    let output = exec(&home, &["-"], Some("   \n"));
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output).1.contains("the prompt is empty"),
        "{:?}",
        text(&output)
    );
}

#[test]
fn ctrl_c_interrupts_the_turn_and_exits_130() {
    let (home, workspace) = home_and_workspace(&scratch("exec-interrupt"));
    let deltas: Vec<String> = (0..200).map(|i| format!("word{i} ")).collect();
    let script = json!({"version": 1, "deltaDelayMs": 50, "responses": [{"steps": [
        {"type": "message", "deltas": deltas}
    ]}]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n",
    )
    .expect("config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["exec", "--cwd", workspace.to_str().expect("utf-8"), "talk"])
        .env("AGENTWIRE_HOME", &home)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn exec");
    // Wait for the text to start streaming, then press Ctrl-C.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 4];
    stdout.read_exact(&mut first).expect("the turn streams");
    assert_eq!(&first, b"word");
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).expect("pid")).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("SIGINT");
    let mut rest = String::new();
    stdout
        .read_to_string(&mut rest)
        .expect("the rest of stdout");
    let output = child.wait_with_output().expect("exit");
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(!rest.contains("word199"), "the turn ran to its end: {rest}");
}

#[test]
fn drives_an_openai_compatible_model_with_the_model_flag() {
    use crate::mock_model::{MockModel, Sse};
    let mock = MockModel::start(vec![Sse::answer("Hello from the mock.")]);
    let (home, workspace) = home_and_workspace(&scratch("exec-mock-model"));
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"default-model\"\n\n[model_providers.mock]\n\
         name = \"mock model\"\nbase_url = \"{}\"\nmodel_context_window = 32768\n\
         request_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("config");
    let output = exec(
        &home,
        &[
            "--model",
            "picked-model",
            "--cwd",
            workspace.to_str().expect("utf-8"),
            "Say hello.",
        ],
        None,
    );
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "Hello from the mock.\n", "{stderr}");
    let requests = mock.wait_requests(1);
    let body = &requests[0].body;
    assert_eq!(body["model"], json!("picked-model"), "{body}");
    let messages = crate::model_context::chat_conversation(body);
    assert_eq!(
        messages.last().expect("a message"),
        &json!({"role": "user", "content": "Say hello."}),
        "{body}"
    );
}

/// The longest prompt `exec -` reads from stdin (docs/client.md).
const MAX_STDIN_PROMPT: usize = 16 * 1024 * 1024;

/// docs/client.md: `PROMPT` `-` reads the prompt from stdin "(at most 16 MiB)". A prompt of
/// exactly 16 MiB reaches the model whole (its last bytes select the fixture's answer); one
/// byte more is refused with the limit named, exit 1, before any server is started.
#[test]
fn a_stdin_prompt_of_16_mib_is_read_whole_and_one_byte_more_is_refused() {
    const END: &str = "the-end-of-the-prompt";
    let (home, workspace) = home_and_workspace(&scratch("exec-stdin-limit"));
    let script = json!({"version": 1, "responses": [
        {"when": END, "steps": [{"type": "message", "deltas": ["read to the end"]}]},
        {"steps": [{"type": "message", "deltas": ["cut short"]}]}
    ]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n",
    )
    .expect("config");
    let prompt = |bytes: usize| format!("{}{END}", "a".repeat(bytes - END.len()));
    let cwd = workspace.to_str().expect("utf-8");
    let entries = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|entry| {
                entry
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    };

    let over = exec(
        &home,
        &["--cwd", cwd, "-"],
        Some(&prompt(MAX_STDIN_PROMPT + 1)),
    );
    let (stdout, stderr) = text(&over);
    assert_eq!(over.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("over 16 MiB"), "{stderr}");
    // No server was started: it would have made its state and sessions in the home.
    assert_eq!(entries(&home), ["config.toml", "script.json"]);

    let whole = exec(&home, &["--cwd", cwd, "-"], Some(&prompt(MAX_STDIN_PROMPT)));
    let (stdout, stderr) = text(&whole);
    assert!(whole.status.success(), "{stderr}");
    assert_eq!(stdout, "read to the end\n", "{stderr}");
    assert_ne!(entries(&home), ["config.toml", "script.json"]);
}
