//! The table of a sweep's rows in text, JSON or CSV, with the knee marked
//! and what `-find-max` found.

use serde_json::{json, Value};
use std::{io, io::Write};

use crate::{
    found::{find_max_json, load_json, Found},
    knee::{knee_line, knee_of, past_capacity_at_first},
    row::Row,
    steps::{number, Load},
};

/// How the table is written (`-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns.
    Text,
    /// One JSON object: the steps, the knee, the search's answer.
    Json,
    /// A header and one line per step, for gnuplot and spreadsheets.
    Csv,
}

/// A `-type` that is none of text, json and csv.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sweep table type {0:?} (use text, json or csv)")]
pub struct UnknownFormat(pub String);

impl std::str::FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// Writes the table of `rows` (in step order) with the knee marked and
/// what `-find-max` found, if it ran.
pub fn write_table(
    format: Format,
    rows: &[Row],
    found: Option<&Found>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let knee = knee_of(rows, found);
    match format {
        Format::Text => write_text(rows, knee, found, out),
        Format::Csv => write_csv(rows, knee, out),
        Format::Json => write_json(rows, knee, found, out),
    }
}

/// Mean, p50, p90, p99, max and lag p99, in ms.
fn latencies_ms(r: &Row) -> [String; 6] {
    [r.mean, r.p50, r.p90, r.p99, r.max, r.lag_p99].map(ms)
}

fn note(i: usize, row: &Row, knee: Option<usize>) -> &'static str {
    match (row.generator_bound, knee == Some(i), row.backlog.is_some()) {
        (true, ..) => "generator-bound",
        (false, true, _) => "knee",
        (false, false, true) => "backlog",
        (false, false, false) => "",
    }
}

fn write_text(
    rows: &[Row],
    knee: Option<usize>,
    found: Option<&Found>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let unit = rows.first().map_or("load", |r| r.load.unit());
    let mut table: Vec<Vec<String>> = vec![[
        unit,
        "sent/s",
        "ok/s",
        "success",
        "mean ms",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "lag p99 ms",
        "errors",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()];
    // An LLM sweep's columns, before the note: TTFT and TPOT p99, and
    // output tokens a second.
    let llm = rows.iter().any(|r| r.llm.is_some());
    if llm {
        let note = table[0].pop().unwrap_or_default();
        table[0].extend(["TTFT p99 ms", "TPOT p99 ms", "tokens/s", &note].map(String::from));
    }
    for (i, r) in rows.iter().enumerate() {
        table.push(vec![
            number(r.load.amount()),
            format!("{:.1}", r.rate),
            format!("{:.1}", r.throughput),
            format!("{:.2}%", r.success * 100.0),
        ]);
        let row = table.last_mut().expect("just pushed");
        row.extend(latencies_ms(r));
        row.push(r.errors.to_string());
        if llm {
            row.extend(r.llm.map_or_else(
                || vec![String::new(); 3],
                |l| {
                    vec![
                        ms(l.ttft_p99),
                        ms(l.tpot_p99),
                        format!("{:.1}", l.tokens_per_s),
                    ]
                },
            ));
        }
        row.push(note(i, r, knee).to_string());
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|c| table.iter().map(|row| row[c].len()).max().unwrap_or(0))
        .collect();
    for row in &table {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            // Numbers right-aligned, the note left.
            if c + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:>w$}", w = widths[c]));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    if let Some(line) = knee_line(rows, found) {
        writeln!(out, "{line}")?;
    }
    // Answers that last a second or more (streams, long polls): ok/s is
    // easily read as failures, so what it is over is said.
    if rows.iter().any(|r| r.mean >= 1_000_000_000) {
        writeln!(
            out,
            "ok/s: answers that succeeded a second over the step and the wait for its answers (long answers, such as streams, end after their step: ok/s then reads below sent/s without any failure)"
        )?;
    }
    if let Some(f) = found {
        writeln!(out, "{f}")?;
    }
    Ok(())
}

fn write_csv(rows: &[Row], knee: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{},sent_per_s,ok_per_s,success,mean_ms,p50_ms,p90_ms,p99_ms,max_ms,lag_p99_ms,errors,note",
        match rows.first().map(|r| r.load) {
            Some(Load::Concurrency(_)) => "connections",
            _ => "rate",
        }
    )?;
    for (i, r) in rows.iter().enumerate() {
        writeln!(
            out,
            "{},{:.3},{:.3},{:.6},{},{},{}",
            number(r.load.amount()),
            r.rate,
            r.throughput,
            r.success,
            latencies_ms(r).join(","),
            r.errors,
            note(i, r, knee)
        )?;
    }
    Ok(())
}

