//! Prometheus remote-write 1.0: a `WriteRequest` protobuf (the messages
//! of `prompb/remote.proto` and `types.proto`, the fields remote-write
//! 1.0 uses, declared with prost's derive), snappy-compressed (block
//! format). Counters are cumulative from the stream's start, as
//! Prometheus counters are; quantiles are of each interval's records.
//! Latency is also a histogram, cumulative from the start:
//! classic buckets (`barrage_request_duration_seconds_bucket`, the bounds
//! of [`barrage_metrics::prom_buckets`]) always, and with
//! [`Encoder::native`] a native histogram of schema 3
//! (`barrage_request_latency_seconds`) beside them, for a Prometheus run
//! with `--enable-feature=native-histograms`.

use std::collections::{BTreeMap, HashMap};

use barrage_metrics::prom_buckets;

use prost::Message;

use crate::Batch;

/// `prometheus.WriteRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    /// The series.
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

/// `prometheus.TimeSeries`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    /// Its labels, `__name__` among them, sorted by name.
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    /// Its samples, oldest first.
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
    /// Its native histograms, oldest first.
    #[prost(message, repeated, tag = "4")]
    pub histograms: Vec<Histogram>,
}

/// `prometheus.Histogram`, a native histogram with integer counts (the
/// fields an integer histogram uses).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Histogram {
    /// Observations (`count_int`).
    #[prost(uint64, tag = "1")]
    pub count: u64,
    /// Their sum.
    #[prost(double, tag = "3")]
    pub sum: f64,
    /// Bounds 2^(2^−schema) apart.
    #[prost(sint32, tag = "4")]
    pub schema: i32,
    /// The zero bucket's half-width.
    #[prost(double, tag = "5")]
    pub zero_threshold: f64,
    /// Observations in the zero bucket (`zero_count_int`).
    #[prost(uint64, tag = "6")]
    pub zero_count: u64,
    /// Runs of positive buckets.
    #[prost(message, repeated, tag = "11")]
    pub positive_spans: Vec<BucketSpan>,
    /// Each positive bucket's count less the one before's.
    #[prost(sint64, repeated, tag = "12")]
    pub positive_deltas: Vec<i64>,
    /// Unix milliseconds.
    #[prost(int64, tag = "15")]
    pub timestamp: i64,
}

/// `prometheus.BucketSpan`: `length` buckets from `offset` past the end
/// of the span before (the first: from bucket index 0).
#[derive(Clone, PartialEq, prost::Message)]
pub struct BucketSpan {
    /// Gap.
    #[prost(sint32, tag = "1")]
    pub offset: i32,
    /// Buckets.
    #[prost(uint32, tag = "2")]
    pub length: u32,
}

/// `prometheus.Label`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `prometheus.Sample`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// Value.
    #[prost(double, tag = "1")]
    pub value: f64,
    /// Unix milliseconds.
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// The request counter's name.
pub const REQUESTS: &str = "barrage_requests_total";
/// The failure counter's name.
pub const ERRORS: &str = "barrage_request_errors_total";
/// The latency summary's name (quantiles per interval, `_sum`, `_count`).
pub const DURATION: &str = "barrage_request_duration_seconds";
/// The lag summary's name.
pub const LAG: &str = "barrage_lag_seconds";
/// The latency's native histogram (with [`Encoder::native`]).
pub const NATIVE: &str = "barrage_request_latency_seconds";
/// A streamed answer's time to its first event (TTFT), a classic
/// histogram (`_bucket`, `_sum`, `_count`), where records had events.
pub const FIRST: &str = "barrage_first_event_seconds";
/// The gaps between a streamed answer's events (inter-token latency).
pub const GAP: &str = "barrage_event_gap_seconds";
/// Response bytes.
pub const BYTES_IN: &str = "barrage_response_bytes_total";
/// Request bytes.
pub const BYTES_OUT: &str = "barrage_request_bytes_total";

/// Every metric name written (the Grafana dashboard may name no other).
pub const NAMES: [&str; 16] = [
    REQUESTS,
    ERRORS,
    DURATION,
    "barrage_request_duration_seconds_bucket",
    NATIVE,
    "barrage_request_duration_seconds_sum",
    "barrage_request_duration_seconds_count",
    LAG,
    BYTES_IN,
    BYTES_OUT,
    "barrage_first_event_seconds_bucket",
    "barrage_first_event_seconds_sum",
    "barrage_first_event_seconds_count",
    "barrage_event_gap_seconds_bucket",
    "barrage_event_gap_seconds_sum",
    "barrage_event_gap_seconds_count",
];

