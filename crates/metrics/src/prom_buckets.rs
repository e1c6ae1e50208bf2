//! Latency buckets for Prometheus histograms (issue 66), one scheme for
//! the live endpoint and `export`: the buckets of a native histogram of
//! schema 3, bucket `i` holding the values in (2^((i−1)/8), 2^(i/8)]
//! seconds, each bound 9.05% above the last; and classic buckets at every
//! other of those bounds, 2^(k/4) s from 2^−17 s (7.6 µs) to 2^6 s (64 s):
//! 93 bounds and `+Inf`, each 18.9% above the last. `histogram_quantile`
//! interpolates within a bucket, so a quantile it gives lies in the same
//! bucket as the exact one: within 18.9% of it on classic buckets, 9.05%
//! on native ones (and on loopback, where latencies sit in a few buckets,
//! usually far closer).

use crate::Distribution;

/// The native histograms' schema: bounds 2^(2^−3) = 1.0905 apart.
pub const SCHEMA: i32 = 3;

/// The classic buckets' bounds, as schema-3 indices: every other one
/// from −136 (2^−17 s) to 48 (2^6 s).
pub const CLASSIC_LOW: i32 = -136;
/// See [`CLASSIC_LOW`].
pub const CLASSIC_HIGH: i32 = 48;

/// The classic bounds, seconds, lowest first (`+Inf` not among them).
pub fn classic_bounds() -> impl Iterator<Item = (i32, f64)> {
    (CLASSIC_LOW..=CLASSIC_HIGH)
        .step_by(2)
        .map(|i| (i, bound(i)))
}

/// The upper bound of schema-3 bucket `i`, seconds: 2^(i/8).
pub fn bound(i: i32) -> f64 {
    (f64::from(i) / 8.0).exp2()
}

/// The schema-3 bucket of `ns` (> 0): the least `i` with
/// ns ≤ 2^(i/8) s. `None` for 0, which native histograms count in their
/// zero bucket and classic ones below every bound.
pub fn index(ns: u64) -> Option<i32> {
    if ns == 0 {
        return None;
    }
    let secs = ns as f64 / 1e9;
    let mut i = (secs.log2() * 8.0).ceil() as i32;
    // The logarithm's rounding can land a bound itself one bucket high.
    if bound(i - 1) >= secs {
        i -= 1;
    }
    Some(i)
}

/// How many classic bounds there are ([`classic_bounds`]).
pub const CLASSIC_COUNT: usize = ((CLASSIC_HIGH - CLASSIC_LOW) / 2 + 1) as usize;

/// The classic bucket of `ns`: the position of the least bound at or
/// above it in [`classic_bounds`]; `None` above the last (only `+Inf`
/// holds it).
pub fn classic_slot(ns: u64) -> Option<usize> {
    let Some(i) = index(ns) else {
        return Some(0);
    };
    if i > CLASSIC_HIGH {
        return None;
    }
    // The least even index at or above i, from CLASSIC_LOW.
    Some(((i.max(CLASSIC_LOW) - CLASSIC_LOW + 1) / 2) as usize)
}

/// A distribution's counts by schema-3 bucket: (zero count, sorted
/// (index, count) of the buckets that hold any). Each value the
/// distribution keeps (to 3 significant digits) goes to the bucket of its
/// highest equivalent, so a value within 0.1% below a bound may count
/// in the bucket above it.
pub fn counts(d: &Distribution) -> (u64, Vec<(i32, u64)>) {
    let mut zero = 0;
    let mut out: Vec<(i32, u64)> = Vec::new();
    if d.count() == 0 {
        return (0, out);
    }
    for v in d.histogram().iter_recorded() {
        let (value, n) = (v.value_iterated_to(), v.count_at_value());
        match index(value.clamp(d.min(), d.max())) {
            None => zero += n,
            Some(i) => match out.last_mut() {
                Some((last, c)) if *last == i => *c += n,
                _ => out.push((i, n)),
            },
        }
    }
    (zero, out)
}

/// Cumulative counts at each classic bound of the bucket counts `b` (as
/// [`counts`] gives, with `zero` at or below every bound): one per
/// [`classic_bounds`], then the total for `+Inf`.
pub fn classic(zero: u64, b: &[(i32, u64)]) -> Vec<u64> {
    let mut out = Vec::with_capacity(((CLASSIC_HIGH - CLASSIC_LOW) / 2 + 2) as usize);
    let (mut seen, mut at) = (zero, 0);
    for (i, _) in classic_bounds() {
        while at < b.len() && b[at].0 <= i {
            seen += b[at].1;
            at += 1;
        }
        out.push(seen);
    }
    out.push(zero + b.iter().map(|(_, c)| c).sum::<u64>());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_goes_to_the_least_bound_at_or_above_it() {
        assert_eq!(index(0), None);
        // 1 s is 2^0: bucket 0, not 1.
        assert_eq!(index(1_000_000_000), Some(0));
        assert_eq!(index(1_000_000_001), Some(1));
        // 2^(−8/8) s = 500 ms exactly.
        assert_eq!(index(500_000_000), Some(-8));
        for ns in [1u64, 999, 54_321, 1_000_000, 7_777_777, 120_000_000_000] {
            let i = index(ns).unwrap();
            let s = ns as f64 / 1e9;
            assert!(bound(i - 1) < s && s <= bound(i), "{ns}: {i}");
        }
        assert_eq!(classic_bounds().count(), 93);
        assert_eq!(CLASSIC_COUNT, 93);
        assert_eq!(classic_slot(0), Some(0));
        assert_eq!(classic_slot(1), Some(0));
        assert_eq!(classic_slot(1_000_000_000), Some(68), "2^0 s: index 0");
        assert_eq!(classic_slot(1_000_000_001), Some(69));
        assert_eq!(classic_slot(64_000_000_000), Some(92));
        assert_eq!(classic_slot(64_000_000_001), None);
        for ns in [3u64, 7_000, 999_999, 5_000_000, 60_000_000_000] {
            let slot = classic_slot(ns).unwrap();
            let b: Vec<f64> = classic_bounds().map(|(_, b)| b).collect();
            let s = ns as f64 / 1e9;
            assert!(s <= b[slot] && (slot == 0 || b[slot - 1] < s), "{ns}");
        }
        let (first, last) = (bound(CLASSIC_LOW), bound(CLASSIC_HIGH));
        assert!((first - 7.62939453125e-6).abs() < 1e-15 && last == 64.0);
    }

    #[test]
    fn counts_and_classic_cumulate_every_record_once() {
        let mut d = Distribution::default();
        for v in [
            0u64,
            900_000,
            1_000_000,
            1_000_000,
            30_000_000,
            100_000_000_000,
        ] {
            d.record(v);
        }
        let (zero, b) = counts(&d);
        assert_eq!(zero, 1);
        assert_eq!(b.iter().map(|(_, c)| c).sum::<u64>(), 5);
        assert!(b.windows(2).all(|w| w[0].0 < w[1].0), "{b:?}");
        let c = classic(zero, &b);
        assert_eq!(c.len(), 94);
        assert!(c.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(c[0], 1, "0 is at or below every bound");
        // At the bound 2^(−40/4) s = 0.977 ms: 0 and 0.9 ms.
        let at = classic_bounds().position(|(i, _)| i == -80).unwrap();
        assert_eq!(c[at], 2);
        // 100 s is past the last bound, 64 s: only +Inf holds it.
        assert_eq!((c[92], c[93]), (5, 6));
    }
}
