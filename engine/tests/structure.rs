//! The engine's structure, read from its own imports (issue 35, item 1).
//!
//! Every non-test source file of the engine is read (comments, string literals and
//! `#[cfg(test)]` items removed) and each path it names that starts with `crate::`, `super::`,
//! `self::` or one of its own child modules is resolved to the file that declares the module.
//! That gives a graph of files, and three rules over it:
//!
//! 1. no module cycle longer than two files (a file and its child that import each other are
//!    fine; three files that go round are not);
//! 2. no non-test file over [`MAX_LINES`] lines (a file declared under `#[cfg(test)]` is a
//!    test file; a test module inside a file counts);
//! 3. arrows between the parts go one way, as the map in `engine/README.md` says: a part uses
//!    only the parts listed below it there ([`PARTS`] is that map, in the same order).
//!
//! Today's violations are listed in [`ALLOWED_CYCLES`] (and [`ALLOWED_ROOTLESS_CYCLES`], the
//! cycles that show once the crate root is left out), [`ALLOWED_SIZES`] and
//! [`ALLOWED_ARROWS`], one reason each. The lists must only shrink: a new violation fails the
//! test, and so does an entry that no longer happens (remove it, or write the smaller cycle).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The longest a non-test source file may be, in lines.
const MAX_LINES: usize = 900;

/// The parts of the engine, lowest first: (part, module path prefixes that belong to it).
/// A file belongs to the part with the longest matching prefix; a part may use itself and the
/// parts before it in this list, never those after it. Keep in step with `engine/README.md`.
const PARTS: &[(&str, &[&str])] = &[
    (
        "support",
        &[
            "atomic_file",
            "regular_file",
            "timestamps",
            "tls",
            "supervised",
        ],
    ),
    ("providers", &["provider"]),
    ("config", &["config", "accounts", "requirements"]),
    ("store", &["threads::store"]),
    (
        "tools",
        &[
            "tools",
            "command_exec",
            "fs",
            "mcp",
            "hooks",
            "skills",
            "search",
        ],
    ),
    ("engine", &[""]),
];

/// Cycles of more than two files that exist today: the path prefixes that cover the files of
/// each (`threads/` is every file below it, `lib.rs` that file), and why it is still there.
/// A cycle is allowed when every one of its files matches a prefix of one entry; every prefix
/// must still match a file of such a cycle (the lists only shrink).
const ALLOWED_CYCLES: &[(&[&str], &str)] = &[
    (
        &[
            "lib.rs",
            "accounts/",
            "catalog/",
            "codex_import/",
            "command_exec/",
            "config/",
            "elicitation_count.rs",
            "features.rs",
            "fs/",
            "history_search.rs",
            "hooks.rs",
            "hooks/",
            "mcp/",
            "memory.rs",
            "organisation/",
            "permission_profiles.rs",
            "plugins/",
            "pool.rs",
            "provider/",
            "requirements.rs",
            "search/",
            "skills.rs",
            "thread_sample.rs",
            "thread_settings.rs",
            "threads/",
            "turns/",
            "workspace_rpc.rs",
        ],
        "the `Engine` knot: these areas serve requests with the whole `&Engine` (lib.rs), which \
         holds them all; and config, accounts, mcp, plugins, provider, threads/meta.rs and \
         turns/instructions.rs import each other's types. Areas are to receive the services \
         they need instead (issue 35)",
    ),
    (
        &[
            "tools/exec.rs",
            "tools/exec_sessions.rs",
            "tools/mod.rs",
            "tools/sandbox.rs",
            "tools/specs.rs",
        ],
        "tools/mod.rs holds the tool vocabulary (`ToolSpec`, `Offer`, names) that the tool \
         files import back; it belongs in a leaf module of its own",
    ),
    (
        &["tools/patch/"],
        "patch/mod.rs holds the patch vocabulary (hunks, errors) that parse/plan/edit import \
         back; it belongs in a leaf module of its own",
    ),
];

