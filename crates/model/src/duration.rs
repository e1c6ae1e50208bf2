//! Go-compatible durations: `time.ParseDuration` and `Duration.String`, so
//! flags accept what vegeta accepts and reports print what vegeta prints.
//! All values are nanoseconds in an `i64`.

use thiserror::Error;

/// Nanoseconds in a microsecond.
pub const MICROSECOND: i64 = 1_000;
/// Nanoseconds in a millisecond.
pub const MILLISECOND: i64 = 1_000_000;
/// Nanoseconds in a second.
pub const SECOND: i64 = 1_000_000_000;
/// Nanoseconds in a minute.
pub const MINUTE: i64 = 60 * SECOND;
/// Nanoseconds in an hour.
pub const HOUR: i64 = 60 * MINUTE;

/// Why a duration did not parse.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("invalid duration {0:?} (use a number with a unit: 300ms, 1.5s, 2m, 1h30m)")]
pub struct DurationError(pub String);

fn unit_ns(unit: &str) -> Option<i64> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => MICROSECOND,
        "ms" => MILLISECOND,
        "s" => SECOND,
        "m" => MINUTE,
        "h" => HOUR,
        _ => return None,
    })
}

/// Parses a Go duration (`1h2m3.5s`, `300ms`, `-1.5h`, `0`) into nanoseconds.
pub fn parse(text: &str) -> Result<i64, DurationError> {
    let err = || DurationError(text.to_string());
    let (neg, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(err());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(err)?;
        let num = &rest[..num_len];
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = unit_ns(&rest[..unit_len]).ok_or_else(err)?;
        rest = &rest[unit_len..];
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        if (int.is_empty() && frac.is_empty()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let int_v: i128 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| err())?
        };
        total += int_v * unit as i128;
        // The fraction, exact to the nanosecond (digits beyond are dropped).
        let mut scale = unit as i128;
        for d in frac.bytes() {
            scale /= 10;
            if scale == 0 {
                break;
            }
            total += (d - b'0') as i128 * scale;
        }
        if total > i64::MAX as i128 {
            return Err(err());
        }
    }
    Ok(if neg { -(total as i64) } else { total as i64 })
}

/// Formats nanoseconds as Go's `Duration.String` does: `0s`, `850ns`,
/// `1.5µs`, `363.985µs`, `2.991s`, `1m30s`, `2h0m0s`.
pub fn format(ns: i64) -> String {
    if ns == 0 {
        return "0s".to_string();
    }
    let neg = ns < 0;
    let u = ns.unsigned_abs();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if u < SECOND as u64 {
        let (unit, div) = if u < MICROSECOND as u64 {
            ("ns", 1)
        } else if u < MILLISECOND as u64 {
            ("µs", MICROSECOND as u64)
        } else {
            ("ms", MILLISECOND as u64)
        };
        push_fraction(&mut out, u, div);
        out.push_str(unit);
        return out;
    }
    let hours = u / HOUR as u64;
    let minutes = (u % HOUR as u64) / MINUTE as u64;
    let secs_ns = u % MINUTE as u64;
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if hours > 0 || minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    push_fraction(&mut out, secs_ns, SECOND as u64);
    out.push('s');
    out
}

/// Writes `v / div` with the fraction's trailing zeros dropped.
fn push_fraction(out: &mut String, v: u64, div: u64) {
    out.push_str(&(v / div).to_string());
    let frac = v % div;
    if frac > 0 {
        let width = div.ilog10() as usize;
        let digits = format!("{frac:0width$}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// Rounds as Go's `Duration.Round(unit)`: halves away from zero.
pub fn round_to(ns: i64, unit: i64) -> i64 {
    if unit <= 0 {
        return ns;
    }
    let r = ns % unit;
    if ns < 0 {
        let r = -r;
        if r + r < unit {
            ns + r
        } else {
            ns + r - unit
        }
    } else if r + r < unit {
        ns - r
    } else {
        ns.saturating_add(unit - r)
    }
}

/// vegeta's report rounding: one unit finer than the value's magnitude
/// (≥1h to the minute, ≥1m to the second, ≥1s to the ms, ≥1ms to the µs).
pub fn round_for_report(ns: i64) -> i64 {
    const UNITS: [i64; 6] = [HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, 1];
    for (i, unit) in UNITS.iter().enumerate() {
        if ns >= *unit && i < UNITS.len() - 1 {
            return round_to(ns, UNITS[i + 1]);
        }
    }
    ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        let cases: &[(&str, i64)] = &[
            ("0", 0),
            ("1s", SECOND),
            ("300ms", 300 * MILLISECOND),
            ("1.5s", 1_500 * MILLISECOND),
            ("1m30s", 90 * SECOND),
            ("2h", 2 * HOUR),
            ("-1.5h", -(90 * MINUTE)),
            ("100us", 100 * MICROSECOND),
            ("100µs", 100 * MICROSECOND),
            ("7ns", 7),
            (".5s", 500 * MILLISECOND),
            ("1.000000001s", SECOND + 1),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text), Ok(*want), "{text}");
        }
    }

    #[test]
    fn rejects_malformed_durations() {
        for text in [
            "",
            "5",
            "1x",
            "s",
            "1..2s",
            "abc",
            "-",
            "1s2",
            "9999999999h",
        ] {
            assert!(parse(text).is_err(), "{text:?} should not parse");
        }
    }

    #[test]
    fn formats_like_go() {
        let cases: &[(i64, &str)] = &[
            (0, "0s"),
            (850, "850ns"),
            (1_500, "1.5µs"),
            (363_985, "363.985µs"),
            (1_014_000, "1.014ms"),
            (2_991 * MILLISECOND, "2.991s"),
            (90 * SECOND, "1m30s"),
            (2 * HOUR, "2h0m0s"),
            (HOUR + 500 * MILLISECOND, "1h0m0.5s"),
            (-5 * SECOND, "-5s"),
        ];
        for (ns, want) in cases {
            assert_eq!(format(*ns), *want, "{ns}");
        }
    }

    #[test]
    fn report_rounding_matches_vegeta() {
        // Figures from vegeta's own report of the alpha fixture.
        assert_eq!(format(round_for_report(2_991_012_526)), "2.991s");
        assert_eq!(format(round_for_report(363_985)), "363.985µs");
        assert_eq!(format(round_for_report(1_014_415)), "1.014ms");
        assert_eq!(format(round_for_report(326_598)), "326.598µs");
        assert_eq!(format(round_for_report(61_600 * MILLISECOND)), "1m2s");
        assert_eq!(format(round_for_report(999)), "999ns");
    }

    #[test]
    fn round_half_away_from_zero() {
        assert_eq!(round_to(1_500, 1_000), 2_000);
        assert_eq!(round_to(1_499, 1_000), 1_000);
        assert_eq!(round_to(-1_500, 1_000), -2_000);
    }
}
