//! `fs/copy`: a file (put in place atomically, with the source's mode), or, with
//! `recursive: true`, a directory tree into a destination that does not exist yet. Inside a
//! tree, directories and files are copied and symlinks are copied as symlinks (never
//! followed); FIFOs, sockets and devices are refused. A tree that is too deep or too large,
//! or holds a private path or an entry that cannot be copied, and a destination inside the
//! source, are refused before anything is copied ([`survey`]); a copy that fails half-way
//! (an I/O error, a tree changed meanwhile) removes what it made.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use agentwire_protocol::{FsCopyParams, FsCopyResponse};
use agentwire_support::atomic_file::replace_at;
use rustix::fs::{
    AtFlags, FileType, Mode, OFlags, fstat, mkdirat, openat, readlinkat, statat, symlinkat,
};
use rustix::io::Errno;

use super::copy_data::{CopyBudget, DataError, copy_data};
use super::error::{FsError, FsResult, Reason};
use super::limits::{MAX_DEPTH, MAX_TREE_ENTRIES};
use super::remove;
use super::resolve::{RESOLVE_NAME, kind, open_beneath};
use super::roots::{Private, Scope, real_path};
use super::walk::{Frame, Limits, survey};

/// Serves `fs/copy` under `scope`, writing at most `budget` (see [`copy_data`]).
pub(crate) fn copy(
    scope: &Scope,
    params: &FsCopyParams,
    mut budget: CopyBudget,
) -> FsResult<FsCopyResponse> {
    let source = scope.locate("sourcePath", &params.source_path.0)?;
    let destination = scope.locate("destinationPath", &params.destination_path.0)?;
    let (_, stat) = source.probe()?;
    match kind(&stat) {
        FileType::RegularFile => {
            let (file, stat) = source.open_regular()?;
            let entry = destination.entry().map_err(|e| match e.reason {
                Reason::IsARoot => destination.fail(Reason::IsADirectory),
                _ => e,
            })?;
            if let Ok(existing) = statat(&entry.dir, &entry.name, AtFlags::SYMLINK_NOFOLLOW)
                && kind(&existing) == FileType::Directory
            {
                return Err(destination.fail(Reason::IsADirectory));
            }
            let mut failure = None;
            replace_at(
                entry.dir.as_fd(),
                &entry.name,
                Some(stat.st_mode & 0o777),
                |out| {
                    copy_data(&file, out, &mut budget).map_err(|e| {
                        failure = Some(e);
                        std::io::Error::other("the copy failed")
                    })
                },
            )
            .map_err(|e| match failure.take() {
                Some(DataError::OverBudget { limit }) => {
                    source.fail(Reason::Refused(DataError::over_budget_text(limit)))
                }
                Some(DataError::Read(e)) => source.fail(Reason::from_io(&e)),
                Some(DataError::Write(e)) => destination.fail(Reason::from_io(&e)),
                None => destination.fail(Reason::from_io(&e)),
            })?;
        }
        FileType::Directory => {
            if params.recursive != Some(true) {
                return Err(source.fail(Reason::Refused(
                    "is a directory: set `recursive` to true to copy it".to_owned(),
                )));
            }
            let from = source.open(OFlags::RDONLY | OFlags::DIRECTORY)?;
            let real_source = real_path(&from).map_err(|reason| source.fail(reason))?;
            if source.private().inside(&real_source) {
                return Err(source.fail(Reason::Private));
            }
            let entry = destination.entry().map_err(|e| match e.reason {
                Reason::IsARoot => destination.fail(Reason::AlreadyExists),
                _ => e,
            })?;
            let real_destination = real_path(&entry.dir)
                .map_err(|reason| destination.fail(reason))?
                .join(&entry.name);
            if real_destination.starts_with(&real_source) {
                return Err(destination.fail(Reason::IntoItself));
            }
            let shown = Path::new(source.shown());
            let surveyed = from
                .try_clone()
                .map_err(|e| source.fail(Reason::from_io(&e)))?;
            let limits = Limits {
                entries: Some(MAX_TREE_ENTRIES),
                copyable_only: true,
            };
            survey(surveyed, shown, source.private(), limits).map_err(|(path, reason)| {
                FsError::new("sourcePath", path.display().to_string(), reason)
            })?;
            let mut tree = Tree {
                private: source.private(),
                entries: 0,
                budget,
            };
            tree.copy_tree(from, entry.dir.as_fd(), &entry.name, shown)
                .map_err(|(at_source, e)| {
                    if at_source {
                        e
                    } else {
                        FsError {
                            field: "destinationPath",
                            path: destination.shown().to_owned(),
                            ..e
                        }
                    }
                })?;
        }
        _ => return Err(source.fail(Reason::NotARegularFile)),
    }
    Ok(FsCopyResponse::builder().build())
}

/// A failure in a tree copy: whether it is about the source (else the destination), and what.
type TreeResult<T> = Result<T, (bool, FsError)>;

/// One tree copy. [`survey`] found the tree within bounds beforehand; the copy checks depth,
/// size and private inodes again as it goes, because the tree may change in between.
struct Tree<'p> {
    private: &'p Private,
    entries: usize,
    /// What the copy may still write.
    budget: CopyBudget,
}

