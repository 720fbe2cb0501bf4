//! A minimal ZIP writer: stored (uncompressed) entries with UTF-8 names, a CRC-32 each, and a
//! central directory — what any unzip tool reads. No ZIP64: the archive and each entry stay
//! below 4 GiB and 65,535 entries, which the caller keeps to (feedback reports are small).

/// The CRC-32 (IEEE 802.3, reflected) table.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
};

/// The CRC-32 of `bytes`.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc = CRC_TABLE[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

/// A time in the MS-DOS form ZIP headers use: (time, date).
fn dos_time(unix_seconds: i64) -> (u16, u16) {
    let Ok(at) = time::OffsetDateTime::from_unix_timestamp(unix_seconds) else {
        return (0, 0x21);
    };
    // DOS dates start in 1980.
    let year = u16::try_from(at.year().clamp(1980, 2107) - 1980).unwrap_or(0);
    let date = (year << 9) | (u16::from(u8::from(at.month())) << 5) | u16::from(at.day());
    let time =
        (u16::from(at.hour()) << 11) | (u16::from(at.minute()) << 5) | (u16::from(at.second()) / 2);
    (time, date)
}

/// An archive being built in memory.
#[derive(Debug)]
pub(crate) struct ZipWriter {
    out: Vec<u8>,
    central: Vec<u8>,
    entries: u16,
    time: (u16, u16),
}

/// Why an entry could not be added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TooLarge;

impl ZipWriter {
    /// An empty archive whose entries are dated `unix_seconds`.
    pub(crate) fn new(unix_seconds: i64) -> Self {
        Self {
            out: Vec::new(),
            central: Vec::new(),
            entries: 0,
            time: dos_time(unix_seconds),
        }
    }

    /// Adds the file `name` holding `data`.
    pub(crate) fn add(&mut self, name: &str, data: &[u8]) -> Result<(), TooLarge> {
        let size = u32::try_from(data.len()).map_err(|_| TooLarge)?;
        let offset = u32::try_from(self.out.len()).map_err(|_| TooLarge)?;
        let name_len = u16::try_from(name.len()).map_err(|_| TooLarge)?;
        let entries = self.entries.checked_add(1).ok_or(TooLarge)?;
        let crc = crc32(data);
        let (time, date) = self.time;
        const UTF8_NAMES: u16 = 1 << 11;
        // Local file header.
        let local = &mut self.out;
        local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        local.extend_from_slice(&20u16.to_le_bytes());
        local.extend_from_slice(&UTF8_NAMES.to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes()); // stored
        local.extend_from_slice(&time.to_le_bytes());
        local.extend_from_slice(&date.to_le_bytes());
        local.extend_from_slice(&crc.to_le_bytes());
        local.extend_from_slice(&size.to_le_bytes());
        local.extend_from_slice(&size.to_le_bytes());
        local.extend_from_slice(&name_len.to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes());
        local.extend_from_slice(name.as_bytes());
        local.extend_from_slice(data);
        // Its central directory record: made by Unix, a regular file of mode 0644.
        let central = &mut self.central;
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&((3u16 << 8) | 20).to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&UTF8_NAMES.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&time.to_le_bytes());
        central.extend_from_slice(&date.to_le_bytes());
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&name_len.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes()); // extra
        central.extend_from_slice(&0u16.to_le_bytes()); // comment
        central.extend_from_slice(&0u16.to_le_bytes()); // disk
        central.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
        central.extend_from_slice(&(0o100_644u32 << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
        self.entries = entries;
        Ok(())
    }

    /// The finished archive.
    pub(crate) fn finish(mut self) -> Result<Vec<u8>, TooLarge> {
        let offset = u32::try_from(self.out.len()).map_err(|_| TooLarge)?;
        let size = u32::try_from(self.central.len()).map_err(|_| TooLarge)?;
        self.out.append(&mut self.central);
        u32::try_from(self.out.len() + 22).map_err(|_| TooLarge)?;
        let end = &mut self.out;
        end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        end.extend_from_slice(&0u16.to_le_bytes());
        end.extend_from_slice(&0u16.to_le_bytes());
        end.extend_from_slice(&self.entries.to_le_bytes());
        end.extend_from_slice(&self.entries.to_le_bytes());
        end.extend_from_slice(&size.to_le_bytes());
        end.extend_from_slice(&offset.to_le_bytes());
        end.extend_from_slice(&0u16.to_le_bytes());
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crc_is_the_ieee_one() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn dates_are_in_dos_form() {
        // 2026-12-06 02:47:18 UTC.
        let (time, date) = dos_time(1_796_525_238);
        assert_eq!(date >> 9, 46);
        assert_eq!((date >> 5) & 0xF, 12);
        assert_eq!(date & 0x1F, 6);
        assert_eq!(time >> 11, 2);
        assert_eq!((time >> 5) & 0x3F, 47);
    }

    /// The archive reads back with the system's `unzip`, when the machine has one.
    #[test]
    fn an_archive_lists_and_extracts() {
        let mut zip = ZipWriter::new(1_796_525_238);
        zip.add("report.json", b"{\"a\":1}").expect("add");
        zip.add("attachments/0000/log.txt", "h\u{e9}llo\n".as_bytes())
            .expect("add");
        let bytes = zip.finish().expect("finish");
        assert_eq!(&bytes[..4], b"PK\x03\x04");
        assert_eq!(&bytes[bytes.len() - 22..bytes.len() - 18], b"PK\x05\x06");
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
