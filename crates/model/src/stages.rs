//! `-stages`: a rate that changes during the attack, as straight ramps
//! (k6's ramping arrival rate on the command line). `30s:1000,2m:1000,10s:0`
//! climbs from 0 to 1,000/s over 30 s, holds it for 2 min and falls back to
//! 0 over 10 s; a stage of no duration jumps (`0s:200,1m:2000` starts at
//! 200/s).
//!
//! Request *i* is due when the integral of the rate reaches *i*: a pure
//! function of *i*, like a constant rate's `i / rate`, so lateness never
//! moves the schedule.

use std::{fmt, str::FromStr};

use thiserror::Error;

use crate::{duration, rate::parse_decimal, Rate};

/// One straight ramp, in nanoseconds and requests per nanosecond.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ramp {
    /// When it starts, ns from the start of the attack.
    start: f64,
    /// How long it lasts, ns.
    length: f64,
    /// Rate at its start and end, requests per ns.
    from: f64,
    to: f64,
    /// Requests due before it starts.
    before: f64,
}

impl Ramp {
    fn requests(&self) -> f64 {
        (self.from + self.to) / 2.0 * self.length
    }
}

/// A schedule of straight ramps between rates.
#[derive(Debug, Clone, PartialEq)]
pub struct Stages {
    ramps: Vec<Ramp>,
    text: String,
}

/// A `-stages` value that does not parse, with the reason.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("invalid -stages {text:?}: {why}")]
pub struct StagesError {
    /// The whole flag value.
    pub text: String,
    /// What is wrong, naming the stage.
    pub why: String,
}

impl Stages {
    /// When request `i` is due, ns from the start; `None` when the stages
    /// end first.
    pub fn offset_ns(&self, i: u64) -> Option<u64> {
        self.offset_at(i as f64)
    }

    /// When the rate's integral reaches `i` (a count that may fall between
    /// requests: a Poisson arrival's position), ns from the start; `None`
    /// when the stages end first.
    pub fn offset_at(&self, i: f64) -> Option<u64> {
        // The ramp during which the count reaches i (ramps whose rate is 0
        // throughout add no requests and are never chosen).
        let k = self.ramps.partition_point(|r| r.before + r.requests() <= i);
        let r = self.ramps.get(k)?;
        let n = i - r.before;
        // Solve from·t + slope·t²/2 = n for t in [0, length]; written so it
        // neither cancels nor divides by a slope of 0.
        let slope = (r.to - r.from) / r.length;
        let t = if n > 0.0 {
            2.0 * n / (r.from + (r.from * r.from + 2.0 * slope * n).max(0.0).sqrt())
        } else {
            0.0
        };
        let at = r.start + t.min(r.length);
        (at.is_finite() && at < u64::MAX as f64).then_some(at as u64)
    }

    /// The highest rate of any stage, requests per second.
    pub fn peak_per_second(&self) -> f64 {
        self.ramps
            .iter()
            .map(|r| r.from.max(r.to))
            .fold(0.0, f64::max)
            * 1e9
    }

    /// How long the stages last, ns.
    pub fn duration_ns(&self) -> u64 {
        self.ramps.last().map_or(0, |r| (r.start + r.length) as u64)
    }

    /// Requests due over all the stages.
    pub fn requests(&self) -> u64 {
        self.ramps.last().map_or(0, |r| {
            (r.before + r.requests() - 1e-6).ceil().max(0.0) as u64
        })
    }
}

impl FromStr for Stages {
    type Err = StagesError;

    fn from_str(text: &str) -> Result<Self, StagesError> {
        let fail = |why: String| StagesError {
            text: text.to_string(),
            why,
        };
        let mut ramps = Vec::new();
        let (mut start, mut from, mut before) = (0.0, 0.0, 0.0);
        for stage in text.split(',').map(str::trim) {
            let (d, r) = stage.split_once(':').ok_or_else(|| {
                fail(format!(
                    "stage {stage:?} is not DURATION:RATE (e.g. 30s:1000)"
                ))
            })?;
            let length = duration::parse(d.trim())
                .ok()
                .filter(|ns| *ns >= 0)
                .ok_or_else(|| fail(format!("stage {stage:?}: bad duration {d:?}")))?
                as f64;
            let to = rate_per_ns(r.trim()).ok_or_else(|| {
                fail(format!(
                    "stage {stage:?}: bad rate {r:?} (use N, N/s, N/1m; 0 to stop)"
                ))
            })?;
            if length == 0.0 {
                // A jump: the rate changes here, no time passes.
                from = to;
                continue;
            }
            let ramp = Ramp {
                start,
                length,
                from,
                to,
                before,
            };
            before += ramp.requests();
            start += length;
            from = to;
            ramps.push(ramp);
        }
        if ramps.is_empty() {
            return Err(fail("the stages take no time".into()));
        }
        if before < 1.0 {
            return Err(fail("the stages send no request".into()));
        }
        Ok(Stages {
            ramps,
            text: text.to_string(),
        })
    }
}

