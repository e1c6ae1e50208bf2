//! `attack`'s live progress: what the writer thread tallies as it writes
//! records ([`Tally`], published to a [`Board`] at each flush), the line
//! printed from it ([`Figures::line`]), and the [`Display`] thread: that
//! line redrawn 4 times a second on a terminal, or (`-progress` on a pipe)
//! one plain line a second; and, whatever is shown, a word once the
//! attack stops (what it waits for) or falls behind its schedule. The
//! request path does nothing for it: the figures are the writer's tallies
//! and the tickets' count of requests sent.

use std::{
    collections::VecDeque,
    io::{self, Write},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc, Mutex,
    },
    thread,
    time::{Duration, Instant},
};

use barrage_metrics::Distribution;
use barrage_model::{duration, Hit};

/// Counts kept by the writer between two flushes. Latency and lag are
/// kept in microseconds, in 2-digit histograms, and the histograms are
/// reused: a first version made two 3-digit nanosecond ones per flush and
/// kept ten of each, 6 MiB of RSS and ~6 µs of CPU per request at 2,000/s
/// in page faults and merges.
pub struct Tally {
    ok: u64,
    errors: u64,
    latency: Distribution,
    lag: Distribution,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            ok: 0,
            errors: 0,
            latency: Distribution::coarse(),
            lag: Distribution::coarse(),
        }
    }
}

impl Tally {
    /// Counts one written record (vegeta's success rule).
    pub fn add(&mut self, hit: &Hit) {
        if hit.error.is_empty() && hit.is_success() {
            self.ok += 1;
        } else {
            self.errors += 1;
        }
        self.latency.record(hit.latency / 1000);
        self.lag.record(hit.lag() / 1000);
    }
}

/// Recent figures are kept for this long, in slices of [`SLICE`].
const RECENT: Duration = Duration::from_secs(1);
const SLICE: Duration = Duration::from_millis(250);

#[derive(Default)]
struct Totals {
    ok: u64,
    errors: u64,
    /// Lag since the start (µs), for the live verdict.
    lag: Option<Distribution>,
    /// Latency and lag by slice of time (at most 5), newest last.
    recent: VecDeque<(Instant, Distribution, Distribution)>,
}

/// Where the writer publishes its tallies and a display reads them.
pub struct Board {
    /// Records written, counted one by one (so that "in flight" is right
    /// between flushes).
    written: AtomicU64,
    totals: Mutex<Totals>,
    /// The busiest thread's share of a core in the self-audit's latest
    /// sample, in thousandths (`u64::MAX`: none yet).
    busiest: AtomicU64,
}

/// The verdict so far, as the progress line shows it: the binding lag
/// check on every record written, and the self-audit's busiest thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoFar {
    /// Lag p99 since the start, ns.
    pub lag_p99: u64,
    /// The busiest thread's share of a core, lately.
    pub busiest: Option<f64>,
}

impl SoFar {
    /// Whether the run is valid so far, and why not: `lag p99 14ms`, with
    /// `cpu 99%` when barrage's busiest thread is over its limit.
    pub fn said(&self) -> (bool, String) {
        let limits = barrage_metrics::Limits::default();
        let valid = self.lag_p99 <= limits.lag;
        let mut why = Vec::new();
        if !valid {
            why.push(format!("lag p99 {}", short(self.lag_p99)));
        }
        if let Some(b) = self.busiest.filter(|b| *b > limits.cpu) {
            why.push(format!("cpu {:.0}%", b * 100.0));
        }
        (valid, why.join(", "))
    }
}

impl Default for Board {
    fn default() -> Self {
        Board {
            written: AtomicU64::new(0),
            totals: Mutex::default(),
            busiest: AtomicU64::new(u64::MAX),
        }
    }
}

impl Board {
    /// The self-audit's latest sample: its busiest thread's share.
    pub fn audited(&self, sample: &barrage_model::Audit) {
        let thousandths = (sample.busiest() * 1000.0).round() as u64;
        self.busiest.store(thousandths, Ordering::Relaxed);
    }

