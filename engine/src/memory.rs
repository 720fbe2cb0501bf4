//! Memory: a summary of what the agent learnt across threads, one per home, and each thread's
//! part in it (`thread/memoryMode/set`, `thread/memory/read`, `memory/status`,
//! `memory/reset`).
//!
//! The memory lives in `$AGENTWIRE_HOME/memories/`, laid out as Codex lays out its own
//! (`$CODEX_HOME/memories/`), so an imported Codex memory keeps its files:
//!
//! ```text
//! memories/
//!   memory_summary.md     the summary (Markdown): what `thread/memory/read` returns
//!   consolidated.json     {"threads": ["<id>", …]}: the threads the summary was built from
//!   MEMORY.md, raw_memories.md, rollout_summaries/…   the material behind the summary, if any
//! ```
//!
//! - A thread's memory mode is a rollout record ([`crate::threads::memory`]); a thread never
//!   set is `enabled`. A `disabled` thread reads no summary.
//! - `memory/status` counts the distinct ids of `consolidated.json`; the memory is ready when
//!   that count reaches `minConsolidatedThreads` (20 unless asked) and the summary is not
//!   blank.
//! - `memory/reset` removes the whole folder (never following a symbolic link out of it).
//!
//! This server does not build the summary from threads itself: that takes a model pass over
//! past threads (Codex runs one in the background, with its own prompts). The summary is what
//! an import of a Codex home (`externalAgentConfig/import`, item `MEMORY`, see
//! [`crate::codex_import`]) or the user put there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use agentwire_protocol::methods::{
    MemoryReset, MemoryStatus, ThreadMemoryModeSet, ThreadMemoryRead,
};
use agentwire_protocol::{
    MemoryResetResponse, MemoryStatusParams, MemoryStatusResponse, ThreadMemoryMode,
    ThreadMemoryModeSetParams, ThreadMemoryModeSetResponse, ThreadMemoryReadParams,
    ThreadMemoryReadResponse,
};
use agentwire_runtime::HandlerError;
use serde::{Deserialize, Serialize};

use crate::Engine;
use crate::pool::{blocking, stored};

/// The memory folder under the home.
pub(crate) const DIR: &str = "memories";
/// The summary file in it.
pub(crate) const SUMMARY: &str = "memory_summary.md";
/// The list of threads the summary was built from.
pub(crate) const CONSOLIDATED: &str = "consolidated.json";
/// Longest summary read, in bytes: a larger one is not a summary a model could be shown.
const MAX_SUMMARY_BYTES: u64 = 1024 * 1024;
/// Longest `consolidated.json` read, in bytes.
const MAX_CONSOLIDATED_BYTES: u64 = 4 * 1024 * 1024;
/// `minConsolidatedThreads` when the client sends none.
const DEFAULT_MIN_THREADS: u32 = 20;
/// The range `minConsolidatedThreads` must fall in.
const MIN_THREADS_RANGE: std::ops::RangeInclusive<u32> = 1..=4096;

/// What `consolidated.json` holds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Consolidated {
    /// Ids of the threads the summary was built from.
    #[serde(default)]
    threads: Vec<String>,
}

/// The memory folder of `home`.
pub(crate) fn dir(home: &Path) -> PathBuf {
    home.join(DIR)
}

/// The summary of `home`'s memory: `None` when there is none, it cannot be read (not a
/// regular file, too large, not UTF-8) or it is blank.
pub(crate) fn read_summary(home: &Path) -> Option<String> {
    let path = dir(home).join(SUMMARY);
    let (bytes, longer) =
        match agentwire_support::regular_file::read_regular(&path, MAX_SUMMARY_BYTES) {
            Ok(read) => read,
            Err(error) => {
                if error.kind() != std::io::ErrorKind::NotFound {
                    tracing::warn!(path = %path.display(), %error, "memory summary unreadable");
                }
                return None;
            }
        };
    if longer {
        tracing::warn!(path = %path.display(), "memory summary larger than {MAX_SUMMARY_BYTES} bytes; not read");
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    (!text.trim().is_empty()).then_some(text)
}

/// The distinct ids of the threads `home`'s summary was built from (none when the list is
/// missing or unreadable).
pub(crate) fn consolidated(home: &Path) -> BTreeSet<String> {
    let path = dir(home).join(CONSOLIDATED);
    let bytes = match agentwire_support::regular_file::read_regular(&path, MAX_CONSOLIDATED_BYTES) {
        Ok((bytes, false)) => bytes,
        Ok((_, true)) => {
            tracing::warn!(path = %path.display(), "memory thread list too large; counted as empty");
            return BTreeSet::new();
        }
        Err(error) => {
            if error.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %path.display(), %error, "memory thread list unreadable");
            }
            return BTreeSet::new();
        }
    };
    match serde_json::from_slice::<Consolidated>(&bytes) {
        Ok(list) => list
            .threads
            .into_iter()
            .filter(|id| !id.is_empty())
            .collect(),
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "memory thread list is not valid JSON; counted as empty");
            BTreeSet::new()
        }
    }
}

/// Records (atomically) that `home`'s summary was built from `threads`.
pub(crate) fn write_consolidated(home: &Path, threads: &BTreeSet<String>) -> std::io::Result<()> {
    let list = Consolidated {
        threads: threads.iter().cloned().collect(),
    };
    let text = serde_json::to_vec_pretty(&list).map_err(std::io::Error::other)?;
    agentwire_support::atomic_file::replace(&dir(home).join(CONSOLIDATED), &text, None)
}

