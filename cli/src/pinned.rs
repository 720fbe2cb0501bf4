//! Pinned protocol releases, embedded in the binary from `generated/versions/`.

use agentwire_codegen::FileSet;
use include_dir::{Dir, include_dir};

static VERSIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../generated/versions");

/// The pinned versions, in semver order.
pub fn versions() -> Vec<&'static str> {
    let mut versions: Vec<&str> = VERSIONS.dirs().filter_map(|d| d.path().to_str()).collect();
    versions.sort_by_key(|v| semver_key(v));
    versions
}

fn semver_key(version: &str) -> Vec<u64> {
    version
        .split('.')
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

/// The files of one part (e.g. `json`, `experimental/typescript`) of a pinned version.
pub fn files(version: &str, part: &str) -> Option<FileSet> {
    let dir = VERSIONS.get_dir(format!("{version}/{part}"))?;
    let mut set = FileSet::new();
    add(dir, &format!("{version}/{part}"), &mut set);
    Some(set)
}

fn add(dir: &Dir<'static>, strip: &str, set: &mut FileSet) {
    for file in dir.files() {
        if let Ok(relative) = file.path().strip_prefix(strip) {
            set.insert(relative, file.contents());
        }
    }
    for sub in dir.dirs() {
        add(sub, strip, set);
    }
}
