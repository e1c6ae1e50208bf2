//! Records folded per interval of send time and per label set.

use std::collections::{BTreeMap, HashMap};

use barrage_metrics::Distribution;
use barrage_model::Hit;

/// Label sets kept; records beyond fall under `url="other"` (the others
/// kept as they are).
pub const MAX_SERIES: usize = 1000;

/// Where to cut `s` to at most `max` bytes, on a character boundary.
fn cut_at(s: &str, max: usize) -> usize {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// A label a series can carry (`-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// The request method.
    Method,
    /// The request URL.
    Url,
    /// The status code (0: no answer).
    Code,
    /// The attack's name.
    Attack,
    /// The target's `:name`.
    Name,
    /// The error text (empty, and so left out, for successes).
    Error,
}

/// A `-by` name that is no label.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown label {0:?} in -by (use method, url, code, attack, name, error)")]
pub struct UnknownLabel(pub String);

impl Label {
    /// Its name as a label and a tag.
    pub fn name(self) -> &'static str {
        match self {
            Label::Method => "method",
            Label::Url => "url",
            Label::Code => "code",
            Label::Attack => "attack",
            Label::Name => "name",
            Label::Error => "error",
        }
    }

    /// `-by` as typed: names separated by commas.
    pub fn parse_list(text: &str) -> Result<Vec<Label>, UnknownLabel> {
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| match s {
                "method" => Ok(Label::Method),
                "url" => Ok(Label::Url),
                "code" => Ok(Label::Code),
                "attack" => Ok(Label::Attack),
                "name" => Ok(Label::Name),
                "error" => Ok(Label::Error),
                other => Err(UnknownLabel(other.to_string())),
            })
            .collect()
    }

    /// Writes the value of `hit` into `out`.
    fn write(self, hit: &Hit, out: &mut String) {
        use std::fmt::Write as _;
        match self {
            Label::Method => out.push_str(&hit.method),
            Label::Url => out.push_str(&barrage_model::words::redacted(&hit.url)),
            Label::Code => {
                let _ = write!(out, "{}", hit.code);
            }
            Label::Attack => out.push_str(&hit.attack),
            Label::Name => out.push_str(&hit.name),
            Label::Error => out.push_str(&hit.error[..cut_at(&hit.error, 200)]),
        }
    }

    fn value(self, hit: &Hit) -> String {
        match self {
            Label::Method => hit.method.clone(),
            Label::Url => barrage_model::words::redacted(&hit.url).into_owned(),
            Label::Code => hit.code.to_string(),
            Label::Attack => hit.attack.clone(),
            Label::Name => hit.name.clone(),
            Label::Error => hit.error[..cut_at(&hit.error, 200)].to_string(),
        }
    }
}

/// One label set's figures over one interval.
#[derive(Clone)]
pub struct Point {
    /// (label, value), in the order of `-by`.
    pub labels: Vec<(&'static str, String)>,
    /// Records sent in the interval.
    pub requests: u64,
    /// Of them, failures (an error, or a code the success rule refuses).
    pub errors: u64,
    /// Response bytes.
    pub bytes_in: u64,
    /// Request bytes.
    pub bytes_out: u64,
    /// Latencies (ns).
    pub latency: Distribution,
    /// How late requests went out (ns).
    pub lag: Distribution,
    /// A streamed answer's time to its first event (TTFT), ns, over the
    /// records that had one.
    pub first: Distribution,
    /// The gaps between its events (inter-token latency), ns.
    pub gap: Distribution,
}

/// The points of one interval.
#[derive(Clone)]
pub struct Batch {
    /// The interval's end (unix ns): the points' time.
    pub end: i64,
    /// A point per label set seen in it.
    pub points: Vec<Point>,
}

/// Records folded per interval.
pub struct Intervals {
    width: i64,
    by: Vec<Label>,
    /// Open intervals by index (start / width), their points by key.
    open: BTreeMap<i64, HashMap<String, Point>>,
    /// Label sets seen (to bound them).
    seen: std::collections::HashSet<String>,
    newest: i64,
    /// The key being built (kept to reuse its memory).
    key: String,
}

impl Intervals {
    /// Intervals `width` ns wide, points labelled by `by`.
    pub fn new(width: i64, by: Vec<Label>) -> Intervals {
        Intervals {
            width: width.max(1),
            by,
            open: BTreeMap::new(),
            seen: Default::default(),
            newest: i64::MIN,
            key: String::new(),
        }
    }

