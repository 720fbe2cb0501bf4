//! The two forms of a rollout on disk: plain (`rollout-….jsonl`) and gzipped
//! (`rollout-….jsonl.gz`, written by the `rollout/compress` pass, see [`crate::compress`]).
//!
//! Everything else names a rollout by its plain path (the index keeps it, `Thread.path`
//! reports it) and goes through the functions here, so a compressed rollout behaves as a plain
//! one:
//!
//! - reading it in order ([`Layout::open_reader`]) decompresses on the fly, never more than
//!   `MAX_ROLLOUT_BYTES`;
//! - opening it for seeking ([`Layout::open_checked`]) or appending (`open_for_append`)
//!   first *thaws* it: the plain file is written beside it (temporary file, `fsync`, rename,
//!   its old modification time kept) and only then is the `.gz` removed;
//! - moving (`move_either`) and removing (`remove_either`) act on whichever form exists.
//!
//! At every instant at least one form exists: compressing removes the plain file only once the
//! `.gz` is durable, thawing removes the `.gz` only once the plain file is. When both exist
//! (a crash between the two steps), the plain file is the truth and the `.gz` a leftover.
//! Compressing, thawing, moving and removing one rollout are serialised by a lock per plain
//! path (`hold`); reading takes no lock.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};

use agentwire_support::atomic_file::sync_dir;
use agentwire_support::lock;
use flate2::read::GzDecoder;

use crate::paths::{Layout, private_file_mode};

/// The suffix of a compressed rollout, after its plain name.
pub(crate) const GZ_SUFFIX: &str = ".gz";

/// Most bytes a rollout may hold to be compressed, and so most bytes a compressed rollout may
/// decompress to: a `.gz` that holds more is refused (it was not written by this server), not
/// read into memory or onto the disk without end.
pub(crate) const MAX_ROLLOUT_BYTES: u64 = 1 << 30;

/// The compressed form of the rollout whose plain path is `path`.
pub(crate) fn gz_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(GZ_SUFFIX);
    PathBuf::from(name)
}

/// The plain path of a compressed rollout's `path`, if it ends in `.jsonl.gz`.
pub fn plain_path(path: &Path) -> Option<PathBuf> {
    let text = path.to_str()?;
    let plain = text.strip_suffix(GZ_SUFFIX)?;
    plain.ends_with(".jsonl").then(|| PathBuf::from(plain))
}

/// Whether something (a file, a link) is at `path`, without following a link.
fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Whichever form of rollout `path` exists: `path` itself when it does (or neither does),
/// else its `.gz`.
pub fn existing_form(path: &Path) -> PathBuf {
    let gz = gz_path(path);
    if !exists(path) && exists(&gz) {
        gz
    } else {
        path.to_owned()
    }
}

// ---- one operation at a time per rollout ----

/// The plain paths of the rollouts being compressed, thawed, moved or removed right now.
static BUSY: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
/// Signalled whenever a path leaves [`BUSY`].
static FREED: Condvar = Condvar::new();

/// The rollouts of [`hold`], until dropped.
#[derive(Debug)]
pub(crate) struct Held {
    paths: Vec<PathBuf>,
}

/// Waits until no one else holds any of `paths` (plain rollout paths), then holds them all.
/// Never call it while already holding one of them.
pub(crate) fn hold(paths: &[&Path]) -> Held {
    let mut busy = lock(&BUSY);
    while paths.iter().any(|path| busy.contains(*path)) {
        busy = FREED
            .wait(busy)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
    let paths: Vec<PathBuf> = paths.iter().map(|path| path.to_path_buf()).collect();
    busy.extend(paths.iter().cloned());
    Held { paths }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut busy = lock(&BUSY);
        for path in &self.paths {
            busy.remove(path);
        }
        FREED.notify_all();
    }
}

// ---- which rollouts are open for appending ----

