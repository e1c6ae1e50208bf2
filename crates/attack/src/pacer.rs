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
    /// Paused (`-control`): not due until a resume.
    Paused,
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
        if !before(0) {
            return (0, true);
        }
        let hi = first_past(before);
        let (i, n) = self.shard;
        let mine = if hi > i { (hi - i).div_ceil(n) } else { 0 };
        (mine.saturating_sub(k), !matches!(self.law, Law::Poisson(_)))
    }

    /// When this process's request `k` is due; `elapsed_ns` is the time
    /// since the start (used only by the unpaced closed model to honour
    /// `-duration`).
    pub fn due(&self, k: u64, elapsed_ns: u64) -> Due {
        self.due_whole(self.global(k), elapsed_ns)
    }

    /// When request `seq` of the whole schedule is due.
    fn due_whole(&self, seq: u64, elapsed_ns: u64) -> Due {
        if self.requests.is_some_and(|n| seq >= n) {
            return Due::Stop;
        }
        match self.base_offset(seq) {
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

    /// Request `g`'s (of the whole schedule) offset on the schedule the
    /// flags made, ns from the start; `None` past its end or unpaced.
    fn base_offset(&self, g: u64) -> Option<u64> {
        match (&self.law, &self.stages) {
            (Law::Uniform, Some(s)) => s.offset_ns(g),
            (Law::Uniform, None) => self.rate.offset_ns(g),
            (Law::Poisson(c), Some(s)) => s.offset_at(c.position(g) as f64 / POSITION_ONE as f64),
            (Law::Poisson(c), None) => self.rate.offset_at(c.position(g)),
            (Law::Recorded(r), _) => r.offset(g),
        }
    }

    /// Whether it replays a recording's times (`-har-timing`).
    pub(crate) fn is_recorded(&self) -> bool {
        matches!(self.law, Law::Recorded(_))
    }

    /// Request `g`'s place on `line`, ns, before its segment's shift: the
    /// law of arrivals stays the flags' whatever the rate.
    fn line_offset(&self, line: &Line, g: u64) -> Option<u64> {
        match line {
            Line::Base => self.base_offset(g),
            Line::Rate(r, origin) => match &self.law {
                Law::Poisson(c) => r.offset_at(c.position(g).saturating_sub(c.position(*origin))),
                _ => r.offset_ns(g.saturating_sub(*origin)),
            },
            Line::Stages(s, origin) => match &self.law {
                Law::Poisson(c) => s.offset_at(
                    c.position(g).saturating_sub(c.position(*origin)) as f64 / POSITION_ONE as f64,
                ),
                _ => s.offset_ns(g.saturating_sub(*origin)),
            },
        }
    }

    /// When this process's request `k` is due with live control's
    /// `segments` (in order of their first request) over the flags'
    /// schedule: a segment moves every request from its first on to its
    /// line, shifted so that its first is due at the segment's time.
    pub(crate) fn due_on(&self, k: u64, elapsed_ns: u64, segments: &[Segment]) -> Due {
        self.due_global(self.global(k), elapsed_ns, segments)
    }

    /// [`Pacer::due_on`] by the whole schedule's number `g`.
    pub(crate) fn due_global(&self, g: u64, elapsed_ns: u64, segments: &[Segment]) -> Due {
        let Some(s) = segments.iter().rev().find(|s| s.first <= g) else {
            return self.due_whole(g, elapsed_ns);
        };
        if self.requests.is_some_and(|n| g >= n) {
            return Due::Stop;
        }
        let Some(line) = &s.line else {
            return Due::Paused;
        };
        if !self.is_paced() {
            return self.due_whole(g, elapsed_ns);
        }
        let at = self
            .line_offset(line, g)
            .zip(self.line_offset(line, s.first))
            .and_then(|(a, b)| s.at.checked_add(a.saturating_sub(b)));
        match at {
            Some(at) if self.duration_ns.is_none_or(|d| at < d) => Due::At(at),
            _ => Due::Stop,
        }
    }

    /// [`Pacer::due_from`] with live control's segments: this process's
    /// requests from its `k`-th on still due before the end of
    /// `-duration` (none while paused).
    pub(crate) fn due_from_on(&self, k: u64, segments: &[Segment]) -> (u64, bool) {
        if segments.is_empty() {
            return self.due_from(k);
        }
        if self.end_ns().is_none() {
            return (0, true);
        }
        let due = |j: u64| matches!(self.due_on(k.saturating_add(j), 0, segments), Due::At(_));
        (first_past(due), true)
    }
}

/// The first `n` for which `before(n)` is false, `before` being true up
/// to a point and false from it on (due times grow with the number): a
/// doubling, then a bisection.
pub(crate) fn first_past(before: impl Fn(u64) -> bool) -> u64 {
    if !before(0) {
        return 0;
    }
    let (mut lo, mut hi) = (0u64, 1u64);
    while before(hi) {
        lo = hi;
        if hi >= u64::MAX / 2 {
            hi = u64::MAX;
            break;
        }
        hi *= 2;
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
    hi
}

/// A line of the schedule live control can put requests on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Line {
    /// The flags' own (`-rate`, `-stages`, a recording's times).
    Base,
    /// A rate from the request numbered here on (its origin).
    Rate(Rate, u64),
    /// Stages whose first starts with the request numbered here.
    Stages(Arc<Stages>, u64),
}

/// From request `first` (of the whole schedule) on: due on `line` so that
/// `first` is due at `at` (ns from the start), or paused (`None`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Segment {
    pub(crate) first: u64,
    pub(crate) at: u64,
    pub(crate) line: Option<Line>,
}

#[cfg(test)]
mod tests;
