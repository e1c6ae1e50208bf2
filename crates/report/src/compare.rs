//! `barrage compare BASE NEW`: did the change make it slower?
//!
//! Each side is one run or several (`compare a1 a2 -- b1 b2`). For each
//! figure (throughput, success, mean, p50, p90, p99, p99.9, max) the
//! comparison gives base, new, the change (a fraction), a 95% interval of
//! the change and a verdict, per `-by` group matched by key and in total.
//!
//! **Method.** Records are not independent: a slow second makes many
//! slow requests, so a bootstrap over records gives intervals far too
//! narrow (two runs of one server then differ "significantly"). Each run
//! is cut into 40 to 80 blocks of send time ([`blocks`]); the bootstrap
//! redraws runs, then blocks within each drawn run, with replacement
//! ([`bootstrap`]), [`ROUNDS`] times with a fixed seed, and takes the
//! 2.5th and 97.5th percentiles of the change, widened around their
//! middle when a side has few runs to redraw (Hesterberg's expanded
//! percentile interval, [`bootstrap::expansion`]: 1.73× for 3 and 3,
//! 1.17× for 8 and 8). A change is significant
//! when its interval leaves out 0. A side's only run is cut in thirds
//! that stand in for runs, so that a drift within it widens the
//! interval; a drift between the two runs (a machine busier in one) is
//! what several interleaved runs per side are for.
//!
//! The maximum is shown with its interval but never judged (its verdict
//! stays "same", and `-fail-on` refuses it): a bootstrap never draws
//! beyond the greatest value seen, so it cannot bound a maximum. For the
//! same reason a percentile is judged only with at least [`MIN_TAIL`]
//! records beyond it on each side (p99.9: 10,000 records).
//!
//! **Noise floor.** For each figure, the half-width of the interval of
//! the change between two redraws of the base side alone: a change
//! smaller than this cannot be told from noise.

pub(crate) use barrage_metrics::blocks;
pub(crate) mod bootstrap;
mod gate;
pub(crate) mod text;

use std::collections::BTreeMap;

use barrage_metrics::{GroupBy, Metrics, Options, MAX_GROUPS, OTHER};
use barrage_model::{Hit, Lacks};
use rand_core::SeedableRng;
use rand_pcg::Pcg64;

pub use blocks::{Block, BLOCKS};
pub use bootstrap::{Figure, Figures};
pub use gate::{Gate, GateError};
pub use text::{compare_json, compare_text};

/// Redraws per comparison.
pub const ROUNDS: usize = 2000;

/// The seed when none is given (`-seed`): output is the same every time.
pub const DEFAULT_SEED: u64 = 1;

/// Records beyond a percentile, on each side, for it to be judged.
pub const MIN_TAIL: f64 = 10.0;

/// Records a side needs for any figure to be judged: below it the
/// verdict is "too few records" (issue 60: a 1-s run's -86% change came
/// with an interval of +99.8% to +100.4%, judged "better").
pub const MIN_RECORDS: u64 = 100;

/// Time blocks a side needs, over its runs, for its figures to be judged.
pub const MIN_BLOCKS: usize = 9;

/// Base or new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// What is compared against.
    Base,
    /// What is judged.
    New,
}

/// What one run holds of one group.
struct Part {
    metrics: Metrics,
    run: blocks::Run,
}

/// One run: its total and its groups.
struct RunParts {
    total: Part,
    groups: BTreeMap<String, Part>,
    /// Its input's name, as the verdict names it.
    name: String,
}

/// The verdict of every figure when a run is NOT VALID.
pub const INVALID_RUN: &str = "invalid run";

/// Records of both sides, run by run, ready to compare.
pub struct Sides {
    by: Option<GroupBy>,
    options: Options,
    runs: [Vec<RunParts>; 2],
    key: String,
}

/// How a figure changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Which.
    pub figure: Figure,
    /// The base side's value (ns for latencies, per second for
    /// throughput, a fraction for success).
    pub base: f64,
    /// The new side's value.
    pub new: f64,
    /// `new / base - 1`.
    pub change: f64,
    /// The 95% interval of the change: its low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
    /// The noise floor: half the interval of base against itself.
    pub noise: f64,
    /// `faster`, `slower`, `better`, `worse` or `same`.
    pub verdict: &'static str,
    /// Whether the verdict was judged: not for the maximum, nor for a
    /// percentile with fewer than [`MIN_TAIL`] records beyond it on a
    /// side (then the verdict is `same`).
    pub judged: bool,
}

