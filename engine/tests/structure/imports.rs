//! The crate's import graph: every module path a file names (`use` trees and `a::b::c` paths),
//! resolved to the file that declares the module.

use std::collections::{BTreeMap, BTreeSet};

use crate::sources::Source;

/// The child modules `code` declares: `mod x;`, `pub mod x;`, `pub(crate) mod x;`.
pub(crate) fn child_modules(code: &str) -> BTreeSet<String> {
    let tokens = tokens(code);
    let mut children = BTreeSet::new();
    for (i, t) in tokens.iter().enumerate() {
        if t == "mod"
            && let (Some(name), Some(semi)) = (tokens.get(i + 1), tokens.get(i + 2))
            && semi == ";"
        {
            children.insert(name.clone());
        }
    }
    children
}

/// Identifiers, `::` and single punctuation characters.
fn tokens(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".to_owned());
            i += 2;
        } else if c.is_whitespace() {
            i += 1;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

/// A path a file names, as written (relative paths kept relative), with the inline modules
/// (`mod imp { … }`) it is written in, outermost first: `super::` inside them starts there.
struct Named {
    inline: Vec<String>,
    path: Vec<String>,
}

/// Every module path `code` names: the paths of `use` trees expanded, and `a::b::c` paths in
/// the code.
fn named_paths(code: &str) -> Vec<Named> {
    let tokens = tokens(code);
    let mut paths = Vec::new();
    // The inline modules open at this point, each with the brace depth inside it.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let here = |inline: &[(String, usize)]| inline.iter().map(|(name, _)| name.clone()).collect();
    while i < tokens.len() {
        let previous = i.checked_sub(1).map(|p| tokens[p].as_str());
        match tokens[i].as_str() {
            "{" => depth += 1,
            "}" => {
                if inline.last().is_some_and(|(_, inside)| *inside == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            "mod" if tokens.get(i + 2).is_some_and(|t| t == "{") => {
                inline.push((tokens[i + 1].clone(), depth + 1));
                i += 2;
                continue;
            }
            _ => {}
        }
        if tokens[i] == "use" && previous != Some("::") {
            let mut j = i + 1;
            let mut used = Vec::new();
            use_tree(&tokens, &mut j, Vec::new(), &mut used);
            paths.extend(used.into_iter().map(|path| Named {
                inline: here(&inline),
                path,
            }));
            i = j;
            continue;
        }
        let starts_path = is_ident(&tokens[i]) && previous != Some("::");
        if starts_path && tokens.get(i + 1).is_some_and(|t| t == "::") {
            let mut path = vec![tokens[i].clone()];
            let mut j = i + 1;
            while tokens.get(j).is_some_and(|t| t == "::")
                && tokens.get(j + 1).is_some_and(|t| is_ident(t))
            {
                path.push(tokens[j + 1].clone());
                j += 2;
            }
            paths.push(Named {
                inline: here(&inline),
                path,
            });
            i = j;
            continue;
        }
        i += 1;
    }
    paths
}

/// Whether token `t` is an identifier.
fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Reads one `use` tree starting at `tokens[*i]`, pushing each full path under `prefix`.
fn use_tree(tokens: &[String], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        match tokens.get(*i).map(String::as_str) {
            Some("{") => {
                *i += 1;
                loop {
                    use_tree(tokens, i, path.clone(), out);
                    match tokens.get(*i).map(String::as_str) {
                        Some(",") => {
                            *i += 1;
                            if tokens.get(*i).is_some_and(|t| t == "}") {
                                *i += 1;
                                return;
                            }
                        }
                        Some("}") => {
                            *i += 1;
                            return;
                        }
                        _ => return,
                    }
                }
            }
            Some("::") => *i += 1,
            Some("*") => {
                *i += 1;
                out.push(path);
                return;
            }
            Some("as") => {
                *i += 2;
                out.push(path);
                return;
            }
            Some(t) if is_ident(t) => {
                path.push(t.to_owned());
                *i += 1;
            }
            _ => {
                if !path.is_empty() {
                    out.push(path);
                }
                return;
            }
        }
    }
}

/// The import graph: file → the files it names.
pub(crate) fn imports(files: &BTreeMap<String, Source>) -> BTreeMap<String, BTreeSet<String>> {
    let by_module: BTreeMap<&[String], &str> = files
        .iter()
        .map(|(path, s)| (s.module.as_slice(), path.as_str()))
        .collect();
    let mut graph = BTreeMap::new();
    for (path, source) in files {
        let mut targets = BTreeSet::new();
        for named in named_paths(&source.code) {
            // Inside an inline module, paths start from it (and the file's children are not
            // its children).
            let mut module = source.module.clone();
            module.extend(named.inline.iter().cloned());
            let none = BTreeSet::new();
            let children = if named.inline.is_empty() {
                &source.children
            } else {
                &none
            };
            let Some(absolute) = resolve(&module, children, &named.path) else {
                continue;
            };
            // The file that declares the longest prefix of the path.
            let target = (0..=absolute.len())
                .rev()
                .find_map(|n| by_module.get(&absolute[..n]).copied());
            if let Some(target) = target
                && target != path
            {
                targets.insert(target.to_owned());
            }
        }
        graph.insert(path.clone(), targets);
    }
    graph
}

/// `named` as an absolute module path inside the crate, or `None` when it names something
/// outside it (another crate, a local item).
fn resolve(
    module: &[String],
    children: &BTreeSet<String>,
    named: &[String],
) -> Option<Vec<String>> {
    let first = named.first()?;
    let mut base: Vec<String>;
    let mut rest = named;
    match first.as_str() {
        "crate" => {
            base = Vec::new();
            rest = &named[1..];
        }
        "self" | "super" => {
            base = module.to_vec();
            while let Some(seg) = rest.first() {
                match seg.as_str() {
                    "self" => rest = &rest[1..],
                    "super" => {
                        base.pop()?;
                        rest = &rest[1..];
                    }
                    _ => break,
                }
            }
        }
        name if children.contains(name) => base = module.to_vec(),
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}
