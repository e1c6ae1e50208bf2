//! `report -every`: one row (or JSON line) per interval while records
//! arrive, then the whole report. A reader thread folds records into
//! windows and prints each window once the data shows it complete; the
//! calling thread also prints windows when the input has been idle for an
//! interval (a live attack that paused or ended).

use std::{
    io::{self, Write},
    sync::{mpsc, Arc, Mutex},
    time::{Duration, Instant},
};

use barrage_metrics::{Metrics, Options, Windows};
use barrage_model::Hit;

use crate::{layout, Kind, Percentiles};

/// Where `-every` reads its records from (the CLI's merge of its inputs).
pub trait Source: Send + 'static {
    /// The next record and what its source lacks, `None` at the end.
    fn next_hit(&mut self) -> Option<(&Hit, barrage_model::Lacks)>;

    /// The self-audit samples read so far that end after `at` (unix
    /// ns), each with its input's place (none by default): what
    /// `-every`'s windows are judged with.
    fn audits_after(&self, _at: i64) -> Vec<(usize, barrage_model::Audit)> {
        Vec::new()
    }

    /// The scraped server samples read since `seen` (a count per input,
    /// which it moves on; none by default): `-every`'s windows show them.
    fn samples_since(&self, _seen: &mut Vec<usize>) -> Vec<barrage_model::ServerSample> {
        Vec::new()
    }

    /// Live control's markers read since `seen`, as
    /// [`Source::samples_since`]: `-every`'s windows and `-by phase` use
    /// them.
    fn markers_since(&self, _seen: &mut Vec<usize>) -> Vec<barrage_model::Marker> {
        Vec::new()
    }

    /// What the inputs said of their runs besides records: their facts
    /// and their self-audits, each with its input's place (none by
    /// default).
    fn run_facts(&self) -> RunFacts {
        RunFacts::default()
    }
}

/// A run's facts and self-audit, as [`Source::run_facts`] gives them.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// `(key, value)` facts.
    pub meta: Vec<(String, String)>,
    /// Self-audit samples, each with its input's place.
    pub audits: Vec<(usize, barrage_model::Audit)>,
    /// What `-warmup` left out.
    pub warmup: Option<barrage_metrics::Warmup>,
    /// A scraped server's samples (`-scrape`).
    pub samples: Vec<barrage_model::ServerSample>,
    /// Live control's markers (`-control`).
    pub markers: Vec<barrage_model::Marker>,
}

impl RunFacts {
    /// Puts them into `total`.
    pub fn add_to(&self, total: &mut Metrics) {
        let audits: Vec<(usize, &barrage_model::Audit)> =
            self.audits.iter().map(|(i, a)| (*i, a)).collect();
        total.add_run(&self.meta, &audits);
        total.add_server(&self.samples);
        total.add_markers(&self.markers);
        if let Some(w) = self.warmup {
            total.set_warmup(w);
        }
    }
}

/// `-warmup auto`: the warm-up `source`'s records show (the verdict's
/// `warmup` check, MSER on each second's mean latency), ns; 0 when none.
pub fn find_warmup<S: Source>(source: &mut S, options: Options) -> u64 {
    let (mut total, _) = whole(source, options, None);
    source.run_facts().add_to(&mut total);
    let found = total.trust(&[]).and_then(|t| {
        let w = t.checks.into_iter().find(|c| c.name == "warmup")?;
        w.figure.filter(|_| !w.ok)
    });
    (found.unwrap_or(0.0) * 1e9) as u64
}

/// State shared by the reading thread and the ticking one.
struct Live {
    windows: Windows,
    total: Metrics,
    out: Box<dyn Write + Send>,
    last_data: Instant,
    error: Option<io::Error>,
    /// Records that arrived after their window was printed.
    kind: Kind,
    percentiles: Percentiles,
    /// The self-audit samples read so far, for the windows' verdicts.
    audits: Vec<(usize, barrage_model::Audit)>,
    /// The scraped samples read so far, for the windows' rows, and how
    /// many of each input's.
    samples: Vec<barrage_model::ServerSample>,
    samples_seen: Vec<usize>,
    /// The markers read so far, and how many of each input's.
    markers: Vec<barrage_model::Marker>,
    markers_seen: Vec<usize>,
}