/// Per plain path, the descriptors open for appending to it (a loaded thread's log, a one-off
/// append, records still queued at the committer): while one lives, the file is not
/// compressed.
static WRITERS: Mutex<BTreeMap<PathBuf, Vec<Weak<File>>>> = Mutex::new(BTreeMap::new());

/// Records that `file` appends to the rollout at `path`, for as long as it is open. Called
/// with the rollout held (`hold`) or just created.
pub(crate) fn register_writer(path: &Path, file: &Arc<File>) {
    let mut writers = lock(&WRITERS);
    if writers.len() >= 256 {
        writers.retain(|_, open| {
            open.retain(|weak| weak.strong_count() > 0);
            !open.is_empty()
        });
    }
    writers
        .entry(path.to_owned())
        .or_default()
        .push(Arc::downgrade(file));
}

/// Whether some descriptor still appends to the rollout at `path`.
pub(crate) fn has_writer(path: &Path) -> bool {
    let mut writers = lock(&WRITERS);
    let Some(open) = writers.get_mut(path) else {
        return false;
    };
    open.retain(|weak| weak.strong_count() > 0);
    if open.is_empty() {
        writers.remove(path);
        false
    } else {
        true
    }
}

// ---- reading either form ----

/// A rollout open for reading from its start, in whichever form it is kept.
#[derive(Debug)]
pub enum RolloutReader {
    /// The plain file.
    Plain(File),
    /// The `.gz`, decompressed as it is read.
    Compressed(Box<Inflate>),
}

impl Read for RolloutReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            RolloutReader::Plain(file) => file.read(buf),
            RolloutReader::Compressed(inflate) => inflate.read(buf),
        }
    }
}

/// The decompressed bytes of a `.gz` rollout, refused past `MAX_ROLLOUT_BYTES`; errors name
/// the `.gz`.
pub struct Inflate {
    decoder: GzDecoder<BufReader<File>>,
    gz: PathBuf,
    read: u64,
}

impl std::fmt::Debug for Inflate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inflate")
            .field("gz", &self.gz)
            .field("read", &self.read)
            .finish_non_exhaustive()
    }
}

impl Inflate {
    pub(crate) fn new(file: File, gz: &Path) -> Self {
        Self {
            decoder: GzDecoder::new(BufReader::new(file)),
            gz: gz.to_owned(),
            read: 0,
        }
    }
}

impl Read for Inflate {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.decoder.read(buf).map_err(|error| {
            io::Error::new(
                error.kind(),
                format!("cannot decompress {}: {error}", self.gz.display()),
            )
        })?;
        self.read += n as u64;
        if self.read > MAX_ROLLOUT_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} decompresses to more than {MAX_ROLLOUT_BYTES} bytes, more than a rollout may hold",
                    self.gz.display()
                ),
            ));
        }
        Ok(n)
    }
}