/// Quantiles written per interval.
const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

#[derive(Default, Clone)]
struct Totals {
    requests: u64,
    errors: u64,
    bytes_in: u64,
    bytes_out: u64,
    /// Latency; TTFT and the gaps between events, where records had
    /// events.
    latency: Hist,
    first: Hist,
    gap: Hist,
}

/// A histogram's totals: by schema-3 bucket, with its zeros, sum and
/// count.
#[derive(Default, Clone)]
struct Hist {
    zero: u64,
    buckets: BTreeMap<i32, u64>,
    sum: f64,
    count: u64,
}

impl Hist {
    fn add(&mut self, d: &barrage_metrics::Distribution) {
        let (zero, counts) = prom_buckets::counts(d);
        self.zero += zero;
        for (i, c) in counts {
            *self.buckets.entry(i).or_default() += c;
        }
        self.sum += d.total() as f64 / 1e9;
        self.count += d.count();
    }

    /// The buckets that hold any, by index.
    fn sorted(&self) -> Vec<(i32, u64)> {
        self.buckets.iter().map(|(i, c)| (*i, *c)).collect()
    }
}

/// Turns batches into write requests, keeping the counters' totals.
#[derive(Default)]
pub struct Encoder {
    totals: HashMap<Vec<(&'static str, String)>, Totals>,
    native: bool,
}

impl Encoder {
    /// A new encoder: counters from 0.
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// Also writes latency as a native histogram ([`NATIVE`]).
    pub fn native(mut self, on: bool) -> Encoder {
        self.native = on;
        self
    }

    /// The write request of a batch, as Prometheus's protobuf.
    pub fn request(&mut self, batch: &Batch) -> WriteRequest {
        let ms = batch.end.div_euclid(1_000_000);
        let native = self.native;
        let mut out = Vec::new();
        for p in &batch.points {
            let t = self.totals.entry(p.labels.clone()).or_default();
            t.requests += p.requests;
            t.errors += p.errors;
            t.bytes_in = t.bytes_in.saturating_add(p.bytes_in);
            t.bytes_out = t.bytes_out.saturating_add(p.bytes_out);
            t.latency.add(&p.latency);
            t.first.add(&p.first);
            t.gap.add(&p.gap);
            let t = &*t;
            let series = |name: &str, extra: Option<(&str, String)>, value: f64| {
                let mut labels: Vec<Label> = p
                    .labels
                    .iter()
                    .map(|(k, v)| Label {
                        name: (*k).into(),
                        value: v.clone(),
                    })
                    .chain(extra.map(|(k, v)| Label {
                        name: k.into(),
                        value: v,
                    }))
                    .chain(std::iter::once(Label {
                        name: "__name__".into(),
                        value: name.into(),
                    }))
                    .filter(|l| !l.value.is_empty())
                    .collect();
                labels.sort_by(|a, b| a.name.cmp(&b.name));
                TimeSeries {
                    labels,
                    samples: vec![Sample {
                        value,
                        timestamp: ms,
                    }],
                    histograms: Vec::new(),
                }
            };
            out.push(series(REQUESTS, None, t.requests as f64));
            out.push(series(ERRORS, None, t.errors as f64));
            out.push(series(BYTES_IN, None, t.bytes_in as f64));
            out.push(series(BYTES_OUT, None, t.bytes_out as f64));
            out.push(series(&format!("{DURATION}_sum"), None, t.latency.sum));
            out.push(series(
                &format!("{DURATION}_count"),
                None,
                t.requests as f64,
            ));
            for q in QUANTILES {
                let label = Some(("quantile", q.to_string()));
                out.push(series(
                    DURATION,
                    label.clone(),
                    p.latency.quantile(q) as f64 / 1e9,
                ));
                out.push(series(LAG, label, p.lag.quantile(q) as f64 / 1e9));
            }
            // Latency's buckets always; streams' once some record of this
            // label set had events (their `_sum` and `_count` too).
            for (name, h) in [(DURATION, &t.latency), (FIRST, &t.first), (GAP, &t.gap)] {
                if h.count == 0 {
                    continue;
                }
                let cumulative = prom_buckets::classic(h.zero, &h.sorted());
                let bounds = prom_buckets::classic_bounds().map(|(_, b)| b.to_string());
                for (le, c) in bounds.chain(["+Inf".into()]).zip(cumulative) {
                    out.push(series(
                        &format!("{name}_bucket"),
                        Some(("le", le)),
                        c as f64,
                    ));
                }
                if name != DURATION {
                    out.push(series(&format!("{name}_sum"), None, h.sum));
                    out.push(series(&format!("{name}_count"), None, h.count as f64));
                }
            }
            if native {
                let mut ts = series(NATIVE, None, 0.0);
                ts.samples.clear();
                ts.histograms.push(native_histogram(&t.latency, ms));
                out.push(ts);
            }
        }
        WriteRequest { timeseries: out }
    }

