//! The unified diff shown for an edited file.

use std::fmt::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use similar::udiff::UnifiedHunkHeader;
use similar::{Algorithm, DiffOp, capture_diff_deadline, group_diff_ops};

/// How long the diff may search for the smallest difference before it settles for a larger
/// one; bounds the time a huge edit takes to preview.
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// The unified diff (three lines of context) from `old` to `new`, with `--- a/<old_name>`
/// and `+++ b/<new_name>` headers (absolute names keep no prefix). Empty when the texts are
/// equal. The lines both texts start and end with are set aside before diffing, so a small
/// edit of a large file costs little more than comparing the two.
pub(crate) fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let hunks = hunks(old, new);
    if hunks.is_empty() {
        return hunks;
    }
    format!(
        "--- {}\n+++ {}\n{hunks}",
        header("a/", old_name),
        header("b/", new_name)
    )
}

/// The hunks of the unified diff from `old` to `new` (three lines of context), without file
/// headers; empty when the texts are equal.
pub fn hunks(old: &str, new: &str) -> String {
    let old: Vec<&str> = old.split_inclusive('\n').collect();
    let new: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut ops = Vec::new();
    if prefix > 0 {
        ops.push(DiffOp::Equal {
            old_index: 0,
            new_index: 0,
            len: prefix,
        });
    }
    ops.extend(capture_diff_deadline(
        Algorithm::Myers,
        &old,
        prefix..old.len() - suffix,
        &new,
        prefix..new.len() - suffix,
        Some(Instant::now() + DIFF_TIMEOUT),
    ));
    if suffix > 0 {
        ops.push(DiffOp::Equal {
            old_index: old.len() - suffix,
            new_index: new.len() - suffix,
            len: suffix,
        });
    }
    let mut out = String::new();
    for group in group_diff_ops(ops, CONTEXT) {
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}", UnifiedHunkHeader::new(&group));
        for op in &group {
            let (old_range, new_range) = (op.old_range(), op.new_range());
            match op {
                DiffOp::Equal { .. } => lines(&mut out, ' ', &old[old_range]),
                DiffOp::Delete { .. } => lines(&mut out, '-', &old[old_range]),
                DiffOp::Insert { .. } => lines(&mut out, '+', &new[new_range]),
                DiffOp::Replace { .. } => {
                    lines(&mut out, '-', &old[old_range]);
                    lines(&mut out, '+', &new[new_range]);
                }
            }
        }
    }
    out
}

/// Appends `lines` (each with its own line ending, the last maybe without) marked with `sign`.
fn lines(out: &mut String, sign: char, lines: &[&str]) {
    for line in lines {
        out.push(sign);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

/// `name` for a diff header: `prefix` + name when it is relative.
fn header(prefix: &str, name: &str) -> String {
    if Path::new(name).is_absolute() {
        name.to_owned()
    } else {
        format!("{prefix}{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_unified_diff_with_headers() {
        let diff = unified("a\nb\nc\n", "a\nB\nc\n", "src/x.rs", "src/y.rs");
        assert_eq!(
            diff,
            "--- a/src/x.rs\n+++ b/src/y.rs\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(unified("same\n", "same\n", "f", "f"), "");
        assert!(unified("x\n", "y\n", "/abs/f", "/abs/f").starts_with("--- /abs/f\n+++ /abs/f\n"));
    }

    #[test]
    fn renders_as_similar_does() {
        let cases = [
            ("", "a\n"),
            ("a\n", ""),
            ("a\nb", "a\nc"),
            ("a\nb\n", "a\nb"),
            (
                "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
                "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\nY\n12\nZ\n",
            ),
            (
                "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n",
                "a\nb\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nN\nn\n",
            ),
            ("x\nx\nx\n", "x\nx\n"),
        ];
        for (old, new) in cases {
            let expected = similar::TextDiff::from_lines(old, new)
                .unified_diff()
                .context_radius(3)
                .header("a/f", "b/f")
                .to_string();
            assert_eq!(unified(old, new, "f", "f"), expected, "{old:?} -> {new:?}");
        }
    }
}
