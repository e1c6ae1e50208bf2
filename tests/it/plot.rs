//! End-to-end: `barrage plot` on committed fixtures and live attacks. The
//! page is read back the way a browser would draw it: each chart's tick
//! labels give the mapping from pixels to seconds and milliseconds, and
//! every dot is mapped back and checked against the records.

use crate::common;

use barrage_stream::Encoder;
use barrage_testkit::Server;
use common::{decode, decode_lossy, golden, ok, path, refused, run};

/// One chart of the page.
struct Chart {
    /// (label, value) of each y tick, at its pixel row.
    y_ticks: Vec<(f64, f64)>,
    /// (pixel column, value) of each x tick.
    x_ticks: Vec<(f64, f64)>,
    /// Each series' title and its dots in pixels.
    series: Vec<(String, Vec<(f64, f64)>)>,
}

impl Chart {
    fn series(&self, title: &str) -> &[(f64, f64)] {
        &self
            .series
            .iter()
            .find(|(t, _)| t == title)
            .unwrap_or_else(|| panic!("no series {title:?}"))
            .1
    }

    /// A pixel column in seconds, from the first and last x ticks.
    fn seconds(&self, px: f64) -> f64 {
        let (a, b) = (self.x_ticks[0], self.x_ticks[self.x_ticks.len() - 1]);
        a.1 + (px - a.0) / (b.0 - a.0) * (b.1 - a.1)
    }

    /// A pixel row in ms on the linear chart, from the first and last y ticks.
    fn ms(&self, py: f64) -> f64 {
        let (a, b) = (self.y_ticks[0], self.y_ticks[self.y_ticks.len() - 1]);
        a.1 + (py - a.0) / (b.0 - a.0) * (b.1 - a.1)
    }

    /// The highest dot of all series (smallest row), in ms.
    fn top_ms(&self) -> f64 {
        let top = self
            .series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|d| d.1))
            .fold(f64::INFINITY, f64::min);
        self.ms(top)
    }
}

fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let key = format!("{name}=\"");
    let start = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + key.len();
    &tag[start..start + tag[start..].find('"').unwrap()]
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// The charts of a page: the log-scale one, then the linear one.
fn charts(page: &str) -> Vec<Chart> {
    page.split("<svg ")
        .skip(1)
        .map(|svg| {
            let svg = &svg[..svg.find("</svg>").expect("closed svg")];
            let mut chart = Chart {
                y_ticks: Vec::new(),
                x_ticks: Vec::new(),
                series: Vec::new(),
            };
            for tag in svg.split('<').skip(1) {
                if tag.starts_with("text") && tag.contains("text-anchor=\"end\"") {
                    let label = &tag[tag.find('>').unwrap() + 1..];
                    chart.y_ticks.push((num(attr(tag, "y")) - 4.0, num(label)));
                } else if tag.starts_with("text") && tag.contains("text-anchor=\"middle\">") {
                    let label = &tag[tag.find('>').unwrap() + 1..];
                    if let Ok(v) = label.parse::<f64>() {
                        chart.x_ticks.push((num(attr(tag, "x")), v));
                    }
                } else if tag.starts_with("path") && tag.contains("stroke-linecap") {
                    let dots = attr(tag, "d")
                        .split('M')
                        .skip(1)
                        .map(|m| {
                            // A dot (`h0`) or a cross drawn around its point.
                            let m = m
                                .strip_suffix("h0")
                                .or_else(|| m.strip_suffix("m-3 -3l6 6m0 -6l-6 6"))
                                .expect("a dot or a cross");
                            let (x, y) = m.split_once(' ').expect("x y");
                            (num(x), num(y))
                        })
                        .collect();
                    chart.series.push((String::new(), dots));
                } else if let Some(title) = tag.strip_prefix("title>") {
                    chart.series.last_mut().expect("title in a path").0 = title.to_string();
                }
            }
            chart
        })
        .collect()
}

/// The first chart's legend: it is drawn inside each chart.
fn legend(page: &str) -> Vec<String> {
    let first = &page[..page.find("</svg>").expect("a chart")];
    first
        .lines()
        .filter(|l| l.starts_with("<text class=\"legend\""))
        .map(|l| l[l.find('>').unwrap() + 1..l.len() - "</text>".len()].to_string())
        .collect()
}

fn assert_whole_page(page: &str) {
    assert!(page.starts_with("<!DOCTYPE html>\n"), "{}", &page[..40]);
    assert!(page.ends_with("</html>\n"));
    assert!(!page.contains("<script"), "no scripts");
}

