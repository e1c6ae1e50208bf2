//! End-to-end: the real binary attacking in-process loopback servers.

use crate::common;

use std::time::{Duration, Instant};

use barrage_testkit::{DnsServer, RawServer, Script, Server, TestCert};
use common::{assert_seq_complete, decode, run};

#[test]
fn rate_200_for_2s_is_exactly_400_records_5ms_apart() {
    let server = Server::http();
    let (mut hits, _) = common::attack_ok(
        &["-rate", "200", "-duration", "2s"],
        &format!("GET {}\n", server.url("/")),
    );
    assert_eq!(hits.len(), 400);
    assert_seq_complete(&mut hits);
    let start = hits[0].scheduled;
    for h in &hits {
        assert_eq!(
            h.scheduled - start,
            h.seq as i64 * 5_000_000,
            "seq {}",
            h.seq
        );
        assert!(h.timestamp >= h.scheduled, "sent before due: seq {}", h.seq);
        assert_eq!(h.code, 200);
        assert_eq!(h.bytes_in, 6);
        assert!(h.error.is_empty());
        assert_eq!(
            (h.method.as_str(), h.url.as_str()),
            ("GET", server.url("/").as_str())
        );
    }
    assert_eq!(server.count(), 400);
}

/// `-stages 1s:1000`: the rate climbs from 0 to 1,000/s in a second, so
/// n(t) = 500 t² requests are due by t: 500 in all, request i at
/// sqrt(i / 500) s, on every path that keeps the schedule (the worker
/// threads' own clocks or ticks, the pacer thread with -max-workers or
/// -lazy).
#[test]
fn stages_ramp_the_rate_on_an_exact_schedule() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/"));
    // -lazy reads a target per request. Above 3,333/s the worker threads
    // keep the clock by ticks: 0 -> 8,000/s in 0.5 s is 8,000 t², 2,000.
    let many = t.repeat(600);
    for (stages, extra, n, k) in [
        ("1s:1000", &[][..], 500, 500.0),
        ("1s:1000", &["-max-workers", "50"][..], 500, 500.0),
        ("1s:1000", &["-lazy"][..], 500, 500.0),
        ("500ms:8000", &[][..], 2000, 8000.0),
    ] {
        let mut args = vec!["-stages", stages];
        args.extend_from_slice(extra);
        let (mut hits, _) = common::attack_ok(&args, &many);
        assert_eq!(hits.len(), n, "{stages} {extra:?}");
        assert_seq_complete(&mut hits);
        let start = hits[0].scheduled;
        for h in &hits {
            let want = ((h.seq as f64 / k).sqrt() * 1e9) as i64;
            let got = h.scheduled - start;
            assert!(
                (got - want).abs() <= 1,
                "{extra:?} seq {}: {got} vs {want}",
                h.seq
            );
            assert!(h.timestamp >= h.scheduled, "seq {} sent early", h.seq);
        }
    }
    // Held at 400/s for 0.5 s (200), then down to 0 over 0.5 s, cut by
    // -duration 610ms: n(0.11 s) = 400 * 0.11 - 400 * 0.11² = 39.16 more.
    let (mut hits, _) = common::attack_ok(
        &["-stages", "0s:400,500ms:400,500ms:0", "-duration", "610ms"],
        &t,
    );
    assert_eq!(hits.len(), 240);
    assert_seq_complete(&mut hits);
    let start = hits[0].scheduled;
    assert_eq!(hits[199].scheduled - start, 497_500_000);
    assert_eq!(hits[200].scheduled - start, 500_000_000);

    for (args, err) in [
        (
            &["-rate", "100", "-stages", "1s:10"][..],
            "cannot be used with",
        ),
        (
            &["-stages", "1s:10,5s"][..],
            "stage \"5s\" is not DURATION:RATE (e.g. 30s:1000)",
        ),
        (&["-stages", "1s:0"][..], "the stages send no request"),
    ] {
        let mut full = vec!["attack"];
        full.extend_from_slice(args);
        common::refused(&full, t.as_bytes(), err);
    }
}

fn unix_now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

/// Two processes with `-shard 0/2` and `-shard 1/2` and one `-start-at`
/// make one attack: together every number of the schedule once, each
/// request scheduled where a single attacker would have (start + seq ×
/// period, to the nanosecond), none sent before its time.
#[test]
fn shards_started_at_one_time_make_one_schedule() {
    let server = Server::http();
    let t = format!(
        "GET {}\nX-Which: a\n\nGET {}\nX-Which: b\n",
        server.url("/a"),
        server.url("/b")
    );
    let start = unix_now_ns() + 1_500_000_000;
    let at = format!("{}.{:09}", start / 1_000_000_000, start % 1_000_000_000);
    let shards: Vec<_> = ["0/2", "1/2"]
        .into_iter()
        .map(|shard| {
            let (at, t) = (at.clone(), t.clone());
            std::thread::spawn(move || {
                common::attack_ok(
                    &[
                        "-rate",
                        "200",
                        "-duration",
                        "1s",
                        "-shard",
                        shard,
                        "-start-at",
                        &at,
                    ],
                    &t,
                )
                .0
            })
        })
        .collect();
    let mut all = Vec::new();
    for (i, s) in shards.into_iter().enumerate() {
        let hits = s.join().unwrap();
        assert_eq!(hits.len(), 100, "shard {i}/2");
        assert!(
            hits.iter().all(|h| h.seq % 2 == i as u64),
            "shard {i}/2 numbers"
        );
        all.extend(hits);
    }
    assert_seq_complete(&mut all);
    assert_eq!(all.len(), 200);
    for h in &all {
        assert_eq!(
            h.scheduled,
            start + h.seq as i64 * 5_000_000,
            "seq {}",
            h.seq
        );
        assert!(h.timestamp >= h.scheduled, "seq {} sent early", h.seq);
        // Round-robin over the targets by the schedule's numbers.
        let want = if h.seq % 2 == 0 { "/a" } else { "/b" };
        assert!(h.url.ends_with(want), "seq {}: {}", h.seq, h.url);
    }

    let future = (unix_now_ns() / 1_000_000_000 + 3600).to_string();
    for (args, err) in [
        (
            &["-shard", "2/2"][..],
            "invalid shard \"2/2\" (use i/n with 0 <= i < n, e.g. 0/3, or auto, or auto/n)",
        ),
        (&["-shard", "1"][..], "invalid shard \"1\""),
        (
            &["-start-at", "1000000000"][..],
            "-start-at 2001-09-09T01:46:40Z is in the past",
        ),
        (&["-start-at", "soon"][..], "invalid time \"soon\""),
        (
            &["-start-at", &future, "-shard", "0/0"][..],
            "invalid shard \"0/0\"",
        ),
    ] {
        let mut full = vec!["attack", "-duration", "1s"];
        full.extend_from_slice(args);
        common::refused(&full, t.as_bytes(), err);
    }
    assert_eq!(server.count(), 200, "nothing sent by the refused ones");
}

