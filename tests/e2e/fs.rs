//! `fs/*` through the binary: every method inside the workspace, the escapes that must fail
//! (`..`, absolute paths outside, symlinks leading out, `/proc/self/root`, a symlinked parent,
//! the agentwire home), a directory swapped for a symlink while writes run, `fs/watch` and
//! `fs/unwatch`, bad params naming their field, and the limits of `docs/fs.md` ("Limits"):
//! entries, nesting, watches, `watchId` and paths per `fs/changed`, each at the limit and one
//! past it; and a watch ending with its websocket connection. `docs/fs.md` lists the promises.

use std::collections::BTreeSet;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::app_server_ws::App;
use crate::client::Client;
use crate::common::{home_and_workspace, scratch, tree};
use crate::ws_conn::Conn;

/// `path` as a JSON string.
fn p(path: &Path) -> Value {
    json!(path.to_str().expect("utf-8 path"))
}

fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// A server whose home is `home`, with a thread loaded in `workspace` (its root for `fs/*`).
fn server(home: &Path, workspace: &Path) -> Client {
    let mut client = Client::start(home);
    client.start_thread(json!({"cwd": workspace}));
    client
}

/// Asserts that `method` with `params` fails with `code`, names `field` and `path` in the
/// message, and gives `reason` in `data`; returns the error.
fn refused(client: &mut Client, method: &str, params: Value, field: &str, reason: &str) -> Value {
    let error = client.call_err(method, params.clone());
    assert_eq!(error["code"], json!(-32602), "{method} {params}: {error}");
    let message = error["message"].as_str().expect("message");
    assert!(
        message.contains(&format!("`{field}`")) && message.contains(method),
        "{method}: the message should name `{field}`: {message}"
    );
    assert_eq!(error["data"]["field"], json!(field), "{error}");
    assert_eq!(
        error["data"]["reason"],
        json!(reason),
        "{method} {params}: {error}"
    );
    error
}

/// The names `fs/readDirectory` lists for `dir`, with (isDirectory, isFile).
fn listing(client: &mut Client, dir: &Path) -> Vec<(String, bool, bool)> {
    let answer = client.call("fs/readDirectory", json!({"path": p(dir)}));
    answer["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["fileName"].as_str().expect("fileName").to_owned(),
                e["isDirectory"].as_bool().expect("isDirectory"),
                e["isFile"].as_bool().expect("isFile"),
            )
        })
        .collect()
}

fn read(client: &mut Client, path: &Path) -> Vec<u8> {
    let answer = client.call("fs/readFile", json!({"path": p(path)}));
    STANDARD
        .decode(answer["dataBase64"].as_str().expect("dataBase64"))
        .expect("base64")
}

/// `root/outside` with a secret in it, and its listing to compare with later.
fn outside(root: &Path) -> (PathBuf, Vec<(PathBuf, Vec<u8>)>) {
    let outside = root.join("outside");
    std::fs::create_dir_all(outside.join("sub")).expect("outside dir");
    std::fs::write(outside.join("secret.txt"), "outside secret").expect("secret");
    let before = tree(&outside);
    (outside, before)
}

#[test]
fn every_method_works_inside_the_workspace() {
    let root = scratch("fs-happy");
    let (home, ws) = home_and_workspace(&root);
    let mut client = server(&home, &ws);

    // createDirectory: parents by default; exactly one without `recursive`.
    client.call("fs/createDirectory", json!({"path": p(&ws.join("a/b/c"))}));
    assert!(ws.join("a/b/c").is_dir());
    client.call("fs/createDirectory", json!({"path": p(&ws.join("a/b/c"))}));
    client.call(
        "fs/createDirectory",
        json!({"path": p(&ws.join("a/one")), "recursive": false}),
    );
    assert!(ws.join("a/one").is_dir());

    // writeFile + readFile: any bytes, atomically replaced, the mode kept.
    let bytes: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let file = ws.join("a/b/data.bin");
    client.call(
        "fs/writeFile",
        json!({"path": p(&file), "dataBase64": b64(&bytes)}),
    );
    assert_eq!(std::fs::read(&file).expect("written"), bytes);
    assert_eq!(read(&mut client, &file), bytes);
    let script = ws.join("run.sh");
    std::fs::write(&script, "old").expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).expect("chmod");
    client.call(
        "fs/writeFile",
        json!({"path": p(&script), "dataBase64": b64(b"#!/bin/sh\n")}),
    );
    assert_eq!(std::fs::read(&script).expect("script"), b"#!/bin/sh\n");
    let mode = std::fs::metadata(&script)
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750, "the mode is kept");
    // A `..` that stays inside is fine (the path is made absolute lexically first).
    let dotted = ws.join("a/b/c/../data.bin");
    assert_eq!(read(&mut client, &dotted), bytes);
    // A symlink that stays inside is followed.
    symlink("a/b/data.bin", ws.join("inside-link")).expect("symlink");
    assert_eq!(read(&mut client, &ws.join("inside-link")), bytes);

    // getMetadata.
    let meta = client.call("fs/getMetadata", json!({"path": p(&file)}));
    assert_eq!(meta["isFile"], json!(true), "{meta}");
    assert_eq!(meta["isDirectory"], json!(false), "{meta}");
    assert_eq!(meta["isSymlink"], json!(false), "{meta}");
    let modified = std::fs::metadata(&file)
        .expect("meta")
        .modified()
        .expect("mtime")
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64;
    assert_eq!(meta["modifiedAtMs"], json!(modified), "{meta}");
    assert!(meta["createdAtMs"].as_i64().expect("createdAtMs") >= 0);
    let meta = client.call(
        "fs/getMetadata",
        json!({"path": p(&ws.join("inside-link"))}),
    );
    assert_eq!(
        (&meta["isSymlink"], &meta["isFile"]),
        (&json!(true), &json!(true)),
        "{meta}"
    );
    let meta = client.call("fs/getMetadata", json!({"path": p(&ws)}));
    assert_eq!(meta["isDirectory"], json!(true), "{meta}");

    // readDirectory: sorted, symlinks described by what they point to inside.
    symlink("a", ws.join("dir-link")).expect("symlink");
    assert_eq!(
        listing(&mut client, &ws),
        vec![
            ("a".to_owned(), true, false),
            ("dir-link".to_owned(), true, false),
            ("inside-link".to_owned(), false, true),
            ("run.sh".to_owned(), false, true),
        ]
    );

    // A dangling symlink is described as itself.
    symlink("nowhere", ws.join("dangling")).expect("symlink");
    let meta = client.call("fs/getMetadata", json!({"path": p(&ws.join("dangling"))}));
    assert_eq!(
        (&meta["isSymlink"], &meta["isFile"], &meta["isDirectory"]),
        (&json!(true), &json!(false), &json!(false)),
        "{meta}"
    );
    client.call("fs/remove", json!({"path": p(&ws.join("dangling"))}));
    assert!(std::fs::symlink_metadata(ws.join("dangling")).is_err());

    // copy: a file (replacing one), a tree (symlinks copied as symlinks).
    client.call(
        "fs/copy",
        json!({"sourcePath": p(&file), "destinationPath": p(&ws.join("copy.bin"))}),
    );
    assert_eq!(std::fs::read(ws.join("copy.bin")).expect("copy"), bytes);
    symlink("../data.bin", ws.join("a/b/c/up")).expect("symlink");
    client.call(
        "fs/copy",
        json!({"sourcePath": p(&ws.join("a")), "destinationPath": p(&ws.join("a2")), "recursive": true}),
    );
    assert_eq!(tree(&ws.join("a")), tree(&ws.join("a2")));
    assert_eq!(
        std::fs::read_link(ws.join("a2/b/c/up")).expect("link copied"),
        PathBuf::from("../data.bin")
    );

    // remove: a file, a symlink (not its target), a tree; a missing path is fine by default.
    client.call("fs/remove", json!({"path": p(&ws.join("copy.bin"))}));
    assert!(!ws.join("copy.bin").exists());
    client.call("fs/remove", json!({"path": p(&ws.join("inside-link"))}));
    assert!(file.exists(), "the link's target stays");
    client.call("fs/remove", json!({"path": p(&ws.join("a2"))}));
    assert!(!ws.join("a2").exists());
    client.call("fs/remove", json!({"path": p(&ws.join("never-was"))}));
    refused(
        &mut client,
        "fs/remove",
        json!({"path": p(&ws.join("never-was")), "force": false}),
        "path",
        "notFound",
    );
    refused(
        &mut client,
        "fs/remove",
        json!({"path": p(&ws.join("a")), "recursive": false}),
        "path",
        "notEmpty",
    );
    assert!(ws.join("a/b/c").is_dir());
}

