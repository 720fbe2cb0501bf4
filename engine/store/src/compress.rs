//! `rollout/compress`: a background pass that gzips cold rollouts of the embedded store.
//!
//! A rollout is *cold* when no descriptor of this process appends to it (the thread is not
//! loaded, so no turn runs on it, and no records of it wait at the committer) and it was not
//! modified for longer than the threshold (`[store] compress_after_days`, default 7). Live
//! rollouts are looked at first, then archived ones; a rollout larger than
//! `compressed::MAX_ROLLOUT_BYTES` is left plain.
//!
//! Each rollout is compressed while it is held (see `compressed::hold`):
//!
//! 1. the plain file is opened and stamped (length, modification time);
//! 2. its bytes are gzipped into a temporary file beside it, which is synced, given the plain
//!    file's modification time, and decompressed once more to check it holds the same bytes;
//! 3. if the plain file (checked on the open descriptor, and that the path still names it) is
//!    unchanged, the temporary file is renamed to `<rollout>.jsonl.gz` and the directory synced;
//! 4. the plain file is removed and the directory synced; the index row's stamp follows, so
//!    the next start does not read the file again.
//!
//! A failure at any step leaves the plain file as it was (and removes what was written); a
//! crash leaves at worst a temporary file, or both forms, of which the plain one counts.
//!
//! One pass runs at a time per store, on a thread of its own; a request while one runs only
//! acknowledges. The pass stops between two chunks once the store is dropped. A panic or an
//! error ends the pass with a log line and nothing else.

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use agentwire_support::atomic_file::sync_dir;
use agentwire_support::lock;
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use crate::committer::SharedIndex;
use crate::compressed::{
    MAX_ROLLOUT_BYTES, create_private, gz_path, has_writer, hold, temp_beside,
};
use crate::paths::Layout;
use crate::stamp::FileStamp;

/// The threshold when the configuration sets none: a week.
pub const DEFAULT_AFTER_DAYS: u64 = 7;

/// Bytes read and compressed at a time (the pass looks for a stop between two).
const CHUNK: usize = 64 * 1024;

/// The compression passes of one store: whether one runs, and whether the store is gone.
#[derive(Debug, Default)]
pub(crate) struct Compressor {
    running: Arc<AtomicBool>,
    stopping: Arc<AtomicBool>,
}

impl Drop for Compressor {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
    }
}

/// Clears a pass's `running` flag however the pass ends.
struct Finished(Arc<AtomicBool>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

impl Compressor {
    /// Starts a pass over the rollouts of `layout` on a thread of its own (`index` is brought
    /// along for the stamps); `Ok(false)` when one runs already.
    pub(crate) fn start(
        &self,
        layout: Layout,
        index: SharedIndex,
        after: Duration,
    ) -> io::Result<bool> {
        if self.running.swap(true, Ordering::SeqCst) {
            return Ok(false);
        }
        let finished = Finished(Arc::clone(&self.running));
        let stopping = Arc::clone(&self.stopping);
        let cutoff = SystemTime::now()
            .checked_sub(after)
            .unwrap_or(SystemTime::UNIX_EPOCH);
        std::thread::Builder::new()
            .name("rollout-compress".to_owned())
            .spawn(move || {
                let _finished = finished;
                let pass = std::panic::AssertUnwindSafe(|| run(&layout, &index, cutoff, &stopping));
                match std::panic::catch_unwind(pass) {
                    Ok(tally) => tracing::info!(
                        compressed = tally.compressed,
                        failed = tally.failed,
                        stopped = tally.stopped,
                        "rollout compression pass done"
                    ),
                    Err(_) => tracing::error!("rollout compression pass panicked; it is over"),
                }
            })?;
        Ok(true)
    }
}

/// What a pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub compressed: usize,
    pub failed: usize,
    pub stopped: bool,
}

/// What became of one rollout.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Compressed: its stamp before (plain) and after (`.gz`).
    Compressed { before: FileStamp, after: FileStamp },
    /// Left as it is, and why.
    Skipped(&'static str),
}