/// Ctrl-C while waiting for `-start-at`: nothing sent, a valid empty
/// stream, exit 0, at once.
#[test]
fn interrupted_before_the_start_time_leaves_an_empty_stream() {
    let server = Server::http();
    let at = (unix_now_ns() / 1_000_000_000 + 60).to_string();
    let child = barrage_testkit::Child::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_barrage")),
        &[
            "attack",
            "-rate",
            "100",
            "-duration",
            "1s",
            "-start-at",
            &at,
        ],
        format!("GET {}\n", server.url("/")).as_bytes(),
        None,
    );
    std::thread::sleep(Duration::from_millis(500));
    let asked = Instant::now();
    child.signal(libc::SIGINT);
    let r = child.wait(Duration::from_secs(30));
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.hits.is_empty());
    assert_eq!(r.stream_error, None, "a valid stream");
    assert_eq!(server.count(), 0);
}

/// `first_byte`: from the send to the response's head. A server that
/// thinks 100 ms before answering: at least 100 ms, and all of the
/// latency but the body's transfer; a server that sends its head at once
/// and its body 300 ms later: under the 300 ms the latency holds. The
/// binary stream, the JSON lines and `report -latency first-byte` carry it.
#[test]
fn time_to_first_byte_is_recorded_apart_from_the_body() {
    let thinking = Server::http();
    let (hits, out) = common::attack_ok(
        &["-rate", "20", "-requests", "4"],
        &format!("GET {}\n", thinking.url("/sleep/100")),
    );
    assert_eq!(hits.len(), 4);
    for h in &hits {
        assert!(h.first_byte >= 100_000_000, "{} ns", h.first_byte);
        assert!(
            h.first_byte <= h.latency,
            "{} > {}",
            h.first_byte,
            h.latency
        );
    }
    let json = String::from_utf8(common::ok(&["dump", "-dumper", "json"], &out.stdout)).unwrap();
    for (line, h) in json.lines().zip(&hits) {
        // Then the connection's keys (tests/connections.rs).
        assert!(
            line.contains(&format!(
                ",\"first_byte\":{},\"proto\":\"HTTP/1.1\",\"dns\":",
                h.first_byte
            )),
            "{line}"
        );
    }
    let report: serde_json::Value = serde_json::from_slice(&common::ok(
        &["report", "-type", "json", "-latency", "first-byte"],
        &out.stdout,
    ))
    .unwrap();
    let max = hits.iter().map(|h| h.first_byte).max().unwrap() as f64;
    let reported = report["latencies"]["max"].as_f64().unwrap();
    assert!((reported - max).abs() <= max * 0.001, "{reported} vs {max}");

    let slow = RawServer::start(Script::SlowBody(Duration::from_millis(300)));
    let (hits, _) = common::attack_ok(
        &["-rate", "20", "-requests", "2"],
        &format!("GET {}\n", slow.url("/")),
    );
    assert_eq!(hits.len(), 2);
    for h in &hits {
        assert_eq!((h.code, h.bytes_in), (200, 6));
        assert!(h.latency >= 300_000_000, "{} ns", h.latency);
        assert!(
            h.first_byte > 0 && h.first_byte < 300_000_000,
            "{} ns",
            h.first_byte
        );
    }
}

#[test]
fn requests_cap_and_all_flag_spellings() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/"));
    for args in [
        vec!["-rate", "500", "-requests", "25"],
        vec!["-rate=500", "-requests=25"],
        vec!["--rate", "500", "--requests", "25"],
        vec!["--rate=500", "--requests=25", "-duration", "10s"],
    ] {
        let (mut hits, _) = common::attack_ok(&args, &t);
        assert_eq!(hits.len(), 25, "{args:?}");
        assert_seq_complete(&mut hits);
    }
    assert_eq!(server.count(), 100);
}

/// Each request carries its own target's headers and nothing else, in the
/// order written, repeated names included: the header maps of responses
/// already read are reused for the next requests' headers.
#[test]
fn every_request_has_exactly_its_targets_headers() {
    let server = Server::http();
    let targets = format!(
        "GET {0}a\nX-A: 1\nX-Multi: first\nX-Multi: second\n\nGET {0}b\nX-B: 2\n\n",
        server.url("/")
    );
    for mode in [
        &["-rate", "400", "-requests", "40", "-cpus", "1"][..],
        &[
            "-rate",
            "0",
            "-max-workers",
            "2",
            "-requests",
            "40",
            "-cpus",
            "1",
        ][..],
    ] {
        let mut args = mode.to_vec();
        args.extend(["-header", "X-Global: g"]);
        let (hits, _) = common::attack_ok(&args, &targets);
        assert_eq!(hits.len(), 40, "{mode:?}");
    }
    let got = server.received();
    assert_eq!(got.len(), 80);
    for r in &got {
        let names: Vec<(&str, &str)> = r
            .headers
            .iter()
            .filter(|(k, _)| k != "host" && k != "x-barrage-seq")
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let want: &[(&str, &str)] = if r.path == "/a" {
            &[
                ("x-global", "g"),
                ("x-a", "1"),
                ("x-multi", "first"),
                ("x-multi", "second"),
            ]
        } else {
            &[("x-global", "g"), ("x-b", "2")]
        };
        assert_eq!(names, want, "{} {}", r.method, r.path);
        assert_eq!(r.headers.iter().filter(|(k, _)| k == "host").count(), 1);
        assert_eq!(
            r.headers
                .iter()
                .filter(|(k, _)| k == "x-barrage-seq")
                .count(),
            1
        );
    }
}

