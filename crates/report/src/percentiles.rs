use std::fmt;

/// The latency percentiles a report shows (`-percentiles 50,90,99,99.9`),
/// in percent.
#[derive(Debug, Clone, PartialEq)]
pub struct Percentiles(Vec<f64>);

impl Default for Percentiles {
    /// vegeta's columns: 50, 90, 95, 99.
    fn default() -> Self {
        Percentiles(vec![50.0, 90.0, 95.0, 99.0])
    }
}

impl Percentiles {
    /// Each as a percent (`99.9`).
    pub fn percents(&self) -> Vec<f64> {
        self.0.clone()
    }

    /// Each as (quantile in [0,1], label such as `99.9`).
    pub fn iter(&self) -> impl Iterator<Item = (f64, String)> + '_ {
        self.0.iter().map(|p| (p / 100.0, label(*p)))
    }
}

/// `99.9` → `"99.9"`, `50` → `"50"`.
fn label(p: f64) -> String {
    let s = format!("{p}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

impl std::str::FromStr for Percentiles {
    type Err = crate::ParseError;
    fn from_str(s: &str) -> Result<Self, crate::ParseError> {
        let mut v = Vec::new();
        for part in s.split(',').map(str::trim) {
            let p: f64 = part
                .parse()
                .ok()
                .filter(|p: &f64| *p > 0.0 && *p <= 100.0)
                .ok_or_else(|| format!("bad percentile {part:?} in {s:?} (use numbers in (0, 100], e.g. 50,90,99,99.9)"))?;
            v.push(p);
        }
        Ok(Percentiles(v))
    }
}

impl fmt::Display for Percentiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let labels: Vec<String> = self.0.iter().map(|p| label(*p)).collect();
        f.write_str(&labels.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_labels() {
        let p: Percentiles = "50, 99.9,99.99,100".parse().unwrap();
        let labels: Vec<String> = p.iter().map(|(_, l)| l).collect();
        assert_eq!(labels, ["50", "99.9", "99.99", "100"]);
        assert!((p.iter().nth(1).unwrap().0 - 0.999).abs() < 1e-12);
        for bad in ["", "0", "101", "abc", "50,,90"] {
            assert!(bad.parse::<Percentiles>().is_err(), "{bad:?}");
        }
    }
}
