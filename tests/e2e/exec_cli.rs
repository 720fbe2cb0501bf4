//! The command line as scripts use it (issue 36, items 2 and 3): `agentwire exec` in
//! pipelines, quiet stderr, errors once with their details, `-o/--output-last-message`,
//! `--output-schema`, `--image`, `-s/-a/--full-auto`, `exec resume`, command output, MCP
//! start-up failures; broken pipes of the report commands; `completion bash` in a real bash;
//! help texts that say what the commands are.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{fixture_steps, home_and_workspace, scratch, text};
use crate::mock_model::{MockModel, Reply, Sse};

/// The binary.
fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_agentwire")
}

/// `agentwire exec ARGS` in `home`, with `RUST_LOG` unset (what a user's shell has), stdin
/// closed; waits for it.
fn exec(home: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .arg("exec")
        .args(args)
        .env("AGENTWIRE_HOME", home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run agentwire exec")
}

/// A home whose model is the mock at `mock`, and its workspace.
fn mock_home(name: &str, mock: &MockModel, extra: &str) -> (PathBuf, PathBuf) {
    let (home, workspace) = home_and_workspace(&scratch(name));
    let config = format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n{extra}\n[model_providers.mock]\n\
         name = \"mock model\"\nbase_url = \"{}\"\nmodel_context_window = 32768\n\
         request_max_retries = 0\n",
        mock.base_url()
    );
    std::fs::write(home.join("config.toml"), config).expect("config");
    (home, workspace)
}

fn utf8(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// Runs `script` in bash with `AGENTWIRE_HOME=home`: (stdout, stderr).
fn bash(home: &Path, script: &str) -> (String, String) {
    let output = Command::new("bash")
        .args(["-c", script])
        .env("AGENTWIRE", bin())
        .env("AGENTWIRE_HOME", home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run bash");
    text(&output)
}

/// Neither a panic nor Rust's "failed printing" message reached stderr.
fn assert_no_panic(stderr: &str) {
    assert!(
        !stderr.contains("panicked") && !stderr.contains("failed printing"),
        "{stderr}"
    );
}

#[test]
fn exec_json_into_head_ends_at_once_as_killed_by_sigpipe_and_the_turn_stops() {
    let (home, workspace) = home_and_workspace(&scratch("exec-cli-head"));
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
    // The whole turn takes 10 s; `head -2` leaves after two lines.
    let started = Instant::now();
    let (stdout, stderr) = bash(
        &home,
        &format!(
            "\"$AGENTWIRE\" exec --json -C {} talk | head -2; echo \"status=${{PIPESTATUS[0]}}\"",
            utf8(&workspace)
        ),
    );
    let took = started.elapsed();
    assert_no_panic(&stderr);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}{stderr}");
    let first: Value = serde_json::from_str(lines[0]).expect("a JSON line");
    assert_eq!(first["method"], "thread/started", "{stdout}");
    assert_eq!(lines[2], "status=141", "{stdout}{stderr}");
    assert!(
        took < Duration::from_secs(8),
        "exec ran on after its reader left: {took:?}"
    );
    assert_eq!(stderr, "", "stderr is quiet");

    // The same with text output, seen from the parent: killed by SIGPIPE, not an exit code.
    let mut child = Command::new(bin())
        .args(["exec", "-C", utf8(&workspace), "talk"])
        .env("AGENTWIRE_HOME", &home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn exec");
    let mut first = Vec::new();
    let mut reader = BufReader::new(child.stdout.take().expect("stdout"));
    reader
        .read_until(b' ', &mut first)
        .expect("the text streams");
    assert_eq!(first, b"word0 ");
    drop(reader);
    let output = child.wait_with_output().expect("exec ends");
    assert_eq!(output.status.signal(), Some(13), "{:?}", output.status);
    assert_no_panic(&text(&output).1);
}

#[test]
fn report_commands_into_head_end_quietly_with_status_141() {
    let dir = scratch("exec-cli-report-head");
    // 3000 requests of a method the contract does not know: a report far larger than a pipe
    // holds, so the writer meets the closed pipe whatever the timing.
    let mut lines = vec![
        json!({"session": "s", "dir": "client->server", "line": json!({"id": 0, "method": "initialize",
            "params": {"clientInfo": {"name": "t", "version": "1"}}}).to_string()}),
    ];
    for id in 1..=3000 {
        lines.push(json!({"session": "s", "dir": "client->server",
            "line": json!({"id": id, "method": "no/such/method", "params": {}}).to_string()}));
    }
    let transcript = dir.join("t.jsonl");
    let body: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&transcript, body.join("\n") + "\n").expect("transcript");
    for format in ["text", "json"] {
        let (stdout, stderr) = bash(
            &dir,
            &format!(
                "\"$AGENTWIRE\" contract check --format {format} {} | head -1; echo \"status=${{PIPESTATUS[0]}}\"",
                utf8(&transcript)
            ),
        );
        assert_no_panic(&stderr);
        assert_eq!(stderr, "", "{format}");
        assert_eq!(stdout.lines().count(), 2, "{format}: {stdout}");
        assert!(stdout.ends_with("status=141\n"), "{format}: {stdout}");
    }
    // Unpiped, the same report is whole and the status is the contract's (1: violations).
    let output = Command::new(bin())
        .args(["contract", "check", utf8(&transcript)])
        .output()
        .expect("contract check");
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.len() > 128 * 1024, "{}", output.stdout.len());
}

