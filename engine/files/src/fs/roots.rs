//! The directories `fs/*` may use (the roots) and the paths it must never touch (the private
//! paths), as they stand when a request comes in.
//!
//! - Roots: the working directory of every loaded thread, and the `writableRoots` of those
//!   whose sandbox is `workspaceWrite`; while no thread is loaded, the server's working
//!   directory. A root is matched under its own spelling (made absolute, `.` and `..` taken out
//!   lexically) or its canonical one (symlinks resolved), whichever is longer.
//! - Private paths: the agentwire home (`auth.json`, tokens, sessions, config) and the other
//!   private paths of the server (a websocket token file, say), by path or through symlinks:
//!   every file descriptor `fs/*` opens is checked against their canonical paths (where it
//!   really is) and their inodes (the objects themselves, under any name) before it is used.

use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, fstat, statat};

use super::error::{FsError, FsResult, Reason};
use super::resolve::Located;

/// `path` made absolute lexically: `.` dropped, `..` taking out the component before it (never
/// above `/`), repeated slashes collapsed. `None` when it is not absolute.
pub(crate) fn normalize(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// One root, under every spelling that names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Root {
    /// As configured (normalized), then canonical when that differs.
    spellings: Vec<PathBuf>,
}

impl Root {
    /// The root at `path` (made absolute against `base` if it is relative).
    pub(crate) fn new(path: &Path, base: &Path) -> Option<Self> {
        let given = normalize(&base.join(path))?;
        let mut spellings = vec![given.clone()];
        if let Ok(canonical) = std::fs::canonicalize(&given)
            && canonical != given
        {
            spellings.push(canonical);
        }
        Some(Self { spellings })
    }
}

/// What `fs/*` must never touch, by canonical path and by inode.
#[derive(Debug, Default)]
pub(crate) struct Private {
    dirs: Vec<PathBuf>,
    inodes: Vec<(u64, u64)>,
}

impl Private {
    /// The private set for `paths` as they are now (those that do not exist are left out: a
    /// path created later is caught by the next request's set).
    pub(crate) fn new(paths: &[PathBuf]) -> Self {
        let mut private = Self::default();
        for path in paths {
            if let Ok(canonical) = std::fs::canonicalize(path) {
                private.dirs.push(canonical);
            }
            if let Ok(meta) = std::fs::metadata(path) {
                private.inodes.push((meta.dev(), meta.ino()));
            }
        }
        private
    }

    /// Whether `real` (a canonical path) is a private path or lies under one.
    pub(crate) fn covers(&self, real: &Path) -> bool {
        self.dirs.iter().any(|dir| real.starts_with(dir))
    }

    /// Whether an object with this device and inode is itself a private path.
    pub(crate) fn is_private_inode(&self, dev: u64, ino: u64) -> bool {
        self.inodes.contains(&(dev, ino))
    }

    /// Whether a private path lies under `real` (a canonical path), or is it.
    pub(crate) fn inside(&self, real: &Path) -> bool {
        self.dirs.iter().any(|dir| dir.starts_with(real))
    }

    /// Fails with [`Reason::Private`] when `fd` is a private path or lies under one, and with
    /// another reason when that cannot be told (then nothing is done either).
    pub(crate) fn check_fd(&self, fd: impl AsFd) -> Result<(), Reason> {
        let fd = fd.as_fd();
        let stat = fstat(fd).map_err(Reason::from_errno)?;
        if self.is_private_inode(stat.st_dev, stat.st_ino) {
            return Err(Reason::Private);
        }
        let real = real_path(fd)?;
        if self.covers(&real) {
            return Err(Reason::Private);
        }
        Ok(())
    }

    /// Fails when the entry `name` of directory `dir` (not followed if a symlink) is a private
    /// path or lies under one.
    pub(crate) fn check_entry(&self, dir: impl AsFd, name: &std::ffi::OsStr) -> Result<(), Reason> {
        let dir = dir.as_fd();
        match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) if self.is_private_inode(stat.st_dev, stat.st_ino) => {
                return Err(Reason::Private);
            }
            _ => {}
        }
        let real = real_path(dir)?.join(name);
        if self.covers(&real) {
            return Err(Reason::Private);
        }
        Ok(())
    }
}

/// Where the object behind `fd` is now, every symlink resolved (from `/proc/self/fd`).
pub(crate) fn real_path(fd: impl AsFd) -> Result<PathBuf, Reason> {
    let link = format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd());
    std::fs::read_link(&link).map_err(|e| {
        Reason::Io(format!(
            "cannot tell where an opened path lies ({link}: {e}); is /proc mounted?"
        ))
    })
}

/// The roots and private paths one request is served under.
#[derive(Debug)]
pub(crate) struct Scope {
    roots: Vec<Root>,
    pub(crate) private: Private,
}

impl Scope {
    /// A scope over `roots`, never touching `private`.
    pub(crate) fn new(roots: Vec<Root>, private: Private) -> Self {
        Self { roots, private }
    }

    /// Finds the root that `raw` (the `field` member of the params) lies in, by the longest
    /// matching spelling, after making it absolute lexically.
    pub(crate) fn locate<'s>(&'s self, field: &'static str, raw: &str) -> FsResult<Located<'s>> {
        let refuse = |reason| FsError::new(field, raw, reason);
        if raw.contains('\0') {
            return Err(refuse(Reason::Nul));
        }
        let path = normalize(Path::new(raw)).ok_or_else(|| refuse(Reason::NotAbsolute))?;
        let best = self
            .roots
            .iter()
            .flat_map(|root| root.spellings.iter())
            .filter(|spelling| path.starts_with(spelling))
            .max_by_key(|spelling| spelling.components().count())
            .ok_or_else(|| refuse(Reason::OutsideRoots))?;
        let rel = path
            .strip_prefix(best)
            .map_err(|_| refuse(Reason::OutsideRoots))?
            .to_path_buf();
        Ok(Located::new(self, field, raw, best.clone(), rel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_takes_dots_out_without_climbing_above_the_root() {
        let n = |p: &str| normalize(Path::new(p)).map(|p| p.display().to_string());
        assert_eq!(n("/a/./b//c/"), Some("/a/b/c".into()));
        assert_eq!(n("/a/b/../../../etc"), Some("/etc".into()));
        assert_eq!(n("/.."), Some("/".into()));
        assert_eq!(n("a/b"), None);
    }

    #[test]
    fn a_path_belongs_to_the_longest_matching_root_and_dotdot_is_taken_out_first() {
        let scope = Scope::new(
            vec![
                Root::new(Path::new("/w"), Path::new("/")).expect("root"),
                Root::new(Path::new("/w/inner"), Path::new("/")).expect("root"),
            ],
            Private::default(),
        );
        let located = scope.locate("path", "/w/inner/x").expect("inside");
        assert_eq!(located.rel(), Path::new("x"));
        let located = scope.locate("path", "/w/inner").expect("inside");
        assert_eq!(located.rel(), Path::new(""));
        let error = scope
            .locate("path", "/w/../etc/passwd")
            .expect_err("outside");
        assert_eq!(error.reason, Reason::OutsideRoots);
        assert_eq!(error.path, "/w/../etc/passwd");
        let error = scope
            .locate("path", "/wx/a")
            .expect_err("a prefix is not a parent");
        assert_eq!(error.reason, Reason::OutsideRoots);
        let error = scope.locate("sourcePath", "w/a").expect_err("relative");
        assert_eq!(
            (error.field, error.reason),
            ("sourcePath", Reason::NotAbsolute)
        );
    }
}