#[test]
fn http_targets_send_headers_and_bodies() {
    let server = Server::http();
    let dir = common::tempdir("bodies");
    let body = dir.join("body.txt");
    std::fs::write(&body, b"payload from file").unwrap();
    let global = dir.join("global.txt");
    std::fs::write(&global, b"global body").unwrap();
    let targets = format!(
        "# a comment\nPOST {}\nContent-Type: text/plain\nX-Custom: one\n@{}\n\nGET {}\n",
        server.url("/"),
        body.display(),
        server.url("/status/201")
    );
    let (hits, _) = common::attack_ok(
        &[
            "-rate",
            "100",
            "-requests",
            "4",
            "-header",
            "X-Global: g",
            "-body",
            global.to_str().unwrap(),
            "-name",
            "alpha",
        ],
        &targets,
    );
    assert_eq!(hits.len(), 4);
    let got = server.received();
    assert_eq!(got.len(), 4);
    let post = got.iter().find(|r| r.method == "POST").unwrap();
    assert_eq!(post.body, b"payload from file");
    assert_eq!(post.header("content-type"), Some("text/plain"));
    assert_eq!(post.header("x-custom"), Some("one"));
    assert_eq!(post.header("x-global"), Some("g"));
    assert_eq!(post.header("x-barrage-attack"), Some("alpha"));
    let get = got.iter().find(|r| r.method == "GET").unwrap();
    assert_eq!(
        get.body, b"global body",
        "-body applies to targets without one"
    );
    let mut seqs: Vec<u64> = got
        .iter()
        .map(|r| r.header("x-barrage-seq").unwrap().parse().unwrap())
        .collect();
    seqs.sort();
    assert_eq!(seqs, [0, 1, 2, 3]);
    assert!(hits.iter().all(|h| h.attack == "alpha"));
    let posts: Vec<_> = hits.iter().filter(|h| h.method == "POST").collect();
    assert!(posts.iter().all(|h| h.bytes_out == 17 && h.code == 200));
    assert!(hits
        .iter()
        .filter(|h| h.method == "GET")
        .all(|h| h.code == 201 && h.error.is_empty()));
}

#[test]
fn json_targets_send_headers_and_bodies() {
    let server = Server::http();
    let targets = format!(
        "{{\"method\":\"PUT\",\"url\":\"{}\",\"body\":\"aGVsbG8gand0\",\"header\":{{\"X-A\":[\"1\",\"2\"]}}}}\n",
        server.url("/")
    );
    let (hits, _) = common::attack_ok(
        &["-format", "json", "-rate", "50", "-requests", "2"],
        &targets,
    );
    assert_eq!(hits.len(), 2);
    for r in server.received() {
        assert_eq!(r.method, "PUT");
        assert_eq!(r.body, b"hello jwt");
        let xa: Vec<_> = r
            .headers
            .iter()
            .filter(|(k, _)| k == "x-a")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(xa, ["1", "2"]);
    }
}

#[test]
fn lazy_json_targets_stream_until_they_run_out() {
    let server = Server::http();
    let targets: String = (0..30)
        .map(|i| {
            format!(
                "{{\"method\":\"GET\",\"url\":\"{}\"}}\n",
                server.url(&format!("/status/{}", 200 + i))
            )
        })
        .collect();
    let (mut hits, _) = common::attack_ok(&["-lazy", "-format", "json", "-rate", "1000"], &targets);
    assert_eq!(
        hits.len(),
        30,
        "one record per target, no spurious 'no targets' records"
    );
    assert_seq_complete(&mut hits);
    for h in &hits {
        assert_eq!(h.code as u64, 200 + h.seq, "lazy targets are used in order");
    }
}

#[test]
fn redirects_followed_and_not_followed() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/redirect/3"));
    let (hits, _) = common::attack_ok(&["-rate", "100", "-requests", "2"], &t);
    assert!(hits
        .iter()
        .all(|h| h.code == 200 && h.error.is_empty() && h.bytes_in == 7));
    assert_eq!(server.count(), 8, "each hit follows 3 redirects");

    let (hits, _) = common::attack_ok(&["-rate", "100", "-requests", "2", "-redirects", "-1"], &t);
    assert!(
        hits.iter().all(|h| h.code == 302 && h.error.is_empty()),
        "3xx kept as success"
    );

    let (hits, _) = common::attack_ok(&["-rate", "100", "-requests", "1", "-redirects", "2"], &t);
    assert_eq!(hits[0].code, 0);
    assert!(
        hits[0].error.contains("stopped after 2 redirects"),
        "{}",
        hits[0].error
    );
}