/// One group's comparison (or the total's).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The group's key; `None` for the total.
    pub key: Option<String>,
    /// Records on each side.
    pub requests: (u64, u64),
    /// A row per figure, in [`Figure::ALL`]'s order.
    pub rows: Vec<Row>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// What groups are keyed by.
    pub by: Option<GroupBy>,
    /// Runs on each side.
    pub runs: (usize, usize),
    /// The seed and the redraws.
    pub seed: u64,
    /// Redraws.
    pub rounds: usize,
    /// Matched groups, by key.
    pub groups: Vec<Group>,
    /// All records.
    pub total: Group,
    /// Groups only the base has.
    pub only_base: Vec<String>,
    /// Groups only the new side has.
    pub only_new: Vec<String>,
    /// The least block width among the runs (ns).
    pub block_width: i64,
    /// The runs whose verdict is NOT VALID (`base run 2: NOT VALID: …`):
    /// when there is one, no change is judged (issue 63: a difference
    /// made by a generator that fell behind is not the server's).
    pub invalid: Vec<String>,
    /// Which latency the latency figures are (`-latency`).
    pub view: barrage_metrics::LatencyView,
}

impl Part {
    fn new(options: &Options) -> Part {
        Part {
            metrics: Metrics::with_options(options.clone()),
            run: blocks::Run::new(),
        }
    }

    fn add(&mut self, hit: &Hit, lacks: Lacks, ok: bool, latency: u64) {
        self.metrics.add_lacking(hit, lacks);
        self.run.add(hit.timestamp, latency, ok);
    }
}

impl Sides {
    /// Empty sides; `by` groups, `options` judge and measure.
    pub fn new(by: Option<GroupBy>, options: Options) -> Sides {
        Sides {
            by,
            options,
            runs: [Vec::new(), Vec::new()],
            key: String::new(),
        }
    }

    /// Starts a run on `side`: records added from now on belong to it.
    pub fn start_run(&mut self, side: Side) {
        self.start_named_run(side, "");
    }

    /// [`Sides::start_run`], the run read from the input `name`.
    pub fn start_named_run(&mut self, side: Side, name: &str) {
        let total = Part::new(&self.options);
        self.runs[side as usize].push(RunParts {
            total,
            groups: BTreeMap::new(),
            name: name.to_string(),
        });
    }

    /// Adds a record to the current run of `side`.
    pub fn add(&mut self, side: Side, hit: &Hit, lacks: Lacks) {
        let (ok, latency) = self.options.judge(hit);
        if self.runs[side as usize].is_empty() {
            self.start_run(side);
        }
        let run = self.runs[side as usize].last_mut().expect("a run");
        run.total.add(hit, lacks, ok, latency);
        if let Some(by) = self.by {
            let key = by.key(hit, &mut self.key);
            let key = if run.groups.contains_key(key) || run.groups.len() < MAX_GROUPS {
                key
            } else {
                OTHER
            };
            if !run.groups.contains_key(key) {
                run.groups.insert(key.to_string(), Part::new(&self.options));
            }
            if let Some(p) = run.groups.get_mut(key) {
                p.add(hit, lacks, ok, latency);
            }
        }
    }

    /// Takes what the current run of `side` said of itself besides its
    /// records (its facts and self-audit), for its verdict.
    pub fn add_run_facts(
        &mut self,
        side: Side,
        meta: &[(String, String)],
        audits: &[(usize, &barrage_model::Audit)],
    ) {
        if let Some(run) = self.runs[side as usize].last_mut() {
            run.total.metrics.add_run(meta, audits);
        }
    }

    /// The runs whose verdict is NOT VALID, as lines naming side and run.
    fn invalid_runs(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (side, name) in [(Side::Base, "base"), (Side::New, "new")] {
            for (i, r) in self.runs[side as usize].iter().enumerate() {
                if let Some(t) = r.total.metrics.trust(&[]).filter(|t| !t.valid()) {
                    let run = match r.name.as_str() {
                        "" => format!("run {}", i + 1),
                        file => file.to_string(),
                    };
                    out.push(format!("{name} {run}: {}", t.line()));
                }
            }
        }
        out
    }

