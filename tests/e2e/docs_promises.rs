//! Every test `docs/security.md` and `docs/sandbox.md` name as holding a promise exists, and
//! so does every test the README and the other docs name.
//!
//! The docs name a test in backticks as `module::test_name`, `module::*` (every test of the
//! module), `module::prefix*suffix`, or `module::tests::*` (a crate's unit tests); after such a
//! name, a bare `test_name` in the same paragraph, list item or table row (snake case with at
//! least four underscores) is a test of that same module. A module is the end-to-end test
//! module `tests/e2e/MODULE.rs` when there is one, and otherwise any source file (or directory)
//! of that name in the workspace's crates (`runtime/src/peer_uid.rs`,
//! `runtime/tests/runtime/stdio.rs`…). A named test is a function of that file with a test
//! attribute (`#[test]`, `#[tokio::test…]`). A promise whose test was renamed or removed
//! makes this test fail, naming the doc, the reference and where it was looked for.

use std::path::Path;

use crate::common::repo;

/// The docs whose references are checked.
const DOCS: [&str; 2] = ["docs/security.md", "docs/sandbox.md"];

/// Directories never searched for tests.
const SKIPPED_DIRS: [&str; 5] = ["target", ".git", "generated", "node_modules", "fuzz"];

/// One source file of the workspace: its path relative to the repository, and its text.
struct Source {
    path: String,
    text: String,
}

/// Every `.rs` file under `dir` (relative paths from `root`), skipping [`SKIPPED_DIRS`].
fn sources(root: &Path, dir: &Path, out: &mut Vec<Source>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            if !SKIPPED_DIRS.contains(&name) {
                sources(root, &path, out);
            }
        } else if name.ends_with(".rs") {
            let relative = path.strip_prefix(root).expect("under the root");
            out.push(Source {
                path: relative.to_string_lossy().replace('\\', "/"),
                text: std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("read {}: {e}", path.display())),
            });
        }
    }
}

/// The code spans of `markdown`, grouped by block (a paragraph, a list item or a table row),
/// in order; fenced code blocks are left out.
fn spans_by_block(markdown: &str) -> Vec<Vec<String>> {
    let mut blocks: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut fenced = false;
    let flush = |current: &mut String, blocks: &mut Vec<String>| {
        if !current.trim().is_empty() {
            blocks.push(std::mem::take(current));
        }
        current.clear();
    };
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            fenced = !fenced;
            flush(&mut current, &mut blocks);
            continue;
        }
        if fenced {
            continue;
        }
        let starts_item = trimmed.starts_with("- ")
            || trimmed.starts_with('|')
            || trimmed
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if trimmed.is_empty() || starts_item {
            flush(&mut current, &mut blocks);
        }
        current.push_str(trimmed);
        current.push(' ');
        if trimmed.starts_with('|') {
            flush(&mut current, &mut blocks);
        }
    }
    flush(&mut current, &mut blocks);
    blocks
        .iter()
        .map(|block| {
            block
                .split('`')
                .skip(1)
                .step_by(2)
                .map(|span| span.trim().to_owned())
                .collect()
        })
        .collect()
}

/// Whether `text` is a snake-case identifier (`*` allowed when `glob`).
fn identifier(text: &str, glob: bool) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || (glob && c == '*'))
}

/// The test references of `markdown`, as `module::…::name` paths (a bare name qualified with
/// the module named before it in its block; one with no module before it is left bare, or
/// left out unless `unqualified`: outside the security docs such names are mostly
/// configuration keys).
fn references(markdown: &str, unqualified: bool) -> Vec<String> {
    let mut found = Vec::new();
    for block in spans_by_block(markdown) {
        let mut module: Option<String> = None;
        for span in block {
            let segments: Vec<&str> = span.split("::").collect();
            if segments.len() > 1
                && identifier(segments[0], false)
                && segments[1..].iter().all(|s| identifier(s, true))
            {
                module = Some(segments[0].to_owned());
                found.push(span);
            } else if identifier(&span, false) && span.matches('_').count() >= 4 {
                match &module {
                    Some(module) => found.push(format!("{module}::{span}")),
                    None if unqualified => found.push(span),
                    None => {}
                }
            }
        }
    }
    found
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (0..=name.len() - head.len())
                    .any(|skip| matches(tail, &name[head.len() + skip..]))
        }
    }
}

/// The names of the test functions of `text`: each `fn NAME(` whose attributes (the lines
/// just above it, doc comments between) include `#[test]` or `#[tokio::test…]`.
fn tests_in(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut tests = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(rest) = line
            .strip_prefix("async fn ")
            .or_else(|| line.strip_prefix("fn "))
        else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let is_test = lines[..at]
            .iter()
            .rev()
            .take_while(|l| l.starts_with("#[") || l.starts_with("///") || l.starts_with("//"))
            .any(|l| *l == "#[test]" || l.starts_with("#[tokio::test"));
        if is_test {
            tests.push(name);
        }
    }
    tests
}

