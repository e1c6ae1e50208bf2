use std::collections::{BTreeMap, HashSet};

use barrage_model::{Hit, Lacks};

use crate::Buckets;

use crate::{Distribution, Options};

/// Aggregated figures of a set of hits. Times are unix ns, durations ns.
/// Memory is bounded by the distinct status codes and error texts.
#[derive(Clone)]
pub struct Metrics {
    options: Options,
    requests: u64,
    success: u64,
    /// Records that met `Options::slo`.
    attained: u64,
    latency: Distribution,
    lag: Distribution,
    bytes_in: u64,
    bytes_out: u64,
    earliest: i64,
    latest: i64,
    end: i64,
    /// Records whose source has no scheduled time (left out of `lag`).
    unscheduled: u64,
    /// Answers by the second they completed in.
    seconds: crate::Seconds,
    status_codes: BTreeMap<u16, u64>,
    errors: Vec<String>,
    error_seen: HashSet<String>,
    bucket_counts: Vec<u64>,
    /// The records' connections, made at the first record that has one
    /// (none in older streams, CSV and vegeta's formats).
    connections: Option<Box<crate::Connections>>,
    /// Streamed answers' events, made at the first record with one.
    events: Option<Box<crate::Events>>,
    /// LLM streams' tokens, made at the first record with token counts.
    llm: Option<Box<crate::Llm>>,
    /// A flow's sessions, made at the first record of one.
    sessions: Option<Box<crate::Sessions>>,
    /// Whether sessions are counted: not in a group of `-by` (a group's
    /// records are parts of sessions; the total counts them whole).
    count_sessions: bool,
    /// Requests due before the end of `-duration` and never sent (the
    /// stream's `dropped` facts), and whether the count is exact.
    dropped: Option<(u64, bool)>,
    /// What the verdict needs ([`Metrics::trust`]): gathered for a run's
    /// total, not for its windows or groups.
    evidence: Option<Box<crate::Evidence>>,
    gathers: bool,
    /// `-warmup`: what was left out at the run's start.
    pub(crate) warmup: Option<crate::Warmup>,
    /// `-scrape`: the server's own series, a run's total only.
    server: Option<Box<crate::Server>>,
    /// `-control`'s changes to the run, in order of their time.
    markers: Vec<barrage_model::Marker>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("requests", &self.requests)
            .field("success", &self.success)
            .finish()
    }
}

impl Metrics {
    /// Empty metrics with vegeta's rules.
    pub fn new() -> Self {
        Self::with_options(Options::default())
    }

    /// Empty metrics with `options`.
    pub fn with_options(options: Options) -> Self {
        if options.precision > 0 {
            crate::set_precision(options.precision);
        }
        let buckets = options.buckets.as_ref().map_or(0, |b| b.bounds().len());
        Metrics {
            options,
            requests: 0,
            success: 0,
            attained: 0,
            latency: Distribution::default(),
            lag: Distribution::default(),
            bytes_in: 0,
            bytes_out: 0,
            earliest: i64::MAX,
            latest: i64::MIN,
            end: i64::MIN,
            unscheduled: 0,
            seconds: crate::Seconds::default(),
            status_codes: BTreeMap::new(),
            errors: Vec::new(),
            error_seen: HashSet::new(),
            bucket_counts: vec![0; buckets],
            connections: None,
            events: None,
            llm: None,
            sessions: None,
            count_sessions: true,
            dropped: None,
            evidence: None,
            gathers: true,
            warmup: None,
            server: None,
            markers: Vec::new(),
        }
    }

    /// A new, empty metrics with the same options.
    pub fn empty_like(&self) -> Self {
        let mut m = Self::with_options(self.options.clone());
        m.count_sessions = self.count_sessions;
        m.gathers = false;
        m
    }

    /// The same, gathering what the verdict rests on (a `-every`
    /// window's: judged on its own).
    pub fn judged(mut self) -> Self {
        self.gathers = true;
        self
    }

    /// The same, counting no sessions (a `-by` group's).
    pub fn without_sessions(mut self) -> Self {
        self.count_sessions = false;
        self.gathers = false;
        self
    }

    /// What the verdict rests on (`None` when no record had a scheduled
    /// time, or for a group's metrics).
    pub fn evidence(&self) -> Option<&crate::Evidence> {
        self.evidence.as_deref()
    }

