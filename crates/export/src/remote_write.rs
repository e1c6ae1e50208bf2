//! Prometheus remote-write 1.0: a `WriteRequest` protobuf (the messages
//! of `prompb/remote.proto` and `types.proto`, the fields remote-write
//! 1.0 uses, declared with prost's derive), snappy-compressed (block
//! format). Counters are cumulative from the stream's start, as
//! Prometheus counters are; quantiles are of each interval's records.

use std::collections::HashMap;

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
/// Response bytes.
pub const BYTES_IN: &str = "barrage_response_bytes_total";
/// Request bytes.
pub const BYTES_OUT: &str = "barrage_request_bytes_total";

/// Every metric name written (the Grafana dashboard may name no other).
pub const NAMES: [&str; 8] = [
    REQUESTS,
    ERRORS,
    DURATION,
    "barrage_request_duration_seconds_sum",
    "barrage_request_duration_seconds_count",
    LAG,
    BYTES_IN,
    BYTES_OUT,
];

/// Quantiles written per interval.
const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

#[derive(Default, Clone, Copy)]
struct Totals {
    requests: u64,
    errors: u64,
    bytes_in: u64,
    bytes_out: u64,
    latency_sum: f64,
}

/// Turns batches into write requests, keeping the counters' totals.
#[derive(Default)]
pub struct Encoder {
    totals: HashMap<Vec<(&'static str, String)>, Totals>,
}

impl Encoder {
    /// A new encoder: counters from 0.
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// The write request of a batch, as Prometheus's protobuf.
    pub fn request(&mut self, batch: &Batch) -> WriteRequest {
        let ms = batch.end.div_euclid(1_000_000);
        let mut out = Vec::new();
        for p in &batch.points {
            let t = self.totals.entry(p.labels.clone()).or_default();
            t.requests += p.requests;
            t.errors += p.errors;
            t.bytes_in = t.bytes_in.saturating_add(p.bytes_in);
            t.bytes_out = t.bytes_out.saturating_add(p.bytes_out);
            t.latency_sum += p.latency.total() as f64 / 1e9;
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
                }
            };
            out.push(series(REQUESTS, None, t.requests as f64));
            out.push(series(ERRORS, None, t.errors as f64));
            out.push(series(BYTES_IN, None, t.bytes_in as f64));
            out.push(series(BYTES_OUT, None, t.bytes_out as f64));
            out.push(series(&format!("{DURATION}_sum"), None, t.latency_sum));
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
}
