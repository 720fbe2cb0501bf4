//! Reading the engine's source files: each file's module path, its lines, its child modules
//! and its code with comments, literals and test-only items removed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::imports::child_modules;

/// One source file of the engine.
pub(crate) struct Source {
    /// Its module path (`threads::store`), empty for `lib.rs`.
    pub(crate) module: Vec<String>,
    /// Its text with comments, literals and test-only items removed.
    pub(crate) code: String,
    /// Its lines (tests inside it count: a long test module goes to a file of its own).
    pub(crate) lines: usize,
    /// The child modules it declares (`mod x;`), test-only ones left out.
    pub(crate) children: BTreeSet<String>,
}

/// Every `.rs` file under `root`, by path relative to it, except test-only modules.
pub(crate) fn read_sources(root: &Path) -> BTreeMap<String, Source> {
    let mut paths = Vec::new();
    collect(root, &mut paths);
    let mut files = BTreeMap::new();
    for path in paths {
        let rel = path
            .strip_prefix(root)
            .expect("under the source folder")
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let module = module_of(&rel);
        let (code, test_children) = strip(&text);
        let lines = text.lines().count();
        let children = child_modules(&code);
        files.insert(
            rel,
            (
                Source {
                    module,
                    code,
                    lines,
                    children,
                },
                test_children,
            ),
        );
    }
    // Files declared under `#[cfg(test)]` (and everything below them) are tests.
    let mut test_modules: Vec<Vec<String>> = Vec::new();
    for (source, test_children) in files.values() {
        for child in test_children {
            let mut m = source.module.clone();
            m.push(child.clone());
            test_modules.push(m);
        }
    }
    files
        .into_iter()
        .filter(|(_, (s, _))| !test_modules.iter().any(|t| s.module.starts_with(t)))
        .map(|(p, (s, _))| (p, s))
        .collect()
}

/// The lines of every `.rs` file below `dir`, tests included.
pub(crate) fn count_lines(dir: &Path) -> usize {
    let mut paths = Vec::new();
    collect(dir, &mut paths);
    paths
        .iter()
        .map(|path| {
            std::fs::read_to_string(path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
                .lines()
                .count()
        })
        .sum()
}

/// Every `.rs` file below `dir`, into `out`.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `threads/store/mod.rs` → `[threads, store]`; `lib.rs` → `[]`.
fn module_of(rel: &str) -> Vec<String> {
    let trimmed = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = trimmed.split('/').map(str::to_owned).collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// `text` without comments, string and char literals, `#[cfg(test)]` items and the paths of
/// restricted visibilities (`pub(in crate::turns)` names a module, it does not use one); and
/// the names of child modules declared under `#[cfg(test)]` (`#[cfg(test)] mod x;`).
fn strip(text: &str) -> (String, Vec<String>) {
    let code = strip_visibility_paths(&strip_literals(text));
    let mut out = String::with_capacity(code.len());
    let mut test_children = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let end = item_end(after);
        let item = after[..end].trim();
        if let Some(name) = item.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            test_children.push(name.trim().to_owned());
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    (out, test_children)
}

/// `code` with every `pub(in path)` turned into `pub`.
fn strip_visibility_paths(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("pub(in ") {
        out.push_str(&rest[..at]);
        out.push_str("pub");
        let after = &rest[at..];
        rest = after.find(')').map_or("", |close| &after[close + 1..]);
    }
    out.push_str(rest);
    out
}

/// Where the item at the start of `code` ends: after its `;` at depth 0, or after the `}`
/// that closes its first block (`use` items always end at their `;`).
fn item_end(code: &str) -> usize {
    let is_use = {
        let t = code.trim_start();
        t.starts_with("use ") || t.starts_with("pub use ") || t.starts_with("pub(crate) use ")
    };
    let mut depth = 0usize;
    let mut parens = 0usize;
    for (i, c) in code.char_indices() {
        match c {
            '(' | '[' => parens += 1,
            ')' | ']' => parens = parens.saturating_sub(1),
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && parens == 0 && !is_use {
                    return i + 1;
                }
            }
            ';' if depth == 0 && parens == 0 => return i + 1,
            _ => {}
        }
    }
    code.len()
}

/// `text` with comments removed and the insides of string and char literals blanked.
fn strip_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"…", r#"…"#, br#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    _ => j += 1,
                }
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            if next == Some('\\') {
                let mut j = i + 3;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}
