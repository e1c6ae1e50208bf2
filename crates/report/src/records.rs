//! [`Records`]: the records of merged inputs as a report reads them,
//! checking that each record's input has what the latency view needs
//! (vegeta's CSV has no scheduled time and no first byte), noting inputs
//! without scheduled times, and comparing inputs that are shards of one
//! schedule.

use std::time::Duration;

use barrage_metrics::{LatencyView, Metrics, Shards};
use barrage_model::{duration, Hit, Lacks};
use barrage_stream::Merge;

/// Reads every record of a [`Merge`], ending at the first whose input
/// lacks what `view` needs (see [`Records::finish`]).
pub struct Records {
    /// The inputs (their read errors: [`Merge::errors`]).
    pub merge: Merge,
    view: LatencyView,
    missing: Option<String>,
    unscheduled_from: Vec<String>,
    /// Whether the inputs are shards of one schedule that disagree
    /// (`None` with one input: nothing to compare).
    pub shards: Option<Shards>,
    /// `-warmup`: records scheduled this long after the run's first
    /// are left out (ns; 0: none), and how many were.
    warmup: u64,
    origin: Option<i64>,
    left_out: u64,
    found: bool,
    /// Whether the warm-up is settled: `-warmup` was given, or the
    /// stream's own mark (`attack -warmup`, its fact `warmup`) was looked
    /// for at the first record.
    given: bool,
    marked: bool,
    /// Live control's markers read with the last record, and how many
    /// of each input's were read before ([`Records::next_marked`]).
    fresh: Vec<barrage_model::Marker>,
    markers_seen: Vec<usize>,
}

/// The stream fact `attack -warmup` writes: how long from the first
/// scheduled request the run was warming up.
pub const WARMUP_FACT: &str = "warmup";

/// `report -warmup`: a duration, or `auto` (found by MSER).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarmupFlag {
    /// The run's first this long left out.
    Given(Duration),
    /// Found in the records (their inputs read twice).
    Auto,
}

/// A latency view the inputs cannot give: bad input, in one line
/// (`-latency intended: r.csv has no scheduled send times …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MissingView(pub String);

impl Records {
    /// Live control's changes read: the schedule time each holds from
    /// (unix ns) and what.
    fn changes(&self) -> Vec<(i64, String)> {
        let markers = self.merge.markers().into_iter();
        markers.map(|m| (m.from, m.what.clone())).collect()
    }

    /// What the inputs said of their runs, for a page's run table: their
    /// facts and live control's changes.
    pub fn tell(&self, run: &mut barrage_plot::run::RunFacts) {
        run.facts(&self.merge.meta());
        run.changes(self.changes());
    }

    /// `barrage plot`'s page: every record, at most `threshold` points a
    /// series, with the run's facts and `files` named.
    pub fn plot(&mut self, threshold: usize, files: &[String]) -> barrage_plot::Plot {
        let sample = match self.view {
            LatencyView::Actual => barrage_plot::Sample::Actual,
            LatencyView::Intended => barrage_plot::Sample::Intended,
            LatencyView::FirstByte => barrage_plot::Sample::FirstByte,
            LatencyView::Ttft => barrage_plot::Sample::Ttft,
            LatencyView::TtftIntended => barrage_plot::Sample::TtftIntended,
        };
        let mut plot = barrage_plot::Plot::new(threshold, sample);
        let mut run = barrage_plot::run::RunFacts::new();
        while let Some((hit, _)) = self.next_record() {
            plot.add(hit);
            run.add(hit);
        }
        plot.set_changes(self.changes());
        self.tell(&mut run);
        run.inputs(files);
        plot.set_run(run.html());
        plot
    }

    /// Reads `merge` for `view`.
    pub fn new(merge: Merge, view: LatencyView) -> Self {
        Records {
            view,
            missing: None,
            unscheduled_from: Vec::new(),
            shards: (merge.inputs() > 1).then(Shards::new),
            merge,
            warmup: 0,
            origin: None,
            left_out: 0,
            found: false,
            given: false,
            marked: false,
            fresh: Vec::new(),
            markers_seen: Vec::new(),
        }
    }

