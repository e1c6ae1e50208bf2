use std::io::{self, Write};

use barrage_metrics::Metrics;
use barrage_model::{gojson, time};

/// What Go prints for a zero `time.Time` (an empty report's times).
const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

fn time_or_zero(t: Option<i64>) -> String {
    t.map_or_else(|| ZERO_TIME.to_string(), time::format_rfc3339)
}

/// Writes vegeta's JSON report as one line: the same keys in the same
/// order, durations in integer ns, times in RFC 3339.
pub fn json<W: Write>(m: &Metrics, mut out: W) -> io::Result<()> {
    let (bin, bin_mean) = m.bytes_in();
    let (bout, bout_mean) = m.bytes_out();
    let mut s = Vec::with_capacity(1024);
    write!(
        s,
        "{{\"latencies\":{{\"total\":{},\"mean\":{},\"50th\":{},\"90th\":{},\"95th\":{},\"99th\":{},\"max\":{},\"min\":{}}},",
        m.latency_total(),
        m.latency_mean(),
        m.quantile(0.50),
        m.quantile(0.90),
        m.quantile(0.95),
        m.quantile(0.99),
        m.latency_max(),
        m.latency_min(),
    )?;
    write!(
        s,
        "\"bytes_in\":{{\"total\":{bin},\"mean\":{}}},\"bytes_out\":{{\"total\":{bout},\"mean\":{}}},",
        gojson::float(bin_mean),
        gojson::float(bout_mean)
    )?;
    write!(
        s,
        "\"earliest\":\"{}\",\"latest\":\"{}\",\"end\":\"{}\",\"duration\":{},\"wait\":{},",
        time_or_zero(m.earliest()),
        time_or_zero(m.latest()),
        time_or_zero(m.end()),
        m.duration(),
        m.wait()
    )?;
    write!(
        s,
        "\"requests\":{},\"rate\":{},\"throughput\":{},\"success\":{},\"status_codes\":{{",
        m.requests(),
        gojson::float(m.rate()),
        gojson::float(m.throughput()),
        gojson::float(m.success_ratio())
    )?;
    for (i, (code, n)) in m.status_codes().iter().enumerate() {
        if i > 0 {
            s.push(b',');
        }
        write!(s, "\"{code}\":{n}")?;
    }
    s.extend_from_slice(b"},\"errors\":[");
    for (i, e) in m.errors().iter().enumerate() {
        if i > 0 {
            s.push(b',');
        }
        gojson::push_str(&mut s, e);
    }
    s.extend_from_slice(b"]}\n");
    out.write_all(&s)?;
    out.flush()
}
