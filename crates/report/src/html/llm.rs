//! The report page's LLM section (`attack -llm`, issue 62), next to the
//! latency: the token counts with their source, tokens a second, TTFT,
//! ITL, TPOT and E2E (each named by where it counts from) in a table, their
//! spectra, and output tokens a second over the run.

use std::collections::BTreeMap;

use barrage_metrics::Metrics;
use barrage_model::Hit;
use barrage_plot::{chart::Mark, palette::CATEGORICAL};

use super::page::{h2, line, spectrum, spectrum_chart, table, time_chart};
use crate::{text::dur, Percentiles};

/// Windows kept at most: past it, neighbours merge and windows double.
const MOST: usize = 600;

/// Output tokens by the window they arrived in: each token event's
/// share of its record's output (a chunk of four counts four), at the
/// event's time; a record whose events were not all stamped puts the
/// rest at its end.
#[derive(Clone)]
pub(crate) struct Tokens {
    /// Window width, ns (100 ms at first).
    width: i64,
    /// Tokens by window (its start / width).
    windows: BTreeMap<i64, f64>,
}

impl Default for Tokens {
    fn default() -> Self {
        Tokens {
            width: 100_000_000,
            windows: BTreeMap::new(),
        }
    }
}

impl Tokens {
    /// Counts a record's output tokens when they came.
    pub(crate) fn add(&mut self, hit: &Hit) {
        let Some(t) = &hit.tokens else {
            return;
        };
        let out = t.output().0 as f64;
        let each = out / hit.event_count.max(hit.events.len() as u64).max(1) as f64;
        for &at in &hit.events {
            let key = hit
                .timestamp
                .saturating_add(at as i64)
                .div_euclid(self.width);
            *self.windows.entry(key).or_default() += each;
        }
        let rest = out - each * hit.events.len() as f64;
        if rest > 0.0 {
            *self
                .windows
                .entry(hit.end().div_euclid(self.width))
                .or_default() += rest;
        }
        while self.windows.len() > MOST {
            self.width *= 2;
            let old = std::mem::take(&mut self.windows);
            for (k, n) in old {
                *self.windows.entry(k.div_euclid(2)).or_default() += n;
            }
        }
    }

    /// (seconds from `start`, tokens a second) of each window, merged up
    /// to a second wide while there are more than 120, the empty ones
    /// between as 0 (no token came then).
    fn points(&self, start: i64) -> Vec<(f64, f64)> {
        let (Some(first), Some(last)) = (self.windows.keys().next(), self.windows.keys().last())
        else {
            return Vec::new();
        };
        let mut merge = 1i64;
        while (last - first) / merge > 120 && self.width * merge < 1_000_000_000 {
            merge *= 2;
        }
        let width = self.width * merge;
        let secs = width as f64 / 1e9;
        let mut merged: BTreeMap<i64, f64> = BTreeMap::new();
        for (k, n) in &self.windows {
            *merged.entry(k.div_euclid(merge)).or_default() += n;
        }
        let (lo, hi) = (first.div_euclid(merge), last.div_euclid(merge));
        (lo..=hi)
            .map(|k| {
                let at = (k * width - start) as f64 / 1e9;
                let n = merged.get(&k).copied().unwrap_or(0.0);
                (at.max(0.0), n / secs)
            })
            .collect()
    }
}

/// The section; nothing when no record had token counts.
pub(crate) fn section(page: &mut String, m: &Metrics, tokens: &Tokens, p: &Percentiles) {
    let Some(l) = m.llm() else {
        return;
    };
    h2(page, "LLM");
    let labels: Vec<String> = p.iter().map(|(_, l)| l).collect();
    let (out_s, all_s) = m.tokens_per_second().unwrap_or_default();
    let mut rows = vec![
        vec![
            "Tokens".into(),
            "output, input, per request, from, mismatched".into(),
            crate::llm::tokens_words(l),
        ],
        vec![
            "Tokens/s".into(),
            "output, total".into(),
            format!("{out_s:.2}, {all_s:.2}"),
        ],
    ];
    for (name, d) in [
        ("TTFT, from the send", l.ttft()),
        ("TTFT, from the schedule", l.ttft_scheduled()),
        ("ITL, between chunks", l.itl()),
        ("ITL, per token", l.per_token()),
        ("TPOT", l.tpot()),
        ("E2E, from the send", l.e2e()),
        ("E2E, from the schedule", l.e2e_scheduled()),
    ] {
        if d.count() == 0 {
            continue;
        }
        let q: Vec<String> = p.iter().map(|(q, _)| dur(d.quantile(q))).collect();
        rows.push(vec![
            name.into(),
            format!("min, mean, {}, max", labels.join(", ")),
            format!(
                "{}, {}, {}, {}",
                dur(d.min()),
                dur(d.mean()),
                q.join(", "),
                dur(d.max())
            ),
        ]);
    }
    page.push_str("<div class=\"charts\">\n<div>\n");
    table(page, &["figure", "of", "values"], &rows);
    page.push_str("</div>\n<div>\n");
    let spectra = [
        ("TTFT", CATEGORICAL[0], l.ttft()),
        ("ITL (chunk)", CATEGORICAL[2], l.itl()),
        ("TPOT", CATEGORICAL[1], l.tpot()),
    ]
    .into_iter()
    .filter(|(_, _, d)| d.count() > 0)
    .map(|(name, color, d)| spectrum(name, color, d))
    .collect();
    spectrum_chart("llm-spectrum", spectra).draw(page);
    page.push_str("</div>\n<div>\n");
    time_chart(
        "tokens",
        barrage_plot::chart::Axis::linear("Output tokens a second"),
        vec![line(
            "output tokens/s (as they came)",
            CATEGORICAL[3],
            Mark::Line,
            tokens.points(m.earliest().unwrap_or(0)),
        )],
    )
    .draw(page);
    page.push_str("</div>\n</div>\n");
}