/// `generate-openrpc --out -` writes the document to stdout; into `head`, through `-` or
/// `/dev/stdout`, it ends as a filter does (status 141, nothing on stderr).
#[test]
fn openrpc_to_stdout_is_whole_and_ends_quietly_into_head() {
    let dir = scratch("exec-cli-openrpc-head");
    let output = Command::new(bin())
        .args(["app-server", "generate-openrpc", "--out", "-"])
        .output()
        .expect("generate-openrpc");
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let document: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(document["openrpc"], "1.2.6");
    assert!(
        output.stdout.len() > 128 * 1024,
        "larger than a pipe holds: {}",
        output.stdout.len()
    );
    for out in ["-", "/dev/stdout"] {
        let (stdout, stderr) = bash(
            &dir,
            &format!(
                "\"$AGENTWIRE\" app-server generate-openrpc --out {out} | head -c 1; echo \"\nstatus=${{PIPESTATUS[0]}}\""
            ),
        );
        assert_no_panic(&stderr);
        assert_eq!(stderr, "", "{out}");
        assert_eq!(stdout, "{\nstatus=141\n", "{out}");
    }
}

#[test]
fn stderr_is_quiet_by_default_and_rust_log_still_opens_it() {
    let (home, workspace) = home_and_workspace(&scratch("exec-cli-quiet"));
    fixture_steps(&home, json!([{"type": "message", "deltas": ["quiet"]}]), "");
    let output = exec(&home, &["-C", utf8(&workspace), "hi"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "quiet\n");
    assert_eq!(stderr, "", "nothing on stderr by default");

    let output = Command::new(bin())
        .args(["exec", "-C", utf8(&workspace), "hi"])
        .env("AGENTWIRE_HOME", &home)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .output()
        .expect("exec");
    assert!(output.status.success());
    assert!(
        text(&output).1.contains("INFO"),
        "RUST_LOG=info shows the server's logs: {:?}",
        text(&output).1
    );
}

#[test]
fn a_stdout_that_cannot_be_written_ends_the_run_with_one_error() {
    let (home, workspace) = home_and_workspace(&scratch("exec-cli-full"));
    fixture_steps(
        &home,
        json!([{"type": "message", "deltas": ["a", "b", "c"]}]),
        "",
    );
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let output = Command::new(bin())
        .args(["exec", "-C", utf8(&workspace), "hi"])
        .env("AGENTWIRE_HOME", &home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(full)
        .output()
        .expect("exec");
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "error: cannot write to stdout: No space left on device (os error 28); the turn was interrupted\n"
    );
}

#[test]
fn a_model_500_is_reported_once_with_its_details() {
    let mock = MockModel::start(vec![Reply::status(
        500,
        r#"{"error": {"message": "the upstream model fell over: quota-xyz-42"}}"#,
    )]);
    let (home, workspace) = mock_home("exec-cli-500", &mock, "");
    let output = exec(&home, &["-C", utf8(&workspace), "hello"]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr.matches("quota-xyz-42").count(),
        1,
        "the details, once: {stderr}"
    );
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("error:")).count(),
        1,
        "one error: {stderr}"
    );
    assert!(stderr.contains("500"), "{stderr}");
}