/// A redirect carries the request's headers as Go's client does, on each
/// engine: its credentials and cookies only within the first URL's
/// domain (a subdomain's included), its body's headers not past a 302,
/// a `Referer` naming where it came from.
#[test]
fn redirects_carry_headers_as_go_does() {
    let server = Server::http();
    let port = server.addr().port();
    let mut targets = String::new();
    // (status, where it leads, the tag the landing is known by)
    let hops = [
        (307, "/status/200?same".to_string()),
        (302, format!("http://away.test:{port}/status/200?away")),
        (
            307,
            format!("http://api.example.test:{port}/status/200?sub"),
        ),
    ];
    for (code, to) in &hops {
        let from = if to.contains("sub") {
            format!("http://example.test:{port}/goto/{code}?{to}")
        } else {
            server.url(&format!("/goto/{code}?{to}"))
        };
        targets += &format!(
            "GET {from}\nAuthorization: Bearer t\nCookie: c=1\nContent-Type: text/plain\nX-Keep: k\n\n"
        );
    }
    let map = |h: &str| format!("{h}:{port}:127.0.0.1:{port}");
    let (away, sub, parent) = (
        map("away.test"),
        map("api.example.test"),
        map("example.test"),
    );
    for engine in [&[][..], &["-h1-engine", "hyper"][..], &["-h2c"][..]] {
        let before = server.received().len();
        let mut args = vec!["-rate", "100", "-requests", "3", "-connect-to", &away];
        args.extend(["-connect-to", &sub, "-connect-to", &parent]);
        args.extend_from_slice(engine);
        let (hits, _) = common::attack_ok(&args, &targets);
        assert!(hits.iter().all(|h| h.code == 200), "{engine:?} {hits:?}");
        let got = server.received();
        for (tag, credentials, typed) in [
            ("same", true, true),
            ("away", false, false),
            ("sub", true, true),
        ] {
            let r = got[before..]
                .iter()
                .find(|r| r.path == format!("/status/200?{tag}"))
                .unwrap_or_else(|| panic!("{engine:?}: no request landed at {tag}"));
            let has = |k: &str| {
                r.headers
                    .iter()
                    .find(|(n, _)| n == k)
                    .map(|(_, v)| v.as_str())
            };
            let why = format!("{engine:?} {tag}: {:?}", r.headers);
            assert_eq!(has("x-keep"), Some("k"), "{why}");
            assert_eq!(has("authorization").is_some(), credentials, "{why}");
            assert_eq!(has("cookie").is_some(), credentials, "{why}");
            assert_eq!(has("content-type").is_some(), typed, "{why}");
            let referer = has("referer").unwrap_or_else(|| panic!("{why}"));
            assert!(referer.contains("/goto/"), "{why}");
        }
    }
}

#[test]
fn timeouts_are_errors_with_code_0() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/sleep/2000"));
    let started = Instant::now();
    let (hits, _) = common::attack_ok(&["-rate", "10", "-requests", "3", "-timeout", "200ms"], &t);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "timeouts bound the attack's end"
    );
    assert_eq!(hits.len(), 3);
    for h in &hits {
        assert_eq!(h.code, 0);
        assert!(h.error.contains("timeout"), "{}", h.error);
        assert!(
            h.latency >= 200_000_000,
            "latency {} below the timeout",
            h.latency
        );
    }
}

#[test]
fn closed_model_timeouts_restart_with_each_request() {
    // One worker sends fast and slow targets in turn; its one timer is
    // pushed out for each request, so a slow one times out 200 ms after
    // its own start and a fast one right after a timeout is not cut short.
    let server = Server::http();
    let t = format!(
        "GET {}\nGET {}\n",
        server.url("/"),
        server.url("/sleep/2000")
    );
    let (hits, _) = common::attack_ok(
        &[
            "-rate",
            "0",
            "-max-workers",
            "1",
            "-requests",
            "6",
            "-timeout",
            "200ms",
        ],
        &t,
    );
    assert_eq!(hits.len(), 6);
    for h in &hits {
        if h.seq % 2 == 0 {
            assert_eq!((h.code, h.error.as_str()), (200, ""), "seq {}", h.seq);
        } else {
            assert_eq!(h.code, 0, "seq {}", h.seq);
            assert!(h.error.contains("timeout after 200ms"), "{}", h.error);
            assert!(
                h.latency >= 200_000_000,
                "seq {}: latency {}",
                h.seq,
                h.latency
            );
            assert!(
                h.latency < 2_000_000_000,
                "seq {}: latency {}",
                h.seq,
                h.latency
            );
        }
    }
}

#[test]
fn http_errors_and_refused_connections_are_records() {
    let server = Server::http();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    let t = format!("GET {}\n\nGET {}\n", server.url("/status/503"), dead);
    let (mut hits, _) = common::attack_ok(&["-rate", "100", "-requests", "4"], &t);
    assert_seq_complete(&mut hits);
    for h in &hits {
        if h.seq % 2 == 0 {
            assert_eq!((h.code, h.error.as_str()), (503, "503 Service Unavailable"));
        } else {
            assert_eq!(h.code, 0);
            assert!(
                h.error.starts_with(&format!("Get \"{dead}\": ")),
                "{}",
                h.error
            );
            assert!(h.error.to_lowercase().contains("refused"), "{}", h.error);
        }
    }
}

#[test]
fn max_body_keeps_at_most_n_bytes_but_counts_all() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/bytes/1000"));
    let (hits, _) = common::attack_ok(&["-rate", "100", "-requests", "1"], &t);
    assert_eq!(
        (hits[0].bytes_in, hits[0].body.len()),
        (1000, 0),
        "default keeps no body"
    );
    let (hits, _) = common::attack_ok(&["-rate", "100", "-requests", "1", "-max-body", "10"], &t);
    assert_eq!(
        (hits[0].bytes_in, hits[0].body.as_slice()),
        (1000, &b"xxxxxxxxxx"[..])
    );
    let (hits, _) = common::attack_ok(
        &[
            "-rate",
            "100",
            "-requests",
            "1",
            "-max-body",
            "-1",
            "-keep-headers",
        ],
        &t,
    );
    assert_eq!(hits[0].body.len(), 1000);
    assert!(hits[0]
        .headers
        .iter()
        .any(|(k, v)| k == "content-length" && v == "1000"));
}

#[test]
fn h2c_uses_http2_on_cleartext() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/"));
    let (hits, _) = common::attack_ok(&["-h2c", "-rate", "100", "-requests", "5"], &t);
    assert!(hits.iter().all(|h| h.code == 200));
    assert!(server.received().iter().all(|r| r.version == "HTTP/2.0"));
    let (_, _) = common::attack_ok(&["-rate", "100", "-requests", "5"], &t);
    assert_eq!(server.count_version("HTTP/1.1"), 5);
}

