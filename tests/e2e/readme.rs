//! Every command the README shows, run as a reader would type it.
//!
//! The README's fenced `sh` blocks are read from the file, line by line, and each command line
//! must be one this module knows how to run; a command added to the README without a way to
//! run it here fails [`every_command_in_the_readme_is_one_this_test_runs`]. Each is run
//! verbatim through `sh -c`, with the built binary first on `PATH`, in a fresh
//! `$AGENTWIRE_HOME`, against a loopback mock model standing in for Ollama, a local
//! OpenAI-compatible server or OpenAI itself (put in the provider's place by that home's
//! `config.toml`, or, for a URL the command itself names, by replacing that URL). The two
//! indented commands at the top (the demo and the test command) are what CI itself runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{repo, scratch};
use crate::mock_model::{MockModel, Recorded, Sse};
use crate::mock_responses::Responses;

/// The commands of the README's `sh` blocks, in order, without comments.
fn readme_commands() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("README.md")).expect("read README.md");
    let mut commands = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(fence) = trimmed.strip_prefix("```") {
            in_sh = !in_sh && fence == "sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let command = strip_comment(trimmed);
        if !command.is_empty() {
            commands.push(command.to_owned());
        }
    }
    commands
}

/// `line` without a trailing `# …` comment outside quotes.
fn strip_comment(line: &str) -> &str {
    let mut quoted = None;
    for (at, c) in line.char_indices() {
        match (quoted, c) {
            (None, '"' | '\'') => quoted = Some(c),
            (Some(q), _) if q == c => quoted = None,
            (None, '#') if at == 0 || line[..at].ends_with(' ') => return line[..at].trim_end(),
            _ => {}
        }
    }
    line.trim_end()
}

/// The body of the README's first `toml` block.
fn readme_toml() -> String {
    let text = std::fs::read_to_string(repo().join("README.md")).expect("read README.md");
    let start = text.find("```toml\n").expect("a toml block in README.md") + "```toml\n".len();
    let end = start + text[start..].find("```").expect("the toml block ends");
    text[start..end].to_owned()
}

/// A fresh home (`$AGENTWIRE_HOME`) and working directory for one command.
struct Reader {
    home: PathBuf,
    work: PathBuf,
}

impl Reader {
    fn new(name: &str, config: &str) -> Self {
        let root = scratch(&format!("readme-{name}"));
        let home = root.join("home");
        let work = root.join("work");
        std::fs::create_dir_all(&home).expect("create home");
        std::fs::create_dir_all(&work).expect("create work");
        std::fs::write(home.join("config.toml"), config).expect("write config.toml");
        std::fs::write(work.join("hello.txt"), "hello\n").expect("write a file");
        Reader { home, work }
    }

    /// `command` through `sh -c` as a reader's shell runs it: the built binary first on
    /// `PATH`, this reader's home, no API key in the environment unless `env` gives one.
    fn sh(&self, command: &str, env: &[(&str, &str)]) -> Command {
        let bin = Path::new(env!("CARGO_BIN_EXE_agentwire"))
            .parent()
            .expect("the binary's directory");
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut sh = Command::new("sh");
        sh.arg("-c")
            .arg(command)
            .current_dir(&self.work)
            .env("PATH", path)
            .env("HOME", self.home.parent().expect("root"))
            .env("AGENTWIRE_HOME", &self.home)
            .env_remove("OPENAI_API_KEY")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in env {
            sh.env(name, value);
        }
        sh
    }

    fn run(&self, command: &str, env: &[(&str, &str)]) -> Output {
        self.sh(command, env).output().expect("run sh")
    }
}

/// The model calls among `requests`, whichever wire API.
fn calls(requests: &[Recorded]) -> Vec<&Recorded> {
    requests
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions") || r.path.ends_with("/responses"))
        .collect()
}

fn assert_ran(command: &str, output: &Output, answer: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(answer),
        "`{command}`: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
}

/// Runs one README command (given as the README shows it).
type Runner = fn(&str);