/// Forgets `home`'s memory: removes the memory folder (a symbolic link in its place is removed,
/// not followed).
pub(crate) fn reset(home: &Path) -> std::io::Result<()> {
    let path = dir(home);
    match std::fs::symlink_metadata(&path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&path),
        Ok(_) => std::fs::remove_file(&path),
    }
}

/// What `memory/status` answers for `home`, or why `min` is refused.
fn status_of(home: &Path, min: u32) -> MemoryStatusResponse {
    let count = u32::try_from(consolidated(home).len()).unwrap_or(u32::MAX);
    let ready = count >= min && read_summary(home).is_some();
    MemoryStatusResponse::builder()
        .v2_consolidated_threads(count)
        .v2_ready(ready)
        .build()
}

/// `thread/memoryMode/set`.
pub(crate) async fn mode_set(
    engine: &Engine,
    params: ThreadMemoryModeSetParams,
) -> Result<ThreadMemoryModeSetResponse, HandlerError> {
    stored::<ThreadMemoryModeSet, _, _>(engine.threads.clone(), move |t| t.memory_mode_set(params))
        .await
}

/// `thread/memory/read`: the summary, unless the thread's memory mode is `disabled`.
pub(crate) async fn thread_read(
    engine: &Engine,
    params: ThreadMemoryReadParams,
) -> Result<ThreadMemoryReadResponse, HandlerError> {
    let id = params.thread_id;
    let mode =
        stored::<ThreadMemoryRead, _, _>(engine.threads.clone(), move |t| t.memory_mode(&id))
            .await?;
    if mode == ThreadMemoryMode::Disabled {
        return Ok(ThreadMemoryReadResponse::builder().build());
    }
    let home = engine.config.home.clone();
    blocking::<ThreadMemoryRead, _, _>(move || {
        Ok(ThreadMemoryReadResponse::builder()
            .maybe_summary(read_summary(&home))
            .build())
    })
    .await
}

/// `memory/status`.
pub(crate) async fn status(
    engine: &Engine,
    params: MemoryStatusParams,
) -> Result<MemoryStatusResponse, HandlerError> {
    let min = params
        .min_consolidated_threads
        .unwrap_or(DEFAULT_MIN_THREADS);
    if !MIN_THREADS_RANGE.contains(&min) {
        return Err(HandlerError::invalid_params(
            "memory/status",
            format!(
                "minConsolidatedThreads: {min} is out of range; give {} to {}",
                MIN_THREADS_RANGE.start(),
                MIN_THREADS_RANGE.end()
            ),
        ));
    }
    let home = engine.config.home.clone();
    blocking::<MemoryStatus, _, _>(move || Ok(status_of(&home, min))).await
}

/// `memory/reset`.
pub(crate) async fn reset_all(engine: &Engine) -> Result<MemoryResetResponse, HandlerError> {
    let home = engine.config.home.clone();
    blocking::<MemoryReset, _, _>(move || {
        reset(&home).map_err(|error| {
            HandlerError::internal(format!(
                "memory/reset: cannot remove {}: {error}",
                dir(&home).display()
            ))
        })?;
        Ok(MemoryResetResponse::builder().build())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_counts_distinct_threads_and_needs_a_summary() {
        let home = tempfile::tempdir().expect("home");
        let home = home.path();
        assert_eq!(status_of(home, 1).v2_consolidated_threads, 0);
        let threads: BTreeSet<String> = ["a", "b", "c"].map(str::to_owned).into();
        write_consolidated(home, &threads).expect("write list");
        let status = status_of(home, 3);
        assert_eq!(status.v2_consolidated_threads, 3);
        assert!(!status.v2_ready, "no summary yet");
        std::fs::write(dir(home).join(SUMMARY), "   \n").expect("blank summary");
        assert!(!status_of(home, 3).v2_ready, "a blank summary is none");
        std::fs::write(dir(home).join(SUMMARY), "# Memory\n- likes tests\n").expect("summary");
        assert!(status_of(home, 3).v2_ready);
        assert!(!status_of(home, 4).v2_ready, "fewer threads than asked");
        assert_eq!(
            read_summary(home).as_deref(),
            Some("# Memory\n- likes tests\n")
        );
        reset(home).expect("reset");
        assert!(read_summary(home).is_none());
        assert_eq!(status_of(home, 1).v2_consolidated_threads, 0);
        reset(home).expect("a second reset finds nothing to remove");
    }

    #[test]
    fn a_corrupt_thread_list_counts_as_empty() {
        let home = tempfile::tempdir().expect("home");
        std::fs::create_dir_all(dir(home.path())).expect("dir");
        std::fs::write(dir(home.path()).join(CONSOLIDATED), "{not json").expect("write");
        assert!(consolidated(home.path()).is_empty());
    }

    #[test]
    fn reset_removes_a_link_without_following_it() {
        let root = tempfile::tempdir().expect("root");
        let home = root.path().join("home");
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&elsewhere).expect("elsewhere");
        std::fs::write(elsewhere.join(SUMMARY), "keep me").expect("write");
        std::os::unix::fs::symlink(&elsewhere, dir(&home)).expect("link");
        reset(&home).expect("reset");
        assert!(!dir(&home).exists());
        assert!(elsewhere.join(SUMMARY).exists());
    }
}
