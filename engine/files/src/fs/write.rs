//! `fs/writeFile` (atomic replace, up to [`MAX_FILE_BYTES`]) and `fs/createDirectory`.

use std::io::Write;
use std::os::fd::AsFd;
use std::path::PathBuf;

use agentwire_protocol::{
    FsCreateDirectoryParams, FsCreateDirectoryResponse, FsWriteFileParams, FsWriteFileResponse,
};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, mkdirat, statat};
use rustix::io::Errno;

use agentwire_support::atomic_file::replace_at;

use super::error::{FsError, FsResult, Reason};
use super::limits::MAX_FILE_BYTES;
use super::resolve::{Located, kind};
use super::roots::Scope;

/// The decoded `dataBase64` of `params`, refused when it is not base64 or is too large (the
/// length is checked before decoding, so no more than the limit is ever decoded).
fn decode(params: &FsWriteFileParams) -> FsResult<Vec<u8>> {
    let fail = |reason| FsError::new("dataBase64", params.path.0.clone(), reason);
    let data = params.data_base64.as_bytes();
    let most = MAX_FILE_BYTES.div_ceil(3) * 4;
    if data.len() as u64 > most {
        return Err(fail(Reason::TooLarge {
            limit: MAX_FILE_BYTES,
        }));
    }
    let bytes = STANDARD
        .decode(data)
        .map_err(|e| fail(Reason::Refused(format!("is not valid base64: {e}"))))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(fail(Reason::TooLarge {
            limit: MAX_FILE_BYTES,
        }));
    }
    Ok(bytes)
}

/// Serves `fs/writeFile` under `scope`: the file is replaced atomically (readers see the old
/// contents or the new, never a mix); an existing file keeps its mode; a symlink at the path
/// is replaced by the file. The directory must exist.
pub(crate) fn write_file(
    scope: &Scope,
    params: &FsWriteFileParams,
) -> FsResult<FsWriteFileResponse> {
    let at = scope.locate("path", &params.path.0)?;
    let bytes = decode(params)?;
    let entry = at.entry().map_err(|e| match e.reason {
        Reason::IsARoot => at.fail(Reason::IsADirectory),
        _ => e,
    })?;
    let mode = match statat(&entry.dir, &entry.name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => match kind(&stat) {
            FileType::Directory => return Err(at.fail(Reason::IsADirectory)),
            FileType::RegularFile => Some(stat.st_mode & 0o7777),
            _ => None,
        },
        Err(Errno::NOENT) => None,
        Err(errno) => return Err(at.fail_errno(errno)),
    };
    replace_at(entry.dir.as_fd(), &entry.name, mode, |file| {
        file.write_all(&bytes)
    })
    .map_err(|e| at.fail(Reason::from_io(&e)))?;
    Ok(FsWriteFileResponse::builder().build())
}

/// Serves `fs/createDirectory` under `scope`: with `recursive` (the default) the missing
/// directories on the way are created and an existing directory is fine; without it the
/// parent must exist and the directory must not.
pub(crate) fn create_directory(
    scope: &Scope,
    params: &FsCreateDirectoryParams,
) -> FsResult<FsCreateDirectoryResponse> {
    let at = scope.locate("path", &params.path.0)?;
    if params.recursive.unwrap_or(true) {
        let mut prefix = PathBuf::new();
        for component in at.rel().components() {
            prefix.push(component);
            make_one(&at.with_rel(prefix.clone()), true).map_err(|e| FsError {
                path: at.shown().to_owned(),
                ..e
            })?;
        }
        // The root itself, or the last directory made: it must be a directory now.
        at.open(OFlags::PATH | OFlags::DIRECTORY)?;
    } else {
        if at.is_root() {
            return Err(at.fail(Reason::AlreadyExists));
        }
        make_one(&at, false)?;
    }
    Ok(FsCreateDirectoryResponse::builder().build())
}

/// Creates the directory `at` in its (existing) parent. With `existing_ok`, a directory
/// already there (made by someone else meanwhile, say) is fine.
fn make_one(at: &Located<'_>, existing_ok: bool) -> FsResult<()> {
    if existing_ok {
        match at.open(OFlags::PATH | OFlags::DIRECTORY) {
            Ok(_) => return Ok(()),
            Err(e) if e.reason == Reason::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    let entry = at.entry()?;
    match mkdirat(&entry.dir, &entry.name, Mode::from_raw_mode(0o777)) {
        Ok(()) => Ok(()),
        Err(Errno::EXIST) if existing_ok => at.open(OFlags::PATH | OFlags::DIRECTORY).map(drop),
        Err(errno) => Err(at.fail_errno(errno)),
    }
}
