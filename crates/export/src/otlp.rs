//! OTLP/HTTP metrics: an `ExportMetricsServiceRequest` protobuf per batch
//! (the messages of `opentelemetry/proto/metrics/v1/metrics.proto`,
//! `common/v1` and `resource/v1` that a sum and a summary need, declared
//! with prost's derive from the published field numbers), POSTed as
//! `application/x-protobuf` to the collector's `/v1/metrics`.
//!
//! Metrics: `barrage.requests`, `barrage.request.errors`,
//! `barrage.response.bytes`, `barrage.request.bytes` (monotonic sums,
//! cumulative from the stream's first interval), and the summaries
//! `barrage.request.duration` and `barrage.lag` (seconds: count and sum
//! cumulative, quantiles 0.5, 0.9, 0.99, 0.999 of the interval).

use std::collections::HashMap;

use prost::Message;

use crate::Batch;

/// `ExportMetricsServiceRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExportMetricsServiceRequest {
    /// Metrics by resource.
    #[prost(message, repeated, tag = "1")]
    pub resource_metrics: Vec<ResourceMetrics>,
}

/// `ResourceMetrics`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResourceMetrics {
    /// The resource (`service.name`).
    #[prost(message, optional, tag = "1")]
    pub resource: Option<Resource>,
    /// Metrics by scope.
    #[prost(message, repeated, tag = "2")]
    pub scope_metrics: Vec<ScopeMetrics>,
}

/// `Resource`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Resource {
    /// Its attributes.
    #[prost(message, repeated, tag = "1")]
    pub attributes: Vec<KeyValue>,
}

/// `ScopeMetrics`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ScopeMetrics {
    /// The instrumentation scope.
    #[prost(message, optional, tag = "1")]
    pub scope: Option<InstrumentationScope>,
    /// The metrics.
    #[prost(message, repeated, tag = "2")]
    pub metrics: Vec<Metric>,
}

/// `InstrumentationScope`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InstrumentationScope {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Version.
    #[prost(string, tag = "2")]
    pub version: String,
}

/// `Metric`, with the two kinds of data barrage writes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Metric {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Description.
    #[prost(string, tag = "2")]
    pub description: String,
    /// Unit (UCUM).
    #[prost(string, tag = "3")]
    pub unit: String,
    /// A gauge (tag 5), a sum (tag 7) or a summary (tag 11).
    #[prost(oneof = "Data", tags = "5, 7, 11")]
    pub data: Option<Data>,
}

/// `Metric.data`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Data {
    /// A gauge (a scraped server's series).
    #[prost(message, tag = "5")]
    Gauge(Gauge),
    /// A sum.
    #[prost(message, tag = "7")]
    Sum(Sum),
    /// A summary.
    #[prost(message, tag = "11")]
    Summary(Summary),
}

/// `Gauge`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Gauge {
    /// Points.
    #[prost(message, repeated, tag = "1")]
    pub data_points: Vec<NumberDataPoint>,
}

/// `Sum`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sum {
    /// Points.
    #[prost(message, repeated, tag = "1")]
    pub data_points: Vec<NumberDataPoint>,
    /// 1 delta, 2 cumulative.
    #[prost(int32, tag = "2")]
    pub aggregation_temporality: i32,
    /// Whether it only rises.
    #[prost(bool, tag = "3")]
    pub is_monotonic: bool,
}

/// `NumberDataPoint`, with an integer value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NumberDataPoint {
    /// Attributes.
    #[prost(message, repeated, tag = "7")]
    pub attributes: Vec<KeyValue>,
    /// Start of the cumulation (unix ns).
    #[prost(fixed64, tag = "2")]
    pub start_time_unix_nano: u64,
    /// The point's time (unix ns).
    #[prost(fixed64, tag = "3")]
    pub time_unix_nano: u64,
    /// The value: a oneof, so that a zero is written too.
    #[prost(oneof = "Value", tags = "4, 6")]
    pub value: Option<Value>,
}

