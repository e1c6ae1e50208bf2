//! A length in tokens, fixed or drawn (`-prompt-tokens`, `-output-tokens`),
//! and the seeded draws every synthetic body takes its values from.

use std::{fmt, str::FromStr};

/// A count of tokens: `512`, `uniform:256..1024` or `normal:512,64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    /// Always this many.
    Fixed(u64),
    /// Uniform between the two, both included.
    Uniform(u64, u64),
    /// Normal with this mean and standard deviation, rounded, at least 1.
    Normal(f64, f64),
}

/// A length that does not read: the text, and the forms that do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: a token count is N, uniform:LOW..HIGH or normal:MEAN,SD (e.g. 512, uniform:256..1024, normal:512,64), each at least 1")]
pub struct BadLength(pub String);

/// The most tokens a synthetic prompt or answer may ask for.
pub const MAX_LENGTH: u64 = 1 << 20;

impl FromStr for Length {
    type Err = BadLength;

    fn from_str(s: &str) -> Result<Self, BadLength> {
        let bad = || BadLength(s.to_string());
        let n = |t: &str| {
            t.trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=MAX_LENGTH).contains(n))
                .ok_or_else(bad)
        };
        if let Some(range) = s.strip_prefix("uniform:") {
            let (low, high) = range.split_once("..").ok_or_else(bad)?;
            let (low, high) = (n(low)?, n(high)?);
            return if low <= high {
                Ok(Length::Uniform(low, high))
            } else {
                Err(bad())
            };
        }
        if let Some(shape) = s.strip_prefix("normal:") {
            let (mean, sd) = shape.split_once(',').ok_or_else(bad)?;
            let f = |t: &str| t.trim().parse::<f64>().ok().filter(|v| v.is_finite());
            return match (f(mean), f(sd)) {
                (Some(m), Some(d)) if m >= 1.0 && m <= MAX_LENGTH as f64 && d >= 0.0 => {
                    Ok(Length::Normal(m, d))
                }
                _ => Err(bad()),
            };
        }
        n(s).map(Length::Fixed)
    }
}

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Length::Fixed(n) => write!(f, "{n}"),
            Length::Uniform(a, b) => write!(f, "uniform:{a}..{b}"),
            Length::Normal(m, d) => write!(f, "normal:{m},{d}"),
        }
    }
}

impl Length {
    /// One draw, from `rng`.
    pub fn draw(&self, rng: &mut fastrand::Rng) -> u64 {
        match *self {
            Length::Fixed(n) => n,
            Length::Uniform(a, b) => rng.u64(a..=b),
            Length::Normal(mean, sd) => {
                // Box-Muller: two uniforms, one normal draw.
                let u = 1.0 - rng.f64();
                let v = rng.f64();
                let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                (mean + sd * z).round().clamp(1.0, MAX_LENGTH as f64) as u64
            }
        }
    }
}

/// The generator of request `seq`'s draws under `seed`: the same pair
/// gives the same draws whatever thread asks, in whatever order.
pub fn rng_for(seed: u64, seq: u64) -> fastrand::Rng {
    // SplitMix64's finaliser over the pair: neighbouring seqs get
    // unrelated streams.
    let mut z = seed ^ seq.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    fastrand::Rng::with_seed(z ^ (z >> 31))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_read_as_the_llm_tools_write_them() {
        assert_eq!("512".parse(), Ok(Length::Fixed(512)));
        assert_eq!("uniform:256..1024".parse(), Ok(Length::Uniform(256, 1024)));
        assert_eq!("normal:512,64".parse(), Ok(Length::Normal(512.0, 64.0)));
        for bad in ["0", "uniform:9..3", "normal:512", "x", "-4", "normal:0,1"] {
            let e = bad.parse::<Length>().unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("{bad:?}: a token count is N")),
                "{e}"
            );
        }
        assert_eq!(Length::Uniform(2, 9).to_string(), "uniform:2..9");
    }

    #[test]
    fn draws_hold_their_mean_and_spread() {
        let n = 20_000;
        let draws: Vec<f64> = (0..n)
            .map(|seq| Length::Normal(512.0, 64.0).draw(&mut rng_for(7, seq)) as f64)
            .collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let sd = (draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!((mean - 512.0).abs() < 2.0, "{mean}");
        assert!((sd - 64.0).abs() < 1.5, "{sd}");
        let u: Vec<u64> = (0..n)
            .map(|seq| Length::Uniform(10, 20).draw(&mut rng_for(1, seq)))
            .collect();
        assert!(u.iter().all(|v| (10..=20).contains(v)));
        assert!(u.contains(&10) && u.contains(&20));
        // One seed and seq, one draw.
        assert_eq!(rng_for(3, 9).u64(..), rng_for(3, 9).u64(..));
        assert_ne!(rng_for(3, 9).u64(..), rng_for(3, 10).u64(..));
    }
}
