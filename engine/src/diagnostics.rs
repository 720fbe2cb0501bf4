//! `server/diagnostics`: facts about the server process (from `/proc/self` on Linux) and about
//! the work it holds (connections, loaded threads, running turns and processes), measured when
//! asked.
//!
//! Gauges, each a count or a size now:
//!
//! | name | what |
//! |---|---|
//! | `app.connections.open` | client connections open |
//! | `app.threads.loaded` | threads loaded in memory |
//! | `app.turns.running` | turns running (model turns, shell commands, compactions) |
//! | `app.command_exec.running` | `command/exec` processes running with a `processId` |
//! | `app.processes.running` | `process/spawn` processes running |
//! | `process.uptime_seconds` | seconds since the engine started |
//! | `process.threads` | OS threads of the process |
//! | `process.open_fds` | file descriptors the process holds open |
//! | `process.virtual_memory_bytes` | its virtual memory size |
//! | `process.peak_resident_memory_bytes` | the most RAM it has held at once |
//!
//! The `process.*` gauges other than the uptime are left out where `/proc` cannot be read.
//! `physicalFootprintBytes` is macOS's own measure and is `null` here.

use agentwire_protocol::methods::ServerDiagnostics;
use agentwire_protocol::{
    ServerDiagnosticsGauge, ServerDiagnosticsProcess, ServerDiagnosticsResponse,
    ThreadLoadedListParams,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;
use crate::pool::blocking;

/// The value of `field` (`VmRSS`, `Threads` …) in a `/proc/<pid>/status` text; sizes in kB
/// are turned into bytes.
fn status_field(status: &str, field: &str) -> Option<u64> {
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))?;
    let mut parts = line.split_whitespace();
    let value: u64 = parts.next()?.parse().ok()?;
    match parts.next() {
        Some("kB") => value.checked_mul(1024),
        _ => Some(value),
    }
}

/// `server/diagnostics`.
pub(crate) async fn read(
    engine: &Engine,
    context: RequestContext,
) -> Result<ServerDiagnosticsResponse, HandlerError> {
    crate::features::require::<ServerDiagnostics>(&engine.config_store)?;
    let connections = context.peer.hub().len();
    let threads = engine.threads.clone();
    let turns = engine.turns.running_count();
    let (command_exec, processes) = engine.command_exec.running();
    let uptime = engine.started.elapsed().as_secs();
    blocking::<ServerDiagnostics, _, _>(move || {
        let loaded = threads
            .loaded_list(ThreadLoadedListParams::builder().build())
            .data
            .len();
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let mut gauges = vec![
            ("app.connections.open", count(connections)),
            ("app.threads.loaded", count(loaded)),
            ("app.turns.running", count(turns)),
            ("app.command_exec.running", count(command_exec)),
            ("app.processes.running", count(processes)),
            ("process.uptime_seconds", uptime),
        ];
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        for (name, field) in [
            ("process.threads", "Threads"),
            ("process.virtual_memory_bytes", "VmSize"),
            ("process.peak_resident_memory_bytes", "VmHWM"),
        ] {
            if let Some(value) = status_field(&status, field) {
                gauges.push((name, value));
            }
        }
        if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
            gauges.push(("process.open_fds", count(fds.count())));
        }
        Ok(ServerDiagnosticsResponse::builder()
            .process(
                ServerDiagnosticsProcess::builder()
                    .id(std::process::id())
                    .maybe_resident_memory_bytes(status_field(&status, "VmRSS"))
                    .build(),
            )
            .gauges(
                gauges
                    .into_iter()
                    .map(|(name, value)| {
                        ServerDiagnosticsGauge::builder()
                            .name(name)
                            .value(value)
                            .build()
                    })
                    .collect(),
            )
            .build())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_in_bytes_or_as_counts() {
        let status = "Name:\tagentwire\nVmRSS:\t   2048 kB\nThreads:\t7\nVmSize:\tx kB\n";
        assert_eq!(status_field(status, "VmRSS"), Some(2048 * 1024));
        assert_eq!(status_field(status, "Threads"), Some(7));
        assert_eq!(status_field(status, "VmSize"), None);
        assert_eq!(status_field(status, "VmHWM"), None);
    }

    #[test]
    fn this_process_has_a_status() {
        let status = std::fs::read_to_string("/proc/self/status").expect("linux /proc");
        assert!(status_field(&status, "VmRSS").is_some_and(|rss| rss > 0));
        assert!(status_field(&status, "Threads").is_some_and(|n| n >= 1));
    }
}
