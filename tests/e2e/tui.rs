//! The terminal client, driven in a real pseudo-terminal: each test runs `agentwire` inside a
//! tmux server of its own (a fixed 100×30 window), types into it with `send-keys` and reads the
//! screen with `capture-pane`. The app-server behind it is a local child on the fixture model,
//! or a remote one over a websocket or the Unix control socket. tmux is installed by
//! `scripts/install-ci-tools.sh`.
//!
//! Run them alone with `cargo nextest run -p agentwire --test e2e -E 'test(/^tui::/)'`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::app_server_ws::App;
use crate::common::{fixture_steps, git, home_and_workspace, scratch};

/// How long a screen may take to show what a test waits for before the test fails.
const PATIENCE: Duration = Duration::from_secs(30);

/// A tmux server of one test, with one window running the client.
pub(crate) struct Tmux {
    pub(crate) socket: PathBuf,
}

impl Tmux {
    /// Starts `agentwire ARGS` in a 100×30 window, with `home` as `AGENTWIRE_HOME` and `cwd`
    /// as its working directory.
    fn start(root: &Path, home: &Path, cwd: &Path, args: &[&str]) -> Self {
        let socket = root.join("tmux.sock");
        let mut command = vec![
            format!("AGENTWIRE_HOME={}", home.display()),
            env!("CARGO_BIN_EXE_agentwire").to_owned(),
        ];
        command.extend(args.iter().map(|a| format!("'{a}'")));
        let status = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "100",
                "-y",
                "30",
            ])
            .arg("-c")
            .arg(cwd)
            .arg(command.join(" "))
            .status()
            .expect("tmux is installed (scripts/install-ci-tools.sh installs it)");
        assert!(status.success(), "tmux new-session failed");
        let tmux = Self { socket };
        tmux.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
        tmux
    }

    pub(crate) fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .stderr(Stdio::null())
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The screen as text.
    pub(crate) fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    /// Types `text` (then Enter when `enter`).
    pub(crate) fn type_text(&self, text: &str, enter: bool) {
        self.tmux(&["send-keys", "-l", text]);
        if enter {
            self.tmux(&["send-keys", "Enter"]);
        }
    }

    /// Presses a key by tmux name (`C-c`, `y`, …).
    pub(crate) fn key(&self, key: &str) {
        self.tmux(&["send-keys", key]);
    }

    /// Waits until the screen satisfies `ready`; returns the screen.
    fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {what}; it shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the screen contains `needle`.
    fn wait_text(&self, needle: &str) -> String {
        self.wait_for(&format!("{needle:?}"), |screen| screen.contains(needle))
    }

    /// Whether the client has exited (the pane stays, dead, with remain-on-exit).
    pub(crate) fn exited(&self) -> bool {
        self.tmux(&["display-message", "-p", "#{pane_dead}"]).trim() == "1"
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

/// The thread id a `/status` report on the screen names (`· thread     ID`); the status line
/// must name the same one (at its end, ` · thread ID`).
fn thread_of(screen: &str) -> String {
    let thread = line_with(screen, "· thread     ")
        .and_then(|l| l.trim().strip_prefix("· thread"))
        .map(|id| id.trim().to_owned())
        .unwrap_or_else(|| panic!("/status names the thread:\n{screen}"));
    assert!(
        status_line(screen).ends_with(&format!(" · thread {thread}")),
        "the status line ends with the thread:\n{screen}"
    );
    thread
}

/// The line of the screen that starts with `prefix` (after leading spaces).
fn line_with<'a>(screen: &'a str, prefix: &str) -> Option<&'a str> {
    screen.lines().find(|l| l.trim_start().starts_with(prefix))
}

/// The status line (the screen's last non-empty line).
fn status_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
}

/// A reason longer than two lines of the window, ending in a word a cut line would lose.
const LONG_REASON: &str = "The note records what the agent found while looking at the \
workspace, and writing it needs a file outside what the sandbox allows without asking, so the \
agent asks first; this sentence goes on well past the width of the window so that the prompt \
has to wrap it over several lines instead of cutting it at the right edge. END-OF-REASON";

