//! What a model call sees before the conversation, placed as the reference server places it:
//!
//! - the base instructions: the thread's `baseInstructions` (`thread/start`), else the file
//!   `model_instructions_file` names, else `instructions` in `config.toml`, else our own
//!   ([`BUILT_IN`], `base_instructions.md`: how to use the shell, patch and plan tools, sandbox
//!   and approval etiquette, how to report). An empty text sends none. They open the call: the
//!   first developer message on the Responses wire, the system message on the chat wire;
//! - its `developerInstructions` follow as a developer message (on the chat wire joined to the
//!   system message: see `provider::openai::request`);
//! - the project docs follow as a user message ([`HistoryEntry::Context`]): for every
//!   directory from the repository root (the nearest ancestor of `cwd` holding `.git`; `cwd`
//!   alone when there is none) down to `cwd`, its `AGENTS.override.md` when it has one (it
//!   takes the place of that directory's `AGENTS.md`), else its `AGENTS.md`; joined by a blank
//!   line in that order and capped at `project_doc_max_bytes` (32 KiB unless configured; `0`
//!   reads none):
//!
//! ```text
//! # AGENTS.md instructions for <cwd>
//!
//! <INSTRUCTIONS>
//! <the docs>
//! </INSTRUCTIONS>
//! ```
//!
//! The docs are read when a turn starts, so an edit shows in the next turn. None of these is
//! recorded in the thread: they are context, rebuilt for every call. The environment context
//! ([`super::environment`]) follows them, inside the conversation.

use std::path::{Path, PathBuf};

use agentwire_config::layers::project_dirs;
use agentwire_protocol::LegacyAppPathString;
use agentwire_providers::HistoryEntry;

/// The file name of a project doc.
pub(crate) const PROJECT_DOC: &str = "AGENTS.md";

/// The file name of a project doc that takes the place of [`PROJECT_DOC`] in its directory.
pub(crate) const PROJECT_DOC_OVERRIDE: &str = "AGENTS.override.md";

/// agentwire's own base instructions for a coding agent, sent when none are configured.
pub(crate) const BUILT_IN: &str = include_str!("base_instructions.md");

/// The base instructions a call of a thread whose settings hold `configured` sends: those,
/// else [`BUILT_IN`]; `None` when they are empty (configured to send none).
pub(crate) fn base_instructions(configured: Option<&str>) -> Option<String> {
    let text = configured.unwrap_or(BUILT_IN);
    (!text.trim().is_empty()).then(|| text.to_owned())
}

pub(crate) use agentwire_config::defaults::DEFAULT_PROJECT_DOC_MAX_BYTES;

/// The project docs that apply in `cwd`, joined and cut to `max_bytes` (at a character
/// boundary); `None` when there are none (or `max_bytes` is 0). Unreadable files are skipped
/// with a warning; a file that is not UTF-8 is read lossily.
pub(crate) fn project_docs(cwd: &Path, max_bytes: u64) -> Option<String> {
    let docs: Vec<String> = read_docs(cwd, max_bytes)
        .into_iter()
        .map(|(_, text)| text)
        .collect();
    (!docs.is_empty()).then(|| docs.join("\n\n"))
}

/// The project doc files whose text [`project_docs`] uses, root first (`thread/start`'s
/// `instructionSources`).
pub(crate) fn project_doc_sources(cwd: &Path, max_bytes: u64) -> Vec<PathBuf> {
    read_docs(cwd, max_bytes)
        .into_iter()
        .map(|(path, _)| path)
        .collect()
}

/// Each project doc of `cwd` with text, and the text it gives within the budget `max_bytes`.
#[allow(
    clippy::disallowed_methods,
    reason = "project docs are read on the blocking pool (a turn's `context_entries`, `thread/sample`, `thread/start`)"
)]
fn read_docs(cwd: &Path, max_bytes: u64) -> Vec<(PathBuf, String)> {
    let mut budget = max_bytes;
    let mut docs = Vec::new();
    for dir in project_dirs(cwd) {
        if budget == 0 {
            break;
        }
        let Some(path) = [PROJECT_DOC_OVERRIDE, PROJECT_DOC]
            .iter()
            .map(|name| dir.join(name))
            .find(|path| path.is_file())
        else {
            continue;
        };
        // Opened without blocking and read only as a regular file, at most the budget: a FIFO
        // swapped in for the doc must not hang the turn (issue #32).
        let bytes = match agentwire_support::regular_file::read_regular(&path, budget) {
            Ok((bytes, _)) => bytes,
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "project doc not read");
                continue;
            }
        };
        budget -= u64::try_from(bytes.len()).unwrap_or(budget);
        let text = cut_to_chars(&bytes);
        if text.trim().is_empty() {
            continue;
        }
        docs.push((path, text));
    }
    docs
}

/// [`project_doc_sources`] as the wire's `instructionSources`.
pub(crate) fn instruction_sources(cwd: &str, max_bytes: u64) -> Vec<LegacyAppPathString> {
    project_doc_sources(Path::new(cwd), max_bytes)
        .into_iter()
        .map(|path| LegacyAppPathString(path.to_string_lossy().into_owned()))
        .collect()
}

