//! [`Slo`]: objectives each request must meet (`sweep -slo
//! 'latency<=200ms,first<=100ms,success'`, issue 64). The share of a
//! run's requests meeting every one is its attainment; those a second
//! are its goodput, what SRE error budgets and LLM serving mean by it.

use barrage_model::{duration, Hit};

use crate::ParseError;

/// Per-request objectives.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    /// The longest latency, ns (in the report's view: `-latency`).
    pub latency: Option<u64>,
    /// The longest time to the response's head, ns.
    pub first: Option<u64>,
    /// Whether the request must succeed.
    pub success: bool,
    text: String,
}

impl std::fmt::Display for Slo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for Slo {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Slo, ParseError> {
        let mut slo = Slo {
            latency: None,
            first: None,
            success: false,
            text: s.to_string(),
        };
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part == "success" {
                slo.success = true;
                continue;
            }
            let Some((name, bound)) = part.split_once("<=") else {
                return Err(format!(
                    "-slo {part:?}: want latency<=D, first<=D or success (as 'latency<=200ms,first<=100ms,success')"
                )
                .into());
            };
            let ns = duration::parse(bound.trim())
                .ok()
                .and_then(|ns| u64::try_from(ns).ok())
                .ok_or_else(|| {
                    format!("-slo {part:?}: {bound:?} is not a duration such as 200ms")
                })?;
            match name.trim() {
                "latency" => slo.latency = Some(ns),
                "first" => slo.first = Some(ns),
                other => {
                    return Err(format!(
                        "-slo {part:?}: unknown objective {other:?} (latency, first, success)"
                    )
                    .into())
                }
            }
        }
        if slo.latency.is_none() && slo.first.is_none() && !slo.success {
            return Err(format!("-slo {s:?}: no objective (as 'latency<=200ms,success')").into());
        }
        Ok(slo)
    }
}

impl Slo {
    /// Whether a record met every objective: `ok` whether it succeeded,
    /// `latency` its latency in the report's view.
    pub fn met(&self, hit: &Hit, ok: bool, latency: u64) -> bool {
        (!self.success || ok)
            && self.latency.is_none_or(|l| latency <= l)
            && self
                .first
                .is_none_or(|f| hit.first_byte > 0 && hit.first_byte <= f)
    }
}

/// A run's (or a sweep step's) answer to `-slo`: from the 95% interval
/// of its attainment (the share of its requests meeting every objective)
/// against `-attain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The whole interval is at or above the target.
    Pass,
    /// The whole interval is below it.
    Fail,
    /// The interval straddles it (or the step was too short for one).
    Undecided,
}

impl Decision {
    /// `pass`, `fail` or `undecided`.
    pub fn name(self) -> &'static str {
        match self {
            Decision::Pass => "pass",
            Decision::Fail => "fail",
            Decision::Undecided => "undecided",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_parse_and_judge_each_record() {
        let slo: Slo = "latency<=200ms, first<=100ms,success".parse().unwrap();
        assert_eq!(
            (slo.latency, slo.first, slo.success),
            (Some(200_000_000), Some(100_000_000), true)
        );
        let hit = Hit {
            first_byte: 50_000_000,
            ..Hit::default()
        };
        assert!(slo.met(&hit, true, 150_000_000));
        assert!(!slo.met(&hit, false, 150_000_000), "a failure misses it");
        assert!(!slo.met(&hit, true, 250_000_000), "too slow");
        let late_head = Hit {
            first_byte: 120_000_000,
            ..Hit::default()
        };
        assert!(!slo.met(&late_head, true, 150_000_000));
        for (bad, says) in [
            ("p99<=1ms", "unknown objective"),
            ("latency<200ms", "want latency<=D"),
            ("latency<=fast", "not a duration"),
            ("", "no objective"),
        ] {
            let e = bad.parse::<Slo>().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
