//! `fs/remove`: a file, a symlink (itself, never its target) or a directory tree. Trees are
//! removed through directory descriptors, one name at a time, never following a symlink; a
//! tree that holds a private path (the agentwire home) is refused before anything is removed.

use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use agentwire_protocol::{FsRemoveParams, FsRemoveResponse};
use rustix::fs::{AtFlags, Dir, FileType, OFlags, fstat, statat, unlinkat};
use rustix::io::Errno;

use super::MAX_DEPTH;
use super::error::{FsError, FsResult, Reason};
use super::resolve::{RESOLVE_NAME, kind, open_beneath};
use super::roots::{Private, Scope, real_path};

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
    let mut tree = Tree {
        private: at.private(),
        field: at.field(),
    };
    tree.remove(entry.dir.as_fd(), &entry.name, Path::new(at.shown()), 0)?;
    Ok(FsRemoveResponse::builder().build())
}

/// One recursive removal.
struct Tree<'p> {
    private: &'p Private,
    field: &'static str,
}

impl Tree<'_> {
    fn fail(&self, shown: &Path, reason: Reason) -> FsError {
        FsError::new(self.field, shown.display().to_string(), reason)
    }

    /// Removes the directory `name` of `dir` and everything in it; `shown` is its path for
    /// errors. Something that is no longer a directory is unlinked; something gone is fine.
    fn remove(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &std::ffi::OsStr,
        shown: &Path,
        depth: usize,
    ) -> FsResult<()> {
        if depth > MAX_DEPTH {
            return Err(self.fail(shown, Reason::TooDeep { limit: MAX_DEPTH }));
        }
        let fd = match open_beneath(
            dir,
            Path::new(name),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW,
            RESOLVE_NAME,
        ) {
            Ok(fd) => fd,
            // Replaced meanwhile by a symlink or a file: remove that instead.
            Err(Errno::NOTDIR | Errno::LOOP) => return self.unlink(dir, name, shown, depth),
            Err(Errno::NOENT) => return Ok(()),
            Err(errno) => return Err(self.fail(shown, Reason::from_errno(errno))),
        };
        let stat = fstat(&fd).map_err(|errno| self.fail(shown, Reason::from_errno(errno)))?;
        if self.private.is_private_inode(stat.st_dev, stat.st_ino) {
            return Err(self.fail(shown, Reason::Private));
        }
        let this = fd
            .try_clone()
            .map_err(|e| self.fail(shown, Reason::from_io(&e)))?;
        let mut children = Vec::new();
        for entry in Dir::new(fd).map_err(|errno| self.fail(shown, Reason::from_errno(errno)))? {
            let entry = entry.map_err(|errno| self.fail(shown, Reason::from_errno(errno)))?;
            let child = entry.file_name().to_bytes();
            if child != b"." && child != b".." {
                children.push((child.to_vec(), entry.file_type()));
            }
        }
        for (child, file_type) in children {
            let child = std::ffi::OsStr::from_bytes(&child);
            let child_shown = shown.join(child);
            let is_dir = match file_type {
                FileType::Directory => true,
                FileType::Unknown => statat(&this, child, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|stat| kind(&stat) == FileType::Directory),
                _ => false,
            };
            if is_dir {
                self.remove(this.as_fd(), child, &child_shown, depth + 1)?;
            } else {
                self.unlink(this.as_fd(), child, &child_shown, depth + 1)?;
            }
        }
        match unlinkat(dir, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(errno) => Err(self.fail(shown, Reason::from_errno(errno))),
        }
    }

    /// Unlinks a non-directory `name` of `dir` (a directory put there meanwhile is removed
    /// as a tree).
    fn unlink(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &std::ffi::OsStr,
        shown: &Path,
        depth: usize,
    ) -> FsResult<()> {
        if let Ok(stat) = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            && self.private.is_private_inode(stat.st_dev, stat.st_ino)
        {
            return Err(self.fail(shown, Reason::Private));
        }
        match unlinkat(dir, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(Errno::ISDIR) => self.remove(dir, name, shown, depth + 1),
            Err(errno) => Err(self.fail(shown, Reason::from_errno(errno))),
        }
    }
}
