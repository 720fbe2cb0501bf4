//! The `SKILLS` and `MEMORY` items: folders copied from the Codex home.
//!
//! A skill is `skills/<name>/` holding a `SKILL.md` (folders whose name begins with `.`, such
//! as Codex's own `.system`, are left out); it is copied into a temporary folder beside its
//! place and renamed there, so a skill is either all there or not at all. The memory is the
//! `memories/` folder (see [`crate::memory`]); its files are put in place one by one, next to
//! what is there, and `consolidated.json` then lists the rollout summaries it was built from.
//!
//! Only folders and regular files are copied (symbolic links and the like are left out, so a
//! copy never reaches outside the folder), within [`MAX_FILES`], [`MAX_BYTES`] and
//! [`MAX_DEPTH`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Importer, Tally};
use crate::memory;

/// Most files one copied folder may hold.
const MAX_FILES: usize = 2000;
/// Most bytes one copied folder may hold.
const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Deepest folder nesting copied.
const MAX_DEPTH: usize = 8;
/// The file that makes a folder a skill.
const SKILL_FILE: &str = "SKILL.md";

/// Every regular file under `root` (relative paths, sorted), or why the folder is not copied.
fn files_under(root: &Path) -> Result<Vec<PathBuf>, String> {
    fn walk(
        root: &Path,
        dir: &Path,
        depth: usize,
        out: &mut Vec<PathBuf>,
        bytes: &mut u64,
    ) -> Result<(), String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let kind = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            let path = entry.path();
            if kind.is_dir() {
                if depth >= MAX_DEPTH {
                    return Err(format!(
                        "{}: nested deeper than {MAX_DEPTH} folders",
                        root.display()
                    ));
                }
                walk(root, &path, depth + 1, out, bytes)?;
            } else if kind.is_file() {
                let size = entry
                    .metadata()
                    .map_err(|e| format!("{}: {e}", path.display()))?
                    .len();
                *bytes = bytes.saturating_add(size);
                if out.len() >= MAX_FILES || *bytes > MAX_BYTES {
                    return Err(format!(
                        "{}: more than {MAX_FILES} files or {MAX_BYTES} bytes",
                        root.display()
                    ));
                }
                if let Ok(relative) = path.strip_prefix(root) {
                    out.push(relative.to_owned());
                }
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(root, root, 0, &mut out, &mut 0)?;
    out.sort();
    Ok(out)
}

/// Copies `relative` files of `from` into `to` (creating folders; files are read as regular
/// files only).
fn copy_files(from: &Path, to: &Path, relative: &[PathBuf]) -> Result<(), String> {
    for file in relative {
        let source = from.join(file);
        let target = to.join(file);
        let (bytes, _) = agentwire_support::regular_file::read_regular(&source, MAX_BYTES)
            .map_err(|e| format!("{}: {e}", source.display()))?;
        agentwire_support::atomic_file::replace(&target, &bytes, None)
            .map_err(|e| format!("{}: {e}", target.display()))?;
    }
    Ok(())
}

/// Whether `name` can name a folder of its own under a skills folder.
fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\', '\0'])
}

/// The skills of the Codex home, by folder name.
fn codex_skills(importer: &Importer) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(importer.codex.join("skills")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| std::fs::symlink_metadata(e.path().join(SKILL_FILE)).is_ok_and(|m| m.is_file()))
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| plain_name(n))
        .collect();
    names.sort();
    names
}

/// The Codex skills this home does not have (by name).
pub(crate) fn pending_skills(importer: &Importer) -> Vec<String> {
    let here = importer.home.join("skills");
    codex_skills(importer)
        .into_iter()
        .filter(|name| std::fs::symlink_metadata(here.join(name)).is_err())
        .collect()
}

/// Imports the `SKILLS` item: the Codex skills of `names` (or all).
pub(crate) fn import_skills(
    importer: &Importer,
    names: Option<&BTreeSet<String>>,
    tally: &mut Tally,
) {
    let available = codex_skills(importer);
    if let Some(names) = names {
        for name in names.iter().filter(|n| !available.contains(n)) {
            tally.fail(
                "validate",
                "skill_missing",
                Some(name.clone()),
                format!(
                    "`{name}`: no skill of that name in {}/skills",
                    importer.codex.display()
                ),
            );
        }
    }
    for name in available {
        if names.is_some_and(|names| !names.contains(&name)) {
            continue;
        }
        let from = importer.codex.join("skills").join(&name);
        let to = importer.home.join("skills").join(&name);
        let source = from.display().to_string();
        let target = to.display().to_string();
        if std::fs::symlink_metadata(&to).is_ok() {
            let same = std::fs::read(from.join(SKILL_FILE)).ok()
                == std::fs::read(to.join(SKILL_FILE)).ok();
            if same {
                tally.ok(source, target, None);
            } else {
                tally.fail(
                    "write",
                    "skill_conflict",
                    Some(source),
                    format!("`{name}`: {target} already holds a different skill; it was kept"),
                );
            }
            continue;
        }
        match copy_skill(&from, &to) {
            Ok(()) => tally.ok(source, target, None),
            Err(reason) => tally.fail("write", "skill_copy", Some(source), reason),
        }
    }
}

