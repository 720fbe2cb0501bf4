//! Applying a patch inside the sandbox: `agentwire apply-patch`, run by the engine through
//! `agentwire sandbox-exec` with the thread's policy, so every write is checked by the kernel
//! (Landlock and the read-only mounts of the command's namespace) at the moment it happens.
//! The engine's own check of the paths comes first and gives the clear message; this one
//! closes the window between that check and the writes, in which a process inside the sandbox
//! could swap a directory for a symbolic link to somewhere else.
//!
//! The helper reads the patch on stdin and prints the changes it made as one JSON array of
//! `FileUpdateChange` on stdout; on failure it prints the reason on stderr and exits 1.

use std::path::{Path, PathBuf};

use agentwire_protocol::FileUpdateChange;

/// Applies `text` under `cwd` (refusing writes outside `roots`): the JSON the helper prints.
pub fn apply_text(text: &str, cwd: &Path, roots: &[PathBuf]) -> Result<String, String> {
    let parsed = super::parse(text).map_err(|e| e.0)?;
    let applied = super::apply(&parsed, cwd, Some(roots)).map_err(|e| e.0)?;
    serde_json::to_string(&applied).map_err(|e| format!("cannot encode the changes: {e}"))
}

/// Reads what the helper printed.
pub fn read_changes(stdout: &[u8]) -> Result<Vec<FileUpdateChange>, String> {
    serde_json::from_slice(stdout)
        .map_err(|e| format!("the patch helper's answer is unreadable: {e}"))
}
