//! The current stable schema must not break clients of the newest pinned release unless the
//! major version moved.

use std::path::Path;

use agentwire_codegen::diff::diff_bundles;
use agentwire_codegen::schema::{self, BUNDLE_FILE};
use agentwire_codegen::{Surface, drift, workspace};
use agentwire_protocol::PROTOCOL_VERSION;

fn semver(v: &str) -> Vec<u64> {
    v.split('.')
        .map(|p| p.parse().expect("numeric version part"))
        .collect()
}

/// The newest pinned version, preferring one older than the current version.
fn baseline(versions_dir: &Path) -> String {
    let mut versions: Vec<String> = std::fs::read_dir(versions_dir)
        .expect("read generated/versions")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    versions.sort_by_key(|v| semver(v));
    let older: Vec<&String> = versions
        .iter()
        .filter(|v| semver(v) < semver(PROTOCOL_VERSION))
        .collect();
    older
        .last()
        .map(|v| (*v).clone())
        .or_else(|| versions.last().cloned())
        .expect("at least one pinned version")
}

#[test]
fn no_breaking_change_against_the_newest_pinned_release() {
    let versions_dir = drift::generated_dir().join(workspace::VERSIONS_DIR);
    let baseline = baseline(&versions_dir);
    let path = versions_dir
        .join(&baseline)
        .join(workspace::json_dir(Surface::Stable))
        .join(BUNDLE_FILE);
    let old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read pinned bundle"))
            .expect("pinned bundle is JSON");
    let new = schema::bundle(&schema::collect(Surface::Stable));
    let report = diff_bundles(&old, &new).expect("diff");
    let major_moved = semver(&baseline)[0] != semver(PROTOCOL_VERSION)[0];
    assert!(
        major_moved || !report.has_breaking(),
        "breaking changes against pinned {baseline} without a major version bump (current {PROTOCOL_VERSION}):\n{report}"
    );
}
