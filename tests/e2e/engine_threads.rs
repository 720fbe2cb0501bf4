//! Threads end to end: the real binary over stdio, each test with its own `AGENTWIRE_HOME`.
//!
//! Some tests write rollout files themselves, in the on-disk format the engine documents
//! (`engine/store/src/record.rs`), to set up history quickly.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::Client;
use crate::common::{existing_dir, scratch, tree};

/// Writes the rollout of a thread with `turns` (user text, agent text) under `sessions/`;
/// returns its path.
fn write_rollout(home: &Path, thread: &Fixture, turns: &[(&str, &str)]) -> PathBuf {
    let dir = home.join("sessions/2026/01/02");
    std::fs::create_dir_all(&dir).expect("create sessions dir");
    let path = dir.join(format!("rollout-2026-01-02T03-04-05-{}.jsonl", thread.id));
    let mut lines = vec![json!({"type": "thread", "version": 1, "meta": {
        "id": thread.id, "sessionId": thread.id, "createdAt": thread.created_at,
        "cliVersion": "0.1.0", "source": "vscode",
        "settings": {
            "model": "fixture-model", "modelProvider": thread.provider, "cwd": thread.cwd,
            "approvalPolicy": "never", "approvalsReviewer": "user",
            "sandbox": {"type": "readOnly", "networkAccess": false}
        }
    }})];
    if let Some(name) = &thread.name {
        lines.push(json!({"type": "name", "at": thread.created_at, "name": name}));
    }
    for (n, (user, agent)) in turns.iter().enumerate() {
        let turn = format!("{}-turn-{n}", thread.id);
        let at = thread.created_at + n as i64;
        lines.push(json!({"type": "turnStarted", "at": at, "turnId": turn, "rootTurnId": turn, "startedAt": at}));
        lines.push(
            json!({"type": "itemCompleted", "at": at, "turnId": turn, "item": {
                "type": "userMessage", "id": format!("{turn}-u"), "clientId": null,
                "content": [{"type": "text", "text": user, "text_elements": []}],
                "startedAtMs": at * 1000, "completedAtMs": at * 1000
            }}),
        );
        lines.push(
            json!({"type": "itemCompleted", "at": at, "turnId": turn, "item": {
                "type": "agentMessage", "id": format!("{turn}-a"), "text": agent, "phase": null,
                "moderation": null, "memoryCitation": null, "delivery": null, "questions": null,
                "startedAtMs": at * 1000, "completedAtMs": at * 1000
            }}),
        );
        lines.push(
            json!({"type": "turnCompleted", "at": at, "turnId": turn, "status": "completed",
                          "error": null, "completedAt": at, "durationMs": 10}),
        );
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).expect("write rollout");
    path
}

/// A thread to write with [`write_rollout`].
struct Fixture {
    id: String,
    created_at: i64,
    cwd: String,
    provider: String,
    name: Option<String>,
}

impl Fixture {
    fn new(n: usize, created_at: i64) -> Self {
        Self {
            id: format!("00000000-0000-7000-8000-{n:012}"),
            created_at,
            cwd: "/work/a".to_owned(),
            provider: "fixture".to_owned(),
            name: None,
        }
    }
}

/// Every rollout file under `home`, relative to it.
fn rollouts(home: &Path) -> Vec<String> {
    if !home.exists() {
        return Vec::new();
    }
    tree(home)
        .into_iter()
        .map(|(path, _)| path.to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".jsonl"))
        .collect()
}

fn ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .expect("data is an array")
        .iter()
        .map(|t| t["id"].as_str().expect("id is a string").to_owned())
        .collect()
}