/// A stage's rate in requests per ns: `-rate`'s syntax, where `0` means no
/// requests (not `-rate`'s unpaced closed model) and infinity is refused.
fn rate_per_ns(s: &str) -> Option<f64> {
    let count = s.split_once('/').map_or(s, |(c, _)| c);
    if parse_decimal(count).is_some_and(|(n, _)| n == 0) {
        return Some(0.0);
    }
    match s.parse::<Rate>().ok()? {
        Rate::Max => None,
        r => Some(r.per_second() / 1e9),
    }
}

impl fmt::Display for Stages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stages(s: &str) -> Stages {
        s.parse().unwrap()
    }

    #[test]
    fn a_held_rate_is_the_constant_schedule() {
        let s = stages("0s:200,2s:200");
        let r: Rate = "200".parse().unwrap();
        for i in 0..400 {
            assert_eq!(s.offset_ns(i), r.offset_ns(i), "{i}");
        }
        assert_eq!(s.offset_ns(400), None);
        assert_eq!(s.requests(), 400);
        assert_eq!(s.duration_ns(), 2_000_000_000);
        assert_eq!(s.peak_per_second(), 200.0);
    }

    #[test]
    fn a_ramp_from_zero_is_due_at_the_root() {
        // 0 -> 1000/s over 1 s: slope 1000/s², n(t) = 500 t², t_i = sqrt(i/500).
        let s = stages("1s:1000");
        assert_eq!(s.requests(), 500);
        for i in [0u64, 1, 2, 50, 125, 499] {
            let want = ((i as f64 / 500.0).sqrt() * 1e9) as i64;
            let got = s.offset_ns(i).unwrap() as i64;
            assert!((got - want).abs() <= 1, "{i}: {got} vs {want}");
        }
        assert_eq!(s.offset_ns(500), None);
    }

    #[test]
    fn ramps_hold_and_fall_back() {
        // Up 0 -> 100/s in 2 s (100 requests), 3 s at 100/s (300), down to
        // 0 in 2 s (100): 500 in all, in order, each stage's share in it.
        let s = stages("2s:100, 3s:100, 2s:0");
        assert_eq!(s.requests(), 500);
        let at: Vec<u64> = (0..500).map(|i| s.offset_ns(i).unwrap()).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "increasing");
        assert_eq!(at[100], 2_000_000_000, "the hold starts at 2 s");
        assert_eq!(at[399], 4_990_000_000);
        // The last one: n = 99 of the fall, 100 t - 25 t² = 99 -> t = 1.8 s.
        assert!((at[499] as i64 - 6_800_000_000).abs() < 10, "{}", at[499]);
        assert_eq!(s.offset_ns(500), None);
        assert_eq!(s.duration_ns(), 7_000_000_000);
    }

    #[test]
    fn a_jump_sets_the_starting_rate() {
        let s = stages("0s:1000/1m, 1m:1000/1m");
        assert_eq!(s.requests(), 1000);
        assert_eq!(s.offset_ns(1), Some(60_000_000));
        assert!((s.peak_per_second() - 1000.0 / 60.0).abs() < 1e-9);
    }

    #[test]
    fn bad_stages_name_the_stage() {
        for (text, why) in [
            ("30s", "stage \"30s\" is not DURATION:RATE (e.g. 30s:1000)"),
            ("30x:10", "stage \"30x:10\": bad duration \"30x\""),
            ("-1s:10", "stage \"-1s:10\": bad duration \"-1s\""),
            (
                "10s:fast",
                "stage \"10s:fast\": bad rate \"fast\" (use N, N/s, N/1m; 0 to stop)",
            ),
            (
                "10s:infinity",
                "stage \"10s:infinity\": bad rate \"infinity\" (use N, N/s, N/1m; 0 to stop)",
            ),
            ("0s:100", "the stages take no time"),
            ("10s:0", "the stages send no request"),
            ("", "stage \"\" is not DURATION:RATE (e.g. 30s:1000)"),
        ] {
            let e = text.parse::<Stages>().unwrap_err();
            assert_eq!(e.why, why, "{text:?}");
            assert_eq!(e.text, text);
        }
    }
}
