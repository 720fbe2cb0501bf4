//! The engine's structure, read from its own imports (issue 35, item 1).
//!
//! Every non-test source file of the engine is read (comments, string literals and
//! `#[cfg(test)]` items removed) and each path it names that starts with `crate::`, `super::`,
//! `self::` or one of its own child modules is resolved to the file that declares the module.
//! That gives a graph of files, and rules over it:
//!
//! 1. no module cycle longer than two files (a file and its child that import each other are
//!    fine; three files that go round are not);
//! 2. no non-test file over [`MAX_LINES`](sizes::MAX_LINES) lines (a file declared under `#[cfg(test)]` is a
//!    test file; a test module inside a file counts);
//! 3. arrows between the parts go one way, as the map in `engine/README.md` says: a part uses
//!    only the parts listed below it there ([`PARTS`](map::PARTS) is that map, in the same order);
//! 4. no crate of the workspace holds more than a third of its code ([`crates`]).
//!
//! Rules 1 and 2 hold for the crates split off the engine too (every workspace member below
//! `engine/`, see [`part_crates`]), with no allow-list; between crates Cargo itself keeps the
//! arrows one-way.
//!
//! Today's violations are listed in [`ALLOWED_CYCLES`](allow::ALLOWED_CYCLES) (and
//! [`ALLOWED_ROOTLESS_CYCLES`](allow::ALLOWED_ROOTLESS_CYCLES), the
//! cycles that show once the crate root is left out), [`ALLOWED_SIZES`](allow::ALLOWED_SIZES),
//! [`ALLOWED_ARROWS`](allow::ALLOWED_ARROWS) and [`ALLOWED_CRATE_SHARES`](allow::ALLOWED_CRATE_SHARES), one reason each. The lists must only shrink: a new violation fails the
//! test, and so does an entry that no longer happens (remove it, or write the smaller cycle).
//!
//! The checker's parts: `sources.rs` reads the files (comments, literals and tests removed),
//! `imports.rs` turns their paths into the import graph, `cycles.rs`, `sizes.rs`, `map.rs` and
//! `crates.rs` hold one rule each, and `allow.rs` holds today's allow-lists.

mod allow;
mod crates;
mod cycles;
mod imports;
mod map;
mod sizes;
mod sources;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use allow::{ALLOWED_CRATE_SHARES, ALLOWED_CYCLES, ALLOWED_ROOTLESS_CYCLES, ALLOWED_SIZES};
use crates::{check_crate_shares, crate_sizes};
use cycles::{check_cycles, long_cycles, rootless};
use imports::imports;
use map::{check_arrows, wrong_way_arrows};
use sizes::{MAX_LINES, check_sizes};
use sources::read_sources;

/// The engine crate's folder.
fn engine_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The engine's source folder.
fn src_dir() -> PathBuf {
    engine_dir().join("src")
}

/// The crates split off the engine: the workspace members in a folder below `engine/`, each
/// held to rules 1 and 2 with no allow-list (a new one is checked as soon as it is a member).
fn part_crates(members: &[(String, usize)]) -> Vec<&str> {
    members
        .iter()
        .filter_map(|(member, _)| member.strip_prefix("engine/").map(|_| member.as_str()))
        .collect()
}

/// The workspace's folder.
fn workspace_dir() -> &'static Path {
    engine_dir()
        .parent()
        .expect("the engine is a member of the workspace")
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
    check_sizes(&files, ALLOWED_SIZES, &mut problems);
    check_arrows(&files, &graph, &mut problems);
    let sizes = crate_sizes(workspace_dir());
    for member in part_crates(&sizes) {
        let files = read_sources(&workspace_dir().join(member).join("src"));
        let mut found = String::new();
        check_cycles(&imports(&files), &[], "any allow-list", &mut found);
        check_sizes(&files, &[], &mut found);
        for line in found.lines() {
            let _ = writeln!(problems, "{line} (in {member})");
        }
    }
    check_crate_shares(&sizes, ALLOWED_CRATE_SHARES, &mut problems);
    assert!(
        problems.is_empty(),
        "the engine's structure changed (rules in engine/tests/structure/, allow-lists in its allow.rs, map in engine/README.md):\n{problems}"
    );
}

/// Prints the import graph's cycles, the largest files, the arrows between parts and the crates'
/// shares of the code (run with
/// `--nocapture` when shrinking the lists; `ENGINE_STRUCTURE_SRC=<folder>` reads another copy
/// of the sources, such as an older commit's or a split crate's; `ENGINE_STRUCTURE_EDGES=1`
/// prints the imports inside each cycle, which show where to cut it).
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
            if std::env::var_os("ENGINE_STRUCTURE_EDGES").is_some() {
                for from in &cycle {
                    let to: Vec<_> = graph[from]
                        .iter()
                        .filter(|t| cycle.contains(t))
                        .cloned()
                        .collect();
                    println!("    {from} -> {}", to.join(" "));
                }
            }
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
    let sizes = crate_sizes(workspace_dir());
    let total: usize = sizes.iter().map(|(_, lines)| lines).sum();
    println!(
        "crates by lines of code (a third of the {total} is {}):",
        total / 3
    );
    for (member, lines) in &sizes {
        println!("  {lines:>6} {:>3}% {member}", lines * 100 / total.max(1));
    }
    println!(
        "crates split off the engine (rules 1 and 2, no allow-list): {}",
        part_crates(&sizes).join(", ")
    );
}

/// The checker itself sees what it is meant to see: a three-file cycle, a file-and-child pair
/// that is not one, an over-long file, a test module's imports that are no imports, paths
/// inside comments and strings that are not imports, `super::` inside an inline module, and a
/// restricted visibility (`pub(in crate::x)`) that is no import.
#[test]
fn checker_sees_planted_violations() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("create folder");
        std::fs::write(path, text).expect("write source");
    };
    write(
        "lib.rs",
        "mod a;\nmod b;\nmod c;\nmod d;\nmod f;\nmod g;\nmod h;\nmod i;\n",
    );
    // i → h → g, and g's visibility names i without using it: no cycle.
    write("g.rs", "pub(in crate::i) fn x() {}\n");
    write("h.rs", "pub fn y() { crate::g::x() }\n");
    write("i.rs", "pub fn z() { crate::h::y() }\n");
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
    write(
        "f.rs",
        "pub fn g() {}\nmod imp {\n    use super::g;\n    fn h() { super::super::a::A }\n}\n",
    );
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
    assert_eq!(
        graph["f.rs"],
        BTreeSet::from(["a.rs".to_owned()]),
        "`super::` inside an inline module starts from that module"
    );
}

/// The crate-share rule sees a crate over a third, and an allowance no longer needed.
#[test]
fn crate_share_rule_sees_planted_violations() {
    let sizes = [
        ("engine".to_owned(), 10),
        ("a".to_owned(), 50),
        ("b".to_owned(), 40),
    ];
    let mut problems = String::new();
    check_crate_shares(&sizes, &[("engine", "being split")], &mut problems);
    let lines: Vec<&str> = problems.lines().collect();
    assert_eq!(lines.len(), 3, "{problems}");
    assert!(lines[0].starts_with("- the crate in engine now holds 10 of 100"));
    assert!(lines[1].starts_with("- the crate in a holds 50 of the workspace's 100"));
    assert!(lines[2].starts_with("- the crate in b holds 40 of the workspace's 100"));
}