    /// Records on `side`.
    pub fn requests(&self, side: Side) -> u64 {
        self.runs[side as usize]
            .iter()
            .map(|r| r.total.metrics.requests())
            .sum()
    }

    /// Each run of `side`: its metrics and its blocks.
    pub(crate) fn runs(&self, side: Side) -> impl Iterator<Item = (&Metrics, &blocks::Run)> {
        self.runs[side as usize]
            .iter()
            .map(|r| (&r.total.metrics, &r.total.run))
    }

    /// Compares the sides.
    pub fn compare(&self, seed: u64, rounds: usize) -> Comparison {
        let mut rng = Pcg64::seed_from_u64(seed);
        let [base, new] = &self.runs;
        let keys = |runs: &[RunParts]| {
            let mut k: Vec<String> = runs.iter().flat_map(|r| r.groups.keys().cloned()).collect();
            k.sort();
            k.dedup();
            k
        };
        let (kb, kn) = (keys(base), keys(new));
        let groups = kb
            .iter()
            .filter(|k| kn.contains(k))
            .map(|k| {
                group(
                    Some(k.clone()),
                    &parts(base, Some(k)),
                    &parts(new, Some(k)),
                    rounds,
                    &mut rng,
                )
            })
            .collect();
        let total = group(
            None,
            &parts(base, None),
            &parts(new, None),
            rounds,
            &mut rng,
        );
        let mut c = Comparison {
            by: self.by,
            runs: (base.len(), new.len()),
            seed,
            rounds,
            groups,
            total,
            only_base: kb.iter().filter(|k| !kn.contains(k)).cloned().collect(),
            only_new: kn.iter().filter(|k| !kb.contains(k)).cloned().collect(),
            invalid: self.invalid_runs(),
            block_width: base
                .iter()
                .chain(new)
                .map(|r| r.total.run.width())
                .min()
                .unwrap_or(blocks::FIRST_WIDTH),
            view: self.options.latency,
        };
        if !c.invalid.is_empty() {
            for row in c
                .groups
                .iter_mut()
                .chain(std::iter::once(&mut c.total))
                .flat_map(|g| g.rows.iter_mut())
            {
                row.judged = false;
                row.verdict = INVALID_RUN;
            }
        }
        c
    }
}

/// Each run's part for `key` (the total for `None`).
fn parts<'a>(runs: &'a [RunParts], key: Option<&str>) -> Vec<&'a Part> {
    runs.iter()
        .filter_map(|r| match key {
            None => Some(&r.total),
            Some(k) => r.groups.get(k),
        })
        .collect()
}

/// A side's figures from its exact metrics: latencies from the merged
/// HdrHistograms, success over all records, throughput as successes per
/// second of each run's own duration (runs are not one span of time).
fn exact(parts: &[&Part]) -> Figures {
    let mut all = Metrics::new();
    let (mut ok, mut seconds) = (0u64, 0.0);
    for p in parts {
        all.merge(&p.metrics);
        ok += p.metrics.successes();
        seconds += (p.metrics.duration() + p.metrics.wait()) as f64 / 1e9;
    }
    let mut f = [0.0; 8];
    f[Figure::Throughput.index()] = if seconds > 0.0 {
        ok as f64 / seconds
    } else {
        0.0
    };
    f[Figure::Success.index()] = all.success_ratio();
    f[Figure::Mean.index()] = all.latency().mean() as f64;
    f[Figure::P50.index()] = all.quantile(0.5) as f64;
    f[Figure::P90.index()] = all.quantile(0.9) as f64;
    f[Figure::P99.index()] = all.quantile(0.99) as f64;
    f[Figure::P999.index()] = all.quantile(0.999) as f64;
    f[Figure::Max.index()] = all.latency().max() as f64;
    f
}

