//! The turn's diff: every file the turn's patches changed, from how it was before the turn
//! first touched it to how it is now, as one git-style unified diff (`turn/diff/updated`), in
//! the reference's format.
//!
//! Before a patch is applied, each file it writes that the turn has not touched yet is read
//! as its baseline (an absent file is "no file"); a move carries the baseline to the new
//! path. After the patch, the diff is rendered from the baselines and the files as they are
//! then, so it is cumulative: a file changed twice shows once, from its first state to its
//! last; a file changed back shows nothing. Files are ordered by path. Paths are relative to
//! the repository root (the nearest ancestor of the thread's `cwd` holding `.git`), else to
//! `cwd`. A file that is not UTF-8 text (or larger than [`MAX_TEXT`], which is only hashed)
//! shows as `Binary files differ`. A baseline is held in memory for the rest of the turn.
//!
//! Per file:
//!
//! ```text
//! diff --git a/src/lib.rs b/src/lib.rs
//! new file mode 100644            (added; `deleted file mode …` when removed; `old mode …`
//!                                  and `new mode …` when the mode changed)
//! index 0000000…0000..3b18e51…    (git blob ids, all zeros for no file)
//! --- /dev/null                   (`a/src/lib.rs` when it existed)
//! +++ b/src/lib.rs                (`/dev/null` when removed)
//! @@ -0,0 +1,2 @@
//! …
//! ```

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use agentwire_config::layers::project_dirs;
use agentwire_protocol::{FileUpdateChange, PatchChangeKind};
use agentwire_tools::patch::diff::hunks;
use sha1::{Digest, Sha1};

/// The largest file read; a larger one shows as binary.
pub(crate) const MAX_TEXT: u64 = 4 * 1024 * 1024;

/// The blob id of no file.
const ZERO_OID: &str = "0000000000000000000000000000000000000000";

/// A file's state: absent, or its git blob id, its bytes (`None`: larger than
/// [`MAX_TEXT`], kept as its id only) and its git mode.
#[derive(Debug, Clone, PartialEq)]
enum Content {
    Absent,
    Present {
        oid: String,
        bytes: Option<Vec<u8>>,
        mode: u32,
    },
}

/// One file the turn changed.
#[derive(Debug)]
struct Tracked {
    /// Where it was when the turn first touched it.
    origin: PathBuf,
    /// Its state then.
    baseline: Content,
    /// Where it is now (moved by a patch, or `origin`).
    current: PathBuf,
}

/// The baselines of the files a turn changed.
#[derive(Debug)]
pub(crate) struct TurnDiff {
    /// What paths are shown relative to.
    base: PathBuf,
    files: Vec<Tracked>,
}

impl TurnDiff {
    /// A tracker for a turn whose thread works in `cwd`.
    pub(crate) fn new(cwd: &Path) -> Self {
        let base = project_dirs(cwd)
            .into_iter()
            .next()
            .unwrap_or_else(|| cwd.to_path_buf());
        Self {
            base,
            files: Vec::new(),
        }
    }

    /// Takes note of `changes` (absolute paths) about to be applied: reads the baseline of
    /// each file not tracked yet, and follows moves. Call before applying them.
    pub(crate) fn track(&mut self, changes: &[FileUpdateChange]) {
        for change in changes {
            let path = PathBuf::from(&change.path);
            let at = self.position(&path);
            if let PatchChangeKind::Update {
                move_path: Some(to),
                ..
            } = &change.kind
            {
                let to = PathBuf::from(to);
                // A file the move replaces keeps its baseline under its own name, gone after.
                match self.files.iter().position(|f| f.current == to) {
                    Some(replaced) if replaced != at => {
                        self.files[replaced].current = PathBuf::new();
                    }
                    Some(_) => {}
                    None => {
                        let baseline = read(&to);
                        if baseline != Content::Absent {
                            self.files.push(Tracked {
                                origin: to.clone(),
                                baseline,
                                current: PathBuf::new(),
                            });
                        }
                    }
                }
                self.files[at].current = to;
            }
        }
    }

    /// The index of the tracked file now at `path`, tracking it if needed.
    fn position(&mut self, path: &Path) -> usize {
        match self.files.iter().position(|f| f.current == path) {
            Some(at) => at,
            None => {
                self.files.push(Tracked {
                    origin: path.to_path_buf(),
                    baseline: read(path),
                    current: path.to_path_buf(),
                });
                self.files.len() - 1
            }
        }
    }

