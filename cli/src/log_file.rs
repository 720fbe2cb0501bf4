//! `--log-file PATH`: logs appended to a file that rotates by size, instead of stderr. The
//! daemon (`app-server daemon start`) logs to `daemon.log` this way.
//!
//! Before an event would take the file past [`MAX_BYTES`], the file is renamed to `PATH.1`
//! (`PATH.1` to `PATH.2`, …; the oldest beyond [`KEEP`] is replaced) and a new `PATH` is
//! opened (mode 0600). An event is never split between two files. The process's stderr is
//! pointed at the current file too (`dup2`), so what is written there directly (a panic's
//! message) lands in the same file, and follows it across rotations.
//!
//! Why not a crate: `tracing-appender` rotates by time only, and `file-rotate` writes to a
//! handle of its own, so stderr (panics) would stay on the first file and grow it without
//! bound. What is needed here is a rename chain and a `dup2`, a few lines.
//!
//! Writes are synchronous, like the stderr writes they replace; a rotation (a few renames)
//! happens at most once per [`MAX_BYTES`] of logs.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use tracing_subscriber::fmt::MakeWriter;

/// Size at which the log file rotates.
pub const MAX_BYTES: u64 = 10 * 1024 * 1024;

/// Rotated files kept beside the current one (`PATH.1` … `PATH.3`).
pub const KEEP: u32 = 3;

/// A log file rotating by size.
pub struct LogFile {
    path: PathBuf,
    max_bytes: u64,
    keep: u32,
    /// Point stderr at the current file.
    redirect_stderr: bool,
    state: Mutex<State>,
}

struct State {
    file: File,
    /// Bytes in the current file.
    written: u64,
}

impl LogFile {
    /// Opens (appending) or creates `path`; rotates at `max_bytes`, keeping `keep` old files.
    pub fn open(
        path: &Path,
        max_bytes: u64,
        keep: u32,
        redirect_stderr: bool,
    ) -> std::io::Result<Self> {
        let file = open(path)?;
        if redirect_stderr {
            rustix::stdio::dup2_stderr(&file)?;
        }
        let written = file.metadata()?.len();
        Ok(Self {
            path: path.to_path_buf(),
            max_bytes: max_bytes.max(1),
            keep: keep.max(1),
            redirect_stderr,
            state: Mutex::new(State { file, written }),
        })
    }

    /// Appends one event's bytes, rotating first if they would not fit.
    fn append(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if state.written > 0 && state.written.saturating_add(len) > self.max_bytes {
            // Failing to rotate must not lose the event: it goes to the file as it is.
            if let Err(error) = self.rotate(&mut state) {
                let note = format!("log rotation of {} failed: {error}\n", self.path.display());
                let _ = state.file.write_all(note.as_bytes());
            }
        }
        state.file.write_all(bytes)?;
        state.written = state.written.saturating_add(len);
        Ok(())
    }

    /// `PATH.(n-1)` → `PATH.n`, …, `PATH` → `PATH.1`, then a new `PATH`.
    fn rotate(&self, state: &mut State) -> std::io::Result<()> {
        for n in (1..self.keep).rev() {
            match std::fs::rename(self.numbered(n), self.numbered(n + 1)) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
                _ => {}
            }
        }
        std::fs::rename(&self.path, self.numbered(1))?;
        let file = open(&self.path)?;
        if self.redirect_stderr {
            rustix::stdio::dup2_stderr(&file)?;
        }
        *state = State { file, written: 0 };
        Ok(())
    }

    fn numbered(&self, n: u32) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }
}

fn open(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

/// What the subscriber writes one event through.
pub struct EventWriter<'a>(&'a LogFile);

impl Write for EventWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.append(bytes)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LogFile {
    type Writer = EventWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        EventWriter(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_by_size_keeping_a_bounded_number_of_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("daemon.log");
        let log = LogFile::open(&path, 100, 2, false).expect("open");
        let line = [b'x'; 39];
        for i in 0..10u8 {
            let mut event = line.to_vec();
            event.push(b'0' + i);
            log.make_writer().write_all(&event).expect("write");
        }
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        // Two 40-byte events per file: never split, never over 100 bytes.
        assert_eq!(size(&path), 80);
        assert_eq!(size(&dir.path().join("daemon.log.1")), 80);
        assert_eq!(size(&dir.path().join("daemon.log.2")), 80);
        assert!(!dir.path().join("daemon.log.3").exists());
        let newest = std::fs::read_to_string(&path).expect("read");
        assert!(newest.ends_with('9'), "{newest}");
        let oldest = std::fs::read_to_string(dir.path().join("daemon.log.2")).expect("read");
        assert!(oldest.ends_with('5'), "{oldest}");
    }

    #[test]
    fn appends_to_an_existing_file_and_counts_what_it_holds() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("daemon.log");
        std::fs::write(&path, [b'y'; 90]).expect("write");
        let log = LogFile::open(&path, 100, 3, false).expect("open");
        log.make_writer().write_all(&[b'z'; 20]).expect("write");
        assert_eq!(std::fs::read(&path).expect("read"), vec![b'z'; 20]);
        assert_eq!(
            std::fs::read(dir.path().join("daemon.log.1")).expect("read"),
            vec![b'y'; 90]
        );
    }
}
