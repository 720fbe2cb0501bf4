//! The `apply_patch` tool: parsing the patch format, previewing it as unified diffs, and
//! applying it inside the sandbox's writable roots.
//!
//! A patch is parsed, matched against the files in memory (every hunk located,
//! every new content computed), checked against the writable roots, and only then written,
//! one file at a time, each atomically (a temporary file in the same directory renamed over
//! the target). New files are written before old ones are removed, so a move never loses the
//! content.
//!
//! Paths are made absolute against the working directory and normalised lexically (`a/../b`
//! is `b`); the file system then resolves them: the existing part of the path is
//! canonicalised (symbolic links followed) and the rest appended. That resolved path is both
//! what the roots check judges and what is written, so a link inside a root that points
//! outside it is outside, and so is `../../etc/x`. Removing a file removes the directory
//! entry itself (a link, not what it points to); both the entry and its target must lie in a
//! root.
//!
//! What [`apply`] does not guard against: the file system changing between the check and the
//! write. If another process replaces a directory on the path with a symbolic link after
//! the check (or creates a file that an `Add` would then overwrite), the write follows the
//! new link. Where that matters it is not used alone: a confined patch is applied inside the
//! sandbox (Landlock is the backstop, see `confined`), and an approved one with
//! [`apply_approved`], which walks every path from its root with `openat2`
//! (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`) and so writes only at the approved paths. A patch of several files is also not transactional: each file is replaced
//! atomically, but if a write fails midway the files written before it stay written (the
//! error names them).

mod anchored;
pub mod confined;
pub mod diff;
mod edit;
mod error;
mod locate;
mod parse;
mod plan;
mod resolve;

#[cfg(test)]
mod tests;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use agentwire_protocol::FileUpdateChange;

pub use error::PatchError;
use parse::FileOp;
pub use parse::Patch;
use resolve::{absolute, real, real_entry, real_roots, within};

/// Parses `text`.
pub fn parse(text: &str) -> Result<Patch, PatchError> {
    parse::parse(text)
}

/// The changes `patch` would make to the files under `cwd` as they are now: one entry per
/// file, absolute path, unified diff.
pub fn preview(patch: &Patch, cwd: &Path) -> Result<Vec<FileUpdateChange>, PatchError> {
    Ok(plan::plan(patch, cwd)?.changes)
}

/// The paths `patch` writes (adds, updates, deletes, move targets) that lie outside every
/// root of `roots`, after resolving `..` and symbolic links.
pub fn outside_roots(patch: &Patch, cwd: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    let roots = real_roots(cwd, roots);
    let mut outside = Vec::new();
    let mut judge = |abs: &Path, resolved: Option<PathBuf>| {
        // A path that cannot be resolved (dangling or looping link) is never trusted.
        let (path, inside) = match resolved {
            Some(path) => {
                let inside = within(&path, &roots);
                (path, inside)
            }
            None => (abs.to_path_buf(), false),
        };
        if !inside && !outside.contains(&path) {
            outside.push(path);
        }
    };
    for op in &patch.files {
        match op {
            FileOp::Add { path, .. } => {
                let abs = absolute(cwd, path);
                judge(&abs, real(&abs));
            }
            FileOp::Delete { path } => {
                let abs = absolute(cwd, path);
                judge(&abs, real_entry(&abs));
                judge(&abs, real(&abs));
            }
            FileOp::Update { path, move_to, .. } => {
                let abs = absolute(cwd, path);
                judge(&abs, real(&abs));
                if let Some(move_to) = move_to {
                    judge(&abs, real_entry(&abs));
                    let dest = absolute(cwd, move_to);
                    judge(&dest, real(&dest));
                }
            }
        }
    }
    outside
}

/// Applies `patch`, which the client approved, under `cwd` exactly at the paths it names:
/// each reached from the outermost of `roots` (and `cwd`) holding it, or from `/`, without
/// following any symbolic link, at the moment of writing (see `anchored`). A path that
/// resolves through a link is refused and nothing is written. Returns the changes made.
pub fn apply_approved(
    patch: &Patch,
    cwd: &Path,
    roots: &[PathBuf],
) -> Result<Vec<FileUpdateChange>, PatchError> {
    anchored::apply(patch, cwd, roots)
}

/// Applies `patch` under `cwd`. With `roots`, a write outside them is refused before any file
/// changes. Returns the changes made.
pub fn apply(
    patch: &Patch,
    cwd: &Path,
    roots: Option<&[PathBuf]>,
) -> Result<Vec<FileUpdateChange>, PatchError> {
    let plan = plan::plan(patch, cwd)?;
    if let Some(roots) = roots {
        let outside = outside_roots(patch, cwd, roots);
        if !outside.is_empty() {
            let paths: Vec<String> = outside
                .iter()
                .map(|p| format!("`{}`", p.display()))
                .collect();
            return Err(PatchError(format!(
                "the patch writes outside the writable roots of the sandbox: {}; nothing was \
                 changed",
                paths.join(", ")
            )));
        }
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
    for (path, content, permissions) in &plan.writes {
        // The mode bits of the file it replaces (its type bits are not a mode to give).
        let mode = permissions.as_ref().map(|p| p.mode() & 0o7777);
        agentwire_support::atomic_file::replace(path, content.as_bytes(), mode)
            .map_err(|e| failed(&done, format!("cannot write `{}`: {e}", path.display())))?;
        done.push(format!("`{}`", path.display()));
    }
    for path in &plan.removals {
        fs::remove_file(path)
            .map_err(|e| failed(&done, format!("cannot remove `{}`: {e}", path.display())))?;
        done.push(format!("`{}`", path.display()));
    }
    Ok(plan.changes)
}
