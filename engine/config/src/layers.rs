//! The configuration files: reading one as a layer, its version, and finding a project's
//! layers between a working directory and its repository root.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::keys::{Problem, check_text};

/// The project folders looked for in each directory, lowest precedence first.
pub(crate) const PROJECT_FOLDERS: &[&str] = &[".codex", ".agentwire"];

/// What marks a repository root.
const ROOT_MARKER: &str = ".git";

/// The largest configuration file read; a larger one is a problem and its settings are
/// ignored.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// One configuration file as read.
#[derive(Debug, Clone)]
pub struct FileLayer {
    /// The `version` of its contents (`sha256:<hex>`; of the empty text when it is missing).
    pub version: String,
    /// Its settings; empty when it is missing or cannot be parsed.
    pub table: toml::Table,
    /// What is wrong with it.
    pub problems: Vec<Problem>,
}

/// Reads `path` as a layer; a missing file is an empty layer.
pub fn read_file(path: &Path) -> FileLayer {
    // Opened without blocking and read only as a regular file, within a bound: a FIFO put in
    // place of a project's `config.toml` (a model-run command can make one) must not hang
    // whoever reads the configuration (issue #32).
    let read = agentwire_support::regular_file::read_regular(path, MAX_FILE_BYTES).and_then(
        |(bytes, longer)| {
            if longer {
                Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("it is larger than {MAX_FILE_BYTES} bytes"),
                ))
            } else {
                Ok(bytes)
            }
        },
    );
    let text = match read {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => {
            return FileLayer {
                version: version_of(b""),
                table: toml::Table::new(),
                problems: vec![Problem {
                    key_path: None,
                    summary: format!("cannot read {}", path.display()),
                    details: Some(error.to_string()),
                    path: Some(path.to_owned()),
                    range: None,
                    unknown_key: false,
                }],
            };
        }
    };
    let version = version_of(&text);
    let Ok(text) = String::from_utf8(text) else {
        return FileLayer {
            version,
            table: toml::Table::new(),
            problems: vec![Problem {
                key_path: None,
                summary: "TOML syntax error".to_owned(),
                details: Some("the file is not UTF-8".to_owned()),
                path: Some(path.to_owned()),
                range: None,
                unknown_key: false,
            }],
        };
    };
    let checked = check_text(&text);
    FileLayer {
        version,
        table: checked.table.unwrap_or_default(),
        problems: checked
            .problems
            .into_iter()
            .map(|p| p.in_file(path))
            .collect(),
    }
}

/// The `version` of a file with contents `bytes`.
pub fn version_of(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// What identifies a file's contents without reading it: length, modification time, inode and
/// change time; `None` when it does not exist.
pub(crate) type Stamp = Option<(u64, i64, i64, u64, i64, i64)>;

/// The stamp of `path`.
pub(crate) fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ino(),
        meta.ctime(),
        meta.ctime_nsec(),
    ))
}

/// The directories whose project folders apply to `cwd`, the repository root first and `cwd`
/// last; just `cwd` when no ancestor is a repository root.
pub fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.to_owned());
        if dir.join(ROOT_MARKER).exists() {
            dirs.reverse();
            return dirs;
        }
    }
    vec![cwd.to_owned()]
}

/// `cwd` made absolute against the server's working directory.
pub fn absolute(cwd: &str) -> PathBuf {
    let base = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let joined = base.join(cwd);
    std::path::absolute(&joined).unwrap_or(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_dirs_stop_at_the_repository_root() {
        let root = std::env::temp_dir().join(format!("agentwire-layers-{}", std::process::id()));
        let deep = root.join("repo/a/b");
        std::fs::create_dir_all(&deep).expect("dirs");
        assert_eq!(project_dirs(&deep), vec![deep.clone()]);
        std::fs::create_dir_all(root.join("repo/.git")).expect("git");
        assert_eq!(
            project_dirs(&deep),
            vec![root.join("repo"), root.join("repo/a"), deep.clone()]
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn versions_are_content_hashes() {
        assert_eq!(version_of(b"a"), version_of(b"a"));
        assert_ne!(version_of(b"a"), version_of(b"b"));
        assert!(version_of(b"").starts_with("sha256:"));
    }
}