/// `bytes` as text; a character cut short by the cap at the end is dropped, other invalid
/// sequences are replaced.
fn cut_to_chars(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(error) if error.error_len().is_none() => {
            String::from_utf8_lossy(&bytes[..error.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// The user message carrying `docs`, the project docs for `cwd`.
pub(crate) fn project_doc_message(cwd: &str, docs: &str) -> String {
    format!("# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\n{docs}\n</INSTRUCTIONS>")
}

/// The entries that open every model call of a turn in `cwd`: the developer instructions and
/// the project docs (capped at `max_bytes`), each when there are any.
pub(crate) fn context_entries(
    cwd: &str,
    developer_instructions: Option<&str>,
    max_bytes: u64,
) -> Vec<HistoryEntry> {
    let mut entries = Vec::new();
    if let Some(text) = developer_instructions.filter(|t| !t.trim().is_empty()) {
        entries.push(HistoryEntry::Developer {
            text: text.to_owned(),
        });
    }
    if let Some(docs) = project_docs(Path::new(cwd), max_bytes) {
        entries.push(HistoryEntry::Context {
            text: project_doc_message(cwd, &docs),
        });
    }
    entries
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests set up their files")]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "agentwire-instructions-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    #[test]
    fn docs_run_from_the_repository_root_down_to_cwd_within_the_cap() {
        let root = scratch("docs");
        let deep = root.join("repo/a/b");
        std::fs::create_dir_all(&deep).expect("dirs");
        std::fs::create_dir_all(root.join("repo/.git")).expect("git");
        std::fs::write(root.join("AGENTS.md"), "outside the repository").expect("write");
        std::fs::write(root.join("repo/AGENTS.md"), "root doc").expect("write");
        std::fs::write(root.join("repo/a/AGENTS.md"), "   \n").expect("write");
        std::fs::write(deep.join("AGENTS.md"), "deep doc").expect("write");
        assert_eq!(
            project_docs(&deep, 1024).as_deref(),
            Some("root doc\n\ndeep doc")
        );
        assert_eq!(project_docs(&deep, 6).as_deref(), Some("root d"));
        assert_eq!(
            project_doc_sources(&deep, 1024),
            vec![root.join("repo/AGENTS.md"), deep.join("AGENTS.md")]
        );
        assert_eq!(
            project_doc_sources(&deep, 8),
            vec![root.join("repo/AGENTS.md")]
        );
        assert_eq!(project_docs(&deep, 0), None);
        // No repository: only cwd's own doc.
        let plain = scratch("plain");
        std::fs::write(plain.join("AGENTS.md"), "only").expect("write");
        assert_eq!(project_docs(&plain, 100).as_deref(), Some("only"));
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_dir_all(&plain);
    }

    #[test]
    fn an_override_takes_the_place_of_agents_md_in_its_directory() {
        let root = scratch("override");
        let sub = root.join("sub");
        std::fs::create_dir_all(root.join(".git")).expect("git");
        std::fs::create_dir_all(&sub).expect("dirs");
        std::fs::write(root.join("AGENTS.md"), "root doc").expect("write");
        std::fs::write(sub.join("AGENTS.md"), "shadowed").expect("write");
        std::fs::write(sub.join(PROJECT_DOC_OVERRIDE), "override").expect("write");
        assert_eq!(
            project_docs(&sub, 1024).as_deref(),
            Some("root doc\n\noverride")
        );
        assert_eq!(
            project_doc_sources(&sub, 1024),
            vec![root.join("AGENTS.md"), sub.join(PROJECT_DOC_OVERRIDE)]
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn built_in_base_instructions_unless_configured_and_empty_sends_none() {
        let built_in = base_instructions(None).expect("built in");
        assert_eq!(built_in, BUILT_IN);
        for tool in [
            "`shell`",
            "`apply_patch`",
            "`update_plan`",
            "require_escalated",
        ] {
            assert!(built_in.contains(tool), "{tool}");
        }
        assert_eq!(base_instructions(Some("mine")).as_deref(), Some("mine"));
        assert_eq!(base_instructions(Some("  \n")), None);
    }

    #[test]
    fn a_cap_inside_a_character_drops_it() {
        let dir = scratch("utf8");
        std::fs::write(dir.join("AGENTS.md"), "aé").expect("write");
        assert_eq!(project_docs(&dir, 2).as_deref(), Some("a"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn context_has_developer_then_docs() {
        let dir = scratch("context");
        std::fs::write(dir.join("AGENTS.md"), "be careful").expect("write");
        let cwd = dir.to_string_lossy().into_owned();
        let entries = context_entries(&cwd, Some("dev says"), 100);
        assert_eq!(
            entries,
            vec![
                HistoryEntry::Developer {
                    text: "dev says".to_owned()
                },
                HistoryEntry::Context {
                    text: format!(
                        "# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\nbe careful\n</INSTRUCTIONS>"
                    ),
                },
            ]
        );
        assert!(context_entries(&cwd, Some("  "), 0).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
