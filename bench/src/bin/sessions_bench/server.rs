//! A server under test: started fresh on a loopback websocket port with its own throwaway home,
//! pointed at the mock model, and read from outside (`/proc/PID/status` VmRSS,
//! `/proc/PID/task/TID/schedstat` time on a core).

use std::collections::HashMap;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cpu_cap::CpuCap;

/// What to start.
#[derive(Debug, Clone)]
pub struct Contender {
    /// The name in the table.
    pub name: String,
    /// The program.
    pub program: PathBuf,
    /// The environment variables that get the throwaway home.
    pub home_vars: Vec<&'static str>,
    /// More `app-server` arguments (`--store URL`).
    pub extra_args: Vec<String>,
}

/// A running server; killed when dropped.
pub struct Running {
    child: Child,
    /// Its websocket port.
    pub port: u16,
    /// Its home (removed when dropped).
    home: PathBuf,
    /// A directory for threads to work in.
    pub work: PathBuf,
    /// Its CPU budget, when it has one (dropped after the process is reaped).
    cap: Option<CpuCap>,
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot find a free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

impl Running {
    /// Starts `contender` and waits until its port accepts connections.
    pub fn start(contender: &Contender, mock_url: &str, tag: &str) -> Result<Self, String> {
        let slug: String = contender
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let home = std::env::temp_dir().join(format!(
            "sessions-bench-{}-{slug}-{tag}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&home);
        let work = home.join("work");
        std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
        let log = std::fs::File::create(home.join("server.log"))
            .map_err(|e| format!("cannot create the server log: {e}"))?;
        let port = free_port()?;
        let mut command = Command::new(&contender.program);
        command
            .args(["app-server", "--listen", &format!("ws://127.0.0.1:{port}")])
            .args(["-c", "model_provider=mock"])
            .args(["-c", "model_providers.mock.name=mock"])
            .arg("-c")
            .arg(format!("model_providers.mock.base_url=\"{mock_url}\""))
            .args(["-c", "model_providers.mock.wire_api=responses"])
            .args(["-c", "model=mock-model"])
            .args(&contender.extra_args)
            .env("RUST_LOG", "warn")
            .current_dir(&work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        for var in &contender.home_vars {
            command.env(var, &home);
        }
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", contender.program.display()))?;
        let mut running = Self {
            child,
            port,
            home,
            work,
            cap: None,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(running);
            }
            if let Ok(Some(status)) = running.child.try_wait() {
                return Err(format!(
                    "{} exited before listening ({status}); see {}",
                    contender.name,
                    running.home.join("server.log").display()
                ));
            }
            if Instant::now() > deadline {
                return Err(format!("{} did not listen within 30 s", contender.name));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Holds the server to `cores` cores from now on (see [`CpuCap`]).
    pub fn cap_cpu(&mut self, cores: f64) -> Result<(), String> {
        let name = format!("sessions-bench-{}-{}", std::process::id(), self.port);
        self.cap = Some(CpuCap::apply(self.child.id(), cores, &name)?);
        Ok(())
    }

    /// The websocket URL.
    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    /// Resident memory in bytes (VmRSS).
    pub fn rss_bytes(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    /// Time on a core so far, thread by thread (see [`CpuSnapshot`]); `None` once the process
    /// is gone.
    pub fn cpu(&self) -> Option<CpuSnapshot> {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id())).ok()?;
        let mut threads = HashMap::new();
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            // A thread that ends between the listing and the read is simply not counted.
            let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else {
                continue;
            };
            if let Some(ns) = stat.split_whitespace().next().and_then(|f| f.parse().ok()) {
                threads.insert(tid, ns);
            }
        }
        Some(CpuSnapshot(threads))
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// Nanoseconds each thread of a server has run on a core (the first field of its
/// `schedstat`), by thread id. Unlike `utime + stime` in `/proc/PID/stat`, which come in 10 ms
/// ticks, this resolves the few milliseconds a small phase costs.
#[derive(Debug, Default)]
pub struct CpuSnapshot(HashMap<u32, u64>);

impl CpuSnapshot {
    /// Seconds on a core since `earlier`: what each thread ran since, and all of what a thread
    /// started since ran. A thread that ended in between takes its share with it, so a phase
    /// during which a server retires threads is slightly undercounted.
    pub fn seconds_since(&self, earlier: &CpuSnapshot) -> f64 {
        let ns: u64 = self
            .0
            .iter()
            .map(|(tid, now)| now.saturating_sub(earlier.0.get(tid).copied().unwrap_or(0)))
            .sum();
        ns as f64 / 1e9
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.home);
    }
}
