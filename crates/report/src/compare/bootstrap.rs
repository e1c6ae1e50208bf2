//! The bootstrap: a side (one or more runs) is redrawn many times, runs
//! first and then blocks within each drawn run, each with replacement
//! (a two-stage block bootstrap). Drawing whole blocks of time keeps the
//! correlation between neighbouring requests (a slow second slows many);
//! drawing runs keeps the variation between runs, when there are several.

use rand_core::Rng;
use rand_pcg::Pcg64;

use barrage_metrics::blocks::{within_bucket, Block, BUCKETS};

/// A figure compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// Successes per second.
    Throughput,
    /// The share of records that succeeded.
    Success,
    /// Mean latency.
    Mean,
    /// Median latency.
    P50,
    /// 90th percentile latency.
    P90,
    /// 99th percentile latency.
    P99,
    /// 99.9th percentile latency.
    P999,
    /// Greatest latency.
    Max,
}

impl Figure {
    /// Every figure, in the order written.
    pub const ALL: [Figure; 8] = [
        Figure::Throughput,
        Figure::Success,
        Figure::Mean,
        Figure::P50,
        Figure::P90,
        Figure::P99,
        Figure::P999,
        Figure::Max,
    ];

    /// Its key in JSON and its name in text.
    pub fn name(self) -> &'static str {
        match self {
            Figure::Throughput => "throughput",
            Figure::Success => "success",
            Figure::Mean => "mean",
            Figure::P50 => "50th",
            Figure::P90 => "90th",
            Figure::P99 => "99th",
            Figure::P999 => "99.9th",
            Figure::Max => "max",
        }
    }

    /// Whether it is a latency (lower is better) rather than a rate.
    pub fn is_latency(self) -> bool {
        !matches!(self, Figure::Throughput | Figure::Success)
    }

    /// The quantile a percentile stands for.
    pub fn quantile(self) -> Option<f64> {
        match self {
            Figure::P50 => Some(0.5),
            Figure::P90 => Some(0.9),
            Figure::P99 => Some(0.99),
            Figure::P999 => Some(0.999),
            _ => None,
        }
    }

    /// Its index in [`Figures`].
    pub fn index(self) -> usize {
        Figure::ALL.iter().position(|f| *f == self).unwrap_or(0)
    }
}

/// One value per [`Figure`], in [`Figure::ALL`]'s order.
pub type Figures = [f64; 8];

