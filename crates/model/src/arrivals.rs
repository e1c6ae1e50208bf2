//! `-arrivals`: how requests are spread around the rate's mean.
//!
//! - `uniform` (the default): request *i* is due exactly when the rate's
//!   integral reaches *i* (`i / rate`), a metronome.
//! - `poisson[:SEED]`: a Poisson process with the same mean rate. The gaps
//!   between requests are independent and exponential, drawn in "request
//!   time" (a process of rate 1) and mapped through the inverse of the
//!   integrated rate, so `-stages` ramps stay exact in their mean too.
//!
//! Both are pure functions of *i* (and the seed): a rerun with the same
//! seed sends at the same offsets, and shards of one schedule, each taking
//! every n-th request, make that one schedule together.

use std::{
    fmt,
    str::FromStr,
    sync::{Arc, Mutex},
};

use rand_core::Rng;
use rand_pcg::Pcg64;

/// `-arrivals`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arrivals {
    /// Evenly spaced (`uniform`).
    #[default]
    Uniform,
    /// Exponential gaps; `None`: a seed is drawn at the start (and
    /// printed, so the run can be repeated).
    Poisson(Option<u64>),
}

/// An `-arrivals` value that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid -arrivals {0:?} (use uniform, poisson or poisson:SEED with a whole-number seed)")]
pub struct ArrivalsError(pub String);

impl FromStr for Arrivals {
    type Err = ArrivalsError;

    fn from_str(s: &str) -> Result<Self, ArrivalsError> {
        let bad = || ArrivalsError(s.to_string());
        match s.split_once(':') {
            None if s == "uniform" => Ok(Arrivals::Uniform),
            None if s == "poisson" => Ok(Arrivals::Poisson(None)),
            Some(("poisson", seed)) => seed
                .parse()
                .map(|s| Arrivals::Poisson(Some(s)))
                .map_err(|_| bad()),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for Arrivals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arrivals::Uniform => f.write_str("uniform"),
            Arrivals::Poisson(None) => f.write_str("poisson"),
            Arrivals::Poisson(Some(seed)) => write!(f, "poisson:{seed}"),
        }
    }
}

/// Fixed-point scale of positions in request time: 2^32 units a request.
pub const POSITION_ONE: u128 = 1 << 32;

/// Requests between two kept positions: a look back (two threads taking
/// tickets out of order) walks at most this many gaps.
const CHECKPOINT_EVERY: u64 = 4096;

/// A Poisson process of rate 1 ("request time"): where its *i*-th arrival
/// falls, in units of [`POSITION_ONE`], the first at 0.
///
/// Gaps are `-ln(U)` with `U` from PCG-64 (rand_pcg) at position *i* of
/// the seed's sequence, rounded to fixed point and summed in integers, so
/// every process (and every shard) that asks for arrival *i* gets the same
/// number to the bit. Positions are walked forward and kept every
/// [`CHECKPOINT_EVERY`] requests (16 bytes each: 4 MB per billion
/// requests).
#[derive(Clone)]
pub struct PoissonClock {
    seed: u64,
    walk: Arc<Mutex<Walk>>,
}

struct Walk {
    /// The arrival the walk stands at, and its position.
    seq: u64,
    at: u128,
    rng: Pcg64,
    /// Positions of arrivals 0, CHECKPOINT_EVERY, 2 × CHECKPOINT_EVERY, …
    kept: Vec<u128>,
}

impl fmt::Debug for PoissonClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PoissonClock({})", self.seed)
    }
}

/// The generator for `seed` and `stream`, standing before gap 0.
fn generator(seed: u64, stream: u64) -> Pcg64 {
    // The increment PCG's authors use by default, moved per stream.
    const INCREMENT: u128 = 0x5851_f42d_4c95_7f2d_1405_7b7e_f767_814f;
    Pcg64::new(
        (seed as u128) << 64 | 0x853c_49e6_748f_ea9b,
        INCREMENT ^ (stream as u128) << 1,
    )
}

/// One exponential gap of mean 1 from 64 random bits, in fixed point.
fn gap(bits: u64) -> u128 {
    // U in (0, 1]: never 0, so the logarithm is finite (at most 44.4).
    let u = ((bits >> 11) + 1) as f64 / (1u64 << 53) as f64;
    (-u.ln() * POSITION_ONE as f64).round() as u128
}