#[test]
fn escapes_are_refused_and_nothing_outside_changes() {
    let root = scratch("fs-escape");
    let (home, ws) = home_and_workspace(&root);
    let (outside, before) = outside(&root);
    std::fs::write(ws.join("ok.txt"), "inside").expect("inside file");
    symlink(&outside, ws.join("abs-link")).expect("symlink");
    symlink("../outside", ws.join("rel-link")).expect("symlink");
    symlink(outside.join("secret.txt"), ws.join("secret-link")).expect("symlink");
    symlink("/proc/self/root", ws.join("proc-root")).expect("symlink");

    // Before a thread is loaded, the workspace is no root (the server's cwd is).
    let mut client = Client::start(&home);
    refused(
        &mut client,
        "fs/readFile",
        json!({"path": p(&ws.join("ok.txt"))}),
        "path",
        "outsideRoots",
    );
    client.start_thread(json!({"cwd": ws}));
    assert_eq!(read(&mut client, &ws.join("ok.txt")), b"inside");

    let secret = outside.join("secret.txt");
    // `..` out of the workspace, and absolute paths outside.
    let dotdot = ws.join("../outside/secret.txt");
    for path in [&dotdot, &secret, &PathBuf::from("/etc/passwd")] {
        refused(
            &mut client,
            "fs/readFile",
            json!({"path": p(path)}),
            "path",
            "outsideRoots",
        );
    }
    refused(
        &mut client,
        "fs/writeFile",
        json!({"path": p(&ws.join("../outside/new.txt")), "dataBase64": b64(b"x")}),
        "path",
        "outsideRoots",
    );
    // /proc/self/root, directly and through a symlink inside.
    refused(
        &mut client,
        "fs/readFile",
        json!({"path": format!("/proc/self/root{}", secret.display())}),
        "path",
        "outsideRoots",
    );
    refused(
        &mut client,
        "fs/readFile",
        json!({"path": p(&ws.join("proc-root").join(secret.strip_prefix("/").expect("abs")))}),
        "path",
        "escapesRoots",
    );
    // Symlinks inside pointing outside: read, write, mkdir, copy and remove through them.
    for link in ["abs-link", "rel-link"] {
        let through = ws.join(link);
        let reason = "escapesRoots";
        refused(
            &mut client,
            "fs/readFile",
            json!({"path": p(&through.join("secret.txt"))}),
            "path",
            reason,
        );
        refused(
            &mut client,
            "fs/writeFile",
            json!({"path": p(&through.join("new.txt")), "dataBase64": b64(b"x")}),
            "path",
            reason,
        );
        refused(
            &mut client,
            "fs/writeFile",
            json!({"path": p(&through.join("secret.txt")), "dataBase64": b64(b"x")}),
            "path",
            reason,
        );
        refused(
            &mut client,
            "fs/createDirectory",
            json!({"path": p(&through.join("made/deeper"))}),
            "path",
            reason,
        );
        refused(
            &mut client,
            "fs/createDirectory",
            json!({"path": p(&through.join("made")), "recursive": false}),
            "path",
            reason,
        );
        refused(
            &mut client,
            "fs/remove",
            json!({"path": p(&through.join("secret.txt"))}),
            "path",
            reason,
        );
        refused(
            &mut client,
            "fs/remove",
            json!({"path": p(&through.join("sub"))}),
            "path",
            reason,
        );
        refused(
            &mut client,
            "fs/readDirectory",
            json!({"path": p(&through)}),
            "path",
            reason,
        );
        refused(
            &mut client,
            "fs/getMetadata",
            json!({"path": p(&through.join("secret.txt"))}),
            "path",
            reason,
        );
        refused(
            &mut client,
            "fs/copy",
            json!({"sourcePath": p(&through.join("secret.txt")), "destinationPath": p(&ws.join("stolen.txt"))}),
            "sourcePath",
            reason,
        );
        refused(
            &mut client,
            "fs/copy",
            json!({"sourcePath": p(&through), "destinationPath": p(&ws.join("stolen")), "recursive": true}),
            "sourcePath",
            reason,
        );
        refused(
            &mut client,
            "fs/copy",
            json!({"sourcePath": p(&ws.join("ok.txt")), "destinationPath": p(&through.join("planted.txt"))}),
            "destinationPath",
            reason,
        );
        refused(
            &mut client,
            "fs/watch",
            json!({"watchId": link, "path": p(&through)}),
            "path",
            reason,
        );
    }
    // A symlink to a file outside: reading it is refused; listing shows neither file nor dir.
    refused(
        &mut client,
        "fs/readFile",
        json!({"path": p(&ws.join("secret-link"))}),
        "path",
        "escapesRoots",
    );
    let entries = listing(&mut client, &ws);
    assert!(
        entries.contains(&("secret-link".to_owned(), false, false)),
        "{entries:?}"
    );
    assert!(
        entries.contains(&("abs-link".to_owned(), false, false)),
        "{entries:?}"
    );
    // Removing a link removes the link, never what it points to.
    client.call("fs/remove", json!({"path": p(&ws.join("abs-link"))}));
    assert!(!ws.join("abs-link").exists() && outside.join("sub").is_dir());
    // Writing over a link replaces the link; the file outside stays as it was.
    client.call(
        "fs/writeFile",
        json!({"path": p(&ws.join("secret-link")), "dataBase64": b64(b"replaced")}),
    );
    assert_eq!(
        std::fs::read(ws.join("secret-link")).expect("file"),
        b"replaced"
    );
    assert!(
        !std::fs::symlink_metadata(ws.join("secret-link"))
            .expect("meta")
            .is_symlink()
    );

    assert!(!ws.join("stolen.txt").exists() && !ws.join("stolen").exists());
    assert_eq!(
        tree(&outside),
        before,
        "nothing outside the workspace changed"
    );
    assert!(!root.join("made").exists());
}

