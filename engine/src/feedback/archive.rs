//! The report's ZIP archive, built in memory with the `zip` crate: deflated entries with UTF-8
//! names, each dated when the report was made and readable by its owner and others (0644).

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

/// An archive being written.
pub(crate) struct Archive {
    zip: ZipWriter<Cursor<Vec<u8>>>,
    options: SimpleFileOptions,
}

/// Why the archive could not be written (the `zip` crate's words).
#[derive(Debug)]
pub(crate) struct ArchiveError(String);

impl std::fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn failed(error: impl std::fmt::Display) -> ArchiveError {
    ArchiveError(error.to_string())
}

/// `unix_seconds` as the MS-DOS time ZIP headers carry (UTC; 1980-01-01 when out of range).
fn stamp(unix_seconds: i64) -> DateTime {
    let Ok(at) = time::OffsetDateTime::from_unix_timestamp(unix_seconds) else {
        return DateTime::default();
    };
    DateTime::from_date_and_time(
        u16::try_from(at.year()).unwrap_or(1980),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
    )
    .unwrap_or_default()
}

impl Archive {
    /// An empty archive whose entries are dated `unix_seconds`.
    pub(crate) fn new(unix_seconds: i64) -> Self {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .last_modified_time(stamp(unix_seconds))
            .unix_permissions(0o644)
            .large_file(false);
        Self {
            zip: ZipWriter::new(Cursor::new(Vec::new())),
            options,
        }
    }

    /// Adds the entry `name` holding `data`.
    pub(crate) fn add(&mut self, name: &str, data: &[u8]) -> Result<(), ArchiveError> {
        self.zip.start_file(name, self.options).map_err(failed)?;
        self.zip.write_all(data).map_err(failed)
    }

    /// The finished archive's bytes.
    pub(crate) fn finish(self) -> Result<Vec<u8>, ArchiveError> {
        Ok(self.zip.finish().map_err(failed)?.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn entries_read_back_with_their_names_contents_and_date() {
        // 2026-12-06 02:47:18 UTC.
        let mut archive = Archive::new(1_796_525_238);
        archive.add("report.json", b"{\"a\":1}").expect("add");
        archive
            .add("attachments/0000/l\u{f6}g.txt", "h\u{e9}llo\n".as_bytes())
            .expect("add");
        let bytes = archive.finish().expect("finish");

        let mut read = zip::ZipArchive::new(Cursor::new(bytes)).expect("a ZIP archive");
        assert_eq!(read.len(), 2);
        let mut entry = read
            .by_name("attachments/0000/l\u{f6}g.txt")
            .expect("the UTF-8 name");
        let mut text = String::new();
        entry.read_to_string(&mut text).expect("read");
        assert_eq!(text, "h\u{e9}llo\n");
        assert_eq!(entry.compression(), CompressionMethod::Deflated);
        let at = entry.last_modified().expect("dated");
        assert_eq!((at.year(), at.month(), at.day()), (2026, 12, 6));
        assert_eq!((at.hour(), at.minute()), (2, 47));
        assert_eq!(entry.unix_mode().map(|m| m & 0o777), Some(0o644));
    }

    /// The archive passes the system's `unzip -t`, when the machine has one.
    #[test]
    fn unzip_finds_no_errors() {
        let mut archive = Archive::new(0);
        archive.add("report.json", b"{}").expect("add");
        let bytes = archive.finish().expect("finish");
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("t.zip");
        std::fs::write(&path, &bytes).expect("write");
        let Ok(out) = std::process::Command::new("unzip")
            .arg("-t")
            .arg(&path)
            .output()
        else {
            return;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("No errors detected"), "{text}");
    }
}
