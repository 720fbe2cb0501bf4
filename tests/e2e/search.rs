//! Search, git and legacy methods through the binary: `fuzzyFileSearch` and its sessions,
//! `gitDiffToRemote`, `getConversationSummary` and `mcpServerStatus/list`.

use std::path::Path;

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{git, scratch};

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create dirs");
    }
    std::fs::write(path, text).expect("write file");
}

fn paths(answer: &Value) -> Vec<String> {
    answer["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().expect("path").to_owned())
        .collect()
}

/// Asserts `error` is `code` and its message mentions `needle`.
fn refused(error: &Value, code: i64, needle: &str) {
    assert_eq!(error["code"], json!(code), "{error}");
    let message = error["message"].as_str().expect("message");
    assert!(message.contains(needle), "{needle:?} not in {message:?}");
}

#[test]
fn fuzzy_search_ranks_the_exact_name_first_with_indices_and_directories() {
    let dir = scratch("search-rank");
    let root = dir.join("root");
    write(&root.join("lib/widget_helpers.rs"), "");
    write(&root.join("a/b/c/widget.rs"), "");
    write(&root.join("wxixdxgxext.txt"), "");
    write(&root.join("widgets/readme.md"), "");
    write(&root.join("unrelated.txt"), "");
    let mut client = Client::start(&dir.join("home"));
    let root_text = root.to_str().expect("utf-8 path");
    let answer = client.call(
        "fuzzyFileSearch",
        json!({"query": "widget", "roots": [root_text]}),
    );
    let files = answer["files"].as_array().expect("files");
    let first = &files[0];
    assert_eq!(first["path"], json!("a/b/c/widget.rs"), "{answer}");
    assert_eq!(first["file_name"], json!("widget.rs"));
    assert_eq!(first["root"], json!(root_text));
    assert_eq!(first["match_type"], json!("file"));
    assert_eq!(first["indices"], json!([6, 7, 8, 9, 10, 11]));
    let scores: Vec<u64> = files
        .iter()
        .map(|f| f["score"].as_u64().expect("score"))
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    let directory = files
        .iter()
        .find(|f| f["path"] == json!("widgets"))
        .expect("the widgets directory matches");
    assert_eq!(directory["match_type"], json!("directory"));
    let found = paths(&answer);
    assert!(found.contains(&"lib/widget_helpers.rs".to_owned()));
    assert!(found.contains(&"wxixdxgxext.txt".to_owned()));
    assert!(!found.contains(&"unrelated.txt".to_owned()), "{found:?}");
    // An empty query and no roots answer nothing.
    let none = client.call(
        "fuzzyFileSearch",
        json!({"query": "", "roots": [root_text]}),
    );
    assert_eq!(none, json!({"files": []}));
    let none = client.call("fuzzyFileSearch", json!({"query": "widget", "roots": []}));
    assert_eq!(none, json!({"files": []}));
}

/// A match inside the file name ranks above matches that need the directories, however well
/// the directory names line up with the query (issue 36: the reference ranks it first too).
#[test]
fn fuzzy_search_ranks_a_file_name_match_above_decoys_spread_over_directories() {
    let dir = scratch("search-rank-name");
    let root = dir.join("root");
    // Decoys whose directories spell the query, or part of it, with word starts at every piece
    // (the directories are results too; none is named after the whole query).
    let decoys = [
        "state/zeph/quo/kha/nd.py",
        "zeph/quo/khand/readme.md",
        "zephyr/quokka/handler/mod.rs",
        "src/zeph_quok/hand/index.ts",
        "z/e/p/h/q/u/o/k/h/a/n/d.txt",
        "lib/zephquok/hand.rs",
    ];
    for decoy in decoys {
        write(&root.join(decoy), "");
    }
    write(&root.join("core/net/zephyr_quokka_handler.rs"), "");
    write(&root.join("core/net/unrelated.rs"), "");
    let mut client = Client::start(&dir.join("home"));
    let root_text = root.to_str().expect("utf-8 path");
    let answer = client.call(
        "fuzzyFileSearch",
        json!({"query": "zephquokhand", "roots": [root_text]}),
    );
    let found = paths(&answer);
    assert_eq!(found[0], "core/net/zephyr_quokka_handler.rs", "{found:#?}");
    for decoy in decoys {
        assert!(
            found.contains(&decoy.to_owned()),
            "{decoy} not found: {found:#?}"
        );
    }
    assert!(
        !found.contains(&"core/net/unrelated.rs".to_owned()),
        "{found:#?}"
    );
    let first = &answer["files"][0];
    assert_eq!(first["file_name"], json!("zephyr_quokka_handler.rs"));
    // The highlighted characters are the file name's: z,e,p,h at 9..13, q,u,o,k at 16..20
    // and h,a,n,d at 23..27 of `core/net/zephyr_quokka_handler.rs`.
    assert_eq!(
        first["indices"],
        json!([9, 10, 11, 12, 16, 17, 18, 19, 23, 24, 25, 26]),
        "{answer}"
    );
    let scores: Vec<u64> = answer["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["score"].as_u64().expect("score"))
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(
        scores[0] > scores[1],
        "the name match is strictly first: {scores:?}"
    );
    client.stop();
}

#[test]
fn fuzzy_search_honours_ignore_files_and_skips_git() {
    let dir = scratch("search-ignore");
    let root = dir.join("root");
    write(&root.join(".gitignore"), "build/\n*.tmp\n");
    write(&root.join("src/.ignore"), "vendor/\n");
    write(&root.join("build/widget_out.rs"), "");
    write(&root.join("widget_scratch.tmp"), "");
    write(&root.join("src/vendor/widget_dep.rs"), "");
    write(&root.join(".git/widget_object"), "");
    write(&root.join("src/widget.rs"), "");
    write(&root.join(".hidden/widget_conf.toml"), "");
    let mut client = Client::start(&dir.join("home"));
    let answer = client.call(
        "fuzzyFileSearch",
        json!({"query": "widget", "roots": [root.to_str().expect("utf-8")]}),
    );
    let found = paths(&answer);
    assert!(found.contains(&"src/widget.rs".to_owned()), "{found:?}");
    assert!(
        found.contains(&".hidden/widget_conf.toml".to_owned()),
        "{found:?}"
    );
    for ignored in [
        "build/widget_out.rs",
        "widget_scratch.tmp",
        "src/vendor/widget_dep.rs",
        ".git/widget_object",
    ] {
        assert!(
            !found.iter().any(|p| p == ignored),
            "{ignored} in {found:?}"
        );
    }
    // A file created later is found by a later search.
    write(&root.join("src/deeper/widget_new.rs"), "");
    let mut found = Vec::new();
    for _ in 0..100 {
        let answer = client.call(
            "fuzzyFileSearch",
            json!({"query": "widget_new", "roots": [root.to_str().expect("utf-8")]}),
        );
        found = paths(&answer);
        if !found.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(found, ["src/deeper/widget_new.rs"]);
}

#[test]
fn fuzzy_search_refuses_bad_roots_and_params() {
    let dir = scratch("search-bad");
    write(&dir.join("plain.txt"), "");
    let mut client = Client::start(&dir.join("home"));
    let ok = dir.to_str().expect("utf-8");
    let missing = dir.join("missing");
    let error = client.call_err(
        "fuzzyFileSearch",
        json!({"query": "x", "roots": [ok, missing.to_str().expect("utf-8")]}),
    );
    refused(&error, -32602, "roots[1]");
    refused(&error, -32602, "does not exist");
    let error = client.call_err(
        "fuzzyFileSearch",
        json!({"query": "x", "roots": [dir.join("plain.txt").to_str().expect("utf-8")]}),
    );
    refused(&error, -32602, "roots[0]");
    refused(&error, -32602, "not a directory");
    let error = client.call_err("fuzzyFileSearch", json!({"query": "x", "roots": ok}));
    refused(&error, -32602, "roots");
    let error = client.call_err("fuzzyFileSearch", json!({"roots": [ok]}));
    refused(&error, -32602, "query");
}

#[test]
fn a_newer_search_with_the_same_token_cancels_the_older() {
    let dir = scratch("search-cancel");
    let root = dir.join("big");
    // Enough files that the first (cold) walk is still running when the second search comes.
    for i in 0..20_000 {
        write(&root.join(format!("d{:03}/file_{i}.txt", i / 100)), "");
    }
    let root_text = root.to_str().expect("utf-8");
    let mut client = Client::start(&dir.join("home"));
    client.send(&json!({
        "id": "older",
        "method": "fuzzyFileSearch",
        "params": {"query": "file_1999", "roots": [root_text], "cancellationToken": "t"}
    }));
    let newer = client.call(
        "fuzzyFileSearch",
        json!({"query": "file_1999", "roots": [root_text], "cancellationToken": "t"}),
    );
    assert_eq!(newer["files"][0]["path"], json!("d019/file_1999.txt"));
    // The older search's answer came first, on its own id, and is empty.
    let older = client
        .notifications
        .iter()
        .find(|m| m["id"] == json!("older"))
        .expect("the older search was answered before the newer one")
        .clone();
    assert_eq!(older["result"], json!({"files": []}), "{older}");
    // A search with another token is not cancelled.
    let other = client.call(
        "fuzzyFileSearch",
        json!({"query": "file_1999", "roots": [root_text], "cancellationToken": "u"}),
    );
    assert_eq!(other["files"][0]["path"], json!("d019/file_1999.txt"));
}

#[test]
fn search_sessions_stream_results_and_refuse_unknown_ids() {
    let dir = scratch("search-session");
    let root = dir.join("root");
    write(&root.join("src/session_widget.rs"), "");
    write(&root.join("docs/other.md"), "");
    let root_text = root.to_str().expect("utf-8");
    let mut client =
        Client::start_with_capabilities(&dir.join("home"), json!({"experimentalApi": true}));
    let error = client.call_err(
        "fuzzyFileSearch/sessionStart",
        json!({"sessionId": "s", "roots": [dir.join("nope").to_str().expect("utf-8")]}),
    );
    refused(&error, -32602, "roots[0]");
    let started = client.call(
        "fuzzyFileSearch/sessionStart",
        json!({"sessionId": "s1", "roots": [root_text]}),
    );
    assert_eq!(started, json!({}));
    let updated = client.call(
        "fuzzyFileSearch/sessionUpdate",
        json!({"sessionId": "s1", "query": "sesswid"}),
    );
    assert_eq!(updated, json!({}));
    let completed = client.notification("fuzzyFileSearch/sessionCompleted");
    assert_eq!(completed, json!({"sessionId": "s1"}));
    let updates: Vec<Value> = client
        .notifications
        .drain(..)
        .filter(|m| m["method"] == json!("fuzzyFileSearch/sessionUpdated"))
        .map(|m| m["params"].clone())
        .collect();
    let last = updates
        .last()
        .expect("sessionUpdated before sessionCompleted");
    assert_eq!(last["sessionId"], json!("s1"));
    assert_eq!(last["query"], json!("sesswid"));
    assert_eq!(paths(last), ["src/session_widget.rs"]);
    assert_eq!(last["files"][0]["root"], json!(root_text));
    // An empty query gets an empty list, then completes.
    client.call(
        "fuzzyFileSearch/sessionUpdate",
        json!({"sessionId": "s1", "query": ""}),
    );
    client.notification("fuzzyFileSearch/sessionCompleted");
    let empty: Vec<Value> = client
        .notifications
        .drain(..)
        .filter(|m| m["method"] == json!("fuzzyFileSearch/sessionUpdated"))
        .collect();
    assert_eq!(empty.len(), 1, "{empty:?}");
    assert_eq!(empty[0]["params"]["files"], json!([]));

    let error = client.call_err(
        "fuzzyFileSearch/sessionUpdate",
        json!({"sessionId": "nope", "query": "x"}),
    );
    refused(&error, -32602, "sessionId");
    let error = client.call_err("fuzzyFileSearch/sessionStop", json!({"sessionId": "nope"}));
    refused(&error, -32602, "sessionId");
    assert_eq!(
        client.call("fuzzyFileSearch/sessionStop", json!({"sessionId": "s1"})),
        json!({})
    );
    let error = client.call_err(
        "fuzzyFileSearch/sessionUpdate",
        json!({"sessionId": "s1", "query": "x"}),
    );
    refused(&error, -32602, "sessionId");
    // Sessions belong to their connection: another connection does not see s1.
    let mut other =
        Client::start_with_capabilities(&dir.join("home2"), json!({"experimentalApi": true}));
    other.call(
        "fuzzyFileSearch/sessionStart",
        json!({"sessionId": "s2", "roots": [root_text]}),
    );
    let error = client.call_err(
        "fuzzyFileSearch/sessionUpdate",
        json!({"sessionId": "s2", "query": "x"}),
    );
    refused(&error, -32602, "sessionId");
    // The session methods are experimental.
    let mut plain = Client::start(&dir.join("home3"));
    let error = plain.call_err(
        "fuzzyFileSearch/sessionStart",
        json!({"sessionId": "s", "roots": [root_text]}),
    );
    refused(&error, -32600, "experimentalApi");
}

#[test]
fn git_diff_to_remote_covers_changes_and_untracked_files() {
    let dir = scratch("git-diff");
    let remote = dir.join("remote.git");
    let work = dir.join("work");
    std::fs::create_dir_all(&remote).expect("remote dir");
    std::fs::create_dir_all(&work).expect("work dir");
    git(&remote, &["init", "-q", "--bare"]);
    git(&work, &["init", "-q"]);
    write(&work.join("a.txt"), "hello\n");
    write(&work.join(".gitignore"), "*.log\n");
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "first"]);
    git(
        &work,
        &["remote", "add", "origin", remote.to_str().expect("utf-8")],
    );
    git(&work, &["push", "-q", "-u", "origin", "HEAD"]);
    let pushed = git(&work, &["rev-parse", "HEAD"]).trim().to_owned();
    // A local commit not pushed, an edit, an untracked file and an ignored one.
    write(&work.join("b.txt"), "local\n");
    git(&work, &["add", "b.txt"]);
    git(&work, &["commit", "-q", "-m", "local"]);
    write(&work.join("a.txt"), "hello\nchanged\n");
    write(&work.join("sub/new.txt"), "brand new\n");
    write(&work.join("noise.log"), "ignored\n");

    let mut client = Client::start(&dir.join("home"));
    let answer = client.call(
        "gitDiffToRemote",
        json!({"cwd": work.join("sub").to_str().expect("utf-8")}),
    );
    assert_eq!(answer["sha"], json!(pushed), "{answer}");
    let diff = answer["diff"].as_str().expect("diff");
    assert!(diff.contains("diff --git a/a.txt b/a.txt"), "{diff}");
    assert!(diff.contains("+changed"), "{diff}");
    assert!(diff.contains("diff --git a/b.txt b/b.txt"), "{diff}");
    assert!(diff.contains("+++ b/sub/new.txt"), "{diff}");
    assert!(diff.contains("+brand new"), "{diff}");
    assert!(!diff.contains("noise.log"), "{diff}");
    // The repository's own index is untouched: the new file is still untracked.
    assert!(git(&work, &["status", "--porcelain"]).contains("?? sub/"));

    // Not a repository, no such directory, a repository without a remote, a wrong type.
    let plain = dir.join("plain");
    std::fs::create_dir_all(&plain).expect("plain dir");
    let error = client.call_err(
        "gitDiffToRemote",
        json!({"cwd": plain.to_str().expect("utf-8")}),
    );
    refused(&error, -32600, "cwd");
    refused(&error, -32600, "not inside a git work tree");
    let error = client.call_err(
        "gitDiffToRemote",
        json!({"cwd": dir.join("missing").to_str().expect("utf-8")}),
    );
    refused(&error, -32602, "cwd");
    let lonely = dir.join("lonely");
    std::fs::create_dir_all(&lonely).expect("lonely dir");
    git(&lonely, &["init", "-q"]);
    write(&lonely.join("x.txt"), "x\n");
    git(&lonely, &["add", "."]);
    git(&lonely, &["commit", "-q", "-m", "x"]);
    let error = client.call_err(
        "gitDiffToRemote",
        json!({"cwd": lonely.to_str().expect("utf-8")}),
    );
    refused(&error, -32600, "no remote");
    let error = client.call_err("gitDiffToRemote", json!({"cwd": 7}));
    refused(&error, -32602, "cwd");
}

#[test]
fn conversation_summary_by_id_and_by_path_inside_the_home_only() {
    let dir = scratch("summary");
    let home = dir.join("home");
    let mut client = Client::start(&home);
    let started = client.start_thread(json!({"cwd": dir.to_str().expect("utf-8")}));
    let id = thread_id(&started);
    client.start_turn(&id, "summarise me");
    client.until_turn_completed();

    let by_id = client.call("getConversationSummary", json!({"conversationId": id}));
    let summary = &by_id["summary"];
    assert_eq!(summary["conversationId"], json!(id));
    assert_eq!(summary["preview"], json!("summarise me"));
    assert_eq!(summary["modelProvider"], json!("fixture"));
    assert_eq!(summary["cwd"], json!(dir.to_str().expect("utf-8")));
    assert_eq!(summary["source"], started["thread"]["source"]);
    assert_eq!(summary["cliVersion"], started["thread"]["cliVersion"]);
    let timestamp = summary["timestamp"].as_str().expect("timestamp");
    assert!(
        timestamp.len() == 20 && timestamp.ends_with('Z') && timestamp.as_bytes()[10] == b'T',
        "{timestamp}"
    );
    let path = summary["path"].as_str().expect("path").to_owned();
    assert!(path.ends_with(".jsonl"), "{path}");

    let by_path = client.call("getConversationSummary", json!({"rolloutPath": path}));
    assert_eq!(by_path["summary"]["conversationId"], json!(id));
    assert_eq!(by_path["summary"]["preview"], json!("summarise me"));
    assert_eq!(by_path["summary"]["timestamp"], summary["timestamp"]);

    // A copy of the rollout outside the sessions folders is refused, and so is config.toml.
    let outside = dir.join("rollout-copy.jsonl");
    std::fs::copy(&path, &outside).expect("copy rollout");
    let error = client.call_err(
        "getConversationSummary",
        json!({"rolloutPath": outside.to_str().expect("utf-8")}),
    );
    refused(&error, -32602, "rolloutPath");
    refused(&error, -32602, "outside");
    write(&home.join("config.toml"), "");
    let error = client.call_err(
        "getConversationSummary",
        json!({"rolloutPath": "sessions/../config.toml"}),
    );
    refused(&error, -32602, "rolloutPath");
    let error = client.call_err(
        "getConversationSummary",
        json!({"rolloutPath": home.join("sessions/none.jsonl").to_str().expect("utf-8")}),
    );
    refused(&error, -32602, "does not exist");
    let error = client.call_err(
        "getConversationSummary",
        json!({"conversationId": "00000000-0000-7000-8000-000000000000"}),
    );
    refused(&error, -32600, "conversationId");
    let error = client.call_err("getConversationSummary", json!({"conversationId": 5}));
    assert_eq!(error["code"], json!(-32602), "{error}");
}

#[test]
fn mcp_server_status_lists_configured_servers_in_pages() {
    let dir = scratch("mcp-status");
    let home = dir.join("home");
    write(
        &home.join("config.toml"),
        r#"
[mcp_servers.alpha]
command = "alpha-mcp"
args = ["--stdio"]

[mcp_servers.beta]
url = "https://user:secret@mcp.example.com:8443/v1/mcp"
bearer_token_env_var = "BETA_TOKEN"

[mcp_servers.gamma]
command = "gamma-mcp"
enabled = false
"#,
    );
    let mut client = Client::start(&home);
    let first = client.call("mcpServerStatus/list", json!({"limit": 2}));
    let names: Vec<&str> = first["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["alpha", "beta"]);
    let alpha = &first["data"][0];
    assert_eq!(alpha["authStatus"], json!("unsupported"));
    assert_eq!(alpha["tools"], json!({}));
    assert_eq!(alpha["resources"], json!([]));
    // Listing starts the server (see tests/e2e/mcp_client.rs): `alpha-mcp` does not exist.
    assert_eq!(alpha["runtimeStatus"], json!("failed"), "{alpha}");
    assert!(
        alpha["toolsError"]
            .as_str()
            .is_some_and(|e| e.contains("alpha-mcp")),
        "{alpha}"
    );
    let beta = &first["data"][1];
    assert_eq!(beta["authStatus"], json!("bearerToken"));
    assert_eq!(beta["httpOrigin"], json!("https://mcp.example.com:8443"));
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let second = client.call("mcpServerStatus/list", json!({"cursor": cursor}));
    assert_eq!(second["data"][0]["name"], json!("gamma"));
    assert_eq!(second["data"][0]["runtimeStatus"], json!("disabled"));
    assert_eq!(second["nextCursor"], Value::Null);
    let all = client.call("mcpServerStatus/list", json!({}));
    assert_eq!(all["data"].as_array().expect("data").len(), 3);
    let only = client.call("mcpServerStatus/list", json!({"serverName": "beta"}));
    assert_eq!(only["data"].as_array().expect("data").len(), 1);

    let error = client.call_err("mcpServerStatus/list", json!({"cursor": "abc"}));
    refused(&error, -32602, "cursor");
    let error = client.call_err("mcpServerStatus/list", json!({"cursor": "9"}));
    refused(&error, -32602, "cursor");
    let error = client.call_err("mcpServerStatus/list", json!({"limit": "two"}));
    refused(&error, -32602, "limit");
    let error = client.call_err(
        "mcpServerStatus/list",
        json!({"environmentId": "e", "serverName": "alpha"}),
    );
    refused(&error, -32602, "environmentId");
    let error = client.call_err(
        "mcpServerStatus/list",
        json!({"threadId": "00000000-0000-7000-8000-000000000000"}),
    );
    assert_eq!(error["code"], json!(-32600), "{error}");
}
