//! `agentwire app-server` over real stdio pipes: handshake errors, garbage, exit status, a
//! stdout that carries protocol JSON only, and the logs on stderr.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::Client;
use crate::common::scratch;

/// What one run of the server wrote.
struct Run {
    status: ExitStatus,
    stdout: Vec<Value>,
    stderr: String,
}

fn drain(mut from: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        bytes
    })
}

/// Runs `agentwire app-server` with `input` on stdin (then end of file) and `env` on top of a
/// cleaned environment; fails the test if it does not exit within a minute.
fn serve(home: &Path, input: &[u8], env: &[(&str, &str)]) -> Run {
    serve_with(home, &[], input, env)
}

/// [`serve`] with more `app-server` arguments.
fn serve_with(home: &Path, args: &[&str], input: &[u8], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentwire"));
    command
        .arg("app-server")
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("LOG_FORMAT")
        .env("AGENTWIRE_HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("spawn agentwire app-server");
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
        // Dropping stdin closes it: end of input.
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll the server") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("agentwire app-server did not exit after end of input");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    writer.join().expect("writer thread");
    let stdout = stdout.join().expect("stdout reader");
    let stderr = String::from_utf8_lossy(&stderr.join().expect("stderr reader")).into_owned();
    let stdout = stdout
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            serde_json::from_slice(line).unwrap_or_else(|e| {
                panic!(
                    "stdout line is not JSON ({e}): {:?}\nstderr:\n{stderr}",
                    String::from_utf8_lossy(line)
                )
            })
        })
        .collect();
    Run {
        status,
        stdout,
        stderr,
    }
}

fn lines(messages: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for message in messages {
        out.extend_from_slice(message.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

fn initialize(id: i64) -> Value {
    json!({
        "id": id,
        "method": "initialize",
        "params": { "clientInfo": { "name": "e2e_client", "version": "0.0.1" } },
    })
}

fn answer<'a>(run: &'a Run, id: &Value) -> &'a Value {
    let found: Vec<&Value> = run
        .stdout
        .iter()
        .filter(|m| m.get("id") == Some(id))
        .collect();
    assert_eq!(found.len(), 1, "one answer to {id}: {:?}", run.stdout);
    found[0]
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "id": id, "error": { "code": code, "message": message } })
}

#[test]
fn handshake_errors_garbage_and_exit_on_end_of_input() {
    let home = scratch("stdio-handshake");
    let mut input = lines(&[json!({ "id": 1, "method": "thread/list", "params": {} })]);
    input.extend_from_slice(b"\x00\xff this is not json\n");
    input.extend_from_slice(b"{\"id\":2,\"method\":\"initialize\",\"params\":{\"clientInfo\":\n");
    input.extend_from_slice(b"[1,2]\n\n   \n");
    input.extend_from_slice(&lines(&[
        initialize(3),
        initialize(4),
        json!({ "method": "initialized" }),
        json!({ "id": "five", "method": "no/such" }),
        json!({ "id": 6, "method": "thread/read", "params": { "threadId": 1 } }),
        json!({ "jsonrpc": "2.0", "id": 7, "method": "thread/list", "params": {} }),
    ]));
    // A last line without a newline is still read.
    input.extend_from_slice(b"{\"id\":8,\"method\":\"no/such\"}");
    let run = serve(&home, &input, &[]);
    assert_eq!(run.status.code(), Some(0), "stderr:\n{}", run.stderr);

    assert_eq!(
        *answer(&run, &json!(1)),
        error(json!(1), -32600, "Not initialized")
    );
    let unknown: Vec<&Value> = run.stdout.iter().filter(|m| m["id"].is_null()).collect();
    assert_eq!(unknown.len(), 3, "{:?}", run.stdout);
    assert_eq!(unknown[0]["error"]["code"], json!(-32700));
    assert_eq!(unknown[1]["error"]["code"], json!(-32700));
    assert_eq!(
        *unknown[2],
        error(
            Value::Null,
            -32600,
            "Invalid request: expected a JSON object"
        )
    );

    let init = answer(&run, &json!(3));
    let result = &init["result"];
    assert_eq!(result["codexHome"], json!(home.to_string_lossy()));
    assert_eq!(result["platformFamily"], json!(std::env::consts::FAMILY));
    assert_eq!(result["platformOs"], json!(std::env::consts::OS));
    let user_agent = result["userAgent"].as_str().expect("userAgent");
    assert!(user_agent.starts_with("e2e_client/"), "{user_agent}");
    assert!(user_agent.ends_with("(e2e_client; 0.0.1)"), "{user_agent}");
    assert_eq!(
        *answer(&run, &json!(4)),
        error(json!(4), -32600, "Already initialized")
    );
    assert_eq!(
        *answer(&run, &json!("five")),
        error(json!("five"), -32601, "Method not found: no/such")
    );
    let invalid = answer(&run, &json!(6));
    assert_eq!(invalid["error"]["code"], json!(-32602), "{invalid}");
    assert_eq!(
        invalid["error"]["data"]["errors"][0]["pointer"],
        json!("/threadId")
    );
    let list = answer(&run, &json!(7));
    assert!(list["result"]["data"].is_array(), "{list}");
    assert!(list.get("jsonrpc").is_none(), "{list}");
    assert_eq!(
        *answer(&run, &json!(8)),
        error(json!(8), -32601, "Method not found: no/such")
    );
    // Nothing but the answers and (possibly) notifications.
    let answers = run
        .stdout
        .iter()
        .filter(|m| m.get("method").is_none())
        .count();
    assert_eq!(answers, 10, "{:?}", run.stdout);
}

