//! Matching a whole patch against the files as they are, in memory: the changes to report
//! and the final content of every file it touches, before anything is written.

use std::collections::HashMap;
use std::fs::{self, Permissions};
use std::io::Read;
use std::path::{Path, PathBuf};

use agentwire_protocol::{FileUpdateChange, PatchChangeKind};

use super::diff::unified;
use super::edit::apply_hunks;
use super::error::PatchError;
use super::parse::{FileOp, Patch};
use super::resolve::{absolute, real, real_entry};

/// The largest file a patch may read, in bytes.
pub(super) const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The most file content one patch may read in all, in bytes.
const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;

/// What applying a patch amounts to.
#[derive(Debug)]
pub(super) struct Plan {
    /// One entry per file section, in patch order.
    pub(super) changes: Vec<FileUpdateChange>,
    /// Files to write (real path, content, permissions to keep), in patch order.
    pub(super) writes: Vec<(PathBuf, String, Option<Permissions>)>,
    /// Files to remove afterwards (real paths).
    pub(super) removals: Vec<PathBuf>,
}

/// Matches `patch` against the files under `cwd`.
pub(super) fn plan(patch: &Patch, cwd: &Path) -> Result<Plan, PatchError> {
    let mut files = Files::default();
    let mut changes = Vec::with_capacity(patch.files.len());
    for op in &patch.files {
        changes.push(files.apply(op, cwd)?);
    }
    let mut writes = Vec::new();
    let mut removals = Vec::new();
    for file in files.entries.into_iter().filter(|file| file.dirty) {
        match (file.now, file.disk) {
            (Some(content), _) => writes.push((file.path, content, file.permissions)),
            (None, Disk::File { .. }) => removals.push(file.path),
            (None, _) => {}
        }
    }
    Ok(Plan {
        changes,
        writes,
        removals,
    })
}

/// The files a patch has touched so far: their content as the earlier sections left it.
#[derive(Default)]
struct Files {
    /// In the order first touched.
    entries: Vec<File>,
    /// Index into `entries` by real path.
    index: HashMap<PathBuf, usize>,
    /// Bytes read from disk so far.
    read: u64,
}

/// A file a patch touches.
struct File {
    /// Its real path.
    path: PathBuf,
    /// What was there before the patch.
    disk: Disk,
    /// Its content now (`None`: absent).
    now: Option<String>,
    /// Whether the patch changed it.
    dirty: bool,
    /// The mode to write it with (`None`: the default for a new file).
    permissions: Option<Permissions>,
}

/// What a path held before the patch.
enum Disk {
    /// Nothing.
    Missing,
    /// A directory (or something else that is not a regular file).
    NotAFile,
    /// A regular file.
    File {
        /// Its mode.
        permissions: Permissions,
        /// Whether its content is not UTF-8 (it was read lossily and cannot be edited).
        binary: bool,
    },
}

impl Files {
    /// Applies one section; `cwd` resolves its paths.
    fn apply(&mut self, op: &FileOp, cwd: &Path) -> Result<FileUpdateChange, PatchError> {
        match op {
            FileOp::Add { path, content } => {
                let abs = absolute(cwd, path);
                let file = self.load(&write_path(&abs), path)?;
                let entry = &self.entries[file];
                if entry.now.is_some() || (matches!(entry.disk, Disk::NotAFile) && !entry.dirty) {
                    return Err(PatchError(format!(
                        "`{path}`: cannot add the file: it already exists"
                    )));
                }
                self.set(file, Some(content.clone()));
                Ok(change(&abs, PatchChangeKind::Add, content.clone()))
            }
            FileOp::Delete { path } => {
                let abs = absolute(cwd, path);
                let file = self.load(&entry_path(&abs), path)?;
                let old = self.existing(file, path, "delete")?.to_owned();
                self.set(file, None);
                Ok(change(&abs, PatchChangeKind::Delete, old))
            }
            FileOp::Update {
                path,
                move_to,
                hunks,
            } => {
                let abs = absolute(cwd, path);
                let source = self.load(&write_path(&abs), path)?;
                self.editable(source, path)?;
                let old = self.existing(source, path, "update")?;
                let new = apply_hunks(path, old, hunks)?;
                let diff = unified(old, &new, path, move_to.as_deref().unwrap_or(path));
                let Some(move_to) = move_to else {
                    self.set(source, Some(new));
                    return Ok(change(&abs, PatchChangeKind::update().build(), diff));
                };
                let dest_abs = absolute(cwd, move_to);
                let dest = self.load(&write_path(&dest_abs), move_to)?;
                if matches!(self.entries[dest].disk, Disk::NotAFile) && !self.entries[dest].dirty {
                    return Err(PatchError(format!(
                        "`{move_to}`: cannot move `{path}` there: it is not a regular file"
                    )));
                }
                if dest != source {
                    // When `path` is a link, the link goes and the file it points to stays.
                    let entry = self.load(&entry_path(&abs), path)?;
                    self.set(entry, None);
                    if self.entries[dest].now.is_none() {
                        self.entries[dest].permissions = self.entries[source].permissions.clone();
                    }
                }
                self.set(dest, Some(new));
                let kind = PatchChangeKind::update()
                    .move_path(dest_abs.to_string_lossy().into_owned())
                    .build();
                Ok(change(&abs, kind, diff))
            }
        }
    }

