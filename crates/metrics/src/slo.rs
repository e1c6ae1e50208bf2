//! [`Slo`]: objectives each request must meet (`sweep -slo
//! 'latency<=200ms,first<=100ms,success'`, issue 64). The share of a
//! run's requests meeting every one is its attainment; those a second
//! are its goodput, what SRE error budgets and LLM serving mean by it:
//! with an LLM stream's `ttft`, `tpot` and `e2e` (`attack -llm`), the
//! goodput of DistServe, as vLLM and AIPerf count it.

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
    /// The longest time to the first token (an LLM stream's first token
    /// event), ns, in the latency's view (from the schedule with
    /// `-latency intended`).
    pub ttft: Option<u64>,
    /// The longest time per output token after the first, ns
    /// ([`crate::tpot`]).
    pub tpot: Option<u64>,
    /// The longest end to end: `latency` under the name LLM tools give it.
    pub e2e: Option<u64>,
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
            ttft: None,
            tpot: None,
            e2e: None,
            text: s.to_string(),
        };
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part == "success" {
                slo.success = true;
                continue;
            }
            let Some((name, bound)) = part.split_once("<=") else {
                return Err(format!(
                    "-slo {part:?}: want latency<=D, first<=D, ttft<=D, tpot<=D, e2e<=D or success (as 'latency<=200ms,first<=100ms,success')"
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
                "ttft" => slo.ttft = Some(ns),
                "tpot" => slo.tpot = Some(ns),
                "e2e" => slo.e2e = Some(ns),
                other => {
                    return Err(format!(
                        "-slo {part:?}: unknown objective {other:?} (latency, first, ttft, tpot, e2e, success)"
                    )
                    .into())
                }
            }
        }
        let bounds = [slo.latency, slo.first, slo.ttft, slo.tpot, slo.e2e];
        if bounds.iter().all(Option::is_none) && !slo.success {
            return Err(format!("-slo {s:?}: no objective (as 'latency<=200ms,success')").into());
        }
        Ok(slo)
    }
}

impl Slo {
    /// Whether a record met every objective: `ok` whether it succeeded,
    /// `latency` its latency in the report's view.
    /// An LLM objective (`ttft`, `tpot`) needs a first token: a record
    /// without one misses it.
    pub fn met(&self, hit: &Hit, ok: bool, latency: u64) -> bool {
        let first_token = hit.events.first().copied();
        // The view's start: the schedule's adds the lag to every time.
        let shift = latency.saturating_sub(hit.latency);
        (!self.success || ok)
            && self.latency.is_none_or(|l| latency <= l)
            && self.e2e.is_none_or(|l| latency <= l)
            && self
                .first
                .is_none_or(|f| hit.first_byte > 0 && hit.first_byte <= f)
            && self
                .ttft
                .is_none_or(|b| first_token.is_some_and(|t| t.saturating_add(shift) <= b))
            && self.tpot.is_none_or(|b| {
                let out = hit.tokens.map_or(hit.event_count, |t| t.output().0);
                first_token.is_some_and(|t| crate::tpot(hit.latency, t, out).is_none_or(|p| p <= b))
            })
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
        // An LLM stream: 150 ms to the first token, 64 tokens 15 ms apart.
        let llm: Slo = "ttft<=200ms,tpot<=20ms,e2e<=2s".parse().unwrap();
        let stream = Hit {
            latency: 150_000_000 + 63 * 15_000_000,
            events: vec![150_000_000],
            event_count: 64,
            ..Hit::default()
        };
        assert!(llm.met(&stream, true, stream.latency));
        assert!(!"ttft<=140ms"
            .parse::<Slo>()
            .unwrap()
            .met(&stream, true, stream.latency));
        assert!(!"tpot<=14ms"
            .parse::<Slo>()
            .unwrap()
            .met(&stream, true, stream.latency));
        // From the schedule, 100 ms late: TTFT 250 ms.
        assert!(!llm.met(&stream, true, stream.latency + 100_000_000));
        let no_token = Hit::default();
        assert!(!llm.met(&no_token, true, 0), "no first token: missed");
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