/// Every new connection makes a full TLS handshake, as in vegeta, unless
/// -session-tickets asks to resume sessions (rustls would resume unasked).
#[test]
fn tls_sessions_resume_only_with_session_tickets() {
    let cert = TestCert::generate();
    let roots = cert.cert_path.to_str().unwrap();
    // No keep-alive: a connection, and so a handshake, per request.
    let base = [
        "-root-certs",
        roots,
        "-keepalive=false",
        "-http2=false",
        "-rate",
        "20",
        "-requests",
        "5",
    ];
    for (extra, resumes) in [(None, false), (Some("-session-tickets"), true)] {
        let server = Server::https(&cert);
        let mut args = base.to_vec();
        args.extend(extra);
        let (hits, out) = common::attack_ok(&args, &format!("GET {}\n", server.url("/")));
        assert_eq!(hits.len(), 5, "{}", String::from_utf8_lossy(&out.stderr));
        assert!(hits.iter().all(|h| h.code == 200), "{:?}", hits[0].error);
        assert!(
            server.connections() >= 5,
            "{} connections",
            server.connections()
        );
        if resumes {
            assert!(
                server.resumed_handshakes() >= 1,
                "{extra:?}: {} of {} handshakes resumed",
                server.resumed_handshakes(),
                server.connections()
            );
        } else {
            assert_eq!(server.resumed_handshakes(), 0, "{extra:?}: none resumed");
        }
    }
}

#[test]
fn tls_verifies_by_default_and_trusts_what_it_is_told() {
    let cert = TestCert::generate();
    let server = Server::https(&cert);
    let t = format!("GET {}\n", server.url("/"));
    let (hits, _) = common::attack_ok(&["-rate", "100", "-requests", "2"], &t);
    assert!(
        hits.iter().all(|h| h.code == 0 && !h.error.is_empty()),
        "self-signed must fail by default"
    );
    assert!(
        hits[0].error.to_lowercase().contains("certificate"),
        "{}",
        hits[0].error
    );
    assert_eq!(server.count(), 0);

    let (hits, _) = common::attack_ok(&["-insecure", "-rate", "100", "-requests", "2"], &t);
    assert!(hits.iter().all(|h| h.code == 200), "{:?}", hits[0].error);

    let roots = cert.cert_path.to_str().unwrap();
    let (hits, _) = common::attack_ok(
        &["-root-certs", roots, "-rate", "100", "-requests", "2"],
        &t,
    );
    assert!(hits.iter().all(|h| h.code == 200), "{:?}", hits[0].error);
    // HTTP/2 by ALPN is the default over TLS; -http2=false keeps HTTP/1.1.
    assert!(server.received().iter().all(|r| r.version == "HTTP/2.0"));
    let (hits, _) = common::attack_ok(
        &[
            "-root-certs",
            roots,
            "-http2=false",
            "-rate",
            "100",
            "-requests",
            "2",
        ],
        &t,
    );
    assert!(hits.iter().all(|h| h.code == 200));
    assert_eq!(server.count_version("HTTP/1.1"), 2);
}

#[test]
fn bad_targets_exit_2_naming_the_line_and_send_nothing() {
    let server = Server::http();
    let good = server.url("/");
    let cases = [
        (
            format!("GET {good}\n\nGET {good}\nBroken header line\n"),
            "stdin:4: bad header",
        ),
        (format!("GET {good}\n\nget {good}\n"), "stdin:3: bad method"),
        ("GET not-a-url\n".to_string(), "stdin:1: bad URL"),
        ("".to_string(), "no targets"),
    ];
    for (targets, want) in &cases {
        let out = run(
            &["attack", "-rate", "10", "-duration", "1s"],
            targets.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(2), "{targets:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{err}");
        assert_eq!(err.lines().count(), 1);
        assert!(
            common::no_records(&out.stdout),
            "nothing written on bad targets"
        );
    }
    let dir = common::tempdir("badtargets");
    let file = dir.join("t.json");
    std::fs::write(
        &file,
        format!("{{\"method\":\"GET\",\"url\":\"{good}\"}}\n{{\"url\":\"{good}\"}}\n"),
    )
    .unwrap();
    let out = run(
        &[
            "attack",
            "-format",
            "json",
            "-targets",
            file.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}:2: target: required method is missing",
            file.display()
        )),
        "{err}"
    );
    assert_eq!(server.count(), 0);
}

#[test]
fn bad_flags_are_one_line_exit_2() {
    for args in [
        vec!["attack", "-rate", "0"],
        vec!["attack", "-rate", "abc"],
        vec!["attack", "-duration", "-5s"],
        vec!["attack", "-nonsense"],
        vec!["report", "-type", "pie"],
        vec!["attack", "-connect-to", "a:80:b"],
        vec!["attack", "-connect-to", "a:80:b:0"],
        vec!["attack", "-resolvers", "127.0.0.1:53,nope"],
        vec!["attack", "-dns-ttl", "soon"],
    ] {
        let out = run(&args, b"GET http://127.0.0.1:1/\n");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn closed_model_with_max_workers() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/"));
    let (mut hits, _) =
        common::attack_ok(&["-rate", "0", "-max-workers", "4", "-requests", "200"], &t);
    assert_eq!(hits.len(), 200);
    assert_seq_complete(&mut hits);
    let (hits, _) = common::attack_ok(
        &[
            "-rate",
            "infinity",
            "-max-workers",
            "2",
            "-duration",
            "300ms",
        ],
        &t,
    );
    assert!(!hits.is_empty());
}

/// The closed model's loops keep their connection between requests (no
/// pool lookup); these are the cases where a kept one must not be used.
#[test]
fn closed_model_kept_connections_move_hosts_close_and_share_a_cap() {
    // Targets alternating between two hosts: a loop gives its connection
    // back to the pool when it moves, and takes the other host's from
    // there (dropping it instead would open one per request).
    let (a, b) = (Server::http(), Server::http());
    let t = format!("GET {}\nGET {}\n", a.url("/"), b.url("/"));
    let (mut hits, _) =
        common::attack_ok(&["-rate", "0", "-max-workers", "4", "-requests", "200"], &t);
    assert_eq!(hits.len(), 200);
    assert_seq_complete(&mut hits);
    assert!(hits.iter().all(|h| h.code == 200 && h.error.is_empty()));
    assert_eq!((a.count(), b.count()), (100, 100));
    assert!(
        a.connections() <= 8 && b.connections() <= 8,
        "{} and {} connections for 4 loops",
        a.connections(),
        b.connections()
    );

    // A server that closes after each response: a closed connection is
    // never reused (the request would fail), a new one is opened.
    let c = Server::http();
    let t = format!("GET {}\n", c.url("/close"));
    let (hits, _) = common::attack_ok(&["-rate", "0", "-max-workers", "2", "-requests", "50"], &t);
    assert_eq!(hits.len(), 50);
    assert!(
        hits.iter().all(|h| h.code == 200 && h.error.is_empty()),
        "{:?}",
        hits.iter().find(|h| h.code != 200)
    );
    assert_eq!(c.connections(), 50);

    // Fewer connections than loops (-max-connections): loops do not keep
    // them, or the loops without one would wait until those with one ran
    // out of tickets, and then open theirs (4 connections here).
    let d = Server::http();
    let t = format!("GET {}\n", d.url("/"));
    let (mut hits, _) = common::attack_ok(
        &[
            "-rate",
            "0",
            "-max-workers",
            "4",
            "-max-connections",
            "2",
            "-requests",
            "100",
        ],
        &t,
    );
    assert_eq!(hits.len(), 100);
    assert_seq_complete(&mut hits);
    assert!(hits.iter().all(|h| h.code == 200));
    assert!(d.connections() <= 2, "{} connections", d.connections());
}

#[test]
fn worker_cap_makes_requests_late_not_lost() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/sleep/100"));
    // 50/s with one worker and 100 ms responses: only ~10/s can go out.
    // On both engines that keep a paced schedule with -max-workers.
    for io in ["epoll", "ring"] {
        let (mut hits, _) = common::attack_ok(
            &[
                "-rate",
                "50",
                "-requests",
                "10",
                "-max-workers",
                "1",
                "-io",
                io,
            ],
            &t,
        );
        assert_eq!(hits.len(), 10, "{io}");
        assert_seq_complete(&mut hits);
        let last = &hits[9];
        assert!(
            last.timestamp - last.scheduled >= 700_000_000,
            "{io}: lag recorded: {}",
            last.timestamp - last.scheduled
        );
        assert_eq!(
            last.scheduled - hits[0].scheduled,
            9 * 20_000_000,
            "{io}: schedule unchanged"
        );
        // One at a time: each sent after the last answer came.
        for w in hits.windows(2) {
            let ended = w[0].timestamp + w[0].latency as i64;
            assert!(w[1].timestamp >= ended, "{io}: two requests in flight");
        }
    }
}

