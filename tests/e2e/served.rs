//! Declared means served: every client request in the method table, driven through the binary
//! with valid params, gets an answer other than -32601 (method not found) and -32602 (the
//! sample params are valid, so the schema must accept them).
//!
//! The walk is over `agentwire_protocol::methods::METHODS`, not a list of our own: a method
//! added to the table without a sample here fails the test until one is written, and a method
//! declared but not implemented by the engine fails it with -32601.

use std::path::Path;

use agentwire_protocol::method::Direction;
use agentwire_protocol::methods::METHODS;
use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{git, scratch};

/// What a method's answer must be, given the state the walk has set up before it.
#[derive(Debug, Clone, Copy)]
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
    /// A project made before the walk, for the `project/*` samples.
    project: String,
    /// A section made before the walk, for `threadSection/delete` to remove.
    doomed_section: String,
    /// The copy `thread/fork` made: archived and unarchived, so `thread` stays loaded.
    fork: Option<String>,
    turn: Option<String>,
    /// An item of the sample turn, as `thread/timeline/list` showed it: (turn id, item id).
    item: Option<(String, String)>,
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
        // MCP OAuth: discovery fails (nothing listens), an error that is not about the params.
        "mcpServer/oauth/login" => (json!({"name": "oauth-sample", "timeoutSecs": 5}), AnyAnswer),
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
        // Codex clients' start-up and session state (0.6.0).
        "configRequirements/read" => (Value::Null, Result),
        "skills/list" => (json!({"cwds": [repo]}), Result),
        "skills/extraRoots/set" => (json!({"extraRoots": [format!("{repo}/skills")]}), Result),
        "skills/config/write" => (
            json!({"path": format!("{repo}/.agents/skills/lint/SKILL.md"), "enabled": false}),
            Result,
        ),
        "hooks/list" => (json!({"cwds": [repo]}), Result),
        "plugin/installed" => (json!({}), Result),
        // Plugins and marketplaces (0.6.0): the marketplace `served` of the sample repository,
        // added, read, installed from, reconciled and removed last (the table's order).
        "marketplace/add" => (json!({"source": repo}), Result),
        "marketplace/upgrade" => (json!({}), Result),
        "plugin/list" => (json!({"cwds": [repo]}), Result),
        "plugin/search" => (json!({"searchTerm": "lint", "cwds": [repo]}), Result),
        "plugin/read" => (
            json!({"pluginName": "lint", "marketplacePath": format!("{repo}/.agents/plugins/marketplace.json")}),
            Result,
        ),
        "plugin/skill/read" => (
            json!({"remoteMarketplaceName": "served", "remotePluginId": "lint@served", "skillName": "style"}),
            Result,
        ),
        "plugin/install" => (
            json!({"pluginName": "lint", "marketplacePath": format!("{repo}/.agents/plugins/marketplace.json")}),
            Result,
        ),
        "plugin/uninstall" => (json!({"pluginId": "lint@served"}), Result),
        "plugin/reconcile" => (json!({}), Result),
        "marketplace/remove" => (json!({"marketplaceName": "served"}), Result),
        "account/bedrock/checkGovCloudRequirements" => (json!({}), Result),
        "thread/goal/get" => (json!({"threadId": thread}), Result),
        "thread/goal/set" => (json!({"threadId": thread, "objective": "served"}), Result),
        "thread/goal/clear" => (json!({"threadId": thread}), Result),
        // Reading and searching thread history (0.6.0).
        "thread/timeline/list" => (json!({"threadId": thread, "limit": 10}), Result),
        "thread/items/read" => {
            let (turn, item) = world.item.clone().unwrap_or_default();
            (
                json!({"threadId": thread, "turnId": turn, "itemIds": [item]}),
                Result,
            )
        }
        "thread/search" | "thread/search/stream" => (json!({"searchTerm": "hello"}), Result),
        "thread/search/cancel" | "thread/search/stream/cancel" => {
            (json!({"requestId": "none"}), Result)
        }
        "thread/searchOccurrences" => (json!({"threadId": thread, "searchTerm": "hello"}), Result),
        "thread/inject_items" => (
            json!({"threadId": thread, "items": [{"type": "message", "role": "user", "content": "noted"}]}),
            Result,
        ),
        // Refused when the sample turn moved on since the revision was read: an answer.
        "thread/readState/update" => (
            json!({"threadId": thread, "expectedRevision": "0", "operation": {"type": "read"}}),
            AnyAnswer,
        ),
        "thread/backgroundTerminals/list" => (json!({"threadId": thread}), Result),
        // Refused once the sample thread has turns: an answer all the same.
        "thread/prepareApprovedPlan" => (
            json!({"threadId": thread, "markdown": "1. Fix it."}),
            AnyAnswer,
        ),
        "mock/experimentalMethod" => (json!({"value": "echo"}), Result),
        "thread/backgroundTerminals/clean" => (json!({"threadId": thread}), Result),
        "thread/backgroundTerminals/terminate" => {
            (json!({"threadId": thread, "processId": "none"}), Result)
        }
        // Migration from Codex and memory (0.6.0): detection without the home and an import
        // of nothing leave the user's real Codex home alone.
        "externalAgentConfig/detect" => (json!({}), Result),
        "externalAgentConfig/import" => (json!({"migrationItems": []}), Result),
        "externalAgentConfig/import/recordHistory" => (
            json!({"providerId": "served", "itemTypeResults": []}),
            Result,
        ),
        "externalAgentConfig/import/readHistories" => (Value::Null, Result),
        "thread/memoryMode/set" => (json!({"threadId": thread, "mode": "enabled"}), Result),
        "thread/memory/read" => (json!({"threadId": thread}), Result),
        "memory/status" => (json!({}), Result),
        "memory/reset" => (Value::Null, Result),
        // Starts a background compression pass; nothing is cold in the walk's home.
        "rollout/compress" => (Value::Null, Result),
        // Side samples, elicitation counters and environments (0.6.0). The sample is refused
        // when the thread's newest turn is no longer the one the walk started: an answer.
        "thread/sample" => (
            json!({"threadId": thread, "expectedTurnId": world.turn.clone().unwrap_or_default(),
                   "prompt": "hello"}),
            AnyAnswer,
        ),
        "thread/sample/cancel" => (json!({"requestId": "none"}), Result),
        "thread/increment_elicitation" => (json!({"threadId": thread}), Result),
        "thread/decrement_elicitation" => (json!({"threadId": thread}), Result),
        // Refused: only the local environment exists.
        "environment/add" => (
            json!({"environmentId": "remote", "execServerUrl": "ws://127.0.0.1:9"}),
            AnyAnswer,
        ),
        "environment/info" => (json!({"environmentId": "local"}), Result),
        "environment/status" => (json!({"environmentId": "local"}), Result),
        // Providers, features, settings and standalone processes (0.6.0).
        "modelProvider/list" => (json!({}), Result),
        "modelProvider/config/write" => (
            json!({"settings": {"type": "customGateway", "name": "Served",
                                "baseUrl": "http://127.0.0.1:9/v1"}}),
            Result,
        ),
        "modelProvider/default/set" => (json!({"providerId": "fixture"}), Result),
        "modelProvider/capabilities/read" => (json!({}), Result),
        "experimentalFeature/list" => (json!({"threadId": thread}), Result),
        "experimentalFeature/enablement/set" => {
            (json!({"enablement": {"server_diagnostics": true}}), Result)
        }
        "permissionProfile/list" => (json!({}), Result),
        "thread/settings/update" => (json!({"threadId": thread, "summary": "concise"}), Result),
        // `applied` while the sample turn runs, `targetUnavailable` once it ended: a result.
        "turn/settings/update" => (
            json!({"threadId": thread, "turnId": world.turn.as_deref().unwrap_or("none"),
                   "effort": "low"}),
            Result,
        ),
        // A terminal `cat` for the `process/*` samples after it; `process/kill` ends it.
        "process/spawn" => (
            json!({"command": ["cat"], "cwd": repo, "processHandle": "served-process",
                   "tty": true, "timeoutMs": null}),
            Result,
        ),
        "process/writeStdin" => (
            json!({"processHandle": "served-process", "deltaBase64": "aGkK"}),
            Result,
        ),
        "process/resizePty" => (
            json!({"processHandle": "served-process", "size": {"rows": 30, "cols": 90}}),
            Result,
        ),
        "process/kill" => (json!({"processHandle": "served-process"}), Result),
        "server/diagnostics" => (json!({}), Result),
        "feedback/save" => (
            json!({"classification": "bug", "threadId": thread,
                   "savePath": format!("{repo}-feedback.zip")}),
            Result,
        ),
        // Organising threads (0.6.0): minimal params of the reference's shape.
        "project/list" => (json!({}), AnyAnswer),
        "project/read" => (json!({"projectId": world.project}), AnyAnswer),
        "project/create" => (
            json!({"idempotencyKey": "x", "name": "x", "roots": []}),
            AnyAnswer,
        ),
        "project/import" => (
            json!({"idempotencyKey": "x", "name": "x", "roots": []}),
            AnyAnswer,
        ),
        "project/update" => (json!({"projectId": world.project}), AnyAnswer),
        "project/move" => (json!({"projectId": world.project}), AnyAnswer),
        "project/delete" => (json!({"projectId": world.project}), AnyAnswer),
        "threadSection/list" => (json!({}), AnyAnswer),
        "threadSection/create" => (json!({"name": "x"}), AnyAnswer),
        "threadSection/update" => (
            json!({"name": "x", "sectionId": "01984de2-8f74-7c91-a3b2-5c5e937cf318"}),
            AnyAnswer,
        ),
        "threadSection/delete" => (json!({"sectionId": world.doomed_section}), AnyAnswer),
        "thread/section/move" => (
            json!({"sectionId": "01984de2-8f74-7c91-a3b2-5c5e937cf318", "threadId": thread}),
            AnyAnswer,
        ),
        "thread/attachment/add" => (
            json!({"attachmentType": "x", "identityKey": "x", "payload": {}, "threadId": thread}),
            AnyAnswer,
        ),
        "thread/attachment/list" => (json!({"threadId": thread}), AnyAnswer),
        "thread/attachmentOwner/list" => (
            json!({"attachmentType": "x", "identityKey": "x"}),
            AnyAnswer,
        ),
        "thread/attachment/remove" => (
            json!({"attachmentType": "x", "identityKey": "x", "threadId": thread}),
            AnyAnswer,
        ),
        "thread/queue/add" => (
            json!({"clientUserMessageId": "x", "input": [{"type": "text", "text": "queued"}], "threadId": thread}),
            AnyAnswer,
        ),
        "thread/queue/list" => (json!({"threadId": thread}), AnyAnswer),
        "thread/queue/update" => (
            json!({"input": [{"type": "text", "text": "queued"}], "queuedSubmissionId": "x", "threadId": thread}),
            AnyAnswer,
        ),
        "thread/queue/delete" => (
            json!({"queuedSubmissionId": "x", "threadId": thread}),
            AnyAnswer,
        ),
        "thread/queue/reorder" => (
            json!({"queuedSubmissionIds": [], "threadId": thread}),
            AnyAnswer,
        ),
        "thread/queue/start" => (json!({"threadId": thread}), AnyAnswer),
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
    // A marketplace with one plugin (one skill), for `marketplace/*` and `plugin/*`.
    for (path, text) in [
        (
            ".agents/plugins/marketplace.json",
            r#"{"name":"served","plugins":[{"name":"lint","source":"./plugins/lint"}]}"#,
        ),
        (
            "plugins/lint/.codex-plugin/plugin.json",
            r#"{"name":"lint"}"#,
        ),
        (
            "plugins/lint/skills/style/SKILL.md",
            "---\nname: style\ndescription: Check the style\n---\n",
        ),
    ] {
        let file = work.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("plugin dirs");
        std::fs::write(file, text).expect("plugin file");
    }
    work.to_str().expect("utf-8 path").to_owned()
}

