//! Intervals on a single run (issue 63): a block bootstrap over the run's
//! blocks of send time ([`crate::blocks`], the blocks `compare` redraws).
//! Requests in a run are not independent (a slow second slows many), so
//! redrawing records would give intervals far too narrow; whole blocks,
//! 40 to 80 of them, each at least 10 ms of sends and about a
//! fortieth of a long run, keep that correlation. The run's blocks are
//! redrawn with replacement [`ROUNDS`] times from a fixed seed, so a
//! report repeats; each figure's interval is the 2.5th to the 97.5th
//! percentile of its redraws, widened to hold the figure itself (the
//! redraws read latencies in 1% steps).

use crate::blocks::{within_bucket, Block, Run, BUCKETS};

/// Redraws.
pub const ROUNDS: usize = 1000;

/// The fewest blocks and records a run needs for intervals.
const MIN_BLOCKS: usize = 9;
const MIN_RECORDS: u64 = 100;

/// A 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Its low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
}

impl Interval {
    /// Whether it holds `v`.
    pub fn holds(&self, v: f64) -> bool {
        self.low <= v && v <= self.high
    }

    fn widened_to(self, v: f64) -> Interval {
        Interval {
            low: self.low.min(v),
            high: self.high.max(v),
        }
    }
}

/// A run's figures with their 95% intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct Intervals {
    /// Each latency percentile asked for (a percent, `99.9`) and its
    /// interval (ns).
    pub latencies: Vec<(f64, Interval)>,
    /// The mean latency's (ns).
    pub mean: Interval,
    /// Requests sent a second.
    pub rate: Interval,
    /// Successes a second.
    pub throughput: Interval,
    /// The share of records that succeeded.
    pub success: Interval,
    /// The share that met the objectives (`Options::slo`; 0 to 0
    /// without).
    pub attainment: Interval,
    /// The blocks redrawn, and how wide each is (ns of send time).
    pub blocks: usize,
    /// See `blocks`.
    pub width: i64,
}

/// The intervals of `run`'s figures, the latency percentiles `percents`;
/// `None` with fewer than 9 blocks or 100 records.
#[cfg(test)]
pub(crate) fn bootstrap(
    run: &Run,
    percents: &[f64],
    rounds: usize,
    seed: u64,
) -> Option<Intervals> {
    bootstrap_at(run, percents, rounds, seed, 0.95)
}

/// [`bootstrap`] at `confidence` (0.9: the 5th to 95th percentiles).
pub(crate) fn bootstrap_at(
    run: &Run,
    percents: &[f64],
    rounds: usize,
    seed: u64,
    confidence: f64,
) -> Option<Intervals> {
    let blocks = run.blocks();
    let n: u64 = blocks.iter().map(|b| b.count).sum();
    if blocks.len() < MIN_BLOCKS || n < MIN_RECORDS {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let k = percents.len();
    // Per redraw: each percentile, then mean, rate, throughput, success,
    // attainment.
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); k + 5];
    let mut acc = vec![0u64; BUCKETS];
    let mut drawn: Vec<&Block> = Vec::with_capacity(blocks.len());
    for _ in 0..rounds {
        drawn.clear();
        drawn.extend((0..blocks.len()).map(|_| &blocks[rng.usize(..blocks.len())]));
        acc.fill(0);
        let (mut count, mut ok, mut sum, mut span) = (0u64, 0u64, 0.0, 0i64);
        let mut attained = 0u64;
        for b in &drawn {
            count += b.count;
            ok += b.ok;
            attained += b.attained;
            sum += b.latency_sum;
            span += b.span;
            for &(i, c) in &b.hist {
                acc[usize::from(i)] += u64::from(c);
            }
        }
        if count == 0 {
            continue;
        }
        for (j, p) in percents.iter().enumerate() {
            draws[j].push(quantile(&acc, count, p / 100.0));
        }
        let secs = span.max(1) as f64 / 1e9;
        draws[k].push(sum / count as f64);
        draws[k + 1].push(count as f64 / secs);
        draws[k + 2].push(ok as f64 / secs);
        draws[k + 3].push(ok as f64 / count as f64);
        draws[k + 4].push(attained as f64 / count as f64);
    }
    let widen = few_blocks(blocks.len(), confidence);
    let mut at = |i: usize| interval(&mut draws[i], confidence, widen);
    Some(Intervals {
        latencies: percents
            .iter()
            .enumerate()
            .map(|(j, p)| (*p, at(j)))
            .collect(),
        mean: at(k),
        rate: at(k + 1),
        throughput: at(k + 2),
        success: at(k + 3),
        attainment: at(k + 4),
        blocks: blocks.len(),
        width: run.width(),
    })
}

