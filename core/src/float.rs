//! The two `f64` operations the core needs that live in `std`, not `core` (no `libm`): exact
//! for every finite value.

/// From 2^52 on, every finite `f64` is an integer.
const ALL_INTEGRAL: f64 = 4_503_599_627_370_496.0;

/// Whether `x` is finite and has no fractional part (`x.fract() == 0.0` in `std`).
pub(crate) fn is_integral(x: f64) -> bool {
    if !x.is_finite() {
        return false;
    }
    if x.abs() >= ALL_INTEGRAL {
        return true;
    }
    // Invariant: |x| < 2^52 here, so the truncation fits an i64 and converts back exactly.
    #[allow(clippy::cast_possible_truncation)]
    let truncated = x as i64 as f64;
    truncated == x
}

/// The largest integer not above `x` (`x.floor()` in `std`); non-finite values unchanged.
pub(crate) fn floor(x: f64) -> f64 {
    if !x.is_finite() || x.abs() >= ALL_INTEGRAL {
        return x;
    }
    // Invariant: |x| < 2^52, so the truncation fits an i64 and converts back exactly.
    #[allow(clippy::cast_possible_truncation)]
    let truncated = x as i64 as f64;
    if truncated == x {
        x // keeps the sign of -0.0, as std does
    } else if truncated > x {
        truncated - 1.0
    } else {
        truncated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn edges_match_std() {
        for x in
            [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e300, -1e300, 4_503_599_627_370_495.5, f64::MAX, f64::MIN]
        {
            assert_eq!(is_integral(x), x.fract() == 0.0, "{x}");
            assert_eq!(floor(x).to_bits(), x.floor().to_bits(), "{x}");
        }
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(!is_integral(x));
        }
        assert!(floor(f64::NAN).is_nan());
        assert_eq!(floor(f64::NEG_INFINITY), f64::NEG_INFINITY);
    }

    proptest! {
        #[test]
        fn agrees_with_std_on_every_finite_value(x in any::<f64>().prop_filter("finite", |x| x.is_finite())) {
            prop_assert_eq!(is_integral(x), x.fract() == 0.0);
            prop_assert_eq!(floor(x).to_bits(), x.floor().to_bits());
        }
    }
}