#[test]
fn every_declared_client_request_is_served() {
    let root = scratch("served");
    let home = root.join("home");
    let repo = repository(&root);
    std::fs::create_dir_all(&home).expect("home");
    // MCP OAuth: an HTTP server whose sign-in cannot reach an authorization server (port 9
    // refuses), for the `mcpServer/oauth/login` sample.
    std::fs::write(
        home.join("config.toml"),
        crate::mcp_client::everything_config("")
            + "\n[mcp_servers.oauth-sample]\nurl = \"http://127.0.0.1:9/mcp\"\n",
    )
    .expect("config with an MCP server");
    // Recorded: the reference site's examples come from this walk (docs_examples.rs).
    let record = root.join("record.jsonl");
    let record_arg = record.to_string_lossy().into_owned();
    let mut client = Client::start_with_args_and_capabilities(
        &home,
        &["--record", &record_arg],
        json!({"experimentalApi": true}),
    );
    let thread = thread_id(&client.start_thread(json!({"cwd": repo})));
    let project = client.call(
        "project/create",
        json!({"idempotencyKey": "served", "name": "served", "roots": [{"path": &repo}]}),
    )["project"]["id"]
        .as_str()
        .expect("project id")
        .to_owned();
    let doomed_section = client.call("threadSection/create", json!({"name": "doomed"}))["section"]
        ["id"]
        .as_str()
        .expect("section id")
        .to_owned();
    let mut world = World {
        thread,
        project,
        doomed_section,
        fork: None,
        turn: None,
        item: None,
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
        if let Some(why) = method.unavailable() {
            // Declared and refused: any params of the reference's shape get the typed refusal.
            let answer = client.request(method.name, json!({"sample": true}));
            match answer {
                Err(error)
                    if error["code"] == json!(-32004)
                        && error["data"]["reason"] == json!(why.wire_name())
                        && error["data"]["method"] == json!(method.name) =>
                {
                    served += 1;
                }
                other => failures.push(format!(
                    "{}: expected the -32004 refusal ({}), got {other:?}",
                    method.name,
                    why.wire_name()
                )),
            }
            continue;
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
                    "thread/timeline/list" => {
                        world.item = result["data"]
                            .as_array()
                            .and_then(|entries| entries.iter().find(|e| e["type"] == "item"))
                            .and_then(|e| {
                                Some((
                                    e["turnId"].as_str()?.to_owned(),
                                    e["item"]["id"].as_str()?.to_owned(),
                                ))
                            });
                    }
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
    client.stop();
    examples_of_the_walk(&root, &record);
}

/// The reference site's examples (`codegen/docs/exchanges.jsonl`): written from this walk's
/// transcript when `AGENTWIRE_DOCS_EXAMPLES_OUT` names a file (`scripts/record-docs-examples.sh`),
/// otherwise checked to hold an example of every method the walk serves.
fn examples_of_the_walk(root: &Path, record: &Path) {
    use crate::docs_examples::{CHECKED_IN, OUT_VARIABLE, distill, methods_with_examples};
    let refused: std::collections::BTreeSet<&str> = METHODS
        .iter()
        .filter(|m| m.unavailable().is_some())
        .map(|m| m.name)
        .collect();
    let transcript = std::fs::read_to_string(record).expect("read the walk's transcript");
    let distilled = distill(&transcript, root, &refused);
    if let Some(out) = std::env::var_os(OUT_VARIABLE) {
        std::fs::write(&out, &distilled).expect("write the examples");
        return;
    }
    let fresh = methods_with_examples(&distilled);
    let checked_in = std::fs::read_to_string(crate::common::repo().join(CHECKED_IN))
        .unwrap_or_else(|e| panic!("read {CHECKED_IN}: {e}"));
    let checked_in = methods_with_examples(&checked_in);
    let missing: Vec<&String> = fresh
        .keys()
        .filter(|m| !checked_in.contains_key(*m))
        .collect();
    assert!(
        fresh.len() > 100 && missing.is_empty(),
        "{CHECKED_IN} has no example of {missing:?} ({} methods recorded): run \
         scripts/record-docs-examples.sh and commit the result",
        fresh.len()
    );
}

#[test]
fn the_refusal_table_in_the_docs_is_the_method_table() {
    let doc = std::fs::read_to_string(crate::common::repo().join("docs/unavailable-methods.md"))
        .expect("read docs/unavailable-methods.md");
    let documented: std::collections::BTreeSet<(String, String)> = doc
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let method = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let reason = cells.get(2)?.strip_prefix('`')?.strip_suffix('`')?;
            method
                .contains('/')
                .then(|| (method.to_owned(), reason.to_owned()))
        })
        .collect();
    let declared: std::collections::BTreeSet<(String, String)> = METHODS
        .iter()
        .filter_map(|m| Some((m.name.to_owned(), m.unavailable()?.wire_name().to_owned())))
        .collect();
    assert!(!declared.is_empty(), "no refused method declared");
    assert_eq!(
        documented, declared,
        "docs/unavailable-methods.md and the method table's `unavailable:` rows differ"
    );
}

