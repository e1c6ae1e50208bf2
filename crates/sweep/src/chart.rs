//! `sweep -chart FILE.html`: one self-contained page, drawn through
//! `barrage_plot::chart`. At the top, in words, what `-find-max` found and
//! under which conditions, and the knee; then three charts side by side
//! against offered load (the x axis from the first step): throughput
//! (answered and sent per second), latency (p50, p99, mean; log or linear
//! a click away) and success (always 0–100%). The knee is a dashed
//! vertical line labelled above the plot; generator-bound steps sit on
//! grey bands.

use std::{io, io::Write};

use barrage_plot::{
    chart::{Axis, Band, Chart, Mark, Range, Rule, Scale, Series},
    palette::CATEGORICAL,
    svg::escape,
};

use crate::{found::Found, row::Row, Load};

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 380.0;

/// Sent beyond this many times the answered throughput puts the
/// throughput chart in log scale (else answers are a flat line at 0).
const SENT_SPAN: f64 = 5.0;

/// Writes the page for `rows` (by load) and what `-find-max` found.
/// `run` (a `RunFacts` table) says what sweep it is, under the title.
pub fn write_chart(
    title: &str,
    run: &str,
    rows: &[Row],
    found: Option<&Found>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let title = escape(title);
    let mut page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n<style>\n{}</style>\n</head>\n<body>\n<h1>{title}</h1>\n",
        barrage_plot::page::STYLE
    );
    page.push_str(run);
    section(&mut page, "sweep", rows, found);
    page.push_str("</body>\n</html>\n");
    out.write_all(page.as_bytes())
}

/// The run table of a sweep's page: its `command` (as typed, shown),
/// barrage's `version`, the first `targets`, the steps of `rows` and
/// its span (`from` and `to`, unix ns).
pub fn run_table(
    command: String,
    version: &str,
    targets: &[String],
    rows: &[Row],
    (from, to): (i64, i64),
) -> String {
    let mut run = barrage_plot::run::RunFacts::new();
    run.span(from, to);
    let steps: Vec<String> = rows.iter().map(|r| r.load.name()).collect();
    run.facts(&[
        ("command".into(), command),
        ("version".into(), version.into()),
        ("targets".into(), targets.join(", ")),
        ("load".into(), format!("sweep over {}", steps.join(", "))),
    ]);
    run.html()
}

/// `-chart PATH`: the page ([`write_chart`]) in a file.
pub fn write_chart_file(
    path: &std::path::Path,
    title: &str,
    run: &str,
    rows: &[Row],
    found: Option<&Found>,
) -> io::Result<()> {
    let mut f = io::BufWriter::new(std::fs::File::create(path)?);
    write_chart(title, run, rows, found, &mut f)?;
    f.flush()
}

/// A report page's section for a sweep's `rows` (records that are a
/// sweep's steps): its table, then its charts; `None` without steps.
pub fn report_section(rows: &[Row]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let mut table = Vec::new();
    let _ = crate::write_table(crate::Format::Text, rows, None, &mut table);
    let mut html = format!("<pre>{}</pre>\n", escape(&String::from_utf8_lossy(&table)));
    section(&mut html, "sweep", rows, None);
    Some(html)
}

/// Appends the answer lines and the three charts for `rows`; `id` keeps
/// the charts' ids apart from others on the page.
pub fn section(page: &mut String, id: &str, rows: &[Row], found: Option<&Found>) {
    if let Some(f) = found {
        page.push_str(&format!(
            "<p class=\"answer\">{}</p>\n",
            escape(&f.to_string())
        ));
    }
    if rows.is_empty() {
        page.push_str("<p>No finished steps.</p>\n");
        return;
    }
    let knee = crate::knee::knee_of(rows, found);
    let knee_text = match knee {
        Some(k) if found.is_none() => Some(format!(
            "knee: {} (dashed line): {}",
            rows[k].load,
            crate::knee::knee_rule(&rows[k].load)
        )),
        _ => crate::knee::knee_line(rows, found),
    };
    if let Some(t) = knee_text {
        page.push_str(&format!("<p class=\"answer\">{}</p>\n", escape(&t)));
    }
    let x_name = match rows[0].load {
        Load::Rate(_) => "Offered rate (requests/s)",
        Load::Concurrency(_) => "Connections (closed model)",
    };
    let blank = |n: &str, y: Axis| {
        let mut c = Chart::new(
            &format!("{id}-{n}"),
            WIDTH,
            HEIGHT,
            Axis {
                name: x_name.into(),
                scale: Scale::Linear,
                range: Range::Data,
            },
            y,
        );
        c.bands = bands(rows);
        c.band_legend = "grey: generator-bound (not the server's figures)".into();
        match found {
            // The search's answer and its bracket.
            Some(Found::Max { load, above, .. }) => {
                c.rules.push(Rule {
                    x: load.amount(),
                    label: format!("max {load}"),
                });
                if let Some(a) = above {
                    c.rules.push(Rule {
                        x: a.amount(),
                        label: format!("{a} failed"),
                    });
                }
            }
            _ => {
                if let Some(k) = knee {
                    c.rules.push(Rule {
                        x: rows[k].load.amount(),
                        label: format!("knee {}", rows[k].load),
                    });
                }
            }
        }
        c
    };
    let line = |name: &str, color: &str, mark: Mark, f: &dyn Fn(&Row) -> f64| Series {
        name: name.into(),
        color: color.into(),
        mark,
        detail: String::new(),
        points: rows.iter().map(|r| (r.load.amount(), f(r))).collect(),
    };
    let most = |f: fn(&Row) -> f64| rows.iter().map(f).fold(0.0, f64::max);
    let log = most(|r| r.rate) > SENT_SPAN * most(|r| r.throughput);
    let mut throughput = blank(
        "throughput",
        Axis {
            name: if log {
                "Requests/s (log scale)".into()
            } else {
                "Requests/s".into()
            },
            scale: if log { Scale::Log } else { Scale::Linear },
            range: Range::FromZero,
        },
    );
    throughput.series = vec![
        line("answered ok/s", CATEGORICAL[0], Mark::Line, &|r| {
            r.throughput
        }),
        line("sent/s", CATEGORICAL[5], Mark::Dashed, &|r| r.rate),
    ];
    let ms = |ns: u64| ns as f64 / 1e6;
    let mut latency = blank("latency", Axis::linear("Latency (ms)"));
    latency.series = vec![
        line("p50", CATEGORICAL[2], Mark::Line, &|r| ms(r.p50)),
        line("p99", CATEGORICAL[1], Mark::Line, &|r| ms(r.p99)),
        line("mean", CATEGORICAL[4], Mark::Dashed, &|r| ms(r.mean)),
    ];
    let mut success = blank(
        "success",
        Axis {
            name: "Success (%)".into(),
            scale: Scale::Linear,
            range: Range::Fixed(0.0, 100.0),
        },
    );
    success.series = vec![line("success", CATEGORICAL[3], Mark::Line, &|r| {
        r.success * 100.0
    })];
    page.push_str("<div class=\"charts\">\n<div>\n");
    throughput.draw(page);
    page.push_str("</div>\n");
    barrage_plot::page::latency_toggle(page, &latency);
    page.push_str("<div>\n");
    success.draw(page);
    page.push_str("</div>\n</div>\n");
}