/// One pass over every rollout of `layout` last modified before `cutoff`.
pub(crate) fn run(
    layout: &Layout,
    index: &SharedIndex,
    cutoff: SystemTime,
    stopping: &AtomicBool,
) -> Tally {
    let mut tally = Tally::default();
    for archived in [false, true] {
        for (relative, metadata) in layout.scan(archived) {
            if stopping.load(Ordering::SeqCst) {
                tally.stopped = true;
                return tally;
            }
            // Compressed already, or modified lately (a cheap look before holding it).
            let path = layout.rollout(archived, &relative);
            if !path.exists() || metadata.modified().is_ok_and(|m| m > cutoff) {
                continue;
            }
            let held = hold(&[&path]);
            let outcome = compress_held(layout, &path, cutoff, stopping);
            drop(held);
            match outcome {
                Ok(Outcome::Compressed { before, after }) => {
                    tally.compressed += 1;
                    tracing::debug!(path = %path.display(), "rollout compressed");
                    if let Err(error) = lock(index).restamp(archived, &relative, before, after) {
                        tracing::warn!(path = %path.display(), %error, "index stamp not updated");
                    }
                }
                Ok(Outcome::Skipped(why)) => {
                    tracing::debug!(path = %path.display(), why, "rollout not compressed");
                }
                Err(error) if stopping.load(Ordering::SeqCst) => {
                    tracing::debug!(path = %path.display(), %error, "compression stopped");
                    tally.stopped = true;
                    return tally;
                }
                Err(error) => {
                    tally.failed += 1;
                    tracing::warn!(path = %path.display(), %error, "rollout not compressed");
                }
            }
        }
    }
    tally
}

/// Compresses the rollout at `path` if it is cold; the caller holds it.
fn compress_held(
    layout: &Layout,
    path: &Path,
    cutoff: SystemTime,
    stopping: &AtomicBool,
) -> io::Result<Outcome> {
    if has_writer(path) {
        return Ok(Outcome::Skipped("it is open for appending"));
    }
    let (mut file, metadata) = match layout.open_plain(path) {
        Ok(opened) => opened,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Ok(Outcome::Skipped("it is gone"));
        }
        Err(error) => return Err(error),
    };
    let modified = metadata.modified()?;
    if modified > cutoff {
        return Ok(Outcome::Skipped("it was modified lately"));
    }
    if metadata.len() > MAX_ROLLOUT_BYTES {
        return Ok(Outcome::Skipped(
            "it is larger than a compressed rollout may be",
        ));
    }
    let before = FileStamp::of(&metadata)?;
    let gz = gz_path(path);
    let dir = path.parent().unwrap_or(layout.home());
    let temp = temp_beside(&gz, "new");
    let written = write_gz(&mut file, &temp, modified, stopping)
        .and_then(|(crc, len)| check_gz(&temp, crc, len));
    let kept = written.and_then(|()| unchanged(&file, path, before));
    match kept {
        Ok(true) => {}
        Ok(false) => {
            let _ = std::fs::remove_file(&temp);
            return Ok(Outcome::Skipped("it changed while it was compressed"));
        }
        Err(error) => {
            let _ = std::fs::remove_file(&temp);
            return Err(error);
        }
    }
    if let Err(error) = std::fs::rename(&temp, &gz).and_then(|()| sync_dir(dir)) {
        let _ = std::fs::remove_file(&temp);
        return Err(io::Error::new(
            error.kind(),
            format!("cannot put {} in place: {error}", gz.display()),
        ));
    }
    // The last look before the plain file goes; the `.gz` of a file that changed is dropped.
    if !unchanged(&file, path, before)? {
        std::fs::remove_file(&gz)?;
        sync_dir(dir)?;
        return Ok(Outcome::Skipped("it changed while it was compressed"));
    }
    std::fs::remove_file(path)?;
    sync_dir(dir)?;
    let after = FileStamp::of(&std::fs::metadata(&gz)?)?;
    Ok(Outcome::Compressed { before, after })
}

/// Gzips `file` from its start into `temp` (created), synced and stamped `modified`; returns
/// the CRC-32 and length of the bytes read.
fn write_gz(
    file: &mut std::fs::File,
    temp: &Path,
    modified: SystemTime,
    stopping: &AtomicBool,
) -> io::Result<(u32, u64)> {
    let mut encoder = GzEncoder::new(create_private(temp)?, Compression::default());
    let mut crc = flate2::Crc::new();
    let mut len = 0u64;
    let mut buf = vec![0u8; CHUNK];
    loop {
        if stopping.load(Ordering::SeqCst) {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "the server is stopping",
            ));
        }
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        let chunk = buf.get(..n).unwrap_or_default();
        crc.update(chunk);
        len += n as u64;
        encoder.write_all(chunk)?;
    }
    let out = encoder.finish()?;
    out.set_modified(modified)?;
    out.sync_all()?;
    Ok((crc.sum(), len))
}

/// Checks that `temp` decompresses to `len` bytes of CRC-32 `expected`.
fn check_gz(temp: &Path, expected: u32, len: u64) -> io::Result<()> {
    let mut decoder = GzDecoder::new(io::BufReader::new(std::fs::File::open(temp)?));
    let mut crc = flate2::Crc::new();
    let mut buf = vec![0u8; CHUNK];
    let mut read = 0u64;
    loop {
        let n = decoder.read(&mut buf)?;
        if n == 0 {
            break;
        }
        read += n as u64;
        crc.update(buf.get(..n).unwrap_or_default());
    }
    if read != len || crc.sum() != expected {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} does not read back as the rollout it was made from",
                temp.display()
            ),
        ));
    }
    Ok(())
}