/// The files of module `module` (with `inner`, the segments between it and the test, such as
/// `tests`): `tests/e2e/MODULE.rs` and `tests/e2e/MODULE/…` when that exists, otherwise the
/// crates' files named `MODULE.rs` or under a directory `MODULE/`.
fn module_files<'a>(all: &'a [Source], module: &str, inner: &[&str]) -> Vec<&'a Source> {
    let e2e_file = format!("tests/e2e/{module}.rs");
    let e2e_dir = format!("tests/e2e/{module}/");
    let e2e: Vec<&Source> = all
        .iter()
        .filter(|s| s.path == e2e_file || s.path.starts_with(&e2e_dir))
        .collect();
    let within = |files: Vec<&'a Source>| -> Vec<&'a Source> {
        files
            .into_iter()
            .filter(|s| {
                inner.iter().all(|segment| {
                    s.text.contains(&format!("mod {segment}"))
                        || s.path.ends_with(&format!("/{segment}.rs"))
                        || s.path.contains(&format!("/{segment}/"))
                })
            })
            .collect()
    };
    let file = format!("/{module}.rs");
    let dir = format!("/{module}/");
    let crates = || {
        all.iter()
            .filter(|s| !s.path.starts_with("tests/e2e/"))
            .filter(|s| s.path.ends_with(&file) || s.path.contains(&dir))
            .collect()
    };
    // An end-to-end module first; a crate module of the same name (`catalog::families::tests`
    // beside `tests/e2e/catalog.rs`) when the e2e module has no such inner module.
    match within(e2e) {
        found if found.is_empty() => within(crates()),
        found => found,
    }
}

/// Checks one reference: `Ok` when the test (or, for `*`, some test) exists, otherwise why not.
fn resolve(all: &[Source], reference: &str) -> Result<(), String> {
    let segments: Vec<&str> = reference.split("::").collect();
    let Some((name, path)) = segments.split_last() else {
        return Err("an empty reference".to_owned());
    };
    if path.is_empty() {
        // A bare name with no module before it: a test anywhere in the end-to-end tests.
        let found = all
            .iter()
            .filter(|s| s.path.starts_with("tests/e2e/"))
            .any(|s| tests_in(&s.text).iter().any(|t| t == name));
        return if found {
            Ok(())
        } else {
            Err("no test of that name in tests/e2e/".to_owned())
        };
    }
    let files = module_files(all, path[0], &path[1..]);
    if files.is_empty() {
        return Err(format!(
            "no module `{}`: neither tests/e2e/{}.rs nor a crate file of that name",
            path.join("::"),
            path[0]
        ));
    }
    let found = files
        .iter()
        .any(|s| tests_in(&s.text).iter().any(|t| matches(name, t)));
    if found {
        Ok(())
    } else {
        let searched: Vec<&str> = files.iter().map(|s| s.path.as_str()).collect();
        Err(format!("no test `{name}` in {}", searched.join(", ")))
    }
}

/// Promise (docs/security.md, opening: "Each promise below names the test that attacks it"):
/// every test the two docs name exists, as a test, where its name says. The checker itself is
/// checked first: a made-up name, a made-up module and a function that is not a test are
/// refused; a real test, a module's `*` and a unit-test module are found.
#[test]
fn every_test_the_security_and_sandbox_docs_name_exists() {
    let root = repo();
    let mut all = Vec::new();
    sources(&root, &root, &mut all);
    assert!(all.len() > 100, "too few sources found under {root:?}");

    // The checker can fail.
    assert!(resolve(&all, "security_root::no_such_test_of_the_root_server").is_err());
    assert!(resolve(&all, "no_such_module::a_test").is_err());
    assert!(
        resolve(&all, "security_root::as_root").is_err(),
        "a helper counted as a test"
    );
    resolve(
        &all,
        "security_root::a_root_servers_sandbox_has_a_process_limit",
    )
    .expect("a real test");
    resolve(&all, "security_root::*").expect("a module's tests");
    resolve(&all, "peer_uid::tests::*").expect("a crate's unit tests");
    assert!(matches("*_kills_it", "a_turn_kills_it") && !matches("*_kills_it", "kills"));

    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in DOCS {
        let text =
            std::fs::read_to_string(root.join(doc)).unwrap_or_else(|e| panic!("read {doc}: {e}"));
        for reference in references(&text, true) {
            checked += 1;
            if let Err(why) = resolve(&all, &reference) {
                missing.push(format!("{doc} names `{reference}`: {why}"));
            }
        }
    }
    assert!(
        checked > 80,
        "only {checked} test references found in the docs: is the extraction broken?"
    );
    assert!(
        missing.is_empty(),
        "tests named by the docs that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The README and every doc under `docs/`.
fn all_docs(root: &Path) -> Vec<String> {
    let mut docs = vec!["README.md".to_owned()];
    let mut names: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("read docs/")
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    names.sort();
    docs.extend(names);
    docs
}

/// "A promise in the docs is a test": every test the README or any doc names, as
/// `module::test` (or a bare test name after one in the same paragraph, item or row), exists
/// where its name says.
#[test]
fn every_test_the_readme_and_the_docs_name_exists() {
    let root = repo();
    let mut all = Vec::new();
    sources(&root, &root, &mut all);
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in all_docs(&root) {
        let text =
            std::fs::read_to_string(root.join(&doc)).unwrap_or_else(|e| panic!("read {doc}: {e}"));
        for reference in references(&text, false) {
            // A path into a crate's API (`agentwire_protocol::methods`), not a test.
            if reference.starts_with("agentwire_") {
                continue;
            }
            checked += 1;
            if let Err(why) = resolve(&all, &reference) {
                missing.push(format!("{doc} names `{reference}`: {why}"));
            }
        }
    }
    assert!(
        checked > 200,
        "only {checked} test references found in the docs: is the extraction broken?"
    );
    assert!(
        missing.is_empty(),
        "tests named by the docs that do not exist:\n{}",
        missing.join("\n")
    );
}
