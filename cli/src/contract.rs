//! `contract check`: a recorded exchange against a pinned schema bundle.

use std::path::Path;
use std::process::ExitCode;

use agentwire_codegen::contract::{BUNDLE_FILE, Contract, Options, report_json};
use agentwire_protocol::PROTOCOL_VERSION;

use crate::pinned;

/// Exit status when the transcript or the version cannot be read (violations exit 1).
const UNUSABLE: u8 = 2;

/// The contract of `version` (the current one when `None`), from the bundles embedded in the
/// binary.
pub fn contract(version: Option<&str>) -> Result<Contract, String> {
    let version = version.unwrap_or(PROTOCOL_VERSION);
    let bundle = |part: &str| -> Result<String, String> {
        let files = pinned::files(version, part).ok_or_else(|| {
            format!(
                "unknown protocol version {version:?}: this binary knows {} (current: {PROTOCOL_VERSION})",
                pinned::versions().join(", ")
            )
        })?;
        let bytes = files
            .get(BUNDLE_FILE)
            .ok_or_else(|| format!("protocol {version} has no {part}/{BUNDLE_FILE}"))?;
        String::from_utf8(bytes.to_vec()).map_err(|e| format!("{part}/{BUNDLE_FILE}: {e}"))
    };
    Contract::from_bundles(&bundle("json")?, &bundle("experimental/json")?)
}

/// Checks `transcript`; exit 0 when clean, 1 on any violation, 2 when it cannot be checked.
pub fn run(transcript: &Path, version: Option<&str>, experimental: bool, json: bool) -> ExitCode {
    let contract = match contract(version) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(UNUSABLE);
        }
    };
    let text = match std::fs::read(transcript) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            eprintln!(
                "error: cannot read transcript {}: {e}",
                transcript.display()
            );
            return ExitCode::from(UNUSABLE);
        }
    };
    let report = contract.check_transcript(&text, Options { experimental });
    let name = transcript.display().to_string();
    if json {
        let value = report_json(&report, &name);
        crate::stdout::line(
            &serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string()),
        );
    } else {
        crate::stdout::print(&report.to_text(&name));
    }
    if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
