//! InfluxDB's line protocol: a line per point,
//! `barrage,method=GET,code=200 requests=10i,errors=0i,... <ns>`.
//! Tags and the measurement are escaped as the protocol asks (commas,
//! spaces and equals signs with a backslash); a tag with an empty value
//! is left out (the protocol refuses it).

use std::fmt::Write as _;

use crate::Batch;

/// The measurement every point is written to.
pub const MEASUREMENT: &str = "barrage";

/// Every field of a point (the Grafana dashboard may name no other).
pub const FIELDS: [&str; 16] = [
    "requests",
    "errors",
    "bytes_in",
    "bytes_out",
    "latency_mean",
    "latency_p50",
    "latency_p90",
    "latency_p99",
    "latency_p999",
    "latency_max",
    "lag_mean",
    "lag_p50",
    "lag_p90",
    "lag_p99",
    "lag_p999",
    "lag_max",
];

pub(crate) fn tag(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, ',' | ' ' | '=' | '\\') {
            out.push('\\');
        }
        // A newline ends a line: never inside one.
        out.push(if c == '\n' || c == '\r' { ' ' } else { c });
    }
    out
}

/// The lines of a batch, stamped with its end (ns).
pub fn lines(batch: &Batch) -> String {
    let mut out = String::new();
    for p in &batch.points {
        out.push_str(MEASUREMENT);
        for (k, v) in &p.labels {
            if !v.is_empty() {
                let _ = write!(out, ",{k}={}", tag(v));
            }
        }
        let s = |ns: u64| ns as f64 / 1e9;
        let _ = write!(
            out,
            " requests={}i,errors={}i,bytes_in={}i,bytes_out={}i,latency_mean={},latency_p50={},latency_p90={},latency_p99={},latency_p999={},latency_max={},lag_mean={},lag_p50={},lag_p90={},lag_p99={},lag_p999={},lag_max={} {}",
            p.requests,
            p.errors,
            p.bytes_in,
            p.bytes_out,
            s(p.latency.mean()),
            s(p.latency.quantile(0.5)),
            s(p.latency.quantile(0.9)),
            s(p.latency.quantile(0.99)),
            s(p.latency.quantile(0.999)),
            s(p.latency.max()),
            s(p.lag.mean()),
            s(p.lag.quantile(0.5)),
            s(p.lag.quantile(0.9)),
            s(p.lag.quantile(0.99)),
            s(p.lag.quantile(0.999)),
            s(p.lag.max()),
            batch.end
        );
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Intervals, Label};
    use barrage_model::Hit;

    #[test]
    fn a_point_is_one_line_with_escaped_tags() {
        let mut iv = Intervals::new(1_000_000_000, vec![Label::Url, Label::Attack]);
        let hit = Hit {
            timestamp: 3_500_000_000,
            url: "http://a/x y,z=1".into(),
            latency: 1_500_000,
            code: 200,
            ..Hit::default()
        };
        iv.add(&hit, true, hit.latency);
        let text = lines(&iv.finish()[0]);
        assert!(
            text.starts_with("barrage,url=http://a/x\\ y\\,z\\=1 requests=1i,errors=0i,"),
            "{text}"
        );
        assert!(text.ends_with(" 4000000000\n"), "{text}");
        assert!(!text.contains("attack="), "an empty tag is left out");
        assert!(text.contains("latency_p50=0.0015"), "{text}");
    }
}