#[test]
fn start_read_list_name_archive_unarchive() {
    let home = scratch("threads-lifecycle");
    let mut client = Client::start(&home);

    let started = client.call("thread/start", json!({"cwd": existing_dir("/tmp/project")}));
    let thread = &started["thread"];
    let id = thread["id"].as_str().expect("id").to_owned();
    assert_eq!(id.len(), 36);
    assert_eq!(&id[14..15], "7", "a UUIDv7: {id}");
    assert_eq!(thread["status"], json!({"type": "idle"}));
    assert_eq!(thread["turns"], json!([]));
    assert_eq!(thread["ephemeral"], json!(false));
    assert_eq!(thread["preview"], json!(""));
    assert_eq!(thread["name"], Value::Null);
    assert_eq!(thread["cliVersion"], json!(env!("CARGO_PKG_VERSION")));
    assert_eq!(thread["cwd"], json!("/tmp/project"));
    assert_eq!(thread["sessionId"], json!(id));
    assert_eq!(thread["source"], json!("vscode"));
    assert_eq!(thread["createdAt"], thread["updatedAt"]);
    assert!(thread["modelProvider"].is_string());
    assert_eq!(started["cwd"], json!("/tmp/project"));
    assert_eq!(started["model"], thread["model"]);
    let path = PathBuf::from(thread["path"].as_str().expect("path"));
    let file = path
        .file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned();
    assert!(
        file.starts_with("rollout-") && file.ends_with(&format!("-{id}.jsonl")),
        "{file}"
    );
    let relative = path.strip_prefix(&home).expect("rollout under the home");
    assert_eq!(
        relative.components().count(),
        5,
        "sessions/YYYY/MM/DD/file: {relative:?}"
    );
    assert!(relative.starts_with("sessions"));
    assert!(path.is_file());
    let announced = client.notification("thread/started");
    assert_eq!(&announced["thread"], thread);

    let read = client.call("thread/read", json!({"threadId": id}));
    assert_eq!(&read["thread"], thread);
    let read = client.call("thread/read", json!({"threadId": id, "includeTurns": true}));
    assert_eq!(read["thread"]["turns"], json!([]));

    let listed = client.call("thread/list", json!({}));
    assert_eq!(ids(&listed), vec![id.clone()]);
    assert_eq!(listed["data"][0]["status"], json!({"type": "idle"}));
    assert_eq!(listed["nextCursor"], Value::Null);
    assert!(listed["backwardsCursor"].is_string());
    let loaded = client.call("thread/loaded/list", json!({}));
    assert_eq!(loaded, json!({"data": [id], "nextCursor": null}));

    let renamed = client.call(
        "thread/name/set",
        json!({"threadId": id, "name": "Fix the build"}),
    );
    assert_eq!(renamed, json!({}));
    let update = client.notification("thread/name/updated");
    assert_eq!(
        update,
        json!({"threadId": id, "threadName": "Fix the build"})
    );
    let read = client.call("thread/read", json!({"threadId": id}));
    assert_eq!(read["thread"]["name"], json!("Fix the build"));
    let found = client.call("thread/list", json!({"searchTerm": "the BUILD"}));
    assert_eq!(ids(&found), vec![id.clone()]);

    assert_eq!(
        client.call("thread/archive", json!({"threadId": id})),
        json!({})
    );
    assert_eq!(
        client.notification("thread/archived"),
        json!({"threadId": id})
    );
    assert!(!path.exists(), "the rollout left sessions/");
    let archived_path = home
        .join("archived_sessions")
        .join(relative.strip_prefix("sessions").expect("under sessions"));
    assert!(archived_path.is_file(), "{archived_path:?}");
    assert_eq!(
        ids(&client.call("thread/list", json!({}))),
        Vec::<String>::new()
    );
    let archived = client.call("thread/list", json!({"archived": true}));
    assert_eq!(ids(&archived), vec![id.clone()]);
    assert_eq!(archived["data"][0]["status"], json!({"type": "notLoaded"}));
    assert_eq!(archived["data"][0]["name"], json!("Fix the build"));
    assert_eq!(
        client.call("thread/loaded/list", json!({}))["data"],
        json!([])
    );
    let error = client.call_err("thread/resume", json!({"threadId": id}));
    assert_eq!(error["code"], json!(-32600));
    let error = client.call_err("thread/archive", json!({"threadId": id}));
    assert_eq!(error["code"], json!(-32600));

    let restored = client.call("thread/unarchive", json!({"threadId": id}));
    assert_eq!(restored["thread"]["id"], json!(id));
    assert_eq!(restored["thread"]["status"], json!({"type": "notLoaded"}));
    assert_eq!(restored["thread"]["name"], json!("Fix the build"));
    assert_eq!(
        client.notification("thread/unarchived"),
        json!({"threadId": id})
    );
    assert!(path.is_file() && !archived_path.exists());
    assert_eq!(
        ids(&client.call("thread/list", json!({}))),
        vec![id.clone()]
    );
    assert_eq!(
        ids(&client.call("thread/list", json!({"archived": true}))),
        Vec::<String>::new()
    );

    let missing = client.call_err("thread/read", json!({"threadId": "no-such-thread"}));
    assert_eq!(missing["code"], json!(-32600));
    assert!(
        missing["message"]
            .as_str()
            .expect("message")
            .contains("no-such-thread")
    );
    client.stop();
}