    /// The diff of every tracked file, from its baseline to now; empty when nothing differs.
    pub(crate) fn render(&self) -> String {
        let mut files: Vec<(String, &Tracked)> = self
            .files
            .iter()
            .map(|f| {
                let shown = if f.current.as_os_str().is_empty() {
                    &f.origin
                } else {
                    &f.current
                };
                (self.name(shown), f)
            })
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = String::new();
        for (_, file) in files {
            let after = if file.current.as_os_str().is_empty() {
                Content::Absent
            } else {
                read(&file.current)
            };
            let left = self.name(&file.origin);
            let right = if file.current.as_os_str().is_empty() {
                left.clone()
            } else {
                self.name(&file.current)
            };
            out.push_str(&file_diff(&left, &right, &file.baseline, &after));
        }
        out
    }

    /// `path` as shown in the diff (no leading `/`, since it follows `a/` and `b/`).
    fn name(&self, path: &Path) -> String {
        let shown = path.strip_prefix(&self.base).unwrap_or(path);
        shown.to_string_lossy().trim_start_matches('/').to_owned()
    }
}

/// The state of `path` now (absent when it cannot be read).
#[allow(
    clippy::disallowed_methods,
    reason = "the turn diff runs on the blocking pool (`TurnRun::with_diff`)"
)]
fn read(path: &Path) -> Content {
    let Ok(metadata) = std::fs::metadata(path) else {
        return Content::Absent;
    };
    if !metadata.is_file() {
        return Content::Absent;
    }
    let mode = if metadata.permissions().mode() & 0o111 != 0 {
        0o100_755
    } else {
        0o100_644
    };
    // Opened without blocking, and only a regular file (a FIFO swapped in since the check
    // above must not hang the turn: issue #32).
    let Ok((mut file, _)) = agentwire_support::regular_file::open_regular(path) else {
        return Content::Absent;
    };
    // Read whole up to the limit; past it, only hashed, a chunk at a time.
    let mut bytes = Vec::new();
    if (&mut file)
        .take(MAX_TEXT + 1)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return Content::Absent;
    }
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) <= MAX_TEXT {
        return Content::Present {
            oid: blob_id(&bytes),
            bytes: Some(bytes),
            mode,
        };
    }
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", metadata.len()).as_bytes());
    hasher.update(&bytes);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => hasher.update(&chunk[..n]),
            Err(_) => return Content::Absent,
        }
    }
    Content::Present {
        oid: hex(&hasher.finalize()),
        bytes: None,
        mode,
    }
}

/// `bytes` in lowercase hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The git blob id of `bytes`.
fn blob_id(bytes: &[u8]) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hex(&hasher.finalize())
}

