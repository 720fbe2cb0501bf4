//! The parser: the accepted shapes, and errors that name the patch line and what was
//! expected.

use super::super::parse::{FileOp, Hunk, MAX_PATCH_BYTES};
use super::super::{PatchError, parse};
use super::patch;

/// The error message for `text`.
fn error(text: &str) -> String {
    match parse(text) {
        Err(PatchError(message)) => message,
        Ok(patch) => panic!("expected an error, parsed {patch:?}"),
    }
}

/// A hunk from its parts (`body` as in a patch).
fn hunk(anchors: &[&str], body: &str, end_of_file: bool) -> Hunk {
    Hunk::from_body(anchors, body, end_of_file)
}

#[test]
fn parses_every_section_kind() {
    let parsed = patch(
        "*** Add File: new/file.txt\n+one\n+\n+three\n\
         *** Delete File: gone.txt\n\
         *** Update File: src/a.rs\n\
         *** Move to: src/b.rs\n\
         @@ fn main() {\n context\n-old\n+new\n\
         @@\n-x\n+y\n*** End of File\n\
         *** Update File: first-hunk-without-at.txt\n keep\n+added\n",
    );
    assert_eq!(
        parsed.files,
        vec![
            FileOp::Add {
                path: "new/file.txt".into(),
                content: "one\n\nthree\n".into()
            },
            FileOp::Delete {
                path: "gone.txt".into()
            },
            FileOp::Update {
                path: "src/a.rs".into(),
                move_to: Some("src/b.rs".into()),
                hunks: vec![
                    hunk(&["fn main() {"], " context\n-old\n+new", false),
                    hunk(&[], "-x\n+y", true),
                ],
            },
            FileOp::Update {
                path: "first-hunk-without-at.txt".into(),
                move_to: None,
                hunks: vec![hunk(&[], " keep\n+added", false)],
            },
        ]
    );
}

#[test]
fn an_empty_add_is_an_empty_file_and_a_bare_move_needs_no_hunk() {
    let parsed = patch("*** Add File: empty\n*** Update File: a\n*** Move to: b\n");
    assert_eq!(
        parsed.files,
        vec![
            FileOp::Add {
                path: "empty".into(),
                content: String::new()
            },
            FileOp::Update {
                path: "a".into(),
                move_to: Some("b".into()),
                hunks: Vec::new()
            },
        ]
    );
}

#[test]
fn stacked_anchors_and_empty_context_lines() {
    let parsed = patch("*** Update File: f\n@@ class A\n@@ def b\n x\n\n-y\n");
    let FileOp::Update { hunks, .. } = &parsed.files[0] else {
        panic!("an update");
    };
    assert_eq!(
        hunks,
        &vec![hunk(&["class A", "def b"], " x\n \n-y", false)]
    );
}

#[test]
fn tolerates_crlf_and_blank_lines_around_the_envelope_and_between_sections() {
    let lf =
        "*** Begin Patch\n*** Update File: f\n@@ a\n-b\n+c\n*** Delete File: g\n*** End Patch\n";
    let crlf = format!("\n  \r\n{}\r\n\r\n\n", lf.replace('\n', "\r\n"));
    assert_eq!(parse(&crlf), parse(lf));
    let spaced = "*** Begin Patch\n\n*** Add File: a\n+x\n\n*** Update File: f\n-b\n+c\n\n\n\
                  *** Delete File: g\n\n*** End Patch";
    let parsed = parse(spaced).expect("blank lines between sections are spacing");
    assert_eq!(parsed.files.len(), 3);
    assert_eq!(
        parsed.files[1],
        FileOp::Update {
            path: "f".into(),
            move_to: None,
            hunks: vec![hunk(&[], "-b\n+c", false)]
        },
        "the blank lines after the hunk are not context"
    );
}

#[test]
fn errors_name_the_patch_line_and_what_was_expected() {
    assert_eq!(
        error(""),
        "the patch is empty; expected `*** Begin Patch` … `*** End Patch`"
    );
    assert_eq!(
        error("\n\nhello\n*** End Patch\n"),
        "patch line 3: expected `*** Begin Patch`, found `hello`"
    );
    assert_eq!(
        error("*** Begin Patch\n*** Delete File: a\n"),
        "patch line 2: expected `*** End Patch` as the last line, found `*** Delete File: a`"
    );
    assert_eq!(
        error("*** Begin Patch\n"),
        "patch line 1: expected `*** End Patch` as the last line, found `*** Begin Patch`"
    );
    assert!(
        error("*** Begin Patch\n*** End Patch")
            .starts_with("patch line 2: the patch has no file sections")
    );
    assert_eq!(
        error("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch"),
        "patch line 2: expected a file header (`*** Add File: `, `*** Delete File: ` or \
         `*** Update File: `), found `*** Frobnicate File: a`"
    );
    assert_eq!(
        error("*** Begin Patch\n*** Add File: a\n+x\nno plus\n*** End Patch"),
        "patch line 4: expected a `+` line of the added file or a `*** ` file header, found `no plus`"
    );
    assert_eq!(
        error("*** Begin Patch\n*** Update File: a\n@@\n x\n\tbad\n*** End Patch"),
        "patch line 5: expected `@@`, a hunk line starting with ` `, `-` or `+`, or a `*** ` \
         file header, found `\tbad`"
    );
    assert_eq!(
        error("*** Begin Patch\n*** Update File: a\n@@ anchor\n*** End Patch"),
        "patch line 3: the hunk has no lines; expected lines starting with ` `, `-` or `+` after `@@`"
    );
    assert!(
        error("*** Begin Patch\n*** Update File: a\n*** Delete File: b\n*** End Patch")
            .starts_with("patch line 2: `*** Update File: a` has no hunks")
    );
    assert_eq!(
        error("*** Begin Patch\n*** Add File:   \n*** End Patch"),
        "patch line 2: the file path is missing"
    );
    assert_eq!(
        error(
            "*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Delete File: b\n*** End Patch"
        ),
        "patch line 3: `*** End Patch` before the end of the patch; it must be the last line"
    );
    assert_eq!(
        error(
            "*** Begin Patch\r\n*** Update File: a\r\n-x\r\n*** End of File\r\n*** End of File\r\n*** End Patch\r\n"
        ),
        "patch line 5: expected `@@`, a hunk line starting with ` `, `-` or `+`, or a `*** ` \
         file header, found `*** End of File`"
    );
}

#[test]
fn long_lines_are_shortened_in_errors() {
    let message = error(&format!(
        "*** Begin Patch\n{}\n*** End Patch",
        "x".repeat(10_000)
    ));
    assert!(message.len() < 300, "{message}");
    assert!(message.ends_with("…`"), "{message}");
}

#[test]
fn refuses_a_patch_over_the_size_limit() {
    let body = format!("+{}\n", "a".repeat(1023));
    let mut text = String::from("*** Begin Patch\n*** Add File: big\n");
    while text.len() <= MAX_PATCH_BYTES {
        text.push_str(&body);
    }
    text.push_str("*** End Patch\n");
    assert_eq!(
        error(&text),
        format!(
            "the patch is {} bytes; the limit is {MAX_PATCH_BYTES} bytes (16 MiB)",
            text.len()
        )
    );
    // Just under the limit parses.
    let mut under = String::from("*** Begin Patch\n*** Add File: big\n");
    while under.len() + body.len() + 15 <= MAX_PATCH_BYTES {
        under.push_str(&body);
    }
    under.push_str("*** End Patch\n");
    assert!(under.len() <= MAX_PATCH_BYTES);
    assert!(parse(&under).is_ok());
}
