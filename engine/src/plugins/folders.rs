//! Names and folders as the plugin modules read and check them: a marketplace's or plugin's
//! name (it names a folder), the folders of a directory, scratch names and times.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use agentwire_protocol::AbsolutePathBuf;

/// Most entries looked at in one folder.
const MAX_ENTRIES: usize = 256;

/// The sub-folders of `dir` whose names do not start with `.`, sorted; none when it does not
/// exist.
pub(crate) fn folders(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .take(MAX_ENTRIES)
        .collect();
    found.sort();
    found
}

/// The last component of `path`.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `path` on the wire.
pub(crate) fn absolute(path: &Path) -> AbsolutePathBuf {
    AbsolutePathBuf(path.display().to_string())
}

/// Checks a marketplace or plugin name: it names folders, so only ASCII letters, digits, `_`
/// and `-` (as Codex allows), at most 64 of them.
pub(crate) fn check_segment(name: &str, what: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "{what} {name:?}: only ASCII letters, digits, `_` and `-` are allowed (1 to 64)"
        ));
    }
    Ok(())
}

/// A name for a scratch folder that no other request of this process uses.
pub(crate) fn unique(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}-{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Now, in Unix seconds.
pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_leave_their_folder_are_refused() {
        assert!(check_segment("lint-2_x", "plugin name").is_ok());
        for bad in ["", "..", "a/b", "a b", "é", &"x".repeat(65)] {
            assert!(check_segment(bad, "plugin name").is_err(), "{bad:?}");
        }
    }
}