/// The same for the graph without the crate root (`lib.rs`, which holds the `Engine` every
/// request handler takes): here the cycles between the areas themselves show, which the
/// `Engine` knot above would hide.
const ALLOWED_ROOTLESS_CYCLES: &[(&[&str], &str)] = &[
    (
        &[
            "accounts/",
            "config/",
            "provider/",
            "threads/",
            "turns/instructions.rs",
        ],
        "the vocabulary knot: provider takes ConfigFile and Accounts from config/accounts, \
         config takes the built-in providers and the thread defaults (threads/meta.rs) back, \
         threads take instructions from turns/",
    ),
    (
        &[
            "mcp/client.rs",
            "mcp/connect.rs",
            "mcp/mod.rs",
            "mcp/slot.rs",
        ],
        "mcp/mod.rs holds the manager's types (errors, Caller) that connect and slot import \
         back while it starts them",
    ),
    (
        &["plugins/manifest.rs", "plugins/mcp.rs", "plugins/mod.rs"],
        "plugins/mod.rs holds the plugin vocabulary that manifest.rs and mcp.rs import back",
    ),
    (
        &[
            "tools/exec.rs",
            "tools/exec_sessions.rs",
            "tools/mod.rs",
            "tools/sandbox.rs",
            "tools/specs.rs",
        ],
        "tools/mod.rs holds the tool vocabulary that the tool files import back",
    ),
    (
        &["tools/patch/"],
        "patch/mod.rs holds the patch vocabulary that parse/plan/edit import back",
    ),
    (
        &["turns/"],
        "turns/mod.rs holds the turn state that run/, history.rs and job.rs import back (the \
         jobs work of issue 35 item 2 is reshaping it)",
    ),
];

/// Non-test files over [`MAX_LINES`] lines today: (file, reason).
const ALLOWED_SIZES: &[(&str, &str)] = &[];

/// Arrows from a lower part to a higher one that exist today: (from, to, reason), each a path
/// prefix as in [`ALLOWED_CYCLES`]. Every entry must still match an arrow.
const ALLOWED_ARROWS: &[(&str, &str, &str)] = &[
    // Areas that serve requests themselves and take the whole `&Engine`.
    (
        "accounts/mod.rs",
        "lib.rs",
        "serves account/* with the whole &Engine",
    ),
    (
        "command_exec/",
        "lib.rs",
        "serves command/exec and process/* with the whole &Engine",
    ),
    (
        "config/rpc.rs",
        "lib.rs",
        "serves config/* with the whole &Engine",
    ),
    (
        "config/mod.rs",
        "lib.rs",
        "the config store's reload takes the whole &Engine",
    ),
    ("fs/mod.rs", "lib.rs", "serves fs/* with the whole &Engine"),
    (
        "mcp/",
        "lib.rs",
        "serves mcpServer/* with the whole &Engine",
    ),
    (
        "search/mod.rs",
        "lib.rs",
        "serves fuzzyFileSearch/* with the whole &Engine",
    ),
    (
        "config/rpc.rs",
        "pool.rs",
        "config writes run on the blocking pool of the request layer",
    ),
    // The providers' vocabulary still lives in the engine.
    (
        "provider/mod.rs",
        "config/mod.rs",
        "Providers::new reads the whole ConfigFile; it is to take the provider tables and the fixture script alone",
    ),
    (
        "provider/",
        "accounts/",
        "credentials come from Accounts; the providers crate would take a credentials trait",
    ),
    (
        "provider/",
        "tools/mod.rs",
        "ToolSpec, the tool names and Offer live in tools/; the model-facing tool vocabulary moves with the providers crate",
    ),
    // Configuration that reaches up.
    (
        "config/",
        "threads/",
        "the thread defaults (threads/meta.rs) and the home's paths (threads/paths.rs) are read by config; they belong in config",
    ),
    (
        "accounts/store.rs",
        "threads/paths.rs",
        "the home's paths live in threads/paths.rs",
    ),
    (
        "config/mod.rs",
        "tools/web_search.rs",
        "the web search setting's type lives with the tool",
    ),
    // The store's vocabulary still lives in threads/.
    (
        "threads/store/",
        "threads/",
        "the store's vocabulary (errors, index rows, rollout lines, thread metadata, the committer) lives in threads/; it moves with the store crate",
    ),
    // Tools that reach up.
    (
        "command_exec/",
        "threads/meta.rs",
        "sandbox policies of new threads come from threads/meta.rs",
    ),
    (
        "command_exec/process.rs",
        "features.rs",
        "process/* is behind an experimental feature",
    ),
    (
        "hooks/run.rs",
        "threads/meta.rs",
        "the thread settings a hook is shown",
    ),
    (
        "mcp/cli.rs",
        "threads/meta.rs",
        "the home's defaults for `agentwire mcp`",
    ),
    (
        "mcp/mod.rs",
        "plugins/mod.rs",
        "plugins bring MCP servers of their own",
    ),
    (
        "skills.rs",
        "plugins/mod.rs",
        "plugins bring skills of their own",
    ),
];

