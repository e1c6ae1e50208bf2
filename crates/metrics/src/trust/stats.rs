//! The statistics the verdict's checks rest on, each on plain numbers.

/// Stephens' modified Kolmogorov–Smirnov statistic of `gaps` against an
/// exponential law of mean `mean` estimated from the same sample
/// (Stephens 1974, table 1.3, case 3): `(D - 0.2/n)(√n + 0.26 + 0.5/√n)`,
/// `D` measured at a resolution of `within` (a gap may be off by that
/// much: the sample's CDF need only lie between the law's at `x - within`
/// and at `x + within`). Its critical value at the 1% level is
/// [`KS_EXP_CRITICAL`] (at a resolution of 0; the band only makes it
/// kinder). `None` with fewer than [`MIN_GAPS`] gaps or a mean of 0.
pub(crate) fn ks_exponential(gaps: &mut [f64], mean: f64, within: f64) -> Option<f64> {
    let n = gaps.len();
    if n < MIN_GAPS || mean <= 0.0 {
        return None;
    }
    gaps.sort_by(|a, b| a.total_cmp(b));
    let nf = n as f64;
    let mut d = 0.0f64;
    let law = |x: f64| 1.0 - (-x.max(0.0) / mean).exp();
    for (i, g) in gaps.iter().enumerate() {
        d = d
            .max((i + 1) as f64 / nf - law(g + within))
            .max(law(g - within) - i as f64 / nf);
    }
    Some((d - 0.2 / nf) * (nf.sqrt() + 0.26 + 0.5 / nf.sqrt()))
}

/// The 1% critical value of [`ks_exponential`]'s statistic.
pub(crate) const KS_EXP_CRITICAL: f64 = 1.308;

/// The fewest gaps the arrivals check judges.
pub(crate) const MIN_GAPS: usize = 100;

/// MSER's truncation point of `series` (White 1997): the `d`, at most half
/// the series, that minimises the squared standard error of the mean of
/// what is left, `Σ (x - mean)² / (k - d)²`. The series' first `d`
/// entries are the warm-up.
pub(crate) fn mser(series: &[f64]) -> usize {
    let k = series.len();
    if k < 4 {
        return 0;
    }
    // Sums over the tail, from the end.
    let (mut sum, mut sq) = (0.0, 0.0);
    let mut best = (f64::INFINITY, 0);
    let mut tail = vec![(0.0, 0.0); k + 1];
    for i in (0..k).rev() {
        sum += series[i];
        sq += series[i] * series[i];
        tail[i] = (sum, sq);
    }
    for (d, &(s, q)) in tail.iter().enumerate().take(k / 2 + 1) {
        let m = (k - d) as f64;
        let ss = q - s * s / m;
        let v = ss / (m * m);
        if v < best.0 {
            best = (v, d);
        }
    }
    best.1
}

/// `xs` in batches of `b` (the last partial one left out), each its mean.
pub(crate) fn batch_means(xs: &[f64], b: usize) -> Vec<f64> {
    xs.chunks_exact(b.max(1))
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect()
}

/// Mean and variance (n - 1) of `xs`.
pub(crate) fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// The least-squares line through `ys` at x = 0, 1, 2, …: its slope and
/// the slope's t statistic (`None` with fewer than 3 points or no spread).
pub(crate) fn slope(ys: &[f64]) -> Option<(f64, f64)> {
    let n = ys.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let xm = (nf - 1.0) / 2.0;
    let ym = ys.iter().sum::<f64>() / nf;
    let sxx: f64 = (0..n).map(|i| (i as f64 - xm).powi(2)).sum();
    let sxy: f64 = ys
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - xm) * (y - ym))
        .sum();
    let b = sxy / sxx;
    let resid: f64 = ys
        .iter()
        .enumerate()
        .map(|(i, y)| (y - ym - b * (i as f64 - xm)).powi(2))
        .sum();
    let se = (resid / (nf - 2.0) / sxx).sqrt();
    if se == 0.0 {
        return Some((b, if b == 0.0 { 0.0 } else { f64::INFINITY }));
    }
    Some((b, b / se))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exponential draws of mean 1 from a fixed seed.
    fn exponential(n: usize, seed: u64) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..n).map(|_| -(1.0 - rng.f64()).ln()).collect()
    }

    #[test]
    fn exponential_gaps_pass_and_even_ones_fail() {
        // At the 1% level about one exponential sample in 100 fails.
        let failed = (0..100)
            .filter(|&s| {
                let mut g = exponential(2_000, s);
                let mean = g.iter().sum::<f64>() / g.len() as f64;
                ks_exponential(&mut g, mean, 0.0).unwrap() > KS_EXP_CRITICAL
            })
            .count();
        assert!(failed <= 5, "{failed} of 100 exponential samples failed");
        let mut even = vec![1.0; 2_000];
        assert!(ks_exponential(&mut even, 1.0, 0.1).unwrap() > 10.0 * KS_EXP_CRITICAL);
        // Exponential gaps with a floor and jitter of a twentieth of the
        // mean (a generator's own timing): kept at a tenth's resolution.
        let mut rng = fastrand::Rng::with_seed(9);
        let mut jittered: Vec<f64> = exponential(2_000, 11)
            .into_iter()
            .map(|g| (g + 0.05 * (rng.f64() - 0.5)).max(0.012))
            .collect();
        assert!(ks_exponential(&mut jittered, 1.0, 0.1).unwrap() < KS_EXP_CRITICAL);
        // Gamma(2) gaps of the same mean (bursty's opposite): fail.
        let a = exponential(4_000, 7);
        let mut gamma: Vec<f64> = a.chunks(2).map(|c| (c[0] + c[1]) / 2.0).collect();
        assert!(ks_exponential(&mut gamma, 1.0, 0.1).unwrap() > KS_EXP_CRITICAL);
        assert_eq!(ks_exponential(&mut [1.0; 10], 1.0, 0.0), None);
    }

    #[test]
    fn mser_finds_a_warm_up_and_none_in_a_flat_series() {
        let mut series = vec![10.0; 8];
        series.extend((0..40).map(|i| 1.0 + 0.01 * (i % 3) as f64));
        assert_eq!(mser(&series), 8);
        let flat: Vec<f64> = (0..40).map(|i| 1.0 + 0.01 * (i % 3) as f64).collect();
        assert!(mser(&flat) <= 2, "{}", mser(&flat));
    }

    #[test]
    fn a_rising_line_has_a_clear_slope_and_noise_none() {
        let ys: Vec<f64> = (0..30)
            .map(|i| 5.0 + 0.5 * i as f64 + (i % 2) as f64 * 0.1)
            .collect();
        let (b, t) = slope(&ys).unwrap();
        assert!((b - 0.5).abs() < 0.01 && t > 50.0, "{b} {t}");
        let noise: Vec<f64> = exponential(30, 3);
        let (_, t) = slope(&noise).unwrap();
        assert!(t.abs() < 3.0, "{t}");
        assert_eq!(batch_means(&[1.0, 3.0, 5.0, 7.0, 9.0], 2), vec![2.0, 6.0]);
        assert_eq!(mean_var(&[1.0, 3.0]), (2.0, 2.0));
    }
}
