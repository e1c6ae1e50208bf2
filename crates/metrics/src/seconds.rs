//! Per-second samples, as autocannon reports them: how many answers (and
//! response bytes) completed in each whole second of the attack, then
//! their 1st, 2.5th, 50th and 97.5th percentiles, mean, standard
//! deviation and minimum.

use std::collections::BTreeMap;

use barrage_model::Hit;

/// Most distinct seconds kept (a crafted stream spread over the whole
/// time range must not grow this without bound); beyond, no figures.
const MAX_SECONDS: usize = 1 << 20;

/// Answers and bytes by the second they completed in (unix seconds).
#[derive(Debug, Clone, Default)]
pub struct Seconds {
    counts: BTreeMap<i64, (u64, u64)>,
    /// The second being counted, not yet in `counts` (records mostly come
    /// in order: one map update per second, not per record).
    current: Option<(i64, u64, u64)>,
    overflow: bool,
}

/// The figures of one set of per-second samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleStats {
    /// 1st percentile.
    pub p1: f64,
    /// 2.5th percentile.
    pub p2_5: f64,
    /// Median.
    pub p50: f64,
    /// 97.5th percentile.
    pub p97_5: f64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation (of the population, as autocannon's).
    pub stdev: f64,
    /// Least.
    pub min: f64,
}

/// Requests and bytes per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerSecond {
    /// Whole seconds sampled.
    pub samples: u64,
    /// Answers completed per second.
    pub requests: SampleStats,
    /// Response body bytes per second.
    pub bytes: SampleStats,
}

impl Seconds {
    /// Counts a record in the second its answer completed.
    pub fn add(&mut self, hit: &Hit) {
        let second = hit.end().div_euclid(1_000_000_000);
        match &mut self.current {
            Some((s, n, b)) if *s == second => {
                *n += 1;
                *b = b.saturating_add(hit.bytes_in);
            }
            _ => {
                self.settle();
                self.current = Some((second, 1, hit.bytes_in));
            }
        }
    }

    fn settle(&mut self) {
        let Some((s, n, b)) = self.current.take() else {
            return;
        };
        if self.overflow {
            return;
        }
        if self.counts.len() >= MAX_SECONDS && !self.counts.contains_key(&s) {
            self.overflow = true;
            self.counts.clear();
            return;
        }
        let e = self.counts.entry(s).or_insert((0, 0));
        e.0 += n;
        e.1 = e.1.saturating_add(b);
    }

    /// Adds everything in `other`.
    pub fn merge(&mut self, other: &Seconds) {
        let mut other = other.clone();
        other.settle();
        self.settle();
        self.overflow |= other.overflow;
        for (s, (n, b)) in other.counts {
            self.current = Some((s, n, b));
            self.settle();
        }
    }

    /// The samples: every whole second from the first send (`earliest`,
    /// unix ns) to the last answer (`end`), zeros included; the partial
    /// seconds at either edge are left out unless there is no whole one.
    pub fn figures(&self, earliest: i64, end: i64) -> Option<PerSecond> {
        let mut all = self.clone();
        all.settle();
        if all.overflow || all.counts.is_empty() || end < earliest {
            return None;
        }
        let first_whole = earliest.div_euclid(1_000_000_000) + 1;
        let last_whole = end.div_euclid(1_000_000_000) - 1;
        let (from, to) = if last_whole >= first_whole {
            (first_whole, last_whole)
        } else {
            let keys = all.counts.keys();
            (*keys.clone().next()?, *keys.last()?)
        };
        let span = u64::try_from(to - from + 1).ok()?;
        let seen: Vec<(u64, u64)> = all.counts.range(from..=to).map(|(_, v)| *v).collect();
        let zeros = span - seen.len() as u64;
        let stats = |pick: fn(&(u64, u64)) -> u64| {
            let mut v: Vec<u64> = seen.iter().map(pick).collect();
            v.sort_unstable();
            sample_stats(&v, zeros)
        };
        Some(PerSecond {
            samples: span,
            requests: stats(|s| s.0),
            bytes: stats(|s| s.1),
        })
    }
}

/// The figures of `sorted` values plus `zeros` samples of 0.
fn sample_stats(sorted: &[u64], zeros: u64) -> SampleStats {
    let n = sorted.len() as u64 + zeros;
    let at = |rank: u64| -> f64 {
        // Samples in order: the zeros first.
        if rank < zeros {
            0.0
        } else {
            sorted.get((rank - zeros) as usize).copied().unwrap_or(0) as f64
        }
    };
    // Nearest rank, as autocannon's (hdr-histogram-percentiles-obj).
    let pct = |p: f64| {
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64 - 1;
        at(rank.min(n.saturating_sub(1)))
    };
    let sum: f64 = sorted.iter().map(|&v| v as f64).sum();
    let mean = sum / n.max(1) as f64;
    let var = (sorted
        .iter()
        .map(|&v| (v as f64 - mean).powi(2))
        .sum::<f64>()
        + zeros as f64 * mean * mean)
        / n.max(1) as f64;
    SampleStats {
        p1: pct(1.0),
        p2_5: pct(2.5),
        p50: pct(50.0),
        p97_5: pct(97.5),
        mean,
        stdev: var.sqrt(),
        min: at(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn hit(end: i64, bytes: u64) -> Hit {
        Hit {
            timestamp: end,
            scheduled: end,
            latency: 0,
            code: 200,
            bytes_in: bytes,
            ..Hit::default()
        }
    }

    #[test]
    fn whole_seconds_with_gaps_as_zeros() {
        let mut s = Seconds::default();
        // Seconds 100 (partial: the first send is at 100.5), 101: 10, 102:
        // none, 103: 30, 104 (partial).
        s.add(&hit(100 * S + S / 2, 1));
        for _ in 0..10 {
            s.add(&hit(101 * S + 1, 2));
        }
        for _ in 0..30 {
            s.add(&hit(103 * S + 1, 2));
        }
        s.add(&hit(104 * S + 5, 1));
        let f = s.figures(100 * S + S / 2, 104 * S + 5).unwrap();
        assert_eq!(f.samples, 3);
        assert_eq!(f.requests.min, 0.0);
        assert_eq!(f.requests.p50, 10.0);
        assert_eq!(f.requests.p97_5, 30.0);
        assert!((f.requests.mean - 40.0 / 3.0).abs() < 1e-9);
        assert_eq!(f.bytes.p97_5, 60.0);
        // Merging gives the same figures.
        let mut a = Seconds::default();
        a.merge(&s);
        assert_eq!(a.figures(100 * S + S / 2, 104 * S + 5), Some(f));
    }

    #[test]
    fn a_short_run_uses_the_seconds_it_has() {
        let mut s = Seconds::default();
        s.add(&hit(5 * S + 1, 1));
        s.add(&hit(5 * S + 2, 1));
        let f = s.figures(5 * S, 5 * S + 2).unwrap();
        assert_eq!((f.samples, f.requests.p50), (1, 2.0));
    }
}
