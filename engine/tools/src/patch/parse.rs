//! The patch text: `*** Begin Patch`, file sections (add, delete, update with optional move
//! and hunks), `*** End Patch`. Parsing only checks the shape; whether the hunks fit the files
//! is decided when the patch is matched against them.

use super::error::PatchError;

/// The largest patch accepted, in bytes.
pub(super) const MAX_PATCH_BYTES: usize = 16 * 1024 * 1024;

/// First line of every patch.
const BEGIN: &str = "*** Begin Patch";
/// Last line of every patch.
const END: &str = "*** End Patch";
/// Header of a section creating a file.
const ADD: &str = "*** Add File: ";
/// Header of a section removing a file.
const DELETE: &str = "*** Delete File: ";
/// Header of a section editing a file.
const UPDATE: &str = "*** Update File: ";
/// Line right after an update header that renames the file.
const MOVE: &str = "*** Move to: ";
/// Line closing a hunk that must match at the end of the file.
const END_OF_FILE: &str = "*** End of File";

/// A parsed patch: its file sections in the order they appear.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// The sections, applied in this order.
    pub(super) files: Vec<FileOp>,
}

/// One file section of a patch. Paths are as written (relative to the working directory, or
/// absolute).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum FileOp {
    /// Create a file that does not exist yet.
    Add {
        /// Where.
        path: String,
        /// The whole new content (every line ends with `\n`).
        content: String,
    },
    /// Remove an existing file.
    Delete {
        /// Which.
        path: String,
    },
    /// Edit an existing file, and possibly rename it.
    Update {
        /// Which.
        path: String,
        /// The new name, when the file also moves.
        move_to: Option<String>,
        /// The edits, in file order.
        hunks: Vec<Hunk>,
    },
}

/// One edit of an update section.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Hunk {
    /// Lines (`@@ …`) that occur before the edit, searched in order.
    pub(super) anchors: Vec<String>,
    /// The body: context, removed and added lines in patch order.
    pub(super) lines: Vec<HunkLine>,
    /// Whether the old lines must be the last lines of the file.
    pub(super) end_of_file: bool,
}

/// A line of a hunk's body (without its ` `, `-` or `+`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum HunkLine {
    /// A line that stays (it must match the file, and is kept as the file has it).
    Context(String),
    /// A line that goes.
    Remove(String),
    /// A line that comes.
    Add(String),
}

impl Hunk {
    /// The lines the edit replaces: context and removed lines, in order.
    pub(super) fn old(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                HunkLine::Context(text) | HunkLine::Remove(text) => Some(text.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect()
    }

    /// A hunk from a body written as in a patch (` `, `-`, `+` lines), for tests.
    #[cfg(test)]
    pub(super) fn from_body(anchors: &[&str], body: &str, end_of_file: bool) -> Hunk {
        let lines = body
            .lines()
            .map(|line| {
                let text = line.get(1..).unwrap_or("").to_owned();
                match line.as_bytes().first() {
                    Some(b'-') => HunkLine::Remove(text),
                    Some(b'+') => HunkLine::Add(text),
                    _ => HunkLine::Context(text),
                }
            })
            .collect();
        Hunk {
            anchors: anchors.iter().map(|a| a.to_string()).collect(),
            lines,
            end_of_file,
        }
    }
}

/// Parses `text` into a [`Patch`]; the error names the patch line and what was expected.
pub(super) fn parse(text: &str) -> Result<Patch, PatchError> {
    if text.len() > MAX_PATCH_BYTES {
        return Err(PatchError(format!(
            "the patch is {} bytes; the limit is {MAX_PATCH_BYTES} bytes (16 MiB)",
            text.len()
        )));
    }
    // The closing line is the last line that is not blank; everything after it is whitespace.
    let body_end = text.trim_end().len();
    let last_start = text[..body_end].rfind('\n').map_or(0, |i| i + 1);
    let last_number = text[..last_start].bytes().filter(|&b| b == b'\n').count() + 1;
    let mut lines = Lines {
        inner: text[..last_start].split('\n').enumerate().peekable(),
    };
    while lines.peek().is_some_and(|(_, line)| line.trim().is_empty()) {
        lines.next();
    }
    match lines.next() {
        Some((_, line)) if line.trim_end() == BEGIN => {}
        Some((number, line)) => return Err(expected(number, &format!("`{BEGIN}`"), line)),
        None if body_end == 0 => {
            return Err(PatchError(format!(
                "the patch is empty; expected `{BEGIN}` … `{END}`"
            )));
        }
        None => {
            // The only line that is not blank is the last one.
            let line = text[last_start..body_end].trim_end_matches('\r');
            let what = if line.trim_end() == BEGIN {
                format!("`{END}` as the last line")
            } else {
                format!("`{BEGIN}`")
            };
            return Err(expected(last_number, &what, line));
        }
    }
    let last = text[last_start..body_end].trim_end_matches('\r');
    if last.trim_end() != END {
        return Err(expected(
            last_number,
            &format!("`{END}` as the last line"),
            last,
        ));
    }
    let mut files = Vec::new();
    while let Some((number, line)) = lines.next() {
        if !line.trim().is_empty() {
            files.push(section(number, line, &mut lines)?);
        }
    }
    if files.is_empty() {
        return Err(PatchError(format!(
            "patch line {last_number}: the patch has no file sections; expected `{ADD}`, \
             `{DELETE}` or `{UPDATE}` before `{END}`"
        )));
    }
    Ok(Patch { files })
}

/// The patch lines between the opening and the closing line, numbered from 1, without a
/// trailing `\r`.
struct Lines<'a> {
    /// Lines numbered from 0.
    inner: std::iter::Peekable<std::iter::Enumerate<std::str::Split<'a, char>>>,
}