/// `NumberDataPoint.value`.
#[derive(Clone, Copy, PartialEq, prost::Oneof)]
pub enum Value {
    /// `as_double`.
    #[prost(double, tag = "4")]
    AsDouble(f64),
    /// `as_int`.
    #[prost(sfixed64, tag = "6")]
    AsInt(i64),
}

/// `Summary`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Summary {
    /// Points.
    #[prost(message, repeated, tag = "1")]
    pub data_points: Vec<SummaryDataPoint>,
}

/// `SummaryDataPoint`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SummaryDataPoint {
    /// Attributes.
    #[prost(message, repeated, tag = "7")]
    pub attributes: Vec<KeyValue>,
    /// Start (unix ns).
    #[prost(fixed64, tag = "2")]
    pub start_time_unix_nano: u64,
    /// Time (unix ns).
    #[prost(fixed64, tag = "3")]
    pub time_unix_nano: u64,
    /// Values counted.
    #[prost(fixed64, tag = "4")]
    pub count: u64,
    /// Their sum.
    #[prost(double, tag = "5")]
    pub sum: f64,
    /// Quantiles.
    #[prost(message, repeated, tag = "6")]
    pub quantile_values: Vec<ValueAtQuantile>,
}

/// `SummaryDataPoint.ValueAtQuantile`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueAtQuantile {
    /// 0..=1.
    #[prost(double, tag = "1")]
    pub quantile: f64,
    /// The value.
    #[prost(double, tag = "2")]
    pub value: f64,
}

/// `KeyValue` with a string value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct KeyValue {
    /// Key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Value.
    #[prost(message, optional, tag = "2")]
    pub value: Option<AnyValue>,
}

/// `AnyValue`, a string.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AnyValue {
    /// `string_value`.
    #[prost(string, tag = "1")]
    pub string_value: String,
}

/// Cumulative temporality.
const CUMULATIVE: i32 = 2;

/// The sums written.
pub const SUMS: [&str; 4] = [
    "barrage.requests",
    "barrage.request.errors",
    "barrage.response.bytes",
    "barrage.request.bytes",
];

/// The summaries written.
pub const SUMMARIES: [&str; 2] = ["barrage.request.duration", "barrage.lag"];

const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

#[derive(Default, Clone, Copy)]
struct Totals {
    counts: [u64; 4],
    latency_sum: f64,
    lag_sum: f64,
}

