//! [`Evidence`]: what the verdict's checks need of the records, gathered
//! as they are read, in memory bounded by the run's seconds and a fixed
//! sample of arrivals, never by the records.

use barrage_model::{Audit, Hit};

/// The most seconds counted one by one (11 days); later records count in
/// the last.
const MAX_SECONDS: usize = 1_000_000;

/// Records kept per attack for the arrivals check: the first this many
/// (by their arrival at the reader, about the first by schedule).
pub(crate) const MAX_ARRIVALS: usize = 50_000;

/// Attacks (a `-mix`'s groups, a sweep's steps) whose arrivals are
/// checked; records of others are left out of that check.
const MAX_LANES: usize = 16;

/// Records read for the arrivals check: after these, no record is looked
/// at for it (finding a record's attack among the lanes was a third of
/// `report`'s time over 5 million records).
const ARRIVALS_READ: u64 = 1_000_000;

/// Slack before the first record's scheduled second: records arrive in
/// completion order, so a few scheduled earlier come later.
const SLACK_NS: i64 = 2_000_000_000;

/// One second of the run.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Second {
    /// Records scheduled in it.
    pub(crate) scheduled: u32,
    /// Records sent in it.
    pub(crate) sent: u32,
    /// Records scheduled in it that went out later than the lag limit.
    pub(crate) late: u32,
    /// Records sent in it, and their latencies' sum (seconds).
    pub(crate) done: u32,
    pub(crate) latency_sum: f64,
}

/// One attack's first records: (seq, scheduled, sent).
#[derive(Debug, Clone, Default)]
pub(crate) struct Lane {
    pub(crate) name: String,
    pub(crate) rows: Vec<(u64, i64, i64)>,
}

/// What the records and the self-audit say of the run, for
/// [`crate::Metrics::trust`].
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    /// The start of second 0 (unix ns).
    origin: Option<i64>,
    pub(crate) seconds: Vec<Second>,
    /// The earliest scheduled time seen.
    pub(crate) first: i64,
    pub(crate) lanes: Vec<Lane>,
    /// Records looked at for the arrivals check, and the lane of the
    /// last one.
    looked: u64,
    last_lane: usize,
    /// The run cut into blocks of send time, for its intervals (kept
    /// only when asked: `Options::intervals`).
    pub(crate) run: Option<crate::blocks::Run>,
    /// The self-audit's samples, with their input's place.
    pub(crate) audits: Vec<(usize, Audit)>,
    /// The run's arrivals law and load, from its facts.
    pub(crate) poisson: bool,
    pub(crate) ramped: bool,
    pub(crate) closed: bool,
    /// `-event-filter`'s path, from the run's facts.
    pub(crate) event_filter: Option<String>,
}