/// One source file of the engine.
struct Source {
    /// Its module path (`threads::store`), empty for `lib.rs`.
    module: Vec<String>,
    /// Its text with comments, literals and test-only items removed.
    code: String,
    /// Its lines (tests inside it count: a long test module goes to a file of its own).
    lines: usize,
    /// The child modules it declares (`mod x;`), test-only ones left out.
    children: BTreeSet<String>,
}

/// The engine's source folder.
fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Whether `path` matches `prefix` of an allow-list: a folder prefix (`threads/`) matches every
/// file below it, a file name only that file.
fn matches(path: &str, prefix: &str) -> bool {
    if prefix.ends_with('/') {
        path.starts_with(prefix)
    } else {
        path == prefix
    }
}

#[test]
fn engine_structure_holds() {
    let files = read_sources(&src_dir());
    let graph = imports(&files);
    let mut problems = String::new();
    check_cycles(&graph, ALLOWED_CYCLES, "ALLOWED_CYCLES", &mut problems);
    check_cycles(
        &rootless(&graph),
        ALLOWED_ROOTLESS_CYCLES,
        "ALLOWED_ROOTLESS_CYCLES",
        &mut problems,
    );
    check_sizes(&files, &mut problems);
    check_arrows(&files, &graph, &mut problems);
    assert!(
        problems.is_empty(),
        "the engine's structure changed (rules in engine/tests/structure.rs, map in engine/README.md):\n{problems}"
    );
}

/// Prints the import graph's cycles, the largest files and the arrows between parts (run with
/// `--nocapture` when shrinking the lists; `ENGINE_STRUCTURE_SRC=<folder>` reads another copy
/// of the sources, such as an older commit's).
#[test]
fn engine_structure_report() {
    let dir = std::env::var_os("ENGINE_STRUCTURE_SRC").map_or_else(src_dir, PathBuf::from);
    let files = read_sources(&dir);
    let graph = imports(&files);
    let report = |graph: &BTreeMap<String, BTreeSet<String>>, what: &str| {
        let cycles = long_cycles(graph);
        println!("{what}: {} cycle(s) of more than two files", cycles.len());
        for cycle in cycles {
            println!("  {} files: {}", cycle.len(), cycle.join(" "));
        }
    };
    report(&graph, "with lib.rs");
    report(&rootless(&graph), "without lib.rs");
    let mut sizes: Vec<_> = files.iter().map(|(p, s)| (s.lines, p)).collect();
    sizes.sort();
    println!("largest files:");
    for (lines, path) in sizes.iter().rev().take(5) {
        println!("  {lines:>5} {path}");
    }
    let arrows = wrong_way_arrows(&files, &graph);
    println!("{} arrow(s) against the map", arrows.len());
}

/// The checker itself sees what it is meant to see: a three-file cycle, a file-and-child pair
/// that is not one, an over-long file, a test module's imports that are no imports, and paths
/// inside comments and strings that are not imports.
#[test]
fn checker_sees_planted_violations() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("create folder");
        std::fs::write(path, text).expect("write source");
    };
    write("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n");
    write("a.rs", "use crate::b::B;\n// crate::d::D in a comment\n");
    write("b.rs", "pub struct B;\nfn f() { crate::c::g() }\n");
    write(
        "c.rs",
        "pub fn g() { let _ = \"crate::d::x\"; super::a::A }\n",
    );
    write(
        "d/mod.rs",
        &format!(
            "mod e;\nuse e::E;\n{}\n#[cfg(test)]\nmod tests {{\n{}}}\n",
            "const X: u8 = 0;\n".repeat(MAX_LINES),
            "use crate::a::A;\n".repeat(10)
        ),
    );
    write("d/e.rs", "pub struct E;\nuse super::X;\n");
    let files = read_sources(root);
    let graph = imports(&files);
    assert_eq!(
        long_cycles(&graph),
        vec![vec![
            "a.rs".to_owned(),
            "b.rs".to_owned(),
            "c.rs".to_owned()
        ]]
    );
    assert_eq!(files["d/mod.rs"].lines, MAX_LINES + 16);
    assert!(
        !graph["a.rs"].contains("d/mod.rs"),
        "a comment is no import"
    );
    assert!(!graph["c.rs"].contains("d/mod.rs"), "a string is no import");
    assert!(
        !graph["d/mod.rs"].contains("a.rs"),
        "a test module is no import"
    );
    assert!(graph["d/e.rs"].contains("d/mod.rs"));
    assert!(graph["d/mod.rs"].contains("d/e.rs"));
}

