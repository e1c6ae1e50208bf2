use std::{fmt, str::FromStr};

use thiserror::Error;

use crate::duration;

/// A request rate: `N` hits per `per` on an absolute schedule, or
/// [`Rate::Max`] (as fast as the workers allow, a closed model).
///
/// Request *i* is due `offset_ns(i)` after the start, computed exactly in
/// integers from the rate as written, so the schedule never drifts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    /// No pacing: each free worker sends at once (`-rate 0`, `-rate infinity`).
    Max,
    /// `hits` per `per_ns`, with `hits = hits_num / hits_den` (decimals kept
    /// exactly as a fraction).
    Paced {
        /// Numerator of the hit count.
        hits_num: u64,
        /// Denominator of the hit count (a power of ten).
        hits_den: u64,
        /// The period the count applies to, nanoseconds.
        per_ns: u64,
    },
}

/// Why a rate did not parse.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("invalid rate {0:?} (use N, N/s, N/1m, N/500ms, 0 or infinity)")]
pub struct RateError(pub String);

impl Rate {
    /// When request `i` is due, nanoseconds after the start; `None` for
    /// [`Rate::Max`] or when the offset would not fit in 64 bits.
    pub fn offset_ns(&self, i: u64) -> Option<u64> {
        self.offset_at((i as u128) << 32)
    }

    /// When the rate's integral reaches `position` (units of
    /// [`POSITION_ONE`](crate::POSITION_ONE) requests: a Poisson arrival's
    /// place in request time), nanoseconds after the start; `None` as for
    /// [`Rate::offset_ns`].
    pub fn offset_at(&self, position: u128) -> Option<u64> {
        match *self {
            Rate::Max => None,
            Rate::Paced {
                hits_num,
                hits_den,
                per_ns,
            } => {
                let v = position
                    .checked_mul(per_ns as u128)?
                    .checked_mul(hits_den as u128)?
                    / (hits_num as u128 * crate::POSITION_ONE);
                u64::try_from(v).ok()
            }
        }
    }

    /// Requests per second (infinite for [`Rate::Max`]).
    pub fn per_second(&self) -> f64 {
        match *self {
            Rate::Max => f64::INFINITY,
            Rate::Paced {
                hits_num,
                hits_den,
                per_ns,
            } => hits_num as f64 / hits_den as f64 * 1e9 / per_ns as f64,
        }
    }
}

impl FromStr for Rate {
    type Err = RateError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = || RateError(text.to_string());
        let t = text.trim();
        if t.eq_ignore_ascii_case("infinity") || t.eq_ignore_ascii_case("inf") {
            return Ok(Rate::Max);
        }
        let (count, per) = t.split_once('/').unwrap_or((t, "1s"));
        let (hits_num, hits_den) = parse_decimal(count).ok_or_else(err)?;
        if hits_num == 0 {
            return Ok(Rate::Max);
        }
        // `N/s` means `N/1s`, as in vegeta.
        let per = if per.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            per.to_string()
        } else {
            format!("1{per}")
        };
        let per_ns = duration::parse(&per).map_err(|_| err())?;
        if per_ns <= 0 {
            return Err(err());
        }
        Ok(Rate::Paced {
            hits_num,
            hits_den,
            per_ns: per_ns as u64,
        })
    }
}

/// `"2.5"` → `(25, 10)`; rejects signs, exponents and empty parts.
pub(crate) fn parse_decimal(s: &str) -> Option<(u64, u64)> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if (int.is_empty() && frac.is_empty()) || frac.len() > 9 {
        return None;
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let den = 10u64.pow(frac.len() as u32);
    let int_v: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let frac_v: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    Some((int_v.checked_mul(den)?.checked_add(frac_v)?, den))
}

/// `-rate`'s default: 50 a second, as in vegeta.
pub const DEFAULT_RATE: Rate = Rate::Paced {
    hits_num: 50,
    hits_den: 1,
    per_ns: 1_000_000_000,
};

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Rate::Max => f.write_str("infinity"),
            Rate::Paced {
                hits_num,
                hits_den,
                per_ns,
            } => {
                let count = hits_num as f64 / hits_den as f64;
                write!(f, "{count}/{}", duration::format(per_ns as i64))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_vegeta_rates() {
        let cases: &[(&str, f64)] = &[
            ("50", 50.0),
            ("50/s", 50.0),
            ("50/1s", 50.0),
            ("60/1m", 1.0),
            ("5/500ms", 10.0),
            ("2.5/s", 2.5),
            ("1000/m", 1000.0 / 60.0),
        ];
        for (text, want) in cases {
            let r: Rate = text.parse().unwrap();
            assert!(
                (r.per_second() - want).abs() < 1e-9,
                "{text}: {}",
                r.per_second()
            );
        }
        assert_eq!("0".parse::<Rate>(), Ok(Rate::Max));
        assert_eq!("infinity".parse::<Rate>(), Ok(Rate::Max));
    }

    #[test]
    fn rejects_bad_rates() {
        for text in [
            "", "-5", "abc", "5/", "5/0s", "5/-1s", "1e3", "5/xs", "1.2.3",
        ] {
            assert!(text.parse::<Rate>().is_err(), "{text:?} should not parse");
        }
    }

    #[test]
    fn schedule_is_exact_without_drift() {
        let r: Rate = "200/1s".parse().unwrap();
        assert_eq!(r.offset_ns(0), Some(0));
        assert_eq!(r.offset_ns(1), Some(5_000_000));
        assert_eq!(r.offset_ns(399), Some(1_995_000_000));
        let third: Rate = "3/1s".parse().unwrap();
        // 1/3 s is not a whole number of ns; the millionth hit is still exact.
        assert_eq!(third.offset_ns(3_000_000), Some(1_000_000 * 1_000_000_000));
        assert_eq!(third.offset_ns(1), Some(333_333_333));
        let decimal: Rate = "2.5/1s".parse().unwrap();
        assert_eq!(decimal.offset_ns(5), Some(2_000_000_000));
    }
}
