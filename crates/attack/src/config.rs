use std::time::Duration;

use barrage_model::{Arrivals, Rate, Stages};

use crate::Pacer;

/// `-workers`: workers ready at the start (vegeta's default).
pub const DEFAULT_WORKERS: u64 = 10;

/// What to send and when.
#[derive(Debug, Clone)]
pub struct AttackConfig {
    /// `-rate`.
    pub rate: Rate,
    /// `-duration`: no request is scheduled at or after this offset; `None`
    /// runs until stopped (or until lazy targets run out).
    pub duration: Option<Duration>,
    /// `-stages`: the rate ramped in straight lines (`rate` is then unused).
    pub stages: Option<Stages>,
    /// `-requests`: schedule at most this many.
    pub requests: Option<u64>,
    /// `-shard i/n`: send only requests i, i + n, i + 2n, … of the schedule
    /// (numbered as in the whole schedule), so n processes with the same
    /// flags and start share one attack.
    pub shard: Option<(u64, u64)>,
    /// `-start-at`: when the schedule starts, unix ns (`None`: now).
    pub start_at: Option<i64>,
    /// `-workers`: concurrency available from the start.
    pub workers: u64,
    /// `-max-workers`: cap on requests in flight; `None` is unlimited.
    pub max_workers: Option<u64>,
    /// `-name`, stored in every Hit and sent as `X-Barrage-Attack`.
    pub name: String,
    /// `-cpus`: worker threads (0: one per core; in the open model with
    /// keep-alive, one per 30,000 requests/s of the peak rate, up to one
    /// per core).
    pub cpus: usize,
    /// `-arrivals`: evenly spaced, or a Poisson process (its seed fixed
    /// by the caller: `Poisson(None)` is seed 0).
    pub arrivals: Arrivals,
    /// `-har-timing` with its `-har-speed`: requests go at their
    /// recording's times (each target's `at`), divided by this.
    pub recorded: Option<f64>,
    /// A `-mix`'s groups' peak rates together, requests per second: what
    /// the worker threads are sized for (the groups' own rates are on
    /// [`crate::Group`]).
    pub mix_peak: Option<f64>,
    /// `-grace`: how long sessions (`-format flow`) may go on after the
    /// schedule's end or a first Ctrl-C to finish (k6's `gracefulStop`);
    /// a session that would go on past it is interrupted.
    pub grace: Duration,
    /// `-scrape`: server metrics read during the run, into the stream.
    pub scrape: Option<crate::scrape::ScrapeSpec>,
}

/// `-grace`'s default: k6's `gracefulStop`.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);

impl AttackConfig {
    /// The schedule of `rate` or `stages` as the rest of the flags keep
    /// it (`-duration`, `-requests`, `-shard`, `-arrivals`); `stream`
    /// tells a mix's groups' Poisson processes apart.
    pub fn pacer(&self, rate: Rate, stages: Option<Stages>, stream: u64) -> Pacer {
        Pacer::new(rate, self.duration, self.requests)
            .with_stages(stages)
            .with_shard(self.shard)
            .with_arrivals(self.arrivals, stream)
    }
}

impl Default for AttackConfig {
    fn default() -> Self {
        AttackConfig {
            rate: barrage_model::DEFAULT_RATE,
            duration: None,
            stages: None,
            requests: None,
            shard: None,
            start_at: None,
            workers: DEFAULT_WORKERS,
            max_workers: None,
            name: String::new(),
            cpus: 0,
            arrivals: Arrivals::Uniform,
            recorded: None,
            mix_peak: None,
            grace: DEFAULT_GRACE,
            scrape: None,
        }
    }
}
