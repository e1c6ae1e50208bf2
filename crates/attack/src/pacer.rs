use std::{sync::Arc, time::Duration};

use barrage_model::{Arrivals, PoissonClock, Rate, Stages, POSITION_ONE};

/// Past this many requests, [`Pacer::due_from`] gives the expected count
/// of a Poisson schedule rather than walk it.
pub const POISSON_WALK: u64 = 1 << 20;

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
    law: Law,
}

/// How requests fall around the rate (`-arrivals`), or a recording's own
/// times (`-har-timing`).
#[derive(Debug, Clone)]
enum Law {
    Uniform,
    Poisson(PoissonClock),
    Recorded(Arc<Recorded>),
}

/// A recording's send times (`-har-timing`), replayed in a loop.
#[derive(Debug)]
struct Recorded {
    /// Each request's offset in one pass, ns, scaled by the speed.
    offsets: Vec<u64>,
    /// One pass's length, ns: the last offset and one mean gap more;
    /// `None` for a recording of one request (sent once).
    period: Option<u64>,
}

impl Recorded {
    fn offset(&self, seq: u64) -> Option<u64> {
        let n = self.offsets.len() as u64;
        let pass = seq / n;
        let at = self.offsets[(seq % n) as usize];
        match (pass, self.period) {
            (0, _) => Some(at),
            (_, None) => None,
            (p, Some(period)) => p.checked_mul(period)?.checked_add(at),
        }
    }
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
            law: Law::Uniform,
        }
    }

    /// This pacer spreading its requests as `arrivals` says (a Poisson
    /// process needs its seed: [`Arrivals::Poisson`] with `None` is taken
    /// as seed 0); `stream` tells apart the processes of one seed (a mix's
    /// groups).
    pub fn with_arrivals(mut self, arrivals: Arrivals, stream: u64) -> Self {
        self.law = match arrivals {
            Arrivals::Uniform => Law::Uniform,
            Arrivals::Poisson(seed) => Law::Poisson(PoissonClock::new(seed.unwrap_or(0), stream)),
            Arrivals::Gamma(b, seed) => Law::Poisson(PoissonClock::gamma(
                seed.unwrap_or(0),
                stream,
                f64::from(b) / 1000.0,
            )),
        };
        self
    }

    /// This pacer sending at a recording's times instead of its rate
    /// (`-har-timing`): `offsets` are ns after the recording's first
    /// request, in the order they are sent, and `speed` divides them
    /// (`-har-speed 2`: twice as fast). Looped until `-duration` or
    /// `-requests` ends it: each pass takes the recording's span and one
    /// mean gap more. Empty offsets leave the pacer as it was.
    pub fn with_recording(mut self, offsets: &[u64], speed: f64) -> Self {
        if offsets.is_empty() || !(speed.is_finite() && speed > 0.0) {
            return self;
        }
        let scaled: Vec<u64> = offsets
            .iter()
            .map(|&o| (o as f64 / speed).round() as u64)
            .collect();
        let last = scaled[scaled.len() - 1];
        let n = scaled.len() as u64;
        let period = (n > 1).then(|| (last + last / (n - 1)).max(1));
        self.law = Law::Recorded(Arc::new(Recorded {
            offsets: scaled,
            period,
        }));
        self
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
        if let Law::Recorded(r) = &self.law {
            let span = r.period.unwrap_or(1_000_000_000).max(1) as f64;
            return r.offsets.len() as f64 / span * 1e9;
        }
        match &self.stages {
            Some(s) => s.peak_per_second(),
            None => self.rate.per_second(),
        }
    }

    /// Whether requests have times (false: the closed model).
    pub fn is_paced(&self) -> bool {
        matches!(self.law, Law::Recorded(_)) || self.stages.is_some() || self.rate != Rate::Max
    }

    /// The end of `-duration`, ns from the start, when the schedule has
    /// one and is paced.
    pub fn end_ns(&self) -> Option<u64> {
        self.duration_ns.filter(|_| self.is_paced())
    }

    /// How many of this process's requests from its `k`-th on fall due
    /// before the end of `-duration` (and within `-requests`): those a
    /// stop at the duration leaves unsent. 0 without a duration. Exact
    /// for every law but Poisson arrivals beyond [`POISSON_WALK`]
    /// requests, where it is the expected count (the uniform schedule's
    /// at the same rate): the second value says which.
    pub fn due_from(&self, k: u64) -> (u64, bool) {
        let Some(end) = self.end_ns() else {
            return (0, true);
        };
        if let Law::Poisson(_) = self.law {
            for n in 0..POISSON_WALK {
                if !matches!(self.due(k + n, 0), Due::At(_)) {
                    return (n, true);
                }
            }
        }
        // The first global sequence number due at or past the end: due
        // times grow with it, so a doubling then a bisection find it.
        let before = |g: u64| -> bool {
            if self.requests.is_some_and(|n| g >= n) {
                return false;
            }
            let at = match (&self.law, &self.stages) {
                (Law::Recorded(r), _) => r.offset(g),
                (_, Some(s)) => s.offset_ns(g),
                (_, None) => self.rate.offset_ns(g),
            };
            at.is_some_and(|at| at < end)
        };
        let (mut lo, mut hi) = (0u64, 1u64);
        while before(hi) {
            lo = hi;
            if hi >= u64::MAX / 2 {
                hi = u64::MAX;
                break;
            }
            hi *= 2;
        }
        if !before(lo) {
            return (0, true);
        }
        // before(lo) and !before(hi): the first not before is in (lo, hi].
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if before(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let (i, n) = self.shard;
        let mine = if hi > i { (hi - i).div_ceil(n) } else { 0 };
        (mine.saturating_sub(k), !matches!(self.law, Law::Poisson(_)))
    }

    /// When this process's request `k` is due; `elapsed_ns` is the time
    /// since the start (used only by the unpaced closed model to honour
    /// `-duration`).
    pub fn due(&self, k: u64, elapsed_ns: u64) -> Due {
        let seq = self.global(k);
        if self.requests.is_some_and(|n| seq >= n) {
            return Due::Stop;
        }
        let at = match (&self.law, &self.stages) {
            (Law::Uniform, Some(s)) => s.offset_ns(seq),
            (Law::Uniform, None) => self.rate.offset_ns(seq),
            (Law::Poisson(c), Some(s)) => s.offset_at(c.position(seq) as f64 / POSITION_ONE as f64),
            (Law::Poisson(c), None) => self.rate.offset_at(c.position(seq)),
            (Law::Recorded(r), _) => r.offset(seq),
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
    fn due_from_counts_what_the_duration_still_wanted() {
        let sec = Some(Duration::from_secs(1));
        let p = Pacer::new(rate("100"), sec, None);
        assert_eq!(p.due_from(0), (100, true));
        assert_eq!(p.due_from(40), (60, true));
        assert_eq!(p.due_from(100), (0, true));
        assert_eq!(p.due_from(500), (0, true));
        // A rate no host keeps: counted, not walked.
        let p = Pacer::new(rate("1000000000"), sec, None);
        assert_eq!(p.due_from(12_345), (1_000_000_000 - 12_345, true));
        let p = Pacer::new(rate("1000000000"), sec, Some(5_000));
        assert_eq!(p.due_from(1_000), (4_000, true));
        // Shards split the count: 0/3 has 34 of 100, 2/3 has 33.
        let p = Pacer::new(rate("100"), sec, None).with_shard(Some((0, 3)));
        assert_eq!(p.due_from(0), (34, true));
        let p = Pacer::new(rate("100"), sec, None).with_shard(Some((2, 3)));
        assert_eq!(p.due_from(10), (23, true));
        // Poisson: walked exactly when short, else the expected count.
        let p = Pacer::new(rate("1000"), sec, None).with_arrivals(Arrivals::Poisson(Some(7)), 0);
        let walked = (0..)
            .take_while(|&k| matches!(p.due(k, 0), Due::At(_)))
            .count() as u64;
        assert_eq!(p.due_from(0), (walked, true));
        let p =
            Pacer::new(rate("10000000"), sec, None).with_arrivals(Arrivals::Poisson(Some(7)), 0);
        assert_eq!(p.due_from(0), (10_000_000, false));
        // Without a duration, or unpaced: nothing is due by an end.
        assert_eq!(
            Pacer::new(rate("100"), None, Some(9)).due_from(0),
            (0, true)
        );
        assert_eq!(Pacer::new(Rate::Max, sec, None).due_from(0), (0, true));
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

    fn offsets(p: &Pacer, n: u64) -> Vec<u64> {
        (0..n)
            .map_while(|k| match p.due(k, 0) {
                Due::At(at) => Some(at),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn poisson_is_a_function_of_its_seed_and_shards_make_one_schedule() {
        let poisson = |shard| {
            Pacer::new(rate("1000"), None, Some(30_000))
                .with_arrivals(Arrivals::Poisson(Some(42)), 0)
                .with_shard(shard)
        };
        let whole = offsets(&poisson(None), 40_000);
        assert_eq!(whole.len(), 30_000);
        assert_eq!(
            whole,
            offsets(&poisson(None), 40_000),
            "same seed, same offsets"
        );
        assert!(whole.windows(2).all(|w| w[0] <= w[1]));
        let mut union: Vec<(u64, u64)> = Vec::new();
        for i in 0..3 {
            let p = poisson(Some((i, 3)));
            for (k, at) in offsets(&p, 40_000).into_iter().enumerate() {
                union.push((p.global(k as u64), at));
            }
        }
        union.sort();
        assert_eq!(union.len(), 30_000);
        assert!(union
            .iter()
            .enumerate()
            .all(|(i, (seq, at))| *seq == i as u64 && *at == whole[i]));
        // The mean rate is the rate's: 30,000 at 1,000/s end near 30 s.
        let end = whole[29_999] as f64 / 1e9;
        assert!((end - 30.0).abs() < 0.6, "{end}");
        let other = offsets(
            &Pacer::new(rate("1000"), None, Some(100))
                .with_arrivals(Arrivals::Poisson(Some(43)), 0),
            100,
        );
        assert_ne!(other, whole[..100]);
    }

    #[test]
    fn poisson_follows_stages_and_duration() {
        // 0 to 2,000/s over 10 s: 10,000 requests, the first half after
        // 7.07 s (the integral of a ramp grows with the square of time).
        let p = Pacer::new(rate("1"), None, None)
            .with_stages("10s:2000".parse().ok())
            .with_arrivals(Arrivals::Poisson(Some(5)), 0);
        let all = offsets(&p, 20_000);
        assert!((all.len() as i64 - 10_000).abs() < 300, "{}", all.len());
        let half = all[all.len() / 2] as f64 / 1e9;
        assert!((half - 7.07).abs() < 0.15, "{half}");
        let cut = Pacer::new(rate("1000"), Some(Duration::from_secs(1)), None)
            .with_arrivals(Arrivals::Poisson(Some(5)), 0);
        assert!(offsets(&cut, 5_000).iter().all(|&at| at < 1_000_000_000));
    }

    #[test]
    fn a_recording_replays_its_offsets_scaled_and_looped() {
        let ms = |m: u64| m * 1_000_000;
        let rec = [0, ms(100), ms(350)];
        let p = Pacer::new(rate("1"), None, Some(7)).with_recording(&rec, 1.0);
        // A pass lasts 350 ms and one mean gap (175 ms) more.
        assert_eq!(
            offsets(&p, 10),
            [0, ms(100), ms(350), ms(525), ms(625), ms(875), ms(1050)]
        );
        let fast = Pacer::new(rate("1"), None, Some(3)).with_recording(&rec, 2.0);
        assert_eq!(offsets(&fast, 10), [0, ms(50), ms(175)]);
        let once = Pacer::new(rate("1"), None, None).with_recording(&[0], 1.0);
        assert_eq!(offsets(&once, 10), [0]);
        let cut =
            Pacer::new(rate("1"), Some(Duration::from_millis(600)), None).with_recording(&rec, 1.0);
        assert_eq!(offsets(&cut, 10), [0, ms(100), ms(350), ms(525)]);
    }
}
