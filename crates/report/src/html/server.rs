//! The report page's section of a scraped server's metrics (`attack
//! -scrape`, issue 66): each series on the run's time axis, seconds from
//! the first send as the other charts count them, and a table of their
//! summaries.

use barrage_metrics::Metrics;
use barrage_plot::{chart::Mark, palette::CATEGORICAL};

use super::page::{h2, line, table, time_chart};

/// The most series charted (the table lists them all).
const CHARTS: usize = 8;

/// The section; nothing without samples.
pub(crate) fn section(page: &mut String, m: &Metrics) {
    let Some(server) = m.server() else {
        return;
    };
    h2(page, "Server (scraped)");
    let sources = server.sources();
    let name = |s: &barrage_metrics::ServerSeries| {
        let mut n = s.name.clone();
        if s.rate {
            n.push_str(" a second");
        }
        if sources > 1 {
            n = format!("{} {n}", barrage_model::words::redacted(&s.source));
        }
        n
    };
    let rows: Vec<Vec<String>> = server
        .series()
        .map(|s| {
            vec![
                name(s),
                s.count.to_string(),
                format!("{:.4}, {:.4}, {:.4}, {:.4}", s.min, s.mean(), s.max, s.last),
            ]
        })
        .collect();
    page.push_str("<div class=\"charts\">\n<div>\n");
    table(page, &["series", "samples", "min, mean, max, last"], &rows);
    page.push_str("</div>\n");
    let start = m.earliest().unwrap_or(0);
    let charted = server.series().filter(|s| !s.is_scrape_own()).take(CHARTS);
    for (i, s) in charted.enumerate() {
        let points = s
            .points
            .iter()
            .map(|(at, v)| ((at - start) as f64 / 1e9, *v))
            .collect();
        page.push_str("<div>\n");
        let mut chart = time_chart(
            &format!("server-{i}"),
            barrage_plot::chart::Axis::linear(&name(s)),
            vec![line(
                &name(s),
                CATEGORICAL[i % CATEGORICAL.len()],
                Mark::Line,
                points,
            )],
        );
        // The server beside the load's changes (`-control`).
        chart.rules = super::page::changes(m);
        chart.draw(page);
        page.push_str("</div>\n");
    }
    page.push_str("</div>\n");
}
