//! Keeping `generated/` equal to what the protocol crate determines.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::{FileSet, workspace};

/// The repository's `generated/` directory.
pub fn generated_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("generated")
}

/// Rewrites every managed file under `root`, removing managed files that are no longer
/// generated. Returns how many files were written.
pub fn write(root: &Path) -> Result<usize, Box<dyn std::error::Error>> {
    let expected = workspace::generate_all()?;
    if root.exists() {
        let existing = FileSet::read_from(root)?;
        for (path, _) in existing.iter() {
            if workspace::is_managed(path) && expected.get(path).is_none() {
                std::fs::remove_file(root.join(path))?;
            }
        }
    }
    expected.write_to(root)?;
    Ok(expected.len())
}

/// Compares the managed files under `root` with `expected`; returns a unified diff per
/// difference (empty when everything matches).
pub fn compare(root: &Path, expected: &FileSet) -> std::io::Result<String> {
    let actual = if root.exists() {
        FileSet::read_from(root)?
    } else {
        FileSet::new()
    };
    let mut report = String::new();
    for (path, want) in expected.iter() {
        match actual.get(path) {
            Some(have) if have == want => {}
            Some(have) => {
                let have = String::from_utf8_lossy(have);
                let want = String::from_utf8_lossy(want);
                let diff = similar::TextDiff::from_lines(have.as_ref(), want.as_ref());
                let name = path.display().to_string();
                let _ = write!(
                    report,
                    "{}",
                    diff.unified_diff().context_radius(3).header(
                        &format!("generated/{name} (checked in)"),
                        &format!("generated/{name} (regenerated)")
                    )
                );
            }
            None => {
                let _ = writeln!(report, "missing: generated/{}", path.display());
            }
        }
    }
    for (path, _) in actual.iter() {
        if workspace::is_managed(path) && expected.get(path).is_none() {
            let _ = writeln!(
                report,
                "stale (no longer generated): generated/{}",
                path.display()
            );
        }
    }
    Ok(report)
}