#[test]
fn resume_after_restart_shows_the_same_thread() {
    let home = scratch("threads-resume");
    let mut first = Client::start(&home);
    let started = first.call(
        "thread/start",
        json!({"cwd": existing_dir("/tmp/resume"), "model": "m-1"}),
    );
    let id = started["thread"]["id"].as_str().expect("id").to_owned();
    first.call("thread/name/set", json!({"threadId": id, "name": "kept"}));
    first.stop();

    let mut second = Client::start(&home);
    assert_eq!(
        second.call("thread/loaded/list", json!({}))["data"],
        json!([])
    );
    let read = second.call("thread/read", json!({"threadId": id}));
    assert_eq!(read["thread"]["status"], json!({"type": "notLoaded"}));
    let resumed = second.call("thread/resume", json!({"threadId": id, "model": "m-2"}));
    let thread = &resumed["thread"];
    assert_eq!(thread["id"], json!(id));
    assert_eq!(thread["name"], json!("kept"));
    assert_eq!(thread["cwd"], json!("/tmp/resume"));
    assert_eq!(thread["createdAt"], started["thread"]["createdAt"]);
    assert_eq!(thread["path"], started["thread"]["path"]);
    assert_eq!(thread["status"], json!({"type": "idle"}));
    assert_eq!(thread["turns"], json!([]));
    assert_eq!(resumed["model"], json!("m-2"));
    let status = second.notification("thread/status/changed");
    assert_eq!(status, json!({"threadId": id, "status": {"type": "idle"}}));
    assert_eq!(
        second.call("thread/loaded/list", json!({}))["data"],
        json!([id])
    );
    // Resuming a loaded thread joins it as it is.
    let again = second.call("thread/resume", json!({"threadId": id}));
    assert_eq!(again["model"], json!("m-2"));
    second.stop();

    let mut third = Client::start(&home);
    let read = third.call("thread/read", json!({"threadId": id}));
    assert_eq!(
        read["thread"]["model"],
        json!("m-2"),
        "the override was persisted"
    );
    assert_eq!(ids(&third.call("thread/list", json!({}))), [id]);
    third.stop();
}

