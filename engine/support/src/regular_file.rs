//! Reading a file the engine opens on a client's or the model's behalf (an image of the user's
//! input, a project's `AGENTS.md`): whoever names the path, or can write where it points, may
//! have put a FIFO, a device or a socket there, or may swap one in between a check and the
//! open (issue #32, finding 7: a FIFO as an image hung the whole connection).
//!
//! So the file is opened with `O_NONBLOCK` (opening a FIFO with no writer, or a device, does
//! not wait), checked to be a regular file on the open descriptor (`fstat`: what was checked is
//! what is read, whatever the path points to by then), and read with a size bound. Reading
//! such a file off the async workers is the caller's part: `spawn_blocking`, or
//! [`with_deadline`] where the caller cannot wait asynchronously.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rustix::fs::{FileType, Mode, OFlags};

/// Opens `path` for reading without blocking in `open` and checks on the descriptor that it
/// is a regular file (symbolic links are followed: the file reached is what is checked).
/// Returns the file and its size. A file that is not a regular file is an error of kind
/// `InvalidInput` whose text says what it is ("it is a FIFO (named pipe), not a regular
/// file"); other errors are the system's (`NotFound` …). Either is a phrase for a message that
/// names the path.
pub fn open_regular(path: &Path) -> std::io::Result<(File, u64)> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let stat = rustix::fs::fstat(&fd)?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::RegularFile {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", describe(kind)),
        ));
    }
    // Reads of a regular file never wait on the flag; cleared so the file behaves as usual.
    rustix::fs::fcntl_setfl(&fd, OFlags::empty())?;
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    Ok((File::from(fd), size))
}

/// The regular file at `path` ([`open_regular`]), at most `limit` bytes of it: the bytes and
/// whether the file held more.
pub fn read_regular(path: &Path, limit: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let (file, size) = open_regular(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(limit)).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    let longer = u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit;
    bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    Ok((bytes, longer))
}

/// Runs `work` (which reads files) on a thread of its own and waits for it at most `deadline`:
/// for a caller on an async worker that cannot `await` (a synchronous check inside a request
/// handler). `None` when `work` did not finish in time; the thread is left to finish (or stay
/// stuck) alone, and does not keep the process from exiting.
pub fn with_deadline<T: Send + 'static>(
    deadline: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (done, result) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("agentwire-file-read".to_owned())
        .spawn(move || {
            let _ = done.send(work());
        });
    match spawned {
        Ok(_) => result.recv_timeout(deadline).ok(),
        Err(error) => {
            tracing::warn!(%error, "cannot start a thread to read a file");
            None
        }
    }
}

/// `kind` as a noun phrase.
fn describe(kind: FileType) -> &'static str {
    match kind {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "of an unknown type",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "agentwire-regular-file-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn fifos_devices_and_directories_are_refused_without_waiting() {
        let dir = scratch("kinds");
        let fifo = dir.join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::RUSR | Mode::WUSR,
            0,
        )
        .expect("mkfifo");
        let refused = |path: &Path| read_regular(path, 16).expect_err("refused").to_string();
        assert!(refused(&fifo).contains("FIFO"), "{}", refused(&fifo));
        assert!(refused(Path::new("/dev/zero")).contains("character device"));
        assert!(refused(&dir).contains("directory"));
        assert!(refused(&dir.join("missing")).contains("No such file"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn reads_are_bounded_and_say_when_the_file_is_longer() {
        let dir = scratch("bound");
        let file = dir.join("f");
        std::fs::write(&file, "0123456789").expect("write");
        assert_eq!(
            read_regular(&file, 4).expect("read"),
            (b"0123".to_vec(), true)
        );
        assert_eq!(
            read_regular(&file, 10).expect("read"),
            (b"0123456789".to_vec(), false)
        );
        assert_eq!(with_deadline(Duration::from_secs(5), || 7), Some(7));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