#[test]
fn output_last_message_and_output_schema_reach_the_file_and_the_model() {
    let answer = r#"{"verdict":"ok"}"#;
    let mock = MockModel::start(vec![Sse::answer(answer)]);
    let (home, workspace) = mock_home("exec-cli-schema", &mock, "");
    let schema = json!({"type": "object", "properties": {"verdict": {"type": "string"}},
                        "required": ["verdict"], "additionalProperties": false});
    let schema_file = workspace.join("schema.json");
    std::fs::write(&schema_file, schema.to_string()).expect("schema");
    let last = workspace.join("last.txt");
    let output = exec(
        &home,
        &[
            "-C",
            utf8(&workspace),
            "--output-schema",
            utf8(&schema_file),
            "-o",
            utf8(&last),
            "judge",
        ],
    );
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, format!("{answer}\n"));
    assert_eq!(std::fs::read_to_string(&last).expect("-o file"), answer);
    let body = &mock.wait_requests(1)[0].body;
    assert_eq!(
        body["response_format"]["json_schema"]["schema"], schema,
        "{body}"
    );

    // A schema that is not JSON is refused before anything runs.
    std::fs::write(&schema_file, "{not json").expect("schema");
    let output = exec(&home, &["--output-schema", utf8(&schema_file), "judge"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output).1.contains("--output-schema"),
        "{:?}",
        text(&output)
    );
    assert_eq!(mock.requests().len(), 1);
}

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

#[test]
fn images_reach_the_model_with_the_prompt() {
    use base64::Engine as _;
    let mock = MockModel::start(vec![Sse::answer("a dot")]);
    let (home, workspace) = mock_home("exec-cli-image", &mock, "");
    let image = workspace.join("dot.png");
    std::fs::write(&image, PNG).expect("png");
    let output = exec(
        &home,
        &["-C", utf8(&workspace), "-i", utf8(&image), "what is this?"],
    );
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "a dot\n");
    let body = &mock.wait_requests(1)[0].body;
    let expected = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(PNG)
    );
    assert!(
        body.to_string().contains(&expected),
        "the image is in the request: {body}"
    );
    assert!(body.to_string().contains("what is this?"), "{body}");

    let output = exec(&home, &["-i", "/no/such/image.png", "what is this?"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output).1.contains("/no/such/image.png"),
        "{:?}",
        text(&output)
    );
}

#[test]
fn sandbox_and_approval_flags_reach_the_model_context() {
    let cases: [(&[&str], &str, &str); 4] = [
        (&["--full-auto"], "workspace-write", "on-request"),
        (&["-s", "read-only", "-a", "never"], "read-only", "never"),
        (
            &[
                "--sandbox",
                "danger-full-access",
                "--ask-for-approval",
                "untrusted",
            ],
            "danger-full-access",
            "untrusted",
        ),
        (
            &["--dangerously-bypass-approvals-and-sandbox"],
            "danger-full-access",
            "never",
        ),
    ];
    for (i, (flags, sandbox, approval)) in cases.iter().enumerate() {
        let mock = MockModel::start(vec![Sse::answer("ok")]);
        let (home, workspace) = mock_home(&format!("exec-cli-policy-{i}"), &mock, "");
        let mut args = vec!["-C", utf8(&workspace)];
        args.extend_from_slice(flags);
        args.push("hi");
        let output = exec(&home, &args);
        assert!(output.status.success(), "{flags:?}: {:?}", text(&output));
        let body = mock.wait_requests(1)[0].body.to_string();
        assert!(
            body.contains(&format!("<sandbox_mode>{sandbox}</sandbox_mode>")),
            "{flags:?}: {body}"
        );
        assert!(
            body.contains(&format!("<approval_policy>{approval}</approval_policy>")),
            "{flags:?}: {body}"
        );
    }
    // --full-auto says both: with either, it is refused.
    let home = scratch("exec-cli-policy-conflict");
    let output = exec(&home, &["--full-auto", "-s", "read-only", "hi"]);
    assert_eq!(output.status.code(), Some(2), "{:?}", text(&output));
}

