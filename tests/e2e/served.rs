//! Declared means served: every client request in the method table, driven through the binary
//! with valid params, gets an answer other than -32601 (method not found) and -32602 (the
//! sample params are valid, so the schema must accept them).
//!
//! The walk is over `agentwire_protocol::methods::METHODS`, not a list of our own: a method
//! added to the table without a sample here fails the test until one is written, and a method
//! declared but not implemented by the engine fails it with -32601.

use std::path::Path;
use std::process::Command;

use agentwire_protocol::method::Direction;
use agentwire_protocol::methods::METHODS;
use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::scratch;

/// What a method's answer must be, given the state the walk has set up before it.
enum Expect {
    /// A result.
    Result,
    /// A result, or an error the engine chose for a reason other than the method or its params
    /// (say, `turn/steer` when the fixture turn has already ended).
    AnyAnswer,
}

/// What earlier steps of the walk made, for the samples that refer to it.
struct World {
    thread: String,
    /// The copy `thread/fork` made: archived and unarchived, so `thread` stays loaded.
    fork: Option<String>,
    turn: Option<String>,
    repo: String,
    /// The `command/exec` running in a terminal for the `command/exec/*` methods to act on:
    /// its `processId` and the id of the request, answered once it ends.
    process: Option<(String, Value)>,
}

