//! The verdict's checks that take more than a line: the arrivals'
//! law, the records beyond a percentile, the self-audit's, and a run's
//! warm-up and trend.

use barrage_model::Audit;

use super::{
    check::{Check, Unit},
    evidence::Evidence,
    limits::Limits,
    stats,
    words::{ns, pct, records, seconds},
};
use crate::Metrics;

impl Metrics {
    /// `arrivals`: Poisson gaps against the exponential law (Stephens'
    /// KS), or any other schedule's gaps against the schedule's own.
    pub(super) fn arrivals_check(&self, ev: &Evidence, limits: &Limits, paced: bool) -> Check {
        let mut worst: Option<(f64, String, f64)> = None;
        let ks = ev.poisson && !ev.ramped;
        for lane in &ev.lanes {
            // The rows by sequence number, as indices: a copy of the rows
            // (24 bytes each) was the report's last peak of memory, 2.4
            // MB, caught or not by a reader of its high-water mark.
            let rows = &lane.rows;
            let mut order: Vec<u32> = (0..rows.len() as u32).collect();
            order.sort_unstable_by_key(|&i| rows[i as usize].0);
            let pair = |w: &[u32]| (rows[w[0] as usize], rows[w[1] as usize]);
            let stride = order
                .windows(2)
                .map(|w| pair(w).1 .0 - pair(w).0 .0)
                .filter(|&d| d > 0)
                .min();
            let Some(stride) = stride else { continue };
            let pairs = || {
                order
                    .windows(2)
                    .map(pair)
                    .filter(move |(a, b)| b.0 - a.0 == stride)
            };
            let (count, sum) = pairs().fold((0usize, 0.0), |(n, s), (a, b)| {
                (n + 1, s + (b.1 - a.1) as f64)
            });
            let mean = sum / count.max(1) as f64;
            let within = (mean * KS_RESOLUTION).max(self.lag().quantile(0.9) as f64);
            let figure = if ks {
                let mut sent: Vec<f64> = pairs().map(|(a, b)| (b.2 - a.2) as f64).collect();
                stats::ks_exponential(&mut sent, mean, within)
            } else if count >= stats::MIN_GAPS {
                let mut err: Vec<f64> = pairs()
                    .map(|(a, b)| ((b.2 - a.2) as f64 - (b.1 - a.1) as f64).abs())
                    .collect();
                err.sort_by(|a, b| a.total_cmp(b));
                Some(err[(err.len() * 99 / 100).min(err.len() - 1)])
            } else {
                None
            };
            if let Some(f) = figure {
                if worst.as_ref().is_none_or(|(w, _, _)| f > *w) {
                    worst = Some((f, lane.name.clone(), within));
                }
            }
        }
        let (threshold, unit) = if ks {
            (stats::KS_EXP_CRITICAL, Unit::Statistic)
        } else {
            (limits.lag as f64, Unit::Ns)
        };
        let figure = worst.as_ref().map(|w| w.0).filter(|_| paced);
        let ok = figure.is_none_or(|f| f <= threshold);
        let of = |name: &str| match name {
            "" => String::new(),
            n => format!(" ({n})"),
        };
        let says = match (&worst, ks) {
            (Some((f, name, within)), true) => format!(
                "the gaps between sends {} the Poisson law asked for{}: Kolmogorov-Smirnov {f:.2} {} {threshold:.2} at 1%, to {}",
                if ok { "follow" } else { "do not follow" },
                of(name),
                if ok { "<=" } else { ">" },
                ns(*within),
            ),
            (Some((f, name, _)), false) => format!(
                "the gaps between sends are the schedule's to {} at p99{} (limit {})",
                ns(*f),
                of(name),
                ns(threshold)
            ),
            (None, _) => "too few arrivals to judge (100 gaps needed)".into(),
        };
        Check {
            name: "arrivals",
            figure,
            threshold,
            unit,
            ok,
            // A schedule's own gaps kept: what lag judges, said again.
            binding: ks,
            from: None,
            says,
        }
    }

