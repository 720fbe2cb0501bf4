//! The sandbox as an unprivileged user sets it up (inside a user namespace).
//!
//! Every other sandbox test runs as the user the tests run as, root on CI, where `sandbox-exec`
//! creates its namespaces directly. A real user is not root: there `sandbox-exec` creates them
//! inside a user namespace (`engine/tools/src/sandbox/namespaces.rs`). These tests run
//! `agentwire` as uid and gid 65534 (through `setpriv` when the tests run as root; as they are
//! otherwise) and replay the main attacks there, each with the same attack unconfined as a
//! control. The scratch directories are given to that user.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{params, thread_id};
use crate::common::{Killed, fixture_steps, mode, modified, outcome, scratch, text};

/// The unprivileged user (and group) the tests switch to when they run as root.
pub(crate) const USER: u32 = 65534;

/// Whether the tests run as root (then they switch to [`USER`]).
fn root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `program`, to be run as the unprivileged user.
pub(crate) fn as_user(program: impl AsRef<OsStr>) -> Command {
    if root() {
        let mut command = Command::new("setpriv");
        command
            .arg(format!("--reuid={USER}"))
            .arg(format!("--regid={USER}"))
            .arg("--clear-groups")
            .arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// Gives `path`, and everything beneath it, to the unprivileged user.
pub(crate) fn give(path: &Path) {
    if !root() {
        return;
    }
    std::os::unix::fs::lchown(path, Some(USER), Some(USER)).expect("chown");
    if path.is_dir() && !path.is_symlink() {
        for entry in std::fs::read_dir(path).expect("read dir") {
            give(&entry.expect("entry").path());
        }
    }
}

/// `agentwire sandbox-exec --policy POLICY --cwd CWD [--hide PATH]… -- ARGV…` as the
/// unprivileged user.
fn sandbox_exec(policy: &Value, cwd: &Path, hide: &[&Path], argv: &[&str]) -> Output {
    let mut command = as_user(env!("CARGO_BIN_EXE_agentwire"));
    command
        .arg("sandbox-exec")
        .arg("--policy")
        .arg(policy.to_string())
        .arg("--cwd")
        .arg(cwd);
    for path in hide {
        command.arg("--hide").arg(path);
    }
    command
        .arg("--")
        .args(argv)
        .output()
        .expect("spawn agentwire")
}

/// `sh -c SCRIPT` in `cwd` under `policy`, as the unprivileged user: whether it succeeded, and
/// what it printed (stdout, then stderr).
fn confined(policy: &Value, cwd: &Path, script: &str) -> (bool, String) {
    outcome(&sandbox_exec(policy, cwd, &[], &["sh", "-c", script]))
}

/// The same script unconfined, as the same user: the control.
fn unconfined(cwd: &Path, script: &str) -> (bool, String) {
    let output = as_user("sh")
        .args(["-c", script])
        .current_dir(cwd)
        .output()
        .expect("spawn sh");
    outcome(&output)
}

/// `workspace-write` with only the working directory writable: `/tmp` and `$TMPDIR` (where
/// the scratch directories live) excluded.
fn workspace_only() -> Value {
    json!({"type": "workspaceWrite", "excludeSlashTmp": true, "excludeTmpdirEnvVar": true})
}

/// A scratch directory owned by the unprivileged user, once it is known that this user runs
/// as an unprivileged user (no capability) and that the kernel lets it create a user
/// namespace. When the kernel refuses, checks that `sandbox-exec` fails closed (exit 125,
/// nothing run), says so on stderr and returns `None`.
pub(crate) fn unprivileged_scratch(name: &str) -> Option<PathBuf> {
    let dir = scratch(name);
    give(&dir);
    let (ok, who) = unconfined(&dir, "id -u; grep CapEff /proc/self/status");
    assert!(ok, "{who}");
    assert!(
        !who.starts_with("0\n"),
        "the test runs the sandbox as root:\n{who}"
    );
    assert!(
        who.contains("CapEff:\t0000000000000000"),
        "the user keeps capabilities:\n{who}"
    );
    let probe = as_user("unshare")
        .args(["--user", "true"])
        .output()
        .expect("spawn unshare (util-linux)");
    if probe.status.success() {
        return Some(dir);
    }
    // The kernel refuses unprivileged user namespaces: nothing may run unisolated.
    let marker = dir.join("ran");
    let output = sandbox_exec(&workspace_only(), &dir, &[], &["touch", "ran"]);
    assert_eq!(output.status.code(), Some(125), "{:?}", text(&output));
    assert!(!marker.exists(), "the command ran without its namespaces");
    eprintln!(
        "SKIPPED {name}: this kernel refuses unprivileged user namespaces ({}); checked that \
         sandbox-exec runs nothing instead",
        text(&probe).1.trim()
    );
    let _ = std::fs::remove_dir_all(&dir);
    None
}

/// Promise (`docs/sandbox.md`, "What each policy enforces" and "Namespaces"; as a non-root
/// user, inside a user namespace): under `workspace-write` the workspace is writable and
/// nothing beside it; under `read-only` nothing is.
#[test]
fn as_an_unprivileged_user_the_workspace_is_writable_and_nothing_outside() {
    let Some(root) = unprivileged_scratch("unprivileged-write") else {
        return;
    };
    let work = root.join("work");
    let outside = root.join("outside");
    std::fs::create_dir_all(&work).expect("mkdir work");
    std::fs::create_dir_all(&outside).expect("mkdir outside");
    give(&root);
    let leak = outside.join("leak.txt");
    let script = format!(
        "echo in > inside.txt; echo out > {}; echo ran",
        leak.display()
    );

    let (_, out) = confined(&workspace_only(), &work, &script);
    assert!(out.contains("ran"), "the command did not run: {out}");
    assert_eq!(
        std::fs::read_to_string(work.join("inside.txt"))
            .ok()
            .as_deref(),
        Some("in\n"),
        "the workspace is not writable: {out}"
    );
    assert!(!leak.exists(), "written outside the workspace: {out}");

    std::fs::remove_file(work.join("inside.txt")).expect("remove");
    let (_, out) = confined(&json!({"type": "readOnly"}), &work, &script);
    assert!(out.contains("ran"), "the command did not run: {out}");
    assert!(!work.join("inside.txt").exists(), "read-only wrote: {out}");
    assert!(!leak.exists(), "read-only wrote outside: {out}");

    // Unconfined, the same user writes both.
    let (ok, out) = unconfined(&work, &script);
    assert!(ok, "{out}");
    assert!(leak.exists(), "the control did not write outside: {out}");
    let _ = std::fs::remove_dir_all(&root);
}

/// Promise (`docs/sandbox.md`, "Namespaces"; `docs/security.md`, step 3): every mount but the
/// writable roots is made read-only, also inside a user namespace, so what Landlock has no
/// right for (`chmod`, `touch -d`) fails with `EROFS` outside the roots, and works inside.
#[test]
fn as_an_unprivileged_user_metadata_outside_the_roots_cannot_change() {
    use std::os::unix::fs::PermissionsExt;

    let Some(root) = unprivileged_scratch("unprivileged-metadata") else {
        return;
    };
    let work = root.join("work");
    std::fs::create_dir_all(&work).expect("mkdir work");
    let outside = root.join("outside.txt");
    std::fs::write(&outside, "keep me").expect("outside file");
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o644)).expect("mode");
    std::fs::write(work.join("tool.sh"), "echo hi\n").expect("inside file");
    give(&root);
    let before = modified(&outside);
    let script = format!(
        "chmod 600 {out}; touch -d 2000-01-01 {out}; chmod +x tool.sh && echo inside-ok",
        out = outside.display()
    );

    for policy in [workspace_only(), json!({"type": "readOnly"})] {
        let (_, out) = confined(&policy, &work, &script);
        assert_eq!(mode(&outside), 0o644, "{policy}: chmod outside: {out}");
        assert_eq!(modified(&outside), before, "{policy}: touch outside: {out}");
        assert!(
            out.contains("Read-only file system"),
            "{policy}: not refused by a read-only mount: {out}"
        );
        if policy["type"] == json!("workspaceWrite") {
            assert!(out.contains("inside-ok"), "{out}");
            assert_eq!(mode(&work.join("tool.sh")) & 0o111, 0o111, "chmod inside");
        }
    }
    // Unconfined, the same user changes both.
    let (ok, out) = unconfined(&work, &script);
    assert!(ok, "{out}");
    assert_eq!(mode(&outside), 0o600, "{out}");
    assert_ne!(modified(&outside), before, "{out}");
    let _ = std::fs::remove_dir_all(&root);
}

