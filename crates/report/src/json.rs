use std::io::{self, Write};

use barrage_metrics::{Distribution, Metrics};
use barrage_model::{gojson, time};

use crate::Percentiles;

/// What Go prints for a zero `time.Time` (an empty report's times).
const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

fn time_or_zero(t: Option<i64>) -> String {
    t.map_or_else(|| ZERO_TIME.to_string(), time::format_rfc3339)
}

/// The members of `"status_codes":{…}` (keys sorted as text), then
/// `},"errors":[…` (first-seen order); the caller opens and closes.
pub(crate) fn codes_and_errors(s: &mut Vec<u8>, m: &Metrics) -> io::Result<()> {
    for (i, (code, n)) in m.status_codes().iter().enumerate() {
        if i > 0 {
            s.push(b',');
        }
        write!(s, "\"{code}\":{n}")?;
    }
    s.extend_from_slice(b"},\"errors\":[");
    for (i, e) in m.errors().iter().enumerate() {
        if i > 0 {
            s.push(b',');
        }
        gojson::push_str(s, e);
    }
    Ok(())
}

/// `"50th":…,"90th":…` for each percentile.
fn quantiles(s: &mut Vec<u8>, d: &Distribution, p: &Percentiles) -> io::Result<()> {
    for (q, label) in p.iter() {
        write!(s, "\"{label}th\":{},", d.quantile(q))?;
    }
    Ok(())
}

/// The report as one JSON object (no newline): vegeta's keys in vegeta's
/// order (durations in integer ns, RFC 3339 times, Go's number and string
/// notation), then barrage's own keys (`lag`).
pub fn json_object(m: &Metrics, p: &Percentiles) -> io::Result<Vec<u8>> {
    json_object_of(m, p, None)
}

/// [`json_object`] for one group of `report -by`: a leading
/// `"group":{"by":…,"key":…}` key, then the same keys.
pub fn json_group_object(m: &Metrics, p: &Percentiles, by: &str, key: &str) -> io::Result<Vec<u8>> {
    json_object_of(m, p, Some((by, key)))
}

fn json_object_of(
    m: &Metrics,
    p: &Percentiles,
    group: Option<(&str, &str)>,
) -> io::Result<Vec<u8>> {
    let (bin, bin_mean) = m.bytes_in();
    let (bout, bout_mean) = m.bytes_out();
    let lat = m.latency();
    let mut s = Vec::with_capacity(1024);
    s.push(b'{');
    if let Some((by, key)) = group {
        s.extend_from_slice(b"\"group\":{\"by\":");
        gojson::push_str(&mut s, by);
        s.extend_from_slice(b",\"key\":");
        gojson::push_str(&mut s, key);
        s.extend_from_slice(b"},");
    }
    write!(
        s,
        "\"latencies\":{{\"total\":{},\"mean\":{},",
        lat.total(),
        lat.mean()
    )?;
    quantiles(&mut s, lat, p)?;
    write!(s, "\"max\":{},\"min\":{}}},", lat.max(), lat.min())?;
    if let Some((buckets, counts)) = m.buckets() {
        // Go sorts map keys as strings.
        let mut pairs: Vec<(String, u64)> = buckets
            .bounds()
            .iter()
            .map(|b| b.to_string())
            .zip(counts.iter().copied())
            .collect();
        pairs.sort();
        s.extend_from_slice(b"\"buckets\":{");
        for (i, (k, n)) in pairs.iter().enumerate() {
            if i > 0 {
                s.push(b',');
            }
            write!(s, "\"{k}\":{n}")?;
        }
        s.extend_from_slice(b"},");
    }
    write!(
        s,
        "\"bytes_in\":{{\"total\":{bin},\"mean\":{}}},\"bytes_out\":{{\"total\":{bout},\"mean\":{}}},",
        gojson::float(bin_mean),
        gojson::float(bout_mean)
    )?;
    write!(
        s,
        "\"earliest\":\"{}\",\"latest\":\"{}\",\"end\":\"{}\",\"duration\":{},\"wait\":{},",
        time_or_zero(m.earliest()),
        time_or_zero(m.latest()),
        time_or_zero(m.end()),
        m.duration(),
        m.wait()
    )?;
    write!(
        s,
        "\"requests\":{},\"rate\":{},\"throughput\":{},\"success\":{},\"status_codes\":{{",
        m.requests(),
        gojson::float(m.rate()),
        gojson::float(m.throughput()),
        gojson::float(m.success_ratio())
    )?;
    codes_and_errors(&mut s, m)?;
    let lag = m.lag();
    if lag.count() == 0 && m.requests() > 0 {
        // No record had a scheduled time (vegeta's CSV or JSON): no lag,
        // rather than a lag of 0.
        s.extend_from_slice(b"],\"lag\":null");
    } else {
        write!(s, "],\"lag\":{{\"mean\":{},", lag.mean())?;
        quantiles(&mut s, lag, p)?;
        write!(s, "\"max\":{}}}", lag.max())?;
    }
    if let Some((n, exact)) = m.dropped() {
        write!(s, ",\"dropped\":{{\"count\":{n},\"exact\":{exact}}}")?;
    }
    per_second(&mut s, m)?;
    connections(&mut s, m, p)?;
    events(&mut s, m, p)?;
    crate::llm::json(&mut s, m, p)?;
    sessions(&mut s, m, p)?;
    slo(&mut s, m)?;
    if group.is_none() {
        crate::server::json(&mut s, m)?;
        crate::markers::json(&mut s, m)?;
        intervals(&mut s, m, p)?;
        verdict(&mut s, m, p)?;
    }
    s.push(b'}');
    Ok(s)
}

