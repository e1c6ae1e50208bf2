//! Colours for series. Up to [`CATEGORICAL`]'s length of unordered series
//! take the Okabe–Ito colours (chosen to stay apart under the common
//! colour-vision deficiencies, and the yellow left out: it vanishes on
//! white); ordered series (sweep steps) and longer lists take samples of
//! viridis, whose lightness rises monotonically, so neighbours stay
//! apart in order under any deficiency and in grey.

/// Okabe & Ito's colours for unordered series, most distinct first.
pub const CATEGORICAL: [&str; 7] = [
    "#0072B2", // blue
    "#D55E00", // vermillion
    "#009E73", // bluish green
    "#CC79A7", // reddish purple
    "#E69F00", // orange
    "#56B4E9", // sky blue
    "#000000", // black
];

/// viridis at nine even stops (matplotlib's table).
const VIRIDIS: [[u8; 3]; 9] = [
    [0x44, 0x01, 0x54],
    [0x47, 0x2d, 0x7b],
    [0x3b, 0x52, 0x8b],
    [0x2c, 0x72, 0x8e],
    [0x21, 0x91, 0x8c],
    [0x28, 0xae, 0x80],
    [0x5e, 0xc9, 0x62],
    [0xad, 0xdc, 0x30],
    [0xfd, 0xe7, 0x25],
];

/// Where viridis stops: its last yellow is too light on white.
const VIRIDIS_END: f64 = 0.85;

/// viridis at `t` in 0..=1 (of the usable part), as `#rrggbb`.
pub fn viridis(t: f64) -> String {
    let t = t.clamp(0.0, 1.0) * VIRIDIS_END * (VIRIDIS.len() - 1) as f64;
    let i = (t.floor() as usize).min(VIRIDIS.len() - 2);
    let f = t - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |k: usize| (f64::from(a[k]) + (f64::from(b[k]) - f64::from(a[k])) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(0), mix(1), mix(2))
}

/// The colours of `n` series: categorical for a few unordered ones, else
/// viridis from dark to light.
pub fn colors(n: usize, ordered: bool) -> Vec<String> {
    if !ordered && n <= CATEGORICAL.len() {
        return CATEGORICAL[..n].iter().map(|c| c.to_string()).collect();
    }
    (0..n)
        .map(|i| {
            viridis(if n > 1 {
                i as f64 / (n - 1) as f64
            } else {
                0.0
            })
        })
        .collect()
}

/// `#rrggbb` as red, green, blue in 0..=1 (sRGB).
fn rgb(hex: &str) -> [f64; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    [
        f64::from((v >> 16) & 0xff) / 255.0,
        f64::from((v >> 8) & 0xff) / 255.0,
        f64::from(v & 0xff) / 255.0,
    ]
}

/// How a colour is seen: normally, or under one of the common
/// deficiencies (Machado, Oliveira & Fernandes 2009, full severity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vision {
    /// Trichromatic.
    Normal,
    /// No long-wave cones.
    Protanopia,
    /// No medium-wave cones.
    Deuteranopia,
    /// No short-wave cones.
    Tritanopia,
}

impl Vision {
    /// Every vision simulated.
    pub const ALL: [Vision; 4] = [
        Vision::Normal,
        Vision::Protanopia,
        Vision::Deuteranopia,
        Vision::Tritanopia,
    ];

    fn matrix(self) -> [[f64; 3]; 3] {
        match self {
            Vision::Normal => [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            Vision::Protanopia => [
                [0.152286, 1.052583, -0.204868],
                [0.114503, 0.786281, 0.099216],
                [-0.003882, -0.048116, 1.051998],
            ],
            Vision::Deuteranopia => [
                [0.367322, 0.860646, -0.227968],
                [0.280085, 0.672501, 0.047413],
                [-0.011820, 0.042940, 0.968881],
            ],
            Vision::Tritanopia => [
                [1.255528, -0.076749, -0.178779],
                [-0.078411, 0.930809, 0.147602],
                [0.004733, 0.691367, 0.303900],
            ],
        }
    }
}

/// CIELAB (D65) of `hex` as seen with `vision`.
pub fn lab(hex: &str, vision: Vision) -> [f64; 3] {
    let lin = rgb(hex).map(|c| {
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    });
    let m = vision.matrix();
    let seen: Vec<f64> = (0..3)
        .map(|r| {
            (0..3)
                .map(|k| m[r][k] * lin[k])
                .sum::<f64>()
                .clamp(0.0, 1.0)
        })
        .collect();
    let (r, g, b) = (seen[0], seen[1], seen[2]);
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    let f = |t: f64| {
        if t > 0.008856 {
            t.cbrt()
        } else {
            7.787 * t + 16.0 / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// The CIE76 colour difference of `a` and `b` seen with `vision`.
pub fn delta_e(a: &str, b: &str, vision: Vision) -> f64 {
    let (p, q) = (lab(a, vision), lab(b, vision));
    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
}

/// The least difference between any two of `colors` under any vision.
pub fn least_difference(colors: &[&str]) -> f64 {
    let mut least = f64::INFINITY;
    for (i, a) in colors.iter().enumerate() {
        for b in &colors[i + 1..] {
            for v in Vision::ALL {
                least = least.min(delta_e(a, b, v));
            }
        }
    }
    least
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two colours a person can tell apart at a glance differ by well over
    /// 10 (CIE76; 2.3 is the smallest difference seen at all).
    const APART: f64 = 10.0;

    #[test]
    fn the_categorical_colours_stay_apart_under_every_deficiency() {
        let least = least_difference(&CATEGORICAL);
        assert!(least > APART, "least difference {least:.1}");
        for c in CATEGORICAL {
            assert!(
                delta_e(c, "#ffffff", Vision::Normal) > 30.0,
                "{c} too light on white"
            );
        }
    }

    #[test]
    fn ordered_colours_darken_to_lighten_under_every_deficiency() {
        for n in [2, 5, 17] {
            let cs = colors(n, true);
            for v in Vision::ALL {
                let l: Vec<f64> = cs.iter().map(|c| lab(c, v)[0]).collect();
                assert!(l.windows(2).all(|w| w[1] > w[0]), "{n} {v:?} {l:?}");
            }
            let refs: Vec<&str> = cs.iter().map(String::as_str).collect();
            let mut sorted = refs.clone();
            sorted.dedup();
            assert_eq!(sorted.len(), n, "all distinct: {cs:?}");
        }
        assert_eq!(viridis(0.0), "#440154");
    }

    #[test]
    fn a_few_unordered_series_are_categorical() {
        assert_eq!(colors(2, false), ["#0072B2", "#D55E00"]);
        assert_eq!(colors(9, false).len(), 9);
    }
}
