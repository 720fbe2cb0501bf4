//! Where thread files live under the home directory, and the checks every read goes through.
//!
//! ```text
//! $AGENTWIRE_HOME/
//!   state.sqlite                                   the index (a cache of the rollouts)
//!   sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl
//!   archived_sessions/YYYY/MM/DD/rollout-….jsonl   the same files, moved on archive
//!   …/rollout-….jsonl.gz                           a cold rollout, compressed (`rollout/compress`)
//! ```
//!
//! Dates are the thread's creation time in UTC. A rollout is only ever read when its
//! canonical path lies under the canonical home and (on Unix) the file belongs to the user the
//! server runs as; symbolic links are never followed while scanning.

use std::fs::{File, Metadata, OpenOptions};
use std::path::{Component, Path, PathBuf};

/// The folder of live rollouts, relative to the home.
pub const SESSIONS: &str = "sessions";
/// The folder of archived rollouts, relative to the home.
pub const ARCHIVED_SESSIONS: &str = "archived_sessions";
/// The index file, relative to the home.
pub(crate) const INDEX_FILE: &str = "state.sqlite";

/// The home directory and what lies where in it.
#[derive(Debug, Clone)]
pub struct Layout {
    home: PathBuf,
}

impl Layout {
    /// The layout of `home`, made absolute (not canonical: it may not exist yet).
    pub(crate) fn new(home: &Path) -> Self {
        Self {
            home: std::path::absolute(home).unwrap_or_else(|_| home.to_owned()),
        }
    }

    /// The home directory.
    pub(crate) fn home(&self) -> &Path {
        &self.home
    }

    /// The index file.
    pub(crate) fn index_file(&self) -> PathBuf {
        self.home.join(INDEX_FILE)
    }

    /// The folder holding live (`false`) or archived (`true`) rollouts.
    pub(crate) fn root(&self, archived: bool) -> PathBuf {
        self.home.join(if archived {
            ARCHIVED_SESSIONS
        } else {
            SESSIONS
        })
    }

    /// The absolute path of a rollout given its path relative to its root.
    pub fn rollout(&self, archived: bool, relative: &Path) -> PathBuf {
        self.root(archived).join(relative)
    }

    /// Opens the file at `path` as it is (a plain rollout, or the `.gz` of a compressed one)
    /// after checking that it really is a regular file of ours under the home; returns the
    /// open file and its metadata. Rollouts are opened through [`Layout::open_checked`] and
    /// [`Layout::open_reader`] (in [`crate::compressed`]), which take either form.
    pub(crate) fn open_plain(&self, path: &Path) -> std::io::Result<(File, Metadata)> {
        let canonical = path.canonicalize()?;
        let home = self.home.canonicalize()?;
        if !canonical.starts_with(&home) {
            return Err(refused(path, "it lies outside the home directory"));
        }
        let file = File::open(&canonical)?;
        let metadata = file.metadata()?;
        if !metadata.is_file() {
            return Err(refused(path, "it is not a regular file"));
        }
        check_owner(path, &metadata)?;
        Ok((file, metadata))
    }

    /// Every rollout file under the live or archived root: (path relative to the root,
    /// metadata). A compressed rollout (`….jsonl.gz`) is reported under its plain name with
    /// the `.gz`'s metadata, unless its plain file is there too (a leftover of a crash: the
    /// plain file is the truth). Symbolic links and other users' files are left out.
    pub(crate) fn scan(&self, archived: bool) -> Vec<(PathBuf, Metadata)> {
        let root = self.root(archived);
        // Per plain relative path: its metadata and whether it is the plain file's.
        let mut found: std::collections::BTreeMap<PathBuf, (Metadata, bool)> =
            std::collections::BTreeMap::new();
        let mut pending = vec![root.clone()];
        while let Some(dir) = pending.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => {
                    tracing::warn!(dir = %dir.display(), %error, "cannot scan for rollouts");
                    continue;
                }
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let path = entry.path();
                if kind.is_dir() {
                    pending.push(path);
                } else if kind.is_file() && is_rollout_name(&entry.file_name()) {
                    let Ok(metadata) = entry.metadata() else {
                        continue;
                    };
                    if check_owner(&path, &metadata).is_err() {
                        tracing::warn!(path = %path.display(), "rollout owned by another user skipped");
                        continue;
                    }
                    let (plain, is_plain) = match crate::compressed::plain_path(&path) {
                        Some(plain) => (plain, false),
                        None => (path, true),
                    };
                    if let Ok(relative) = plain.strip_prefix(&root) {
                        let slot = found.entry(relative.to_owned());
                        match slot {
                            std::collections::btree_map::Entry::Vacant(slot) => {
                                slot.insert((metadata, is_plain));
                            }
                            std::collections::btree_map::Entry::Occupied(mut slot) => {
                                if is_plain {
                                    slot.insert((metadata, true));
                                }
                            }
                        }
                    }
                }
            }
        }
        found
            .into_iter()
            .map(|(relative, (metadata, _))| (relative, metadata))
            .collect()
    }
}

