//! Issue 66, part 2: `attack -scrape`: a server's own metrics read during
//! the run and kept in the stream beside the records, on their clock.

use barrage_stream::Decoder;
use barrage_testkit::CapacityServer;

use crate::common::{self, attack_ok, refused};

/// `barrage serve`'s `/metrics` moves in a known way: its requests
/// counter at the attack's rate, its uptime gauge at one a second. The
/// samples in the stream say so, at times within the run, and the
/// reports show them (text, JSON, `-every`'s windows).
#[test]
fn scraped_series_follow_the_server_in_time_and_value() {
    let server = CapacityServer::unlimited();
    let metrics = server.url("/metrics");
    let target = format!("GET {}\n", server.url("/"));
    let (hits, out) = attack_ok(
        &[
            "-rate",
            "200",
            "-duration",
            "3s",
            "-scrape",
            &metrics,
            "-scrape-every",
            "500ms",
            "-scrape-match",
            "^barrage_serve_",
        ],
        &target,
    );
    assert_eq!(hits.len(), 600);
    let mut d = Decoder::new(&out.stdout[..]).unwrap();
    let mut h = barrage_stream::Hit::default();
    while d.read(&mut h).unwrap() {}
    let samples = d.samples().to_vec();
    let first = hits.iter().map(|h| h.timestamp).min().unwrap();
    let last = hits.iter().map(|h| h.timestamp).max().unwrap();
    assert!(samples
        .iter()
        .all(|s| s.at >= first - 1_000_000_000 && s.at <= last + 1_000_000_000));
    assert!(samples.iter().all(|s| s.source == metrics));
    let series = |name: &str| -> Vec<(i64, f64)> {
        samples
            .iter()
            .filter(|s| s.name == name)
            .map(|s| (s.at, s.value))
            .collect()
    };
    let rate = series("barrage_serve_requests_total");
    assert!(rate.len() >= 4, "{samples:?}");
    for (_, r) in &rate[..rate.len() - 1] {
        assert!(
            (r - 200.0).abs() < 40.0,
            "a rate of {r}/s against 200/s: {rate:?}"
        );
    }
    // The gauge grows as its samples' times do.
    let up = series("barrage_serve_uptime_seconds");
    for w in up.windows(2) {
        let (dt, dv) = ((w[1].0 - w[0].0) as f64 / 1e9, w[1].1 - w[0].1);
        assert!((dv - dt).abs() < 0.05, "uptime moved {dv} s in {dt} s");
    }
    assert!(series("up").iter().all(|(_, v)| *v == 1.0));
    assert!(samples
        .iter()
        .all(|s| s.rate == (s.name == "barrage_serve_requests_total")));
    // The reports.
    let text = String::from_utf8(common::ok(&["report"], &out.stdout)).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("Server ") && l.contains("[min, mean, max, last] scraped")),
        "{text}"
    );
    assert!(text.contains("  barrage_serve_requests_total /s"), "{text}");
    let json: serde_json::Value =
        serde_json::from_slice(&common::ok(&["report", "-type", "json"], &out.stdout)).unwrap();
    let names: Vec<&str> = json["server"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "barrage_serve_requests_total",
            "barrage_serve_uptime_seconds",
            "scrape_duration_seconds",
            "up"
        ]
    );
    let rows = String::from_utf8(common::ok(&["report", "-every", "1s"], &out.stdout)).unwrap();
    let with = rows
        .lines()
        .filter(|l| l.contains("barrage_serve_uptime_seconds "))
        .count();
    assert!(with >= 2, "{rows}");
}

/// A scrape that fails never stops the attack nor delays it: every record
/// is there, the failure is said once, and each scrape is `up` 0.
#[test]
fn a_failing_scrape_is_noted_and_the_attack_goes_on() {
    let server = CapacityServer::unlimited();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/metrics", closed.local_addr().unwrap());
    drop(closed);
    let target = format!("GET {}\n", server.url("/"));
    let (hits, out) = attack_ok(
        &[
            "-rate",
            "50",
            "-duration",
            "2s",
            "-scrape",
            &dead,
            "-scrape-every",
            "200ms",
        ],
        &target,
    );
    assert_eq!(hits.len(), 100);
    assert!(hits.iter().all(|h| h.error.is_empty()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("-scrape http://").count(), 1, "{err}");
    let mut d = Decoder::new(&out.stdout[..]).unwrap();
    let mut h = barrage_stream::Hit::default();
    while d.read(&mut h).unwrap() {}
    let ups: Vec<f64> = d
        .samples()
        .iter()
        .filter(|s| s.name == "up")
        .map(|s| s.value)
        .collect();
    assert!(ups.len() >= 5 && ups.iter().all(|v| *v == 0.0), "{ups:?}");
    refused(
        &[
            "attack",
            "-scrape",
            "http://127.0.0.1:1/",
            "-scrape-every",
            "0s",
            "-duration",
            "1s",
        ],
        target.as_bytes(),
        "-scrape-every 0ns is under 100ms",
    );
    refused(
        &[
            "attack",
            "-scrape",
            "https://127.0.0.1:1/metrics",
            "-duration",
            "1s",
        ],
        target.as_bytes(),
        "scraping goes over http:// only",
    );
    refused(
        &[
            "attack",
            "-scrape",
            "http://127.0.0.1:1/",
            "-scrape-match",
            "(",
            "-duration",
            "1s",
        ],
        target.as_bytes(),
        "-scrape-match",
    );
}