impl<'a> Lines<'a> {
    /// The next line and its number, without consuming it.
    fn peek(&mut self) -> Option<(usize, &'a str)> {
        self.inner
            .peek()
            .map(|&(i, line)| (i + 1, line.strip_suffix('\r').unwrap_or(line)))
    }

    /// Whether the lines from here up to the next `*** ` header (or the end) are all blank:
    /// then they are spacing between sections, not content.
    fn blank_until_header(&self) -> bool {
        self.blank_until(|line| line.starts_with("*** "))
    }

    /// Whether the lines from here up to the next line that is not blank are all blank, and
    /// that line (if any) satisfies `then`.
    fn blank_until(&self, then: impl Fn(&str) -> bool) -> bool {
        self.inner
            .clone()
            .map(|(_, line)| line.trim())
            .find(|line| !line.is_empty())
            .is_none_or(then)
    }

    /// Consumes the next line.
    fn next(&mut self) -> Option<(usize, &'a str)> {
        self.inner
            .next()
            .map(|(i, line)| (i + 1, line.strip_suffix('\r').unwrap_or(line)))
    }
}

/// Parses the file section whose header is `line` (patch line `number`).
fn section(number: usize, line: &str, lines: &mut Lines<'_>) -> Result<FileOp, PatchError> {
    if let Some(rest) = line.strip_prefix(ADD) {
        let path = path(number, rest)?;
        let mut content = String::new();
        while let Some((number, line)) = lines.peek() {
            if line.starts_with("*** ") || (line.trim().is_empty() && lines.blank_until_header()) {
                break;
            }
            let Some(text) = line.strip_prefix('+') else {
                return Err(expected(
                    number,
                    "a `+` line of the added file or a `*** ` file header",
                    line,
                ));
            };
            content.push_str(text);
            content.push('\n');
            lines.next();
        }
        Ok(FileOp::Add { path, content })
    } else if let Some(rest) = line.strip_prefix(DELETE) {
        Ok(FileOp::Delete {
            path: path(number, rest)?,
        })
    } else if let Some(rest) = line.strip_prefix(UPDATE) {
        let path = path(number, rest)?;
        let mut move_to = None;
        if let Some((number, line)) = lines.peek()
            && let Some(rest) = line.strip_prefix(MOVE)
        {
            move_to = Some(self::path(number, rest)?);
            lines.next();
        }
        let hunks = hunks(lines)?;
        if hunks.is_empty() && move_to.is_none() {
            return Err(PatchError(format!(
                "patch line {number}: `{UPDATE}{path}` has no hunks; expected `@@` or lines \
                 starting with ` `, `-` or `+`"
            )));
        }
        Ok(FileOp::Update {
            path,
            move_to,
            hunks,
        })
    } else if line.trim_end() == END {
        Err(PatchError(format!(
            "patch line {number}: `{END}` before the end of the patch; it must be the last line"
        )))
    } else {
        Err(expected(
            number,
            &format!("a file header (`{ADD}`, `{DELETE}` or `{UPDATE}`)"),
            line,
        ))
    }
}

