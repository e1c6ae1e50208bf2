//! Live control's changes in the reports (`attack -control`, issue 66):
//! a `Changes` block in the text report, `"markers"` in the JSON one, and
//! each `-every` window's changes on its row.

use std::io::{self, Write};

use barrage_metrics::Metrics;
use barrage_model::{gojson, time, Marker};

use crate::TabWriter;

/// A change as a line says it: `rate 3000/1s from request 5000, by
/// 127.0.0.1:40112`.
fn said(m: &Marker) -> String {
    let words = barrage_model::words::printable;
    let mut s = words(&m.what).into_owned();
    if m.what != "stop" {
        s.push_str(&format!(" from request {}", m.first));
    }
    if !m.who.is_empty() {
        s.push_str(&format!(", by {}", words(&m.who)));
    }
    s
}

/// The schedule time a change holds from, after `start` (the first
/// send, unix ns): `+5.000s`.
fn after(m: &Marker, start: Option<i64>) -> String {
    match start {
        Some(s) => format!("+{:.3}s", m.from.saturating_sub(s).max(0) as f64 / 1e9),
        None => time::format_rfc3339(m.from),
    }
}

/// The text lines: `Changes` and a line a change; nothing without.
pub(crate) fn text<W: Write>(m: &Metrics, cols: &[usize], out: W) -> io::Result<()> {
    if m.markers().is_empty() {
        return Ok(());
    }
    let mut tw = TabWriter::at_least(out, cols);
    writeln!(tw, "Changes\t[from the start, what] live control\t")?;
    for x in m.markers() {
        writeln!(tw, "  {}\t{}\t", after(x, m.earliest()), said(x))?;
    }
    tw.flush_table()
}

/// A `-every` row's changes, labelled after its figures.
pub(crate) fn row(m: &Metrics) -> String {
    m.markers()
        .iter()
        .map(|x| format!("  change {}", said(x)))
        .collect()
}

/// `"markers"`: a list of changes, each `"from"` (RFC 3339, the schedule
/// time it holds from), `"made"` (when it was made), `"first"` (the
/// first request on the new line), `"what"` and `"who"`; left out
/// without.
pub(crate) fn json(s: &mut Vec<u8>, m: &Metrics) -> io::Result<()> {
    if m.markers().is_empty() {
        return Ok(());
    }
    s.extend_from_slice(b",\"markers\":[");
    for (i, x) in m.markers().iter().enumerate() {
        if i > 0 {
            s.push(b',');
        }
        write!(
            s,
            "{{\"from\":\"{}\",\"made\":\"{}\",\"first\":{},\"what\":",
            time::format_rfc3339(x.from),
            time::format_rfc3339(x.at),
            x.first
        )?;
        gojson::push_str(s, &x.what);
        s.extend_from_slice(b",\"who\":");
        gojson::push_str(s, &x.who);
        s.push(b'}');
    }
    s.push(b']');
    Ok(())
}
