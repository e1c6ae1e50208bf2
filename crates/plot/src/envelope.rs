//! Streaming downsampling of one series: the time axis is cut into equal
//! buckets, and each bucket keeps its lowest and its highest latency. When
//! there are too many buckets, neighbours are merged (the width doubles),
//! so memory stays bounded however many records arrive and in whatever
//! order, and every spike and every dip survives: a bucket's extremes are
//! what a pixel column of the chart would show anyway.

use std::collections::BTreeMap;

/// A point: when the request was sent (unix ns) and its latency (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// Send time, unix nanoseconds.
    pub t: i64,
    /// Latency, nanoseconds.
    pub latency: u64,
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    low: Point,
    high: Point,
}

impl Bucket {
    fn take(&mut self, p: Point) {
        // Ties keep the earlier point, so the result does not depend on
        // the order records arrive in.
        if (p.latency, p.t) < (self.low.latency, self.low.t) {
            self.low = p;
        }
        if (p.latency, std::cmp::Reverse(p.t)) > (self.high.latency, std::cmp::Reverse(self.high.t))
        {
            self.high = p;
        }
    }
}

/// One series' points, at most `limit` of them (0: all kept).
#[derive(Debug)]
pub struct Envelope {
    /// Bucket width in nanoseconds (starts at 1: every distinct send time
    /// its own bucket).
    width: i64,
    buckets: BTreeMap<i64, Bucket>,
    /// Most buckets kept: half the points asked for, two per bucket.
    max_buckets: usize,
    /// Records added.
    count: u64,
    /// Every point, when no limit is set.
    all: Vec<Point>,
    unlimited: bool,
}

impl Envelope {
    /// A series drawn with at most `limit` points (`0`: every point kept,
    /// memory growing with the records).
    pub fn new(limit: usize) -> Self {
        Envelope {
            width: 1,
            buckets: BTreeMap::new(),
            max_buckets: (limit / 2).max(1),
            count: 0,
            all: Vec::new(),
            unlimited: limit == 0,
        }
    }

    /// Adds a record's point.
    pub fn add(&mut self, p: Point) {
        self.count += 1;
        if self.unlimited {
            self.all.push(p);
            return;
        }
        let k = p.t.div_euclid(self.width);
        self.buckets
            .entry(k)
            .and_modify(|b| b.take(p))
            .or_insert(Bucket { low: p, high: p });
        while self.buckets.len() > self.max_buckets {
            self.coarsen();
        }
    }

    /// Doubles the bucket width, merging neighbours.
    fn coarsen(&mut self) {
        self.width = self.width.saturating_mul(2);
        let old = std::mem::take(&mut self.buckets);
        for (k, b) in old {
            let nk = k.div_euclid(2);
            match self.buckets.get_mut(&nk) {
                Some(into) => {
                    into.take(b.low);
                    into.take(b.high);
                }
                None => {
                    self.buckets.insert(nk, b);
                }
            }
        }
    }

    /// Records added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The points to draw, by send time: each bucket's lowest and highest
    /// (one point when they are the same).
    pub fn points(&self) -> Vec<Point> {
        if self.unlimited {
            let mut all = self.all.clone();
            all.sort_by_key(|p| (p.t, p.latency));
            return all;
        }
        let mut out = Vec::with_capacity(self.buckets.len() * 2);
        for b in self.buckets.values() {
            if b.low == b.high {
                out.push(b.low);
            } else if b.low.t <= b.high.t {
                out.extend([b.low, b.high]);
            } else {
                out.extend([b.high, b.low]);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic scramble of 0..n (a multiplicative permutation).
    fn scrambled(n: u64) -> impl Iterator<Item = u64> {
        // 7919 is prime and does not divide n below, so i -> i*7919 mod n
        // visits every index once.
        (0..n).map(move |i| (i * 7919) % n)
    }

    fn latency_of(i: u64) -> u64 {
        // A wave with a few spikes and dips.
        let base = 1_000_000 + (i % 97) * 10_000;
        match i {
            12_345 => 900_000_000,
            54_321 => 1,
            _ => base,
        }
    }

    #[test]
    fn few_points_are_all_kept_exactly() {
        let mut e = Envelope::new(4000);
        let pts: Vec<Point> = (0..1000)
            .map(|i| Point {
                t: 1_700_000_000_000_000_000 + i * 1_000_000,
                latency: latency_of(i as u64),
            })
            .collect();
        for p in pts.iter().rev() {
            e.add(*p);
        }
        assert_eq!(e.points(), pts);
        assert_eq!(e.count(), 1000);
    }

    #[test]
    fn many_points_stay_under_the_limit_and_keep_every_extreme() {
        let n = 100_000u64;
        let mut e = Envelope::new(4000);
        for i in scrambled(n) {
            e.add(Point {
                t: 1_700_000_000_000_000_000 + (i as i64) * 50_000,
                latency: latency_of(i),
            });
        }
        let pts = e.points();
        assert_eq!(e.count(), n);
        assert!(pts.len() <= 4000, "{} points", pts.len());
        assert!(pts.len() >= 1000, "{} points", pts.len());
        assert!(pts.windows(2).all(|w| w[0].t <= w[1].t), "sorted by time");
        let max = pts.iter().map(|p| p.latency).max().unwrap();
        let min = pts.iter().map(|p| p.latency).min().unwrap();
        assert_eq!(max, 900_000_000, "the spike survives");
        assert_eq!(min, 1, "the dip survives");
        let spike = pts.iter().find(|p| p.latency == 900_000_000).unwrap();
        assert_eq!(spike.t, 1_700_000_000_000_000_000 + 12_345 * 50_000);
    }

    #[test]
    fn the_order_records_arrive_in_does_not_change_the_points() {
        let n = 20_000u64;
        let point = |i: u64| Point {
            t: (i as i64 / 3) * 10_000 - 5_000_000, // repeated times, some negative
            latency: latency_of(i),
        };
        let mut forward = Envelope::new(500);
        let mut mixed = Envelope::new(500);
        for i in 0..n {
            forward.add(point(i));
        }
        for i in scrambled(n) {
            mixed.add(point(i));
        }
        assert_eq!(forward.points(), mixed.points());
    }

    #[test]
    fn no_limit_keeps_every_point() {
        let mut e = Envelope::new(0);
        for i in scrambled(10_000) {
            e.add(Point {
                t: i as i64,
                latency: i,
            });
        }
        let pts = e.points();
        assert_eq!(pts.len(), 10_000);
        assert!(pts.iter().enumerate().all(|(i, p)| p.t == i as i64));
    }
}
