//! How a file is told apart from its earlier self.

/// A file's length and modification time: how the index tells whether a rollout changed
/// behind its back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileStamp {
    /// The file's length in bytes.
    pub len: u64,
    /// Nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
}

impl FileStamp {
    pub(crate) fn of(metadata: &std::fs::Metadata) -> std::io::Result<Self> {
        let mtime = metadata.modified()?;
        let mtime_ns = mtime
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Ok(Self {
            len: metadata.len(),
            mtime_ns,
        })
    }
}
