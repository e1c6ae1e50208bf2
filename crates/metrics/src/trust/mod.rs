//! Whether to believe a run (issue 63): the verdict every report gives.
//!
//! Each [`Check`] has a figure, a threshold ([`Limits`], overridable with
//! `report -limits`) and, when it failed, the time into the run it first
//! did. Binding checks make a run NOT VALID: the generator kept its
//! schedule (`lag`, `rate`, `dropped`) and its arrivals follow the law
//! asked for (`arrivals`, for Poisson arrivals; for others the gaps
//! against the schedule's only warn). The others warn: barrage's own CPU (`cpu`) and
//! waits for a core (`wait`), too few records beyond a percentile
//! (`tail`), a warm-up (`warmup`) and a trend (`trend`). The method, with
//! its sources, is in `docs/guide/coordinated-omission.md`.

mod backlog;
mod check;
mod checks;
mod evidence;
mod intervals;
mod limits;
mod stats;
mod until;
mod words;

pub use backlog::Backlog;
pub use check::{Check, Trust, Unit, Warmup};
pub use evidence::Evidence;
pub use intervals::{Interval, Intervals, ROUNDS};
pub use limits::Limits;
pub use until::{Until, UntilFigure};

use crate::Metrics;

use words::{ns, pct};

impl Metrics {
    /// The verdict on this run ([`Trust`]) with `percentiles` (50, 99.9,
    /// …) as the report shows them; `None` when no record had a
    /// scheduled time (vegeta's CSV and JSON: nothing to judge).
    pub fn trust(&self, percentiles: &[f64]) -> Option<Trust> {
        let ev = self.evidence()?;
        let limits = &self.options().limits;
        let mut checks = Vec::new();
        let start = ev.start();
        let paced = !ev.closed;
        // Second i of the evidence, as seconds into the run.
        let into = |i: usize| (i as f64 - ev.lead()).max(0.0);

        // lag: the schedule kept, to its p99.
        let p99 = self.lag().quantile(0.99) as f64;
        let late_from = ev
            .seconds
            .iter()
            .position(|s| s.late > 0 && s.late as f64 > s.scheduled as f64 * 0.01)
            .map(into);
        let ok = !paced || p99 <= limits.lag as f64;
        checks.push(Check {
            name: "lag",
            figure: paced.then_some(p99),
            threshold: limits.lag as f64,
            unit: Unit::Ns,
            ok,
            binding: true,
            from: if ok { None } else { late_from },
            says: format!(
                "lag p99 {} {} {}",
                ns(p99),
                if ok { "<=" } else { ">" },
                ns(limits.lag as f64)
            ),
        });

        // rate: each whole second's requests sent against those due.
        let n = ev.seconds.len();
        let mut low: Option<(f64, usize)> = None;
        for (i, s) in ev
            .seconds
            .iter()
            .enumerate()
            .take(n.saturating_sub(1))
            .skip(1)
        {
            if s.scheduled < checks::MIN_SECOND || i as f64 <= ev.lead() {
                continue;
            }
            let r = s.sent as f64 / s.scheduled as f64;
            if low.is_none_or(|(l, _)| r < l) {
                low = Some((r, i));
            }
        }
        let ok = !paced || low.is_none_or(|(r, _)| r >= limits.rate);
        let first_low = ev
            .seconds
            .iter()
            .enumerate()
            .take(n.saturating_sub(1))
            .skip(1)
            .find(|(i, s)| {
                s.scheduled >= checks::MIN_SECOND
                    && *i as f64 > ev.lead()
                    && (s.sent as f64) < s.scheduled as f64 * limits.rate
            })
            .map(|(i, _)| into(i));
        checks.push(Check {
            name: "rate",
            figure: low.filter(|_| paced).map(|(r, _)| r),
            threshold: limits.rate,
            unit: Unit::Share,
            ok,
            binding: true,
            from: if ok { None } else { first_low },
            says: match low {
                Some((r, i)) if paced => format!(
                    "{} of the requests due were sent in second {}",
                    pct(r),
                    into(i).round()
                ),
                _ => "no whole second of 20 or more requests to judge".into(),
            },
        });

        // dropped: requests due and never sent.
        let (dropped, exact) = self.dropped().unwrap_or((0, true));
        checks.push(Check {
            name: "dropped",
            figure: Some(dropped as f64),
            threshold: 0.0,
            unit: Unit::Count,
            ok: dropped == 0,
            binding: true,
            from: None,
            says: format!(
                "{}{dropped} requests due were never sent",
                if exact { "" } else { "~" }
            ),
        });

        checks.push(self.arrivals_check(ev, limits, paced));
        checks.extend(checks::audit_checks(&ev.audits, start, limits));
        checks.push(self.tail_check(ev, limits, percentiles));
        if let Some(path) = &ev.event_filter {
            // A misspelt path matched nothing and the events section
            // vanished, silently (issue 62).
            let events = self.events().map_or(0, |e| e.total());
            checks.push(Check {
                name: "events",
                figure: Some(events as f64),
                threshold: 1.0,
                unit: Unit::Count,
                ok: events > 0,
                binding: false,
                from: None,
                says: if events > 0 {
                    format!("-event-filter {path} matched {events} events")
                } else {
                    format!(
                        "-event-filter {path} matched no event in {} records: a misspelt path, or answers that hold none",
                        self.requests()
                    )
                },
            });
        }
        checks.extend(checks::steady_checks(ev, limits));
        Some(Trust { checks })
    }

    /// The warm-up that `-warmup` left out, if any.
    pub fn warmup(&self) -> Option<Warmup> {
        self.warmup
    }

    /// Says that `w` was left out of these figures.
    pub fn set_warmup(&mut self, w: Warmup) {
        self.warmup = Some(w);
    }
}

#[cfg(test)]
mod tests;