    /// Takes a run's facts (`meta`: its arrivals, its load, the requests
    /// `dropped`) and its self-audit, as the readers found them.
    pub fn add_run(
        &mut self,
        meta: &[(String, String)],
        audits: &[(usize, &barrage_model::Audit)],
    ) {
        self.add_dropped_facts(meta);
        if let Some(e) = &mut self.evidence {
            e.add_run(meta, audits);
        }
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Adds one hit.
    pub fn add(&mut self, hit: &Hit) {
        self.add_lacking(hit, Lacks::default());
    }

    /// Adds one hit whose source lacks `lacks`: without a scheduled time
    /// it is left out of the lag (counted in [`Metrics::unscheduled`]).
    pub fn add_lacking(&mut self, hit: &Hit, lacks: Lacks) {
        self.requests += 1;
        let (ok, latency) = self.options.judge(hit);
        if ok {
            self.success += 1;
        }
        let attained = self
            .options
            .slo
            .as_ref()
            .is_some_and(|s| s.met(hit, ok, latency));
        self.attained += u64::from(attained);
        self.latency.record(latency);
        if lacks.scheduled {
            self.unscheduled += 1;
        } else {
            self.lag.record(hit.lag());
            if self.gathers {
                let limit = self.options.limits.lag;
                let blocks = self.options.intervals.then_some((ok, attained));
                let evidence = self.evidence.get_or_insert_with(Box::default);
                evidence.add(hit, limit, latency, blocks);
            }
        }
        if let Some(b) = &self.options.buckets {
            self.bucket_counts[b.index(latency)] += 1;
        }
        // Saturating: a crafted stream's records must not wrap the totals.
        self.bytes_in = self.bytes_in.saturating_add(hit.bytes_in);
        self.bytes_out = self.bytes_out.saturating_add(hit.bytes_out);
        self.earliest = self.earliest.min(hit.timestamp);
        self.latest = self.latest.max(hit.timestamp);
        self.end = self.end.max(hit.end());
        self.seconds.add(hit);
        if let Some(link) = &hit.link {
            self.connections.get_or_insert_with(Box::default).add(link);
        }
        if hit.event_count > 0 || !hit.events.is_empty() || hit.event_malformed > 0 {
            self.events.get_or_insert_with(Box::default).add(hit);
        }
        if hit.tokens.is_some() {
            self.llm.get_or_insert_with(Box::default).add(hit);
        }
        if hit.session.is_some() && self.count_sessions {
            self.sessions.get_or_insert_with(Box::default).add(hit);
        }
        *self.status_codes.entry(hit.code).or_insert(0) += 1;
        if !ok {
            if hit.error.is_empty() {
                self.note_error(barrage_model::status::error_text(hit.code));
            } else if !self.error_seen.contains(&hit.error) {
                self.note_error(hit.error.clone());
            }
        }
    }

    fn note_error(&mut self, e: String) {
        if self.error_seen.insert(e.clone()) {
            self.errors.push(e);
        }
    }

    /// Adds everything in `other` (its new errors go after ours).
    pub fn merge(&mut self, other: &Metrics) {
        if other.requests == 0 {
            return;
        }
        self.requests += other.requests;
        self.success += other.success;
        self.attained += other.attained;
        self.latency.merge(&other.latency);
        self.lag.merge(&other.lag);
        self.bytes_in = self.bytes_in.saturating_add(other.bytes_in);
        self.bytes_out = self.bytes_out.saturating_add(other.bytes_out);
        self.earliest = self.earliest.min(other.earliest);
        self.latest = self.latest.max(other.latest);
        self.end = self.end.max(other.end);
        self.unscheduled += other.unscheduled;
        self.seconds.merge(&other.seconds);
        for (code, n) in &other.status_codes {
            *self.status_codes.entry(*code).or_insert(0) += n;
        }
        for e in &other.errors {
            self.note_error(e.clone());
        }
        for (mine, theirs) in self.bucket_counts.iter_mut().zip(&other.bucket_counts) {
            *mine += theirs;
        }
        if let Some(c) = &other.connections {
            self.connections.get_or_insert_with(Box::default).merge(c);
        }
        if let Some(e) = &other.events {
            self.events.get_or_insert_with(Box::default).merge(e);
        }
        if let Some(l) = &other.llm {
            self.llm.get_or_insert_with(Box::default).merge(l);
        }
        if let Some(x) = &other.sessions {
            self.sessions.get_or_insert_with(Box::default).merge(x);
        }
        if let (Some(x), true) = (&other.evidence, self.gathers) {
            self.evidence.get_or_insert_with(Box::default).merge(x);
        }
    }

    /// A flow's sessions (`None` when no record was a flow's).
    pub fn sessions(&self) -> Option<&crate::Sessions> {
        self.sessions.as_deref()
    }

    /// Streamed answers' events (`None` when no record had one).
    pub fn events(&self) -> Option<&crate::Events> {
        self.events.as_deref()
    }

    /// A scraped server's samples (`-scrape`), for the run's total.
    pub fn add_server<'a>(
        &mut self,
        samples: impl IntoIterator<Item = &'a barrage_model::ServerSample>,
    ) {
        let mut samples = samples.into_iter().peekable();
        if samples.peek().is_some() {
            self.server.get_or_insert_default().add(samples);
        }
    }

