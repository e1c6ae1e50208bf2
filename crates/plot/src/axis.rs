//! Axes: how values map to a chart's width or height, and their ticks:
//! linear from zero, linear over the data (a sweep's x axis starts at its
//! first step), fixed (success at 0–100%), logarithmic, or in nines
//! (percentiles up to 99.999).

use crate::svg::{decades, log_ticks, number, ticks};

/// How values map to an axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Evenly.
    Linear,
    /// By powers of ten (values at or below zero sit on the lowest line).
    Log,
    /// Percentiles (0..100, exclusive) by their nines: 90, 99, 99.9 are
    /// evenly apart.
    Nines,
}

/// Which values an axis spans.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// From zero to a round value above the data (log axes: the data's
    /// decades).
    FromZero,
    /// From the least to the greatest value of the data.
    Data,
    /// Exactly these.
    Fixed(f64, f64),
}

/// One axis: its name (with unit) and how it maps values.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Written along the axis, such as `Latency (ms)`.
    pub name: String,
    /// Linear, log or nines.
    pub scale: Scale,
    /// What it spans.
    pub range: Range,
}

impl Axis {
    /// A linear axis from zero.
    pub fn linear(name: &str) -> Axis {
        Axis {
            name: name.into(),
            scale: Scale::Linear,
            range: Range::FromZero,
        }
    }
}

/// A mapping from values to pixels with its ticks.
pub(crate) struct Mapped {
    /// (value, label) of each tick.
    pub(crate) ticks: Vec<(f64, String)>,
    /// The value's position in 0..=1 along the axis.
    pub(crate) at: Box<dyn Fn(f64) -> f64>,
}

fn nines(p: f64) -> f64 {
    let q = (p / 100.0).clamp(0.0, 1.0 - 1e-12);
    -(1.0 - q).log10()
}

pub(crate) fn map(axis: &Axis, values: &[f64]) -> Mapped {
    let finite = || values.iter().copied().filter(|v| v.is_finite());
    let max = finite().fold(f64::NEG_INFINITY, f64::max);
    let min = finite().fold(f64::INFINITY, f64::min);
    let labelled = |t: Vec<f64>| t.into_iter().map(|v| (v, number(v))).collect::<Vec<_>>();
    match axis.scale {
        Scale::Linear => {
            let (lo, hi, t) = match axis.range {
                Range::FromZero => {
                    let t = ticks(max.max(0.0), 6);
                    (0.0, *t.last().unwrap_or(&1.0), t)
                }
                Range::Data | Range::Fixed(..) => {
                    let (lo, hi) = match axis.range {
                        Range::Fixed(lo, hi) => (lo, hi),
                        _ if min.is_finite() => (min, max),
                        _ => (0.0, 1.0),
                    };
                    let (lo, hi) = if hi > lo {
                        (lo, hi)
                    } else {
                        (lo - 1.0, lo + 1.0)
                    };
                    (lo, hi, ticks_within(lo, hi, 6))
                }
            };
            Mapped {
                ticks: labelled(t),
                at: Box::new(move |v| (v - lo) / (hi - lo)),
            }
        }
        Scale::Log => {
            let pos_min = finite().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
            let (lo, hi) = match axis.range {
                Range::Fixed(a, b) if a > 0.0 && b > a => {
                    (a.log10().floor() as i32, b.log10().ceil() as i32)
                }
                _ => decades(pos_min, max),
            };
            let span = f64::from(hi - lo);
            Mapped {
                ticks: labelled(log_ticks(lo, hi)),
                at: Box::new(move |v| {
                    if v > 0.0 {
                        ((v.log10() - f64::from(lo)) / span).clamp(0.0, 1.0)
                    } else {
                        0.0
                    }
                }),
            }
        }
        Scale::Nines => {
            let top = nines(max.max(90.0)).ceil().max(1.0);
            let mut t = vec![(0.0, "0".to_string())];
            let mut label = 90.0;
            for _ in 0..top as i32 {
                t.push((label, number(label)));
                label = 100.0 - (100.0 - label) / 10.0;
            }
            Mapped {
                ticks: t,
                at: Box::new(move |v| nines(v) / top),
            }
        }
    }
}

/// Round ticks inside `lo..=hi`, about `want` of them.
fn ticks_within(lo: f64, hi: f64, want: usize) -> Vec<f64> {
    let step = ticks(hi - lo, want).get(1).copied().unwrap_or(1.0);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_space_percentiles_by_their_nines() {
        let m = map(
            &Axis {
                name: "p".into(),
                scale: Scale::Nines,
                range: Range::FromZero,
            },
            &[0.0, 99.999],
        );
        let labels: Vec<&str> = m.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0", "90", "99", "99.9", "99.99", "99.999"]);
        assert!(((m.at)(99.0) - 0.4).abs() < 1e-9);
    }

    #[test]
    fn ticks_inside_a_range_are_round() {
        assert_eq!(
            ticks_within(1000.0, 64000.0, 6),
            [20000.0, 40000.0, 60000.0]
        );
        assert_eq!(ticks_within(200.0, 800.0, 6)[0], 200.0);
    }
}
