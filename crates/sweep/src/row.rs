//! One row per step: what was offered, what came back, and whether the
//! generator kept its schedule; the table in text, JSON or CSV; the knee.

use std::{io, io::Write, time::Duration};

use barrage_metrics::Metrics;

use crate::steps::{number, Load};

/// The figures of one step (its warm-up left out).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What the step offered.
    pub load: Load,
    /// Records counted.
    pub requests: u64,
    /// Requests sent per second.
    pub rate: f64,
    /// Successful responses per second.
    pub throughput: f64,
    /// Successes / requests, 0 to 1.
    pub success: f64,
    /// Latency, ns.
    pub mean: u64,
    /// Latency percentiles, ns.
    pub p50: u64,
    /// See `p50`.
    pub p90: u64,
    /// See `p50`.
    pub p99: u64,
    /// See `p50`.
    pub max: u64,
    /// The 99th percentile of how late requests went out, ns.
    pub lag_p99: u64,
    /// Records with an error.
    pub errors: u64,
    /// barrage could not keep this step's schedule: its figures say what
    /// the generator could do, not what the server could.
    pub generator_bound: bool,
}

/// When a step counts as generator-bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Lag p99 above this (`-lag-limit`, default 10 ms).
    pub lag_p99: Duration,
    /// A send rate below this share of the offered rate (open model).
    pub min_rate_share: f64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            lag_p99: Duration::from_millis(10),
            min_rate_share: 0.95,
        }
    }
}

impl Row {
    /// The step in one line, as `sweep` prints it when the step ends:
    /// `rate=5000: 4999.8/s sent, 4999.8/s ok, 100.00% success, p99 1.2ms`.
    pub fn progress_line(&self) -> String {
        format!(
            "{}: {:.1}/s sent, {:.1}/s ok, {:.2}% success, p99 {}{}",
            self.load.name(),
            self.rate,
            self.throughput,
            self.success * 100.0,
            barrage_model::duration::format(self.p99 as i64),
            if self.generator_bound {
                " (generator-bound)"
            } else {
                ""
            }
        )
    }

    /// The row of a step at `load` whose counted records are in `m`.
    pub fn new(load: Load, m: &Metrics, bounds: Bounds) -> Row {
        let lag_p99 = m.lag().quantile(0.99);
        let rate = m.rate();
        let generator_bound = match load {
            Load::Rate(offered) => {
                lag_p99 > bounds.lag_p99.as_nanos() as u64 || rate < offered * bounds.min_rate_share
            }
            // The closed model has no schedule to fall behind.
            Load::Concurrency(_) => false,
        };
        let l = m.latency();
        Row {
            load,
            requests: m.requests(),
            rate,
            throughput: m.throughput(),
            success: m.success_ratio(),
            mean: l.mean(),
            p50: l.quantile(0.50),
            p90: l.quantile(0.90),
            p99: l.quantile(0.99),
            max: l.max(),
            lag_p99,
            errors: m.failures(),
            generator_bound,
        }
    }
}

/// The knee: the last step after which more load stops paying. Between
/// two steps, the load grows by some share and so should throughput; the
/// knee is the last step before the first one that brings less than half
/// its share of throughput (`(T₂−T₁)/T₁ < ½·(L₂−L₁)/L₁`), or loses more
/// than a point of success, or more than doubles p99 (by a millisecond
/// or more). Generator-bound
/// steps are never the knee: when the step after a good one is
/// generator-bound, the server's knee is not known from this sweep.
pub fn knee(rows: &[Row]) -> Option<usize> {
    if rows
        .first()
        .is_some_and(|r| matches!(r.load, Load::Concurrency(_)))
    {
        return closed_knee(rows);
    }
    for i in 0..rows.len().saturating_sub(1) {
        let (a, b) = (&rows[i], &rows[i + 1]);
        if a.generator_bound {
            return None;
        }
        if b.generator_bound {
            return None;
        }
        let load_gain = (b.load.amount() - a.load.amount()) / a.load.amount();
        let gain = if a.throughput > 0.0 {
            (b.throughput - a.throughput) / a.throughput
        } else {
            0.0
        };
        // Sub-millisecond p99s double on noise alone: a jump must also be
        // a millisecond or more.
        let slower = b.p99 > 2 * a.p99 && b.p99 - a.p99 >= 1_000_000;
        if gain < 0.5 * load_gain || b.success < a.success - 0.01 || slower {
            return Some(i);
        }
    }
    None
}

/// The least extra throughput, as a share of the throughput, that a
/// concurrency step must bring for the knee to lie beyond it.
pub const CLOSED_GAIN: f64 = 0.02;

