//! The knee: the last step before more load stops paying, by the open
//! model's rule or the closed model's, and its line under the table.

use crate::{found::Found, row::Row, steps::Load};

/// The knee: the last step after which more load stops paying. Between
/// two steps, the load grows by some share and so should throughput; the
/// knee is the last step before the first one that brings less than half
/// its share of throughput (`(T₂−T₁)/T₁ < ½·(L₂−L₁)/L₁`), or loses more
/// than a point of success, or more than doubles p99 (by a millisecond
/// or more), and the step after that (if any) is as bad against it: one
/// step's wobble (a stall of barrage's under `-lag-limit`, one 503) is
/// not a knee. Generator-bound
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
        let next = rows.get(i + 2).filter(|c| !c.generator_bound);
        if worse(a, b) && next.is_none_or(|c| worse(a, c)) {
            return Some(i);
        }
    }
    None
}

/// Whether open-model step `b` pays less than its load against `a`: less
/// than half its share of throughput, a point less success, twice the
/// p99 (by a millisecond or more: sub-millisecond p99s double on noise
/// alone), or a queue growing through it.
fn worse(a: &Row, b: &Row) -> bool {
    let load_gain = (b.load.amount() - a.load.amount()) / a.load.amount();
    let gain = if a.throughput > 0.0 {
        (b.throughput - a.throughput) / a.throughput
    } else {
        0.0
    };
    let slower = b.p99 > 2 * a.p99 && b.p99 - a.p99 >= 1_000_000;
    gain < 0.5 * load_gain || b.success < a.success - 0.01 || slower || b.backlog.is_some()
}

/// The knee when `-find-max` ran: its answer, the highest load that met
/// the conditions (the knee and the maximum come from the same
/// decisions, and cannot disagree); none when it found none. Without a
/// search, [`knee`].
pub fn knee_of(rows: &[Row], found: Option<&Found>) -> Option<usize> {
    match found {
        Some(Found::Max { load, .. }) => rows.iter().position(|r| r.load == *load),
        Some(_) => None,
        None => knee(rows),
    }
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
pub fn knee_line(rows: &[Row], found: Option<&Found>) -> Option<String> {
    if let Some(f) = found {
        let k = knee_of(rows, Some(f))?;
        return Some(format!(
            "knee: {} (the search's answer: the highest load that held its conditions)",
            rows[k].load
        ));
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        row::tests::row,
        table::{write_table, Format},
    };

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
        // One step's wobble (its p99 up from 0.95 to 2.97 ms and one 503,
        // barrage's own stall) with the next step steady again: no knee.
        let mut wobble = rows.to_vec();
        wobble[1].p99 = 2_970_000;
        wobble[1].success = 0.9995;
        wobble[0].p99 = 950_000;
        assert_eq!(knee(&wobble), Some(2));
        // With a search, the knee is its answer.
        let found = Found::Max {
            load: Load::Rate(4000.0),
            above: Some(Load::Rate(8000.0)),
            conditions: "p99<=10ms".into(),
            undecided: false,
            confidence: None,
            throughput: 4000.0,
        };
        assert_eq!(knee_of(&wobble, Some(&found)), Some(2));
        assert!(knee_line(&wobble, Some(&found))
            .unwrap()
            .starts_with("knee: 4000/s (the search's answer"));
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
            knee_line(&peaks, None).unwrap(),
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
            knee_line(&shedding, None).unwrap(),
            "knee: at or below the first step (10 connections: 1.90% success already)"
        );
        let mut json = Vec::new();
        write_table(Format::Json, &shedding, None, &mut json).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert!(v["knee"].is_null());
        assert_eq!(v["knee_at_or_below_first"], true);
    }
}
