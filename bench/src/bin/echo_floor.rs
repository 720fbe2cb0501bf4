//! `echo-floor`: the physical limit of the stdio request path.
//!
//! For every line on stdin it parses the JSON with `serde_json` and, when the message carries
//! an `id` and a `method` (a request), writes a fixed answer echoing the id. Nothing else:
//! no handshake, no validation, no dispatch, no threads. It reads and writes the stdio file
//! descriptors directly (no buffering layers) and handles everything one read returned.
//!
//! Its input and output follow the same rules as `agentwire app-server`'s, or it would not be
//! a floor: the answers to a chunk are written with one write once the chunk is done, or
//! earlier once the first has waited [`BATCH_DELAY`]; after answering, it looks for the next
//! line with the same [`BusyPoll`] rule (`--busy-poll-us`, default the server's default).

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use agentwire_runtime::RuntimeConfig;
use agentwire_runtime::{BATCH_DELAY, BusyPoll};
use rustix::event::{self, PollFd, PollFlags, Timespec};
use serde_json::Value;

fn main() -> ExitCode {
    let window = match busy_poll_window(std::env::args().skip(1)) {
        Ok(window) => window,
        Err(error) => {
            eprintln!("echo-floor: {error}");
            return ExitCode::from(2);
        }
    };
    match serve(BusyPoll::new(window)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("echo-floor: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `--busy-poll-us MICROS`, or the server's default.
fn busy_poll_window(mut args: impl Iterator<Item = String>) -> Result<Duration, String> {
    let default = RuntimeConfig::new(PathBuf::new()).stdin_busy_poll;
    match (args.next().as_deref(), args.next(), args.next()) {
        (None, _, _) => Ok(default),
        (Some("--busy-poll-us"), Some(micros), None) => micros
            .parse()
            .map(Duration::from_micros)
            .map_err(|e| format!("--busy-poll-us {micros}: {e}")),
        _ => Err("usage: echo-floor [--busy-poll-us MICROS]".into()),
    }
}

/// Returns once `input` has something to read, or `deadline` passed.
fn poll_until(input: &File, deadline: Instant) {
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    while Instant::now() < deadline {
        let mut fds = [PollFd::new(input, PollFlags::IN)];
        if event::poll(&mut fds, Some(&zero)).is_ok_and(|ready| ready > 0) {
            return;
        }
    }
}

fn serve(mut busy_poll: BusyPoll) -> std::io::Result<()> {
    // Duplicates of fds 0 and 1 as plain files: every read and write is one system call.
    let mut input = File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
    let mut output = File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
    let mut chunk = vec![0u8; 64 * 1024];
    // Bytes of a line whose end has not arrived yet.
    let mut partial: Vec<u8> = Vec::new();
    let mut answers: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        if let Some(deadline) = busy_poll.deadline() {
            poll_until(&input, deadline);
        }
        let read = input.read(&mut chunk);
        busy_poll.arrived(Instant::now());
        let n = match read {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let mut data = &chunk[..n];
        // When the first answer not yet written was made.
        let mut oldest = None;
        while let Some(end) = memchr::memchr(b'\n', data) {
            let before = answers.len();
            if partial.is_empty() {
                answer(&data[..end], &mut answers);
            } else {
                partial.extend_from_slice(&data[..end]);
                answer(&partial, &mut answers);
                partial.clear();
            }
            data = &data[end + 1..];
            if answers.len() > before {
                let now = Instant::now();
                if now.duration_since(*oldest.get_or_insert(now)) >= BATCH_DELAY {
                    output.write_all(&answers)?;
                    answers.clear();
                    oldest = None;
                }
            }
        }
        partial.extend_from_slice(data);
        if !answers.is_empty() {
            output.write_all(&answers)?;
            answers.clear();
        }
        busy_poll.answered(Instant::now());
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
