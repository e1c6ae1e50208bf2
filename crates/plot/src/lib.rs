//! barrage's `plot`: every record's latency over the time it was sent, as
//! one self-contained HTML page (inline SVG and CSS, no scripts, nothing
//! fetched), like vegeta's `plot`: a series per attack name and outcome
//! (`OK`, or `ERROR` for records with an error), seconds since the
//! attack's first request across, latency in milliseconds up, log scale
//! first with a linear one a click away. A flow's records (`-format
//! flow`) draw a series per step too (`login: OK`, `me: ERROR`), in the
//! flow's order.
//!
//! Memory is bounded: each series keeps at most `-threshold` points, the
//! lowest and highest latency of equal slices of time ([`envelope`]),
//! where vegeta keeps every record and downsamples at the end.

pub mod axis;
pub mod chart;
pub mod envelope;
pub mod page;
pub mod palette;
pub mod run;
pub mod svg;

use std::io::{self, Write};

use barrage_model::Hit;
use chart::{Axis, Chart, Mark, Range, Scale};
use envelope::{Envelope, Point};

/// vegeta's default `-threshold`: points drawn per series.
pub const DEFAULT_THRESHOLD: usize = 4000;

/// The page's title when none is given (`-title`).
pub const DEFAULT_TITLE: &str = "Barrage Plot";

/// One series: an attack's successes or its errors (a flow's: a step's).
struct Series {
    attack: String,
    /// A flow's step: its index and name.
    step: Option<(u32, String)>,
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
    /// From the send to a stream's first token, at the send time.
    Ttft,
    /// From the scheduled time to a stream's first token, at the
    /// scheduled time.
    TtftIntended,
}

/// Records folded into series, ready to draw.
pub struct Plot {
    threshold: usize,
    sample: Sample,
    series: Vec<Series>,
    /// What run it shows, said under the title.
    run: String,
    /// Live control's changes: schedule time (unix ns) and what.
    changes: Vec<(i64, String)>,
}

