//! The comparison written as text (aligned columns, a block per group)
//! and as JSON (one object: per group, each figure with base, new,
//! change, low, high, noise and verdict).

use std::io::{self, Write};

use barrage_model::gojson;

use super::{Comparison, Figure, Group};
use crate::{text::dur, TabWriter};

/// A figure's value as text: a duration, a rate or a percentage.
pub(crate) fn shown(figure: Figure, v: f64) -> String {
    match figure {
        Figure::Throughput => format!("{v:.2}/s"),
        Figure::Success => format!("{:.2}%", v * 100.0),
        _ => dur(v.max(0.0).round() as u64),
    }
}

/// A change as a signed percentage.
pub(crate) fn pct(v: f64) -> String {
    format!("{:+.2}%", v * 100.0)
}

fn method(c: &Comparison) -> String {
    let runs = |n: usize| {
        if n == 1 {
            "1 run".to_string()
        } else {
            format!("{n} runs")
        }
    };
    let mut s = format!(
        "block bootstrap: {} redraws of runs (of a side's only run, its thirds), then of blocks of send time (at least {}) within them, seed {}; 95% intervals; base {}, new {}",
        c.rounds,
        dur(c.block_width as u64),
        c.seed,
        runs(c.runs.0),
        runs(c.runs.1)
    );
    if c.view != barrage_metrics::LatencyView::Actual {
        s.push_str(&format!("; latency figures: {}", c.view.words()));
    }
    if c.runs.0 < 2 || c.runs.1 < 2 {
        s.push_str(
            " (one run a side: a drift of the machine between the runs cannot be told from a change; give several interleaved runs a side with -- to count it)",
        );
    }
    s
}

fn group_text<W: Write>(tw: &mut TabWriter<W>, g: &Group) -> io::Result<()> {
    writeln!(tw, "Requests\t{}\t{}\t\t\t\t", g.requests.0, g.requests.1)?;
    for r in &g.rows {
        writeln!(
            tw,
            "{}\t{}\t{}\t{}\t[{}, {}]\t±{:.2}%\t{}",
            r.figure.name(),
            shown(r.figure, r.base),
            shown(r.figure, r.new),
            pct(r.change),
            pct(r.low),
            pct(r.high),
            r.noise * 100.0,
            match (r.judged, r.verdict) {
                (true, v) | (false, v @ ("too few records" | super::INVALID_RUN)) => v,
                _ => "not judged",
            }
        )?;
    }
    Ok(())
}

/// Writes the comparison as text.
pub fn compare_text(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    text_into(c, &mut buf)?;
    out.write_all(&buf)
}

fn text_into(c: &Comparison, out: &mut Vec<u8>) -> io::Result<()> {
    writeln!(out, "Method: {}", method(c))?;
    for line in &c.invalid {
        writeln!(out, "Not judged: {}", barrage_model::words::printable(line))?;
    }
    let by = c.by.map_or("", |b| b.name());
    for g in c.all() {
        if c.by.is_some() {
            match &g.key {
                Some(k) => writeln!(out, "=== {by}: {}", barrage_model::words::printable(k))?,
                None => writeln!(out, "=== total")?,
            }
        }
        let mut tw = TabWriter::new(&mut *out);
        writeln!(
            tw,
            "Figure\tBase\tNew\tChange\t95% interval\tNoise\tVerdict"
        )?;
        group_text(&mut tw, g)?;
        tw.flush_table()?;
    }
    for (side, keys) in [("base", &c.only_base), ("new", &c.only_new)] {
        for k in keys {
            writeln!(
                out,
                "Only in {side}: {by} {} (not compared)",
                barrage_model::words::printable(k)
            )?;
        }
    }
    Ok(())
}

fn number(f: Figure, v: f64) -> String {
    if f.is_latency() {
        format!("{}", v.max(0.0).round() as u64)
    } else {
        gojson::float(v)
    }
}

fn group_json(g: &Group, out: &mut Vec<u8>, by: &str) {
    out.push(b'{');
    if let Some(k) = &g.key {
        out.extend_from_slice(b"\"group\":{\"by\":");
        gojson::push_str(out, by);
        out.extend_from_slice(b",\"key\":");
        gojson::push_str(out, k);
        out.extend_from_slice(b"},");
    }
    out.extend_from_slice(
        format!(
            "\"requests\":{{\"base\":{},\"new\":{}}}",
            g.requests.0, g.requests.1
        )
        .as_bytes(),
    );
    for r in &g.rows {
        out.extend_from_slice(
            format!(
                ",\"{}\":{{\"base\":{},\"new\":{},\"change\":{},\"low\":{},\"high\":{},\"noise\":{},\"verdict\":\"{}\",\"judged\":{}}}",
                r.figure.name(),
                number(r.figure, r.base),
                number(r.figure, r.new),
                gojson::float(r.change),
                gojson::float(r.low),
                gojson::float(r.high),
                gojson::float(r.noise),
                r.verdict,
                r.judged
            )
            .as_bytes(),
        );
    }
    out.push(b'}');
}

/// Writes the comparison as one JSON object: `method`, `runs`, `groups`
/// (with `-by`), `total`, `only_in_base`, `only_in_new`. Latencies in ns,
/// throughput per second, success and changes as fractions.
pub fn compare_json(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let by = c.by.map_or("", |b| b.name());
    let mut o = Vec::with_capacity(4096);
    o.extend_from_slice(b"{\"method\":");
    gojson::push_str(&mut o, &method(c));
    o.extend_from_slice(
        format!(
            ",\"seed\":{},\"rounds\":{},\"runs\":{{\"base\":{},\"new\":{}}},\"groups\":[",
            c.seed, c.rounds, c.runs.0, c.runs.1
        )
        .as_bytes(),
    );
    for (i, g) in c.groups.iter().enumerate() {
        if i > 0 {
            o.push(b',');
        }
        group_json(g, &mut o, by);
    }
    o.extend_from_slice(b"],\"total\":");
    group_json(&c.total, &mut o, by);
    for (name, keys) in [
        ("only_in_base", &c.only_base),
        ("only_in_new", &c.only_new),
        ("invalid", &c.invalid),
    ] {
        o.extend_from_slice(format!(",\"{name}\":[").as_bytes());
        for (i, k) in keys.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            gojson::push_str(&mut o, k);
        }
        o.push(b']');
    }
    o.extend_from_slice(b"}\n");
    out.write_all(&o)
}
