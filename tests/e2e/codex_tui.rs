//! Codex's own terminal client (`@openai/codex` 0.171.0, the pinned static binary that
//! `scripts/install-bench-tools.sh` puts under `bench/node_modules`), unchanged, against the
//! built `agentwire app-server`: each test starts the server on the fixture model in a
//! workspace of its own, runs `codex --remote URL` inside a tmux server of its own (a 150×50
//! window), types into it with `send-keys` and reads the screen with `capture-pane`. The server
//! records the whole exchange (`--record`); every test ends by checking that agentwire answered
//! none of the client's requests with an error, -32601 above all, and that the screen shows no
//! error line and no warning that agentwire caused.
//!
//! The Codex client gets a `CODEX_HOME` and `HOME` of its own, under Cargo's target temporary
//! directory (Codex warns about a home under the system's temporary directory), so it reads
//! nothing of this machine's. With `--remote` it sends no working directory: threads run in the
//! server's, so the server is started in the test's workspace.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{home_and_workspace, repo, scratch};
use crate::tui::Tmux;

/// What `codex --version` prints for the pinned client.
const CODEX_VERSION: &str = "codex-cli 0.171.0";
/// Where `scripts/install-bench-tools.sh` installs it, from the repository root.
const CODEX_PATH: &str =
    "bench/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex";
/// How long a screen or the server may take to show what a test waits for.
const PATIENCE: Duration = Duration::from_secs(30);
/// Codex takes keys that arrive in a quick burst as a paste, in which Enter is a newline: the
/// pause between typing a line and pressing Enter is what that detection needs (the line is
/// already on the screen when it starts), not a wait for some state.
const PASTE_WINDOW: Duration = Duration::from_millis(400);

/// The pinned Codex binary, installed by `scripts/install-bench-tools.sh` (run once, under a
/// file lock, when it is missing); the test fails with the script's output when it cannot be.
pub(crate) fn codex() -> PathBuf {
    static CODEX: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match CODEX.get_or_init(install_codex) {
        Ok(path) => path.clone(),
        Err(reason) => panic!("no {CODEX_VERSION}: {reason}"),
    }
}

/// Whether `path` is the pinned Codex binary.
fn pinned(path: &Path) -> bool {
    Command::new(path).arg("--version").output().is_ok_and(|o| {
        o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == CODEX_VERSION
    })
}

/// Runs `scripts/install-bench-tools.sh` under `.tools/bench-tools.lock` unless the binary is
/// there already (or another test process installed it while this one waited for the lock).
fn install_codex() -> Result<PathBuf, String> {
    let repo = repo();
    let binary = repo.join(CODEX_PATH);
    if pinned(&binary) {
        return Ok(binary);
    }
    let tools = repo.join(".tools");
    std::fs::create_dir_all(&tools)
        .map_err(|e| format!("cannot create {}: {e}", tools.display()))?;
    let lock_path = tools.join("bench-tools.lock");
    let lock = File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    if pinned(&binary) {
        return Ok(binary);
    }
    let script = repo.join("scripts/install-bench-tools.sh");
    eprintln!(
        "{CODEX_VERSION} is not at {}; running {}",
        binary.display(),
        script.display()
    );
    let output = Command::new("bash")
        .arg(&script)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed ({}):\n{}{}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    if pinned(&binary) {
        Ok(binary)
    } else {
        Err(format!(
            "{} succeeded but {} is not {CODEX_VERSION}",
            script.display(),
            binary.display()
        ))
    }
}

/// A fresh, empty `CODEX_HOME` (and `HOME`) for the Codex client of one test, under Cargo's
/// target temporary directory rather than the system's.
pub(crate) fn client_home(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("codex-home-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the client home");
    dir
}