#[test]
fn failed_output_exits_1_naming_the_file() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/"));
    let dir = common::tempdir("outdir");
    let out = run(
        &["attack", "-requests", "5", "-output", dir.to_str().unwrap()],
        t.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(dir.to_str().unwrap()));
    if std::path::Path::new("/dev/full").exists() {
        let out = run(
            &["attack", "-requests", "5", "-output", "/dev/full"],
            t.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("/dev/full") && err.lines().count() == 1,
            "{err}"
        );
    }
    assert_eq!(
        server.count(),
        0,
        "the output is checked before the first request"
    );
}

#[test]
fn help_lists_every_flag_with_defaults() {
    let out = run(&["attack", "-h"], b"");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--rate",
        "--duration",
        "--requests",
        "--targets",
        "--format",
        "--lazy",
        "--output",
        "--workers",
        "--max-workers",
        "--connections",
        "--max-connections",
        "--timeout",
        "--keepalive",
        "--http2",
        "--h2c",
        "--insecure",
        "--cert",
        "--key",
        "--root-certs",
        "--redirects",
        "--header",
        "--body",
        "--laddr",
        "--name",
        "--max-body",
        "--cpus",
    ] {
        // Shown in the one-dash spelling the README uses.
        let flag = &flag[1..];
        assert!(help.contains(flag), "{flag} missing from help");
    }
    for default in [
        "[default: 50/1s]",
        "[default: 30s]",
        "[default: 10]",
        "[default: 10000]",
        "[default: http]",
    ] {
        assert!(help.contains(default), "{default} missing from help");
    }
}

#[test]
fn max_connections_caps_open_connections() {
    let server = Server::http();
    let t = format!("GET {}\n", server.url("/sleep/100"));
    // 100/s of 100 ms requests wants ~10 at once; 3 connections serve them late.
    let (mut hits, _) = common::attack_ok(
        &["-rate", "100", "-requests", "40", "-max-connections", "3"],
        &t,
    );
    assert_eq!(hits.len(), 40);
    assert_seq_complete(&mut hits);
    assert!(
        hits.iter().all(|h| h.code == 200),
        "{:?}",
        hits.iter().find(|h| h.code != 200)
    );
    assert!(
        server.connections() <= 3,
        "{} connections",
        server.connections()
    );
}

#[test]
fn unix_socket_carries_every_request_whatever_the_host() {
    let dir = common::tempdir("unix");
    let sock = dir.join("s.sock");
    let server = Server::http_unix(&sock);
    let sock = sock.to_str().unwrap();
    let t = "GET http://barrage.invalid:8080/\n";
    let (hits, _) = common::attack_ok(&["-unix-socket", sock, "-rate", "100", "-requests", "5"], t);
    assert_eq!(hits.len(), 5);
    assert!(hits.iter().all(|h| h.code == 200), "{:?}", hits[0].error);
    let received = server.received();
    assert_eq!(received.len(), 5);
    for r in &received {
        assert_eq!(r.path, "/");
        let host = r.header("host");
        assert_eq!(host, Some("barrage.invalid:8080"));
    }

    let gone = dir.join("gone.sock");
    let (hits, _) = common::attack_ok(
        &[
            "-unix-socket",
            gone.to_str().unwrap(),
            "-rate",
            "100",
            "-requests",
            "3",
        ],
        t,
    );
    assert_eq!(hits.len(), 3);
    for h in &hits {
        assert_eq!(h.code, 0);
        assert!(
            h.error.contains("dial unix") && h.error.contains("gone.sock"),
            "{}",
            h.error
        );
    }
}

