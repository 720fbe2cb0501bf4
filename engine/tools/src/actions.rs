//! What a command line is recognised to do: the `commandActions` of a `commandExecution` item
//! and its approval request (whether it is known to only read is `safe_commands`).
//!
//! Recognition is deliberately shallow: a single simple command (no pipes, redirections,
//! substitutions or chains) whose program is on a short list. Anything else is `unknown`, and
//! never "known safe".

use agentwire_protocol::{CommandAction, LegacyAppPathString};

/// Characters that make a command line more than one simple command.
const SHELL_SYNTAX: &[char] = &[
    ';', '&', '|', '<', '>', '$', '`', '(', ')', '{', '}', '\n', '\r', '*', '?', '[', '~', '\\',
    '"', '\'', '!', '#',
];

/// The words of a simple command line, or `None` when it uses shell syntax beyond words.
fn simple_words(line: &str) -> Option<Vec<&str>> {
    if line.contains(SHELL_SYNTAX) {
        return None;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    (!words.is_empty()).then_some(words)
}

/// The words of the command `argv` runs: the line of `bash -c LINE` split into simple words,
/// or the argv itself.
pub(super) fn words(argv: &[String]) -> Option<Vec<String>> {
    match argv {
        [shell, flag, line] if (shell == "bash" || shell == "sh") && flag == "-c" => {
            simple_words(line).map(|w| w.into_iter().map(str::to_owned).collect())
        }
        [] => None,
        argv => Some(argv.to_vec()),
    }
}

/// What `argv` (shown to the user as `display`) does, resolving paths against `cwd`.
pub fn describe(argv: &[String], display: &str, cwd: &str) -> Vec<CommandAction> {
    let unknown = || vec![CommandAction::unknown().command(display.to_owned()).build()];
    let Some(words) = words(argv) else {
        return unknown();
    };
    let program = words[0].rsplit('/').next().unwrap_or_default();
    let operands: Vec<&String> = words[1..].iter().filter(|w| !w.starts_with('-')).collect();
    let absolute = |path: &str| {
        if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("{}/{path}", cwd.trim_end_matches('/'))
        }
    };
    match (program, operands.as_slice()) {
        ("cat" | "head" | "tail" | "nl", [path]) => vec![
            CommandAction::read()
                .command(display.to_owned())
                .name(path.rsplit('/').next().unwrap_or(path).to_owned())
                .path(LegacyAppPathString(absolute(path)))
                .build(),
        ],
        ("ls" | "tree", []) => vec![
            CommandAction::list_files()
                .command(display.to_owned())
                .build(),
        ],
        ("ls" | "tree", [path]) => vec![
            CommandAction::list_files()
                .command(display.to_owned())
                .path((*path).clone())
                .build(),
        ],
        ("grep" | "rg", [query, rest @ ..]) if rest.len() <= 1 => vec![
            CommandAction::search()
                .command(display.to_owned())
                .query((*query).clone())
                .maybe_path(rest.first().map(|p| (*p).clone()))
                .build(),
        ],
        _ => unknown(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Vec<String> {
        vec!["bash".to_owned(), "-c".to_owned(), text.to_owned()]
    }

    #[test]
    fn describes_reads_listings_and_searches() {
        assert_eq!(
            describe(&line("cat src/a.rs"), "cat src/a.rs", "/w"),
            vec![
                CommandAction::read()
                    .command("cat src/a.rs".to_owned())
                    .name("a.rs".to_owned())
                    .path(LegacyAppPathString("/w/src/a.rs".to_owned()))
                    .build()
            ]
        );
        assert!(matches!(
            describe(&line("rg -n needle src"), "rg -n needle src", "/w")[0],
            CommandAction::Search { .. }
        ));
        assert!(matches!(
            describe(&line("ls"), "ls", "/w")[0],
            CommandAction::ListFiles { path: None, .. }
        ));
        assert!(matches!(
            describe(&line("make | tee log"), "make | tee log", "/w")[0],
            CommandAction::Unknown { .. }
        ));
    }
}
