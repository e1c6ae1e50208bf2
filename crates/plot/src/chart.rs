//! The one chart every page draws through (plot, sweep, report, compare),
//! so that each rule of reading is kept once:
//! - the legend is drawn inside the SVG, above the plot area, wrapped to
//!   its width: it is in view wherever the chart is;
//! - series, bands and points are clipped to the plot area;
//! - a vertical rule's label sits in the strip above the plot area, where
//!   no line runs;
//! - axes are linear from zero, linear over the data (`Range::Data`: the
//!   x axis of a sweep starts at its first step), fixed (success at
//!   0–100%), logarithmic, or in nines (percentiles up to 99.999).

use std::fmt::Write as _;

pub use crate::axis::{Axis, Range, Scale};
use crate::{axis::map, svg::escape};

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A solid line through the points, with a dot on each.
    Line,
    /// A dashed line through the points, with a dot on each.
    Dashed,
    /// A dot per point (`Mx yh0` with round caps).
    Dots,
    /// A cross per point.
    Crosses,
}

/// A named series of (x, y) points.
#[derive(Clone, Debug)]
pub struct Series {
    /// Its legend text; the title of its path.
    pub name: String,
    /// `#rrggbb`.
    pub color: String,
    /// How it is drawn.
    pub mark: Mark,
    /// Written after the name in the legend (`: ` between), such as
    /// `150 requests`; empty for none.
    pub detail: String,
    /// The points, in x order for lines.
    pub points: Vec<(f64, f64)>,
}

/// A grey span of x, such as a generator-bound step.
#[derive(Clone, Debug)]
pub struct Band {
    /// Where it starts and ends (x units).
    pub from: f64,
    /// Where it ends.
    pub to: f64,
    /// Its tooltip.
    pub title: String,
}

/// Rules nearer than this (px) have their labels parted.
const RULES_APART: f64 = 160.0;

/// A dashed vertical line at an x, labelled above the plot area.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Where (x units).
    pub x: f64,
    /// Its label, such as `knee 4000/s`.
    pub label: String,
}

/// A chart ready to draw.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Unique within its page (the clip path's id).
    pub id: String,
    /// The view box's width (px).
    pub width: f64,
    /// The view box's height (px).
    pub height: f64,
    /// Across.
    pub x: Axis,
    /// Up.
    pub y: Axis,
    /// Drawn in order, each a legend entry.
    pub series: Vec<Series>,
    /// Under the series; one legend entry for all, if any (`band_legend`).
    pub bands: Vec<Band>,
    /// The legend text of the bands.
    pub band_legend: String,
    /// Over the series.
    pub rules: Vec<Rule>,
    /// Legend lines after the series (plain text).
    pub notes: Vec<String>,
}

const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const BOTTOM: f64 = 44.0;
/// A legend row's height (px).
const ROW: f64 = 18.0;
/// The strip above the plot area that holds rule labels (px).
const RULE_STRIP: f64 = 16.0;
/// Inner padding of the plot area, so edge points are whole (px).
const PAD: f64 = 6.0;
/// About how wide a 12 px sans-serif character is (px), to wrap the legend.
const CHAR: f64 = 6.6;

/// Where each legend entry goes: (x, row) for entries `widths` px wide,
/// wrapped within `span` px.
fn wrap(widths: &[f64], span: f64) -> Vec<(f64, usize)> {
    let (mut x, mut row) = (0.0, 0);
    widths
        .iter()
        .map(|&w| {
            if x > 0.0 && x + w > span {
                x = 0.0;
                row += 1;
            }
            let at = (x, row);
            x += w;
            at
        })
        .collect()
}

