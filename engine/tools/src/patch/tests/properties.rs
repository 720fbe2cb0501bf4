//! Properties over arbitrary input: a patch built from the diff of any edit applies and
//! yields the edited text; parsing and matching never panic.

use proptest::prelude::*;
use similar::{Algorithm, DiffTag, capture_diff_slices, group_diff_ops};

use super::super::edit::apply_hunks;
use super::super::locate::find;
use super::super::parse::FileOp;
use super::super::{apply, parse};
use super::TempDir;

/// A line of a file: mostly one of three (`""`, `a`, `b`) or from a tiny alphabet (so lines repeat and matches are ambiguous),
/// sometimes any printable text. Never `\n` or `\r`.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[ab]?",
        3 => "[ab \t]{0,3}",
        1 => "\\PC{0,12}",
    ]
}

/// A file's lines: arbitrary, or a block repeated around a middle (so that a hunk's lines
/// also occur earlier in the file).
fn file() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        prop::collection::vec(line(), 0..40),
        (
            prop::collection::vec(line(), 1..12),
            prop::collection::vec(line(), 0..3)
        )
            .prop_map(|(block, middle)| [block.clone(), middle, block].concat()),
    ]
}

/// One edit step: (what, where (scaled to the file), a line to insert or substitute).
fn step() -> impl Strategy<Value = (u8, usize, String)> {
    (0u8..3, any::<usize>(), line())
}

/// `lines` with `steps` applied: 0 inserts, 1 removes, 2 replaces a line.
fn edited(lines: &[String], steps: &[(u8, usize, String)]) -> Vec<String> {
    let mut out = lines.to_vec();
    for (what, at, text) in steps {
        match what {
            0 => {
                let at = at % (out.len() + 1);
                out.insert(at, text.clone());
            }
            _ if out.is_empty() => {}
            1 => {
                let at = at % out.len();
                out.remove(at);
            }
            _ => {
                let at = at % out.len();
                out[at] = text.clone();
            }
        }
    }
    out
}

/// The update section that turns `old` into `new`: the diff's hunks with three lines of
/// context; a hunk whose old lines would first be found earlier than where they belong gets
/// its context extended back to the end of the previous hunk, so that it is unambiguous.
fn update_section(path: &str, old: &[String], new: &[String]) -> String {
    let old_refs: Vec<&str> = old.iter().map(String::as_str).collect();
    let new_refs: Vec<&str> = new.iter().map(String::as_str).collect();
    let ops = capture_diff_slices(Algorithm::Myers, &old_refs, &new_refs);
    let mut text = format!("*** Update File: {path}\n");
    let mut cursor = 0;
    for group in group_diff_ops(ops, 3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (mut start, end) = (first.old_range().start, last.old_range().end);
        if start < end && find(&old_refs, &old_refs[start..end], cursor) != Ok(start) {
            start = cursor;
        }
        text.push_str("@@\n");
        for line in &old[start..first.old_range().start] {
            text.push_str(&format!(" {line}\n"));
        }
        for op in &group {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            match tag {
                DiffTag::Equal => old[old_range]
                    .iter()
                    .for_each(|l| text.push_str(&format!(" {l}\n"))),
                DiffTag::Delete => old[old_range]
                    .iter()
                    .for_each(|l| text.push_str(&format!("-{l}\n"))),
                DiffTag::Insert => new[new_range]
                    .iter()
                    .for_each(|l| text.push_str(&format!("+{l}\n"))),
                DiffTag::Replace => {
                    old[old_range]
                        .iter()
                        .for_each(|l| text.push_str(&format!("-{l}\n")));
                    new[new_range]
                        .iter()
                        .for_each(|l| text.push_str(&format!("+{l}\n")));
                }
            }
        }
        if start < end && end == old.len() {
            text.push_str("*** End of File\n");
        }
        cursor = end;
    }
    text
}

/// `lines` as file text, with or without a final newline.
fn text(lines: &[String], final_newline: bool) -> String {
    let mut text = lines.join("\n");
    if final_newline && !lines.is_empty() {
        text.push('\n');
    }
    text
}

#[test]
fn a_repeated_block_is_edited_where_the_diff_says() {
    let lines = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let old = lines("1 2 3 D 4 5 6 Z 1 2 3 D 4 5 6 Y");
    let new = lines("1 2 3 D 4 5 6 Z 1 2 3 E 4 5 6 Y");
    let body = update_section("f.txt", &old, &new);
    let dir = TempDir::new("repeat");
    std::fs::write(dir.path().join("f.txt"), text(&old, true)).expect("write");
    let patch = parse(&format!("*** Begin Patch\n{body}*** End Patch\n")).expect("parse");
    apply(&patch, dir.path(), None).expect("apply");
    assert_eq!(dir.read("f.txt"), text(&new, true), "patch:\n{body}");
}

proptest! {
    #[test]
    fn a_patch_built_from_a_diff_yields_the_edited_file(
        old in file(),
        steps in prop::collection::vec(step(), 1..8),
        final_newline in any::<bool>(),
    ) {
        let new = edited(&old, &steps);
        prop_assume!(old != new);
        // Without a final newline, a last line that is empty cannot be told apart from none;
        // and an empty file gains a final newline when lines are added.
        let final_newline = final_newline
            || old.is_empty()
            || old.last().is_some_and(String::is_empty)
            || new.last().is_some_and(String::is_empty);
        let dir = TempDir::new("prop");
        std::fs::write(dir.path().join("f.txt"), text(&old, final_newline)).expect("write");
        let body = update_section("f.txt", &old, &new);
        let patch = parse(&format!("*** Begin Patch\n{body}*** End Patch\n"))
            .map_err(|e| TestCaseError::fail(format!("{e}\n{body}")))?;
        apply(&patch, dir.path(), Some(&[dir.path().to_path_buf()]))
            .map_err(|e| TestCaseError::fail(format!("{e}\n{body}")))?;
        prop_assert_eq!(dir.read("f.txt"), text(&new, final_newline), "patch:\n{}", body);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_text(text in "\\PC*") {
        let _ = parse(&text);
    }

    #[test]
    fn parse_and_match_never_panic_on_patch_shaped_text(
        lines in prop::collection::vec(
            prop_oneof![
                Just("*** Begin Patch".to_owned()),
                Just("*** End Patch".to_owned()),
                Just("*** Add File: a".to_owned()),
                Just("*** Delete File: a".to_owned()),
                Just("*** Update File: a".to_owned()),
                Just("*** Move to: b".to_owned()),
                Just("*** End of File".to_owned()),
                Just("@@".to_owned()),
                Just(String::new()),
                "(@@ |[ +-])?[ab\r \t]{0,3}",
            ],
            0..24,
        ),
        file in "[ab\n\r \t]{0,16}",
    ) {
        let text = lines.join("\n");
        for text in [text.clone(), format!("*** Begin Patch\n{text}\n*** End Patch")] {
            if let Ok(patch) = parse(&text) {
                for op in &patch.files {
                    if let FileOp::Update { path, hunks, .. } = op {
                        let _ = apply_hunks(path, &file, hunks);
                    }
                }
            }
        }
    }
}
