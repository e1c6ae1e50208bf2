use std::collections::{BTreeMap, HashSet};

use barrage_model::Hit;
use hdrhistogram::Histogram;

/// Significant digits kept by the latency histogram.
pub const SIGFIGS: u8 = 3;

/// Aggregated figures of a set of hits. Times are unix ns, durations ns.
#[derive(Clone)]
pub struct Metrics {
    requests: u64,
    success: u64,
    latency_total: u128,
    latency_min: u64,
    latency_max: u64,
    latencies: Histogram<u64>,
    bytes_in: u64,
    bytes_out: u64,
    earliest: i64,
    latest: i64,
    end: i64,
    status_codes: BTreeMap<u16, u64>,
    errors: Vec<String>,
    error_seen: HashSet<String>,
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
    /// Empty metrics.
    pub fn new() -> Self {
        let mut latencies =
            Histogram::new(SIGFIGS).expect("3 significant digits is a valid histogram");
        latencies.auto(true);
        Metrics {
            requests: 0,
            success: 0,
            latency_total: 0,
            latency_min: u64::MAX,
            latency_max: 0,
            latencies,
            bytes_in: 0,
            bytes_out: 0,
            earliest: i64::MAX,
            latest: i64::MIN,
            end: i64::MIN,
            status_codes: BTreeMap::new(),
            errors: Vec::new(),
            error_seen: HashSet::new(),
        }
    }

    /// Adds one hit.
    pub fn add(&mut self, hit: &Hit) {
        self.requests += 1;
        if hit.is_success() {
            self.success += 1;
        }
        self.latency_total += hit.latency as u128;
        self.latency_min = self.latency_min.min(hit.latency);
        self.latency_max = self.latency_max.max(hit.latency);
        // With auto-resize on, recording only fails for values beyond
        // u64::MAX / 2, which no real latency reaches; saturate just in case.
        if self.latencies.record(hit.latency).is_err() {
            let _ = self.latencies.record(self.latencies.high());
        }
        self.bytes_in += hit.bytes_in;
        self.bytes_out += hit.bytes_out;
        self.earliest = self.earliest.min(hit.timestamp);
        self.latest = self.latest.max(hit.timestamp);
        self.end = self.end.max(hit.end());
        *self.status_codes.entry(hit.code).or_insert(0) += 1;
        if !hit.error.is_empty() && !self.error_seen.contains(&hit.error) {
            self.error_seen.insert(hit.error.clone());
            self.errors.push(hit.error.clone());
        }
    }

    /// Adds everything in `other` (its new errors go after ours).
    pub fn merge(&mut self, other: &Metrics) {
        if other.requests == 0 {
            return;
        }
        self.requests += other.requests;
        self.success += other.success;
        self.latency_total += other.latency_total;
        self.latency_min = self.latency_min.min(other.latency_min);
        self.latency_max = self.latency_max.max(other.latency_max);
        let _ = self.latencies.add(&other.latencies);
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
        self.earliest = self.earliest.min(other.earliest);
        self.latest = self.latest.max(other.latest);
        self.end = self.end.max(other.end);
        for (code, n) in &other.status_codes {
            *self.status_codes.entry(*code).or_insert(0) += n;
        }
        for e in &other.errors {
            if self.error_seen.insert(e.clone()) {
                self.errors.push(e.clone());
            }
        }
    }