/// Turns batches into OTLP requests, keeping the cumulative totals.
#[derive(Default)]
pub struct Encoder {
    start: Option<u64>,
    totals: HashMap<Vec<(&'static str, String)>, Totals>,
}

pub(crate) fn attrs(labels: &[(&'static str, String)]) -> Vec<KeyValue> {
    labels
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| KeyValue {
            key: (*k).into(),
            value: Some(AnyValue {
                string_value: v.clone(),
            }),
        })
        .collect()
}

impl Encoder {
    /// A new encoder: totals from 0, from the first batch's start.
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// The request of a batch `width` ns wide.
    pub fn request(&mut self, batch: &Batch, width: i64) -> ExportMetricsServiceRequest {
        let time = batch.end.max(0) as u64;
        let start = *self
            .start
            .get_or_insert(time.saturating_sub(width.max(0) as u64));
        let mut sums: Vec<Vec<NumberDataPoint>> = vec![Vec::new(); SUMS.len()];
        let mut summaries: Vec<Vec<SummaryDataPoint>> = vec![Vec::new(); SUMMARIES.len()];
        for p in &batch.points {
            let t = self.totals.entry(p.labels.clone()).or_default();
            for (i, v) in [p.requests, p.errors, p.bytes_in, p.bytes_out]
                .into_iter()
                .enumerate()
            {
                t.counts[i] = t.counts[i].saturating_add(v);
            }
            t.latency_sum += p.latency.total() as f64 / 1e9;
            t.lag_sum += p.lag.total() as f64 / 1e9;
            let a = attrs(&p.labels);
            for (i, points) in sums.iter_mut().enumerate() {
                points.push(NumberDataPoint {
                    attributes: a.clone(),
                    start_time_unix_nano: start,
                    time_unix_nano: time,
                    value: Some(Value::AsInt(t.counts[i].min(i64::MAX as u64) as i64)),
                });
            }
            for (i, (d, sum)) in [(&p.latency, t.latency_sum), (&p.lag, t.lag_sum)]
                .into_iter()
                .enumerate()
            {
                summaries[i].push(SummaryDataPoint {
                    attributes: a.clone(),
                    start_time_unix_nano: start,
                    time_unix_nano: time,
                    count: t.counts[0],
                    sum,
                    quantile_values: QUANTILES
                        .iter()
                        .map(|q| ValueAtQuantile {
                            quantile: *q,
                            value: d.quantile(*q) as f64 / 1e9,
                        })
                        .collect(),
                });
            }
        }
        let mut metrics: Vec<Metric> = SUMS
            .iter()
            .zip(sums)
            .map(|(name, data_points)| Metric {
                name: (*name).into(),
                description: String::new(),
                unit: if name.ends_with("bytes") {
                    "By"
                } else {
                    "{request}"
                }
                .into(),
                data: Some(Data::Sum(Sum {
                    data_points,
                    aggregation_temporality: CUMULATIVE,
                    is_monotonic: true,
                })),
            })
            .collect();
        metrics.extend(
            SUMMARIES
                .iter()
                .zip(summaries)
                .map(|(name, data_points)| Metric {
                    name: (*name).into(),
                    description: String::new(),
                    unit: "s".into(),
                    data: Some(Data::Summary(Summary { data_points })),
                }),
        );
        ExportMetricsServiceRequest {
            resource_metrics: vec![ResourceMetrics {
                resource: Some(Resource {
                    attributes: attrs(&[("service.name", "barrage".into())]),
                }),
                scope_metrics: vec![ScopeMetrics {
                    scope: Some(InstrumentationScope {
                        name: "barrage".into(),
                        version: env!("CARGO_PKG_VERSION").into(),
                    }),
                    metrics,
                }],
            }],
        }
    }

    /// The body to POST.
    pub fn body(&mut self, batch: &Batch, width: i64) -> Vec<u8> {
        self.request(batch, width).encode_to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Intervals, Label};
    use barrage_model::Hit;

    #[test]
    fn sums_are_cumulative_and_the_request_decodes() {
        let mut iv = Intervals::new(1_000_000_000, vec![Label::Code]);
        let mut batches = Vec::new();
        for s in 0..3i64 {
            for _ in 0..5 {
                let hit = Hit {
                    timestamp: 20_000_000_000 + s * 1_000_000_000,
                    code: 200,
                    latency: 2_000_000,
                    ..Hit::default()
                };
                batches.extend(iv.add(&hit, true, hit.latency));
            }
        }
        batches.extend(iv.finish());
        let mut enc = Encoder::new();
        let last = batches
            .iter()
            .map(|b| enc.body(b, 1_000_000_000))
            .last()
            .unwrap();
        let req = ExportMetricsServiceRequest::decode(last.as_slice()).unwrap();
        let metrics = &req.resource_metrics[0].scope_metrics[0].metrics;
        let Some(Data::Sum(requests)) = &metrics[0].data else {
            panic!("a sum first")
        };
        assert_eq!(metrics[0].name, "barrage.requests");
        let p = &requests.data_points[0];
        assert_eq!(p.value, Some(Value::AsInt(15)));
        assert_eq!(
            (p.start_time_unix_nano, p.time_unix_nano),
            (20_000_000_000, 23_000_000_000)
        );
        let Some(Data::Summary(d)) = &metrics[4].data else {
            panic!("then the summaries")
        };
        assert!((d.data_points[0].quantile_values[0].value - 0.002).abs() < 1e-4);
    }
}