impl PoissonClock {
    /// The process for `seed`; `stream` tells apart processes with one
    /// seed (a mix's groups).
    pub fn new(seed: u64, stream: u64) -> Self {
        PoissonClock {
            seed,
            walk: Arc::new(Mutex::new(Walk {
                seq: 0,
                at: 0,
                rng: generator(seed, stream),
                kept: vec![0],
            })),
        }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Where arrival `seq` falls in request time, units of
    /// [`POSITION_ONE`].
    pub fn position(&self, seq: u64) -> u128 {
        let mut w = self.walk.lock().unwrap_or_else(|p| p.into_inner());
        if seq < w.seq {
            let k = seq / CHECKPOINT_EVERY;
            let from = k * CHECKPOINT_EVERY;
            let back = (w.seq - from) as u128;
            w.at = w.kept[k as usize];
            // PCG jumps in O(log n): stand the generator where gap `from`
            // is drawn.
            w.rng.advance(back.wrapping_neg());
            w.seq = from;
        }
        while w.seq < seq {
            let bits = w.rng.next_u64();
            w.at += gap(bits);
            w.seq += 1;
            if w.seq.is_multiple_of(CHECKPOINT_EVERY)
                && w.kept.len() as u64 == w.seq / CHECKPOINT_EVERY
            {
                let at = w.at;
                w.kept.push(at);
            }
        }
        w.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!("uniform".parse(), Ok(Arrivals::Uniform));
        assert_eq!("poisson".parse(), Ok(Arrivals::Poisson(None)));
        assert_eq!("poisson:42".parse(), Ok(Arrivals::Poisson(Some(42))));
        for bad in ["", "Poisson", "poisson:", "poisson:x", "gamma", "uniform:1"] {
            assert!(bad.parse::<Arrivals>().is_err(), "{bad:?}");
        }
        assert_eq!(Arrivals::Poisson(Some(7)).to_string(), "poisson:7");
    }

    #[test]
    fn a_look_back_gives_the_same_positions() {
        let c = PoissonClock::new(9, 0);
        let forward: Vec<u128> = (0..10_000).map(|i| c.position(i)).collect();
        let fresh = PoissonClock::new(9, 0);
        for i in [9_999, 5, 4096, 4095, 8192, 0, 7_000] {
            assert_eq!(c.position(i), forward[i as usize], "{i}");
            assert_eq!(fresh.position(i), forward[i as usize], "fresh {i}");
        }
        assert_ne!(PoissonClock::new(9, 1).position(100), forward[100]);
        assert_ne!(PoissonClock::new(10, 0).position(100), forward[100]);
    }

    /// Gaps of 100,000 arrivals: mean 1 within 1%, coefficient of
    /// variation 1 within 2%, and a Kolmogorov–Smirnov test against the
    /// exponential at the 1% level (critical value 1.628 / √n).
    #[test]
    fn gaps_are_exponential() {
        for seed in [1, 2, 3] {
            let c = PoissonClock::new(seed, 0);
            let n = 100_000u64;
            let at: Vec<u128> = (0..=n).map(|i| c.position(i)).collect();
            let mut gaps: Vec<f64> = at
                .windows(2)
                .map(|w| (w[1] - w[0]) as f64 / POSITION_ONE as f64)
                .collect();
            let mean = gaps.iter().sum::<f64>() / n as f64;
            let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let cv = var.sqrt() / mean;
            assert!((mean - 1.0).abs() < 0.01, "seed {seed}: mean {mean}");
            assert!((cv - 1.0).abs() < 0.02, "seed {seed}: cv {cv}");
            gaps.sort_by(f64::total_cmp);
            let d = gaps
                .iter()
                .enumerate()
                .map(|(k, g)| {
                    let f = 1.0 - (-g).exp();
                    (f - k as f64 / n as f64).max((k + 1) as f64 / n as f64 - f)
                })
                .fold(0.0, f64::max);
            assert!(d < 1.628 / (n as f64).sqrt(), "seed {seed}: KS D {d}");
        }
    }
}
