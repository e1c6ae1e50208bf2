//! What every page shares: its head and style, tables, and the charts
//! both pages draw (the latency spectrum).

use std::fmt::Write as _;

use barrage_metrics::Distribution;
use barrage_plot::{
    chart::{Axis, Chart, Mark, Range, Scale, Series},
    svg::escape,
};

/// Chart size in the grid of charts (view box, px).
pub const SMALL: (f64, f64) = (640.0, 340.0);

/// The percentiles of the spectrum: HdrHistogram's steps (halving the
/// distance to 100% five steps at a time) up to 99.999.
pub const SPECTRUM: [f64; 31] = [
    0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 55.0, 60.0, 65.0, 70.0, 75.0, 80.0, 85.0, 87.5, 90.0, 92.5,
    95.0, 96.25, 97.5, 98.0, 98.75, 99.0, 99.375, 99.5, 99.75, 99.9, 99.95, 99.97, 99.99, 99.995,
    99.999,
];

/// The page's start: its title and the shared style.
pub fn head(title: &str) -> String {
    let title = escape(title);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n<style>\n{}</style>\n</head>\n<body>\n<h1>{title}</h1>\n",
        barrage_plot::page::STYLE
    )
}

/// The page's end.
pub const END: &str = "</body>\n</html>\n";

/// Appends a table: a header row, then rows (cells already text).
pub fn table(page: &mut String, header: &[&str], rows: &[Vec<String>]) {
    page.push_str("<table>\n<tr>");
    for h in header {
        let _ = write!(page, "<th>{}</th>", escape(h));
    }
    page.push_str("</tr>\n");
    for r in rows {
        page.push_str("<tr>");
        for c in r {
            let _ = write!(page, "<td>{}</td>", escape(c));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table>\n");
}

/// A section heading.
pub fn h2(page: &mut String, text: &str) {
    let _ = writeln!(page, "<h2>{}</h2>", escape(text));
}

/// A series of latencies by percentile from `d` (ms).
pub fn spectrum(name: &str, color: &str, d: &Distribution) -> Series {
    Series {
        name: name.into(),
        color: color.into(),
        mark: Mark::Line,
        detail: String::new(),
        points: SPECTRUM
            .iter()
            .map(|p| (*p, d.quantile(p / 100.0) as f64 / 1e6))
            .collect(),
    }
}

/// A chart of latency by percentile (nines across).
pub fn spectrum_chart(id: &str, series: Vec<Series>) -> Chart {
    let mut c = Chart::new(
        id,
        SMALL.0,
        SMALL.1,
        Axis {
            name: "Percentile (%)".into(),
            scale: Scale::Nines,
            range: Range::FromZero,
        },
        Axis::linear("Latency (ms)"),
    );
    c.series = series;
    c
}

/// A chart over seconds elapsed.
pub fn time_chart(id: &str, y: Axis, series: Vec<Series>) -> Chart {
    let mut c = Chart::new(id, SMALL.0, SMALL.1, Axis::linear("Seconds elapsed"), y);
    c.series = series;
    c
}

/// A line series from points.
pub fn line(name: &str, color: &str, mark: Mark, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: name.into(),
        color: color.into(),
        mark,
        detail: String::new(),
        points,
    }
}

/// Live control's changes (`attack -control`) as rules on the charts
/// over time: at the schedule time each holds from, after the first send.
pub(crate) fn changes(m: &barrage_metrics::Metrics) -> Vec<barrage_plot::chart::Rule> {
    let Some(first) = m.earliest() else {
        return Vec::new();
    };
    m.markers()
        .iter()
        .map(|x| barrage_plot::chart::Rule {
            x: x.from.saturating_sub(first).max(0) as f64 / 1e9,
            label: barrage_model::words::printable(&x.what).into_owned(),
        })
        .collect()
}