#[test]
fn the_agentwire_home_is_never_touched_even_inside_the_workspace() {
    let root = scratch("fs-home");
    let ws = root.join("workspace");
    let state = ws.join("state");
    let home = state.join("home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join("auth.json"), r#"{"token":"sekrit"}"#).expect("auth");
    std::fs::write(state.join("notes.txt"), "notes").expect("notes");
    symlink("state/home/auth.json", ws.join("auth-link")).expect("symlink");
    symlink("state/home", ws.join("home-link")).expect("symlink");
    let mut client = server(&home, &ws);

    let auth = home.join("auth.json");
    refused(
        &mut client,
        "fs/readFile",
        json!({"path": p(&auth)}),
        "path",
        "private",
    );
    refused(
        &mut client,
        "fs/readFile",
        json!({"path": p(&ws.join("auth-link"))}),
        "path",
        "private",
    );
    refused(
        &mut client,
        "fs/readFile",
        json!({"path": p(&ws.join("home-link/auth.json"))}),
        "path",
        "private",
    );
    refused(
        &mut client,
        "fs/readDirectory",
        json!({"path": p(&home)}),
        "path",
        "private",
    );
    refused(
        &mut client,
        "fs/getMetadata",
        json!({"path": p(&auth)}),
        "path",
        "private",
    );
    refused(
        &mut client,
        "fs/writeFile",
        json!({"path": p(&auth), "dataBase64": b64(b"{}")}),
        "path",
        "private",
    );
    refused(
        &mut client,
        "fs/remove",
        json!({"path": p(&auth)}),
        "path",
        "private",
    );
    refused(
        &mut client,
        "fs/remove",
        json!({"path": p(&home)}),
        "path",
        "private",
    );
    refused(
        &mut client,
        "fs/remove",
        json!({"path": p(&state)}),
        "path",
        "private",
    );
    refused(
        &mut client,
        "fs/createDirectory",
        json!({"path": p(&home.join("planted"))}),
        "path",
        "private",
    );
    refused(
        &mut client,
        "fs/copy",
        json!({"sourcePath": p(&auth), "destinationPath": p(&ws.join("stolen.json"))}),
        "sourcePath",
        "private",
    );
    refused(
        &mut client,
        "fs/copy",
        json!({"sourcePath": p(&state), "destinationPath": p(&ws.join("stolen")), "recursive": true}),
        "sourcePath",
        "private",
    );
    refused(
        &mut client,
        "fs/watch",
        json!({"watchId": "home", "path": p(&home)}),
        "path",
        "private",
    );
    // The rest of the workspace stays usable, the home's name included in listings.
    assert_eq!(read(&mut client, &state.join("notes.txt")), b"notes");
    assert!(listing(&mut client, &state).contains(&("home".to_owned(), true, false)));
    assert_eq!(
        std::fs::read(&auth).expect("auth.json still there"),
        br#"{"token":"sekrit"}"#
    );
    assert!(!ws.join("stolen.json").exists() && !ws.join("stolen").exists());
    assert!(!home.join("planted").exists());
}

#[test]
fn a_directory_swapped_for_a_symlink_never_lets_a_write_out() {
    let root = scratch("fs-race");
    let (home, ws) = home_and_workspace(&root);
    let (outside, before) = outside(&root);
    let dir = ws.join("dir");
    let parked = ws.join("dir.real");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("secret.txt"), "inside").expect("inside copy");
    let mut client = server(&home, &ws);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = {
        let (stop, dir, parked, outside) =
            (stop.clone(), dir.clone(), parked.clone(), outside.clone());
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                std::fs::rename(&dir, &parked).expect("park the directory");
                symlink(&outside, &dir).expect("put the symlink in its place");
                std::fs::remove_file(&dir).expect("take the symlink away");
                std::fs::rename(&parked, &dir).expect("put the directory back");
                swaps += 1;
            }
            swaps
        })
    };
    let mut written = 0;
    for n in 0..400 {
        let answer = client.request(
            "fs/writeFile",
            json!({"path": p(&dir.join(format!("f{n}.txt"))), "dataBase64": b64(b"payload")}),
        );
        if answer.is_ok() {
            written += 1;
        }
        if let Ok(answer) =
            client.request("fs/readFile", json!({"path": p(&dir.join("secret.txt"))}))
        {
            assert_eq!(
                answer["dataBase64"],
                json!(b64(b"inside")),
                "read the outside secret"
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swaps.join().expect("swapper");
    assert!(swaps > 0);
    assert_eq!(
        tree(&outside),
        before,
        "a write landed outside the workspace"
    );
    let landed = std::fs::read_dir(&dir)
        .expect("dir")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with('f'))
        })
        .count();
    assert_eq!(landed, written, "every accepted write is in the workspace");
}

