//! Helpers shared by the end-to-end tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs the built `agentwire` binary with `args`.
pub fn agentwire(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(args)
        .output()
        .expect("spawn agentwire")
}

/// Runs `command` (the binary with its arguments and environment set) with pipes on every
/// stream, `stdin` written to its input and closed, and waits for it.
pub fn run_fed(mut command: Command, stdin: &str) -> Output {
    use std::io::Write;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentwire");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait for agentwire")
}

/// A fresh, empty temporary directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentwire-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Every file under `dir`, as (relative path, bytes), sorted.
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root").to_owned();
                out.push((rel, std::fs::read(&path).expect("read file")));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Stdout and stderr as text.
pub fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Whether `output`'s command succeeded, and what it printed (stdout, then stderr).
pub fn outcome(output: &Output) -> (bool, String) {
    let (stdout, stderr) = text(output);
    (output.status.success(), format!("{stdout}{stderr}"))
}

/// Runs `argv` in `cwd` with no sandbox at all (the control that shows an attack is real):
/// whether it succeeded, and what it printed.
pub fn unconfined(cwd: &Path, argv: &[&str]) -> (bool, String) {
    let (program, args) = argv.split_first().expect("a command");
    let output = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("spawn {program}: {e}"));
    outcome(&output)
}

/// `path`, a directory created if it is missing: for tests that start threads in a fixed
/// directory (`thread/start` refuses a `cwd` that does not exist).
pub fn existing_dir(path: &str) -> &str {
    std::fs::create_dir_all(path).unwrap_or_else(|e| panic!("create {path}: {e}"));
    path
}

/// `root/home` and `root/workspace`, created.
pub fn home_and_workspace(root: &Path) -> (PathBuf, PathBuf) {
    let home = root.join("home");
    let workspace = root.join("workspace");
    std::fs::create_dir_all(&home).expect("create home");
    std::fs::create_dir_all(&workspace).expect("create workspace");
    (home, workspace)
}

/// Makes `home`'s `config.toml` select the fixture model with a script of one response made of
/// `steps` (see `engine/providers/src/script.rs`), followed by `extra_config` (more TOML).
pub fn fixture_steps(home: &Path, steps: serde_json::Value, extra_config: &str) {
    let script = serde_json::json!({"version": 1, "responses": [{"steps": steps}]});
    std::fs::write(home.join("script.json"), script.to_string()).expect("write script");
    std::fs::write(
        home.join("config.toml"),
        format!("model_provider = \"fixture\"\nfixture_script = \"script.json\"\n{extra_config}"),
    )
    .expect("write config");
}

/// Whether process `pid` runs: it has a `/proc` entry whose state is neither zombie (`Z`) nor
/// dead (`X`). (A process whose parent is gone may stay a zombie until someone reaps it.)
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// A memory figure of process `pid` from `/proc/PID/status`, in KiB: `VmRSS` is resident
/// memory now, `VmHWM` its peak.
pub fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"))
}

/// Sends signal `name` (`TERM`, `INT`, `KILL` …) to process `pid` with `kill`, and fails the
/// test if it cannot.
pub fn signal(pid: u32, name: &str) {
    let sent = Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success(), "kill -{name} {pid} failed");
}

/// The permission bits of the file at `path` (`0o600`, say).
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("metadata of {}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// When the file at `path` was last modified.
pub fn modified(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path)
        .and_then(|meta| meta.modified())
        .unwrap_or_else(|e| panic!("mtime of {}: {e}", path.display()))
}

/// Runs `git args` in `dir` with a fixed identity, `main` as the first branch, no signing and no
/// `GIT_DIR`/`GIT_WORK_TREE` inherited from the caller; it must succeed. Returns its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=e2e",
            "-c",
            "user.email=e2e@example.invalid",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::null())
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A child process killed (and reaped) when dropped: a test's helper server that must not
/// outlive the test, whether it passes or panics.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The entry point of the pinned MCP `server-everything` (tools/mcp-servers).
pub fn server_everything() -> PathBuf {
    let path = repo().join(
        "tools/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(
        path.is_file(),
        "{} is missing: run scripts/install-ci-tools.sh (it installs tools/mcp-servers)",
        path.display()
    );
    path
}

/// `server-everything` over streamable HTTP on a free loopback port, once it listens; the
/// server and its port (its endpoint is `http://127.0.0.1:PORT/mcp`).
pub fn everything_over_http() -> (Killed, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let server = Killed(
        Command::new("node")
            .arg(server_everything())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start server-everything over HTTP"),
    );
    for _ in 0..400 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (server, port);
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("server-everything did not listen on {port}");
}
