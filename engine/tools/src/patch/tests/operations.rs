//! Each operation against real files: what `preview` reports, what `apply` writes, and the
//! errors when a hunk does not fit.

use std::fs;

use agentwire_protocol::{FileUpdateChange, PatchChangeKind};

use super::super::plan::MAX_FILE_BYTES;
use super::super::{PatchError, apply, preview};
use super::{TempDir, patch};

/// The message of `result`'s error.
fn message<T: std::fmt::Debug>(result: Result<T, PatchError>) -> String {
    result.expect_err("expected an error").0
}

#[test]
fn add_creates_parent_directories_and_refuses_an_existing_file() {
    let dir = TempDir::new("add");
    let p = patch("*** Add File: deep/er/new.txt\n+hello\n+world\n");
    let changes = apply(&p, dir.path(), None).expect("apply");
    assert_eq!(
        changes,
        vec![
            FileUpdateChange::builder()
                .path(dir.path().join("deep/er/new.txt").display().to_string())
                .kind(PatchChangeKind::Add)
                .diff("hello\nworld\n")
                .build()
        ]
    );
    assert_eq!(dir.read("deep/er/new.txt"), "hello\nworld\n");
    assert_eq!(
        message(apply(&p, dir.path(), None)),
        "`deep/er/new.txt`: cannot add the file: it already exists"
    );
    assert_eq!(dir.read("deep/er/new.txt"), "hello\nworld\n");
    fs::create_dir(dir.path().join("adir")).expect("mkdir");
    assert!(
        message(apply(&patch("*** Add File: adir\n+x\n"), dir.path(), None))
            .contains("already exists")
    );
}

#[test]
fn delete_removes_the_file_and_refuses_a_missing_one() {
    let dir = TempDir::new("delete");
    dir.write("old.txt", "bye\n");
    let p = patch("*** Delete File: old.txt\n");
    let changes = apply(&p, dir.path(), None).expect("apply");
    assert_eq!(changes[0].kind, PatchChangeKind::Delete);
    assert_eq!(changes[0].diff, "bye\n");
    assert!(!dir.exists("old.txt"));
    assert_eq!(
        message(apply(&p, dir.path(), None)),
        "`old.txt`: cannot delete the file: it does not exist"
    );
}

#[test]
fn update_of_a_missing_file_is_an_error() {
    let dir = TempDir::new("missing");
    assert_eq!(
        message(apply(
            &patch("*** Update File: nope.rs\n-a\n+b\n"),
            dir.path(),
            None
        )),
        "`nope.rs`: cannot update the file: it does not exist"
    );
    assert!(!dir.exists("nope.rs"));
}

#[test]
fn preview_reports_a_unified_diff_and_writes_nothing() {
    let dir = TempDir::new("preview");
    let original = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";
    dir.write("sub/f.txt", original);
    let p =
        patch("*** Update File: sub/../sub/f.txt\n@@\n two\n-three\n+THREE\n@@\n-nine\n+NINE\n");
    let changes = preview(&p, dir.path()).expect("preview");
    assert_eq!(
        changes,
        vec![FileUpdateChange::builder().path(dir.path().join("sub/f.txt").display().to_string()).kind(PatchChangeKind::update().build()).diff("--- a/sub/../sub/f.txt\n+++ b/sub/../sub/f.txt\n@@ -1,10 +1,10 @@\n one\n two\n\
                   -three\n+THREE\n four\n five\n six\n seven\n eight\n-nine\n+NINE\n ten\n"
                ).build()]
    );
    assert_eq!(dir.read("sub/f.txt"), original, "preview changed the file");
    assert_eq!(apply(&p, dir.path(), None).expect("apply"), changes);
    assert_eq!(
        dir.read("sub/f.txt"),
        "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nNINE\nten\n"
    );
}

#[test]
fn hunks_are_searched_after_the_previous_hunk_and_after_the_anchor() {
    let dir = TempDir::new("anchors");
    dir.write(
        "f.py",
        "def a():\n    return 1\n\ndef b():\n    return 1\n\ndef c():\n    return 1\n",
    );
    // The first hunk takes the first `return 1`; the second, anchored at `def c`, skips b's.
    apply(
        &patch("*** Update File: f.py\n@@\n-    return 1\n+    return 10\n@@ def c():\n-    return 1\n+    return 30\n"),
        dir.path(),
        None,
    )
    .expect("apply");
    assert_eq!(
        dir.read("f.py"),
        "def a():\n    return 10\n\ndef b():\n    return 1\n\ndef c():\n    return 30\n"
    );
    // A pure addition goes right after its anchor, or at the end without one.
    apply(
        &patch("*** Update File: f.py\n@@ def b():\n+    \"\"\"B.\"\"\"\n@@\n+# end\n"),
        dir.path(),
        None,
    )
    .expect("apply");
    assert_eq!(
        dir.read("f.py"),
        "def a():\n    return 10\n\ndef b():\n    \"\"\"B.\"\"\"\n    return 1\n\ndef c():\n    return 30\n# end\n"
    );
}

