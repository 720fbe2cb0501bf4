//! The writable-roots check: escapes through `..`, absolute paths and symbolic links are
//! outside, and a refused patch changes nothing.

use std::path::PathBuf;

use super::super::{apply, outside_roots};
use super::{TempDir, patch};

#[test]
fn paths_inside_a_root_pass() {
    let root = TempDir::new("inside");
    root.write("f.txt", "a\n");
    let roots = vec![root.path().to_path_buf()];
    let p = patch(
        "*** Add File: new/x.txt\n+x\n*** Update File: f.txt\n*** Move to: sub/g.txt\n-a\n+b\n\
         *** Add File: sub/../y.txt\n+y\n",
    );
    assert_eq!(
        outside_roots(&p, root.path(), &roots),
        Vec::<PathBuf>::new()
    );
    apply(&p, root.path(), Some(&roots)).expect("apply inside the root");
    assert_eq!(root.read("sub/g.txt"), "b\n");
    assert_eq!(root.read("y.txt"), "y\n");
}

#[test]
fn dot_dot_and_absolute_paths_outside_are_refused() {
    let base = TempDir::new("dotdot");
    base.write("ws/a/keep.txt", "k\n");
    let cwd = base.path().join("ws/a");
    let roots = vec![cwd.clone()];
    let escape = patch("*** Add File: ../../etc/x\n+pwned\n");
    assert_eq!(
        outside_roots(&escape, &cwd, &roots),
        vec![base.path().join("etc/x")]
    );
    let error = apply(&escape, &cwd, Some(&roots)).expect_err("refused");
    assert!(error.0.contains("outside the writable roots"), "{error}");
    assert!(
        error
            .0
            .contains(&base.path().join("etc/x").display().to_string()),
        "{error}"
    );
    assert!(!base.exists("etc"));

    let other = TempDir::new("elsewhere");
    other.write("victim.txt", "v\n");
    let absolute = patch(&format!(
        "*** Delete File: {}\n",
        other.path().join("victim.txt").display()
    ));
    assert_eq!(
        outside_roots(&absolute, &cwd, &roots),
        vec![other.path().join("victim.txt")]
    );
    assert!(apply(&absolute, &cwd, Some(&roots)).is_err());
    assert_eq!(other.read("victim.txt"), "v\n");
    // Without roots (full access) the same patch applies.
    apply(&absolute, &cwd, None).expect("no sandbox");
    assert!(!other.exists("victim.txt"));
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_a_root_pointing_outside_is_outside() {
    use std::os::unix::fs::symlink;

    let root = TempDir::new("links");
    let outside = TempDir::new("target");
    outside.write("secret.txt", "s\n");
    symlink(outside.path(), root.path().join("out_dir")).expect("symlink a directory");
    symlink(
        outside.path().join("secret.txt"),
        root.path().join("out_file"),
    )
    .expect("symlink");
    let roots = vec![root.path().to_path_buf()];
    for (body, resolved) in [
        (
            "*** Update File: out_file\n-s\n+S\n",
            outside.path().join("secret.txt"),
        ),
        (
            "*** Update File: out_dir/secret.txt\n-s\n+S\n",
            outside.path().join("secret.txt"),
        ),
        (
            "*** Add File: out_dir/new/x\n+x\n",
            outside.path().join("new/x"),
        ),
        (
            "*** Delete File: out_file\n",
            outside.path().join("secret.txt"),
        ),
    ] {
        let p = patch(body);
        assert_eq!(
            outside_roots(&p, root.path(), &roots),
            vec![resolved],
            "{body}"
        );
        assert!(apply(&p, root.path(), Some(&roots)).is_err(), "{body}");
    }
    assert_eq!(outside.read("secret.txt"), "s\n");
    assert!(!outside.exists("new"));

    // A link pointing into a root is judged by where it points: its target is in the root.
    let inner = TempDir::new("inner");
    inner.write("file.txt", "i\n");
    symlink(
        inner.path().join("file.txt"),
        outside.path().join("to_inner"),
    )
    .expect("symlink");
    let p = patch(&format!(
        "*** Update File: {}\n-i\n+I\n",
        outside.path().join("to_inner").display()
    ));
    let inner_roots = vec![inner.path().to_path_buf()];
    apply(&p, root.path(), Some(&inner_roots)).expect("the write lands in the root");
    assert_eq!(inner.read("file.txt"), "I\n");
    assert!(
        std::fs::symlink_metadata(outside.path().join("to_inner"))
            .expect("the link is still there")
            .file_type()
            .is_symlink(),
        "updating through a link writes its target, not over the link"
    );
    // Deleting that link removes an entry outside the root: refused.
    let p = patch(&format!(
        "*** Delete File: {}\n",
        outside.path().join("to_inner").display()
    ));
    assert_eq!(
        outside_roots(&p, root.path(), &inner_roots),
        vec![outside.path().join("to_inner")]
    );
}

#[cfg(unix)]
#[test]
fn a_root_reached_through_a_symlink_is_the_same_root() {
    let real = TempDir::new("realroot");
    let links = TempDir::new("linkroot");
    std::os::unix::fs::symlink(real.path(), links.path().join("ws")).expect("symlink");
    let cwd = links.path().join("ws");
    let p = patch("*** Add File: a.txt\n+a\n");
    apply(&p, &cwd, Some(std::slice::from_ref(&cwd))).expect("cwd and root given through the link");
    assert_eq!(real.read("a.txt"), "a\n");
}

#[test]
fn empty_roots_refuse_everything() {
    let dir = TempDir::new("readonly");
    dir.write("f.txt", "a\n");
    let p = patch("*** Update File: f.txt\n-a\n+b\n*** Add File: g.txt\n+g\n");
    assert_eq!(
        outside_roots(&p, dir.path(), &[]),
        vec![dir.path().join("f.txt"), dir.path().join("g.txt")]
    );
    assert!(apply(&p, dir.path(), Some(&[])).is_err());
    assert_eq!(dir.read("f.txt"), "a\n");
    assert!(!dir.exists("g.txt"));
}

#[test]
fn nothing_is_written_when_one_file_of_several_is_refused() {
    let root = TempDir::new("partial");
    let outside = TempDir::new("partial-out");
    root.write("a.txt", "a\n");
    let p = patch(&format!(
        "*** Update File: a.txt\n-a\n+A\n*** Add File: b.txt\n+b\n*** Add File: {}\n+x\n\
         *** Delete File: a.txt\n",
        outside.path().join("x.txt").display()
    ));
    let roots = vec![root.path().to_path_buf()];
    let error = apply(&p, root.path(), Some(&roots)).expect_err("refused");
    assert!(error.0.ends_with("; nothing was changed"), "{error}");
    assert_eq!(root.read("a.txt"), "a\n");
    assert!(!root.exists("b.txt"));
    assert!(!outside.exists("x.txt"));
}