#[test]
fn a_turn_streams_and_an_approval_is_answered_on_the_screen() {
    let root = scratch("tui-approval");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(
        &home,
        json!([
            {"type": "reasoning", "summary": ["Looking at ", "the workspace."], "content": []},
            {"type": "command", "command": "echo made > note.txt", "escalate": true,
             "justification": LONG_REASON},
            {"type": "message", "deltas": ["Wrote ", "the note."]},
        ]),
        "approval_policy = \"untrusted\"\nsandbox_mode = \"workspace-write\"\n",
    );
    let tmux = Tmux::start(&root, &home, &workspace, &[]);
    tmux.wait_text("new thread");
    let screen = tmux.wait_text("· ready");
    // The model and effort the server says the thread runs with, not a placeholder.
    let status = status_line(&screen);
    assert!(
        status.trim_start().starts_with("fixture · effort "),
        "{status}"
    );
    assert!(!status.contains("default model"), "{status}");

    tmux.type_text("please write a note", true);
    let screen = tmux.wait_text("[y] yes");
    assert!(screen.contains("› please write a note"), "{screen}");
    assert!(
        screen.contains("thinking: Looking at the workspace."),
        "{screen}"
    );
    assert!(
        screen.contains("Run `echo made > note.txt` in"),
        "the approval names the command:\n{screen}"
    );
    assert!(
        status_line(&screen).contains("waiting for your approval ("),
        "{screen}"
    );
    // The whole reason is on the screen, wrapped, not cut at the edge.
    assert!(screen.contains("END-OF-REASON"), "{screen}");
    assert!(screen.contains("agent asks first;"), "{screen}");
    // The command waits for the answer; it does not run yet.
    assert!(screen.contains("└ waiting for approval"), "{screen}");
    assert!(!screen.contains("running…"), "{screen}");
    assert!(
        !workspace.join("note.txt").exists(),
        "nothing runs before the answer"
    );

    tmux.key("y");
    let screen = tmux.wait_text("Wrote the note.");
    assert!(screen.contains("$ echo made > note.txt"), "{screen}");
    assert!(screen.contains("└ exit 0"), "{screen}");
    assert!(!screen.contains("[y] yes"), "the prompt is gone:\n{screen}");
    tmux.wait_text("· ready");
    assert_eq!(
        std::fs::read_to_string(workspace.join("note.txt")).expect("the command ran"),
        "made\n"
    );
}

#[test]
fn a_declined_command_does_not_run_and_the_turn_goes_on() {
    let root = scratch("tui-decline");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(
        &home,
        json!([
            {"type": "command", "command": "touch nope.txt"},
            {"type": "message", "deltas": ["Understood."]},
        ]),
        "approval_policy = \"untrusted\"\nsandbox_mode = \"workspace-write\"\n",
    );
    let tmux = Tmux::start(&root, &home, &workspace, &[]);
    tmux.wait_text("· ready");
    tmux.type_text("touch it", true);
    tmux.wait_text("[y] yes");
    tmux.key("n");
    let screen = tmux.wait_text("Understood.");
    assert!(screen.contains("$ touch nope.txt"), "{screen}");
    assert!(screen.contains("└ declined"), "{screen}");
    assert!(!workspace.join("nope.txt").exists());
}