#[test]
fn empty_input_exits_cleanly() {
    let home = scratch("stdio-empty");
    let run = serve(&home, b"", &[]);
    assert_eq!(run.status.code(), Some(0), "stderr:\n{}", run.stderr);
    assert_eq!(run.stdout, Vec::<Value>::new());
}

fn session() -> Vec<u8> {
    lines(&[
        initialize(1),
        json!({ "method": "initialized" }),
        json!({ "id": 2, "method": "thread/list", "params": {} }),
    ])
}

#[test]
fn logs_go_to_stderr_with_one_open_and_one_close() {
    let home = scratch("stdio-logs");
    let run = serve(&home, &session(), &[]);
    assert_eq!(run.status.code(), Some(0), "stderr:\n{}", run.stderr);
    assert_eq!(run.stdout.len(), 2, "{:?}", run.stdout);
    let opened: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("connection opened"))
        .collect();
    let closed: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("connection closed"))
        .collect();
    assert_eq!(opened.len(), 1, "stderr:\n{}", run.stderr);
    assert_eq!(closed.len(), 1, "stderr:\n{}", run.stderr);
    assert!(opened[0].contains("INFO"), "{}", opened[0]);
    assert!(opened[0].contains("transport=\"stdio\""), "{}", opened[0]);
    assert!(
        closed[0].contains("reason=\"end of input\""),
        "{}",
        closed[0]
    );
}

#[test]
fn log_format_json_writes_json_lines() {
    let home = scratch("stdio-json-logs");
    let run = serve(&home, &session(), &[("LOG_FORMAT", "json")]);
    assert_eq!(run.status.code(), Some(0), "stderr:\n{}", run.stderr);
    let logs: Vec<Value> = run
        .stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let messages: Vec<&Value> = logs.iter().map(|l| &l["fields"]["message"]).collect();
    assert_eq!(
        messages
            .iter()
            .filter(|m| **m == "connection opened")
            .count(),
        1,
        "{logs:?}"
    );
    let closed: Vec<&Value> = logs
        .iter()
        .filter(|l| l["fields"]["message"] == "connection closed")
        .collect();
    assert_eq!(closed.len(), 1, "{logs:?}");
    assert_eq!(closed[0]["fields"]["reason"], json!("end of input"));
    assert_eq!(closed[0]["level"], json!("INFO"));
}

#[test]
fn rust_log_warn_silences_info() {
    let home = scratch("stdio-warn-logs");
    let run = serve(&home, &session(), &[("RUST_LOG", "warn")]);
    assert_eq!(run.status.code(), Some(0), "stderr:\n{}", run.stderr);
    assert_eq!(run.stdout.len(), 2, "{:?}", run.stdout);
    assert!(
        !run.stderr.contains("INFO") && !run.stderr.contains("connection opened"),
        "stderr:\n{}",
        run.stderr
    );
}

/// CPU time the process has used so far, in clock ticks (user + system, from /proc).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc/PID/stat");
    // The fields after the command name, which is in parentheses and may hold spaces.
    let after_name = &stat[stat.rfind(')').expect("a command name") + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    // utime and stime: fields 14 and 15 of the whole line, 12 and 13 after the name.
    let ticks = |index: usize| -> u64 { fields[index].parse().expect("a tick count") };
    ticks(11) + ticks(12)
}

