//! The scraped server's block of the text and JSON reports (`attack
//! -scrape`, issue 66): each series beside the load's figures, on the
//! same clock.

use std::io::{self, Write};

use barrage_metrics::{Metrics, ServerSeries};
use barrage_model::gojson;

use crate::TabWriter;

/// A series' name in the text report: with its endpoint when several
/// were scraped, `/s` after a counter's rate.
fn shown(s: &ServerSeries, sources: usize) -> String {
    let mut name = barrage_model::words::printable(&s.name).into_owned();
    if s.rate {
        name.push_str(" /s");
    }
    if sources > 1 {
        name = format!("{} {name}", barrage_model::words::redacted(&s.source));
    }
    name
}

/// A value as the text report shows it: integers whole, others to 4
/// significant digits.
pub(crate) fn value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
        format!("{v:.digits$}")
    }
}

/// The text lines: a line a series, `[min, mean, max, last]`; nothing
/// without samples.
pub(crate) fn text<W: Write>(m: &Metrics, cols: &[usize], out: W) -> io::Result<()> {
    let Some(server) = m.server() else {
        return Ok(());
    };
    let mut tw = TabWriter::at_least(out, cols);
    let sources = server.sources();
    writeln!(tw, "Server\t[min, mean, max, last] scraped\t")?;
    for s in server.series() {
        writeln!(
            tw,
            "  {}\t{}, {}, {}, {}\t",
            shown(s, sources),
            value(s.min),
            value(s.mean()),
            value(s.max),
            value(s.last)
        )?;
    }
    tw.flush_table()
}

/// `"server"`: a list of series, each `"source"`, `"name"`, `"rate"` (a
/// counter's rate a second), `"samples"`, `"min"`, `"mean"`, `"max"`,
/// `"last"` and `"points"` (`[unix ns, value]`, at most
/// [`barrage_metrics::MAX_POINTS`]); left out without samples.
pub(crate) fn json(s: &mut Vec<u8>, m: &Metrics) -> io::Result<()> {
    let Some(server) = m.server() else {
        return Ok(());
    };
    s.extend_from_slice(b",\"server\":[");
    for (i, x) in server.series().enumerate() {
        if i > 0 {
            s.push(b',');
        }
        s.extend_from_slice(b"{\"source\":");
        gojson::push_str(s, &x.source);
        s.extend_from_slice(b",\"name\":");
        gojson::push_str(s, &x.name);
        write!(
            s,
            ",\"rate\":{},\"samples\":{},\"min\":{},\"mean\":{},\"max\":{},\"last\":{},\"points\":[",
            x.rate,
            x.count,
            gojson::float(x.min),
            gojson::float(x.mean()),
            gojson::float(x.max),
            gojson::float(x.last)
        )?;
        for (k, (at, v)) in x.points.iter().enumerate() {
            let comma = if k > 0 { "," } else { "" };
            write!(s, "{comma}[{at},{}]", gojson::float(*v))?;
        }
        s.extend_from_slice(b"]}");
    }
    s.push(b']');
    Ok(())
}