/// `"slo"` (with `-slo`): `"objectives"` as given, `"attainment"` (the
/// share of records that met them all), `"goodput"` (those a second),
/// `"interval"` (the share's 95% interval, `{"low","high"}`: the block
/// bootstrap's joined with Wilson's), `"target"` (`-attain`) and `"decision"`
/// (`pass`, `fail` or `undecided`).
fn slo(s: &mut Vec<u8>, m: &Metrics) -> io::Result<()> {
    let (Some(slo), Some(met), Some(good)) = (&m.options().slo, m.attainment(), m.goodput()) else {
        return Ok(());
    };
    let attain = m.options().attain;
    s.extend_from_slice(b",\"slo\":{\"objectives\":");
    gojson::push_str(s, &slo.to_string());
    write!(
        s,
        ",\"attainment\":{},\"goodput\":{},\"interval\":",
        gojson::float(met),
        gojson::float(good)
    )?;
    match m.attainment_interval() {
        Some(iv) => write!(
            s,
            "{{\"low\":{},\"high\":{}}}",
            gojson::float(iv.low),
            gojson::float(iv.high)
        )?,
        None => s.extend_from_slice(b"null"),
    }
    let decision = m.decide(attain).map_or("undecided", |d| d.name());
    write!(
        s,
        ",\"target\":{},\"decision\":\"{decision}\"}}",
        gojson::float(attain)
    )?;
    Ok(())
}

/// `"intervals"`: each figure's 95% interval from the run itself (a
/// block bootstrap over its time): `"latencies"` (each percentile's key
/// as in `"latencies"`, and `"mean"`, each `{"low","high"}` in ns),
/// `"rate"` and `"throughput"` (a second), `"blocks"` and `"block_width"`
/// (ns); null when the run is too short (9 blocks, 100 records).
fn intervals(s: &mut Vec<u8>, m: &Metrics, p: &Percentiles) -> io::Result<()> {
    if !m.options().intervals {
        return Ok(());
    }
    let Some(iv) = m.intervals(&p.percents()) else {
        s.extend_from_slice(b",\"intervals\":null");
        return Ok(());
    };
    let ns = |i: barrage_metrics::Interval| {
        format!(
            "{{\"low\":{},\"high\":{}}}",
            i.low.round() as u64,
            i.high.round() as u64
        )
    };
    let per = |i: barrage_metrics::Interval| {
        format!(
            "{{\"low\":{},\"high\":{}}}",
            gojson::float(i.low),
            gojson::float(i.high)
        )
    };
    s.extend_from_slice(b",\"intervals\":{\"latencies\":{");
    for ((_, label), (_, i)) in p.iter().zip(&iv.latencies) {
        write!(s, "\"{label}th\":{},", ns(*i))?;
    }
    write!(
        s,
        "\"mean\":{}}},\"rate\":{},\"throughput\":{},\"blocks\":{},\"block_width\":{}}}",
        ns(iv.mean),
        per(iv.rate),
        per(iv.throughput),
        iv.blocks,
        iv.width
    )
}

