//! Small helpers every bench binary uses: percentiles, verdicts, environment knobs.

use std::time::Duration;

/// The `p` quantile of `sorted` (nearest rank).
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// How a target line reads.
pub(crate) const fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

/// A KiB figure, or `?` when it could not be read.
pub(crate) fn show(kib: Option<u64>) -> String {
    kib.map_or_else(|| "?".to_owned(), |k| k.to_string())
}

/// A numeric environment knob, or its default.
pub(crate) fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A field of `/proc/<pid>/status` in its unit (KiB for the memory ones), if it can be read.
pub(crate) fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
