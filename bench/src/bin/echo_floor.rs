//! `echo-floor`: the physical limit of the stdio request path.
//!
//! For every line on stdin it parses the JSON with `serde_json` and, when the message carries
//! an `id` and a `method` (a request), writes a fixed answer echoing the id. Nothing else:
//! no handshake, no validation, no dispatch, no threads. It reads and writes the stdio file
//! descriptors directly (no buffering layers), handles everything one read returned, then
//! answers with one write.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;

use serde_json::Value;

fn main() -> ExitCode {
    match serve() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("echo-floor: {error}");
            ExitCode::FAILURE
        }
    }
}

fn serve() -> std::io::Result<()> {
    // Duplicates of fds 0 and 1 as plain files: every read and write is one system call.
    let mut input = File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
    let mut output = File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
    let mut chunk = vec![0u8; 64 * 1024];
    // Bytes of a line whose end has not arrived yet.
    let mut partial: Vec<u8> = Vec::new();
    let mut answers: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let mut data = &chunk[..n];
        while let Some(end) = memchr::memchr(b'\n', data) {
            if partial.is_empty() {
                answer(&data[..end], &mut answers);
            } else {
                partial.extend_from_slice(&data[..end]);
                answer(&partial, &mut answers);
                partial.clear();
            }
            data = &data[end + 1..];
        }
        partial.extend_from_slice(data);
        if !answers.is_empty() {
            output.write_all(&answers)?;
            answers.clear();
        }
    }
    Ok(())
}

/// Appends the fixed answer to a request line; anything else gets no answer.
fn answer(line: &[u8], out: &mut Vec<u8>) {
    let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    let (Some(id), true) = (message.get("id"), message.contains_key("method")) else {
        return;
    };
    out.extend_from_slice(b"{\"id\":");
    if serde_json::to_writer(&mut *out, id).is_err() {
        out.extend_from_slice(b"null");
    }
    out.extend_from_slice(b",\"result\":{\"data\":[],\"nextCursor\":null}}\n");
}
