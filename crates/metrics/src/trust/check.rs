//! The verdict's shapes: a [`Check`], the [`Trust`] of all of them, and
//! the [`Warmup`] a report left out.

use barrage_model::duration;

use super::words::{records, seconds};

/// `-warmup`: the start of the run left out of the figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Warmup {
    /// How long after the run's first scheduled request, ns.
    pub ns: u64,
    /// Records left out.
    pub left_out: u64,
    /// Whether it was found (`-warmup auto`) rather than given.
    pub found: bool,
    /// Whether the stream marked it (`attack -warmup`) and the report's
    /// `-warmup` left it as it was.
    pub marked: bool,
}

impl Warmup {
    /// In words, for the reports: `the first 10s left out: 1234 records
    /// (-warmup 0 keeps them)`.
    pub fn said(&self) -> String {
        format!(
            "the first {} left out{}: {} {} (-warmup 0 keeps them)",
            duration::format(self.ns.min(i64::MAX as u64) as i64),
            match (self.found, self.marked) {
                (true, _) => ", found by MSER",
                (_, true) => ", as attack -warmup marked it",
                _ => "",
            },
            self.left_out,
            records(self.left_out as f64)
        )
    }
}

/// What a check's figure counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds.
    Ns,
    /// A share, 0 to 1.
    Share,
    /// A count.
    Count,
    /// A test statistic.
    Statistic,
    /// Seconds.
    Seconds,
}

impl Unit {
    /// Its name in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Share => "share",
            Unit::Count => "count",
            Unit::Statistic => "statistic",
            Unit::Seconds => "s",
        }
    }
}

/// One check of the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// `lag`, `rate`, `dropped`, `arrivals`, `cpu`, `wait`, `tail`,
    /// `warmup` or `trend`.
    pub name: &'static str,
    /// Its figure, in `unit`; `None` when the run gives nothing to judge
    /// (then it is ok).
    pub figure: Option<f64>,
    /// The bound the figure is held to.
    pub threshold: f64,
    /// What the figure and threshold count.
    pub unit: Unit,
    /// Whether it held.
    pub ok: bool,
    /// Whether failing it makes the run NOT VALID (else a warning).
    pub binding: bool,
    /// Seconds into the run where it first failed.
    pub from: Option<f64>,
    /// In words: `lag p99 14ms > 10ms`.
    pub says: String,
}

/// The verdict: every check, and whether the run is valid.
#[derive(Debug, Clone, PartialEq)]
pub struct Trust {
    /// The checks, binding ones first.
    pub checks: Vec<Check>,
}

impl Trust {
    /// Whether every binding check held.
    pub fn valid(&self) -> bool {
        self.checks.iter().all(|c| c.ok || !c.binding)
    }

    /// The checks that failed without binding.
    pub fn warnings(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.ok && !c.binding)
    }

    /// The verdict in one line: `valid`, or `NOT VALID: generator-bound
    /// from 12s (lag p99 14ms > 10ms; busiest thread 99% of a core)`.
    pub fn line(&self) -> String {
        let failed: Vec<&Check> = self.checks.iter().filter(|c| !c.ok && c.binding).collect();
        let warnings = self.warnings().count();
        if failed.is_empty() {
            return match warnings {
                0 => "valid".into(),
                1 => "valid (1 warning)".into(),
                n => format!("valid ({n} warnings)"),
            };
        }
        let schedule = failed
            .iter()
            .any(|c| matches!(c.name, "lag" | "rate" | "dropped"));
        let from = failed
            .iter()
            .filter_map(|c| c.from)
            .min_by(|a, b| a.total_cmp(b));
        let mut why: Vec<String> = failed.iter().map(|c| c.says.clone()).collect();
        let own = self
            .checks
            .iter()
            .filter(|c| !c.ok && matches!(c.name, "cpu" | "wait"));
        let own: Vec<String> = own.map(|c| c.says.clone()).collect();
        let head = match (schedule, own.is_empty()) {
            (true, false) => "generator-bound",
            (true, true) => "the schedule was not kept",
            (false, _) => "the arrivals are not what was asked",
        };
        if schedule && own.is_empty() {
            let cpu = self.checks.iter().find(|c| c.name == "cpu");
            why.push(match cpu.and_then(|c| c.figure.map(|f| (f, c.threshold))) {
                // Within 15 points of the limit: lag set in from 78% of a
                // core on this project's machine (scripts/cpu-lag).
                Some((f, limit)) if f >= limit - 0.15 => format!(
                    "barrage's busiest thread reached {:.0}% of a core, near its {:.0}% limit: barrage may have been the limit",
                    f * 100.0,
                    limit * 100.0
                ),
                Some((f, _)) => format!(
                    "barrage's CPU was not the limit (busiest thread {:.0}% of a core): a -max-workers cap, the connections or the server",
                    f * 100.0
                ),
                None => "no self-audit in the stream to say whether barrage's CPU was the limit".into(),
            });
        }
        why.extend(own);
        let from = from.map_or(String::new(), |f| format!(" from {}", seconds(f)));
        format!("NOT VALID: {head}{from} ({})", why.join("; "))
    }
}
