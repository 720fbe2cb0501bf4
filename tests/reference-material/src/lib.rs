//! Where the tests find the reference material: the codex app-server schema bundle
//! (`codex-app-server-schema/`), the MCP `tools/list` answer (`codex-mcp-tools.json`) and the
//! reference transcripts (`transcripts/*.jsonl`).
//!
//! [`dir`] looks, in order, in
//! 1. `$AGENTWIRE_REFERENCE_DIR` (when set, it must hold the material: no fallback);
//! 2. `../shared/reference` beside the repository (the layout CI provides);
//! 3. `.tools/reference` in the repository, as `scripts/fetch-reference.sh` writes it;
//!
//! and when none holds it, runs `scripts/fetch-reference.sh` itself, once, under a file lock
//! (`.tools/reference.lock`), so concurrent test processes wait for one fetch instead of racing.
//! If the script fails, the calling test fails with its output: there is no silent skip.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The files every complete reference directory holds.
const REQUIRED: &[&str] = &[
    "codex-app-server-schema/codex_app_server_protocol.schemas.json",
    "codex-app-server-schema/codex_app_server_protocol.v2.schemas.json",
    "codex-mcp-tools.json",
    "transcripts/codex-0.171.0-stdio.jsonl",
    "transcripts/codex-0.171.0-turn.jsonl",
    "transcripts/codex-0.153.4-mcp-turn.jsonl",
];

/// The repository root (this crate lives in `<repo>/tests/reference-material`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The reference's full schema, experimental methods included (`generate-json-schema
/// --experimental`), which only `scripts/fetch-reference.sh` writes (the shared material holds
/// the stable surface alone).
const EXPERIMENTAL: &str =
    "codex-app-server-schema-experimental/codex_app_server_protocol.v2.schemas.json";

/// What `dir` is missing of the files every complete reference directory holds, if anything.
fn missing(dir: &Path) -> Vec<&'static str> {
    missing_of(dir, REQUIRED)
}

/// What `dir` is missing of `required`, if anything.
fn missing_of(dir: &Path, required: &[&'static str]) -> Vec<&'static str> {
    required
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect()
}

/// The reference directory; panics (failing the test) with the reason when there is none and
/// it cannot be produced.
pub fn dir() -> PathBuf {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match DIR.get_or_init(find) {
        Ok(dir) => dir.clone(),
        Err(reason) => panic!("no reference material: {reason}"),
    }
}

/// The folder of the reference's full schema bundle (the stable surface and the experimental
/// methods: `codex_app_server_protocol.v2.schemas.json`, `ClientRequest.json`, …). Looked for in
/// `$AGENTWIRE_REFERENCE_DIR`, then `.tools/reference`; made there by
/// `scripts/fetch-reference.sh` when absent. Panics (failing the test) with the reason when it
/// cannot be produced.
pub fn experimental_schema_dir() -> PathBuf {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let found = DIR.get_or_init(|| {
        let required = [EXPERIMENTAL];
        if let Some(dir) = std::env::var_os("AGENTWIRE_REFERENCE_DIR").map(PathBuf::from)
            && missing_of(&dir, &required).is_empty()
        {
            return Ok(dir);
        }
        let repo = repo();
        let fetched = repo.join(".tools/reference");
        if missing_of(&fetched, &required).is_empty() {
            return Ok(fetched);
        }
        fetch(&repo, &fetched, &required)
    });
    match found {
        Ok(dir) => dir.join("codex-app-server-schema-experimental"),
        Err(reason) => panic!("no experimental reference schema: {reason}"),
    }
}

/// A file of the reference directory, e.g. `transcripts/codex-0.171.0-turn.jsonl`.
pub fn file(relative: &str) -> PathBuf {
    dir().join(relative)
}

fn find() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("AGENTWIRE_REFERENCE_DIR") {
        let dir = PathBuf::from(dir);
        let missing = missing(&dir);
        return if missing.is_empty() {
            Ok(dir)
        } else {
            Err(format!(
                "AGENTWIRE_REFERENCE_DIR={} lacks {}",
                dir.display(),
                missing.join(", ")
            ))
        };
    }
    let repo = repo();
    let shared = repo.join("../shared/reference");
    if missing(&shared).is_empty() {
        return Ok(shared);
    }
    let fetched = repo.join(".tools/reference");
    if missing(&fetched).is_empty() {
        return Ok(fetched);
    }
    fetch(&repo, &fetched, REQUIRED)
}

/// Runs `scripts/fetch-reference.sh` under `.tools/reference.lock`, unless another process
/// produced the material (`required` of it) while this one waited for the lock.
fn fetch(repo: &Path, out: &Path, required: &[&'static str]) -> Result<PathBuf, String> {
    let tools = repo.join(".tools");
    fs::create_dir_all(&tools).map_err(|e| format!("cannot create {}: {e}", tools.display()))?;
    let lock_path = tools.join("reference.lock");
    let lock = File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    if missing_of(out, required).is_empty() && missing(out).is_empty() {
        return Ok(out.to_path_buf());
    }
    let script = repo.join("scripts/fetch-reference.sh");
    eprintln!(
        "reference material: none in $AGENTWIRE_REFERENCE_DIR, ../shared/reference or {}; running {}",
        out.display(),
        script.display()
    );
    let output = Command::new("bash")
        .arg(&script)
        .arg(out)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed ({}):\n{}{}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let missing = missing_of(out, required);
    if missing.is_empty() {
        Ok(out.to_path_buf())
    } else {
        Err(format!(
            "{} succeeded but {} lacks {}",
            script.display(),
            out.display(),
            missing.join(", ")
        ))
    }
}
