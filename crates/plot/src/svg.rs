//! The chart: axes with round ticks, a dot per point, written as SVG text.

use std::fmt::Write as _;

/// The page's style: the linear chart hidden until its box is ticked.
pub const STYLE: &str = "body { font: 14px sans-serif; margin: 1em 2em; color: #222; }
h1 { font-size: 18px; font-weight: normal; }
svg { width: 100%; max-width: 1200px; height: auto; display: block; }
.lin { display: none; }
#linear:checked ~ .log { display: none; }
#linear:checked ~ .lin { display: block; }
.axis { stroke: #444; stroke-width: 1; }
.grid { stroke: #ddd; stroke-width: 1; }
text { font: 12px sans-serif; fill: #333; }
ul { list-style: none; padding: 0; }
li span { display: inline-block; width: 12px; height: 12px; margin-right: 6px; vertical-align: middle; }
";

/// A series ready to draw.
pub struct Drawn {
    pub label: String,
    pub color: &'static str,
    /// (seconds since the attack's start, latency in ms), by time.
    pub points: Vec<(f64, f64)>,
    /// Records in the series (more than points when downsampled).
    pub count: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 480.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 50.0;

/// Greens and blues for successes, reds and oranges for errors; the n-th
/// attack takes the n-th of each.
pub fn color(nth: usize, error: bool) -> &'static str {
    const OK: [&str; 6] = [
        "#1a9850", "#2166ac", "#66bd63", "#4393c3", "#006837", "#053061",
    ];
    const ERR: [&str; 6] = [
        "#d73027", "#f46d43", "#a50026", "#fdae61", "#e7298a", "#8c510a",
    ];
    if error {
        ERR[nth % ERR.len()]
    } else {
        OK[nth % OK.len()]
    }
}

/// `s` safe inside HTML and SVG text and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Round tick positions from 0 to at least `max`: steps of 1, 2 or 5
/// times a power of ten, about `want` of them.
pub fn ticks(max: f64, want: usize) -> Vec<f64> {
    let max = if max > 0.0 && max.is_finite() {
        max
    } else {
        1.0
    };
    let raw = max / want.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let n = (max / step).ceil() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

/// A tick label: no trailing zeros, no float noise (`0.30000000000000004`).
pub fn number(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// The powers of ten spanning `lo..=hi`, the least and greatest positive
/// latencies (at least one decade); zero latencies are drawn on the lowest.
fn decades(lo: f64, hi: f64) -> (i32, i32) {
    let usable = |v: f64| v > 0.0 && v.is_finite();
    let lo = if usable(lo) {
        lo.log10().floor() as i32
    } else {
        -3
    };
    let hi = if usable(hi) {
        hi.log10().ceil() as i32
    } else {
        lo + 1
    };
    (lo, hi.max(lo + 1))
}

/// Ticks from `10^lo` to `10^hi`: each power of ten, and 2 and 5 times
/// it when there are at most two decades (else they crowd the axis).
fn log_ticks(lo: i32, hi: i32) -> Vec<f64> {
    let mults: &[f64] = if hi - lo <= 2 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut out = Vec::new();
    for e in lo..hi {
        out.extend(mults.iter().map(|m| m * 10f64.powi(e)));
    }
    out.push(10f64.powi(hi));
    out
}

/// Appends a chart's grid: a labelled line across `left..right` at each
/// of `yt` (placed by `y`) and one down `top..bottom` at each of `xt`
/// (placed by `x`).
pub fn grid(
    page: &mut String,
    yt: &[f64],
    y: &dyn Fn(f64) -> f64,
    xt: &[f64],
    x: &dyn Fn(f64) -> f64,
    (left, top, right, bottom): (f64, f64, f64, f64),
) {
    for &v in yt {
        let py = y(v);
        let _ = writeln!(
            page,
            "<line class=\"grid\" x1=\"{left}\" y1=\"{py:.1}\" x2=\"{right:.1}\" y2=\"{py:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            py + 4.0,
            number(v)
        );
    }
    for &v in xt {
        let px = x(v);
        let _ = writeln!(
            page,
            "<line class=\"grid\" x1=\"{px:.1}\" y1=\"{top}\" x2=\"{px:.1}\" y2=\"{bottom:.1}\"/>\
             <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            bottom + 16.0,
            number(v)
        );
    }
}

/// Appends one chart of every series to `page`.
pub fn chart(page: &mut String, series: &[Drawn], scale: Scale) {
    let all = || series.iter().flat_map(|s| s.points.iter());
    let xmax = all().map(|p| p.0).fold(0.0, f64::max);
    let ymax = all().map(|p| p.1).fold(0.0, f64::max);
    let ymin_pos = all()
        .map(|p| p.1)
        .filter(|y| *y > 0.0)
        .fold(f64::INFINITY, f64::min);
    let xt = ticks(xmax, 10);
    let xend = *xt.last().unwrap_or(&1.0);
    let (plot_w, plot_h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |v: f64| LEFT + v / xend * plot_w;
    // y ticks and the mapping from ms to pixels.
    let (yt, y): (Vec<f64>, Box<dyn Fn(f64) -> f64>) = match scale {
        Scale::Linear => {
            let yt = ticks(ymax, 8);
            let yend = *yt.last().unwrap_or(&1.0);
            (yt, Box::new(move |v: f64| TOP + plot_h - v / yend * plot_h))
        }
        Scale::Log => {
            let (lo, hi) = decades(ymin_pos, ymax);
            let yt = log_ticks(lo, hi);
            let span = f64::from(hi - lo);
            (
                yt,
                Box::new(move |v: f64| {
                    let d = if v > 0.0 {
                        (v.log10() - f64::from(lo)).max(0.0)
                    } else {
                        0.0
                    };
                    TOP + plot_h - d / span * plot_h
                }),
            )
        }
    };
    let _ = writeln!(
        page,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\">"
    );
    grid(
        page,
        &yt,
        &y,
        &xt,
        &x,
        (LEFT, TOP, LEFT + plot_w, TOP + plot_h),
    );
    let _ = writeln!(
        page,
        "<path class=\"axis\" fill=\"none\" d=\"M{LEFT} {TOP}V{:.1}H{:.1}\"/>",
        TOP + plot_h,
        LEFT + plot_w
    );
    let _ = writeln!(
        page,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">Seconds elapsed</text>",
        LEFT + plot_w / 2.0,
        HEIGHT - 10.0
    );
    let _ = writeln!(
        page,
        "<text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\">Latency (ms{})</text>",
        TOP + plot_h / 2.0,
        if scale == Scale::Log { ", log scale" } else { "" }
    );
    for s in series {
        // A dot per point: a zero-length line with round caps.
        let _ = write!(
            page,
            "<path fill=\"none\" stroke=\"{}\" stroke-width=\"3\" stroke-linecap=\"round\" d=\"",
            s.color
        );
        for &(px, py) in &s.points {
            let _ = write!(page, "M{:.1} {:.1}h0", x(px), y(py));
        }
        let _ = writeln!(page, "\"><title>{}</title></path>", escape(&s.label));
    }
    page.push_str("</svg>\n");
}

/// Appends the legend: each series' color, label, records and points.
pub fn legend(page: &mut String, series: &[Drawn]) {
    page.push_str("<ul>\n");
    for s in series {
        let shown = if s.points.len() as u64 == s.count {
            String::new()
        } else {
            format!(", {} points drawn", s.points.len())
        };
        let _ = writeln!(
            page,
            "<li><span style=\"background:{}\"></span>{}: {} requests{}</li>",
            s.color,
            escape(&s.label),
            s.count,
            shown
        );
    }
    page.push_str("</ul>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(9.3, 10), (0..=10).map(f64::from).collect::<Vec<_>>());
        assert_eq!(
            ticks(45.0, 10),
            [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0]
        );
        assert_eq!(ticks(0.0, 10).last(), Some(&1.0));
        let t = ticks(0.37, 8);
        assert_eq!(t.last().map(|v| number(*v)), Some("0.4".to_string()));
        assert_eq!(number(t[3]), "0.15");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(3600.0), "3600");
    }

    #[test]
    fn decades_span_the_positive_values() {
        assert_eq!(decades(0.042, 12.0), (-2, 2));
        assert_eq!(decades(1.0, 1.0), (0, 1));
        assert_eq!(decades(f64::INFINITY, 0.0), (-3, -2));
    }

    #[test]
    fn log_ticks_add_halves_and_fifths_on_short_spans() {
        let labels = |v: Vec<f64>| v.into_iter().map(number).collect::<Vec<_>>();
        assert_eq!(labels(log_ticks(-1, 0)), ["0.1", "0.2", "0.5", "1"]);
        assert_eq!(
            labels(log_ticks(-1, 1)),
            ["0.1", "0.2", "0.5", "1", "2", "5", "10"]
        );
        assert_eq!(labels(log_ticks(-2, 1)), ["0.01", "0.1", "1", "10"]);
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
    }
}
