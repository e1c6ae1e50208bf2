//! [`Limits`]: the thresholds of the verdict's checks (`report -limits`).

use barrage_model::duration;

use crate::ParseError;

/// The bounds the verdict holds a run to.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// The longest lag at p99, ns (`lag=10ms`; sweep's `-lag-limit`).
    pub lag: u64,
    /// The least share of a second's due requests sent in it (`rate=90%`).
    pub rate: f64,
    /// The most of a core barrage's busiest thread may use (`cpu=80%`,
    /// k6's rule of thumb for its own CPU).
    pub cpu: f64,
    /// The most of a second one of barrage's threads may wait for a core
    /// (`wait=10%`).
    pub wait: f64,
    /// The most of a run's gaps between streamed events (`-stream`) that
    /// may be under 50 µs, read at one time (`stacked=10%`).
    pub stacked: f64,
    /// The fewest independent records beyond the highest percentile
    /// shown (`tail=10`, as `compare` asks before it judges one).
    pub tail: f64,
    /// The largest change of the mean latency over a steady run
    /// (`trend=50%`).
    pub trend: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            lag: 10_000_000,
            rate: 0.9,
            cpu: 0.8,
            wait: 0.1,
            stacked: 0.1,
            tail: 10.0,
            trend: 0.5,
        }
    }
}

impl std::str::FromStr for Limits {
    type Err = ParseError;

    /// `lag=5ms,cpu=80%`: the named limits changed, the rest as
    /// [`Limits::default`].
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let mut l = Limits::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(format!("-limits {part:?}: want NAME=VALUE (lag=10ms, rate=90%, cpu=80%, wait=10%, stacked=10%, tail=10, trend=50%)").into());
            };
            let share = || -> Result<f64, ParseError> {
                let v = value.trim();
                let (n, scale) = match v.strip_suffix('%') {
                    Some(n) => (n, 100.0),
                    None => (v, 1.0),
                };
                match n.parse::<f64>() {
                    Ok(x) if x.is_finite() && x >= 0.0 && x / scale <= 1.0 => Ok(x / scale),
                    _ => Err(format!("-limits {key}={value}: a share from 0 to 100%").into()),
                }
            };
            match key.trim() {
                "lag" => {
                    l.lag = duration::parse(value.trim())
                        .ok()
                        .and_then(|ns| u64::try_from(ns).ok())
                        .ok_or_else(|| format!("-limits lag={value}: a duration such as 10ms"))?;
                }
                "rate" => l.rate = share()?,
                "cpu" => l.cpu = share()?,
                "wait" => l.wait = share()?,
                "stacked" => l.stacked = share()?,
                "trend" => l.trend = share()?,
                "tail" => {
                    l.tail = value
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|t| t.is_finite() && *t >= 0.0)
                        .ok_or_else(|| format!("-limits tail={value}: a number of records"))?;
                }
                other => {
                    return Err(format!(
                        "-limits {other:?}: unknown (lag, rate, cpu, wait, tail, trend)"
                    )
                    .into())
                }
            }
        }
        Ok(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_change_one_by_one_and_bad_ones_say_where() {
        let l: Limits = "lag=5ms, cpu=80%,tail=20".parse().unwrap();
        assert_eq!((l.lag, l.cpu, l.tail, l.rate), (5_000_000, 0.8, 20.0, 0.9));
        assert_eq!("".parse::<Limits>().unwrap(), Limits::default());
        for (bad, says) in [
            ("lag", "want NAME=VALUE"),
            ("cpu=120%", "cpu=120%"),
            ("lag=fast", "lag=fast"),
            ("speed=1", "\"speed\": unknown"),
        ] {
            let e = bad.parse::<Limits>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