impl Evidence {
    /// Adds a record that has a scheduled time; `late_ns` is the lag
    /// limit, `latency` the record's latency in the report's view.
    /// `ok`: whether it succeeded and met the objectives, when blocks
    /// are kept.
    pub(crate) fn add(&mut self, hit: &Hit, late_ns: u64, latency: u64, ok: Option<(bool, bool)>) {
        if let Some((ok, attained)) = ok {
            self.run
                .get_or_insert_with(crate::blocks::Run::new)
                .add_attained(hit.timestamp, latency, ok, attained);
        }
        let origin = *self
            .origin
            .get_or_insert(hit.scheduled.saturating_sub(SLACK_NS));
        if self.seconds.is_empty() {
            self.first = hit.scheduled;
        }
        self.first = self.first.min(hit.scheduled);
        let at = |t: i64| {
            (t.saturating_sub(origin).max(0) / 1_000_000_000).min(MAX_SECONDS as i64 - 1) as usize
        };
        let (s, t) = (at(hit.scheduled), at(hit.timestamp));
        if self.seconds.len() <= s.max(t) {
            self.seconds.resize(s.max(t) + 1, Second::default());
        }
        let sched = &mut self.seconds[s];
        sched.scheduled += 1;
        if hit.lag() > late_ns {
            sched.late += 1;
        }
        let sent = &mut self.seconds[t];
        sent.sent += 1;
        sent.done += 1;
        sent.latency_sum += latency as f64 / 1e9;
        // Arrivals: a session's first step stands for the session.
        if self.looked >= ARRIVALS_READ || hit.session.is_some_and(|m| m.step > 0) {
            return;
        }
        self.looked += 1;
        let last = self.lanes.get(self.last_lane);
        let found = match last.filter(|l| l.name == hit.attack) {
            Some(_) => Some(self.last_lane),
            None => self.lanes.iter().position(|l| l.name == hit.attack),
        };
        let lane = match found {
            Some(i) => i,
            None if self.lanes.len() < MAX_LANES => {
                self.lanes.push(Lane {
                    name: hit.attack.clone(),
                    rows: Vec::new(),
                });
                self.lanes.len() - 1
            }
            None => return,
        };
        self.last_lane = lane;
        let rows = &mut self.lanes[lane].rows;
        if rows.len() < MAX_ARRIVALS {
            rows.push((hit.seq, hit.scheduled, hit.timestamp));
        }
    }

    /// Seconds from second 0's start to the run's first scheduled time.
    pub(crate) fn lead(&self) -> f64 {
        self.origin
            .map_or(0.0, |o| self.first.saturating_sub(o) as f64 / 1e9)
    }

    /// The run's start (its first scheduled time), unix ns.
    pub(crate) fn start(&self) -> i64 {
        self.first
    }

    /// Adds another reader's evidence (a shard read apart).
    pub(crate) fn merge(&mut self, other: &Evidence) {
        let (Some(a), Some(b)) = (self.origin, other.origin) else {
            if self.origin.is_none() {
                *self = other.clone();
            }
            return;
        };
        let shift = (b.saturating_sub(a) / 1_000_000_000)
            .clamp(-(MAX_SECONDS as i64), MAX_SECONDS as i64) as isize;
        for (i, s) in other.seconds.iter().enumerate() {
            let at = (i as isize + shift).clamp(0, MAX_SECONDS as isize - 1) as usize;
            if self.seconds.len() <= at {
                self.seconds.resize(at + 1, Second::default());
            }
            let m = &mut self.seconds[at];
            m.scheduled += s.scheduled;
            m.sent += s.sent;
            m.late += s.late;
            m.done += s.done;
            m.latency_sum += s.latency_sum;
        }
        self.first = self.first.min(other.first);
        for l in &other.lanes {
            match self.lanes.iter().position(|m| m.name == l.name) {
                Some(i) => {
                    let m = &mut self.lanes[i];
                    let room = MAX_ARRIVALS.saturating_sub(m.rows.len());
                    m.rows.extend(l.rows.iter().take(room));
                }
                None if self.lanes.len() < MAX_LANES => self.lanes.push(l.clone()),
                None => {}
            }
        }
        self.audits.extend(other.audits.iter().cloned());
        self.poisson |= other.poisson;
        self.ramped |= other.ramped;
        self.closed |= other.closed;
        if self.event_filter.is_none() {
            self.event_filter.clone_from(&other.event_filter);
        }
    }

    /// Takes a run's facts (its `meta`) and its self-audit's samples.
    pub(crate) fn add_run(&mut self, meta: &[(String, String)], audits: &[(usize, &Audit)]) {
        for (k, v) in meta {
            match k.as_str() {
                "arrivals" => self.poisson |= v.starts_with("poisson"),
                "event_filter" => self.event_filter = Some(v.clone()),
                "load" => {
                    self.ramped |= v.starts_with("stages") || v.starts_with("mix");
                    self.closed |= v.contains("closed model");
                }
                _ => {}
            }
        }
        self.audits
            .extend(audits.iter().map(|(i, a)| (*i, (*a).clone())));
    }
}
