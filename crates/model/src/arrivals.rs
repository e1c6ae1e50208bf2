//! `-arrivals`: how requests are spread around the rate's mean.
//!
//! - `uniform` (the default): request *i* is due exactly when the rate's
//!   integral reaches *i* (`i / rate`), a metronome.
//! - `poisson[:SEED]`: a Poisson process with the same mean rate. The gaps
//!   between requests are independent and exponential, drawn in "request
//!   time" (a process of rate 1) and mapped through the inverse of the
//!   integrated rate, so `-stages` ramps stay exact in their mean too.
//! - `gamma:B[:SEED]`: gaps drawn from a gamma law of shape B and mean 1
//!   (vLLM's `--burstiness` and AIPerf's): B = 1 is Poisson, below 1
//!   burstier (clusters and lulls), above 1 more even. Drawn as Poisson's
//!   are, in request time, one position of the seed's sequence a gap.
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
    /// Gamma gaps of shape B (in thousandths, 1,000 = Poisson), mean 1;
    /// the seed as Poisson's.
    Gamma(u32, Option<u64>),
}

impl Arrivals {
    /// The seed, for the laws that draw.
    pub fn seed(&self) -> Option<u64> {
        match self {
            Arrivals::Uniform => None,
            Arrivals::Poisson(s) | Arrivals::Gamma(_, s) => *s,
        }
    }

    /// This law with `seed` (a drawn one), for the laws that draw.
    pub fn with_seed(self, seed: u64) -> Arrivals {
        match self {
            Arrivals::Uniform => Arrivals::Uniform,
            Arrivals::Poisson(_) => Arrivals::Poisson(Some(seed)),
            Arrivals::Gamma(b, _) => Arrivals::Gamma(b, Some(seed)),
        }
    }
}

/// An `-arrivals` value that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid -arrivals {0:?} (use uniform, poisson, poisson:SEED, gamma:B or gamma:B:SEED: a whole-number seed, a burstiness B from 0.01 to 100)")]
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
            Some(("gamma", rest)) => {
                let (b, seed) = match rest.split_once(':') {
                    Some((b, seed)) => (b, Some(seed.parse().map_err(|_| bad())?)),
                    None => (rest, None),
                };
                let b: f64 = b.parse().map_err(|_| bad())?;
                if !(0.01..=100.0).contains(&b) {
                    return Err(bad());
                }
                Ok(Arrivals::Gamma((b * 1000.0).round() as u32, seed))
            }
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
            Arrivals::Gamma(b, None) => write!(f, "gamma:{}", f64::from(*b) / 1000.0),
            Arrivals::Gamma(b, Some(seed)) => write!(f, "gamma:{}:{seed}", f64::from(*b) / 1000.0),
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
    /// A gamma law's shape (`None`: exponential gaps).
    shape: Option<f64>,
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

/// One gap of a gamma law of shape `k` and mean 1 from 64 random bits, in
/// fixed point. The bits seed a generator of the gap's own (SplitMix64),
/// so each gap still takes one position of the sequence however many
/// draws it needs: Marsaglia and Tsang's method (2000), with
/// Γ(k) = Γ(k + 1) · U^(1/k) below shape 1. Hand-written: rand_distr's
/// Gamma would draw from the walk's generator a number of times that
/// varies, which a look back could not undo.
fn gamma_gap(bits: u64, k: f64) -> u128 {
    let mut state = bits;
    let mut next = move || {
        // SplitMix64 (Steele, Lea and Flood).
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut uniform = || ((next() >> 11) + 1) as f64 / (1u64 << 53) as f64;
    let (shape, boost) = if k < 1.0 { (k + 1.0, true) } else { (k, false) };
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    let x = loop {
        // A standard normal by Box and Muller.
        let z = (-2.0 * uniform().ln()).sqrt() * (std::f64::consts::TAU * uniform()).cos();
        let v = (1.0 + c * z).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = uniform();
        if u < 1.0 - 0.0331 * z.powi(4) || u.ln() < 0.5 * z * z + d * (1.0 - v + v.ln()) {
            break d * v;
        }
    };
    let x = if boost {
        x * uniform().powf(1.0 / k)
    } else {
        x
    };
    // Scale 1/k: mean 1.
    (x / k * POSITION_ONE as f64).round() as u128
}

impl PoissonClock {
    /// The process for `seed`; `stream` tells apart processes with one
    /// seed (a mix's groups).
    pub fn new(seed: u64, stream: u64) -> Self {
        Self::with_shape(seed, stream, None)
    }

    /// The process of gamma gaps of shape `shape` (mean 1) for `seed` and
    /// `stream`.
    pub fn gamma(seed: u64, stream: u64, shape: f64) -> Self {
        Self::with_shape(seed, stream, Some(shape))
    }

    fn with_shape(seed: u64, stream: u64, shape: Option<f64>) -> Self {
        PoissonClock {
            seed,
            shape,
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
            w.at += match self.shape {
                None => gap(bits),
                Some(k) => gamma_gap(bits, k),
            };
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
        assert_eq!("gamma:0.5".parse(), Ok(Arrivals::Gamma(500, None)));
        assert_eq!("gamma:2:9".parse(), Ok(Arrivals::Gamma(2000, Some(9))));
        for bad in [
            "",
            "Poisson",
            "poisson:",
            "poisson:x",
            "gamma",
            "gamma:",
            "gamma:0",
            "gamma:x",
            "gamma:0.5:x",
            "gamma:1000",
            "uniform:1",
        ] {
            assert!(bad.parse::<Arrivals>().is_err(), "{bad:?}");
        }
        assert_eq!(Arrivals::Poisson(Some(7)).to_string(), "poisson:7");
        assert_eq!(Arrivals::Gamma(250, Some(3)).to_string(), "gamma:0.25:3");
        assert_eq!(
            Arrivals::Gamma(500, None).with_seed(4),
            Arrivals::Gamma(500, Some(4))
        );
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
    /// The first `n` gaps of `c` (in requests), with their mean and
    /// coefficient of variation.
    fn gaps(c: &PoissonClock, n: u64) -> (Vec<f64>, f64, f64) {
        let at: Vec<u128> = (0..=n).map(|i| c.position(i)).collect();
        let gaps: Vec<f64> = at
            .windows(2)
            .map(|w| (w[1] - w[0]) as f64 / POSITION_ONE as f64)
            .collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let cv = var.sqrt() / mean;
        (gaps, mean, cv)
    }

    #[test]
    fn gaps_are_exponential() {
        for seed in [1, 2, 3] {
            let n = 100_000u64;
            let (mut gaps, mean, cv) = gaps(&PoissonClock::new(seed, 0), n);
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

    /// Gamma gaps of shapes 0.25, 0.5, 1 and 4 over 100,000 arrivals: mean
    /// 1 within 1.5%, coefficient of variation 1/√k within 3% (the law's),
    /// and a look back gives the same positions.
    #[test]
    fn gamma_gaps_have_the_laws_mean_and_spread() {
        for k in [0.25, 0.5, 1.0, 4.0] {
            let c = PoissonClock::gamma(11, 0, k);
            let (_, mean, cv) = gaps(&c, 100_000);
            let want = 1.0 / k.sqrt();
            assert!((mean - 1.0).abs() < 0.015, "k {k}: mean {mean}");
            assert!(
                (cv - want).abs() < 0.03 * want,
                "k {k}: cv {cv}, want {want}"
            );
            let fresh = PoissonClock::gamma(11, 0, k);
            for i in [77_777, 5, 4096] {
                assert_eq!(c.position(i), fresh.position(i), "k {k}: {i}");
            }
        }
    }
}
