//! The turn's diff: every file the turn's patches changed, from how it was before the turn
//! first touched it to how it is now, as one git-style unified diff (`turn/diff/updated`).
//!
//! Before a patch is applied, each file it writes (targets and move destinations) that the
//! turn has not touched yet is read as its baseline (absent files are "no file"). After the
//! patch, the diff is rendered from the baselines and the files as they are then, so it is
//! cumulative: a file changed twice shows once, from its first state to its last; a file
//! changed back shows nothing. Paths are relative to the repository root (the nearest
//! ancestor of the thread's `cwd` holding `.git`), else to `cwd`, else absolute. A file that
//! is not UTF-8 text or is larger than [`MAX_TEXT`] shows as `Binary files … differ`.
//!
//! Per file:
//!
//! ```text
//! diff --git a/src/lib.rs b/src/lib.rs
//! new file mode 100644            (added; `deleted file mode …` when removed)
//! --- /dev/null                   (`a/src/lib.rs` when it existed)
//! +++ b/src/lib.rs                (`/dev/null` when removed)
//! @@ -0,0 +1,2 @@
//! …
//! ```

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::config::layers::project_dirs;
use crate::tools::patch::diff::hunks;

/// The largest file shown as text.
pub(crate) const MAX_TEXT: u64 = 4 * 1024 * 1024;

/// A file's state: absent, or its content and mode.
#[derive(Debug, Clone, PartialEq)]
enum Content {
    Absent,
    Text { text: String, mode: u32 },
    Binary { len: u64, mode: u32 },
}

/// The baselines of the files a turn changed.
#[derive(Debug)]
pub(crate) struct TurnDiff {
    /// What paths are shown relative to.
    base: PathBuf,
    /// Absolute path → its state before the turn first changed it.
    baselines: BTreeMap<PathBuf, Content>,
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
            baselines: BTreeMap::new(),
        }
    }

    /// Reads the baseline of each of `paths` (absolute) not tracked yet. Call before the
    /// change.
    pub(crate) fn track(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        for path in paths {
            if let std::collections::btree_map::Entry::Vacant(entry) = self.baselines.entry(path) {
                let content = read(entry.key());
                entry.insert(content);
            }
        }
    }

    /// The diff of every tracked file, from its baseline to now; empty when nothing differs.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        for (path, before) in &self.baselines {
            let after = read(path);
            if *before == after {
                continue;
            }
            let name = self.name(path);
            out.push_str(&file_diff(&name, before, &after));
        }
        out
    }

    /// `path` as shown in the diff (no leading `/`, since it follows `a/` and `b/`).
    fn name(&self, path: &Path) -> String {
        let shown = path.strip_prefix(&self.base).unwrap_or(path);
        shown.to_string_lossy().trim_start_matches('/').to_owned()
    }
}

/// The state of `path` now.
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
    let len = metadata.len();
    if len > MAX_TEXT {
        return Content::Binary { len, mode };
    }
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(MAX_TEXT + 1).read_to_end(&mut bytes));
    if read.is_err() {
        return Content::Absent;
    }
    match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => Content::Text { text, mode },
        Ok(text) => Content::Binary {
            len: text.len() as u64,
            mode,
        },
        Err(error) => Content::Binary {
            len: error.as_bytes().len() as u64,
            mode,
        },
    }
}

/// The diff of one file shown as `name`, from `before` to `after` (which differ).
fn file_diff(name: &str, before: &Content, after: &Content) -> String {
    let mut out = format!("diff --git a/{name} b/{name}\n");
    let mode = |c: &Content| match c {
        Content::Absent => None,
        Content::Text { mode, .. } | Content::Binary { mode, .. } => Some(*mode),
    };
    match (mode(before), mode(after)) {
        (None, Some(new)) => out.push_str(&format!("new file mode {new:o}\n")),
        (Some(old), None) => out.push_str(&format!("deleted file mode {old:o}\n")),
        (Some(old), Some(new)) if old != new => {
            out.push_str(&format!("old mode {old:o}\nnew mode {new:o}\n"));
        }
        _ => {}
    }
    let old_name = if matches!(before, Content::Absent) {
        "/dev/null".to_owned()
    } else {
        format!("a/{name}")
    };
    let new_name = if matches!(after, Content::Absent) {
        "/dev/null".to_owned()
    } else {
        format!("b/{name}")
    };
    let text = |c: &Content| match c {
        Content::Absent => Some(String::new()),
        Content::Text { text, .. } => Some(text.clone()),
        Content::Binary { .. } => None,
    };
    match (text(before), text(after)) {
        (Some(old), Some(new)) if old == new => {}
        (Some(old), Some(new)) => {
            out.push_str(&format!("--- {old_name}\n+++ {new_name}\n"));
            out.push_str(&hunks(&old, &new));
        }
        _ => out.push_str(&format!("Binary files {old_name} and {new_name} differ\n")),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentwire-turndiff-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
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
        diff.track([kept.clone(), added.clone(), gone.clone()]);
        std::fs::write(&kept, "one\nTWO\n").expect("write");
        std::fs::write(&added, "hello\n").expect("write");
        std::fs::remove_file(&gone).expect("remove");
        // A second change of a tracked file keeps the first baseline.
        diff.track([kept.clone()]);
        std::fs::write(&kept, "one\nTWO\nthree\n").expect("write");
        assert_eq!(
            diff.render(),
            "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n\
             +++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
             diff --git a/sub/kept.txt b/sub/kept.txt\n--- a/sub/kept.txt\n+++ b/sub/kept.txt\n\
             @@ -1,2 +1,3 @@\n one\n-two\n+TWO\n+three\n\
             diff --git a/sub/new.txt b/sub/new.txt\nnew file mode 100644\n--- /dev/null\n\
             +++ b/sub/new.txt\n@@ -0,0 +1 @@\n+hello\n"
        );
        // Changed back: nothing to show for it.
        std::fs::write(&kept, "one\ntwo\n").expect("write");
        assert!(!diff.render().contains("kept.txt"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn binary_files_are_named_not_shown() {
        let root = scratch("binary");
        let file = root.join("blob.bin");
        let mut diff = TurnDiff::new(&root);
        diff.track([file.clone()]);
        std::fs::write(&file, [0u8, 159, 146, 150]).expect("write");
        assert_eq!(
            diff.render(),
            "diff --git a/blob.bin b/blob.bin\nnew file mode 100644\n\
             Binary files /dev/null and b/blob.bin differ\n"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