#[test]
fn a_missing_line_is_named_with_the_file_and_hunk() {
    let dir = TempDir::new("notfound");
    dir.write("f.txt", "alpha\nbeta\ngamma\n");
    assert_eq!(
        message(apply(
            &patch("*** Update File: f.txt\n-alpha\n+A\n@@\n beta\n-delta\n+D\n"),
            dir.path(),
            None
        )),
        "`f.txt`: hunk 2: could not find the line `delta` after the hunk's first 1 line(s) at or \
         after line 2 of the file"
    );
    assert_eq!(
        message(apply(
            &patch("*** Update File: f.txt\n@@ omega\n-beta\n"),
            dir.path(),
            None
        )),
        "`f.txt`: hunk 1: could not find the `@@` line `omega`"
    );
    // A hunk cannot match before the previous one.
    assert_eq!(
        message(apply(
            &patch("*** Update File: f.txt\n-gamma\n+G\n@@\n-alpha\n+A\n"),
            dir.path(),
            None
        )),
        "`f.txt`: hunk 2: could not find the line `alpha` at or after line 4 of the file"
    );
    assert_eq!(dir.read("f.txt"), "alpha\nbeta\ngamma\n");
}

#[test]
fn whitespace_is_ignored_only_when_the_exact_match_fails() {
    let dir = TempDir::new("fuzzy");
    dir.write("f.txt", "x = 1   \n\tif y:\n\t\tz()\n");
    apply(
        &patch("*** Update File: f.txt\n-x = 1\n+x = 2\n@@\n if y:\n-  z()\n+  w()\n"),
        dir.path(),
        None,
    )
    .expect("trailing and then leading whitespace are ignored");
    assert_eq!(dir.read("f.txt"), "x = 2\n\tif y:\n  w()\n");
    // Exact wins over an earlier fuzzy match.
    dir.write("g.txt", "k  \nk\n");
    apply(&patch("*** Update File: g.txt\n-k\n+K\n"), dir.path(), None).expect("apply");
    assert_eq!(dir.read("g.txt"), "k  \nK\n");
}

#[test]
fn end_of_file_hunks_match_only_at_the_end() {
    let dir = TempDir::new("eof");
    dir.write("f.txt", "end\nmiddle\nend\n");
    apply(
        &patch("*** Update File: f.txt\n-end\n+END\n*** End of File\n"),
        dir.path(),
        None,
    )
    .expect("apply");
    assert_eq!(dir.read("f.txt"), "end\nmiddle\nEND\n");
    assert_eq!(
        message(apply(
            &patch("*** Update File: f.txt\n-middle\n+M\n*** End of File\n"),
            dir.path(),
            None
        )),
        "`f.txt`: hunk 1: its lines are not the last lines of the file (`*** End of File`); the \
         first that does not match is `middle`"
    );
    apply(
        &patch("*** Update File: f.txt\n@@ end\n+tail\n*** End of File\n"),
        dir.path(),
        None,
    )
    .expect("a pure addition at the end of the file");
    assert_eq!(dir.read("f.txt"), "end\nmiddle\nEND\ntail\n");
}