#[test]
fn ctrl_c_interrupts_the_turn_and_a_second_one_exits() {
    let root = scratch("tui-interrupt");
    let (home, workspace) = home_and_workspace(&root);
    let deltas: Vec<String> = (0..200).map(|i| format!("word{i} ")).collect();
    let script = json!({"version": 1, "deltaDelayMs": 100,
        "responses": [{"steps": [{"type": "message", "deltas": deltas}]}]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n",
    )
    .expect("write config");
    let tmux = Tmux::start(&root, &home, &workspace, &[]);
    tmux.wait_text("· ready");
    tmux.type_text("talk for a while", true);
    let screen = tmux.wait_text("word3");
    assert!(screen.contains("· working"), "{screen}");
    assert!(screen.contains("Ctrl-C interrupts"), "{screen}");
    // The turn's elapsed time counts up on the status line while the turn streams.
    tmux.wait_text("· working 2s ·");

    tmux.key("C-c");
    let screen = tmux.wait_text("turn interrupted");
    assert!(
        !screen.contains("word199"),
        "the turn stopped early:\n{screen}"
    );
    tmux.wait_text("· ready");
    assert!(!tmux.exited(), "one Ctrl-C does not exit");

    tmux.key("C-c");
    tmux.wait_for("the client exit", |_| tmux.exited());
}

#[test]
fn slash_commands_start_list_resume_threads_and_pick_a_model() {
    let root = scratch("tui-commands");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(
        &home,
        json!([{"type": "message", "deltas": ["Answer."]}]),
        "",
    );
    let tmux = Tmux::start(&root, &home, &workspace, &[]);
    tmux.wait_text("· ready");
    tmux.type_text("first thread question", true);
    tmux.wait_text("Answer.");
    tmux.wait_text("· ready");
    tmux.type_text("/status", true);
    let first = thread_of(&tmux.wait_text("· thread     "));

    tmux.type_text("/new", true);
    let screen = tmux.wait_text("new thread 0");
    assert!(
        !screen.contains("first thread question"),
        "a new thread starts with an empty transcript:\n{screen}"
    );

    tmux.type_text("/threads", true);
    let screen = tmux.wait_text("first thread question");
    assert!(
        line_with(&screen, &format!("· {first}")).is_some(),
        "/threads lists the first thread by id:\n{screen}"
    );

    tmux.type_text(&format!("/resume {first}"), true);
    let screen = tmux.wait_text(&format!("resumed thread {first}"));
    assert!(screen.contains("› first thread question"), "{screen}");
    assert!(
        screen.contains("Answer."),
        "the history is shown:\n{screen}"
    );

    tmux.type_text("/model", true);
    let screen = tmux.wait_text("(default)");
    assert!(line_with(&screen, "· fixture").is_some(), "{screen}");
    tmux.type_text("/model fixture-alt high", true);
    tmux.wait_text("the next turns use fixture-alt at high effort");
    // The status line follows the server's thread/settings/updated.
    let screen = tmux.wait_text(" fixture-alt · effort high · ready");
    assert!(
        status_line(&screen).trim_start().starts_with("fixture-alt"),
        "{screen}"
    );

    tmux.type_text("/help", true);
    let screen = tmux.wait_text("PageUp / PageDown");
    for needle in [
        "/status",
        "/diff",
        "/approvals",
        "/compact",
        "/review",
        "/init",
        "/mcp",
        "Ctrl-C — interrupt",
        "y / a / n / c",
    ] {
        assert!(screen.contains(needle), "/help lists {needle}:\n{screen}");
    }

    tmux.type_text("/frobnicate", true);
    tmux.wait_text("/frobnicate is not a command");
    tmux.type_text("/quit", true);
    tmux.wait_for("the client exit", |_| tmux.exited());
}

#[test]
fn plain_lines_when_stdout_is_not_a_terminal() {
    let root = scratch("tui-plain");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(
        &home,
        json!([
            {"type": "reasoning", "summary": ["Hmm."], "content": []},
            {"type": "message", "deltas": ["Plain ", "answer."]},
        ]),
        "",
    );
    let output = plain(
        &home,
        &workspace,
        &[],
        "what is it?\n/threads\n/status\n/new\n",
    );
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines[..3],
        ["› what is it?", "thinking: Hmm.", "Plain answer."],
        "{stdout}"
    );
    assert!(
        lines[3].starts_with("· ") && lines[3].ends_with("what is it?"),
        "/threads lists the thread: {stdout}"
    );
    assert!(
        !stdout.contains('\u{1b}'),
        "no escape sequences: {stdout:?}"
    );
    // /status in plain mode: the settings the server reported, and the turn's tokens.
    assert!(stdout.contains("· model      fixture"), "{stdout}");
    assert!(stdout.contains(" in this thread: "), "{stdout}");
    assert!(
        stdout
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("· new thread ")),
        "{stdout}"
    );
}

