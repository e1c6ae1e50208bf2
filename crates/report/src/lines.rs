//! A report's lines of figures, shared by its blocks: a duration as
//! vegeta prints it, a distribution's percentiles, and a distribution's
//! whole line.

use std::io::{self, Write};

use barrage_metrics::Distribution;
use barrage_model::duration;

use crate::{Percentiles, TabWriter};

/// A duration as vegeta prints it in reports.
pub(crate) fn dur(ns: u64) -> String {
    duration::format(duration::round_for_report(ns.min(i64::MAX as u64) as i64))
}

/// A distribution's percentiles, as durations joined by commas.
pub(crate) fn columns(d: &Distribution, p: &Percentiles) -> String {
    p.iter()
        .map(|(q, _)| dur(d.quantile(q)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A distribution's line: `NAME [min, mean, 50, ..., max] figures`.
pub(crate) fn spread<W: Write>(
    tw: &mut TabWriter<W>,
    name: &str,
    d: &Distribution,
    p: &Percentiles,
) -> io::Result<()> {
    let labels: Vec<String> = p.iter().map(|(_, l)| l).collect();
    writeln!(
        tw,
        "{name}\t[min, mean, {}, max]\t{}, {}, {}, {}",
        labels.join(", "),
        dur(d.min()),
        dur(d.mean()),
        columns(d, p),
        dur(d.max())
    )
}
