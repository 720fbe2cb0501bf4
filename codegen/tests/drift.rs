//! `generated/` must be exactly what the protocol crate determines.

use agentwire_codegen::{REGENERATE_COMMAND, drift, workspace};

#[test]
fn generated_directory_is_up_to_date() {
    let expected = workspace::generate_all().expect("generate everything in memory");
    let root = drift::generated_dir();
    let report = drift::compare(&root, &expected).expect("read generated/");
    assert!(
        report.is_empty(),
        "generated/ differs from what the protocol crate determines:\n{report}\nrun `{REGENERATE_COMMAND}` and commit the result"
    );
}

#[test]
fn generation_is_deterministic() {
    let first = workspace::generate_all().expect("first run");
    let second = workspace::generate_all().expect("second run");
    assert_eq!(first, second, "two runs produced different bytes");
}

#[test]
fn drift_is_detected_and_reported_as_a_diff() {
    // A check that cannot fail proves nothing: tamper with a copy and expect a report.
    let expected = workspace::generate_all().expect("generate");
    let dir = std::env::temp_dir().join(format!("agentwire-drift-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    expected.write_to(&dir).expect("write a copy");
    let victim = dir.join("schema/json/meta.json");
    let text = std::fs::read_to_string(&victim).expect("read meta.json");
    std::fs::write(&victim, text.replacen("thread/start", "thread/begin", 1)).expect("tamper");
    std::fs::write(dir.join("schema/json/Stale.json"), "{}").expect("add a stale file");
    let report = drift::compare(&dir, &expected).expect("compare");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        report.contains("-") && report.contains("thread/begin") && report.contains("thread/start"),
        "no diff in: {report}"
    );
    assert!(
        report.contains("stale (no longer generated): generated/schema/json/Stale.json"),
        "stale file not reported: {report}"
    );
}