    /// `tail`: records beyond the highest percentile shown, counted as
    /// independent ones (the effective sample size from batch means of
    /// each second's latency, as latte does).
    pub(super) fn tail_check(&self, ev: &Evidence, limits: &Limits, percentiles: &[f64]) -> Check {
        let n = self.requests() as f64;
        let top = percentiles
            .iter()
            .copied()
            .fold(0.0f64, f64::max)
            .min(100.0);
        let means: Vec<f64> = ev
            .seconds
            .iter()
            .filter(|s| s.done > 0)
            .map(|s| s.latency_sum / s.done as f64)
            .collect();
        let stdev = self.latency().histogram().stdev() / 1e9;
        let per_second = n / means.len().max(1) as f64;
        let (_, var_means) = stats::mean_var(&means);
        // Independent records: the variance of a second's mean is σ²/b.
        let factor = if means.len() >= 10 && var_means > 0.0 && per_second > 1.0 {
            (stdev * stdev / (per_second * var_means)).min(1.0)
        } else {
            1.0
        };
        let effective = n * factor;
        let beyond = (effective * (1.0 - top / 100.0) * 100.0).round() / 100.0;
        let ok = top <= 0.0 || beyond >= limits.tail;
        let needed = (limits.tail / (1.0 - top / 100.0) / factor - 1e-6).ceil();
        let shown = if top.fract() == 0.0 {
            format!("p{top:.0}")
        } else {
            format!("p{top}")
        };
        let whole = beyond.round();
        let says = if factor < 0.999 {
            format!(
                "{shown} rests on {whole} independent {} beyond it ({n:.0} records count as {effective:.0}: they are correlated); {} needed, about {needed:.0} records",
                records(beyond),
                limits.tail
            )
        } else {
            format!(
                "{shown} rests on {whole} {} beyond it; {} needed, about {needed:.0} records",
                records(beyond),
                limits.tail
            )
        };
        Check {
            name: "tail",
            figure: Some(beyond),
            threshold: limits.tail,
            unit: Unit::Count,
            ok,
            binding: false,
            from: None,
            says,
        }
    }
}

/// The finest resolution at which Poisson gaps are held to the law, as a
/// share of the mean gap; the lag's p90 when coarser. A generator's sends
/// are some microseconds apart at least and clump by its timer's
/// precision (at 500/s, gaps of 2 ms: a floor of 25 µs and 125 µs of
/// jitter at p90; at 5,000/s the lower quartile of gaps 33 µs where the
/// schedule's is 57 µs), which a test at full resolution calls another
/// law. The lag check judges that timing; this one, the law's shape.
const KS_RESOLUTION: f64 = 0.1;

/// The fewest requests due in a second for the rate check to judge it.
pub(super) const MIN_SECOND: u32 = 20;

/// `cpu` and `wait`, from the self-audit: the busiest thread's share of a
/// core, and the longest any thread waited for one, per second.
pub(super) fn audit_checks(audits: &[(usize, Audit)], start: i64, limits: &Limits) -> Vec<Check> {
    let full: Vec<&Audit> = audits
        .iter()
        .map(|(_, a)| a)
        .filter(|a| a.span >= 500_000_000)
        .collect();
    let into = |a: &Audit| {
        (a.at
            .saturating_sub(a.span.min(i64::MAX as u64) as i64)
            .saturating_sub(start) as f64
            / 1e9)
            .max(0.0)
    };
    let mut out = Vec::new();
    for (name, limit, get, words) in [
        (
            "cpu",
            limits.cpu,
            Audit::busiest as fn(&Audit) -> f64,
            "busiest thread",
        ),
        (
            "wait",
            limits.wait,
            Audit::waited as fn(&Audit) -> f64,
            "longest wait for a core",
        ),
    ] {
        let top = full
            .iter()
            .map(|a| get(a))
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        let ok = top.is_none_or(|t| t <= limit);
        let from = full.iter().find(|a| get(a) > limit).map(|a| into(a));
        let says = match (top, name) {
            (None, _) => "no self-audit in the stream (older barrage, or another tool)".into(),
            (Some(t), "cpu") => format!("{words} {} of a core (limit {})", pct(t), pct(limit)),
            (Some(t), _) => format!(
                "{words} {} of a second (limit {}): another process had barrage's core",
                pct(t),
                pct(limit)
            ),
        };
        out.push(Check {
            name,
            figure: top,
            threshold: limit,
            unit: Unit::Share,
            ok,
            binding: false,
            from: if ok { None } else { from },
            says,
        });
    }
    // Streamed answers only: gaps between events read at one time.
    let (gaps, stacked) = full
        .iter()
        .fold((0u64, 0u64), |(g, s), a| (g + a.gaps, s + a.stacked));
    if gaps > 0 {
        let share = stacked as f64 / gaps as f64;
        let ok = share <= limits.stacked;
        let from = full
            .iter()
            .find(|a| a.gaps >= 20 && a.stacked_share() > limits.stacked)
            .map(|a| into(a));
        out.push(Check {
            name: "stacked",
            figure: Some(share),
            threshold: limits.stacked,
            unit: Unit::Share,
            ok,
            binding: false,
            from: if ok { None } else { from },
            says: format!(
                "{} of {gaps} gaps between events under 50µs, read at one time (limit {}){}",
                pct(share),
                pct(limits.stacked),
                if ok {
                    ""
                } else {
                    ": barrage read them late, or the server wrote them at once"
                }
            ),
        });
    }
    out
}

