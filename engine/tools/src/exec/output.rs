//! Keeping a command's output within bounds: the aggregated output keeps its head and its
//! tail, and the live stream stops after a limit.

use std::collections::VecDeque;

/// Bytes of text kept from the start of the aggregated output.
pub(crate) const HEAD_BYTES: usize = 64 * 1024;
/// Bytes of text kept from the end of the aggregated output.
pub(crate) const TAIL_BYTES: usize = 64 * 1024;
/// Bytes of text streamed to the output callback; past it the command keeps running and
/// its output keeps being read (and aggregated), but no longer streamed.
pub(crate) const STREAM_BYTES: usize = 4 * 1024 * 1024;

/// The note that replaces what the aggregated output left out.
pub(crate) fn omitted_note(bytes: usize) -> String {
    format!("\n[… {bytes} bytes omitted …]\n")
}

/// The note streamed once when streaming stops.
pub(crate) fn stream_stopped_note() -> String {
    format!(
        "\n[… output streaming stopped after {} MiB; the command keeps running …]\n",
        STREAM_BYTES / (1024 * 1024)
    )
}

/// The largest index `<= index` that is a character boundary of `text`.
fn floor_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The combined output: the first [`HEAD_BYTES`] and the last [`TAIL_BYTES`] of it (cut at
/// character boundaries), and how much was left out between them.
#[derive(Debug, Default)]
pub(super) struct Aggregate {
    head: String,
    /// Text after the head; trimmed to the last [`TAIL_BYTES`] from time to time.
    tail: VecDeque<u8>,
    /// Bytes dropped from the front of `tail`.
    omitted: usize,
}

impl Aggregate {
    /// Appends `text`.
    pub(super) fn push(&mut self, mut text: &str) {
        if self.head.len() < HEAD_BYTES && self.tail.is_empty() {
            let take = floor_boundary(text, HEAD_BYTES - self.head.len());
            self.head.push_str(&text[..take]);
            text = &text[take..];
            if text.is_empty() {
                return;
            }
        }
        self.tail.extend(text.as_bytes());
        if self.tail.len() > 2 * TAIL_BYTES {
            self.trim_tail();
        }
    }

    /// Drops all but the last [`TAIL_BYTES`] of the tail, at a character boundary.
    fn trim_tail(&mut self) {
        let mut excess = self.tail.len().saturating_sub(TAIL_BYTES);
        // Never start the tail with a continuation byte.
        while self
            .tail
            .get(excess)
            .is_some_and(|&b| (0x80..0xc0).contains(&b))
        {
            excess += 1;
        }
        self.tail.drain(..excess);
        self.omitted += excess;
    }

    /// The bounded text.
    pub(super) fn finish(mut self) -> String {
        self.trim_tail();
        let (front, back) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(self.tail.len());
        tail.extend_from_slice(front);
        tail.extend_from_slice(back);
        // The tail is whole characters from valid text, so this is lossless.
        let tail = String::from_utf8_lossy(&tail);
        let mut out = self.head;
        if self.omitted > 0 {
            out.push_str(&omitted_note(self.omitted));
        }
        out.push_str(&tail);
        out
    }
}

/// Forwards text to the output callback until [`STREAM_BYTES`] have gone out, then a note,
/// then nothing.
#[derive(Debug, Default)]
pub(super) struct StreamLimit {
    sent: usize,
    stopped: bool,
}

impl StreamLimit {
    /// What of `text` may still be streamed (possibly with the note), if anything.
    pub(super) fn admit(&mut self, text: &str) -> Option<String> {
        if self.stopped || text.is_empty() {
            return None;
        }
        if self.sent + text.len() <= STREAM_BYTES {
            self.sent += text.len();
            return Some(text.to_owned());
        }
        self.stopped = true;
        let take = floor_boundary(text, STREAM_BYTES - self.sent);
        self.sent += take;
        let mut out = text[..take].to_owned();
        out.push_str(&stream_stopped_note());
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut all = Aggregate::default();
        all.push("hello ");
        all.push("world");
        assert_eq!(all.finish(), "hello world");
    }

    #[test]
    fn long_output_keeps_head_and_tail_at_character_boundaries() {
        let mut all = Aggregate::default();
        let mut total = 0;
        for i in 0..40_000 {
            let piece = format!("{i:05}é|");
            total += piece.len();
            all.push(&piece);
        }
        let text = all.finish();
        let (head, rest) = text.split_once("\n[… ").expect("note");
        let (note, tail) = rest.split_once(" bytes omitted …]\n").expect("note end");
        let omitted: usize = note.parse().expect("count");
        assert!(head.len() <= HEAD_BYTES && head.len() > HEAD_BYTES - 4);
        assert!(tail.len() <= TAIL_BYTES && tail.len() > TAIL_BYTES - 4);
        assert_eq!(head.len() + omitted + tail.len(), total);
        assert!(head.starts_with("00000é|"));
        assert!(tail.ends_with("39999é|"));
    }

    #[test]
    fn streaming_stops_once_with_a_note() {
        let mut limit = StreamLimit::default();
        let chunk = "é".repeat(300_000);
        let mut streamed = String::new();
        for _ in 0..20 {
            if let Some(text) = limit.admit(&chunk) {
                streamed.push_str(&text);
            }
        }
        assert_eq!(streamed.matches("output streaming stopped").count(), 1);
        assert!(streamed.len() <= STREAM_BYTES + stream_stopped_note().len());
        assert!(streamed.len() > STREAM_BYTES - 2);
    }
}