/// The diff of one file shown as `left` before and `right` after, from `before` to `after`;
/// empty when their bytes are the same.
fn file_diff(left: &str, right: &str, before: &Content, after: &Content) -> String {
    /// A side's blob id, bytes (`None`: no file) and mode.
    fn parts(c: &Content) -> (String, Option<Option<&[u8]>>, Option<u32>) {
        match c {
            Content::Absent => (ZERO_OID.to_owned(), None, None),
            Content::Present { oid, bytes, mode } => {
                (oid.clone(), Some(bytes.as_deref()), Some(*mode))
            }
        }
    }
    let (old_oid, old_bytes, old_mode) = parts(before);
    let (new_oid, new_bytes, new_mode) = parts(after);
    // Same content (or both absent): nothing to show, whatever the mode (as the reference).
    if old_oid == new_oid {
        return String::new();
    }
    let mut out = format!("diff --git a/{left} b/{right}\n");
    match (old_mode, new_mode) {
        (None, Some(new)) => out.push_str(&format!("new file mode {new:o}\n")),
        (Some(old), None) => out.push_str(&format!("deleted file mode {old:o}\n")),
        (Some(old), Some(new)) if old != new => {
            out.push_str(&format!("old mode {old:o}\nnew mode {new:o}\n"));
        }
        _ => {}
    }
    out.push_str(&format!("index {old_oid}..{new_oid}\n"));
    let old_header = if old_bytes.is_some() {
        format!("a/{left}")
    } else {
        "/dev/null".to_owned()
    };
    let new_header = if new_bytes.is_some() {
        format!("b/{right}")
    } else {
        "/dev/null".to_owned()
    };
    out.push_str(&format!("--- {old_header}\n+++ {new_header}\n"));
    /// The text of a side: empty for no file, `None` when not UTF-8 or not read.
    fn text(bytes: Option<Option<&[u8]>>) -> Option<&str> {
        match bytes {
            None => Some(""),
            Some(Some(bytes)) => std::str::from_utf8(bytes).ok(),
            Some(None) => None,
        }
    }
    match (text(old_bytes), text(new_bytes)) {
        (Some(old), Some(new)) => out.push_str(&hunks(old, new)),
        _ => out.push_str("Binary files differ\n"),
    }
    out
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests set up their files")]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentwire-turndiff-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    fn change(path: &Path, kind: PatchChangeKind) -> FileUpdateChange {
        FileUpdateChange::builder()
            .path(path.to_string_lossy().into_owned())
            .kind(kind)
            .diff(String::new())
            .build()
    }

    fn update(path: &Path) -> FileUpdateChange {
        change(path, PatchChangeKind::update().build())
    }

    #[test]
    fn blob_ids_are_gits() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        // The empty blob.
        assert_eq!(blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    }

    #[test]
    fn aggregates_changes_from_the_first_baseline() {
        let root = scratch("aggregate");
        std::fs::create_dir_all(root.join(".git")).expect("git");
        let cwd = root.join("sub");
        std::fs::create_dir_all(&cwd).expect("cwd");
        let kept = cwd.join("kept.txt");
        let added = cwd.join("new.txt");
        let gone = root.join("gone.txt");
        std::fs::write(&kept, "one\ntwo\n").expect("write");
        std::fs::write(&gone, "bye\n").expect("write");
        let mut diff = TurnDiff::new(&cwd);
        diff.track(&[
            update(&kept),
            change(&added, PatchChangeKind::Add),
            change(&gone, PatchChangeKind::Delete),
        ]);
        std::fs::write(&kept, "one\nTWO\n").expect("write");
        std::fs::write(&added, "hello\n").expect("write");
        std::fs::remove_file(&gone).expect("remove");
        // A second change of a tracked file keeps the first baseline.
        diff.track(&[update(&kept)]);
        std::fs::write(&kept, "one\nTWO\nthree\n").expect("write");
        let (bye, kept_before, kept_after, hello) = (
            blob_id(b"bye\n"),
            blob_id(b"one\ntwo\n"),
            blob_id(b"one\nTWO\nthree\n"),
            blob_id(b"hello\n"),
        );
        assert_eq!(
            diff.render(),
            format!(
                "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n\
                 index {bye}..{ZERO_OID}\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
                 diff --git a/sub/kept.txt b/sub/kept.txt\nindex {kept_before}..{kept_after}\n\
                 --- a/sub/kept.txt\n+++ b/sub/kept.txt\n@@ -1,2 +1,3 @@\n one\n-two\n+TWO\n+three\n\
                 diff --git a/sub/new.txt b/sub/new.txt\nnew file mode 100644\n\
                 index {ZERO_OID}..{hello}\n--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1 @@\n+hello\n"
            )
        );
        // Changed back: nothing to show for it.
        std::fs::write(&kept, "one\ntwo\n").expect("write");
        assert!(!diff.render().contains("kept.txt"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_move_shows_as_one_file_under_both_names() {
        let root = scratch("move");
        let from = root.join("old.txt");
        let to = root.join("new.txt");
        std::fs::write(&from, "a\nb\n").expect("write");
        let mut diff = TurnDiff::new(&root);
        diff.track(&[change(
            &from,
            PatchChangeKind::update()
                .move_path(to.to_string_lossy().into_owned())
                .build(),
        )]);
        std::fs::write(&to, "a\nB\n").expect("write");
        std::fs::remove_file(&from).expect("remove");
        let rendered = diff.render();
        assert!(
            rendered.starts_with("diff --git a/old.txt b/new.txt\nindex "),
            "{rendered}"
        );
        assert!(
            rendered.ends_with("--- a/old.txt\n+++ b/new.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"),
            "{rendered}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_file_past_the_text_limit_is_hashed_and_shown_as_binary() {
        let root = scratch("large");
        let file = root.join("big.txt");
        let mut bytes = vec![b'a'; usize::try_from(MAX_TEXT).expect("fits") + 10];
        std::fs::write(&file, &bytes).expect("write");
        let mut diff = TurnDiff::new(&root);
        diff.track(&[update(&file)]);
        assert_eq!(diff.render(), "");
        let before = blob_id(&bytes);
        if let Some(last) = bytes.last_mut() {
            *last = b'b';
        }
        std::fs::write(&file, &bytes).expect("write");
        assert_eq!(
            diff.render(),
            format!(
                "diff --git a/big.txt b/big.txt\nindex {before}..{}\n--- a/big.txt\n\
                 +++ b/big.txt\nBinary files differ\n",
                blob_id(&bytes)
            )
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn binary_files_are_named_not_shown() {
        let root = scratch("binary");
        let file = root.join("blob.bin");
        let mut diff = TurnDiff::new(&root);
        diff.track(&[change(&file, PatchChangeKind::Add)]);
        let bytes = [0u8, 159, 146, 150];
        std::fs::write(&file, bytes).expect("write");
        assert_eq!(
            diff.render(),
            format!(
                "diff --git a/blob.bin b/blob.bin\nnew file mode 100644\nindex {ZERO_OID}..{}\n\
                 --- /dev/null\n+++ b/blob.bin\nBinary files differ\n",
                blob_id(&bytes)
            )
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
