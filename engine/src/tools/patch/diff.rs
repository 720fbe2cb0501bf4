//! The unified diff shown for an edited file.

use std::path::Path;
use std::time::Duration;

use similar::TextDiff;

/// How long the diff may search for the smallest difference before it settles for a larger
/// one; bounds the time a huge edit takes to preview.
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// The unified diff (three lines of context) from `old` to `new`, with `--- a/<old_name>`
/// and `+++ b/<new_name>` headers (absolute names keep no prefix). Empty when the texts are
/// equal.
pub(super) fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    diff.unified_diff()
        .context_radius(3)
        .header(&header("a/", old_name), &header("b/", new_name))
        .to_string()
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
}
