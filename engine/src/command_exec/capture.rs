//! What happens to one output stream's bytes: kept for the response, or passed on as
//! `command/exec/outputDelta` chunks, up to the stream's cap. Output past the cap is still read
//! (so the process never blocks on a full pipe) but dropped.

/// A piece of output to send as one `command/exec/outputDelta`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Chunk {
    /// The bytes (empty only on the chunk that says the cap cut the stream).
    pub bytes: Vec<u8>,
    /// Output was dropped after these bytes: the last chunk of the stream.
    pub cap_reached: bool,
}

/// One output stream's bytes against its cap.
#[derive(Debug)]
pub(super) struct Capture {
    /// Bytes allowed in all; `None` for no limit.
    cap: Option<usize>,
    /// Bytes admitted so far.
    admitted: usize,
    /// Whether admitted bytes stream out (else they are kept in `kept`).
    streaming: bool,
    /// The admitted bytes, when not streaming.
    kept: Vec<u8>,
    /// Whether output has been dropped (and, when streaming, the client told).
    cut: bool,
}

impl Capture {
    /// A stream allowed `cap` bytes that streams (`streaming`) or keeps them.
    pub(super) fn new(cap: Option<usize>, streaming: bool) -> Self {
        Self {
            cap,
            admitted: 0,
            streaming,
            kept: Vec::new(),
            cut: false,
        }
    }

    /// Takes `bytes` just read; returns what to stream, if anything. A chunk that runs past the
    /// cap streams up to the cap, marked `cap_reached`; output arriving after a chunk that
    /// filled the cap exactly streams as an empty chunk marked `cap_reached`; after that,
    /// nothing.
    pub(super) fn push(&mut self, bytes: &[u8]) -> Option<Chunk> {
        if self.cut || bytes.is_empty() {
            return None;
        }
        let room = self
            .cap
            .map_or(bytes.len(), |cap| cap.saturating_sub(self.admitted));
        let taken = &bytes[..room.min(bytes.len())];
        self.admitted += taken.len();
        self.cut = taken.len() < bytes.len();
        if self.streaming {
            Some(Chunk {
                bytes: taken.to_vec(),
                cap_reached: self.cut,
            })
        } else {
            self.kept.extend_from_slice(taken);
            None
        }
    }

    /// Whether output was cut off at the cap.
    pub(super) fn cut(&self) -> bool {
        self.cut
    }

    /// The text for the response: what was kept, as UTF-8 (invalid sequences become U+FFFD);
    /// empty when the stream was streamed.
    pub(super) fn into_text(self) -> String {
        match String::from_utf8(self.kept) {
            Ok(text) => text,
            Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(bytes: &[u8], cap_reached: bool) -> Option<Chunk> {
        Some(Chunk {
            bytes: bytes.to_vec(),
            cap_reached,
        })
    }

    #[test]
    fn without_a_cap_everything_streams() {
        let mut capture = Capture::new(None, true);
        assert_eq!(capture.push(b"abc"), chunk(b"abc", false));
        assert_eq!(capture.push(b""), None);
        assert_eq!(capture.push(b"de"), chunk(b"de", false));
        assert_eq!(capture.into_text(), "");
    }

    #[test]
    fn a_chunk_past_the_cap_is_cut_and_marked_and_nothing_follows() {
        let mut capture = Capture::new(Some(5), true);
        assert_eq!(capture.push(b"abc"), chunk(b"abc", false));
        assert_eq!(capture.push(b"defg"), chunk(b"de", true));
        assert_eq!(capture.push(b"more"), None);
    }

    #[test]
    fn filling_the_cap_exactly_is_marked_only_when_more_output_comes() {
        let mut capture = Capture::new(Some(4), true);
        assert_eq!(capture.push(b"abcd"), chunk(b"abcd", false));
        assert_eq!(capture.push(b"e"), chunk(b"", true));
        assert_eq!(capture.push(b"f"), None);
        let mut zero = Capture::new(Some(0), true);
        assert_eq!(zero.push(b"x"), chunk(b"", true));
        assert_eq!(zero.push(b"y"), None);
    }

    #[test]
    fn kept_output_is_capped_and_decoded() {
        let mut capture = Capture::new(Some(6), false);
        assert_eq!(capture.push("héllo".as_bytes()), None);
        assert_eq!(capture.push(b" world"), None);
        assert_eq!(capture.into_text(), "héllo");
        // A character cut by the cap becomes U+FFFD.
        let mut capture = Capture::new(Some(2), false);
        capture.push("hé".as_bytes());
        assert_eq!(capture.into_text(), "h\u{fffd}");
    }
}