/// `warmup` (MSER on each second's mean latency) and `trend` (the
/// latency's line over what follows it).
pub(super) fn steady_checks(ev: &Evidence, limits: &Limits) -> Vec<Check> {
    let lead = ev.lead().ceil() as usize;
    // Whole seconds from the run's start, the last (partial) left out.
    let secs: Vec<f64> = ev
        .seconds
        .iter()
        .skip(lead)
        .map(|s| {
            if s.done > 0 {
                s.latency_sum / s.done as f64
            } else {
                f64::NAN
            }
        })
        .collect();
    let secs: Vec<f64> = secs[..secs.len().saturating_sub(1)]
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let batch = if secs.len() >= 50 { 5 } else { 1 };
    let series = stats::batch_means(&secs, batch);
    let judged = secs.len() >= 10;
    let d = if judged { stats::mser(&series) } else { 0 };
    let warm = (d * batch) as f64;
    // A warm-up worth a warning: its seconds' mean 10% off the rest's.
    let (head, _) = stats::mean_var(&series[..d]);
    let (rest, _) = stats::mean_var(&series[d..]);
    let differs = d > 0 && rest > 0.0 && ((head - rest) / rest).abs() > 0.1;
    let mut out = vec![Check {
        name: "warmup",
        figure: judged.then_some(if differs { warm } else { 0.0 }),
        threshold: 0.0,
        unit: Unit::Seconds,
        ok: !differs,
        binding: false,
        from: None,
        says: match (judged, differs) {
            (false, _) => "too short to find a warm-up (10 s needed)".into(),
            (true, true) => format!(
                "warm-up: the first {} differ from the rest (mean latency {} against {}; MSER-{batch}); -warmup {} leaves them out",
                seconds(warm),
                ns(head * 1e9),
                ns(rest * 1e9),
                seconds(warm)
            ),
            (true, false) => "no warm-up found".into(),
        },
    }];
    let steady = &series[d..];
    let trend = stats::slope(steady).filter(|_| judged && steady.len() >= 5);
    let (mean, _) = stats::mean_var(steady);
    let change = trend.map(|(b, _)| {
        if mean > 0.0 {
            b * steady.len() as f64 / mean
        } else {
            0.0
        }
    });
    let significant = trend.is_some_and(|(_, t)| t.abs() > 3.0);
    let ok = !(significant && change.is_some_and(|c| c.abs() > limits.trend));
    out.push(Check {
        name: "trend",
        figure: change,
        threshold: limits.trend,
        unit: Unit::Share,
        ok,
        binding: false,
        from: None,
        says: match change {
            None => "too short to judge a trend".into(),
            Some(c) => format!(
                "mean latency {} by {} over the run{}",
                if c >= 0.0 { "rose" } else { "fell" },
                pct(c.abs()),
                if ok { "" } else { ": not steady" }
            ),
        },
    });
    out
}
