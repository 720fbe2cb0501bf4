//! Word wrapping to the terminal's width, in display columns (a CJK character or most emoji take
//! two): lines break at spaces; a word longer than a line is cut where the line ends. Continuation
//! lines are indented like the line's text: past its leading spaces and past a one-character
//! marker followed by spaces (`· `, `› `, `$ `, `✗ `), unless that takes half the width. Used
//! for the transcript and the approval prompt, so nothing is cut at the right edge.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The width of `text` in terminal columns.
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// `text` as lines of at most `columns` columns (at least one line, even for empty text).
pub fn wrap(text: &str, columns: usize) -> Vec<String> {
    let columns = columns.max(1);
    if width(text) <= columns {
        return vec![text.to_owned()];
    }
    let body = text.trim_start_matches(' ');
    let leading = &text[..text.len() - body.len()];
    let hanging = " ".repeat(width(leading) + marker_width(body));
    let indent = if width(&hanging) * 2 > columns {
        ""
    } else {
        hanging.as_str()
    };
    let first_indent = if width(leading) >= columns {
        ""
    } else {
        leading
    };
    let mut lines = Vec::new();
    let mut line = Line::new(first_indent.to_owned());
    for word in body.split(' ') {
        let word_width = width(word);
        if line.has_words && line.used + 1 + word_width <= columns {
            line.push(" ", 1);
            line.push(word, word_width);
            continue;
        }
        if line.has_words {
            lines.push(line.finish());
            line = Line::new(indent.to_owned());
        }
        if line.used + word_width <= columns {
            line.push(word, word_width);
            continue;
        }
        // A word longer than a whole line: cut it where each line ends.
        for c in word.chars() {
            let char_width = c.width().unwrap_or(0);
            if line.has_words && line.used + char_width > columns {
                lines.push(line.finish());
                line = Line::new(indent.to_owned());
            }
            let mut buffer = [0; 4];
            line.push(c.encode_utf8(&mut buffer), char_width);
        }
    }
    lines.push(line.finish());
    lines
}

/// The width of a marker that starts `text`: one character that is not a letter or digit,
/// followed by one or more spaces (`· `, `$ `); 0 when there is none.
fn marker_width(text: &str) -> usize {
    let mut chars = text.chars();
    let Some(marker) = chars.next().filter(|c| !c.is_alphanumeric() && *c != ' ') else {
        return 0;
    };
    let rest = chars.as_str();
    let spaces = rest.len() - rest.trim_start_matches(' ').len();
    if spaces == 0 || spaces == rest.len() {
        return 0;
    }
    marker.width().unwrap_or(0) + spaces
}

/// A line being filled.
struct Line {
    text: String,
    used: usize,
    /// Whether anything besides the indentation is on it.
    has_words: bool,
}

impl Line {
    fn new(indent: String) -> Self {
        let used = width(&indent);
        Self {
            text: indent,
            used,
            has_words: false,
        }
    }

    fn push(&mut self, text: &str, text_width: usize) {
        self.text.push_str(text);
        self.used += text_width;
        self.has_words = true;
    }

    fn finish(self) -> String {
        self.text.trim_end_matches(' ').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_stay_as_they_are() {
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(wrap("  two  spaces", 20), ["  two  spaces"]);
        assert_eq!(wrap("exactly 10", 10), ["exactly 10"]);
    }

    #[test]
    fn long_lines_break_at_spaces_and_keep_their_indentation() {
        assert_eq!(
            wrap("Run `cargo test` in /work? (it writes target/)", 16),
            ["Run `cargo test`", "in /work? (it", "writes target/)"]
        );
        assert_eq!(
            wrap("  output that goes on", 10),
            ["  output", "  that", "  goes on"]
        );
        // Indentation wider than half the line is not repeated.
        assert_eq!(wrap("      ab cd", 10), ["      ab", "cd"]);
        // Continuation lines hang under the text after a marker.
        assert_eq!(
            wrap("· the next turns use fixture", 14),
            ["· the next", "  turns use", "  fixture"]
        );
        assert_eq!(
            wrap("  $ make all tests", 10),
            ["  $ make", "    all", "    tests"]
        );
        // A word is not a marker, nor is a marker with nothing after it.
        assert_eq!(wrap("Run it now please", 8), ["Run it", "now", "please"]);
        assert_eq!(marker_width("·   "), 0);
        for line in wrap(&"word ".repeat(60), 23) {
            assert!(width(&line) <= 23, "{line:?}");
        }
    }

    #[test]
    fn words_longer_than_a_line_are_cut_and_wide_characters_count_twice() {
        assert_eq!(
            wrap("see /a/very/long/path", 8),
            ["see", "/a/very/", "long/pat", "h"]
        );
        assert_eq!(wrap("  abcdefgh", 6), ["  abcd", "  efgh"]);
        // Four wide characters fill eight columns: three fit in seven.
        assert_eq!(wrap("日本語です", 7), ["日本語", "です"]);
        assert_eq!(width("日本語"), 6);
    }
}
