//! Rule 3: arrows between the engine's parts go one way, lowest part first, as the map in
//! `engine/README.md` says.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::allow::{ALLOWED_ARROWS, matches};
use crate::sources::Source;

/// The parts of the engine crate, lowest first (the crates split off it, in `engine/*/`, are
/// below them all): (part, module path prefixes that belong to it).
/// A file belongs to the part with the longest matching prefix; a part may use itself and the
/// parts before it in this list, never those after it. Keep in step with `engine/README.md`.
pub(crate) const PARTS: &[(&str, &[&str])] = &[
    ("config", &["accounts"]),
    ("services", &["command_exec", "mcp", "hooks", "skills"]),
    ("engine", &[""]),
];

/// The part a module belongs to, as its index in [`PARTS`].
fn part_of(module: &[String]) -> usize {
    let joined = module.join("::");
    let mut best = (0usize, PARTS.len() - 1);
    for (index, (_, prefixes)) in PARTS.iter().enumerate() {
        for prefix in *prefixes {
            let matches = prefix.is_empty()
                || joined == *prefix
                || joined.starts_with(&format!("{prefix}::"));
            if matches && (prefix.len() + 1 > best.0) {
                best = (prefix.len() + 1, index);
            }
        }
    }
    best.1
}

/// The arrows from a file to a file of a higher part: (from, to, from's part, to's part).
pub(crate) fn wrong_way_arrows<'a>(
    files: &BTreeMap<String, Source>,
    graph: &'a BTreeMap<String, BTreeSet<String>>,
) -> Vec<(&'a str, &'a str, usize, usize)> {
    let mut found = Vec::new();
    for (from, targets) in graph {
        let from_part = part_of(&files[from].module);
        for to in targets {
            let to_part = part_of(&files[to].module);
            if to_part > from_part {
                found.push((from.as_str(), to.as_str(), from_part, to_part));
            }
        }
    }
    found
}

/// Reports every arrow against the map that is not in [`ALLOWED_ARROWS`], and every entry
/// there that no longer matches an arrow.
pub(crate) fn check_arrows(
    files: &BTreeMap<String, Source>,
    graph: &BTreeMap<String, BTreeSet<String>>,
    problems: &mut String,
) {
    let found = wrong_way_arrows(files, graph);
    for (from, to, from_part, to_part) in &found {
        let allowed = ALLOWED_ARROWS
            .iter()
            .any(|(f, t, _)| matches(from, f) && matches(to, t));
        if !allowed {
            let _ = writeln!(
                problems,
                "- {from} ({}) uses {to} ({}): a part may only use itself and the parts below it",
                PARTS[*from_part].0, PARTS[*to_part].0
            );
        }
    }
    for (from, to, _) in ALLOWED_ARROWS {
        if !found
            .iter()
            .any(|(f, t, _, _)| matches(f, from) && matches(t, to))
        {
            let _ = writeln!(
                problems,
                "- the allowed arrow {from} → {to} no longer exists: remove it from ALLOWED_ARROWS"
            );
        }
    }
}