impl Layout {
    /// Opens rollout `path` (its plain path) for reading from the start, in whichever form it
    /// is kept, after the checks of `Layout::open_plain` on that form; returns the reader and
    /// the metadata of the file opened. Nothing is thawed. `NotFound` when neither form exists.
    pub fn open_reader(&self, path: &Path) -> io::Result<(RolloutReader, Metadata)> {
        let gz = gz_path(path);
        // No lock: a compression or a thaw may swap the forms between two tries, but one of
        // them exists at every instant, so the third try finds the form left.
        let mut last = None;
        for _ in 0..3 {
            match self.open_plain(path) {
                Ok((file, metadata)) => return Ok((RolloutReader::Plain(file), metadata)),
                Err(error) if error.kind() == io::ErrorKind::NotFound => last = Some(error),
                Err(error) => return Err(error),
            }
            match self.open_plain(&gz) {
                Ok((file, metadata)) => {
                    let inflate = Inflate::new(file, &gz);
                    return Ok((RolloutReader::Compressed(Box::new(inflate)), metadata));
                }
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(error) => return Err(error),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::NotFound)))
    }

    /// Opens rollout `path` (its plain path) for reading anywhere in it: a compressed rollout
    /// is thawed first (see the module docs). The checks of `Layout::open_plain` apply to
    /// both forms.
    pub fn open_checked(&self, path: &Path) -> io::Result<(File, Metadata)> {
        match self.open_plain(path) {
            Err(error) if error.kind() == io::ErrorKind::NotFound && exists(&gz_path(path)) => {
                let _held = hold(&[path]);
                self.thaw_held(path)?;
                self.open_plain(path)
            }
            opened => opened,
        }
    }

    /// Brings rollout `path` back to its plain form if only its `.gz` exists; the caller holds
    /// `path` (`hold`). `NotFound` when neither form exists. The `.gz` is decompressed into a
    /// temporary file beside it (synced, given the `.gz`'s modification time, so the rollout
    /// still counts as untouched) that is renamed to `path`; the `.gz` goes last.
    pub(crate) fn thaw_held(&self, path: &Path) -> io::Result<()> {
        if exists(path) {
            return Ok(());
        }
        let gz = gz_path(path);
        let (file, metadata) = self.open_plain(&gz)?;
        let modified = metadata.modified()?;
        let temp = temp_beside(path, "thaw");
        let dir = path.parent().unwrap_or(self.home());
        let written = (|| {
            let mut out = create_private(&temp)?;
            io::copy(&mut Inflate::new(file, &gz), &mut out)?;
            out.set_modified(modified)?;
            out.sync_all()?;
            drop(out);
            std::fs::rename(&temp, path)?;
            sync_dir(dir)
        })();
        if let Err(error) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(error);
        }
        match std::fs::remove_file(&gz).and_then(|()| sync_dir(dir)) {
            Ok(()) => tracing::debug!(path = %path.display(), "rollout thawed"),
            // The plain file is the truth from here on; the leftover is replaced when the
            // rollout is compressed again.
            Err(error) => {
                tracing::warn!(gz = %gz.display(), %error, "compressed rollout left beside its thawed copy");
            }
        }
        Ok(())
    }
}

/// Opens rollout `path` (plain path, under `layout`) for appending: thaws it if it is
/// compressed, then calls `open` on the plain path, all while holding it, so a compression
/// cannot slip in between (`open` registers the descriptor, see [`register_writer`]).
pub(crate) fn open_for_append<T>(
    layout: &Layout,
    path: &Path,
    open: impl FnOnce() -> io::Result<T>,
) -> io::Result<T> {
    let _held = hold(&[path]);
    match layout.thaw_held(path) {
        // Neither form: let `open` say so about the plain path.
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        thawed => thawed?,
    }
    open()
}

/// Moves rollout `from` to `to` (plain paths under `layout`), in whichever form it is kept,
/// durably. Refused when either form exists at `to`.
pub(crate) fn move_either(layout: &Layout, from: &Path, to: &Path) -> io::Result<()> {
    let _held = hold(&[from, to]);
    let (source, target) = if exists(from) {
        (from.to_owned(), to.to_owned())
    } else {
        (gz_path(from), gz_path(to))
    };
    layout.open_plain(&source)?;
    for taken in [to.to_owned(), gz_path(to)] {
        if exists(&taken) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} already exists", taken.display()),
            ));
        }
    }
    let target_dir = target.parent().unwrap_or(layout.home());
    crate::paths::create_private_dirs(target_dir)?;
    std::fs::rename(&source, &target)?;
    sync_dir(target_dir)?;
    if let Some(source_dir) = source.parent() {
        if source == from {
            // A leftover `.gz` beside the plain file (see the module docs) is not moved.
            remove_if_present(&gz_path(from))?;
        }
        sync_dir(source_dir)?;
    }
    Ok(())
}

