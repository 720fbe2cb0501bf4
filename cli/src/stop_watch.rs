//! Stopping `app-server` over stdio in bounded time, even when a request handler is stuck.
//!
//! The stdio server runs every connection task on one thread (a current-thread runtime). A
//! handler that blocks that thread (a read of a file that never answers: issue #32 found a
//! FIFO as an image doing it) would stop everything that runs there, the task that watches
//! SIGTERM and the reading of stdin included: neither the signal nor the end of input could
//! stop the server any more. So both are watched here, on threads of their own:
//!
//! - SIGTERM or SIGINT tells the server to stop (running turns are interrupted and recorded)
//!   and gives it [`signal_deadline`] to exit;
//! - the end of input (stdin hung up: its writer closed a pipe, or its peer a socket) gives it
//!   [`end_of_input_deadline`], which covers the documented wind-down (turns that may finish,
//!   then are interrupted).
//!
//! A server that has not exited by then is stuck: the process exits with status 1 and says so
//! on stderr. A healthy server exits long before, on its own, with its usual status.

use std::os::fd::AsFd;
use std::time::Duration;

use agentwire_runtime::RuntimeConfig;
use agentwire_runtime::termination_signal;

/// Time the process lives on after the server was stopped, for its own shutdown (the runtime's
/// wait for blocking tasks, the flushing of stdout) before it counts as stuck.
const MARGIN: Duration = Duration::from_secs(5);

/// How long a server told to stop by a signal may take to exit: requests in flight and turns
/// winding down each get the shutdown grace, and the process its margin.
pub fn signal_deadline(config: &RuntimeConfig) -> Duration {
    config.shutdown_grace * 2 + MARGIN
}

/// How long a server whose input ended may take to exit: the requests in flight, the running
/// turns (the background grace, then the shutdown grace to wind down), and the margin.
pub fn end_of_input_deadline(config: &RuntimeConfig) -> Duration {
    config.shutdown_grace * 2 + config.background_grace + MARGIN
}

/// Watches SIGTERM and SIGINT on a thread of its own: on the first, calls `stop` and exits the
/// process with status 1 if it is still running `deadline` later.
pub fn watch_signals(stop: impl FnOnce() + Send + 'static, deadline: Duration) {
    let spawned = std::thread::Builder::new()
        .name("agentwire-signals".to_owned())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(error) => {
                    tracing::error!(%error, "cannot watch SIGTERM and SIGINT");
                    return;
                }
            };
            // The signals are registered with this runtime: it must be entered first.
            let signal = {
                let _entered = runtime.enter();
                termination_signal()
            };
            runtime.block_on(signal);
            stop();
            give_up_after(deadline, "SIGTERM or SIGINT");
        });
    if let Err(error) = spawned {
        tracing::error!(%error, "cannot start the thread that watches SIGTERM and SIGINT");
    }
}

/// Watches stdin on a thread of its own, without reading it: once it hangs up (the end of
/// input), exits the process with status 1 if it is still running `deadline` later. A stdin
/// that never hangs up (a file, a terminal, `/dev/null`) is not watched.
pub fn watch_end_of_input(deadline: Duration) {
    let spawned = std::thread::Builder::new()
        .name("agentwire-stdin-watch".to_owned())
        .spawn(move || {
            let stdin = std::io::stdin();
            let fd = stdin.as_fd();
            let Ok(stat) = rustix::fs::fstat(fd) else {
                return;
            };
            let kind = rustix::fs::FileType::from_raw_mode(stat.st_mode);
            if !matches!(
                kind,
                rustix::fs::FileType::Fifo | rustix::fs::FileType::Socket
            ) {
                return;
            }
            loop {
                // No events asked for: `poll` still reports a hang-up (and errors), and nothing
                // is read, so the server's own reading of stdin is undisturbed.
                let mut fds = [rustix::event::PollFd::new(
                    &fd,
                    rustix::event::PollFlags::empty(),
                )];
                match rustix::event::poll(&mut fds, None) {
                    Ok(_) => {
                        let events = fds[0].revents();
                        if events.intersects(
                            rustix::event::PollFlags::HUP
                                | rustix::event::PollFlags::ERR
                                | rustix::event::PollFlags::NVAL,
                        ) {
                            break;
                        }
                    }
                    Err(rustix::io::Errno::INTR) => {}
                    Err(error) => {
                        tracing::debug!(%error, "stdin not watched for its end");
                        return;
                    }
                }
            }
            give_up_after(deadline, "the end of input");
        });
    if let Err(error) = spawned {
        tracing::error!(%error, "cannot start the thread that watches the end of input");
    }
}

/// Waits `deadline`, then ends the process: it is still running, so something keeps it from
/// stopping after `what`.
fn give_up_after(deadline: Duration, what: &str) {
    std::thread::sleep(deadline);
    eprintln!(
        "agentwire app-server: did not stop within {} s of {what} (a request handler is stuck); \
         exiting with status 1",
        deadline.as_secs()
    );
    std::process::exit(1);
}
