//! Rule 2: no non-test file over [`MAX_LINES`] lines.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::allow::ALLOWED_SIZES;
use crate::sources::Source;

/// The longest a non-test source file may be, in lines.
pub(crate) const MAX_LINES: usize = 900;

/// Reports every file over [`MAX_LINES`] that is not in [`ALLOWED_SIZES`], and every entry
/// there that is no longer over it or no longer exists.
pub(crate) fn check_sizes(files: &BTreeMap<String, Source>, problems: &mut String) {
    for (path, source) in files {
        let allowed = ALLOWED_SIZES.iter().any(|(p, _)| p == path);
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
    for (path, _) in ALLOWED_SIZES {
        if !files.contains_key(*path) {
            let _ = writeln!(
                problems,
                "- {path} (ALLOWED_SIZES) no longer exists: remove it"
            );
        }
    }
}