#[test]
fn remote_servers_over_websocket_and_the_unix_socket() {
    let root = scratch("tui-remote");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(
        &home,
        json!([{"type": "message", "deltas": ["From afar."]}]),
        "",
    );
    let token_file = root.join("token");
    std::fs::write(&token_file, "s3cret\n").expect("write token");
    let server = App::spawn(
        &home,
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth-token-file",
            token_file.to_str().expect("utf-8"),
        ],
    );
    let url = format!("ws://{}", server.listening_addr());
    let client_home = root.join("client-home");
    std::fs::create_dir_all(&client_home).expect("client home");

    let output = plain_env(
        &client_home,
        &workspace,
        &["--remote", &url, "--remote-auth-token-env", "AW_TOKEN"],
        "hello over ws\n",
        &[("AW_TOKEN", "s3cret")],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains("From afar."), "{stdout}");

    let refused = plain_env(
        &client_home,
        &workspace,
        &["--remote", &url, "--remote-auth-token-env", "AW_TOKEN"],
        "hello\n",
        &[("AW_TOKEN", "wrong")],
    );
    assert!(!refused.status.success(), "a wrong token is refused");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("cannot connect to"), "{stderr}");

    let socket = root.join("control.sock");
    let unix_server = App::spawn(
        &home,
        &["--listen", &format!("unix://{}", socket.display())],
    );
    unix_server.wait_for_line("listening");
    let output = plain(
        &client_home,
        &workspace,
        &["--remote", &format!("unix://{}", socket.display())],
        "hello over unix\n",
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains("› hello over unix"), "{stdout}");
    assert!(stdout.contains("From afar."), "{stdout}");
}

#[test]
fn a_remote_token_is_refused_without_remote_or_over_a_clear_text_link() {
    let root = scratch("tui-token-rules");
    let (home, workspace) = home_and_workspace(&root);
    let cases: [(&[&str], &str); 3] = [
        (
            &["--remote-auth-token-env", "AW_TOKEN"],
            "--remote-auth-token-env requires --remote",
        ),
        (
            &[
                "--remote",
                "ws://203.0.113.9:4500",
                "--remote-auth-token-env",
                "AW_TOKEN",
            ],
            "--remote-auth-token-env requires a wss:// URL or a loopback ws:// URL",
        ),
        (
            &[
                "tui",
                "--remote",
                "ws://example.com:4500",
                "--remote-auth-token-env",
                "AW_TOKEN",
            ],
            "--remote-auth-token-env requires a wss:// URL or a loopback ws:// URL",
        ),
    ];
    for (args, reason) in cases {
        let output = plain_env(&home, &workspace, args, "", &[("AW_TOKEN", "s3cret")]);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim(), format!("agentwire: {reason}"), "{args:?}");
    }
}

