//! Opening a path inside its root with no check-then-use race.
//!
//! The root is opened first; everything below it is opened relative to that descriptor with
//! `openat2` and `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`: the kernel refuses any step that
//! would leave the root (`..` above it, an absolute symlink, a relative one that climbs out, a
//! `/proc` magic link), at the moment of the open, so swapping a directory for a symlink
//! between a check and a use gains nothing. Operations on an entry itself (write, remove,
//! create) open its parent that way and then act on one name inside that descriptor
//! (`renameat`, `unlinkat`, `mkdirat` …), which never follows anything. Every descriptor is
//! checked against the private paths (see [`super::roots`]) before it is used.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, Stat, fstat, open, openat2};
use rustix::io::Errno;

use super::error::{FsError, FsResult, Reason};
use super::roots::{Private, Scope};

/// How every path under a root is resolved.
pub(crate) const RESOLVE: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);
/// How one name inside an already opened directory is opened when it must not be a symlink.
pub(crate) const RESOLVE_NAME: ResolveFlags = RESOLVE.union(ResolveFlags::NO_SYMLINKS);
/// `openat2` answers `EAGAIN` when a rename elsewhere raced its `..` checks; it is retried.
const RETRIES: usize = 128;

/// Opens `rel` (relative; empty means `dir` itself) beneath `dir` with `resolve`.
pub(crate) fn open_beneath(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let mut last = Errno::AGAIN;
    for _ in 0..RETRIES {
        match openat2(dir, rel, flags | OFlags::CLOEXEC, Mode::empty(), resolve) {
            Err(Errno::AGAIN) => last = Errno::AGAIN,
            other => return other,
        }
    }
    Err(last)
}

/// The kind of object a `stat` describes.
pub(crate) fn kind(stat: &Stat) -> FileType {
    FileType::from_raw_mode(stat.st_mode)
}

/// A directory descriptor and one name in it: the entry an operation acts on.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The parent directory, opened `O_PATH`.
    pub(crate) dir: OwnedFd,
    pub(crate) name: OsString,
}

/// A path of a request, matched to its root.
#[derive(Debug, Clone)]
pub(crate) struct Located<'s> {
    scope: &'s Scope,
    field: &'static str,
    /// The path as the client wrote it, or as derived from it (an entry under it).
    shown: String,
    /// The root's spelling the path matched.
    root: PathBuf,
    /// The rest of the path below the root (empty for the root itself), no `.` or `..` in it.
    rel: PathBuf,
}

impl<'s> Located<'s> {
    pub(crate) fn new(
        scope: &'s Scope,
        field: &'static str,
        shown: &str,
        root: PathBuf,
        rel: PathBuf,
    ) -> Self {
        Self {
            scope,
            field,
            shown: shown.to_owned(),
            root,
            rel,
        }
    }

    /// The part below the root.
    pub(crate) fn rel(&self) -> &Path {
        &self.rel
    }

    /// Whether this is a root itself.
    pub(crate) fn is_root(&self) -> bool {
        self.rel.as_os_str().is_empty()
    }

    /// The private paths of the request.
    pub(crate) fn private(&self) -> &'s Private {
        &self.scope.private
    }

    /// The params member this path came from.
    pub(crate) fn field(&self) -> &'static str {
        self.field
    }

    /// The path as shown in errors.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// An error about this path.
    pub(crate) fn fail(&self, reason: Reason) -> FsError {
        FsError::new(self.field, self.shown.clone(), reason)
    }

    /// An error about this path from an error number.
    pub(crate) fn fail_errno(&self, errno: Errno) -> FsError {
        self.fail(Reason::from_errno(errno))
    }

    /// The same root with `rel` below it (a prefix of this path, or an entry under it).
    pub(crate) fn with_rel(&self, rel: PathBuf) -> Self {
        let shown = Path::new(&self.root).join(&rel).display().to_string();
        Self {
            scope: self.scope,
            field: self.field,
            shown,
            root: self.root.clone(),
            rel,
        }
    }

    /// The entry `name` under this path.
    pub(crate) fn child(&self, name: &OsStr) -> Self {
        let mut located = self.with_rel(self.rel.join(name));
        located.shown = format!("{}/{}", self.shown.trim_end_matches('/'), name.display());
        located
    }

    fn root_fd(&self) -> FsResult<OwnedFd> {
        open(
            &self.root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| {
            self.fail(Reason::Refused(format!(
                "cannot be reached: its root {} cannot be opened ({errno})",
                self.root.display()
            )))
        })
    }

    /// Opens the path with `flags`, symlinks followed as long as they stay inside the root,
    /// and checks that it is not private.
    pub(crate) fn open(&self, flags: OFlags) -> FsResult<OwnedFd> {
        let root = self.root_fd()?;
        let fd = open_beneath(root.as_fd(), &self.rel, flags, RESOLVE)
            .map_err(|errno| self.fail_errno(errno))?;
        self.scope
            .private
            .check_fd(&fd)
            .map_err(|reason| self.fail(reason))?;
        Ok(fd)
    }

    /// Opens the path `O_PATH` (following symlinks inside the root) and describes it.
    pub(crate) fn probe(&self) -> FsResult<(OwnedFd, Stat)> {
        let fd = self.open(OFlags::PATH)?;
        let stat = fstat(&fd).map_err(|errno| self.fail_errno(errno))?;
        Ok((fd, stat))
    }

    /// Opens the path for reading when it is a regular file (never opening anything else, so
    /// a FIFO or device is refused without side effects).
    pub(crate) fn open_regular(&self) -> FsResult<(File, Stat)> {
        let (_, probed) = self.probe()?;
        match kind(&probed) {
            FileType::RegularFile => {}
            FileType::Directory => return Err(self.fail(Reason::IsADirectory)),
            _ => return Err(self.fail(Reason::NotARegularFile)),
        }
        let fd = self.open(OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY)?;
        let stat = fstat(&fd).map_err(|errno| self.fail_errno(errno))?;
        if (stat.st_dev, stat.st_ino) != (probed.st_dev, probed.st_ino) {
            return Err(self.fail(Reason::Refused(
                "changed while it was being opened; try again".to_owned(),
            )));
        }
        Ok((File::from(fd), stat))
    }

    /// Opens the directory holding the path (`O_PATH`) and checks that neither it nor the
    /// entry is private. A root has no entry to act on: [`Reason::IsARoot`].
    pub(crate) fn entry(&self) -> FsResult<Entry> {
        let name = match self.rel.file_name() {
            Some(name) => name.to_owned(),
            None => return Err(self.fail(Reason::IsARoot)),
        };
        let parent = self.rel.parent().unwrap_or(Path::new(""));
        let root = self.root_fd()?;
        let dir = open_beneath(
            root.as_fd(),
            parent,
            OFlags::PATH | OFlags::DIRECTORY,
            RESOLVE,
        )
        .map_err(|errno| match errno {
            Errno::NOENT => self.fail(Reason::ParentNotFound),
            other => self.fail_errno(other),
        })?;
        let private = &self.scope.private;
        private
            .check_fd(&dir)
            .and_then(|()| private.check_entry(&dir, &name))
            .map_err(|reason| self.fail(reason))?;
        Ok(Entry { dir, name })
    }
}
