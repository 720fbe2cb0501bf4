//! Reports on stdout the way Unix filters write them: when the reader has gone
//! (`agentwire contract check t.jsonl | head -1`), the command ends at once and quietly, as if
//! killed by SIGPIPE (a shell shows status 141), instead of panicking with "failed printing to
//! stdout".
//!
//! Why not the default SIGPIPE disposition for the whole process: the commands that print a
//! report also talk to other processes over pipes and sockets (`conformance` drives servers,
//! `exec` its app-server child, `daemon stop` the control socket), and a peer that dies there
//! is an error to report, not a reason to vanish. So the process keeps ignoring SIGPIPE (Rust's
//! default), every report goes through [`print()`], and only a broken *stdout* ends the command
//! with the signal's status. The servers (`app-server`, `mcp-server`, `app-server proxy`) do not
//! use this: a client that leaves their protocol stdout makes them shut down in order.

use std::io::{ErrorKind, Write};

/// Writes `text` to stdout and flushes it. A reader that has gone ends the process as if killed
/// by SIGPIPE ([`end_as_broken_pipe`]); any other failure to write ends it with status 1 and
/// the reason on stderr.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let written = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    match written {
        Ok(()) => {}
        Err(error) if error.kind() == ErrorKind::BrokenPipe => end_as_broken_pipe(),
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: cannot write to stdout: {error}");
            std::process::exit(1);
        }
    }
}

/// [`print()`] with a newline after `text`.
pub fn line(text: &str) {
    print(&format!("{text}\n"));
}

/// Ends the process the way a writer whose reader has gone conventionally ends: killed by
/// SIGPIPE (its default action restored and the signal raised), which a shell reports as
/// status 141. Should the signal not end it (it cannot be unblocked), exits with 141.
pub fn end_as_broken_pipe() -> ! {
    #[cfg(unix)]
    {
        let _ = signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGPIPE);
    }
    std::process::exit(128 + 13)
}

/// Writes one line to stderr, ignoring failures: a note about the run must never end it (stderr
/// may be a pipe whose reader has gone as well).
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