/// The value at quantile `q` of bucket counts `acc` (`count` in all):
/// the least with at least `q` of them at or below it, as HdrHistogram
/// and vegeta rank, spread evenly within its bucket.
fn quantile(acc: &[u64], count: u64, q: f64) -> f64 {
    let rank = ((q * count as f64).ceil() as u64).clamp(1, count);
    let mut seen = 0;
    for (i, &c) in acc.iter().enumerate() {
        if seen + c >= rank {
            return within_bucket(i, (rank - seen) as f64 / c as f64);
        }
        seen += c;
    }
    0.0
}

/// The central `confidence` of `v` (at 0.95, its 2.5th and 97.5th
/// percentiles), each end moved `widen` times as far from the median.
fn interval(v: &mut [f64], confidence: f64, widen: f64) -> Interval {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return Interval {
            low: 0.0,
            high: 0.0,
        };
    }
    let at = |q: f64| v[((q * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)];
    let tail = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    let mid = at(0.5);
    Interval {
        low: mid - (mid - at(tail)) * widen,
        high: mid + (at(1.0 - tail) - mid) * widen,
    }
}

/// How much wider an interval from `blocks` redrawn blocks is drawn: a
/// bootstrap over few blocks spreads too little (its variance is
/// (B − 1)/B of the true one, and a spread estimated from B blocks calls
/// for Student's t with B − 1 degrees of freedom, not the normal law).
/// Both at once: √(B/(B − 1)) × t/z, 1.045 for 40 blocks at 95%. Without
/// it, runs with bursts held their p99 90% of the time.
fn few_blocks(blocks: usize, confidence: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
    let b = blocks.max(2) as f64;
    let p = 0.5 + confidence.clamp(0.5, 0.999) / 2.0;
    let z = Normal::standard().inverse_cdf(p);
    let t = StudentsT::new(0.0, 1.0, b - 1.0).map_or(z, |t| t.inverse_cdf(p));
    (b / (b - 1.0)).sqrt() * t / z
}

impl crate::Metrics {
    /// The 95% intervals of this run's figures from the run itself, the
    /// latency percentiles `percents` (`99.9`); `None` when the metrics
    /// were not asked to keep blocks (`Options::intervals`), or the run
    /// is too short (9 blocks, 100 records).
    pub fn intervals(&self, percents: &[f64]) -> Option<Intervals> {
        self.intervals_at(percents, 0.95)
    }

    /// [`crate::Metrics::intervals`] at `confidence` (0.9, 0.95, 0.99).
    pub fn intervals_at(&self, percents: &[f64], confidence: f64) -> Option<Intervals> {
        let run = self.evidence()?.run.as_ref()?;
        let mut iv = bootstrap_at(run, percents, ROUNDS, 1, confidence)?;
        for (p, i) in &mut iv.latencies {
            *i = i.widened_to(self.latency().quantile(*p / 100.0) as f64);
        }
        iv.mean = iv.mean.widened_to(self.latency().mean() as f64);
        iv.rate = iv.rate.widened_to(self.rate());
        iv.throughput = iv.throughput.widened_to(self.throughput());
        iv.success = iv.success.widened_to(self.success_ratio());
        if let Some(a) = self.attainment() {
            iv.attainment = iv.attainment.widened_to(a);
        }
        Some(iv)
    }

    /// The 95% interval of [`Metrics::attainment`]: the block bootstrap's
    /// ([`Metrics::intervals`]) joined with Wilson's score interval on
    /// the records counted as independent, whichever reaches further at
    /// each end. The bootstrap holds the correlation between requests,
    /// but over blocks that all met every objective it draws no spread
    /// at all; Wilson's says how far a run of n requests, all of which
    /// met it, can still be from the truth (100 of 100: down to 96.3%).
    /// A run too short for blocks (under 100 records or 9 blocks) has
    /// Wilson's alone. `None` without objectives or records.
    pub fn attainment_interval(&self) -> Option<Interval> {
        let a = self.attainment()?;
        let wilson = wilson(a, self.requests());
        Some(match self.intervals_at(&[], 0.95) {
            Some(iv) => Interval {
                low: iv.attainment.low.min(wilson.low),
                high: iv.attainment.high.max(wilson.high),
            },
            None => wilson,
        })
    }
}

