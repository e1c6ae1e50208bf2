//! Unix nanoseconds to and from RFC 3339 (`2026-11-29T18:34:54.200616029Z`),
//! the way Go's `time.RFC3339Nano` writes them: UTC, trailing zeros of the
//! fraction dropped.

use thiserror::Error;

/// Why a timestamp did not parse.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("invalid RFC 3339 time {0:?}")]
pub struct TimeError(pub String);

/// Why a `-start-at` moment did not parse.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{0}")]
pub struct InstantError(pub String);

/// The wall clock, unix nanoseconds (0 before 1970).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Formats unix nanoseconds as RFC 3339 in UTC with up to 9 fraction digits.
pub fn format_rfc3339(unix_ns: i64) -> String {
    let secs = unix_ns.div_euclid(1_000_000_000);
    let nanos = unix_ns.rem_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let mut out = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    );
    if nanos > 0 {
        let frac = format!("{nanos:09}");
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

/// A moment as `-start-at` takes it: RFC 3339, or unix seconds (decimals
/// allowed, exact to the nanosecond: an f64 of unix nanoseconds is not),
/// as unix ns.
pub fn parse_instant(s: &str) -> Result<i64, InstantError> {
    if let Ok(ns) = parse_rfc3339(s) {
        return Ok(ns);
    }
    let bad = || {
        InstantError(format!(
            "invalid time {s:?} (use RFC 3339, e.g. 2026-11-30T12:00:00Z, or unix seconds)"
        ))
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || (!frac.is_empty() && !digits(frac)) || frac.len() > 9 {
        return Err(bad());
    }
    let secs: i64 = int.parse().map_err(|_| bad())?;
    let frac_ns: i64 = format!("{frac:0<9}").parse().map_err(|_| bad())?;
    secs.checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(frac_ns))
        .ok_or_else(bad)
}

/// Parses RFC 3339 (`Z` or `±hh:mm` offsets, any fraction) to unix ns.
pub fn parse_rfc3339(text: &str) -> Result<i64, TimeError> {
    let err = || TimeError(text.to_string());
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(err());
    }
    if b[13] != b':' || b[16] != b':' {
        return Err(err());
    }
    let num = |r: std::ops::Range<usize>| -> Result<i64, TimeError> {
        let s = text.get(r).ok_or_else(err)?;
        if !s.bytes().all(|c| c.is_ascii_digit()) {
            return Err(err());
        }
        s.parse().map_err(|_| err())
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 60 {
        return Err(err());
    }
    let mut i = 19;
    let mut nanos = 0i64;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 9 {
                nanos = nanos * 10 + (b[i] - b'0') as i64;
            }
            i += 1;
        }
        if i == start {
            return Err(err());
        }
        for _ in (i - start).min(9)..9 {
            nanos *= 10;
        }
    }
    let offset = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
            let v = num(i + 1..i + 3)? * 3600 + num(i + 4..i + 6)? * 60;
            if *sign == b'-' {
                -v
            } else {
                v
            }
        }
        _ => return Err(err()),
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset;
    secs.checked_mul(1_000_000_000)
        .and_then(|v| v.checked_add(nanos))
        .ok_or_else(err)
}

// Howard Hinnant's civil calendar algorithms.
/// Days in month `m` (1-12) of year `y`, leap years as the Gregorian
/// calendar has them.
fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formats_like_go_rfc3339nano() {
        assert_eq!(
            format_rfc3339(1_795_977_294_200_616_029),
            "2026-11-29T18:34:54.200616029Z"
        );
        assert_eq!(
            format_rfc3339(1_795_977_297_191_264_570),
            "2026-11-29T18:34:57.19126457Z"
        );
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(-1), "1969-12-31T23:59:59.999999999Z");
    }

    #[test]
    fn parses_offsets() {
        let utc = parse_rfc3339("2026-11-29T18:34:54.200616029Z").unwrap();
        assert_eq!(utc, 1_795_977_294_200_616_029);
        let plus = parse_rfc3339("2026-11-29T19:34:54.200616029+01:00").unwrap();
        assert_eq!(plus, utc);
        assert_eq!(
            parse_rfc3339("2026-11-29T18:34:54.2Z").unwrap(),
            1_795_977_294_200_000_000
        );
        for bad in [
            "",
            "2026-11-29",
            "2026-13-01T00:00:00Z",
            "2026-11-29T18:34:54",
            "2026-11-29T18:34:54.Z",
            // Issue 15: days the month does not have.
            "2026-02-31T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2100-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-11-00T00:00:00Z",
        ] {
            assert!(parse_rfc3339(bad).is_err(), "{bad}");
        }
        for good in [
            "2028-02-29T00:00:00Z",
            "2000-02-29T00:00:00Z",
            "2026-12-31T23:59:59Z",
            "2026-04-30T00:00:00Z",
        ] {
            assert!(parse_rfc3339(good).is_ok(), "{good}");
        }
    }

    proptest! {
        #[test]
        fn round_trips(ns in -5_000_000_000_000_000_000i64..9_000_000_000_000_000_000i64) {
            prop_assert_eq!(parse_rfc3339(&format_rfc3339(ns)).unwrap(), ns);
        }
    }
}