#[test]
fn move_writes_the_new_path_and_removes_the_old() {
    let dir = TempDir::new("move");
    dir.write("src/old.rs", "fn f() {}\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(
            dir.path().join("src/old.rs"),
            fs::Permissions::from_mode(0o750),
        )
        .expect("chmod");
    }
    let p = patch("*** Update File: src/old.rs\n*** Move to: lib/new.rs\n-fn f() {}\n+fn g() {}\n");
    let changes = apply(&p, dir.path(), None).expect("apply");
    assert_eq!(
        changes,
        vec![
            FileUpdateChange::builder()
                .path(dir.path().join("src/old.rs").display().to_string())
                .kind(
                    PatchChangeKind::update()
                        .move_path(dir.path().join("lib/new.rs").display().to_string())
                        .build()
                )
                .diff("--- a/src/old.rs\n+++ b/lib/new.rs\n@@ -1 +1 @@\n-fn f() {}\n+fn g() {}\n")
                .build()
        ]
    );
    assert!(!dir.exists("src/old.rs"));
    assert_eq!(dir.read("lib/new.rs"), "fn g() {}\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir.path().join("lib/new.rs"))
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o750, "the moved file keeps its mode");
    }
    // A bare rename.
    apply(
        &patch("*** Update File: lib/new.rs\n*** Move to: lib/renamed.rs\n"),
        dir.path(),
        None,
    )
    .expect("apply");
    assert_eq!(dir.read("lib/renamed.rs"), "fn g() {}\n");
    assert!(!dir.exists("lib/new.rs"));
}

#[test]
fn sections_see_the_earlier_sections_of_the_same_patch() {
    let dir = TempDir::new("sequence");
    let p = patch(
        "*** Add File: a.txt\n+1\n*** Update File: a.txt\n-1\n+2\n\
         *** Update File: a.txt\n*** Move to: b.txt\n-2\n+3\n*** Delete File: b.txt\n\
         *** Add File: b.txt\n+4\n",
    );
    let changes = apply(&p, dir.path(), None).expect("apply");
    assert_eq!(changes.len(), 5);
    assert!(!dir.exists("a.txt"));
    assert_eq!(dir.read("b.txt"), "4\n");
}

#[test]
fn crlf_files_keep_crlf_and_the_final_newline_is_kept_as_it_was() {
    let dir = TempDir::new("endings");
    dir.write("win.txt", "a\r\nb\r\nc\r\n");
    dir.write("bare.txt", "a\nb");
    apply(
        &patch("*** Update File: win.txt\n a\n-b\n+B\n+B2\n*** Update File: bare.txt\n-b\n+B\n"),
        dir.path(),
        None,
    )
    .expect("apply");
    assert_eq!(dir.read("win.txt"), "a\r\nB\r\nB2\r\nc\r\n");
    assert_eq!(dir.read("bare.txt"), "a\nB");
    // A patch sent with CRLF line endings applies the same.
    dir.write("unix.txt", "x\ny\n");
    let crlf = "*** Begin Patch\r\n*** Update File: unix.txt\r\n-y\r\n+Y\r\n*** End Patch\r\n";
    apply(&super::super::parse(crlf).expect("parse"), dir.path(), None).expect("apply");
    assert_eq!(dir.read("unix.txt"), "x\nY\n");
}

#[test]
fn nothing_is_written_when_a_later_section_does_not_match() {
    let dir = TempDir::new("atomic");
    dir.write("a.txt", "a\n");
    dir.write("b.txt", "b\n");
    let p = patch(
        "*** Update File: a.txt\n-a\n+A\n*** Add File: c.txt\n+c\n*** Delete File: b.txt\n\
         *** Update File: b.txt\n-zzz\n+Z\n",
    );
    assert!(message(apply(&p, dir.path(), None)).starts_with("`b.txt`: cannot update"));
    assert_eq!(dir.read("a.txt"), "a\n");
    assert_eq!(dir.read("b.txt"), "b\n");
    assert!(!dir.exists("c.txt"));
    let names: Vec<_> = fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temporary file left behind: {names:?}");
}

#[test]
fn refuses_files_over_the_size_limit_and_binary_updates() {
    let dir = TempDir::new("bounds");
    let big = fs::File::create(dir.path().join("big.bin")).expect("create");
    big.set_len(MAX_FILE_BYTES + 1)
        .expect("a sparse file over the limit");
    drop(big);
    assert_eq!(
        message(apply(
            &patch("*** Update File: big.bin\n-x\n+y\n"),
            dir.path(),
            None
        )),
        format!(
            "`big.bin`: the file is {} bytes; the limit is {MAX_FILE_BYTES} bytes (64 MiB)",
            MAX_FILE_BYTES + 1
        )
    );
    fs::write(dir.path().join("blob"), [0xff, 0xfe, b'\n']).expect("write");
    assert_eq!(
        message(apply(
            &patch("*** Update File: blob\n-x\n+y\n"),
            dir.path(),
            None
        )),
        "`blob`: cannot update the file: it is not UTF-8 text"
    );
    apply(&patch("*** Delete File: blob\n"), dir.path(), None).expect("a binary file can go");
    assert!(!dir.exists("blob"));
}
