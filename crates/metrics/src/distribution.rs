//! [`Distribution`]: count, total, min, max and an HdrHistogram of one
//! set of durations, exact to [`SIGFIGS`] significant digits.

use std::sync::atomic::{AtomicU8, Ordering};

use hdrhistogram::Histogram;

/// Significant digits kept by the latency histograms, unless
/// [`set_precision`] says otherwise.
pub const SIGFIGS: u8 = 3;

/// The significant digits of the distributions made from now on.
static PRECISION: AtomicU8 = AtomicU8::new(SIGFIGS);

/// Keeps `digits` significant digits (3 to 5) in every distribution made
/// from now on (`report -precision`): a quantile then sits within
/// 10^-digits of itself where 3 digits leave up to 0.1%, for 16 (4) or
/// 128 (5) times the memory a distribution holds.
pub fn set_precision(digits: u8) {
    PRECISION.store(digits.clamp(SIGFIGS, 5), Ordering::Relaxed);
}

/// An exact-count summary of one set of durations: count, total, min, max
/// and an HdrHistogram for quantiles (3 significant digits).
#[derive(Clone)]
pub struct Distribution {
    count: u64,
    total: u128,
    min: u64,
    max: u64,
    hist: Histogram<u64>,
}

impl Default for Distribution {
    fn default() -> Self {
        Distribution::with_sigfigs(PRECISION.load(Ordering::Relaxed))
    }
}

impl Distribution {
    /// A distribution with 2 significant digits instead of 3: a tenth of
    /// the memory, for figures that are shown, not reported (the live
    /// progress line, refreshed 4 times a second).
    pub fn coarse() -> Self {
        Distribution::with_sigfigs(2)
    }

    fn with_sigfigs(sigfigs: u8) -> Self {
        let mut hist = Histogram::new(sigfigs).expect("2 to 5 significant digits make a histogram");
        hist.auto(true);
        Distribution {
            count: 0,
            total: 0,
            min: u64::MAX,
            max: 0,
            hist,
        }
    }

    /// Empties it, keeping its memory.
    pub fn reset(&mut self) {
        self.count = 0;
        self.total = 0;
        self.min = u64::MAX;
        self.max = 0;
        self.hist.reset();
    }

    /// Records one value, ns.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.count += 1;
        self.total += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        // With auto-resize, recording only fails beyond u64::MAX / 2.
        if self.hist.record(v).is_err() {
            let _ = self.hist.record(self.hist.high());
        }
    }

    /// Adds everything in `other`.
    pub fn merge(&mut self, other: &Distribution) {
        self.count += other.count;
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        let _ = self.hist.add(&other.hist);
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum, ns.
    pub fn total(&self) -> u128 {
        self.total
    }

    /// Mean, ns (truncated, as Go's integer division).
    pub fn mean(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            (self.total / self.count as u128) as u64
        }
    }

    /// Smallest, ns (exact; 0 when empty).
    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    /// Largest, ns (exact).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value at quantile `q` in [0, 1], ns: exact to 3 significant
    /// digits and never outside the exact min and max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        self.hist
            .value_at_quantile(q.clamp(0.0, 1.0))
            .clamp(self.min, self.max)
    }

    /// The histogram.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }
}
