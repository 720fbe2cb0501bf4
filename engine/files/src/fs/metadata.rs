//! `fs/getMetadata`: what a path is (symlinks inside the roots followed), whether its last
//! component is a symlink, and its birth and modification times.

use agentwire_protocol::{FsGetMetadataParams, FsGetMetadataResponse};
use rustix::fs::{AtFlags, FileType, StatxFlags, StatxTimestamp, statat, statx};
use rustix::io::Errno;

use super::error::{FsResult, Reason};
use super::resolve::kind;
use super::roots::Scope;

/// Unix milliseconds of a `statx` timestamp.
fn millis(at: StatxTimestamp) -> i64 {
    at.tv_sec
        .saturating_mul(1000)
        .saturating_add(i64::from(at.tv_nsec / 1_000_000))
}

/// Serves `fs/getMetadata` under `scope`. A path that resolves outside the roots (a symlink
/// leaving them) is refused like any other use of it; a dangling symlink inside them is
/// described as itself: `isSymlink`, neither file nor directory, the link's own times.
pub(crate) fn get_metadata(
    scope: &Scope,
    params: &FsGetMetadataParams,
) -> FsResult<FsGetMetadataResponse> {
    let at = scope.locate("path", &params.path.0)?;
    let mask = StatxFlags::TYPE | StatxFlags::MTIME | StatxFlags::BTIME;
    let mut link = None;
    if !at.is_root() {
        let entry = at.entry().map_err(|e| match e.reason {
            Reason::ParentNotFound => at.fail(Reason::NotFound),
            _ => e,
        })?;
        let stat = statat(&entry.dir, &entry.name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|errno| at.fail_errno(errno))?;
        if kind(&stat) == FileType::Symlink {
            link = Some(entry);
        }
    }
    let is_symlink = link.is_some();
    let stat = match (at.open(rustix::fs::OFlags::PATH), &link) {
        (Ok(fd), _) => statx(&fd, "", AtFlags::EMPTY_PATH, mask),
        // A dangling symlink: described as itself (neither file nor directory).
        (Err(e), Some(entry)) if e.reason == Reason::NotFound => {
            statx(&entry.dir, &entry.name, AtFlags::SYMLINK_NOFOLLOW, mask)
        }
        (Err(e), _) => return Err(e),
    }
    .map_err(|errno: Errno| at.fail_errno(errno))?;
    let file_type = FileType::from_raw_mode(u32::from(stat.stx_mode));
    let has = |flag: StatxFlags| StatxFlags::from_bits_retain(stat.stx_mask).contains(flag);
    Ok(FsGetMetadataResponse::builder()
        .is_directory(file_type == FileType::Directory)
        .is_file(file_type == FileType::RegularFile)
        .is_symlink(is_symlink)
        .created_at_ms(if has(StatxFlags::BTIME) {
            millis(stat.stx_btime)
        } else {
            0
        })
        .modified_at_ms(if has(StatxFlags::MTIME) {
            millis(stat.stx_mtime)
        } else {
            0
        })
        .build())
}