/// After answering a client that keeps up, the server looks for its next message for a while
/// instead of sleeping (`--stdin-busy-poll-us`); once the client goes quiet it must stop
/// looking and sleep. Here the window is 300 ms, long enough to see in the CPU time.
#[test]
fn polling_for_input_stops_when_the_client_goes_quiet() {
    let home = scratch("busy-poll");
    let mut client = Client::start_with(&home, &["--stdin-busy-poll-us", "300000"]);
    let pid = client.pid();
    // A lockstep exchange: each request follows the last answer at once.
    for _ in 0..20 {
        client.call("thread/loaded/list", json!({}));
    }
    let start = cpu_ticks(pid);
    std::thread::sleep(Duration::from_millis(250));
    let polling = cpu_ticks(pid) - start;
    // Past the window: asleep.
    std::thread::sleep(Duration::from_millis(350));
    let quiet = cpu_ticks(pid);
    std::thread::sleep(Duration::from_millis(1000));
    let asleep = cpu_ticks(pid) - quiet;
    assert!(
        polling >= 2,
        "the server did not poll after answering: {polling} ticks of CPU in 250 ms"
    );
    assert!(
        asleep <= 5,
        "the server kept using CPU with no client traffic: {asleep} ticks in 1 s"
    );
    client.stop();
}

