//! `report -type html`: the page of a run.

use std::io::{self, Write};

use barrage_metrics::{GroupBy, Groups, Metrics, Options};
use barrage_model::{Hit, Lacks};
use barrage_plot::{
    chart::{Axis, Mark, Range, Rule, Scale},
    palette::{colors, CATEGORICAL},
};

use super::{
    page::{self, h2, line, spectrum, spectrum_chart, table, time_chart},
    Timeline,
};
use crate::{text::dur, Percentiles};

/// A part of the page its caller draws (such as a sweep's table and
/// charts), placed after the summary's charts.
pub struct Section {
    /// Its heading.
    pub title: String,
    /// Its HTML, whole elements.
    pub html: String,
}

/// Records folded for the page: the total, the groups of `-by`, and the
/// figures over time.
pub struct Report {
    options: Options,
    total: Metrics,
    groups: Option<Groups>,
    timeline: Timeline,
    /// An LLM run's output tokens over time.
    tokens: super::llm::Tokens,
    /// What run the page shows, said under its title.
    run: String,
}

impl Report {
    /// An empty report judging and measuring by `options`, grouped by `by`.
    pub fn new(options: Options, by: Option<GroupBy>) -> Report {
        let total = Metrics::with_options(options.clone());
        Report {
            groups: by.map(|b| Groups::new(b, &total)),
            options,
            total,
            timeline: Timeline::new(),
            tokens: Default::default(),
            run: String::new(),
        }
    }

    /// Adds a record, after live control's `markers` read with it
    /// (`-by phase`).
    pub fn add(&mut self, hit: &Hit, lacks: Lacks, markers: &[barrage_model::Marker]) {
        self.total.add_lacking(hit, lacks);
        if let Some(g) = &mut self.groups {
            g.add_markers(markers);
            g.add_lacking(hit, lacks);
        }
        let (ok, latency) = self.options.judge(hit);
        self.timeline.add(hit, ok, latency);
        self.tokens.add(hit);
    }

    /// What run the page shows (a `RunFacts` table), under its title.
    pub fn set_run(&mut self, html: String) {
        self.run = html;
    }

    /// The total's metrics, to add what the stream's facts say.
    pub fn total_mut(&mut self) -> &mut Metrics {
        &mut self.total
    }

    /// The total's metrics.
    pub fn total(&self) -> &Metrics {
        &self.total
    }

    /// Writes the page.
    pub fn write(
        &self,
        title: &str,
        p: &Percentiles,
        sections: &[Section],
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let mut page = page::head(title);
        page.push_str(&self.run);
        let m = &self.total;
        if m.requests() == 0 {
            page.push_str("<p>No results.</p>\n");
            page.push_str(page::END);
            return out.write_all(page.as_bytes());
        }
        verdict(&mut page, m, p);
        page.push_str("<div class=\"charts\">\n<div>\n");
        table(&mut page, &["figure", "of", "values"], &summary(m, p));
        page.push_str("</div>\n");
        let spectra = vec![spectrum("latency", CATEGORICAL[0], m.latency())];
        barrage_plot::page::latency_toggle(&mut page, &spectrum_chart("spectrum", spectra));
        self.over_time(&mut page, &page::changes(m));
        page.push_str("</div>\n");
        super::llm::section(&mut page, m, &self.tokens, p);
        super::server::section(&mut page, m);
        for s in sections {
            h2(&mut page, &s.title);
            page.push_str(&s.html);
        }
        sessions(&mut page, m, p);
        codes_and_errors(&mut page, m);
        if let Some(g) = &self.groups {
            groups(&mut page, g, p);
        }
        connections(&mut page, m, p);
        page.push_str(page::END);
        out.write_all(page.as_bytes())
    }