/// How the test runs one README command; `None` for a command it does not know.
fn runner(command: &str) -> Option<Runner> {
    let known: [(&str, Runner); 8] = [
        ("cargo install --locked --path cli", cargo_install),
        ("agentwire --version", version),
        ("agentwire exec --oss ", exec_oss),
        ("agentwire exec -c model_provider=local ", exec_local_url),
        (
            "printenv OPENAI_API_KEY | agentwire login",
            login_then_openai,
        ),
        (
            "agentwire exec -c model_provider=openai ",
            login_then_openai,
        ),
        ("agentwire app-server --listen ws://", listen_ws),
        ("codex --remote ws://", codex_remote),
    ];
    known
        .iter()
        .find(|(prefix, _)| command.starts_with(prefix))
        .map(|(_, run)| *run)
}

/// The README's commands, each one this module runs; and the module runs each.
#[test]
fn every_command_in_the_readme_is_one_this_test_runs() {
    let commands = readme_commands();
    assert!(
        commands.len() >= 8,
        "README.md's sh blocks hold {commands:?}"
    );
    let mut ran = std::collections::HashSet::new();
    for command in &commands {
        let run = runner(command).unwrap_or_else(|| {
            panic!("README.md shows `{command}`, which tests/e2e/readme.rs does not run")
        });
        // `login` and the OpenAI `exec` are one scenario: run it once.
        if ran.insert(run as usize) {
            run(command);
        }
    }
}

/// `cargo install --locked --path cli`: not run (a release build of the whole workspace is
/// many minutes); what it depends on is checked: the lock file is complete for `--locked`, and
/// the package at `cli/` installs a binary named `agentwire`.
fn cargo_install(_: &str) {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--locked", "--format-version", "1", "--no-deps"])
        .current_dir(repo())
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata --locked: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    let cli = repo().join("cli").canonicalize().expect("cli/");
    let package = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| {
            Path::new(p["manifest_path"].as_str().unwrap_or_default()).parent()
                == Some(cli.as_path())
        })
        .expect("a package at cli/");
    assert!(
        package["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .any(|t| t["name"] == json!("agentwire") && t["kind"] == json!(["bin"])),
        "cli/ installs no `agentwire` binary: {package}"
    );
}

/// `agentwire --version` names the binary and the protocol version.
fn version(command: &str) {
    let reader = Reader::new("version", "");
    let output = reader.run(command, &[]);
    assert_ran(
        command,
        &output,
        &format!("agentwire {}", env!("CARGO_PKG_VERSION")),
    );
}

/// `agentwire exec --oss -m MODEL PROMPT` asks Ollama (the mock in its place) for that model
/// with the prompt, and prints the answer.
fn exec_oss(command: &str) {
    let ollama = MockModel::start(vec![Sse::answer("Ollama answered.")]);
    let reader = Reader::new(
        "oss",
        &format!(
            "[model_providers.ollama]\nbase_url = \"{}\"\n",
            ollama.base_url()
        ),
    );
    let output = reader.run(command, &[]);
    assert_ran(command, &output, "Ollama answered.");
    let requests = ollama.requests();
    let call = calls(&requests)[0];
    assert_eq!(call.body["model"], json!("qwen2.5-coder:7b"), "{command}");
    assert!(
        call.body.to_string().contains("List the files here"),
        "the prompt reached the model: {}",
        call.body
    );

    // The configuration the README suggests, then plain `agentwire exec`: the same model,
    // and the sandbox and approval settings it names are the thread's.
    let ollama = MockModel::start(vec![Sse::answer("Configured.")]);
    let reader = Reader::new(
        "config",
        &format!(
            "{}\n[model_providers.ollama]\nbase_url = \"{}\"\n",
            readme_toml(),
            ollama.base_url()
        ),
    );
    let output = reader.run("agentwire exec \"Say hello\"", &[]);
    assert_ran("agentwire exec (README config)", &output, "Configured.");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("warning"),
        "the README's config.toml reads without a warning:\n{stderr}"
    );
    // The environment context the model is sent names the sandbox and approval policy.
    let requests = ollama.requests();
    let call = calls(&requests)[0];
    assert_eq!(call.body["model"], json!("qwen2.5-coder:7b"));
    let sent = call.body.to_string();
    for setting in [
        "<sandbox_mode>workspace-write</sandbox_mode>",
        "<approval_policy>on-request</approval_policy>",
    ] {
        assert!(sent.contains(setting), "no {setting} in {sent}");
    }
}