/// Whether the open `file` still has stamp `before` and `path` still names it.
fn unchanged(file: &std::fs::File, path: &Path, before: FileStamp) -> io::Result<bool> {
    let now = file.metadata()?;
    if FileStamp::of(&now)? != before {
        return Ok(false);
    }
    let named = match std::fs::symlink_metadata(path) {
        Ok(named) => named,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error),
    };
    Ok(same_file(&now, &named))
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Mutex;

    use super::*;
    use crate::compressed::register_writer;
    use crate::index::Index;

    fn old(path: &Path) {
        let file = std::fs::File::options()
            .write(true)
            .open(path)
            .expect("open");
        file.set_modified(SystemTime::now() - Duration::from_secs(30 * 86_400))
            .expect("age it");
    }

    fn setup() -> (tempfile::TempDir, Layout, SharedIndex) {
        let home = tempfile::tempdir().expect("scratch home");
        let layout = Layout::new(home.path());
        let index = Arc::new(Mutex::new(Index::in_memory().expect("index")));
        (home, layout, index)
    }

    fn rollout(layout: &Layout, archived: bool, name: &str, text: &str) -> PathBuf {
        let path = layout.rollout(archived, &Path::new("2026/01/01").join(name));
        std::fs::create_dir_all(path.parent().expect("dir")).expect("dirs");
        std::fs::write(&path, text).expect("write");
        path
    }

    fn cutoff() -> SystemTime {
        SystemTime::now() - Duration::from_secs(7 * 86_400)
    }

    fn gunzip(path: &Path) -> String {
        let mut text = String::new();
        GzDecoder::new(std::fs::File::open(path).expect("open"))
            .read_to_string(&mut text)
            .expect("gunzip");
        text
    }

    #[test]
    fn cold_rollouts_are_compressed_and_others_left_alone() {
        let (_home, layout, index) = setup();
        let cold = rollout(&layout, false, "rollout-cold.jsonl", "cold\n");
        let archived = rollout(&layout, true, "rollout-arch.jsonl", "archived\n");
        let fresh = rollout(&layout, false, "rollout-fresh.jsonl", "fresh\n");
        let open = rollout(&layout, false, "rollout-open.jsonl", "open\n");
        for path in [&cold, &archived, &open] {
            old(path);
        }
        let appending = Arc::new(
            std::fs::File::options()
                .append(true)
                .open(&open)
                .expect("open"),
        );
        register_writer(&open, &appending);

        let tally = run(&layout, &index, cutoff(), &AtomicBool::new(false));
        assert_eq!(tally.compressed, 2, "{tally:?}");
        for (path, text) in [(&cold, "cold\n"), (&archived, "archived\n")] {
            assert!(!path.exists(), "{} stays", path.display());
            assert_eq!(gunzip(&gz_path(path)), text);
        }
        for path in [&fresh, &open] {
            assert!(path.exists() && !gz_path(path).exists());
        }
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        assert!(modified(&gz_path(&cold)) < Some(cutoff()), "keeps its age");

        // Thawed for seeking, it keeps its age too: the next pass compresses it again.
        layout.open_checked(&cold).expect("thawed");
        assert!(cold.exists() && !gz_path(&cold).exists());
        drop(appending);
        let tally = run(&layout, &index, cutoff(), &AtomicBool::new(false));
        assert_eq!(
            tally.compressed, 2,
            "the thawed one and the one no longer open"
        );
        assert!(!cold.exists() && !open.exists());
    }

    #[test]
    fn a_stopping_store_compresses_nothing() {
        let (_home, layout, index) = setup();
        let path = rollout(&layout, false, "rollout-a.jsonl", "a\n");
        old(&path);
        let tally = run(&layout, &index, cutoff(), &AtomicBool::new(true));
        assert!(tally.stopped);
        assert!(path.exists() && !gz_path(&path).exists());
    }

    #[test]
    fn a_file_that_changes_while_compressed_keeps_its_plain_form() {
        let (_home, layout, _index) = setup();
        let path = rollout(&layout, false, "rollout-a.jsonl", "a\n");
        old(&path);
        let (file, metadata) = layout.open_plain(&path).expect("open");
        let before = FileStamp::of(&metadata).expect("stamp");
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(b"b\n"))
            .expect("append");
        assert!(!unchanged(&file, &path, before).expect("looked"));
    }
}