    /// The charts over time, each with `rules` (live control's changes).
    fn over_time(&self, page: &mut String, rules: &[Rule]) {
        let w = self.timeline.windows();
        let pts = |f: &dyn Fn(&super::Window) -> f64| -> Vec<(f64, f64)> {
            w.iter()
                .map(|x| (x.at, f(x)))
                .filter(|p| p.1.is_finite())
                .collect()
        };
        // Latency and lag keep their empty windows as gaps (NaN): a line
        // through them would draw a window without records as 0.
        let gaps = |f: &dyn Fn(&super::Window) -> f64| -> Vec<(f64, f64)> {
            w.iter().map(|x| (x.at, f(x))).collect()
        };
        let mut rates = time_chart(
            "rates",
            Axis::linear("Per second"),
            vec![
                line("ok/s", CATEGORICAL[0], Mark::Line, pts(&|x| x.ok)),
                line("errors/s", CATEGORICAL[1], Mark::Line, pts(&|x| x.errors)),
            ],
        );
        rates.id = "rates".into();
        rates.rules = rules.to_vec();
        page.push_str("<div>\n");
        rates.draw(page);
        page.push_str("</div>\n");
        // Success in every window: one line says it, no flat chart.
        if w.iter().all(|x| x.success.is_nan() || x.success >= 1.0) {
            page.push_str("<div>\n<p class=\"note\">Success: 100% in every window.</p>\n");
        } else {
            page.push_str("<div>\n");
            let mut success = time_chart(
                "success",
                Axis {
                    name: "Success (%)".into(),
                    scale: Scale::Linear,
                    range: Range::Fixed(0.0, 100.0),
                },
                vec![line(
                    "success",
                    CATEGORICAL[3],
                    Mark::Line,
                    pts(&|x| x.success * 100.0),
                )],
            );
            success.rules = rules.to_vec();
            success.draw(page);
        }
        page.push_str("</div>\n");
        let ms = |v: f64| v / 1e6;
        let mut latency = time_chart(
            "latency",
            Axis::linear("Latency (ms)"),
            vec![
                line("p50", CATEGORICAL[2], Mark::Line, gaps(&|x| ms(x.p50))),
                line("p99", CATEGORICAL[1], Mark::Line, gaps(&|x| ms(x.p99))),
            ],
        );
        latency.rules = rules.to_vec();
        barrage_plot::page::latency_toggle(page, &latency);
        page.push_str("<div>\n");
        let mut lag = time_chart(
            "lag",
            Axis::linear("Lag (ms)"),
            vec![line(
                "lag p99 (sent after its time)",
                CATEGORICAL[4],
                Mark::Line,
                gaps(&|x| ms(x.lag99)),
            )],
        );
        lag.rules = rules.to_vec();
        lag.draw(page);
        page.push_str("</div>\n");
    }
}

/// vegeta's figures, a row each: name, what, values.
fn summary(m: &Metrics, p: &Percentiles) -> Vec<Vec<String>> {
    let labels: Vec<String> = p.iter().map(|(_, l)| l).collect();
    let quantiles = |d: &barrage_metrics::Distribution| {
        p.iter()
            .map(|(q, _)| dur(d.quantile(q)))
            .collect::<Vec<_>>()
    };
    let (d, w) = (m.duration().max(0) as u64, m.wait().max(0) as u64);
    let lat = m.latency();
    let mut rows = vec![
        vec![
            "Requests".into(),
            "total, rate, throughput".into(),
            format!(
                "{}, {:.2}/s, {:.2}/s",
                m.requests(),
                m.rate(),
                m.throughput()
            ),
        ],
        vec![
            "Duration".into(),
            "total, attack, wait".into(),
            format!("{}, {}, {}", dur(d + w), dur(d), dur(w)),
        ],
        vec![
            "Latencies".into(),
            format!("min, mean, {}, max", labels.join(", ")),
            format!(
                "{}, {}, {}, {}",
                dur(lat.min()),
                dur(lat.mean()),
                quantiles(lat).join(", "),
                dur(lat.max())
            ),
        ],
    ];
    if let Some(iv) = m.intervals(&p.percents()) {
        rows.push(vec![
            "95% intervals".into(),
            format!("mean, {}", labels.join(", ")),
            crate::text::latency_intervals(&iv),
        ]);
        rows.push(vec![
            "".into(),
            "rate, throughput".into(),
            format!(
                "{:.2}..{:.2}/s, {:.2}..{:.2}/s",
                iv.rate.low, iv.rate.high, iv.throughput.low, iv.throughput.high
            ),
        ]);
    }
    if m.lag().max() > 0 {
        rows.push(vec![
            "Lag".into(),
            format!("mean, {}, max", labels.join(", ")),
            format!(
                "{}, {}, {}",
                dur(m.lag().mean()),
                quantiles(m.lag()).join(", "),
                dur(m.lag().max())
            ),
        ]);
    }
    if let Some((n, exact)) = m.dropped() {
        rows.push(vec![
            "Dropped".into(),
            "due, never sent".into(),
            format!(
                "{}{n} (the generator fell behind: sending stopped at -duration)",
                if exact { "" } else { "~" }
            ),
        ]);
    }
    let (bin, bin_mean) = m.bytes_in();
    let (bout, bout_mean) = m.bytes_out();
    rows.push(vec![
        "Bytes In".into(),
        "total, mean".into(),
        format!("{bin}, {bin_mean:.2}"),
    ]);
    rows.push(vec![
        "Bytes Out".into(),
        "total, mean".into(),
        format!("{bout}, {bout_mean:.2}"),
    ]);
    rows.push(vec![
        "Success".into(),
        "ratio".into(),
        format!("{:.2}%", m.success_ratio() * 100.0),
    ]);
    rows
}