    /// The verdict so far (`None` before the first record).
    pub fn so_far(&self) -> Option<SoFar> {
        let t = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        let lag = t.lag.as_ref().filter(|l| l.count() > 0)?;
        let busiest = self.busiest.load(Ordering::Relaxed);
        Some(SoFar {
            lag_p99: lag.quantile(0.99) * 1000,
            busiest: (busiest != u64::MAX).then(|| busiest as f64 / 1000.0),
        })
    }

    /// Counts one record written (on the writer thread).
    pub fn written(&self) {
        self.written.fetch_add(1, Ordering::Relaxed);
    }

    /// Adds `tally` and empties it: called at each flush, so at most every
    /// 100 ms while records come.
    pub fn publish(&self, tally: &mut Tally) {
        let now = Instant::now();
        let mut t = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        t.ok += tally.ok;
        t.errors += tally.errors;
        if t.recent
            .back()
            .is_none_or(|(at, ..)| now.duration_since(*at) >= SLICE)
        {
            // A new slice, reusing the oldest one's memory once a second
            // is covered.
            let slice = match t.recent.front() {
                Some((at, ..)) if now.duration_since(*at) > RECENT => {
                    t.recent.pop_front().map(|(_, mut l, mut g)| {
                        l.reset();
                        g.reset();
                        (now, l, g)
                    })
                }
                _ => None,
            };
            let slice =
                slice.unwrap_or_else(|| (now, Distribution::coarse(), Distribution::coarse()));
            t.recent.push_back(slice);
        }
        if let Some((_, l, g)) = t.recent.back_mut() {
            l.merge(&tally.latency);
            g.merge(&tally.lag);
        }
        t.lag
            .get_or_insert_with(Distribution::coarse)
            .merge(&tally.lag);
        while t
            .recent
            .front()
            .is_some_and(|(at, ..)| now.duration_since(*at) > RECENT + SLICE)
        {
            t.recent.pop_front();
        }
        tally.ok = 0;
        tally.errors = 0;
        tally.latency.reset();
        tally.lag.reset();
    }

    /// Written, ok and error counts so far, and latency p50, p99 and lag
    /// p99 (ns) over about the last second (`None` when nothing came).
    pub fn read(&self) -> (u64, u64, u64, Option<(u64, u64, u64)>) {
        let now = Instant::now();
        let t = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        let (mut latency, mut lag) = (Distribution::coarse(), Distribution::coarse());
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
                latency.quantile(0.5) * 1000,
                latency.quantile(0.99) * 1000,
                lag.quantile(0.99) * 1000,
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
    /// Connections held open (`-hold`).
    pub held: Option<u64>,
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
    /// The verdict so far.
    pub so_far: Option<SoFar>,
}

fn short(ns: u64) -> String {
    duration::format(duration::round_for_report(ns as i64))
}

impl Figures {
    /// The whole line; `bar` draws a bar of the share done (a terminal's
    /// line).
    pub fn line(&self, bar: bool) -> String {
        self.fitted(bar, usize::MAX)
    }

    /// The line in at most `width` columns: fields are dropped, least
    /// needed first, until it fits (issue 29: a line longer than the
    /// terminal wraps, and each redraw then leaves a line behind).
    pub fn fitted(&self, bar: bool, width: usize) -> String {
        let mut parts = self.parts(bar);
        let len =
            |parts: &[(u8, String)]| parts.iter().map(|(_, p)| p.chars().count()).sum::<usize>();
        while len(&parts) > width {
            let Some(worst) = parts.iter().map(|(rank, _)| *rank).max().filter(|r| *r > 0) else {
                break;
            };
            if let Some(i) = parts.iter().rposition(|(rank, _)| *rank == worst) {
                parts.remove(i);
            }
        }
        let mut line: String = parts.into_iter().map(|(_, p)| p).collect();
        if line.chars().count() > width {
            line = line.chars().take(width).collect();
        }
        line
    }