#[test]
fn launch_flags_set_the_policy_and_status_and_approvals_show_and_change_it() {
    let root = scratch("tui-status");
    let (home, workspace) = home_and_workspace(&root);
    fixture_steps(
        &home,
        json!([
            {"type": "command", "command": "echo changed > policy.txt"},
            {"type": "message", "deltas": ["Policy ", "applied."]},
        ]),
        // The flags win over the configuration.
        "approval_policy = \"untrusted\"\nsandbox_mode = \"workspace-write\"\n",
    );
    let tmux = Tmux::start(
        &root,
        &home,
        &workspace,
        &["--sandbox", "read-only", "--ask-for-approval", "never"],
    );
    tmux.wait_text("· ready");
    tmux.type_text("/status", true);
    let screen = tmux.wait_text("approvals  never");
    let thread = thread_of(&screen);
    for needle in [
        format!("thread     {thread}"),
        "model      fixture (provider fixture)".to_owned(),
        "effort     ".to_owned(),
        format!("cwd        {}", workspace.display()),
        "sandbox    read-only".to_owned(),
        "tokens     none used yet".to_owned(),
    ] {
        assert!(
            screen.contains(&needle),
            "/status shows {needle:?}:\n{screen}"
        );
    }

    tmux.type_text("/approvals", true);
    tmux.wait_text("approvals never · sandbox read-only");
    tmux.type_text("/approvals sometimes", true);
    tmux.wait_text("\"sometimes\" is neither an approval policy");
    tmux.type_text("/approvals untrusted workspace-write", true);
    tmux.wait_text("the next turns use approvals untrusted, sandbox workspace-write");
    tmux.type_text("/status", true);
    tmux.wait_text("sandbox    workspace-write");

    // The server took the change: the next turn asks before the command, which may write.
    tmux.type_text("write the policy file", true);
    tmux.wait_text("[y] yes");
    tmux.key("y");
    tmux.wait_text("Policy applied.");
    tmux.wait_text("· ready");
    assert_eq!(
        std::fs::read_to_string(workspace.join("policy.txt")).expect("the command ran"),
        "changed\n"
    );
    tmux.type_text("/status", true);
    // The new report counts the turn's tokens (the earlier ones on the screen said none).
    let screen = tmux.wait_text(" in this thread: ");
    assert!(line_with(&screen, "· context    ").is_some(), "{screen}");

    // Values are Codex's; others are refused before anything starts.
    let output = plain(&home, &workspace, &["--sandbox", "workspace"], "");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("read-only") && stderr.contains("danger-full-access"),
        "{stderr}"
    );
    // --full-auto and the bypass stand for a pair each, as in `exec`; they take no other.
    for (flag, approvals, sandbox) in [
        ("--full-auto", "on-request", "workspace-write"),
        (
            "--dangerously-bypass-approvals-and-sandbox",
            "never",
            "danger-full-access",
        ),
    ] {
        // After a turn, so /status shows what the server started the thread with.
        let output = plain(&home, &workspace, &[flag], "write it again\n/status\n");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{flag}: {output:?}");
        assert!(stdout.contains("Policy applied."), "{flag}: {stdout}");
        assert!(
            stdout.contains(&format!("· approvals  {approvals}\n")),
            "{flag}: {stdout}"
        );
        assert!(
            stdout.contains(&format!("· sandbox    {sandbox}\n")),
            "{flag}: {stdout}"
        );
        let output = plain(&home, &workspace, &[flag, "-s", "read-only"], "");
        assert_eq!(output.status.code(), Some(2), "{flag} -s: {output:?}");
    }
    let output = plain(&home, &workspace, &["-a", "on-failure", "app-server"], "");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--ask-for-approval applies to"),
        "{output:?}"
    );
}

/// The fixture script of the `/init`, `/diff` and `/compact` test: `/init`'s turn adds an
/// AGENTS.md with a patch, compaction is answered with a summary.
const INIT_SCRIPT: &str = r#"{"version": 1, "responses": [
    {"when": "Repository Guidelines",
     "steps": [{"type": "patch", "patch": "*** Begin Patch\n*** Add File: AGENTS.md\n+# Repository Guidelines\n+Written by the fixture.\n*** End Patch\n"},
               {"type": "message", "deltas": ["Wrote ", "AGENTS.md."]}]},
    {"when": "Summarise the conversation",
     "steps": [{"type": "message", "deltas": ["Summary: ", "AGENTS.md was written."]}]},
    {"steps": [{"type": "message", "deltas": ["Plain answer."]}]}
]}"#;