#[test]
fn connect_to_maps_a_host_and_takes_its_addresses_in_turn() {
    let (a, b) = (Server::http(), Server::http());
    let to = |s: &Server| format!("barrage.invalid:80:127.0.0.1:{}", s.addr().port());
    let (to_a, to_b) = (to(&a), to(&b));
    let (hits, _) = common::attack_ok(
        &[
            "-connect-to",
            &to_a,
            "-connect-to",
            &to_b,
            "-keepalive=false",
            "-rate",
            "100",
            "-requests",
            "10",
        ],
        "GET http://barrage.invalid/\n",
    );
    assert_eq!(hits.len(), 10);
    assert!(hits.iter().all(|h| h.code == 200), "{:?}", hits[0].error);
    assert_eq!(a.count() + b.count(), 10);
    // One turn for the whole attack: new connections alternate.
    let (ca, cb) = (a.connections(), b.connections());
    assert!(
        ca.abs_diff(cb) <= 1 && ca >= 1,
        "connections taken in turn: {ca} and {cb}"
    );
    for r in a.received().iter().chain(&b.received()) {
        let host = r.header("host");
        assert_eq!(host, Some("barrage.invalid"));
    }
}

#[test]
fn host_names_work_with_and_without_the_dns_cache() {
    let server = Server::http();
    let t = format!("GET http://localhost:{}/\n", server.addr().port());
    for ttl in ["-dns-ttl=0", "-dns-ttl=-1", "-dns-ttl=1ms"] {
        let (hits, _) = common::attack_ok(
            &[ttl, "-keepalive=false", "-rate", "100", "-requests", "5"],
            &t,
        );
        assert_eq!(hits.len(), 5, "{ttl}");
        assert!(
            hits.iter().all(|h| h.code == 200),
            "{ttl}: {:?}",
            hits[0].error
        );
    }
}

#[test]
fn chunked_sends_bodies_without_a_length() {
    let dir = common::tempdir("chunked");
    let body = dir.join("b.txt");
    std::fs::write(&body, "hello, chunks").unwrap();
    let body = body.to_str().unwrap();
    for chunked in [false, true] {
        let server = Server::http();
        let t = format!("POST {url}\n\nGET {url}\n", url = server.url("/"));
        let mut args = vec!["-body", body, "-rate", "100", "-requests", "2"];
        if chunked {
            args.push("-chunked");
        }
        let (hits, _) = common::attack_ok(&args, &t);
        assert!(hits.iter().all(|h| h.code == 200), "{:?}", hits[0].error);
        let received = server.received();
        assert_eq!(received.len(), 2);
        for r in &received {
            assert_eq!(
                r.body, b"hello, chunks",
                "{} (chunked: {chunked})",
                r.method
            );
            if chunked {
                assert_eq!(r.header("transfer-encoding"), Some("chunked"));
                assert_eq!(r.header("content-length"), None);
            } else {
                assert_eq!(r.header("content-length"), Some("13"));
                assert_eq!(r.header("transfer-encoding"), None);
            }
        }
    }
}

/// Issue 15: an answer too large for a datagram comes truncated (TC) over
/// UDP and is asked again over TCP.
#[test]
fn truncated_dns_answers_are_asked_again_over_tcp() {
    let dns = DnsServer::truncating("barrage.test");
    let server = Server::http();
    let resolver = dns.addr().to_string();
    let url = format!("http://barrage.test:{}/", server.addr().port());
    let (hits, _) = common::attack_ok(
        &["-resolvers", &resolver, "-rate", "100", "-requests", "3"],
        &format!("GET {url}\n"),
    );
    assert_eq!(hits.len(), 3);
    assert!(hits.iter().all(|h| h.code == 200), "{:?}", hits[0].error);
    assert!(
        dns.queries() >= 1 && dns.tcp_queries() >= 1,
        "{} {}",
        dns.queries(),
        dns.tcp_queries()
    );
}

#[test]
fn resolvers_replace_the_system_dns() {
    let dns = DnsServer::start("barrage.test");
    let server = Server::http();
    let resolver = dns.addr().to_string();
    let url = format!("http://barrage.test:{}/", server.addr().port());
    let (hits, _) = common::attack_ok(
        &["-resolvers", &resolver, "-rate", "100", "-requests", "5"],
        &format!("GET {url}\n"),
    );
    assert_eq!(hits.len(), 5);
    assert!(hits.iter().all(|h| h.code == 200), "{:?}", hits[0].error);
    assert!(dns.queries() >= 2, "an A and an AAAA query");
    let want = format!("barrage.test:{}", server.addr().port());
    assert_eq!(server.received()[0].header("host"), Some(want.as_str()));

    let (hits, _) = common::attack_ok(
        &["-resolvers", &resolver, "-rate", "100", "-requests", "2"],
        "GET http://nowhere.test/\n",
    );
    assert!(
        hits.iter()
            .all(|h| h.code == 0 && h.error.contains("lookup nowhere.test: no such host")),
        "{}",
        hits[0].error
    );

    // A server that never answers: each record says so (after 2 s).
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let silent_addr = silent.local_addr().unwrap().to_string();
    let (hits, _) = common::attack_ok(
        &["-resolvers", &silent_addr, "-rate", "100", "-requests", "1"],
        &format!("GET {url}\n"),
    );
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].code, 0);
    assert!(
        hits[0]
            .error
            .contains(&format!("no answer from DNS server {silent_addr}")),
        "{}",
        hits[0].error
    );
}

/// Issue 29: `-name` with a CR or LF silently dropped X-Barrage-Attack
/// (and so did a name outside ASCII on barrage's own engine).
#[test]
fn a_name_with_a_line_break_is_refused_and_a_utf8_name_is_sent() {
    common::refused(
        &["attack", "-name", "night\r\nX-Evil: 1", "-rate", "1"],
        b"GET http://127.0.0.1:1/\n",
        "cannot hold line breaks",
    );
    let server = Server::http();
    let (hits, _) = common::attack_ok(
        &["-rate", "100", "-requests", "2", "-name", "nuit-étoilée"],
        &format!("GET {}\n", server.url("/")),
    );
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.attack == "nuit-étoilée"));
    for r in server.received() {
        assert!(r.header("x-barrage-attack").is_some(), "{r:?}");
    }
}

