use std::fmt;

/// Which status codes count as success (`-success`): code classes (`2xx`),
/// single codes (`404`) and ranges (`200-299`), comma-separated. Code 0 (no
/// response) never succeeds. The default is vegeta's [200, 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuccessRule {
    /// Inclusive ranges.
    ranges: Vec<(u16, u16)>,
}

impl Default for SuccessRule {
    fn default() -> Self {
        SuccessRule {
            ranges: vec![(200, 399)],
        }
    }
}

impl SuccessRule {
    /// Whether `code` is a success.
    #[inline]
    pub fn accepts(&self, code: u16) -> bool {
        code != 0
            && self
                .ranges
                .iter()
                .any(|(lo, hi)| (*lo..=*hi).contains(&code))
    }
}

impl std::str::FromStr for SuccessRule {
    type Err = crate::ParseError;

    fn from_str(s: &str) -> Result<Self, crate::ParseError> {
        let mut ranges = Vec::new();
        for part in s.split(',').map(str::trim) {
            let bad = || {
                format!("bad -success rule {part:?} (use classes like 2xx, codes like 404, ranges like 200-299)")
            };
            let range =
                if let Some(class) = part.strip_suffix("xx").or_else(|| part.strip_suffix("XX")) {
                    let d: u16 = class.parse().map_err(|_| bad())?;
                    if !(1..=5).contains(&d) {
                        return Err(crate::ParseError::from(bad()));
                    }
                    (d * 100, d * 100 + 99)
                } else if let Some((a, b)) = part.split_once('-') {
                    let (a, b): (u16, u16) = (
                        a.trim().parse().map_err(|_| bad())?,
                        b.trim().parse().map_err(|_| bad())?,
                    );
                    if a > b || !(100..=999).contains(&a) || b > 999 {
                        return Err(crate::ParseError::from(bad()));
                    }
                    (a, b)
                } else {
                    let c: u16 = part.parse().map_err(|_| bad())?;
                    if !(100..=999).contains(&c) {
                        return Err(crate::ParseError::from(bad()));
                    }
                    (c, c)
                };
            ranges.push(range);
        }
        Ok(SuccessRule { ranges })
    }
}

impl fmt::Display for SuccessRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (lo, hi)) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if lo == hi {
                write!(f, "{lo}")?;
            } else {
                write!(f, "{lo}-{hi}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_classes_codes_and_ranges() {
        let r: SuccessRule = "2xx,404,500-502".parse().unwrap();
        for (code, ok) in [
            (0, false),
            (200, true),
            (299, true),
            (302, false),
            (404, true),
            (501, true),
            (503, false),
        ] {
            assert_eq!(r.accepts(code), ok, "{code}");
        }
        let d = SuccessRule::default();
        assert!(d.accepts(200) && d.accepts(399) && !d.accepts(400) && !d.accepts(0));
        let same: SuccessRule = "2xx,3xx".parse().unwrap();
        assert!((0..1000).all(|c| same.accepts(c) == d.accepts(c)));
    }

    #[test]
    fn rejects_nonsense() {
        for s in ["", "abc", "9xx", "300-200", "42", "200-", "2xx,,"] {
            assert!(s.parse::<SuccessRule>().is_err(), "{s:?}");
        }
    }
}
