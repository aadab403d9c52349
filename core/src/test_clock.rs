//! The base of virtual time for the crate's tests: their one clock read. Tests only ever add
//! durations to it.

use std::time::Instant;

/// The instant virtual time starts from.
#[allow(clippy::disallowed_methods)]
pub(crate) fn t0() -> Instant {
    Instant::now()
}
