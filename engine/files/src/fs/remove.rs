//! `fs/remove`: a file, a symlink (itself, never its target) or a directory tree. Trees are
//! removed through directory descriptors, one name at a time, bottom up and never following a
//! symlink; a tree deeper than [`MAX_DEPTH`] or holding a private path (the agentwire home) is
//! refused before anything is removed ([`survey`]).

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use agentwire_protocol::{FsRemoveParams, FsRemoveResponse};
use rustix::fs::{AtFlags, FileType, fstat, statat, unlinkat};
use rustix::io::Errno;

use super::error::{FsError, FsResult, Reason};
use super::limits::MAX_DEPTH;
use super::resolve::kind;
use super::roots::{Private, Scope, real_path};
use super::walk::{Frame, Limits, open_dir, survey};

/// Serves `fs/remove` under `scope`.
pub(crate) fn remove(scope: &Scope, params: &FsRemoveParams) -> FsResult<FsRemoveResponse> {
    let at = scope.locate("path", &params.path.0)?;
    let force = params.force.unwrap_or(true);
    let missing = |e: FsError| {
        if force {
            Ok(FsRemoveResponse::builder().build())
        } else {
            Err(e)
        }
    };
    let entry = match at.entry() {
        Ok(entry) => entry,
        Err(e) if matches!(e.reason, Reason::ParentNotFound | Reason::NotFound) => {
            return missing(at.fail(Reason::NotFound));
        }
        Err(e) => return Err(e),
    };
    let stat = match statat(&entry.dir, &entry.name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => stat,
        Err(Errno::NOENT) => return missing(at.fail(Reason::NotFound)),
        Err(errno) => return Err(at.fail_errno(errno)),
    };
    if kind(&stat) != FileType::Directory {
        return match unlinkat(&entry.dir, &entry.name, AtFlags::empty()) {
            Ok(()) => Ok(FsRemoveResponse::builder().build()),
            Err(Errno::NOENT) => missing(at.fail(Reason::NotFound)),
            Err(errno) => Err(at.fail_errno(errno)),
        };
    }
    if !params.recursive.unwrap_or(true) {
        return match unlinkat(&entry.dir, &entry.name, AtFlags::REMOVEDIR) {
            Ok(()) => Ok(FsRemoveResponse::builder().build()),
            Err(Errno::NOENT) => missing(at.fail(Reason::NotFound)),
            Err(errno) => Err(at.fail_errno(errno)),
        };
    }
    let real = real_path(&entry.dir)
        .map_err(|reason| at.fail(reason))?
        .join(&entry.name);
    if at.private().inside(&real) {
        return Err(at.fail(Reason::Private));
    }
    let shown = Path::new(at.shown());
    match open_dir(entry.dir.as_fd(), &entry.name) {
        Ok(top) => {
            let limits = Limits {
                entries: None,
                copyable_only: false,
            };
            survey(top, shown, at.private(), limits).map_err(|(path, reason)| {
                FsError::new(at.field(), path.display().to_string(), reason)
            })?;
        }
        Err(Errno::NOENT) => return missing(at.fail(Reason::NotFound)),
        // Replaced by something else meanwhile: the removal below deals with it.
        Err(_) => {}
    }
    let tree = Tree {
        private: at.private(),
        field: at.field(),
    };
    tree.remove(entry.dir.as_fd(), &entry.name, shown)?;
    Ok(FsRemoveResponse::builder().build())
}

/// Removes the directory `name` of `into` that a failed `fs/copy` made, as far as it can (it
/// holds only what the copy put there).
pub(super) fn remove_made(into: BorrowedFd<'_>, name: &OsStr, private: &Private) {
    let tree = Tree {
        private,
        field: "destinationPath",
    };
    if let Err(error) = tree.remove(into, name, Path::new(name)) {
        tracing::warn!(?error, "cannot remove what a failed fs/copy made");
    }
}

/// One tree removal. [`survey`] found the tree within bounds beforehand; the removal checks
/// depth and private inodes again as it goes, because the tree may change in between.
struct Tree<'p> {
    private: &'p Private,
    field: &'static str,
}

