//! barrage's `plot`: every record's latency over the time it was sent, as
//! one self-contained HTML page (inline SVG and CSS, no scripts, nothing
//! fetched), like vegeta's `plot`: a series per attack name and outcome
//! (`OK`, or `ERROR` for records with an error), seconds since the
//! attack's first request across, latency in milliseconds up, log scale
//! first with a linear one a click away.
//!
//! Memory is bounded: each series keeps at most `-threshold` points, the
//! lowest and highest latency of equal slices of time ([`envelope`]),
//! where vegeta keeps every record and downsamples at the end.

pub mod envelope;
pub mod svg;

use std::io::{self, Write};

use barrage_model::Hit;
use envelope::{Envelope, Point};

/// vegeta's default `-threshold`: points drawn per series.
pub const DEFAULT_THRESHOLD: usize = 4000;

/// The page's title when none is given (`-title`).
pub const DEFAULT_TITLE: &str = "Barrage Plot";

/// One series: an attack's successes or its errors.
struct Series {
    attack: String,
    error: bool,
    points: Envelope,
    /// Earliest send time seen (the attack's time origin).
    first: i64,
}

/// Which latency a point shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// From the send to the end of the response, at the send time (vegeta's).
    Actual,
    /// From the scheduled time to the end of the response, at the
    /// scheduled time: a generator that fell behind shows here.
    Intended,
    /// From the send to the response's head, at the send time.
    FirstByte,
}

/// Records folded into series, ready to draw.
pub struct Plot {
    threshold: usize,
    sample: Sample,
    series: Vec<Series>,
}

impl Plot {
    /// A plot drawing at most `threshold` points per series (0: all).
    pub fn new(threshold: usize, sample: Sample) -> Self {
        Plot {
            threshold,
            sample,
            series: Vec::new(),
        }
    }

    /// Adds one record.
    pub fn add(&mut self, hit: &Hit) {
        let error = !hit.error.is_empty();
        let p = match self.sample {
            Sample::Actual => Point {
                t: hit.timestamp,
                latency: hit.latency,
            },
            Sample::Intended => Point {
                t: hit.scheduled,
                latency: hit.intended_latency(),
            },
            Sample::FirstByte => Point {
                t: hit.timestamp,
                latency: hit.first_byte,
            },
        };
        let i = match self
            .series
            .iter()
            .position(|s| s.error == error && s.attack == hit.attack)
        {
            Some(i) => i,
            None => {
                self.series.push(Series {
                    attack: hit.attack.clone(),
                    error,
                    points: Envelope::new(self.threshold),
                    first: p.t,
                });
                self.series.len() - 1
            }
        };
        let s = &mut self.series[i];
        s.first = s.first.min(p.t);
        s.points.add(p);
    }

    /// Records added.
    pub fn count(&self) -> u64 {
        self.series.iter().map(|s| s.points.count()).sum()
    }

    /// Writes the page.
    pub fn write_html(&self, title: &str, out: &mut dyn Write) -> io::Result<()> {
        let mut series: Vec<&Series> = self.series.iter().collect();
        // As vegeta orders them: by attack name, then OK before ERROR.
        series.sort_by(|a, b| (&a.attack, a.error).cmp(&(&b.attack, b.error)));
        let mut attacks: Vec<&str> = series.iter().map(|s| s.attack.as_str()).collect();
        attacks.dedup();
        let drawn: Vec<svg::Drawn> = series
            .iter()
            .map(|s| {
                // Each attack's time counts from its own first request.
                let origin = series
                    .iter()
                    .filter(|o| o.attack == s.attack)
                    .map(|o| o.first)
                    .min()
                    .unwrap_or(s.first);
                let nth = attacks.iter().position(|a| *a == s.attack).unwrap_or(0);
                svg::Drawn {
                    label: label(&s.attack, s.error),
                    color: svg::color(nth, s.error),
                    points: s
                        .points
                        .points()
                        .iter()
                        .map(|p| {
                            (
                                p.t.saturating_sub(origin) as f64 / 1e9,
                                p.latency as f64 / 1e6,
                            )
                        })
                        .collect(),
                    count: s.points.count(),
                }
            })
            .collect();
        let title = svg::escape(title);
        let mut page = String::with_capacity(64 << 10);
        page.push_str(&format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{title}</title>\n<style>\n{}</style>\n</head>\n<body>\n<h1>{title}</h1>\n",
            svg::STYLE
        ));
        if drawn.is_empty() {
            page.push_str("<p>No results.</p>\n</body>\n</html>\n");
            return out.write_all(page.as_bytes());
        }
        page.push_str(
            "<input type=\"checkbox\" id=\"linear\"><label for=\"linear\">linear scale</label>\n",
        );
        page.push_str("<div class=\"log\">\n");
        svg::chart(&mut page, &drawn, svg::Scale::Log);
        page.push_str("</div>\n<div class=\"lin\">\n");
        svg::chart(&mut page, &drawn, svg::Scale::Linear);
        page.push_str("</div>\n");
        svg::legend(&mut page, &drawn);
        page.push_str("</body>\n</html>\n");
        out.write_all(page.as_bytes())
    }
}

/// vegeta's series label: `attack: OK` (just `OK` for an unnamed attack).
fn label(attack: &str, error: bool) -> String {
    let outcome = if error { "ERROR" } else { "OK" };
    if attack.is_empty() {
        outcome.to_string()
    } else {
        format!("{attack}: {outcome}")
    }
}