    /// Leaves out the records scheduled within `ns` of the run's first
    /// (the earliest read so far: records come about in the order they
    /// were scheduled); records without a scheduled time are kept.
    pub fn set_warmup(&mut self, ns: u64, found: bool) {
        self.warmup = ns;
        self.found = found;
        self.given = true;
    }

    /// `-warmup` as given, or `auto`: found by reading `files` once first
    /// with `options` ([`crate::find_warmup`]).
    pub fn warm_up(
        &mut self,
        flag: Option<WarmupFlag>,
        files: &[String],
        options: &barrage_metrics::Options,
    ) -> Result<(), barrage_stream::OpenError> {
        match flag {
            None => {}
            Some(WarmupFlag::Given(d)) => {
                self.set_warmup(d.as_nanos().min(u64::MAX as u128) as u64, false)
            }
            Some(WarmupFlag::Auto) => {
                let mut first = Records::new(Merge::open_without_headers(files)?, self.view);
                let ns = crate::find_warmup(&mut first, options.clone());
                self.set_warmup(ns, true);
            }
        }
        Ok(())
    }

    /// The records `-warmup` left out so far.
    pub fn left_out(&self) -> u64 {
        self.left_out
    }

    /// Whether the record just read is in the warm-up.
    fn in_warmup(&mut self) -> Option<bool> {
        let (hit, from) = self.merge.next_with_source()?;
        if let Some(s) = &mut self.shards {
            s.add(from.index, from.name, hit, from.lacks);
        }
        if from.lacks.scheduled {
            return Some(false);
        }
        let scheduled = hit.scheduled;
        if !self.given {
            // The stream's facts come before its first record: looked at
            // once, there.
            self.given = true;
            let marked = self.merge.meta().iter().rev().find_map(|(k, v)| {
                (k == WARMUP_FACT).then(|| barrage_model::duration::parse(v).ok())?
            });
            if let Some(ns) = marked.and_then(|ns| u64::try_from(ns).ok()) {
                self.warmup = ns;
                self.marked = ns > 0;
            }
        }
        if self.warmup == 0 {
            return Some(false);
        }
        // The earliest scheduled so far: records come as they finish, so
        // the first read may be a little after the run's first.
        let origin = self.origin.map_or(scheduled, |o| o.min(scheduled));
        self.origin = Some(origin);
        Some(scheduled < origin.saturating_add(self.warmup.min(i64::MAX as u64) as i64))
    }

    /// The next record and what its input lacks, `None` at the end or
    /// at the first record the view cannot be read from.
    pub fn next_record(&mut self) -> Option<(&Hit, Lacks)> {
        let lacks = self.advance()?;
        Some((self.merge.current()?.0, lacks))
    }

    /// [`Records::next_record`], with live control's markers read since
    /// the last (they come before the records they move: `-by phase`).
    pub fn next_marked(&mut self) -> Option<(&Hit, Lacks, &[barrage_model::Marker])> {
        let lacks = self.advance()?;
        let fresh = self.merge.markers_since(&mut self.markers_seen);
        self.fresh = fresh.into_iter().cloned().collect();
        Some((self.merge.current()?.0, lacks, &self.fresh))
    }

