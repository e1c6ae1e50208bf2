//! One row per step: what was offered, what came back, and whether the
//! generator kept its schedule.

use std::time::Duration;

use barrage_metrics::Metrics;

use crate::steps::Load;

/// The figures of one step (its warm-up left out).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What the step offered.
    pub load: Load,
    /// Records counted.
    pub requests: u64,
    /// Requests sent per second.
    pub rate: f64,
    /// Successful responses per second.
    pub throughput: f64,
    /// Successes / requests, 0 to 1.
    pub success: f64,
    /// Latency, ns.
    pub mean: u64,
    /// Latency percentiles, ns.
    pub p50: u64,
    /// See `p50`.
    pub p90: u64,
    /// See `p50`.
    pub p99: u64,
    /// See `p50`.
    pub max: u64,
    /// The 99th percentile of how late requests went out, ns.
    pub lag_p99: u64,
    /// Records with an error.
    pub errors: u64,
    /// barrage could not keep this step's schedule: its figures say what
    /// the generator could do, not what the server could.
    pub generator_bound: bool,
    /// Why it was (empty when not): the generator's checks that failed,
    /// in the verdict's words (`lag p99 35ms > 10ms`), then its CPU and
    /// core waits when those failed too.
    pub bound_by: Vec<String>,
    /// What ended the step early (`-step-until`'s words), if it did.
    pub until: Option<String>,
    /// The open model's queue grew through the step: its blocks' mean
    /// latency rose along a clear line ([`barrage_metrics::Backlog`]), so
    /// the server was past its capacity even if the step ended before
    /// its p99 showed it. The rise, ns.
    pub backlog: Option<f64>,
    /// `-slo`'s figures and decision.
    pub slo: Option<SloRow>,
    /// An LLM stream's figures (`-llm`), when the step's records had
    /// token counts.
    pub llm: Option<LlmRow>,
}

/// A step's LLM figures: TTFT and TPOT p99 (ns, TTFT from the send) and
/// output tokens a second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LlmRow {
    /// TTFT p99, ns.
    pub ttft_p99: u64,
    /// TPOT p99, ns.
    pub tpot_p99: u64,
    /// Output tokens a second over the step.
    pub tokens_per_s: f64,
}

pub use barrage_metrics::Decision;

/// A step's `-slo` figures: attainment, goodput (requests a second that
/// met it) and the decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SloRow {
    /// The share of requests that met every objective.
    pub attainment: f64,
    /// Those a second.
    pub goodput: f64,
    /// Against `-attain`.
    pub decision: Decision,
}

/// When a step counts as generator-bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Lag p99 above this (`-lag-limit`, default 10 ms).
    pub lag_p99: Duration,
    /// A send rate below this share of the offered rate (open model).
    pub min_rate_share: f64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            lag_p99: Duration::from_millis(10),
            min_rate_share: 0.95,
        }
    }
}

impl Row {
    /// The step in one line, as `sweep` prints it when the step ends:
    /// `rate=5000: 4999.8/s sent, 4999.8/s ok, 100.00% success, p99 1.2ms`.
    pub fn progress_line(&self) -> String {
        format!(
            "{}: {:.1}/s sent, {:.1}/s ok, {:.2}% success, p99 {}{}{}{}{}",
            self.load.name(),
            self.rate,
            self.throughput,
            self.success * 100.0,
            barrage_model::duration::format(self.p99 as i64),
            if self.generator_bound {
                " (generator-bound)"
            } else {
                ""
            },
            match self.backlog {
                Some(rise) => format!(
                    " (backlog: latency rose {} through the step)",
                    barrage_model::duration::format(barrage_model::duration::round_for_report(
                        rise as i64
                    ))
                ),
                None => String::new(),
            },
            match &self.slo {
                Some(s) => format!(
                    ", SLO met by {:.2}% ({:.1}/s goodput): {}",
                    s.attainment * 100.0,
                    s.goodput,
                    s.decision.name()
                ),
                None => String::new(),
            },
            match &self.until {
                Some(said) => format!("; ended after {} records: {said}", self.requests),
                None => String::new(),
            }
        )
    }

