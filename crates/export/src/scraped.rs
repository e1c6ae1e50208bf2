//! A scraped server's samples (`attack -scrape`) as each protocol writes
//! them, at the end of an export: into Prometheus a series each, its
//! name and labels as the endpoint gave them with `barrage_source` (the
//! endpoint) added, a counter's rate named `NAME:per_second`; into
//! InfluxDB the measurement `barrage_server`, tagged `source`, `series`
//! and `rate`, field `value`; into OTLP a gauge a metric, its labels and
//! `barrage_source` as attributes.

use std::{collections::BTreeMap, fmt::Write as _};

use barrage_model::ServerSample;
use prost::Message;

use crate::remote_write::{Label, Sample, TimeSeries, WriteRequest};

/// The most samples one write carries.
pub const PER_WRITE: usize = 10_000;

/// `metric{k="v",...}` cut into the metric and its labels.
fn split(name: &str) -> (&str, Vec<(String, String)>) {
    let Some((metric, rest)) = name.split_once('{') else {
        return (name, Vec::new());
    };
    let mut labels = Vec::new();
    let mut rest = rest.trim_end_matches('}');
    while let Some((key, after)) = rest.split_once("=\"") {
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        value.push(n);
                    }
                }
                '"' => {
                    end = i + 1;
                    break;
                }
                c => value.push(c),
            }
        }
        labels.push((key.trim_start_matches(',').trim().to_string(), value));
        rest = &after[end.min(after.len())..];
    }
    (metric, labels)
}

/// A sample's series as the protocols name it: its metric (a counter's
/// rate as `NAME:per_second`) and its labels.
fn named(s: &ServerSample) -> (String, Vec<(String, String)>) {
    let (metric, labels) = split(&s.name);
    let name = if s.rate {
        format!("{metric}:per_second")
    } else {
        metric.to_string()
    };
    (name, labels)
}

/// A Prometheus remote-write body of `samples`, snappy-compressed.
pub fn remote_write(samples: &[&ServerSample]) -> Vec<u8> {
    let mut series: BTreeMap<Vec<(String, String)>, Vec<Sample>> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.value.is_finite()) {
        let (name, mut labels) = named(s);
        labels.push(("__name__".into(), name));
        labels.push(("barrage_source".into(), s.source.clone()));
        labels.sort();
        series.entry(labels).or_default().push(Sample {
            value: s.value,
            timestamp: s.at.div_euclid(1_000_000),
        });
    }
    let timeseries = series
        .into_iter()
        .map(|(labels, mut samples)| {
            samples.sort_by_key(|s| s.timestamp);
            TimeSeries {
                labels: labels
                    .into_iter()
                    .map(|(name, value)| Label { name, value })
                    .collect(),
                samples,
                histograms: Vec::new(),
            }
        })
        .collect();
    let raw = WriteRequest { timeseries }.encode_to_vec();
    snap::raw::Encoder::new()
        .compress_vec(&raw)
        .unwrap_or_default()
}

/// An OTLP/HTTP body of `samples`: a gauge a metric.
pub fn otlp(samples: &[&ServerSample]) -> Vec<u8> {
    use crate::otlp::{
        AnyValue, Data, ExportMetricsServiceRequest, Gauge, InstrumentationScope, KeyValue, Metric,
        NumberDataPoint, Resource, ResourceMetrics, ScopeMetrics, Value,
    };
    let mut gauges: BTreeMap<String, Vec<NumberDataPoint>> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.value.is_finite()) {
        let (name, labels) = named(s);
        let kv = |key: String, value: String| KeyValue {
            key,
            value: Some(AnyValue {
                string_value: value,
            }),
        };
        let mut attributes: Vec<KeyValue> = labels.into_iter().map(|(k, v)| kv(k, v)).collect();
        attributes.push(kv("barrage_source".into(), s.source.clone()));
        gauges.entry(name).or_default().push(NumberDataPoint {
            attributes,
            start_time_unix_nano: 0,
            time_unix_nano: s.at.max(0) as u64,
            value: Some(Value::AsDouble(s.value)),
        });
    }
    let metrics = gauges
        .into_iter()
        .map(|(name, data_points)| Metric {
            name,
            description: String::new(),
            unit: String::new(),
            data: Some(Data::Gauge(Gauge { data_points })),
        })
        .collect();
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(Resource {
                attributes: crate::otlp::attrs(&[("service.name", "barrage".into())]),
            }),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(InstrumentationScope {
                    name: "barrage-scrape".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                }),
                metrics,
            }],
        }],
    }
    .encode_to_vec()
}

/// InfluxDB line protocol for `samples`.
pub fn influx(samples: &[&ServerSample]) -> String {
    let mut out = String::new();
    for s in samples.iter().filter(|s| s.value.is_finite()) {
        let _ = writeln!(
            out,
            "barrage_server,source={},series={},rate={} value={} {}",
            crate::influx::tag(&s.source),
            crate::influx::tag(&s.name),
            s.rate,
            s.value,
            s.at
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str, rate: bool) -> ServerSample {
        ServerSample {
            source: "http://h:1/metrics".into(),
            at: 1_700_000_000_123_456_789,
            name: name.into(),
            value: 2.5,
            rate,
        }
    }

    #[test]
    fn series_keep_their_labels_and_say_their_source() {
        assert_eq!(
            split(r#"m{a="1",b="x \"y\", z"}"#),
            (
                "m",
                vec![("a".into(), "1".into()), ("b".into(), "x \"y\", z".into())]
            )
        );
        let (a, b) = (
            sample(r#"waiting{model="m"}"#, false),
            sample("served_total", true),
        );
        let body = remote_write(&[&a, &b]);
        let raw = snap::raw::Decoder::new().decompress_vec(&body).unwrap();
        let req = WriteRequest::decode(raw.as_slice()).unwrap();
        let names: Vec<Vec<(String, String)>> = req
            .timeseries
            .iter()
            .map(|t| {
                t.labels
                    .iter()
                    .map(|l| (l.name.clone(), l.value.clone()))
                    .collect()
            })
            .collect();
        assert!(names.contains(&vec![
            ("__name__".into(), "served_total:per_second".into()),
            ("barrage_source".into(), "http://h:1/metrics".into()),
        ]));
        assert!(names
            .iter()
            .any(|l| l.contains(&("model".into(), "m".into()))));
        assert_eq!(req.timeseries[0].samples[0].timestamp, 1_700_000_000_123);
        let req =
            crate::otlp::ExportMetricsServiceRequest::decode(otlp(&[&a, &b]).as_slice()).unwrap();
        let metrics = &req.resource_metrics[0].scope_metrics[0].metrics;
        let names: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["served_total:per_second", "waiting"]);
        assert_eq!(
            influx(&[&a]),
            "barrage_server,source=http://h:1/metrics,series=waiting{model\\=\"m\"},rate=false value=2.5 1700000000123456789\n"
        );
    }
}
