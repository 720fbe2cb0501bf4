//! A file change's unified diff (as the engine reports an edit) applied to the file's text, so
//! that ACP clients get the `oldText` / `newText` pair their diff views need.

/// One hunk header's start line in the new file (1-based), e.g. 12 for `@@ -10,4 +12,5 @@`.
fn new_start(header: &str) -> Option<u32> {
    let plus = header
        .split_whitespace()
        .find(|part| part.starts_with('+'))?;
    plus[1..].split(',').next()?.parse().ok()
}

/// The first line the diff changes in the new file (1-based), for an ACP tool call location.
pub fn first_line(diff: &str) -> Option<u32> {
    diff.lines()
        .find(|line| line.starts_with("@@"))
        .and_then(new_start)
}

/// `old` with the hunks of `diff` applied; `None` when a hunk does not fit `old` (the file
/// changed since the diff was made, or the diff is not a unified diff).
pub fn apply(old: &str, diff: &str) -> Option<String> {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = String::with_capacity(old.len() + diff.len());
    // Index into `old_lines` of the next line not yet copied.
    let mut next = 0usize;
    let mut in_hunk = false;
    let mut saw_hunk = false;
    let mut last_added: Option<usize> = None;
    for line in diff.split_inclusive('\n') {
        if line.starts_with("@@") {
            let start = line
                .split_whitespace()
                .find(|part| part.starts_with('-'))
                .and_then(|part| part[1..].split(',').next())
                .and_then(|n| n.parse::<usize>().ok())?;
            // `-0,0` (an empty old file) starts before the first line.
            let at = start.saturating_sub(1);
            if at < next || at > old_lines.len() {
                return None;
            }
            out.extend(old_lines[next..at].iter().copied());
            next = at;
            in_hunk = true;
            saw_hunk = true;
            continue;
        }
        if !in_hunk {
            continue;
        }
        if line.starts_with("\\ No newline at end of file") {
            // The preceding line has no newline: take it off what was just written.
            if let Some(len) = last_added.take()
                && out.ends_with('\n')
                && out.len() >= len
            {
                out.pop();
            }
            continue;
        }
        let (tag, body) = line.split_at(line.chars().next().map_or(0, char::len_utf8));
        match tag {
            " " | "" => {
                let current = old_lines.get(next)?;
                if current.trim_end_matches('\n') != body.trim_end_matches('\n') {
                    return None;
                }
                out.push_str(current);
                last_added = Some(current.len());
                next += 1;
            }
            "-" => {
                let current = old_lines.get(next)?;
                if current.trim_end_matches('\n') != body.trim_end_matches('\n') {
                    return None;
                }
                last_added = None;
                next += 1;
            }
            "+" => {
                out.push_str(body);
                if !body.ends_with('\n') {
                    out.push('\n');
                }
                last_added = Some(body.len());
            }
            _ => in_hunk = false,
        }
    }
    if !saw_hunk {
        return None;
    }
    out.extend(old_lines[next..].iter().copied());
    Some(out)
}

/// `diff` reversed: what turns its new text back into its old text (hunk ranges swapped,
/// added lines removed and removed lines added).
pub fn reverse(diff: &str) -> String {
    let mut out = String::with_capacity(diff.len());
    let mut in_hunks = false;
    for line in diff.split_inclusive('\n') {
        if line.starts_with("@@") {
            in_hunks = true;
            let swapped: Vec<String> = line
                .trim_end_matches('\n')
                .split(' ')
                .map(|part| {
                    if let Some(rest) = part.strip_prefix('-') {
                        format!("+{rest}")
                    } else if let Some(rest) = part.strip_prefix('+') {
                        format!("-{rest}")
                    } else {
                        part.to_owned()
                    }
                })
                .collect();
            out.push_str(&swapped.join(" "));
            if line.ends_with('\n') {
                out.push('\n');
            }
        } else if in_hunks && let Some(rest) = line.strip_prefix('+') {
            out.push('-');
            out.push_str(rest);
        } else if in_hunks && let Some(rest) = line.strip_prefix('-') {
            out.push('+');
            out.push_str(rest);
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_apply_in_place() {
        let old = "one\ntwo\nthree\nfour\nfive\n";
        let diff = "--- a/f\n+++ b/f\n@@ -2,2 +2,3 @@\n two\n-three\n+THREE\n+three and a half\n@@ -5 +6 @@\n-five\n+FIVE\n";
        assert_eq!(
            apply(old, diff).as_deref(),
            Some("one\ntwo\nTHREE\nthree and a half\nfour\nFIVE\n")
        );
        assert_eq!(first_line(diff), Some(2));
    }

    #[test]
    fn a_reversed_diff_gives_the_old_text_back() {
        let old = "one\ntwo\nthree\nfour\nfive\n";
        let diff = "--- a/f\n+++ b/f\n@@ -2,2 +2,3 @@\n two\n-three\n+THREE\n+three and a half\n@@ -5 +6 @@\n-five\n+FIVE\n";
        let new = apply(old, diff).expect("applies");
        assert_eq!(apply(&new, &reverse(diff)).as_deref(), Some(old));
        // The old text does not take the reversed diff.
        assert_eq!(apply(old, &reverse(diff)), None);
    }

    #[test]
    fn a_diff_that_does_not_fit_is_refused() {
        assert_eq!(apply("one\n", "@@ -1 +1 @@\n-uno\n+eins\n"), None);
        assert_eq!(apply("one\n", "not a diff"), None);
        assert_eq!(apply("one\n", "@@ -9 +9 @@\n-x\n"), None);
    }

    #[test]
    fn a_missing_final_newline_is_kept_missing() {
        let diff = "@@ -1 +1 @@\n-one\n+uno\n\\ No newline at end of file\n";
        assert_eq!(apply("one\n", diff).as_deref(), Some("uno"));
    }
}
