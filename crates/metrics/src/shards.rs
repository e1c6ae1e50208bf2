//! Whether merged inputs are the shards of one schedule (`-shard i/n`),
//! and whether they agree: each shard's lag p50, and how far its schedule
//! sits from the others' (a shard started with another `-start-at`).
//!
//! Inputs are taken for shards when every input's sequence numbers step
//! by the same n ≥ 2 and their first numbers differ modulo n: shard i of n
//! sends i, i + n, i + 2n, …. A schedule's offset is found without
//! knowing the rate: least squares of scheduled time against sequence
//! number within each input, pooled, give the slope, and each input's
//! offset is the mean of its records' distance from a line of that slope. Shards of
//! one schedule sample it evenly, so their offsets agree to well under a
//! period unless their starts differ. Memory: a coarse histogram and a
//! few sums per input.

use barrage_model::{Hit, Lacks};

use crate::Distribution;

/// One input's sums.
struct Input {
    name: String,
    first_seq: u64,
    /// The gcd of the steps between its sequence numbers (0: one record).
    step: u64,
    n: u64,
    mean_seq: f64,
    mean_scheduled: f64,
    /// Co-moments of sequence number and scheduled time (Welford's
    /// update), for the slope within the input.
    c_ss: f64,
    c_st: f64,
    lag: Distribution,
}

/// The shards check over merged inputs: [`Shards::add`] each record
/// with the index of its input, then [`Shards::verdict`].
#[derive(Default)]
pub struct Shards {
    inputs: Vec<Option<Input>>,
    /// The first scheduled time seen: times are kept relative to it, in
    /// f64 nanoseconds (exact to 2^53 ns, 104 days).
    base: Option<i64>,
}

/// One shard in a [`Verdict`].
#[derive(Debug, Clone, PartialEq)]
pub struct Shard {
    /// The input's name.
    pub name: String,
    /// Its index `i` of `-shard i/n`.
    pub index: u64,
    /// Its records with a scheduled time.
    pub records: u64,
    /// Its lag p50, nanoseconds.
    pub lag_p50: u64,
    /// Its schedule's offset from the reference shard's (the lower median
    /// of all offsets), nanoseconds.
    pub offset: i64,
}

/// What [`Shards::verdict`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// n of `-shard i/n`.
    pub count: u64,
    /// The shards, by index.
    pub shards: Vec<Shard>,
    /// Lines saying where they disagree by more than the tolerance:
    /// empty when they agree.
    pub warnings: Vec<String>,
}

impl Shards {
    /// An empty check.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a record from input `input` (records without a scheduled time
    /// are left out).
    pub fn add(&mut self, input: usize, name: &str, hit: &Hit, lacks: Lacks) {
        // A flow's later steps go when the step before is done: only a
        // session's first step is on the schedule.
        if lacks.scheduled || hit.scheduled == 0 || hit.session.is_some_and(|m| m.step > 0) {
            return;
        }
        if self.inputs.len() <= input {
            self.inputs.resize_with(input + 1, || None);
        }
        let base = *self.base.get_or_insert(hit.scheduled);
        let t = hit.scheduled.saturating_sub(base) as f64;
        let s = hit.seq as f64;
        let one = self.inputs[input].get_or_insert_with(|| Input {
            name: name.to_string(),
            first_seq: hit.seq,
            step: 0,
            n: 0,
            mean_seq: 0.0,
            mean_scheduled: 0.0,
            c_ss: 0.0,
            c_st: 0.0,
            lag: Distribution::coarse(),
        });
        one.step = gcd(one.step, hit.seq.abs_diff(one.first_seq));
        one.n += 1;
        let ds = s - one.mean_seq;
        one.mean_seq += ds / one.n as f64;
        one.mean_scheduled += (t - one.mean_scheduled) / one.n as f64;
        one.c_ss += ds * (s - one.mean_seq);
        one.c_st += ds * (t - one.mean_scheduled);
        one.lag
            .record(hit.timestamp.saturating_sub(hit.scheduled).max(0) as u64);
    }

