//! Writing an approved patch exactly where it was approved (issue #32, finding 3).
//!
//! A patch the client approved is written by the server, outside the sandbox. Between the
//! approval request and the answer, whoever can write inside the roots (a model-run command, a
//! process it left behind) may swap a directory on the approved path for a symbolic link to
//! somewhere else; re-resolving the path after the answer would then write there, while the
//! item still names the approved path. So an approved patch is written only at the paths the
//! client saw, each reached from an *anchor* without following any symbolic link:
//!
//! - the anchor of a path is the outermost writable root (or the thread's working directory)
//!   that holds it, lexically; a path in none of them is anchored at `/`. The anchor itself is
//!   opened by its path, symbolic links in it followed: nothing inside a root can change it;
//! - the rest of the path is opened beneath the anchor with
//!   `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`, one directory
//!   at a time (missing ones created with `mkdirat` in the directory just opened), at the
//!   moment of writing;
//! - the file is put in place with a temporary file and `renameat` in that directory (a link
//!   at the final name is replaced, never written through), a removal is `unlinkat` there.
//!
//! Before anything is written the patch is matched again against the files as they are now,
//! and every file it would touch must be the approved path itself (its real path the anchor's
//! real path plus the same components): a path that now resolves through a symbolic link is
//! refused, and nothing is written. The `openat2` walk then closes the window between that
//! check and each write: a link swapped in after the check makes the write fail instead of
//! following it. A patch whose approved path goes through a symbolic link inside a root is
//! refused the same way, even when the link points inside the roots.

use std::ffi::OsStr;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use agentwire_protocol::{FileUpdateChange, PatchChangeKind};
use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::error::PatchError;
use super::resolve::{normalize, real};

/// How every directory below an anchor is opened: beneath it, no symbolic link followed.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);
/// `openat2` answers `EAGAIN` when a rename elsewhere raced its checks; it is retried.
const RETRIES: usize = 128;

/// Where a path is reached from: an anchor directory and the components below it.
#[derive(Debug, Clone, PartialEq)]
struct Anchored {
    /// The anchor (a writable root, the working directory, or `/`), as given.
    anchor: PathBuf,
    /// The path below it (no `.` or `..`; empty for the anchor itself).
    rel: PathBuf,
}

impl Anchored {
    /// `path` (absolute, normalised) reached from the outermost of `anchors` that holds it,
    /// else from `/`.
    fn of(path: &Path, anchors: &[PathBuf]) -> Self {
        let anchor = anchors
            .iter()
            .filter(|anchor| path.starts_with(anchor))
            .min_by_key(|anchor| anchor.components().count())
            .cloned()
            .unwrap_or_else(|| PathBuf::from("/"));
        let rel = path
            .strip_prefix(&anchor)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Self { anchor, rel }
    }

    /// The real path this must resolve to: the anchor's real path and the same components.
    fn expected(&self) -> Option<PathBuf> {
        Some(real(&self.anchor)?.join(&self.rel))
    }
}

/// Applies `patch` under `cwd` at the paths it names (see the module docs): `roots` are the
/// sandbox's writable roots (none for a policy without a sandbox), `cwd` is an anchor too.
/// Returns the changes made; on a refusal nothing was written, on a failed write the error
/// names what was already written.
pub(crate) fn apply(
    patch: &super::parse::Patch,
    cwd: &Path,
    roots: &[PathBuf],
) -> Result<Vec<FileUpdateChange>, PatchError> {
    let plan = super::plan::plan(patch, cwd)?;
    let mut anchors: Vec<PathBuf> = roots
        .iter()
        .map(|root| normalize(&cwd.join(root)))
        .collect();
    anchors.push(normalize(cwd));
    // The approved paths: what the changes name (as the approval request showed them).
    let mut approved: Vec<(PathBuf, Anchored)> = Vec::new();
    for change in &plan.changes {
        let mut named = vec![PathBuf::from(&change.path)];
        if let PatchChangeKind::Update {
            move_path: Some(to),
            ..
        } = &change.kind
        {
            named.push(PathBuf::from(to));
        }
        for path in named {
            let anchored = Anchored::of(&path, &anchors);
            let expected = anchored.expected().ok_or_else(|| {
                PatchError(format!(
                    "`{}`: its directory `{}` cannot be resolved; nothing was changed",
                    path.display(),
                    anchored.anchor.display()
                ))
            })?;
            approved.push((expected, anchored));
        }
    }
    let target = |real_path: &Path| -> Result<Anchored, PatchError> {
        approved
            .iter()
            .find(|(expected, _)| expected == real_path)
            .map(|(_, anchored)| anchored.clone())
            .ok_or_else(|| {
                PatchError(format!(
                    "`{}` is not a path the approval named: a symbolic link on an approved \
                     path leads there. An approved patch is written only where it was \
                     approved; nothing was changed",
                    real_path.display()
                ))
            })
    };
    let mut writes = Vec::with_capacity(plan.writes.len());
    for (path, content, permissions) in &plan.writes {
        let mode = permissions.as_ref().map(|p| p.mode() & 0o7777);
        writes.push((target(path)?, content, mode));
    }
    let mut removals = Vec::with_capacity(plan.removals.len());
    for path in &plan.removals {
        removals.push(target(path)?);
    }

    let mut done: Vec<String> = Vec::new();
    let failed = |done: &[String], what: String| {
        let already = if done.is_empty() {
            "no file was changed".to_owned()
        } else {
            format!("already changed: {}", done.join(", "))
        };
        PatchError(format!("{what}; {already}"))
    };
    for (at, content, mode) in writes {
        let shown = at.anchor.join(&at.rel).display().to_string();
        write(&at, content.as_bytes(), mode)
            .map_err(|e| failed(&done, format!("cannot write `{shown}`: {e}")))?;
        done.push(format!("`{shown}`"));
    }
    for at in removals {
        let shown = at.anchor.join(&at.rel).display().to_string();
        remove(&at).map_err(|e| failed(&done, format!("cannot remove `{shown}`: {e}")))?;
        done.push(format!("`{shown}`"));
    }
    Ok(plan.changes)
}