/// Removes rollout `path` (plain path) in both forms; `Ok` when neither exists.
pub(crate) fn remove_either(path: &Path) -> io::Result<()> {
    let _held = hold(&[path]);
    remove_if_present(path)?;
    remove_if_present(&gz_path(path))
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(io::Error::new(
            error.kind(),
            format!("cannot remove {}: {error}", path.display()),
        )),
        _ => Ok(()),
    }
}

/// A fresh temporary name beside `path`: `<name>.<what>.<pid>.<n>.tmp` (never taken for a
/// rollout by a scan: it does not end in `.jsonl` or `.jsonl.gz`).
pub(crate) fn temp_beside(path: &Path, what: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{what}.{}.{n}.tmp", std::process::id()));
    PathBuf::from(name)
}

/// Creates `path`, which must not exist, for writing, private to the user.
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    private_file_mode(&mut options);
    options.open(path)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(bytes).expect("compress");
        encoder.finish().expect("finish")
    }

    fn setup(text: &str) -> (tempfile::TempDir, Layout, PathBuf) {
        let home = tempfile::tempdir().expect("scratch home");
        let layout = Layout::new(home.path());
        let path = layout.rollout(false, Path::new("2026/01/01/rollout-x.jsonl"));
        std::fs::create_dir_all(path.parent().expect("dir")).expect("dirs");
        std::fs::write(gz_path(&path), gzip(text.as_bytes())).expect("write gz");
        (home, layout, path)
    }

    #[test]
    fn a_compressed_rollout_reads_without_thawing_and_thaws_for_seeking() {
        let (_home, layout, path) = setup("one\ntwo\n");
        let (mut reader, _) = layout.open_reader(&path).expect("reader");
        let mut text = String::new();
        reader.read_to_string(&mut text).expect("read");
        assert_eq!(text, "one\ntwo\n");
        assert!(!path.exists(), "reading in order leaves it compressed");

        let (mut file, _) = layout.open_checked(&path).expect("thawed");
        let mut text = String::new();
        file.read_to_string(&mut text).expect("read");
        assert_eq!(text, "one\ntwo\n");
        assert!(path.exists() && !gz_path(&path).exists());
    }

    #[test]
    fn a_corrupt_gz_is_an_error_naming_it_and_thawing_it_keeps_it() {
        let (_home, layout, path) = setup("");
        std::fs::write(gz_path(&path), b"not gzip at all").expect("corrupt");
        let (mut reader, _) = layout.open_reader(&path).expect("opens");
        let error = reader.read_to_end(&mut Vec::new()).expect_err("corrupt");
        assert!(error.to_string().contains("rollout-x.jsonl.gz"), "{error}");
        let error = layout.open_checked(&path).expect_err("cannot thaw");
        assert!(error.to_string().contains("rollout-x.jsonl.gz"), "{error}");
        assert!(gz_path(&path).exists() && !path.exists());
        let leftovers = std::fs::read_dir(path.parent().expect("dir"))
            .expect("list")
            .count();
        assert_eq!(leftovers, 1, "no temporary file is left");
    }

    #[test]
    fn moving_and_removing_act_on_the_form_that_exists() {
        let (_home, layout, path) = setup("x\n");
        let relative = Path::new("2026/01/01/rollout-x.jsonl");
        let archived = layout.rollout(true, relative);
        move_either(&layout, &path, &archived).expect("archived");
        assert!(gz_path(&archived).exists() && !gz_path(&path).exists());
        remove_either(&archived).expect("removed");
        assert!(!gz_path(&archived).exists());
        remove_either(&archived).expect("removing nothing is fine");
    }

    #[test]
    fn names_of_both_forms() {
        let plain = Path::new("/h/sessions/rollout-a.jsonl");
        assert_eq!(gz_path(plain), Path::new("/h/sessions/rollout-a.jsonl.gz"));
        assert_eq!(plain_path(&gz_path(plain)).as_deref(), Some(plain));
        assert_eq!(plain_path(Path::new("/h/x.txt.gz")), None);
    }
}
