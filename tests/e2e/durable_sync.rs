//! Durability, checked at the system calls. docs/engine.md promises that the rollout committer makes
//! a turn's records durable with one `write` and one `fdatasync` per rollout per group, and that
//! an item is announced to clients (`item/completed`) only once it is on disk; that a config
//! write, the stored API key (`auth.json`, created private) and `fs/writeFile` go through a
//! temporary file, an fsync, a rename and an fsync of the directory; and docs/thread-surface.md
//! that `thread/delete` makes the removal of the rollout durable before it answers. A test that
//! reads the files back cannot tell written from synced (the page cache answers either way), so
//! these run the real server under `strace` and check the order of the calls themselves:
//! without those syncs they fail.
//!
//! Reading the trace: `strace -f -o FILE` writes one line per event in the order it handles
//! them, and a thread stopped at a system call runs on only once strace has handled the stop, so
//! a call that leads to another (the committer's sync, then the runtime's write to stdout) is
//! printed first. A call cut across by another thread's event takes two lines (`<unfinished
//! ...>`, then `<... NAME resumed>`): each call keeps the line where it began and the one where
//! it ended. `-y` names the file behind each descriptor, so the rollout's syncs are told from
//! the others, and the server's stdout (whatever descriptor it writes through) is told by the
//! inode of the pipe the test reads. Rather than searching single `write`s for an id (a message
//! could share a `write` with another, or be split over two), what each file was sent is put
//! back together from the bytes each `write` wrote (its result) and cut into lines, each line
//! remembering where the `write` that started it began and where the one that finished it
//! ended. `-s` is larger than any buffer here, and a buffer strace abbreviated fails the test.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{existing_dir, scratch};

/// How long any single answer or notification, or the exit, may take.
const WAIT: Duration = Duration::from_secs(60);
/// The longest buffer strace prints whole (`-s`): more than any message here.
const STRING_LIMIT: &str = "1048576";
/// The calls traced: writes and syncs, renames, and how files are created, removed and chmodded.
const TRACED_CALLS: &str = concat!(
    "trace=write,fdatasync,fsync,rename,renameat,renameat2,",
    "openat,unlink,unlinkat,chmod,fchmod,fchmodat"
);

