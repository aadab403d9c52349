//! Time, as the host supplies it.
//!
//! The core reads no clock: every input carries the time it happened, and every deadline the
//! core names is a value of the same type. That type is [`Instant`], a monotonic timestamp:
//!
//! - with the `std` feature (the default), it is `std::time::Instant`, so hosts pass
//!   `Instant::now()` and wait on the deadlines with any std or async timer;
//! - without it (`#![no_std]` + `alloc`: bare metal, `wasm32-unknown-unknown`), it is
//!   [`Timestamp`], a span since an origin the host picks (boot, the page's load), which the
//!   host builds from its own clock with [`Timestamp::from_origin`].
//!
//! Both offer the operations the core uses (`checked_add`, `checked_sub`,
//! `saturating_duration_since`, `duration_since`, `+`/`-` with a [`Duration`], ordering), so
//! code written against [`Instant`] with those builds either way. Wall time, which only task
//! timestamps read, follows the same rule: [`SystemTime`] is `std::time::SystemTime`, or
//! [`WallTime`] without `std`.
//!
//! # Examples
//!
//! A host without `std` counts milliseconds since boot and hands the core timestamps:
//!
//! ```
//! use talaria_core::time::{Duration, Timestamp};
//!
//! let boot_ms = 1_500; // read from the board's timer
//! let now = Timestamp::from_origin(Duration::from_millis(boot_ms));
//! let deadline = now + Duration::from_secs(30);
//! assert_eq!(deadline.saturating_duration_since(now), Duration::from_secs(30));
//! assert_eq!(now.saturating_duration_since(deadline), Duration::ZERO);
//! ```

use core::ops::{Add, AddAssign, Sub, SubAssign};

pub use core::time::Duration;

#[cfg(feature = "std")]
pub use std::time::{Instant, SystemTime};

#[cfg(not(feature = "std"))]
pub use self::{Timestamp as Instant, WallTime as SystemTime};

/// A monotonic timestamp: the span since an origin the host picks. The core's [`Instant`]
/// when the `std` feature is off; available always, so that hosts and tests can use it.
///
/// # Examples
///
/// ```
/// use talaria_core::time::{Duration, Timestamp};
///
/// let a = Timestamp::from_origin(Duration::from_millis(10));
/// let b = a + Duration::from_millis(5);
/// assert!(b > a);
/// assert_eq!(b - a, Duration::from_millis(5));
/// assert_eq!(b.since_origin(), Duration::from_millis(15));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(Duration);

impl Timestamp {
    /// The timestamp `since` after the host's origin.
    pub const fn from_origin(since: Duration) -> Self {
        Self(since)
    }

    /// The span from the host's origin to this timestamp.
    pub const fn since_origin(self) -> Duration {
        self.0
    }

    /// `self + span`, or `None` if that cannot be represented.
    pub fn checked_add(self, span: Duration) -> Option<Self> {
        self.0.checked_add(span).map(Self)
    }

    /// `self - span`, or `None` if that falls before the origin.
    pub fn checked_sub(self, span: Duration) -> Option<Self> {
        self.0.checked_sub(span).map(Self)
    }

    /// The span from `earlier` to `self`, or `None` if `earlier` is later.
    pub fn checked_duration_since(self, earlier: Self) -> Option<Duration> {
        self.0.checked_sub(earlier.0)
    }

    /// The span from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Self) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    /// The span from `earlier` to `self`, zero if `earlier` is later (as `std`'s `Instant`).
    pub fn duration_since(self, earlier: Self) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl Add<Duration> for Timestamp {
    type Output = Self;
    /// # Panics
    /// On overflow, as `std`'s `Instant` does; use [`Timestamp::checked_add`] to avoid it.
    #[allow(clippy::expect_used)] // std's `Instant` panics here too; `checked_add` does not.
    fn add(self, span: Duration) -> Self {
        self.checked_add(span).expect("overflow when adding a duration to a timestamp")
    }
}

impl AddAssign<Duration> for Timestamp {
    fn add_assign(&mut self, span: Duration) {
        *self = *self + span;
    }
}

impl Sub<Duration> for Timestamp {
    type Output = Self;
    /// # Panics
    /// Before the origin; use [`Timestamp::checked_sub`] to avoid it.
    #[allow(clippy::expect_used)] // std's `Instant` panics here too; `checked_sub` does not.
    fn sub(self, span: Duration) -> Self {
        self.checked_sub(span).expect("timestamp before its origin")
    }
}

impl SubAssign<Duration> for Timestamp {
    fn sub_assign(&mut self, span: Duration) {
        *self = *self - span;
    }
}

impl Sub for Timestamp {
    type Output = Duration;
    fn sub(self, earlier: Self) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

/// Wall time: the span since the Unix epoch. The core's [`SystemTime`] when the `std` feature
/// is off (task timestamps), with the names `std::time::SystemTime` has.
///
/// # Examples
///
/// ```
/// use talaria_core::time::{Duration, WallTime};
///
/// let t = WallTime::UNIX_EPOCH + Duration::from_secs(1_764_066_600);
/// assert_eq!(t.duration_since(WallTime::UNIX_EPOCH), Ok(Duration::from_secs(1_764_066_600)));
/// assert!(WallTime::UNIX_EPOCH.duration_since(t).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WallTime(Duration);

/// [`WallTime::duration_since`] was asked about a later time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("second time provided was later than self")]
pub struct WallTimeError;

impl WallTime {
    /// 1970-01-01T00:00:00Z.
    pub const UNIX_EPOCH: Self = Self(Duration::ZERO);

    /// The span from `earlier` to `self`, or an error if `earlier` is later.
    pub fn duration_since(self, earlier: Self) -> Result<Duration, WallTimeError> {
        self.0.checked_sub(earlier.0).ok_or(WallTimeError)
    }
}

impl Add<Duration> for WallTime {
    type Output = Self;
    fn add(self, span: Duration) -> Self {
        Self(self.0 + span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_order_and_subtract_like_std_instants() {
        let a = Timestamp::from_origin(Duration::from_secs(1));
        let b = a + Duration::from_millis(250);
        assert!(a < b);
        assert_eq!(b.duration_since(a), Duration::from_millis(250));
        assert_eq!(a.duration_since(b), Duration::ZERO, "saturates, as std does");
        assert_eq!(a.checked_duration_since(b), None);
        assert_eq!(a.checked_sub(Duration::from_secs(2)), None);
        assert_eq!(Timestamp::from_origin(Duration::MAX).checked_add(Duration::from_nanos(1)), None);
        let mut c = a;
        c += Duration::from_secs(1);
        c -= Duration::from_millis(500);
        assert_eq!(c - a, Duration::from_millis(500));
    }

    #[test]
    fn wall_time_counts_from_the_epoch() {
        let t = WallTime::UNIX_EPOCH + Duration::from_millis(1_500);
        assert_eq!(t.duration_since(WallTime::UNIX_EPOCH), Ok(Duration::from_millis(1_500)));
        assert_eq!(WallTime::UNIX_EPOCH.duration_since(t), Err(WallTimeError));
    }
}
