//! [`Events`]: what streamed answers (`-stream`) came to, event by event:
//! the time to the first event (TTFT for an LLM), the gaps between
//! consecutive events over all of them (inter-token latency), events per
//! second per stream, events per record, and the streams cut short.

use barrage_model::Hit;

use crate::Distribution;

/// Event figures of the records that carried events.
#[derive(Clone, Default)]
pub struct Events {
    /// Records with at least one event.
    streams: u64,
    /// Events counted, stamped or not.
    total: u64,
    /// The most events one record had.
    most: u64,
    /// Records with events that ended in an error (cut by the server, the
    /// network or `-timeout`).
    cut: u64,
    /// SSE lines skipped as malformed, over all records.
    malformed: u64,
    first: Distribution,
    gap: Distribution,
    /// Events a second of each stream with two stamps or more, in
    /// thousandths (a distribution holds integers).
    per_second: Distribution,
}

impl Events {
    /// Adds one record's events (a record without any is left out).
    pub fn add(&mut self, hit: &Hit) {
        let count = hit.event_count.max(hit.events.len() as u64);
        self.malformed = self.malformed.saturating_add(hit.event_malformed);
        if count == 0 {
            return;
        }
        self.streams += 1;
        self.total = self.total.saturating_add(count);
        self.most = self.most.max(count);
        if !hit.error.is_empty() {
            self.cut += 1;
        }
        let Some(&first) = hit.events.first() else {
            return;
        };
        self.first.record(first);
        let mut last = first;
        for &at in &hit.events[1..] {
            self.gap.record(at.saturating_sub(last));
            last = last.max(at);
        }
        if hit.events.len() >= 2 && last > first {
            let per_second = (hit.events.len() - 1) as f64 / ((last - first) as f64 / 1e9);
            self.per_second.record((per_second * 1000.0).round() as u64);
        }
    }

    /// Adds everything in `other`.
    pub fn merge(&mut self, other: &Events) {
        self.streams += other.streams;
        self.total = self.total.saturating_add(other.total);
        self.most = self.most.max(other.most);
        self.cut += other.cut;
        self.malformed = self.malformed.saturating_add(other.malformed);
        self.first.merge(&other.first);
        self.gap.merge(&other.gap);
        self.per_second.merge(&other.per_second);
    }

    /// Records with at least one event.
    pub fn streams(&self) -> u64 {
        self.streams
    }

    /// Events counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Events per record with events, on average.
    pub fn mean(&self) -> f64 {
        if self.streams == 0 {
            0.0
        } else {
            self.total as f64 / self.streams as f64
        }
    }

    /// The most events one record had.
    pub fn most(&self) -> u64 {
        self.most
    }

    /// Streams that ended in an error.
    pub fn cut(&self) -> u64 {
        self.cut
    }

    /// SSE lines skipped as malformed.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    /// From the send to each stream's first event, ns.
    pub fn first(&self) -> &Distribution {
        &self.first
    }

    /// Between consecutive events, over every stream, ns.
    pub fn gap(&self) -> &Distribution {
        &self.gap
    }

    /// Events a second per stream, in thousandths: divide a figure by
    /// 1,000.
    pub fn per_second_milli(&self) -> &Distribution {
        &self.per_second
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_gaps_and_rates() {
        let mut e = Events::default();
        let ms = 1_000_000;
        e.add(&Hit {
            events: (0..20).map(|i| 200 * ms + i * 50 * ms).collect(),
            event_count: 20,
            ..Hit::default()
        });
        e.add(&Hit::default());
        e.add(&Hit {
            events: vec![100 * ms],
            event_count: 5,
            error: "stream cut after 5 events: EOF".into(),
            ..Hit::default()
        });
        assert_eq!((e.streams(), e.total(), e.most(), e.cut()), (2, 25, 20, 1));
        assert_eq!(e.first().count(), 2);
        assert_eq!(e.gap().count(), 19);
        assert!(e.gap().quantile(0.5).abs_diff(50 * ms) < ms / 100);
        assert!(e.per_second_milli().quantile(0.5).abs_diff(20_000) < 100);
        let mut all = Events::default();
        all.merge(&e);
        all.merge(&e);
        assert_eq!((all.streams(), all.total(), all.gap().count()), (4, 50, 38));
    }
}
