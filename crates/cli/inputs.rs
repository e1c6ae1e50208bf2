//! Opening result inputs for a reading command: `barrage_stream::Merge`,
//! with its errors said on stderr and turned into exit codes.

pub use barrage_stream::Merge;

use barrage_metrics::LatencyView;
use barrage_model::Lacks;
use barrage_stream::Hit;

use crate::failed::{Failed, Kind, Outcome};

/// [`Merge::open`] (header lines left out unless `headers`): an input
/// that cannot be opened fails as bad input (2) or as I/O (1).
pub fn open(files: &[String], headers: bool) -> Result<Merge, Failed> {
    let merge = if headers {
        Merge::open(files)
    } else {
        Merge::open_without_headers(files)
    };
    merge.map_err(|e| {
        if e.bad_input {
            Failed::usage(e.message)
        } else {
            Failed::io(e.message)
        }
    })
}

/// The read errors of `merge`, if any: bad input (2) when any is, else I/O (1).
pub fn finish(merge: &Merge) -> Outcome {
    let (lines, bad) = merge.errors();
    if lines.is_empty() {
        return Ok(());
    }
    let kind = if bad { Kind::Usage } else { Kind::Io };
    Err(Failed { kind, lines })
}

/// Reads every record of `merge` into `add`, checking that each record's
/// source has what `view` needs (vegeta's CSV has no scheduled time and
/// no first byte): the first that does not ends the reading with a
/// one-line error naming its input. Also notes on stderr when only some
/// records have scheduled times (the lag covers those).
pub struct Records {
    pub merge: Merge,
    view: LatencyView,
    missing: Option<String>,
    unscheduled_from: Vec<String>,
    /// Whether the inputs are shards of one schedule that disagree
    /// (`None` with one input: nothing to compare).
    pub shards: Option<barrage_metrics::Shards>,
}

impl Records {
    pub fn new(merge: Merge, view: LatencyView) -> Self {
        Records {
            view,
            missing: None,
            unscheduled_from: Vec::new(),
            shards: (merge.inputs() > 1).then(barrage_metrics::Shards::new),
            merge,
        }
    }

    /// The next record and what its source lacks, `None` at the end or
    /// at the first record the view cannot be read from.
    pub fn next(&mut self) -> Option<(&Hit, Lacks)> {
        if self.missing.is_some() {
            return None;
        }
        let (hit, from) = self.merge.next_with_source()?;
        let (lacks, name) = (from.lacks, from.name);
        if let Some(s) = &mut self.shards {
            s.add(from.index, name, hit, lacks);
        }
        let absent = match self.view {
            LatencyView::Intended if lacks.scheduled => Some(("intended", "scheduled send times")),
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
        Some((hit, lacks))
    }

    /// On stderr, where the inputs are shards of one schedule that
    /// disagree by more than `tolerance` (or lack some shards): each
    /// shard's lag p50 and schedule offset, then why.
    pub fn warn_of_shards(&self, tolerance: std::time::Duration, command: &str) {
        let Some(v) = self
            .shards
            .as_ref()
            .and_then(|s| s.verdict(tolerance.as_nanos() as u64))
        else {
            return;
        };
        if v.warnings.is_empty() {
            return;
        }
        let show = |ns: i64| {
            barrage_model::duration::format(barrage_model::duration::round_for_report(ns))
        };
        eprintln!("barrage {command}: the inputs are shards of one schedule of {}, and they disagree (-max-skew {}):", v.count, show(tolerance.as_nanos() as i64));
        for s in &v.shards {
            eprintln!(
                "  shard {}/{}  {}  {} records  lag p50 {}  schedule offset {}{}",
                s.index,
                v.count,
                s.name,
                s.records,
                show(s.lag_p50 as i64),
                if s.offset < 0 { "-" } else { "+" },
                show(s.offset.abs())
            );
        }
        for w in &v.warnings {
            eprintln!("barrage {command}: warning: {w}");
        }
    }

    /// After the reading: the view's error, if a record lacked what it
    /// needs; else a note when the lag covers only some records.
    pub fn finish(&self, total: Option<&barrage_metrics::Metrics>, command: &str) -> Outcome {
        if let Some(e) = &self.missing {
            return Err(Failed::usage(e));
        }
        let Some(total) = total else {
            return Ok(());
        };
        if total.unscheduled() > 0 && total.lag().count() > 0 {
            eprintln!(
                "barrage {command}: the lag covers the {} records with scheduled send times; the {} from {} have none",
                total.lag().count(),
                total.unscheduled(),
                self.unscheduled_from.join(", ")
            );
        }
        Ok(())
    }
}

impl barrage_report::Source for Records {
    fn next_hit(&mut self) -> Option<(&Hit, Lacks)> {
        self.next()
    }
}