    /// Adds a record, judged (`ok`) and measured (`latency`, ns); returns
    /// the intervals it closed (those ending an interval or more before
    /// its send), oldest first.
    pub fn add(&mut self, hit: &Hit, ok: bool, latency: u64) -> Vec<Batch> {
        let index = hit.timestamp.div_euclid(self.width);
        // The key is written into a buffer kept between records, and the
        // labels are built only for a point not seen yet: no allocation
        // per record (measured: 6 per record cost a third of the time).
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        for l in &self.by {
            l.write(hit, &mut key);
            key.push('\u{1f}');
        }
        let mut other = false;
        if !self.seen.contains(key.as_str()) {
            if self.seen.len() >= MAX_SERIES {
                other = true;
                key.clear();
                for l in &self.by {
                    match l {
                        Label::Url => key.push_str("other"),
                        l => l.write(hit, &mut key),
                    }
                    key.push('\u{1f}');
                }
            } else {
                self.seen.insert(key.clone());
            }
        }
        let by = &self.by;
        let open = self.open.entry(index).or_default();
        if !open.contains_key(key.as_str()) {
            let labels = by
                .iter()
                .map(|l| {
                    let v = if other && *l == Label::Url {
                        "other".to_string()
                    } else {
                        l.value(hit)
                    };
                    (l.name(), v)
                })
                .collect();
            open.insert(
                key.clone(),
                Point {
                    labels,
                    requests: 0,
                    errors: 0,
                    bytes_in: 0,
                    bytes_out: 0,
                    latency: Distribution::coarse(),
                    lag: Distribution::coarse(),
                    first: Distribution::coarse(),
                    gap: Distribution::coarse(),
                },
            );
        }
        let point = open.get_mut(key.as_str()).expect("inserted above");
        self.key = key;
        point.requests += 1;
        point.errors += u64::from(!ok);
        point.bytes_in = point.bytes_in.saturating_add(hit.bytes_in);
        point.bytes_out = point.bytes_out.saturating_add(hit.bytes_out);
        point.latency.record(latency);
        point.lag.record(hit.lag());
        if let Some(&first) = hit.events.first() {
            point.first.record(first);
            let mut last = first;
            for &at in &hit.events[1..] {
                point.gap.record(at.saturating_sub(last));
                last = last.max(at);
            }
        }
        self.newest = self.newest.max(index);
        // One interval of slack for records out of order (merged inputs).
        let closed: Vec<i64> = self
            .open
            .range(..self.newest - 1)
            .map(|(k, _)| *k)
            .collect();
        closed.into_iter().filter_map(|k| self.close(k)).collect()
    }

    fn close(&mut self, index: i64) -> Option<Batch> {
        let points = self.open.remove(&index)?;
        let mut points: Vec<Point> = points.into_values().collect();
        points.sort_by(|a, b| a.labels.cmp(&b.labels));
        Some(Batch {
            end: (index + 1).saturating_mul(self.width),
            points,
        })
    }

    /// Every interval still open, oldest first.
    pub fn finish(mut self) -> Vec<Batch> {
        let keys: Vec<i64> = self.open.keys().copied().collect();
        keys.into_iter().filter_map(|k| self.close(k)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(ms: i64, code: u16) -> Hit {
        Hit {
            timestamp: 1_000_000_000_000 + ms * 1_000_000,
            code,
            latency: 2_000_000,
            method: "GET".into(),
            url: "http://a/".into(),
            ..Hit::default()
        }
    }

    #[test]
    fn intervals_close_one_interval_late_and_count_every_record() {
        let mut iv = Intervals::new(1_000_000_000, vec![Label::Method, Label::Code]);
        let mut batches = Vec::new();
        for ms in (0..5000).step_by(10) {
            let code = if ms % 100 == 0 { 500 } else { 200 };
            batches.extend(iv.add(&hit(ms, code), code == 200, 2_000_000));
        }
        assert_eq!(batches.len(), 3, "the last two still open");
        batches.extend(iv.finish());
        assert_eq!(batches.len(), 5);
        let total: u64 = batches
            .iter()
            .flat_map(|b| &b.points)
            .map(|p| p.requests)
            .sum();
        let errors: u64 = batches
            .iter()
            .flat_map(|b| &b.points)
            .map(|p| p.errors)
            .sum();
        assert_eq!((total, errors), (500, 50));
        assert!(batches.windows(2).all(|w| w[0].end < w[1].end));
        assert_eq!(
            batches[0].points[0].labels,
            [("method", "GET".into()), ("code", "200".into())]
        );
    }

    #[test]
    fn labels_parse_and_name_the_bad_one() {
        assert_eq!(
            Label::parse_list("url,code").unwrap(),
            [Label::Url, Label::Code]
        );
        assert!(Label::parse_list("url,host")
            .unwrap_err()
            .to_string()
            .contains("\"host\""));
    }
}