/// Waits for the next `fs/changed` of `watch_id`, keeping the others in the backlog.
fn changed(client: &mut Client, watch_id: &str) -> Vec<String> {
    let mut others = Vec::new();
    let found = loop {
        let params = client.notification("fs/changed");
        if params["watchId"] == json!(watch_id) {
            break params;
        }
        others.push(json!({"method": "fs/changed", "params": params}));
    };
    for other in others.into_iter().rev() {
        client.notifications.push_front(other);
    }
    found["changedPaths"]
        .as_array()
        .expect("changedPaths")
        .iter()
        .map(|v| v.as_str().expect("path").to_owned())
        .collect()
}

#[test]
fn watch_reports_changes_coalesced_until_unwatched() {
    let root = scratch("fs-watch");
    let (home, ws) = home_and_workspace(&root);
    std::fs::create_dir_all(ws.join("marker")).expect("marker dir");
    let real = std::fs::canonicalize(&ws).expect("canonical");
    let mut client = server(&home, &ws);

    let answer = client.call("fs/watch", json!({"watchId": "dir", "path": p(&ws)}));
    assert_eq!(answer["path"], p(&real));
    // A change made by someone else is reported with the changed path.
    std::fs::write(ws.join("external.txt"), "x").expect("write");
    let paths = changed(&mut client, "dir");
    assert!(
        paths.contains(&real.join("external.txt").display().to_string()),
        "{paths:?}"
    );

    // A file watch sees an atomic save through fs/writeFile (and not the temporary file).
    let notes = ws.join("notes.txt");
    std::fs::write(&notes, "v1").expect("notes");
    client.call("fs/watch", json!({"watchId": "file", "path": p(&notes)}));
    client.notifications.clear();
    client.call(
        "fs/writeFile",
        json!({"path": p(&notes), "dataBase64": b64(b"v2")}),
    );
    assert_eq!(
        changed(&mut client, "file"),
        vec![real.join("notes.txt").display().to_string()]
    );
    let of = |client: &Client, id: &str| -> Vec<Value> {
        client
            .notifications
            .iter()
            .filter(|n| n["method"] == json!("fs/changed") && n["params"]["watchId"] == json!(id))
            .map(|n| n["params"].clone())
            .collect()
    };
    // Reading is no change.
    read(&mut client, &notes);
    client.call("fs/getMetadata", json!({"path": p(&notes)}));
    settle(&mut client, &ws, "m0");
    assert_eq!(
        of(&client, "file"),
        Vec::<Value>::new(),
        "a read reported as a change"
    );

    // A burst of writes is gathered into a few notifications.
    client.notifications.clear();
    for n in 0..1000 {
        std::fs::write(&notes, format!("burst {n}")).expect("burst");
    }
    settle(&mut client, &ws, "m1");
    let burst = of(&client, "file").len();
    assert!(
        (1..100).contains(&burst),
        "1000 writes gave {burst} notifications"
    );
    let dir_paths = of(&client, "dir");
    assert!(
        dir_paths
            .iter()
            .all(|n| !n.to_string().contains(".agentwire-write.")),
        "the temporary file of an atomic write is not reported: {dir_paths:?}"
    );

    // After fs/unwatch answers, nothing more comes for that watch.
    client.call("fs/unwatch", json!({"watchId": "dir"}));
    client.call("fs/unwatch", json!({"watchId": "file"}));
    client.notifications.clear();
    std::fs::write(ws.join("after.txt"), "x").expect("write");
    std::fs::write(&notes, "after").expect("write");
    settle(&mut client, &ws, "m2");
    let late: Vec<Value> = [of(&client, "dir"), of(&client, "file")].concat();
    assert!(late.is_empty(), "notifications after fs/unwatch: {late:?}");

    // The id is free again; an unknown id and a taken one are refused naming `watchId`.
    let error = client.call_err("fs/unwatch", json!({"watchId": "dir"}));
    assert_eq!(error["code"], json!(-32600), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("`watchId` \"dir\""),
        "{error}"
    );
    client.call("fs/watch", json!({"watchId": "dir", "path": p(&ws)}));
    let error = client.call_err("fs/watch", json!({"watchId": "dir", "path": p(&ws)}));
    assert_eq!(error["code"], json!(-32600), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("`watchId`"),
        "{error}"
    );

    // At most 64 watches per connection.
    for n in 1..64 {
        client.call(
            "fs/watch",
            json!({"watchId": format!("w{n}"), "path": p(&ws)}),
        );
    }
    let error = client.call_err(
        "fs/watch",
        json!({"watchId": "one-too-many", "path": p(&ws)}),
    );
    assert_eq!(error["code"], json!(-32600), "{error}");
    assert!(
        error["message"].as_str().expect("message").contains("64"),
        "{error}"
    );
}

/// Makes sure every `fs/changed` for changes made so far is in the backlog: watches
/// `ws/marker`, changes it, waits for its notification, and ends the watch — `fs/unwatch`
/// answers only once notifications being sent are out, so it is a barrier.
fn settle(client: &mut Client, ws: &Path, name: &str) {
    client.call(
        "fs/watch",
        json!({"watchId": "marker", "path": p(&ws.join("marker"))}),
    );
    std::fs::write(ws.join("marker").join(name), "m").expect("marker");
    changed(client, "marker");
    client.call("fs/unwatch", json!({"watchId": "marker"}));
}

