//! Finding a hunk's lines in a file: exact first, then ignoring trailing whitespace, then
//! ignoring leading and trailing whitespace. The search is Knuth–Morris–Pratt over lines, so
//! it takes time linear in the file and the hunk whatever their content.

/// How loosely a line of the hunk may differ from a line of the file and still match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fuzz {
    /// Byte for byte.
    Exact,
    /// Ignoring whitespace at the end of the line.
    TrailingSpace,
    /// Ignoring whitespace at both ends of the line.
    Whitespace,
}

impl Fuzz {
    /// The levels, strictest first.
    const ALL: [Fuzz; 3] = [Fuzz::Exact, Fuzz::TrailingSpace, Fuzz::Whitespace];

    /// The part of `line` this level compares.
    fn key(self, line: &str) -> &str {
        match self {
            Fuzz::Exact => line,
            Fuzz::TrailingSpace => line.trim_end(),
            Fuzz::Whitespace => line.trim(),
        }
    }
}

/// Where `needle` first occurs in `lines` at or after index `from`, at the strictest level
/// that finds it. Without a match: how many of the needle's first lines do occur, in order,
/// at or after `from` (so `needle[that]` is the first line that could not be found).
pub(super) fn find<S: AsRef<str>>(
    lines: &[&str],
    needle: &[S],
    from: usize,
) -> Result<usize, usize> {
    let from = from.min(lines.len());
    if needle.is_empty() {
        return Ok(from);
    }
    let mut longest = 0;
    for fuzz in Fuzz::ALL {
        match kmp(&lines[from..], needle, fuzz) {
            Ok(at) => return Ok(from + at),
            Err(prefix) => longest = longest.max(prefix),
        }
    }
    Err(longest)
}

/// Whether `needle` matches the last lines of `lines`, starting at or after `from`; returns
/// where it starts. Without a match: the index in `needle` of the first line that differs
/// (or 0 when the file is too short).
pub(super) fn find_at_end<S: AsRef<str>>(
    lines: &[&str],
    needle: &[S],
    from: usize,
) -> Result<usize, usize> {
    let Some(at) = lines
        .len()
        .checked_sub(needle.len())
        .filter(|&at| at >= from)
    else {
        return Err(0);
    };
    let mut first_difference = 0;
    for fuzz in Fuzz::ALL {
        let differs = lines[at..]
            .iter()
            .zip(needle)
            .position(|(line, want)| fuzz.key(line) != fuzz.key(want.as_ref()));
        match differs {
            None => return Ok(at),
            Some(index) => first_difference = first_difference.max(index),
        }
    }
    Err(first_difference)
}

/// Knuth–Morris–Pratt: where `needle` (not empty) first occurs in `lines` under `fuzz`, or
/// the length of the longest prefix of `needle` that occurs.
fn kmp<S: AsRef<str>>(lines: &[&str], needle: &[S], fuzz: Fuzz) -> Result<usize, usize> {
    let key = |i: usize| fuzz.key(needle[i].as_ref());
    // border[i]: length of the longest proper prefix of needle[..=i] that is also its suffix.
    let mut border = vec![0usize; needle.len()];
    let mut k = 0;
    for i in 1..needle.len() {
        while k > 0 && key(i) != key(k) {
            k = border[k - 1];
        }
        if key(i) == key(k) {
            k += 1;
        }
        border[i] = k;
    }
    let mut matched = 0;
    let mut longest = 0;
    for (i, line) in lines.iter().enumerate() {
        let line = fuzz.key(line);
        while matched > 0 && line != key(matched) {
            matched = border[matched - 1];
        }
        if line == key(matched) {
            matched += 1;
        }
        longest = longest.max(matched);
        if matched == needle.len() {
            return Ok(i + 1 - needle.len());
        }
    }
    Err(longest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_exact_before_fuzzy_and_reports_the_longest_prefix() {
        let file = ["a ", "b", "a", "b", "c"];
        assert_eq!(
            find(&file, &["a", "b"], 0),
            Ok(2),
            "exact wins over a fuzzy earlier match"
        );
        assert_eq!(find(&file, &["a", "b", "x"], 0), Err(2));
        assert_eq!(find(&file, &["  c  "], 0), Ok(4));
        assert_eq!(find(&file, &["a", "b"], 3), Err(0));
        assert_eq!(find(&file, &[] as &[&str], 9), Ok(5));
        // The border table matters: a partial match restarts inside itself.
        assert_eq!(find(&["a", "a", "a", "b"], &["a", "a", "b"], 0), Ok(1));
    }

    #[test]
    fn end_of_file_matches_only_the_last_lines() {
        let file = ["x", "y", "x", "y"];
        assert_eq!(find_at_end(&file, &["x", "y"], 0), Ok(2));
        assert_eq!(find_at_end(&file, &["x", "z"], 0), Err(1));
        assert_eq!(find_at_end(&file, &["x", "y", "x", "y", "x"], 0), Err(0));
        assert_eq!(find_at_end(&file, &["x", "y"], 3), Err(0));
    }
}
