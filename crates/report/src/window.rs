use std::io::{self, Write};

use barrage_metrics::Metrics;
use barrage_model::{gojson, time};

use crate::{text::dur, Percentiles};

/// The header line of the live text rows (`report -every`).
pub fn window_header<W: Write>(p: &Percentiles, mut out: W) -> io::Result<()> {
    let mut line = format!(
        "{:<32}{:>10}  {:>10}  {:>8}",
        "Start", "Requests", "Rate", "Success"
    );
    for (_, label) in p.iter() {
        line.push_str(&format!("  {:>10}", format!("p{label}")));
    }
    line.push_str(&format!("  {:>10}  {:>7}  Codes", "Max", "Errors"));
    writeln!(out, "{line}")?;
    out.flush()
}

/// One live text row: the figures of the window starting at `start` (unix
/// ns) and lasting `every` ns (the final window: the time it covers); with streamed answers, `events N first-p50
/// D gap-p50 D` after the codes.
pub fn window_row<W: Write>(
    start: i64,
    every: i64,
    m: &Metrics,
    p: &Percentiles,
    mut out: W,
) -> io::Result<()> {
    let rate = m.requests() as f64 / (every as f64 / 1e9);
    let mut line = format!(
        "{:<32}{:>10}  {:>10.2}  {:>7.2}%",
        time::format_rfc3339(start),
        m.requests(),
        rate,
        m.success_ratio() * 100.0
    );
    for (q, _) in p.iter() {
        line.push_str(&format!("  {:>10}", dur(m.latency().quantile(q))));
    }
    line.push_str(&format!(
        "  {:>10}  {:>7}  ",
        dur(m.latency().max()),
        m.failures()
    ));
    let codes: Vec<String> = m
        .status_codes()
        .iter()
        .map(|(c, n)| format!("{c}:{n}"))
        .collect();
    line.push_str(&codes.join(" "));
    // Streamed answers (`-stream`): labelled figures after the codes, so
    // that the columns stay the same with and without.
    if let Some(e) = m.events() {
        line.push_str(&format!("  events {}", e.total()));
        for (name, d) in [("first", e.first()), ("gap", e.gap())] {
            if d.count() > 0 {
                line.push_str(&format!(" {name}-p50 {}", dur(d.quantile(0.5))));
            }
        }
    }
    // -scrape: each series' last value in the window, labelled after
    // the rest (up and the scrape's own time left to the JSON).
    if let Some(server) = m.server() {
        for x in server.series().filter(|x| !x.is_scrape_own()) {
            let unit = if x.rate { "/s" } else { "" };
            let name = barrage_model::words::printable(&x.name);
            line.push_str(&format!("  {name}{unit} {}", crate::server::value(x.last)));
        }
    }
    line.push_str(&crate::markers::row(m));
    // The window's verdict (none for vegeta's results): its binding
    // checks only, a window being too short for the warnings.
    if let Some(t) = m.trust(&p.percents()) {
        line.push_str("  verdict ");
        line.push_str(&window_verdict(&t));
    }
    writeln!(out, "{line}")?;
    out.flush()
}

/// The line that stands for a final window much shorter than the others
/// (`report -every` after the last row): its records and the time they
/// span, counted in the report that follows.
pub fn window_tail<W: Write>(span: i64, m: &Metrics, mut out: W) -> io::Result<()> {
    writeln!(
        out,
        "(then {} requests in a final {}, too short for a row; the report below counts them)",
        m.requests(),
        dur(span.max(0) as u64)
    )?;
    out.flush()
}

/// One live JSON line: `{"start","end","requests","rate","success",
/// "latencies":{…,"max"},"status_codes","errors"}`, its window lasting
/// `every` ns (the final window: the time it covers).
pub fn window_json<W: Write>(
    start: i64,
    every: i64,
    m: &Metrics,
    p: &Percentiles,
    mut out: W,
) -> io::Result<()> {
    let mut s = Vec::with_capacity(512);
    write!(
        s,
        "{{\"start\":\"{}\",\"end\":\"{}\",\"requests\":{},\"rate\":{},\"success\":{},\"latencies\":{{",
        time::format_rfc3339(start),
        time::format_rfc3339(start.saturating_add(every)),
        m.requests(),
        gojson::float(m.requests() as f64 / (every as f64 / 1e9)),
        gojson::float(m.success_ratio())
    )?;
    for (q, label) in p.iter() {
        write!(s, "\"{label}th\":{},", m.latency().quantile(q))?;
    }
    write!(s, "\"max\":{}}},\"status_codes\":{{", m.latency().max())?;
    crate::json::codes_and_errors(&mut s, m)?;
    s.push(b']');
    // `-stream`'s figures of the window, as the whole report has them.
    crate::json::events(&mut s, m, p)?;
    crate::llm::json(&mut s, m, p)?;
    crate::server::json(&mut s, m)?;
    crate::markers::json(&mut s, m)?;
    crate::json::verdict_object(&mut s, m, p)?;
    s.extend_from_slice(b"}\n");
    out.write_all(&s)?;
    out.flush()
}

/// A window's verdict in words: `valid`, or `NOT VALID: ` and the
/// binding checks that failed, with barrage's CPU when it failed too.
fn window_verdict(t: &barrage_metrics::Trust) -> String {
    if t.valid() {
        return "valid".into();
    }
    let failed: Vec<&str> = t
        .checks
        .iter()
        .filter(|c| !c.ok && (c.binding || matches!(c.name, "cpu" | "wait")))
        .map(|c| c.says.as_str())
        .collect();
    format!("NOT VALID: {}", failed.join("; "))
}