/// `alpha.bin`: 300 records of one attack named alpha, 150 of them errors,
/// sent over 2.991 s, latencies 194 µs to 1.014 ms.
#[test]
fn every_record_is_a_dot_where_its_send_time_and_latency_put_it() {
    let page = String::from_utf8(ok(&["plot", &path("fixtures/alpha.bin")], b"")).unwrap();
    assert_whole_page(&page);
    assert!(page.contains("<title>Barrage Plot</title>"));
    assert_eq!(
        legend(&page),
        ["alpha: OK: 150 requests", "alpha: ERROR: 150 requests"]
    );
    let charts = charts(&page);
    assert_eq!(charts.len(), 2, "log and linear");
    for c in &charts {
        assert_eq!(c.series("alpha: OK").len(), 150);
        assert_eq!(c.series("alpha: ERROR").len(), 150);
    }
    let linear = &charts[1];
    let top = linear.top_ms();
    assert!((top - 1.014).abs() < 0.005, "highest dot at {top} ms");
    let right = linear
        .series
        .iter()
        .flat_map(|(_, d)| d.iter().map(|p| p.0))
        .fold(0.0, f64::max);
    let last = linear.seconds(right);
    assert!((last - 2.991).abs() < 0.01, "last dot at {last} s");
    let left = linear
        .series
        .iter()
        .flat_map(|(_, d)| d.iter().map(|p| p.0))
        .fold(f64::INFINITY, f64::min);
    assert!(linear.seconds(left).abs() < 0.002, "first dot at 0 s");
}

/// The whole page for `alpha.bin`, byte for byte (as vegeta's
/// `TestPlot.golden.html`): any change to the page shows up here first.
#[test]
fn golden_page() {
    golden(
        "alpha-plot.html",
        &ok(
            &["plot", "-threshold", "40", &path("fixtures/alpha.bin")],
            b"",
        ),
    );
}

#[test]
fn threshold_bounds_the_dots_and_keeps_the_extremes() {
    let page = String::from_utf8(ok(
        &["plot", "-threshold", "20", &path("fixtures/alpha.bin")],
        b"",
    ))
    .unwrap();
    let charts = charts(&page);
    for c in &charts {
        for (title, dots) in &c.series {
            assert!(
                (5..=20).contains(&dots.len()),
                "{title}: {} dots",
                dots.len()
            );
        }
    }
    let top = charts[1].top_ms();
    assert!(
        (top - 1.014).abs() < 0.005,
        "the slowest request is still drawn: {top} ms"
    );
    let lines = legend(&page);
    assert!(
        lines[0].starts_with("alpha: OK: 150 requests, "),
        "{lines:?}"
    );
    assert!(lines[0].ends_with(" points drawn"), "{lines:?}");
}

/// `lag.bin` went out up to 604 ms late: actual latencies stay under
/// 35 ms, latencies from the scheduled time reach 636 ms.
#[test]
fn intended_latency_shows_what_the_generator_delayed() {
    let lag = path("fixtures/lag.bin");
    let actual = String::from_utf8(ok(&["plot", &lag], b"")).unwrap();
    let intended = String::from_utf8(ok(&["plot", "-latency", "intended", &lag], b"")).unwrap();
    let a = charts(&actual)[1].top_ms();
    let i = charts(&intended)[1].top_ms();
    assert!((a - 34.87).abs() < 0.5, "actual top {a} ms");
    assert!((i - 636.07).abs() < 5.0, "intended top {i} ms");
}

#[test]
fn a_damaged_stream_is_plotted_up_to_its_last_complete_record() {
    // alpha's records in frames of 30, cut in the middle of the 6th.
    let hits = decode(&std::fs::read(path("fixtures/alpha.bin")).unwrap());
    let mut enc = Encoder::new(Vec::new()).unwrap();
    for (i, h) in hits.iter().enumerate() {
        enc.write(h).unwrap();
        if i % 30 == 29 {
            enc.flush().unwrap();
        }
    }
    let bytes = enc.finish().unwrap();
    let cut = &bytes[..bytes.len() * 55 / 100];
    let (complete, err) = decode_lossy(cut);
    assert!(err.is_some(), "cut inside a frame");
    assert_eq!(complete.len(), 150);
    let out = run(&["plot"], cut);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("barrage plot: stdin: "), "{stderr}");
    assert!(stderr.contains("byte"), "names the offset: {stderr}");
    let page = String::from_utf8(out.stdout).unwrap();
    assert_whole_page(&page);
    let drawn: usize = charts(&page)[0].series.iter().map(|s| s.1.len()).sum();
    assert_eq!(drawn, complete.len());
}