#[test]
fn a_value_past_its_type_range_is_rejected_with_its_pointer() {
    // The schema says "integer"; the Rust type is a u32. The refusal must look like any other
    // -32602: `data.errors[]` naming the member.
    let home = scratch("stdio-range");
    let input = lines(&[
        initialize(1),
        json!({"id": 2, "method": "thread/list", "params": {"limit": 99_999_999_999_999_u64}}),
    ]);
    let run = serve(&home, &input, &[]);
    assert!(run.status.success());
    let refused = &answer(&run, &json!(2))["error"];
    assert_eq!(refused["code"], json!(-32602), "{refused}");
    assert_eq!(refused["data"]["method"], json!("thread/list"), "{refused}");
    assert_eq!(
        refused["data"]["errors"][0]["pointer"],
        json!("/limit"),
        "{refused}"
    );
    assert!(
        refused["message"]
            .as_str()
            .expect("message")
            .contains("/limit"),
        "{refused}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// A `thread/list` request `id` padded with spaces to exactly `bytes` bytes.
fn padded_list(id: i64, bytes: usize) -> String {
    let mut line = json!({"id": id, "method": "thread/list", "params": {}}).to_string();
    line.push_str(&" ".repeat(bytes - line.len()));
    line
}

/// A line over the message limit gets -32600 naming its size and the limit, and the next line
/// is served: at `--max-message-bytes`, and at the 64 MiB docs/app-server.md gives as the default.
#[test]
fn a_line_over_the_message_limit_is_refused_and_the_next_is_served() {
    for (args, limit) in [
        (&["--max-message-bytes", "1024"][..], 1024),
        (&[][..], 64 * 1024 * 1024),
    ] {
        let home = scratch("stdio-message-limit");
        let mut input = lines(&[initialize(1)]);
        for line in [padded_list(2, limit), padded_list(3, limit + 1)] {
            input.extend_from_slice(line.as_bytes());
            input.push(b'\n');
        }
        input.extend_from_slice(&lines(&[
            json!({"id": 4, "method": "thread/list", "params": {}}),
        ]));
        let run = serve_with(&home, args, &input, &[]);
        assert!(run.status.success(), "{:?}\n{}", run.status, run.stderr);
        assert!(
            answer(&run, &json!(2)).get("result").is_some(),
            "exactly the limit is served"
        );
        let refused = answer(&run, &Value::Null);
        assert_eq!(
            refused,
            &error(
                Value::Null,
                -32600,
                &format!(
                    "Message of {} bytes exceeds the limit of {limit} bytes",
                    limit + 1
                )
            )
        );
        assert!(run.stdout.iter().all(|m| m.get("id") != Some(&json!(3))));
        assert!(
            answer(&run, &json!(4)).get("result").is_some(),
            "the next line is served"
        );
        let _ = std::fs::remove_dir_all(&home);
    }
}

/// docs/security.md ("Malformed input gets an error, never a crash"): over-deep nesting is
/// refused, through the binary. A line of 1,000,000 `[`, the same depth closed again (valid
/// JSON) as a whole message, and a `thread/start` whose `config` holds 100,000 nested arrays
/// each get -32700 (`id: null`) naming the depth; `thread/start` with a `config` nested 100
/// deep (under the parser's limit) is served, and so is the request after each refusal. The
/// server exits 0 at end of input.
#[test]
fn over_deep_nesting_is_refused_and_the_next_request_is_served() {
    let home = scratch("stdio-deep-nesting");
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let list = |id: i64| json!({"id": id, "method": "thread/list", "params": {}});
    let mut input = lines(&[initialize(1)]);
    let deep_lines = [
        "[".repeat(1_000_000),
        nested(1_000_000),
        format!(
            r#"{{"id":3,"method":"thread/start","params":{{"config":{{"deep":{}}}}}}}"#,
            nested(100_000)
        ),
    ];
    for (at, line) in deep_lines.iter().enumerate() {
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
        input.extend_from_slice(&lines(&[list(10 + at as i64)]));
    }
    input.extend_from_slice(
        format!(
            r#"{{"id":4,"method":"thread/start","params":{{"config":{{"deep":{}}}}}}}"#,
            nested(100)
        )
        .as_bytes(),
    );
    input.push(b'\n');
    input.extend_from_slice(&lines(&[list(20)]));
    let run = serve(&home, &input, &[]);
    assert_eq!(run.status.code(), Some(0), "stderr:\n{}", run.stderr);

    let refused: Vec<&Value> = run
        .stdout
        .iter()
        .filter(|m| m.get("id") == Some(&Value::Null))
        .collect();
    assert_eq!(refused.len(), 3, "one refusal per deep line");
    for error in refused {
        assert_eq!(error["error"]["code"], json!(-32700), "{error}");
        let message = error["error"]["message"].as_str().expect("a message");
        assert!(message.contains("recursion limit"), "{message}");
    }
    assert!(run.stdout.iter().all(|m| m["id"] != json!(3)));
    for id in [10, 11, 12, 20] {
        let served = answer(&run, &json!(id));
        assert!(served["result"]["data"].is_array(), "{served}");
    }
    let started = answer(&run, &json!(4));
    assert!(started["result"]["thread"]["id"].is_string(), "{started}");
    let _ = std::fs::remove_dir_all(&home);
}

/// docs/app-server.md: "Requests naming the same `threadId` run in arrival order", through the
/// binary over stdio. Forty `thread/name/set` requests, each followed by a `thread/read` of
/// the same thread, are written at once without waiting: every read sees the name set just
/// before it, the answers come in the order the requests were sent, and the
/// `thread/name/updated` notifications in the order of the names (though not necessarily
/// before the answers to later requests).
#[test]
fn requests_on_one_thread_pipelined_without_waiting_take_effect_in_arrival_order() {
    const PAIRS: usize = 40;
    let home = scratch("stdio-thread-order");
    let mut client = Client::start(&home);
    let started = client.start_thread(json!({}));
    let thread = started["thread"]["id"]
        .as_str()
        .expect("thread id")
        .to_owned();
    let mut sent = Vec::new();
    for at in 0..PAIRS {
        let name = format!("name {at}");
        let set = client.send_request("thread/name/set", json!({"threadId": thread, "name": name}));
        let read = client.send_request("thread/read", json!({"threadId": thread}));
        sent.push((set, read, name));
    }
    // The last request on the thread answers after every earlier one: all of them are in the
    // backlog then, in the order they were written.
    let last = client.call("thread/read", json!({"threadId": thread}));
    assert_eq!(last["thread"]["name"], json!(format!("name {}", PAIRS - 1)));
    let backlog = client.backlog();
    let answered: Vec<&Value> = backlog
        .iter()
        .filter(|m| m.get("method").is_none())
        .map(|m| &m["id"])
        .collect();
    let expected: Vec<&Value> = sent.iter().flat_map(|(set, read, _)| [set, read]).collect();
    assert_eq!(answered, expected, "answers out of arrival order");
    // A notification is not ordered with the answers to later requests: wait for the last.
    let mut updates: Vec<Value> = backlog
        .iter()
        .filter(|m| m["method"] == json!("thread/name/updated"))
        .map(|m| m["params"]["threadName"].clone())
        .collect();
    while updates.len() < PAIRS {
        updates.push(client.notification("thread/name/updated")["threadName"].clone());
    }
    let names: Vec<Value> = sent.iter().map(|(_, _, name)| json!(name)).collect();
    assert_eq!(updates, names, "thread/name/updated out of order");
    for (set, read, name) in &sent {
        let set_answer = backlog.iter().find(|m| m["id"] == *set).expect("answered");
        assert_eq!(set_answer["result"], json!({}), "{set_answer}");
        let read_answer = backlog.iter().find(|m| m["id"] == *read).expect("answered");
        assert_eq!(
            read_answer["result"]["thread"]["name"],
            json!(name),
            "the read after setting {name:?}"
        );
    }
    client.stop();
    let _ = std::fs::remove_dir_all(&home);
}
