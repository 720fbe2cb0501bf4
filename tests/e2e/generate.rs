//! `agentwire app-server generate-json-schema` / `generate-ts`.

use crate::common::{agentwire, repo, scratch, text, tree};

fn assert_same_tree(generated: &std::path::Path, checked_in: &std::path::Path) {
    let ours = tree(generated);
    let theirs = tree(checked_in);
    let names =
        |t: &[(std::path::PathBuf, Vec<u8>)]| t.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&ours),
        names(&theirs),
        "file lists differ between {} and {}",
        generated.display(),
        checked_in.display()
    );
    for ((path, a), (_, b)) in ours.iter().zip(&theirs) {
        assert!(
            a == b,
            "{} differs from {}",
            path.display(),
            checked_in.join(path).display()
        );
    }
}

fn generate_matches(command: &str, flags: &[&str], checked_in: &str) {
    let out = scratch(&format!(
        "{command}-{}",
        flags.join("").replace(['-', '.'], "")
    ));
    let dir = out.to_str().expect("utf-8 path");
    let mut args = vec!["app-server", command, "--out", dir];
    args.extend_from_slice(flags);
    let output = agentwire(&args);
    let (_, stderr) = text(&output);
    assert!(
        output.status.success(),
        "{command} {flags:?} failed: {stderr}"
    );
    assert_same_tree(&out, &repo().join(checked_in));
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn json_schema_output_equals_the_checked_in_files() {
    generate_matches("generate-json-schema", &[], "generated/schema/json");
    generate_matches(
        "generate-json-schema",
        &["--experimental"],
        "generated/schema/experimental/json",
    );
}

#[test]
fn typescript_output_equals_the_checked_in_files() {
    generate_matches("generate-ts", &[], "generated/schema/typescript");
    generate_matches(
        "generate-ts",
        &["--experimental"],
        "generated/schema/experimental/typescript",
    );
}

#[test]
fn pinned_versions_are_emitted_byte_equal_from_the_binary() {
    let versions = std::fs::read_dir(repo().join("generated/versions")).expect("pinned versions");
    let mut seen = 0;
    for version in versions {
        let version = version
            .expect("entry")
            .file_name()
            .into_string()
            .expect("utf-8");
        for (command, flags, dir) in [
            ("generate-json-schema", vec![], "json"),
            (
                "generate-json-schema",
                vec!["--experimental"],
                "experimental/json",
            ),
            ("generate-ts", vec![], "typescript"),
            (
                "generate-ts",
                vec!["--experimental"],
                "experimental/typescript",
            ),
        ] {
            let mut flags = flags;
            flags.extend(["--protocol-version", version.as_str()]);
            generate_matches(
                command,
                &flags,
                &format!("generated/versions/{version}/{dir}"),
            );
            seen += 1;
        }
    }
    assert!(seen >= 4, "no pinned version checked");
}

#[test]
fn unknown_protocol_version_is_refused_with_the_known_ones() {
    let out = scratch("unknown-version");
    let output = agentwire(&[
        "app-server",
        "generate-ts",
        "--out",
        out.to_str().expect("utf-8"),
        "--protocol-version",
        "9.9.9",
    ]);
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains("unknown protocol version \"9.9.9\"") && stderr.contains("0.1.0"),
        "{stderr}"
    );
    assert!(
        tree(&out).is_empty(),
        "nothing may be written for an unknown version"
    );
}

#[test]
fn missing_out_flag_is_a_usage_error() {
    let output = agentwire(&["app-server", "generate-json-schema"]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--out"), "{stderr}");
}

#[test]
fn out_that_cannot_be_a_directory_is_refused() {
    let dir = scratch("bad-out");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").expect("write");
    let output = agentwire(&[
        "app-server",
        "generate-json-schema",
        "--out",
        file.to_str().expect("utf-8"),
    ]);
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(stderr.contains("exists and is not a directory"), "{stderr}");

    let below = file.join("sub");
    let output = agentwire(&[
        "app-server",
        "generate-ts",
        "--out",
        below.to_str().expect("utf-8"),
    ]);
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(stderr.contains("cannot create --out directory"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}
