use std::io::{self, Write};

use barrage_metrics::Metrics;
use barrage_model::duration;

use crate::TabWriter;

/// Writes vegeta's histogram (`-type 'hist[0,1ms,5ms]'`): one row per
/// bucket with its exact count, its share and a bar of `#` scaled to 75
/// columns. The metrics must have been built with buckets.
pub fn hist<W: Write>(m: &Metrics, out: W) -> io::Result<()> {
    let Some((buckets, counts)) = m.buckets() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the hist report needs buckets",
        ));
    };
    let total: u64 = counts.iter().sum();
    let mut tw = TabWriter::new(out);
    writeln!(tw, "Bucket\t\t#\t%\tHistogram")?;
    let bounds = buckets.bounds();
    for (i, count) in counts.iter().enumerate() {
        let ratio = if total == 0 {
            0.0
        } else {
            *count as f64 / total as f64
        };
        let lo = duration::format(bounds[i] as i64);
        let hi = bounds
            .get(i + 1)
            .map_or_else(|| "+Inf".to_string(), |b| duration::format(*b as i64));
        let bar = "#".repeat((ratio * 75.0) as usize);
        writeln!(tw, "[{lo},\t{hi}]\t{count}\t{:.2}%\t{bar}", ratio * 100.0)?;
    }
    tw.flush_table()
}
