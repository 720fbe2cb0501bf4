//! `rollout/compress` end to end: cold rollouts are gzipped in the background and every thread
//! request keeps working on them (list, read, search, resume and a new turn, archive and
//! unarchive, an index rebuilt from the files); rollouts modified lately, and those of loaded
//! threads, stay plain; a corrupt `.gz` is an error that names it.
//!
//! A test makes its threads with one server, stops it, sets their rollouts' modification times
//! back and asks a second server to compress. The pass looks at live rollouts before archived
//! ones (`engine/store/src/compress.rs`), so once an archived cold rollout is compressed,
//! every live one has been looked at.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{home_and_workspace, scratch};

/// How long the background pass may take before a test gives up waiting.
const PATIENCE: Duration = Duration::from_secs(60);

fn start(home: &Path) -> Client {
    Client::start_with_capabilities(home, json!({"experimentalApi": true}))
}

/// A thread in `workspace` with one turn per entry of `inputs`; returns its id.
fn thread_with_turns(client: &mut Client, workspace: &Path, inputs: &[&str]) -> String {
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    for input in inputs {
        client.start_turn(&thread, input);
        let seen = client.until_turn_completed();
        let completed = seen.last().expect("turn/completed");
        assert_eq!(
            completed["params"]["turn"]["status"],
            json!("completed"),
            "{completed}"
        );
    }
    thread
}

/// The plain path of thread `id`'s rollout under `home` (live or archived), whichever form
/// is on disk.
fn rollout(home: &Path, id: &str) -> PathBuf {
    fn walk(dir: &Path, id: &str, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                walk(&path, id, found);
            } else if name.contains(id) && name.ends_with(".jsonl") {
                found.push(path);
            } else if name.contains(id) && name.ends_with(".jsonl.gz") {
                found.push(path.with_extension(""));
            }
        }
    }
    let mut found = Vec::new();
    for root in ["sessions", "archived_sessions"] {
        walk(&home.join(root), id, &mut found);
    }
    found.dedup();
    assert_eq!(found.len(), 1, "one rollout of {id}: {found:?}");
    found.remove(0)
}

fn gz(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".gz");
    PathBuf::from(name)
}

/// Sets the modification time of the file at `path` thirty days back.
fn age(path: &Path) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    file.set_modified(SystemTime::now() - Duration::from_secs(30 * 86_400))
        .unwrap_or_else(|e| panic!("age {}: {e}", path.display()));
}

