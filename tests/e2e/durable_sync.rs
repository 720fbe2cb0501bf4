//! Durability, checked at the system calls. The README promises that the rollout committer makes
//! a turn's records durable with one `write` and one `fdatasync` per rollout per group, and that
//! an item is announced to clients (`item/completed`) only once it is on disk; and that a config
//! write goes through a temporary file, an fsync, a rename and an fsync of the directory. A test
//! that reads the files back cannot tell written from synced (the page cache answers either
//! way), so these run the real server under `strace` and check the order of the calls
//! themselves: without those syncs they fail.
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
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::scratch;

/// How long any single answer or notification, or the exit, may take.
const WAIT: Duration = Duration::from_secs(60);
/// The longest buffer strace prints whole (`-s`): more than any message here.
const STRING_LIMIT: &str = "1048576";
const TRACED_CALLS: &str = "trace=write,fdatasync,fsync,rename,renameat,renameat2";

/// Attacks "an item is announced to clients only once it is on disk" (README, Persistence; the
/// `fdatasync` of `engine/src/threads/committer.rs`): for every item of a turn, the `write` of
/// its record to the rollout, then a sync of the rollout, then the `write` of its
/// `item/completed` to stdout, in that order.
#[test]
fn each_item_is_synced_to_its_rollout_before_it_is_announced() {
    let (dir, home) = traced_home("durable-items");
    let mut server = Traced::start(&dir, &home);
    let thread =
        server.call("thread/start", json!({"cwd": "/tmp/project"}))["result"]["thread"].clone();
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

/// Attacks "the write is atomic (temp file, fsync, rename, fsync of the directory)" (README,
/// Configuration; `engine/src/atomic_file.rs` and `config/edit.rs`): `config/value/write` fills
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
    let rename = trace
        .calls
        .iter()
        .find(|call| {
            call.name.starts_with("rename")
                && call.result == Some(0)
                && call.strings().last().map(Vec::as_slice) == Some(target.as_bytes())
        })
        .unwrap_or_else(|| panic!("{trace}: nothing was renamed onto {target}"));
    let temp = String::from_utf8_lossy(&rename.strings()[0]).into_owned();
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
    let home = home.to_str().expect("UTF-8 path");
    let dir_sync = trace
        .syncs(home)
        .find(|sync| sync.began > rename.ended)
        .unwrap_or_else(|| panic!("{trace}: the directory {home} was not synced after the rename"));
    let answered = trace
        .stdout()
        .into_iter()
        .find(|line| line.json() == answer)
        .unwrap_or_else(|| panic!("{trace}: no write to stdout of {answer}"));
    assert!(
        dir_sync.ended < answered.began,
        "{trace}: the write was answered (line {}) before the directory's sync ended (line {})",
        answered.began + 1,
        dir_sync.ended + 1
    );
    let written = std::fs::read_to_string(target).expect("read config");
    assert!(written.contains("model = \"new-model\""), "{written}");
    let _ = std::fs::remove_dir_all(&dir);
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
/// holds one, the arguments may).
fn split_result(rest: &str) -> (&str, Option<i64>) {
    match rest.rfind(") = ") {
        Some(at) => {
            let result = rest[at + 4..]
                .split(' ')
                .next()
                .and_then(|r| r.parse().ok());
            (&rest[..at], result)
        }
        None => (rest, None),
    }
}