fn group(
    key: Option<String>,
    base: &[&Part],
    new: &[&Part],
    rounds: usize,
    rng: &mut Pcg64,
) -> Group {
    let blocks = |parts: &[&Part]| -> Vec<Vec<Block>> {
        bootstrap::stand_ins(parts.iter().map(|p| p.run.blocks()).collect())
    };
    let (bb, nb) = (blocks(base), blocks(new));
    let (eb, en) = (exact(base), exact(new));
    let ci = bootstrap::intervals(&bb, &nb, rounds, rng);
    let aa = bootstrap::intervals(&bb, &bb, rounds / 2, rng);
    let requests = |parts: &[&Part]| -> u64 { parts.iter().map(|p| p.metrics.requests()).sum() };
    let blocks_of = |runs: &[Vec<Block>]| -> usize { runs.iter().map(Vec::len).sum() };
    let enough = requests(base).min(requests(new)) >= MIN_RECORDS
        && blocks_of(&bb).min(blocks_of(&nb)) >= MIN_BLOCKS;
    let rows = Figure::ALL
        .iter()
        .map(|&f| {
            let i = f.index();
            let (low, high) = ci[i];
            // A bootstrap never draws beyond the greatest value seen, so
            // it cannot bound a maximum, nor a percentile with only a few
            // records beyond it.
            let fewer = requests(base).min(requests(new)) as f64;
            let change = bootstrap::change(eb[i], en[i]);
            // The point and its interval come from the same records: one
            // far outside the other (by more than the interval's width and
            // a point) means the blocks are too coarse to judge.
            let slack = 0.01 + (high - low);
            let agree = change >= low - slack && change <= high + slack;
            let judged = enough
                && agree
                && match f {
                    Figure::Max => false,
                    _ => f.quantile().is_none_or(|q| fewer * (1.0 - q) >= MIN_TAIL),
                };
            let verdict = match (low > 0.0, high < 0.0, f.is_latency()) {
                _ if !enough || !agree => "too few records",
                _ if !judged => "same",
                (true, _, true) => "slower",
                (_, true, true) => "faster",
                (true, _, false) => "better",
                (_, true, false) => "worse",
                _ => "same",
            };
            Row {
                figure: f,
                base: eb[i],
                new: en[i],
                change,
                low,
                high,
                noise: (aa[i].1 - aa[i].0) / 2.0,
                verdict,
                judged,
            }
        })
        .collect();
    Group {
        key,
        requests: (requests(base), requests(new)),
        rows,
    }
}

impl Comparison {
    /// Every group and then the total.
    pub fn all(&self) -> impl Iterator<Item = &Group> {
        self.groups.iter().chain(std::iter::once(&self.total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of 3,000 records over 3 s, each `lag` late.
    fn run(sides: &mut Sides, side: Side, name: &str, lag: i64) {
        sides.start_named_run(side, name);
        for i in 0..3_000u64 {
            let scheduled = 1_700_000_000_000_000_000 + i as i64 * 1_000_000;
            sides.add(
                side,
                &Hit {
                    seq: i,
                    code: 200,
                    scheduled,
                    timestamp: scheduled + lag,
                    latency: 1_000_000 + (i % 7) * 10_000,
                    ..Hit::default()
                },
                Lacks::default(),
            );
        }
    }

    #[test]
    fn a_run_that_is_not_valid_leaves_every_change_unjudged_and_named() {
        let mut sides = Sides::new(None, Options::default());
        run(&mut sides, Side::Base, "a.bin", 50_000);
        run(&mut sides, Side::New, "b.bin", 50_000_000);
        let c = sides.compare(1, 200);
        assert_eq!(c.invalid.len(), 1, "{:?}", c.invalid);
        assert!(
            c.invalid[0].starts_with("new b.bin: NOT VALID: the schedule was not kept"),
            "{:?}",
            c.invalid
        );
        assert!(c
            .total
            .rows
            .iter()
            .all(|r| !r.judged && r.verdict == INVALID_RUN));
        let mut fine = Sides::new(None, Options::default());
        run(&mut fine, Side::Base, "a.bin", 50_000);
        run(&mut fine, Side::New, "b.bin", 60_000);
        let c = fine.compare(1, 200);
        assert!(c.invalid.is_empty());
        assert!(c.total.rows.iter().any(|r| r.judged));
    }
}