/// Makes `home`'s configuration serve the fixture model with the script every test here uses,
/// the `untrusted` approval policy and the `workspace-write` sandbox (the TUI asks for a
/// read-only one at startup). Responses are chosen by a piece of the input (the first that
/// matches answers), so the first one answers the prompt with which the TUI may ask for a title
/// of a new thread (it quotes the user's prompt) with the JSON object that prompt's output
/// schema wants.
pub(crate) fn write_fixture(home: &Path) {
    let script = json!({"version": 1, "responses": [
        {"when": "single-line task title",
         "steps": [{"type": "message", "deltas": ["{\"title\": \"Fixture title\"}"]}]},
        {"when": "approval command",
         "steps": [{"type": "command", "command": "printf approved-output-42"},
                   {"type": "message", "deltas": ["The command ", "ran."]}]},
        {"when": "fixture patch",
         "steps": [{"type": "patch", "patch": "*** Begin Patch\n*** Add File: fixture-patch.txt\n+patched by the fixture\n*** End Patch\n"},
                   {"type": "message", "deltas": ["Patched."]}]},
        {"when": "exec tools",
         "steps": [{"type": "command", "command": "echo exec-output-7 | tee exec-made.txt"},
                   {"type": "patch", "patch": "*** Begin Patch\n*** Add File: exec-patch.txt\n+patched from exec\n*** End Patch\n"},
                   {"type": "message", "deltas": ["Ran it ", "and patched."]}]},
        {"when": "Repository Guidelines",
         "steps": [{"type": "patch", "patch": "*** Begin Patch\n*** Add File: AGENTS.md\n+# Repository Guidelines\n+Written by the fixture.\n*** End Patch\n"},
                   {"type": "message", "deltas": ["Wrote AGENTS.md."]}]},
        {"when": "look for typos",
         "steps": [{"type": "message", "deltas": ["The fixture ", "review found no typos."]}]},
        {"when": "second question",
         "steps": [{"type": "message", "deltas": ["The second ", "answer."]}]},
        {"steps": [{"type": "message", "deltas": ["Hello from ", "the fixture script."]}]},
    ]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n\
         approval_policy = \"untrusted\"\nsandbox_mode = \"workspace-write\"\n",
    )
    .expect("write config");
}

/// Error answers a Codex client takes in its stride: Codex's own app-server answers
/// `thread/turns/list` with -32600 for a thread that has no user message yet, and the TUI asks
/// for it at startup and goes on.
const EXPECTED_ERRORS: &[(&str, i64)] = &[("thread/turns/list", -32600)];

/// A running `agentwire app-server` started in a workspace, recording its exchange.
pub(crate) struct Server {
    child: Child,
    log: PathBuf,
    record: PathBuf,
    url: String,
}

impl Server {
    /// Starts `agentwire app-server --listen LISTEN --record root/transcript.jsonl ARGS` with
    /// `home` as `AGENTWIRE_HOME` and `workspace` as its working directory, and waits until it
    /// listens. `LISTEN` is `ws://127.0.0.1:0` (the port is read from the log) or `unix://PATH`.
    pub(crate) fn start(
        root: &Path,
        home: &Path,
        workspace: &Path,
        listen: &str,
        args: &[&str],
    ) -> Self {
        let log = root.join("server.log");
        let record = root.join("transcript.jsonl");
        let child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
            .arg("app-server")
            .args(["--listen", listen])
            .arg("--record")
            .arg(&record)
            .args(args)
            .current_dir(workspace)
            .env("AGENTWIRE_HOME", home)
            .env("RUST_LOG", "info")
            .env_remove("LOG_FORMAT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&log).expect("create the server log"))
            .spawn()
            .expect("spawn agentwire app-server");
        let mut server = Self {
            child,
            log,
            record,
            url: String::new(),
        };
        server.url = server.wait_listening(listen);
        server
    }

    /// The URL of the `listening` log line.
    fn wait_listening(&mut self, listen: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let log = self.log();
            if let Some(line) = log.lines().find(|l| l.contains("listening ")) {
                let word = |key: &str| {
                    line.split_whitespace()
                        .find_map(|w| w.strip_prefix(key))
                        .map(str::to_owned)
                };
                return if listen.starts_with("unix://") {
                    format!(
                        "unix://{}",
                        word("path=").expect("path= in the listening line")
                    )
                } else {
                    format!(
                        "ws://{}",
                        word("addr=").expect("addr= in the listening line")
                    )
                };
            }
            if let Some(status) = self.child.try_wait().expect("poll the server") {
                panic!("agentwire app-server exited ({status}) before listening:\n{log}");
            }
            assert!(
                Instant::now() < deadline,
                "the server never listened:\n{log}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `ws://127.0.0.1:PORT` or `unix://PATH`.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// What the server logged so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Checks the recorded exchange: every request of every client was answered without an
    /// error (no -32601 above all), and no client answered a server request with an error.
    /// Prints the methods the clients called, in the order of their first call. Returns them.
    pub(crate) fn assert_served(&self) -> Vec<String> {
        let exchange = Exchange::read(&self.record);
        eprintln!(
            "methods the clients called: {}",
            exchange.methods.join(", ")
        );
        let not_found: Vec<&String> = exchange
            .errors
            .iter()
            .filter(|e| e.contains("(-32601)"))
            .collect();
        assert!(
            not_found.is_empty(),
            "agentwire answered -32601 (method not found) to {} request(s) of the Codex client:\n{}\n\
             every error answer:\n{}",
            not_found.len(),
            not_found
                .iter()
                .map(|e| format!("  {e}"))
                .collect::<Vec<_>>()
                .join("\n"),
            exchange.errors.join("\n")
        );
        let unexpected: Vec<&String> = exchange
            .errors
            .iter()
            .filter(|e| {
                !EXPECTED_ERRORS.iter().any(|(method, code)| {
                    e.starts_with(&format!("agentwire answered {method}: "))
                        && e.ends_with(&format!("({code})"))
                })
            })
            .collect();
        assert!(
            unexpected.is_empty(),
            "error answers in the exchange:\n{}",
            unexpected
                .iter()
                .map(|e| format!("  {e}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        exchange.methods
    }

    /// Whether a client sent a request for `method`.
    pub(crate) fn called(&self, method: &str) -> bool {
        Exchange::read(&self.record)
            .methods
            .iter()
            .any(|m| m == method)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a `--record` transcript says the clients asked and which answers were errors.
struct Exchange {
    /// Request methods of the clients, each once, in the order of their first call.
    methods: Vec<String>,
    /// `METHOD: MESSAGE (CODE)` for each error answer, either way.
    errors: Vec<String>,
}

impl Exchange {
    fn read(record: &Path) -> Self {
        let text = std::fs::read_to_string(record)
            .unwrap_or_else(|e| panic!("the transcript {}: {e}", record.display()));
        let mut methods: Vec<String> = Vec::new();
        let mut errors = Vec::new();
        // (session, direction of the request, id) → method.
        let mut requests: BTreeMap<(String, bool, String), String> = BTreeMap::new();
        for line in text.lines() {
            let record: Value = serde_json::from_str(line).expect("a transcript line is JSON");
            let session = record["session"].as_str().unwrap_or_default().to_owned();
            let from_client = record["dir"] == "client->server";
            let Ok(message) =
                serde_json::from_str::<Value>(record["line"].as_str().unwrap_or_default())
            else {
                errors.push(format!("unparsable message: {}", record["line"]));
                continue;
            };
            let id = message.get("id").map(Value::to_string);
            if let Some(method) = message.get("method").and_then(Value::as_str) {
                if let Some(id) = id {
                    requests.insert((session, from_client, id), method.to_owned());
                    if from_client && !methods.iter().any(|m| m == method) {
                        methods.push(method.to_owned());
                    }
                }
            } else if let Some(error) = message.get("error") {
                // An answer travels the other way from its request.
                let method = id
                    .and_then(|id| requests.get(&(session, !from_client, id)))
                    .map_or("(unknown request)", String::as_str);
                let who = if from_client {
                    "the client answered the server request"
                } else {
                    "agentwire answered"
                };
                errors.push(format!(
                    "{who} {method}: {} ({})",
                    error["message"].as_str().unwrap_or_default(),
                    error["code"]
                ));
            }
        }
        Self { methods, errors }
    }
}

/// What the pane shows, followed by the status, once the client has exited.
const EXITED: &str = "[codex exited with status";

/// Quotes `word` for `sh`.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The Codex TUI running in a tmux window of its own.
pub(crate) struct CodexTui {
    tmux: Tmux,
}

impl CodexTui {
    /// Runs `codex ARGS` in `cwd` with `codex_home` as its `CODEX_HOME` and `HOME` and `env`
    /// added, in a 150×50 window of a new tmux server (socket `root/NAME.tmux`) that keeps the
    /// pane, and what it shows, when the client exits.
    pub(crate) fn start(
        root: &Path,
        name: &str,
        cwd: &Path,
        codex_home: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let socket = root.join(format!("{name}.tmux"));
        let conf = root.join(format!("{name}.tmux.conf"));
        std::fs::write(
            &conf,
            "set -g remain-on-exit on\nset -g history-limit 5000\n",
        )
        .expect("write the tmux configuration");
        let mut command = vec![
            "env".to_owned(),
            "NO_COLOR=1".to_owned(),
            "TERM=xterm-256color".to_owned(),
            quote(&format!("CODEX_HOME={}", codex_home.display())),
            quote(&format!("HOME={}", codex_home.display())),
        ];
        command.extend(env.iter().map(|(k, v)| quote(&format!("{k}={v}"))));
        command.push(quote(&codex().display().to_string()));
        command.extend(args.iter().map(|a| quote(a)));
        // The shell that runs the client prints its exit status in the pane it leaves.
        command.push(format!("; printf '\\n{EXITED} %s\\n' \"$?\""));
        let status = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .arg("-f")
            .arg(&conf)
            .args(["new-session", "-d", "-x", "150", "-y", "50", "-c"])
            .arg(cwd)
            .arg(command.join(" "))
            .status()
            .expect("tmux is installed (scripts/install-ci-tools.sh installs it)");
        assert!(status.success(), "tmux new-session failed");
        Self {
            tmux: Tmux { socket },
        }
    }

    /// The screen as text.
    pub(crate) fn screen(&self) -> String {
        self.tmux.screen()
    }

    /// Presses a key by tmux name (`Enter`, `Escape`, `F2`, `4` …).
    pub(crate) fn key(&self, key: &str) {
        self.tmux.key(key);
    }

    /// Everything the pane showed, its scrollback included.
    fn history(&self) -> String {
        self.tmux.tmux(&["capture-pane", "-p", "-S", "-"])
    }

    /// How the client exited, once it has.
    fn exit_status(&self) -> Option<i32> {
        let history = self.history();
        let (_, rest) = history.rsplit_once(EXITED)?;
        rest.split_whitespace()
            .next()?
            .trim_end_matches(']')
            .parse()
            .ok()
    }

    /// Waits until the screen satisfies `ready`; returns the screen. Fails at once when the
    /// client exits first.
    pub(crate) fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            if self.tmux.exited() {
                let screen = self.history();
                panic!(
                    "the Codex client exited (status {:?}) before the screen showed {what}; \
                     it shows:\n{screen}",
                    self.exit_status()
                );
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {what}; it shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the screen contains `needle`.
    pub(crate) fn wait_text(&self, needle: &str) -> String {
        self.wait_for(&format!("{needle:?}"), |screen| screen.contains(needle))
    }

    /// Waits until the composer is ready for input and the status line under it names the
    /// thread's model (it is drawn before the bootstrap ends; the model comes with the thread).
    pub(crate) fn wait_composer(&self) -> String {
        self.wait_for("the composer and the thread's model", |screen| {
            screen.contains("? for shortcuts")
                && screen
                    .lines()
                    .any(|l| l.trim_start().starts_with("fixture ") && l.contains(" · "))
        })
    }

    /// Types `text` into the composer, waits until it shows, then presses Enter on its own.
    pub(crate) fn submit(&self, text: &str) {
        let before = self.screen().matches(text).count();
        self.tmux.type_text(text, false);
        self.wait_for(&format!("{text:?} typed"), |s| {
            s.matches(text).count() > before
        });
        std::thread::sleep(PASTE_WINDOW);
        self.key("Enter");
    }

    /// Fails when the screen shows an error line (Codex starts them with `■`).
    pub(crate) fn assert_no_error_lines(&self) {
        let screen = self.screen();
        let errors: Vec<&str> = screen
            .lines()
            .filter(|l| l.trim_start().starts_with('■') || l.contains("Error:"))
            .collect();
        assert!(
            errors.is_empty(),
            "the screen shows errors:\n{}\nthe screen:\n{screen}",
            errors.join("\n")
        );
    }

    /// Opens the warnings view (F2) when the footer announces warnings, reads every warning,
    /// closes the view, and fails on any warning other than the client's own (it looks for
    /// bubblewrap on this machine's PATH, whatever the server). Call it when the composer is
    /// idle and the session has been up a while (after a turn), so startup warnings are in.
    pub(crate) fn assert_no_agentwire_warnings(&self) {
        let screen = self.screen();
        if !screen.contains("f2 to view") {
            return;
        }
        self.key("F2");
        let mut warnings = Vec::new();
        let mut index = 1;
        loop {
            let screen = self.wait_text(&format!("Warnings · {index} of "));
            let lines: Vec<&str> = screen.lines().collect();
            let head = lines
                .iter()
                .position(|l| l.contains(&format!("Warnings · {index} of ")))
                .expect("the header line");
            let count: usize = lines[head]
                .split(" of ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no count in {:?}", lines[head]));
            let body: Vec<&str> = lines[head + 1..]
                .iter()
                .take_while(|l| !l.contains("esc dismiss"))
                .map(|l| l.trim())
                .filter(|l| !l.is_empty())
                .collect();
            warnings.push(body.join(" "));
            if index >= count {
                break;
            }
            index += 1;
            self.key("Right");
        }
        self.key("Escape");
        self.wait_for("the warnings view closed", |s| !s.contains("esc dismiss"));
        let ours: Vec<&String> = warnings
            .iter()
            .filter(|w| !w.contains("could not find bubblewrap"))
            .collect();
        assert!(
            ours.is_empty(),
            "the Codex client warns:\n{}",
            ours.iter()
                .map(|w| format!("  {w}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    /// `/quit`; waits for the client to exit 0 and returns its last screen, which names the
    /// thread to resume.
    pub(crate) fn quit(&self) -> String {
        self.submit("/quit");
        self.wait_for_exit()
    }

    fn wait_for_exit(&self) -> String {
        let deadline = Instant::now() + PATIENCE;
        while !self.tmux.exited() {
            assert!(
                Instant::now() < deadline,
                "the client did not exit; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let screen = self.history();
        assert_eq!(
            self.exit_status(),
            Some(0),
            "the client's exit; the screen:\n{screen}"
        );
        screen
    }
}

/// The thread id of the `… resume ID` line Codex prints when it exits.
fn resumable_thread(screen: &str) -> String {
    screen
        .lines()
        .find_map(|l| l.split(" resume ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no `resume ID` on the last screen:\n{screen}"))
}

/// One test's server side: a scratch directory with the server's home and workspace, the
/// fixture, and the Codex client's home.
struct Setup {
    root: PathBuf,
    workspace: PathBuf,
    codex_home: PathBuf,
    server: Server,
}

fn setup(name: &str, listen: Listen) -> Setup {
    let root = scratch(&format!("codex-tui-{name}"));
    let (home, workspace) = home_and_workspace(&root);
    write_fixture(&home);
    let server = match listen {
        Listen::Ws => Server::start(&root, &home, &workspace, "ws://127.0.0.1:0", &[]),
        Listen::WsToken(token) => {
            let token_file = root.join("token");
            std::fs::write(&token_file, format!("{token}\n")).expect("write the token");
            Server::start(
                &root,
                &home,
                &workspace,
                "ws://127.0.0.1:0",
                &["--ws-auth-token-file", token_file.to_str().expect("utf-8")],
            )
        }
        Listen::Unix => {
            let socket = root.join("app-server.sock");
            Server::start(
                &root,
                &home,
                &workspace,
                &format!("unix://{}", socket.display()),
                &[],
            )
        }
    };
    Setup {
        codex_home: client_home(&format!("tui-{name}")),
        root,
        workspace,
        server,
    }
}

#[derive(Clone, Copy)]
enum Listen {
    Ws,
    WsToken(&'static str),
    Unix,
}

impl Setup {
    fn launch(&self, name: &str, args: &[&str], env: &[(&str, &str)]) -> CodexTui {
        CodexTui::start(
            &self.root,
            name,
            &self.workspace,
            &self.codex_home,
            args,
            env,
        )
    }
}

/// Over ws:// with a bearer token: bootstrap reaches the composer, a plain turn shows the
/// fixture's answer, a command asks for approval and runs once accepted, a patch asks and is
/// applied once accepted.
#[test]
fn codex_tui_runs_turns_with_approvals_over_ws_with_a_token() {
    let setup = setup("turns", Listen::WsToken("tui-s3cret"));
    let url = setup.server.url().to_owned();
    let tui = setup.launch(
        "codex",
        &["--remote", &url, "--remote-auth-token-env", "AW_TOKEN"],
        &[("AW_TOKEN", "tui-s3cret")],
    );
    let screen = tui.wait_composer();
    assert!(screen.contains("OpenAI Codex (v0.171.0)"), "{screen}");

    tui.submit("say hello");
    let screen = tui.wait_text("Hello from the fixture script.");
    assert!(screen.contains("› say hello"), "{screen}");
    tui.wait_composer();

    tui.submit("please run the approval command");
    let screen = tui.wait_text("Would you like to run the following command?");
    assert!(screen.contains("$ printf approved-output-42"), "{screen}");
    assert!(screen.contains("› 1. Yes, proceed"), "{screen}");
    tui.key("Enter");
    let screen = tui.wait_text("The command ran.");
    assert!(
        screen.contains("You approved codex to run printf approved-output-42"),
        "{screen}"
    );
    assert!(
        screen.contains("└ approved-output-42"),
        "the command's output is shown:\n{screen}"
    );

    tui.submit("now apply the fixture patch");
    let screen = tui.wait_text("Would you like to make the following edits?");
    assert!(screen.contains("fixture-patch.txt"), "{screen}");
    tui.key("Enter");
    tui.wait_text("Patched.");
    assert_eq!(
        std::fs::read_to_string(setup.workspace.join("fixture-patch.txt"))
            .expect("the patch was applied"),
        "patched by the fixture\n"
    );
    tui.wait_composer();

    tui.assert_no_error_lines();
    tui.assert_no_agentwire_warnings();
    tui.quit();
    setup.server.assert_served();
}

/// Over ws:// without a token: `/status` names the model, `/model` opens the picker,
/// `/permissions` lists the permission presets, `/review` runs a custom review and `/init`
/// writes AGENTS.md.
#[test]
fn codex_tui_slash_commands_work_over_ws_without_a_token() {
    let setup = setup("slash", Listen::Ws);
    let url = setup.server.url().to_owned();
    let tui = setup.launch("codex", &["--remote", &url], &[]);
    tui.wait_composer();

    tui.submit("/status");
    let screen = tui.wait_text("Model provider:");
    let model = screen
        .lines()
        .find(|l| l.trim_start().starts_with("Model:"))
        .unwrap_or_else(|| panic!("no Model: line:\n{screen}"));
    assert!(model.contains("fixture"), "{model}");
    assert!(
        screen.contains(&setup.workspace.display().to_string()),
        "{screen}"
    );

    tui.submit("/model");
    let screen = tui.wait_text("Select Model and Effort");
    assert!(screen.contains("fixture (current)"), "{screen}");
    tui.key("Escape");
    tui.wait_for("the model picker closed", |s| {
        !s.contains("Select Model and Effort")
    });

    tui.submit("/permissions");
    // The menu is drawn while the profiles load, then with them (or with what failed).
    let screen = tui.wait_for("the permissions menu", |s| {
        s.split_once("Update Model Permissions")
            .is_some_and(|(_, menu)| menu.contains("1. "))
    });
    assert!(
        !screen.contains("does not support permission discovery"),
        "/permissions cannot list the permission profiles:\n{screen}"
    );
    assert!(screen.contains("1. Ask for approval"), "{screen}");
    tui.key("Escape");
    tui.wait_for("the permissions menu closed", |s| {
        !s.contains("Update Model Permissions")
    });

    tui.submit("/review");
    tui.wait_text("Select a review preset");
    tui.key("4");
    tui.wait_text("Custom review instructions");
    tui.submit("look for typos");
    let screen = tui.wait_text("Code review finished");
    assert!(
        screen.contains("Code review started: look for typos"),
        "{screen}"
    );
    assert!(
        screen.contains("The fixture review found no typos."),
        "{screen}"
    );
    tui.wait_composer();

    tui.submit("/init");
    tui.wait_text("Would you like to make the following edits?");
    tui.key("Enter");
    tui.wait_text("Wrote AGENTS.md.");
    let agents = std::fs::read_to_string(setup.workspace.join("AGENTS.md")).expect("AGENTS.md");
    assert!(agents.starts_with("# Repository Guidelines"), "{agents}");
    tui.wait_composer();

    tui.assert_no_error_lines();
    tui.assert_no_agentwire_warnings();
    tui.quit();
    setup.server.assert_served();
}

/// Over unix://: a conversation, then `codex resume --last` shows it and goes on in the same
/// thread, then `codex fork --last` shows it in a new thread.
#[test]
fn codex_tui_resumes_and_forks_over_unix() {
    let setup = setup("resume", Listen::Unix);
    let url = setup.server.url().to_owned();

    let tui = setup.launch("first", &["--remote", &url], &[]);
    tui.wait_composer();
    tui.submit("say hello");
    tui.wait_text("Hello from the fixture script.");
    tui.wait_composer();
    tui.assert_no_error_lines();
    tui.assert_no_agentwire_warnings();
    let first = resumable_thread(&tui.quit());

    let tui = setup.launch("resume", &["resume", "--last", "--remote", &url], &[]);
    let screen = tui.wait_text("Hello from the fixture script.");
    assert!(
        screen.contains("› say hello"),
        "the earlier conversation:\n{screen}"
    );
    tui.wait_composer();
    tui.submit("a second question");
    tui.wait_text("The second answer.");
    tui.wait_composer();
    tui.assert_no_error_lines();
    let resumed = resumable_thread(&tui.quit());
    assert_eq!(resumed, first, "resume goes on in the same thread");

    let tui = setup.launch("fork", &["fork", "--last", "--remote", &url], &[]);
    let screen = tui.wait_text("The second answer.");
    assert!(screen.contains("› say hello"), "{screen}");
    assert!(screen.contains("› a second question"), "{screen}");
    tui.wait_composer();
    tui.assert_no_error_lines();
    let forked = resumable_thread(&tui.quit());
    assert_ne!(forked, first, "a fork is a new thread");
    assert!(setup.server.called("thread/resume"));
    assert!(setup.server.called("thread/fork"));

    setup.server.assert_served();
}