    /// Number of hits.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Hits with a code in [200, 400).
    pub fn successes(&self) -> u64 {
        self.success
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
            self.latest - self.earliest
        }
    }

    /// Time from the last send to the last completion, ns.
    pub fn wait(&self) -> i64 {
        if self.requests == 0 {
            0
        } else {
            self.end - self.latest
        }
    }

    /// Requests per second over the attack's span (the count itself when
    /// the span is 0, as vegeta does).
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
        let secs = self.duration() as f64 / 1e9;
        if secs > 0.0 {
            self.success as f64 / ((self.duration() + self.wait()) as f64 / 1e9)
        } else {
            self.success as f64
        }
    }

    /// Fraction of hits that succeeded (0 when empty).
    pub fn success_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.success as f64 / self.requests as f64
        }
    }

    /// Sum of all latencies, ns.
    pub fn latency_total(&self) -> u128 {
        self.latency_total
    }

    /// Mean latency, ns, truncated as Go's integer division does.
    pub fn latency_mean(&self) -> u64 {
        if self.requests == 0 {
            0
        } else {
            (self.latency_total / self.requests as u128) as u64
        }
    }

    /// Smallest latency, ns (exact).
    pub fn latency_min(&self) -> u64 {
        if self.requests == 0 {
            0
        } else {
            self.latency_min
        }
    }

    /// Largest latency, ns (exact).
    pub fn latency_max(&self) -> u64 {
        self.latency_max
    }

    /// The latency at quantile `q` in [0, 1], ns: exact to 3 significant
    /// digits, and never outside the exact min and max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.requests == 0 {
            return 0;
        }
        self.latencies
            .value_at_quantile(q.clamp(0.0, 1.0))
            .clamp(self.latency_min, self.latency_max)
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

    /// Counts per status code, keyed by the code's decimal text and sorted
    /// as text (vegeta's order: `0`, `200`, `404`, `50`…).
    pub fn status_codes(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = self
            .status_codes
            .iter()
            .map(|(c, n)| (c.to_string(), *n))
            .collect();
        v.sort();
        v
    }

    /// Distinct error texts in the order first seen.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// The latency histogram (3 significant digits).
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.latencies
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(ts: i64, latency: u64, code: u16, error: &str) -> Hit {
        Hit {
            timestamp: ts,
            scheduled: ts,
            latency,
            code,
            error: error.into(),
            bytes_in: 6,
            ..Hit::default()
        }
    }

    #[test]
    fn empty() {
        let m = Metrics::new();
        assert_eq!(m.requests(), 0);
        assert_eq!(m.duration(), 0);
        assert_eq!(m.rate(), 0.0);
        assert_eq!(m.success_ratio(), 0.0);
        assert_eq!(m.quantile(0.99), 0);
        assert_eq!(m.latency_min(), 0);
        assert!(m.earliest().is_none());
    }

    #[test]
    fn one_record() {
        let mut m = Metrics::new();
        m.add(&hit(5, 300, 200, ""));
        assert_eq!(m.duration(), 0);
        assert_eq!(m.wait(), 300);
        assert_eq!(m.rate(), 1.0);
        assert_eq!(m.throughput(), 1.0);
        assert_eq!(m.quantile(0.5), 300);
        assert_eq!(m.quantile(1.0), 300);
    }

    #[test]
    fn vegeta_definitions() {
        let mut m = Metrics::new();
        m.add(&hit(0, 100, 200, ""));
        m.add(&hit(1_000_000_000, 50, 404, "404 Not Found"));
        m.add(&hit(2_000_000_000, 500, 0, "refused"));
        m.add(&hit(500_000_000, 10, 0, "refused"));
        assert_eq!(m.duration(), 2_000_000_000);
        assert_eq!(m.wait(), 500);
        assert_eq!(m.rate(), 2.0);
        assert!((m.throughput() - 1.0 / 2.0000005).abs() < 1e-12);
        assert_eq!(m.success_ratio(), 0.25);
        assert_eq!(m.latency_mean(), 165);
        assert_eq!((m.latency_min(), m.latency_max()), (10, 500));
        assert_eq!(
            m.status_codes(),
            vec![("0".into(), 2), ("200".into(), 1), ("404".into(), 1)]
        );
        assert_eq!(m.errors(), ["404 Not Found", "refused"]);
        assert_eq!(m.bytes_in(), (24, 6.0));
    }

    #[test]
    fn quantiles_are_exact_to_three_digits() {
        let mut m = Metrics::new();
        for v in 1..=100_000u64 {
            m.add(&hit(0, v * 1_000, 200, ""));
        }
        for (q, want) in [
            (0.5, 50_000_000u64),
            (0.9, 90_000_000),
            (0.99, 99_000_000),
            (0.999, 99_900_000),
        ] {
            let got = m.quantile(q);
            assert!(got.abs_diff(want) * 1000 <= want, "q{q}: {got} vs {want}");
        }
        assert_eq!(m.quantile(1.0), 100_000_000);
        assert_eq!(m.quantile(0.0), 1_000);
    }

    #[test]
    fn merge_equals_adding_all() {
        let hits: Vec<Hit> = (0..1000)
            .map(|i| {
                hit(
                    i * 1000,
                    (i as u64 * 7919) % 100_000,
                    if i % 3 == 0 { 500 } else { 200 },
                    if i % 3 == 0 {
                        "500 Internal Server Error"
                    } else {
                        ""
                    },
                )
            })
            .collect();
        let mut all = Metrics::new();
        let (mut a, mut b) = (Metrics::new(), Metrics::new());
        for (i, h) in hits.iter().enumerate() {
            all.add(h);
            if i % 2 == 0 {
                a.add(h)
            } else {
                b.add(h)
            }
        }
        a.merge(&b);
        assert_eq!(a.requests(), all.requests());
        assert_eq!(a.duration(), all.duration());
        assert_eq!(a.wait(), all.wait());
        assert_eq!(a.status_codes(), all.status_codes());
        assert_eq!(a.errors(), all.errors());
        for q in [0.5, 0.9, 0.99] {
            assert_eq!(a.quantile(q), all.quantile(q));
        }
    }
}