/// Issue 60: a rate the generator cannot keep ran far past `-duration`
/// (1 s planned, still sending at 30 s). Sending stops at the end (within
/// its 250 ms grace), what was due and never sent is counted in the
/// stream, and every report shows it as dropped. A `-max-workers` slot
/// that does not come by then ends the wait the same way.
#[test]
fn a_rate_out_of_reach_stops_at_the_duration_and_counts_what_it_dropped() {
    let server = Server::http();
    // On both engines that keep a paced schedule with -max-workers.
    for io in ["epoll", "ring"] {
        let t = Instant::now();
        let (hits, out) = common::attack_ok(
            &[
                "-rate",
                "100",
                "-duration",
                "1s",
                "-max-workers",
                "1",
                "-io",
                io,
            ],
            &format!("GET {}\n", server.url("/delay/100000")),
        );
        // One request in flight at the end, 100 ms long.
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        let err = String::from_utf8_lossy(&out.stderr);
        let sent = hits.len() as u64;
        // 100 ms a request, one at a time, until the end and its grace.
        assert!((8..=20).contains(&sent), "{sent}: {err}");
        let first = hits.iter().map(|h| h.scheduled).min().unwrap();
        let last = hits.iter().map(|h| h.timestamp).max().unwrap();
        assert!(
            last - first <= 1_000_000_000 + barrage_attack::LATE_GRACE_NS as i64 + 50_000_000,
            "sent {} ms after the start",
            (last - first) / 1_000_000
        );
        assert!(
            err.contains(&format!(
                "{} requests due before the end of -duration were never sent",
                100 - sent
            )),
            "{err}"
        );
        let json = common::ok(&["report", "-type", "json"], &out.stdout);
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["dropped"]["count"].as_u64(), Some(100 - sent), "{v}");
        assert_eq!(v["dropped"]["exact"].as_bool(), Some(true));
        let text = String::from_utf8(common::ok(&["report"], &out.stdout)).unwrap();
        assert!(
            text.contains(&format!(
                "Dropped       [due, never sent]                 {}",
                100 - sent
            )),
            "{text}"
        );
    }
    // A plan a hundred times past what the cores send is refused before
    // anything is written, unless forced.
    let out = run(
        &["attack", "-rate", "1000000000", "-duration", "1s"],
        format!("GET {}\n", server.url("/")).as_bytes(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("-force to run it anyway"), "{err}");
    assert!(out.stdout.is_empty());
    // A healthy run drops nothing and says nothing of it.
    let (hits, out) = common::attack_ok(
        &["-rate", "200", "-duration", "1s"],
        &format!("GET {}\n", server.url("/")),
    );
    assert_eq!(hits.len(), 200);
    let json = common::ok(&["report", "-type", "json"], &out.stdout);
    assert!(!String::from_utf8_lossy(&json).contains("\"dropped\":{"));
}

/// Issue 60: `barrage attack -rate 100 -duration 5s http://…/`, oha's and
/// hey's habit, said only "unexpected argument". URLs as arguments are
/// GET targets, round-robin; with -targets or -mix they are refused, and
/// other tools' rate and user flags are translated.
#[test]
fn urls_as_arguments_are_get_targets() {
    let server = Server::http();
    let (a, b) = (server.url("/a"), server.url("/b"));
    let out = run(&["attack", "-rate", "20", "-requests", "4", &a, &b], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits = decode(&out.stdout);
    let urls: Vec<&str> = hits.iter().map(|h| h.url.as_str()).collect();
    assert_eq!(urls.iter().filter(|u| **u == a).count(), 2, "{urls:?}");
    assert_eq!(urls.iter().filter(|u| **u == b).count(), 2, "{urls:?}");
    assert!(hits.iter().all(|h| h.method == "GET"));
    common::refused(
        &["attack", "-targets", "x.http", "-rate", "1", &a],
        b"",
        "give URLs or -targets, not both",
    );
    for (args, says) in [
        (
            &["attack", "-vus", "10", &a][..],
            "barrage attack -rate 0 -max-workers 10",
        ),
        (
            &["attack", "-qps", "100", &a][..],
            "barrage attack -rate 100",
        ),
    ] {
        let out = run(args, b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(err.contains(&format!("GET {a}")), "{err}");
    }
}

/// Issue 60: bodies inline, as k6 and curl users write them: -body-text
/// for targets without a body, `:body TEXT` in a target (and a flow's
/// step, its placeholders rendered); two bodies for one target refused.
#[test]
fn bodies_can_be_written_inline() {
    let server = Server::http();
    let echo = server.url("/echo");
    let (hits, _) = common::attack_ok(
        &[
            "-rate",
            "10",
            "-requests",
            "1",
            "-max-body",
            "-1",
            "-body-text",
            "{\"a\":1}",
        ],
        &format!("POST {echo}\n"),
    );
    assert_eq!(hits[0].body, b"{\"a\":1}");
    let (hits, _) = common::attack_ok(
        &["-rate", "10", "-requests", "1", "-max-body", "-1"],
        &format!("POST {echo}\n:body {{\"user\":\"ann\"}}\nContent-Type: application/json\n"),
    );
    assert_eq!(hits[0].body, b"{\"user\":\"ann\"}");
    let dir = common::tempdir("inline-body");
    let flow = dir.join("f.flow");
    std::fs::write(
        &flow,
        format!(
            "POST {}\n:extract token json:.access_token\n\nPOST {echo}\n:body {{\"t\":\"{{{{token}}}}\"}}\n:name echo\n",
            server.url("/login")
        ),
    )
    .unwrap();
    let out = run(
        &[
            "attack",
            "-format",
            "flow",
            "-targets",
            flow.to_str().unwrap(),
            "-rate",
            "10",
            "-requests",
            "1",
            "-max-body",
            "-1",
        ],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits = decode(&out.stdout);
    let echoed = hits.iter().find(|h| h.name == "echo").unwrap();
    let text = String::from_utf8_lossy(&echoed.body);
    assert!(
        text.starts_with("{\"t\":\"") && !text.contains("{{"),
        "{text}"
    );
    common::refused(
        &["attack", "-rate", "1"],
        format!("POST {echo}\n:body a\n:body b\n").as_bytes(),
        "a second body for one target",
    );
}
