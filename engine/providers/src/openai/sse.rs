//! A bounded Server-Sent-Events parser: bytes in, the `data` of complete events out.
//!
//! Lines end in LF, CRLF or CR (a CRLF split across chunks counts once). `data:` lines of one
//! event join with newlines; an empty line ends the event. Comments (`:`) and the other fields
//! (`event`, `id`, `retry`) are skipped: chat-completions streams carry everything in `data`.

/// The largest event (its pending line plus the data gathered so far) the parser holds.
pub(crate) const MAX_EVENT_BYTES: usize = 8 * 1024 * 1024;

/// How much of a bad event an error message quotes.
const EXCERPT_CHARS: usize = 200;

/// Parser state between chunks.
#[derive(Debug)]
pub(crate) struct SseParser {
    /// The bytes of the line not yet ended.
    line: Vec<u8>,
    /// The data of the event being gathered.
    data: String,
    /// Whether the event has a `data` field (an event may have empty data).
    has_data: bool,
    /// The previous chunk ended in CR, so a leading LF belongs to that line end.
    after_cr: bool,
    /// The largest event accepted.
    limit: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new(MAX_EVENT_BYTES)
    }
}

impl SseParser {
    /// A parser that refuses events larger than `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            line: Vec::new(),
            data: String::new(),
            has_data: false,
            after_cr: false,
            limit,
        }
    }

    /// Feeds `chunk`; returns the data of each event it completes, in order. An error (an
    /// event over the bound, a line that is not UTF-8) leaves the parser unusable.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<Vec<String>, String> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(tail) = rest.strip_prefix(b"\n") {
                rest = tail;
            }
        }
        while !rest.is_empty() {
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                None => {
                    self.line.extend_from_slice(rest);
                    self.check_size()?;
                    break;
                }
                Some(end) => {
                    self.line.extend_from_slice(&rest[..end]);
                    self.check_size()?;
                    let ended_by_cr = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    if ended_by_cr {
                        match rest.first() {
                            Some(b'\n') => rest = &rest[1..],
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                    let line = std::mem::take(&mut self.line);
                    if let Some(event) = self.line_done(&line)? {
                        events.push(event);
                    }
                }
            }
        }
        Ok(events)
    }

    /// Whether bytes of an unfinished event are pending (the stream stopped mid-event).
    pub(crate) fn has_partial_event(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    fn check_size(&self) -> Result<(), String> {
        if self.line.len() + self.data.len() > self.limit {
            // The event's start: the data it gathered already, if any, then the pending line.
            let line =
                String::from_utf8_lossy(&self.line[..self.line.len().min(EXCERPT_CHARS * 4)]);
            let start = if self.has_data {
                let end = self
                    .data
                    .char_indices()
                    .nth(EXCERPT_CHARS)
                    .map_or(self.data.len(), |(at, _)| at);
                format!("{}\n{line}", &self.data[..end])
            } else {
                line.into_owned()
            };
            return Err(format!(
                "a stream event is larger than {} bytes; it starts with: {}",
                self.limit,
                excerpt(&start)
            ));
        }
        Ok(())
    }

    /// Handles one complete line; returns the event's data when the line ends an event.
    fn line_done(&mut self, line: &[u8]) -> Result<Option<String>, String> {
        if line.is_empty() {
            if !self.has_data {
                return Ok(None);
            }
            self.has_data = false;
            return Ok(Some(std::mem::take(&mut self.data)));
        }
        let line = std::str::from_utf8(line).map_err(|e| {
            format!(
                "a stream line is not UTF-8 ({e}): {}",
                excerpt(&String::from_utf8_lossy(line))
            )
        })?;
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value);
            self.has_data = true;
            if self.data.len() > self.limit {
                return Err(format!(
                    "a stream event is larger than {} bytes; it starts with: {}",
                    self.limit,
                    excerpt(&self.data)
                ));
            }
        }
        Ok(None)
    }
}

/// The start of `text`, for error messages: at most [`EXCERPT_CHARS`] characters, marked when
/// cut.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(parser: &mut SseParser, chunks: &[&[u8]]) -> Vec<String> {
        chunks
            .iter()
            .flat_map(|c| parser.feed(c).expect("parses"))
            .collect()
    }

    #[test]
    fn events_split_anywhere_come_out_whole() {
        let stream = b"data: {\"a\":1}\n\ndata: [DONE]\n\n";
        for cut in 0..stream.len() {
            let mut parser = SseParser::default();
            let (a, b) = stream.split_at(cut);
            assert_eq!(
                all(&mut parser, &[a, b]),
                vec!["{\"a\":1}", "[DONE]"],
                "cut {cut}"
            );
            assert!(!parser.has_partial_event());
        }
    }

    #[test]
    fn crlf_and_cr_line_ends_including_a_crlf_split_between_chunks() {
        let mut parser = SseParser::default();
        assert_eq!(
            all(
                &mut parser,
                &[b"data: one\r", b"\n\r", b"\ndata: two\r\rdata: three\n\n"]
            ),
            vec!["one", "two", "three"]
        );
    }

    #[test]
    fn comments_other_fields_and_multi_line_data() {
        let mut parser = SseParser::default();
        let events = all(
            &mut parser,
            &[b": keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: first\ndata:second\ndata\n\n"],
        );
        assert_eq!(events, vec!["first\nsecond\n"]);
    }

    #[test]
    fn an_unfinished_event_is_reported_as_pending() {
        let mut parser = SseParser::default();
        assert!(all(&mut parser, &[b"data: {\"half"]).is_empty());
        assert!(parser.has_partial_event());
        let mut parser = SseParser::default();
        assert!(all(&mut parser, &[b"data: x\n"]).is_empty());
        assert!(parser.has_partial_event());
    }

    #[test]
    fn events_over_the_bound_are_refused() {
        let mut parser = SseParser::new(16);
        let error = parser
            .feed(b"data: 0123456789abcdefghij")
            .expect_err("long line");
        assert!(error.contains("larger than 16 bytes"), "{error}");
        assert!(error.contains("data: 0123456789"), "{error}");
        let mut parser = SseParser::new(16);
        let error = parser
            .feed(b"data: 0123456789\ndata: 0123456789\n")
            .expect_err("long event");
        assert!(error.contains("larger than 16 bytes"), "{error}");
        // An event whose later line overflows is quoted from its start.
        let mut parser = SseParser::new(16);
        let error = parser
            .feed(b"data: first\ndata: second-0123456789")
            .expect_err("long event");
        assert!(
            error.contains("it starts with: first\ndata: second"),
            "{error}"
        );
        let mut parser = SseParser::new(16);
        assert_eq!(
            parser.feed(b"data: 0123456789\n\n").expect("fits"),
            vec!["0123456789"]
        );
    }

    #[test]
    fn lines_that_are_not_utf8_are_refused() {
        let mut parser = SseParser::default();
        let error = parser.feed(b"data: \xff\xfe\n").expect_err("not utf-8");
        assert!(error.contains("not UTF-8"), "{error}");
    }

    #[test]
    fn excerpts_are_cut_on_character_boundaries() {
        let long = "é".repeat(300);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt("short"), "short");
    }
}