/// A legend swatch for `mark` in `color`, its left end at (x, y).
fn swatch(page: &mut String, x: f64, y: f64, color: &str, mark: Mark) {
    let _ = match mark {
        Mark::Line | Mark::Dashed => writeln!(
            page,
            "<path stroke=\"{color}\" stroke-width=\"2\"{} d=\"M{x:.1} {y:.1}h16\"/>",
            if mark == Mark::Dashed {
                " stroke-dasharray=\"4 3\""
            } else {
                ""
            }
        ),
        Mark::Dots => writeln!(
            page,
            "<circle fill=\"{color}\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4\"/>",
            x + 8.0
        ),
        Mark::Crosses => writeln!(
            page,
            "<path stroke=\"{color}\" stroke-width=\"2\" d=\"M{:.1} {:.1}l8 8m0 -8l-8 8\"/>",
            x + 4.0,
            y - 4.0
        ),
    };
}

impl Chart {
    /// A chart with no series yet.
    pub fn new(id: &str, width: f64, height: f64, x: Axis, y: Axis) -> Chart {
        Chart {
            id: id.into(),
            width,
            height,
            x,
            y,
            series: Vec::new(),
            bands: Vec::new(),
            band_legend: String::new(),
            rules: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The legend's entries: (text, color and mark or none).
    fn entries(&self) -> Vec<(String, Option<(&str, Mark)>)> {
        let mut out: Vec<(String, Option<(&str, Mark)>)> = self
            .series
            .iter()
            .map(|s| {
                let text = if s.detail.is_empty() {
                    s.name.clone()
                } else {
                    format!("{}: {}", s.name, s.detail)
                };
                (text, Some((s.color.as_str(), s.mark)))
            })
            .collect();
        if !self.bands.is_empty() && !self.band_legend.is_empty() {
            out.push((self.band_legend.clone(), None));
        }
        out.extend(self.notes.iter().map(|n| (n.clone(), None)));
        out
    }

    /// Appends the chart as one `<svg>` element.
    pub fn draw(&self, page: &mut String) {
        let (w, h) = (self.width, self.height);
        let entries = self.entries();
        let widths: Vec<f64> = entries
            .iter()
            .map(|(t, m)| t.chars().count() as f64 * CHAR + if m.is_some() { 40.0 } else { 18.0 })
            .collect();
        let places = wrap(&widths, w - LEFT - RIGHT);
        let rows = places.last().map_or(0, |p| p.1 + 1);
        let top = 8.0 + rows as f64 * ROW + RULE_STRIP + 4.0;
        let (pw, ph) = (w - LEFT - RIGHT, h - top - BOTTOM);
        let xs: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        let ys: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .collect();
        let (mx, my) = (map(&self.x, &xs), map(&self.y, &ys));
        let x = |v: f64| LEFT + PAD + (mx.at)(v) * (pw - 2.0 * PAD);
        let y = |v: f64| top + ph - PAD - (my.at)(v) * (ph - 2.0 * PAD);
        let id = escape(&self.id);
        let _ = writeln!(
            page,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" role=\"img\">\n\
             <clipPath id=\"{id}\"><rect x=\"{LEFT}\" y=\"{top:.1}\" width=\"{pw:.1}\" height=\"{ph:.1}\"/></clipPath>"
        );
        // The legend, above the plot area.
        for ((text, mark), (lx, row)) in entries.iter().zip(&places) {
            let (lx, ly) = (LEFT + lx, 8.0 + *row as f64 * ROW + ROW / 2.0);
            let tx = match mark {
                Some((color, mark)) => {
                    swatch(page, lx, ly, color, *mark);
                    lx + 22.0
                }
                None => lx,
            };
            let _ = writeln!(
                page,
                "<text class=\"legend\" x=\"{tx:.1}\" y=\"{:.1}\">{}</text>",
                ly + 4.0,
                escape(text)
            );
        }
        for b in &self.bands {
            let (a, z) = (x(b.from).max(LEFT), x(b.to).min(LEFT + pw));
            if z > a {
                let _ = writeln!(
                    page,
                    "<rect class=\"band\" clip-path=\"url(#{id})\" x=\"{a:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{ph:.1}\"><title>{}</title></rect>",
                    z - a,
                    escape(&b.title)
                );
            }
        }
        for (v, label) in &my.ticks {
            let py = y(*v);
            let _ = writeln!(
                page,
                "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
                LEFT + pw,
                LEFT - 6.0,
                py + 4.0
            );
        }
        for (v, label) in &mx.ticks {
            let px = x(*v);
            let _ = writeln!(
                page,
                "<line class=\"grid\" x1=\"{px:.1}\" y1=\"{top:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\"/>\
                 <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
                top + ph,
                top + ph + 16.0
            );
        }
        let _ = writeln!(
            page,
            "<path class=\"axis\" fill=\"none\" d=\"M{LEFT} {top:.1}V{:.1}H{:.1}\"/>\n\
             <text class=\"name\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n\
             <text class=\"name\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            top + ph,
            LEFT + pw,
            LEFT + pw / 2.0,
            h - 8.0,
            escape(&self.x.name),
            top + ph / 2.0,
            escape(&self.y.name)
        );
        for s in &self.series {
            self.draw_series(page, s, &x, &y);
        }
        let at: Vec<f64> = self.rules.iter().map(|r| x(r.x)).collect();
        for (r, &px) in self.rules.iter().zip(&at) {
            if !(LEFT..=LEFT + pw).contains(&px) {
                continue;
            }
            let label = escape(&r.label);
            // Two rules close together (an answer and its bracket): their
            // labels part, the left one ending at its line, the right one
            // starting at its own.
            let near = |d: f64| d > 0.0 && d < RULES_APART;
            let anchor = if at.iter().any(|&o| near(o - px)) || px > LEFT + pw * 0.8 {
                "end"
            } else if at.iter().any(|&o| near(px - o)) {
                "start"
            } else {
                "middle"
            };
            // A parted label stands 4 px off its line.
            let tx = match anchor {
                "end" if at.iter().any(|&o| near(o - px)) => px - 4.0,
                "start" => px + 4.0,
                _ => px,
            };
            let _ = writeln!(
                page,
                "<line class=\"rule\" x1=\"{px:.1}\" y1=\"{top:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\"/>\
                 <text class=\"rule\" x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{label}</text>",
                top + ph,
                top - 5.0
            );
        }
        page.push_str("</svg>\n");
    }

    fn draw_series(
        &self,
        page: &mut String,
        s: &Series,
        x: &dyn Fn(f64) -> f64,
        y: &dyn Fn(f64) -> f64,
    ) {
        let (id, name, color) = (escape(&self.id), escape(&s.name), &s.color);
        if matches!(s.mark, Mark::Line | Mark::Dashed) && s.points.len() > 1 {
            // A point whose value is not finite is a gap: the line stops
            // there and starts again after it (an empty window is no 0).
            let mut d = String::new();
            let mut pen_up = true;
            for &(px, py) in &s.points {
                if !py.is_finite() || !px.is_finite() {
                    pen_up = true;
                    continue;
                }
                let _ = write!(
                    d,
                    "{}{:.1} {:.1}",
                    if pen_up { "M" } else { "L" },
                    x(px),
                    y(py)
                );
                pen_up = false;
            }
            let dash = if s.mark == Mark::Dashed {
                " stroke-dasharray=\"5 4\""
            } else {
                ""
            };
            let _ = writeln!(
                page,
                "<path class=\"line\" clip-path=\"url(#{id})\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} d=\"{d}\"><title>{name}</title></path>"
            );
        }
        let (width, cap) = match s.mark {
            Mark::Dots => ("3", "round"),
            Mark::Line | Mark::Dashed => ("6", "round"),
            Mark::Crosses => ("1.5", "butt"),
        };
        let _ = write!(
            page,
            "<path class=\"points\" clip-path=\"url(#{id})\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{width}\" stroke-linecap=\"{cap}\" d=\""
        );
        for &(px, py) in s
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
        {
            if s.mark == Mark::Crosses {
                let _ = write!(page, "M{:.1} {:.1}m-3 -3l6 6m0 -6l-6 6", x(px), y(py));
            } else {
                let _ = write!(page, "M{:.1} {:.1}h0", x(px), y(py));
            }
        }
        let _ = writeln!(page, "\"><title>{name}</title></path>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> Chart {
        let mut c = Chart::new(
            "c",
            640.0,
            360.0,
            Axis {
                name: "x".into(),
                scale: Scale::Linear,
                range: Range::Data,
            },
            Axis {
                name: "Success (%)".into(),
                scale: Scale::Linear,
                range: Range::Fixed(0.0, 100.0),
            },
        );
        c.series.push(Series {
            name: "success".into(),
            color: "#0072B2".into(),
            mark: Mark::Line,
            detail: String::new(),
            points: vec![(1000.0, 1.9), (2000.0, 0.9)],
        });
        c
    }

    /// Numbers after `key="` in `svg`.
    fn attrs(svg: &str, key: &str) -> Vec<f64> {
        svg.split(&format!("{key}=\""))
            .skip(1)
            .filter_map(|s| s[..s.find('"').unwrap()].parse().ok())
            .collect()
    }

    #[test]
    fn success_stays_on_a_0_to_100_axis() {
        let mut page = String::new();
        chart().draw(&mut page);
        assert!(page.contains(">100</text>"), "{page}");
        assert!(page.contains("text-anchor=\"end\">0</text>"));
        // 1.9% sits near the bottom, not at the top.
        let d = page.split("class=\"line\"").nth(1).unwrap();
        let d = &d[d.find(" d=\"M").unwrap() + 5..];
        let (_, y) = d[..d.find('L').unwrap()].split_once(' ').unwrap();
        let y: f64 = y.parse().unwrap();
        assert!(y > 360.0 - 44.0 - 20.0, "1.9% drawn at row {y}");
    }

    #[test]
    fn the_x_axis_starts_at_the_first_value() {
        let mut page = String::new();
        chart().draw(&mut page);
        let d = page.split("class=\"line\"").nth(1).unwrap();
        let d = &d[d.find(" d=\"M").unwrap() + 5..];
        let x: f64 = d[..d.find(' ').unwrap()].parse().unwrap();
        assert!((x - (LEFT + PAD)).abs() < 0.2, "first point at {x}");
    }

    #[test]
    fn everything_is_inside_the_view_box() {
        let mut c = chart();
        c.bands.push(Band {
            from: 1900.0,
            to: 2100.0,
            title: "bound".into(),
        });
        c.band_legend = "grey bands: bound".into();
        c.rules.push(Rule {
            x: 2000.0,
            label: "knee 2000/s".into(),
        });
        for i in 0..12 {
            c.series.push(Series {
                name: format!("a long series name {i}"),
                color: "#000000".into(),
                mark: Mark::Dots,
                detail: String::new(),
                points: vec![(1500.0, 50.0)],
            });
        }
        let mut page = String::new();
        c.draw(&mut page);
        for key in ["x", "x1", "x2", "cx"] {
            for v in attrs(&page, key) {
                assert!((0.0..=640.0).contains(&v), "{key}={v}");
            }
        }
        for key in ["y", "y1", "y2", "cy"] {
            for v in attrs(&page, key) {
                assert!((0.0..=360.0).contains(&v), "{key}={v}");
            }
        }
        // The band stops at the plot area's right edge.
        let bx = page.split("class=\"band\"").nth(1).unwrap();
        let (bx, bw) = (attrs(bx, "x")[0], attrs(bx, "width")[0]);
        assert!(bx + bw <= 640.0 - RIGHT + 0.1, "band ends at {}", bx + bw);
        // The rule's label is above the plot area's top.
        let clip = page.split("<clipPath").nth(1).unwrap();
        let top = attrs(clip, "y")[0];
        let label = page.split("<text class=\"rule\"").nth(1).unwrap();
        assert!(attrs(label, "y")[0] < top, "label inside the plot area");
        // Legend rows wrap: the last is still above the plot area.
        let legend_y = page
            .split("<text class=\"legend\"")
            .skip(1)
            .map(|t| attrs(t, "y")[0])
            .fold(0.0, f64::max);
        assert!(legend_y < top, "legend at {legend_y}, plot from {top}");
    }
}