    /// The body to POST: the request, encoded and snappy-compressed.
    pub fn body(&mut self, batch: &Batch) -> Vec<u8> {
        let raw = self.request(batch).encode_to_vec();
        snap::raw::Encoder::new()
            .compress_vec(&raw)
            .unwrap_or_default()
    }
}

/// The native histogram of `h` at `ms`: spans over the buckets that
/// hold any (a gap of up to two empty buckets is cheaper kept in a span,
/// as Prometheus does), counts as deltas.
fn native_histogram(h: &Hist, ms: i64) -> Histogram {
    let buckets = h.sorted();
    let mut spans: Vec<BucketSpan> = Vec::new();
    let mut deltas = Vec::new();
    let (mut last_index, mut last_count) = (None::<i32>, 0i64);
    for &(i, c) in &buckets {
        match last_index {
            Some(l) if i - l <= 3 => {
                // Fill the gap with empty buckets inside the span.
                for _ in l + 1..i {
                    deltas.push(-last_count);
                    last_count = 0;
                }
                if let Some(s) = spans.last_mut() {
                    s.length += (i - l) as u32;
                }
            }
            Some(l) => spans.push(BucketSpan {
                offset: i - l - 1,
                length: 1,
            }),
            None => spans.push(BucketSpan {
                offset: i,
                length: 1,
            }),
        }
        deltas.push(c as i64 - last_count);
        last_count = c as i64;
        last_index = Some(i);
    }
    Histogram {
        count: h.zero + buckets.iter().map(|(_, c)| c).sum::<u64>(),
        sum: h.sum,
        schema: prom_buckets::SCHEMA,
        zero_threshold: 0.0,
        zero_count: h.zero,
        positive_spans: spans,
        positive_deltas: deltas,
        timestamp: ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Intervals, Label as By};
    use barrage_model::Hit;

    #[test]
    fn counters_add_up_over_batches_and_the_body_decodes() {
        let mut iv = Intervals::new(1_000_000_000, vec![By::Code]);
        let mut batches = Vec::new();
        for s in 0..3i64 {
            for _ in 0..4 {
                let hit = Hit {
                    timestamp: 10_000_000_000 + s * 1_000_000_000,
                    code: 200,
                    latency: 1_000_000,
                    ..Hit::default()
                };
                batches.extend(iv.add(&hit, true, hit.latency));
            }
        }
        batches.extend(iv.finish());
        let mut enc = Encoder::new();
        let last = batches.iter().map(|b| enc.body(b)).last().unwrap();
        let raw = snap::raw::Decoder::new().decompress_vec(&last).unwrap();
        let req = WriteRequest::decode(raw.as_slice()).unwrap();
        let requests = req
            .timeseries
            .iter()
            .find(|s| {
                s.labels
                    .iter()
                    .any(|l| l.name == "__name__" && l.value == REQUESTS)
            })
            .unwrap();
        assert_eq!(requests.samples[0].value, 12.0, "cumulative");
        assert_eq!(requests.samples[0].timestamp, 13_000);
        let names: Vec<&str> = requests.labels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["__name__", "code"], "sorted by name");
        for s in &req.timeseries {
            let name = &s
                .labels
                .iter()
                .find(|l| l.name == "__name__")
                .unwrap()
                .value;
            assert!(NAMES.contains(&name.as_str()), "{name}");
        }
    }

    /// A native histogram's counts back by bucket index.
    fn expand(h: &Histogram) -> Vec<(i32, u64)> {
        let (mut out, mut at, mut count, mut d) = (Vec::new(), 0i32, 0i64, 0);
        for (n, span) in h.positive_spans.iter().enumerate() {
            at += span.offset + if n == 0 { 0 } else { 1 };
            for k in 0..span.length as i32 {
                count += h.positive_deltas[d];
                d += 1;
                if count > 0 {
                    out.push((at + k, count as u64));
                }
            }
            at += span.length as i32 - 1;
        }
        out
    }

