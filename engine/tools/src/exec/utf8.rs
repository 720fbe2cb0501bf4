//! Decoding a byte stream as UTF-8 piece by piece, never splitting a character across pieces.

/// A UTF-8 decoder for one stream. An incomplete sequence at the end of a chunk is carried
/// over to the next one; bytes that can never be valid become U+FFFD, as
/// [`String::from_utf8_lossy`] does.
#[derive(Debug, Default)]
pub(super) struct Utf8Decoder {
    /// The start of a multi-byte character whose remaining bytes have not arrived (0–3 bytes).
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// Decodes `bytes`, returning the text that is complete so far.
    pub(super) fn push(&mut self, bytes: &[u8]) -> String {
        let mut input = std::mem::take(&mut self.pending);
        input.extend_from_slice(bytes);
        let mut out = String::with_capacity(input.len());
        let mut rest = input.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    out.push_str(text);
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    // `valid_up_to` marks the end of valid UTF-8, so this never fails.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match error.error_len() {
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[bad..];
                        }
                        None => {
                            // A sequence cut off by the end of the input: wait for the rest.
                            self.pending = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        out
    }

    /// Ends the stream: an incomplete sequence left over becomes U+FFFD.
    pub(super) fn finish(&mut self) -> String {
        if self.pending.is_empty() {
            String::new()
        } else {
            self.pending.clear();
            char::REPLACEMENT_CHARACTER.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(bytes: &[u8], cut: usize) -> Vec<String> {
        let mut decoder = Utf8Decoder::default();
        let mut pieces: Vec<String> = bytes.chunks(cut).map(|c| decoder.push(c)).collect();
        pieces.push(decoder.finish());
        pieces
    }

    #[test]
    fn characters_split_across_chunks_are_carried_over() {
        let text = "aé€😀z";
        for cut in 1..=text.len() {
            let pieces = decode_in_pieces(text.as_bytes(), cut);
            assert_eq!(pieces.concat(), text, "cut every {cut} bytes");
            assert!(
                pieces
                    .iter()
                    .all(|p| !p.contains(char::REPLACEMENT_CHARACTER)),
                "cut every {cut} bytes: {pieces:?}"
            );
        }
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut decoder = Utf8Decoder::default();
        assert_eq!(decoder.push(b"a\xffb"), "a\u{fffd}b");
        // A lead byte followed by a byte that cannot continue it.
        assert_eq!(decoder.push(b"\xc3"), "");
        assert_eq!(decoder.push(b"("), "\u{fffd}(");
        // An incomplete sequence at the very end.
        assert_eq!(decoder.push(b"x\xe2\x82"), "x");
        assert_eq!(decoder.finish(), "\u{fffd}");
        assert_eq!(decoder.finish(), "");
        // Matches the standard library's lossy decoding.
        let bytes = b"\xf0\x9f\x98\x80\xed\xa0\x80\xc0\xaf ok \xf4\x90\x80\x80";
        assert_eq!(
            decode_in_pieces(bytes, 3).concat(),
            String::from_utf8_lossy(bytes)
        );
    }
}
