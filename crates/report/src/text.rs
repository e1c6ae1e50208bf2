use std::io::{self, Write};

use barrage_metrics::Metrics;
use barrage_model::duration;

use crate::TabWriter;

/// A duration as vegeta prints it in reports.
fn dur(ns: i64) -> String {
    duration::format(duration::round_for_report(ns))
}

/// Writes vegeta's text report.
pub fn text<W: Write>(m: &Metrics, out: W) -> io::Result<()> {
    let mut tw = TabWriter::new(out);
    let (bin, bin_mean) = m.bytes_in();
    let (bout, bout_mean) = m.bytes_out();
    let q = |p: f64| dur(m.quantile(p) as i64);
    write!(
        tw,
        "Requests\t[total, rate, throughput]\t{}, {:.2}, {:.2}\n\
         Duration\t[total, attack, wait]\t{}, {}, {}\n\
         Latencies\t[min, mean, 50, 90, 95, 99, max]\t{}, {}, {}, {}, {}, {}, {}\n\
         Bytes In\t[total, mean]\t{}, {:.2}\n\
         Bytes Out\t[total, mean]\t{}, {:.2}\n\
         Success\t[ratio]\t{:.2}%\n\
         Status Codes\t[code:count]\t",
        m.requests(),
        m.rate(),
        m.throughput(),
        dur(m.duration() + m.wait()),
        dur(m.duration()),
        dur(m.wait()),
        dur(m.latency_min() as i64),
        dur(m.latency_mean() as i64),
        q(0.50),
        q(0.90),
        q(0.95),
        q(0.99),
        dur(m.latency_max() as i64),
        bin,
        bin_mean,
        bout,
        bout_mean,
        m.success_ratio() * 100.0,
    )?;
    for (code, n) in m.status_codes() {
        write!(tw, "{code}:{n}  ")?;
    }
    writeln!(tw, "\nError Set:")?;
    for e in m.errors() {
        writeln!(tw, "{e}")?;
    }
    tw.flush_table()
}
