//! Seeds: the `TALARIA_SIM_SEED` override, the seeded PRNG, and the guard that prints the seed
//! of a failing run.

use std::time::Duration;

/// The environment variable that overrides every simulator seed.
pub const SEED_ENV: &str = "TALARIA_SIM_SEED";

/// The seed used when a test names none and `TALARIA_SIM_SEED` is unset.
pub const DEFAULT_SEED: u64 = 0x7a1a_71a5_5eed_0001;

/// `TALARIA_SIM_SEED` if it is set (decimal, or hex with `0x`), else `default`.
///
/// # Panics
///
/// If the variable is set but is not a number (a typo would silently replay the wrong seed).
///
/// # Examples
///
/// ```
/// if std::env::var_os(talaria_tests::sim::SEED_ENV).is_none() {
///     assert_eq!(talaria_tests::sim::seed_or(42), 42);
/// }
/// ```
#[must_use]
pub fn seed_or(default: u64) -> u64 {
    let Ok(text) = std::env::var(SEED_ENV) else { return default };
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.unwrap_or_else(|e| panic!("{SEED_ENV}={text:?} is not a u64: {e}"))
}

/// A small seeded PRNG (splitmix64): fast, deterministic, good enough to pick faults.
///
/// # Examples
///
/// ```
/// use talaria_tests::sim::Rng;
///
/// let (mut a, mut b) = (Rng::new(1), Rng::new(1));
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// assert!(!a.chance(0.0) && a.chance(1.0));
/// ```
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub const fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// `true` with probability `p` (0 never, 1 always).
    pub fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        // 53 random bits make a uniform f64 in [0, 1).
        #[allow(clippy::cast_precision_loss, reason = "53 bits fit an f64 mantissa exactly")]
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        unit < p
    }

    /// A duration in `0..=max`, in whole microseconds.
    pub fn duration(&mut self, max: Duration) -> Duration {
        let micros = u64::try_from(max.as_micros()).unwrap_or(u64::MAX);
        Duration::from_micros(self.below(micros.saturating_add(1)))
    }
}

/// Prints the seed when a test panics while the pair is alive.
pub(crate) struct SeedGuard {
    pub(crate) seed: u64,
}

impl Drop for SeedGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("talaria sim: failed with seed {0}; replay with {SEED_ENV}={0}", self.seed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_spread() {
        let mut a = Rng::new(9);
        let mut b = Rng::new(9);
        let xs: Vec<u64> = (0..100).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..100).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let hits = (0..10_000).filter(|_| a.chance(0.25)).count();
        assert!((2_000..3_000).contains(&hits), "{hits}");
        assert!(a.duration(Duration::from_millis(3)) <= Duration::from_millis(3));
    }
}
