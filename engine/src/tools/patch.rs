//! The `apply_patch` tool: parsing the patch format, previewing it as unified diffs, and
//! applying it inside the sandbox's writable roots.
//!
//! STUB: the contract is fixed here; the implementation is being written.

use std::path::{Path, PathBuf};

use agentwire_protocol::FileUpdateChange;

/// A parsed patch.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Patch {
    _private: (),
}

/// Why a patch was refused; the message is for the model and the user (it names the file and
/// the line of the patch where it can).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct PatchError(pub String);

/// Parses `text`.
pub(crate) fn parse(text: &str) -> Result<Patch, PatchError> {
    let _ = text;
    Err(PatchError("apply_patch is not implemented yet".to_owned()))
}

/// The changes `patch` would make to the files under `cwd` as they are now: one entry per
/// file, absolute path, unified diff.
pub(crate) fn preview(patch: &Patch, cwd: &Path) -> Result<Vec<FileUpdateChange>, PatchError> {
    let _ = (patch, cwd);
    Err(PatchError("apply_patch is not implemented yet".to_owned()))
}

/// The paths `patch` writes (adds, updates, deletes, move targets) that lie outside every
/// root of `roots`, after resolving `..` and symbolic links.
pub(crate) fn outside_roots(patch: &Patch, cwd: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    let _ = (patch, cwd, roots);
    Vec::new()
}

/// Applies `patch` under `cwd`. With `roots`, a write outside them is refused before any file
/// changes. Returns the changes made.
pub(crate) fn apply(
    patch: &Patch,
    cwd: &Path,
    roots: Option<&[PathBuf]>,
) -> Result<Vec<FileUpdateChange>, PatchError> {
    let _ = (patch, cwd, roots);
    Err(PatchError("apply_patch is not implemented yet".to_owned()))
}
