//! The generated tree the search is timed on: deterministic names, the same on every run.
//!
//! `files` listed files spread over `pkgNN/modNN/` directories (20 files each, so a 100,000-file
//! tree has 5,000 directories), plus directories the root `.gitignore` excludes (`target/`,
//! `node_modules/` and `*.log` files, one ignored entry for every ten listed files) that a
//! search must skip. The tree is kept between runs; a marker file says it is complete.

use std::fmt::Write as _;
use std::path::Path;

/// Words the file names are made of.
const WORDS: [&str; 16] = [
    "widget", "handler", "parser", "config", "session", "render", "buffer", "client", "server",
    "router", "schema", "thread", "index", "cache", "stream", "token",
];
/// Extensions, taken in turn.
const EXTENSIONS: [&str; 6] = ["rs", "ts", "py", "go", "md", "json"];
/// Listed files per directory.
const PER_DIR: usize = 20;
/// Module directories per package.
const MODS: usize = 50;

/// The relative path of listed file `i`.
pub fn listed(i: usize) -> String {
    let dir = i / PER_DIR;
    let (pkg, module) = (dir / MODS, dir % MODS);
    let a = WORDS[i % WORDS.len()];
    let b = WORDS[(i / 7 + 3) % WORDS.len()];
    let ext = EXTENSIONS[i % EXTENSIONS.len()];
    format!("pkg{pkg:02}/mod{module:02}/{a}_{b}_{i}.{ext}")
}

/// Creates the tree under `root` unless a complete one is there already.
pub fn ensure(root: &Path, files: usize) -> Result<(), String> {
    let marker = root.join(format!(".complete-{files}"));
    if marker.is_file() {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(root);
    let io = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
    std::fs::create_dir_all(root).map_err(|e| io(root, e))?;
    std::fs::write(root.join(".gitignore"), "target/\nnode_modules/\n*.log\n")
        .map_err(|e| io(root, e))?;
    let mut body = String::new();
    for i in 0..files {
        let path = root.join(listed(i));
        if i % PER_DIR == 0
            && let Some(dir) = path.parent()
        {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        }
        body.clear();
        let _ = writeln!(body, "// file {i}");
        std::fs::write(&path, &body).map_err(|e| io(&path, e))?;
    }
    let ignored = files / 10;
    for i in 0..ignored {
        let group = i / PER_DIR;
        let path = match i % 3 {
            0 => root.join(format!("target/debug/build{group:03}/widget_out_{i}.rs")),
            1 => root.join(format!("node_modules/dep{group:03}/widget_{i}.js")),
            _ => root.join(format!("pkg{:02}/widget_trace_{i}.log", group % 100)),
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        }
        std::fs::write(&path, "ignored\n").map_err(|e| io(&path, e))?;
    }
    std::fs::write(&marker, "").map_err(|e| io(&marker, e))
}