#[test]
fn init_writes_agents_md_diff_shows_the_turn_diff_and_compact_summarises() {
    let root = scratch("tui-init");
    let (home, workspace) = home_and_workspace(&root);
    std::fs::write(home.join("script.json"), INIT_SCRIPT).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n\
         approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n",
    )
    .expect("write config");
    let tmux = Tmux::start(&root, &home, &workspace, &[]);
    tmux.wait_text("· ready");
    tmux.type_text("/diff", true);
    tmux.wait_text("no turn of this thread has changed files");

    tmux.type_text("/init", true);
    tmux.wait_text("Wrote AGENTS.md.");
    tmux.wait_text("· ready");
    let written = std::fs::read_to_string(workspace.join("AGENTS.md")).expect("AGENTS.md");
    assert!(written.starts_with("# Repository Guidelines"), "{written}");

    tmux.type_text("/diff", true);
    let screen = tmux.wait_text("✎ changes made by turn");
    assert!(screen.contains("+Written by the fixture."), "{screen}");
    assert!(screen.contains("AGENTS.md"), "{screen}");

    tmux.type_text("/init", true);
    tmux.wait_text("AGENTS.md already exists; /init leaves it as it is");

    tmux.type_text("/compact", true);
    tmux.wait_text("compacting the thread…");
    let screen = tmux.wait_text("Summary: AGENTS.md was written.");
    tmux.wait_text("context compacted");
    assert!(!screen.contains("✗"), "no errors:\n{screen}");
    tmux.wait_text("· ready");
}

#[test]
fn review_reviews_uncommitted_changes_and_mcp_lists_the_servers() {
    let root = scratch("tui-review");
    let (home, workspace) = home_and_workspace(&root);
    git(&workspace, &["init", "-q"]);
    std::fs::write(workspace.join("lib.txt"), "one\n").expect("write");
    git(&workspace, &["add", "lib.txt"]);
    git(&workspace, &["commit", "-q", "-m", "first"]);
    std::fs::write(workspace.join("lib.txt"), "one\ntwo-review-marker\n").expect("write");
    let script = json!({"version": 1, "responses": [
        {"when": "two-review-marker",
         "steps": [{"type": "message", "deltas": ["The change ", "looks right."]}]},
        {"steps": [{"type": "message", "deltas": ["Not a review."]}]},
    ]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("write script");
    // Three MCP servers: this binary's own MCP face (two tools), one that cannot start, one
    // switched off.
    let mcp_home = root.join("mcp-home");
    std::fs::create_dir_all(&mcp_home).expect("mcp home");
    let config = format!(
        "model_provider = \"fixture\"\nfixture_script = \"script.json\"\n\
         [mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n\
         [mcp_servers.off]\ncommand = \"/nonexistent/off\"\nenabled = false\n\
         [mcp_servers.self]\ncommand = {:?}\nargs = [\"mcp-server\"]\n\
         env = {{ AGENTWIRE_HOME = {:?} }}\n",
        env!("CARGO_BIN_EXE_agentwire"),
        mcp_home.display().to_string(),
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
    let tmux = Tmux::start(&root, &home, &workspace, &[]);
    tmux.wait_text("· ready");

    tmux.type_text("/review", true);
    tmux.wait_text("reviewing uncommitted changes");
    tmux.wait_text("The change looks right.");
    let screen = tmux.wait_text("review finished");
    assert!(!screen.contains("Not a review."), "{screen}");
    tmux.wait_text("· ready");

    tmux.type_text("/mcp", true);
    let screen = tmux.wait_text("self: connected");
    let self_line = line_with(&screen, "· self:").expect("a line for self");
    assert!(
        self_line.contains("2 tools: codex, codex-reply"),
        "{screen}"
    );
    let broken = line_with(&screen, "· broken:").expect("a line for broken");
    assert!(
        broken.contains("failed") && broken.contains("/nonexistent/mcp-server"),
        "{screen}"
    );
    assert!(line_with(&screen, "· off: disabled").is_some(), "{screen}");
}

fn plain(home: &Path, cwd: &Path, args: &[&str], stdin: &str) -> std::process::Output {
    plain_env(home, cwd, args, stdin, &[])
}

/// Runs the client with pipes (so in plain mode), `stdin` as its input.
fn plain_env(
    home: &Path,
    cwd: &Path,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentwire"));
    command
        .args(args)
        .current_dir(cwd)
        .env("AGENTWIRE_HOME", home)
        .envs(env.iter().copied());
    crate::common::run_fed(command, stdin)
}

#[test]
fn terminal_client_flags_are_refused_with_a_subcommand() {
    let output = crate::common::agentwire(&["--remote", "ws://127.0.0.1:1", "app-server"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--remote applies to the terminal client"),
        "{stderr}"
    );
}