impl Live {
    /// Prints the `ready` windows; with `at_end`, the last is the final
    /// one, cut short by the attack's end.
    fn emit(&mut self, ready: Vec<(i64, Metrics)>, at_end: bool) {
        let n = ready.len();
        for (i, (start, mut m)) in ready.into_iter().enumerate() {
            if self.error.is_some() {
                return;
            }
            let mut every = self.windows.every();
            // The self-audit samples whose span ends in the window.
            let end = start.saturating_add(every);
            let audits: Vec<(usize, &barrage_model::Audit)> = self
                .audits
                .iter()
                .filter(|(_, a)| a.at > start && a.at <= end)
                .map(|(i, a)| (*i, a))
                .collect();
            m.add_run(&[], &audits);
            m.add_server(self.samples.iter().filter(|x| x.at > start && x.at <= end));
            m.add_markers(
                self.markers
                    .iter()
                    .filter(|x| x.from >= start && x.from < end),
            );
            if at_end && i + 1 == n {
                every = covered(start, every, &m, &self.total);
                if self.kind != Kind::Json
                    && self.total.requests() > m.requests()
                    && every < self.windows.every() / 2
                {
                    // A tail much shorter than a window (attackers that
                    // started a few ms apart): its rate over a few ms is
                    // noise, so it is named, not given a row.
                    if let Err(e) = crate::window_tail(every, &m, &mut self.out) {
                        self.error = Some(e);
                    }
                    return;
                }
            }
            let res = if self.kind == Kind::Json {
                crate::window_json(start, every, &m, &self.percentiles, &mut self.out)
            } else {
                crate::window_row(start, every, &m, &self.percentiles, &mut self.out)
            };
            if let Err(e) = res {
                self.error = Some(e);
            }
        }
    }
}

/// The time the final window covers: from its start to a gap (the
/// attack's mean gap between sends) after its last send, at most its
/// width. Its rate is over that: over the full width, the last 0.55 s of
/// a run at 200/s showed 110/s.
fn covered(start: i64, every: i64, m: &Metrics, total: &Metrics) -> i64 {
    let Some(last) = m.latest() else {
        return every;
    };
    let gap = total.duration() / (total.requests() as i64 - 1).max(1);
    (last.saturating_sub(start).saturating_add(gap)).clamp(1, every)
}

/// What [`live`] leaves: the source (to ask how its inputs ended), the
/// whole attack's metrics, and how writing went.
pub struct LiveEnd<S> {
    /// The source, read to its end.
    pub source: S,
    /// Every record's metrics.
    pub total: Metrics,
    /// Whether writing succeeded.
    pub written: io::Result<()>,
    /// Records that arrived after their interval was printed (they count
    /// in the final report only).
    pub late: u64,
}

impl<S> LiveEnd<S> {
    /// Says how many records came after their interval was printed.
    pub fn late_note(&self) -> Option<String> {
        (self.late > 0).then(|| {
            format!(
                "{} results arrived after their interval was printed; they count in the final report only",
                self.late
            )
        })
    }
}

/// The whole report's reading: every record of `source` into the total
/// and, with `by` (`-by`), into its groups.
pub fn whole<S: Source>(
    source: &mut S,
    options: Options,
    by: Option<barrage_metrics::GroupBy>,
) -> (Metrics, Option<barrage_metrics::Groups>) {
    let mut total = Metrics::with_options(options);
    let mut groups = by.map(|by| barrage_metrics::Groups::new(by, &total));
    let phases = by == Some(barrage_metrics::GroupBy::Phase);
    let mut seen = Vec::new();
    while let Some((hit, lacks)) = source.next_hit() {
        if let (true, Some(g)) = (phases, &mut groups) {
            // -by phase: the markers read with the record, which come
            // before the records they move.
            let hit = hit.clone();
            g.add_markers(&source.markers_since(&mut seen));
            total.add_lacking(&hit, lacks);
            g.add_lacking(&hit, lacks);
            continue;
        }
        total.add_lacking(hit, lacks);
        if let Some(g) = &mut groups {
            g.add_lacking(hit, lacks);
        }
    }
    (total, groups)
}

