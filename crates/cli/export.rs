//! `barrage export -to prometheus-remote-write|influx URL [FILES]`: reads
//! result streams (stdin without files), folds them per `-interval` and
//! label set, and pushes each interval as it closes, stamped with its
//! records' time. The stream is always read to its end; an endpoint that
//! refuses is said in one line after it, with exit 1; a damaged input is
//! exported up to its last complete record, then said, with exit 2.

use barrage_export::{influx, remote_write, Batch, Endpoint, Intervals, Label, Pusher};
use barrage_metrics::Options;

use crate::{
    failed::{Failed, Outcome},
    flags::ExportArgs,
    inputs,
};

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
    let influx = a.to == "influx";
    let mut intervals = Intervals::new(a.interval.as_nanos().min(i64::MAX as u128) as i64, by);
    let mut pusher = Pusher::start(endpoint, QUEUE);
    let mut encoder = remote_write::Encoder::new();
    let mut body = |b: &Batch| {
        if influx {
            influx::lines(b).into_bytes()
        } else {
            encoder.body(b)
        }
    };
    let (mut count, mut batches) = (0u64, 0u64);
    while let Some((hit, _)) = records.next_record() {
        let (ok, latency) = options.judge(hit);
        count += 1;
        for b in intervals.add(hit, ok, latency) {
            pusher.push(body(&b));
            batches += 1;
        }
    }
    for b in intervals.finish() {
        pusher.push(body(&b));
        batches += 1;
    }
    let sum = pusher.finish();
    inputs::finish_records(&records, None, "export")?;
    if let Some(why) = sum.error {
        return Err(Failed::io(format!(
            "{why}; {} of {batches} intervals not delivered ({count} records read)",
            sum.undelivered
        )));
    }
    eprintln!("barrage export: {count} records in {batches} intervals to {shown}",);
    inputs::finish(&records.merge)
}