/// Valid params for `method` and what its answer must be; `None` when there is no sample yet.
fn sample(method: &str, world: &World) -> Option<(Value, Expect)> {
    use Expect::{AnyAnswer, Result};
    let thread = &world.thread;
    let repo = &world.repo;
    let text = json!([{"type": "text", "text": "hello"}]);
    Some(match method {
        // The handshake is done by `Client::start`; a second one is refused, which is an answer.
        "initialize" => (
            json!({"clientInfo": {"name": "served", "version": "1"}}),
            AnyAnswer,
        ),
        "thread/start" => (json!({"cwd": repo}), Result),
        "thread/resume" => (json!({"threadId": thread}), Result),
        "thread/fork" => (json!({"threadId": thread}), Result),
        "thread/read" => (json!({"threadId": thread, "includeTurns": true}), Result),
        "thread/list" => (json!({"limit": 10}), Result),
        "thread/loaded/list" => (json!({}), Result),
        "thread/archive" => (
            json!({"threadId": world.fork.as_deref().unwrap_or(thread)}),
            Result,
        ),
        "thread/unarchive" => (
            json!({"threadId": world.fork.as_deref().unwrap_or(thread)}),
            Result,
        ),
        "thread/name/set" => (json!({"threadId": thread, "name": "served"}), Result),
        "turn/start" => (json!({"threadId": thread, "input": text}), Result),
        "turn/steer" => (
            json!({"threadId": thread, "expectedTurnId": world.turn.as_deref().unwrap_or("t"), "input": text}),
            AnyAnswer,
        ),
        "turn/interrupt" => (
            json!({"threadId": thread, "turnId": world.turn.as_deref().unwrap_or("t")}),
            AnyAnswer,
        ),
        "model/list" => (json!({}), Result),
        "collaborationMode/list" => (json!({}), Result),
        "app/list" => (json!({}), Result),
        "config/read" => (json!({"includeLayers": true, "cwd": repo}), Result),
        "config/value/write" => (
            json!({"keyPath": "model", "value": "fixture", "mergeStrategy": "replace"}),
            Result,
        ),
        "config/batchWrite" => (
            json!({"edits": [{"keyPath": "approval_policy", "value": "on-request", "mergeStrategy": "replace"}]}),
            Result,
        ),
        "account/read" => (json!({}), Result),
        "account/login/start" => (
            json!({"type": "apiKey", "apiKey": "sk-served-test"}),
            Result,
        ),
        "account/login/cancel" => (json!({"loginId": "no-such-login"}), Result),
        "account/logout" => (Value::Null, Result),
        "account/rateLimits/read" => (Value::Null, Result),
        "mcpServerStatus/list" => (json!({}), Result),
        // The home configures the MCP server of tests/e2e/mcp_client.rs.
        "mcpServer/tool/call" => (
            json!({"threadId": thread, "server": "everything", "tool": "echo", "arguments": {"message": "hi"}}),
            Result,
        ),
        "mcpServer/resource/read" => (
            json!({"threadId": thread, "server": "everything", "uri": "demo://resource/static/document/architecture.md"}),
            Result,
        ),
        "config/mcpServer/reload" => (Value::Null, Result),
        "command/exec" => (json!({"command": ["true"], "cwd": repo}), Result),
        "command/exec/write" => (
            json!({"processId": process(world), "deltaBase64": "aGkK"}),
            Result,
        ),
        "command/exec/resize" => (
            json!({"processId": process(world), "size": {"rows": 30, "cols": 100}}),
            Result,
        ),
        "command/exec/terminate" => (json!({"processId": process(world)}), Result),
        "fuzzyFileSearch" => (json!({"query": "readme", "roots": [repo]}), Result),
        "fuzzyFileSearch/sessionStart" => (json!({"sessionId": "s1", "roots": [repo]}), Result),
        "fuzzyFileSearch/sessionUpdate" => (json!({"sessionId": "s1", "query": "read"}), Result),
        "fuzzyFileSearch/sessionStop" => (json!({"sessionId": "s1"}), Result),
        "getConversationSummary" => (json!({"conversationId": thread}), Result),
        "getAuthStatus" => (json!({"includeToken": false}), Result),
        "gitDiffToRemote" => (json!({"cwd": repo}), Result),
        "fs/readFile" => (json!({"path": format!("{repo}/README.md")}), Result),
        "fs/writeFile" => (
            json!({"path": format!("{repo}/served.txt"), "dataBase64": "aGkK"}),
            Result,
        ),
        "fs/createDirectory" => (json!({"path": format!("{repo}/served-dir")}), Result),
        "fs/getMetadata" => (json!({"path": format!("{repo}/README.md")}), Result),
        "fs/readDirectory" => (json!({"path": repo}), Result),
        "fs/remove" => (json!({"path": format!("{repo}/served.txt")}), Result),
        "fs/copy" => (
            json!({"sourcePath": format!("{repo}/README.md"), "destinationPath": format!("{repo}/README.copy.md")}),
            Result,
        ),
        "fs/watch" => (json!({"watchId": "served", "path": repo}), Result),
        "fs/unwatch" => (json!({"watchId": "served"}), Result),
        "thread/metadata/update" => (
            json!({"threadId": thread, "gitInfo": {"branch": "main", "sha": null}}),
            Result,
        ),
        "thread/turns/list" => (json!({"threadId": thread, "limit": 5}), Result),
        "thread/items/list" => (json!({"threadId": thread, "limit": 5}), Result),
        // Refused while the sample turn still runs: an answer all the same.
        "thread/shellCommand" => (json!({"threadId": thread, "command": "true"}), AnyAnswer),
        "thread/revert" => (
            json!({"threadId": thread, "beforeTurnId": world.turn.as_deref().unwrap_or("t")}),
            AnyAnswer,
        ),
        // Refused while the sample turn or command still runs: an answer all the same.
        "thread/compact/start" => (json!({"threadId": thread}), AnyAnswer),
        // Refused while the sample turn still runs: an answer all the same.
        "review/start" => (
            json!({"threadId": thread, "target": {"type": "custom", "instructions": "Find bugs."}}),
            AnyAnswer,
        ),
        "thread/unsubscribe" => (json!({"threadId": thread}), Result),
        "thread/delete" => (
            json!({"threadId": world.fork.as_deref().unwrap_or(thread)}),
            Result,
        ),
        _ => return None,
    })
}

/// The `processId` of the running terminal command.
fn process(world: &World) -> &str {
    world.process.as_ref().map_or("none", |(id, _)| id.as_str())
}

