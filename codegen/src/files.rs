//! An in-memory set of generated files, written to disk or compared with it.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// Generated files keyed by their path relative to an output directory. Ordered, so that
/// everything derived from it is deterministic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSet {
    files: BTreeMap<PathBuf, Vec<u8>>,
}

impl FileSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a file.
    pub fn insert(&mut self, path: impl Into<PathBuf>, contents: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), contents.into());
    }

    /// Adds every file of `other` under the directory `prefix`.
    pub fn extend_under(&mut self, prefix: impl AsRef<Path>, other: FileSet) {
        for (path, contents) in other.files {
            self.files.insert(prefix.as_ref().join(path), contents);
        }
    }

    /// The files, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&Path, &[u8])> {
        self.files.iter().map(|(p, c)| (p.as_path(), c.as_slice()))
    }

    /// The contents of one file.
    pub fn get(&self, path: impl AsRef<Path>) -> Option<&[u8]> {
        self.files.get(path.as_ref()).map(Vec::as_slice)
    }

    /// How many files there are.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Writes every file under `dir`, creating directories as needed.
    ///
    /// `dir` itself is created if missing. Errors name the path that failed.
    pub fn write_to(&self, dir: &Path) -> io::Result<()> {
        for (relative, contents) in &self.files {
            let path = dir.join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| annotate(e, "create directory", parent))?;
            }
            std::fs::write(&path, contents).map_err(|e| annotate(e, "write", &path))?;
        }
        Ok(())
    }

    /// Reads every file under `dir` (recursively) into a set keyed by relative path.
    pub fn read_from(dir: &Path) -> io::Result<FileSet> {
        let mut set = FileSet::new();
        read_dir_into(dir, Path::new(""), &mut set)?;
        Ok(set)
    }
}

fn read_dir_into(root: &Path, relative: &Path, set: &mut FileSet) -> io::Result<()> {
    let dir = root.join(relative);
    let mut entries = std::fs::read_dir(&dir)
        .map_err(|e| annotate(e, "read directory", &dir))?
        .collect::<Result<Vec<_>, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let rel = relative.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            read_dir_into(root, &rel, set)?;
        } else {
            let path = root.join(&rel);
            let contents = std::fs::read(&path).map_err(|e| annotate(e, "read", &path))?;
            set.insert(rel, contents);
        }
    }
    Ok(())
}

fn annotate(error: io::Error, action: &str, path: &Path) -> io::Error {
    io::Error::new(
        error.kind(),
        format!("cannot {action} {}: {error}", path.display()),
    )
}
