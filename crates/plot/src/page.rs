//! What a page of charts needs besides the charts: the style they expect
//! and the log/linear toggle (CSS only, no script).

use std::fmt::Write as _;

use crate::{axis::Scale, chart::Chart, svg::escape};

/// The page style the charts expect (`.band`, `.rule`, `.legend`, the
/// log/linear toggle of [`toggle`]).
pub const STYLE: &str = "body { font: 14px sans-serif; margin: 1em 2em; color: #222; }
h1 { font-size: 18px; font-weight: normal; margin: 0 0 0.5em; }
h2 { font-size: 16px; font-weight: normal; margin: 1em 0 0.3em; }
svg { width: 100%; height: auto; display: block; }
.wide svg { max-width: 1200px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: 8px 24px; }
.axis { stroke: #444; stroke-width: 1; }
.grid { stroke: #e3e3e3; stroke-width: 1; }
text { font: 12px sans-serif; fill: #333; }
.band { fill: #999; fill-opacity: 0.3; }
line.rule { stroke: #444; stroke-width: 1.5; stroke-dasharray: 6 4; }
.switch { position: relative; }
.switch > .toggle { position: absolute; bottom: 0; right: 0; margin: 2px; }
.switch > label { position: absolute; bottom: 3px; right: 22px; font-size: 12px; }
.toggle ~ .second, .toggle:checked ~ .first { display: none; }
.toggle:checked ~ .second { display: block; }
table { border-collapse: collapse; font-size: 13px; margin: 0.3em 0 1em; }
td, th { padding: 2px 10px; text-align: right; border-bottom: 1px solid #e3e3e3; }
td:first-child, th:first-child { text-align: left; }
p.answer { font-size: 15px; margin: 0.3em 0; }
table.run { font-size: 12px; color: #444; margin: 0 0 0.8em; }
table.run th { font-weight: normal; color: #777; padding-left: 0; }
table.run td { text-align: left; border-bottom: none; word-break: break-all; }
table.run th, table.run td { border-bottom: none; padding-top: 0; padding-bottom: 0; }
p.note { color: #555; margin: 0.5em 0; }
.verdict { border-left: 4px solid #0072b2; padding: 2px 10px; margin: 0 0 1em; }
.verdict.invalid { border-left-color: #d55e00; background: #fdf1ea; }
.verdict p { margin: 0.2em 0; font-size: 15px; }
.verdict ul { margin: 0.2em 0; padding-left: 1.2em; color: #555; }
.verdict details { color: #444; font-size: 12px; }
";

/// Appends two versions of a chart and a checkbox that shows the second
/// instead of the first (no script: CSS's `:checked`), such as a latency
/// chart in log and linear scale. `n` makes the checkbox's id unique.
pub fn toggle(page: &mut String, n: &str, label: &str, first: &Chart, second: &Chart) {
    let _ = writeln!(
        page,
        "<div class=\"switch\"><input type=\"checkbox\" class=\"toggle\" id=\"t-{n}\"><label for=\"t-{n}\">{}</label>\n<div class=\"first\">",
        escape(label)
    );
    first.draw(page);
    page.push_str("</div>\n<div class=\"second\">\n");
    second.draw(page);
    page.push_str("</div>\n</div>\n");
}

/// Which scale a latency axis starts in: log when its values span more
/// than [`LOG_SPAN`] (one slow request would flatten the rest), else
/// linear.
pub fn latency_scale(values: &[f64]) -> Scale {
    let pos = values.iter().copied().filter(|v| *v > 0.0 && v.is_finite());
    let (lo, hi) = pos.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    if hi > 0.0 && hi / lo > LOG_SPAN {
        Scale::Log
    } else {
        Scale::Linear
    }
}

/// The ratio of greatest to least latency beyond which a chart starts in
/// log scale.
pub const LOG_SPAN: f64 = 20.0;

/// A latency chart in both scales, the data's choice first, with its
/// toggle.
pub fn latency_toggle(page: &mut String, chart: &Chart) {
    let ys: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .collect();
    let mut log = chart.clone();
    log.y.scale = Scale::Log;
    // "Latency (ms)" becomes "Latency (ms, log scale)".
    log.y.name = match chart.y.name.strip_suffix(')') {
        Some(head) => format!("{head}, log scale)"),
        None => format!("{} (log scale)", chart.y.name),
    };
    log.id = format!("{}-log", chart.id);
    let mut lin = chart.clone();
    lin.y.scale = Scale::Linear;
    let (first, second, label) = match latency_scale(&ys) {
        Scale::Log => (&log, &lin, "linear scale"),
        _ => (&lin, &log, "log scale"),
    };
    toggle(page, &chart.id, label, first, second);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_latency_span_starts_in_log_scale() {
        assert_eq!(latency_scale(&[0.3, 0.5, 520.0]), Scale::Log);
        assert_eq!(latency_scale(&[0.3, 0.5, 2.0]), Scale::Linear);
    }
}