#[test]
fn bad_params_and_wrong_kinds_name_the_field_and_the_reason() {
    let root = scratch("fs-bad");
    let (home, ws) = home_and_workspace(&root);
    std::fs::create_dir_all(ws.join("dir")).expect("dir");
    std::fs::write(ws.join("file.txt"), "x").expect("file");
    let mut client = server(&home, &ws);

    // Missing or mistyped members: the schema names them by JSON pointer.
    let error = client.call_err("fs/readFile", json!({}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(error.to_string().contains("path"), "{error}");
    let error = client.call_err("fs/writeFile", json!({"path": p(&ws.join("f"))}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(error.to_string().contains("dataBase64"), "{error}");
    let error = client.call_err(
        "fs/copy",
        json!({"sourcePath": p(&ws), "destinationPath": 3}),
    );
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(error.to_string().contains("destinationPath"), "{error}");

    refused(
        &mut client,
        "fs/readFile",
        json!({"path": "relative/file.txt"}),
        "path",
        "notAbsolute",
    );
    refused(
        &mut client,
        "fs/copy",
        json!({"sourcePath": p(&ws.join("file.txt")), "destinationPath": "rel"}),
        "destinationPath",
        "notAbsolute",
    );
    refused(
        &mut client,
        "fs/writeFile",
        json!({"path": p(&ws.join("f")), "dataBase64": "not base64!"}),
        "dataBase64",
        "refused",
    );
    refused(
        &mut client,
        "fs/readFile",
        json!({"path": p(&ws.join("missing"))}),
        "path",
        "notFound",
    );
    refused(
        &mut client,
        "fs/readFile",
        json!({"path": p(&ws.join("dir"))}),
        "path",
        "isADirectory",
    );
    refused(
        &mut client,
        "fs/readDirectory",
        json!({"path": p(&ws.join("file.txt"))}),
        "path",
        "notADirectory",
    );
    refused(
        &mut client,
        "fs/writeFile",
        json!({"path": p(&ws.join("no/such/dir/f")), "dataBase64": b64(b"x")}),
        "path",
        "parentNotFound",
    );
    refused(
        &mut client,
        "fs/writeFile",
        json!({"path": p(&ws.join("dir")), "dataBase64": b64(b"x")}),
        "path",
        "isADirectory",
    );
    refused(
        &mut client,
        "fs/createDirectory",
        json!({"path": p(&ws.join("dir")), "recursive": false}),
        "path",
        "alreadyExists",
    );
    refused(
        &mut client,
        "fs/createDirectory",
        json!({"path": p(&ws.join("file.txt/sub"))}),
        "path",
        "notADirectory",
    );
    refused(
        &mut client,
        "fs/remove",
        json!({"path": p(&ws)}),
        "path",
        "isARoot",
    );
    refused(
        &mut client,
        "fs/copy",
        json!({"sourcePath": p(&ws.join("dir")), "destinationPath": p(&ws.join("dir2"))}),
        "sourcePath",
        "refused",
    );
    refused(
        &mut client,
        "fs/copy",
        json!({"sourcePath": p(&ws.join("dir")), "destinationPath": p(&ws.join("dir/inner")), "recursive": true}),
        "destinationPath",
        "intoItself",
    );
    refused(
        &mut client,
        "fs/copy",
        json!({"sourcePath": p(&ws.join("dir")), "destinationPath": p(&ws.join("file.txt")), "recursive": true}),
        "destinationPath",
        "alreadyExists",
    );
    let error = client.call_err("fs/watch", json!({"watchId": "", "path": p(&ws)}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains("`watchId`"),
        "{error}"
    );

    // A FIFO is refused at once rather than waited on.
    let fifo = ws.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    refused(
        &mut client,
        "fs/readFile",
        json!({"path": p(&fifo)}),
        "path",
        "notARegularFile",
    );

    // Size limits, named in the message: 16 MiB each way.
    let limit = 16 * 1024 * 1024u64;
    let big = ws.join("big.bin");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(limit + 1))
        .expect("sparse file");
    let error = refused(
        &mut client,
        "fs/readFile",
        json!({"path": p(&big)}),
        "path",
        "tooLarge",
    );
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains(&limit.to_string()),
        "{error}"
    );
    let too_much = b64(&vec![0u8; (limit + 1) as usize]);
    let error = refused(
        &mut client,
        "fs/writeFile",
        json!({"path": p(&ws.join("huge.bin")), "dataBase64": too_much}),
        "dataBase64",
        "tooLarge",
    );
    assert!(
        error["message"]
            .as_str()
            .expect("message")
            .contains(&limit.to_string()),
        "{error}"
    );
    assert!(!ws.join("huge.bin").exists());
    // Exactly the limit is fine.
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(limit))
        .expect("resize");
    assert_eq!(read(&mut client, &big).len() as u64, limit);
}

/// Asserts that the message of `error` names `limit` (outside the path it quotes, so a digit of
/// the path does not count).
fn names_limit(error: &Value, limit: usize) {
    let message = error["message"].as_str().expect("message");
    let without_path = match error["data"]["path"].as_str() {
        Some(path) if !path.is_empty() => message.replace(path, ""),
        _ => message.to_owned(),
    };
    assert!(
        without_path.contains(&limit.to_string()),
        "the message should name the limit {limit}: {error}"
    );
}

/// The number of entries of `dir`, read directly.
fn entry_count(dir: &Path) -> usize {
    std::fs::read_dir(dir).expect("read dir").count()
}

/// The name of the `n`th entry made by [`links`] (names sort like their numbers).
fn nth(n: usize) -> String {
    format!("p{n:06}")
}

/// Creates the dangling symlinks [`nth`]`(n)` for each `n` of `range` in `dir` (one call each
/// to make, and to copy).
fn links(dir: &Path, range: std::ops::Range<usize>) {
    for n in range {
        symlink("nowhere", dir.join(nth(n))).expect("symlink");
    }
}

/// Asserts that a recursive `fs/copy` of `from` to `to` is refused on `sourcePath` for
/// `reason`; returns the error.
fn refused_copy(client: &mut Client, from: &Path, to: &Path, reason: &str) -> Value {
    let params = json!({"sourcePath": p(from), "destinationPath": p(to), "recursive": true});
    refused(client, "fs/copy", params, "sourcePath", reason)
}

/// Creates `top` and `levels` directories nested below it (`top/d/d/…`); returns the deepest.
fn nested(top: &Path, levels: usize) -> PathBuf {
    let deepest = (0..levels).fold(top.to_path_buf(), |dir, _| dir.join("d"));
    std::fs::create_dir_all(&deepest).expect("nested dirs");
    deepest
}

/// The 100,000-entry limits (docs/fs.md lines 71-72, "Limits": "`fs/readDirectory` entries |
/// 100,000 | `tooManyEntries`", "`fs/copy` tree entries | 100,000 | `tooManyEntries`").
/// `fs/readDirectory` lists a directory of exactly 100,000 entries in full and refuses one of
/// 100,001. `fs/copy` copies a tree of exactly 100,000 entries (symlinks, which cost one call
/// each to copy) and refuses 100,001, in one directory or over a tree (1 + 100,000, no
/// directory of it over the limit), before making anything. The source is left as it was.
#[test]
fn listing_and_copy_take_100_000_entries_and_refuse_one_more() {
    const LIMIT: usize = 100_000;
    let root = scratch("fs-many");
    let (home, ws) = home_and_workspace(&root);
    let big = ws.join("big");
    std::fs::create_dir(&big).expect("big dir");
    links(&big, 0..LIMIT);
    let mut client = server(&home, &ws);

    // Exactly the limit: every entry listed, sorted, and copied.
    let listed = listing(&mut client, &big);
    assert_eq!(listed.len(), LIMIT);
    assert_eq!(listed[0], (nth(0), false, false));
    assert_eq!(listed[LIMIT - 1], (nth(LIMIT - 1), false, false));
    let copied = ws.join("copy-1");
    client.call(
        "fs/copy",
        json!({"sourcePath": p(&big), "destinationPath": p(&copied), "recursive": true}),
    );
    assert_eq!(entry_count(&copied), LIMIT, "every entry copied");
    std::fs::remove_dir_all(&copied).expect("remove the copy");

    // A tree of 1 + 100,000 entries: each directory alone is within the limit, the tree is not.
    let tree_dir = ws.join("tree");
    std::fs::create_dir(&tree_dir).expect("tree dir");
    let big = tree_dir.join("big");
    std::fs::rename(ws.join("big"), &big).expect("move big into tree");
    let error = refused_copy(&mut client, &tree_dir, &ws.join("copy-2"), "tooManyEntries");
    names_limit(&error, LIMIT);
    let at = error["data"]["path"].as_str().expect("data.path");
    assert!(Path::new(at).starts_with(&tree_dir), "{error}");
    assert_eq!(entry_count(&big), LIMIT, "the source is untouched");
    assert!(!ws.join("copy-2").exists(), "a refused copy makes nothing");

    // One more entry in a directory: neither listed nor copied.
    links(&big, LIMIT..LIMIT + 1);
    let error = refused(
        &mut client,
        "fs/readDirectory",
        json!({"path": p(&big)}),
        "path",
        "tooManyEntries",
    );
    names_limit(&error, LIMIT);
    assert_eq!(error["data"]["path"], p(&big), "{error}");
    let error = refused_copy(&mut client, &big, &ws.join("copy-3"), "tooManyEntries");
    names_limit(&error, LIMIT);
    assert_eq!(entry_count(&big), LIMIT + 1, "the source is untouched");
    assert!(!ws.join("copy-3").exists(), "a refused copy makes nothing");

    drop(client);
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// The nesting limit (docs/fs.md line 73, "Limits": "`fs/remove` / `fs/copy` nesting | 256
/// levels | `tooDeep`"), counted in directories below the one named. 257, a file at every
/// level: `fs/remove` is refused before it removes anything; 256 with a file in the deepest:
/// `fs/copy` copies it whole (the walk holds no stack frame per level, so even the debug
/// build has room) and `fs/remove` removes the copy; 257 again: `fs/copy` is refused and makes
/// nothing; and the server still serves afterwards.
#[test]
fn remove_and_copy_walk_256_levels_and_refuse_257() {
    const LIMIT: usize = 256;
    let root = scratch("fs-deep");
    let (home, ws) = home_and_workspace(&root);
    let top = ws.join("deep");
    let too_deep = nested(&top, LIMIT + 1);
    let deepest = too_deep.parent().expect("a parent").to_path_buf();
    let levels: Vec<PathBuf> = too_deep
        .ancestors()
        .take(LIMIT + 2)
        .map(Path::to_path_buf)
        .collect();
    for level in &levels {
        std::fs::write(level.join("kept.txt"), "kept").expect("a file at every level");
    }
    let mut client = server(&home, &ws);

    let error = refused(
        &mut client,
        "fs/remove",
        json!({"path": p(&top)}),
        "path",
        "tooDeep",
    );
    names_limit(&error, LIMIT);
    let at = error["data"]["path"].as_str().expect("data.path");
    assert!(Path::new(at).starts_with(&top), "{error}");
    let removed: Vec<_> = levels
        .iter()
        .filter(|level| !level.join("kept.txt").exists())
        .collect();
    assert!(
        removed.is_empty(),
        "a refused remove removed files: {removed:?}"
    );

    // 256 levels and a file: copied whole, the copy removed.
    std::fs::remove_dir_all(&too_deep).expect("one level less");
    std::fs::write(deepest.join("leaf.txt"), "leaf").expect("leaf");
    let copy = ws.join("copy-256");
    client.call(
        "fs/copy",
        json!({"sourcePath": p(&top), "destinationPath": p(&copy), "recursive": true}),
    );
    let copied = copy.join(deepest.strip_prefix(&top).expect("under top"));
    assert_eq!(
        std::fs::read(copied.join("leaf.txt")).expect("the leaf is copied"),
        b"leaf"
    );
    client.call("fs/remove", json!({"path": p(&copy)}));
    assert!(!copy.exists(), "the 256-level copy is removed");

    // 257 levels: the copy is refused.
    std::fs::create_dir(&too_deep).expect("one level more");
    let error = refused_copy(&mut client, &top, &ws.join("copy-257"), "tooDeep");
    names_limit(&error, LIMIT);
    let at = error["data"]["path"].as_str().expect("data.path");
    assert!(Path::new(at).starts_with(&top), "{error}");
    assert!(
        !ws.join("copy-257").exists(),
        "a refused copy makes nothing"
    );

    // The server is still there: one level less, and the tree is removed.
    std::fs::remove_dir(&too_deep).expect("one level less");
    client.call("fs/remove", json!({"path": p(&top)}));
    assert!(!top.exists(), "the 256-level tree is removed");

    drop(client);
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// The server-wide watch limit (docs/fs.md line 75: "watches per server | 1,024 | -32600"),
/// over 16 websocket connections of 64 watches each (the per-connection limit), all on one
/// directory (one kernel watch): the 1,025th is refused naming the limit and leaves nothing
/// behind (its `watchId` is taken again later); after one `fs/unwatch` one more is accepted,
/// and the next is refused again.
#[test]
fn the_server_holds_1024_watches_and_one_more_after_an_unwatch() {
    const TOTAL: usize = 1024;
    const PER_CONNECTION: usize = 64;
    let root = scratch("fs-watch-total");
    let (home, ws) = home_and_workspace(&root);
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let addr = app.listening_addr();
    let mut conns: Vec<Conn> = (0..TOTAL / PER_CONNECTION)
        .map(|_| Conn::open(addr))
        .collect();
    conns[0].call("thread/start", json!({"cwd": ws}));
    for conn in &mut conns {
        for n in 0..PER_CONNECTION {
            conn.call(
                "fs/watch",
                json!({"watchId": format!("w{n}"), "path": p(&ws)}),
            );
        }
    }

    let mut last = Conn::open(addr);
    let over = |conn: &mut Conn, id: &str| {
        let error = conn.call_err("fs/watch", json!({"watchId": id, "path": p(&ws)}));
        assert_eq!(error["code"], json!(-32600), "{error}");
        names_limit(&error, TOTAL);
    };
    over(&mut last, "extra");
    conns[0].call("fs/unwatch", json!({"watchId": "w0"}));
    last.call("fs/watch", json!({"watchId": "extra", "path": p(&ws)}));
    over(&mut last, "extra-2");
    over(&mut conns[0], "w0");

    drop((conns, last, app));
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// The `watchId` length (docs/fs.md line 76: "`watchId` | 1–256 bytes | -32602 on
/// `watchId`"): 256 bytes are accepted whole (in ASCII and as 128 two-byte characters) and
/// come back in `fs/changed`; 257 bytes (also as 256 characters) are refused naming the field
/// and the limit, and register nothing (`fs/unwatch` does not know them). `data` names the
/// field, as docs/fs.md lines 115-117 ("Errors") say of every refusal.
#[test]
fn a_watch_id_of_256_bytes_is_accepted_and_257_refused() {
    const LIMIT: usize = 256;
    let root = scratch("fs-watch-id");
    let (home, ws) = home_and_workspace(&root);
    let mut client = server(&home, &ws);

    let ascii = "w".repeat(LIMIT);
    let accented = "é".repeat(LIMIT / 2);
    assert_eq!(accented.len(), LIMIT);
    for id in [&ascii, &accented] {
        client.call("fs/watch", json!({"watchId": id, "path": p(&ws)}));
    }

    let mut refusals = Vec::new();
    for id in ["w".repeat(LIMIT + 1), format!("{}é", "w".repeat(LIMIT - 1))] {
        assert_eq!(id.len(), LIMIT + 1);
        let error = client.call_err("fs/watch", json!({"watchId": id, "path": p(&ws)}));
        assert_eq!(error["code"], json!(-32602), "{error}");
        let message = error["message"].as_str().expect("message");
        assert!(
            message.contains("fs/watch") && message.contains("`watchId`"),
            "{error}"
        );
        names_limit(&error, LIMIT);
        let unknown = client.call_err("fs/unwatch", json!({"watchId": id}));
        assert_eq!(
            unknown["code"],
            json!(-32600),
            "nothing registered: {unknown}"
        );
        refusals.push(error);
    }

    // The accepted ids are kept whole: a change reports them, and they end the watches.
    std::fs::write(ws.join("change.txt"), "x").expect("a change");
    for id in [&ascii, &accented] {
        let paths = changed(&mut client, id);
        assert!(paths.iter().any(|p| p.ends_with("change.txt")), "{paths:?}");
        client.call("fs/unwatch", json!({"watchId": id}));
    }

    drop(client);
    std::fs::remove_dir_all(&root).expect("clean up");
    for error in refusals {
        assert_eq!(
            error["data"]["field"],
            json!("watchId"),
            "docs/fs.md lines 115-117: `data` is {{field, path, reason}}: {error}"
        );
    }
}

/// Takes every `fs/changed` of `watch_id` out of the backlog, as their `changedPaths`.
fn take_changed(client: &mut Client, watch_id: &str) -> Vec<Vec<String>> {
    let (mine, others): (Vec<Value>, Vec<Value>) = client.notifications.drain(..).partition(|n| {
        n["method"] == json!("fs/changed") && n["params"]["watchId"] == json!(watch_id)
    });
    client.notifications.extend(others);
    mine.iter()
        .map(|n| {
            n["params"]["changedPaths"]
                .as_array()
                .expect("changedPaths")
                .iter()
                .map(|v| v.as_str().expect("path").to_owned())
                .collect()
        })
        .collect()
}

/// Asserts that `named` is `made`, saying how they differ without listing them all.
fn assert_same(named: &BTreeSet<String>, made: &BTreeSet<String>, what: &str) {
    let missing: Vec<&String> = made.difference(named).collect();
    let extra: Vec<&String> = named.difference(made).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}: {} paths not named (first {:?}), {} named that were not made (first {:?})",
        missing.len(),
        missing.first(),
        extra.len(),
        extra.first()
    );
}

/// Creates `count` files named `{prefix}{n}` in `dir`, one right after the other; returns their
/// paths as `fs/changed` names them (under `real`, the directory's canonical path).
fn burst(dir: &Path, real: &Path, prefix: &str, count: usize) -> BTreeSet<String> {
    (0..count)
        .map(|n| {
            let name = format!("{prefix}{n:04}");
            std::fs::write(dir.join(&name), "x").expect("create");
            real.join(name).display().to_string()
        })
        .collect()
}

/// docs/fs.md ("Limits": "paths per `fs/changed` | 256 (past that, only the watched path)";
/// "Behaviour": changes gathered for 100 ms and sent as one `fs/changed` per watch). 256 files
/// made in one burst are all named, however the gathering splits them, and the watched
/// directory never stands in for them. 2000 made in one burst: no notification names more than
/// 256 paths, and every file is named or covered by a notification naming only the watched
/// directory; the burst is repeated (up to 5 times) until one gathering overflows, which a
/// burst of 2000 spread over fewer than 8 gatherings must. (The limit does not split a large
/// burst into several notifications of 256: past 256, the watched path replaces them.)
#[test]
fn fs_changed_names_256_paths_and_past_that_only_the_watched_directory() {
    const MAX_PATHS: usize = 256;
    // Files per burst: enough that on a loaded machine (the whole suite running on two cores)
    // one 100 ms gathering still catches more than 256 of them.
    const BURST: usize = 2000;
    let root = scratch("fs-watch-paths");
    let (home, ws) = home_and_workspace(&root);
    for dir in ["marker", "limit", "burst"] {
        std::fs::create_dir_all(ws.join(dir)).expect("dir");
    }
    let real = std::fs::canonicalize(&ws).expect("canonical");
    let mut client = server(&home, &ws);

    // At the limit: every path named, never the directory instead.
    client.call(
        "fs/watch",
        json!({"watchId": "limit", "path": p(&ws.join("limit"))}),
    );
    let made = burst(&ws.join("limit"), &real.join("limit"), "f", MAX_PATHS);
    settle(&mut client, &ws, "m-limit");
    let notes = take_changed(&mut client, "limit");
    assert!(
        notes.iter().all(|n| n.len() <= MAX_PATHS),
        "sizes {:?}",
        notes.iter().map(Vec::len).collect::<Vec<_>>()
    );
    let named: BTreeSet<String> = notes.into_iter().flatten().collect();
    assert_eq!(named.len(), MAX_PATHS, "every one of 256 paths is named");
    assert_same(&named, &made, "the 256 files");
    client.call("fs/unwatch", json!({"watchId": "limit"}));

    // Past the limit.
    let watched = real.join("burst").display().to_string();
    client.call(
        "fs/watch",
        json!({"watchId": "burst", "path": p(&ws.join("burst"))}),
    );
    let mut overflowed = false;
    for round in 0..5 {
        let made = burst(
            &ws.join("burst"),
            &real.join("burst"),
            &format!("r{round}-"),
            BURST,
        );
        settle(&mut client, &ws, &format!("m-burst-{round}"));
        let notes = take_changed(&mut client, "burst");
        let sizes: Vec<usize> = notes.iter().map(Vec::len).collect();
        assert!(
            sizes.iter().all(|&n| (1..=MAX_PATHS).contains(&n)),
            "sizes {sizes:?}"
        );
        let whole = notes.iter().any(|n| *n == [watched.clone()]);
        let named: BTreeSet<String> = notes.into_iter().flatten().collect();
        assert!(
            named.iter().all(|n| *n == watched || made.contains(n)),
            "only this round's files or the directory are named"
        );
        if whole {
            overflowed = true;
            break;
        }
        // No overflow: the burst was spread over gatherings of at most 256 each.
        assert_same(&named, &made, &format!("round {round}, sizes {sizes:?}"));
        assert!(
            sizes.len() > BURST / MAX_PATHS,
            "{BURST} paths in {sizes:?}"
        );
    }
    assert!(
        overflowed,
        "5 bursts of {BURST} files never overflowed one gathering"
    );

    drop(client);
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// The inodes (hex, as `/proc/PID/fdinfo` writes them) of every kernel watch of `pid`'s inotify
/// instances.
fn kernel_watches(pid: u32) -> Vec<String> {
    let mut inodes = Vec::new();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).expect("fds");
    for fd in fds.flatten() {
        let is_inotify = std::fs::read_link(fd.path())
            .is_ok_and(|target| target.as_os_str() == "anon_inode:inotify");
        if !is_inotify {
            continue;
        }
        let info =
            std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.file_name().display()))
                .unwrap_or_default();
        inodes.extend(
            info.lines()
                .filter(|line| line.starts_with("inotify wd:"))
                .filter_map(|line| line.split_whitespace().find_map(|f| f.strip_prefix("ino:")))
                .map(str::to_owned),
        );
    }
    inodes
}

/// Whether `pid` holds a descriptor open on `dir`.
fn holds_open(pid: u32, dir: &Path) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fds")
        .flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == dir))
}