    /// The row of a step at `load` whose counted records are in `m`: its
    /// step is generator-bound when the report's verdict says the
    /// schedule was not kept (its `rate` and `dropped` checks: issue 63),
    /// or the step's lag p99 is past `-lag-limit` (the verdict's `lag`
    /// check, with the sweep's limit), or it sent under its share of the
    /// offered rate.
    pub fn new(load: Load, m: &Metrics, bounds: Bounds) -> Row {
        let lag_p99 = m.lag().quantile(0.99);
        let rate = m.rate();
        let trust = m.trust(&[]);
        let failed = |name: &str| {
            let checks = trust.iter().flat_map(|t| &t.checks);
            checks
                .filter(|c| c.name == name && !c.ok)
                .map(|c| c.says.clone())
                .next()
        };
        let mut bound_by = Vec::new();
        // The closed model has no schedule to fall behind.
        if let Load::Rate(offered) = load {
            let limit = bounds.lag_p99.as_nanos().min(u64::MAX as u128) as u64;
            if lag_p99 > limit {
                let ns = |v: u64| barrage_model::duration::format(v as i64);
                bound_by.push(format!("lag p99 {} > {}", ns(lag_p99), ns(limit)));
            }
            if rate < offered * bounds.min_rate_share {
                bound_by.push(format!(
                    "sent {rate:.1}/s of {}/s",
                    crate::steps::number(offered)
                ));
            }
            bound_by.extend(["rate", "dropped"].into_iter().filter_map(failed));
            if !bound_by.is_empty() {
                bound_by.extend(["cpu", "wait"].into_iter().filter_map(failed));
            }
        }
        let generator_bound = !bound_by.is_empty();
        let backlog = match load {
            Load::Rate(_) => m.backlog().filter(|b| b.grew()).map(|b| b.rise),
            Load::Concurrency(_) => None,
        };
        let llm = m.llm().map(|l| LlmRow {
            ttft_p99: l.ttft().quantile(0.99),
            tpot_p99: l.tpot().quantile(0.99),
            tokens_per_s: m.tokens_per_second().map_or(0.0, |t| t.0),
        });
        let l = m.latency();
        Row {
            load,
            requests: m.requests(),
            rate,
            throughput: m.throughput(),
            success: m.success_ratio(),
            mean: l.mean(),
            p50: l.quantile(0.50),
            p90: l.quantile(0.90),
            p99: l.quantile(0.99),
            max: l.max(),
            lag_p99,
            errors: m.failures(),
            generator_bound,
            bound_by,
            until: None,
            backlog,
            slo: None,
            llm,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn row(load: f64, throughput: f64, p99_ms: u64) -> Row {
        Row {
            load: Load::Rate(load),
            requests: 1000,
            rate: load,
            throughput,
            success: throughput / load,
            mean: p99_ms * 500_000,
            p50: p99_ms * 400_000,
            p90: p99_ms * 800_000,
            p99: p99_ms * 1_000_000,
            max: p99_ms * 2_000_000,
            lag_p99: 50_000,
            errors: ((1.0 - throughput / load) * 1000.0) as u64,
            generator_bound: false,
            bound_by: Vec::new(),
            until: None,
            backlog: None,
            slo: None,
            llm: None,
        }
    }

    /// A step of 4,000 records at 1,000/s of which `met` in every
    /// thousand meet `latency<=2ms` (the others take 5 ms).
    fn step(met: u64) -> Metrics {
        step_of(4_000, 1_000_000, met)
    }

    /// `n` records `gap` ns apart, `met` in every thousand meeting it.
    fn step_of(n: u64, gap: i64, met: u64) -> Metrics {
        let mut m = Metrics::with_options(barrage_metrics::Options {
            intervals: true,
            slo: Some("latency<=2ms".parse().unwrap()),
            ..Default::default()
        });
        for i in 0..n {
            let t = 1_700_000_000_000_000_000 + i as i64 * gap;
            let slow = (i * 7919) % 1000 >= met;
            m.add(&barrage_model::Hit {
                seq: i,
                code: 200,
                scheduled: t,
                timestamp: t,
                latency: if slow { 5_000_000 } else { 1_000_000 },
                ..Default::default()
            });
        }
        m
    }

    #[test]
    fn a_step_passes_fails_or_stays_undecided_on_its_interval() {
        assert_eq!(step(1000).decide(0.99), Some(Decision::Pass));
        assert_eq!(step(995).decide(0.99), Some(Decision::Pass));
        assert_eq!(step(900).decide(0.99), Some(Decision::Fail));
        // 99.0% against 99%: the interval straddles it.
        assert_eq!(step(990).decide(0.99), Some(Decision::Undecided));
        let m = step(990);
        assert!((m.attainment().unwrap() - 0.99).abs() < 1e-9);
        assert!(
            (m.goodput().unwrap() - 990.0).abs() < 1.0,
            "{:?}",
            m.goodput()
        );
        // A short step, all of whose 60 requests met it (10/s for 6 s):
        // too few for blocks, decided on Wilson's interval, 93.98% up.
        let short = step_of(60, 100_000_000, 1000);
        let iv = short.attainment_interval().unwrap();
        assert!(
            (iv.low - 60.0 / (60.0 + 1.96f64.powi(2))).abs() < 1e-3,
            "{iv:?}"
        );
        assert_eq!(short.decide(0.9), Some(Decision::Pass));
        assert_eq!(short.decide(0.99), Some(Decision::Undecided));
        // All 4,000 met: every block did, yet 99.95% is not sure (Wilson:
        // 99.904% up).
        assert_eq!(step(1000).decide(0.999), Some(Decision::Pass));
        assert_eq!(step(1000).decide(0.9995), Some(Decision::Undecided));
        // Without objectives, nothing to decide.
        assert_eq!(Metrics::new().decide(0.99), None);
    }
}