    /// The line's fields in order, each with its rank: 0 is always shown,
    /// higher ranks go first when the line must be shorter.
    fn parts(&self, bar: bool) -> Vec<(u8, String)> {
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
        let mut parts = vec![(0, so_far)];
        if let Some(share) = share.map(|s| s.clamp(0.0, 1.0)) {
            if bar {
                let filled = (share * 20.0).round() as usize;
                parts.push((
                    6,
                    format!(" [{}{}]", "#".repeat(filled), ".".repeat(20 - filled)),
                ));
            }
            parts.push((2, format!(" {:>3.0}%", share * 100.0)));
        }
        parts.push((1, format!(" | sent {} ({:.0}/s)", self.sent, self.rate)));
        parts.push((4, format!(" | in flight {}", self.in_flight)));
        if let Some(held) = self.held {
            parts.push((1, format!(" | held {held}")));
        }
        // Of the records tallied so far (published at each flush, so a
        // little behind `written`).
        // No record yet is no success rate (it said 100.00% ok).
        let tallied = self.ok + self.errors;
        let success = match tallied {
            0 => "0 results".to_string(),
            n => format!("{:.2}% ok", self.ok as f64 / n as f64 * 100.0),
        };
        parts.push((0, format!(" | {success}, {} errors", self.errors)));
        if let Some(so_far) = self.so_far {
            // The run's verdict so far: NOT VALID is always shown, why
            // when there is room.
            let (valid, why) = so_far.said();
            let word = if valid {
                " | valid so far"
            } else {
                " | NOT VALID"
            };
            parts.push((if valid { 4 } else { 0 }, word.into()));
            if !why.is_empty() {
                parts.push((3, format!(" ({why})")));
            }
        }
        if let Some((p50, p99, lag)) = self.recent {
            parts.push((5, format!(" | p50 {}", short(p50))));
            parts.push((3, format!(" p99 {}", short(p99))));
            parts.push((5, format!(" | lag p99 {}", short(lag))));
            if lag > self.behind_at.as_nanos() as u64 {
                parts.push((0, " BEHIND".into()));
            }
        }
        parts
    }
}

/// Columns assumed when the terminal does not say its width.
const DEFAULT_COLUMNS: usize = 80;

/// Lag p99 over the last second above which barrage says it is behind.
const BEHIND: Duration = Duration::from_millis(10);

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    /// One line redrawn 4 times a second.
    Terminal,
    /// One plain line a second.
    Lines,
    /// Only the words on a stop and on falling behind.
    Off,
}

impl Show {
    /// `-progress` (`None`: on a terminal only) on a stderr that is a
    /// terminal or not.
    pub fn from_flag(flag: Option<bool>, terminal: bool) -> Show {
        match (flag, terminal) {
            (Some(false), _) => Show::Off,
            (_, true) => Show::Terminal,
            (Some(true), false) => Show::Lines,
            (None, false) => Show::Off,
        }
    }
}

/// The display thread, until [`Display::finish`].
pub struct Display {
    done: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

/// What the display reads.
pub struct Watched {
    /// The writer's tallies.
    pub board: Arc<Board>,
    /// Requests sent so far.
    pub sent: Box<dyn Fn() -> u64 + Send>,
    /// Connections held open now (`-hold`).
    pub held: Option<Box<dyn Fn() -> u64 + Send>>,
    /// Whether a signal told the attack to stop (a closed output stops it
    /// too, silently).
    pub stopped: Box<dyn Fn() -> bool + Send>,
    /// Where the attack ends.
    pub total: Total,
    /// `-timeout`, said when a stop waits for requests in flight.
    pub timeout: Option<Duration>,
}

impl Display {
    /// Starts showing `watched` on `out` (stderr) on a thread of its own.
    pub fn start(show: Show, watched: Watched, mut out: Box<dyn Write + Send>) -> Display {
        let done = Arc::new(AtomicBool::new(false));
        let thread = {
            let done = done.clone();
            thread::Builder::new()
                .name("barrage-progress".into())
                .spawn(move || show_until(show, &watched, &done, &mut out))
                .ok()
        };
        if show == Show::Terminal {
            // Redrawn at once in the new width when the window changes.
            if let (Some(t), Ok(mut winch)) = (
                &thread,
                signal_hook::iterator::Signals::new([signal_hook::consts::SIGWINCH]),
            ) {
                let drawer = t.thread().clone();
                let _ = thread::Builder::new()
                    .name("barrage-winch".into())
                    .spawn(move || winch.forever().for_each(|_| drawer.unpark()));
            }
        }
        Display { done, thread }
    }