fn write_json(
    rows: &[Row],
    knee: Option<usize>,
    found: Option<&Found>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let steps: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut v = load_json(&r.load);
            let fields = json!({
                "requests": r.requests,
                "sent_per_s": r.rate,
                "ok_per_s": r.throughput,
                "success": r.success,
                "latencies": {"mean": r.mean, "50th": r.p50, "90th": r.p90, "99th": r.p99, "max": r.max},
                "lag_99th": r.lag_p99,
                "errors": r.errors,
                "generator_bound": r.generator_bound,
                "backlog": r.backlog.is_some(),
            });
            if let (Some(l), Value::Object(v)) = (r.llm, &mut v) {
                v.insert(
                    "llm".into(),
                    json!({"ttft_99th": l.ttft_p99, "tpot_99th": l.tpot_p99, "tokens_per_s": l.tokens_per_s}),
                );
            }
            if let (Some(s), Value::Object(v)) = (r.slo, &mut v) {
                v.insert("attainment".into(), json!(s.attainment));
                v.insert("goodput".into(), json!(s.goodput));
                v.insert("slo".into(), json!(s.decision.name()));
            }
            if let (Value::Object(v), Value::Object(f)) = (&mut v, fields) {
                v.extend(f);
            }
            v
        })
        .collect();
    let mut doc = json!({
        "steps": steps,
        "knee": knee.map(|k| load_json(&rows[k].load)),
    });
    // Said only when true: the open model's JSON stays as it was.
    if past_capacity_at_first(rows) {
        doc["knee_at_or_below_first"] = json!(true);
    }
    if let Some(f) = found {
        doc["find_max"] = find_max_json(f);
    }
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::tests::row;

    #[test]
    fn long_answers_say_what_ok_per_second_is_over() {
        let said = |p99_ms: u64| {
            let mut out = Vec::new();
            write_table(Format::Text, &[row(10.0, 6.0, p99_ms)], None, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert!(said(4000).contains("ok/s: answers that succeeded a second over the step"));
        assert!(!said(10).contains("ok/s: answers"));
    }

    #[test]
    fn the_search_answer_reads_as_one_line() {
        let f = Found::Max {
            load: Load::Rate(12_400.0),
            above: Some(Load::Rate(13_000.0)),
            conditions: "p99<=250ms,success>=99.9%".into(),
            undecided: false,
            confidence: None,
            throughput: 12_400.0,
        };
        assert_eq!(
            f.to_string(),
            "max rate holding p99<=250ms,success>=99.9%: 12,400/s (between 12,400/s, which held, and 13,000/s, which did not)"
        );
        let v = find_max_json(&f);
        assert_eq!(
            (
                v["load"]["rate"].clone(),
                v["low"]["rate"].clone(),
                v["high"]["rate"].clone()
            ),
            (json!(12_400.0), json!(12_400.0), json!(13_000.0))
        );
        assert_eq!(v["limited_by"], "server");
        let g = Found::GeneratorBound {
            load: Load::Rate(80_000.0),
            held: Some(Load::Rate(40_000.0)),
            conditions: "success>=99.9%".into(),
            why: vec![
                "lag p99 35ms > 10ms".into(),
                "busiest thread 93% of a core (limit 80%)".into(),
            ],
        };
        assert_eq!(
            g.to_string(),
            "max rate holding success>=99.9%: at least 40,000/s; barrage was the limit above it (limited by the generator at 80,000/s: lag p99 35ms > 10ms; busiest thread 93% of a core (limit 80%)), so the server's limit is not known (try more -cpus, another machine, or -shard)"
        );
        let v = find_max_json(&g);
        assert_eq!(
            (v["load"]["rate"].clone(), v["limited_by"].clone()),
            (json!(40_000.0), json!("generator"))
        );
        assert_eq!(v["low"]["rate"], 40_000.0);
        assert_eq!(v["high"]["rate"], 80_000.0);
        assert_eq!(v["bound_by"][0], "lag p99 35ms > 10ms");
        assert_eq!(v["slo"], "success>=99.9%");
    }

    #[test]
    fn tables() {
        let rows = [row(1000.0, 1000.0, 1), row(2000.0, 1200.0, 3)];
        let mut text = Vec::new();
        write_table(Format::Text, &rows, None, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.lines().next().unwrap().starts_with("rate/s"), "{text}");
        assert!(text.contains("knee: 1000/s"), "{text}");
        let mut csv = Vec::new();
        write_table(Format::Csv, &rows, None, &mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        assert_eq!(csv.lines().count(), 3);
        assert!(csv.lines().nth(1).unwrap().ends_with(",knee"), "{csv}");
        let mut json = Vec::new();
        write_table(Format::Json, &rows, None, &mut json).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["knee"]["rate"], 1000.0);
        assert_eq!(v["steps"][1]["latencies"]["99th"], 3_000_000);
    }
}
