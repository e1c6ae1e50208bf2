//! [`Backlog`]: a queue growing inside a run (issue 64). Above a
//! server's capacity an open model keeps sending, the server's queue
//! grows, and each request waits longer than the one before: the mean
//! latency of the run's blocks of send time rises along a line. A short
//! step can end before its p99 crosses a bound while the queue is still
//! filling; the line gives it away (guidellm's over-saturation test is
//! the same idea).

use super::stats;
use crate::Metrics;

/// The least-squares line of a run's blocks' mean latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backlog {
    /// How much the line rises over the run, ns.
    pub rise: f64,
    /// The slope's t statistic.
    pub t: f64,
    /// The mean latency of the run, ns.
    pub mean: f64,
}

impl Backlog {
    /// Whether the queue grew: the slope is clear (t above 3) and the
    /// line rises by at least 1 ms and by half the run's mean latency.
    pub fn grew(&self) -> bool {
        self.t > 3.0 && self.rise >= 1e6 && self.rise >= 0.5 * self.mean
    }
}

impl Metrics {
    /// The line of this run's blocks' mean latency (the last, partial
    /// block left out); `None` without blocks (`Options::intervals`) or
    /// with fewer than 5 of them.
    pub fn backlog(&self) -> Option<Backlog> {
        let run = self.evidence()?.run.as_ref()?;
        let blocks = run.blocks();
        let whole = &blocks[..blocks.len().saturating_sub(1)];
        let means: Vec<f64> = whole
            .iter()
            .filter(|b| b.count > 0)
            .map(|b| b.latency_sum / b.count as f64)
            .collect();
        if means.len() < 5 {
            return None;
        }
        let (slope, t) = stats::slope(&means)?;
        Some(Backlog {
            rise: slope * means.len() as f64,
            t,
            mean: self.latency().mean() as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use barrage_model::Hit;

    fn run(latency: impl Fn(u64) -> u64) -> Metrics {
        let mut m = Metrics::with_options(crate::Options {
            intervals: true,
            ..Default::default()
        });
        for i in 0..4_000u64 {
            let t = 1_700_000_000_000_000_000 + i as i64 * 1_000_000;
            m.add(&Hit {
                seq: i,
                code: 200,
                scheduled: t,
                timestamp: t,
                latency: latency(i),
                ..Hit::default()
            });
        }
        m
    }

    #[test]
    fn a_growing_queue_is_a_backlog_and_noise_is_not() {
        // 1,100/s into a 1,000/s queue: each request 0.1 ms later than
        // the last (of 1 ms to 400 ms over the run).
        let queue = run(|i| 1_000_000 + i * 100_000).backlog().unwrap();
        assert!(queue.grew(), "{queue:?}");
        // A steady server with noise: no.
        let steady = run(|i| 1_000_000 + i.wrapping_mul(2_654_435_761) % 500_000)
            .backlog()
            .unwrap();
        assert!(!steady.grew(), "{steady:?}");
        // A clear but small rise (0.2 ms on 1 ms): no backlog either.
        let small = run(|i| 1_000_000 + i * 50).backlog().unwrap();
        assert!(small.t > 3.0 && !small.grew(), "{small:?}");
        // Without blocks, nothing to say.
        assert_eq!(Metrics::new().backlog(), None);
    }
}