/// Wilson's 95% score interval of a share `p` of `n` independent trials.
pub(crate) fn wilson(p: f64, n: u64) -> Interval {
    // z for 95%, two-sided.
    const Z: f64 = 1.959_963_984_540_054;
    let n = n.max(1) as f64;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Interval {
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of `n` records at 1,000/s whose latencies (ns) are an AR(1)
    /// process of correlation `phi` around 1 ms (lognormal: exp of a
    /// normal AR(1)), bursts when `bursts`; its true p50, p99 and mean
    /// come from the law: median e^0 ms = 1 ms, p99 e^(2.326 σ) ms, mean
    /// e^(σ²/2) ms, σ the stationary deviation.
    fn ar1(n: usize, phi: f64, seed: u64) -> Run {
        let mut rng = fastrand::Rng::with_seed(seed);
        let normal = |rng: &mut fastrand::Rng| {
            // Box–Muller.
            let (u, v) = (1.0 - rng.f64(), rng.f64());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let innovation = (1.0 - phi * phi).sqrt() * SIGMA;
        let mut x = normal(&mut rng) * SIGMA;
        let mut run = Run::new();
        for i in 0..n {
            x = phi * x + innovation * normal(&mut rng);
            let latency = (x.exp() * 1e6) as u64;
            run.add(i as i64 * 1_000_000, latency, true);
        }
        run
    }

    /// The stationary deviation of the latency's log.
    const SIGMA: f64 = 0.5;

    /// Latencies (ns) with bursts: independent lognormal ones around 1 ms
    /// (σ as [`ar1`]'s), times 5 while a burst lasts. A burst starts
    /// after a record with chance 1 in 500 and ends with chance 1 in 50:
    /// bursts of 50 records on average, 9% of the records.
    fn bursts(n: usize, seed: u64) -> Vec<u64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut burst = false;
        (0..n)
            .map(|_| {
                burst = if burst {
                    rng.u32(..50) != 0
                } else {
                    rng.u32(..500) == 0
                };
                let (u, v) = (1.0 - rng.f64(), rng.f64());
                let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                let scale = if burst { 5.0 } else { 1.0 };
                ((z * SIGMA).exp() * 1e6 * scale) as u64
            })
            .collect()
    }

    #[test]
    fn intervals_hold_the_true_figures_of_a_run_with_bursts() {
        // The law's figures, from 4 million records of it.
        let mut long = bursts(4_000_000, 1_000);
        let mean = long.iter().sum::<u64>() as f64 / long.len() as f64;
        long.sort_unstable();
        let at = |q: f64| long[(q * (long.len() - 1) as f64) as usize] as f64;
        let truth = [at(0.5), at(0.99), mean];
        let runs = 200;
        let mut held = [0u32; 3];
        for seed in 0..runs {
            let mut run = Run::new();
            for (i, latency) in bursts(20_000, seed).into_iter().enumerate() {
                run.add(i as i64 * 1_000_000, latency, true);
            }
            let iv = bootstrap(&run, &[50.0, 99.0], 300, seed).unwrap();
            let got = [iv.latencies[0].1, iv.latencies[1].1, iv.mean];
            for (h, (i, t)) in held.iter_mut().zip(got.iter().zip(truth)) {
                *h += i.holds(t) as u32;
            }
        }
        eprintln!("bursts: held p50, p99, mean {held:?} of {runs}");
        for (name, h) in ["p50", "p99", "mean"].iter().zip(held) {
            let share = h as f64 / runs as f64;
            assert!(
                (0.90..=0.98).contains(&share),
                "bursts: {name} held in {h} of {runs}"
            );
        }
    }

    #[test]
    fn intervals_hold_the_true_figures_about_95_times_in_100() {
        let true_p50 = 1e6;
        let true_p99 = (2.326 * SIGMA).exp() * 1e6;
        let true_mean = (SIGMA * SIGMA / 2.0).exp() * 1e6;
        for phi in [0.0, 0.9] {
            let (mut p50, mut p99, mut mean) = (0, 0, 0);
            let runs = 200;
            for seed in 0..runs {
                let run = ar1(20_000, phi, seed);
                let iv = bootstrap(&run, &[50.0, 99.0], 300, seed).unwrap();
                p50 += iv.latencies[0].1.holds(true_p50) as u32;
                p99 += iv.latencies[1].1.holds(true_p99) as u32;
                mean += iv.mean.holds(true_mean) as u32;
            }
            eprintln!("phi {phi}: held p50 {p50}, p99 {p99}, mean {mean} of {runs}");
            for (name, held) in [("p50", p50), ("p99", p99), ("mean", mean)] {
                let share = held as f64 / runs as f64;
                assert!(
                    (0.90..=0.98).contains(&share),
                    "phi {phi}: {name} held in {held} of {runs}"
                );
            }
        }
    }

    #[test]
    fn correlated_records_give_wider_intervals_than_independent_ones() {
        let width = |phi: f64| {
            let iv = bootstrap(&ar1(20_000, phi, 3), &[50.0], 300, 3).unwrap();
            iv.latencies[0].1.high - iv.latencies[0].1.low
        };
        let (independent, correlated) = (width(0.0), width(0.9));
        assert!(
            correlated > 2.0 * independent,
            "{independent} against {correlated}"
        );
        // Independent records: about the textbook width for a median,
        // 2 × 1.96 / (2 f(m) √n), f(m) the law's density at its median
        // (1 ms): 1 / (m σ √(2π)).
        let textbook =
            2.0 * 1.96 * (1e6 * SIGMA * std::f64::consts::TAU.sqrt()) / (2.0 * 20_000f64.sqrt());
        assert!(
            independent < 1.6 * textbook,
            "{independent} against {textbook}"
        );
    }
}
