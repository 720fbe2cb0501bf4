//! `agentwire app-server generate-json-schema` / `generate-ts` (and its `--zod` validators).

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

/// The exports of a `zod-validators.ts`, in order.
fn zod_exports(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("export const "))
        .map(|rest| rest.split([' ', ':']).next().unwrap_or_default().to_owned())
        .collect()
}

/// The definition names of a flat bundle, sorted.
fn definitions(flat_bundle: &str) -> Vec<String> {
    let bundle: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo().join(flat_bundle)).expect("flat bundle"))
            .expect("JSON");
    let mut names: Vec<String> = bundle["definitions"]
        .as_object()
        .expect("definitions")
        .keys()
        .cloned()
        .collect();
    names.sort();
    names
}

/// `generate-ts --zod` writes the TypeScript files plus `zod-validators.ts`: one validator per
/// definition of the same version's flat bundle, and the same bytes on every run.
#[test]
fn generate_ts_with_zod_writes_the_validators_beside_the_types() {
    let flat = "json/agentwire_app_server_protocol.flat.schemas.json";
    for (name, flags, typescript, bundle, version) in [
        (
            "zod-stable",
            vec![],
            "generated/schema/typescript".to_owned(),
            format!("generated/schema/{flat}"),
            agentwire_protocol::PROTOCOL_VERSION,
        ),
        (
            "zod-experimental",
            vec!["--experimental"],
            "generated/schema/experimental/typescript".to_owned(),
            format!("generated/schema/experimental/{flat}"),
            agentwire_protocol::PROTOCOL_VERSION,
        ),
        (
            "zod-pinned",
            vec!["--protocol-version", "0.1.0"],
            "generated/versions/0.1.0/typescript".to_owned(),
            format!("generated/versions/0.1.0/{flat}"),
            "0.1.0",
        ),
    ] {
        let mut texts = Vec::new();
        for run in 0..2 {
            let out = scratch(&format!("{name}-{run}"));
            let mut args = vec!["app-server", "generate-ts", "--zod", "--out"];
            args.push(out.to_str().expect("utf-8 path"));
            args.extend(flags.iter().copied());
            let output = agentwire(&args);
            let (_, stderr) = text(&output);
            assert!(output.status.success(), "{name}: {stderr}");
            let validators = out.join("zod-validators.ts");
            let written = std::fs::read_to_string(&validators)
                .unwrap_or_else(|e| panic!("{name}: no {}: {e}", validators.display()));
            // Apart from the validators, exactly the TypeScript files.
            std::fs::remove_file(&validators).expect("remove");
            assert_same_tree(&out, &repo().join(&typescript));
            let _ = std::fs::remove_dir_all(out);
            texts.push(written);
        }
        assert_eq!(texts[0], texts[1], "{name}: two runs differ");
        let written = &texts[0];
        assert!(
            written.starts_with("// @generated by agentwire")
                && written.contains(&format!("protocol {version},")),
            "{name}: {}",
            &written[..written.len().min(300)]
        );
        assert!(written.contains("import { z } from \"zod\";"), "{name}");
        let mut exports = zod_exports(written);
        assert_eq!(exports.pop().as_deref(), Some("definitions"), "{name}");
        assert_eq!(
            exports,
            definitions(&bundle),
            "{name}: one validator per definition"
        );
        assert!(
            written.contains("export const ThreadStartParams = z.lazy(() => z.looseObject({"),
            "{name}"
        );
    }
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
