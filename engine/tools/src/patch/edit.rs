//! Applying an update section's hunks to a file's text, in memory.

use super::error::PatchError;
use super::locate::{find, find_at_end};
use super::parse::{Hunk, HunkLine, shown};

/// `content` with `hunks` applied; `path` (as the patch wrote it) is for errors. Each hunk
/// is searched at or after the end of the previous one. The file keeps its line ending
/// (`\r\n` when every line had one) and its final newline (an empty file gains one).
pub(super) fn apply_hunks(path: &str, content: &str, hunks: &[Hunk]) -> Result<String, PatchError> {
    let crlf = uses_crlf(content);
    // Untouched lines are copied as they were (`raw`); hunks are matched against `lines`.
    let raw: Vec<&str> = content.split_inclusive('\n').collect();
    let lines: Vec<&str> = raw.iter().map(|line| strip_eol(line)).collect();
    // (where the hunk's old lines start in the file, the hunk)
    let mut replacements: Vec<(usize, &Hunk)> = Vec::with_capacity(hunks.len());
    let mut cursor = 0;
    for (index, hunk) in hunks.iter().enumerate() {
        let number = index + 1;
        let old = hunk.old();
        let mut from = cursor;
        for anchor in &hunk.anchors {
            match find(&lines, std::slice::from_ref(anchor), from) {
                Ok(at) => from = at + 1,
                Err(_) => {
                    return Err(PatchError(format!(
                        "`{path}`: hunk {number}: could not find the `@@` line `{}`{}",
                        shown(anchor),
                        after(from)
                    )));
                }
            }
        }
        let at = if old.is_empty() {
            if hunk.anchors.is_empty() || hunk.end_of_file {
                lines.len()
            } else {
                from
            }
        } else if hunk.end_of_file {
            find_at_end(&lines, &old, from).map_err(|first| {
                PatchError(format!(
                    "`{path}`: hunk {number}: its lines are not the last lines of the file \
                     (`*** End of File`); the first that does not match is `{}`",
                    shown(old[first.min(old.len() - 1)])
                ))
            })?
        } else {
            find(&lines, &old, from).map_err(|found| {
                PatchError(format!(
                    "`{path}`: hunk {number}: could not find the line `{}`{}{}",
                    shown(old[found.min(old.len() - 1)]),
                    if found > 0 {
                        format!(" after the hunk's first {found} line(s)")
                    } else {
                        String::new()
                    },
                    after(from)
                ))
            })?
        };
        replacements.push((at, hunk));
        cursor = at + old.len();
    }

    let eol = if crlf { "\r\n" } else { "\n" };
    let final_newline = content.is_empty() || content.ends_with('\n');
    let mut out = String::with_capacity(content.len());
    let mut next = 0;
    let push = |out: &mut String, line: &str| {
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str(eol);
        }
    };
    for (at, hunk) in replacements {
        for line in &raw[next..at] {
            push(&mut out, line);
        }
        // Context lines are kept as the file has them (they may have matched loosely).
        next = at;
        for line in &hunk.lines {
            match line {
                HunkLine::Context(_) => {
                    push(&mut out, raw[next]);
                    next += 1;
                }
                HunkLine::Remove(_) => next += 1,
                HunkLine::Add(text) => {
                    out.push_str(text);
                    out.push_str(eol);
                }
            }
        }
    }
    for line in &raw[next..] {
        push(&mut out, line);
    }
    if !final_newline && let Some(stripped) = out.strip_suffix(eol) {
        out.truncate(stripped.len());
    }
    Ok(out)
}

/// Whether `content` ends every line with `\r\n` (and has at least one line ending).
fn uses_crlf(content: &str) -> bool {
    let mut endings = content.split_inclusive('\n').filter(|l| l.ends_with('\n'));
    let mut any = false;
    let all = endings.all(|l| {
        any = true;
        l.ends_with("\r\n")
    });
    any && all
}

/// A line without its `\n` or `\r\n`.
fn strip_eol(line: &str) -> &str {
    match line.strip_suffix('\n') {
        Some(line) => line.strip_suffix('\r').unwrap_or(line),
        None => line,
    }
}

/// " (searching from line N of the file)" when the search did not start at the top.
fn after(from: usize) -> String {
    if from == 0 {
        String::new()
    } else {
        format!(" at or after line {} of the file", from + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hunk from its body.
    fn hunk(body: &str) -> Hunk {
        Hunk::from_body(&[], body, false)
    }

    #[test]
    fn keeps_line_endings_and_the_final_newline() {
        let h = [hunk("-b\n+B\n+b2")];
        assert_eq!(
            apply_hunks("f", "a\nb\nc\n", &h),
            Ok("a\nB\nb2\nc\n".to_owned())
        );
        assert_eq!(
            apply_hunks("f", "a\nb\nc", &h),
            Ok("a\nB\nb2\nc".to_owned())
        );
        assert_eq!(
            apply_hunks("f", "a\r\nb\r\n", &h),
            Ok("a\r\nB\r\nb2\r\n".to_owned())
        );
        assert_eq!(
            apply_hunks("f", "a\nb", &[hunk("-b")]),
            Ok("a".to_owned()),
            "removing the unterminated last line leaves the rest unterminated"
        );
        assert_eq!(apply_hunks("f", "", &[hunk("+x")]), Ok("x\n".to_owned()));
        assert_eq!(apply_hunks("f", "a\n", &[hunk("-a")]), Ok(String::new()));
    }

    #[test]
    fn a_lone_cr_in_a_line_is_content_not_an_ending() {
        assert!(!uses_crlf("a\r\nb\n"));
        assert!(uses_crlf("a\r\nb"));
        assert_eq!(
            apply_hunks("f", "a\r\nb\n", &[hunk("-b\n+c")]),
            Ok("a\r\nc\n".to_owned()),
            "untouched lines keep their own ending; new ones get `\\n` in a mixed file"
        );
    }
}
