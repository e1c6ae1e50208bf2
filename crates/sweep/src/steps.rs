//! The loads a sweep steps through: `-rates 1000,2000,5000`,
//! `-rates 1000..20000/+1000` (linear), `-rates 500..64000/x2`
//! (geometric), and the same for `-concurrency`.

use std::fmt;

/// What a step offers the server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// The open model: requests per second.
    Rate(f64),
    /// The closed model: connections with a request in flight each.
    Concurrency(u64),
}

impl Load {
    /// The amount, as a number (requests per second, or connections).
    pub fn amount(&self) -> f64 {
        match *self {
            Load::Rate(r) => r,
            Load::Concurrency(c) => c as f64,
        }
    }

    /// The same model at `amount` (rounded to a whole connection, or a
    /// rate to a number its name writes exactly).
    pub fn with_amount(&self, amount: f64) -> Load {
        match self {
            Load::Rate(_) => Load::Rate(clean(amount)),
            Load::Concurrency(_) => Load::Concurrency(amount.round().max(1.0) as u64),
        }
    }

    /// The step's attack name in the stream: `rate=5000`, `c=200`.
    pub fn name(&self) -> String {
        match *self {
            Load::Rate(r) => format!("rate={}", number(r)),
            Load::Concurrency(c) => format!("c={c}"),
        }
    }

    /// Reads a step's attack name back ([`Load::name`]).
    pub fn from_name(name: &str) -> Option<Load> {
        if let Some(r) = name.strip_prefix("rate=") {
            return r.parse().ok().filter(|r: &f64| *r > 0.0).map(Load::Rate);
        }
        let c: u64 = name.strip_prefix("c=")?.parse().ok()?;
        (c > 0).then_some(Load::Concurrency(c))
    }

    /// The unit a table heads the column with.
    pub fn unit(&self) -> &'static str {
        match self {
            Load::Rate(_) => "rate/s",
            Load::Concurrency(_) => "connections",
        }
    }
}

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Load::Rate(r) => write!(f, "{}/s", number(r)),
            Load::Concurrency(c) => write!(f, "{c} connections"),
        }
    }
}

/// A rate as its shortest exact decimal: `5000`, `12.5`, `0.0000001`.
/// It reads back as the same number, so a step's name keeps its rate, and
/// it is never `0` (issue 29: 0.0000001 written with 3 decimals became
/// `0`, which the rate parser reads as "as fast as possible": a flood).
/// Float noise is taken out where a step is made ([`clean`]).
pub(crate) fn number(v: f64) -> String {
    format!("{v}")
}

/// `v` without float noise from the sums and products of ranges: to
/// 3 decimals at 1 and above, to 6 significant digits below (never to 0).
pub(crate) fn clean(v: f64) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return v;
    }
    // At most 9 decimals: what a rate may have.
    let rounded = if v >= 1.0 {
        (v * 1000.0).round() / 1000.0
    } else {
        let scale = 10f64.powi((5 - v.log10().floor() as i32).min(9));
        (v * scale).round() / scale
    };
    if rounded > 0.0 {
        rounded
    } else {
        v
    }
}

/// A `-rates` or `-concurrency` value that does not parse, with why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag} {text:?}: {why}")]
pub struct StepsError {
    /// The flag as typed.
    pub flag: &'static str,
    /// Its value.
    pub text: String,
    /// What is wrong.
    pub why: String,
}

/// Most steps one sweep may list (a range that would make more is a
/// mistake, such as `1..1000000/+1`).
pub const MAX_STEPS: usize = 1000;