/// Parses the hunks of an update section, up to the next file header.
fn hunks(lines: &mut Lines<'_>) -> Result<Vec<Hunk>, PatchError> {
    let mut hunks = Vec::new();
    while let Some((number, line)) = lines.peek() {
        if line.trim().is_empty()
            && lines.blank_until(|line| line.starts_with("*** ") || is_anchor(line))
        {
            // Spacing before a hunk or the next section.
            while lines.peek().is_some_and(|(_, line)| line.trim().is_empty()) {
                lines.next();
            }
        } else if is_anchor(line) || (hunks.is_empty() && is_hunk_line(line)) {
            hunks.push(hunk(lines)?);
        } else if line.starts_with("*** ") && line.trim_end() != END_OF_FILE {
            break;
        } else {
            return Err(expected(
                number,
                "`@@`, a hunk line starting with ` `, `-` or `+`, or a `*** ` file header",
                line,
            ));
        }
    }
    Ok(hunks)
}

/// Whether `line` opens a hunk (`@@` or `@@ anchor`).
fn is_anchor(line: &str) -> bool {
    line.trim_end() == "@@" || line.starts_with("@@ ")
}

/// Whether `line` is a context, removed or added line (an empty line counts as empty context).
fn is_hunk_line(line: &str) -> bool {
    line.is_empty() || line.starts_with([' ', '-', '+'])
}

/// Parses one hunk: its `@@` lines (none for the first hunk of a section), its body and an
/// optional `*** End of File`.
fn hunk(lines: &mut Lines<'_>) -> Result<Hunk, PatchError> {
    let mut hunk = Hunk {
        anchors: Vec::new(),
        lines: Vec::new(),
        end_of_file: false,
    };
    let mut start = 0;
    while let Some((number, line)) = lines.peek().filter(|(_, line)| is_anchor(line)) {
        start = number;
        if let Some(anchor) = line.strip_prefix("@@ ").filter(|a| !a.trim().is_empty()) {
            hunk.anchors.push(anchor.to_owned());
        }
        lines.next();
    }
    // Bare empty lines are empty context, except a run of them at the end of the hunk: that
    // is spacing before the next section, not part of the file.
    let mut trailing_bare = 0;
    while let Some((number, line)) = lines.peek() {
        if start == 0 {
            start = number;
        }
        if line.trim_end() == END_OF_FILE {
            hunk.end_of_file = true;
            lines.next();
            break;
        }
        if !is_hunk_line(line) {
            break;
        }
        trailing_bare = if line.is_empty() {
            trailing_bare + 1
        } else {
            0
        };
        let text = line.get(1..).unwrap_or("");
        hunk.lines.push(match line.as_bytes().first() {
            Some(b'-') => HunkLine::Remove(text.to_owned()),
            Some(b'+') => HunkLine::Add(text.to_owned()),
            _ => HunkLine::Context(text.to_owned()),
        });
        lines.next();
    }
    if !hunk.end_of_file {
        hunk.lines.truncate(hunk.lines.len() - trailing_bare);
    }
    if hunk.lines.is_empty() {
        return Err(PatchError(format!(
            "patch line {start}: the hunk has no lines; expected lines starting with ` `, `-` \
             or `+` after `@@`"
        )));
    }
    Ok(hunk)
}

/// The path of a header (`rest` is what follows the header keyword on patch line `number`).
fn path(number: usize, rest: &str) -> Result<String, PatchError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(PatchError(format!(
            "patch line {number}: the file path is missing"
        )));
    }
    if path.contains('\0') {
        return Err(PatchError(format!(
            "patch line {number}: the file path contains a NUL byte"
        )));
    }
    Ok(path.to_owned())
}

/// The error for patch line `number`, which is `found` where `what` was expected.
fn expected(number: usize, what: &str, found: &str) -> PatchError {
    PatchError(format!(
        "patch line {number}: expected {what}, found `{}`",
        shown(found)
    ))
}

/// `line` shortened for an error message.
pub(super) fn shown(line: &str) -> String {
    const MAX: usize = 80;
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}
