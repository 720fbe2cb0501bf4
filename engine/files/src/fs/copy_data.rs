//! The bytes `fs/copy` writes: a budget per call, and holes kept as holes.
//!
//! One `fs/copy` call (a file, or every file of a tree) writes at most its budget of data
//! (`fs_copy_max_bytes` in `config.toml`, [`DEFAULT_COPY_BUDGET`] unless set, `0` for no
//! limit); a copy that would write more is refused before the region that would go past it
//! is written, with an error naming the path and the budget, and what it made is removed.
//! Only the data of a file is copied and counted: its holes (found with `SEEK_DATA` /
//! `SEEK_HOLE`) are left unwritten and the copy is given the source's length, so a sparse
//! file stays sparse and a 2 GiB file of holes costs almost nothing (issue #32).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use rustix::fs::{SeekFrom, fstat, ftruncate, seek};
use rustix::io::Errno;

/// Bytes of data one `fs/copy` call may write unless configured (1 GiB).
pub(crate) const DEFAULT_COPY_BUDGET: u64 = 1024 * 1024 * 1024;

/// Bytes read and written at a time.
const CHUNK: usize = 256 * 1024;

/// What one `fs/copy` call may still write.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CopyBudget {
    /// The whole budget; `None` for no limit.
    limit: Option<u64>,
    /// Bytes written so far.
    used: u64,
}

/// Why a file's data was not copied.
#[derive(Debug)]
pub(crate) enum DataError {
    /// The call's budget would be exceeded.
    OverBudget {
        /// The budget, in bytes.
        limit: u64,
    },
    /// Reading the source failed.
    Read(io::Error),
    /// Writing the copy failed.
    Write(io::Error),
}

impl DataError {
    /// The words of an over-budget refusal (the error names the path).
    pub(crate) fn over_budget_text(limit: u64) -> String {
        format!(
            "copying it would write more than the fs/copy budget of {limit} bytes per call \
             (`fs_copy_max_bytes` in config.toml)"
        )
    }
}

impl CopyBudget {
    /// A budget of `configured` bytes (`Some(0)` for no limit), [`DEFAULT_COPY_BUDGET`] unless
    /// configured.
    pub(crate) fn new(configured: Option<u64>) -> Self {
        let limit = match configured {
            Some(0) => None,
            Some(n) => Some(n),
            None => Some(DEFAULT_COPY_BUDGET),
        };
        Self { limit, used: 0 }
    }

    /// Takes `bytes` from the budget, all or nothing.
    fn take(&mut self, bytes: u64) -> Result<(), DataError> {
        let used = self.used.saturating_add(bytes);
        if let Some(limit) = self.limit
            && used > limit
        {
            return Err(DataError::OverBudget { limit });
        }
        self.used = used;
        Ok(())
    }
}

/// Copies the data of the regular file `from` into the empty file `to`, region by region,
/// leaving holes unwritten, then gives `to` the length `from` had when the copy began.
pub(crate) fn copy_data(from: &File, to: &File, budget: &mut CopyBudget) -> Result<(), DataError> {
    let size =
        u64::try_from(fstat(from).map_err(|e| DataError::Read(e.into()))?.st_size).unwrap_or(0);
    let mut at = 0;
    while at < size {
        let start = match seek(from, SeekFrom::Data(at)) {
            Ok(start) => start,
            // No data past `at`: the rest is a hole.
            Err(Errno::NXIO) => break,
            // A file system that cannot tell: all of it is data.
            Err(Errno::INVAL | Errno::OPNOTSUPP) => at,
            Err(e) => return Err(DataError::Read(e.into())),
        };
        if start >= size {
            break;
        }
        let end = match seek(from, SeekFrom::Hole(start)) {
            Ok(end) => end.min(size),
            Err(_) => size,
        };
        if end <= start {
            break;
        }
        budget.take(end - start)?;
        copy_region(from, to, start, end)?;
        at = end;
    }
    ftruncate(to, size).map_err(|e| DataError::Write(e.into()))
}

/// Copies bytes `start..end` of `from` to the same offsets of `to`.
fn copy_region(from: &File, to: &File, start: u64, end: u64) -> Result<(), DataError> {
    let mut buffer = vec![0u8; CHUNK];
    let mut at = start;
    while at < end {
        let wanted = usize::try_from(end - at).unwrap_or(CHUNK).min(CHUNK);
        let read = match from.read_at(&mut buffer[..wanted], at) {
            Ok(0) => return Ok(()), // The source shrank meanwhile: the rest stays a hole.
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(DataError::Read(e)),
        };
        to.write_all_at(&buffer[..read], at)
            .map_err(DataError::Write)?;
        at += read as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn holes_stay_holes_and_data_is_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let source = dir.path().join("sparse");
        let file = File::create(&source).expect("create");
        file.write_all_at(b"head", 0).expect("write");
        file.write_all_at(b"tail", 512 * 1024 * 1024)
            .expect("write");
        drop(file);
        let copy = dir.path().join("copy");
        let (from, to) = (
            File::open(&source).expect("open"),
            File::create(&copy).expect("create"),
        );
        let mut budget = CopyBudget::new(Some(1024 * 1024));
        copy_data(&from, &to, &mut budget).expect("copied within a 1 MiB budget");
        let meta = std::fs::metadata(&copy).expect("meta");
        assert_eq!(meta.len(), 512 * 1024 * 1024 + 4);
        assert!(
            meta.blocks() * 512 < 4 * 1024 * 1024,
            "{} blocks",
            meta.blocks()
        );
        let written = File::open(&copy).expect("open the copy");
        let mut head = [0u8; 4];
        written.read_at(&mut head, 0).expect("read");
        assert_eq!(&head, b"head");
        written.read_at(&mut head, 512 * 1024 * 1024).expect("read");
        assert_eq!(&head, b"tail");
    }

    #[test]
    fn the_budget_counts_data_across_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let source = dir.path().join("data");
        std::fs::write(&source, vec![7u8; 10_000]).expect("write");
        let mut budget = CopyBudget::new(Some(15_000));
        let copy = |budget: &mut CopyBudget, name: &str| {
            let to = File::create(dir.path().join(name)).expect("create");
            copy_data(&File::open(&source).expect("open"), &to, budget)
        };
        assert!(copy(&mut budget, "one").is_ok());
        assert!(matches!(
            copy(&mut budget, "two"),
            Err(DataError::OverBudget { limit: 15_000 })
        ));
        assert!(copy(&mut CopyBudget::new(Some(0)), "three").is_ok());
    }
}