/// Whether a closed-model sweep was past the server's capacity from its
/// first step: more than a point of its requests failed already (a
/// server that sheds load answers the excess with errors at once).
/// Nothing is marked then: the knee is at or below the first step.
pub fn past_capacity_at_first(rows: &[Row]) -> bool {
    rows.first()
        .is_some_and(|r| matches!(r.load, Load::Concurrency(_)) && r.success < 0.99)
}

/// The knee of concurrency steps. In the closed model each connection
/// waits for its answer, so latency rises with concurrency once the
/// server is saturated (Little's law: latency = connections / throughput)
/// and twice the p99 says nothing. The knee is the last step before the
/// first that brings under [`CLOSED_GAIN`] more throughput, makes mean
/// latency rise faster than concurrency (throughput then falls), or loses
/// more than a point of success; none when the first step was already
/// past capacity ([`past_capacity_at_first`]).
fn closed_knee(rows: &[Row]) -> Option<usize> {
    if past_capacity_at_first(rows) {
        return None;
    }
    for i in 0..rows.len().saturating_sub(1) {
        let (a, b) = (&rows[i], &rows[i + 1]);
        let gain = if a.throughput > 0.0 {
            (b.throughput - a.throughput) / a.throughput
        } else {
            0.0
        };
        let load = b.load.amount() / a.load.amount();
        let slower = a.mean > 0 && b.mean as f64 / a.mean as f64 > load;
        if gain < CLOSED_GAIN || slower || b.success < a.success - 0.01 {
            return Some(i);
        }
    }
    None
}

/// The knee's line under the table (and in the chart's legend).
pub fn knee_line(rows: &[Row]) -> Option<String> {
    if past_capacity_at_first(rows) {
        return Some(format!(
            "knee: at or below the first step ({}: {:.2}% success already)",
            rows[0].load,
            rows[0].success * 100.0
        ));
    }
    let k = knee(rows)?;
    Some(format!(
        "knee: {} ({})",
        rows[k].load,
        knee_rule(&rows[k].load)
    ))
}

/// What made the knee, in words, for steps of `load`'s kind.
pub fn knee_rule(load: &Load) -> &'static str {
    match load {
        Load::Concurrency(_) => "more connections beyond it bring under 2% more throughput, or latency rising faster than connections, or failures",
        Load::Rate(_) => "more load beyond it brings less than half its share of throughput, or failures, or twice the p99",
    }
}

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

/// What a `-find-max` search found, for the table's last line and JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// The highest load that held the conditions.
    Max {
        /// The load.
        load: Load,
        /// The conditions, as typed.
        conditions: String,
    },
    /// Even the first step failed them.
    FirstFails {
        /// The conditions, as typed.
        conditions: String,
    },
    /// barrage could not keep the schedule at this load.
    GeneratorBound {
        /// The load.
        load: Load,
    },
    /// Stopped (Ctrl-C) before an answer.
    Unfinished,
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Found::Max { load, conditions } => {
                let what = match load {
                    Load::Rate(_) => "rate",
                    Load::Concurrency(_) => "concurrency",
                };
                write!(f, "max {what} holding {conditions}: {}", grouped(load))
            }
            Found::FirstFails { conditions } => {
                write!(f, "even the first step fails {conditions}")
            }
            Found::GeneratorBound { load } => write!(
                f,
                "limited by the generator at {}: barrage could not keep the schedule, so the server's limit is not known (try more -cpus, another machine, or -shard)",
                grouped(load)
            ),
            Found::Unfinished => write!(f, "stopped before the search finished"),
        }
    }
}

