use std::{sync::Arc, time::Duration};

use barrage_model::{Rate, Stages};

/// When a request is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// At this offset from the start, nanoseconds.
    At(u64),
    /// As soon as a worker is free (no pacing).
    Now,
    /// The schedule is over: no request with this or a later sequence number.
    Stop,
}

/// The schedule as a pure function: request `seq` is due at
/// `seq × period` after the start (or, with `-stages`, when the ramped
/// rate's integral reaches `seq`), computed exactly, whatever happened to
/// the requests before it. Being late never skips or bunches the schedule;
/// the scheduler records the lateness instead.
#[derive(Debug, Clone)]
pub struct Pacer {
    rate: Rate,
    stages: Option<Arc<Stages>>,
    /// `-shard i/n`: this process sends requests i, i + n, i + 2n, … of
    /// the whole schedule.
    shard: (u64, u64),
    duration_ns: Option<u64>,
    requests: Option<u64>,
}

impl Pacer {
    /// A pacer for `rate`, ending at `duration` or after `requests`,
    /// whichever comes first.
    pub fn new(rate: Rate, duration: Option<Duration>, requests: Option<u64>) -> Self {
        let duration_ns = duration
            .filter(|d| !d.is_zero())
            .map(|d| d.as_nanos().min(u64::MAX as u128) as u64);
        Pacer {
            rate,
            stages: None,
            shard: (0, 1),
            duration_ns,
            requests,
        }
    }

    /// This pacer following `stages` instead of its rate.
    pub fn with_stages(mut self, stages: Option<Stages>) -> Self {
        self.stages = stages.map(Arc::new);
        self
    }

    /// This pacer sending only shard `index` of `count` (`-shard`): its
    /// k-th request is request `k × count + index` of the whole schedule.
    pub fn with_shard(mut self, shard: Option<(u64, u64)>) -> Self {
        self.shard = shard.filter(|(i, n)| i < n).unwrap_or((0, 1));
        self
    }

    /// The sequence number in the whole schedule of this process's `k`-th
    /// request (the same number without `-shard`).
    pub fn global(&self, k: u64) -> u64 {
        k.saturating_mul(self.shard.1).saturating_add(self.shard.0)
    }

    /// The highest rate it reaches, requests per second (of this shard).
    pub fn peak_per_second(&self) -> f64 {
        self.whole_peak_per_second() / self.shard.1 as f64
    }

    /// The highest rate of the whole schedule, requests per second.
    fn whole_peak_per_second(&self) -> f64 {
        match &self.stages {
            Some(s) => s.peak_per_second(),
            None => self.rate.per_second(),
        }
    }

    /// Whether requests have times (false: the closed model).
    pub fn is_paced(&self) -> bool {
        self.stages.is_some() || self.rate != Rate::Max
    }

    /// When this process's request `k` is due; `elapsed_ns` is the time
    /// since the start (used only by the unpaced closed model to honour
    /// `-duration`).
    pub fn due(&self, k: u64, elapsed_ns: u64) -> Due {
        let seq = self.global(k);
        if self.requests.is_some_and(|n| seq >= n) {
            return Due::Stop;
        }
        let at = match &self.stages {
            Some(s) => s.offset_ns(seq),
            None => self.rate.offset_ns(seq),
        };
        match at {
            None if !self.is_paced() => {
                if self.duration_ns.is_some_and(|d| elapsed_ns >= d) {
                    Due::Stop
                } else {
                    Due::Now
                }
            }
            None => Due::Stop,
            Some(at) if self.duration_ns.is_some_and(|d| at >= d) => Due::Stop,
            Some(at) => Due::At(at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(s: &str) -> Rate {
        s.parse().unwrap()
    }

    #[test]
    fn table() {
        let sec = Some(Duration::from_secs(1));
        let two = Some(Duration::from_secs(2));
        let cases: &[(&str, Pacer, u64, u64, Due)] = &[
            (
                "first hit at 0",
                Pacer::new(rate("200"), two, None),
                0,
                0,
                Due::At(0),
            ),
            (
                "5 ms apart",
                Pacer::new(rate("200"), two, None),
                1,
                0,
                Due::At(5_000_000),
            ),
            (
                "last of 400",
                Pacer::new(rate("200"), two, None),
                399,
                0,
                Due::At(1_995_000_000),
            ),
            (
                "401st is past the end",
                Pacer::new(rate("200"), two, None),
                400,
                0,
                Due::Stop,
            ),
            (
                "lateness never moves the schedule",
                Pacer::new(rate("200"), two, None),
                3,
                9_000_000_000,
                Due::At(15_000_000),
            ),
            (
                "requests cap first",
                Pacer::new(rate("200"), two, Some(3)),
                3,
                0,
                Due::Stop,
            ),
            (
                "duration cap first",
                Pacer::new(rate("1"), sec, Some(100)),
                1,
                0,
                Due::Stop,
            ),
            (
                "no duration runs on",
                Pacer::new(rate("1"), None, None),
                1_000_000,
                0,
                Due::At(1_000_000 * 1_000_000_000),
            ),
            (
                "zero duration means none",
                Pacer::new(rate("1"), Some(Duration::ZERO), None),
                5,
                0,
                Due::At(5_000_000_000),
            ),
            (
                "closed model now",
                Pacer::new(Rate::Max, sec, None),
                7,
                10,
                Due::Now,
            ),
            (
                "closed model ends by clock",
                Pacer::new(Rate::Max, sec, None),
                7,
                1_000_000_000,
                Due::Stop,
            ),
            (
                "closed model with count",
                Pacer::new(Rate::Max, None, Some(2)),
                2,
                0,
                Due::Stop,
            ),
            (
                "offset overflow stops",
                Pacer::new(rate("1/1h"), None, None),
                u64::MAX / 2,
                0,
                Due::Stop,
            ),
            (
                "shard 1 of 3: its first is the schedule's second",
                Pacer::new(rate("200"), two, None).with_shard(Some((1, 3))),
                0,
                0,
                Due::At(5_000_000),
            ),
            (
                "shard 1 of 3: its third is the schedule's eighth",
                Pacer::new(rate("200"), two, None).with_shard(Some((1, 3))),
                2,
                0,
                Due::At(35_000_000),
            ),
            (
                "shard 2 of 3: -requests counts the whole schedule",
                Pacer::new(rate("200"), two, Some(10)).with_shard(Some((2, 3))),
                3,
                0,
                Due::Stop,
            ),
            (
                "shard 2 of 3: the last of 10 is its third",
                Pacer::new(rate("200"), two, Some(10)).with_shard(Some((2, 3))),
                2,
                0,
                Due::At(40_000_000),
            ),
            (
                "stages instead of the rate",
                Pacer::new(rate("200"), None, None).with_stages("1s:1000".parse().ok()),
                125,
                0,
                Due::At(500_000_000),
            ),
            (
                "stages end the schedule",
                Pacer::new(rate("200"), None, None).with_stages("1s:1000".parse().ok()),
                500,
                0,
                Due::Stop,
            ),
            (
                "-duration cuts the stages",
                Pacer::new(rate("200"), sec, None).with_stages("2s:1000".parse().ok()),
                250,
                0,
                Due::Stop,
            ),
        ];
        for (name, pacer, seq, elapsed, want) in cases {
            assert_eq!(pacer.due(*seq, *elapsed), *want, "{name}");
        }
    }
}