/// The thread id of `--json` output's `turn/completed`.
fn completed_thread(stdout: &str) -> String {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON line"))
        .find(|l| l["method"] == "turn/completed")
        .and_then(|l| l["params"]["threadId"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no turn/completed: {stdout}"))
}

#[test]
fn exec_resume_last_and_by_id_continue_the_same_thread() {
    let mock = MockModel::start(vec![
        Sse::answer("one"),
        Sse::answer("two"),
        Sse::answer("three"),
    ]);
    let (home, workspace) = mock_home("exec-cli-resume", &mock, "");
    let other = workspace.join("elsewhere");
    std::fs::create_dir_all(&other).expect("dir");
    let cwd = utf8(&workspace);

    let first = exec(&home, &["--json", "-C", cwd, "first prompt"]);
    assert!(first.status.success(), "{:?}", text(&first));
    let thread = completed_thread(&text(&first).0);

    // --last in another directory finds nothing there, and says where it looked.
    let output = exec(&home, &["resume", "--last", "-C", utf8(&other), "more"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output).1.contains("--all"), "{:?}", text(&output));

    let second = exec(
        &home,
        &["resume", "--last", "--json", "-C", cwd, "second prompt"],
    );
    assert!(second.status.success(), "{:?}", text(&second));
    assert_eq!(completed_thread(&text(&second).0), thread);

    let third = exec(&home, &["--json", "resume", &thread, "third prompt"]);
    assert!(third.status.success(), "{:?}", text(&third));
    assert_eq!(completed_thread(&text(&third).0), thread);

    // The model saw the whole conversation on the third turn.
    let requests = mock.wait_requests(3);
    let conversation = crate::model_context::chat_conversation(&requests[2].body);
    let said: Vec<String> = conversation
        .iter()
        .map(|m| m["content"].to_string())
        .collect();
    let said = said.join("\n");
    for part in [
        "first prompt",
        "one",
        "second prompt",
        "two",
        "third prompt",
    ] {
        assert!(said.contains(part), "{part} missing: {said}");
    }

    let output = exec(&home, &["resume", "no-such-thread", "more"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output)
            .1
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count(),
        1,
        "{:?}",
        text(&output)
    );
}

#[test]
fn command_output_is_shown_on_stderr_last_lines_only() {
    let (home, workspace) = home_and_workspace(&scratch("exec-cli-output"));
    fixture_steps(
        &home,
        json!([{"type": "command", "command": "seq 1 30"},
               {"type": "message", "deltas": ["counted"]}]),
        "",
    );
    let output = exec(
        &home,
        &[
            "-C",
            utf8(&workspace),
            "-s",
            "workspace-write",
            "-a",
            "never",
            "count",
        ],
    );
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "counted\n");
    let lines: Vec<&str> = stderr.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == "$ seq 1 30")
        .unwrap_or_else(|| panic!("the command: {stderr}"));
    let expected: Vec<String> = std::iter::once("… (10 earlier lines)".to_owned())
        .chain((11..=30).map(|n| n.to_string()))
        .chain(std::iter::once("(exit 0)".to_owned()))
        .collect();
    assert_eq!(lines[start + 1..], expected[..], "{stderr}");
}