    /// The entry for `real_path` (what the patch calls `shown`), read from disk the first
    /// time.
    fn load(&mut self, real_path: &Path, shown: &str) -> Result<usize, PatchError> {
        if let Some(&index) = self.index.get(real_path) {
            return Ok(index);
        }
        let (disk, now) = read(real_path, shown, &mut self.read)?;
        let permissions = match &disk {
            Disk::File { permissions, .. } => Some(permissions.clone()),
            _ => None,
        };
        self.entries.push(File {
            path: real_path.to_path_buf(),
            disk,
            now,
            dirty: false,
            permissions,
        });
        self.index
            .insert(real_path.to_path_buf(), self.entries.len() - 1);
        Ok(self.entries.len() - 1)
    }

    /// The current content of entry `file`, or why it cannot be `verb`d.
    fn existing(&self, file: usize, shown: &str, verb: &str) -> Result<&str, PatchError> {
        let entry = &self.entries[file];
        match (&entry.now, &entry.disk) {
            (Some(content), _) => Ok(content),
            (None, Disk::NotAFile) if !entry.dirty => Err(PatchError(format!(
                "`{shown}`: cannot {verb} it: it is not a regular file"
            ))),
            (None, _) => Err(PatchError(format!(
                "`{shown}`: cannot {verb} the file: it does not exist"
            ))),
        }
    }

    /// Fails when entry `file` holds content that is not text.
    fn editable(&self, file: usize, shown: &str) -> Result<(), PatchError> {
        let entry = &self.entries[file];
        if !entry.dirty && matches!(entry.disk, Disk::File { binary: true, .. }) {
            return Err(PatchError(format!(
                "`{shown}`: cannot update the file: it is not UTF-8 text"
            )));
        }
        Ok(())
    }

    /// Sets entry `file`'s content.
    fn set(&mut self, file: usize, content: Option<String>) {
        let entry = &mut self.entries[file];
        entry.now = content;
        entry.dirty = true;
    }
}

/// Where writing `abs` lands: every symbolic link followed (a dangling one leaves `abs`).
fn write_path(abs: &Path) -> PathBuf {
    real(abs).unwrap_or_else(|| abs.to_path_buf())
}

/// The directory entry removing `abs` removes (a link itself, not its target).
fn entry_path(abs: &Path) -> PathBuf {
    real_entry(abs).unwrap_or_else(|| abs.to_path_buf())
}

/// What `path` holds on disk, and its text; `shown` names it in errors; `total` counts the
/// bytes read by the whole patch.
fn read(path: &Path, shown: &str, total: &mut u64) -> Result<(Disk, Option<String>), PatchError> {
    let failed = |e: std::io::Error| PatchError(format!("`{shown}`: cannot read the file: {e}"));
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Nothing there, or a dangling link: either way no content.
            return Ok(match fs::symlink_metadata(path) {
                Ok(_) => (Disk::NotAFile, None),
                Err(_) => (Disk::Missing, None),
            });
        }
        Err(e) => return Err(failed(e)),
    };
    if !meta.is_file() {
        return Ok((Disk::NotAFile, None));
    }
    let too_big = |size: u64| {
        PatchError(format!(
            "`{shown}`: the file is {size} bytes; the limit is {MAX_FILE_BYTES} bytes (64 MiB)"
        ))
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::new();
    // Opened without blocking and checked again on the descriptor: a FIFO swapped in since
    // the check above must not hang the patch (issue #32).
    agentwire_support::regular_file::open_regular(path)
        .and_then(|(f, _)| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(failed)?;
    let size = bytes.len() as u64;
    if size > MAX_FILE_BYTES {
        return Err(too_big(size));
    }
    *total += size;
    if *total > MAX_TOTAL_BYTES {
        return Err(PatchError(format!(
            "`{shown}`: the patch reads more than {MAX_TOTAL_BYTES} bytes (256 MiB) of files \
             in all; split it"
        )));
    }
    let (binary, text) = match String::from_utf8(bytes) {
        Ok(text) => (false, text),
        Err(e) => (true, String::from_utf8_lossy(e.as_bytes()).into_owned()),
    };
    let disk = Disk::File {
        permissions: meta.permissions(),
        binary,
    };
    Ok((disk, Some(text)))
}

/// A change entry for `abs`.
fn change(abs: &Path, kind: PatchChangeKind, diff: String) -> FileUpdateChange {
    FileUpdateChange::builder()
        .path(abs.to_string_lossy().into_owned())
        .kind(kind)
        .diff(diff)
        .build()
}
