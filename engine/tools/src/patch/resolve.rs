//! Where a patch path really lands: lexically normalised against the working directory for
//! display, then resolved through the file system (symbolic links followed) for writing and
//! for the writable-roots check, so that the check and the write see the same path.

use std::fs;
use std::path::{Component, Path, PathBuf};

/// `path` (as the patch wrote it) made absolute against `cwd`, with `.` and `..` removed
/// without looking at the file system.
pub(super) fn absolute(cwd: &Path, path: &str) -> PathBuf {
    normalize(&cwd.join(path))
}

/// `path` with `.` dropped and `..` applied to the component before it (`..` above the root
/// stays at the root).
pub(super) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    out
}

/// `path` as the file system sees it: its longest existing ancestor canonicalised (every
/// symbolic link followed), then the components that do not exist yet appended (`..` among
/// them removes the one before). `None` when the existing part cannot be canonicalised (a
/// dangling or looping symbolic link, no permission): such a path is never trusted.
pub(super) fn real(path: &Path) -> Option<PathBuf> {
    let components: Vec<Component<'_>> = path.components().collect();
    let mut existing = components.len();
    while existing > 0 {
        let prefix: PathBuf = components[..existing].iter().collect();
        if fs::symlink_metadata(&prefix).is_ok() {
            break;
        }
        existing -= 1;
    }
    let mut out = if existing == 0 {
        PathBuf::new()
    } else {
        fs::canonicalize(components[..existing].iter().collect::<PathBuf>()).ok()?
    };
    for component in &components[existing..] {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// The real path of the directory entry `path` names, not of what it links to: its parent
/// resolved, and its own name appended. What removing `path` would remove.
pub(super) fn real_entry(path: &Path) -> Option<PathBuf> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Some(real(parent)?.join(name)),
        _ => real(path),
    }
}

/// The roots as the file system sees them (relative roots are taken against `cwd`).
pub(super) fn real_roots(cwd: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .map(|root| {
            let root = normalize(&cwd.join(root));
            real(&root).unwrap_or(root)
        })
        .collect()
}

/// Whether `path` is one of `roots` or lies beneath one.
pub(super) fn within(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_dots_lexically() {
        assert_eq!(
            absolute(Path::new("/w/p"), "a/./b/../c"),
            PathBuf::from("/w/p/a/c")
        );
        assert_eq!(
            absolute(Path::new("/w/p"), "../../../etc/x"),
            PathBuf::from("/etc/x")
        );
        assert_eq!(absolute(Path::new("/w"), "/abs/x"), PathBuf::from("/abs/x"));
        assert_eq!(normalize(Path::new("a/../../b")), PathBuf::from("../b"));
    }

    #[test]
    fn real_follows_links_of_the_existing_part_and_appends_the_rest() {
        let dir = std::env::temp_dir().join(format!("patch-resolve-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("inside")).expect("mkdir");
        let base = fs::canonicalize(&dir).expect("canonical");
        #[cfg(unix)]
        std::os::unix::fs::symlink(base.join("inside"), base.join("link")).expect("symlink");
        #[cfg(unix)]
        assert_eq!(
            real(&base.join("link/new/file")),
            Some(base.join("inside/new/file"))
        );
        assert_eq!(real(&base.join("gone/../x")), Some(base.join("x")));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(base.join("nowhere"), base.join("dangling"))
                .expect("symlink");
            assert_eq!(
                real(&base.join("dangling")),
                None,
                "a dangling link is not trusted"
            );
            assert_eq!(
                real_entry(&base.join("dangling")),
                Some(base.join("dangling"))
            );
        }
        fs::remove_dir_all(&dir).expect("cleanup");
    }
}