/// docs/fs.md ("Behaviour", `fs/unwatch`): "Watches end too when their connection closes
/// (checked every second)". Over the websocket listener, one connection watches `gone/` (as a
/// directory and through a file in it: one kernel watch) and another watches `kept/`. When
/// the first connection closes, the server drops its kernel watch on `gone/` and closes the
/// directory it held open (seen in `/proc/PID/fdinfo` of its inotify descriptor and in
/// `/proc/PID/fd`, waited for generously), while the other connection's watch still reports.
#[test]
fn a_watch_ends_when_its_websocket_connection_closes() {
    let root = scratch("fs-watch-close");
    let (home, ws) = home_and_workspace(&root);
    for dir in ["gone", "kept"] {
        std::fs::create_dir_all(ws.join(dir)).expect("dir");
    }
    std::fs::write(ws.join("gone/file.txt"), "x").expect("file");
    let real = std::fs::canonicalize(&ws).expect("canonical");
    let inode = |dir: &str| {
        use std::os::unix::fs::MetadataExt;
        format!("{:x}", std::fs::metadata(ws.join(dir)).expect("stat").ino())
    };
    let app = App::spawn(&home, &["--listen", "ws://127.0.0.1:0"]);
    let pid = app.pid();
    let addr = app.listening_addr();
    let mut kept = Conn::open(addr);
    kept.call("thread/start", json!({"cwd": ws}));
    kept.call(
        "fs/watch",
        json!({"watchId": "kept", "path": p(&ws.join("kept"))}),
    );
    let mut gone = Conn::open(addr);
    gone.call(
        "fs/watch",
        json!({"watchId": "dir", "path": p(&ws.join("gone"))}),
    );
    gone.call(
        "fs/watch",
        json!({"watchId": "file", "path": p(&ws.join("gone/file.txt"))}),
    );
    let mut before = kernel_watches(pid);
    before.sort();
    let mut expected = vec![inode("gone"), inode("kept")];
    expected.sort();
    assert_eq!(before, expected, "one kernel watch per directory");
    assert!(
        holds_open(pid, &real.join("gone")),
        "the watched directory is held open"
    );

    drop(gone);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while kernel_watches(pid) != [inode("kept")] || holds_open(pid, &real.join("gone")) {
        assert!(
            std::time::Instant::now() < deadline,
            "30 s after its connection closed, the watch of gone/ is still there: {:?}",
            kernel_watches(pid)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }

    // The other connection's watch goes on.
    std::fs::write(ws.join("kept/after.txt"), "x").expect("write");
    let params = kept.notification("fs/changed");
    assert_eq!(params["watchId"], json!("kept"), "{params}");
    assert_eq!(
        params["changedPaths"],
        json!([real.join("kept/after.txt")]),
        "{params}"
    );

    drop((kept, app));
    std::fs::remove_dir_all(&root).expect("clean up");
}