/// Whether `bash` as the unprivileged user, under a read-only policy with `network_access`,
/// opens a TCP connection to a listener of the test on loopback, and whether the listener saw
/// it.
fn connects(root: &Path, network_access: bool) -> (bool, bool, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let policy = json!({"type": "readOnly", "networkAccess": network_access});
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let output = sandbox_exec(&policy, root, &[], &["bash", "-c", &script]);
    listener.set_nonblocking(true).expect("nonblocking");
    let deadline = Instant::now() + Duration::from_secs(2);
    let accepted = loop {
        match listener.accept() {
            Ok(_) => break true,
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => break false,
        }
    };
    let (ok, out) = outcome(&output);
    (ok, accepted, out)
}

/// Promise (`docs/sandbox.md`, "What the network restriction covers"; `docs/security.md`: no
/// TCP anywhere without `networkAccess`, loopback included), for a network namespace made
/// inside a user namespace. With `networkAccess` the same connection is made (the control;
/// it returns as soon as the listener accepts, so no waiting on the refused case but its
/// immediate error).
#[test]
fn as_an_unprivileged_user_there_is_no_network_without_network_access() {
    let Some(root) = unprivileged_scratch("unprivileged-network") else {
        return;
    };
    let (ok, accepted, out) = connects(&root, false);
    assert!(!ok, "connected: {out}");
    assert!(!accepted, "the listener accepted a connection: {out}");
    let (ok, accepted, out) = connects(&root, true);
    assert!(ok && accepted, "the control did not connect: {out}");
    let _ = std::fs::remove_dir_all(&root);
}