#[test]
fn fork_copies_history() {
    let home = scratch("threads-fork");
    let mut source = Fixture::new(1, 1_780_000_000);
    source.name = Some("source".to_owned());
    write_rollout(
        &home,
        &source,
        &[("first question", "first answer"), ("second", "again")],
    );
    let mut client = Client::start(&home);

    let original = client.call(
        "thread/read",
        json!({"threadId": source.id, "includeTurns": true}),
    );
    let turns = original["thread"]["turns"].clone();
    assert_eq!(turns.as_array().expect("turns").len(), 2);
    assert_eq!(
        turns[0]["items"][0]["content"][0]["text"],
        json!("first question")
    );
    assert_eq!(turns[0]["status"], json!("completed"));
    assert_eq!(original["thread"]["preview"], json!("first question"));

    let forked = client.call("thread/fork", json!({"threadId": source.id}));
    let fork = &forked["thread"];
    let fork_id = fork["id"].as_str().expect("id").to_owned();
    assert_ne!(fork_id, source.id);
    assert_eq!(fork["forkedFromId"], json!(source.id));
    assert_eq!(fork["turns"], turns);
    assert_eq!(fork["preview"], json!("first question"));
    assert_eq!(fork["name"], Value::Null);
    assert_eq!(fork["status"], json!({"type": "idle"}));
    assert_eq!(fork["cwd"], json!("/work/a"));
    let announced = client.notification("thread/started");
    assert_eq!(announced["thread"]["id"], json!(fork_id));
    assert_eq!(announced["thread"]["turns"], json!([]));
    assert!(PathBuf::from(fork["path"].as_str().expect("path")).is_file());

    let partial = client.call(
        "thread/fork",
        json!({"threadId": source.id, "lastTurnId": turns[0]["id"], "excludeTurns": false}),
    );
    assert_eq!(partial["thread"]["turns"], json!([turns[0].clone()]));
    let bare = client.call(
        "thread/fork",
        json!({"threadId": source.id, "excludeTurns": true}),
    );
    assert_eq!(bare["thread"]["turns"], json!([]));
    let error = client.call_err(
        "thread/fork",
        json!({"threadId": source.id, "lastTurnId": "nope"}),
    );
    assert_eq!(error["code"], json!(-32602));
    client.stop();

    // The copy is on disk: a new server reads the same history back.
    let mut client = Client::start(&home);
    let read = client.call(
        "thread/read",
        json!({"threadId": fork_id, "includeTurns": true}),
    );
    assert_eq!(read["thread"]["turns"], turns);
    assert_eq!(read["thread"]["forkedFromId"], json!(source.id));
    client.stop();
}

#[test]
fn list_pages_over_a_thousand_threads() {
    const THREADS: usize = 1000;
    let home = scratch("threads-paging");
    let mut fixtures = Vec::new();
    for n in 0..THREADS {
        // Three threads share each timestamp, so the id breaks ties.
        let fixture = Fixture::new(n, 1_700_000_000 + (n / 3) as i64);
        write_rollout(&home, &fixture, &[]);
        fixtures.push(fixture);
    }
    let mut expected: Vec<(i64, String)> = fixtures
        .iter()
        .map(|f| (f.created_at, f.id.clone()))
        .collect();
    expected.sort();
    let ascending: Vec<String> = expected.into_iter().map(|(_, id)| id).collect();
    let descending: Vec<String> = ascending.iter().rev().cloned().collect();

    let mut client = Client::start(&home);
    for (direction, order) in [("desc", &descending), ("asc", &ascending)] {
        let mut seen = Vec::new();
        let mut cursor = Value::Null;
        let mut pages = Vec::new();
        loop {
            let page = client.call(
                "thread/list",
                json!({"limit": 37, "sortDirection": direction, "cursor": cursor}),
            );
            let page_ids = ids(&page);
            assert!(page_ids.len() <= 37, "limit respected");
            seen.extend(page_ids.clone());
            pages.push(page.clone());
            cursor = page["nextCursor"].clone();
            if cursor.is_null() {
                break;
            }
            assert_eq!(page_ids.len(), 37, "only the last page is short");
        }
        assert_eq!(pages.len(), THREADS.div_ceil(37));
        assert_eq!(seen.len(), THREADS);
        assert_eq!(
            seen.iter().collect::<HashSet<_>>().len(),
            THREADS,
            "pages are disjoint"
        );
        assert_eq!(&seen, order, "complete and ordered ({direction})");

        // From the start of the third page, the other direction walks back over the second.
        let back = client.call(
            "thread/list",
            json!({
                "limit": 37,
                "sortDirection": if direction == "desc" { "asc" } else { "desc" },
                "cursor": pages[2]["backwardsCursor"],
            }),
        );
        let mut second = ids(&pages[1]);
        second.reverse();
        assert_eq!(ids(&back), second);
    }

    // The default order is newest first, 25 at a time; large limits are capped.
    let first = client.call("thread/list", json!({}));
    assert_eq!(ids(&first), descending[..25]);
    let big = client.call("thread/list", json!({"limit": 5000}));
    assert_eq!(ids(&big), descending[..500]);
    assert!(big["nextCursor"].is_string());
    let by_update = client.call(
        "thread/list",
        json!({"limit": 3, "sortKey": "updated_at", "sortDirection": "asc"}),
    );
    assert_eq!(ids(&by_update), ascending[..3]);

    // A cursor of another sort key or a forged one is refused.
    let error = client.call_err(
        "thread/list",
        json!({"sortKey": "updated_at", "cursor": first["nextCursor"]}),
    );
    assert_eq!(error["code"], json!(-32602));
    let error = client.call_err("thread/list", json!({"cursor": "not-a-cursor"}));
    assert_eq!(error["code"], json!(-32602));
    client.stop();
}