    #[test]
    fn latency_is_a_classic_and_a_native_histogram_cumulative_over_batches() {
        let mut iv = Intervals::new(1_000_000_000, vec![]);
        let mut batches = Vec::new();
        let latencies = [
            0u64,
            1_000_000,
            1_000_000,
            1_050_000,
            9_000_000,
            400_000_000,
        ];
        for s in 0..2i64 {
            for l in latencies {
                let hit = Hit {
                    timestamp: 10_000_000_000 + s * 1_000_000_000,
                    code: 200,
                    latency: l,
                    ..Hit::default()
                };
                batches.extend(iv.add(&hit, true, hit.latency));
            }
        }
        batches.extend(iv.finish());
        let mut enc = Encoder::new().native(true);
        let last = batches.iter().map(|b| enc.request(b)).last().unwrap();
        let name = |s: &TimeSeries| {
            s.labels
                .iter()
                .find(|l| l.name == "__name__")
                .map(|l| l.value.clone())
                .unwrap()
        };
        let classic: Vec<&TimeSeries> = last
            .timeseries
            .iter()
            .filter(|s| name(s) == "barrage_request_duration_seconds_bucket")
            .collect();
        assert_eq!(classic.len(), 94);
        let inf = classic
            .iter()
            .find(|s| s.labels.iter().any(|l| l.name == "le" && l.value == "+Inf"))
            .unwrap();
        assert_eq!(inf.samples[0].value, 12.0, "both batches");
        let h = &last
            .timeseries
            .iter()
            .find(|s| name(s) == NATIVE)
            .unwrap()
            .histograms[0];
        assert_eq!((h.count, h.zero_count, h.schema), (12, 2, 3));
        let mut expected = BTreeMap::new();
        for l in latencies.iter().filter(|l| **l > 0) {
            *expected
                .entry(prom_buckets::index(*l).unwrap())
                .or_insert(0) += 2;
        }
        assert_eq!(expand(h), expected.into_iter().collect::<Vec<_>>());
        // 1 ms and 1.05 ms sit one bucket apart: one span holds both.
        assert!(h.positive_spans.len() < 4, "{:?}", h.positive_spans);
        let raw = enc.body(&batches[0]);
        let raw = snap::raw::Decoder::new().decompress_vec(&raw).unwrap();
        assert!(WriteRequest::decode(raw.as_slice()).is_ok());
    }

    #[test]
    fn streams_add_ttft_and_gap_histograms() {
        let mut iv = Intervals::new(1_000_000_000, vec![]);
        let plain = Hit {
            timestamp: 10_000_000_000,
            code: 200,
            latency: 1_000_000,
            ..Hit::default()
        };
        iv.add(&plain, true, plain.latency);
        let mut enc = Encoder::new();
        let names = |req: &WriteRequest| -> Vec<String> {
            req.timeseries
                .iter()
                .filter_map(|s| s.labels.iter().find(|l| l.name == "__name__"))
                .map(|l| l.value.clone())
                .collect()
        };
        let req = enc.request(&iv.finish()[0]);
        assert!(
            !names(&req).iter().any(|n| n.starts_with(FIRST)),
            "no events, none"
        );
        let mut iv = Intervals::new(1_000_000_000, vec![]);
        let stream = Hit {
            timestamp: 11_000_000_000,
            code: 200,
            latency: 200_000_000,
            events: vec![150_000_000, 165_000_000, 180_000_000],
            event_count: 3,
            ..Hit::default()
        };
        iv.add(&stream, true, stream.latency);
        let req = enc.request(&iv.finish()[0]);
        let value = |name: &str| {
            req.timeseries
                .iter()
                .find(|s| {
                    s.labels
                        .iter()
                        .any(|l| l.name == "__name__" && l.value == name)
                })
                .map(|s| s.samples[0].value)
        };
        assert_eq!(value("barrage_first_event_seconds_count"), Some(1.0));
        assert_eq!(value("barrage_event_gap_seconds_count"), Some(2.0));
        let sum = value("barrage_event_gap_seconds_sum").unwrap();
        assert!((sum - 0.030).abs() < 0.001, "{sum}");
        for n in names(&req) {
            assert!(NAMES.contains(&n.as_str()), "{n}");
        }
    }
}
