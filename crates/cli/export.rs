//! `barrage export -to prometheus-remote-write|influx|otlp URL [FILES]`: reads
//! result streams (stdin without files), folds them per `-interval` and
//! label set, and pushes each interval as it closes, stamped with its
//! records' time. The stream is always read to its end; an endpoint that
//! refuses is said in one line after it, with exit 1; a damaged input is
//! exported up to its last complete record, then said, with exit 2.

use barrage_export::{Endpoint, Export, Label, Protocol};
use barrage_metrics::Options;

use crate::{
    failed::{Failed, Outcome},
    inputs,
};
use barrage_flags::ExportArgs;

pub fn run(a: ExportArgs) -> Outcome {
    let by = Label::parse_list(&a.by).map_err(Failed::usage)?;
    if a.interval.is_zero() {
        return Err(Failed::usage("-interval must be above 0 (such as 1s)"));
    }
    let protocol = match a.to.as_str() {
        "influx" => Protocol::Influx {
            token: a.token.clone(),
            org: a.org.clone(),
            bucket: a.bucket.clone(),
            db: a.db.clone(),
        },
        "otlp" => Protocol::Otlp,
        _ => Protocol::RemoteWrite,
    };
    if a.native_histograms && !matches!(protocol, Protocol::RemoteWrite) {
        return Err(Failed::usage(format!(
            "-native-histograms is for -to prometheus-remote-write, not -to {}",
            a.to
        )));
    }
    let endpoint = Endpoint::for_protocol(&protocol, &a.url, a.timeout, a.retries)
        .map_err(|e| Failed::usage(e.0))?;
    let shown = endpoint.url.to_string();
    let merge = inputs::open(&a.files, false)?;
    let mut records = inputs::Records::new(merge, a.latency);
    let options = Options {
        latency: a.latency,
        success: a.success.clone(),
        buckets: None,
        ..Options::default()
    };
    let width = a.interval.as_nanos().min(i64::MAX as u128) as i64;
    let mut export =
        Export::start(protocol, endpoint, width, by).native_histograms(a.native_histograms);
    while let Some((hit, _)) = records.next_record() {
        let (ok, latency) = options.judge(hit);
        export.add(hit, ok, latency);
    }
    let sum = export.finish(records.merge.samples());
    inputs::finish_records(&records, None, "export")?;
    if sum.undelivered > 0 {
        return Err(Failed::io(format!(
            "{}; {} of {} intervals not delivered ({}), the rest written ({} records read)",
            sum.error.unwrap_or_default(),
            sum.undelivered,
            sum.batches,
            sum.gaps,
            sum.records
        )));
    }
    eprintln!(
        "barrage export: {} records in {} intervals to {shown}",
        sum.records, sum.batches
    );
    inputs::finish(&records.merge)
}
