//! Rule 2: no non-test file over [`MAX_LINES`] lines.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::sources::Source;

/// The longest a non-test source file may be, in lines.
pub(crate) const MAX_LINES: usize = 900;

/// Reports every file over [`MAX_LINES`] that is not in `allowed` (an allow-list like
/// [`ALLOWED_SIZES`](crate::allow::ALLOWED_SIZES)), and every entry there that is no longer
/// over it or no longer exists.
pub(crate) fn check_sizes(
    files: &BTreeMap<String, Source>,
    allowed: &[(&str, &str)],
    problems: &mut String,
) {
    for (path, source) in files {
        let allowed = allowed.iter().any(|(p, _)| p == path);
        if source.lines > MAX_LINES && !allowed {
            let _ = writeln!(
                problems,
                "- {path} has {} lines (more than {MAX_LINES}): split it by responsibility",
                source.lines
            );
        }
        if source.lines <= MAX_LINES && allowed {
            let _ = writeln!(
                problems,
                "- {path} is now {} lines: remove it from ALLOWED_SIZES",
                source.lines
            );
        }
    }
    for (path, _) in allowed {
        if !files.contains_key(*path) {
            let _ = writeln!(
                problems,
                "- {path} (ALLOWED_SIZES) no longer exists: remove it"
            );
        }
    }
}