/// Parses `-rates` (`concurrency` false) or `-concurrency`: a comma list
/// of values or ranges `A..B/+D` (A, A+D, … up to B) and `A..B/xK` (A,
/// A·K, … up to B). Steps must be positive and rising.
pub fn parse(text: &str, concurrency: bool) -> Result<Vec<Load>, StepsError> {
    let flag = if concurrency {
        "-concurrency"
    } else {
        "-rates"
    };
    let bad = |why: String| StepsError {
        flag,
        text: text.to_string(),
        why,
    };
    let value = |s: &str| -> Result<f64, StepsError> {
        let v: f64 = s
            .trim()
            .trim_end_matches("/s")
            .parse()
            .map_err(|_| bad(format!("{:?} is not a number", s.trim())))?;
        if !v.is_finite() {
            return Err(bad(format!("{:?} is too large", s.trim())));
        }
        if v <= 0.0 {
            return Err(bad(format!("{:?}: steps must be above 0", s.trim())));
        }
        if concurrency && v.fract() != 0.0 {
            return Err(bad(format!("{:?} is not a whole number", s.trim())));
        }
        Ok(v)
    };
    let mut out: Vec<f64> = Vec::new();
    for part in text.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(bad("an empty step".into()));
        }
        let Some((from, rest)) = part.split_once("..") else {
            out.push(value(part)?);
            continue;
        };
        let (to, by) = rest.split_once('/').ok_or_else(|| {
            bad(format!(
                "{part:?}: a range needs a step, as in 1000..5000/+1000 or 500..8000/x2"
            ))
        })?;
        let (from, to) = (value(from)?, value(to)?);
        if to < from {
            return Err(bad(format!("{part:?} runs downwards")));
        }
        let by = by.trim();
        let (add, factor) = if let Some(d) = by.strip_prefix('+') {
            (value(d)?, 1.0)
        } else if let Some(k) = by.strip_prefix(['x', '*']) {
            let k = value(k)?;
            if k <= 1.0 {
                return Err(bad(format!("{part:?}: a factor must be above 1")));
            }
            (0.0, k)
        } else {
            return Err(bad(format!(
                "{part:?}: the step {by:?} is neither +N nor xN"
            )));
        };
        let mut v = from;
        // A little slack, so that 0.1 steps reach their end despite float sums.
        while v <= to * (1.0 + 1e-9) {
            out.push(clean(v));
            if out.len() > MAX_STEPS {
                return Err(bad(format!("more than {MAX_STEPS} steps")));
            }
            v = v * factor + add;
        }
    }
    if out.len() > MAX_STEPS {
        return Err(bad(format!("more than {MAX_STEPS} steps")));
    }
    if let Some(w) = out.windows(2).find(|w| w[1] <= w[0]) {
        return Err(bad(format!(
            "steps must rise: {} comes after {}",
            number(w[1]),
            number(w[0])
        )));
    }
    // Each rate as the attack will read it: a step barrage cannot pace
    // is refused here, with the flag, not when its turn comes.
    if !concurrency {
        if let Some(v) = out.iter().find(|v| {
            !matches!(
                number(**v).parse::<barrage_model::Rate>(),
                Ok(barrage_model::Rate::Paced { .. })
            )
        }) {
            return Err(bad(format!(
                "{} is not a rate barrage can pace (at most 9 decimals, below 2^64)",
                number(*v)
            )));
        }
    }
    Ok(out
        .into_iter()
        .map(|v| {
            if concurrency {
                Load::Concurrency(v as u64)
            } else {
                Load::Rate(v)
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(s: &str) -> Vec<f64> {
        parse(s, false).unwrap().iter().map(Load::amount).collect()
    }

    /// Issue 29: a tiny rate was named `rate=0` and run unpaced.
    #[test]
    fn a_name_keeps_its_rate_exactly() {
        for typed in ["0.0000001", "0.25", "12.5", "5000", "1234.5678"] {
            let load = parse(typed, false).unwrap()[0];
            assert_eq!(load.name(), format!("rate={typed}"));
            assert_eq!(Load::from_name(&load.name()), Some(load));
        }
        // Float noise from a range's products is gone from the steps.
        let names: Vec<String> = parse("500..700/x1.1", false)
            .unwrap()
            .iter()
            .map(Load::name)
            .collect();
        assert_eq!(names, ["rate=500", "rate=550", "rate=605", "rate=665.5"]);
        assert_eq!(
            Load::Rate(1.0).with_amount(0.00000012345678).name(),
            "rate=0.000000123"
        );
        assert_eq!(
            Load::Rate(1.0).with_amount(2500.00000001).name(),
            "rate=2500"
        );
        assert_eq!(
            Load::Rate(1.0).with_amount(0.0000123456).name(),
            "rate=0.000012346"
        );
        // What the attack cannot pace is refused with the flag.
        for bad in ["0.0000000001", "1e300", "1e400"] {
            assert!(parse(bad, false).is_err(), "{bad}");
        }
    }

    #[test]
    fn lists_and_ranges() {
        assert_eq!(rates("1000,2000,5000"), [1000.0, 2000.0, 5000.0]);
        assert_eq!(rates("1000..4000/+1000"), [1000.0, 2000.0, 3000.0, 4000.0]);
        assert_eq!(rates("500..4000/x2"), [500.0, 1000.0, 2000.0, 4000.0]);
        assert_eq!(rates("500..5000/x2"), [500.0, 1000.0, 2000.0, 4000.0]);
        assert_eq!(
            rates("100, 200..400/+100, 1000"),
            [100.0, 200.0, 300.0, 400.0, 1000.0]
        );
        assert_eq!(rates("0.5..1.5/+0.5"), [0.5, 1.0, 1.5]);
        assert_eq!(
            parse("200,500..1000/x2", true).unwrap(),
            [
                Load::Concurrency(200),
                Load::Concurrency(500),
                Load::Concurrency(1000)
            ]
        );
    }

    #[test]
    fn bad_steps_say_why() {
        for (text, concurrency, why) in [
            ("", false, "an empty step"),
            ("1000,,2000", false, "an empty step"),
            ("2000,1000", false, "steps must rise"),
            ("1000,1000", false, "steps must rise"),
            ("0,1000", false, "above 0"),
            ("-5", false, "above 0"),
            ("lots", false, "not a number"),
            ("5000..1000/+1000", false, "downwards"),
            ("1000..5000", false, "needs a step"),
            ("1000..5000/x1", false, "above 1"),
            ("1000..5000/-1", false, "neither"),
            ("1..100000/+1", false, "more than 1000 steps"),
            ("1.5", true, "whole number"),
        ] {
            let e = parse(text, concurrency).unwrap_err().to_string();
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }

    #[test]
    fn names_round_trip() {
        for l in [Load::Rate(5000.0), Load::Rate(12.5), Load::Concurrency(200)] {
            assert_eq!(Load::from_name(&l.name()), Some(l));
        }
        assert_eq!(Load::from_name("rate=5000 warmup"), None);
        assert_eq!(Load::from_name("other"), None);
    }
}