#[test]
fn list_filters_by_cwd_provider_and_search_term() {
    let home = scratch("threads-filters");
    let specs = [
        ("/work/a", "fixture", Some("Deploy pipeline"), "hello"),
        ("/work/b", "fixture", None, "Why is the PIPELINE red?"),
        ("/work/b", "other", Some("unrelated"), "nothing"),
    ];
    let mut all = Vec::new();
    for (n, (cwd, provider, name, question)) in specs.iter().enumerate() {
        let mut fixture = Fixture::new(n, 1_750_000_000 + n as i64);
        fixture.cwd = (*cwd).to_owned();
        fixture.provider = (*provider).to_owned();
        fixture.name = name.map(str::to_owned);
        write_rollout(&home, &fixture, &[(question, "answer")]);
        all.push(fixture.id);
    }
    let mut client = Client::start(&home);
    let list = |client: &mut Client, params: Value| ids(&client.call("thread/list", params));
    assert_eq!(
        list(&mut client, json!({"cwd": "/work/b"})),
        [all[2].clone(), all[1].clone()]
    );
    assert_eq!(
        list(
            &mut client,
            json!({"cwd": ["/work/a", "/work/b"], "sortDirection": "asc"})
        ),
        all
    );
    assert_eq!(
        list(&mut client, json!({"modelProviders": ["other"]})),
        [all[2].clone()]
    );
    assert_eq!(list(&mut client, json!({"modelProviders": []})).len(), 3);
    assert_eq!(
        list(
            &mut client,
            json!({"searchTerm": "pipeline", "sortDirection": "asc"})
        ),
        [all[0].clone(), all[1].clone()],
        "name or preview, any case"
    );
    assert_eq!(
        list(
            &mut client,
            json!({"searchTerm": "pipeline", "cwd": "/work/a"})
        ),
        [all[0].clone()]
    );
    assert!(list(&mut client, json!({"searchTerm": "absent"})).is_empty());
    assert!(list(&mut client, json!({"sourceKinds": ["exec"]})).is_empty());
    let page = client.call("thread/list", json!({"cwd": "/work/b"}));
    assert_eq!(
        page["data"][1]["preview"],
        json!("Why is the PIPELINE red?")
    );
    assert_eq!(page["data"][1]["turns"], json!([]));
    client.stop();
}

