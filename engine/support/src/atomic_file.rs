//! Putting a file's new content in place atomically: readers see the old file or the new
//! one, never a half-written one. Patches, `config.toml` and `auth.json` are all written this
//! way; [`sync_dir`] then makes the rename durable where the caller needs it.

use std::fs::{self, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes the temporary files of concurrent writes in one process.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// Replaces (or creates) `path` with `content`: writes a temporary file in the same
/// directory (creating the directories), flushes it to disk, then renames it over `path`.
/// With `mode`, the temporary file is created with that mode (so it is never readable more
/// widely, not even for a moment) and given it exactly, whatever the umask.
pub fn replace(path: &Path, content: &[u8], mode: Option<u32>) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut attempts = 0;
    let (temp, mut file) = loop {
        attempts += 1;
        let temp = dir.join(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
        ));
        // `create_new` never follows or reuses an existing entry.
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        if let Some(mode) = mode {
            options.mode(mode);
        }
        match options.open(&temp) {
            Ok(file) => break (temp, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 100 => continue,
            Err(e) => return Err(e),
        }
    };
    let written = (|| {
        file.write_all(content)?;
        if let Some(mode) = mode {
            file.set_permissions(Permissions::from_mode(mode))?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Prefix of the temporary files [`replace_at`] makes (`fs/watch` leaves them out of what it
/// reports).
pub const TEMP_PREFIX: &str = ".agentwire-write.";

/// [`replace`] relative to an open directory: `name` in `dir` is replaced (or created) with
/// what `fill` writes, through a temporary file created in `dir` with `O_EXCL | O_NOFOLLOW`
/// and renamed over `name` with `renameat` — nothing is resolved by path, so nothing can be
/// redirected through a symlink; a symlink at `name` is itself replaced, never written
/// through. With `mode`, the file gets exactly that mode; otherwise `0o666` less the umask.
/// The rename is made durable (the directory is synced) as far as the directory allows.
pub fn replace_at(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    mode: Option<u32>,
    fill: impl FnOnce(&mut fs::File) -> io::Result<()>,
) -> io::Result<()> {
    use rustix::fs::{AtFlags, Mode, OFlags, fchmod, openat, renameat, unlinkat};

    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let create_mode = Mode::from_raw_mode(if mode.is_some() { 0o600 } else { 0o666 });
    let mut attempts = 0;
    let (temp, fd) = loop {
        attempts += 1;
        let temp = format!(
            "{TEMP_PREFIX}{}.{}.tmp",
            std::process::id(),
            NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
        );
        match openat(dir, temp.as_str(), flags, create_mode) {
            Ok(fd) => break (temp, fd),
            Err(rustix::io::Errno::EXIST) if attempts < 100 => continue,
            Err(e) => return Err(e.into()),
        }
    };
    let mut file = fs::File::from(fd);
    let written = (|| {
        fill(&mut file)?;
        if let Some(mode) = mode {
            fchmod(&file, Mode::from_raw_mode(mode))?;
        }
        file.sync_all()?;
        drop(file);
        renameat(dir, temp.as_str(), dir, name)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = unlinkat(dir, temp.as_str(), AtFlags::empty());
        return written;
    }
    if let Ok(this) = openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        let _ = rustix::fs::fsync(this);
    }
    Ok(())
}

/// Makes the entries of `dir` durable (a no-op where directories cannot be synced).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}