    /// Moves to the next record and says what its input lacks.
    fn advance(&mut self) -> Option<Lacks> {
        if self.missing.is_some() {
            return None;
        }
        while self.in_warmup()? {
            self.left_out += 1;
        }
        let (_, from) = self.merge.current()?;
        let (lacks, name) = (from.lacks, from.name);
        let absent = match self.view {
            LatencyView::Intended | LatencyView::TtftIntended if lacks.scheduled => {
                Some(("intended", "scheduled send times"))
            }
            LatencyView::FirstByte if lacks.first_byte => {
                Some(("first-byte", "times to first byte"))
            }
            _ => None,
        };
        if let Some((view, what)) = absent {
            self.missing = Some(format!(
                "-latency {view}: {name} has no {what} (vegeta's CSV and JSON results have none); use -latency actual"
            ));
            return None;
        }
        if lacks.scheduled && !self.unscheduled_from.iter().any(|n| n == name) {
            self.unscheduled_from.push(name.to_string());
        }
        Some(lacks)
    }

    /// Where the inputs are shards of one schedule that disagree by more
    /// than `tolerance` (or lack some shards): lines for stderr, each
    /// shard's lag p50 and schedule offset, then the warnings (each
    /// starting `warning: `). Empty when they agree.
    pub fn shard_lines(&self, tolerance: Duration) -> Vec<String> {
        let Some(v) = self
            .shards
            .as_ref()
            .and_then(|s| s.verdict(tolerance.as_nanos() as u64))
            .filter(|v| !v.warnings.is_empty())
        else {
            return Vec::new();
        };
        let show = |ns: i64| duration::format(duration::round_for_report(ns));
        let mut lines = vec![format!(
            "the inputs are shards of one schedule of {}, and they disagree (-max-skew {}):",
            v.count,
            show(tolerance.as_nanos() as i64)
        )];
        for s in &v.shards {
            lines.push(format!(
                "  shard {}/{}  {}  {} records  lag p50 {}  schedule offset {}{}",
                s.index,
                v.count,
                s.name,
                s.records,
                show(s.lag_p50 as i64),
                if s.offset < 0 { "-" } else { "+" },
                show(s.offset.abs())
            ));
        }
        lines.extend(v.warnings.iter().map(|w| format!("warning: {w}")));
        lines
    }

    /// After the reading: the view's error, if a record lacked what it
    /// needs; else a note when the lag of `total` covers only some
    /// records.
    pub fn finish(&self, total: Option<&Metrics>) -> Result<Option<String>, MissingView> {
        if let Some(e) = &self.missing {
            return Err(MissingView(e.clone()));
        }
        Ok(total
            .filter(|t| t.unscheduled() > 0 && t.lag().count() > 0)
            .map(|t| {
                format!(
                    "the lag covers the {} records with scheduled send times; the {} from {} have none",
                    t.lag().count(),
                    t.unscheduled(),
                    self.unscheduled_from.join(", ")
                )
            }))
    }
}

impl crate::Source for Records {
    fn next_hit(&mut self) -> Option<(&Hit, Lacks)> {
        self.next_record()
    }

    fn audits_after(&self, at: i64) -> Vec<(usize, barrage_model::Audit)> {
        let all = self.merge.audits().into_iter();
        all.filter(|(_, a)| a.at > at)
            .map(|(i, a)| (i, a.clone()))
            .collect()
    }

    fn samples_since(&self, seen: &mut Vec<usize>) -> Vec<barrage_model::ServerSample> {
        self.merge
            .samples_since(seen)
            .into_iter()
            .cloned()
            .collect()
    }

    fn markers_since(&self, seen: &mut Vec<usize>) -> Vec<barrage_model::Marker> {
        self.merge
            .markers_since(seen)
            .into_iter()
            .cloned()
            .collect()
    }

    fn run_facts(&self) -> crate::live::RunFacts {
        crate::live::RunFacts {
            meta: self.merge.meta(),
            audits: self
                .merge
                .audits()
                .into_iter()
                .map(|(i, a)| (i, a.clone()))
                .collect(),
            samples: self.merge.samples().into_iter().cloned().collect(),
            markers: self.merge.markers().into_iter().cloned().collect(),
            warmup: (self.warmup > 0).then_some(barrage_metrics::Warmup {
                ns: self.warmup,
                left_out: self.left_out,
                found: self.found,
                marked: self.marked,
            }),
        }
    }
}
