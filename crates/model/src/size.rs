//! Sizes as flags take them: `-1` (no limit), a byte count, or a number
//! with a unit (`10KB`, `2 MiB`), decimal (KB, MB, GB) or binary (KiB,
//! MiB, GiB).

/// A size that does not parse; the text names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SizeError(pub String);

/// Bytes in `s`, or -1 for `-1`.
pub fn parse(s: &str) -> Result<i64, SizeError> {
    let t = s.trim();
    if t == "-1" {
        return Ok(-1);
    }
    let bad = || SizeError(format!("invalid size {s:?} (use -1, 4096, 10KB, 2MiB)"));
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().map_err(|_| bad())?;
    let mult: i64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "kilobytes" => 1_000,
        "mb" | "megabytes" => 1_000_000,
        "gb" | "gigabytes" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(mult)
        .ok_or_else(|| SizeError(format!("size {s:?} is too large")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        for (text, want) in [
            ("-1", -1),
            ("0", 0),
            ("4096", 4096),
            ("10KB", 10_000),
            ("2 MiB", 2 << 20),
            ("64KiB", 65_536),
            ("1gb", 1_000_000_000),
        ] {
            assert_eq!(parse(text), Ok(want), "{text}");
        }
        for bad in ["", "x", "10XB", "-2", "99999999999999999GiB"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
