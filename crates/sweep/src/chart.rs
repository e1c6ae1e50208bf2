//! `sweep -chart FILE.html`: one self-contained page in the style of
//! `barrage plot`. The first chart has throughput (left axis) and latency
//! (right axis: p50, p99, mean) against offered load, the second the
//! success ratio against load; the knee is a dashed vertical line, and
//! generator-bound steps sit on grey bands labelled as such.

use std::{fmt::Write as _, io, io::Write};

use barrage_plot::svg::{escape, grid, number, ticks, STYLE};

use crate::{knee, row::Row, Load};

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 80.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 50.0;

/// A line on a chart: its name, color, axis (false: left) and values.
struct Line<'a> {
    name: &'a str,
    color: &'static str,
    right: bool,
    dashed: bool,
    values: Vec<f64>,
}

/// Writes the page for `rows` (by load).
pub fn write_chart(title: &str, rows: &[Row], out: &mut dyn Write) -> io::Result<()> {
    let title = escape(title);
    let mut page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n<style>\n{STYLE}.knee {{ stroke: #7b3294; stroke-width: 1.5; stroke-dasharray: 6 4; }}\n\
         .bound {{ fill: #bbb; fill-opacity: 0.35; }}\n</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    if rows.is_empty() {
        page.push_str("<p>No finished steps.</p>\n</body>\n</html>\n");
        return out.write_all(page.as_bytes());
    }
    let knee = knee(rows);
    let load_name = match rows[0].load {
        Load::Rate(_) => "Offered rate (requests/s)",
        Load::Concurrency(_) => "Connections (closed model)",
    };
    let ms = |ns: u64| ns as f64 / 1e6;
    let throughput = [
        Line {
            name: "throughput (ok/s)",
            color: "#2166ac",
            right: false,
            dashed: false,
            values: rows.iter().map(|r| r.throughput).collect(),
        },
        Line {
            name: "sent/s",
            color: "#92c5de",
            right: false,
            dashed: true,
            values: rows.iter().map(|r| r.rate).collect(),
        },
        Line {
            name: "p50 latency (ms)",
            color: "#1a9850",
            right: true,
            dashed: false,
            values: rows.iter().map(|r| ms(r.p50)).collect(),
        },
        Line {
            name: "p99 latency (ms)",
            color: "#d73027",
            right: true,
            dashed: false,
            values: rows.iter().map(|r| ms(r.p99)).collect(),
        },
        Line {
            name: "mean latency (ms)",
            color: "#fdae61",
            right: true,
            dashed: true,
            values: rows.iter().map(|r| ms(r.mean)).collect(),
        },
    ];
    chart(
        &mut page,
        rows,
        knee,
        &throughput,
        load_name,
        ("Requests/s", Some("Latency (ms)")),
    );
    let success = [Line {
        name: "success (%)",
        color: "#1a9850",
        right: false,
        dashed: false,
        values: rows.iter().map(|r| r.success * 100.0).collect(),
    }];
    chart(
        &mut page,
        rows,
        knee,
        &success,
        load_name,
        ("Success (%)", None),
    );
    page.push_str("<ul>\n");
    for l in throughput.iter().chain(&success) {
        let _ = writeln!(
            page,
            "<li><span style=\"background:{}\"></span>{}</li>",
            l.color,
            escape(l.name)
        );
    }
    match knee {
        Some(k) => {
            let _ = writeln!(
                page,
                "<li>knee: {} (dashed line): {}</li>",
                escape(&rows[k].load.to_string()),
                crate::knee::knee_rule(&rows[k].load)
            );
        }
        None => {
            if let Some(line) = crate::knee::knee_line(rows) {
                let _ = writeln!(page, "<li>{}</li>", escape(&line));
            }
        }
    }
    if rows.iter().any(|r| r.generator_bound) {
        page.push_str("<li>grey bands: generator-bound steps (barrage could not keep their schedule; their figures are not the server's)</li>\n");
    }
    page.push_str("</ul>\n</body>\n</html>\n");
    out.write_all(page.as_bytes())
}

/// Appends one chart of `lines` against the rows' loads.
fn chart(
    page: &mut String,
    rows: &[Row],
    knee: Option<usize>,
    lines: &[Line<'_>],
    x_name: &str,
    (left_name, right_name): (&str, Option<&str>),
) {
    let loads: Vec<f64> = rows.iter().map(|r| r.load.amount()).collect();
    let xt = ticks(loads.iter().copied().fold(0.0, f64::max), 10);
    let xend = *xt.last().unwrap_or(&1.0);
    let (w, h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |v: f64| LEFT + v / xend * w;
    let top = |right: bool| {
        lines
            .iter()
            .filter(|l| l.right == right)
            .flat_map(|l| l.values.iter().copied())
            .fold(0.0, f64::max)
    };
    let (lt, rt) = (ticks(top(false), 8), ticks(top(true), 8));
    let (lend, rend) = (*lt.last().unwrap_or(&1.0), *rt.last().unwrap_or(&1.0));
    let y = |v: f64, right: bool| TOP + h - v / if right { rend } else { lend } * h;
    let _ = writeln!(
        page,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\">"
    );
    // Generator-bound steps: a band half-way to each neighbour.
    for (i, r) in rows.iter().enumerate().filter(|(_, r)| r.generator_bound) {
        let lo = if i > 0 {
            (loads[i - 1] + loads[i]) / 2.0
        } else {
            loads[i] * 0.95
        };
        let hi = loads
            .get(i + 1)
            .map_or(loads[i] * 1.05, |n| (loads[i] + n) / 2.0);
        let _ = writeln!(
            page,
            "<rect class=\"bound\" x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{h:.1}\"><title>generator-bound: {}</title></rect>",
            x(lo),
            (x(hi) - x(lo)).max(2.0),
            escape(&r.load.to_string())
        );
    }
    grid(
        page,
        &lt,
        &|v| y(v, false),
        &xt,
        &x,
        (LEFT, TOP, LEFT + w, TOP + h),
    );
    if right_name.is_some() {
        for &v in &rt {
            let _ = writeln!(
                page,
                "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                LEFT + w + 6.0,
                y(v, true) + 4.0,
                number(v)
            );
        }
    }
    let _ = writeln!(
        page,
        "<path class=\"axis\" fill=\"none\" d=\"M{LEFT} {TOP}V{:.1}H{:.1}{}\"/>",
        TOP + h,
        LEFT + w,
        if right_name.is_some() {
            format!("V{TOP}")
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        page,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        LEFT + w / 2.0,
        HEIGHT - 10.0,
        escape(x_name)
    );
    let _ = writeln!(
        page,
        "<text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        TOP + h / 2.0,
        escape(left_name)
    );
    if let Some(name) = right_name {
        let _ = writeln!(
            page,
            "<text transform=\"translate({:.1} {:.1}) rotate(90)\" text-anchor=\"middle\">{}</text>",
            WIDTH - 16.0,
            TOP + h / 2.0,
            escape(name)
        );
    }
    if let Some(k) = knee {
        let px = x(loads[k]);
        let _ = writeln!(
            page,
            "<line class=\"knee\" x1=\"{px:.1}\" y1=\"{TOP}\" x2=\"{px:.1}\" y2=\"{:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">knee {}</text>",
            TOP + h,
            px + 4.0,
            TOP + 12.0,
            escape(&rows[k].load.to_string())
        );
    }
    for l in lines {
        let mut d = String::new();
        for (i, v) in l.values.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1} {:.1}",
                if i == 0 { "M" } else { "L" },
                x(loads[i]),
                y(*v, l.right)
            );
        }
        let dash = if l.dashed {
            " stroke-dasharray=\"4 3\""
        } else {
            ""
        };
        let _ = writeln!(
            page,
            "<path fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash} d=\"{d}\"><title>{}</title></path>",
            l.color,
            escape(l.name)
        );
        let _ = write!(
            page,
            "<path fill=\"none\" stroke=\"{}\" stroke-width=\"7\" stroke-linecap=\"round\" d=\"",
            l.color
        );
        for (i, v) in l.values.iter().enumerate() {
            let _ = write!(page, "M{:.1} {:.1}h0", x(loads[i]), y(*v, l.right));
        }
        let _ = writeln!(page, "\"/>");
    }
    page.push_str("</svg>\n");
}