/// The path of a new rollout relative to its root:
/// `YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl` (UTC).
pub(crate) fn rollout_name(created_at: i64, id: &str) -> PathBuf {
    let at = time::OffsetDateTime::from_unix_timestamp(created_at)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let (year, month, day) = (at.year(), u8::from(at.month()), at.day());
    let file = format!(
        "rollout-{year:04}-{month:02}-{day:02}T{:02}-{:02}-{:02}-{id}.jsonl",
        at.hour(),
        at.minute(),
        at.second()
    );
    PathBuf::from(format!("{year:04}"))
        .join(format!("{month:02}"))
        .join(format!("{day:02}"))
        .join(file)
}

/// Whether a stored relative path is harmless: only plain components, no `..`, not absolute.
pub(crate) fn is_plain_relative(path: &Path) -> bool {
    path.components().all(|c| matches!(c, Component::Normal(_))) && path.components().count() > 0
}

/// Whether `name` is a rollout's, plain (`rollout-….jsonl`) or compressed (`….jsonl.gz`).
fn is_rollout_name(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| {
        let plain = n.strip_suffix(crate::compressed::GZ_SUFFIX).unwrap_or(n);
        n.starts_with("rollout-") && plain.ends_with(".jsonl")
    })
}

fn refused(path: &Path, why: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!("refusing to read {}: {why}", path.display()),
    )
}

#[cfg(unix)]
fn check_owner(path: &Path, metadata: &Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if metadata.uid() == rustix::process::geteuid().as_raw() {
        Ok(())
    } else {
        Err(refused(path, "it belongs to another user"))
    }
}

#[cfg(not(unix))]
fn check_owner(_: &Path, _: &Metadata) -> std::io::Result<()> {
    Ok(())
}

/// Creates `dir` and its parents, private to the user on Unix (mode 0700).
pub(crate) fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Makes files created through `options` private to the user on Unix (mode 0600).
pub(crate) fn private_file_mode(options: &mut OpenOptions) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = options;
}

/// Moves the rollout `relative` from one root to the other, durably, in whichever form it is
/// kept (see [`crate::compressed::move_either`]).
pub(crate) fn move_rollout(
    layout: &Layout,
    relative: &Path,
    to_archive: bool,
) -> std::io::Result<()> {
    let from = layout.rollout(!to_archive, relative);
    let to = layout.rollout(to_archive, relative);
    crate::compressed::move_either(layout, &from, &to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollout_names_follow_the_date_layout() {
        // 2026-11-29T15:56:23Z
        let name = rollout_name(1_795_967_783, "abc");
        assert_eq!(
            name,
            PathBuf::from("2026/11/29/rollout-2026-11-29T15-56-23-abc.jsonl")
        );
    }

    #[test]
    fn only_plain_relative_paths_are_accepted() {
        assert!(is_plain_relative(Path::new("2026/11/29/rollout-x.jsonl")));
        assert!(!is_plain_relative(Path::new("../x.jsonl")));
        assert!(!is_plain_relative(Path::new("/etc/passwd")));
        assert!(!is_plain_relative(Path::new("")));
    }

    #[test]
    fn a_scan_reports_compressed_rollouts_under_their_plain_names() {
        let home = tempfile::tempdir().expect("scratch home");
        let layout = Layout::new(home.path());
        let day = layout.root(false).join("2026/01/01");
        std::fs::create_dir_all(&day).expect("dirs");
        std::fs::write(day.join("rollout-a.jsonl"), "a").expect("a");
        std::fs::write(day.join("rollout-b.jsonl.gz"), "bb").expect("b");
        // Both forms of c: the plain one is reported.
        std::fs::write(day.join("rollout-c.jsonl"), "c").expect("c");
        std::fs::write(day.join("rollout-c.jsonl.gz"), "cccc").expect("c.gz");
        std::fs::write(day.join("rollout-d.jsonl.gz.x.1.2.tmp"), "").expect("temp");
        let mut found: Vec<(String, u64)> = layout
            .scan(false)
            .into_iter()
            .map(|(relative, metadata)| (relative.display().to_string(), metadata.len()))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("2026/01/01/rollout-a.jsonl".to_owned(), 1),
                ("2026/01/01/rollout-b.jsonl".to_owned(), 2),
                ("2026/01/01/rollout-c.jsonl".to_owned(), 1),
            ]
        );
    }
}