    /// `None` unless the inputs are two or more shards of one schedule;
    /// else each shard's figures, and warnings where a shard's lag p50 or
    /// schedule is more than `tolerance` nanoseconds from the others'
    /// (and where shards of the schedule are missing).
    pub fn verdict(&self, tolerance: u64) -> Option<Verdict> {
        let inputs: Vec<&Input> = self.inputs.iter().flatten().collect();
        let count = inputs.first()?.step;
        if inputs.len() < 2 || count < 2 || inputs.iter().any(|i| i.step != count) {
            return None;
        }
        let mut indexes: Vec<u64> = inputs.iter().map(|i| i.first_seq % count).collect();
        indexes.sort_unstable();
        indexes.dedup();
        if indexes.len() != inputs.len() {
            return None;
        }
        // The slope within the inputs (pooled over them), so that an
        // offset between inputs does not tilt it.
        let c_ss: f64 = inputs.iter().map(|i| i.c_ss).sum();
        let c_st: f64 = inputs.iter().map(|i| i.c_st).sum();
        let slope = if c_ss > 0.0 { c_st / c_ss } else { 0.0 };
        let offsets: Vec<f64> = inputs
            .iter()
            .map(|i| i.mean_scheduled - slope * i.mean_seq)
            .collect();
        let reference = lower_median(&offsets);
        let mut shards: Vec<Shard> = inputs
            .iter()
            .zip(&offsets)
            .map(|(i, o)| Shard {
                name: i.name.clone(),
                index: i.first_seq % count,
                records: i.n,
                lag_p50: i.lag.quantile(0.5),
                offset: (o - reference).round() as i64,
            })
            .collect();
        shards.sort_by_key(|s| s.index);
        let lags: Vec<f64> = shards.iter().map(|s| s.lag_p50 as f64).collect();
        let typical_lag = lower_median(&lags) as u64;
        let mut warnings = Vec::new();
        for s in &shards {
            if s.offset.unsigned_abs() > tolerance {
                let way = if s.offset > 0 { "later" } else { "earlier" };
                warnings.push(format!(
                    "{} (shard {}/{count}): its schedule runs {} {way} than the other shards' (started with another -start-at?)",
                    s.name,
                    s.index,
                    show(s.offset.unsigned_abs())
                ));
            }
            if s.lag_p50.abs_diff(typical_lag) > tolerance {
                warnings.push(format!(
                    "{} (shard {}/{count}): lag p50 {} against {} for the other shards (its machine fell behind, or its clock was off)",
                    s.name,
                    s.index,
                    show(s.lag_p50),
                    show(typical_lag)
                ));
            }
        }
        let missing: Vec<String> = (0..count)
            .filter(|i| !shards.iter().any(|s| s.index == *i))
            .map(|i| format!("{i}/{count}"))
            .collect();
        if !missing.is_empty() && missing.len() <= 16 {
            warnings.push(format!(
                "shards {} of the schedule are not among the inputs",
                missing.join(", ")
            ));
        }
        Some(Verdict {
            count,
            shards,
            warnings,
        })
    }
}

/// A duration as the report prints one (`300ms`, `1.25ms`).
fn show(ns: u64) -> String {
    use barrage_model::duration::{format, round_for_report};
    format(round_for_report(ns.min(i64::MAX as u64) as i64))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lower_median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: i64 = 1_000_000_000;

    /// `count` shards of a 1,000/s schedule of `total` requests from
    /// `start`, shard `late` started `offset` ns later, and every send
    /// `lag` ns after its time.
    fn shards(count: u64, total: u64, late: u64, offset: i64, lag: i64) -> Shards {
        let mut s = Shards::new();
        for seq in 0..total {
            let i = seq % count;
            let scheduled = 1_700_000_000 * SECOND
                + seq as i64 * 1_000_000
                + if i == late { offset } else { 0 };
            let hit = Hit {
                seq,
                scheduled,
                timestamp: scheduled + lag + (seq % 7) as i64 * 1_000,
                ..Hit::default()
            };
            s.add(i as usize, &format!("r{i}.bin"), &hit, Lacks::default());
        }
        s
    }

    #[test]
    fn shards_that_agree_say_nothing() {
        let v = shards(3, 3_000, 9, 0, 50_000).verdict(10_000_000).unwrap();
        assert_eq!(v.count, 3);
        assert_eq!(v.shards.len(), 3);
        assert!(v.warnings.is_empty(), "{:?}", v.warnings);
        for s in &v.shards {
            assert!(s.offset.abs() < 1_000, "{s:?}");
            assert_eq!(s.records, 1_000);
        }
    }

    #[test]
    fn a_shard_started_late_is_named() {
        let v = shards(2, 2_000, 1, 300_000_000, 50_000)
            .verdict(10_000_000)
            .unwrap();
        assert_eq!(v.warnings.len(), 1, "{:?}", v.warnings);
        assert!(
            v.warnings[0].starts_with("r1.bin (shard 1/2): its schedule runs 300ms later"),
            "{}",
            v.warnings[0]
        );
        assert_eq!(v.shards[1].offset, 300_000_000);
    }

    #[test]
    fn a_missing_shard_is_named_and_unrelated_inputs_are_not_shards() {
        let mut s = shards(3, 3_000, 9, 0, 0);
        s.inputs.truncate(2);
        let v = s.verdict(10_000_000).unwrap();
        assert_eq!(
            v.warnings,
            ["shards 2/3 of the schedule are not among the inputs"]
        );
        // Two whole attacks (both numbered from 0) are not shards.
        let mut two = Shards::new();
        for input in 0..2 {
            for seq in 0..100 {
                let hit = Hit {
                    seq,
                    scheduled: SECOND + seq as i64,
                    timestamp: SECOND + seq as i64,
                    ..Hit::default()
                };
                two.add(input, "x", &hit, Lacks::default());
            }
        }
        assert_eq!(two.verdict(0), None);
    }
}
