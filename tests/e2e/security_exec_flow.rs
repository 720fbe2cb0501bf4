//! `command/exec` output is flow-controlled (issue #32, finding 6): with `disableOutputCap`
//! and streamed output, the server reads the command's pipe only while the connection's
//! outgoing queue has room, so a client that reads slowly slows the command down instead of
//! growing the server's memory, and still gets every byte.
//!
//! The client here is raw (no JSON parse of each 64 KiB delta): it reads stdout line by line,
//! pausing now and then, and adds up the decoded length of every `deltaBase64`. The server's
//! peak resident memory (`VmHWM`) must stay under a bound far below the output's size.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::common::{memory_kib, scratch};

/// Bytes the command writes.
const OUTPUT: u64 = 200 * 1000 * 1000;
/// Most resident memory the server may reach (the output is 200 MB, 267 MB as base64).
const PEAK_BOUND_KIB: u64 = 200 * 1024;

/// The length of what the base64 text `encoded` decodes to.
fn decoded_len(encoded: &str) -> u64 {
    let padding = encoded.bytes().rev().take_while(|&b| b == b'=').count() as u64;
    (encoded.len() as u64 / 4) * 3 - padding
}

/// The string value of `"name":"…"` in `line` (base64 and ids need no unescaping).
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("\"{name}\":\"");
    let start = line.find(&key)? + key.len();
    let len = line[start..].find('"')?;
    Some(&line[start..start + len])
}

#[test]
fn a_slow_reader_gets_every_byte_and_the_server_stays_small() {
    let home = scratch("security-exec-flow");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("app-server")
        .env("AGENTWIRE_HOME", &home)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentwire app-server");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let stderr_text = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let messages = [
        json!({"id": 0, "method": "initialize",
               "params": {"clientInfo": {"name": "e2e", "version": "0.0.1"}}}),
        json!({"method": "initialized"}),
        json!({"id": 1, "method": "command/exec", "params": {
            "processId": "flood",
            "command": ["head", "-c", OUTPUT.to_string(), "/dev/zero"],
            "streamStdoutStderr": true,
            "disableOutputCap": true,
            "disableTimeout": true,
            "sandboxPolicy": {"type": "dangerFullAccess"},
        }}),
    ];
    for message in &messages {
        writeln!(stdin, "{message}").expect("write");
    }
    stdin.flush().expect("flush");

    let mut reader = BufReader::with_capacity(1024 * 1024, stdout);
    let mut line = String::new();
    let (mut received, mut deltas) = (0u64, 0u64);
    let answer = loop {
        line.clear();
        let n = reader.read_line(&mut line).expect("read stdout");
        assert!(n > 0, "stdout ended before the answer; stderr:\n{}", {
            let _ = child.kill();
            stderr_text.join().unwrap_or_default()
        });
        if line.contains("\"command/exec/outputDelta\"") {
            assert_eq!(field(&line, "processId"), Some("flood"));
            received += decoded_len(field(&line, "deltaBase64").expect("deltaBase64"));
            deltas += 1;
            // A slow reader: a pause every few deltas, so the server's queue fills.
            if deltas % 8 == 0 {
                std::thread::sleep(Duration::from_millis(4));
            }
        } else if line.starts_with("{\"id\":1,") || line.trim_end().ends_with(",\"id\":1}") {
            break line.clone();
        }
    };
    let peak = memory_kib(pid, "VmHWM");
    drop(stdin);
    let status = child.wait().expect("wait");
    let stderr = stderr_text.join().unwrap_or_default();
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("answer");
    assert_eq!(answer["result"]["exitCode"], json!(0), "{answer}\n{stderr}");
    assert_eq!(received, OUTPUT, "every byte arrives ({deltas} deltas)");
    assert!(
        peak < PEAK_BOUND_KIB,
        "the server's peak resident memory was {peak} KiB for {OUTPUT} bytes of output \
         (bound {PEAK_BOUND_KIB} KiB)"
    );
    assert!(status.success(), "{status:?}\n{stderr}");
    let _ = std::fs::remove_dir_all(&home);
}