/// `"verdict"`: whether to believe the run ([`Metrics::trust`]):
/// `"valid"`, `"line"` (as the text report says it) and `"checks"`, each
/// with its `"name"`, `"figure"` and `"threshold"` in its `"unit"` (`ns`,
/// `share`, `count`, `statistic`, `s`), `"ok"`, `"binding"` (failing it
/// makes the run not valid), `"from"` (seconds into the run where it
/// first failed) and `"says"`; null when no record had a scheduled time.
fn verdict(s: &mut Vec<u8>, m: &Metrics, p: &Percentiles) -> io::Result<()> {
    if let Some(w) = m.warmup() {
        write!(
            s,
            ",\"warmup\":{{\"ns\":{},\"left_out\":{},\"found\":{},\"marked\":{}}}",
            w.ns, w.left_out, w.found, w.marked
        )?;
    }
    verdict_object(s, m, p)
}

/// `,"verdict":{…}` alone (a `-every` window's too).
pub(crate) fn verdict_object(s: &mut Vec<u8>, m: &Metrics, p: &Percentiles) -> io::Result<()> {
    let Some(t) = m.trust(&p.percents()) else {
        s.extend_from_slice(b",\"verdict\":null");
        return Ok(());
    };
    write!(s, ",\"verdict\":{{\"valid\":{},\"line\":", t.valid())?;
    gojson::push_str(s, &t.line());
    s.extend_from_slice(b",\"checks\":[");
    let num = |v: Option<f64>| v.map_or("null".to_string(), gojson::float);
    for (i, c) in t.checks.iter().enumerate() {
        if i > 0 {
            s.push(b',');
        }
        write!(
            s,
            "{{\"name\":\"{}\",\"figure\":{},\"threshold\":{},\"unit\":\"{}\",\"ok\":{},\"binding\":{},\"from\":{},\"says\":",
            c.name,
            num(c.figure),
            gojson::float(c.threshold),
            c.unit.name(),
            c.ok,
            c.binding,
            num(c.from)
        )?;
        gojson::push_str(s, &c.says);
        s.push(b'}');
    }
    s.extend_from_slice(b"]}");
    Ok(())
}

/// `"sessions"`: a flow's sessions (`-format flow`): `"started"`,
/// `"completed"`, `"failed"`, `"interrupted"` (cut after a step by the
/// attack's end and its `-grace`), `"unfinished"` (started, not ended),
/// `"rate"` (started a second), `"interrupted_after"` (step name →
/// sessions cut after it), `"ended"` (step name →
/// sessions that ended there), `"reasons"` (step name → the most common
/// reason) and `"duration"` (completed sessions, ns, with vegeta's latency
/// keys; null when none completed); left out when no record was a flow's.
pub(crate) fn sessions(s: &mut Vec<u8>, m: &Metrics, p: &Percentiles) -> io::Result<()> {
    let Some(x) = m.sessions() else {
        return Ok(());
    };
    write!(
        s,
        ",\"sessions\":{{\"started\":{},\"completed\":{},\"failed\":{},\"interrupted\":{},\"unfinished\":{},\"rate\":{},\"interrupted_after\":{{",
        x.started(),
        x.completed(),
        x.failed(),
        x.interrupted(),
        x.unfinished(),
        gojson::float(x.rate())
    )?;
    for (i, (step, n)) in x.interrupted_at().iter().enumerate() {
        if i > 0 {
            s.push(b',');
        }
        gojson::push_str(s, step);
        write!(s, ":{n}")?;
    }
    s.extend_from_slice(b"},\"ended\":{");
    let ended = x.ended();
    for (i, (step, n, _)) in ended.iter().enumerate() {
        if i > 0 {
            s.push(b',');
        }
        gojson::push_str(s, step);
        write!(s, ":{n}")?;
    }
    s.extend_from_slice(b"},\"reasons\":{");
    for (i, (step, _, why)) in ended.iter().enumerate() {
        if i > 0 {
            s.push(b',');
        }
        gojson::push_str(s, step);
        s.push(b':');
        gojson::push_str(s, why);
    }
    s.push(b'}');
    let d = x.took();
    if d.count() == 0 {
        s.extend_from_slice(b",\"duration\":null}");
    } else {
        write!(s, ",\"duration\":{{\"mean\":{},", d.mean())?;
        quantiles(s, d, p)?;
        write!(s, "\"max\":{},\"min\":{}}}}}", d.max(), d.min())?;
    }
    Ok(())
}