impl Tree<'_> {
    fn fail(&self, shown: &Path, reason: Reason) -> FsError {
        FsError::new(self.field, shown.display().to_string(), reason)
    }

    /// Removes the directory `name` of `parent` and everything in it, bottom up, one frame per
    /// directory on the way ([`Frame`]); `shown` is its path for errors. Something that is no
    /// longer a directory is unlinked; something gone is fine.
    fn remove(&self, parent: BorrowedFd<'_>, name: &OsStr, shown: &Path) -> FsResult<()> {
        let Some(top) = self.enter(parent, name, shown, 0)? else {
            return Ok(());
        };
        // Each frame with its name in the frame below it (the first: in `parent`).
        let mut stack = vec![(top, name.to_owned())];
        while let Some((frame, _)) = stack.last_mut() {
            let Some((child, file_type)) = frame.next_child() else {
                let Some((done, name)) = stack.pop() else {
                    break;
                };
                drop(done.dir);
                let dir = stack.last().map_or(parent, |(below, _)| below.dir.as_fd());
                match unlinkat(dir, &name, AtFlags::REMOVEDIR) {
                    Ok(()) | Err(Errno::NOENT) => continue,
                    Err(errno) => return Err(self.fail(&done.shown, Reason::from_errno(errno))),
                }
            };
            let child = OsStr::from_bytes(&child);
            let shown = frame.shown.join(child);
            let depth = frame.depth + 1;
            let is_dir = match file_type {
                FileType::Directory => true,
                FileType::Unknown => statat(&frame.dir, child, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|stat| kind(&stat) == FileType::Directory),
                _ => false,
            };
            let is_dir = is_dir || self.unlink(frame.dir.as_fd(), child, &shown)?;
            if is_dir && let Some(below) = self.enter(frame.dir.as_fd(), child, &shown, depth)? {
                stack.push((below, child.to_owned()));
            }
        }
        Ok(())
    }

    /// Opens the directory `name` of `dir` (at `depth`) to remove what it holds: `None` when
    /// it is gone, or was not a directory after all and has been unlinked.
    fn enter(
        &self,
        dir: BorrowedFd<'_>,
        name: &OsStr,
        shown: &Path,
        depth: usize,
    ) -> FsResult<Option<Frame>> {
        if depth > MAX_DEPTH {
            return Err(self.fail(shown, Reason::TooDeep { limit: MAX_DEPTH }));
        }
        let fd = match open_dir(dir, name) {
            Ok(fd) => fd,
            // Replaced meanwhile by a symlink or a file: remove that instead.
            Err(Errno::NOTDIR | Errno::LOOP) => {
                return if self.unlink(dir, name, shown)? {
                    Err(self.fail(
                        shown,
                        Reason::Refused("changed while it was being removed".to_owned()),
                    ))
                } else {
                    Ok(None)
                };
            }
            Err(Errno::NOENT) => return Ok(None),
            Err(errno) => return Err(self.fail(shown, Reason::from_errno(errno))),
        };
        let stat = fstat(&fd).map_err(|errno| self.fail(shown, Reason::from_errno(errno)))?;
        if self.private.is_private_inode(stat.st_dev, stat.st_ino) {
            return Err(self.fail(shown, Reason::Private));
        }
        Frame::open(fd, shown.to_owned(), depth)
            .map(Some)
            .map_err(|errno| self.fail(shown, Reason::from_errno(errno)))
    }

    /// Unlinks a non-directory `name` of `dir`; `true` when it is a directory after all (put
    /// there meanwhile), left for the caller to remove as a tree.
    fn unlink(&self, dir: BorrowedFd<'_>, name: &OsStr, shown: &Path) -> FsResult<bool> {
        if let Ok(stat) = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            && self.private.is_private_inode(stat.st_dev, stat.st_ino)
        {
            return Err(self.fail(shown, Reason::Private));
        }
        match unlinkat(dir, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(false),
            Err(Errno::ISDIR) => Ok(true),
            Err(errno) => Err(self.fail(shown, Reason::from_errno(errno))),
        }
    }
}
