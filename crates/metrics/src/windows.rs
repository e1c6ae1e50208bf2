use std::collections::BTreeMap;

use barrage_model::Hit;

use crate::Metrics;

/// Per-interval metrics for live reporting (`report -every 1s`).
///
/// Hits fall into windows by their send time, counted from the first hit
/// seen (the attack's first request, give or take the few milliseconds by
/// which records arrive out of order; an earlier one joins the first
/// window): windows aligned to whole seconds made the first and last look
/// like dips (313 and 687 of a 1,000/s attack). A window is ready
/// once a hit at least one interval past its end has been seen (results
/// arrive in completion order, so one interval of grace lets slow
/// responses land in the right window), or when the caller says time has
/// moved on. A hit for a window already emitted is counted as late and left
/// to the final report. Only windows with hits are emitted.
pub struct Windows {
    every: i64,
    /// The first window's start: the first hit's send time.
    origin: Option<i64>,
    template: Metrics,
    pending: BTreeMap<i64, Metrics>,
    /// Windows starting before this have been emitted.
    emitted_until: i64,
    max_seen: i64,
    late: u64,
}

impl Windows {
    /// Windows of `every_ns` nanoseconds whose metrics start as `template`.
    pub fn new(every_ns: u64, template: &Metrics) -> Self {
        Windows {
            every: every_ns.clamp(1, i64::MAX as u64) as i64,
            origin: None,
            template: template.empty_like(),
            pending: BTreeMap::new(),
            emitted_until: i64::MIN,
            max_seen: i64::MIN,
            late: 0,
        }
    }

    /// Adds a hit to its window.
    pub fn add(&mut self, hit: &Hit) {
        self.add_lacking(hit, barrage_model::Lacks::default());
    }

    /// [`Windows::add`] for a hit whose source lacks `lacks`.
    pub fn add_lacking(&mut self, hit: &Hit, lacks: barrage_model::Lacks) {
        // On a whole millisecond (for intervals of one or more), so that
        // the rows' start times read as 22:13:10.766Z.
        let ms = if self.every >= 1_000_000 {
            1_000_000
        } else {
            1
        };
        let origin = *self.origin.get_or_insert(hit.timestamp.div_euclid(ms) * ms);
        let since = hit.timestamp.saturating_sub(origin).max(0);
        let start = origin.saturating_add(since.div_euclid(self.every) * self.every);
        if start < self.emitted_until {
            self.late += 1;
            return;
        }
        self.max_seen = self.max_seen.max(hit.timestamp);
        match self.pending.get_mut(&start) {
            Some(m) => m.add_lacking(hit, lacks),
            None => {
                let mut m = self.template.empty_like().judged();
                m.add_lacking(hit, lacks);
                self.pending.insert(start, m);
            }
        }
    }

    /// Hits that arrived after their window was emitted.
    pub fn late(&self) -> u64 {
        self.late
    }

    /// The window length, ns.
    pub fn every(&self) -> i64 {
        self.every
    }

    /// Windows ending at or before `watermark` (unix ns), oldest first.
    pub fn ready_before(&mut self, watermark: i64) -> Vec<(i64, Metrics)> {
        let mut out = Vec::new();
        while let Some((&start, _)) = self.pending.first_key_value() {
            if start.saturating_add(self.every) > watermark {
                break;
            }
            if let Some(m) = self.pending.remove(&start) {
                self.emitted_until = start + self.every;
                out.push((start, m));
            }
        }
        out
    }

    /// Windows that the data itself shows to be complete.
    pub fn ready(&mut self) -> Vec<(i64, Metrics)> {
        let watermark = self.max_seen.saturating_sub(self.every);
        self.ready_before(watermark)
    }

    /// Every window still pending (at the end of the input).
    pub fn finish(&mut self) -> Vec<(i64, Metrics)> {
        self.ready_before(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn hit(ts: i64) -> Hit {
        Hit {
            timestamp: ts,
            scheduled: ts,
            latency: 1,
            code: 200,
            ..Hit::default()
        }
    }

    #[test]
    fn windows_start_at_the_first_hit_and_wait_one_interval() {
        let o = 10 * S + 333_000_000;
        let mut w = Windows::new(S as u64, &Metrics::new());
        w.add(&hit(o));
        w.add(&hit(o + S / 2));
        w.add(&hit(o - 5));
        assert!(
            w.ready().is_empty(),
            "the first window not known complete yet"
        );
        w.add(&hit(o + S + 1));
        assert!(w.ready().is_empty(), "still within one interval of grace");
        w.add(&hit(o + 2 * S));
        let ready = w.ready();
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].0, o);
        assert_eq!(
            ready[0].1.requests(),
            3,
            "one a little early joins the first"
        );
        let rest = w.finish();
        assert_eq!(
            rest.iter()
                .map(|(s, m)| (*s, m.requests()))
                .collect::<Vec<_>>(),
            [(o + S, 1), (o + 2 * S, 1)]
        );
    }

    #[test]
    fn a_steady_attack_has_no_dips_at_its_ends() {
        // 1,000/s for 3 s starting 313 ms into a second: three full rows.
        let mut w = Windows::new(S as u64, &Metrics::new());
        for i in 0..3000 {
            w.add(&hit(7 * S + 313_000_000 + i * 1_000_000));
        }
        let rows: Vec<u64> = w.finish().iter().map(|(_, m)| m.requests()).collect();
        assert_eq!(rows, [1000, 1000, 1000]);
    }

    #[test]
    fn late_hits_are_counted_not_misplaced() {
        let mut w = Windows::new(S as u64, &Metrics::new());
        w.add(&hit(0));
        w.add(&hit(3 * S));
        assert_eq!(w.ready().len(), 1);
        w.add(&hit(S / 2));
        assert_eq!(w.late(), 1);
        assert_eq!(w.finish().len(), 1);
    }

    #[test]
    fn empty_input_has_no_windows() {
        let mut w = Windows::new(S as u64, &Metrics::new());
        assert!(w.ready().is_empty());
        assert!(w.finish().is_empty());
    }

    #[test]
    fn clock_watermark_flushes_idle_windows() {
        let mut w = Windows::new(S as u64, &Metrics::new());
        w.add(&hit(5 * S));
        assert!(w.ready().is_empty());
        assert_eq!(w.ready_before(6 * S).len(), 1);
    }
}
