//! [`Until`]: `attack -until 'p99±5%'`, a run that stops when the answer
//! is sure: when the interval of a figure, from the run so far
//! ([`crate::Metrics::intervals_at`]), is within a width of it.

use crate::{Metrics, ParseError};

/// The figure `-until` watches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UntilFigure {
    /// A latency percentile (`p99`: 99.0).
    Percentile(f64),
    /// The mean latency.
    Mean,
    /// The share of records that succeeded (its width in percentage
    /// points, not relative).
    Success,
}

/// `-until FIGURE±WIDTH%[@CONFIDENCE]`: `p99±5%`, `mean±2%@90`,
/// `success±0.5%`.
#[derive(Debug, Clone, PartialEq)]
pub struct Until {
    /// What is watched.
    pub figure: UntilFigure,
    /// The interval's half-width it must be within: relative to the
    /// figure (0.05 for `±5%`), or in points for `success`.
    pub width: f64,
    /// The interval's confidence (0.95 unless `@90`, `@99`).
    pub confidence: f64,
    text: String,
}

impl std::str::FromStr for Until {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Until, ParseError> {
        let bad = |why: &str| {
            ParseError::from(format!(
                "-until {s:?}: {why} (as p99±5%, mean±2%@90, success±0.5%)"
            ))
        };
        let (body, confidence) = match s.split_once('@') {
            Some((b, c)) => {
                let c: f64 = c
                    .trim_end_matches('%')
                    .parse()
                    .map_err(|_| bad("a confidence such as @90"))?;
                if !(50.0..100.0).contains(&c) {
                    return Err(bad("a confidence from 50 to 99.9"));
                }
                (b, c / 100.0)
            }
            None => (s, 0.95),
        };
        let (name, width) = body
            .split_once('±')
            .or_else(|| body.split_once("+-"))
            .ok_or_else(|| bad("no ± (or +-) width"))?;
        let width: f64 = width
            .trim()
            .strip_suffix('%')
            .ok_or_else(|| bad("the width is a percentage"))?
            .parse()
            .map_err(|_| bad("the width is a percentage"))?;
        if !(width > 0.0 && width < 100.0) {
            return Err(bad("a width above 0% and under 100%"));
        }
        let figure = match name.trim() {
            "mean" => UntilFigure::Mean,
            "success" => UntilFigure::Success,
            p => match p.strip_prefix('p').and_then(|q| q.parse::<f64>().ok()) {
                Some(q) if q > 0.0 && q < 100.0 => UntilFigure::Percentile(q),
                _ => return Err(bad("the figure is pNN, mean or success")),
            },
        };
        Ok(Until {
            figure,
            width: width / 100.0,
            confidence,
            text: s.to_string(),
        })
    }
}

/// The least span of sends `-until` stops on, ns.
pub const UNTIL_LEAST: i64 = 3_000_000_000;

impl Until {
    /// `Some(what was found)` once `m`'s interval of the figure is within
    /// the width: `-until p99±5% met: p99 1.21ms, 95% interval
    /// 1.18ms..1.24ms (±2.5%)`; `None` before (or while the run is too
    /// short for an interval).
    pub fn settled(&self, m: &Metrics) -> Option<String> {
        // Not before UNTIL_LEAST of sends, nor before the tail the
        // verdict asks for lies beyond the percentile: a run that held
        // still for its first second (about 100 records) is no answer.
        if m.duration() < UNTIL_LEAST {
            return None;
        }
        if let UntilFigure::Percentile(p) = self.figure {
            if (m.requests() as f64) * (1.0 - p / 100.0) < crate::Limits::default().tail {
                return None;
            }
        }
        let percents: Vec<f64> = match self.figure {
            UntilFigure::Percentile(p) => vec![p],
            _ => Vec::new(),
        };
        let iv = m.intervals_at(&percents, self.confidence)?;
        let dur = super::words::ns;
        let (value, i, shown) = match self.figure {
            UntilFigure::Percentile(p) => {
                let v = m.latency().quantile(p / 100.0) as f64;
                (v, iv.latencies[0].1, format!("p{p} {}", dur(v)))
            }
            UntilFigure::Mean => {
                let v = m.latency().mean() as f64;
                (v, iv.mean, format!("mean {}", dur(v)))
            }
            UntilFigure::Success => {
                let v = m.success_ratio();
                (v, iv.success, format!("success {:.2}%", v * 100.0))
            }
        };
        let half = (i.high - i.low) / 2.0;
        let (within, said) = match self.figure {
            UntilFigure::Success => (half <= self.width, format!("±{:.2} points", half * 100.0)),
            _ if value > 0.0 => (
                half / value <= self.width,
                format!("±{:.1}%", half / value * 100.0),
            ),
            _ => (false, String::new()),
        };
        let range = match self.figure {
            UntilFigure::Success => format!("{:.2}%..{:.2}%", i.low * 100.0, i.high * 100.0),
            _ => format!("{}..{}", dur(i.low), dur(i.high)),
        };
        within.then(|| {
            format!(
                "-until {} met: {shown}, {:.0}% interval {range} ({said})",
                self.text,
                self.confidence * 100.0
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use barrage_model::Hit;

    #[test]
    fn the_grammar_and_its_refusals() {
        let u: Until = "p99±5%".parse().unwrap();
        assert_eq!(
            (u.figure, u.width, u.confidence),
            (UntilFigure::Percentile(99.0), 0.05, 0.95)
        );
        let u: Until = "mean+-2%@90".parse().unwrap();
        assert_eq!((u.figure, u.confidence), (UntilFigure::Mean, 0.9));
        for (bad, says) in [
            ("p99", "no ±"),
            ("p99±5", "percentage"),
            ("p100±5%", "pNN"),
            ("p99±5%@20", "confidence"),
        ] {
            let e = bad.parse::<Until>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_steady_run_settles_and_a_short_one_does_not() {
        let options = crate::Options {
            intervals: true,
            ..Default::default()
        };
        let mut m = Metrics::with_options(options);
        let u: Until = "p50±5%".parse().unwrap();
        let mut settled_at = None;
        let mut held = None;
        for i in 0..20_000u64 {
            let t = 1_700_000_000_000_000_000 + i as i64 * 1_000_000;
            m.add(&Hit {
                seq: i,
                code: 200,
                scheduled: t,
                timestamp: t,
                latency: 1_000_000 + (i.wrapping_mul(2_654_435_761) % 400_000),
                ..Hit::default()
            });
            if i % 1000 == 999 && settled_at.is_none() {
                if let Some(said) = u.settled(&m) {
                    assert!(said.starts_with("-until p50±5% met: p50 "), "{said}");
                    settled_at = Some(i);
                    held = m.intervals_at(&[50.0], 0.95).map(|iv| iv.latencies[0].1);
                }
            }
            if i == 50 || i == 2_500 {
                assert_eq!(u.settled(&m), None, "too short to say");
            }
        }
        assert!(
            settled_at.is_some_and(|i| (3_000..20_000).contains(&i)),
            "{settled_at:?}"
        );
        // The interval it stopped on holds the figure of the whole run.
        let whole = m.latency().quantile(0.5) as f64;
        assert!(
            held.is_some_and(|i| i.holds(whole)),
            "{held:?} against {whole}"
        );
    }
}