#[test]
fn bad_flags_and_hostile_titles() {
    let alpha = path("fixtures/alpha.bin");
    refused(
        &["plot", "-latency", "sideways", &alpha],
        b"",
        "unknown -latency \"sideways\" (use actual, intended, first-byte, ttft or ttft-intended)",
    );

    let page = String::from_utf8(ok(
        &["plot", "-title", "<script>alert(1)</script> & co", &alpha],
        b"",
    ))
    .unwrap();
    assert_whole_page(&page);
    assert!(page.contains("<h1>&lt;script&gt;alert(1)&lt;/script&gt; &amp; co</h1>"));

    let out = run(&["plot", "/nonexistent/r.bin"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("barrage plot: /nonexistent/r.bin: "));
}

/// Two attacks run one after the other, plotted together: a series each,
/// each counted from its own first request (vegeta's), so they overlay.
#[test]
fn attacks_are_overlaid_each_from_its_own_start() {
    let server = Server::http();
    let dir = common::tempdir("plot");
    let targets = format!("GET {}\n", server.url("/"));
    let mut files = Vec::new();
    for name in ["first", "second"] {
        let file = dir.join(format!("{name}.bin"));
        ok(
            &[
                "attack",
                "-name",
                name,
                "-rate",
                "100",
                "-duration",
                "300ms",
                "-output",
                file.to_str().unwrap(),
            ],
            targets.as_bytes(),
        );
        files.push(file.to_str().unwrap().to_string());
    }
    let page = String::from_utf8(ok(&["plot", &files[0], &files[1]], b"")).unwrap();
    assert_eq!(
        legend(&page),
        ["first: OK: 30 requests", "second: OK: 30 requests"]
    );
    let linear = &charts(&page)[1];
    for name in ["first: OK", "second: OK"] {
        let dots = linear.series(name);
        let start = linear.seconds(dots[0].0);
        let end = linear.seconds(dots[dots.len() - 1].0);
        assert!(start.abs() < 0.005, "{name} starts at {start} s");
        assert!((end - 0.29).abs() < 0.02, "{name} ends at {end} s");
    }
    let colors: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("<circle"))
        .map(|l| attr(l, "fill"))
        .collect();
    assert_ne!(colors[0], colors[1]);
}

/// A sweep's stream: a colour per step, in order of load (not of name:
/// `rate=1000` before `rate=400` as text), each named in the legend.
#[test]
fn a_sweep_stream_has_a_colour_per_step() {
    let server = Server::http();
    let dir = common::tempdir("plot-sweep");
    let file = dir.join("sweep.bin");
    ok(
        &[
            "sweep",
            "-rates",
            "200,400,1000",
            "-step-duration",
            "200ms",
            "-output",
            file.to_str().unwrap(),
        ],
        format!("GET {}\n", server.url("/")).as_bytes(),
    );
    let page = String::from_utf8(ok(&["plot", file.to_str().unwrap()], b"")).unwrap();
    let names: Vec<String> = legend(&page)
        .into_iter()
        .map(|l| l.split(':').next().unwrap().to_string())
        .collect();
    assert_eq!(names, ["rate=200", "rate=400", "rate=1000"]);
    let colors: Vec<&str> = page[..page.find("</svg>").unwrap()]
        .lines()
        .filter(|l| l.starts_with("<circle"))
        .map(|l| attr(l, "fill"))
        .collect();
    assert_eq!(colors.len(), 3);
    assert!(colors[0] != colors[1] && colors[1] != colors[2] && colors[0] != colors[2]);
}

#[test]
fn report_type_plot_is_the_plot_command() {
    let (alpha, lag) = (path("fixtures/alpha.bin"), path("fixtures/lag.bin"));
    assert_eq!(
        ok(&["report", "-type", "plot", &alpha], b""),
        ok(&["plot", &alpha], b"")
    );
    assert_eq!(
        ok(
            &["report", "-type", "plot", "-latency", "intended", &lag],
            b""
        ),
        ok(&["plot", "-latency", "intended", &lag], b"")
    );
    for extra in [["-by", "url"], ["-every", "1s"], ["-fail-on", "p99>1ms"]] {
        refused(
            &["report", "-type", "plot", extra[0], extra[1], &alpha],
            b"",
            "barrage report: -type plot takes none of -every, -by and -fail-on",
        );
    }
}