/// `agentwire exec -c model_provider=local -c model_providers.local.base_url=URL -m M P`: the
/// URL the README names is replaced by the mock's; nothing else of the command changes.
fn exec_local_url(command: &str) {
    let server = MockModel::start(vec![Sse::answer("Hello from the local server.")]);
    let named = "http://127.0.0.1:8080/v1";
    assert!(
        command.contains(named),
        "the README's command names {named}: {command}"
    );
    let command = command.replace(named, &server.base_url());
    let reader = Reader::new("local-url", "");
    let output = reader.run(&command, &[]);
    assert_ran(&command, &output, "Hello from the local server.");
    let requests = server.requests();
    let call = calls(&requests)[0];
    assert!(call.path.ends_with("/chat/completions"), "{}", call.path);
    assert_eq!(call.body["model"], json!("qwen2.5-coder"));
}

/// `printenv OPENAI_API_KEY | agentwire login --with-api-key`, then the README's OpenAI
/// `exec` without the variable: the stored key signs the Responses API call.
fn login_then_openai(_: &str) {
    let commands = readme_commands();
    let login = commands
        .iter()
        .find(|c| c.starts_with("printenv OPENAI_API_KEY | agentwire login"))
        .expect("the README's login command");
    let exec = commands
        .iter()
        .find(|c| c.starts_with("agentwire exec -c model_provider=openai "))
        .expect("the README's OpenAI exec command");
    let openai = MockModel::start(vec![Responses::answer("OpenAI answered.")]);
    let reader = Reader::new(
        "openai",
        &format!(
            "[model_providers.openai]\nbase_url = \"{}\"\n",
            openai.base_url()
        ),
    );
    let key = "sk-readme-0123456789";
    let output = reader.run(login, &[("OPENAI_API_KEY", key)]);
    assert!(
        output.status.success(),
        "`{login}`: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = reader.run(exec, &[]);
    assert_ran(exec, &output, "OpenAI answered.");
    let requests = openai.requests();
    let call = calls(&requests)[0];
    assert!(call.path.ends_with("/responses"), "{}", call.path);
    assert_eq!(call.body["model"], json!("gpt-5"));
    assert_eq!(
        call.header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );
}

/// `agentwire app-server --listen ws://127.0.0.1:PORT`: the port the README names is replaced
/// by a free one; the listener answers `/readyz` and the websocket handshake.
fn listen_ws(command: &str) {
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let named = "127.0.0.1:4500";
    assert!(command.contains(named), "{command}");
    let command = command.replace(named, &format!("127.0.0.1:{free}"));
    let reader = Reader::new("listen", "");
    let mut child = reader
        .sh(&format!("exec {command}"), &[])
        .stdout(Stdio::null())
        .spawn()
        .expect("start the listener");
    let deadline = Instant::now() + Duration::from_secs(20);
    let answer = loop {
        if let Ok(answer) = http_get(free, "/readyz") {
            break answer;
        }
        assert!(Instant::now() < deadline, "`{command}` never listened");
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

/// `codex --remote ws://…`: Codex's own TUI against agentwire needs the pinned npm release and
/// tmux; `codex_tui.rs` runs it (over ws with and without a token, and unix). Here: that module
/// still drives `codex --remote`.
fn codex_remote(command: &str) {
    let source = std::fs::read_to_string(repo().join("tests/e2e/codex_tui.rs"))
        .expect("read tests/e2e/codex_tui.rs");
    assert!(
        source.contains("\"--remote\"") && source.contains("fn codex_tui_runs_turns"),
        "`{command}` is run by tests/e2e/codex_tui.rs, which no longer drives codex --remote"
    );
}