/// A flow's sessions (`-format flow`), as the text report has them: how
/// many started, completed, failed and were left unfinished, how long a
/// completed one took, and where they ended and why.
fn sessions(page: &mut String, m: &Metrics, p: &Percentiles) {
    let Some(x) = m.sessions() else {
        return;
    };
    h2(page, "Sessions");
    let count = |n: u64| {
        vec![
            n.to_string(),
            format!("{:.2}%", n as f64 * 100.0 / x.started().max(1) as f64),
        ]
    };
    let mut rows = vec![
        [vec!["started".to_string()], count(x.started())].concat(),
        [vec!["completed".to_string()], count(x.completed())].concat(),
        [vec!["failed".to_string()], count(x.failed())].concat(),
        [
            vec!["interrupted (end and -grace)".to_string()],
            count(x.interrupted()),
        ]
        .concat(),
        [vec!["unfinished".to_string()], count(x.unfinished())].concat(),
    ];
    rows.push(vec![
        "per second".into(),
        format!("{:.2}", x.rate()),
        String::new(),
    ]);
    table(page, &["sessions", "count", "of started"], &rows);
    let took = x.took();
    if took.count() > 0 {
        let labels: Vec<String> = p.iter().map(|(_, l)| format!("p{l}")).collect();
        let mut header = vec!["completed sessions", "mean time"];
        header.extend(labels.iter().map(String::as_str));
        header.push("max");
        let mut r = vec![took.count().to_string(), dur(took.mean())];
        r.extend(p.iter().map(|(q, _)| dur(took.quantile(q))));
        r.push(dur(took.max()));
        table(page, &header, &[r]);
    }
    let ended: Vec<Vec<String>> = x
        .ended()
        .into_iter()
        .map(|(step, n, why)| {
            vec![
                barrage_model::words::printable(step).into_owned(),
                n.to_string(),
                barrage_model::words::printable(why).into_owned(),
            ]
        })
        .collect();
    if !ended.is_empty() {
        table(
            page,
            &["ended at step", "sessions", "most common reason"],
            &ended,
        );
    }
    let cut: Vec<Vec<String>> = x
        .interrupted_at()
        .into_iter()
        .map(|(step, n)| {
            vec![
                barrage_model::words::printable(step).into_owned(),
                n.to_string(),
            ]
        })
        .collect();
    if !cut.is_empty() {
        table(page, &["interrupted after step", "sessions"], &cut);
    }
}

fn codes_and_errors(page: &mut String, m: &Metrics) {
    h2(page, "Status codes");
    let codes: Vec<Vec<String>> = m
        .status_codes()
        .into_iter()
        .map(|(c, n)| {
            vec![
                c,
                n.to_string(),
                format!("{:.2}%", n as f64 * 100.0 / m.requests().max(1) as f64),
            ]
        })
        .collect();
    table(page, &["code", "requests", "share"], &codes);
    h2(page, "Errors");
    if m.errors().is_empty() {
        page.push_str("<p>None.</p>\n");
    } else {
        let errors: Vec<Vec<String>> = m.errors().iter().map(|e| vec![e.clone()]).collect();
        table(page, &["error (first seen first)"], &errors);
    }
}

