//! The history of imports: `$AGENTWIRE_HOME/external_agent_imports.json`, a JSON array of
//! wire [`ExternalAgentConfigImportHistory`] entries, oldest first, replaced atomically on
//! every addition (the newest [`MAX_ENTRIES`] are kept). Imports run by this server and by
//! `agentwire import codex` are added when they finish; `externalAgentConfig/import/
//! recordHistory` adds those a client did itself.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agentwire_protocol::ExternalAgentConfigImportHistory;
use agentwire_support::lock;

/// The file under the home.
pub(crate) const FILE: &str = "external_agent_imports.json";
/// Entries kept.
const MAX_ENTRIES: usize = 500;
/// Largest history read, in bytes.
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Serialises additions within this process (each is a read, then a replace).
static WRITING: Mutex<()> = Mutex::new(());

fn path(home: &Path) -> PathBuf {
    home.join(FILE)
}

/// The imports recorded under `home`, oldest first; a missing file is an empty history, and an
/// unreadable one is reported.
pub(crate) fn read(home: &Path) -> Result<Vec<ExternalAgentConfigImportHistory>, String> {
    let path = path(home);
    let bytes = match agentwire_support::regular_file::read_regular(&path, MAX_BYTES) {
        Ok((bytes, false)) => bytes,
        Ok((_, true)) => return Err(format!("{}: larger than {MAX_BYTES} bytes", path.display())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(format!("{}: {error}", path.display())),
    };
    serde_json::from_slice(&bytes).map_err(|error| {
        format!(
            "{}: not an import history ({error}); move it aside to start a new one",
            path.display()
        )
    })
}

/// Adds `entry` to the history under `home`. An unreadable history is set aside (renamed with
/// a `.corrupt` suffix) rather than lost.
pub(crate) fn append(home: &Path, entry: ExternalAgentConfigImportHistory) -> std::io::Result<()> {
    let _writing = lock(&WRITING);
    let mut entries = match read(home) {
        Ok(entries) => entries,
        Err(reason) => {
            tracing::warn!(reason, "import history set aside");
            let file = path(home);
            std::fs::rename(&file, file.with_extension("json.corrupt"))?;
            Vec::new()
        }
    };
    entries.push(entry);
    let excess = entries.len().saturating_sub(MAX_ENTRIES);
    entries.drain(..excess);
    let bytes = serde_json::to_vec_pretty(&entries).map_err(std::io::Error::other)?;
    agentwire_support::atomic_file::replace(&path(home), &bytes, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> ExternalAgentConfigImportHistory {
        ExternalAgentConfigImportHistory::builder()
            .import_id(id)
            .completed_at_ms(1)
            .successes(Vec::new())
            .failures(Vec::new())
            .build()
    }

    #[test]
    fn entries_are_added_in_order_and_a_corrupt_file_is_set_aside() {
        let home = tempfile::tempdir().expect("home");
        assert!(read(home.path()).expect("empty").is_empty());
        append(home.path(), entry("a")).expect("a");
        append(home.path(), entry("b")).expect("b");
        let ids: Vec<String> = read(home.path())
            .expect("read")
            .into_iter()
            .map(|e| e.import_id)
            .collect();
        assert_eq!(ids, ["a", "b"]);
        std::fs::write(home.path().join(FILE), "[{").expect("corrupt");
        assert!(read(home.path()).is_err());
        append(home.path(), entry("c")).expect("c");
        assert_eq!(read(home.path()).expect("read").len(), 1);
        assert!(
            home.path()
                .join("external_agent_imports.json.corrupt")
                .exists()
        );
    }
}