impl Plot {
    /// A plot drawing at most `threshold` points per series (0: all).
    pub fn new(threshold: usize, sample: Sample) -> Self {
        Plot {
            threshold,
            sample,
            series: Vec::new(),
            run: String::new(),
            changes: Vec::new(),
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
            Sample::Ttft => Point {
                t: hit.timestamp,
                latency: hit.ttft(),
            },
            Sample::TtftIntended => Point {
                t: hit.scheduled,
                latency: hit.ttft().saturating_add(hit.lag()),
            },
        };
        let step = hit.session.as_ref().map(|m| m.step);
        let i = match self.series.iter().position(|s| {
            s.error == error && s.attack == hit.attack && s.step.as_ref().map(|(i, _)| *i) == step
        }) {
            Some(i) => i,
            None => {
                self.series.push(Series {
                    attack: hit.attack.clone(),
                    step: step.map(|i| (i, hit.name.clone())),
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

    /// What run the page shows (a [`run::RunFacts`]' table), under its
    /// title.
    pub fn set_run(&mut self, html: String) {
        self.run = html;
    }

    /// Live control's changes (`attack -control`): each change's schedule
    /// time (unix ns) and what it was, drawn as rules.
    pub fn set_changes(&mut self, changes: impl IntoIterator<Item = (i64, String)>) {
        self.changes = changes.into_iter().collect();
    }

    /// Writes the page: the chart in log scale, and in linear scale a
    /// click away; a colour per attack (sweep steps in order of load,
    /// dark to light), successes as dots and errors as crosses.
    pub fn write_html(&self, title: &str, out: &mut dyn Write) -> io::Result<()> {
        let mut series: Vec<&Series> = self.series.iter().collect();
        // As vegeta orders them: by attack name, then OK before ERROR;
        // sweep steps by their load, a flow's steps in its order.
        let steps = series.iter().all(|s| step_amount(&s.attack).is_some());
        series.sort_by(|a, b| {
            let key = |s: &Series| if steps { step_amount(&s.attack) } else { None };
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| {
                    (&a.attack, a.step_index(), a.error).cmp(&(&b.attack, b.step_index(), b.error))
                })
        });
        // A colour per attack, and per step of a flow.
        let mut keys: Vec<(&str, Option<u32>)> = series
            .iter()
            .map(|s| (s.attack.as_str(), s.step_index()))
            .collect();
        keys.dedup();
        let attacks = {
            let mut a: Vec<&str> = keys.iter().map(|k| k.0).collect();
            a.dedup();
            a.len()
        };
        let colors = palette::colors(keys.len().max(2), steps && attacks > 1);
        let title = svg::escape(title);
        let mut page = String::with_capacity(64 << 10);
        page.push_str(&format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{title}</title>\n<style>\n{}</style>\n</head>\n<body>\n<h1>{title}</h1>\n",
            page::STYLE
        ));
        page.push_str(&self.run);
        if series.is_empty() {
            page.push_str("<p>No results.</p>\n</body>\n</html>\n");
            return out.write_all(page.as_bytes());
        }
        let mut log = Chart::new(
            "plot",
            960.0,
            560.0,
            Axis::linear("Seconds elapsed"),
            Axis {
                name: "Latency (ms, log scale)".into(),
                scale: Scale::Log,
                range: Range::FromZero,
            },
        );
        for s in &series {
            // Each attack's time counts from its own first request.
            let origin = series
                .iter()
                .filter(|o| o.attack == s.attack)
                .map(|o| o.first)
                .min()
                .unwrap_or(s.first);
            let nth = keys
                .iter()
                .position(|k| *k == (s.attack.as_str(), s.step_index()))
                .unwrap_or(0);
            // One attack: successes blue, errors vermillion; more (or a
            // flow's steps): the attack's or the step's colour for both.
            let color = if keys.len() == 1 && s.error {
                &colors[1]
            } else {
                &colors[nth]
            };
            let drawn = s.points.points();
            log.series.push(chart::Series {
                name: label(&s.name(), s.error),
                color: color.clone(),
                mark: if s.error { Mark::Crosses } else { Mark::Dots },
                detail: if drawn.len() as u64 == s.points.count() {
                    format!("{} requests", s.points.count())
                } else {
                    format!(
                        "{} requests, {} points drawn",
                        s.points.count(),
                        drawn.len()
                    )
                },
                points: drawn
                    .iter()
                    .map(|p| {
                        (
                            p.t.saturating_sub(origin) as f64 / 1e9,
                            p.latency as f64 / 1e6,
                        )
                    })
                    .collect(),
            });
        }
        // Live control's changes, from the first request of all.
        if let Some(origin) = series.iter().map(|s| s.first).min() {
            log.rules = (self.changes.iter())
                .map(|(at, what)| chart::Rule {
                    x: at.saturating_sub(origin).max(0) as f64 / 1e9,
                    label: what.clone(),
                })
                .collect();
        }
        let mut lin = log.clone();
        lin.id = "plot-linear".into();
        lin.y = Axis::linear("Latency (ms)");
        page.push_str("<div class=\"wide\">\n");
        page::toggle(&mut page, "linear", "linear scale", &log, &lin);
        page.push_str("</div>\n</body>\n</html>\n");
        out.write_all(page.as_bytes())
    }
}

impl Series {
    fn step_index(&self) -> Option<u32> {
        self.step.as_ref().map(|(i, _)| *i)
    }

    /// What the legend calls it: the attack's name, then its step's.
    fn name(&self) -> String {
        match &self.step {
            None => self.attack.clone(),
            Some((_, step)) if self.attack.is_empty() => step.clone(),
            Some((_, step)) => format!("{} {step}", self.attack),
        }
    }
}

/// The load of a sweep step's attack name (`rate=5000`, `c=200`,
/// `rate=5000 warmup`), to order and colour steps by load.
fn step_amount(attack: &str) -> Option<f64> {
    let rest = attack
        .strip_prefix("rate=")
        .or_else(|| attack.strip_prefix("c="))?;
    rest.split(' ').next()?.parse().ok()
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
