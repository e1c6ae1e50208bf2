//! `report -type`: the layout a report is written in, and writing it whole
//! or one report per group (`-by`).

use std::{io, io::Write, str::FromStr};

use barrage_metrics::{Buckets, Groups, Metrics};

use crate::Percentiles;

/// A report's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// vegeta's text report.
    Text,
    /// vegeta's JSON report (one line).
    Json,
    /// vegeta's bucket histogram.
    Hist,
    /// HdrHistogram's percentile distribution.
    HdrPlot,
    /// autocannon's per-second table of answers and bytes.
    Seconds,
    /// One self-contained HTML page: summary, spectrum, figures over
    /// time, codes, errors, groups (drawn from the records: the CLI hands
    /// it to [`crate::html::Report`]).
    Html,
    /// The HTML page of `barrage plot` (drawn from the records, not from
    /// metrics: the CLI hands it to the plot stage).
    Plot,
}

/// `-type` as typed: the layout, and the buckets `hist[…]` carries.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportType {
    /// The layout.
    pub kind: Kind,
    /// Buckets written in the type (`hist[0,1ms,5ms]`).
    pub buckets: Option<Buckets>,
}

impl FromStr for ReportType {
    type Err = crate::ParseError;

    fn from_str(s: &str) -> Result<Self, crate::ParseError> {
        let kind = |kind| ReportType {
            kind,
            buckets: None,
        };
        Ok(match s {
            "text" => kind(Kind::Text),
            "json" => kind(Kind::Json),
            "hdrplot" => kind(Kind::HdrPlot),
            "seconds" => kind(Kind::Seconds),
            "plot" => kind(Kind::Plot),
            "html" => kind(Kind::Html),
            "hist" => kind(Kind::Hist),
            other if other.starts_with("hist[") && other.ends_with(']') => ReportType {
                kind: Kind::Hist,
                buckets: Some(Buckets::parse(&other[4..])?),
            },
            other => {
                return Err(crate::ParseError::from(format!(
                "unknown -type {other:?} (use text, json, hist[BUCKETS], hdrplot, seconds, html or plot)"
            )))
            }
        })
    }
}

/// Writes `m` as `kind` (nothing for [`Kind::Plot`] and [`Kind::Html`]).
pub fn write(kind: Kind, m: &Metrics, p: &Percentiles, out: &mut dyn Write) -> io::Result<()> {
    match kind {
        Kind::Text => crate::text(m, p, out),
        Kind::Json => crate::json(m, p, out),
        Kind::Hist => crate::hist(m, out),
        Kind::HdrPlot => crate::hdrplot(m, out),
        Kind::Seconds => crate::seconds(m, out),
        Kind::Plot | Kind::Html => Ok(()),
    }
}

/// Under a text report, what a stream's `meta` says of how it was made:
/// the Poisson seed of `-arrivals`, to repeat the schedule.
pub fn write_run_facts(
    kind: Kind,
    meta: &[(String, String)],
    out: &mut dyn Write,
) -> io::Result<()> {
    if kind != Kind::Text {
        return Ok(());
    }
    for (key, value) in meta {
        match key.as_str() {
            "arrivals" => writeln!(out, "Arrivals      {value} (repeat with -arrivals {value})")?,
            "ended" => writeln!(out, "Ended         {value}")?,
            _ => {}
        }
    }
    Ok(())
}

/// Writes one report per group, then the total: in text layouts each
/// under a `=== by: key` line (the total under `=== total`); in JSON one
/// line per group with a `group` key, then the total's line.
pub fn write_groups(
    kind: Kind,
    groups: &Groups,
    total: &Metrics,
    p: &Percentiles,
    out: &mut dyn Write,
) -> io::Result<()> {
    let by = groups.by().name();
    for (key, m) in groups.iter() {
        if kind == Kind::Json {
            let mut line = crate::json::json_group_object(m, p, by, key)?;
            line.push(b'\n');
            out.write_all(&line)?;
        } else {
            writeln!(out, "=== {by}: {}", barrage_model::words::printable(key))?;
            write(kind, m, p, out)?;
            writeln!(out)?;
        }
    }
    if kind != Kind::Json {
        writeln!(out, "=== total")?;
    }
    write(kind, total, p, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_parse() {
        assert_eq!("json".parse::<ReportType>().unwrap().kind, Kind::Json);
        let h: ReportType = "hist[0,1ms,5ms]".parse().unwrap();
        assert_eq!(h.kind, Kind::Hist);
        assert!(h.buckets.is_some());
        assert_eq!("hist".parse::<ReportType>().unwrap().buckets, None);
        let e = "xml".parse::<ReportType>().unwrap_err();
        assert!(e.0.contains("unknown -type \"xml\""), "{e}");
    }
}