/// Attacks "an item is announced to clients only once it is on disk" (docs/engine.md, Persistence; the
/// `fdatasync` of `engine/store/src/committer.rs`): for every item of a turn, the `write` of
/// its record to the rollout, then a sync of the rollout, then the `write` of its
/// `item/completed` to stdout, in that order.
#[test]
fn each_item_is_synced_to_its_rollout_before_it_is_announced() {
    let (dir, home) = traced_home("durable-items");
    let mut server = Traced::start(&dir, &home);
    let thread =
        server.call("thread/start", json!({"cwd": existing_dir("/tmp/project")}))["result"]["thread"].clone();
    let rollout = thread["path"].as_str().expect("rollout path").to_owned();
    assert!(
        Path::new(&rollout).starts_with(home.join("sessions")),
        "the rollout is under the home's sessions: {rollout}"
    );
    server.call(
        "turn/start",
        json!({"threadId": thread["id"], "input": [{"type": "text", "text": "Say hello."}]}),
    );
    server.wait_for("turn/completed");
    let announced: Vec<Value> = server
        .notifications
        .iter()
        .filter(|n| n["method"] == "item/completed")
        .cloned()
        .collect();
    let trace = server.finish();
    assert!(
        !announced.is_empty(),
        "the turn completed no item: nothing was checked"
    );

    let stdout = trace.stdout();
    let records = trace.lines_written(&rollout);
    for message in &announced {
        let id = &message["params"]["item"]["id"];
        let announcement = stdout
            .iter()
            .find(|line| line.json() == *message)
            .unwrap_or_else(|| panic!("{trace}: no write to stdout of {message}"));
        let record = records
            .iter()
            .find(|line| line.json()["item"]["id"] == *id)
            .unwrap_or_else(|| panic!("{trace}: no write of item {id}'s record to {rollout}"));
        let synced = trace
            .syncs(&rollout)
            .any(|sync| sync.began > record.ended && sync.ended < announcement.began);
        assert!(
            synced,
            "{trace}: item {id} was written to its rollout (line {}) and announced (line {}) \
             with no sync of {rollout} in between",
            record.ended + 1,
            announcement.began + 1
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Attacks "the write is atomic (temp file, fsync, rename, fsync of the directory)" (docs/engine.md,
/// Configuration; `engine/support/src/atomic_file.rs` and `config/edit.rs`): `config/value/write` fills
/// a temporary file, syncs it, renames it over `config.toml`, syncs the directory, and only
/// then answers.
#[test]
fn a_config_write_syncs_the_file_renames_it_then_syncs_the_directory() {
    let (dir, home) = traced_home("durable-config");
    let target = home.join("config.toml");
    std::fs::write(&target, "# kept by hand\nmodel = \"old-model\"\n").expect("write config");
    let mut server = Traced::start(&dir, &home);
    let answer = server.call(
        "config/value/write",
        json!({"keyPath": "model", "value": "new-model", "mergeStrategy": "replace"}),
    );
    assert_eq!(answer["result"]["status"], json!("ok"), "{answer}");
    let trace = server.finish();

    let target = target.to_str().expect("UTF-8 path");
    replaced_in_order(&trace, target, home.to_str().expect("UTF-8 path"), &answer);
    let written = std::fs::read_to_string(target).expect("read config");
    assert!(written.contains("model = \"new-model\""), "{written}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Attacks "`thread/delete` … removes its rollout (live or archived; the directory entry made
/// durable)" (docs/thread-surface.md; `delete` in `engine/store/src/embedded.rs`): for
/// a live rollout and an archived one, the `unlink` of the rollout, then a sync of the
/// directory that held it, then the answer to `thread/delete`, in that order.
#[test]
fn deleting_a_thread_syncs_the_directory_of_its_rollout_before_answering() {
    let (dir, home) = traced_home("durable-delete");
    let mut server = Traced::start(&dir, &home);
    let mut deleted = Vec::new();
    for archive in [false, true] {
        let thread =
            server.call("thread/start", json!({"cwd": existing_dir("/tmp/project")}))["result"]["thread"].clone();
        let id = thread["id"].clone();
        let mut rollout = PathBuf::from(thread["path"].as_str().expect("rollout path"));
        if archive {
            server.call("thread/archive", json!({"threadId": id}));
            let relative = rollout
                .strip_prefix(home.join("sessions"))
                .expect("the rollout is under sessions/")
                .to_owned();
            rollout = home.join("archived_sessions").join(relative);
        }
        assert!(rollout.is_file(), "no rollout at {}", rollout.display());
        let answer = server.call("thread/delete", json!({"threadId": id}));
        assert!(!rollout.exists(), "{} is still there", rollout.display());
        deleted.push((rollout, answer));
    }
    let trace = server.finish();

    for (rollout, answer) in &deleted {
        let rollout = rollout.to_str().expect("UTF-8 path");
        let parent = Path::new(rollout)
            .parent()
            .and_then(Path::to_str)
            .expect("the rollout's directory");
        let removed = trace
            .calls
            .iter()
            .find(|call| {
                matches!(call.name.as_str(), "unlink" | "unlinkat")
                    && call.result == Some(0)
                    && call.paths().first().map(String::as_str) == Some(rollout)
            })
            .unwrap_or_else(|| panic!("{trace}: {rollout} was not unlinked"));
        let answered = trace.answer(answer);
        let synced = trace
            .syncs(parent)
            .any(|sync| sync.began > removed.ended && sync.ended < answered.began);
        assert!(
            synced,
            "{trace}: {rollout} was unlinked (line {}) and its deletion answered (line {}) with \
             no sync of {parent} in between",
            removed.ended + 1,
            answered.began + 1
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Attacks "`auth.json` … created with mode 0600 and replaced atomically (temporary file,
/// fsync, rename)" (docs/providers.md, API keys; docs/engine.md, Accounts: "mode 0600 from creation";
/// `engine/src/accounts/store.rs` and `engine/support/src/atomic_file.rs`): signing in with an API key
/// creates a temporary file with mode 0600 in the `openat` itself (and no later chmod gives it
/// another mode, so the key is never readable more widely), fills it, syncs it, renames it
/// over a world-readable `auth.json`, syncs the home, and only then answers.
#[test]
fn signing_in_creates_a_private_temporary_file_syncs_it_and_renames_it_over_auth_json() {
    const KEY: &str = "sk-durable-0123456789";
    let (dir, home) = traced_home("durable-auth");
    let target = home.join("auth.json");
    std::fs::write(&target, "{\"OPENAI_API_KEY\": \"sk-old\"}\n").expect("write auth.json");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let mut server = Traced::start(&dir, &home);
    let answer = server.call(
        "account/login/start",
        json!({"type": "apiKey", "apiKey": KEY}),
    );
    assert_eq!(answer["result"], json!({"type": "apiKey"}), "{answer}");
    let trace = server.finish();

    let target = target.to_str().expect("UTF-8 path");
    let temp = replaced_in_order(&trace, target, home.to_str().expect("UTF-8 path"), &answer);
    let created = trace
        .calls
        .iter()
        .find(|call| call.name == "openat" && call.paths().first() == Some(&temp))
        .unwrap_or_else(|| panic!("{trace}: no openat of {temp}"));
    let (flags, mode) = created.open_flags_and_mode();
    assert!(
        flags.contains(&"O_CREAT") && flags.contains(&"O_EXCL"),
        "{trace}: {temp} was not created anew (line {}: {flags:?})",
        created.began + 1
    );
    assert_eq!(
        mode.map(|mode| format!("{mode:o}")).as_deref(),
        Some("600"),
        "{trace}: {temp} was created with another mode (line {})",
        created.began + 1
    );
    for chmod in trace.calls.iter().filter(|call| {
        call.name.contains("chmod")
            && (call.fd_path() == Some(&temp) || call.paths().first() == Some(&temp))
    }) {
        let mode = chmod.args.rsplit(", ").next().unwrap_or_default();
        assert_eq!(
            mode,
            "0600",
            "{trace}: {temp} was given another mode (line {})",
            chmod.began + 1
        );
    }
    let metadata = std::fs::metadata(target).expect("stat auth.json");
    assert_eq!(metadata.mode() & 0o777, 0o600, "auth.json is not private");
    let stored: Value =
        serde_json::from_slice(&std::fs::read(target).expect("read auth.json")).expect("JSON");
    assert_eq!(
        stored["OPENAI_API_KEY"],
        json!(KEY),
        "the key was not stored"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Attacks "`fs/writeFile` … a temporary file (`.agentwire-write.*.tmp`) in the same
/// directory, synced, then `renameat` over the name" (docs/fs.md; `replace_at` in
/// `engine/support/src/atomic_file.rs`): the temporary file is filled and synced before the
/// `renameat` over the target, the directory is synced after it, and only then is the write
/// answered.
#[test]
fn fs_write_file_syncs_a_temporary_file_renames_it_over_the_target_then_syncs_the_directory() {
    let (dir, home) = traced_home("durable-fs-write");
    let workspace = dir.join("workspace");
    std::fs::create_dir_all(&workspace).expect("create workspace");
    let target = workspace.join("notes.txt");
    std::fs::write(&target, "old contents\n").expect("write target");
    let mut server = Traced::start(&dir, &home);
    server.call("thread/start", json!({"cwd": workspace}));
    let answer = server.call(
        "fs/writeFile",
        json!({"path": target, "dataBase64": "bmV3IGNvbnRlbnRzCg=="}),
    );
    let trace = server.finish();

    let target = target.to_str().expect("UTF-8 path");
    let temp = replaced_in_order(
        &trace,
        target,
        workspace.to_str().expect("UTF-8 path"),
        &answer,
    );
    let name = Path::new(&temp)
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    assert!(
        name.starts_with(".agentwire-write.") && name.ends_with(".tmp"),
        "{trace}: the temporary file is {temp}"
    );
    assert_eq!(
        std::fs::read_to_string(target).expect("read target"),
        "new contents\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Checks, in `trace`, that `target` was replaced atomically and durably before `answer` was
/// written to stdout: a temporary file written, then synced (its sync ended before the rename
/// began), renamed onto `target`, then the directory `dir` synced (ended before the answer
/// began). Returns the temporary file's path.
fn replaced_in_order(trace: &Trace, target: &str, dir: &str, answer: &Value) -> String {
    let rename = trace
        .calls
        .iter()
        .find(|call| {
            call.name.starts_with("rename")
                && call.result == Some(0)
                && call.paths().last().map(String::as_str) == Some(target)
        })
        .unwrap_or_else(|| panic!("{trace}: nothing was renamed onto {target}"));
    let temp = rename.paths()[0].clone();
    let filled = trace
        .writes(&temp)
        .map(|call| call.ended)
        .max()
        .unwrap_or_else(|| panic!("{trace}: the temporary file {temp} was not written"));
    let file_sync = trace
        .syncs(&temp)
        .find(|sync| sync.began > filled)
        .unwrap_or_else(|| panic!("{trace}: {temp} was not synced after it was written"));
    assert!(
        file_sync.ended < rename.began,
        "{trace}: {temp} was renamed (line {}) before its sync ended (line {})",
        rename.began + 1,
        file_sync.ended + 1
    );
    let dir_sync = trace
        .syncs(dir)
        .find(|sync| sync.began > rename.ended)
        .unwrap_or_else(|| panic!("{trace}: the directory {dir} was not synced after the rename"));
    let answered = trace.answer(answer);
    assert!(
        dir_sync.ended < answered.began,
        "{trace}: the write was answered (line {}) before the directory's sync ended (line {})",
        answered.began + 1,
        dir_sync.ended + 1
    );
    temp
}

/// A scratch directory and the home in it, both by their canonical paths (the paths `-y` prints).
fn traced_home(name: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(name).canonicalize().expect("canonical scratch dir");
    let home = dir.join("home");
    std::fs::create_dir_all(&home).expect("create home");
    (dir, home)
}

/// `agentwire app-server` on a home, run by `strace` and driven over its stdio.
struct Traced {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// How `-y` names the pipe the test reads the server's stdout from.
    stdout_pipe: String,
    trace: PathBuf,
    log: PathBuf,
    next_id: i64,
    /// Every notification received, in order.
    notifications: Vec<Value>,
}

impl Traced {
    /// Starts the server under strace (tracing into `dir`) and completes the handshake. Fails,
    /// never skips, when strace is missing.
    fn start(dir: &Path, home: &Path) -> Self {
        let strace_runs = Command::new("strace")
            .arg("-V")
            .output()
            .is_ok_and(|output| output.status.success());
        assert!(
            strace_runs,
            "strace is not installed: run scripts/install-ci-tools.sh, which installs the pinned strace these tests need"
        );
        let trace = dir.join("strace.txt");
        let log = dir.join("stderr.txt");
        let mut child = Command::new("strace")
            .args(["-f", "-y", "-s", STRING_LIMIT, "-e", TRACED_CALLS, "-o"])
            .arg(&trace)
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_agentwire"))
            .arg("app-server")
            .env("AGENTWIRE_HOME", home)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(&log).expect("create the log"))
            .spawn()
            .expect("spawn strace");
        let stdout = child.stdout.take().expect("stdout is piped");
        let pipe = stdout.as_fd().try_clone_to_owned().expect("dup stdout");
        let inode = File::from(pipe).metadata().expect("fstat stdout").ino();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Self {
            stdin: child.stdin.take(),
            child,
            lines,
            stdout_pipe: format!("pipe:[{inode}]"),
            trace,
            log,
            next_id: 0,
            notifications: Vec::new(),
        };
        server.call(
            "initialize",
            json!({"clientInfo": {"name": "e2e", "version": "0.0.1"}}),
        );
        server.send(&json!({"method": "initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .expect("write to the server");
    }

    /// Sends a request and returns its answer, which must not be an error; notifications that
    /// arrive meanwhile are kept.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"id": id, "method": method, "params": params}));
        loop {
            let message = self.next(method);
            if message["id"] == id && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "{method} failed: {message}");
                return message;
            }
            self.notifications.push(message);
        }
    }

    /// Waits for notification `method` (kept with the others).
    fn wait_for(&mut self, method: &str) {
        while self.next_notification(method)["method"] != method {}
    }

    fn next_notification(&mut self, waiting_for: &str) -> &Value {
        let message = self.next(waiting_for);
        self.notifications.push(message);
        self.notifications.last().expect("just pushed")
    }

    fn next(&mut self, waiting_for: &str) -> Value {
        let line = self.lines.recv_timeout(WAIT).unwrap_or_else(|_| {
            panic!(
                "nothing from the server while waiting for {waiting_for}\nlog:\n{}",
                self.log()
            )
        });
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the server wrote a non-JSON line ({e}): {line}"))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Closes stdin, waits for the server (and so strace) to exit, and reads the trace.
    fn finish(mut self) -> Trace {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        let status = loop {
            match self.child.try_wait().expect("poll strace") {
                Some(status) => break status,
                None if Instant::now() > deadline => panic!("the server did not exit"),
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        assert!(
            status.success(),
            "the server exited with {status}\nlog:\n{}",
            self.log()
        );
        let text = std::fs::read_to_string(&self.trace).expect("read the trace");
        Trace {
            calls: parse(&text),
            stdout_pipe: self.stdout_pipe.clone(),
            file: self.trace.clone(),
        }
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The system calls of a finished trace, ordered by where they began.
struct Trace {
    calls: Vec<Call>,
    stdout_pipe: String,
    file: PathBuf,
}

impl std::fmt::Display for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "trace {}", self.file.display())
    }
}

impl Trace {
    /// The successful `write`s to the file `path` names.
    fn writes<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a Call> {
        self.calls
            .iter()
            .filter(move |call| call.name == "write" && call.fd_path() == Some(path))
    }

    /// The successful `fsync`s and `fdatasync`s of the file `path` names.
    fn syncs<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a Call> {
        self.calls.iter().filter(move |call| {
            matches!(call.name.as_str(), "fsync" | "fdatasync")
                && call.result == Some(0)
                && call.fd_path() == Some(path)
        })
    }

    /// The line of stdout that wrote `answer`.
    fn answer(&self, answer: &Value) -> Line {
        self.stdout()
            .into_iter()
            .find(|line| line.json() == *answer)
            .unwrap_or_else(|| panic!("{self}: no write to stdout of {answer}"))
    }

    /// What the server wrote to its stdout, in lines.
    fn stdout(&self) -> Vec<Line> {
        self.lines_written(&self.stdout_pipe)
    }

    /// What was written to the file `path` names, put back together from the bytes each
    /// `write` wrote, in lines.
    fn lines_written(&self, path: &str) -> Vec<Line> {
        let mut lines = Vec::new();
        let mut text = Vec::new();
        let mut began = None;
        for call in self.writes(path) {
            let Some(written) = call.result.and_then(|n| usize::try_from(n).ok()) else {
                continue;
            };
            let buffer = call.strings().into_iter().next().unwrap_or_default();
            assert!(
                buffer.len() >= written,
                "{self}: strace abbreviated the write of line {}: raise its -s",
                call.began + 1
            );
            for &byte in &buffer[..written] {
                let start = *began.get_or_insert(call.began);
                if byte == b'\n' {
                    let text = String::from_utf8_lossy(&std::mem::take(&mut text)).into_owned();
                    lines.push(Line {
                        text,
                        began: start,
                        ended: call.ended,
                    });
                    began = None;
                } else {
                    text.push(byte);
                }
            }
        }
        lines
    }
}

/// One system call: its name, its arguments as strace printed them, its result, and the trace
/// lines (from 0) where it began and ended.
struct Call {
    name: String,
    args: String,
    result: Option<i64>,
    began: usize,
    ended: usize,
}

impl Call {
    /// The path `-y` gives for the descriptor in the first argument (`17</a/b.jsonl>`).
    fn fd_path(&self) -> Option<&str> {
        let (_, rest) = self.args.split_once('<')?;
        let end = rest.find(">, ").or_else(|| rest.rfind('>'))?;
        Some(&rest[..end])
    }

    /// The paths among the arguments: each quoted argument, joined to the directory `-y` gives
    /// for the first descriptor when it is relative (`openat(5</ws>, "a.tmp", …)`,
    /// `renameat(5</ws>, "a.tmp", 5</ws>, "a")`: the calls here name one directory). Empty
    /// for a path that is not UTF-8.
    fn paths(&self) -> Vec<String> {
        let dir = self.fd_path().unwrap_or_default();
        self.strings()
            .into_iter()
            .map(|bytes| {
                let path = String::from_utf8(bytes).unwrap_or_default();
                if path.starts_with('/') || path.is_empty() {
                    path
                } else {
                    format!("{dir}/{path}")
                }
            })
            .collect()
    }

    /// The flags and the mode (octal) of an `openat`: what follows its path.
    fn open_flags_and_mode(&self) -> (Vec<&str>, Option<u32>) {
        let rest = self
            .args
            .rfind('"')
            .map(|at| &self.args[at + 1..])
            .unwrap_or_default();
        let mut parts = rest.trim_start_matches(", ").split(", ");
        let flags = parts.next().unwrap_or_default().split('|').collect();
        let mode = parts
            .next()
            .and_then(|mode| u32::from_str_radix(mode.trim(), 8).ok());
        (flags, mode)
    }

    /// The quoted arguments, strace's escapes undone.
    fn strings(&self) -> Vec<Vec<u8>> {
        let mut found = Vec::new();
        let mut chars = self.args.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '"' {
                continue;
            }
            let mut bytes = Vec::new();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => match chars.next() {
                        Some('n') => bytes.push(b'\n'),
                        Some('t') => bytes.push(b'\t'),
                        Some('r') => bytes.push(b'\r'),
                        Some('v') => bytes.push(0x0b),
                        Some('f') => bytes.push(0x0c),
                        Some('x') => {
                            let hex: String = chars.by_ref().take(2).collect();
                            bytes.push(u8::from_str_radix(&hex, 16).unwrap_or_default());
                        }
                        // Up to three octal digits (strace writes three when a digit follows).
                        Some(digit @ '0'..='7') => {
                            let mut value = digit.to_digit(8).unwrap_or_default();
                            for _ in 0..2 {
                                let Some(next) = chars.peek().and_then(|c| c.to_digit(8)) else {
                                    break;
                                };
                                value = value * 8 + next;
                                chars.next();
                            }
                            bytes.push(value as u8);
                        }
                        Some(other) => push_char(&mut bytes, other),
                        None => break,
                    },
                    other => push_char(&mut bytes, other),
                }
            }
            found.push(bytes);
        }
        found
    }
}

fn push_char(bytes: &mut Vec<u8>, c: char) {
    bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
}

/// One line of what was written to a file, with where the `write` that started it began and
/// where the one that finished it ended.
struct Line {
    text: String,
    began: usize,
    ended: usize,
}

impl Line {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
}

/// The calls of a trace written by `strace -f -o` (`PID NAME(ARGS) = RESULT`, or the same call
/// in an `<unfinished ...>` line and a `<... NAME resumed>` line), ordered by where they began.
fn parse(text: &str) -> Vec<Call> {
    let mut calls = Vec::new();
    let mut unfinished: HashMap<&str, Call> = HashMap::new();
    for (at, line) in text.lines().enumerate() {
        let Some((pid, event)) = line.split_once(' ') else {
            continue;
        };
        let event = event.trim_start();
        if event.starts_with("+++") || event.starts_with("---") {
            continue;
        }
        if let Some(entry) = event.strip_suffix(" <unfinished ...>") {
            if let Some((name, args)) = entry.split_once('(') {
                let call = Call {
                    name: name.to_owned(),
                    args: args.to_owned(),
                    result: None,
                    began: at,
                    ended: at,
                };
                unfinished.insert(pid, call);
            }
        } else if let Some(resumed) = event.strip_prefix("<... ") {
            if let (Some(mut call), Some((_, tail))) =
                (unfinished.remove(pid), resumed.split_once(" resumed>"))
            {
                let (args, result) = split_result(tail);
                call.args.push_str(args);
                call.result = result;
                call.ended = at;
                calls.push(call);
            }
        } else if let Some((name, rest)) = event.split_once('(') {
            let (args, result) = split_result(rest);
            calls.push(Call {
                name: name.to_owned(),
                args: args.to_owned(),
                result,
                began: at,
                ended: at,
            });
        }
    }
    calls.sort_by_key(|call| call.began);
    calls
}

/// Splits `ARGS) = RESULT ...` (the last `) = ` is the real one: what follows the result never
/// holds one, the arguments may). strace pads a short call with spaces to align its result
/// (`fsync(3</a>)          = 0`, `<... write resumed>)   = 21`), so the `)` is the last one
/// before that `= `. A descriptor returned is a number `-y` follows with its path (`7</a/b>`):
/// the number is the result.
fn split_result(rest: &str) -> (&str, Option<i64>) {
    let mut end = rest.len();
    while let Some(at) = rest[..end].rfind(" = ") {
        if let Some(args) = rest[..at].trim_end_matches(' ').strip_suffix(')') {
            let result = rest[at + 3..]
                .split([' ', '<'])
                .next()
                .and_then(|r| r.parse().ok());
            return (args, result);
        }
        end = at;
    }
    (rest, None)
}
