//! How the verdict says its figures.

use barrage_model::duration;

/// Seconds into a run, as a duration: `12s`, `1m3.5s`.
pub(super) fn seconds(s: f64) -> String {
    let ms = (s * 1000.0).round() as i64;
    duration::format(ms.max(0) * 1_000_000)
}

/// A duration for a check's words, to 4 significant digits.
pub(crate) fn ns(v: f64) -> String {
    let v = v.round().max(0.0);
    let digits = if v >= 1.0 {
        v.log10().floor() as i32 + 1
    } else {
        1
    };
    let unit = 10f64.powi((digits - 4).max(0));
    duration::format(((v / unit).round() * unit) as i64)
}

/// "record" or "records", as `n` (rounded) asks.
pub(super) fn records(n: f64) -> &'static str {
    if n.round() == 1.0 {
        "record"
    } else {
        "records"
    }
}

/// A share as a percentage, `99%`.
pub(super) fn pct(v: f64) -> String {
    let p = v * 100.0;
    if p >= 10.0 || p == 0.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}
