//! Appending to a rollout (its format and fsync policy are in [`crate::record`]).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::committer::{Committer, Pending};
use crate::index::IndexRow;
use crate::meta::ThreadMeta;
use crate::record::{ROLLOUT_VERSION, RolloutRecord};
use crate::stamp::FileStamp;

/// An open rollout that records are appended to.
#[derive(Debug)]
pub(crate) struct RolloutWriter {
    /// Shared with the committer, which writes the records of a loaded thread.
    file: Arc<File>,
    path: PathBuf,
    /// The file's length: where the next record starts.
    len: u64,
}

impl RolloutWriter {
    /// Creates the rollout at `path` (which must not exist) with its first record, and makes
    /// file and directory entry durable.
    pub(crate) fn create(path: &Path, meta: &ThreadMeta) -> std::io::Result<Self> {
        let parent = path.parent().unwrap_or(Path::new("."));
        crate::paths::create_private_dirs(parent)?;
        let mut options = OpenOptions::new();
        options.append(true).create_new(true);
        crate::paths::private_file_mode(&mut options);
        let file = options.open(path)?;
        let mut writer = Self {
            file: Arc::new(file),
            path: path.to_owned(),
            len: 0,
        };
        crate::compressed::register_writer(path, &writer.file);
        writer.write_line(&RolloutRecord::Thread {
            version: ROLLOUT_VERSION,
            meta: meta.clone(),
        })?;
        writer.file.sync_all()?;
        agentwire_support::atomic_file::sync_dir(parent)?;
        Ok(writer)
    }

    /// Opens an existing rollout for appending. `sound_len` and `torn` come from reading it
    /// back: a torn tail is cut off, and a missing final newline added, so the next record
    /// starts on a line of its own. The file is plain: a store thaws a compressed rollout first
    /// (see [`crate::compressed::open_for_append`]); while the descriptor lives the rollout is
    /// not compressed.
    pub(crate) fn open(path: &Path, sound_len: u64, torn: bool) -> std::io::Result<Self> {
        let file = Arc::new(OpenOptions::new().append(true).open(path)?);
        crate::compressed::register_writer(path, &file);
        let len = file.metadata()?.len();
        if torn && len > sound_len {
            tracing::warn!(path = %path.display(), bytes = len - sound_len, "cutting off a torn rollout tail");
            file.set_len(sound_len)?;
            file.sync_data()?;
        }
        let mut writer = Self {
            file,
            path: path.to_owned(),
            len: if torn { sound_len.min(len) } else { len },
        };
        if !torn && len > 0 && !ends_with_newline(path, len)? {
            (&*writer.file).write_all(b"\n")?;
            writer.len += 1;
        }
        Ok(writer)
    }

    /// Appends `records` with one write and one `fdatasync`, on the calling thread; returns the
    /// file's new length and modification time (for the index). For rollouts that are not
    /// loaded; a loaded thread's records go through [`RolloutWriter::queue`].
    pub(crate) fn append(&mut self, records: &[RolloutRecord]) -> std::io::Result<FileStamp> {
        let bytes = encode(records)?;
        (&*self.file).write_all(&bytes)?;
        self.len += bytes.len() as u64;
        self.file.sync_data()?;
        FileStamp::of(&self.file.metadata()?)
    }

    /// Hands `records` to `committer`, which appends and syncs them with whatever else is
    /// waiting and then writes `row` (the thread's index row as of these records).
    pub(crate) fn queue(
        &mut self,
        committer: &Committer,
        records: &[RolloutRecord],
        row: IndexRow,
    ) -> std::io::Result<Pending> {
        let bytes = encode(records)?;
        self.len += bytes.len() as u64;
        Ok(committer.submit(&self.file, self.path.clone(), bytes, row))
    }

    fn write_line(&mut self, record: &RolloutRecord) -> std::io::Result<()> {
        let bytes = encode(std::slice::from_ref(record))?;
        (&*self.file).write_all(&bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Where the file is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's current length and modification time.
    pub(crate) fn stamp(&self) -> std::io::Result<FileStamp> {
        FileStamp::of(&self.file.metadata()?)
    }
}

/// `records` as rollout lines, each ending in a newline.
fn encode(records: &[RolloutRecord]) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    for record in records {
        serde_json::to_writer(&mut bytes, record)?;
        bytes.push(b'\n');
    }
    Ok(bytes)
}

fn ends_with_newline(path: &Path, len: u64) -> std::io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}
