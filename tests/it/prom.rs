//! End-to-end: `attack -prometheus-addr`, scraped over loopback while the
//! attack runs, against the records it wrote.

use crate::common;

use std::{
    collections::HashMap,
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    path::Path,
    time::Duration,
};

use barrage_testkit::{Child, Server};
use common::run;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_barrage"))
}

/// GET /metrics: the status line and the body.
fn scrape(port: u16) -> (String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_string(), body.to_string())
}

/// `name{labels} value` lines of one metric, by their labels.
fn samples(text: &str, name: &str) -> HashMap<String, f64> {
    text.lines()
        .filter_map(|l| l.strip_prefix(name)?.strip_prefix('{'))
        .map(|l| {
            let (labels, value) = l.rsplit_once("} ").unwrap();
            (labels.to_string(), value.parse().unwrap())
        })
        .collect()
}

#[test]
fn metrics_while_attacking_add_up_to_the_records() {
    let server = Server::http();
    let refused = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/", refused.local_addr().unwrap());
    drop(refused);
    let targets = format!(
        "GET {}\n\nGET {}\n\nGET {dead}\n",
        server.url("/"),
        server.url("/status/404")
    );
    // Port 0: the port the exporter took is read from its line on stderr
    // (a port found free first could be taken before it binds it).
    let child = Child::spawn(
        bin(),
        &[
            "attack",
            "-rate",
            "300",
            "-duration",
            "3s",
            "-prometheus-addr",
            "127.0.0.1:0",
        ],
        targets.as_bytes(),
        None,
    );
    let line = child.wait_stderr_line("metrics at", Duration::from_secs(20));
    let line = line.expect("the exporter's address on stderr");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|a| a.strip_suffix("/metrics"))
        .expect("metrics at http://addr/metrics")
        .to_string();
    let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
    assert!(child.wait_records(150, Duration::from_secs(20)));
    let (status, text) = scrape(port);
    assert_eq!(status, "HTTP/1.1 200 OK");
    let r = child.wait(Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.hits.len(), 900);
    assert!(
        r.stderr
            .contains(&format!("metrics at http://{addr}/metrics")),
        "{}",
        r.stderr
    );

    let counts = samples(&text, "request_seconds_count");
    let series = |url: &str, code: u16| format!("method=\"GET\",url=\"{url}\",status=\"{code}\"");
    let ok = series(&server.url("/"), 200);
    let missing = series(&server.url("/status/404"), 404);
    let down = series(&dead, 0);
    assert_eq!(counts.len(), 3, "{text}");
    let total: f64 = counts.values().sum();
    assert!((150.0..=900.0).contains(&total), "{total} counted");
    for s in [&ok, &missing, &down] {
        let n = counts[s];
        assert!(n >= 1.0, "{s}: {n}");
        // Records go round-robin over the three targets.
        assert!((n - total / 3.0).abs() <= 1.0, "{s}: {n} of {total}");
        let inf = samples(&text, "request_seconds_bucket")[&format!("{s},le=\"+Inf\"")];
        assert_eq!(inf, n, "{s}");
        // barrage's fine histogram: 93 bounds and +Inf, cumulative, the
        // same count.
        let fine = samples(&text, "barrage_request_duration_seconds_bucket");
        let mut mine: Vec<(f64, f64)> = fine
            .iter()
            .filter_map(|(k, v)| {
                let le = k.strip_prefix(s.as_str())?.strip_prefix(",le=\"")?;
                let le = le.trim_end_matches('"');
                Some((
                    if le == "+Inf" {
                        f64::INFINITY
                    } else {
                        le.parse().unwrap()
                    },
                    *v,
                ))
            })
            .collect();
        mine.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(mine.len(), 94, "{s}");
        assert!(mine.windows(2).all(|w| w[0].1 <= w[1].1), "{mine:?}");
        assert_eq!(mine[93].1, n, "{s}");
        assert_eq!(
            samples(&text, "barrage_request_duration_seconds_count")[s],
            n
        );
    }
    let bytes_in = samples(&text, "request_bytes_in");
    assert_eq!(bytes_in[&ok], 6.0 * counts[&ok], "hello\\n per response");
    let fails = samples(&text, "request_fail_count");
    let refused_msg = format!(
        "Get \\\"{dead}\\\": dial tcp {}: connect: connection refused",
        dead.trim_start_matches("http://").trim_end_matches('/')
    );
    assert_eq!(
        fails[&format!("method=\"GET\",url=\"{dead}\",code=\"0\",message=\"{refused_msg}\"")],
        counts[&down],
        "{text}"
    );
    assert_eq!(
        fails[&format!(
            "method=\"GET\",url=\"{}\",code=\"404\",message=\"404 Not Found\"",
            server.url("/status/404")
        )],
        counts[&missing]
    );
    assert_eq!(fails.len(), 2, "no failure counted for 200s");
}

#[test]
fn a_taken_metrics_port_stops_the_attack_before_it_starts() {
    let server = Server::http();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = run(
        &[
            "attack",
            "-rate",
            "100",
            "-duration",
            "1s",
            "-prometheus-addr",
            &addr,
        ],
        format!("GET {}\n", server.url("/")).as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("barrage attack: -prometheus-addr {addr}: ")),
        "{stderr}"
    );
    assert!(common::no_records(&out.stdout), "nothing written");
    assert_eq!(server.count(), 0, "nothing sent");
}