    /// Changes made to the running attack (`-control`), kept in order of
    /// the schedule time they hold from (one a change made alike by
    /// several shards).
    pub fn add_markers<'a>(
        &mut self,
        markers: impl IntoIterator<Item = &'a barrage_model::Marker>,
    ) {
        for m in markers {
            // The shards of one run told one change by `collect` each
            // mark it alike: it is one change.
            let same = |x: &barrage_model::Marker| {
                (x.from, x.first, &x.what, &x.who) == (m.from, m.first, &m.what, &m.who)
            };
            if !self.markers.iter().any(same) {
                self.markers.push(m.clone());
            }
        }
        self.markers.sort_by_key(|m| (m.from, m.at));
    }

    /// The changes made to the running attack (`-control`).
    pub fn markers(&self) -> &[barrage_model::Marker] {
        &self.markers
    }

    /// The scraped server's series (`None` when no sample came).
    pub fn server(&self) -> Option<&crate::Server> {
        self.server.as_deref()
    }

    /// LLM streams' tokens (`None` when no record had token counts).
    pub fn llm(&self) -> Option<&crate::Llm> {
        self.llm.as_deref()
    }

    /// LLM streams' output tokens, and output and input tokens, a second
    /// over the span and the wait (as [`Metrics::throughput`] counts).
    pub fn tokens_per_second(&self) -> Option<(f64, f64)> {
        let l = self.llm()?;
        let secs = (self.duration().max(0) as f64 + self.wait().max(0) as f64) / 1e9;
        let all = l.output().saturating_add(l.input().0) as f64;
        Some(if secs > 0.0 {
            (l.output() as f64 / secs, all / secs)
        } else {
            (l.output() as f64, all)
        })
    }

    /// The records' connections (`None` when no record carried one).
    pub fn connections(&self) -> Option<&crate::Connections> {
        self.connections.as_deref()
    }

    /// New connections per second over the attack's span plus the wait
    /// (0 without connections).
    pub fn connections_rate(&self) -> f64 {
        let new = self.connections.as_ref().map_or(0, |c| c.new_count()) as f64;
        let secs = (self.duration() as f64 + self.wait() as f64) / 1e9;
        if secs > 0.0 {
            new / secs
        } else {
            new
        }
    }

    /// Answers and bytes per whole second of the attack, as autocannon
    /// samples them (`None` when empty).
    pub fn per_second(&self) -> Option<crate::PerSecond> {
        if self.requests == 0 {
            return None;
        }
        self.seconds.figures(self.earliest, self.end)
    }

    /// Records whose source had no scheduled time (not in the lag).
    pub fn unscheduled(&self) -> u64 {
        self.unscheduled
    }

    /// Adds requests that were due and never sent (`exact` false: a
    /// Poisson schedule's expected count).
    pub fn add_dropped(&mut self, n: u64, exact: bool) {
        let (sum, all_exact) = self.dropped.unwrap_or((0, true));
        self.dropped = Some((sum.saturating_add(n), all_exact && exact));
    }

    /// Adds a stream's `dropped` facts (one per attacker: `N start=…
    /// shard=…`, `~N` when a Poisson schedule's expected count) from
    /// its `meta`.
    pub fn add_dropped_facts(&mut self, meta: &[(String, String)]) {
        for (_, value) in meta.iter().filter(|(k, _)| k == "dropped") {
            let first = value.split(' ').next().unwrap_or("");
            let (digits, exact) = match first.strip_prefix('~') {
                Some(d) => (d, false),
                None => (first, true),
            };
            if let Ok(n) = digits.parse::<u64>() {
                self.add_dropped(n, exact);
            }
        }
    }

    /// Requests due before the end of `-duration` and never sent, and
    /// whether the count is exact; `None` when the stream says none.
    pub fn dropped(&self) -> Option<(u64, bool)> {
        self.dropped.filter(|(n, _)| *n > 0)
    }

    /// Number of hits.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Hits that succeeded.
    pub fn successes(&self) -> u64 {
        self.success
    }

    /// Hits that did not succeed.
    pub fn failures(&self) -> u64 {
        self.requests - self.success
    }

    /// Earliest send time, unix ns (`None` when empty).
    pub fn earliest(&self) -> Option<i64> {
        (self.requests > 0).then_some(self.earliest)
    }

    /// Latest send time, unix ns (`None` when empty).
    pub fn latest(&self) -> Option<i64> {
        (self.requests > 0).then_some(self.latest)
    }

    /// Latest completion time, unix ns (`None` when empty).
    pub fn end(&self) -> Option<i64> {
        (self.requests > 0).then_some(self.end)
    }

    /// The attack's span: latest − earliest send, ns.
    pub fn duration(&self) -> i64 {
        if self.requests == 0 {
            0
        } else {
            self.latest.saturating_sub(self.earliest)
        }
    }

    /// Time from the last send to the last completion, ns.
    pub fn wait(&self) -> i64 {
        if self.requests == 0 {
            0
        } else {
            self.end.saturating_sub(self.latest)
        }
    }

    /// Requests per second over the span (the count when the span is 0, as
    /// vegeta does).
    pub fn rate(&self) -> f64 {
        let secs = self.duration() as f64 / 1e9;
        if secs > 0.0 {
            self.requests as f64 / secs
        } else {
            self.requests as f64
        }
    }

    /// Successes per second over the span plus the wait.
    pub fn throughput(&self) -> f64 {
        if self.duration() > 0 {
            self.success as f64 / ((self.duration() as f64 + self.wait() as f64) / 1e9)
        } else {
            self.success as f64
        }
    }

    /// The share of records that met the objectives (`Options::slo`);
    /// `None` without objectives or records.
    pub fn attainment(&self) -> Option<f64> {
        (self.options.slo.is_some() && self.requests > 0)
            .then(|| self.attained as f64 / self.requests as f64)
    }

    /// The run's answer to an attainment target `attain` (0 to 1): pass
    /// when the 95% interval of its attainment
    /// ([`Metrics::attainment_interval`]) is at or above it, fail when
    /// below, undecided when it straddles it; `None` without objectives.
    pub fn decide(&self, attain: f64) -> Option<crate::Decision> {
        use crate::Decision;
        let a = self.attainment_interval()?;
        Some(if a.low >= attain {
            Decision::Pass
        } else if a.high < attain {
            Decision::Fail
        } else {
            Decision::Undecided
        })
    }

    /// Records that met the objectives a second, over the run as
    /// [`Metrics::throughput`] counts it: goodput.
    pub fn goodput(&self) -> Option<f64> {
        self.attainment()?;
        let secs = (self.duration() as f64 + self.wait() as f64) / 1e9;
        Some(if secs > 0.0 {
            self.attained as f64 / secs
        } else {
            self.attained as f64
        })
    }

    /// Fraction of hits that succeeded (0 when empty).
    pub fn success_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.success as f64 / self.requests as f64
        }
    }

    /// Latencies (of the chosen view), ns.
    pub fn latency(&self) -> &Distribution {
        &self.latency
    }

    /// The generator's lag (`timestamp - scheduled`), ns.
    pub fn lag(&self) -> &Distribution {
        &self.lag
    }

    /// Shorthand for `latency().quantile(q)`.
    pub fn quantile(&self, q: f64) -> u64 {
        self.latency.quantile(q)
    }

    /// Total and mean response body bytes.
    pub fn bytes_in(&self) -> (u64, f64) {
        (self.bytes_in, self.mean_of(self.bytes_in))
    }

    /// Total and mean request body bytes.
    pub fn bytes_out(&self) -> (u64, f64) {
        (self.bytes_out, self.mean_of(self.bytes_out))
    }

    fn mean_of(&self, total: u64) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            total as f64 / self.requests as f64
        }
    }

    /// Counts per status code, keyed by the code's text and sorted as text
    /// (vegeta's order: `0`, `200`, `404`, `50`…).
    pub fn status_codes(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = self
            .status_codes
            .iter()
            .map(|(c, n)| (c.to_string(), *n))
            .collect();
        v.sort();
        v
    }

    /// Distinct error texts of failed hits, in the order first seen.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Exact counts per bucket of `Options::buckets`, with the bounds.
    pub fn buckets(&self) -> Option<(&Buckets, &[u64])> {
        self.options
            .buckets
            .as_ref()
            .map(|b| (b, self.bucket_counts.as_slice()))
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod dropped_facts_tests {
    #[test]
    fn each_attackers_dropped_count_adds_up_and_an_expected_one_says_so() {
        let mut m = super::Metrics::default();
        let meta = [
            ("dropped".to_string(), "3 start=1 shard=-".to_string()),
            ("arrivals".to_string(), "poisson:7".to_string()),
            ("dropped".to_string(), "~4 start=2 shard=0/2".to_string()),
        ];
        m.add_dropped_facts(&meta);
        assert_eq!(m.dropped(), Some((7, false)));
    }
}
