//! Figures over time for the report page: windows of send time, 100 ms
//! wide at first; beyond [`MOST_WINDOWS`] neighbours merge and windows
//! double in width, so a page of a week-long run has as many points as
//! one of ten minutes. On the page, windows merge further up to a second
//! wide while there are more than [`SHOWN`]: a 5 s run shows 50 points
//! of 100 ms, a 10 min run 300 of 2 s... and never fewer than a second's.
//! A sparse run's windows widen until no more than a quarter are empty;
//! a window without records is a gap in the latency and lag lines, never
//! a 0.

use barrage_model::Hit;

use crate::compare::{
    blocks::{Block, Run},
    bootstrap::{figures, Figure},
};

/// Windows kept at most.
pub const MOST_WINDOWS: usize = 600;

/// Windows shown before they are merged up to a second wide.
pub const SHOWN: usize = 120;

/// Windows below which a sparse run is left as it is.
const MIN_SPARSE: usize = 20;

/// The first width of a window (ns): 100 ms.
const FIRST_WIDTH: i64 = 100_000_000;

/// One window's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Seconds from the first send to the window's start.
    pub at: f64,
    /// Successes per second.
    pub ok: f64,
    /// Failures per second.
    pub errors: f64,
    /// Share of records that succeeded (0..=1); NaN when none were sent.
    pub success: f64,
    /// Median latency (ns); NaN when none were sent (a gap, not a 0).
    pub p50: f64,
    /// 99th percentile latency (ns); NaN when none were sent.
    pub p99: f64,
    /// 99th percentile lag (ns); NaN when none were sent.
    pub lag99: f64,
}

/// Records folded into windows.
#[derive(Clone)]
pub struct Timeline {
    latency: Run,
    lag: Run,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline::new()
    }
}

impl Timeline {
    /// No records yet.
    pub fn new() -> Timeline {
        Timeline {
            latency: Run::with(FIRST_WIDTH, MOST_WINDOWS),
            lag: Run::with(FIRST_WIDTH, MOST_WINDOWS),
        }
    }

    /// Adds a record, judged (`ok`) and measured (`latency`, ns).
    pub fn add(&mut self, hit: &Hit, ok: bool, latency: u64) {
        self.latency.add(hit.timestamp, latency, ok);
        self.lag.add(hit.timestamp, hit.lag(), ok);
    }

    /// The windows in time order.
    pub fn windows(&self) -> Vec<Window> {
        let (mut latency, mut lag) = (self.latency.clone(), self.lag.clone());
        // Sparse runs (a few requests a second) widen their windows until
        // most hold a record: a rate drawn as 10/s and 0/s in turn says
        // less than the rate.
        let sparse = |run: &Run| {
            let blocks = run.all_blocks();
            let empty = blocks.iter().filter(|b| b.count == 0).count();
            blocks.len() > MIN_SPARSE && empty * 4 > blocks.len()
        };
        while (latency.len() > SHOWN && latency.width() < 1_000_000_000) || sparse(&latency) {
            latency.halve();
            lag.halve();
        }
        let width = latency.width() as f64 / 1e9;
        let lat = latency.all_blocks();
        // Both runs saw the same send times, so their windows agree
        // (they merge at the same records); still, look lag up by index.
        let lag = lag.all_blocks();
        let mut acc = Vec::new();
        let n = lat.len();
        lat.iter()
            .enumerate()
            .map(|(i, b)| {
                let seconds = if i + 1 == n && b.span > 0 {
                    b.span as f64 / 1e9
                } else {
                    width
                };
                let f = figures(&[b], &mut acc);
                let lf = lag
                    .get(i)
                    .map(|l: &Block| figures(&[l], &mut acc))
                    .unwrap_or([0.0; 8]);
                Window {
                    at: i as f64 * width,
                    ok: b.ok as f64 / seconds,
                    errors: (b.count - b.ok) as f64 / seconds,
                    success: if b.count > 0 {
                        b.ok as f64 / b.count as f64
                    } else {
                        f64::NAN
                    },
                    p50: some(b.count, f[Figure::P50.index()]),
                    p99: some(b.count, f[Figure::P99.index()]),
                    lag99: some(b.count, lf[Figure::P99.index()]),
                }
            })
            .collect()
    }
}

/// `v` where a window had records, else NaN: a gap in its line.
fn some(count: u64, v: f64) -> f64 {
    if count > 0 {
        v
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_stay_few_however_long_the_run() {
        let mut t = Timeline::new();
        for s in 0..10_000i64 {
            let hit = Hit {
                timestamp: s * 1_000_000_000,
                latency: 1_000_000,
                code: 200,
                ..Hit::default()
            };
            t.add(&hit, true, hit.latency);
        }
        let w = t.windows();
        assert!(
            w.len() <= MOST_WINDOWS && w.len() >= MOST_WINDOWS / 2,
            "{}",
            w.len()
        );
        assert!((w[1].p50 / 1e6 - 1.0).abs() < 0.01);
        assert_eq!(w[1].errors, 0.0);
    }
}