/// Generator-bound steps: a band half-way to each neighbour.
fn bands(rows: &[Row]) -> Vec<Band> {
    let loads: Vec<f64> = rows.iter().map(|r| r.load.amount()).collect();
    rows.iter()
        .enumerate()
        .filter(|(_, r)| r.generator_bound)
        .map(|(i, r)| Band {
            from: if i > 0 {
                (loads[i - 1] + loads[i]) / 2.0
            } else {
                loads[i] * 0.95
            },
            to: loads
                .get(i + 1)
                .map_or(loads[i] * 1.05, |n| (loads[i] + n) / 2.0),
            title: format!("generator-bound: {}", r.load),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::tests::row;

    fn page(rows: &[Row]) -> String {
        let mut out = Vec::new();
        write_chart("t", "", rows, None, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The stroke colours of the lines of each chart drawn first (the
    /// latency chart's second version is the same chart).
    fn strokes(page: &str) -> Vec<String> {
        page.split("<path class=\"line\"")
            .skip(1)
            .map(|p| {
                let s = &p[p.find("stroke=\"").unwrap() + 8..];
                s[..s.find('"').unwrap()].to_string()
            })
            .collect()
    }

    #[test]
    fn every_series_has_its_own_colour() {
        let p = page(&[
            row(1000.0, 1000.0, 1),
            row(2000.0, 1900.0, 2),
            row(4000.0, 2000.0, 9),
        ]);
        let mut colours = strokes(&p);
        // throughput 2, latency 3 (twice: linear and log), success 1.
        assert_eq!(colours.len(), 9, "{colours:?}");
        colours.sort();
        colours.dedup();
        assert_eq!(colours.len(), 6, "{colours:?}");
        let refs: Vec<&str> = colours.iter().map(String::as_str).collect();
        assert!(barrage_plot::palette::least_difference(&refs) > 10.0);
    }

    #[test]
    fn answers_far_under_what_was_sent_put_throughput_in_log_scale() {
        let p = page(&[row(1000.0, 1000.0, 1), row(160_000.0, 3000.0, 520)]);
        assert!(p.contains(">Requests/s (log scale)</text>"), "{p}");
        let p = page(&[row(1000.0, 1000.0, 1), row(2000.0, 1900.0, 2)]);
        assert!(p.contains(">Requests/s</text>"));
    }

    #[test]
    fn a_generator_bound_step_is_a_band_inside_the_plot() {
        let mut rows = vec![row(1000.0, 1000.0, 1), row(2000.0, 1900.0, 2)];
        rows[1].generator_bound = true;
        let p = page(&rows);
        let band = p.split("<rect class=\"band\"").nth(1).expect("a band");
        let num = |k: &str| -> f64 {
            let s = &band[band.find(&format!("{k}=\"")).unwrap() + k.len() + 2..];
            s[..s.find('"').unwrap()].parse().unwrap()
        };
        assert!(num("x") + num("width") <= WIDTH - 16.0 + 0.1, "{band}");
        assert!(p.contains("grey: generator-bound"));
    }
}

#[cfg(test)]
mod run_table_tests {
    #[test]
    fn a_sweeps_page_names_its_command_targets_and_steps() {
        let html = super::run_table(
            "barrage sweep -rates 10,20".into(),
            "0.1.0",
            &["http://h/".into()],
            &[],
            (0, 1_000_000_000),
        );
        for want in ["barrage sweep -rates 10,20", "http://h/", "sweep over"] {
            assert!(html.contains(want), "{want} not in {html}");
        }
    }
}
