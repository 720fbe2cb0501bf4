//! Directory trees walked through descriptors, without recursion: the walk keeps one frame per
//! directory on its path (at most [`MAX_DEPTH`] + 1, each holding one open directory) on the
//! heap, so a deep tree costs descriptors and memory, never the thread's stack.
//!
//! [`survey`] checks a whole tree before `fs/copy` or `fs/remove` changes anything: its depth,
//! its size, its private inodes and (for a copy) the kinds of its entries. A refused request
//! then leaves both the source and the destination as they were.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, OFlags, fstat, statat};
use rustix::io::Errno;

use super::error::Reason;
use super::limits::MAX_DEPTH;
use super::resolve::{RESOLVE_NAME, kind, open_beneath};
use super::roots::Private;

/// One open directory of a walk and the entries of it still to visit.
pub(crate) struct Frame {
    /// The directory, open for reading.
    pub(crate) dir: OwnedFd,
    /// Its path as the client named it (for errors).
    pub(crate) shown: PathBuf,
    /// How far below the tree's top it is (the top is 0).
    pub(crate) depth: usize,
    /// Its entries (without `.` and `..`) and their types as the directory reported them.
    children: std::vec::IntoIter<(Vec<u8>, FileType)>,
}

impl Frame {
    /// Lists `dir` (shown as `shown`, at `depth`).
    pub(crate) fn open(dir: OwnedFd, shown: PathBuf, depth: usize) -> Result<Self, Errno> {
        // A listing of its own (`.` opened again): a duplicate of `dir` would share its
        // position, and a second listing of the same directory would find nothing.
        let mut children = Vec::new();
        for entry in Dir::read_from(&dir)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                children.push((name.to_vec(), entry.file_type()));
            }
        }
        Ok(Self {
            dir,
            shown,
            depth,
            children: children.into_iter(),
        })
    }

    /// The next entry to visit: its name, and its type as listed (`Unknown` on file systems
    /// that do not say).
    pub(crate) fn next_child(&mut self) -> Option<(Vec<u8>, FileType)> {
        self.children.next()
    }

    /// Opens the subdirectory `name`, never through a symlink.
    pub(crate) fn open_child_dir(&self, name: &OsStr) -> Result<OwnedFd, Errno> {
        open_dir(self.dir.as_fd(), name)
    }
}

/// Opens directory `name` of `dir` for reading, never through a symlink.
pub(crate) fn open_dir(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, Errno> {
    open_beneath(
        dir,
        Path::new(name),
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW,
        RESOLVE_NAME,
    )
}

/// What [`survey`] refuses besides depth and private inodes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Most entries the tree may hold, if limited.
    pub(crate) entries: Option<usize>,
    /// Whether only directories, regular files and symlinks may be in it (a copy).
    pub(crate) copyable_only: bool,
}

/// Walks the tree of the open directory `top` (shown as `shown`) and fails, with the path of
/// the first offender, when it goes deeper than [`MAX_DEPTH`], holds more entries than
/// `limits` allows, holds a private inode, or (with `copyable_only`) holds a FIFO, socket or
/// device. Nothing is changed.
pub(crate) fn survey(
    top: OwnedFd,
    shown: &Path,
    private: &Private,
    limits: Limits,
) -> Result<(), (PathBuf, Reason)> {
    let stat = fstat(&top).map_err(|errno| (shown.to_owned(), Reason::from_errno(errno)))?;
    if private.is_private_inode(stat.st_dev, stat.st_ino) {
        return Err((shown.to_owned(), Reason::Private));
    }
    let top = Frame::open(top, shown.to_owned(), 0)
        .map_err(|errno| (shown.to_owned(), Reason::from_errno(errno)))?;
    let mut entries = 0usize;
    let mut stack = vec![top];
    while let Some(frame) = stack.last_mut() {
        let Some((name, _)) = frame.next_child() else {
            stack.pop();
            continue;
        };
        entries += 1;
        if let Some(limit) = limits.entries
            && entries > limit
        {
            return Err((frame.shown.clone(), Reason::TooManyEntries { limit }));
        }
        let name = OsStr::from_bytes(&name);
        let shown = frame.shown.join(name);
        let fail = |errno| (shown.clone(), Reason::from_errno(errno));
        let stat = match statat(&frame.dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            // Gone meanwhile: nothing to copy or remove there.
            Err(Errno::NOENT) => continue,
            Err(errno) => return Err(fail(errno)),
        };
        if private.is_private_inode(stat.st_dev, stat.st_ino) {
            return Err((shown, Reason::Private));
        }
        match kind(&stat) {
            FileType::Directory => {
                let depth = frame.depth + 1;
                if depth > MAX_DEPTH {
                    return Err((shown, Reason::TooDeep { limit: MAX_DEPTH }));
                }
                let dir = frame.open_child_dir(name).map_err(fail)?;
                let child = Frame::open(dir, shown.clone(), depth).map_err(fail)?;
                stack.push(child);
            }
            FileType::RegularFile | FileType::Symlink => {}
            _ if limits.copyable_only => return Err((shown, Reason::NotARegularFile)),
            _ => {}
        }
    }
    Ok(())
}