/// Starts `cat` in a terminal (answered only once it ends) for the `command/exec/*` methods, if
/// none is running.
fn ensure_process(client: &mut Client, world: &mut World, n: usize) {
    if world.process.is_some() {
        return;
    }
    let id = format!("served-{n}");
    let request = client.send_request(
        "command/exec",
        json!({
            "command": ["cat"], "processId": id, "tty": true, "streamStdin": true,
            "streamStdoutStderr": true, "disableTimeout": true,
            "sandboxPolicy": {"type": "dangerFullAccess"},
        }),
    );
    world.process = Some((id, request));
}

/// A git repository with one commit pushed to a bare remote it tracks, and one change on top.
fn repository(root: &Path) -> String {
    let remote = root.join("remote.git");
    let work = root.join("work");
    let git = |dir: &Path, args: &[&str]| {
        let status = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=served",
                "-c",
                "user.email=served@example.invalid",
            ])
            .args(args)
            .status()
            .expect("run git");
        assert!(status.success(), "git {args:?} failed");
    };
    std::fs::create_dir_all(&remote).expect("remote dir");
    std::fs::create_dir_all(&work).expect("work dir");
    git(&remote, &["init", "-q", "--bare", "-b", "main"]);
    git(&work, &["init", "-q", "-b", "main"]);
    std::fs::write(work.join("README.md"), "served\n").expect("write readme");
    git(&work, &["add", "README.md"]);
    git(&work, &["commit", "-q", "-m", "first"]);
    git(
        &work,
        &[
            "remote",
            "add",
            "origin",
            remote.to_str().expect("utf-8 path"),
        ],
    );
    git(&work, &["push", "-q", "-u", "origin", "main"]);
    std::fs::write(work.join("README.md"), "served, changed\n").expect("change readme");
    work.to_str().expect("utf-8 path").to_owned()
}

#[test]
fn every_declared_client_request_is_served() {
    let root = scratch("served");
    let home = root.join("home");
    let repo = repository(&root);
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(
        home.join("config.toml"),
        crate::mcp_client::everything_config(""),
    )
    .expect("config with an MCP server");
    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));
    let thread = thread_id(&client.start_thread(json!({"cwd": repo})));
    let mut world = World {
        thread,
        fork: None,
        turn: None,
        repo,
        process: None,
    };
    let mut exec_answers = Vec::new();

    let mut failures = Vec::new();
    let mut served = 0;
    for method in METHODS
        .iter()
        .filter(|m| m.direction == Direction::ClientRequest)
    {
        if method.name.starts_with("command/exec/") {
            ensure_process(&mut client, &mut world, served);
        }
        let Some((params, expect)) = sample(method.name, &world) else {
            failures.push(format!(
                "{}: no sample params in tests/e2e/served.rs; add one",
                method.name
            ));
            continue;
        };
        let answer = client.request(method.name, params);
        match (&answer, expect) {
            (Ok(result), _) => {
                served += 1;
                match method.name {
                    "turn/start" => world.turn = result["turn"]["id"].as_str().map(str::to_owned),
                    "thread/fork" => {
                        world.fork = result["thread"]["id"].as_str().map(str::to_owned)
                    }
                    "command/exec/terminate" => {
                        exec_answers.extend(world.process.take().map(|(_, request)| request));
                    }
                    _ => {}
                }
            }
            (Err(error), Expect::AnyAnswer)
                if error["code"] != json!(-32601) && error["code"] != json!(-32602) =>
            {
                served += 1;
            }
            (Err(error), _) => failures.push(format!("{}: {error}", method.name)),
        }
    }
    // The terminal commands end (terminated, or closing their input) and are answered.
    if let Some((id, request)) = world.process.take() {
        client.call("command/exec/terminate", json!({"processId": id}));
        exec_answers.push(request);
    }
    for request in exec_answers {
        if let Err(error) = client.answer(&request) {
            failures.push(format!("command/exec {request}: {error}"));
        }
    }
    assert!(
        failures.is_empty(),
        "declared but not served:\n  {}\nstderr:\n{}",
        failures.join("\n  "),
        client.stderr()
    );
    let declared = METHODS
        .iter()
        .filter(|m| m.direction == Direction::ClientRequest)
        .count();
    assert_eq!(served, declared, "every client request was answered");
}