/// Copies the skill folder `from` to `to` (which does not exist) through a temporary folder.
fn copy_skill(from: &Path, to: &Path) -> Result<(), String> {
    let files = files_under(from)?;
    let parent = to.parent().ok_or("the skills folder has no parent")?;
    let name = to.file_name().and_then(|n| n.to_str()).unwrap_or("skill");
    let temp = parent.join(format!(".import-{name}-{}", uuid::Uuid::now_v7()));
    let result = copy_files(from, &temp, &files).and_then(|()| {
        std::fs::create_dir_all(&temp).map_err(|e| format!("{}: {e}", temp.display()))?;
        std::fs::rename(&temp, to).map_err(|e| format!("{}: {e}", to.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&temp);
    }
    result
}

/// The Codex memory summary, when it is there and not blank.
fn codex_summary(importer: &Importer) -> Option<Vec<u8>> {
    let path = importer.codex.join(memory::DIR).join(memory::SUMMARY);
    let (bytes, longer) = agentwire_support::regular_file::read_regular(&path, MAX_BYTES).ok()?;
    (!longer && !String::from_utf8_lossy(&bytes).trim().is_empty()).then_some(bytes)
}

/// The files of the Codex memory (relative names) when this home has no memory summary yet.
pub(crate) fn pending_memory(importer: &Importer) -> Option<Vec<String>> {
    codex_summary(importer)?;
    if memory::read_summary(&importer.home).is_some() {
        return None;
    }
    let files = files_under(&importer.codex.join(memory::DIR)).ok()?;
    Some(files.iter().map(|f| f.display().to_string()).collect())
}

/// Imports the `MEMORY` item: Codex's memory folder, when this home has no summary (or the
/// same one).
pub(crate) fn import_memory(importer: &Importer, tally: &mut Tally) {
    let from = importer.codex.join(memory::DIR);
    let to = memory::dir(&importer.home);
    let source = from.display().to_string();
    let Some(summary) = codex_summary(importer) else {
        tally.fail(
            "read",
            "memory_missing",
            Some(source),
            format!(
                "{}: no memory summary to import",
                from.join(memory::SUMMARY).display()
            ),
        );
        return;
    };
    if memory::read_summary(&importer.home).is_some() {
        let ours = std::fs::read(to.join(memory::SUMMARY)).ok();
        if ours.as_deref() == Some(summary.as_slice()) {
            tally.ok(source, to.display().to_string(), None);
        } else {
            tally.fail(
                "write",
                "memory_conflict",
                Some(source),
                format!(
                    "{} already holds a memory summary; it was kept (forget it with memory/reset to import Codex's)",
                    to.display()
                ),
            );
        }
        return;
    }
    let files = match files_under(&from) {
        Ok(files) => files,
        Err(reason) => {
            tally.fail("read", "memory_unreadable", Some(source), reason);
            return;
        }
    };
    // What is here already (but the summary) stays; the summary goes in last, so a memory
    // is never shown without what it was built from.
    let (last, rest): (Vec<PathBuf>, Vec<PathBuf>) = files
        .into_iter()
        .filter(|f| {
            f == Path::new(memory::SUMMARY) || std::fs::symlink_metadata(to.join(f)).is_err()
        })
        .partition(|f| f == Path::new(memory::SUMMARY));
    let summaries: BTreeSet<String> = rest
        .iter()
        .filter(|f| f.starts_with("rollout_summaries"))
        .filter_map(|f| f.file_stem().and_then(|s| s.to_str()).map(str::to_owned))
        .collect();
    let copied = copy_files(&from, &to, &rest)
        .and_then(|()| {
            let mut threads = memory::consolidated(&importer.home);
            threads.extend(summaries);
            memory::write_consolidated(&importer.home, &threads)
                .map_err(|e| format!("{}: {e}", to.display()))
        })
        .and_then(|()| copy_files(&from, &to, &last));
    match copied {
        Ok(()) => {
            for file in rest.iter().chain(&last) {
                tally.ok(
                    from.join(file).display().to_string(),
                    to.join(file).display().to_string(),
                    None,
                );
            }
        }
        Err(reason) => tally.fail("write", "memory_copy", Some(source), reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_listed_without_its_links() {
        let root = tempfile::tempdir().expect("root");
        let skill = root.path().join("lint");
        std::fs::create_dir_all(skill.join("scripts")).expect("dirs");
        std::fs::write(skill.join(SKILL_FILE), "---\nname: lint\n---\n").expect("skill");
        std::fs::write(skill.join("scripts/run.sh"), "echo").expect("script");
        std::os::unix::fs::symlink("/etc/passwd", skill.join("passwd")).expect("link");
        let files = files_under(&skill).expect("list");
        assert_eq!(
            files,
            [PathBuf::from(SKILL_FILE), PathBuf::from("scripts/run.sh")]
        );
        let to = root.path().join("home/skills/lint");
        copy_skill(&skill, &to).expect("copy");
        assert_eq!(
            std::fs::read_to_string(to.join("scripts/run.sh")).expect("read"),
            "echo"
        );
        assert!(std::fs::symlink_metadata(to.join("passwd")).is_err());
        assert!(plain_name("lint") && !plain_name(".system") && !plain_name("a/b"));
    }
}