/// Waits until the rollout at `path` (plain path) is compressed: its `.gz` there, itself gone.
fn wait_compressed(client: &Client, path: &Path) {
    let deadline = Instant::now() + PATIENCE;
    while path.exists() || !gz(path).exists() {
        assert!(
            Instant::now() < deadline,
            "{} was not compressed\nstderr:\n{}",
            path.display(),
            client.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The content of the gzip file at `path`.
fn gunzip(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut bytes)
        .unwrap_or_else(|e| panic!("{} is not valid gzip: {e}", path.display()));
    bytes
}

fn listed(client: &mut Client, archived: bool) -> Vec<String> {
    let page = client.call("thread/list", json!({"limit": 100, "archived": archived}));
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|t| t["id"].as_str().expect("id").to_owned())
        .collect()
}

fn turns(client: &mut Client, id: &str) -> Value {
    let read = client.call("thread/read", json!({"threadId": id, "includeTurns": true}));
    read["thread"]["turns"].clone()
}

#[test]
fn cold_rollouts_are_compressed_and_every_request_reads_them_as_before() {
    let root = scratch("rollout-compress");
    let (home, workspace) = home_and_workspace(&root);

    // Threads made, then the server stopped: none is loaded any more.
    let mut first = start(&home);
    let cold = thread_with_turns(&mut first, &workspace, &["Say hello.", "Now the zebra."]);
    let quiet = thread_with_turns(&mut first, &workspace, &["Quiet one."]);
    let fresh = thread_with_turns(&mut first, &workspace, &["Fresh one."]);
    let loaded = thread_with_turns(&mut first, &workspace, &["Loaded one."]);
    let shelved = thread_with_turns(&mut first, &workspace, &["Shelved one."]);
    first.call("thread/archive", json!({"threadId": shelved}));
    let cold_turns = turns(&mut first, &cold);
    let shelved_turns = turns(&mut first, &shelved);
    first.stop();

    let path = |id: &str| rollout(&home, id);
    for id in [&cold, &quiet, &shelved] {
        age(&path(id));
    }
    let cold_bytes = std::fs::read(path(&cold)).expect("read the cold rollout");
    let fresh_bytes = std::fs::read(path(&fresh)).expect("read the fresh rollout");

    let mut client = start(&home);
    // Loaded here (and aged after loading): it stays plain.
    client.call("thread/resume", json!({"threadId": loaded}));
    age(&path(&loaded));
    assert_eq!(client.call("rollout/compress", Value::Null), json!({}));
    // A second request while the pass may still run only acknowledges.
    assert_eq!(client.call("rollout/compress", Value::Null), json!({}));
    wait_compressed(&client, &path(&cold));
    wait_compressed(&client, &path(&quiet));
    wait_compressed(&client, &path(&shelved));

    assert_eq!(
        gunzip(&gz(&path(&cold))),
        cold_bytes,
        "the .gz holds the very bytes"
    );
    for (id, what) in [
        (&fresh, "a rollout modified lately"),
        (&loaded, "a loaded thread's rollout"),
    ] {
        assert!(
            path(id).exists() && !gz(&path(id)).exists(),
            "{what} was compressed"
        );
    }
    assert_eq!(std::fs::read(path(&fresh)).expect("fresh"), fresh_bytes);

    // Listing, reading and searching leave it compressed.
    let live = listed(&mut client, false);
    for id in [&cold, &quiet, &fresh, &loaded] {
        assert!(live.contains(id), "{id} not listed: {live:?}");
    }
    assert_eq!(listed(&mut client, true), [shelved.as_str()]);
    assert_eq!(turns(&mut client, &cold), cold_turns);
    let found = client.call("thread/search", json!({"searchTerm": "zebra"}));
    let found: Vec<&str> = found["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|r| r["thread"]["id"].as_str().expect("id"))
        .collect();
    assert_eq!(found, [cold.as_str()]);
    let plain = path(&cold).to_string_lossy().into_owned();
    let summary = client.call("getConversationSummary", json!({"rolloutPath": plain}));
    assert_eq!(
        summary["summary"]["conversationId"],
        json!(cold),
        "{summary}"
    );
    assert!(gz(&path(&cold)).exists() && !path(&cold).exists());

    // Paging turns reads by file position: the rollout is thawed for it, bytes unchanged.
    let page = client.call(
        "thread/turns/list",
        json!({"threadId": cold, "sortDirection": "asc", "itemsView": "full"}),
    );
    assert_eq!(page["data"], cold_turns, "{page}");
    assert_eq!(std::fs::read(path(&cold)).expect("thawed"), cold_bytes);
    assert!(!gz(&path(&cold)).exists());

    // Archive and unarchive move the compressed form.
    let archived_at = path(&shelved);
    client.call("thread/unarchive", json!({"threadId": shelved}));
    let live_at = path(&shelved);
    assert!(
        live_at.starts_with(home.join("sessions")),
        "{}",
        live_at.display()
    );
    assert!(gz(&live_at).exists() && !archived_at.exists() && !gz(&archived_at).exists());
    assert_eq!(turns(&mut client, &shelved), shelved_turns);
    client.call("thread/archive", json!({"threadId": shelved}));
    assert!(gz(&archived_at).exists() && !gz(&live_at).exists());

    // Resumed and given a turn: the rollout is plain again and holds old and new records.
    client.call("thread/resume", json!({"threadId": cold}));
    client.start_turn(&cold, "One more, about a giraffe.");
    client.until_turn_completed();
    let now = std::fs::read(path(&cold)).expect("the thawed rollout");
    assert!(!gz(&path(&cold)).exists());
    assert!(now.starts_with(&cold_bytes), "old records kept");
    assert!(
        String::from_utf8_lossy(now.get(cold_bytes.len()..).unwrap_or_default())
            .contains("giraffe"),
        "new records appended"
    );
    let resumed = turns(&mut client, &cold);
    assert_eq!(resumed.as_array().map(Vec::len), Some(3), "{resumed}");
    assert_eq!(resumed[0], cold_turns[0]);
    assert_eq!(resumed[1], cold_turns[1]);
    client.stop();

    // A restart without the index rebuilds it from the files, compressed ones included.
    for name in ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm"] {
        let _ = std::fs::remove_file(home.join(name));
    }
    let mut client = start(&home);
    let live = listed(&mut client, false);
    for id in [&cold, &quiet, &fresh, &loaded] {
        assert!(
            live.contains(id),
            "{id} not listed after the rebuild: {live:?}"
        );
    }
    assert_eq!(listed(&mut client, true), [shelved.as_str()]);
    assert!(
        gz(&path(&quiet)).exists(),
        "rebuilding the index leaves it compressed"
    );
    let quiet_turns = turns(&mut client, &quiet);
    assert_eq!(
        quiet_turns.as_array().map(Vec::len),
        Some(1),
        "{quiet_turns}"
    );
    client.stop();
}

#[test]
fn a_corrupt_compressed_rollout_is_an_error_naming_it() {
    let root = scratch("rollout-compress-corrupt");
    let (home, workspace) = home_and_workspace(&root);
    // Every rollout not loaded counts as cold.
    std::fs::write(
        home.join("config.toml"),
        "[store]\ncompress_after_days = 0\n",
    )
    .expect("write config");
    let mut first = start(&home);
    let broken = thread_with_turns(&mut first, &workspace, &["Soon broken."]);
    let sound = thread_with_turns(&mut first, &workspace, &["Still sound."]);
    first.stop();

    let mut client = start(&home);
    assert_eq!(client.call("rollout/compress", Value::Null), json!({}));
    let broken_at = rollout(&home, &broken);
    wait_compressed(&client, &broken_at);
    wait_compressed(&client, &rollout(&home, &sound));
    std::fs::write(gz(&broken_at), b"this is no gzip stream").expect("corrupt it");

    let name = gz(&broken_at)
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    for (method, params) in [
        (
            "thread/read",
            json!({"threadId": broken, "includeTurns": true}),
        ),
        ("thread/resume", json!({"threadId": broken})),
    ] {
        let error = client.call_err(method, params);
        let message = error["message"].as_str().expect("message");
        assert!(message.contains(&name), "{method}: {error}");
    }
    // Nothing was lost or left behind, and the server serves the other thread.
    assert_eq!(
        std::fs::read(gz(&broken_at)).expect("still there"),
        b"this is no gzip stream"
    );
    assert!(!broken_at.exists());
    assert_eq!(turns(&mut client, &sound).as_array().map(Vec::len), Some(1));
    assert!(listed(&mut client, false).contains(&sound));
    // Deleting a compressed thread removes its `.gz`.
    let sound_at = rollout(&home, &sound);
    client.call("thread/delete", json!({"threadId": sound}));
    assert!(!gz(&sound_at).exists() && !sound_at.exists());
    assert!(!listed(&mut client, false).contains(&sound));
    client.stop();
}
