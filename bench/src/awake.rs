//! `--keep-awake`: one lowest-priority busy loop per core for the length of the run.
//!
//! On a virtual machine an idle vCPU halts, and waking a thread on it again goes through the
//! hypervisor: tens of microseconds per lockstep round trip for a server that sleeps on an
//! empty pipe (an echo loop that does managed ~100k round trips/s here with the vCPUs awake and
//! ~12k idle). agentwire and the echo floor poll their input briefly after answering, which
//! spares the server's side of that; the client's side remains. Spinners at the lowest
//! priority (nice 19: they get a sliver of a core whenever anything else wants it) keep the
//! vCPUs from halting, so the figures show what the servers cost rather than what an idle vCPU
//! costs to wake. (`SCHED_IDLE` spinners helped about half as much here.)

use std::process::{Child, Command, Stdio};

/// The spinner processes; killed when dropped.
pub struct KeepAwake {
    spinners: Vec<Child>,
}

fn spawn(exe: &std::path::Path) -> std::io::Result<Child> {
    Command::new("nice")
        .args(["-n", "19"])
        .arg(exe)
        .arg("--spin")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
}

impl KeepAwake {
    /// Starts `count` spinners at nice 19.
    pub fn start(count: usize) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot locate myself: {e}"))?;
        let mut awake = KeepAwake {
            spinners: Vec::new(),
        };
        for _ in 0..count {
            let child = spawn(&exe).map_err(|e| format!("cannot start a spinner: {e}"))?;
            awake.spinners.push(child);
        }
        Ok(awake)
    }
}

impl Drop for KeepAwake {
    fn drop(&mut self) {
        for child in &mut self.spinners {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The spinner's body.
pub fn spin() -> ! {
    loop {
        std::hint::spin_loop();
    }
}
