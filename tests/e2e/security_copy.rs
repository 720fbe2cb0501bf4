//! `fs/copy` writes a bounded amount and keeps holes (issue #32, part of finding 8): a 2 GiB
//! sparse file copies to a file of the same length whose allocated blocks stay small; a copy
//! that would write more data than the call's budget (`fs_copy_max_bytes`) is refused with an
//! error naming the path and the budget, and leaves nothing behind.

use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use serde_json::{Value, json};

use crate::client::Client;
use crate::common::{home_and_workspace, scratch};

fn p(path: &Path) -> Value {
    json!(path.to_str().expect("utf-8 path"))
}

#[test]
fn a_sparse_file_copies_sparse() {
    let root = scratch("security-copy-sparse");
    let (home, workspace) = home_and_workspace(&root);
    let size: u64 = 2 * 1024 * 1024 * 1024;
    let source = workspace.join("sparse.img");
    let file = std::fs::File::create(&source).expect("create");
    file.set_len(size).expect("a 2 GiB hole");
    file.write_all_at(b"head", 0).expect("write");
    file.write_all_at(b"tail", size - 4).expect("write");
    drop(file);

    let mut client = Client::start(&home);
    client.start_thread(json!({"cwd": workspace}));
    let copy = workspace.join("copy.img");
    client.call(
        "fs/copy",
        json!({"sourcePath": p(&source), "destinationPath": p(&copy)}),
    );
    let meta = std::fs::metadata(&copy).expect("copied");
    assert_eq!(meta.len(), size, "same length");
    let allocated = meta.blocks() * 512;
    assert!(
        allocated < 16 * 1024 * 1024,
        "the copy of a 2 GiB sparse file allocated {allocated} bytes"
    );
    let copied = std::fs::File::open(&copy).expect("open");
    let mut four = [0u8; 4];
    copied.read_exact_at(&mut four, 0).expect("read");
    assert_eq!(&four, b"head");
    copied.read_exact_at(&mut four, size - 4).expect("read");
    assert_eq!(&four, b"tail");
    copied.read_exact_at(&mut four, size / 2).expect("read");
    assert_eq!(four, [0; 4], "a hole reads as zeros");
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_copy_past_the_budget_is_refused_and_leaves_nothing() {
    let root = scratch("security-copy-budget");
    let (home, workspace) = home_and_workspace(&root);
    std::fs::write(home.join("config.toml"), "fs_copy_max_bytes = 100000\n").expect("config");
    let big = workspace.join("big.bin");
    std::fs::write(&big, vec![1u8; 150_000]).expect("write");
    let tree = workspace.join("tree");
    std::fs::create_dir_all(tree.join("sub")).expect("mkdir");
    std::fs::write(tree.join("one.bin"), vec![2u8; 60_000]).expect("write");
    std::fs::write(tree.join("sub/two.bin"), vec![3u8; 60_000]).expect("write");
    let small = workspace.join("small.bin");
    std::fs::write(&small, vec![4u8; 90_000]).expect("write");

    let mut client = Client::start(&home);
    client.start_thread(json!({"cwd": workspace}));
    let refused = |client: &mut Client, params: Value, shown: &str| {
        let error = client.call_err("fs/copy", params);
        assert_eq!(error["code"], json!(-32602), "{error}");
        let message = error["message"].as_str().expect("message");
        assert!(
            message.contains("fs/copy")
                && message.contains(shown)
                && message.contains("budget of 100000 bytes"),
            "the error names the path and the budget: {message}"
        );
        assert_eq!(error["data"]["field"], json!("sourcePath"), "{error}");
    };

    let big_copy = workspace.join("big-copy.bin");
    refused(
        &mut client,
        json!({"sourcePath": p(&big), "destinationPath": p(&big_copy)}),
        "big.bin",
    );
    assert!(!big_copy.exists(), "a refused file copy left a file");
    let names: Vec<String> = std::fs::read_dir(&workspace)
        .expect("list")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    assert!(
        names.iter().all(|n| !n.contains(".tmp")),
        "a temporary file was left: {names:?}"
    );

    let tree_copy = workspace.join("tree-copy");
    refused(
        &mut client,
        json!({"sourcePath": p(&tree), "destinationPath": p(&tree_copy), "recursive": true}),
        ".bin",
    );
    assert!(!tree_copy.exists(), "a refused tree copy left a tree");

    // Within the budget, a copy is made.
    let small_copy = workspace.join("small-copy.bin");
    client.call(
        "fs/copy",
        json!({"sourcePath": p(&small), "destinationPath": p(&small_copy)}),
    );
    assert_eq!(std::fs::read(&small_copy).expect("copied").len(), 90_000);
    client.stop();
    let _ = std::fs::remove_dir_all(&root);
}