/// The figures of some blocks taken together; `acc` is scratch space.
pub fn figures(blocks: &[&Block], acc: &mut Vec<u64>) -> Figures {
    acc.clear();
    acc.resize(BUCKETS, 0);
    let (mut count, mut ok, mut sum, mut max, mut span) = (0u64, 0u64, 0.0, 0u64, 0i64);
    for b in blocks {
        count += b.count;
        ok += b.ok;
        sum += b.latency_sum;
        max = max.max(b.max);
        span += b.span;
        for &(k, c) in &b.hist {
            acc[usize::from(k)] += u64::from(c);
        }
    }
    let mut out = [0.0; 8];
    if count == 0 {
        return out;
    }
    out[Figure::Throughput.index()] = ok as f64 / (span.max(1) as f64 / 1e9);
    out[Figure::Success.index()] = ok as f64 / count as f64;
    out[Figure::Mean.index()] = sum / count as f64;
    out[Figure::Max.index()] = max as f64;
    for f in Figure::ALL {
        let Some(q) = f.quantile() else { continue };
        // The rank HdrHistogram and vegeta use: the least value with at
        // least q of the records at or below it.
        let rank = ((q * count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (k, &c) in acc.iter().enumerate() {
            if seen + c >= rank {
                // Within the bucket, spread its records evenly (in log
                // terms): the quantile moves with the data, not in 1%
                // steps, so a redraw is rarely exactly the base.
                let within = (rank - seen) as f64 / c as f64;
                out[f.index()] = within_bucket(k, within);
                break;
            }
            seen += c;
        }
    }
    out
}

/// The parts a side's only run is cut into, to stand in for runs.
pub const PSEUDO_RUNS: usize = 3;

/// A side's runs as the bootstrap draws them: several runs as they are;
/// a single run (of at least 9 blocks) cut in [`PSEUDO_RUNS`] parts in
/// time order, so that a drift within it (a machine busier in its second
/// half) widens the interval as a second run would.
pub fn stand_ins(runs: Vec<Vec<Block>>) -> Vec<Vec<Block>> {
    match runs.as_slice() {
        [one] if one.len() >= 3 * PSEUDO_RUNS => one
            .chunks(one.len().div_ceil(PSEUDO_RUNS))
            .map(<[Block]>::to_vec)
            .collect(),
        _ => runs,
    }
}

/// Draws one resample of `runs` (each a run's blocks) into `out`.
pub fn draw<'a>(runs: &'a [Vec<Block>], rng: &mut Pcg64, out: &mut Vec<&'a Block>) {
    out.clear();
    let pick = |rng: &mut Pcg64, n: usize| (rng.next_u64() % n as u64) as usize;
    for _ in 0..runs.len() {
        let run = &runs[pick(rng, runs.len())];
        if run.is_empty() {
            continue;
        }
        for _ in 0..run.len() {
            out.push(&run[pick(rng, run.len())]);
        }
    }
}

/// The 2.5th and 97.5th percentiles of `v` (sorted in place).
pub fn interval(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let at = |q: f64| v[((q * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)];
    (at(0.025), at(0.975))
}

/// `new / base - 1`, 0 when both are 0, and infinite growth from 0 kept
/// finite (a figure that was 0 and is not is a change of 100%).
pub fn change(base: f64, new: f64) -> f64 {
    if base == 0.0 {
        if new == 0.0 {
            0.0
        } else {
            1.0
        }
    } else {
        new / base - 1.0
    }
}

/// For each figure, the interval of the change from `base` to `new` over
/// `rounds` paired redraws.
pub fn intervals(
    base: &[Vec<Block>],
    new: &[Vec<Block>],
    rounds: usize,
    rng: &mut Pcg64,
) -> [(f64, f64); 8] {
    let (mut a, mut b, mut acc) = (Vec::new(), Vec::new(), Vec::new());
    let mut changes: Vec<Vec<f64>> = (0..8).map(|_| Vec::with_capacity(rounds)).collect();
    for _ in 0..rounds {
        draw(base, rng, &mut a);
        let fa = figures(&a, &mut acc);
        draw(new, rng, &mut b);
        let fb = figures(&b, &mut acc);
        for (i, c) in changes.iter_mut().enumerate() {
            c.push(change(fa[i], fb[i]));
        }
    }
    let k = expansion(base.len(), new.len());
    let mut out = [(0.0, 0.0); 8];
    for (i, c) in changes.iter_mut().enumerate() {
        // On the log of the ratio (new / base): widened there, the
        // interval maps back above -100% (a figure cannot fall by more
        // than all of it; widened on the change itself, two runs of one
        // server read [-108.89%, +97.68%]).
        for x in c.iter_mut() {
            *x = (1.0 + *x).max(MIN_RATIO).ln();
        }
        let (low, high) = interval(c);
        let mid = c[c.len() / 2];
        let back = |x: f64| x.exp() - 1.0;
        out[i] = (back(mid - k * (mid - low)), back(mid + k * (high - mid)));
    }
    out
}

/// The least ratio taken on a log scale: a figure that fell to 0.
const MIN_RATIO: f64 = 1e-9;

/// Student's t at 97.5% for 1 to 30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// How much wider the percentile interval is drawn when a side has few
/// runs to redraw (Hesterberg's expanded percentile interval): a
/// bootstrap over `n` runs sees their spread shrunk by `(n-1)/n` and
/// draws normal, not Student's t, tails. With `b` and `n` runs (or
/// thirds) a side: `t(b+n-2) / 1.96 × sqrt(m/(m-1))`, `m` the fewer;
/// 3 and 3: 1.73, 8 and 8: 1.17; towards 1 as runs grow.
pub fn expansion(b: usize, n: usize) -> f64 {
    let m = b.min(n);
    if m < 2 {
        return 1.0;
    }
    let df = b + n - 2;
    let t = T975.get(df.saturating_sub(1)).copied().unwrap_or(1.96);
    t / 1.96 * (m as f64 / (m - 1) as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use barrage_metrics::blocks::Run;
    use rand_core::SeedableRng;

    /// A run of `n` records at 1,000/s, latencies spread around `ms`
    /// (a fixed pattern, so two runs of one `ms` are alike but not equal).
    fn run(n: i64, ms: f64, salt: u64) -> Vec<Block> {
        let mut r = Run::new();
        let mut x = salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            // Exponential tail over a floor: p99 is about floor + 4.6 × scale.
            let latency = ms * 1e6 * (0.8 + 0.2 * -(1.0 - u).ln());
            r.add(i * 1_000_000, latency as u64, !x.is_multiple_of(1000));
        }
        r.blocks()
    }

    #[test]
    fn intervals_stay_above_minus_100_percent() {
        let mut rng = Pcg64::seed_from_u64(3);
        // Three runs a side, one of them ten times slower: a wide
        // interval, still above -100%.
        let base = vec![run(3000, 1.0, 1), run(3000, 10.0, 2), run(3000, 1.0, 3)];
        let new = vec![run(3000, 1.0, 4), run(3000, 1.0, 5), run(3000, 10.0, 6)];
        for (low, high) in intervals(&base, &new, 400, &mut rng) {
            assert!(low > -1.0 && low <= high, "[{low}, {high}]");
        }
    }

    #[test]
    fn few_runs_widen_the_interval() {
        assert!(
            (expansion(3, 3) - 1.734).abs() < 0.01,
            "{}",
            expansion(3, 3)
        );
        assert!(
            (expansion(8, 8) - 1.170).abs() < 0.01,
            "{}",
            expansion(8, 8)
        );
        assert!(expansion(40, 40) < 1.02);
        assert_eq!(expansion(1, 5), 1.0);
    }

    #[test]
    fn quantiles_of_blocks_are_within_a_percent() {
        let blocks = run(20_000, 1.0, 1);
        let refs: Vec<&Block> = blocks.iter().collect();
        let f = figures(&refs, &mut Vec::new());
        let p50 = f[Figure::P50.index()] / 1e6;
        // floor 0.8 + 0.2 × ln 2
        assert!((p50 - 0.9386).abs() < 0.02, "{p50}");
        assert!((f[Figure::Success.index()] - 0.999).abs() < 0.001);
        assert!((f[Figure::Throughput.index()] - 1000.0).abs() < 20.0);
    }

    #[test]
    fn the_same_server_is_no_change_and_a_slower_one_is_seen() {
        let mut rng = Pcg64::seed_from_u64(7);
        let side = |n, ms, salt| stand_ins(vec![run(n, ms, salt)]);
        let (a, b) = (side(20_000, 1.0, 1), side(20_000, 1.0, 2));
        assert_eq!(a.len(), PSEUDO_RUNS);
        let same = intervals(&a, &b, 500, &mut rng);
        for f in Figure::ALL {
            if f == Figure::Max {
                continue;
            }
            let (lo, hi) = same[f.index()];
            assert!(lo <= 0.0 && hi >= 0.0, "{}: {lo}..{hi}", f.name());
        }
        let slower = side(20_000, 1.1, 3);
        let (lo, hi) = intervals(&a, &slower, 500, &mut rng)[Figure::P99.index()];
        assert!(lo > 0.0 && hi < 0.25, "10% slower p99: {lo}..{hi}");
    }
}