const SECRET: &str = "sk-e2e-secret-of-the-unprivileged-server";

/// A server's home under `root` holding `auth.json` with [`SECRET`], and a working directory
/// beside it: the home, the working directory and `auth.json`.
fn home_with_secret(root: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let home = root.join("home");
    let work = root.join("work");
    std::fs::create_dir_all(&home).expect("mkdir home");
    std::fs::create_dir_all(&work).expect("mkdir work");
    let auth = home.join("auth.json");
    std::fs::write(&auth, format!("{{\"OPENAI_API_KEY\":\"{SECRET}\"}}")).expect("auth.json");
    (home, work, auth)
}

/// The control of a test that a confined command cannot read `auth`: unconfined, in `work`,
/// the same user reads [`SECRET`] from it.
fn control_reads_secret(work: &Path, auth: &Path) {
    let (_, out) = unconfined(work, &format!("cat {}", auth.display()));
    assert!(
        out.contains(SECRET),
        "the control did not read auth.json: {out}"
    );
}

/// Promise (`docs/sandbox.md`, "Namespaces": the server's home, passed as `--hide` as the
/// server passes it, is covered by an empty read-only `tmpfs`; `docs/security.md`: a confined
/// command cannot read `auth.json` or `config.toml`), inside a user namespace.
#[test]
fn as_an_unprivileged_user_the_servers_home_is_hidden() {
    let Some(root) = unprivileged_scratch("unprivileged-home") else {
        return;
    };
    let (home, work, auth) = home_with_secret(&root);
    std::fs::write(home.join("config.toml"), "model = \"m\"\n").expect("config.toml");
    give(&root);
    let script = format!(
        "cat {auth}; ls -A {home}; echo > {auth}; echo ran",
        auth = auth.display(),
        home = home.display()
    );

    for policy in [workspace_only(), json!({"type": "readOnly"})] {
        let output = sandbox_exec(&policy, &work, &[&home], &["sh", "-c", &script]);
        let (_, out) = outcome(&output);
        assert!(
            out.contains("ran"),
            "{policy}: the command did not run: {out}"
        );
        assert!(!out.contains(SECRET), "{policy}: read auth.json: {out}");
        assert!(
            !out.contains("config.toml"),
            "{policy}: listed the home: {out}"
        );
        assert!(
            std::fs::read_to_string(&auth).is_ok_and(|text| text.contains(SECRET)),
            "{policy}: auth.json was changed"
        );
    }
    // Unconfined, the same user reads it.
    control_reads_secret(&work, &auth);
    let _ = std::fs::remove_dir_all(&root);
}