/// Puts `content` at `at` (with `mode`, or the default of a new file).
fn write(at: &Anchored, content: &[u8], mode: Option<u32>) -> Result<(), String> {
    let (dir, name) = parent(at, true)?;
    agentwire_support::atomic_file::replace_at(dir.as_fd(), name, mode, |file| {
        file.write_all(content)
    })
    .map_err(|e| e.to_string())
}

/// Removes the entry `at` (a link itself, never what it points to).
fn remove(at: &Anchored) -> Result<(), String> {
    let (dir, name) = parent(at, false)?;
    rustix::fs::unlinkat(&dir, name, AtFlags::empty()).map_err(|e| e.to_string())
}

/// The directory holding `at`, opened from its anchor without following any symbolic link
/// (missing directories created when `create`), and the name of `at` in it.
fn parent(at: &Anchored, create: bool) -> Result<(OwnedFd, &OsStr), String> {
    let name = at
        .rel
        .file_name()
        .ok_or_else(|| "it names no file".to_owned())?;
    let mut dir = rustix::fs::open(
        &at.anchor,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("cannot open `{}`: {e}", at.anchor.display()))?;
    let below = at.rel.parent().unwrap_or(Path::new(""));
    for component in below.components() {
        let Component::Normal(step) = component else {
            return Err(format!("`{}` is not a plain path", at.rel.display()));
        };
        let opened = match open_dir(&dir, step) {
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&dir, step, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => open_dir(&dir, step),
                    Err(e) => Err(e),
                }
            }
            other => other,
        };
        dir = opened.map_err(|e| match e {
            Errno::LOOP | Errno::XDEV | Errno::NOTDIR => format!(
                "`{}` is not a plain directory below `{}` any more (a symbolic link?); the \
                 approved patch is not written through it",
                step.to_string_lossy(),
                at.anchor.display()
            ),
            other => format!("cannot open `{}`: {other}", step.to_string_lossy()),
        })?;
    }
    Ok((dir, name))
}

/// The directory `name` in `dir`, opened beneath it with no symbolic link followed.
fn open_dir(dir: &OwnedFd, name: &OsStr) -> Result<OwnedFd, Errno> {
    let mut last = Errno::AGAIN;
    for _ in 0..RETRIES {
        match rustix::fs::openat2(
            dir,
            name,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            RESOLVE,
        ) {
            Err(Errno::AGAIN) => last = Errno::AGAIN,
            other => return other,
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentwire-anchored-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    fn add(path: &str) -> super::super::Patch {
        super::super::parse(&format!(
            "*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n"
        ))
        .expect("patch")
    }

    #[test]
    fn anchors_are_the_outermost_root_holding_the_path() {
        let anchors = vec![PathBuf::from("/w/inner"), PathBuf::from("/w")];
        assert_eq!(
            Anchored::of(Path::new("/w/inner/a"), &anchors),
            Anchored {
                anchor: PathBuf::from("/w"),
                rel: PathBuf::from("inner/a")
            }
        );
        assert_eq!(
            Anchored::of(Path::new("/etc/x"), &anchors),
            Anchored {
                anchor: PathBuf::from("/"),
                rel: PathBuf::from("etc/x")
            }
        );
    }

    #[test]
    fn writes_land_at_the_named_path_or_fail_on_a_link() {
        let root = scratch("links");
        let cwd = root.join("w");
        let outside = root.join("outside");
        std::fs::create_dir_all(cwd.join("sub")).expect("dirs");
        std::fs::create_dir_all(&outside).expect("dirs");
        let roots = vec![cwd.clone()];
        apply(&add("sub/a.txt"), &cwd, &roots).expect("plain path");
        apply(&add("new/dir/b.txt"), &cwd, &roots).expect("missing dirs are made");
        assert!(cwd.join("sub/a.txt").is_file() && cwd.join("new/dir/b.txt").is_file());

        std::os::unix::fs::symlink(&outside, cwd.join("link")).expect("link");
        let refused = apply(&add("link/c.txt"), &cwd, &roots).expect_err("through a link");
        assert!(refused.0.contains("nothing was changed"), "{refused}");
        assert!(!outside.join("c.txt").exists());

        // A link swapped in after the check: the walk refuses it.
        let at = Anchored::of(&cwd.join("sub/d.txt"), &roots);
        std::fs::rename(cwd.join("sub"), cwd.join("sub-old")).expect("move");
        std::os::unix::fs::symlink(&outside, cwd.join("sub")).expect("swap");
        let error = write(&at, b"x", None).expect_err("swapped");
        assert!(error.contains("symbolic link"), "{error}");
        assert!(!outside.join("d.txt").exists());
        let _ = std::fs::remove_dir_all(&root);
    }
}
