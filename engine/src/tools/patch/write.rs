//! Putting a file's new content in place atomically: readers see the old file or the new
//! one, never a half-written one.

use std::fs::{self, OpenOptions, Permissions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes the temporary files of concurrent writes in one process.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// Replaces (or creates) `path` with `content`: writes a temporary file in the same
/// directory (creating the directories), flushes it to disk, then renames it over `path`.
/// `permissions` are given to the new file when set.
pub(super) fn write_atomic(
    path: &Path,
    content: &str,
    permissions: Option<&Permissions>,
) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no parent"))?;
    fs::create_dir_all(dir)?;
    let mut attempts = 0;
    let (temp, mut file) = loop {
        attempts += 1;
        let temp = dir.join(format!(
            ".apply_patch.{}.{}.tmp",
            std::process::id(),
            NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
        ));
        // `create_new` never follows or reuses an existing entry.
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => break (temp, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 100 => continue,
            Err(e) => return Err(e),
        }
    };
    let written = (|| {
        file.write_all(content.as_bytes())?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions.clone())?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}
