use std::io::{self, Write};

use barrage_metrics::Metrics;

use crate::TabWriter;

/// The quantiles of HdrHistogram's percentile distribution as vegeta lists
/// them (halving the distance to 100% in 5 steps each time).
const QUANTILES: [f64; 94] = [
    0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.775, 0.8, 0.825, 0.85, 0.875,
    0.8875, 0.9, 0.9125, 0.925, 0.9375, 0.94375, 0.95, 0.95625, 0.9625, 0.96875, 0.971875, 0.975,
    0.978125, 0.98125, 0.984375, 0.985938, 0.9875, 0.989062, 0.990625, 0.992188, 0.992969, 0.99375,
    0.994531, 0.995313, 0.996094, 0.996484, 0.996875, 0.997266, 0.997656, 0.998047, 0.998242,
    0.998437, 0.998633, 0.998828, 0.999023, 0.999121, 0.999219, 0.999316, 0.999414, 0.999512,
    0.999561, 0.999609, 0.999658, 0.999707, 0.999756, 0.99978, 0.999805, 0.999829, 0.999854,
    0.999878, 0.99989, 0.999902, 0.999915, 0.999927, 0.999939, 0.999945, 0.999951, 0.999957,
    0.999963, 0.999969, 0.999973, 0.999976, 0.999979, 0.999982, 0.999985, 0.999986, 0.999988,
    0.999989, 0.999991, 0.999992, 0.999993, 0.999994, 0.999995, 0.999996, 0.999997, 0.999998,
    0.999999, 1.0,
];

/// Writes the HdrHistogram percentile distribution (`Value(ms) Percentile
/// TotalCount 1/(1-Percentile)`), readable by HdrHistogram's plotFiles
/// page, from the exact histogram.
pub fn hdrplot<W: Write>(m: &Metrics, out: W) -> io::Result<()> {
    let mut tw = TabWriter::new(out);
    writeln!(tw, "Value(ms)\tPercentile\tTotalCount\t1/(1-Percentile)")?;
    let total = m.requests() as f64;
    for q in QUANTILES {
        let ns = m.latency().quantile(q);
        let ms = (ns / 1_000_000) as f64 + (ns % 1_000_000) as f64 / 1e6;
        let count = (q * total + 0.5) as i64;
        let one_by = if q < 1.0 {
            1.0 / (1.0 - q)
        } else {
            10_000_000.0
        };
        writeln!(tw, "{ms:.6}\t{q:.6}\t{count}\t{one_by:.6}")?;
    }
    tw.flush_table()
}
