//! `fs/readDirectory`: a directory's entries, sorted by name, at most [`MAX_ENTRIES`]. An
//! entry that is a symlink is described by what it points to when that lies inside the roots,
//! and as neither file nor directory when it leads out of them (nothing outside is looked at).

use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

use agentwire_protocol::{FsReadDirectoryEntry, FsReadDirectoryParams, FsReadDirectoryResponse};
use rustix::fs::{AtFlags, Dir, FileType, OFlags, statat};

use super::error::{FsResult, Reason};
use super::resolve::{Located, kind};
use super::roots::Scope;

/// Most entries one directory may have to be listed.
pub(crate) const MAX_ENTRIES: usize = 100_000;

/// Serves `fs/readDirectory` under `scope`.
pub(crate) fn read_directory(
    scope: &Scope,
    params: &FsReadDirectoryParams,
) -> FsResult<FsReadDirectoryResponse> {
    let at = scope.locate("path", &params.path.0)?;
    let fd = at.open(OFlags::RDONLY | OFlags::DIRECTORY)?;
    let dir_fd = fd.try_clone().map_err(|e| at.fail(Reason::from_io(&e)))?;
    let dir = Dir::new(fd).map_err(|errno| at.fail_errno(errno))?;
    let mut entries = Vec::new();
    for entry in dir {
        let entry = entry.map_err(|errno| at.fail_errno(errno))?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        if entries.len() == MAX_ENTRIES {
            return Err(at.fail(Reason::TooManyEntries { limit: MAX_ENTRIES }));
        }
        let name = std::ffi::OsStr::from_bytes(name);
        let file_type = match entry.file_type() {
            FileType::Unknown => statat(dir_fd.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW)
                .map(|stat| kind(&stat))
                .unwrap_or(FileType::Unknown),
            known => known,
        };
        let (is_directory, is_file) = match file_type {
            FileType::Directory => (true, false),
            FileType::RegularFile => (false, true),
            FileType::Symlink => followed(&at.child(name)),
            _ => (false, false),
        };
        entries.push(
            FsReadDirectoryEntry::builder()
                .file_name(name.to_string_lossy().into_owned())
                .is_directory(is_directory)
                .is_file(is_file)
                .build(),
        );
    }
    entries.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    Ok(FsReadDirectoryResponse::builder().entries(entries).build())
}

/// (directory, file) for a symlink followed inside the roots; neither when it leads out of
/// them, into a private path, or nowhere.
fn followed(link: &Located<'_>) -> (bool, bool) {
    match link.probe() {
        Ok((_, stat)) => match kind(&stat) {
            FileType::Directory => (true, false),
            FileType::RegularFile => (false, true),
            _ => (false, false),
        },
        Err(_) => (false, false),
    }
}
