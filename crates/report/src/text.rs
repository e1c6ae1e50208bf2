use std::io::{self, Write};

use barrage_metrics::Metrics;

pub(crate) use crate::lines::{dur, spread};
use crate::{lines::columns, Percentiles, TabWriter};

/// Writes vegeta's text report. Two additions, both absent on vegeta's own
/// results: a `Lag` line when any request went out after its scheduled time,
/// and other `-percentiles` columns when asked.
pub fn text<W: Write>(m: &Metrics, p: &Percentiles, out: W) -> io::Result<()> {
    let mut tw = TabWriter::new(out);
    let (bin, bin_mean) = m.bytes_in();
    let (bout, bout_mean) = m.bytes_out();
    let labels: Vec<String> = p.iter().map(|(_, l)| l).collect();
    let lat = m.latency();
    writeln!(
        tw,
        "Requests\t[total, rate, throughput]\t{}, {:.2}, {:.2}",
        m.requests(),
        m.rate(),
        m.throughput()
    )?;
    let (d, w) = (m.duration().max(0) as u64, m.wait().max(0) as u64);
    writeln!(
        tw,
        "Duration\t[total, attack, wait]\t{}, {}, {}",
        dur(d + w),
        dur(d),
        dur(w)
    )?;
    spread(&mut tw, "Latencies", lat, p)?;
    if m.lag().max() > 0 {
        writeln!(
            tw,
            "Lag\t[mean, {}, max]\t{}, {}, {}",
            labels.join(", "),
            dur(m.lag().mean()),
            columns(m.lag(), p),
            dur(m.lag().max())
        )?;
    }
    if let Some((n, exact)) = m.dropped() {
        writeln!(
            tw,
            "Dropped\t[due, never sent]\t{}{n} (the generator fell behind: sending stopped at -duration)",
            if exact { "" } else { "~" }
        )?;
    }
    writeln!(tw, "Bytes In\t[total, mean]\t{bin}, {bin_mean:.2}")?;
    writeln!(tw, "Bytes Out\t[total, mean]\t{bout}, {bout_mean:.2}")?;
    writeln!(tw, "Success\t[ratio]\t{:.2}%", m.success_ratio() * 100.0)?;
    write!(tw, "Status Codes\t[code:count]\t")?;
    for (code, n) in m.status_codes() {
        write!(tw, "{code}:{n}  ")?;
    }
    writeln!(tw, "\nError Set:")?;
    // Escaped: a server's words (close reasons, grpc-message, reason
    // phrases) could otherwise forge report lines (issue 29).
    for e in m.errors() {
        writeln!(tw, "{}", barrage_model::words::printable(e))?;
    }
    tw.flush_table()?;
    let mut out = tw.into_inner()?;
    // barrage's own blocks line up with vegeta's columns: its labels are
    // at most 12 wide ("Status Codes"), its brackets as wide as the
    // widest it printed.
    let brackets = [
        "[total, rate, throughput]".len(),
        "[total, attack, wait]".len(),
        format!("[min, mean, {}, max]", labels.join(", ")).len(),
        format!("[mean, {}, max]", labels.join(", ")).len(),
    ];
    let cols = [12 + 2, brackets.into_iter().max().unwrap_or(0) + 2];
    connections(m, p, &cols, &mut out)?;
    events(m, p, &cols, &mut out)?;
    crate::llm::text(m, p, &cols, &mut out)?;
    crate::server::text(m, &cols, &mut out)?;
    crate::markers::text(m, &cols, &mut out)?;
    sessions(m, p, &cols, &mut out)?;
    slo(m, &cols, &mut out)?;
    if m.options().intervals {
        intervals(m, p, &cols, &mut out)?;
    }
    verdict(m, p, &cols, out)
}

/// `-slo`: the share of records that met every objective, those a second,
/// the share's 95% interval and its decision against `-attain`.
fn slo<W: Write>(m: &Metrics, cols: &[usize], out: W) -> io::Result<()> {
    let (Some(slo), Some(met), Some(good)) = (&m.options().slo, m.attainment(), m.goodput()) else {
        return Ok(());
    };
    let attain = m.options().attain;
    let pct = |v: f64| format!("{:.2}%", v * 100.0);
    let interval = m.attainment_interval().map_or(String::new(), |iv| {
        format!("; 95%: {}..{}", pct(iv.low), pct(iv.high))
    });
    let decision = m.decide(attain).map_or("", |d| d.name());
    let mut tw = TabWriter::at_least(out, cols);
    writeln!(
        tw,
        "SLO\t[met, goodput]\t{}, {good:.2}/s ({slo}{interval}; {} needed: {decision})",
        pct(met),
        pct(attain)
    )?;
    tw.flush_table()
}

/// The mean's and each percentile's interval, as `low..high` durations
/// joined by commas (the text report's and the HTML page's).
pub(crate) fn latency_intervals(iv: &barrage_metrics::Intervals) -> String {
    let show =
        |i: &barrage_metrics::Interval| format!("{}..{}", dur(i.low as u64), dur(i.high as u64));
    let each = std::iter::once(&iv.mean).chain(iv.latencies.iter().map(|(_, i)| i));
    each.map(show).collect::<Vec<_>>().join(", ")
}