impl Tree<'_> {
    fn source_fail(shown: &Path, reason: Reason) -> (bool, FsError) {
        (
            true,
            FsError::new("sourcePath", shown.display().to_string(), reason),
        )
    }

    fn destination_fail(shown: &Path, errno: Errno) -> (bool, FsError) {
        (
            false,
            FsError::new(
                "destinationPath",
                shown.display().to_string(),
                Reason::from_errno(errno),
            ),
        )
    }

    /// Copies the open directory `from` (shown as `shown`) to a new directory `name` of `into`,
    /// top down, one frame per directory on the way ([`Frame`]). If it fails once `name` is
    /// made, `name` is removed again (what was copied so far is ours alone).
    fn copy_tree(
        &mut self,
        from: OwnedFd,
        into: BorrowedFd<'_>,
        name: &OsStr,
        shown: &Path,
    ) -> TreeResult<()> {
        let to = self.make_dir(&from, into, name, shown, 0)?;
        let copied = Frame::open(from, shown.to_owned(), 0)
            .map_err(|errno| Self::source_fail(shown, Reason::from_errno(errno)))
            .and_then(|top| self.copy_below(top, to));
        if copied.is_err() {
            remove::remove_made(into, name, self.private);
        }
        copied
    }

    /// Copies what `top` holds into `to`, and below, depth first.
    fn copy_below(&mut self, top: Frame, to: OwnedFd) -> TreeResult<()> {
        let mut stack = vec![(top, to)];
        while let Some((frame, to)) = stack.last_mut() {
            let Some((child, _)) = frame.next_child() else {
                stack.pop();
                continue;
            };
            self.entries += 1;
            if self.entries > MAX_TREE_ENTRIES {
                return Err(Self::source_fail(
                    &frame.shown,
                    Reason::TooManyEntries {
                        limit: MAX_TREE_ENTRIES,
                    },
                ));
            }
            let child = OsStr::from_bytes(&child);
            let shown = frame.shown.join(child);
            if let Some(below) = self.copy_entry(frame, to.as_fd(), child, shown)? {
                stack.push(below);
            }
        }
        Ok(())
    }

    /// Makes directory `name` of `into` with the mode of `from` (at `depth`, shown as
    /// `shown`), and opens it.
    fn make_dir(
        &self,
        from: &OwnedFd,
        into: BorrowedFd<'_>,
        name: &OsStr,
        shown: &Path,
        depth: usize,
    ) -> TreeResult<OwnedFd> {
        if depth > MAX_DEPTH {
            return Err(Self::source_fail(
                shown,
                Reason::TooDeep { limit: MAX_DEPTH },
            ));
        }
        let stat =
            fstat(from).map_err(|errno| Self::source_fail(shown, Reason::from_errno(errno)))?;
        if self.private.is_private_inode(stat.st_dev, stat.st_ino) {
            return Err(Self::source_fail(shown, Reason::Private));
        }
        mkdirat(into, name, Mode::from_raw_mode(stat.st_mode & 0o777))
            .map_err(|errno| Self::destination_fail(shown, errno))?;
        open_beneath(
            into,
            Path::new(name),
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW,
            RESOLVE_NAME,
        )
        .map_err(|errno| Self::destination_fail(shown, errno))
    }

    /// Copies entry `name` of `from` to the same name in `to`; for a directory, the frame to
    /// copy its entries from and the directory made for them.
    fn copy_entry(
        &mut self,
        from: &Frame,
        to: BorrowedFd<'_>,
        name: &OsStr,
        shown: PathBuf,
    ) -> TreeResult<Option<(Frame, OwnedFd)>> {
        let shown = shown.as_path();
        let source_error = |errno| Self::source_fail(shown, Reason::from_errno(errno));
        let stat = statat(&from.dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(source_error)?;
        if self.private.is_private_inode(stat.st_dev, stat.st_ino) {
            return Err(Self::source_fail(shown, Reason::Private));
        }
        if kind(&stat) == FileType::Directory {
            let depth = from.depth + 1;
            let sub = from.open_child_dir(name).map_err(source_error)?;
            let made = self.make_dir(&sub, to, name, shown, depth)?;
            let below = Frame::open(sub, shown.to_owned(), depth).map_err(source_error)?;
            return Ok(Some((below, made)));
        }
        let from = &from.dir;
        match kind(&stat) {
            FileType::RegularFile => {
                let input = open_beneath(
                    from.as_fd(),
                    Path::new(name),
                    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY,
                    RESOLVE_NAME,
                )
                .map_err(source_error)?;
                let opened = fstat(&input).map_err(source_error)?;
                if (opened.st_dev, opened.st_ino) != (stat.st_dev, stat.st_ino) {
                    return Err(Self::source_fail(
                        shown,
                        Reason::Refused("changed while it was being copied".to_owned()),
                    ));
                }
                let output = openat(
                    to,
                    name,
                    OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(stat.st_mode & 0o777),
                )
                .map_err(|errno| Self::destination_fail(shown, errno))?;
                copy_data(&File::from(input), &File::from(output), &mut self.budget).map_err(
                    |e| match e {
                        DataError::OverBudget { limit } => Self::source_fail(
                            shown,
                            Reason::Refused(DataError::over_budget_text(limit)),
                        ),
                        DataError::Read(e) => Self::source_fail(shown, Reason::from_io(&e)),
                        DataError::Write(e) => (
                            false,
                            FsError::new(
                                "destinationPath",
                                shown.display().to_string(),
                                Reason::from_io(&e),
                            ),
                        ),
                    },
                )?;
            }
            FileType::Symlink => {
                let target = readlinkat(from, name, Vec::new()).map_err(source_error)?;
                symlinkat(target.as_c_str(), to, name)
                    .map_err(|errno| Self::destination_fail(shown, errno))?;
            }
            _ => return Err(Self::source_fail(shown, Reason::NotARegularFile)),
        }
        Ok(None)
    }
}