fn groups(page: &mut String, g: &Groups, p: &Percentiles) {
    let by = g.by().name();
    h2(page, &format!("By {by}"));
    let labels: Vec<String> = p.iter().map(|(_, l)| format!("p{l}")).collect();
    let mut header = vec![by, "requests", "success", "throughput", "mean"];
    header.extend(labels.iter().map(String::as_str));
    header.push("max");
    let rows: Vec<Vec<String>> = g
        .iter()
        .map(|(key, m)| {
            let mut r = vec![
                barrage_model::words::printable(key).into_owned(),
                m.requests().to_string(),
                format!("{:.2}%", m.success_ratio() * 100.0),
                format!("{:.2}/s", m.throughput()),
                dur(m.latency().mean()),
            ];
            r.extend(p.iter().map(|(q, _)| dur(m.latency().quantile(q))));
            r.push(dur(m.latency().max()));
            r
        })
        .collect();
    table(page, &header, &rows);
    let palette = colors(g.len(), false);
    let series = g
        .iter()
        .zip(&palette)
        .map(|((key, m), c)| spectrum(&barrage_model::words::printable(key), c, m.latency()))
        .collect();
    page.push_str("<div class=\"charts\">\n");
    barrage_plot::page::latency_toggle(page, &spectrum_chart("groups", series));
    page.push_str("</div>\n");
}

fn connections(page: &mut String, m: &Metrics, p: &Percentiles) {
    let Some(c) = m.connections() else {
        return;
    };
    h2(page, "Connections");
    let _ = std::fmt::Write::write_fmt(
        page,
        format_args!(
            "<p>{} of {} requests opened a connection ({:.2}%, {:.2}/s).</p>\n",
            c.new_count(),
            m.requests(),
            c.new_share() * 100.0,
            m.connections_rate()
        ),
    );
    let labels: Vec<String> = p.iter().map(|(_, l)| format!("p{l}")).collect();
    let mut header = vec!["cost", "measured", "mean"];
    header.extend(labels.iter().map(String::as_str));
    header.push("max");
    let rows: Vec<Vec<String>> = [("dns", c.dns()), ("connect", c.connect()), ("tls", c.tls())]
        .into_iter()
        .filter(|(_, d)| d.count() > 0)
        .map(|(name, d)| {
            let mut r = vec![name.to_string(), d.count().to_string(), dur(d.mean())];
            r.extend(p.iter().map(|(q, _)| dur(d.quantile(q))));
            r.push(dur(d.max()));
            r
        })
        .collect();
    table(page, &header, &rows);
}

/// The verdict on the run ([`Metrics::trust`]) at the top of the page:
/// its line, its warnings, and every check with its figure and threshold
/// behind a disclosure; nothing when no record had a scheduled time.
fn verdict(page: &mut String, m: &Metrics, p: &Percentiles) {
    use barrage_metrics::trust::Unit;
    use std::fmt::Write as _;
    let Some(t) = m.trust(&p.percents()) else {
        return;
    };
    let class = if t.valid() {
        "verdict"
    } else {
        "verdict invalid"
    };
    let _ = writeln!(
        page,
        "<div class=\"{class}\">\n<p><strong>Verdict</strong>: {}</p>",
        barrage_plot::svg::escape(&t.line())
    );
    let warnings: Vec<_> = t.warnings().collect();
    if !warnings.is_empty() {
        page.push_str("<ul>\n");
        for w in warnings {
            let _ = writeln!(page, "<li>{}</li>", barrage_plot::svg::escape(&w.says));
        }
        page.push_str("</ul>\n");
    }
    let shown = |v: f64, unit: Unit| match unit {
        Unit::Ns => barrage_model::duration::format(v.round() as i64),
        Unit::Share => format!("{:.1}%", v * 100.0),
        Unit::Count => format!("{v:.0}"),
        Unit::Statistic => format!("{v:.2}"),
        Unit::Seconds => format!("{v:.0}s"),
    };
    let rows: Vec<Vec<String>> = t
        .checks
        .iter()
        .map(|c| {
            vec![
                c.name.to_string(),
                c.figure.map_or("-".into(), |f| shown(f, c.unit)),
                shown(c.threshold, c.unit),
                match (c.ok, c.binding) {
                    (true, _) => "ok".into(),
                    (false, true) => "NOT VALID".into(),
                    (false, false) => "warning".into(),
                },
                c.says.clone(),
            ]
        })
        .collect();
    page.push_str("<details><summary>every check</summary>\n");
    table(
        page,
        &["check", "figure", "limit", "", "what it says"],
        &rows,
    );
    page.push_str("</details>\n</div>\n");
}