/// `"events"`: streamed answers' events (`-stream`): `"total"`,
/// `"streams"`, `"per_record"` (`"mean"`, `"max"`), `"first"` and `"gap"`
/// (ns, with vegeta's latency keys), `"per_second"` (per stream, the same
/// keys, floats), `"cut"` and `"malformed"` (SSE lines skipped); left out when no record had an event.
pub(crate) fn events(s: &mut Vec<u8>, m: &Metrics, p: &Percentiles) -> io::Result<()> {
    let Some(e) = m.events() else {
        return Ok(());
    };
    write!(
        s,
        ",\"events\":{{\"total\":{},\"streams\":{},\"per_record\":{{\"mean\":{},\"max\":{}}}",
        e.total(),
        e.streams(),
        gojson::float(e.mean()),
        e.most()
    )?;
    for (name, d) in [("first", e.first()), ("gap", e.gap())] {
        if d.count() == 0 {
            write!(s, ",\"{name}\":null")?;
            continue;
        }
        write!(s, ",\"{name}\":{{\"mean\":{},", d.mean())?;
        quantiles(s, d, p)?;
        write!(s, "\"max\":{},\"min\":{}}}", d.max(), d.min())?;
    }
    let r = e.per_second_milli();
    if r.count() == 0 {
        s.extend_from_slice(b",\"per_second\":null");
    } else {
        let f = |v: u64| gojson::float(v as f64 / 1000.0);
        write!(s, ",\"per_second\":{{\"mean\":{},", f(r.mean()))?;
        for (q, label) in p.iter() {
            write!(s, "\"{label}th\":{},", f(r.quantile(q)))?;
        }
        write!(s, "\"max\":{},\"min\":{}}}", f(r.max()), f(r.min()))?;
    }
    write!(s, ",\"cut\":{},\"malformed\":{}}}", e.cut(), e.malformed())?;
    Ok(())
}

/// `"connections"`: requests that opened a connection (`"new"`, their
/// `"share"` and `"rate"` per second) and what opening one cost
/// (`"dns"`, `"connect"`, `"tls"`, each with vegeta's latency keys, or
/// null when none was measured); left out when no record carried its
/// connection.
fn connections(s: &mut Vec<u8>, m: &Metrics, p: &Percentiles) -> io::Result<()> {
    // Absent, not null, where no record carried its connection: the
    // JSON of older streams and vegeta's results stays as it was.
    let Some(c) = m.connections() else {
        return Ok(());
    };
    write!(
        s,
        ",\"connections\":{{\"new\":{},\"share\":{},\"rate\":{}",
        c.new_count(),
        gojson::float(c.new_share()),
        gojson::float(m.connections_rate())
    )?;
    for (name, d) in [("dns", c.dns()), ("connect", c.connect()), ("tls", c.tls())] {
        if d.count() == 0 {
            write!(s, ",\"{name}\":null")?;
            continue;
        }
        write!(
            s,
            ",\"{name}\":{{\"total\":{},\"mean\":{},",
            d.total(),
            d.mean()
        )?;
        quantiles(s, d, p)?;
        write!(s, "\"max\":{},\"min\":{}}}", d.max(), d.min())?;
    }
    s.push(b'}');
    Ok(())
}

/// `"per_second"`: autocannon's per-second samples of answers and bytes.
fn per_second(s: &mut Vec<u8>, m: &Metrics) -> io::Result<()> {
    let Some(f) = m.per_second() else {
        s.extend_from_slice(b",\"per_second\":null");
        return Ok(());
    };
    write!(s, ",\"per_second\":{{\"samples\":{}", f.samples)?;
    for (name, st) in [("requests", f.requests), ("bytes", f.bytes)] {
        write!(
            s,
            ",\"{name}\":{{\"1\":{},\"2.5\":{},\"50\":{},\"97.5\":{},\"mean\":{},\"stdev\":{},\"min\":{}}}",
            gojson::float(st.p1),
            gojson::float(st.p2_5),
            gojson::float(st.p50),
            gojson::float(st.p97_5),
            gojson::float(st.mean),
            gojson::float(st.stdev),
            gojson::float(st.min)
        )?;
    }
    s.push(b'}');
    Ok(())
}

/// Writes the JSON report as one line.
pub fn json<W: Write>(m: &Metrics, p: &Percentiles, mut out: W) -> io::Result<()> {
    let mut s = json_object(m, p)?;
    s.push(b'\n');
    out.write_all(&s)?;
    out.flush()
}