/// Reads `source` to its end, printing a row per `every` of send time as
/// `kind` (text rows or JSON lines), then the whole report.
pub fn live<S: Source>(
    kind: Kind,
    options: Options,
    percentiles: &Percentiles,
    source: S,
    every: Duration,
    out: Box<dyn Write + Send>,
) -> io::Result<LiveEnd<S>> {
    let total = Metrics::with_options(options);
    let every_ns = every.as_nanos().min(i64::MAX as u128) as u64;
    let mut state = Live {
        windows: Windows::new(every_ns, &total),
        total,
        out,
        last_data: Instant::now(),
        error: None,
        kind,
        percentiles: percentiles.clone(),
        audits: Vec::new(),
        samples: Vec::new(),
        samples_seen: Vec::new(),
        markers: Vec::new(),
        markers_seen: Vec::new(),
    };
    if kind != Kind::Json {
        if let Err(e) = crate::window_header(percentiles, &mut state.out) {
            state.error = Some(e);
        }
    }
    let state = Arc::new(Mutex::new(state));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let reader = {
        let state = state.clone();
        std::thread::Builder::new()
            .name("barrage-report-reader".into())
            .spawn(move || {
                let mut source = source;
                while let Some((hit, lacks)) = source.next_hit() {
                    let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
                    s.total.add_lacking(hit, lacks);
                    s.windows.add_lacking(hit, lacks);
                    s.last_data = Instant::now();
                    let ready = s.windows.ready();
                    if !ready.is_empty() {
                        let seen = s.audits.iter().map(|(_, a)| a.at).max().unwrap_or(i64::MIN);
                        s.audits.extend(source.audits_after(seen));
                        let mut seen = std::mem::take(&mut s.samples_seen);
                        s.samples.extend(source.samples_since(&mut seen));
                        s.samples_seen = seen;
                        let mut seen = std::mem::take(&mut s.markers_seen);
                        s.markers.extend(source.markers_since(&mut seen));
                        s.markers_seen = seen;
                        s.emit(ready, false);
                    }
                }
                drop(done_tx);
                source
            })?
    };
    while let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(every) {
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        if s.last_data.elapsed() >= every {
            let now = barrage_model::time::now_ns();
            let ready = s.windows.ready_before(now - every_ns as i64);
            s.emit(ready, false);
        }
    }
    let source = reader
        .join()
        .map_err(|_| io::Error::other("the report's reader thread failed"))?;
    let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
    let seen = s.audits.iter().map(|(_, a)| a.at).max().unwrap_or(i64::MIN);
    s.audits.extend(source.audits_after(seen));
    let mut seen = std::mem::take(&mut s.samples_seen);
    s.samples.extend(source.samples_since(&mut seen));
    let mut seen = std::mem::take(&mut s.markers_seen);
    s.markers.extend(source.markers_since(&mut seen));
    let rest = s.windows.finish();
    s.emit(rest, true);
    source.run_facts().add_to(&mut s.total);
    let total = s.total.clone();
    let late = s.windows.late();
    let written = match s.error.take() {
        Some(e) => Err(e),
        None => {
            let out = &mut s.out;
            (|| {
                if kind != Kind::Json {
                    writeln!(out)?;
                }
                layout::write(kind, &total, percentiles, out)
            })()
        }
    };
    Ok(LiveEnd {
        source,
        total,
        written,
        late,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The last 0.55 s of a run at 200/s, in 1 s windows: its rate is
    /// over the 0.55 s it covers.
    #[test]
    fn the_final_window_is_as_long_as_what_it_covers() {
        let (t0, gap, second) = (1_000_000_000_000i64, 5_000_000, 1_000_000_000);
        let (mut total, mut last) = (Metrics::new(), Metrics::new());
        for i in 0..510 {
            let hit = Hit {
                timestamp: t0 + i * gap,
                code: 200,
                ..Hit::default()
            };
            total.add(&hit);
            if hit.timestamp >= t0 + 2 * second {
                last.add(&hit);
            }
        }
        let span = covered(t0 + 2 * second, second, &last, &total);
        assert_eq!(span, 550_000_000);
        let rate = last.requests() as f64 / (span as f64 / 1e9);
        assert!((rate - 200.0).abs() < 1e-9, "{rate}");
        // A full window, or one with nothing in it, keeps its width.
        assert_eq!(covered(t0, second, &total, &total), second);
        assert_eq!(covered(t0, second, &Metrics::new(), &total), second);
    }

    struct Hits(std::vec::IntoIter<Hit>, Hit);
    impl Source for Hits {
        fn next_hit(&mut self) -> Option<(&Hit, barrage_model::Lacks)> {
            self.1 = self.0.next()?;
            Some((&self.1, barrage_model::Lacks::default()))
        }
    }

    /// A writer whose bytes a test reads back.
    #[derive(Clone, Default)]
    pub(crate) struct Shared(pub(crate) Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Two attackers at 1,000/s for 2 s, the second started 4 ms after
    /// the first (as through `collect`): the 4 ms tail gets no row of its
    /// own, a line naming its records instead, and the total counts it.
    #[test]
    fn a_tail_of_a_few_ms_is_named_not_given_a_row() {
        let t0 = 1_000_000_000_000i64;
        let mut hits: Vec<Hit> = (0..2000)
            .flat_map(|i| [0, 4_000_000].map(|off| t0 + off + i * 1_000_000))
            .map(|timestamp| Hit {
                timestamp,
                code: 200,
                ..Hit::default()
            })
            .collect();
        hits.sort_by_key(|h| h.timestamp);
        let out = Shared::default();
        let end = live(
            Kind::Text,
            Options::default(),
            &Percentiles::default(),
            Hits(hits.into_iter(), Hit::default()),
            Duration::from_secs(1),
            Box::new(out.clone()),
        )
        .unwrap();
        assert_eq!(end.total.requests(), 4000);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let rows: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        assert_eq!(rows.len(), 4, "{text}");
        assert!(
            rows[1].contains(" 1996 ") && rows[2].contains(" 2000 "),
            "{text}"
        );
        assert!(
            rows[3].starts_with("(then 4 requests in a final 3.5"),
            "{text}"
        );
    }
}