#[test]
fn an_mcp_server_that_fails_to_start_is_reported() {
    let (home, workspace) = home_and_workspace(&scratch("exec-cli-mcp"));
    fixture_steps(
        &home,
        json!([{"type": "message", "deltas": ["done"]}]),
        "\n[mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server-binary\"\n",
    );
    let output = exec(&home, &["-C", utf8(&workspace), "hi"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "done\n");
    assert!(
        stderr.contains("warning: MCP server broken failed to start"),
        "{stderr}"
    );
}

#[test]
fn completion_bash_completes_subcommands_and_exec_flags_in_a_real_bash() {
    let dir = scratch("exec-cli-completion");
    let script = dir.join("agentwire.bash");
    let output = Command::new(bin())
        .args(["completion", "bash"])
        .output()
        .expect("completion");
    assert!(output.status.success());
    std::fs::write(&script, &output.stdout).expect("script");
    // What bash's programmable completion does on TAB: set COMP_* and call the function
    // `complete -p agentwire` names.
    let complete = |line: &str| -> Vec<String> {
        let words: Vec<&str> = line.split(' ').collect();
        let shell = format!(
            "source {script}; func=$(complete -p agentwire | sed -E 's/.*-F ([^ ]+).*/\\1/'); \
             COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{line}'; COMP_POINT={point}; \
             \"$func\" agentwire '{cur}' '{prev}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script = utf8(&script),
            words = words.join(" "),
            cword = words.len() - 1,
            point = line.len(),
            cur = words[words.len() - 1],
            prev = words[words.len() - 2],
        );
        let (stdout, stderr) = bash(&dir, &shell);
        assert_eq!(stderr, "", "{line}");
        stdout.split_whitespace().map(str::to_owned).collect()
    };
    let mut subcommands = complete("agentwire con");
    subcommands.sort();
    assert_eq!(subcommands, ["conformance", "contract"]);
    assert!(
        complete("agentwire sand").is_empty(),
        "hidden subcommands stay hidden"
    );
    assert_eq!(
        complete("agentwire exec --output-l"),
        ["--output-last-message"]
    );
    assert!(complete("agentwire exec re").contains(&"resume".to_owned()));

    for shell in ["zsh", "fish"] {
        let output = Command::new(bin())
            .args(["completion", shell])
            .output()
            .expect("completion");
        assert!(output.status.success(), "{shell}");
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("output-last-message"),
            "{shell}"
        );
    }
}

#[test]
fn help_texts_say_what_each_command_is() {
    let help = |args: &[&str]| -> String {
        let output = Command::new(bin()).args(args).output().expect("help");
        assert!(output.status.success(), "{args:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let top = help(&["--help"]);
    for face in [
        "app-server",
        "mcp-server",
        "exec",
        "terminal client",
        "contract",
        "conformance",
        "completion",
    ] {
        assert!(top.contains(face), "{face} missing: {top}");
    }
    assert!(!top.contains("schema generators and schema diff"), "{top}");

    // Server flags under Options, the configuration overrides under their own heading.
    let server = help(&["app-server", "--help"]);
    let options = server.find("Options:").expect("Options");
    let config = server
        .find("Configuration (every subcommand):")
        .expect("the configuration heading");
    let listen = server.find("--listen").expect("--listen");
    let profile = server.find("--profile").expect("--profile");
    assert!(
        options < listen && listen < config && config < profile,
        "{server}"
    );

    for args in [
        &["contract", "check", "--help"][..],
        &["conformance", "--help"],
    ] {
        let text = help(args);
        assert!(!text.contains("One line per change"), "{args:?}: {text}");
    }
    assert!(help(&["contract", "check", "--help"]).contains("violation"));
    assert!(help(&["conformance", "--help"]).contains("scenario"));

    let exec = help(&["exec", "--help"]);
    for flag in [
        "-C, --cd <DIR>",
        "-o, --output-last-message <FILE>",
        "--output-schema <FILE>",
        "-i, --image <FILE>",
        "-s, --sandbox <MODE>",
        "-a, --ask-for-approval <POLICY>",
        "--full-auto",
        "resume",
    ] {
        assert!(exec.contains(flag), "{flag} missing: {exec}");
    }
    assert!(
        !exec.contains("--cwd") && !exec.contains("--approve "),
        "{exec}"
    );
}
