//! `barrage export -to prometheus-remote-write|influx|otlp URL [FILES]`: reads
//! result streams (stdin without files), folds them per `-interval` and
//! label set, and pushes each interval as it closes, stamped with its
//! records' time. The stream is always read to its end; an endpoint that
//! refuses is said in one line after it, with exit 1; a damaged input is
//! exported up to its last complete record, then said, with exit 2.

use barrage_export::{influx, otlp, remote_write, Batch, Endpoint, Intervals, Label, Pusher};
use barrage_metrics::Options;

use crate::{
    failed::{Failed, Outcome},
    inputs,
};
use barrage_flags::ExportArgs;

/// Batches queued for the endpoint at most.
const QUEUE: usize = 64;

/// The write URL and headers for `-to`.
fn endpoint(a: &ExportArgs) -> Result<Endpoint, Failed> {
    let mut url = Endpoint::parse(&a.url).map_err(|e| Failed::usage(e.0))?;
    let headers: Vec<(String, String)> = match a.to.as_str() {
        "influx" => {
            let bare = matches!(url.path(), "" | "/");
            let mut h = vec![(
                "Content-Type".to_string(),
                "text/plain; charset=utf-8".to_string(),
            )];
            match &a.token {
                Some(token) => {
                    if bare {
                        url.set_path("/api/v2/write");
                        url.query_pairs_mut()
                            .append_pair("org", &a.org)
                            .append_pair("bucket", &a.bucket)
                            .append_pair("precision", "ns");
                    }
                    h.push(("Authorization".into(), format!("Token {token}")));
                }
                None if bare => {
                    url.set_path("/write");
                    url.query_pairs_mut()
                        .append_pair("db", &a.db)
                        .append_pair("precision", "ns");
                }
                None => {}
            }
            h
        }
        "otlp" => {
            if matches!(url.path(), "" | "/") {
                url.set_path("/v1/metrics");
            }
            vec![("Content-Type".into(), "application/x-protobuf".into())]
        }
        _ => vec![
            ("Content-Encoding".into(), "snappy".into()),
            ("Content-Type".into(), "application/x-protobuf".into()),
            ("X-Prometheus-Remote-Write-Version".into(), "0.1.0".into()),
        ],
    };
    Ok(Endpoint {
        url,
        headers,
        timeout: a.timeout,
        retries: a.retries,
    })
}

/// Runs of intervals not written, by their ends' times (the first few).
fn gaps(gaps: &[(i64, i64)], width: i64) -> String {
    use barrage_model::time::format_rfc3339;
    let mut said: Vec<String> = gaps
        .iter()
        .take(5)
        .map(|&(a, b)| {
            if a == b {
                format!("ending {}", format_rfc3339(a))
            } else {
                format!("{} to {}", format_rfc3339(a - width), format_rfc3339(b))
            }
        })
        .collect();
    if gaps.len() > 5 {
        said.push(format!("{} runs more", gaps.len() - 5));
    }
    said.join(", ")
}

pub fn run(a: ExportArgs) -> Outcome {
    let by = Label::parse_list(&a.by).map_err(Failed::usage)?;
    if a.interval.is_zero() {
        return Err(Failed::usage("-interval must be above 0 (such as 1s)"));
    }
    let endpoint = endpoint(&a)?;
    let shown = endpoint.url.to_string();
    let merge = inputs::open(&a.files, false)?;
    let mut records = inputs::Records::new(merge, a.latency);
    let options = Options {
        latency: a.latency,
        success: a.success.clone(),
        buckets: None,
    };
    let width = a.interval.as_nanos().min(i64::MAX as u128) as i64;
    let mut intervals = Intervals::new(width, by);
    let mut pusher = Pusher::start(endpoint, QUEUE, width);
    let (mut prom, mut otel) = (remote_write::Encoder::new(), otlp::Encoder::new());
    let mut body = |b: &Batch| match a.to.as_str() {
        "influx" => influx::lines(b).into_bytes(),
        "otlp" => otel.body(b, width),
        _ => prom.body(b),
    };
    let (mut count, mut batches) = (0u64, 0u64);
    while let Some((hit, _)) = records.next_record() {
        let (ok, latency) = options.judge(hit);
        count += 1;
        for b in intervals.add(hit, ok, latency) {
            pusher.push(body(&b), b.end);
            batches += 1;
        }
    }
    for b in intervals.finish() {
        pusher.push(body(&b), b.end);
        batches += 1;
    }
    let sum = pusher.finish();
    inputs::finish_records(&records, None, "export")?;
    if sum.undelivered > 0 {
        let why = sum.error.unwrap_or_default();
        return Err(Failed::io(format!(
            "{why}; {} of {batches} intervals not delivered ({}), the rest written ({count} records read)",
            sum.undelivered,
            gaps(&sum.gaps, width)
        )));
    }
    eprintln!("barrage export: {count} records in {batches} intervals to {shown}",);
    inputs::finish(&records.merge)
}
