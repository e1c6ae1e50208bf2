//! What charts are written with: escaped text, round ticks and their labels.

/// `s` safe inside HTML and SVG text and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Round tick positions from 0 to at least `max`: steps of 1, 2 or 5
/// times a power of ten, about `want` of them.
pub fn ticks(max: f64, want: usize) -> Vec<f64> {
    let max = if max > 0.0 && max.is_finite() {
        max
    } else {
        1.0
    };
    let raw = max / want.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let n = (max / step).ceil() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

/// A tick label: no trailing zeros, no float noise (`0.30000000000000004`).
pub fn number(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// The powers of ten spanning `lo..=hi`, the least and greatest positive
/// latencies (at least one decade); zero latencies are drawn on the lowest.
pub(crate) fn decades(lo: f64, hi: f64) -> (i32, i32) {
    let usable = |v: f64| v > 0.0 && v.is_finite();
    let lo = if usable(lo) {
        lo.log10().floor() as i32
    } else {
        -3
    };
    let hi = if usable(hi) {
        hi.log10().ceil() as i32
    } else {
        lo + 1
    };
    (lo, hi.max(lo + 1))
}

/// Ticks from `10^lo` to `10^hi`: each power of ten, and 2 and 5 times
/// it when there are at most two decades (else they crowd the axis).
pub(crate) fn log_ticks(lo: i32, hi: i32) -> Vec<f64> {
    let mults: &[f64] = if hi - lo <= 2 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut out = Vec::new();
    for e in lo..hi {
        out.extend(mults.iter().map(|m| m * 10f64.powi(e)));
    }
    out.push(10f64.powi(hi));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(9.3, 10), (0..=10).map(f64::from).collect::<Vec<_>>());
        assert_eq!(
            ticks(45.0, 10),
            [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0]
        );
        assert_eq!(ticks(0.0, 10).last(), Some(&1.0));
        let t = ticks(0.37, 8);
        assert_eq!(t.last().map(|v| number(*v)), Some("0.4".to_string()));
        assert_eq!(number(t[3]), "0.15");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(3600.0), "3600");
    }

    #[test]
    fn decades_span_the_positive_values() {
        assert_eq!(decades(0.042, 12.0), (-2, 2));
        assert_eq!(decades(1.0, 1.0), (0, 1));
        assert_eq!(decades(f64::INFINITY, 0.0), (-3, -2));
    }

    #[test]
    fn log_ticks_add_halves_and_fifths_on_short_spans() {
        let labels = |v: Vec<f64>| v.into_iter().map(number).collect::<Vec<_>>();
        assert_eq!(labels(log_ticks(-1, 0)), ["0.1", "0.2", "0.5", "1"]);
        assert_eq!(
            labels(log_ticks(-1, 1)),
            ["0.1", "0.2", "0.5", "1", "2", "5", "10"]
        );
        assert_eq!(labels(log_ticks(-2, 1)), ["0.01", "0.1", "1", "10"]);
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
    }
}