/// `-intervals`: each figure's 95% interval from the run itself, a line
/// under vegeta's block; nothing when the run is too short.
fn intervals<W: Write>(m: &Metrics, p: &Percentiles, cols: &[usize], out: W) -> io::Result<()> {
    let Some(iv) = m.intervals(&p.percents()) else {
        return Ok(());
    };
    let labels: Vec<String> = p.iter().map(|(_, l)| l).collect();
    let mut tw = TabWriter::at_least(out, cols);
    writeln!(
        tw,
        "Intervals\t[95%: mean, {}]\t{}",
        labels.join(", "),
        latency_intervals(&iv)
    )?;
    writeln!(
        tw,
        "\t[95%: rate, throughput]\t{:.2}..{:.2}, {:.2}..{:.2} (block bootstrap: {} blocks of {})",
        iv.rate.low,
        iv.rate.high,
        iv.throughput.low,
        iv.throughput.high,
        iv.blocks,
        dur(iv.width.max(0) as u64)
    )?;
    tw.flush_table()
}

/// The verdict on the run ([`Metrics::trust`]) in a line, then a line per
/// warning; nothing when no record had a scheduled time (vegeta's own
/// results: the report stays vegeta's to the byte).
fn verdict<W: Write>(m: &Metrics, p: &Percentiles, cols: &[usize], out: W) -> io::Result<()> {
    let Some(t) = m.trust(&p.percents()) else {
        return Ok(());
    };
    let mut tw = TabWriter::at_least(out, &cols[..1]);
    if let Some(w) = m.warmup() {
        writeln!(tw, "Warm-up\t{}", w.said())?;
    }
    writeln!(tw, "Verdict\t{}", t.line())?;
    for w in t.warnings() {
        writeln!(tw, "Warning\t{}", w.says)?;
    }
    tw.flush_table()
}

/// barrage's lines for a flow's sessions (`-format flow`), aligned on
/// their own: how many started, completed, failed and were left
/// unfinished by the attack's end, sessions a second, how long a
/// completed one took, and each step where sessions ended with its most
/// common reason. Nothing when no record was a flow's.
fn sessions<W: Write>(m: &Metrics, p: &Percentiles, cols: &[usize], out: W) -> io::Result<()> {
    let Some(x) = m.sessions() else {
        return Ok(());
    };
    let mut tw = TabWriter::at_least(out, cols);
    writeln!(
        tw,
        "Sessions\t[started, completed, failed, interrupted, unfinished, per second]\t{}, {}, {}, {}, {}, {:.2}",
        x.started(),
        x.completed(),
        x.failed(),
        x.interrupted(),
        x.unfinished(),
        x.rate()
    )?;
    if x.took().count() > 0 {
        spread(&mut tw, "Session time", x.took(), p)?;
    }
    for (step, n) in x.interrupted_at() {
        writeln!(
            tw,
            "Interrupted after {}\t[sessions]\t{n} (the end and its -grace came first)",
            barrage_model::words::printable(step)
        )?;
    }
    for (step, n, why) in x.ended() {
        writeln!(
            tw,
            "Ended at {}\t[sessions, most common reason]\t{n}, {}",
            barrage_model::words::printable(step),
            barrage_model::words::printable(why)
        )?;
    }
    tw.flush_table()
}

/// barrage's lines for streamed answers (`-stream`), aligned on their
/// own: the events, the time to the first, the gaps between them and the
/// events a second per stream. Nothing when no record had an event.
fn events<W: Write>(m: &Metrics, p: &Percentiles, cols: &[usize], out: W) -> io::Result<()> {
    let Some(e) = m.events() else {
        return Ok(());
    };
    let mut tw = TabWriter::at_least(out, cols);
    writeln!(
        tw,
        "Events\t[total, streams, per stream mean, max, cut, malformed lines]\t{}, {}, {:.2}, {}, {}, {}",
        e.total(),
        e.streams(),
        e.mean(),
        e.most(),
        e.cut(),
        e.malformed()
    )?;
    if e.first().count() > 0 {
        spread(&mut tw, "First event", e.first(), p)?;
    }
    if e.gap().count() > 0 {
        spread(&mut tw, "Event gaps", e.gap(), p)?;
    }
    let rates = e.per_second_milli();
    if rates.count() > 0 {
        let labels: Vec<String> = p.iter().map(|(_, l)| l).collect();
        let per = |v: u64| format!("{:.2}", v as f64 / 1000.0);
        let cols: Vec<String> = p.iter().map(|(q, _)| per(rates.quantile(q))).collect();
        writeln!(
            tw,
            "Events/s\t[min, mean, {}, max] per stream\t{}, {}, {}, {}",
            labels.join(", "),
            per(rates.min()),
            per(rates.mean()),
            cols.join(", "),
            per(rates.max())
        )?;
    }
    tw.flush_table()
}

/// barrage's own lines below vegeta's report, aligned on their own (so
/// that vegeta's stay byte for byte): how many requests opened a
/// connection, and what opening one cost. Nothing when no record carried
/// its connection (older streams, CSV, vegeta's results).
fn connections<W: Write>(m: &Metrics, p: &Percentiles, cols: &[usize], out: W) -> io::Result<()> {
    let Some(c) = m.connections() else {
        return Ok(());
    };
    let mut tw = TabWriter::at_least(out, cols);
    writeln!(
        tw,
        "Connections\t[new, of requests, per second]\t{}, {:.2}%, {:.2}",
        c.new_count(),
        c.new_share() * 100.0,
        m.connections_rate()
    )?;
    for (name, d) in [("DNS", c.dns()), ("Connect", c.connect()), ("TLS", c.tls())] {
        if d.count() > 0 {
            spread(&mut tw, name, d, p)?;
        }
    }
    tw.flush_table()
}