/// Promise (`docs/security.md`, the sandbox's `/proc`): entered as an unprivileged user, the
/// sandbox's first process mounts its own `/proc` with the one capability it kept across its
/// `exec` and gives it up before the command runs. The command holds no capability at all (its
/// effective, permitted, inheritable and ambient sets are empty), so it cannot mount, nor
/// unmount what covers the server's home to read `auth.json` beneath.
#[test]
fn as_an_unprivileged_user_the_command_holds_no_capability_and_cannot_uncover_the_home() {
    let Some(root) = unprivileged_scratch("unprivileged-caps") else {
        return;
    };
    let (home, work, auth) = home_with_secret(&root);
    give(&root);
    let script = format!(
        "grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status; \
         umount {home} 2>&1; umount -l {home} 2>&1; mount -t tmpfs none {work} 2>&1; \
         cat {auth} 2>&1; echo ran",
        home = home.display(),
        work = work.display(),
        auth = auth.display()
    );
    for policy in [workspace_only(), json!({"type": "readOnly"})] {
        let output = sandbox_exec(&policy, &work, &[&home], &["sh", "-c", &script]);
        let (_, out) = outcome(&output);
        assert!(
            out.contains("ran"),
            "{policy}: the command did not run: {out}"
        );
        let sets: Vec<&str> = out.lines().filter(|l| l.starts_with("Cap")).collect();
        assert_eq!(sets.len(), 4, "{policy}: {out}");
        for set in sets {
            assert!(
                set.ends_with("0000000000000000"),
                "{policy}: the command holds a capability: {set}"
            );
        }
        assert!(!out.contains(SECRET), "{policy}: read auth.json: {out}");
    }
    // Unconfined, the same user reads it.
    control_reads_secret(&work, &auth);
    let _ = std::fs::remove_dir_all(&root);
}