#[test]
fn a_missing_or_corrupt_index_is_rebuilt_on_start() {
    let home = scratch("threads-index");
    let mut client = Client::start(&home);
    let mut created = Vec::new();
    for n in 0..3 {
        let started = client.call(
            "thread/start",
            json!({"cwd": existing_dir(&format!("/tmp/project-{n}"))}),
        );
        created.push(started["thread"]["id"].as_str().expect("id").to_owned());
    }
    client.call(
        "thread/name/set",
        json!({"threadId": created[1], "name": "middle"}),
    );
    client.stop();
    created.sort();
    created.reverse();
    let index = home.join("state.sqlite");
    let remove_index = || {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", index.display()));
        }
    };

    remove_index();
    let mut client = Client::start(&home);
    let listed = client.call("thread/list", json!({}));
    assert_eq!(
        ids(&listed),
        created,
        "rebuilt from the rollouts after deletion"
    );
    assert_eq!(listed["data"][1]["name"], json!("middle"));
    client.stop();

    assert!(index.is_file());
    std::fs::write(&index, vec![0xA5u8; 64 * 1024]).expect("overwrite the index with garbage");
    let mut client = Client::start(&home);
    let listed = client.call("thread/list", json!({}));
    assert_eq!(
        ids(&listed),
        created,
        "rebuilt from the rollouts after corruption"
    );
    assert_eq!(listed["data"][1]["name"], json!("middle"));
    let log = client.stop();
    assert!(log.contains("rebuilding"), "the rebuild is logged:\n{log}");
}

#[test]
fn a_torn_last_line_is_skipped() {
    let home = scratch("threads-torn");
    let fixture = Fixture::new(7, 1_760_000_000);
    let path = write_rollout(&home, &fixture, &[("question", "answer")]);
    let sound = std::fs::read(&path).expect("read rollout");
    let mut torn = sound.clone();
    torn.extend_from_slice(
        br#"{"type":"itemCompleted","at":1760000009,"turnId":"x","item":{"type":"agentMes"#,
    );
    std::fs::write(&path, &torn).expect("write torn rollout");

    let mut client = Client::start(&home);
    let read = client.call(
        "thread/read",
        json!({"threadId": fixture.id, "includeTurns": true}),
    );
    let turns = read["thread"]["turns"].as_array().expect("turns").clone();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0]["items"].as_array().expect("items").len(), 2);
    assert_eq!(
        ids(&client.call("thread/list", json!({}))),
        vec![fixture.id.clone()]
    );

    // Loading it for writing cuts the torn tail off before appending.
    client.call("thread/resume", json!({"threadId": fixture.id}));
    client.call(
        "thread/name/set",
        json!({"threadId": fixture.id, "name": "after the crash"}),
    );
    let log = client.stop();
    assert!(log.contains("torn"), "the torn line is logged:\n{log}");
    let text = String::from_utf8(std::fs::read(&path).expect("read rollout")).expect("utf-8");
    assert!(text.starts_with(std::str::from_utf8(&sound).expect("utf-8")));
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}"));
    }
    assert!(text.ends_with('\n'));

    let mut client = Client::start(&home);
    let read = client.call(
        "thread/read",
        json!({"threadId": fixture.id, "includeTurns": true}),
    );
    assert_eq!(read["thread"]["name"], json!("after the crash"));
    assert_eq!(read["thread"]["turns"], json!(turns));
    client.stop();
}

/// A rollout whose first line goes bad is not listed by a thread it cannot read: neither by the
/// server that indexed it while it was sound, nor after a restart.
#[test]
fn a_rollout_whose_first_line_is_corrupt_leaves_the_list() {
    let home = scratch("threads-corrupt-head");
    let sound = Fixture::new(3, 1_760_000_000);
    let bad = Fixture::new(4, 1_760_000_100);
    write_rollout(&home, &sound, &[("q", "a")]);
    let path = write_rollout(&home, &bad, &[("q", "a")]);
    let mut client = Client::start(&home);
    assert_eq!(ids(&client.call("thread/list", json!({}))).len(), 2);

    let text = std::fs::read_to_string(&path).expect("read rollout");
    let corrupt = text.replacen("\"type\":\"thread\"", "\"type\":\"thr\"", 1);
    assert_ne!(corrupt, text, "the first line was changed");
    std::fs::write(&path, corrupt).expect("corrupt the first line");
    let refused = client.call_err(
        "thread/read",
        json!({"threadId": bad.id, "includeTurns": true}),
    );
    assert!(
        refused["message"]
            .as_str()
            .expect("message")
            .contains("not a thread record"),
        "{refused}"
    );
    assert_eq!(
        ids(&client.call("thread/list", json!({}))),
        vec![sound.id.clone()]
    );
    client.stop();

    let mut client = Client::start(&home);
    assert_eq!(
        ids(&client.call("thread/list", json!({}))),
        vec![sound.id.clone()]
    );
    client.stop();
}

