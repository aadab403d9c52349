//! CPU time of processes and threads from `/proc`: `utime + stime` in ticks, and schedstat's
//! nanoseconds per thread where the kernel keeps them.

use std::process::Command;

/// `utime + stime` of process `pid` (or `self`), threads that have exited included, in ticks.
pub(crate) fn cpu_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..].split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Ticks of [`cpu_ticks`] in nanoseconds.
pub(crate) fn ticks_ns(ticks: u64) -> f64 {
    ticks as f64 * 1e9 / ticks_per_sec()
}

/// A server child's CPU time so far: `utime + stime` in ticks, and, where the kernel keeps
/// schedstat, the nanoseconds each of its live threads has run (by thread id).
pub(crate) struct ServerCpu {
    ticks: u64,
    threads: Option<Vec<(u32, u64)>>,
}

impl ServerCpu {
    pub(crate) fn read(pid: u32) -> Self {
        Self { ticks: cpu_ticks(&pid.to_string()), threads: thread_ns(pid) }
    }

    /// The CPU time from `self` to `later` in nanoseconds, and whether it is schedstat's: it
    /// is unless schedstat could not be read or a thread of `self` is gone from `later` (its
    /// time would be lost), when it is the ticks'.
    pub(crate) fn until(&self, later: &Self) -> (f64, bool) {
        if let (Some(before), Some(after)) = (&self.threads, &later.threads) {
            let ran = |tid: u32| after.iter().find(|(t, _)| *t == tid).map(|(_, ns)| *ns);
            let lasted: Option<u64> = before.iter().map(|&(tid, ns)| Some(ran(tid)?.saturating_sub(ns))).sum();
            if let Some(lasted) = lasted {
                // Threads started since, all of their time within the run.
                let born: u64 =
                    after.iter().filter(|(t, _)| !before.iter().any(|(b, _)| b == t)).map(|(_, ns)| ns).sum();
                return ((lasted + born) as f64, true);
            }
        }
        (ticks_ns(later.ticks - self.ticks), false)
    }
}

/// The nanoseconds each live thread of process `pid` has run (the first field of
/// `/proc/<pid>/task/<tid>/schedstat`), if the kernel keeps them.
pub(crate) fn thread_ns(pid: u32) -> Option<Vec<(u32, u64)>> {
    let mut threads = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let task = task.ok()?;
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else { continue };
        // A thread that ended since the listing is left out.
        let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else { continue };
        threads.push((tid, stat.split_whitespace().next()?.parse().ok()?));
    }
    // None read: no schedstat here.
    (!threads.is_empty()).then_some(threads)
}

/// `USER_HZ`, the unit of [`cpu_ticks`].
pub(crate) fn ticks_per_sec() -> f64 {
    static HZ: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *HZ.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok()?.trim().parse().ok())
            .unwrap_or(100.0)
    })
}