/// How many processes `/proc` shows, from a line `PROCESSES N` in `out`.
fn processes(out: &str) -> usize {
    out.lines()
        .find_map(|line| line.strip_prefix("PROCESSES "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no process count in: {out}"))
}

/// A script that prints `READ <file>` for each `/proc/<pid>/environ` it can read holding
/// `canary`, then `PROCESSES <how many /proc shows>`.
fn environ_attack(canary: &str) -> String {
    format!(
        "for f in /proc/[0-9]*/environ; do grep -q {canary} \"$f\" 2>/dev/null && echo \"READ $f\"; done; \
         ls -d /proc/[0-9]* | wc -l | sed 's/^/PROCESSES /'"
    )
}

/// The warning `sandbox-exec` prints when it keeps the host's `/proc`.
const HOST_PROC_WARNING: &str = "the command sees the host's processes in /proc";

/// Promise (`docs/sandbox.md`, "Namespaces", PID namespace; `docs/security.md`: a confined
/// command cannot see the server or any host process in `/proc`, its `environ` included) for a
/// process of the same unprivileged user, which the permission checks on
/// `/proc/<pid>/environ` let that user read: the confined command does not read it. If the
/// command sees the host's `/proc` (the documented fallback when the sandbox's own `/proc`
/// cannot be mounted), the warning must say so. Unconfined, the same script reads it.
#[test]
fn as_an_unprivileged_user_a_confined_command_cannot_read_the_users_other_processes_environment() {
    const CANARY: &str = "canary-of-an-unprivileged-process";
    let Some(root) = unprivileged_scratch("unprivileged-environ") else {
        return;
    };
    let victim = Killed(
        as_user("sleep")
            .arg("60")
            .env("AGENTWIRE_E2E_SECRET", CANARY)
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn sleep"),
    );
    let environ = format!("/proc/{}/environ", victim.0.id());
    // `setpriv` executes `sleep`: wait until the process holds the canary.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read(&environ)
        .is_ok_and(|e| e.windows(CANARY.len()).any(|w| w == CANARY.as_bytes()))
    {
        assert!(
            Instant::now() < deadline,
            "the victim never held the canary"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let script = environ_attack(CANARY);

    for policy in [workspace_only(), json!({"type": "readOnly"})] {
        let output = sandbox_exec(&policy, &root, &[], &["sh", "-c", &script]);
        let (stdout, stderr) = text(&output);
        assert!(
            !stdout.contains("READ "),
            "{policy}: read an environment: {stdout}"
        );
        let seen = processes(&stdout);
        assert!(
            seen <= 8 && !stderr.contains(HOST_PROC_WARNING),
            "{policy}: {seen} processes in /proc (the sandbox's own /proc shows only its own): \
             {stderr}"
        );
    }
    // Unconfined, the same user reads it.
    let (_, out) = unconfined(&root, &script);
    assert!(out.contains(&format!("READ {environ}")), "{out}");
    drop(victim);
    let _ = std::fs::remove_dir_all(&root);
}

/// `agentwire app-server` on its stdio, run as the unprivileged user.
struct Server {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
}

impl Server {
    /// Starts the server as the unprivileged user with `home` (and `env`), and completes the
    /// handshake.
    fn start(home: &Path, env: &[(&str, &str)]) -> Self {
        let mut child = as_user(env!("CARGO_BIN_EXE_agentwire"))
            .arg("app-server")
            .envs(env.iter().copied())
            .env("AGENTWIRE_HOME", home)
            .env("HOME", home)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn agentwire app-server");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line).expect("a JSON line");
                if sender.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().expect("stdin is piped");
        let mut server = Self {
            child,
            stdin,
            messages,
            next_id: 0,
        };
        server.call(
            "initialize",
            json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}}),
        );
        server.send(&json!({"method": "initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("serialize");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write to the server");
    }

    /// The next message, within 60 s.
    fn next(&self) -> Value {
        self.messages
            .recv_timeout(Duration::from_secs(60))
            .expect("the server answers within 60 s")
    }

    /// Sends request `method` and returns its result (notifications meanwhile are dropped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"id": id, "method": method, "params": params}));
        loop {
            let message = self.next();
            if message["id"] == id && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// Every message up to and including `turn/completed`.
    fn until_turn_completed(&mut self) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.next();
            let done = message["method"] == json!("turn/completed");
            seen.push(message);
            if done {
                return seen;
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Promise (`docs/security.md`, "What a model-run command can and cannot do": it cannot read
/// `auth.json` under `$AGENTWIRE_HOME`, nor the server's environment), with the server itself
/// run by an unprivileged user, its own home: a turn's confined command reads neither, the
/// same command unconfined (`danger-full-access`) reads both.
#[test]
fn as_an_unprivileged_user_a_turns_confined_command_cannot_read_the_servers_secrets() {
    const CANARY: &str = "canary-of-the-unprivileged-server";
    let Some(root) = unprivileged_scratch("unprivileged-turn") else {
        return;
    };
    let (home, workspace, auth) = home_with_secret(&root);
    let line = format!("cat {}; {}", auth.display(), environ_attack(CANARY));
    fixture_steps(
        &home,
        json!([{"type": "command", "command": line}, {"type": "message", "deltas": ["done"]}]),
        "[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n",
    );
    give(&root);
    // `*SECRET*` names are dropped from commands' environments: only the server has it.
    let mut server = Server::start(&home, &[("AGENTWIRE_E2E_SECRET", CANARY)]);
    let pid = server.child.id();
    let mut run = |sandbox: &str| {
        let started = server.call(
            "thread/start",
            json!({"cwd": workspace, "approvalPolicy": "never", "sandbox": sandbox}),
        );
        let thread = thread_id(&started);
        server.call(
            "turn/start",
            json!({"threadId": thread, "input": [{"type": "text", "text": "attack"}]}),
        );
        let seen = server.until_turn_completed();
        let output: String = params(&seen, "item/completed")
            .iter()
            .filter(|p| p["item"]["type"] == json!("commandExecution"))
            .map(|p| {
                p["item"]["aggregatedOutput"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        assert!(
            output.contains("PROCESSES "),
            "{sandbox}: the command did not run: {output}"
        );
        output
    };
    for sandbox in ["read-only", "workspace-write"] {
        let output = run(sandbox);
        assert!(!output.contains(SECRET), "{sandbox}: read auth.json");
        assert!(
            !output.contains("READ "),
            "{sandbox}: read an environment: {output}"
        );
        let seen = processes(&output);
        assert!(
            seen <= 8 && !output.contains(HOST_PROC_WARNING),
            "{sandbox}: {seen} processes in /proc (the sandbox's own /proc shows only its own)"
        );
    }
    // Unconfined, the same command reads both.
    let output = run("danger-full-access");
    assert!(
        output.contains(SECRET),
        "the control did not read auth.json"
    );
    assert!(
        output.contains(&format!("READ /proc/{pid}/environ")),
        "the control did not read the server's environment: {output}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&root);
}

/// Promise (docs/security.md, A root server; issue 32 finding 8 for any user): as an
/// unprivileged user, the seccomp filter refuses `AF_VSOCK` sockets and setting a clock with
/// `EPERM`, answers `openat2` (whose mode it cannot see) with `ENOSYS`, and `--max-processes 16` stops a command starting 40 processes (`EAGAIN`, fewer
/// than 16 started; `RLIMIT_NPROC`, counted in the sandbox's user namespace). Unconfined, the
/// same user opens the socket, gets `EINVAL` for the monotonic clock, makes a set-user-ID file
/// of its own with `openat2`, and starts all 40.
#[test]
fn as_an_unprivileged_user_the_filter_and_the_limits_hold() {
    use crate::security_root::{PROBES, SPAWN, started};
    let Some(work) = unprivileged_scratch("unprivileged-filter") else {
        return;
    };
    let probes = [
        "/usr/bin/python3",
        "-c",
        PROBES,
        "vsock",
        "clock_settime",
        "unix",
        "openat2-setuid",
    ];
    let output = sandbox_exec(&workspace_only(), &work, &[], &probes);
    let (ok, out) = outcome(&output);
    assert!(ok, "{out}");
    for line in [
        "vsock EPERM",
        "clock_settime EPERM",
        "unix ok",
        "openat2-setuid ENOSYS",
    ] {
        assert!(out.lines().any(|l| l == line), "no `{line}`: {out}");
    }
    let mut command = as_user(env!("CARGO_BIN_EXE_agentwire"));
    command
        .arg("sandbox-exec")
        .arg("--policy")
        .arg(workspace_only().to_string())
        .arg("--cwd")
        .arg(&work)
        .args([
            "--max-processes",
            "16",
            "--",
            "/usr/bin/python3",
            "-c",
            SPAWN,
        ]);
    let (_, out) = outcome(&command.output().expect("spawn agentwire"));
    assert!(
        out.contains("REFUSED EAGAIN") && started(&out) < 16,
        "{out}"
    );
    let control = as_user("/usr/bin/python3")
        .args(["-c", PROBES, "vsock", "clock_settime", "openat2-setuid"])
        .current_dir(&work)
        .output()
        .expect("spawn python3");
    let (_, out) = outcome(&control);
    assert!(
        out.contains("vsock ok")
            && out.contains("clock_settime EINVAL")
            && out.contains("openat2-setuid ok"),
        "control: {out}"
    );
    let control = as_user("/usr/bin/python3")
        .args(["-c", SPAWN])
        .output()
        .expect("spawn python3");
    let (_, out) = outcome(&control);
    assert_eq!(started(&out), 40, "control: {out}");
    let _ = std::fs::remove_dir_all(&work);
}
