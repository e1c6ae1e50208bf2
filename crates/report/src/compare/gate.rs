//! `compare -fail-on 'p99>+5%,success<-0.1%'`: a regression gate. A
//! condition holds when its figure's change is significant (the interval
//! leaves out 0) and past the bound in the direction written; then the
//! command exits 3.

use super::{Comparison, Figure, Row};

/// One condition, such as `p99>+5%`.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    text: String,
    figure: Figure,
    above: bool,
    bound: f64,
}

/// The conditions of a `-fail-on`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gate(pub Vec<Condition>);

/// A condition that does not parse, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GateError(pub String);

fn figure(name: &str) -> Option<Figure> {
    Some(match name {
        "throughput" => Figure::Throughput,
        "success" => Figure::Success,
        "mean" => Figure::Mean,
        "p50" => Figure::P50,
        "p90" => Figure::P90,
        "p99" => Figure::P99,
        "p99.9" => Figure::P999,
        _ => return None,
    })
}

impl std::str::FromStr for Gate {
    type Err = GateError;

    fn from_str(text: &str) -> Result<Gate, GateError> {
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = |why: &str| GateError(format!("-fail-on {part:?}: {why}"));
            let at = part
                .find(['<', '>'])
                .ok_or_else(|| bad("needs < or >, such as p99>+5%"))?;
            let (name, rest) = part.split_at(at);
            let above = rest.starts_with('>');
            let number = rest[1..].trim_start_matches('=').trim();
            if name.trim() == "max" {
                return Err(bad(
                    "max cannot be gated: a bootstrap does not bound a maximum (gate p99.9)",
                ));
            }
            let figure = figure(name.trim()).ok_or_else(|| {
                bad("unknown figure (use throughput, success, mean, p50, p90, p99 or p99.9)")
            })?;
            let pct = number
                .strip_suffix('%')
                .ok_or_else(|| bad("the bound is a change in %, such as +5% or -0.1%"))?;
            let bound: f64 = pct
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad("the bound is not a number"))?;
            out.push(Condition {
                text: part.to_string(),
                figure,
                above,
                bound: bound / 100.0,
            });
        }
        if out.is_empty() {
            return Err(GateError("-fail-on is empty".into()));
        }
        Ok(Gate(out))
    }
}

impl Condition {
    fn holds(&self, row: &Row) -> bool {
        let significant = row.judged && (row.low > 0.0 || row.high < 0.0);
        significant
            && if self.above {
                row.change > self.bound
            } else {
                row.change < self.bound
            }
    }
}

impl Gate {
    /// The conditions that hold, said in a line each, for every group
    /// and the total.
    pub fn check(&self, c: &Comparison) -> Vec<String> {
        let mut out = Vec::new();
        for g in c.all() {
            for cond in &self.0 {
                let row = &g.rows[cond.figure.index()];
                if cond.holds(row) {
                    let whose = g
                        .key
                        .as_ref()
                        .map(|k| format!(" ({} {k})", c.by.map_or("", |b| b.name())))
                        .unwrap_or_default();
                    out.push(format!(
                        "{}{whose}: {} changed {:+.2}% (95% interval {:+.2}% to {:+.2}%)",
                        cond.text,
                        cond.figure.name(),
                        row.change * 100.0,
                        row.low * 100.0,
                        row.high * 100.0
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_parse_and_bad_ones_name_themselves() {
        let g: Gate = "p99>+5%, success<-0.1%".parse().unwrap();
        assert_eq!(g.0.len(), 2);
        assert!(g.0[0].above && (g.0[0].bound - 0.05).abs() < 1e-12);
        assert!(!g.0[1].above && (g.0[1].bound + 0.001).abs() < 1e-12);
        for (bad, says) in [
            ("p98>5%", "unknown figure"),
            ("p99=5%", "needs < or >"),
            ("p99>5ms", "a change in %"),
            ("p99>x%", "not a number"),
            ("max>+5%", "max cannot be gated"),
        ] {
            let e = bad.parse::<Gate>().unwrap_err().0;
            assert!(e.contains(says) && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn a_condition_holds_only_when_significant_and_past_the_bound() {
        let cond: Gate = "p99>+5%".parse().unwrap();
        let row = |change: f64, low: f64, high: f64| Row {
            figure: Figure::P99,
            base: 1.0,
            new: 1.0 + change,
            change,
            low,
            high,
            noise: 0.0,
            verdict: "same",
            judged: true,
        };
        assert!(cond.0[0].holds(&row(0.08, 0.02, 0.14)));
        assert!(!cond.0[0].holds(&row(0.08, -0.01, 0.17)), "not significant");
        assert!(!cond.0[0].holds(&row(0.03, 0.01, 0.05)), "within the bound");
    }
}