#[test]
fn ephemeral_threads_leave_no_files() {
    let home = scratch("threads-ephemeral");
    let mut client = Client::start(&home);
    let started = client.call("thread/start", json!({"ephemeral": true}));
    let thread = &started["thread"];
    let id = thread["id"].as_str().expect("id").to_owned();
    assert_eq!(thread["ephemeral"], json!(true));
    assert_eq!(thread["path"], Value::Null);
    assert_eq!(
        client.notification("thread/started")["thread"]["id"],
        json!(id)
    );
    assert_eq!(
        client.call("thread/read", json!({"threadId": id}))["thread"]["id"],
        json!(id)
    );
    assert_eq!(
        client.call("thread/loaded/list", json!({}))["data"],
        json!([id])
    );
    assert!(ids(&client.call("thread/list", json!({}))).is_empty());
    client.call(
        "thread/name/set",
        json!({"threadId": id, "name": "in memory"}),
    );
    assert_eq!(
        client.notification("thread/name/updated")["threadName"],
        json!("in memory")
    );
    let error = client.call_err("thread/archive", json!({"threadId": id}));
    assert_eq!(error["code"], json!(-32600));
    let fork = client.call("thread/fork", json!({"threadId": id, "ephemeral": true}));
    assert_eq!(fork["thread"]["path"], Value::Null);
    client.stop();
    assert_eq!(rollouts(&home), Vec::<String>::new());

    let mut client = Client::start(&home);
    assert_eq!(
        client.call_err("thread/read", json!({"threadId": id}))["code"],
        json!(-32600)
    );
    client.stop();
}

#[cfg(unix)]
#[test]
fn rollouts_outside_the_home_are_never_read() {
    let home = scratch("threads-outside");
    let outside = scratch("threads-outside-target");
    let fixture = Fixture::new(9, 1_770_000_000);
    let real = write_rollout(&outside, &fixture, &[("secret", "data")]);
    let dir = home.join("sessions/2026/01/02");
    std::fs::create_dir_all(&dir).expect("create sessions dir");
    std::os::unix::fs::symlink(&real, dir.join(real.file_name().expect("file name")))
        .expect("symlink into the home");
    std::os::unix::fs::symlink(outside.join("sessions"), home.join("sessions/linked"))
        .expect("symlinked directory");
    let mut client = Client::start(&home);
    assert!(ids(&client.call("thread/list", json!({}))).is_empty());
    let error = client.call_err("thread/read", json!({"threadId": fixture.id}));
    assert_eq!(error["code"], json!(-32600));
    client.stop();
}

/// A rollout in the home that belongs to another user (planted there, say, by someone with
/// write access to the directory) is neither listed nor read; the user's own beside it is.
/// Changing a file's owner needs root, as CI runs.
#[test]
fn rollouts_of_another_user_are_never_read() {
    let home = scratch("threads-other-user");
    let (ours, theirs) = (
        Fixture::new(10, 1_770_000_000),
        Fixture::new(11, 1_770_000_001),
    );
    write_rollout(&home, &ours, &[("mine", "kept")]);
    let planted = write_rollout(&home, &theirs, &[("planted", "data")]);
    std::os::unix::fs::chown(&planted, Some(65534), Some(65534))
        .expect("chown the planted rollout to nobody (the tests run as root)");
    let mut client = Client::start(&home);
    assert_eq!(
        ids(&client.call("thread/list", json!({}))),
        vec![ours.id.clone()]
    );
    client.call("thread/read", json!({"threadId": ours.id}));
    let error = client.call_err("thread/read", json!({"threadId": theirs.id}));
    assert_eq!(error["code"], json!(-32600), "{error}");
    client.stop();
}