/// `12,400/s` or `1,200 connections`.
fn grouped(load: &Load) -> String {
    let out = barrage_model::words::thousands(load.amount().round() as u64);
    match load {
        Load::Rate(_) => format!("{out}/s"),
        Load::Concurrency(_) => format!("{out} connections"),
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
    let knee = knee(rows);
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
    match (row.generator_bound, knee == Some(i)) {
        (true, _) => "generator-bound",
        (false, true) => "knee",
        (false, false) => "",
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
    for (i, r) in rows.iter().enumerate() {
        table.push(vec![
            number(r.load.amount()),
            format!("{:.1}", r.rate),
            format!("{:.1}", r.throughput),
            format!("{:.2}%", r.success * 100.0),
        ]);
        let row = table.last_mut().expect("just pushed");
        row.extend(latencies_ms(r));
        row.extend([r.errors.to_string(), note(i, r, knee).to_string()]);
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
    if let Some(line) = knee_line(rows) {
        writeln!(out, "{line}")?;
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
    use serde_json::{json, Value};
    let load_json = |l: &Load| match l {
        Load::Rate(r) => json!({"rate": r}),
        Load::Concurrency(c) => json!({"concurrency": c}),
    };
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
            });
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
        doc["find_max"] = match f {
            Found::Max { load, conditions } => {
                json!({"found": load_json(load), "conditions": conditions, "text": f.to_string()})
            }
            Found::FirstFails { conditions } => {
                json!({"found": null, "conditions": conditions, "text": f.to_string()})
            }
            Found::GeneratorBound { load } => {
                json!({"found": null, "generator_bound": load_json(load), "text": f.to_string()})
            }
            Found::Unfinished => json!({"found": null, "text": f.to_string()}),
        };
    }
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn row(load: f64, throughput: f64, p99_ms: u64) -> Row {
        Row {
            load: Load::Rate(load),
            requests: 1000,
            rate: load,
            throughput,
            success: throughput / load,
            mean: p99_ms * 500_000,
            p50: p99_ms * 400_000,
            p90: p99_ms * 800_000,
            p99: p99_ms * 1_000_000,
            max: p99_ms * 2_000_000,
            lag_p99: 50_000,
            errors: ((1.0 - throughput / load) * 1000.0) as u64,
            generator_bound: false,
        }
    }

    #[test]
    fn the_knee_is_where_more_load_stops_paying() {
        let rows = [
            row(1000.0, 1000.0, 1),
            row(2000.0, 2000.0, 1),
            row(4000.0, 3990.0, 1),
            row(8000.0, 4100.0, 1),
            row(16000.0, 4100.0, 1),
        ];
        assert_eq!(knee(&rows), Some(2));
        // Success falling by more than a point also ends it.
        let mut rows2 = rows[..3].to_vec();
        rows2[2].success = 0.95;
        assert_eq!(knee(&rows2), Some(1));
        // Latency more than doubling too.
        let mut rows3 = rows[..3].to_vec();
        rows3[2].p99 = 5_000_000;
        assert_eq!(knee(&rows3), Some(1));
        // Steady all the way: no knee within the sweep.
        assert_eq!(knee(&rows[..3]), None);
        // A generator-bound step is never the knee, nor what follows it.
        let mut rows4 = rows.to_vec();
        rows4[3].generator_bound = true;
        assert_eq!(knee(&rows4), None);
    }

    fn closed(c: f64, throughput: f64, mean_ms: f64, success: f64) -> Row {
        Row {
            load: Load::Concurrency(c as u64),
            rate: throughput / success,
            throughput,
            success,
            mean: (mean_ms * 1e6) as u64,
            p99: (mean_ms * 3e6) as u64,
            ..row(c, throughput, 1)
        }
    }

    /// Concurrency steps against a server whose throughput rises, peaks
    /// at 200 connections and falls: the knee is the peak, not the first
    /// step whose p99 doubled (latency rises with connections in the
    /// closed model by Little's law). Against a server that sheds load
    /// from the first step (1.9% success at 10 connections, as a capacity
    /// server did), nothing is marked: the knee is at or below the first.
    #[test]
    fn the_closed_models_knee_is_where_throughput_stops_rising() {
        let peaks = [
            closed(10.0, 30_000.0, 0.33, 1.0),
            closed(20.0, 35_000.0, 0.57, 1.0),
            closed(50.0, 38_000.0, 1.3, 1.0),
            closed(100.0, 40_000.0, 2.5, 1.0),
            closed(200.0, 41_000.0, 4.9, 1.0),
            closed(400.0, 39_000.0, 10.3, 1.0),
        ];
        assert_eq!(knee(&peaks), Some(4));
        assert!(!past_capacity_at_first(&peaks));
        assert_eq!(
            knee_line(&peaks).unwrap(),
            "knee: 200 connections (more connections beyond it bring under 2% more throughput, or latency rising faster than connections, or failures)"
        );
        // Still rising at the last step: no knee within the sweep.
        assert_eq!(knee(&peaks[..4]), None);
        // Failures past a point end it too.
        let mut failing = peaks[..3].to_vec();
        failing[2].success = 0.97;
        assert_eq!(knee(&failing), Some(1));
        let shedding = [
            closed(10.0, 1_000.0, 0.2, 0.019),
            closed(20.0, 1_000.0, 0.2, 0.010),
            closed(50.0, 1_000.0, 0.2, 0.004),
        ];
        assert_eq!(knee(&shedding), None);
        assert!(past_capacity_at_first(&shedding));
        assert_eq!(
            knee_line(&shedding).unwrap(),
            "knee: at or below the first step (10 connections: 1.90% success already)"
        );
        let mut json = Vec::new();
        write_table(Format::Json, &shedding, None, &mut json).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert!(v["knee"].is_null());
        assert_eq!(v["knee_at_or_below_first"], true);
    }

    #[test]
    fn the_search_answer_reads_as_one_line() {
        let f = Found::Max {
            load: Load::Rate(12_400.0),
            conditions: "p99<=250ms,success>=99.9%".into(),
        };
        assert_eq!(
            f.to_string(),
            "max rate holding p99<=250ms,success>=99.9%: 12,400/s"
        );
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
