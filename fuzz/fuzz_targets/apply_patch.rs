//! Arbitrary text as an `apply_patch` patch, parsed and applied to a scratch workspace the way
//! `agentwire apply-patch` applies it (the workspace is the only writable root), beside a
//! directory outside the roots that a symbolic link in the workspace points to.
//!
//! Checked after every input: nothing panicked, nothing outside the workspace changed (not
//! through `..`, an absolute path, or the link), and an applied patch reports its changes as a
//! JSON array of changes whose paths all lie in the workspace.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

struct Scratch {
    workspace: PathBuf,
    outside: PathBuf,
    /// Everything under `outside`, as it must stay.
    outside_tree: Vec<(PathBuf, Vec<u8>)>,
}

fn scratch() -> &'static Scratch {
    static SCRATCH: OnceLock<Scratch> = OnceLock::new();
    SCRATCH.get_or_init(|| {
        let root =
            std::env::temp_dir().join(format!("agentwire-fuzz-patch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let outside = root.join("outside");
        std::fs::create_dir_all(outside.join("nested")).expect("outside dir");
        std::fs::write(outside.join("secret.txt"), "keep\n").expect("outside file");
        std::fs::write(outside.join("nested/deep.txt"), "deeper\n").expect("outside file");
        let workspace = root.join("ws");
        Scratch {
            outside_tree: tree(&outside),
            workspace,
            outside,
        }
    })
}

/// Every file under `dir`, as (path, bytes), sorted.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(path),
                _ => {
                    let bytes = std::fs::read(&path).unwrap_or_default();
                    files.push((path, bytes));
                }
            }
        }
    }
    files.sort();
    files
}

/// A fresh workspace: two files, a directory, and a link to the outside.
fn reset(scratch: &Scratch) {
    let ws = &scratch.workspace;
    let _ = std::fs::remove_dir_all(ws);
    std::fs::create_dir_all(ws.join("dir")).expect("workspace");
    std::fs::write(ws.join("a.txt"), "one\ntwo\nthree\n").expect("a.txt");
    std::fs::write(ws.join("dir/b.txt"), "alpha\nbeta\n").expect("b.txt");
    std::os::unix::fs::symlink(&scratch.outside, ws.join("link")).expect("link");
}

/// Whether `path` (absolute, or relative to `ws`) names a place in `ws`, `..` never used.
fn inside(ws: &Path, path: &str) -> bool {
    let path = Path::new(path);
    let no_parent = path
        .components()
        .all(|c| !matches!(c, std::path::Component::ParentDir));
    no_parent && (path.is_relative() || path.starts_with(ws))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let scratch = scratch();
    reset(scratch);
    let ws = &scratch.workspace;
    let applied = agentwire_engine::apply_patch_text(text, ws, std::slice::from_ref(ws));
    assert_eq!(
        tree(&scratch.outside),
        scratch.outside_tree,
        "the patch changed something outside the workspace"
    );
    let parent = ws.parent().expect("the scratch root");
    let beside: Vec<_> = std::fs::read_dir(parent)
        .expect("scratch root")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        beside.len(),
        2,
        "the patch wrote beside the workspace: {beside:?}"
    );
    if let Ok(json) = applied {
        let changes: Vec<serde_json::Value> =
            serde_json::from_str(&json).expect("the changes are a JSON array");
        for change in &changes {
            let path = change["path"].as_str().expect("every change has a path");
            assert!(inside(ws, path), "a change outside the workspace: {path}");
            if let Some(to) = change["kind"]["move_path"].as_str() {
                assert!(inside(ws, to), "a move outside the workspace: {to}");
            }
        }
    }
});
