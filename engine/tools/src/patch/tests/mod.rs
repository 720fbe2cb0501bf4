//! Tests of the patch tool: parsing, each operation against real files in temporary
//! directories, the writable-roots check, and properties over arbitrary input.

mod operations;
mod parse_errors;
mod properties;
mod roots;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::{Patch, parse};

/// A fresh directory (canonical path), removed with everything in it when dropped.
pub(super) struct TempDir(PathBuf);

impl TempDir {
    /// Creates one; `name` shows in its path.
    pub(super) fn new(name: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "agentwire-patch-{}-{}-{name}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create the temporary directory");
        Self(fs::canonicalize(&dir).expect("canonicalise the temporary directory"))
    }

    /// Its path.
    pub(super) fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `content` to `rel` (creating directories).
    pub(super) fn write(&self, rel: &str, content: &str) {
        let path = self.0.join(rel);
        fs::create_dir_all(path.parent().expect("a parent")).expect("create directories");
        fs::write(path, content).expect("write a fixture file");
    }

    /// The content of `rel`.
    pub(super) fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.0.join(rel)).expect("read a file")
    }

    /// Whether `rel` exists (a dangling link counts).
    pub(super) fn exists(&self, rel: &str) -> bool {
        fs::symlink_metadata(self.0.join(rel)).is_ok()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// `body` wrapped in `*** Begin Patch` … `*** End Patch` and parsed.
pub(super) fn patch(body: &str) -> Patch {
    parse(&format!("*** Begin Patch\n{body}*** End Patch\n")).expect("a valid patch")
}
