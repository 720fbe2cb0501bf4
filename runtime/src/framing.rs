//! Newline-delimited framing with a size limit: one JSON message per line.
//!
//! The framer never holds more than the limit (plus the `\r` of a CRLF ending): a line that
//! grows past it is dropped as it arrives, and reported once its end is seen.

/// What the framer found in the input.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameEvent<'a> {
    /// One complete message (without the newline, and without a trailing `\r`).
    Message(&'a [u8]),
    /// A line longer than the limit was dropped; `bytes` is its length.
    TooLarge {
        /// How long the dropped line was (without the newline, with a `\r` before it).
        bytes: usize,
    },
}

/// Splits a byte stream into lines of at most `limit` bytes.
#[derive(Debug)]
pub struct LineFramer {
    buffer: Vec<u8>,
    limit: usize,
    /// Bytes of an oversized line dropped so far, while waiting for its end.
    discarding: Option<usize>,
}

impl LineFramer {
    /// A framer that accepts lines of at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            buffer: Vec::new(),
            limit,
            discarding: None,
        }
    }

    /// Feeds a chunk of input; calls `on_event` for each complete line (blank lines are skipped).
    pub fn push(&mut self, mut chunk: &[u8], mut on_event: impl FnMut(FrameEvent<'_>)) {
        while !chunk.is_empty() {
            let newline = memchr::memchr(b'\n', chunk);
            let (segment, rest, complete) = match newline {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (chunk, &[][..], false),
            };
            chunk = rest;
            if let Some(dropped) = self.discarding.as_mut() {
                *dropped += segment.len();
                if complete {
                    let bytes = *dropped;
                    self.discarding = None;
                    on_event(FrameEvent::TooLarge { bytes });
                }
                continue;
            }
            if complete && self.buffer.is_empty() {
                self.emit(segment, &mut on_event);
                continue;
            }
            // A line of `limit` bytes may still be waiting for the `\n` after its `\r`.
            if self.buffer.len() + segment.len() > self.limit + 1 {
                let dropped = self.buffer.len() + segment.len();
                self.buffer = Vec::new();
                if complete {
                    on_event(FrameEvent::TooLarge { bytes: dropped });
                } else {
                    self.discarding = Some(dropped);
                }
                continue;
            }
            self.buffer.extend_from_slice(segment);
            if complete {
                let line = std::mem::take(&mut self.buffer);
                self.emit(&line, &mut on_event);
                // Keep the allocation for the next partial line, bounded by the limit.
                self.buffer = line;
                self.buffer.clear();
            }
        }
    }

    /// How many bytes of an unfinished line the framer holds now.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Ends the input: a last line without a newline is still a message.
    pub fn finish(&mut self, mut on_event: impl FnMut(FrameEvent<'_>)) {
        if let Some(bytes) = self.discarding.take() {
            on_event(FrameEvent::TooLarge { bytes });
        } else if !self.buffer.is_empty() {
            let line = std::mem::take(&mut self.buffer);
            self.emit(&line, &mut on_event);
        }
    }

    fn emit(&self, raw: &[u8], on_event: &mut impl FnMut(FrameEvent<'_>)) {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.len() > self.limit {
            on_event(FrameEvent::TooLarge { bytes: raw.len() });
        } else if !line.iter().all(u8::is_ascii_whitespace) {
            on_event(FrameEvent::Message(line));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(limit: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut framer = LineFramer::new(limit);
        let mut out = Vec::new();
        let mut record = |event: FrameEvent<'_>| {
            out.push(match event {
                FrameEvent::Message(m) => String::from_utf8_lossy(m).into_owned(),
                FrameEvent::TooLarge { bytes } => format!("<too large: {bytes}>"),
            })
        };
        for chunk in chunks {
            framer.push(chunk, &mut record);
        }
        framer.finish(&mut record);
        out
    }

    #[test]
    fn splits_lines_across_chunks() {
        assert_eq!(
            frames(100, &[b"{\"a\":1}\n{\"b\"", b":2}\r\n\n  \n{\"c\":3}"]),
            ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]
        );
    }

    #[test]
    fn oversized_lines_are_dropped_and_reported_without_buffering() {
        let long = vec![b'x'; 50];
        let mut input = long.clone();
        input.extend_from_slice(b"\nok\n");
        assert_eq!(frames(10, &[&input]), ["<too large: 50>", "ok"]);
        // Split over chunks: the framer never holds more than the limit.
        let mut framer = LineFramer::new(10);
        let mut events = Vec::new();
        for piece in input.chunks(7) {
            framer.push(piece, |e| events.push(format!("{e:?}")));
            assert!(framer.buffer.len() <= 10);
        }
        assert_eq!(events, ["TooLarge { bytes: 50 }", "Message([111, 107])"]);
    }

    #[test]
    fn exactly_the_limit_is_accepted() {
        assert_eq!(frames(3, &[b"abc\nabcd\n"]), ["abc", "<too large: 4>"]);
    }

    #[test]
    fn crlf_lines_at_the_limit_do_not_depend_on_chunking() {
        let whole = frames(3, &[b"abc\r\nabcd\r\n"]);
        assert_eq!(whole, ["abc", "<too large: 5>"]);
        assert_eq!(frames(3, &[b"ab", b"c\r", b"\nabc", b"d\r\n"]), whole);
    }
}
