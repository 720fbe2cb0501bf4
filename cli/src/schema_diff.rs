//! `schema diff OLD NEW`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agentwire_codegen::diff;
use agentwire_codegen::schema::BUNDLE_FILE;

/// Diffs two bundles and prints the report; exit code 1 when a change is breaking.
pub fn run(old: &Path, new: &Path, json: bool) -> Result<ExitCode, String> {
    let old_bundle = read_bundle(old)?;
    let new_bundle = read_bundle(new)?;
    let report = diff::diff_bundles(&old_bundle, &new_bundle).map_err(|e| e.to_string())?;
    if json {
        let text = serde_json::to_string_pretty(&report.to_json()).map_err(|e| e.to_string())?;
        crate::stdout::line(&text);
    } else {
        crate::stdout::print(&report.to_string());
    }
    Ok(if report.has_breaking() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn bundle_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(BUNDLE_FILE)
    } else {
        path.to_owned()
    }
}

fn read_bundle(path: &Path) -> Result<serde_json::Value, String> {
    let file = bundle_path(path);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read bundle {}: {e}", file.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", file.display()))
}