/// Client requests of the reference's schema that agentwire does not declare yet: each still
/// answers -32601, which the walk below checks, so this list can only shrink. Issue 31 tracks
/// them.
const NOT_YET_DECLARED: &[&str] = &[];

#[test]
fn every_client_request_of_the_reference_is_answered() {
    let dir = agentwire_reference_material::experimental_schema_dir();
    let text =
        std::fs::read_to_string(dir.join("ClientRequest.json")).expect("read ClientRequest.json");
    let union: Value = serde_json::from_str(&text).expect("ClientRequest.json is JSON");
    let methods: Vec<(String, bool)> = union["oneOf"]
        .as_array()
        .expect("ClientRequest is a oneOf")
        .iter()
        .filter_map(|branch| {
            let name = branch["properties"]["method"]["enum"][0].as_str()?;
            let params = &branch["properties"]["params"];
            let object = params.get("$ref").is_some();
            Some((name.to_owned(), object))
        })
        .collect();
    assert!(methods.len() > 150, "only {} methods read", methods.len());

    let root = scratch("served-reference");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    let mut client = Client::start_with_capabilities(&home, json!({"experimentalApi": true}));
    let mut unexpected = Vec::new();
    for (method, object) in &methods {
        if method == "initialize" {
            continue;
        }
        // Minimal params: an empty object where the reference takes one (a required member
        // missing is -32602, an answer), none where it takes none.
        let params = if *object { json!({}) } else { Value::Null };
        let answer = client.request(method, params);
        let not_found = matches!(&answer, Err(e) if e["code"] == json!(-32601));
        let listed = NOT_YET_DECLARED.contains(&method.as_str());
        if not_found != listed {
            unexpected.push(format!(
                "{method}: {answer:?} (listed as not yet declared: {listed})"
            ));
        }
        if let Err(error) = &answer
            && error["code"] == json!(-32004)
        {
            let declared = agentwire_protocol::methods::find(method).and_then(|m| m.unavailable());
            if declared.map(|w| w.wire_name()) != error["data"]["reason"].as_str() {
                unexpected.push(format!(
                    "{method}: refused but not declared `unavailable:` so"
                ));
            }
        }
    }
    assert!(
        unexpected.is_empty(),
        "{} of {} reference methods answered unexpectedly:\n  {}\nstderr:\n{}",
        unexpected.len(),
        methods.len(),
        unexpected.join("\n  "),
        client.stderr()
    );
}
