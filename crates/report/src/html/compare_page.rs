//! `compare -type html`: the comparison's table, the two sides' latency
//! spectra overlaid, and their figures over time (each side's runs one
//! after another), base in blue and new in vermillion.

use std::io::{self, Write};

use barrage_metrics::Metrics;
use barrage_plot::{
    chart::{Axis, Mark},
    palette::CATEGORICAL,
};

use super::page::{self, h2, line, spectrum, spectrum_chart, table, time_chart};
use crate::compare::{
    bootstrap::{figures, Figure},
    text::{pct, shown},
    Comparison, Side, Sides,
};

/// Records a point of the time series stands for, at least (while there
/// are more than 8 points).
const PER_POINT: u64 = 20;

/// (seconds, ok/s, p50 ms, p99 ms) per block of `side`'s runs, run after run.
fn series(sides: &Sides, side: Side) -> Vec<(f64, f64, f64, f64)> {
    let mut out = Vec::new();
    let (mut offset, mut acc) = (0.0, Vec::new());
    for (m, run) in sides.runs(side) {
        // Points of at least [`PER_POINT`] records (a slow stream's fine
        // blocks hold 0 or 1 successes each and draw a comb).
        let mut run = run.clone();
        while run.len() > 8 && m.requests() < PER_POINT * run.len() as u64 {
            run.halve();
        }
        let width = run.width() as f64 / 1e9;
        let blocks = run.all_blocks();
        for (i, b) in blocks.iter().enumerate() {
            if b.count == 0 {
                continue;
            }
            let f = figures(&[b], &mut acc);
            let span = b.span.max(1) as f64 / 1e9;
            out.push((
                offset + i as f64 * width,
                b.ok as f64 / span,
                f[Figure::P50.index()] / 1e6,
                f[Figure::P99.index()] / 1e6,
            ));
        }
        offset += blocks.len() as f64 * width;
    }
    out
}

/// Writes the page; `header` says what runs each side holds.
pub fn compare_page(
    c: &Comparison,
    sides: &Sides,
    header: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut page = page::head("Barrage Compare");
    page.push_str(header);
    for g in c.all() {
        if c.by.is_some() {
            h2(
                &mut page,
                &match &g.key {
                    Some(k) => format!("{}: {}", c.by.map_or("", |b| b.name()), k),
                    None => "total".into(),
                },
            );
        }
        let rows: Vec<Vec<String>> = g
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.figure.name().to_string(),
                    shown(r.figure, r.base),
                    shown(r.figure, r.new),
                    pct(r.change),
                    format!("[{}, {}]", pct(r.low), pct(r.high)),
                    format!("±{:.2}%", r.noise * 100.0),
                    match (r.judged, r.verdict) {
                        (true, v)
                        | (false, v @ ("too few records" | crate::compare::INVALID_RUN)) => v,
                        _ => "not judged",
                    }
                    .to_string(),
                ]
            })
            .collect();
        table(
            &mut page,
            &[
                "figure",
                "base",
                "new",
                "change",
                "95% interval",
                "noise",
                "verdict",
            ],
            &rows,
        );
    }
    for line in &c.invalid {
        page.push_str(&format!(
            "<div class=\"verdict invalid\"><p><strong>Not judged</strong>: {}</p></div>\n",
            barrage_plot::svg::escape(line)
        ));
    }
    for (side, keys) in [("base", &c.only_base), ("new", &c.only_new)] {
        for k in keys {
            page.push_str(&format!(
                "<p>Only in {side}: {} (not compared)</p>\n",
                barrage_plot::svg::escape(k)
            ));
        }
    }
    let merged = |side| {
        let mut m = Metrics::new();
        for (r, _) in sides.runs(side) {
            m.merge(r);
        }
        m
    };
    let (base, new) = (merged(Side::Base), merged(Side::New));
    let (sb, sn) = (series(sides, Side::Base), series(sides, Side::New));
    let (blue, red) = (CATEGORICAL[0], CATEGORICAL[1]);
    page.push_str("<div class=\"charts\">\n");
    barrage_plot::page::latency_toggle(
        &mut page,
        &spectrum_chart(
            "spectra",
            vec![
                spectrum("base", blue, base.latency()),
                spectrum("new", red, new.latency()),
            ],
        ),
    );
    page.push_str("<div>\n");
    time_chart(
        "throughput",
        Axis::linear("ok/s"),
        vec![
            line(
                "base ok/s",
                blue,
                Mark::Line,
                sb.iter().map(|p| (p.0, p.1)).collect(),
            ),
            line(
                "new ok/s",
                red,
                Mark::Line,
                sn.iter().map(|p| (p.0, p.1)).collect(),
            ),
        ],
    )
    .draw(&mut page);
    page.push_str("</div>\n");
    barrage_plot::page::latency_toggle(
        &mut page,
        &time_chart(
            "over-time",
            Axis::linear("Latency (ms)"),
            vec![
                line(
                    "base p50",
                    blue,
                    Mark::Line,
                    sb.iter().map(|p| (p.0, p.2)).collect(),
                ),
                line(
                    "base p99",
                    blue,
                    Mark::Dashed,
                    sb.iter().map(|p| (p.0, p.3)).collect(),
                ),
                line(
                    "new p50",
                    red,
                    Mark::Line,
                    sn.iter().map(|p| (p.0, p.2)).collect(),
                ),
                line(
                    "new p99",
                    red,
                    Mark::Dashed,
                    sn.iter().map(|p| (p.0, p.3)).collect(),
                ),
            ],
        ),
    );
    page.push_str("</div>\n");
    page.push_str(page::END);
    out.write_all(page.as_bytes())
}
