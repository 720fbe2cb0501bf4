//! A CPU budget per worker for the workers phase (`--worker-cpu CORES`): each worker process is
//! put in a control group of its own whose CPU quota is CORES cores. On a machine too small to
//! give every worker cores of its own (the bench's clients, the mock model and PostgreSQL share
//! them), a capped worker stands for a worker on a machine of that size: one worker is held to
//! its budget, and two have twice the budget between them, so the ratio shows whether a second
//! worker adds what it brings or the shared store holds it back.
//!
//! Needs root and the `cpu` controller: cgroup v2 (`cpu.max`) where it is on the unified
//! hierarchy, else cgroup v1 (`cpu.cfs_quota_us`).

use std::path::{Path, PathBuf};

/// The scheduler period the quota is a share of, µs.
const PERIOD_US: u64 = 100_000;

/// A worker's control group, removed when dropped (after its process has ended).
#[derive(Debug)]
pub struct CpuCap {
    dir: PathBuf,
}

impl CpuCap {
    /// Puts process `pid` (all its threads) in a new group named `name` allowed `cores` cores.
    pub fn apply(pid: u32, cores: f64, name: &str) -> Result<Self, String> {
        if !(cores.is_finite() && cores > 0.0) {
            return Err(format!(
                "--worker-cpu must be a positive number of cores, not {cores}"
            ));
        }
        let quota = (cores * PERIOD_US as f64).round() as u64;
        // The limit's files, written in this order.
        let (dir, limits) = if v2_has_cpu() {
            let dir = Path::new("/sys/fs/cgroup").join(name);
            (dir, vec![("cpu.max", format!("{quota} {PERIOD_US}"))])
        } else if Path::new("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists() {
            let dir = Path::new("/sys/fs/cgroup/cpu").join(name);
            let limits = vec![
                ("cpu.cfs_period_us", PERIOD_US.to_string()),
                ("cpu.cfs_quota_us", quota.to_string()),
            ];
            (dir, limits)
        } else {
            return Err("--worker-cpu needs the cgroup cpu controller (v2 or v1)".to_owned());
        };
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot make the control group {}: {e}", dir.display()))?;
        let cap = Self { dir };
        for (file, value) in &limits {
            cap.write(file, value)?;
        }
        cap.write("cgroup.procs", &pid.to_string())?;
        Ok(cap)
    }

    fn write(&self, file: &str, value: &str) -> Result<(), String> {
        let path = self.dir.join(file);
        std::fs::write(&path, value).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

impl Drop for CpuCap {
    fn drop(&mut self) {
        // Empty once the worker has been reaped; a group still in use is left behind.
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Whether the unified (v2) hierarchy at `/sys/fs/cgroup` offers the `cpu` controller to the
/// groups made under it.
fn v2_has_cpu() -> bool {
    std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control")
        .is_ok_and(|enabled| enabled.split_whitespace().any(|c| c == "cpu"))
}
