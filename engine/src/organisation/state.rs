//! A piece of server-wide state kept as one JSON file under the home: read once when the
//! server starts, held in memory, and on every change written whole to a temporary file that
//! is flushed and renamed over the old one (the directory synced after), so a crash leaves the
//! old file or the new one, never a mix.
//!
//! A file that exists but does not read (damaged, or written by a newer build) is never
//! overwritten: every request that needs it answers with the file's path and the reason until
//! someone repairs or removes it.
//!
//! Readers never wait for the disk: they take the state as last written, while a change (one
//! at a time) writes its file and only then puts the new state in place.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agentwire_store::error::ThreadError;
use agentwire_support::lock;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The format version these files are written in, and the newest this build reads.
pub(crate) const VERSION: u32 = 1;

/// One state file and what it holds.
#[derive(Debug)]
pub(crate) struct State<T> {
    path: PathBuf,
    /// What the file holds, or why it could not be read; locked only to look or to swap.
    held: Mutex<Result<Arc<T>, String>>,
    /// Held by the change being written, so that changes run one at a time.
    writing: Mutex<()>,
}

/// What a state file must say about itself.
pub(crate) trait Versioned {
    /// The format version the file declares.
    fn version(&self) -> u32;
}

impl<T> State<T>
where
    T: Default + Clone + PartialEq + Serialize + DeserializeOwned + Versioned,
{
    /// The state kept in `path`: empty (`T::default()`) when there is no file yet.
    pub(crate) fn open(path: PathBuf) -> Self {
        let held = read(&path).map(Arc::new);
        if let Err(reason) = &held {
            tracing::error!(
                reason,
                "organisation state unreadable; requests needing it fail"
            );
        }
        Self {
            path,
            held: Mutex::new(held),
            writing: Mutex::new(()),
        }
    }

    /// Runs `look` on what the file holds (as last written; never waits for a write).
    pub(crate) fn read<R>(&self, look: impl FnOnce(&T) -> R) -> Result<R, ThreadError> {
        let state = self.current()?;
        Ok(look(state.as_ref()))
    }

    /// Runs `change` on a copy of what the file holds; when it succeeds and the copy differs,
    /// writes the copy and keeps it. Changes run one at a time; this blocks on the disk, so
    /// call it on the blocking pool.
    pub(crate) fn update<R>(
        &self,
        change: impl FnOnce(&mut T) -> Result<R, ThreadError>,
    ) -> Result<R, ThreadError> {
        let _writing = lock(&self.writing);
        let state = self.current()?;
        let mut copy = T::clone(&state);
        let answer = change(&mut copy)?;
        if copy != *state {
            write(&self.path, &copy)?;
            *lock(&self.held) = Ok(Arc::new(copy));
        }
        Ok(answer)
    }

    /// The state as last written.
    fn current(&self) -> Result<Arc<T>, ThreadError> {
        lock(&self.held)
            .as_ref()
            .map(Arc::clone)
            .map_err(|reason| ThreadError::Storage(reason.clone()))
    }
}

/// Reads the state file at `path`: `T::default()` when there is none.
fn read<T: Default + DeserializeOwned + Versioned>(path: &Path) -> Result<T, String> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(T::default()),
        Err(error) => return Err(format!("{} cannot be read: {error}", path.display())),
    };
    let state: T = serde_json::from_slice(&text).map_err(|error| {
        format!(
            "{} is not valid ({error}); repair or remove it",
            path.display()
        )
    })?;
    if state.version() > VERSION {
        return Err(format!(
            "{} has format version {}, newer than this build reads ({VERSION})",
            path.display(),
            state.version()
        ));
    }
    Ok(state)
}

/// Puts `state` in `path` atomically and durably (private to the user).
fn write<T: Serialize>(path: &Path, state: &T) -> Result<(), ThreadError> {
    let failed = |error: std::io::Error| {
        ThreadError::Storage(format!("{} cannot be written: {error}", path.display()))
    };
    let mut text = serde_json::to_vec_pretty(state)
        .map_err(|error| ThreadError::Storage(format!("{}: {error}", path.display())))?;
    text.push(b'\n');
    agentwire_support::atomic_file::replace(path, &text, Some(0o600)).map_err(failed)?;
    if let Some(dir) = path.parent() {
        agentwire_support::atomic_file::sync_dir(dir).map_err(failed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Counter {
        version: u32,
        count: u32,
    }

    impl Default for Counter {
        fn default() -> Self {
            Self {
                version: VERSION,
                count: 0,
            }
        }
    }

    impl Versioned for Counter {
        fn version(&self) -> u32 {
            self.version
        }
    }

    #[test]
    fn a_change_is_written_and_read_back_by_the_next_server() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sub").join("counter.json");
        let state = State::<Counter>::open(path.clone());
        assert_eq!(state.read(|c| c.count).expect("reads"), 0);
        assert!(!path.exists(), "nothing written before a change");
        state
            .update(|c| {
                c.count = 3;
                Ok(())
            })
            .expect("writes");
        let again = State::<Counter>::open(path.clone());
        assert_eq!(again.read(|c| c.count).expect("reads"), 3);
    }

    #[test]
    fn a_failed_change_keeps_the_old_state_and_a_damaged_file_is_left_alone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("counter.json");
        let state = State::<Counter>::open(path.clone());
        let refused = state.update(|c| {
            c.count = 9;
            Err::<(), _>(ThreadError::InvalidParams("no".into()))
        });
        assert!(refused.is_err());
        assert_eq!(state.read(|c| c.count).expect("reads"), 0);

        std::fs::write(&path, b"{not json").expect("damage");
        let damaged = State::<Counter>::open(path.clone());
        let error = damaged.read(|c| c.count).expect_err("refused");
        assert!(error.to_string().contains("counter.json"), "{error}");
        assert!(damaged.update(|_| Ok(())).is_err());
        assert_eq!(
            std::fs::read(&path).expect("still there"),
            b"{not json",
            "a damaged file is never overwritten"
        );

        std::fs::write(&path, br#"{"version":99,"count":1}"#).expect("newer");
        let newer = State::<Counter>::open(path);
        assert!(
            newer
                .read(|c| c.count)
                .expect_err("refused")
                .to_string()
                .contains("newer")
        );
    }
}