/// Every `.rs` file under `root`, by path relative to it, except test-only modules.
fn read_sources(root: &Path) -> BTreeMap<String, Source> {
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

/// `text` without comments, string and char literals and `#[cfg(test)]` items; and the
/// names of child modules declared under `#[cfg(test)]` (`#[cfg(test)] mod x;`).
fn strip(text: &str) -> (String, Vec<String>) {
    let code = strip_literals(text);
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

/// The child modules `code` declares: `mod x;`, `pub mod x;`, `pub(crate) mod x;`.
fn child_modules(code: &str) -> BTreeSet<String> {
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

/// Every module path `code` names, as written (relative paths kept relative): the paths of
/// `use` trees expanded, and `a::b::c` paths in the code.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let tokens = tokens(code);
    let mut paths = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let previous = i.checked_sub(1).map(|p| tokens[p].as_str());
        if tokens[i] == "use" && previous != Some("::") {
            let mut j = i + 1;
            use_tree(&tokens, &mut j, Vec::new(), &mut paths);
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
            paths.push(path);
            i = j;
            continue;
        }
        i += 1;
    }
    paths
}

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
fn imports(files: &BTreeMap<String, Source>) -> BTreeMap<String, BTreeSet<String>> {
    let by_module: BTreeMap<&[String], &str> = files
        .iter()
        .map(|(path, s)| (s.module.as_slice(), path.as_str()))
        .collect();
    let mut graph = BTreeMap::new();
    for (path, source) in files {
        let mut targets = BTreeSet::new();
        for named in named_paths(&source.code) {
            let Some(absolute) = resolve(&source.module, &source.children, &named) else {
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

/// The strongly connected sets of more than two files that hold a cycle longer than two
/// files (a set made only of file-and-file pairs that import each other, in a chain or star,
/// has none), each sorted.
fn long_cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for component in components(graph) {
        if component.len() < 3 {
            continue;
        }
        let members: BTreeSet<&String> = component.iter().collect();
        let mut mutual_pairs = 0;
        let mut one_way = false;
        for from in &component {
            for to in graph[from].iter().filter(|t| members.contains(t)) {
                if graph[to].contains(from) {
                    if from < to {
                        mutual_pairs += 1;
                    }
                } else {
                    one_way = true;
                }
            }
        }
        if one_way || mutual_pairs != component.len() - 1 {
            out.push(component);
        }
    }
    out.sort();
    out
}

/// Tarjan's strongly connected components.
fn components(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.out
}

/// `graph` without the crate root and the arrows to it.
fn rootless(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = graph.clone();
    graph.remove("lib.rs");
    for targets in graph.values_mut() {
        targets.remove("lib.rs");
    }
    graph
}

fn check_cycles(
    graph: &BTreeMap<String, BTreeSet<String>>,
    allowed: &[(&[&str], &str)],
    list: &str,
    problems: &mut String,
) {
    let found = long_cycles(graph);
    let covers = |prefixes: &[&str], cycle: &[String]| {
        cycle
            .iter()
            .all(|file| prefixes.iter().any(|p| matches(file, p)))
    };
    for cycle in &found {
        if !allowed.iter().any(|(prefixes, _)| covers(prefixes, cycle)) {
            let _ = writeln!(
                problems,
                "- a module cycle of {} files (not in {list}): {:?}",
                cycle.len(),
                cycle
            );
        }
    }
    for (prefixes, _) in allowed {
        let covered: Vec<&Vec<String>> = found.iter().filter(|c| covers(prefixes, c)).collect();
        if covered.is_empty() {
            let _ = writeln!(
                problems,
                "- the allowed cycle {prefixes:?} no longer exists: remove it from {list}"
            );
            continue;
        }
        for prefix in *prefixes {
            if !covered.iter().any(|c| c.iter().any(|f| matches(f, prefix))) {
                let _ = writeln!(
                    problems,
                    "- {prefix} is no longer part of a cycle it is allowed in: remove it from {list}"
                );
            }
        }
    }
}

fn check_sizes(files: &BTreeMap<String, Source>, problems: &mut String) {
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
fn wrong_way_arrows<'a>(
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

fn check_arrows(
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
