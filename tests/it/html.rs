//! End-to-end: `report -type html` and `compare -type html`, read as a
//! structure (headings, tables, charts, their axes and legends; not
//! pixels: tests/it/pages.rs looks at those), and the page's size, flat in
//! the number of records.

use crate::common;

use barrage_stream::{Encoder, Hit};
use common::{golden, ok, path, refused};

/// The page's skeleton: a line per heading, table header, chart, axis
/// name and legend entry, without coordinates.
fn structure(page: &str) -> String {
    let mut out = String::new();
    let inner = |tag: &str| tag[tag.find('>').unwrap() + 1..].to_string();
    for tag in page.split('<').skip(1) {
        let line = if tag.starts_with("h1>") || tag.starts_with("h2>") {
            format!("{}: {}", &tag[..2], inner(tag))
        } else if tag.starts_with("th>") {
            format!("  column: {}", inner(tag))
        } else if let Some(rest) = tag.strip_prefix("clipPath id=\"") {
            format!("chart {}", &rest[..rest.find('"').unwrap()])
        } else if tag.starts_with("text class=\"legend\"") {
            format!("  legend: {}", inner(tag))
        } else if tag.starts_with("text class=\"name\"") {
            format!("  axis: {}", inner(tag))
        } else if tag.starts_with("input type=\"checkbox\"") {
            "toggle".to_string()
        } else {
            continue;
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn the_report_page_has_every_section_in_order() {
    let lag = path("fixtures/lag.bin");
    let page =
        String::from_utf8(ok(&["report", "-type", "html", "-by", "code", &lag], b"")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>\n") && page.ends_with("</html>\n"));
    // Self-contained: no script, nothing fetched.
    for never in ["<script", "src=", "@import", "url(http", "<link"] {
        assert!(!page.contains(never), "{never}");
    }
    golden("lag-report-html.structure", structure(&page).as_bytes());
    // The summary is vegeta's figures.
    for want in [
        "<td>Requests</td>",
        "<td>Lag</td>",
        "<td>Success</td>",
        "<td>404</td>",
    ] {
        assert!(page.contains(want), "{want}");
    }
}

#[test]
fn the_compare_page_overlays_both_sides() {
    let (alpha, lag) = (path("fixtures/alpha.bin"), path("fixtures/lag.bin"));
    let page = String::from_utf8(ok(&["compare", "-type", "html", &alpha, &lag], b"")).unwrap();
    let s = structure(&page);
    for want in [
        "chart spectra",
        "  legend: base",
        "  legend: new",
        "chart throughput",
        "chart over-time",
        "  legend: new p99",
        "  column: verdict",
    ] {
        assert!(s.lines().any(|l| l == want), "{want} in\n{s}");
    }
}

/// `n` records over 60 s, one in a hundred an error.
fn stream(n: u64) -> Vec<u8> {
    let mut enc = Encoder::new(Vec::new()).unwrap();
    let step = 60_000_000_000 / n as i64;
    for i in 0..n {
        let t = 1_700_000_000_000_000_000 + i as i64 * step;
        enc.write(&Hit {
            timestamp: t,
            scheduled: t,
            latency: 1_000_000 + (i * 7919 % 1000) * 1000,
            code: if i % 100 == 0 { 500 } else { 200 },
            error: if i % 100 == 0 {
                "500 Internal Server Error".into()
            } else {
                String::new()
            },
            method: "GET".into(),
            url: "http://127.0.0.1:8080/".into(),
            seq: i,
            ..Hit::default()
        })
        .unwrap();
    }
    enc.finish().unwrap()
}

#[test]
fn the_page_size_is_flat_in_the_records() {
    let dir = common::tempdir("html-flat");
    let mut sizes = Vec::new();
    for n in [10_000u64, 1_000_000] {
        let file = dir.join(format!("{n}.bin"));
        std::fs::write(&file, stream(n)).unwrap();
        let page = ok(&["report", "-type", "html", file.to_str().unwrap()], b"");
        sizes.push(page.len());
    }
    let (small, big) = (sizes[0] as f64, sizes[1] as f64);
    assert!(
        (big / small - 1.0).abs() < 0.05,
        "10k records: {small} bytes, 1M records: {big} bytes"
    );
    assert!(big < 256.0 * 1024.0, "{big} bytes");
}

#[test]
fn html_takes_no_every() {
    refused(
        &[
            "report",
            "-type",
            "html",
            "-every",
            "1s",
            &path("fixtures/lag.bin"),
        ],
        b"",
        "-type html takes no -every",
    );
}
