//! Instants as wall-clock time: the core's clock is `Instant`, which no other process can
//! read; a shared store keeps nanoseconds since the Unix epoch instead.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Converts between this process's `Instant`s and nanoseconds since the Unix epoch, from one
/// anchor (an `Instant` and a `SystemTime` read together). Conversions are exact both ways for
/// the same clock.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
/// use talaria_redis::WallClock;
///
/// let clock = WallClock::now();
/// let t = Instant::now() + Duration::from_millis(1500);
/// assert_eq!(clock.instant(clock.nanos(t)), t);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct WallClock {
    instant: Instant,
    nanos: u128,
}

impl WallClock {
    /// An anchor read now.
    #[must_use]
    pub fn now() -> Self {
        let instant = Instant::now();
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        Self { instant, nanos }
    }

    /// `at` in nanoseconds since the Unix epoch.
    #[must_use]
    pub fn nanos(&self, at: Instant) -> u128 {
        match at.checked_duration_since(self.instant) {
            Some(after) => self.nanos + after.as_nanos(),
            None => self.nanos.saturating_sub(self.instant.duration_since(at).as_nanos()),
        }
    }

    /// The `Instant` of `nanos` since the Unix epoch (the anchor itself if it cannot be
    /// represented).
    #[must_use]
    pub fn instant(&self, nanos: u128) -> Instant {
        let duration = |n: u128| Duration::from_nanos(u64::try_from(n).unwrap_or(u64::MAX));
        if nanos >= self.nanos {
            self.instant.checked_add(duration(nanos - self.nanos)).unwrap_or(self.instant)
        } else {
            self.instant.checked_sub(duration(self.nanos - nanos)).unwrap_or(self.instant)
        }
    }
}

/// Nanoseconds as the milliseconds of a sorted-set score (fractional: exact to well under a
/// microsecond for present-day times).
pub(crate) fn score(nanos: u128) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let ms = nanos as f64 / 1e6;
    ms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_before_and_after_the_anchor_round_trip() {
        let clock = WallClock::now();
        for at in [clock.instant, clock.instant + Duration::from_secs(90), Instant::now()] {
            assert_eq!(clock.instant(clock.nanos(at)), at);
        }
        if let Some(before) = clock.instant.checked_sub(Duration::from_millis(1)) {
            assert_eq!(clock.instant(clock.nanos(before)), before);
            assert!(clock.nanos(before) < clock.nanos);
        }
    }
}
