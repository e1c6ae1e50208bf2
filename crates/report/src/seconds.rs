//! `report -type seconds`: autocannon's per-second table, for its users.
//! vegeta's text layout is left as it is.

use std::io::{self, Write};

use barrage_metrics::{Metrics, SampleStats};

/// A sample figure as autocannon prints it: whole numbers, else two
/// decimals.
fn figure(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Writes the Req/Sec and Bytes/Sec rows (1%, 2.5%, 50%, 97.5%, average,
/// standard deviation, minimum over the whole seconds of the attack).
pub fn seconds(m: &Metrics, out: &mut dyn Write) -> io::Result<()> {
    let Some(f) = m.per_second() else {
        return writeln!(out, "no whole second of answers to sample");
    };
    let row = |name: &str, s: SampleStats| -> Vec<String> {
        [s.p1, s.p2_5, s.p50, s.p97_5, s.mean, s.stdev, s.min]
            .iter()
            .map(|v| figure(*v))
            .fold(vec![name.to_string()], |mut r, v| {
                r.push(v);
                r
            })
    };
    let table = [
        ["Stat", "1%", "2.5%", "50%", "97.5%", "Avg", "Stdev", "Min"]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>(),
        row("Req/Sec", f.requests),
        row("Bytes/Sec", f.bytes),
    ];
    let widths: Vec<usize> = (0..8)
        .map(|c| table.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for r in &table {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, cell)| format!("{cell:<w$}", w = widths[c]))
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
    }
    writeln!(
        out,
        "\n{} whole seconds sampled; {} requests",
        f.samples,
        m.requests()
    )
}
