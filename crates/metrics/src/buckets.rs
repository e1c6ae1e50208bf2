use barrage_model::duration;

/// Latency histogram buckets (`-buckets '[0,1ms,5ms]'`, `hist[...]`): lower
/// bounds in ns, starting at 0; the last bucket is open-ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buckets {
    bounds: Vec<u64>,
}

impl Buckets {
    /// Parses `[0,1ms,5ms]` (brackets optional). A `0` bound is prepended
    /// when the first is above 0, as vegeta does; bounds must increase.
    pub fn parse(text: &str) -> Result<Self, crate::ParseError> {
        let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
        if inner.trim().is_empty() {
            return Err(crate::ParseError::from(format!(
                "bad buckets {text:?}: no bounds (use [0,1ms,5ms])"
            )));
        }
        let mut bounds = Vec::new();
        for part in inner.split(',').map(str::trim) {
            let ns = duration::parse(part).map_err(|_| {
                format!("bad bucket bound {part:?} in {text:?} (use durations: 0, 500us, 1ms)")
            })?;
            if ns < 0 {
                return Err(crate::ParseError::from(format!(
                    "bad bucket bound {part:?}: negative"
                )));
            }
            if let Some(&prev) = bounds.last() {
                if ns as u64 <= prev {
                    return Err(crate::ParseError::from(format!(
                        "bucket bounds must increase: {part} after {}",
                        duration::format(prev as i64)
                    )));
                }
            }
            bounds.push(ns as u64);
        }
        if bounds[0] > 0 {
            bounds.insert(0, 0);
        }
        Ok(Buckets { bounds })
    }

    /// The lower bounds, ns.
    pub fn bounds(&self) -> &[u64] {
        &self.bounds
    }

    /// The bucket of `latency`: the last bound not above it.
    #[inline]
    pub fn index(&self, latency: u64) -> usize {
        self.bounds
            .partition_point(|b| *b <= latency)
            .saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prepends_zero() {
        let b = Buckets::parse("[1ms,5ms]").unwrap();
        assert_eq!(b.bounds(), [0, 1_000_000, 5_000_000]);
        assert_eq!(Buckets::parse("0,100us").unwrap().bounds(), [0, 100_000]);
    }

    #[test]
    fn places_values_like_vegeta() {
        let b = Buckets::parse("[0,100us,1ms]").unwrap();
        for (v, i) in [
            (0, 0),
            (99_999, 0),
            (100_000, 1),
            (999_999, 1),
            (1_000_000, 2),
            (u64::MAX, 2),
        ] {
            assert_eq!(b.index(v), i, "{v}");
        }
    }

    #[test]
    fn rejects_bad_bounds() {
        for (text, want) in [
            ("[5ms,1ms]", "must increase"),
            ("[1ms,1ms]", "must increase"),
            ("[]", "no bounds"),
            ("[1x]", "bad bucket bound"),
            ("[-1ms]", "negative"),
        ] {
            let e = Buckets::parse(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
