//! `attack`'s live progress: what the writer thread tallies as it writes
//! records ([`Tally`], published to a [`Board`] at each flush), and the
//! line a progress display prints from it ([`Figures::line`]).

use std::{
    collections::VecDeque,
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
    time::{Duration, Instant},
};

use barrage_metrics::Distribution;
use barrage_model::{duration, Hit};

/// Counts kept by the writer between two flushes.
#[derive(Default)]
pub struct Tally {
    ok: u64,
    errors: u64,
    latency: Distribution,
    lag: Distribution,
}

impl Tally {
    /// Counts one written record (vegeta's success rule).
    pub fn add(&mut self, hit: &Hit) {
        if hit.error.is_empty() && hit.is_success() {
            self.ok += 1;
        } else {
            self.errors += 1;
        }
        self.latency.record(hit.latency);
        self.lag.record(hit.lag());
    }
}

/// Recent figures are kept for this long.
const RECENT: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Totals {
    ok: u64,
    errors: u64,
    /// What each publication brought, and when, for the last second.
    recent: VecDeque<(Instant, Distribution, Distribution)>,
}

/// Where the writer publishes its tallies and a display reads them.
#[derive(Default)]
pub struct Board {
    /// Records written, counted one by one (so that "in flight" is right
    /// between flushes).
    written: AtomicU64,
    totals: Mutex<Totals>,
}

impl Board {
    /// Counts one record written (on the writer thread).
    pub fn written(&self) {
        self.written.fetch_add(1, Ordering::Relaxed);
    }

    /// Adds `tally` (and empties it): called at each flush, so at most
    /// every 100 ms while records come.
    pub fn publish(&self, tally: &mut Tally) {
        let now = Instant::now();
        let mut t = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        t.ok += tally.ok;
        t.errors += tally.errors;
        let taken = std::mem::take(tally);
        t.recent.push_back((now, taken.latency, taken.lag));
        while t
            .recent
            .front()
            .is_some_and(|(at, ..)| now.duration_since(*at) > RECENT)
        {
            t.recent.pop_front();
        }
    }

    /// Written, ok and error counts so far, and latency p50, p99 and lag
    /// p99 over the last second (`None` when nothing came in it).
    pub fn read(&self) -> (u64, u64, u64, Option<(u64, u64, u64)>) {
        let now = Instant::now();
        let t = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        let (mut latency, mut lag) = (Distribution::default(), Distribution::default());
        for (_, l, g) in t
            .recent
            .iter()
            .filter(|(at, ..)| now.duration_since(*at) <= RECENT)
        {
            latency.merge(l);
            lag.merge(g);
        }
        let recent = (latency.count() > 0).then(|| {
            (
                latency.quantile(0.5),
                latency.quantile(0.99),
                lag.quantile(0.99),
            )
        });
        (self.written.load(Ordering::Relaxed), t.ok, t.errors, recent)
    }
}

/// The end of an attack, when one is known: by time or by count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Total {
    /// `-duration`.
    Time(Duration),
    /// `-requests`.
    Requests(u64),
    /// Neither: until stopped.
    Open,
}

/// One progress line's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// Since the start.
    pub elapsed: Duration,
    /// Where it ends.
    pub total: Total,
    /// Requests sent.
    pub sent: u64,
    /// Requests sent per second, lately.
    pub rate: f64,
    /// Sent and not yet written.
    pub in_flight: u64,
    /// Records written, and of them successes and errors.
    pub written: u64,
    /// See `written`.
    pub ok: u64,
    /// See `written`.
    pub errors: u64,
    /// Latency p50, p99 and lag p99 over the last second, ns.
    pub recent: Option<(u64, u64, u64)>,
    /// Lag p99 above which the line says barrage is behind.
    pub behind_at: Duration,
}

fn short(ns: u64) -> String {
    duration::format(duration::round_for_report(ns as i64))
}

impl Figures {
    /// The line; `bar` draws a bar of the share done (a terminal's line).
    pub fn line(&self, bar: bool) -> String {
        let secs = self.elapsed.as_secs_f64();
        let (so_far, share) = match self.total {
            Total::Time(d) => (
                format!("{secs:.1}s/{:.1}s", d.as_secs_f64()),
                Some(secs / d.as_secs_f64().max(1e-9)),
            ),
            Total::Requests(n) => (
                format!("{secs:.1}s"),
                Some(self.sent as f64 / (n.max(1)) as f64),
            ),
            Total::Open => (format!("{secs:.1}s"), None),
        };
        let mut line = so_far;
        if let Some(share) = share.map(|s| s.clamp(0.0, 1.0)) {
            if bar {
                let filled = (share * 20.0).round() as usize;
                line.push_str(&format!(
                    " [{}{}]",
                    "#".repeat(filled),
                    ".".repeat(20 - filled)
                ));
            }
            line.push_str(&format!(" {:>3.0}%", share * 100.0));
        }
        line.push_str(&format!(
            " | sent {} ({:.0}/s) | in flight {}",
            self.sent, self.rate, self.in_flight
        ));
        // Of the records tallied so far (published at each flush, so a
        // little behind `written`).
        let tallied = self.ok + self.errors;
        let success = if tallied > 0 {
            self.ok as f64 / tallied as f64 * 100.0
        } else {
            100.0
        };
        line.push_str(&format!(" | {success:.2}% ok, {} errors", self.errors));
        if let Some((p50, p99, lag)) = self.recent {
            line.push_str(&format!(
                " | p50 {} p99 {} | lag p99 {}",
                short(p50),
                short(p99),
                short(lag)
            ));
            if lag > self.behind_at.as_nanos() as u64 {
                line.push_str(" BEHIND");
            }
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_reach_the_board_and_the_line() {
        let board = Board::default();
        let mut tally = Tally::default();
        for i in 0..100u64 {
            board.written();
            tally.add(&Hit {
                code: if i < 98 { 200 } else { 500 },
                error: if i < 98 {
                    String::new()
                } else {
                    "500 Internal Server Error".into()
                },
                latency: 1_000_000 + i * 10_000,
                scheduled: 0,
                timestamp: 20_000_000,
                ..Hit::default()
            });
        }
        board.publish(&mut tally);
        let (written, ok, errors, recent) = board.read();
        assert_eq!((written, ok, errors), (100, 98, 2));
        let (p50, p99, lag) = recent.unwrap();
        assert!(p50 < p99 && lag >= 19_000_000, "{p50} {p99} {lag}");
        let f = Figures {
            elapsed: Duration::from_secs(3),
            total: Total::Time(Duration::from_secs(10)),
            sent: 110,
            rate: 36.7,
            in_flight: 10,
            written,
            ok,
            errors,
            recent,
            behind_at: Duration::from_millis(10),
        };
        let line = f.line(true);
        assert!(
            line.starts_with("3.0s/10.0s [######..............]  30%"),
            "{line}"
        );
        assert!(
            line.contains("sent 110 (37/s) | in flight 10 | 98.00% ok, 2 errors"),
            "{line}"
        );
        assert!(line.ends_with("BEHIND"), "{line}");
        assert!(!f.line(false).contains('['));
    }
}