    /// Draws the last line and ends the thread.
    pub fn finish(mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

fn show_until(show: Show, i: &Watched, done: &AtomicBool, err: &mut Box<dyn Write + Send>) {
    // Stops and lag are looked at 4 times a second; a plain line is
    // printed every 4th time.
    let every = Duration::from_millis(250);
    let mut ticks = 0u64;
    let start = Instant::now();
    let mut sent_at: std::collections::VecDeque<(Instant, u64)> = Default::default();
    let (mut said_stopping, mut said_behind, mut drawn) = (false, false, false);
    loop {
        thread::park_timeout(every);
        ticks += 1;
        let finished = done.load(Ordering::SeqCst);
        let now = Instant::now();
        let sent = (i.sent)();
        sent_at.push_back((now, sent));
        while sent_at.len() > 2 && now.duration_since(sent_at[1].0) >= Duration::from_secs(1) {
            sent_at.pop_front();
        }
        let rate = match sent_at.front() {
            // Sent can fall: tickets taken ahead go back at a stop.
            Some(&(at, n)) if sent_at.len() > 1 && now > at => {
                sent.saturating_sub(n) as f64 / now.duration_since(at).as_secs_f64()
            }
            _ => sent as f64 / now.duration_since(start).as_secs_f64().max(1e-3),
        };
        let (written, ok, errors, recent) = i.board.read();
        let in_flight = sent.saturating_sub(written);
        let clear = |err: &mut Box<dyn Write + Send>, drawn: bool| {
            if drawn {
                let _ = write!(err, "\r\x1b[2K");
            }
        };
        if (i.stopped)() && !said_stopping && !finished {
            said_stopping = true;
            clear(err, drawn && show == Show::Terminal);
            let wait = i.timeout.map_or("until they finish".into(), |t| {
                format!("up to {}", duration::format(t.as_nanos() as i64))
            });
            let _ = writeln!(
                err,
                "barrage attack: stopping: {in_flight} requests in flight, waiting {wait} (Ctrl-C again to quit)"
            );
        }
        if let Some((_, _, lag)) = recent.filter(|r| r.2 > BEHIND.as_nanos() as u64) {
            if !said_behind {
                said_behind = true;
                clear(err, drawn && show == Show::Terminal);
                let _ = writeln!(
                    err,
                    "barrage attack: behind schedule: requests went out up to {} late (lag p99 over the last second); barrage cannot keep this rate here (its CPU, -max-workers), and each record's scheduled and timestamp say by how much",
                    duration::format(duration::round_for_report(lag as i64))
                );
            }
        }
        let figures = Figures {
            elapsed: now.duration_since(start),
            total: i.total,
            sent,
            rate,
            in_flight,
            held: i.held.as_ref().map(|h| h()),
            written,
            ok,
            errors,
            recent,
            behind_at: BEHIND,
            so_far: i.board.so_far(),
        };
        match show {
            Show::Terminal => {
                // One column short of the width: a line that ends in the
                // last column leaves some terminals on the next line.
                let width = terminal_size::terminal_size_of(io::stderr())
                    .map_or(DEFAULT_COLUMNS, |(w, _)| usize::from(w.0));
                let _ = write!(
                    err,
                    "\r\x1b[2K{}",
                    figures.fitted(true, width.saturating_sub(1).max(20))
                );
                drawn = true;
            }
            Show::Lines if ticks.is_multiple_of(4) || finished => {
                let _ = writeln!(err, "{}", figures.line(false));
            }
            Show::Lines => {}
            Show::Off => {}
        }
        let _ = err.flush();
        if finished {
            if drawn {
                let _ = writeln!(err);
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests;
